// SPDX-License-Identifier: GPL-2.0
/*
 * Lock detail: everything about one lock (or one caller, or one thread)
 * over the range: totals, wait per second over the last minute, the wait
 * histogram, the call stacks that waited, the tasks that waited and the
 * locks involved.  Reached with Enter from Locks, Callers or Tasks; without
 * a focus it shows the lock with the most wait.
 *
 * The page is drawn onto a tall scratch canvas and the visible part copied
 * out, so scrolling is just an offset.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detail.h"
#include "mmscope/format.h"
#include "util.h"

#define PAGE_ROWS 400
#define TOP_N 12
#define SPARK_MAX 600

struct agg_ent {
	uint64_t key;
	struct mms_stat s;
};

struct detail {
	struct mms_focus focus;		/* as asked; kind NONE: the top lock */
	struct mms_focus shown;		/* what the page is about */
	struct mms_list t;		/* a document: scrolls, no selection */
	struct mms_canvas *page;
	int page_rows;
	struct mms_stat total;
	struct util_agg stacks, tasks, locks;
	uint64_t series[SPARK_MAX];
	uint32_t nr_series;
};

static int detail_create(void **priv)
{
	struct detail *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	d->t.no_select = true;
	util_agg_init(&d->stacks, sizeof(struct agg_ent));
	util_agg_init(&d->tasks, sizeof(struct agg_ent));
	util_agg_init(&d->locks, sizeof(struct agg_ent));
	*priv = d;
	return 0;
}

static void detail_destroy(void *priv)
{
	struct detail *d = priv;

	if (!d)
		return;
	util_agg_free(&d->stacks);
	util_agg_free(&d->tasks);
	util_agg_free(&d->locks);
	mms_canvas_destroy(d->page);
	free(d);
}

static struct mms_list *detail_table(void *priv)
{
	return &((struct detail *)priv)->t;
}

static void detail_focus(void *priv, const struct mms_focus *f)
{
	struct detail *d = priv;

	d->focus = *f;
	d->t.top = 0;
}

static uint64_t caller_key(const struct mms_view_env *env, const struct mms_lock_sample *s)
{
	uint32_t sym = mms_stack_caller(mms_store_get_stack(env->st, s->stack_id), env->stack_skip,
					NULL);

	/* The same key mms_query_locks gives MMS_BY_CALLER rows. */
	return sym ? ((uint64_t)1 << 63) | sym : 0;
}

static bool sample_in_focus(const struct detail *d, const struct mms_view_env *env,
			    const struct mms_lock_sample *s)
{
	switch (d->shown.kind) {
	case MMS_FOCUS_LOCK:
		return s->lock_id == d->shown.key;
	case MMS_FOCUS_TASK:
		return s->task_id == d->shown.key;
	case MMS_FOCUS_CALLER:
		return caller_key(env, s) == d->shown.key;
	default:
		return false;
	}
}

static int add(struct util_agg *a, uint64_t key, const struct mms_stat *s)
{
	struct agg_ent *e = util_agg_get(a, key);

	if (!e)
		return -ENOMEM;
	mms_stat_merge(&e->s, s);
	return 0;
}

/* Without a focus: the lock with the most wait in the range. */
static void pick_top_lock(struct detail *d, const struct mms_view_env *env)
{
	struct mms_query q = { .by = MMS_BY_LOCK, .sort = MMS_SORT_WAIT_TOTAL, .from = env->from,
			       .to = env->cur };
	struct mms_rows rows = { 0 };

	d->shown.kind = MMS_FOCUS_NONE;
	if (!mms_query_locks(env->st, &q, &rows) && rows.nr) {
		d->shown.kind = MMS_FOCUS_LOCK;
		d->shown.key = rows.rows[0].key;
		snprintf(d->shown.label, sizeof(d->shown.label), "%s", rows.rows[0].label);
	}
	mms_rows_free(&rows);
}

static int detail_update(void *priv, const struct mms_view_env *env)
{
	struct detail *d = priv;
	int err = 0;

	util_agg_reset(&d->stacks);
	util_agg_reset(&d->tasks);
	util_agg_reset(&d->locks);
	mms_stat_init(&d->total);
	d->nr_series = 0;
	if (!env->valid)
		return 0;
	if (d->focus.kind == MMS_FOCUS_NONE)
		pick_top_lock(d, env);
	else
		d->shown = d->focus;
	if (d->shown.kind == MMS_FOCUS_NONE)
		return 0;
	for (uint32_t i = env->spark_from < env->from ? env->spark_from : env->from;
	     i <= env->cur && !err; i++) {
		const struct mms_interval *iv = mms_store_at(env->st, i);
		bool in_range = i >= env->from;
		uint64_t wait = 0;

		for (uint32_t j = 0; j < iv->n_locks && !err; j++) {
			const struct mms_lock_sample *s = &iv->locks[j];

			if (!sample_in_focus(d, env, s))
				continue;
			wait += s->wait.total;
			if (!in_range)
				continue;
			mms_stat_merge(&d->total, &s->wait);
			err = add(&d->stacks, s->stack_id, &s->wait);
			if (!err)
				err = add(&d->tasks, s->task_id, &s->wait);
			if (!err)
				err = add(&d->locks, s->lock_id, &s->wait);
		}
		if (i >= env->spark_from && d->nr_series < SPARK_MAX) {
			double secs = iv->dur_ns ? (double)iv->dur_ns / 1e9 : 1.0;

			d->series[d->nr_series++] = (uint64_t)((double)wait / secs);
		}
	}
	return err;
}

static int cmp_ent(const void *a, const void *b)
{
	const struct agg_ent *x = *(const struct agg_ent *const *)a;
	const struct agg_ent *y = *(const struct agg_ent *const *)b;

	if (x->s.total != y->s.total)
		return x->s.total > y->s.total ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* The entries of a, most wait first; at most max.  Returns how many. */
static uint32_t top(const struct util_agg *a, const struct agg_ent **out, uint32_t max)
{
	const struct agg_ent **all = malloc((a->n ? a->n : 1) * sizeof(*all));
	uint32_t n;

	if (!all)
		return 0;
	for (uint32_t i = 0; i < a->n; i++)
		all[i] = util_agg_at(a, i);
	qsort(all, a->n, sizeof(*all), cmp_ent);
	n = a->n < max ? a->n : max;
	memcpy(out, all, n * sizeof(*out));
	free(all);
	return n;
}

static void stat_cols(char *buf, size_t len, const struct mms_stat *s, double secs)
{
	char rate[16], wait[16], avg[16], max[16];

	util_fmt_rate(rate, sizeof(rate), s->count, secs);
	util_fmt_wait_rate(wait, sizeof(wait), s->total, secs);
	util_fmt_time(avg, sizeof(avg), mms_stat_avg(s));
	util_fmt_time(max, sizeof(max), s->max);
	snprintf(buf, len, "%7s %7s %7s %7s", rate, wait, avg, max);
}

static void draw_totals(const struct detail *d, const struct mms_view_env *env,
			struct mms_canvas *c, int y)
{
	char total[24], rate[16], avg[16], mn[16], mx[16], p50[16], p99[16];

	mms_fmt_time(total, sizeof(total), d->total.total, 0);
	if (total[0] && total[strlen(total) - 1] == ' ')
		total[strlen(total) - 1] = 0;	/* perf's unit column pads "s " */
	util_fmt_rate(rate, sizeof(rate), d->total.count, env->secs);
	mms_canvas_printf(c, 0, y, MMS_ROLE_NORMAL, c->w,
			  "%s, %.1f s: %llu contentions (%s/s), %s waited",
			  mms_range_name(env->range), env->secs,
			  (unsigned long long)d->total.count, rate, total);
	util_fmt_time(avg, sizeof(avg), mms_stat_avg(&d->total));
	util_fmt_time(mn, sizeof(mn), d->total.min);
	util_fmt_time(mx, sizeof(mx), d->total.max);
	util_fmt_time(p50, sizeof(p50), mms_stat_percentile(&d->total, 50));
	util_fmt_time(p99, sizeof(p99), mms_stat_percentile(&d->total, 99));
	mms_canvas_printf(c, 0, y + 1, MMS_ROLE_NORMAL, c->w,
			  "avg %s  min %s  max %s  p50 %s  p99 %s", avg, mn, mx, p50, p99);
}

static int draw_title(struct detail *d, const struct mms_view_env *env, struct mms_canvas *c,
		      int y)
{
	const struct mms_lock_info *l;
	const struct mms_task *t;

	switch (d->shown.kind) {
	case MMS_FOCUS_LOCK:
		l = mms_store_get_lock(env->st, (uint32_t)d->shown.key);
		mms_canvas_printf(c, 0, y, MMS_ROLE_TITLE, c->w, "Lock %s", d->shown.label);
		if (l)
			mms_canvas_printf(c, 0, y + 1, MMS_ROLE_DIM, c->w,
					  "kind %s  address %#llx%s%s",
					  mms_lock_kind_name(l->kind), (unsigned long long)l->addr,
					  l->detail_id ? "  " : "",
					  mms_store_get_str(env->st, l->detail_id));
		break;
	case MMS_FOCUS_TASK:
		t = mms_store_get_task(env->st, (uint32_t)d->shown.key);
		if (t && mms_tgid_short(t->tgid))
			mms_canvas_printf(c, 0, y, MMS_ROLE_TITLE, c->w, "Processes <%s> that "
					  "lived less than an interval, together",
					  mms_store_get_str(env->st, t->comm_id));
		else
			mms_canvas_printf(c, 0, y, MMS_ROLE_TITLE, c->w,
					  "Thread %u (%s) of process %u", t ? t->tid : 0,
					  t ? mms_store_get_str(env->st, t->comm_id) : "?",
					  t ? t->tgid : 0);
		break;
	default:
		mms_canvas_printf(c, 0, y, MMS_ROLE_TITLE, c->w, "Caller %s", d->shown.label);
		break;
	}
	draw_totals(d, env, c, y + 2);
	mms_canvas_put(c, 0, y + 4, MMS_ROLE_DIM, "wait/s, last minute:", c->w);
	mms_canvas_spark(c, 21, y + 4, c->w - 21, d->series, d->nr_series, 0, MMS_ROLE_SPARK);
	return 5;
}

static int draw_stacks(struct detail *d, const struct mms_view_env *env, struct mms_canvas *c,
		       int y)
{
	const struct agg_ent *e[TOP_N];
	uint32_t n = top(&d->stacks, e, TOP_N);
	int rows = 0;
	char buf[64];

	rows += util_section(c, y + rows, "call stacks  (cont/s  wait/s  avg  max)");
	for (uint32_t i = 0; i < n && y + rows < c->h - 1; i++) {
		const struct mms_stack *st = mms_store_get_stack(env->st, (uint32_t)e[i]->key);

		stat_cols(buf, sizeof(buf), &e[i]->s, env->secs);
		mms_canvas_put(c, 0, y + rows, MMS_ROLE_VALUE, buf, c->w);
		if (!st || !st->nr)
			mms_canvas_put(c, 33, y + rows, MMS_ROLE_DIM, "(no stack)", c->w);
		for (uint32_t f = 0; st && f < st->nr && y + rows < c->h - 1; f++) {
			const char *sym = mms_store_get_str(env->st, st->sym_ids[f]);

			if (*sym)
				mms_canvas_put(c, 33, y + rows, f == env->stack_skip ?
					       MMS_ROLE_NORMAL : MMS_ROLE_DIM, sym, c->w - 33);
			else
				mms_canvas_printf(c, 33, y + rows, MMS_ROLE_DIM, c->w - 33, "%#llx",
						  (unsigned long long)st->ips[f]);
			rows++;
		}
		if (!st || !st->nr)
			rows++;
	}
	return rows;
}

static int draw_tasks(struct detail *d, const struct mms_view_env *env, struct mms_canvas *c,
		      int y)
{
	const struct agg_ent *e[TOP_N];
	uint32_t n = top(&d->tasks, e, TOP_N);
	int rows = util_section(c, y, "tasks  (cont/s  wait/s  avg  max  tid  pid  comm)");
	char buf[64];

	for (uint32_t i = 0; i < n && y + rows < c->h; i++, rows++) {
		const struct mms_task *t = mms_store_get_task(env->st, (uint32_t)e[i]->key);

		stat_cols(buf, sizeof(buf), &e[i]->s, env->secs);
		mms_canvas_put(c, 0, y + rows, MMS_ROLE_VALUE, buf, c->w);
		if (t && mms_tgid_short(t->tgid))
			mms_canvas_printf(c, 33, y + rows, MMS_ROLE_NORMAL, c->w - 33,
					  "%7s %7s <%s>", "-", "-",
					  mms_store_get_str(env->st, t->comm_id));
		else
			mms_canvas_printf(c, 33, y + rows, MMS_ROLE_NORMAL, c->w - 33,
					  "%7u %7u %s", t ? t->tid : 0, t ? t->tgid : 0,
					  t ? mms_store_get_str(env->st, t->comm_id) : "?");
	}
	return rows;
}

static int draw_locks(struct detail *d, const struct mms_view_env *env, struct mms_canvas *c,
		      int y)
{
	const struct agg_ent *e[TOP_N];
	uint32_t n = top(&d->locks, e, TOP_N);
	int rows = util_section(c, y, "locks  (cont/s  wait/s  avg  max  lock)");
	char buf[64], label[128];

	for (uint32_t i = 0; i < n && y + rows < c->h; i++, rows++) {
		stat_cols(buf, sizeof(buf), &e[i]->s, env->secs);
		mms_canvas_put(c, 0, y + rows, MMS_ROLE_VALUE, buf, c->w);
		mms_store_lock_label(env->st, (uint32_t)e[i]->key, label, sizeof(label));
		mms_canvas_put(c, 33, y + rows, MMS_ROLE_NORMAL, label, c->w - 33);
	}
	return rows;
}

/* Lays the whole page out on the scratch canvas; returns its height. */
static int draw_page(struct detail *d, const struct mms_view_env *env, struct mms_canvas *c)
{
	int y = draw_title(d, env, c, 0) + 1;

	y += util_section(c, y, "wait histogram");
	y += util_hist(c, y, c->h - y, &d->total, true) + 1;
	if (d->shown.kind != MMS_FOCUS_TASK && y < c->h)
		y += draw_tasks(d, env, c, y) + 1;
	if (d->shown.kind != MMS_FOCUS_LOCK && y < c->h)
		y += draw_locks(d, env, c, y) + 1;
	if (y < c->h)
		y += draw_stacks(d, env, c, y);
	return y < c->h ? y : c->h;
}

static void detail_draw(void *priv, const struct mms_view_env *env, struct mms_canvas *c, int y,
			int h)
{
	struct detail *d = priv;

	if (h < 1)
		return;
	if (!env->valid) {
		util_empty(c, y, h, "waiting for the first interval...");
		return;
	}
	if (d->shown.kind == MMS_FOCUS_NONE) {
		util_empty(c, y, h, "no contention in this range (Enter on a row of Locks, "
			 "Callers or Tasks opens its detail)");
		return;
	}
	if (!d->page || d->page->w != c->w) {
		mms_canvas_destroy(d->page);
		d->page = NULL;
		if (mms_canvas_create(c->w, PAGE_ROWS, c->utf8, &d->page))
			return;
	}
	mms_canvas_clear(d->page);
	d->page_rows = draw_page(d, env, d->page);
	d->t.nr = (size_t)d->page_rows;
	mms_list_set_rows(&d->t, y, h);
	for (int i = 0; i < h && d->t.top + (size_t)i < d->t.nr; i++)
		memcpy(&c->cells[(size_t)(y + i) * (size_t)c->w],
		       mms_canvas_at(d->page, 0, (int)d->t.top + i),
		       (size_t)c->w * sizeof(c->cells[0]));
}

const struct mms_view mms_view_detail = {
	.name = "Detail",
	.help = "one lock, caller or thread: totals, wait histogram, stacks, tasks, locks",
	.create = detail_create,
	.destroy = detail_destroy,
	.update = detail_update,
	.draw = detail_draw,
	.list = detail_table,
	.focus = detail_focus,
};
