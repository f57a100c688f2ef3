// SPDX-License-Identifier: GPL-2.0
/* Unit tests: the sample model's statistics, histograms and lock types. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "mmscope/sample.h"

static void test_hist_slots(void **state)
{
	(void)state;
	assert_int_equal(mms_hist_slot(0), 0);
	assert_int_equal(mms_hist_slot(1), 0);
	assert_int_equal(mms_hist_slot(2), 1);
	assert_int_equal(mms_hist_slot(3), 1);
	assert_int_equal(mms_hist_slot(4), 2);
	assert_int_equal(mms_hist_slot(1023), 9);
	assert_int_equal(mms_hist_slot(1024), 10);
	assert_int_equal(mms_hist_slot(UINT64_MAX), MMS_HIST_SLOTS - 1);
	assert_int_equal(mms_hist_slot_low(0), 0);
	assert_int_equal(mms_hist_slot_low(10), 1024);
}

static void test_stat_add_merge(void **state)
{
	struct mms_stat a, b;

	(void)state;
	mms_stat_init(&a);
	mms_stat_init(&b);
	mms_stat_add(&a, 100);
	mms_stat_add(&a, 300);
	assert_int_equal(a.count, 2);
	assert_int_equal(a.total, 400);
	assert_int_equal(a.min, 100);
	assert_int_equal(a.max, 300);
	assert_int_equal(mms_stat_avg(&a), 200);
	mms_stat_add_n(&b, 50, 3);
	assert_int_equal(b.count, 3);
	assert_int_equal(b.total, 150);
	assert_int_equal(b.hist[mms_hist_slot(50)], 3);
	mms_stat_merge(&a, &b);
	assert_int_equal(a.count, 5);
	assert_int_equal(a.total, 550);
	assert_int_equal(a.min, 50);
	assert_int_equal(a.max, 300);
	/* Merging an empty stat changes nothing, min of an empty one is not 0. */
	mms_stat_init(&b);
	mms_stat_merge(&a, &b);
	assert_int_equal(a.min, 50);
	mms_stat_merge(&b, &a);
	assert_int_equal(b.min, 50);
	assert_int_equal(b.count, 5);
}

static void test_percentile(void **state)
{
	struct mms_stat s;

	(void)state;
	mms_stat_init(&s);
	assert_int_equal(mms_stat_percentile(&s, 50), 0);
	/* 100 values of 1000 ns: every percentile is 1000 (clamped to min/max). */
	mms_stat_add_n(&s, 1000, 100);
	assert_int_equal(mms_stat_percentile(&s, 50), 1000);
	assert_int_equal(mms_stat_percentile(&s, 99), 1000);
	/* 99 fast waits and one slow one: p50 stays in the fast slot, p100 is the max. */
	mms_stat_init(&s);
	mms_stat_add_n(&s, 1500, 99);
	mms_stat_add(&s, 5000000);
	assert_true(mms_stat_percentile(&s, 50) >= 1024 && mms_stat_percentile(&s, 50) < 2048);
	assert_int_equal(mms_stat_percentile(&s, 100), 5000000);
	assert_true(mms_stat_percentile(&s, 99.5) >= 4194304);
}

static void test_lock_types(void **state)
{
	uint32_t f[8];

	(void)state;
	assert_string_equal(mms_lock_type_name(MMS_LCB_SPIN), "spinlock");
	assert_string_equal(mms_lock_type_name(MMS_LCB_WRITE), "rwsem:W");
	assert_string_equal(mms_lock_type_name(MMS_LCB_READ), "rwsem:R");
	assert_string_equal(mms_lock_type_name(MMS_LCB_MUTEX | MMS_LCB_SPIN), "mutex");
	assert_string_equal(mms_lock_type_name(0x40), "unknown");
	assert_int_equal(mms_lock_type_parse("rwsem:W", f, 8), 1);
	assert_int_equal(f[0], MMS_LCB_WRITE);
	assert_int_equal(mms_lock_type_parse("rwsem", f, 8), 2);
	assert_int_equal(mms_lock_type_parse("mutex", f, 8), 2);
	assert_int_equal(mms_lock_type_parse("nonsense", f, 8), -22);
	assert_int_equal(mms_lock_type_parse("rwsem", f, 1), -7);
	assert_string_equal(mms_lost_reason_name(MMS_LOST_MAP_FULL), "map_full");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hist_slots),
		cmocka_unit_test(test_stat_add_merge),
		cmocka_unit_test(test_percentile),
		cmocka_unit_test(test_lock_types),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
