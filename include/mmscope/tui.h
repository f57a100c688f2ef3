/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The TUI: the only module that talks to the terminal (ncursesw).  It runs
 * one poll() loop over the session's descriptors and the terminal, draws the
 * header and the views (views/) through an off-screen canvas, and maps keys
 * and mouse clicks to actions.  The session may be live or a replay; the
 * TUI learns which from the config and never sees a collector or a file.
 * The same loop and keys show the compare screen, over a finished comparison
 * and no session at all (`mmscope compare --tui`).
 *
 * cmd/cmd_tui.c sets it up: mms_tui_term_claim() first (before the session
 * launches a command, so that the command's output cannot land on the
 * screen), then the session, then mms_tui_run(), then mms_tui_term_release()
 * which restores the terminal and prints whatever was written meanwhile.
 * cmd/cmd_compare.c does the same without the session.
 */
#ifndef MMSCOPE_TUI_H
#define MMSCOPE_TUI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mmscope/session.h"

/* The terminal, kept aside while the TUI runs (fds 0-2 then point elsewhere). */
struct mms_tui_term {
	int tty_in, tty_out;	/* the terminal, duplicated */
	int saved[3];		/* the original fds 0, 1, 2 */
	int capture;		/* where fds 1 and 2 write meanwhile (unlinked file) */
	bool claimed;
};

/*
 * Checks that stdin and stdout are a terminal, keeps them aside, points
 * fd 0 at /dev/null and fds 1-2 at a capture file.  0 or -errno (message in
 * errbuf; nothing changed then); -ENOTTY: stdin or stdout is no terminal.
 */
int mms_tui_term_claim(struct mms_tui_term *term, char *errbuf, size_t errlen);
/*
 * The first frame, before the session exists: the screen starts on the
 * claimed terminal and says what mmscope is starting for (target, shown
 * escaped) while the sources load; mms_tui_run() carries on on that screen.
 * 0 or -errno with a message (the TUI cannot start on this terminal).
 */
int mms_tui_splash(struct mms_tui_term *term, bool no_color, const char *target, char *errbuf,
		   size_t errlen);
/*
 * Ends the screen if it is still up, restores fds 0-2 and copies what was
 * captured to stderr.  Idempotent.
 */
void mms_tui_term_release(struct mms_tui_term *term);

/* Recording from inside the TUI (R); every op may be NULL when not wired. */
struct mms_tui_record_ops {
	/* Starts recording into path: 0 or -errno with a message in msg. */
	int (*start)(void *ctx, const char *path, char *msg, size_t len);
	/* Stops; msg says what was written. */
	void (*stop)(void *ctx, char *msg, size_t len);
	/* Fills buf ("REC file 12 intervals 1.2MiB") and returns true while recording. */
	bool (*status)(void *ctx, char *buf, size_t len);
};

/* Playback of a recording: cmd_tui.c implements these over the replay source. */
struct mms_tui_replay_ops {
	uint32_t (*count)(void *ctx);		/* intervals in the recording */
	uint32_t (*pos)(void *ctx);		/* intervals fed so far */
	int (*step)(void *ctx, uint32_t n);	/* feed n more; returns how many or -errno */
	int (*seek)(void *ctx, uint32_t idx);	/* make interval idx the newest shown */
	/* Seeks to a time typed by the user ("12:03:04", "+90", "#42"): 0 or -EINVAL. */
	int (*seek_text)(void *ctx, const char *text, char *msg, size_t len);
	/* Recorded duration of interval idx, ns (pacing at 1x). */
	uint64_t (*dur_ns)(void *ctx, uint32_t idx);
	/* "12:03:04 (+00:42 of 01:30)" for the header. */
	void (*where)(void *ctx, char *buf, size_t len);
};

struct mms_compare;

struct mms_tui_config {
	struct mms_session *s;
	/*
	 * Instead of s: the compare screen (tui/compare_tui.c) over this finished
	 * comparison.  No session then: s, info, fam, lost, rec and replay are NULL.
	 */
	const struct mms_compare *cmp;
	struct mms_tui_term *term;
	/* What the header shows; NULL: from the session. */
	const struct mms_session_info *info;
	const struct mms_family_status *fam;	/* MMS_FAM_NR entries */
	const uint64_t *lost;			/* MMS_LOST_NR totals */
	bool no_color;
	const struct mms_tui_record_ops *rec;
	void *rec_ctx;
	const struct mms_tui_replay_ops *replay;	/* NULL: live */
	void *replay_ctx;
};

/*
 * Runs until q, a quit signal or a fatal error; the terminal is restored
 * before it returns.  0, or -errno with a message in errbuf (to print after
 * mms_tui_term_release()).
 */
int mms_tui_run(const struct mms_tui_config *cfg, char *errbuf, size_t errlen);

#endif
