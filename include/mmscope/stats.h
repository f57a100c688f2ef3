/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Statistics across runs, for A/B comparison: mean, sample standard
 * deviation (n - 1), %stdev (stdev / mean), min, max, and Welch's t-test
 * (unequal variances) with its two-sided p-value.
 */
#ifndef MMSCOPE_STATS_H
#define MMSCOPE_STATS_H

#include <stdbool.h>

struct mms_runstats {
	int n;
	double mean;
	double stdev;		/* sample stdev; 0 when n < 2 */
	double pct_stdev;	/* stdev / mean * 100; 0 when mean == 0 */
	double min;
	double max;
};

struct mms_welch {
	bool valid;		/* false when a side has fewer than 2 runs */
	double t;
	double df;		/* Welch-Satterthwaite degrees of freedom */
	double p;		/* two-sided */
};

void mms_runstats(const double *v, int n, struct mms_runstats *out);
/* Welch's t-test of a against b. */
void mms_welch(const struct mms_runstats *a, const struct mms_runstats *b, struct mms_welch *out);
/* Regularized incomplete beta I_x(a, b). */
double mms_betai(double a, double b, double x);
/* Two-sided p-value of Student's t with df degrees of freedom. */
double mms_student_p(double t, double df);

#endif
