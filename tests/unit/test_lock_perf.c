// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests: the perf lock collector's pairing and aggregation
 * (collectors/lock_perf_agg.c): records fed in ring order, as lock_perf.c
 * would, and the intervals they end up as in a real store.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lock_common.h"
#include "lock_perf.h"
#include "mmscope/store.h"

struct fx {
	struct mms_options opts;
	struct mms_lock_common *lc;
	struct lp_engine *e;
	struct mms_store *st;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	mms_options_init(&f->opts);
	if (mms_lock_common_create(&f->opts, NULL, &f->lc) ||
	    lp_engine_create(&f->opts, f->lc, 64, &f->e) || mms_store_create(NULL, &f->st))
		return -1;
	mms_store_begin(f->st, 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	mms_store_destroy(f->st);
	lp_engine_destroy(f->e);
	mms_lock_common_destroy(f->lc);
	free(f);
	return 0;
}

static const uint64_t ips_a[] = { 0xffffffff81001000, 0xffffffff81002000 };
static const uint64_t ips_b[] = { 0xffffffff81003000 };

static void push(struct fx *f, enum lp_kind kind, uint64_t time, uint32_t tid, uint32_t cpu,
		 uint64_t addr, uint32_t flags, uint32_t stack)
{
	struct lp_event *ev = lp_engine_slot(f->e);

	assert_non_null(ev);
	memset(ev, 0, sizeof(*ev));
	ev->kind = (uint8_t)kind;
	ev->time = time;
	ev->tid = tid;
	ev->pid = tid;
	ev->cpu = (uint16_t)cpu;
	ev->lock.addr = addr;
	ev->lock.flags = flags;
	ev->lock.stack = stack;
	lp_engine_push(f->e);
}

static void begin(struct fx *f, uint64_t t, uint32_t tid, uint64_t addr, uint32_t flags)
{
	push(f, LP_BEGIN, t, tid, 0, addr, flags, lp_engine_stack(f->e, ips_a, 2));
}

static void end(struct fx *f, uint64_t t, uint32_t tid, uint64_t addr)
{
	push(f, LP_END, t, tid, 0, addr, 0, 0);
}

/* Flushes and commits; returns the interval. */
static const struct mms_interval *commit(struct fx *f)
{
	assert_int_equal(lp_engine_flush(f->e, f->st), 0);
	assert_int_equal(mms_store_commit(f->st, 1000, 0), 0);
	mms_store_begin(f->st, 1);
	return mms_store_latest(f->st);
}

/* The one row of an interval with this lock address. */
static const struct mms_lock_sample *row(struct fx *f, const struct mms_interval *iv,
					 uint64_t addr, uint32_t tid)
{
	for (uint32_t i = 0; i < iv->n_locks; i++) {
		const struct mms_lock_info *l = mms_store_get_lock(f->st, iv->locks[i].lock_id);
		const struct mms_task *t = mms_store_get_task(f->st, iv->locks[i].task_id);

		if (l && l->addr == addr && t && t->tid == tid)
			return &iv->locks[i];
	}
	return NULL;
}

static void test_pair(void **state)
{
	struct fx *f = *state;
	const struct mms_interval *iv;
	const struct mms_lock_sample *s;

	begin(f, 100, 7, 0x1000, MMS_LCB_WRITE);
	end(f, 350, 7, 0x1000);
	lp_engine_process(f->e, UINT64_MAX);
	iv = commit(f);
	s = row(f, iv, 0x1000, 7);
	assert_non_null(s);
	assert_int_equal(s->wait.count, 1);
	assert_int_equal(s->wait.total, 250);
	assert_int_equal(s->flags, MMS_LCB_WRITE);
	assert_int_not_equal(s->stack_id, 0);
	assert_int_equal(mms_store_get_stack(f->st, s->stack_id)->nr, 2);
	assert_int_equal(iv->lost[MMS_LOST_TIME], 0);
}

/* A wait that begins on one CPU and ends on another: the end's ring read first. */
static void test_cross_ring_order(void **state)
{
	struct fx *f = *state;
	const struct mms_lock_sample *s;

	end(f, 900, 7, 0x1000);
	push(f, LP_BEGIN, 300, 8, 1, 0x2000, MMS_LCB_SPIN, 0);
	begin(f, 400, 7, 0x1000, MMS_LCB_READ);
	end(f, 310, 8, 0x2000);
	lp_engine_process(f->e, UINT64_MAX);
	s = row(f, commit(f), 0x1000, 7);
	assert_non_null(s);
	assert_int_equal(s->wait.total, 500);
	assert_int_equal(mms_store_latest(f->st)->lost[MMS_LOST_TIME], 0);
}

/* Records past the horizon wait for the next pass; waits in progress outlive a flush. */
static void test_horizon(void **state)
{
	struct fx *f = *state;
	const struct mms_interval *iv;

	begin(f, 100, 7, 0x1000, MMS_LCB_WRITE);
	end(f, 300, 7, 0x1000);
	lp_engine_process(f->e, 200);
	assert_int_equal(lp_engine_pending(f->e), 1);
	iv = commit(f);
	assert_int_equal(iv->n_locks, 0);
	lp_engine_process(f->e, 300);
	assert_int_equal(lp_engine_pending(f->e), 0);
	iv = commit(f);
	assert_int_equal(row(f, iv, 0x1000, 7)->wait.total, 200);
}

/* An rwsem wait with the wait_lock spin nested inside it. */
static void test_nested(void **state)
{
	struct fx *f = *state;
	const struct mms_interval *iv;

	begin(f, 0, 7, 0x1000, MMS_LCB_WRITE);
	begin(f, 5, 7, 0x1008, MMS_LCB_SPIN);
	end(f, 7, 7, 0x1008);
	end(f, 20, 7, 0x1000);
	lp_engine_process(f->e, UINT64_MAX);
	iv = commit(f);
	assert_int_equal(row(f, iv, 0x1008, 7)->wait.total, 2);
	assert_int_equal(row(f, iv, 0x1008, 7)->flags, MMS_LCB_SPIN);
	assert_int_equal(row(f, iv, 0x1000, 7)->wait.total, 20);
}

/* A mutex spins, then sleeps: two begins, one end, one wait with the first flags. */
static void test_repeat_begin(void **state)
{
	struct fx *f = *state;
	const struct mms_lock_sample *s;

	begin(f, 10, 7, 0x1000, MMS_LCB_MUTEX | MMS_LCB_SPIN);
	begin(f, 15, 7, 0x1000, MMS_LCB_MUTEX);
	end(f, 40, 7, 0x1000);
	lp_engine_process(f->e, UINT64_MAX);
	s = row(f, commit(f), 0x1000, 7);
	assert_int_equal(s->wait.count, 1);
	assert_int_equal(s->wait.total, 30);
	assert_int_equal(s->flags, MMS_LCB_MUTEX | MMS_LCB_SPIN);
}

static void test_lost(void **state)
{
	struct fx *f = *state;
	const struct mms_interval *iv;

	end(f, 10, 7, 0x1000);			/* end without begin */
	begin(f, 20, 9, 0x2000, MMS_LCB_SPIN);
	push(f, LP_EXIT, 25, 9, 0, 0, 0, 0);	/* the thread went away mid-wait */
	end(f, 30, 9, 0x2000);
	lp_engine_lost(f->e, MMS_LOST_RING, 5);
	lp_engine_process(f->e, UINT64_MAX);
	iv = commit(f);
	assert_int_equal(iv->n_locks, 0);
	assert_int_equal(iv->lost[MMS_LOST_TIME], 2);
	assert_int_equal(iv->lost[MMS_LOST_RING], 5);
	/* Counted once: the next interval starts from zero. */
	iv = commit(f);
	assert_int_equal(iv->lost[MMS_LOST_TIME] + iv->lost[MMS_LOST_RING], 0);
}

/* Idle tasks are all tid 0: their CPU keeps their waits apart. */
static void test_idle_per_cpu(void **state)
{
	struct fx *f = *state;
	const struct mms_lock_sample *s;

	push(f, LP_BEGIN, 0, 0, 0, 0x3000, MMS_LCB_SPIN, 0);
	push(f, LP_BEGIN, 1, 0, 1, 0x3000, MMS_LCB_SPIN, 0);
	push(f, LP_END, 3, 0, 0, 0x3000, 0, 0);
	push(f, LP_END, 5, 0, 1, 0x3000, 0, 0);
	lp_engine_process(f->e, UINT64_MAX);
	s = row(f, commit(f), 0x3000, 0);
	assert_int_equal(s->wait.count, 2);
	assert_int_equal(s->wait.total, 7);
	assert_int_equal(mms_store_latest(f->st)->lost[MMS_LOST_TIME], 0);
}

/* Thread names come from the side band when /proc no longer knows the thread. */
static void test_comm(void **state)
{
	struct fx *f = *state;
	struct lp_event *ev;
	const struct mms_task *t;
	const uint32_t tid = 4000000;	/* above any pid_max: /proc has no such thread */

	ev = lp_engine_slot(f->e);
	memset(ev, 0, sizeof(*ev));
	ev->kind = LP_COMM;
	ev->tid = ev->pid = tid;
	strcpy(ev->comm, "worker");
	lp_engine_push(f->e);
	begin(f, 10, tid, 0x1000, MMS_LCB_READ);
	end(f, 20, tid, 0x1000);
	lp_engine_process(f->e, UINT64_MAX);
	t = mms_store_get_task(f->st, row(f, commit(f), 0x1000, tid)->task_id);
	assert_string_equal(mms_store_get_str(f->st, t->comm_id), "worker");
}

/* Thousands of thread names: each thread's waits carry its own, after the table grew. */
static void test_comm_many(void **state)
{
	struct fx *f = *state;
	const struct mms_interval *iv;
	const uint32_t tids[] = { 4000000, 4001234, 4002999 };
	char want[16];

	lp_engine_set_offline(f->e);
	for (uint32_t i = 0; i < 3000; i++) {
		struct lp_event *ev = lp_engine_slot(f->e);

		if (!ev) {
			lp_engine_process(f->e, UINT64_MAX);
			ev = lp_engine_slot(f->e);
		}
		memset(ev, 0, sizeof(*ev));
		ev->kind = LP_COMM;
		ev->tid = ev->pid = 4000000 + i;
		snprintf(ev->comm, sizeof(ev->comm), "w%u", i);
		lp_engine_push(f->e);
	}
	lp_engine_process(f->e, UINT64_MAX);
	for (int k = 0; k < 3; k++) {
		begin(f, 10 + (uint64_t)k, tids[k], 0x1000, MMS_LCB_READ);
		end(f, 20 + (uint64_t)k, tids[k], 0x1000);
	}
	lp_engine_process(f->e, UINT64_MAX);
	iv = commit(f);
	for (int k = 0; k < 3; k++) {
		const struct mms_lock_sample *s = row(f, iv, 0x1000, tids[k]);

		assert_non_null(s);
		snprintf(want, sizeof(want), "w%u", tids[k] - 4000000);
		assert_string_equal(mms_store_get_str(f->st, mms_store_get_task(f->st,
							 s->task_id)->comm_id), want);
	}
}

static void comm_at(struct fx *f, uint64_t t, uint32_t tid, const char *comm)
{
	struct lp_event *ev = lp_engine_slot(f->e);

	assert_non_null(ev);
	memset(ev, 0, sizeof(*ev));
	ev->kind = LP_COMM;
	ev->time = t;
	ev->tid = ev->pid = tid;
	snprintf(ev->comm, sizeof(ev->comm), "%s", comm);
	lp_engine_push(f->e);
}

/*
 * A thread renamed (exec, prctl) within one interval: each wait keeps the
 * name the thread had when it waited, not the last one.
 */
static void test_comm_rename(void **state)
{
	struct fx *f = *state;
	const struct mms_interval *iv;
	const uint32_t tid = 4000000;
	uint64_t sh = 0, churn = 0, other = 0;

	comm_at(f, 1, tid, "sh");
	begin(f, 10, tid, 0x1000, MMS_LCB_READ);
	end(f, 20, tid, 0x1000);
	comm_at(f, 30, tid, "churnB");
	begin(f, 40, tid, 0x1000, MMS_LCB_READ);
	end(f, 60, tid, 0x1000);
	comm_at(f, 70, tid, "churnB");	/* the same name again: no new entry */
	begin(f, 80, tid, 0x1000, MMS_LCB_READ);
	end(f, 110, tid, 0x1000);
	lp_engine_process(f->e, UINT64_MAX);
	iv = commit(f);
	for (uint32_t i = 0; i < iv->n_locks; i++) {
		const struct mms_task *t = mms_store_get_task(f->st, iv->locks[i].task_id);
		const char *c = mms_store_get_str(f->st, t->comm_id);

		if (!strcmp(c, "sh"))
			sh += iv->locks[i].wait.total;
		else if (!strcmp(c, "churnB"))
			churn += iv->locks[i].wait.total;
		else
			other += iv->locks[i].wait.total;
	}
	assert_int_equal(sh, 10);
	assert_int_equal(churn, 50);
	assert_int_equal(other, 0);
}

/* Same raw stack, same id; a different one, a different id. */
static void test_stacks(void **state)
{
	struct fx *f = *state;
	uint32_t a = lp_engine_stack(f->e, ips_a, 2);

	assert_int_not_equal(a, 0);
	assert_int_equal(lp_engine_stack(f->e, ips_a, 2), a);
	assert_int_not_equal(lp_engine_stack(f->e, ips_b, 1), a);
	assert_int_not_equal(lp_engine_stack(f->e, ips_a, 1), a);
	assert_int_equal(lp_engine_stack(f->e, ips_a, 0), 0);
}

/*
 * Past 65536 raw stacks the table starts over at a flush: a wait still in
 * progress keeps its stack (re-interned), and new stacks are found again.
 */
static void test_stacks_trim(void **state)
{
	struct fx *f = *state;
	const struct mms_lock_sample *s;
	const struct mms_stack *st;
	uint64_t ips[2];
	uint32_t a, id;

	push(f, LP_BEGIN, 10, 7, 0, 0x1000, MMS_LCB_WRITE, lp_engine_stack(f->e, ips_b, 1));
	lp_engine_process(f->e, UINT64_MAX);
	for (uint32_t i = 0; i < 70000; i++) {
		ips[0] = 0xffffffff82000000ULL + i * 16;
		ips[1] = i;
		assert_int_not_equal(lp_engine_stack(f->e, ips, 2), 0);
	}
	ips[0] = 0xffffffff82000000ULL;
	ips[1] = 0;
	assert_int_equal(lp_engine_stack(f->e, ips, 2), 2);	/* the first after ips_b's */
	commit(f);	/* no wait ended: nothing refers to a stack, the table starts over */
	a = lp_engine_stack(f->e, ips_a, 2);
	assert_int_equal(lp_engine_stack(f->e, ips_a, 2), a);
	id = lp_engine_stack(f->e, ips, 2);
	assert_int_not_equal(id, 2);	/* a new table: it is new again */
	assert_true(id > a && id < 70000);
	end(f, 500, 7, 0x1000);
	lp_engine_process(f->e, UINT64_MAX);
	s = row(f, commit(f), 0x1000, 7);
	assert_non_null(s);
	assert_int_equal(s->wait.total, 490);
	st = mms_store_get_stack(f->st, s->stack_id);
	assert_non_null(st);
	assert_int_equal(st->nr, 1);
	assert_int_equal(st->ips[0], ips_b[0]);
}

/* The pool refuses records when full instead of overrunning. */
static void test_pool_full(void **state)
{
	struct fx *f = *state;

	for (int i = 0; i < 64; i++)
		begin(f, (uint64_t)i, (uint32_t)(100 + i), 0x1000, MMS_LCB_SPIN);
	assert_null(lp_engine_slot(f->e));
	lp_engine_process(f->e, UINT64_MAX);
	assert_non_null(lp_engine_slot(f->e));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pair, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cross_ring_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_horizon, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nested, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repeat_begin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle_per_cpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_comm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_comm_many, setup, teardown),
		cmocka_unit_test_setup_teardown(test_comm_rename, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stacks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stacks_trim, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pool_full, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
