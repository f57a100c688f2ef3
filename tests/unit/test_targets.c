// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests: the target options (perf lock contention's -G, -C, -F) and the
 * cgroup grouping: -G paths normalized, -C lists parsed and refused, -F lists
 * parsed, --by cgroup rows summing their tasks, -G narrowing a store.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "mmscope/cgroup.h"
#include "mmscope/query.h"
#include "mmscope/report.h"

static void test_normalize(void **state)
{
	static const char *const cases[][2] = {
		{ "", "/" }, { "/", "/" }, { "//", "/" }, { "a", "/a" }, { "/a/", "/a" },
		{ "a//b/", "/a/b" }, { "/system.slice/cron.service", "/system.slice/cron.service" },
	};
	char buf[MMS_CGROUP_PATH_MAX], small[4];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		mms_cgroup_normalize(buf, sizeof(buf), cases[i][0]);
		assert_string_equal(buf, cases[i][1]);
	}
	mms_cgroup_normalize(small, sizeof(small), "abcdef");
	assert_string_equal(small, "/ab");
}

static void test_cpus(void **state)
{
	static const char *const bad[] = { "", ",", "1,", "a", "-1", "2-1", "1-", "0x1",
					   "1 2", "99999999999999999999" };
	struct mms_options o;
	char why[256];

	(void)state;
	mms_options_init(&o);
	assert_true(mms_options_cpu_ok(&o, 5));	/* no -C: every CPU */
	assert_int_equal(mms_options_set_cpus(&o, "0-2,5", 8, why, sizeof(why)), 0);
	for (unsigned int c = 0; c < 8; c++)
		assert_int_equal(mms_options_cpu_ok(&o, c), c <= 2 || c == 5);
	assert_false(mms_options_cpu_ok(&o, 4095));
	assert_false(mms_options_cpu_ok(&o, 1U << 20));
	mms_options_init(&o);
	assert_int_equal(mms_options_set_cpus(&o, "8", 8, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "CPU 8 in -C '8' does not exist here (CPUs 0-7)"));
	assert_null(o.cpu_list);	/* a refused list leaves the options as they were */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(mms_options_set_cpus(&o, bad[i], 8, why, sizeof(why)), -EINVAL);
	assert_int_equal(mms_options_set_cpus(&o, "4095", 4096, why, sizeof(why)), 0);
	assert_true(mms_options_cpu_ok(&o, 4095));
}

static void test_fields(void **state)
{
	uint8_t f[MMS_F_NR];
	const char *bad = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(mms_report_fields_parse("wait_min,contended,p99", f, &bad, &len), 3);
	assert_int_equal(f[0], MMS_F_WAIT_MIN);
	assert_int_equal(f[1], MMS_F_CONTENDED);
	assert_int_equal(f[2], MMS_F_P99);
	assert_int_equal(mms_report_fields_parse("contended,wait", f, &bad, &len), -EINVAL);
	assert_int_equal(len, 4);
	assert_memory_equal(bad, "wait", 4);
	assert_int_equal(mms_report_fields_parse("avg_wait,avg_wait", f, NULL, NULL), -EINVAL);
	assert_int_equal(mms_report_fields_parse("", f, NULL, NULL), -EINVAL);
	assert_int_equal(mms_report_fields_parse("contended,", f, NULL, NULL), -EINVAL);
}

static void add(struct mms_store *st, uint32_t lock, uint32_t task, uint64_t ns, uint64_t n)
{
	struct mms_lock_sample s = { .lock_id = lock, .task_id = task, .flags = MMS_LCB_WRITE };

	mms_stat_add_n(&s.wait, ns, n);
	assert_int_equal(mms_store_add_lock(st, &s), 0);
}

/* Two groups and a task that did not tell: rows per cgroup, -G narrowing by path. */
static void test_by_cgroup(void **state)
{
	struct mms_lock_info mm = { .addr = 0x1000, .kind = MMS_LOCK_MMAP, .owner_tgid = 1 };
	struct mms_query q = { .by = MMS_BY_CGROUP, .sort = MMS_SORT_WAIT_TOTAL };
	struct mms_options o;
	struct mms_rows rows = { 0 };
	struct mms_store *st;
	uint32_t lock, a1, a2, b1, none, moved;

	(void)state;
	assert_int_equal(mms_store_create(NULL, &st), 0);
	mm.name_id = mms_store_str(st, "mmap_lock");
	lock = mms_store_lock(st, &mm);
	a1 = mms_store_task_cg(st, 11, 10, "web", "/web.slice");
	a2 = mms_store_task_cg(st, 12, 10, "web", "/web.slice");
	b1 = mms_store_task_cg(st, 21, 20, "batch", "/batch.slice");
	none = mms_store_task(st, 31, 30, "old");
	/* A thread that moved is a task of each group. */
	moved = mms_store_task_cg(st, 11, 10, "web", "/batch.slice");
	assert_int_not_equal(moved, a1);
	assert_int_equal(mms_store_task_cg(st, 11, 10, "web", "/web.slice"), a1);
	assert_int_equal(mms_store_task_cg(st, 31, 30, "old", ""), none);
	mms_store_begin(st, 0);
	add(st, lock, a1, 1000, 3);
	add(st, lock, a2, 2000, 2);
	add(st, lock, b1, 50000, 1);
	add(st, lock, none, 7, 4);
	add(st, lock, moved, 100, 5);
	assert_int_equal(mms_store_commit(st, 1000000000, 0), 0);
	q.to = 0;
	assert_int_equal(mms_query_locks(st, &q, &rows), 0);
	assert_int_equal(rows.nr, 3);
	assert_string_equal(rows.rows[0].label, "/batch.slice");
	assert_int_equal(rows.rows[0].wait.count, 6);
	assert_int_equal(rows.rows[0].wait.total, 50000 + 500);
	assert_string_equal(rows.rows[1].label, "/web.slice");
	assert_int_equal(rows.rows[1].wait.count, 5);
	assert_int_equal(rows.rows[1].wait.total, 7000);
	assert_string_equal(rows.rows[2].label, "unknown");
	assert_int_equal(rows.rows[2].wait.count, 4);
	mms_rows_free(&rows);
	/* -G on stored rows: by path, exactly. */
	mms_options_init(&o);
	strcpy(o.cgroups[o.nr_cgroups++], "/web.slice");
	q.by = MMS_BY_TASK;
	q.filters = &o;
	assert_int_equal(mms_query_locks(st, &q, &rows), 0);
	assert_int_equal(rows.nr, 2);
	for (size_t i = 0; i < rows.nr; i++)
		assert_true(rows.rows[i].first_task == a1 || rows.rows[i].first_task == a2);
	mms_rows_free(&rows);
	strcpy(o.cgroups[0], "/web");
	assert_int_equal(mms_query_locks(st, &q, &rows), 0);
	assert_int_equal(rows.nr, 0);
	mms_rows_free(&rows);
	mms_store_destroy(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_cpus),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_by_cgroup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
