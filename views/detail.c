// SPDX-License-Identifier: GPL-2.0
/*
 * Lock detail: everything about one lock (or one caller, or one thread)
 * over the range: totals, wait per second over the last minute, the wait
 * histogram, the call stacks that waited, the tasks that waited and the
 * locks involved, and with --lock-owner the tasks that held the lock (its
 * owners) and where.  Reached with Enter from Locks, Callers or Tasks;
 * without a focus it shows the lock with the most wait.
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
#define TOP_OWNERS 8	/* each with its stack: a screen of them */
#define OWNER_FRAMES 5	/* of an owner's stack: where it held the lock, and how it got there */
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
	struct util_agg owners;		/* by mms_owner_key(), as MMS_BY_OWNER rows */
	bool have_owners;		/* a wait in the range knows its owner (--lock-owner) */
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
	util_agg_init(&d->owners, sizeof(struct agg_ent));
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
	util_agg_free(&d->owners);
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

static bool sample_in_focus(const struct detail *d, const struct mms_view_env *env,
			    const struct mms_lock_sample *s)
{
	switch (d->shown.kind) {
	case MMS_FOCUS_LOCK:
		return s->lock_id == d->shown.key;
	case MMS_FOCUS_TASK:
		return s->task_id == d->shown.key;
	case MMS_FOCUS_CALLER:
		return mms_caller_key(env->st, s, env->stack_skip, NULL) == d->shown.key;
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
	util_agg_reset(&d->owners);
	d->have_owners = false;
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

			/* Any wait's: a spinlock of an owners session says it has none. */
			if (in_range && s->owner_id)
				d->have_owners = true;
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
			if (!err)
				err = add(&d->owners, mms_owner_key(s), &s->wait);
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

/*
 * Up to max frames of a stack from row y at column x, one a row: the symbol
 * the store holds for each (its address when it has none), frame hi bright.
 * A stack without frames reads none.  Returns the rows used.
 */
static int draw_frames(const struct mms_view_env *env, struct mms_canvas *c, int x, int y,
		       const struct mms_stack *st, uint32_t max, uint32_t hi, const char *none)
{
	int rows = 0;

	if (!st || !st->nr) {
		mms_canvas_put(c, x, y, MMS_ROLE_DIM, none, c->w - x);
		return 1;
	}
	for (uint32_t f = 0; f < st->nr && f < max && y + rows < c->h - 1; f++, rows++) {
		const char *sym = mms_store_get_str(env->st, st->sym_ids[f]);

		if (*sym)
			mms_canvas_put(c, x, y + rows, f == hi ? MMS_ROLE_NORMAL : MMS_ROLE_DIM, sym,
				       c->w - x);
		else
			mms_canvas_printf(c, x, y + rows, MMS_ROLE_DIM, c->w - x, "%#llx",
					  (unsigned long long)st->ips[f]);
	}
	return rows;
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
		rows += draw_frames(env, c, 33, y + rows, st, UINT32_MAX, env->stack_skip,
				    "(no stack)");
	}
	return rows;
}

/* An owner's wait, its share of the page's and its waits: "  5.75s  96.3%    101". */
static void owner_cols(char *buf, size_t len, const struct mms_stat *s, uint64_t all)
{
	char wait[16], share[16], count[16];

	util_fmt_time(wait, sizeof(wait), s->total);
	if (all)
		snprintf(share, sizeof(share), "%.1f%%", 100.0 * (double)s->total / (double)all);
	else
		snprintf(share, sizeof(share), "-");
	mms_fmt_count(count, sizeof(count), (double)s->count);
	snprintf(buf, len, "%7s %6s %7s", wait, share, count);
}

/* One owner's row and, under its name, the top of its stack; returns the rows used. */
static int draw_owner(const struct mms_view_env *env, struct mms_canvas *c, int y,
		      const struct agg_ent *e, uint64_t all)
{
	const struct mms_task *t = mms_store_get_task(env->st, mms_owner_task(e->key));
	const char *comm = t ? mms_store_get_str(env->st, t->comm_id) : "?";
	char buf[64];

	owner_cols(buf, sizeof(buf), &e->s, all);
	mms_canvas_put(c, 0, y, MMS_ROLE_VALUE, buf, c->w);
	if (t && mms_tgid_short(t->tgid))
		mms_canvas_printf(c, 23, y, MMS_ROLE_NORMAL, c->w - 23, "%7s %7s <%s>", "-", "-",
				  comm);
	else if (t && t->tid)
		mms_canvas_printf(c, 23, y, MMS_ROLE_NORMAL, c->w - 23, "%7u %7u %s", t->tid,
				  t->tgid, comm);
	else	/* MMS_OWNER_READERS, MMS_OWNER_NONE: no thread, so no stack */
		mms_canvas_printf(c, 23, y, MMS_ROLE_NORMAL, c->w - 23, "%7s %7s %s", "-", "-",
				  comm);
	if (!t || !t->tid || y + 1 >= c->h - 1)
		return 1;
	return 1 + draw_frames(env, c, 39, y + 1,
			       mms_store_get_stack(env->st, mms_owner_stack(e->key)), OWNER_FRAMES,
			       0, "(no stack: it was running)");
}

/*
 * Who held the lock as the waits began (--lock-owner), most wait first and
 * grouped as the Owners view groups them (owner and its stack); <readers>
 * and <none> are an rwsem without a writer.  The waits of no known owner are
 * one line, not a row.
 */
static int draw_owners(struct detail *d, const struct mms_view_env *env, struct mms_canvas *c,
		       int y)
{
	const struct agg_ent *e[TOP_OWNERS + 1];	/* the unknown may be one */
	const struct agg_ent *unknown = util_agg_find(&d->owners, 0);
	uint32_t n = top(&d->owners, e, TOP_OWNERS + 1), shown = 0;
	int rows = util_section(c, y, "owners  (wait  share  waits  tid  pid  owner, its stack)");
	char buf[64];

	for (uint32_t i = 0; i < n && shown < TOP_OWNERS && y + rows < c->h - 1; i++) {
		if (!e[i]->key)
			continue;
		rows += draw_owner(env, c, y + rows, e[i], d->total.total);
		shown++;
	}
	if (unknown && y + rows < c->h) {
		owner_cols(buf, sizeof(buf), &unknown->s, d->total.total);
		mms_canvas_printf(c, 0, y + rows++, MMS_ROLE_DIM, c->w,
				  "%s  owner unknown (spinlocks, rwlocks: no owner field)", buf);
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
	if (d->have_owners && y < c->h)
		y += draw_owners(d, env, c, y) + 1;
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
	.help = "one lock, caller or thread: totals, wait histogram, owners, stacks, tasks, locks",
	.create = detail_create,
	.destroy = detail_destroy,
	.update = detail_update,
	.draw = detail_draw,
	.list = detail_table,
	.focus = detail_focus,
};
