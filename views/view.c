// SPDX-License-Identifier: GPL-2.0
/*
 * What every view shares: the environment (which interval, which range) and
 * the table widget (layout, header, selection, sorting, mouse hits).
 */
#include <stdio.h>
#include <string.h>

#include "mmscope/view.h"

#define MINUTE_NS (60ULL * 1000000000ULL)

static const char *const range_names[MMS_RANGE_NR] = {
	[MMS_RANGE_INTERVAL] = "interval",
	[MMS_RANGE_MINUTE] = "last minute",
	[MMS_RANGE_ALL] = "whole window",
};

const char *mms_range_name(enum mms_range r)
{
	return (unsigned int)r < MMS_RANGE_NR ? range_names[r] : "?";
}

/* First index such that [i, cur] covers at most a minute (never less than cur). */
static uint32_t minute_start(const struct mms_store *st, uint32_t cur)
{
	uint64_t acc = mms_store_at(st, cur)->dur_ns;
	uint32_t i = cur;

	while (i > 0 && acc + mms_store_at(st, i - 1)->dur_ns <= MINUTE_NS + MINUTE_NS / 100) {
		i--;
		acc += mms_store_at(st, i)->dur_ns;
	}
	return i;
}

void mms_view_env_init(struct mms_view_env *env, const struct mms_store *st, int64_t paused_seq,
		       enum mms_range range)
{
	uint32_t n = mms_store_count(st);
	uint64_t ns = 0;

	memset(env, 0, sizeof(*env));
	env->st = st;
	env->range = range;
	env->epoch = mms_store_epoch(st);
	if (!n)
		return;
	env->valid = true;
	env->cur = n - 1;
	if (paused_seq >= 0) {
		int idx = mms_store_find_seq(st, (uint64_t)paused_seq);

		if (idx >= 0)
			env->cur = (uint32_t)idx;
		else if ((uint64_t)paused_seq < mms_store_at(st, 0)->seq)
			env->cur = 0;	/* fell out of the window: the oldest left */
	}
	env->spark_from = minute_start(st, env->cur);
	switch (range) {
	case MMS_RANGE_MINUTE:
		env->from = env->spark_from;
		break;
	case MMS_RANGE_ALL:
		env->from = 0;
		break;
	default:
		env->from = env->cur;
	}
	for (uint32_t i = env->from; i <= env->cur; i++)
		ns += mms_store_at(st, i)->dur_ns;
	/* An empty interval still divides: a rate over nothing is 0, not inf. */
	env->secs = ns ? (double)ns / 1e9 : 1.0;
}

bool mms_view_span(const struct mms_view *v, const struct mms_view_env *env, uint32_t *from,
		   uint32_t *to)
{
	if (!env->valid)
		return false;
	*from = v->whole_history ? 0 : env->spark_from < env->from ? env->spark_from : env->from;
	*to = v->whole_history ? mms_store_count(env->st) - 1 : env->cur;
	return true;
}

void mms_list_layout(struct mms_list *t, int width)
{
	int fixed = 0, flex = -1, gaps, avail;

	for (int i = 0; i < t->nr_cols; i++) {
		t->w[i] = t->cols[i].width;
		if (!t->cols[i].width)
			flex = i;
	}
	for (;;) {
		int n = 0, worst = -1;

		fixed = 0;
		for (int i = 0; i < t->nr_cols; i++) {
			if (i == flex && t->w[i] >= 0) {
				n++;
				continue;
			}
			if (t->w[i] <= 0)
				continue;
			fixed += t->w[i];
			n++;
			if (t->cols[i].drop && (worst < 0 || t->cols[i].drop > t->cols[worst].drop))
				worst = i;
		}
		gaps = n > 1 ? n - 1 : 0;
		avail = width - fixed - gaps;
		if (avail >= (flex >= 0 ? t->cols[flex].min : 0) || worst < 0)
			break;
		t->w[worst] = 0;	/* too narrow: lose the least important column */
	}
	if (flex >= 0)
		t->w[flex] = avail > t->cols[flex].min ? avail : t->cols[flex].min;
	for (int i = 0, x = 0; i < t->nr_cols; i++) {
		t->x[i] = x;
		if (t->w[i] > 0)
			x += t->w[i] + 1;
	}
}

void mms_list_draw_head(struct mms_list *t, struct mms_canvas *c, int y)
{
	t->y_head = y;
	mms_canvas_fill(c, 0, y, c->w, ' ', MMS_ROLE_COLHEAD);
	for (int i = 0; i < t->nr_cols; i++) {
		const struct mms_column *col = &t->cols[i];
		enum mms_role role = i == t->sort ? MMS_ROLE_COLHEAD_SORT : MMS_ROLE_COLHEAD;
		bool desc = col->left ? t->invert : !t->invert;
		const char *arrow = c->utf8 ? (desc ? "\xe2\x96\xbc" : "\xe2\x96\xb2") :
					      (desc ? "v" : "^");
		char title[64];
		int ax;

		if (t->w[i] <= 0)
			continue;
		/* The sort direction follows the title; where it does not fit, in the gap. */
		snprintf(title, sizeof(title), "%s%s", col->title, i == t->sort ? arrow : "");
		if (i == t->sort && (int)strlen(col->title) + 1 > t->w[i])
			snprintf(title, sizeof(title), "%s", col->title);
		else
			arrow = NULL;
		if (col->left)
			mms_canvas_put(c, t->x[i], y, role, title, t->w[i]);
		else
			mms_canvas_put_right(c, t->x[i], y, t->w[i], role, title);
		if (i != t->sort || !arrow)
			continue;
		ax = col->left || !t->x[i] ? t->x[i] + t->w[i] : t->x[i] - 1;
		if (ax < c->w)
			mms_canvas_put(c, ax, y, role, arrow, 1);
	}
}

static void keep_in_sight(struct mms_list *t)
{
	size_t h = t->h_rows > 0 ? (size_t)t->h_rows : 1;

	if (t->nr && t->sel >= t->nr)
		t->sel = t->nr - 1;
	if (!t->nr)
		t->sel = 0;
	if (t->no_select) {
		/* Documents scroll by top; sel just follows it. */
		if (t->top + h > t->nr)
			t->top = t->nr > h ? t->nr - h : 0;
		t->sel = t->top;
		return;
	}
	if (t->sel < t->top)
		t->top = t->sel;
	if (t->sel >= t->top + h)
		t->top = t->sel - h + 1;
	if (t->top + h > t->nr)
		t->top = t->nr > h ? t->nr - h : 0;
}

void mms_list_set_rows(struct mms_list *t, int y, int h)
{
	t->y_rows = y;
	t->h_rows = h > 0 ? h : 0;
	keep_in_sight(t);
}

void mms_list_move(struct mms_list *t, long delta)
{
	size_t *p = t->no_select ? &t->top : &t->sel;

	if (delta < 0)
		*p = (size_t)-delta > *p ? 0 : *p - (size_t)-delta;
	else
		*p += (size_t)delta;
	if (t->nr && *p >= t->nr)
		*p = t->nr - 1;
	keep_in_sight(t);
}

void mms_list_home(struct mms_list *t, bool end)
{
	t->sel = t->top = end && t->nr ? t->nr - 1 : 0;
	keep_in_sight(t);
}

void mms_list_sort_col(struct mms_list *t, int col)
{
	if (col < 0 || col >= t->nr_cols || !t->cols[col].sortable)
		return;
	if (col == t->sort) {
		t->invert = !t->invert;
		return;
	}
	t->sort = col;
	t->invert = false;
}

void mms_list_sort_step(struct mms_list *t, int dir)
{
	for (int k = 1; k <= t->nr_cols; k++) {
		int i = ((t->sort + dir * k) % t->nr_cols + t->nr_cols) % t->nr_cols;

		if (t->cols[i].sortable && t->w[i] > 0) {
			t->sort = i;
			t->invert = false;
			return;
		}
	}
}

enum mms_click mms_list_click(struct mms_list *t, int x, int y)
{
	if (y == t->y_head && t->cols) {
		for (int i = 0; i < t->nr_cols; i++)
			if (t->w[i] > 0 && x >= t->x[i] && x <= t->x[i] + t->w[i]) {
				if (!t->cols[i].sortable)
					return MMS_CLICK_NONE;
				mms_list_sort_col(t, i);
				return MMS_CLICK_HEAD;
			}
		return MMS_CLICK_NONE;
	}
	if (t->no_select || y < t->y_rows || y >= t->y_rows + t->h_rows)
		return MMS_CLICK_NONE;
	if (t->top + (size_t)(y - t->y_rows) >= t->nr)
		return MMS_CLICK_NONE;
	t->sel = t->top + (size_t)(y - t->y_rows);
	return MMS_CLICK_ROW;
}
