// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests: what the Locks view shows, frame after frame, against the
 * store read directly.  The view groups rows without labels, makes a row's
 * label only when it is drawn or compared (from lock labels kept across
 * intervals), sorts only the rows it shows, and draws sparklines from
 * per-interval tables and per-row series it keeps; every one of those
 * shortcuts must show exactly what a fresh computation shows: the same rows
 * in the same order, the same labels, counts, waits and sparklines.  The
 * frames move through a sliding minute, pause, other ranges, deep pages, and
 * sweeps of the store that hand lock ids out again to other locks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mmscope/canvas.h"
#include "mmscope/view.h"
#include "util.h"

#define SEC 1000000000ULL
#define LABEL 96		/* sizeof(struct mms_row.label) */
#define COL_COUNT 0		/* Locks: CONT/s, WAIT/s ... LOCK, sparkline */
#define COL_WAIT 1
#define COL_LOCK 6
#define COL_SPARK 7
#define MAX_IDS 16384
#define MAX_SPARK 600

static uint32_t rnd_state = 12345;

static uint32_t rnd(uint32_t n)
{
	rnd_state = rnd_state * 1103515245 + 12345;
	return (rnd_state >> 8) % n;
}

struct world {
	struct mms_store *st;
	const struct mms_view *v;
	void *priv;
	struct util_series *series;	/* the sparkline cache, used directly */
	struct mms_canvas *c, *want;
	uint32_t tasks[8], stacks[4];
	uint32_t nr_locks_made;
	/* This frame's minute from the samples: wait per second by interval and lock id. */
	uint64_t *spark;
	uint32_t spark_n, spark_ids;
};

/* Lock n of a set: every kind, unique labels, one longer than a row label holds. */
static uint32_t make_lock(struct mms_store *st, int set, uint32_t n)
{
	struct mms_lock_info li = { .addr = 0xffff888000000000ULL + ((uint64_t)set << 24) };
	char name[200];

	li.addr += n * 64;

	switch (n % 5) {
	case 0:
		li.kind = MMS_LOCK_MMAP;
		li.name_id = mms_store_str(st, "mmap_lock");
		li.owner_tgid = (uint32_t)set * 100000 + n;
		snprintf(name, sizeof(name), "proc-%d-%u", set, n);
		li.owner_comm_id = mms_store_str(st, name);
		break;
	case 1:
		li.kind = MMS_LOCK_I_MMAP;
		li.name_id = mms_store_str(st, "i_mmap_rwsem");
		snprintf(name, sizeof(name), "/usr/lib/set%d/file-%u.so", set, n);
		li.detail_id = mms_store_str(st, name);
		break;
	case 2:
		li.kind = MMS_LOCK_STATIC;
		if (n == 7)	/* cut at 95 characters, the same way everywhere */
			snprintf(name, sizeof(name), "long_%d_%u_%0150d", set, n, 0);
		else
			snprintf(name, sizeof(name), "static_lock_%d_%u", set, n);
		li.name_id = mms_store_str(st, name);
		break;
	case 3:
		li.kind = MMS_LOCK_SLAB;
		snprintf(name, sizeof(name), "&cache_%d_%u", set, n);
		li.name_id = mms_store_str(st, name);
		break;
	default:
		li.kind = MMS_LOCK_UNKNOWN;	/* labelled by its address */
	}
	return mms_store_lock(st, &li);
}

static void world_init(struct world *w, uint32_t window)
{
	struct mms_store_opts so = { .window = window, .max_bytes = 1ULL << 30 };
	const struct mms_view *const *v;

	memset(w, 0, sizeof(*w));
	assert_int_equal(mms_store_create(&so, &w->st), 0);
	for (v = mms_views; *v && strcmp((*v)->name, "Locks"); v++)
		;
	assert_non_null(*v);
	w->v = *v;
	assert_int_equal(w->v->create(&w->priv), 0);
	assert_int_equal(util_series_create(MMS_BY_LOCK, &w->series), 0);
	assert_int_equal(mms_canvas_create(160, 42, false, &w->c), 0);
	assert_int_equal(mms_canvas_create(160, 42, false, &w->want), 0);
}

static void world_finish(struct world *w)
{
	w->v->destroy(w->priv);
	util_series_destroy(w->series);
	mms_canvas_destroy(w->c);
	mms_canvas_destroy(w->want);
	mms_store_destroy(w->st);
	free(w->spark);
}

static void intern_common(struct world *w)
{
	char name[32];
	uint32_t sym;
	uint64_t ip;

	for (int i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "worker-%d", i);
		w->tasks[i] = mms_store_task(w->st, 5000 + (uint32_t)i, 5000, name);
	}
	for (int i = 0; i < 4; i++) {
		ip = 0xffffffff81000000ULL + (uint64_t)i * 16;
		snprintf(name, sizeof(name), "caller_%d+0x10", i);
		sym = mms_store_str(w->st, name);
		w->stacks[i] = mms_store_stack(w->st, &ip, &sym, 1);
	}
}

/* One interval: about 70 % of the locks, each with 1 to 3 samples to merge. */
static void add_interval(struct world *w, const uint32_t *locks, uint32_t nr, uint64_t seq,
			 uint64_t dur)
{
	assert_non_null(mms_store_begin(w->st, 1700000000ULL * SEC + seq * SEC));
	for (uint32_t i = 0; i < nr; i++) {
		if (rnd(10) < 3)
			continue;
		for (uint32_t k = 0, m = 1 + rnd(3); k < m; k++) {
			struct mms_lock_sample s = { .lock_id = locks[i] };

			s.stack_id = w->stacks[rnd(4)];
			s.task_id = w->tasks[rnd(8)];
			s.flags = rnd(2) ? MMS_LCB_WRITE : MMS_LCB_READ;

			mms_stat_add_n(&s.wait, 1000 + rnd(1000000), 1 + rnd(20));
			assert_int_equal(mms_store_add_lock(w->st, &s), 0);
		}
	}
	assert_int_equal(mms_store_commit(w->st, dur, 0), 0);
}

struct want_row {
	uint32_t id;
	uint64_t count, total;
	char label[LABEL];
};

static int cmp_want(const void *a, const void *b)
{
	const struct want_row *x = a, *y = b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(x->label, y->label);
}

/* The rows of [from, cur] summed from the samples, in the view's default order. */
static size_t want_rows(const struct world *w, const struct mms_view_env *env,
			struct want_row *out)
{
	static uint32_t at[MAX_IDS];
	size_t n = 0;

	memset(at, 0, sizeof(at));
	for (uint32_t i = env->from; i <= env->cur; i++) {
		const struct mms_interval *iv = mms_store_at(w->st, i);

		for (uint32_t j = 0; j < iv->n_locks; j++) {
			const struct mms_lock_sample *s = &iv->locks[j];

			assert_true(s->lock_id < MAX_IDS);
			if (!at[s->lock_id]) {
				out[n] = (struct want_row){ .id = s->lock_id };
				mms_store_lock_label(w->st, s->lock_id, out[n].label, LABEL);
				at[s->lock_id] = (uint32_t)++n;
			}
			out[at[s->lock_id] - 1].count += s->wait.count;
			out[at[s->lock_id] - 1].total += s->wait.total;
		}
	}
	qsort(out, n, sizeof(*out), cmp_want);
	return n;
}

/* Wait per second of every lock in each interval of the minute, from the samples. */
static void want_minute(struct world *w, const struct mms_view_env *env)
{
	uint32_t n = env->cur - env->spark_from + 1;

	w->spark_ids = mms_store_table_size(w->st, MMS_TAB_LOCK) + 1;
	w->spark_n = n < MAX_SPARK ? n : MAX_SPARK;
	free(w->spark);
	w->spark = calloc((size_t)w->spark_n * w->spark_ids, sizeof(*w->spark));
	assert_non_null(w->spark);
	for (uint32_t k = 0; k < w->spark_n; k++) {
		const struct mms_interval *iv = mms_store_at(w->st, env->spark_from + k);
		uint64_t *row = &w->spark[(size_t)k * w->spark_ids];
		double secs = iv->dur_ns ? iv->dur_ns / 1e9 : 1.0;

		for (uint32_t j = 0; j < iv->n_locks; j++)
			row[iv->locks[j].lock_id] += iv->locks[j].wait.total;
		for (uint32_t id = 0; id < w->spark_ids; id++)
			row[id] = (uint64_t)((double)row[id] / secs);
	}
}

static uint32_t want_spark(const struct world *w, uint32_t id, uint64_t *vals)
{
	for (uint32_t k = 0; k < w->spark_n; k++)
		vals[k] = id < w->spark_ids ? w->spark[(size_t)k * w->spark_ids + id] : 0;
	return w->spark_n;
}

static void same_cells(const struct world *w, int x, int y, int n, const char *what,
		       const char *label)
{
	for (int i = 0; i < n; i++)
		if (mms_canvas_at(w->c, x + i, y)->ch != mms_canvas_at(w->want, x + i, y)->ch)
			fail_msg("%s of \"%s\" differs at column %d", what, label, i);
}

/* Row p of the view (on screen at line y) against the wanted row. */
static void check_row(struct world *w, const struct mms_view_env *env, size_t p, int y,
		      const struct want_row *want)
{
	struct mms_list *l = w->v->list(w->priv);
	uint64_t vals[MAX_SPARK];
	struct mms_focus fo;
	char buf[64];
	uint32_t n;

	l->sel = p;
	assert_true(w->v->enter(w->priv, &fo));
	if (fo.key != want->id)
		fail_msg("row %zu is lock %llu (%s), wanted %u (%s)", p,
			 (unsigned long long)fo.key, fo.label, want->id, want->label);
	assert_string_equal(fo.label, want->label);
	mms_canvas_clear(w->want);
	mms_canvas_put(w->want, l->x[COL_LOCK], y, MMS_ROLE_NORMAL, want->label, l->w[COL_LOCK]);
	same_cells(w, l->x[COL_LOCK], y, l->w[COL_LOCK], "the name", want->label);
	util_fmt_rate(buf, sizeof(buf), want->count, env->secs);
	mms_canvas_put_right(w->want, l->x[COL_COUNT], y, l->w[COL_COUNT], MMS_ROLE_NORMAL, buf);
	same_cells(w, l->x[COL_COUNT], y, l->w[COL_COUNT], "CONT/s", want->label);
	util_fmt_wait_rate(buf, sizeof(buf), want->total, env->secs);
	mms_canvas_put_right(w->want, l->x[COL_WAIT], y, l->w[COL_WAIT], MMS_ROLE_NORMAL, buf);
	same_cells(w, l->x[COL_WAIT], y, l->w[COL_WAIT], "WAIT/s", want->label);
	n = want_spark(w, want->id, vals);
	mms_canvas_spark(w->want, l->x[COL_SPARK], y, l->w[COL_SPARK], vals, n, 0,
			 MMS_ROLE_SPARK);
	same_cells(w, l->x[COL_SPARK], y, l->w[COL_SPARK], "the sparkline", want->label);
}

/* The page of the view that shows row p, every row of it checked. */
static void check_page(struct world *w, const struct mms_view_env *env, size_t p,
		       const struct want_row *want)
{
	struct mms_list *l = w->v->list(w->priv);
	size_t top;

	l->sel = p;
	mms_canvas_clear(w->c);
	w->v->draw(w->priv, env, w->c, 0, w->c->h);
	top = l->top;
	assert_true(l->w[COL_LOCK] > 0 && l->w[COL_SPARK] > 0);
	for (size_t i = top; i < l->nr && i < top + (size_t)l->h_rows; i++)
		check_row(w, env, i, l->y_rows + (int)(i - top), &want[i]);
}

/* The series cache on its own: every value of some locks, present or not. */
static void check_series(struct world *w, const struct mms_view_env *env)
{
	uint64_t got[MAX_SPARK], vals[MAX_SPARK];
	uint32_t ids = mms_store_table_size(w->st, MMS_TAB_LOCK);

	for (uint32_t k = 0; k < 24; k++) {
		uint32_t id = 1 + rnd(ids + 2);	/* now and then past the last id */
		uint32_t n = util_series_get(w->series, env, id, false, got, MAX_SPARK);

		assert_int_equal(n, want_spark(w, id, vals));
		for (uint32_t i = 0; i < n; i++)
			if (got[i] != vals[i])
				fail_msg("lock %u, interval %u of the minute: %llu/s, "
					 "wanted %llu/s", id, i, (unsigned long long)got[i],
					 (unsigned long long)vals[i]);
	}
}

static void check_frame(struct world *w, int64_t paused_seq, enum mms_range range)
{
	static struct want_row want[MAX_IDS];
	struct mms_list *l = w->v->list(w->priv);
	struct mms_view_env env;
	size_t n;

	mms_view_env_init(&env, w->st, paused_seq, range);
	assert_int_equal(w->v->update(w->priv, &env), 0);
	n = want_rows(w, &env, want);
	want_minute(w, &env);
	assert_int_equal(l->nr, n);
	check_page(w, &env, 0, want);
	if (n > 1)
		check_page(w, &env, rnd((uint32_t)n), want);
	check_series(w, &env);
}

/* A minute sliding over 400 locks: live, paused, over the minute and everything. */
static void test_sliding_minute(void **state)
{
	static uint32_t locks[400];
	struct world w;

	(void)state;
	world_init(&w, 600);
	intern_common(&w);
	for (uint32_t i = 0; i < 400; i++)
		locks[i] = make_lock(w.st, 0, i);
	for (uint64_t seq = 0; seq < 75; seq++) {
		/* Some intervals are short: rates divide by each one's length. */
		add_interval(&w, locks, 400, seq, seq % 10 == 9 ? SEC / 2 : SEC);
		check_frame(&w, -1, MMS_RANGE_INTERVAL);
		if (seq % 7 == 3) {
			check_frame(&w, (int64_t)seq - 2, MMS_RANGE_INTERVAL);
			check_frame(&w, -1, MMS_RANGE_MINUTE);
		}
		if (seq % 25 == 24)
			check_frame(&w, -1, MMS_RANGE_ALL);
	}
	world_finish(&w);
}

/*
 * Each interval brings 700 locks never seen before and a small window lets
 * them go soon: the store sweeps them and hands their ids to new locks, with
 * other names.  Thirty locks stay throughout, so rows live across sweeps.
 */
static void test_ids_reused(void **state)
{
	static uint32_t locks[730];
	uint64_t first_epoch;
	struct world w;

	(void)state;
	world_init(&w, 4);
	intern_common(&w);
	for (uint32_t i = 0; i < 30; i++)
		locks[700 + i] = make_lock(w.st, 999, i);
	first_epoch = mms_store_epoch(w.st);
	for (uint64_t seq = 0; seq < 24; seq++) {
		for (uint32_t i = 0; i < 700; i++)
			locks[i] = make_lock(w.st, (int)seq + 1, i);
		w.nr_locks_made += 700;
		add_interval(&w, locks, 730, seq, SEC);
		check_frame(&w, -1, MMS_RANGE_INTERVAL);
		if (seq % 3 == 2)
			check_frame(&w, -1, MMS_RANGE_MINUTE);
	}
	/* Make sure this tested what it says: sweeps happened and ids were handed out again. */
	assert_true(mms_store_epoch(w.st) > first_epoch);
	assert_true(mms_store_table_size(w.st, MMS_TAB_LOCK) < w.nr_locks_made);
	world_finish(&w);
}

/*
 * A seek in a replay: the store starts again at an earlier interval, and the
 * same seqs come back holding other locks under the same ids.
 */
static void test_store_reset(void **state)
{
	static uint32_t locks[300];
	struct world w;

	(void)state;
	world_init(&w, 600);
	intern_common(&w);
	for (uint32_t i = 0; i < 300; i++)
		locks[i] = make_lock(w.st, 1, i);
	for (uint64_t seq = 0; seq < 20; seq++) {
		add_interval(&w, locks, 300, seq, SEC);
		check_frame(&w, -1, MMS_RANGE_INTERVAL);
	}
	mms_store_reset(w.st, 5);
	intern_common(&w);
	for (uint32_t i = 0; i < 300; i++)
		locks[i] = make_lock(w.st, 2, 299 - i);
	for (uint64_t seq = 5; seq < 25; seq++) {
		add_interval(&w, locks, 300, seq, SEC);
		check_frame(&w, -1, MMS_RANGE_INTERVAL);
		if (seq % 4 == 0)
			check_frame(&w, -1, MMS_RANGE_MINUTE);
	}
	world_finish(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sliding_minute),
		cmocka_unit_test(test_ids_reused),
		cmocka_unit_test(test_store_reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
