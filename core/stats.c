// SPDX-License-Identifier: GPL-2.0
/* Run statistics and Welch's t-test (see include/mmscope/stats.h). */
#include <math.h>

#include "mmscope/stats.h"

void mms_runstats(const double *v, int n, struct mms_runstats *out)
{
	double sum = 0, ss = 0;

	*out = (struct mms_runstats){ .n = n };
	if (n <= 0)
		return;
	out->min = out->max = v[0];
	for (int i = 0; i < n; i++) {
		sum += v[i];
		if (v[i] < out->min)
			out->min = v[i];
		if (v[i] > out->max)
			out->max = v[i];
	}
	out->mean = sum / n;
	if (n > 1) {
		for (int i = 0; i < n; i++)
			ss += (v[i] - out->mean) * (v[i] - out->mean);
		out->stdev = sqrt(ss / (n - 1));
	}
	if (out->mean != 0)
		out->pct_stdev = out->stdev / fabs(out->mean) * 100.0;
}

/* Continued fraction for the incomplete beta (modified Lentz). */
static double betacf(double a, double b, double x)
{
	const double eps = 1e-15, tiny = 1e-300;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;

	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (int m = 1; m <= 300; m++) {
		double m2 = 2.0 * m, aa, del;

		aa = m * (b - m) * x / ((a - 1 + m2) * (a + m2));
		d = 1 + aa * d;
		d = fabs(d) < tiny ? tiny : d;
		c = 1 + aa / c;
		c = fabs(c) < tiny ? tiny : c;
		d = 1 / d;
		h *= d * c;
		aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2));
		d = 1 + aa * d;
		d = fabs(d) < tiny ? tiny : d;
		c = 1 + aa / c;
		c = fabs(c) < tiny ? tiny : c;
		d = 1 / d;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < eps)
			break;
	}
	return h;
}

double mms_betai(double a, double b, double x)
{
	double front;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	/* The continued fraction converges fast on one side of the mean. */
	if (x < (a + 1) / (a + b + 2))
		return front * betacf(a, b, x) / a;
	return 1 - front * betacf(b, a, 1 - x) / b;
}

double mms_student_p(double t, double df)
{
	if (!isfinite(t))
		return 0;
	return mms_betai(df / 2, 0.5, df / (df + t * t));
}

void mms_welch(const struct mms_runstats *a, const struct mms_runstats *b, struct mms_welch *out)
{
	double va, vb, se2;

	*out = (struct mms_welch){ 0 };
	if (a->n < 2 || b->n < 2)
		return;
	out->valid = true;
	va = a->stdev * a->stdev / a->n;
	vb = b->stdev * b->stdev / b->n;
	se2 = va + vb;
	if (se2 == 0) {
		/* No noise at all: any difference is real, none is none. */
		out->t = a->mean == b->mean ? 0 : INFINITY;
		out->df = a->n + b->n - 2;
		out->p = a->mean == b->mean ? 1 : 0;
		return;
	}
	out->t = (b->mean - a->mean) / sqrt(se2);
	out->df = se2 * se2 / (va * va / (a->n - 1) + vb * vb / (b->n - 1));
	out->p = mms_student_p(out->t, out->df);
}
