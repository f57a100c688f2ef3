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
#include "mmscope/status.h"
#include "mmscope/store.h"

struct mms_session;

/* Called after every commit with the interval just committed. */
typedef void (*mms_tap_fn)(void *ctx, struct mms_session *s, const struct mms_interval *iv);

enum mms_session_event {
	MMS_EV_NONE,
	MMS_EV_TICK,		/* an interval was committed */
	MMS_EV_QUIT,		/* SIGINT/SIGTERM/SIGHUP, or --duration reached */
	MMS_EV_RESIZE,		/* SIGWINCH (and nothing else: see mms_session_take_winch) */
	MMS_EV_TARGET_GONE,	/* the followed process (or command) ended */
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
 * Before mms_session_start(): the first interval ends ms after collecting
 * begins, not a whole interval later (the live TUI: numbers at once), and
 * the others follow at the interval.  Rates are per second of each
 * interval's own length.  0 or -EINVAL (100 ms to the interval).
 */
int mms_session_set_first_interval(struct mms_session *s, uint32_t ms);
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


/*
 * Taps that write files (session/session_record.c).  A recording: its header
 * from the session (host, kernel, target, sources, options, argv), then
 * mms_recorder_tap (ctx: the recorder; errors stay in mms_recorder_error()).
 * The --openmetrics file: creates its writer for DIR and adds the tap.
 */
struct mms_recorder;
struct mms_openmetrics;
int mms_recorder_create_session(const char *path, struct mms_session *s, unsigned int flags,
				struct mms_recorder **out, char *errbuf, size_t errlen);
void mms_recorder_tap(void *ctx, struct mms_session *s, const struct mms_interval *iv);
int mms_openmetrics_add_tap(struct mms_session *s, const char *dir,
			    struct mms_openmetrics **out, char *errbuf, size_t errlen);

/*
 * Privileges (session/privileges.c).  _check: may this process run a live
 * session (CAP_BPF + CAP_PERFMON, or CAP_SYS_ADMIN)?  0, or -EPERM with what
 * is missing and what to do instead in errbuf.  _drop: gives up all but what
 * the rest of a run needs, fails closed (mms_session_start() calls it).
 * _before_exec: in a launched command's child, so it inherits no ambient
 * capabilities.
 */
int mms_privileges_check(const char *what, char *errbuf, size_t errlen);
int mms_privileges_drop(char *errbuf, size_t errlen);
void mms_privileges_before_exec(void);

#endif
