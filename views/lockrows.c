// SPDX-License-Identifier: GPL-2.0
/* The lock-wait table shared by Locks, Callers and Tasks (see lockrows.h). */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
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
	/*
	 * Rows come without labels; a row's label is made when something needs
	 * it (drawn, sorted by name, filtered, a tie), from lock labels kept
	 * from one interval to the next.
	 */
	struct mms_query q;		/* the query rows[] came from */
	struct mms_labels *labels;
	uint64_t *labelled;		/* bit per row: label made */
	size_t labelled_cap;
	/*
	 * The rows shown, one key each, sorted lazily: where final has bit i
	 * set, keys[i] is the row at display position i; between two such
	 * positions are the right rows in no order.  A frame sorts the rows it
	 * shows and partitions the rest only as far as it must to find them.
	 */
	struct sortkey *keys;
	uint64_t *final;
	size_t keys_cap;
	struct util_series *series;
	uint64_t sel_key;
	bool have_sel;
	size_t total;		/* rows before the filter */
	size_t nr_keys;		/* rows shown */
	bool sort_desc;
	/*
	 * What rows[] was queried for: committed intervals never change, so the
	 * same range needs no new query when only the sort or the filter moved.
	 */
	bool have_rows;
	uint64_t q_from_seq, q_cur_seq, q_epoch;
	uint32_t q_skip;
	const struct mms_store *q_st;
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
	err = util_series_create(cfg->by, &lr->series);
	if (!err)
		err = mms_labels_create(&lr->labels);
	if (err) {
		util_series_destroy(lr->series);
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
	mms_labels_destroy(lr->labels);
	free(lr->labelled);
	free(lr->keys);
	free(lr->final);
	util_series_destroy(lr->series);
	free(lr);
}

struct mms_list *lockrows_table(void *priv)
{
	return &((struct lockrows *)priv)->t;
}

/* The row's task: its waiter's, or for owners the owner's. */
static const struct mms_task *row_task(const struct lockrows *lr, const struct mms_view_env *env,
				       const struct mms_row *r)
{
	return mms_store_get_task(env->st, lr->cfg->by == MMS_BY_OWNER ? mms_owner_task(r->key) :
				  r->first_task);
}

static const char *row_label(struct lockrows *lr, const struct mms_store *st, size_t idx)
{
	struct mms_row *r = &lr->rows.rows[idx];

	if (!(lr->labelled[idx / 64] >> (idx % 64) & 1)) {
		mms_query_row_label(st, &lr->q, r);
		lr->labelled[idx / 64] |= 1ULL << (idx % 64);
	}
	return r->label;
}

/* The number or string a column sorts by; strings sort ascending by default. */
static void sort_value(struct lockrows *lr, const struct mms_view_env *env, enum lockrows_col k,
		       size_t idx, struct sortkey *out)
{
	const struct mms_row *r = &lr->rows.rows[idx];
	const struct mms_task *t;

	out->v = 0;
	out->s = NULL;
	switch (k) {
	case LOCKROWS_NAME:
		out->s = row_label(lr, env->st, idx);
		break;
	case LOCKROWS_TYPE:
		out->s = mms_lock_type_name(r->flags);
		break;
	case LOCKROWS_TID:
	case LOCKROWS_PID:
		t = row_task(lr, env, r);
		out->v = t && !mms_tgid_short(t->tgid) ? (k == LOCKROWS_TID ? t->tid : t->tgid) : 0;
		break;
	case LOCKROWS_CGROUP:
		t = row_task(lr, env, r);
		out->s = t && t->cgroup_id ? mms_store_get_str(env->st, t->cgroup_id) : "";
		break;
	case LOCKROWS_HELD:
		row_label(lr, env->st, idx);
		out->s = r->name_id ? mms_store_get_str(env->st, r->name_id) : "";
		break;
	case LOCKROWS_COUNT:
		out->v = r->wait.count;
		break;
	case LOCKROWS_AVG:
		out->v = mms_stat_avg(&r->wait);
		break;
	case LOCKROWS_MAX:
		out->v = r->wait.max;
		break;
	case LOCKROWS_P99:
		out->v = mms_stat_percentile(&r->wait, 99);
		break;
	default:
		out->v = r->wait.total;
	}
}

/* qsort has no context argument in C11; everything runs on the one loop. */
static bool sort_desc;
static struct lockrows *sort_lr;
static const struct mms_store *sort_st;

static int cmp_keys(const void *a, const void *b)
{
	const struct sortkey *x = a, *y = b;
	int c;

	if (x->s)
		c = strcmp(x->s, y->s);
	else
		c = x->v < y->v ? -1 : x->v > y->v;
	if (!c) {	/* ties: most wait first, then name, so the order is stable */
		const struct mms_row *rows = sort_lr->rows.rows;
		uint64_t tx = rows[x->idx].wait.total, ty = rows[y->idx].wait.total;

		c = tx > ty ? -1 : tx < ty;
		if (!c)
			return strcmp(row_label(sort_lr, sort_st, x->idx),
				      row_label(sort_lr, sort_st, y->idx));
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

static bool is_final(const struct lockrows *lr, size_t i)
{
	return lr->final[i / 64] >> (i % 64) & 1;
}

static void set_final(struct lockrows *lr, size_t lo, size_t hi)
{
	for (size_t i = lo; i < hi; i++)
		lr->final[i / 64] |= 1ULL << (i % 64);
}

/*
 * Makes keys[p] final: quickselect inside the unsorted stretch around p.
 * Every pivot lands where it belongs, so it is marked final too and later
 * calls work on ever smaller stretches.
 */
static void place(struct lockrows *lr, size_t p)
{
	struct sortkey *keys = lr->keys;
	size_t lo = p, hi = p + 1;

	if (is_final(lr, p))
		return;
	while (lo && !is_final(lr, lo - 1))
		lo--;
	while (hi < lr->nr_keys && !is_final(lr, hi))
		hi++;
	while (hi - lo > 16) {
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
		set_final(lr, j, j + 1);
		if (j == p)
			return;
		if (j < p)
			lo = j + 1;
		else
			hi = j;
	}
	qsort(keys + lo, hi - lo, sizeof(*keys), cmp_keys);
	set_final(lr, lo, hi);
}

/* Row i of the display order. */
static const struct mms_row *row_at(struct lockrows *lr, size_t i)
{
	size_t end = i + 64 < lr->nr_keys ? i + 64 : lr->nr_keys;

	sort_desc = lr->sort_desc;
	sort_lr = lr;
	sort_st = lr->q_st;
	if (!is_final(lr, i)) {
		/*
		 * Sort the rows a screen is likely to show from here in one go: with
		 * both ends final, the rows between are the right ones.
		 */
		place(lr, i);
		place(lr, end - 1);
		if (end - i > 2)
			qsort(lr->keys + i + 1, end - i - 2, sizeof(*lr->keys), cmp_keys);
		set_final(lr, i, end);
	}
	return &lr->rows.rows[lr->keys[i].idx];
}

/* Where a key lands in the display order, without sorting everything. */
static size_t rank_of(struct lockrows *lr, const struct sortkey *k)
{
	size_t r = 0;

	sort_desc = lr->sort_desc;
	sort_lr = lr;
	sort_st = lr->q_st;
	for (size_t i = 0; i < lr->nr_keys; i++)
		if (cmp_keys(&lr->keys[i], k) < 0)
			r++;
	return r;
}

static bool row_matches(struct lockrows *lr, const struct mms_view_env *env, size_t idx,
			enum mms_group by)
{
	const struct mms_row *r = &lr->rows.rows[idx];
	const struct mms_task *t;
	char num[24];

	if (!env->filter || !*env->filter || util_match(env->filter, row_label(lr, env->st, idx)))
		return true;
	if (by == MMS_BY_OWNER && r->name_id &&
	    util_match(env->filter, mms_store_get_str(env->st, r->name_id)))
		return true;
	if (by != MMS_BY_TASK && by != MMS_BY_OWNER)
		return false;
	t = row_task(lr, env, r);
	if (!t)
		return false;
	snprintf(num, sizeof(num), "%u", t->tid);
	if (util_match(env->filter, num))
		return true;
	snprintf(num, sizeof(num), "%u", t->tgid);
	return util_match(env->filter, num);
}

/* rows[] for env's range, queried again only when the range moved; *fresh when it was. */
static int query_rows(struct lockrows *lr, const struct mms_view_env *env, bool *fresh)
{
	struct mms_query q = { .by = lr->cfg->by, .sort = MMS_SORT_WAIT_TOTAL, .from = env->from,
			       .to = env->cur, .stack_skip = env->stack_skip, .no_sort = true,
			       .labels = lr->labels, .no_labels = true };
	uint64_t from_seq = mms_store_at(env->st, env->from)->seq;
	uint64_t cur_seq = mms_store_at(env->st, env->cur)->seq;
	int err;

	*fresh = false;
	if (lr->have_rows && lr->q_from_seq == from_seq && lr->q_cur_seq == cur_seq &&
	    lr->q_epoch == env->epoch && lr->q_skip == env->stack_skip)
		return 0;
	lr->have_rows = false;
	err = mms_query_locks(env->st, &q, &lr->rows);
	if (!err && lr->rows.nr > lr->labelled_cap) {
		size_t cap = (lr->rows.nr + 63) / 64 * 64;
		uint64_t *l = realloc(lr->labelled, cap / 8);

		if (l) {
			lr->labelled = l;
			lr->labelled_cap = cap;
		}
		err = l ? 0 : -ENOMEM;
	}
	if (err)
		return err;
	if (lr->rows.nr)
		memset(lr->labelled, 0, (lr->rows.nr + 63) / 64 * sizeof(*lr->labelled));
	lr->q = q;
	lr->q_st = env->st;
	lr->have_rows = true;
	lr->q_from_seq = from_seq;
	lr->q_cur_seq = cur_seq;
	lr->q_epoch = env->epoch;
	lr->q_skip = env->stack_skip;
	*fresh = true;
	return 0;
}

int lockrows_update(void *priv, const struct mms_view_env *env)
{
	struct lockrows *lr = priv;
	const struct lockrows_cfg *cfg = lr->cfg;
	enum lockrows_col k = cfg->kinds[lr->t.sort];
	struct util_seed *seed = NULL;
	size_t n = 0, sel = SIZE_MAX;
	bool fresh;
	int err;

	if (lr->t.nr && lr->t.sel < lr->t.nr) {
		lr->sel_key = row_at(lr, lr->t.sel)->key;
		lr->have_sel = true;
	}
	lr->t.nr = 0;
	lr->nr_keys = 0;
	lr->total = 0;
	if (!env->valid) {
		lr->have_rows = false;
		return 0;
	}
	err = query_rows(lr, env, &fresh);
	if (err)
		return err;
	lr->total = lr->rows.nr;
	if (lr->rows.nr > lr->keys_cap) {
		struct sortkey *sk = realloc(lr->keys, lr->rows.nr * sizeof(*sk));
		uint64_t *fin = realloc(lr->final, (lr->rows.nr + 63) / 64 * sizeof(*fin));

		if (sk)
			lr->keys = sk;
		if (fin)
			lr->final = fin;
		if (!sk || !fin)
			return -ENOMEM;
		lr->keys_cap = lr->rows.nr;
	}
	/* The sparkline needs exactly these rows: seeded in this pass, which reads them anyway. */
	if (fresh && env->from == env->cur)
		seed = util_series_seed_begin(lr->series, env, env->cur, lr->rows.nr);
	for (size_t i = 0; i < lr->rows.nr; i++) {
		const struct mms_row *r = &lr->rows.rows[i];

		/* The query wrote more than the caches hold: ask early for what is read next. */
		__builtin_prefetch(r + 8);
		if (seed)
			util_series_seed_add(seed, r->key, r->wait.total, r->wait.count);
		if (!row_matches(lr, env, i, cfg->by))
			continue;
		if (lr->have_sel && r->key == lr->sel_key)
			sel = n;
		sort_value(lr, env, k, i, &lr->keys[n]);
		lr->keys[n++].idx = (uint32_t)i;
	}
	lr->nr_keys = n;
	if (n)
		memset(lr->final, 0, (n + 63) / 64 * sizeof(*lr->final));
	lr->sort_desc = cfg->cols[lr->t.sort].left ? lr->t.invert : !lr->t.invert;
	lr->t.nr = n;
	/* Where the selection went: its rank, without sorting up to it. */
	if (sel < n)
		lr->t.sel = rank_of(lr, &lr->keys[sel]);
	if (lr->t.sel >= n)
		lr->t.sel = n ? n - 1 : 0;
	return 0;
}

static void cell_text(struct lockrows *lr, const struct mms_view_env *env, enum lockrows_col k,
		      const struct mms_row *r, char *buf, size_t len)
{
	const struct mms_task *t;

	switch (k) {
	case LOCKROWS_NAME:
		snprintf(buf, len, "%s", row_label(lr, env->st, (size_t)(r - lr->rows.rows)));
		break;
	case LOCKROWS_TYPE:
		snprintf(buf, len, "%s", mms_lock_type_name(r->flags));
		break;
	case LOCKROWS_TID:
	case LOCKROWS_PID:
		t = row_task(lr, env, r);
		if (t && mms_tgid_short(t->tgid))	/* short-lived processes together */
			snprintf(buf, len, "-");
		else
			snprintf(buf, len, "%u", t ? (k == LOCKROWS_TID ? t->tid : t->tgid) : 0);
		break;
	case LOCKROWS_CGROUP:
		t = row_task(lr, env, r);
		snprintf(buf, len, "%s", t && t->cgroup_id ?
			 mms_store_get_str(env->st, t->cgroup_id) : "-");
		break;
	case LOCKROWS_HELD:
		row_label(lr, env->st, (size_t)(r - lr->rows.rows));
		t = row_task(lr, env, r);
		snprintf(buf, len, "%s", r->name_id ? mms_store_get_str(env->st, r->name_id) :
			 t && t->tid ? "(running: no stack)" : "-");
		break;
	case LOCKROWS_LOCK:
		/* The first lock seen stands for the row: enough to recognise it. */
		mms_store_lock_label(env->st, r->first_lock, buf, len);
		break;
	case LOCKROWS_COUNT:
		util_fmt_rate(buf, len, r->wait.count, env->secs);
		break;
	case LOCKROWS_WAIT:
		util_fmt_wait_rate(buf, len, r->wait.total, env->secs);
		break;
	case LOCKROWS_AVG:
		util_fmt_time(buf, len, mms_stat_avg(&r->wait));
		break;
	case LOCKROWS_MAX:
		util_fmt_time(buf, len, r->wait.max);
		break;
	case LOCKROWS_P99:
		util_fmt_time(buf, len, mms_stat_percentile(&r->wait, 99));
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
		enum lockrows_col k = lr->cfg->kinds[i];
		int x = lr->t.x[i], w = lr->t.w[i];
		uint32_t n;

		if (w <= 0)
			continue;
		if (k == LOCKROWS_SPARK) {
			n = util_series_get(lr->series, env, r->key, false, series, SPARK_MAX);
			mms_canvas_spark(c, x, y, w, series, n, 0, MMS_ROLE_SPARK);
			continue;
		}
		cell_text(lr, env, k, r, buf, sizeof(buf));
		if (lr->cfg->cols[i].left)
			mms_canvas_put(c, x, y, MMS_ROLE_NORMAL, buf, w);
		else
			mms_canvas_put_right(c, x, y, w, k == LOCKROWS_WAIT ? MMS_ROLE_VALUE :
					     MMS_ROLE_NORMAL, buf);
	}
}

void lockrows_draw(void *priv, const struct mms_view_env *env, struct mms_canvas *c, int y,
		   int h)
{
	struct lockrows *lr = priv;
	const struct mms_interval *iv;
	char msg[256];

	if (h < 3)
		return;
	if (!env->valid) {
		util_empty(c, y, h, "waiting for the first interval...");
		return;
	}
	iv = mms_store_at(env->st, env->cur);
	snprintf(msg, sizeof(msg), "%zu %s%s%s  range: %s, %.1f s to #%llu", lr->t.nr,
		 lr->cfg->noun, env->filter && *env->filter ? " matching /" : "",
		 env->filter && *env->filter ? env->filter : "", mms_range_name(env->range),
		 env->secs, (unsigned long long)iv->seq);
	if (lr->t.nr != lr->total)
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "  (%zu in all)", lr->total);
	if (lr->cfg->note)
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "  %s", lr->cfg->note);
	mms_canvas_put(c, 0, y, MMS_ROLE_DIM, msg, c->w);
	mms_list_layout(&lr->t, c->w);
	mms_list_draw_head(&lr->t, c, y + 1);
	mms_list_set_rows(&lr->t, y + 2, h - 2);
	if (!lr->t.nr) {
		util_empty(c, y + 2, h - 2, lr->total ? "no rows match the filter (\\ clears it)" :
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
	snprintf(out->label, sizeof(out->label), "%s",
		 row_label(lr, lr->q_st, (size_t)(r - lr->rows.rows)));
	return true;
}
