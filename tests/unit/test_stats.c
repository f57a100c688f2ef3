// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests: run statistics and Welch's t-test.  Expected values were
 * computed independently (by hand and with the textbook formulas:
 * sample stdev with n - 1, %stdev = stdev / mean, Welch-Satterthwaite df,
 * Student t tables).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "mmscope/stats.h"

#define assert_close(a, b, tol) assert_true(fabs((a) - (b)) <= (tol))

static void test_runstats(void **state)
{
	/* 9.47 ms style runs: mean 9.47, deviations -0.27 +0.13 +0.03 -0.07 +0.18 */
	const double v[] = { 9.20, 9.60, 9.50, 9.40, 9.65 };
	struct mms_runstats s;

	(void)state;
	mms_runstats(v, 5, &s);
	assert_int_equal(s.n, 5);
	assert_close(s.mean, 9.47, 1e-12);
	/* sum of squares 0.0729+0.0169+0.0009+0.0049+0.0324 = 0.128; /4 = 0.032 */
	assert_close(s.stdev, sqrt(0.032), 1e-12);
	assert_close(s.pct_stdev, sqrt(0.032) / 9.47 * 100, 1e-9);
	assert_close(s.min, 9.20, 0);
	assert_close(s.max, 9.65, 0);
}

static void test_edge_counts(void **state)
{
	const double one[] = { 4.0 }, two[] = { 4.0, 6.0 };
	struct mms_runstats s;

	(void)state;
	mms_runstats(one, 1, &s);
	assert_close(s.mean, 4.0, 0);
	assert_close(s.stdev, 0, 0);
	assert_close(s.pct_stdev, 0, 0);
	mms_runstats(two, 2, &s);
	assert_close(s.mean, 5.0, 0);
	assert_close(s.stdev, sqrt(2.0), 1e-12);	/* ((1 + 1) / 1) */
	assert_close(s.pct_stdev, sqrt(2.0) / 5 * 100, 1e-9);
	mms_runstats(one, 0, &s);
	assert_int_equal(s.n, 0);
}

static void test_student(void **state)
{
	(void)state;
	/* Table values: t = 2.228 at df = 10 is the 0.05 two-sided point. */
	assert_close(mms_student_p(2.228, 10), 0.05, 5e-4);
	/* t = 12.706 at df = 1 is the 0.05 point; t = 0 gives p = 1. */
	assert_close(mms_student_p(12.706, 1), 0.05, 5e-4);
	assert_close(mms_student_p(0, 7), 1.0, 1e-12);
	/* Large df tends to the normal: 1.96 -> 0.05. */
	assert_close(mms_student_p(1.96, 1e6), 0.05, 5e-4);
	assert_close(mms_betai(2, 3, 0.5), 0.6875, 1e-12);	/* closed form */
}

static void test_welch(void **state)
{
	const double a[] = { 9.20, 9.60, 9.50, 9.40, 9.65 };
	const double b[] = { 8.30, 8.50, 8.40, 8.45, 8.45 };
	const double c[] = { 9.30, 9.55, 9.45, 9.50, 9.60 };
	struct mms_runstats sa, sb, sc, s1;
	struct mms_welch w;

	(void)state;
	mms_runstats(a, 5, &sa);
	mms_runstats(b, 5, &sb);
	mms_runstats(c, 5, &sc);
	mms_welch(&sa, &sb, &w);
	assert_true(w.valid);
	/* var a = 0.128 / 4 = 0.032, var b = 0.023 / 4 = 0.00575 */
	assert_close(w.t, (8.42 - 9.47) / sqrt(0.032 / 5 + 0.00575 / 5), 1e-9);
	assert_close(w.df, pow(0.00755, 2) / (pow(0.0064, 2) / 4 + pow(0.00115, 2) / 4), 1e-9);
	assert_true(w.p < 0.001);
	mms_welch(&sa, &sc, &w);
	assert_true(w.valid);
	assert_true(w.p > 0.5);	/* same distribution: within noise */
	mms_runstats(a, 1, &s1);
	mms_welch(&s1, &sb, &w);
	assert_false(w.valid);	/* one run: no test */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runstats),
		cmocka_unit_test(test_edge_counts),
		cmocka_unit_test(test_student),
		cmocka_unit_test(test_welch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
