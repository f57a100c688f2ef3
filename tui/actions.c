// SPDX-License-Identifier: GPL-2.0
/*
 * Keys: one table of actions, each a function returning reaction flags
 * (htop's Action.c).  The help screen is generated from the same table, so
 * it lists every key there is.  Prompts (filter, file name, time) take the
 * keys while they are open.  Each action says in which modes it works: a
 * live session, a replay, the compare screen (no session: keys that would
 * need one are not in its mode).
 */
#include <curses.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tui_int.h"

#define M_LIVE 1U
#define M_REPLAY 2U
#define M_COMPARE 4U
#define M_SESSION (M_LIVE | M_REPLAY)
#define M_ALL (M_SESSION | M_COMPARE)
#define CTRL(c) ((c) & 0x1f)

struct tui_action {
	int keys[4];		/* 0-terminated when fewer */
	const char *names;	/* as the help shows them */
	const char *help;
	unsigned int modes;
	unsigned int (*fn)(struct tui *t, int key);
};

static unsigned int mode(const struct tui *t)
{
	return t->cfg->cmp ? M_COMPARE : t->cfg->replay ? M_REPLAY : M_LIVE;
}

static unsigned int act_help(struct tui *t, int key)
{
	t->help = !t->help;
	t->help_top = 0;
	return RX_REDRAW;
}

static unsigned int act_quit(struct tui *t, int key)
{
	return RX_QUIT;
}

static void prompt_open(struct tui *t, enum prompt_kind kind, const char *init)
{
	t->prompt.kind = kind;
	snprintf(t->prompt.buf, sizeof(t->prompt.buf), "%s", init);
	t->prompt.len = strlen(t->prompt.buf);
	snprintf(t->prompt.saved, sizeof(t->prompt.saved), "%s", t->filter);
}

static unsigned int act_filter(struct tui *t, int key)
{
	prompt_open(t, PROMPT_FILTER, t->filter);
	return RX_REDRAW;
}

static unsigned int act_clear_filter(struct tui *t, int key)
{
	t->filter[0] = 0;
	return RX_UPDATE;
}

static unsigned int act_sort(struct tui *t, int key)
{
	const struct mms_view *v = t->views[t->active];
	struct mms_list *l = tui_list(t);
	int dir = key == '<' || key == ',' ? -1 : 1;

	if (v->sort_step) {
		tui_flash(t, false, "sorted by %s", v->sort_step(t->priv[t->active], dir));
		return RX_UPDATE;
	}
	if (!l || !l->cols)
		return RX_NONE;
	mms_list_sort_step(l, dir);
	return RX_UPDATE;
}

static unsigned int act_invert(struct tui *t, int key)
{
	struct mms_list *l = tui_list(t);

	if (!l || !l->cols)
		return RX_NONE;
	l->invert = !l->invert;
	return RX_UPDATE;
}

static unsigned int act_pause(struct tui *t, int key)
{
	tui_env_refresh(t);
	if (!t->env.valid) {
		tui_flash(t, false, "nothing to pause yet: waiting for the first interval");
		return RX_REDRAW;
	}
	t->paused = !t->paused;
	if (t->paused)
		t->paused_seq = (int64_t)mms_store_at(t->st, t->env.cur)->seq;
	tui_flash(t, false, t->paused ? "paused: data keeps being collected; t/T step through "
		  "history, space resumes" : "live");
	return RX_UPDATE;
}

static unsigned int act_step(struct tui *t, int key)
{
	uint32_t n = mms_store_count(t->st);
	int64_t seq;

	if (!n)
		return RX_NONE;
	tui_env_refresh(t);
	if (!t->paused) {
		/* Stepping back from live pauses on the interval before the latest. */
		t->paused = true;
		t->paused_seq = (int64_t)mms_store_at(t->st, t->env.cur)->seq;
	}
	seq = t->paused_seq + (key == 'T' ? 1 : -1);
	if (seq < (int64_t)mms_store_at(t->st, 0)->seq) {
		tui_flash(t, false, "at the oldest interval kept (--window sets how many)");
		return RX_REDRAW;
	}
	if (seq > (int64_t)mms_store_latest(t->st)->seq) {
		tui_flash(t, false, "at the latest interval: space goes live");
		return RX_REDRAW;
	}
	t->paused_seq = seq;
	return RX_UPDATE;
}

static const uint32_t intervals_ms[] = { 100, 250, 500, 1000, 2000, 5000, 10000, 30000, 60000 };

static unsigned int act_interval(struct tui *t, int key)
{
	uint32_t cur = mms_session_interval(t->s);
	int n = (int)(sizeof(intervals_ms) / sizeof(intervals_ms[0])), i;

	if (key == '+' || key == '=') {
		for (i = 0; i < n - 1 && intervals_ms[i] <= cur; i++)
			;
	} else {
		for (i = n - 1; i > 0 && intervals_ms[i] >= cur; i--)
			;
	}
	if (mms_session_set_interval(t->s, intervals_ms[i]))
		tui_flash(t, true, "cannot set the interval to %u ms", intervals_ms[i]);
	else
		tui_flash(t, false, "interval %.2g s", intervals_ms[i] / 1000.0);
	return RX_REDRAW;
}

static unsigned int act_view(struct tui *t, int key)
{
	int v = t->active;

	if (key == '\t')
		v = (t->active + 1) % t->nr_views;
	else if (key == KEY_BTAB)
		v = (t->active + t->nr_views - 1) % t->nr_views;
	else if (key >= '1' && key <= '9')
		v = key - '1';
	if (v >= t->nr_views)
		return RX_NONE;
	t->back = -1;
	tui_switch(t, v);
	return RX_UPDATE;
}

/* Tab in a view shown alone: what it shows (the compare screen's group). */
static unsigned int act_cycle(struct tui *t, int key)
{
	const struct mms_view *v = t->views[t->active];

	if (!v->cycle)
		return RX_NONE;
	tui_flash(t, false, "showing %s", v->cycle(t->priv[t->active], key == KEY_BTAB ? -1 : 1));
	return RX_UPDATE;
}

static unsigned int act_enter(struct tui *t, int key)
{
	const struct mms_view *v = t->views[t->active];
	struct mms_focus f = { 0 };

	if (!v->enter || !v->enter(t->priv[t->active], &f))
		return RX_NONE;
	for (int i = 0; i < t->nr_views; i++)
		if (t->views[i]->focus) {
			t->views[i]->focus(t->priv[i], &f);
			t->back = t->active;
			tui_switch(t, i);
			return RX_UPDATE;
		}
	return RX_NONE;
}

static unsigned int act_back(struct tui *t, int key)
{
	if (t->help) {
		t->help = false;
		return RX_REDRAW;
	}
	if (t->back < 0)
		return RX_NONE;
	tui_switch(t, t->back);
	t->back = -1;
	return RX_UPDATE;
}

static unsigned int act_move(struct tui *t, int key)
{
	struct mms_list *l = tui_list(t);

	if (t->help) {
		if (key == KEY_UP || key == 'k' || key == KEY_PPAGE)
			t->help_top -= key == KEY_PPAGE ? 10 : 1;
		else
			t->help_top += key == KEY_NPAGE ? 10 : 1;
		if (t->help_top < 0)
			t->help_top = 0;
		return RX_REDRAW;
	}
	return l && screen_list_key(l, key) ? RX_REDRAW : RX_NONE;
}

static unsigned int act_range(struct tui *t, int key)
{
	t->range = (t->range + 1) % MMS_RANGE_NR;
	tui_flash(t, false, "tables now sum over: %s", mms_range_name(t->range));
	return RX_UPDATE;
}

static unsigned int act_record(struct tui *t, int key)
{
	const struct mms_tui_config *cfg = t->cfg;
	char msg[256];

	if (!cfg->rec || !cfg->rec->start) {
		tui_flash(t, true, "recording is not available here (a replay is a recording)");
		return RX_REDRAW;
	}
	if (cfg->rec->status && cfg->rec->status(cfg->rec_ctx, msg, sizeof(msg))) {
		cfg->rec->stop(cfg->rec_ctx, msg, sizeof(msg));
		tui_flash(t, false, "%s", msg);
		return RX_REDRAW;
	}
	prompt_open(t, PROMPT_RECORD, "mmscope.mms");
	return RX_REDRAW;
}

static unsigned int act_redraw(struct tui *t, int key)
{
	screen_invalidate();
	return RX_REDRAW;
}

/* Replay controls. */
static unsigned int act_play(struct tui *t, int key)
{
	t->playing = !t->playing;
	t->next_due = 0;
	if (t->playing && t->cfg->replay->pos(t->cfg->replay_ctx) >=
			  t->cfg->replay->count(t->cfg->replay_ctx))
		tui_flash(t, false, "at the end of the recording: Home goes back to the start");
	return RX_REDRAW;
}

static unsigned int act_rstep(struct tui *t, int key)
{
	const struct mms_tui_replay_ops *r = t->cfg->replay;
	uint32_t pos = r->pos(t->cfg->replay_ctx);
	int err;

	t->playing = false;
	if (key == 't' || key == KEY_LEFT) {
		if (pos <= 1) {
			tui_flash(t, false, "at the start of the recording");
			return RX_REDRAW;
		}
		err = r->seek(t->cfg->replay_ctx, pos - 2);
	} else {
		err = r->step(t->cfg->replay_ctx, 1);
		if (!err)
			tui_flash(t, false, "at the end of the recording");
		err = err < 0 ? err : 0;
	}
	if (err)
		tui_flash(t, true, "cannot step: %s", strerror(-err));
	return RX_UPDATE;
}

static unsigned int act_speed(struct tui *t, int key)
{
	t->speed += key == ']' ? 1 : -1;
	if (t->speed < 0)
		t->speed = 0;
	if (t->speed >= tui_nr_speeds)
		t->speed = tui_nr_speeds - 1;
	tui_flash(t, false, "speed %gx", tui_speeds[t->speed]);
	return RX_REDRAW;
}

static unsigned int act_goto(struct tui *t, int key)
{
	t->playing = false;
	prompt_open(t, PROMPT_GOTO, "");
	return RX_REDRAW;
}

static unsigned int act_ends(struct tui *t, int key)
{
	const struct mms_tui_replay_ops *r = t->cfg->replay;
	int err;

	t->playing = false;
	err = r->seek(t->cfg->replay_ctx, key == KEY_HOME ? 0 : r->count(t->cfg->replay_ctx) - 1);
	if (err)
		tui_flash(t, true, "cannot seek: %s", strerror(-err));
	return RX_UPDATE;
}

static const struct tui_action actions[] = {
	{ { '?', KEY_F(1), 'h' }, "? F1 h", "this help (any key closes it)", M_ALL, act_help },
	{ { '\t', KEY_BTAB }, "Tab S-Tab", "next / previous view", M_SESSION, act_view },
	{ { '\t', KEY_BTAB }, "Tab S-Tab",
	  "one group only (totals, locks, callers, owners, mmap_lock, vma, rmap), then all", M_COMPARE,
	  act_cycle },
	{ { '1', '2', '3', '4' }, "1..9", "go to view 1..9 (see the tabs)", M_SESSION, act_view },
	{ { '5', '6', '7', '8' }, NULL, NULL, M_SESSION, act_view },
	{ { '9' }, NULL, NULL, M_SESSION, act_view },
	{ { '\r', '\n', KEY_ENTER }, "Enter", "drill in: detail of the selected row", M_SESSION,
	  act_enter },
	{ { 27, KEY_BACKSPACE, 127 }, "Esc Bksp", "back out of a drill-in (or close help)",
	  M_SESSION, act_back },
	{ { KEY_UP, KEY_DOWN, 'k', 'j' }, "Up Down j k", "select a row / scroll", M_ALL,
	  act_move },
	{ { KEY_PPAGE, KEY_NPAGE }, "PgUp PgDn", "page up / down", M_ALL, act_move },
	{ { KEY_HOME, KEY_END }, "Home End", "first / last row", M_LIVE | M_COMPARE, act_move },
	{ { '/', KEY_F(3) }, "/ F3", "filter rows by name (substring, live); Enter keeps it",
	  M_ALL, act_filter },
	{ { '\\' }, "\\", "clear the filter", M_ALL, act_clear_filter },
	{ { 's', KEY_F(6), '>', '.' }, "s F6 >", "sort by the next column", M_ALL, act_sort },
	{ { '<', ',' }, "<", "sort by the previous column", M_ALL, act_sort },
	{ { 'I' }, "I", "invert the sort order", M_ALL, act_invert },
	{ { 'w' }, "w", "sum tables over: interval / last minute / whole window", M_SESSION,
	  act_range },
	{ { ' ', 'p' }, "Space p", "pause (collection goes on; the view freezes) / go live",
	  M_LIVE, act_pause },
	{ { 't', 'T' }, "t T", "step back / forward through history (pauses)", M_LIVE,
	  act_step },
	{ { '+', '=', '-', '_' }, "+ -", "longer / shorter interval", M_LIVE, act_interval },
	{ { 'R' }, "R", "start / stop recording to a file (0600, never overwrites)", M_LIVE,
	  act_record },
	{ { ' ', 'p' }, "Space p", "play / pause the recording", M_REPLAY, act_play },
	{ { 't', 'T', KEY_LEFT, KEY_RIGHT }, "t T Left Right", "step back / forward one interval",
	  M_REPLAY, act_rstep },
	{ { '[', ']' }, "[ ]", "slower / faster playback (0.25x .. 16x)", M_REPLAY, act_speed },
	{ { 'g' }, "g", "go to a time (12:03:04, +90 seconds in, #42 interval)", M_REPLAY,
	  act_goto },
	{ { KEY_HOME, KEY_END }, "Home End", "start / end of the recording", M_REPLAY, act_ends },
	{ { CTRL('l') }, "^L", "repaint the screen", M_ALL, act_redraw },
	{ { 'q', 'Q', KEY_F(10) }, "q F10", "quit (also Ctrl-C)", M_ALL, act_quit },
};

#define NR_ACTIONS (sizeof(actions) / sizeof(actions[0]))

static unsigned int prompt_commit(struct tui *t)
{
	const struct mms_tui_config *cfg = t->cfg;
	enum prompt_kind kind = t->prompt.kind;
	char msg[256] = "";
	int err;

	t->prompt.kind = PROMPT_NONE;
	switch (kind) {
	case PROMPT_FILTER:
		return RX_UPDATE;
	case PROMPT_RECORD:
		if (!t->prompt.len)
			return RX_REDRAW;
		err = cfg->rec->start(cfg->rec_ctx, t->prompt.buf, msg, sizeof(msg));
		tui_flash(t, err != 0, "%s", msg);
		return RX_REDRAW;
	case PROMPT_GOTO:
		if (!t->prompt.len)
			return RX_REDRAW;
		err = cfg->replay->seek_text(cfg->replay_ctx, t->prompt.buf, msg, sizeof(msg));
		if (msg[0])
			tui_flash(t, err != 0, "%s", msg);
		return RX_UPDATE;
	default:
		return RX_REDRAW;
	}
}

static void prompt_append(struct tui *t, uint32_t cp)
{
	char tmp[4];
	size_t n = mms_utf8_encode(cp, tmp);

	if (!n)
		return;
	if (t->prompt.len + n >= (t->prompt.kind == PROMPT_FILTER ? sizeof(t->filter) :
				  sizeof(t->prompt.buf)))
		return;
	memcpy(t->prompt.buf + t->prompt.len, tmp, n);
	t->prompt.len += n;
	t->prompt.buf[t->prompt.len] = 0;
}

static unsigned int prompt_key(struct tui *t, int key)
{
	bool filter = t->prompt.kind == PROMPT_FILTER;

	if (key == 27) {	/* Esc: as if never opened */
		if (filter)
			snprintf(t->filter, sizeof(t->filter), "%s", t->prompt.saved);
		t->prompt.kind = PROMPT_NONE;
		return RX_UPDATE;
	}
	if (key == '\r' || key == '\n' || key == KEY_ENTER)
		return prompt_commit(t);
	if (key == KEY_BACKSPACE || key == 127 || key == CTRL('h')) {
		/* Drop a whole UTF-8 character. */
		while (t->prompt.len && (t->prompt.buf[t->prompt.len - 1] & 0xc0) == 0x80)
			t->prompt.len--;
		if (t->prompt.len)
			t->prompt.len--;
		t->prompt.buf[t->prompt.len] = 0;
	} else if (key == CTRL('u')) {
		t->prompt.len = 0;
		t->prompt.buf[0] = 0;
	} else if (key >= 0x20 && key < 0x7f) {
		prompt_append(t, (uint32_t)key);
	} else if (key & SCREEN_KEY_CHAR) {
		prompt_append(t, (uint32_t)key & ~(uint32_t)SCREEN_KEY_CHAR);
	} else {
		return RX_NONE;
	}
	if (!filter)
		return RX_REDRAW;
	snprintf(t->filter, sizeof(t->filter), "%s", t->prompt.buf);
	return RX_UPDATE;	/* the filter applies as it is typed */
}

static unsigned int mouse(struct tui *t, const struct screen_mouse *m)
{
	struct mms_list *l = tui_list(t);

	if (t->help) {
		t->help = false;
		return RX_REDRAW;
	}
	if (m->wheel && l) {
		mms_list_move(l, m->wheel * 3);
		return RX_REDRAW;
	}
	if (!m->click)
		return RX_NONE;
	if (m->y == t->tabs_y) {
		for (int i = 0; i < t->nr_views; i++)
			if (m->x >= t->tab_x[i] && m->x < t->tab_x[i + 1]) {
				t->back = -1;
				tui_switch(t, i);
				return RX_UPDATE;
			}
		return RX_NONE;
	}
	if (!l)
		return RX_NONE;
	switch (mms_list_click(l, m->x, m->y)) {
	case MMS_CLICK_HEAD:
		return RX_UPDATE;
	case MMS_CLICK_ROW:
		return RX_REDRAW;
	default:
		return RX_NONE;
	}
}

unsigned int tui_key(struct tui *t, int key, const struct screen_mouse *m)
{
	unsigned int in = mode(t);

	if (key == KEY_MOUSE)
		return mouse(t, m);
	if (t->prompt.kind != PROMPT_NONE)
		return prompt_key(t, key);
	if (t->help && key != KEY_UP && key != KEY_DOWN && key != KEY_PPAGE && key != KEY_NPAGE &&
	    key != 'j' && key != 'k') {
		t->help = false;
		if (key != 'q' && key != 'Q' && key != KEY_F(10))
			return RX_REDRAW;	/* any key closes help; q still quits */
	}
	for (size_t i = 0; i < NR_ACTIONS; i++) {
		if (!(actions[i].modes & in))
			continue;
		for (int k = 0; k < 4 && actions[i].keys[k]; k++)
			if (actions[i].keys[k] == key)
				return actions[i].fn(t, key);
	}
	return RX_NONE;
}

void tui_draw_help(struct tui *t, struct mms_canvas *c, int y, int h)
{
	static const char *const notes[] = {
		"Mouse: click a tab to switch, a row to select, a column title to sort (again: "
		"invert); the wheel scrolls.",
		"Rates are per second over the range (w); sparklines show the last minute.  "
		"NO_COLOR or --no-color: monochrome.",
		NULL,
	};
	unsigned int in = mode(t);
	const char *const *note = in == M_COMPARE ? tui_compare_notes : notes;
	int row = 0, skip = t->help_top;

	for (int i = 0; i < h; i++)
		mms_canvas_fill(c, 0, y + i, c->w, ' ', MMS_ROLE_NORMAL);
	mms_canvas_put(c, 0, y + row++, MMS_ROLE_TITLE,
		       in == M_COMPARE ? "mmscope compare keys" :
		       in == M_REPLAY ? "mmscope replay keys" : "mmscope keys", c->w);
	for (size_t i = 0; i < NR_ACTIONS && row < h; i++) {
		if (!(actions[i].modes & in) || !actions[i].names)
			continue;
		if (skip-- > 0)
			continue;
		mms_canvas_put(c, 1, y + row, MMS_ROLE_KEY, actions[i].names, 15);
		mms_canvas_put(c, 17, y + row, MMS_ROLE_NORMAL, actions[i].help, c->w - 17);
		row++;
	}
	for (; *note && row < h; note++)
		mms_canvas_put(c, 1, y + row++, MMS_ROLE_DIM, *note, c->w - 1);
}
