/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A/B comparison of runs: each recording is summarised on its own (one
 * value per metric per run), then runs are aggregated per side (avg,
 * %stdev, min, max) and the sides compared (change in %, Welch's t-test).
 * Locks are matched by name, never by address (addresses differ across
 * boots).  Used by `mmscope compare` (text, JSON, CSV) and its TUI view.
 */
#ifndef MMSCOPE_COMPARE_H
#define MMSCOPE_COMPARE_H

#include <stdbool.h>
#include <stdio.h>

#include "mmscope/stats.h"
#include "mmscope/store.h"

enum mms_cmp_unit { MMS_CMP_NS, MMS_CMP_PER_SEC, MMS_CMP_NS_PER_SEC, MMS_CMP_PAGES };

/* Metric groups selectable with -k. */
enum mms_cmp_group {
	MMS_CMP_TOTALS = 1U << 0,	/* contentions/s, wait/s of everything */
	MMS_CMP_LOCKS = 1U << 1,	/* per lock: avg wait, contended/s, wait/s */
	MMS_CMP_CALLERS = 1U << 2,	/* per caller: avg wait, contended/s */
	MMS_CMP_MMAP = 1U << 3,		/* mmap_lock per process name */
	MMS_CMP_VMA = 1U << 4,		/* VMA split/merge/inferred rates */
	MMS_CMP_RMAP = 1U << 5,		/* try_to_unmap mean batch, pages/s */
	MMS_CMP_ALL = 0x3f,
};

#define MMS_CMP_MAX_RUNS 64

struct mms_cmp_side {
	int runs;		/* runs of this side that have the metric's source */
	int present;		/* runs in which the metric had data */
	double v[MMS_CMP_MAX_RUNS];
	struct mms_runstats st;
	bool na;		/* the source is missing on this side */
};

struct mms_cmp_row {
	char name[96];		/* "i_mmap_rwsem (libc.so.6)" */
	char what[32];		/* "avg wait", "contended/s" ... */
	enum mms_cmp_group group;
	enum mms_cmp_unit unit;
	double rank;		/* for choosing the top rows */
	struct mms_cmp_side side[2];
	double change_pct;	/* (new - base) / base * 100; NAN when undefined */
	struct mms_welch welch;
};

struct mms_compare {
	const char *label[2];	/* "base", "new" */
	int runs[2];
	struct mms_cmp_row *rows;
	size_t nr, cap;
	double alpha;		/* significance level, 0.05 */
};

struct mms_compare_opts {
	unsigned int groups;	/* enum mms_cmp_group bits; 0 = all */
	int entries;		/* locks/callers/processes per metric (-E), default 5 */
};

void mms_compare_init(struct mms_compare *c, const char *base, const char *new_label);
void mms_compare_free(struct mms_compare *c);
/*
 * Adds one run (a store holding the whole recording) to a side.  families
 * says which sources the run had (bit per enum mms_metric_family).
 */
int mms_compare_add_run(struct mms_compare *c, int side, const struct mms_store *st,
			unsigned int families);
/* Computes statistics, keeps the top rows, sorts. */
int mms_compare_finish(struct mms_compare *c, const struct mms_compare_opts *o);

/* "significant", "within noise", "n/a on base" ... */
const char *mms_compare_verdict(const struct mms_compare *c, const struct mms_cmp_row *r);
int mms_compare_parse_groups(const char *list, unsigned int *groups);

void mms_compare_print_text(FILE *f, const struct mms_compare *c);
void mms_compare_print_json(FILE *f, const struct mms_compare *c);
void mms_compare_print_csv(FILE *f, const struct mms_compare *c, const char *sep);

#endif
