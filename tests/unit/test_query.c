// SPDX-License-Identifier: GPL-2.0
/* Unit tests: grouping, sorting, filtering and series over the store. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "mmscope/query.h"

struct fixture {
	struct mms_store *st;
	uint32_t lock_mm, lock_imap, stack_a, stack_b, task_1, task_2, task_3;
};

static uint32_t mk_stack(struct mms_store *st, const char *caller, uint64_t ip)
{
	uint32_t sym = mms_store_str(st, caller);

	return mms_store_stack(st, &ip, &sym, 1);
}

static void add(struct mms_store *st, uint32_t lock, uint32_t stack, uint32_t task,
		uint32_t flags, uint64_t ns, uint64_t n)
{
	struct mms_lock_sample s = { .lock_id = lock, .stack_id = stack, .task_id = task,
				     .flags = flags };

	mms_stat_add_n(&s.wait, ns, n);
	assert_int_equal(mms_store_add_lock(st, &s), 0);
}

static int setup(void **state)
{
	static struct fixture f;
	struct mms_lock_info mm = { .addr = 0x1000, .kind = MMS_LOCK_MMAP, .owner_tgid = 100 };
	struct mms_lock_info im = { .addr = 0x2000, .kind = MMS_LOCK_I_MMAP };

	memset(&f, 0, sizeof(f));
	assert_int_equal(mms_store_create(NULL, &f.st), 0);
	mm.name_id = mms_store_str(f.st, "mmap_lock");
	mm.owner_comm_id = mms_store_str(f.st, "churn");
	im.name_id = mms_store_str(f.st, "i_mmap_rwsem");
	im.detail_id = mms_store_str(f.st, "/tmp/shared");
	f.lock_mm = mms_store_lock(f.st, &mm);
	f.lock_imap = mms_store_lock(f.st, &im);
	f.stack_a = mk_stack(f.st, "vma_prepare+0x3c", 0xffffffff81000100ULL);
	f.stack_b = mk_stack(f.st, "do_mprotect_pkey+0x120", 0xffffffff81000200ULL);
	f.task_1 = mms_store_task(f.st, 101, 100, "churn");
	f.task_2 = mms_store_task(f.st, 102, 100, "churn");
	f.task_3 = mms_store_task(f.st, 201, 200, "other");
	/* Interval 0 */
	mms_store_begin(f.st, 0);
	add(f.st, f.lock_imap, f.stack_a, f.task_1, MMS_LCB_WRITE, 9000, 10);
	add(f.st, f.lock_mm, f.stack_b, f.task_2, MMS_LCB_WRITE, 1000, 4);
	mms_store_commit(f.st, 1000000000, 0);
	/* Interval 1 */
	mms_store_begin(f.st, 1);
	add(f.st, f.lock_imap, f.stack_a, f.task_2, MMS_LCB_WRITE, 8000, 5);
	add(f.st, f.lock_mm, f.stack_b, f.task_3, MMS_LCB_READ, 500, 2);
	mms_store_commit(f.st, 1000000000, 0);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	mms_store_destroy(f->st);
	return 0;
}

static void test_by_lock(void **state)
{
	struct fixture *f = *state;
	struct mms_query q = { .by = MMS_BY_LOCK, .sort = MMS_SORT_WAIT_TOTAL, .from = 0, .to = 1 };
	struct mms_rows rows = { 0 };

	assert_int_equal(mms_query_locks(f->st, &q, &rows), 0);
	assert_int_equal(rows.nr, 2);
	assert_string_equal(rows.rows[0].label, "i_mmap_rwsem (/tmp/shared)");
	assert_int_equal(rows.rows[0].wait.count, 15);
	assert_int_equal(rows.rows[0].wait.total, 9000 * 10 + 8000 * 5);
	assert_string_equal(rows.rows[1].label, "mmap_lock (100 churn)");
	assert_int_equal(rows.rows[1].wait.count, 6);
	/* Write waits then read waits on one lock: the row is an "rwsem". */
	assert_string_equal(mms_lock_type_name(rows.rows[1].flags), "rwsem");
	assert_string_equal(mms_lock_type_name(rows.rows[0].flags), "rwsem:W");
	/* Ascending flips it. */
	q.ascending = true;
	assert_int_equal(mms_query_locks(f->st, &q, &rows), 0);
	assert_string_equal(rows.rows[0].label, "mmap_lock (100 churn)");
	/* Only the second interval. */
	q.from = q.to = 1;
	q.ascending = false;
	assert_int_equal(mms_query_locks(f->st, &q, &rows), 0);
	assert_int_equal(rows.rows[0].wait.count, 5);
	mms_rows_free(&rows);
}

static void test_by_caller_task_process_type(void **state)
{
	struct fixture *f = *state;
	struct mms_query q = { .by = MMS_BY_CALLER, .sort = MMS_SORT_CONTENDED, .to = 1 };
	struct mms_rows rows = { 0 };

	assert_int_equal(mms_query_locks(f->st, &q, &rows), 0);
	assert_int_equal(rows.nr, 2);
	assert_string_equal(rows.rows[0].label, "vma_prepare+0x3c");
	assert_int_equal(rows.rows[0].wait.count, 15);
	q.by = MMS_BY_TASK;
	assert_int_equal(mms_query_locks(f->st, &q, &rows), 0);
	assert_int_equal(rows.nr, 3);
	assert_int_equal(rows.rows[0].wait.count, 10);	/* task 101 */
	assert_int_equal(rows.rows[1].wait.count, 9);	/* task 102: 4 + 5 */
	q.by = MMS_BY_PROCESS;
	assert_int_equal(mms_query_locks(f->st, &q, &rows), 0);
	assert_int_equal(rows.nr, 2);
	assert_int_equal(rows.rows[0].key, 100);
	assert_int_equal(rows.rows[0].wait.count, 19);
	q.by = MMS_BY_TYPE;
	assert_int_equal(mms_query_locks(f->st, &q, &rows), 0);
	assert_int_equal(rows.nr, 2);
	assert_string_equal(rows.rows[0].label, "rwsem:W");
	assert_int_equal(rows.rows[0].wait.count, 19);
	assert_string_equal(rows.rows[1].label, "rwsem:R");
	mms_rows_free(&rows);
}

/*
 * A down_read() that waits may first spin on the rwsem's wait_lock: both waits
 * have the same caller, and stay two rows of it, one per kind of lock.
 */
static void test_by_caller_per_kind(void **state)
{
	struct mms_query q = { .by = MMS_BY_CALLER, .sort = MMS_SORT_CONTENDED, .to = 0 };
	struct mms_lock_info sem = { .addr = 0x1000, .kind = MMS_LOCK_MMAP };
	struct mms_lock_info wl = { .addr = 0x1008 };
	struct mms_rows rows = { 0 };
	struct mms_store *st;
	uint32_t stack, ls, lw, task;

	(void)state;
	assert_int_equal(mms_store_create(NULL, &st), 0);
	stack = mk_stack(st, "lock_mm_and_find_vma+0x9e", 0xffffffff81000300ULL);
	ls = mms_store_lock(st, &sem);
	lw = mms_store_lock(st, &wl);
	task = mms_store_task(st, 101, 100, "faulter");
	mms_store_begin(st, 0);
	add(st, lw, stack, task, MMS_LCB_SPIN, 300, 7);
	add(st, ls, stack, task, MMS_LCB_READ, 5000, 3);
	add(st, ls, stack, task, MMS_LCB_WRITE, 5000, 1);
	mms_store_commit(st, 1000000000, 0);
	assert_int_equal(mms_query_locks(st, &q, &rows), 0);
	assert_int_equal(rows.nr, 2);
	assert_string_equal(rows.rows[0].label, "lock_mm_and_find_vma+0x9e");
	assert_string_equal(mms_lock_type_name(rows.rows[0].flags), "spinlock");
	assert_int_equal(rows.rows[0].wait.count, 7);
	assert_string_equal(rows.rows[1].label, "lock_mm_and_find_vma+0x9e");
	assert_string_equal(mms_lock_type_name(rows.rows[1].flags), "rwsem");
	assert_int_equal(rows.rows[1].wait.count, 4);
	assert_int_equal(rows.rows[1].wait.total, 20000);
	/* Each row's key is the one its samples give (the detail view's focus). */
	for (uint32_t j = 0; j < mms_store_at(st, 0)->n_locks; j++) {
		const struct mms_lock_sample *s = &mms_store_at(st, 0)->locks[j];

		assert_int_equal(mms_caller_key(st, s, 0, NULL),
				 rows.rows[s->flags == MMS_LCB_SPIN ? 0 : 1].key);
	}
	mms_rows_free(&rows);
	mms_store_destroy(st);
}

static void test_filters(void **state)
{
	struct fixture *f = *state;
	struct mms_query q = { .by = MMS_BY_LOCK, .to = 1, .match = "mmap_lock" };
	struct mms_rows rows = { 0 };

	assert_int_equal(mms_query_locks(f->st, &q, &rows), 0);
	assert_int_equal(rows.nr, 1);
	q.match = NULL;
	q.tgid = 200;
	assert_int_equal(mms_query_locks(f->st, &q, &rows), 0);
	assert_int_equal(rows.nr, 1);
	assert_int_equal(rows.rows[0].wait.count, 2);
	q.tgid = 0;
	q.lock_id = f->lock_imap;
	q.by = MMS_BY_TASK;
	assert_int_equal(mms_query_locks(f->st, &q, &rows), 0);
	assert_int_equal(rows.nr, 2);
	mms_rows_free(&rows);
}

static void test_series(void **state)
{
	struct fixture *f = *state;
	struct mms_query q = { .by = MMS_BY_LOCK, .to = 1 };
	uint64_t out[3];

	assert_int_equal(mms_query_series(f->st, &q, f->lock_imap, true, out, 3), 0);
	assert_int_equal(out[0], 10);
	assert_int_equal(out[1], 5);
	assert_int_equal(out[2], 0);
	assert_int_equal(mms_query_series(f->st, &q, f->lock_imap, false, out, 2), 0);
	assert_int_equal(out[0], 90000);
}

static void test_parse_names(void **state)
{
	enum mms_group g;
	enum mms_sort s;

	(void)state;
	assert_int_equal(mms_group_parse("caller", &g), 0);
	assert_int_equal(g, MMS_BY_CALLER);
	assert_int_equal(mms_group_parse("nope", &g), -22);
	assert_int_equal(mms_sort_parse("avg_wait", &s), 0);
	assert_int_equal(s, MMS_SORT_AVG_WAIT);
	assert_string_equal(mms_sort_name(MMS_SORT_P99), "p99");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_by_lock),
		cmocka_unit_test(test_by_caller_task_process_type),
		cmocka_unit_test(test_by_caller_per_kind),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_series),
		cmocka_unit_test(test_parse_names),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
