/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Views: one screen of the TUI each (Locks, Lock detail, Callers, Tasks,
 * mmap_lock, VMA, rmap, Timeline).  A view is a const class table, as tmux's
 * window modes and htop's screens are; adding one is one line in
 * mms_views[].
 *
 * Views read the store only (through query.h) and draw into a canvas; they
 * never see a terminal, a collector or a recording, so live data and replay
 * look the same and every view can be tested on a store filled by hand.
 * tui/ owns the loop: it builds the environment (which interval is shown,
 * over which range), calls update() when data or settings change and draw()
 * for every frame, and applies the common keys to the view's table.
 */
#ifndef MMSCOPE_VIEW_H
#define MMSCOPE_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mmscope/canvas.h"
#include "mmscope/status.h"
#include "mmscope/store.h"

/* What the tables sum over, ending at the interval shown. */
enum mms_range {
	MMS_RANGE_INTERVAL,	/* the interval shown */
	MMS_RANGE_MINUTE,	/* the last 60 s up to it */
	MMS_RANGE_ALL,		/* everything the store still holds up to it */
	MMS_RANGE_NR
};

struct mms_view_env {
	const struct mms_store *st;
	bool valid;		/* false until the first interval is committed */
	uint32_t cur;		/* store index of the interval shown */
	uint32_t from;		/* first index of the range summed: from <= cur */
	double secs;		/* seconds covered by [from, cur] (rates divide by this) */
	uint32_t spark_from;	/* first index of the last minute (sparklines) */
	enum mms_range range;
	/* Per family: the source in use or why none (NULL: not known, e.g. tests). */
	const struct mms_family_status *fam;
	const char *filter;	/* case-insensitive substring of row names; NULL: none */
	uint32_t stack_skip;
	uint64_t epoch;		/* mms_store_epoch(): cached ids are stale when it moves */
	bool live;		/* a live session: the Timeline says what the history holds */
};

/* Fills env from the store: cur (the latest unless paused_seq >= 0) and the range. */
void mms_view_env_init(struct mms_view_env *env, const struct mms_store *st, int64_t paused_seq,
		       enum mms_range range);
const char *mms_range_name(enum mms_range r);

/* A table the TUI can move in, sort and click on. */
#define MMS_LIST_MAX_COLS 16

struct mms_column {
	const char *title;
	int width;		/* 0: takes what the others leave (at least min) */
	int min;
	bool left;		/* left-aligned (text) */
	bool sortable;
	uint8_t drop;		/* dropped first when narrow: higher goes first; 0 never */
};

struct mms_list {
	const struct mms_column *cols;
	int nr_cols;
	size_t nr;		/* rows */
	size_t sel, top;
	int sort;		/* column index */
	bool invert;
	bool no_select;		/* a document: keys scroll, nothing is highlighted */
	/* Geometry of the last draw, for the mouse: column x/width (0: dropped). */
	int y_head, y_rows, h_rows;
	int x[MMS_LIST_MAX_COLS], w[MMS_LIST_MAX_COLS];
};

void mms_list_layout(struct mms_list *t, int width);
/* Column titles at y; the sort column marked with its direction. */
void mms_list_draw_head(struct mms_list *t, struct mms_canvas *c, int y);
/* Where rows go: y and height.  Keeps the selection in sight. */
void mms_list_set_rows(struct mms_list *t, int y, int h);
void mms_list_move(struct mms_list *t, long delta);
void mms_list_home(struct mms_list *t, bool end);
/* Next/previous sortable column; direction resets to the column's default. */
void mms_list_sort_step(struct mms_list *t, int dir);
void mms_list_sort_col(struct mms_list *t, int col);

enum mms_click {
	MMS_CLICK_NONE,
	MMS_CLICK_ROW,		/* the selection moved there */
	MMS_CLICK_HEAD,		/* sort changed */
};
enum mms_click mms_list_click(struct mms_list *t, int x, int y);

/* What Enter on a row drills into. */
enum mms_focus_kind {
	MMS_FOCUS_NONE,
	MMS_FOCUS_LOCK,		/* key = lock_id */
	MMS_FOCUS_CALLER,	/* key = caller key of MMS_BY_CALLER rows */
	MMS_FOCUS_TASK,		/* key = task_id */
};

struct mms_focus {
	enum mms_focus_kind kind;
	uint64_t key;
	char label[96];
};

struct mms_view {
	const char *name;	/* tab title */
	const char *help;	/* one line for the help screen */
	int (*create)(void **priv);
	void (*destroy)(void *priv);
	/* Recomputes rows from the store (new interval, other range, filter, sort). */
	int (*update)(void *priv, const struct mms_view_env *env);
	/* Draws into rows [y, y + h) of the canvas. */
	void (*draw)(void *priv, const struct mms_view_env *env, struct mms_canvas *c, int y,
		     int h);
	/* The table common keys act on (NULL: none). */
	struct mms_list *(*list)(void *priv);
	/* Enter: fills what the selected row is; false when nothing to drill into. */
	bool (*enter)(void *priv, struct mms_focus *out);
	/* A drill-in arrives (only for views that accept one). */
	void (*focus)(void *priv, const struct mms_focus *f);
	/*
	 * Optional, for a view shown alone (the compare screen): Tab and S-Tab
	 * step through what it shows (dir 1 / -1; the TUI then calls update())
	 * and it returns what shows now.  Without it Tab goes to the next view.
	 */
	const char *(*cycle)(void *priv, int dir);
	/* Optional: the view's own sort step instead of mms_list_sort_step(); returns its name. */
	const char *(*sort_step)(void *priv, int dir);
	/* Reads every interval the store holds, not only the range and its minute. */
	bool whole_history;
};

/*
 * The intervals v reads to update and draw for env, the header's included:
 * store indexes [*from, *to]; false when there are none.  Deferred intervals
 * among them must be loaded first (mms_store_load(): the TUI does it).
 */
bool mms_view_span(const struct mms_view *v, const struct mms_view_env *env, uint32_t *from,
		   uint32_t *to);

/*
 * Every view in tab order, NULL-terminated (views/registry.c).  A drill-in
 * goes to the first view that has a focus() op.
 */
extern const struct mms_view *const mms_views[];

/* The header above every view: session facts and headline rates. */
struct mms_header {
	const struct mms_session_info *info;
	const struct mms_family_status *fam;	/* MMS_FAM_NR entries, or NULL */
	const uint64_t *lost;			/* MMS_LOST_NR totals, or NULL */
	uint32_t interval_ms;
	bool paused;
	bool replay;
	const char *target_note;	/* "process 42 exited", or NULL */
	const char *rec_note;		/* "REC file.mms 1.2MiB", or NULL */
	const char *replay_note;	/* "replay 00:12/01:30 1x playing", or NULL */
};

/* Draws the header from row y; returns the rows used (at most h). */
int mms_header_draw(const struct mms_header *hd, const struct mms_view_env *env,
		    struct mms_canvas *c, int y, int h);

#endif
