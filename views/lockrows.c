// SPDX-License-Identifier: GPL-2.0
/* The lock-wait table shared by Locks, Callers and Tasks (see lockrows.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lockrows.h"
#include "util.h"

#define SPARK_MAX 600

struct sortkey {
	uint64_t v;
	const char *s;
	uint32_t idx;
};

struct lockrows {
	const struct lockrows_cfg *cfg;
	struct mms_list t;
	struct mms_rows rows;
	uint32_t *order;	/* rows shown, in display order */
	size_t order_cap;
	struct sortkey *keys;
	struct vu_series *series;
	uint64_t sel_key;
	bool have_sel;
	size_t total;		/* rows before the filter */
	size_t nr_keys;		/* rows shown */
	size_t sorted;		/* order[0, sorted) is in final order; the rest is not */
	bool sort_desc;
	/*
	 * What rows[] was queried for: committed intervals never change, so the
	 * same range needs no new query when only the sort or the filter moved.
	 */
	bool have_rows;
	uint64_t q_from_seq, q_cur_seq, q_epoch;
	uint32_t q_skip;
};

int lockrows_create(const struct lockrows_cfg *cfg, void **priv)
{
	struct lockrows *lr = calloc(1, sizeof(*lr));
	int err;

	if (!lr)
		return -ENOMEM;
	lr->cfg = cfg;
	lr->t.cols = cfg->cols;
	lr->t.nr_cols = cfg->nr_cols;
	lr->t.sort = cfg->default_sort;
	err = vu_series_create(cfg->by, &lr->series);
	if (err) {
		free(lr);
		return err;
	}
	*priv = lr;
	return 0;
}

void lockrows_destroy(void *priv)
{
	struct lockrows *lr = priv;

	if (!lr)
		return;
	mms_rows_free(&lr->rows);
	free(lr->order);
	free(lr->keys);
	vu_series_destroy(lr->series);
	free(lr);
}

struct mms_list *lockrows_table(void *priv)
{
	return &((struct lockrows *)priv)->t;
}

static const struct mms_task *row_task(const struct mms_view_env *env, const struct mms_row *r)
{
	return mms_store_get_task(env->st, r->first_task);
}

/* The number or string a column sorts by; strings sort ascending by default. */
static void sort_value(const struct mms_view_env *env, enum lr_col k, const struct mms_row *r,
		       struct sortkey *out)
{
	const struct mms_task *t;

	out->v = 0;
	out->s = NULL;
	switch (k) {
	case LR_NAME:
		out->s = r->label;
		break;
	case LR_TYPE:
		out->s = mms_lock_type_name(r->flags);
		break;
	case LR_TID:
	case LR_PID:
		t = row_task(env, r);
		out->v = t ? (k == LR_TID ? t->tid : t->tgid) : 0;
		break;
	case LR_COUNT:
		out->v = r->wait.count;
		break;
	case LR_AVG:
		out->v = mms_stat_avg(&r->wait);
		break;
	case LR_MAX:
		out->v = r->wait.max;
		break;
	case LR_P99:
		out->v = mms_stat_percentile(&r->wait, 99);
		break;
	default:
		out->v = r->wait.total;
	}
}

static bool sort_desc;
static const struct mms_row *sort_rows;

static int cmp_keys(const void *a, const void *b)
{
	const struct sortkey *x = a, *y = b;
	int c;

	if (x->s)
		c = strcmp(x->s, y->s);
	else
		c = x->v < y->v ? -1 : x->v > y->v;
	if (!c) {	/* ties: most wait first, then name, so the order is stable */
		uint64_t tx = sort_rows[x->idx].wait.total, ty = sort_rows[y->idx].wait.total;

		c = tx > ty ? -1 : tx < ty;
		if (!c)
			return strcmp(sort_rows[x->idx].label, sort_rows[y->idx].label);
		return c;
	}
	return sort_desc ? -c : c;
}

static void swap_keys(struct sortkey *a, struct sortkey *b)
{
	struct sortkey t = *a;

	*a = *b;
	*b = t;
}

/*
 * Moves the k smallest keys (in cmp_keys order) to keys[0, k), unordered:
 * quickselect, so a frame only pays for sorting the rows it can show.
 */
static void select_first(struct sortkey *keys, size_t n, size_t k)
{
	size_t lo = 0, hi = n;

	while (hi - lo > 16 && k > lo && k < hi) {
		size_t mid = lo + (hi - lo) / 2, i = lo, j = hi - 1;
		struct sortkey pivot;

		/* Median of three as the pivot, parked at lo. */
		if (cmp_keys(&keys[mid], &keys[lo]) < 0)
			swap_keys(&keys[mid], &keys[lo]);
		if (cmp_keys(&keys[hi - 1], &keys[lo]) < 0)
			swap_keys(&keys[hi - 1], &keys[lo]);
		if (cmp_keys(&keys[hi - 1], &keys[mid]) < 0)
			swap_keys(&keys[hi - 1], &keys[mid]);
		swap_keys(&keys[lo], &keys[mid]);
		pivot = keys[lo];
		for (;;) {
			do
				i++;
			while (i < hi && cmp_keys(&keys[i], &pivot) < 0);
			do
				j--;
			while (cmp_keys(&keys[j], &pivot) > 0);
			if (i >= j)
				break;
			swap_keys(&keys[i], &keys[j]);
		}
		swap_keys(&keys[lo], &keys[j]);
		if (j < k)
			lo = j + 1;
		else
			hi = j;
	}
}

/* Makes sure order[0, want) is sorted (the rest is sorted lazily, when scrolled to). */
static void sort_upto(struct lockrows *lr, size_t want)
{
	size_t n = lr->nr_keys;

	sort_desc = lr->sort_desc;
	sort_rows = lr->rows.rows;
	if (want > n)
		want = n;
	if (want <= lr->sorted)
		return;
	/* Sort a bit more than asked, so scrolling does not sort on every line. */
	want = want + want / 2 + 64 < n ? want + want / 2 + 64 : n;
	select_first(lr->keys + lr->sorted, n - lr->sorted, want - lr->sorted);
	qsort(lr->keys + lr->sorted, want - lr->sorted, sizeof(*lr->keys), cmp_keys);
	for (size_t i = lr->sorted; i < want; i++)
		lr->order[i] = lr->keys[i].idx;
	lr->sorted = want;
}

/* Row i of the display order. */
static const struct mms_row *row_at(struct lockrows *lr, size_t i)
{
	sort_upto(lr, i + 1);
	return &lr->rows.rows[lr->order[i]];
}

/* Where a key lands in the display order, without sorting everything. */
static size_t rank_of(struct lockrows *lr, const struct sortkey *k)
{
	size_t r = 0;

	sort_desc = lr->sort_desc;
	sort_rows = lr->rows.rows;
	for (size_t i = 0; i < lr->nr_keys; i++)
		if (cmp_keys(&lr->keys[i], k) < 0)
			r++;
	return r;
}

static bool row_matches(const struct mms_view_env *env, const struct mms_row *r,
			enum mms_group by)
{
	const struct mms_task *t;
	char num[24];

	if (!env->filter || !*env->filter || vu_match(env->filter, r->label))
		return true;
	if (by != MMS_BY_TASK)
		return false;
	t = row_task(env, r);
	if (!t)
		return false;
	snprintf(num, sizeof(num), "%u", t->tid);
	if (vu_match(env->filter, num))
		return true;
	snprintf(num, sizeof(num), "%u", t->tgid);
	return vu_match(env->filter, num);
}

int lockrows_update(void *priv, const struct mms_view_env *env)
{
	struct lockrows *lr = priv;
	const struct lockrows_cfg *cfg = lr->cfg;
	struct mms_query q = { .by = cfg->by, .sort = MMS_SORT_WAIT_TOTAL, .from = env->from,
			       .to = env->cur, .stack_skip = env->stack_skip, .no_sort = true };
	enum lr_col k = cfg->kinds[lr->t.sort];
	uint64_t from_seq, cur_seq;
	size_t n = 0;
	int err;

	if (lr->t.nr && lr->t.sel < lr->t.nr) {
		lr->sel_key = row_at(lr, lr->t.sel)->key;
		lr->have_sel = true;
	}
	lr->t.nr = 0;
	lr->nr_keys = lr->sorted = 0;
	lr->total = 0;
	if (!env->valid) {
		lr->have_rows = false;
		return 0;
	}
	from_seq = mms_store_at(env->st, env->from)->seq;
	cur_seq = mms_store_at(env->st, env->cur)->seq;
	if (!lr->have_rows || lr->q_from_seq != from_seq || lr->q_cur_seq != cur_seq ||
	    lr->q_epoch != env->epoch || lr->q_skip != env->stack_skip) {
		lr->have_rows = false;
		err = mms_query_locks(env->st, &q, &lr->rows);
		if (err)
			return err;
		lr->have_rows = true;
		if (env->from == env->cur)	/* the sparkline needs exactly these rows */
			vu_series_seed(lr->series, env, env->cur, &lr->rows);
		lr->q_from_seq = from_seq;
		lr->q_cur_seq = cur_seq;
		lr->q_epoch = env->epoch;
		lr->q_skip = env->stack_skip;
	}
	lr->total = lr->rows.nr;
	if (lr->rows.nr > lr->order_cap) {
		uint32_t *o = realloc(lr->order, lr->rows.nr * sizeof(*o));
		struct sortkey *sk = realloc(lr->keys, lr->rows.nr * sizeof(*sk));

		if (o)
			lr->order = o;
		if (sk)
			lr->keys = sk;
		if (!o || !sk)
			return -ENOMEM;
		lr->order_cap = lr->rows.nr;
	}
	for (size_t i = 0; i < lr->rows.nr; i++) {
		if (!row_matches(env, &lr->rows.rows[i], cfg->by))
			continue;
		sort_value(env, k, &lr->rows.rows[i], &lr->keys[n]);
		lr->keys[n++].idx = (uint32_t)i;
	}
	lr->nr_keys = n;
	lr->sorted = 0;
	lr->sort_desc = cfg->cols[lr->t.sort].left ? lr->t.invert : !lr->t.invert;
	lr->t.nr = n;
	/* Where the selection went: found among all rows, then sorted up to it. */
	if (lr->have_sel) {
		for (size_t i = 0; i < n; i++)
			if (lr->rows.rows[lr->keys[i].idx].key == lr->sel_key) {
				lr->t.sel = rank_of(lr, &lr->keys[i]);
				break;
			}
	}
	if (lr->t.sel >= n)
		lr->t.sel = n ? n - 1 : 0;
	return 0;
}

static void cell_text(const struct lockrows *lr, const struct mms_view_env *env, enum lr_col k,
		      const struct mms_row *r, char *buf, size_t len)
{
	const struct mms_task *t;

	switch (k) {
	case LR_NAME:
		snprintf(buf, len, "%s", r->label);
		break;
	case LR_TYPE:
		snprintf(buf, len, "%s", mms_lock_type_name(r->flags));
		break;
	case LR_TID:
	case LR_PID:
		t = row_task(env, r);
		snprintf(buf, len, "%u", t ? (k == LR_TID ? t->tid : t->tgid) : 0);
		break;
	case LR_LOCK:
		/* The first lock seen stands for the row: enough to recognise it. */
		mms_store_lock_label(env->st, r->first_lock, buf, len);
		break;
	case LR_COUNT:
		vu_fmt_rate(buf, len, r->wait.count, env->secs);
		break;
	case LR_WAIT:
		vu_fmt_wait_rate(buf, len, r->wait.total, env->secs);
		break;
	case LR_AVG:
		vu_fmt_time(buf, len, mms_stat_avg(&r->wait));
		break;
	case LR_MAX:
		vu_fmt_time(buf, len, r->wait.max);
		break;
	case LR_P99:
		vu_fmt_time(buf, len, mms_stat_percentile(&r->wait, 99));
		break;
	default:
		buf[0] = 0;
	}
}

static void draw_row(struct lockrows *lr, const struct mms_view_env *env, struct mms_canvas *c,
		     int y, const struct mms_row *r)
{
	uint64_t series[SPARK_MAX];
	char buf[128];

	for (int i = 0; i < lr->t.nr_cols; i++) {
		enum lr_col k = lr->cfg->kinds[i];
		int x = lr->t.x[i], w = lr->t.w[i];
		uint32_t n;

		if (w <= 0)
			continue;
		if (k == LR_SPARK) {
			n = vu_series_get(lr->series, env, r->key, false, series, SPARK_MAX);
			mms_canvas_spark(c, x, y, w, series, n, 0, MMS_ROLE_SPARK);
			continue;
		}
		cell_text(lr, env, k, r, buf, sizeof(buf));
		if (lr->cfg->cols[i].left)
			mms_canvas_put(c, x, y, MMS_ROLE_NORMAL, buf, w);
		else
			mms_canvas_put_right(c, x, y, w,
					     k == LR_WAIT ? MMS_ROLE_VALUE : MMS_ROLE_NORMAL, buf);
	}
}

void lockrows_draw(void *priv, const struct mms_view_env *env, struct mms_canvas *c, int y,
		   int h)
{
	struct lockrows *lr = priv;
	const struct mms_interval *iv;
	char msg[160];

	if (h < 3)
		return;
	if (!env->valid) {
		vu_empty(c, y, h, "waiting for the first interval...");
		return;
	}
	iv = mms_store_at(env->st, env->cur);
	snprintf(msg, sizeof(msg), "%zu %s%s%s  range: %s, %.1f s to #%llu", lr->t.nr,
		 lr->cfg->noun, env->filter && *env->filter ? " matching /" : "",
		 env->filter && *env->filter ? env->filter : "", mms_range_name(env->range),
		 env->secs, (unsigned long long)iv->seq);
	if (lr->t.nr != lr->total)
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "  (%zu in all)", lr->total);
	mms_canvas_put(c, 0, y, MMS_ROLE_DIM, msg, c->w);
	mms_list_layout(&lr->t, c->w);
	mms_list_draw_head(&lr->t, c, y + 1);
	mms_list_set_rows(&lr->t, y + 2, h - 2);
	if (!lr->t.nr) {
		vu_empty(c, y + 2, h - 2, lr->total ? "no rows match the filter (\\ clears it)" :
			 "no contention in this range");
		return;
	}
	for (int i = 0; i < h - 2 && lr->t.top + (size_t)i < lr->t.nr; i++) {
		size_t row = lr->t.top + (size_t)i;

		draw_row(lr, env, c, y + 2 + i, row_at(lr, row));
		if (row == lr->t.sel)
			mms_canvas_paint(c, 0, y + 2 + i, c->w, MMS_ROLE_SELECTED);
	}
}

bool lockrows_enter(void *priv, struct mms_focus *out)
{
	struct lockrows *lr = priv;
	const struct mms_row *r;

	if (!lr->t.nr || lr->cfg->focus == MMS_FOCUS_NONE)
		return false;
	r = row_at(lr, lr->t.sel);
	out->kind = lr->cfg->focus;
	out->key = lr->cfg->focus == MMS_FOCUS_LOCK ? r->first_lock :
		   lr->cfg->focus == MMS_FOCUS_TASK ? r->first_task : r->key;
	snprintf(out->label, sizeof(out->label), "%s", r->label);
	return true;
}
