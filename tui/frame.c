// SPDX-License-Identifier: GPL-2.0
/*
 * One frame: header, tab bar, the active view (or help), status line, all
 * drawn into the canvas; tui.c blits it.  Small terminals lose the header's
 * detail lines first, never the status line.  The compare screen has a
 * title line instead of the header and no tab bar (one view).
 */
#include <stdio.h>
#include <string.h>

#include "tui_int.h"

static void draw_tabs(struct tui *t, struct mms_canvas *c, int y)
{
	int x = 0;

	t->tabs_y = y;
	mms_canvas_fill(c, 0, y, c->w, ' ', MMS_ROLE_TAB);
	for (int i = 0; i < t->nr_views; i++) {
		char buf[48];

		snprintf(buf, sizeof(buf), " %d %s ", i + 1, t->views[i]->name);
		t->tab_x[i] = x;
		x += mms_canvas_put(c, x, y, i == t->active ? MMS_ROLE_TAB_ACTIVE : MMS_ROLE_TAB,
				    buf, c->w - x);
	}
	t->tab_x[t->nr_views] = x;
}

/* "F1 Help  / Filter ..." with the key names marked, as far as it fits. */
static void draw_hints(struct tui *t, struct mms_canvas *c, int y)
{
	static const char *const live[] = {
		"F1", "Help", "Tab", "View", "/", "Filter", "s", "Sort", "I", "Invert",
		"Space", "Pause", "t/T", "Step", "+/-", "Interval", "w", "Range",
		"Enter", "Detail", "R", "Record", "q", "Quit", NULL,
	};
	static const char *const replay[] = {
		"F1", "Help", "Tab", "View", "/", "Filter", "s", "Sort", "Space", "Play",
		"t/T", "Step", "[ ]", "Speed", "g", "Go to", "Home/End", "Ends",
		"Enter", "Detail", "q", "Quit", NULL,
	};
	const char *const *h = t->cfg->cmp ? tui_compare_hints : t->cfg->replay ? replay : live;
	int x = 0;

	for (int i = 0; h[i] && x < c->w; i += 2) {
		x += mms_canvas_put(c, x, y, MMS_ROLE_KEY, h[i], c->w - x);
		x += mms_canvas_put(c, x, y, MMS_ROLE_STATUS, " ", c->w - x);
		x += mms_canvas_put(c, x, y, MMS_ROLE_STATUS, h[i + 1], c->w - x);
		x += mms_canvas_put(c, x, y, MMS_ROLE_STATUS, "  ", c->w - x);
	}
}

static void draw_status(struct tui *t, struct mms_canvas *c, int y)
{
	static const char *const names[] = {
		[PROMPT_FILTER] = "Filter: ",
		[PROMPT_RECORD] = "Record to file: ",
		[PROMPT_GOTO] = "Go to (HH:MM:SS, +SECONDS, #INTERVAL): ",
	};
	int x;

	t->status_y = y;
	mms_canvas_fill(c, 0, y, c->w, ' ', MMS_ROLE_STATUS);
	if (t->prompt.kind != PROMPT_NONE) {
		mms_canvas_fill(c, 0, y, c->w, ' ', MMS_ROLE_NORMAL);
		x = mms_canvas_put(c, 0, y, MMS_ROLE_PROMPT, names[t->prompt.kind], c->w);
		x += mms_canvas_put(c, x, y, MMS_ROLE_NORMAL, t->prompt.buf, c->w - x - 1);
		mms_canvas_put(c, x, y, MMS_ROLE_KEY, "_", 1);
		if (x + 30 < c->w)
			mms_canvas_put(c, c->w - 26, y, MMS_ROLE_DIM, "Enter: keep  Esc: cancel",
				       26);
		return;
	}
	if (t->flash[0] && tui_now_ms() < t->flash_until) {
		mms_canvas_fill(c, 0, y, c->w, ' ', MMS_ROLE_NORMAL);
		mms_canvas_put(c, 0, y, t->flash_error ? MMS_ROLE_ERROR : MMS_ROLE_PROMPT, t->flash,
			       c->w);
		return;
	}
	if (t->filter[0]) {
		x = mms_canvas_put(c, 0, y, MMS_ROLE_PROMPT, "filter: ", c->w);
		x += mms_canvas_put(c, x, y, MMS_ROLE_NORMAL, t->filter, c->w - x);
		mms_canvas_put(c, x, y, MMS_ROLE_DIM, "  (\\ clears)  ", c->w - x);
		return;
	}
	draw_hints(t, c, y);
}

static void fill_header(struct tui *t, struct mms_header *hd, char *rec, size_t rec_len,
			char *where, size_t where_len)
{
	const struct mms_tui_config *cfg = t->cfg;

	memset(hd, 0, sizeof(*hd));
	hd->info = cfg->info ? cfg->info : mms_session_info(t->s);
	hd->fam = cfg->fam ? cfg->fam : mms_session_family(t->s, 0);
	hd->lost = cfg->lost ? cfg->lost : mms_session_lost(t->s);
	hd->interval_ms = mms_session_interval(t->s);
	hd->paused = t->paused;
	hd->replay = cfg->replay != NULL;
	hd->target_note = t->target_note[0] ? t->target_note : NULL;
	if (cfg->rec && cfg->rec->status && cfg->rec->status(cfg->rec_ctx, rec, rec_len))
		hd->rec_note = rec;
	if (cfg->replay) {
		size_t n;

		cfg->replay->where(cfg->replay_ctx, where, where_len);
		n = strlen(where);
		snprintf(where + n, where_len - n, " %gx %s", tui_speeds[t->speed],
			 t->playing ? "playing" : "paused");
		hd->replay_note = where;
	}
}

void tui_draw_frame(struct tui *t)
{
	struct mms_canvas *c = t->c;
	const struct mms_view *v = t->views[t->active];
	char rec[160] = "", where[160] = "";
	struct mms_header hd;
	int y = 0, hh;

	mms_canvas_clear(c);
	t->tabs_y = -1;
	if (t->cfg->cmp) {
		y += tui_compare_title(t, c, y);
	} else {
		fill_header(t, &hd, rec, sizeof(rec), where, sizeof(where));
		/* Header: 3 rows when there is room for a view under it, else 1. */
		hh = c->h >= 10 ? 3 : 1;
		y += mms_header_draw(&hd, &t->env, c, y, hh);
		if (c->h >= 4)
			draw_tabs(t, c, y++);
	}
	t->view_y = y;
	t->view_h = c->h - 1 - y;
	if (t->help)
		tui_draw_help(t, c, t->view_y, t->view_h);
	else if (t->view_h > 0)
		v->draw(t->priv[t->active], &t->env, c, t->view_y, t->view_h);
	draw_status(t, c, c->h - 1);
}
