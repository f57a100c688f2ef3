/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A session: the store, the sources feeding it (live collectors or a
 * replay), the interval timer, signals and the followed process.  It owns
 * no terminal: the TUI polls session_pollfds() next to stdin, the headless
 * commands run mms_session_run().  One thread, one poll() loop.
 *
 * Every interval: each source drains into the store's open interval, the
 * interval is committed, and taps (recorder, report) see the committed one.
 */
#ifndef MMSCOPE_SESSION_H
#define MMSCOPE_SESSION_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "mmscope/options.h"
#include "mmscope/source.h"
#include "mmscope/store.h"

struct mms_session;

/* What each family ended up with, for headers, `check` and reports. */
struct mms_family_status {
	const char *source;	/* ops->name of the source in use, or NULL */
	const char *backend;	/* "bpf", "perf", "inferred" ... or NULL */
	/*
	 * When none: why (every candidate's reason).  With a source: what it
	 * cannot measure on this kernel (its note), "" when nothing.
	 */
	char why[256];
	/*
	 * Its source failed while running (a drain error): why, "" while it
	 * works.  The session stops draining it; the other sources go on.
	 */
	char failed[256];
};

/* Called after every commit with the interval just committed. */
typedef void (*mms_tap_fn)(void *ctx, struct mms_session *s, const struct mms_interval *iv);

enum mms_session_event {
	MMS_EV_NONE,
	MMS_EV_TICK,		/* an interval was committed */
	MMS_EV_QUIT,		/* SIGINT/SIGTERM/SIGHUP, or --duration reached */
	MMS_EV_RESIZE,		/* SIGWINCH (and nothing else: see mms_session_take_winch) */
	MMS_EV_TARGET_GONE,	/* the followed process (or command) ended */
};

struct mms_session_info {
	char host[72];
	char kernel[136];
	char target[128];	/* "system", "pid 42 (stress-ng)", "cmd: sleep 1" */
	uint64_t start_ns;	/* CLOCK_REALTIME */
};

int mms_session_create(const struct mms_options *opts, struct mms_session **out);
/*
 * Opens sources for every family (fallbacks as the design says), launches
 * the command (stopped until start), checks the PID.  Fails (with a message
 * in errbuf) only when no lock source works or the target is bad.
 */
int mms_session_open(struct mms_session *s, char *errbuf, size_t errlen);
/* Uses an already-made source instead of live collectors (replay). */
int mms_session_open_source(struct mms_session *s, struct mms_source *src, char *errbuf,
			    size_t errlen);
/*
 * Starts the sources, gives up every privilege the run no longer needs
 * (docs/SECURITY.md), then the timer and the launched command.  A failure
 * to drop stops it here, with the reason in errbuf ("" for other errors).
 */
int mms_session_start(struct mms_session *s, char *errbuf, size_t errlen);
void mms_session_destroy(struct mms_session *s);

struct mms_store *mms_session_store(struct mms_session *s);
const struct mms_family_status *mms_session_family(const struct mms_session *s,
						   enum mms_metric_family f);
const struct mms_session_info *mms_session_info(const struct mms_session *s);
void mms_session_add_tap(struct mms_session *s, mms_tap_fn fn, void *ctx);

/* Poll integration: fills up to max pollfds; returns how many. */
int mms_session_pollfds(struct mms_session *s, struct pollfd *fds, int max);
/* Handles whatever of those fds is ready; returns an event. */
enum mms_session_event mms_session_dispatch(struct mms_session *s, const struct pollfd *fds,
					    int n);
/* Changes the interval (live); 0 or -EINVAL. */
int mms_session_set_interval(struct mms_session *s, uint32_t ms);
uint32_t mms_session_interval(const struct mms_session *s);
/*
 * Ends the current interval now (flush at exit).  A source whose drain
 * fails is marked failed (mms_family_status.failed) and skipped from then
 * on; the interval is committed with the others' data.  Errors: the store's.
 */
int mms_session_flush(struct mms_session *s);

/* Headless: loops until quit (signal, --duration, command exit). */
int mms_session_run(struct mms_session *s);

const struct mms_options *mms_session_options(const struct mms_session *s);
/* Why the session ended: 0, or the signal number that ended it. */
/*
 * True once after each SIGWINCH that dispatch saw, even when it returned
 * another event for the same poll (a tick and a resize can arrive together).
 */
bool mms_session_take_winch(struct mms_session *s);
int mms_session_quit_signal(const struct mms_session *s);
/* The launched command's exit status (as for exit()), or -1 if none/running. */
int mms_session_child_status(const struct mms_session *s);
/* True once the followed process is gone; message in buf. */
bool mms_session_target_gone(const struct mms_session *s, char *buf, size_t len);
/* Total lost events per reason since start. */
const uint64_t *mms_session_lost(const struct mms_session *s);

#endif
