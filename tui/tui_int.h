/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The TUI's state, shared by the loop (tui.c), the key actions
 * (actions.c), the frame layout (frame.c) and prompts, and the compare
 * screen's part (compare_tui.c).
 */
#ifndef MMSCOPE_TUI_INT_H
#define MMSCOPE_TUI_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "mmscope/tui.h"
#include "mmscope/view.h"
#include "screen.h"

#define TUI_MAX_VIEWS 16

/* Reactions of an action (htop's Action.c style). */
enum tui_rx {
	RX_NONE = 0,
	RX_REDRAW = 1U << 0,	/* draw again */
	RX_UPDATE = 1U << 1,	/* data, range or settings changed: recompute the view */
	RX_QUIT = 1U << 2,
};

enum prompt_kind {
	PROMPT_NONE,
	PROMPT_FILTER,
	PROMPT_RECORD,
	PROMPT_GOTO,
};

struct tui {
	const struct mms_tui_config *cfg;
	struct mms_session *s;	/* NULL on the compare screen */
	struct mms_store *st;	/* the session's; NULL with it */
	int sig_fd;		/* without a session: quit signals and SIGWINCH */
	struct mms_canvas *c;
	int w, h;

	const struct mms_view *views[TUI_MAX_VIEWS];
	void *priv[TUI_MAX_VIEWS];
	uint64_t view_gen[TUI_MAX_VIEWS];
	int nr_views;
	int active;
	int back;		/* view Esc returns to, -1: none */

	uint64_t gen;		/* bumped by anything that needs a view update */
	int marks;		/* MMSCOPE_START_TIMES: 1 first frame told, 2 with data too */
	struct mms_view_env env;
	bool paused;
	int64_t paused_seq;
	enum mms_range range;
	char filter[256];

	struct {
		enum prompt_kind kind;
		char buf[256];
		size_t len;
		char saved[256];	/* the filter before editing, for Esc */
	} prompt;

	bool help;
	int help_top;
	char flash[256];
	uint64_t flash_until;	/* CLOCK_MONOTONIC ms */
	bool flash_error;
	char target_note[96];

	/* Replay. */
	bool playing;
	int speed;		/* index into tui_speeds */
	uint64_t next_due;	/* CLOCK_MONOTONIC ms of the next interval, 0: now */

	/* Where things were drawn, for the mouse. */
	int tabs_y, view_y, view_h, status_y;
	int tab_x[TUI_MAX_VIEWS + 1];
};

extern const double tui_speeds[];
extern const int tui_nr_speeds;

uint64_t tui_now_ms(void);
void tui_flash(struct tui *t, bool error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
struct mms_list *tui_list(struct tui *t);
void tui_switch(struct tui *t, int view);
/*
 * Recomputes t->env from the store.  Its indexes are stale once a commit
 * evicted intervals (the byte budget can drop many at once): actions that
 * read env.cur refresh it first.
 */
void tui_env_refresh(struct tui *t);

/* actions.c */
unsigned int tui_key(struct tui *t, int key, const struct screen_mouse *m);
/* Help text: every key for this mode, drawn on the canvas. */
void tui_draw_help(struct tui *t, struct mms_canvas *c, int y, int h);

/* frame.c: header, tabs, the view, the status line. */
void tui_draw_frame(struct tui *t);

/* compare_tui.c: the compare screen (cfg->cmp), one view and no session. */
extern const char *const tui_compare_hints[];	/* status line: key, word, ..., NULL */
extern const char *const tui_compare_notes[];	/* under the keys in help, NULL-terminated */
/* Makes its one view, over cfg->cmp: 0 or -errno with a message. */
int tui_compare_open(struct tui *t, char *errbuf, size_t errlen);
/* The title line in place of a session's header, at y; returns the rows used. */
int tui_compare_title(struct tui *t, struct mms_canvas *c, int y);

#endif
