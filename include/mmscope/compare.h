/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A/B comparison of runs: each recording is summarised on its own (one
 * value per metric per run), then runs are aggregated per side (avg,
 * %stdev, min, max) and the sides compared (change in %, Welch's t-test).
 *
 * Things are matched by name, never by address (addresses differ across
 * boots and kernels): a lock by its name ("i_mmap_rwsem (/srv/f)",
 * "&task_struct", "mmap_lock (make)": an mm lock by process name, not pid),
 * a caller by function (offsets differ between kernel builds), a lock's
 * owner (--lock-owner) by the function of its stack where it held the lock
 * (tids differ between runs).  Locks known only by address are one row,
 * "unnamed locks".
 *
 * A side without the source of a metric says "n/a on SIDE"; a side whose
 * source ran but saw nothing has a real 0 for rates, and no value (not 0)
 * for averages such as avg wait.
 *
 * Used by `mmscope compare` (text, JSON, CSV) and its TUI view
 * (views/compare_view.c).
 */
#ifndef MMSCOPE_COMPARE_H
#define MMSCOPE_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "mmscope/hash.h"
#include "mmscope/stats.h"
#include "mmscope/store.h"

/* MMS_CMP_VALUE: the benchmark's own unit (struct mms_compare's score_unit). */
enum mms_cmp_unit { MMS_CMP_NS, MMS_CMP_PER_SEC, MMS_CMP_NS_PER_SEC, MMS_CMP_PAGES, MMS_CMP_VALUE };

/* Metric groups selectable with -k. */
enum mms_cmp_group {
	MMS_CMP_TOTALS = 1U << 0,	/* all locks, and all of each mm lock kind */
	MMS_CMP_LOCKS = 1U << 1,	/* per lock name */
	MMS_CMP_CALLERS = 1U << 2,	/* per calling function */
	MMS_CMP_MMAP = 1U << 3,		/* mmap_lock per process name: wait, hold (--mmap-hold);
					   page faults and fallbacks (--vma-lock) */
	MMS_CMP_VMA = 1U << 4,		/* VMA split/merge rates (or inferred count changes) */
	MMS_CMP_RMAP = 1U << 5,		/* try_to_unmap mean batch, pages/s */
	MMS_CMP_SCORE = 1U << 6,	/* the benchmark's own score (record --score): first */
	MMS_CMP_OWNERS = 1U << 7,	/* per owner's function (--lock-owner), after callers */
	MMS_CMP_ALL = 0xff,
};

/* What kind of number a row is, also selectable with -k. */
enum mms_cmp_metric {
	MMS_CMP_M_AVG = 1U << 0,	/* a mean per event: avg wait, avg hold, mean batch */
	MMS_CMP_M_RATE = 1U << 1,	/* events per second: contended/s, splits/s ... */
	MMS_CMP_M_SUM = 1U << 2,	/* summed values per second: wait/s, pages/s ... */
	MMS_CMP_M_ALL = 0x7,
};

/*
 * What a run's sources measured (from its recording's header): a metric is
 * n/a on a run whose sources could not see it.
 */
enum mms_cmp_have {
	MMS_CMP_HAVE_LOCK = 1U << 0,		/* lock contention (lock-bpf, lock-perf) */
	MMS_CMP_HAVE_MMAP_HOLD = 1U << 1,	/* mmap_lock hold times (--mmap-hold) */
	MMS_CMP_HAVE_VMA = 1U << 2,		/* VMA ops as the kernel does them */
	MMS_CMP_HAVE_VMA_INFERRED = 1U << 3,	/* VMA count changes per syscall */
	MMS_CMP_HAVE_RMAP_BATCH = 1U << 4,	/* try_to_unmap batch sizes */
	MMS_CMP_HAVE_SCORE = 1U << 5,		/* the run has a score (mms_compare_add_score) */
	MMS_CMP_HAVE_VMA_LOCK = 1U << 6,	/* page faults and fallbacks (--vma-lock) */
	MMS_CMP_HAVE_VMA_LOCK_KERNEL = 1U << 7,	/* the kernel's vma_lock_* counters too */
	MMS_CMP_HAVE_LOCK_OWNER = 1U << 8,	/* lock owners (--lock-owner; with HAVE_LOCK) */
};

/*
 * The owners group's buckets, beside owner stack functions: waits on a lock
 * without an owner field (spinlocks...), an rwsem readers held or nobody
 * held, an owner thread whose stack was not taken (it was running: the
 * wording of report --lock-owner), a stack without symbols.
 */
#define MMS_CMP_OWNER_UNKNOWN "owner unknown"
#define MMS_CMP_OWNER_RUNNING "(no stack: it was running)"
#define MMS_CMP_OWNER_UNSYMBOLISED "unsymbolised owner stacks"
/* MMS_OWNER_READERS ("<readers>") and MMS_OWNER_NONE ("<none>") are rows of their own. */

#define MMS_CMP_MAX_RUNS 64

struct mms_cmp_side {
	int runs;		/* runs of this side whose sources measure the metric */
	int present;		/* runs in which the metric had data */
	double v[MMS_CMP_MAX_RUNS];	/* per run (of the side); NAN: no value */
	struct mms_runstats st;	/* over the runs with a value */
	bool na;		/* no run of this side measures the metric */
};

struct mms_cmp_row {
	char name[128];		/* "i_mmap_rwsem (/usr/lib/libc.so.6)" */
	const char *what;	/* "avg wait", "contended/s" ... (static) */
	enum mms_cmp_group group;
	enum mms_cmp_metric metric;
	enum mms_cmp_unit unit;
	bool lower_better;	/* a drop is an improvement (waits); false: no judgement */
	bool higher_better;	/* a rise is an improvement (a throughput score) */
	double rank;		/* the thing's weight, for choosing the top ones */
	struct mms_cmp_side side[2];
	double change_pct;	/* (new - base) / base * 100; NAN when undefined */
	struct mms_welch welch;
};

struct mms_cmp_ent;

struct mms_compare {
	const char *label[2];	/* "base", "new" */
	int runs[2];
	unsigned int have[2][MMS_CMP_MAX_RUNS];	/* enum mms_cmp_have per run */
	double secs[2][MMS_CMP_MAX_RUNS];	/* recorded seconds per run */
	double alpha;		/* significance level, 0.05 */
	/* The score's label, from the first run that has one. */
	char score_name[64];
	char score_unit[32];
	bool score_lower;	/* lower is better (a time); else higher */
	/* Results of mms_compare_finish(), in output order. */
	struct mms_cmp_row *rows;
	size_t nr, cap;
	/* Private: what runs are summed into before finish. */
	struct mms_cmp_ent *ents;
	size_t nr_ents, cap_ents;
	struct mms_hash idx;	/* (group, name) -> entity index + 1 */
};

struct mms_compare_opts {
	unsigned int groups;	/* enum mms_cmp_group bits; 0 = all */
	unsigned int metrics;	/* enum mms_cmp_metric bits; 0 = all */
	int entries;		/* locks/callers/processes per group (-E); 0 = 5 */
};

void mms_compare_init(struct mms_compare *c, const char *base, const char *new_label);
void mms_compare_free(struct mms_compare *c);
/*
 * Adds one run (a store holding the whole recording) to side 0 (base) or 1
 * (new); have is what its sources measured (enum mms_cmp_have bits).
 * -E2BIG past MMS_CMP_MAX_RUNS runs a side, -ENOMEM.
 */
int mms_compare_add_run(struct mms_compare *c, int side, const struct mms_store *st,
			unsigned int have);
/*
 * The benchmark's score of the run just added to side: one value, compared
 * first, in the unit the first scored run gave.  -EINVAL without a run.
 */
int mms_compare_add_score(struct mms_compare *c, int side, const char *name, const char *unit,
			  bool lower_better, double v);
/*
 * Whether a run's waits name any owner (a task in a lock row's owner field):
 * --lock-owner was on.  Its owner rows are then MMS_CMP_HAVE_LOCK_OWNER.
 */
bool mms_compare_has_owners(const struct mms_store *st);
/* Computes statistics, keeps the selected and top rows, orders them. */
int mms_compare_finish(struct mms_compare *c, const struct mms_compare_opts *o);

/* Why a side of r is n/a, for text: "its runs' sources do not measure this" ... */
const char *mms_compare_na_why(const struct mms_cmp_row *r);
/* "significant", "within noise", "n/a on base", "no data on new" ... */
const char *mms_compare_verdict(const struct mms_compare *c, const struct mms_cmp_row *r,
				char *buf, size_t len);
static inline bool mms_compare_significant(const struct mms_compare *c,
					   const struct mms_cmp_row *r)
{
	return r->welch.valid && r->welch.p < c->alpha && !r->side[0].na && !r->side[1].na;
}
const char *mms_compare_group_name(enum mms_cmp_group g);
/* The group after (dir 1) or before (-1) cur in output order; 0 (all) past either end. */
unsigned int mms_compare_group_step(unsigned int cur, int dir);
/*
 * -k: a comma list of groups (score, totals, locks, callers, owners, mmap_lock,
 * vma, rmap, all) and metric kinds (avg, rate, sum); either part empty means all.
 */
int mms_compare_parse_keys(const char *list, unsigned int *groups, unsigned int *metrics);
/* What no run on either side measured, one line each ("" when nothing): for the header. */
int mms_compare_notes(const struct mms_compare *c, char *buf, size_t len);
/* A value in the row's unit: "9.47 ms", "12.3 ms/s", "1.50", "523". */
void mms_compare_fmt(char *buf, size_t len, enum mms_cmp_unit unit, double v);

/* Fixed width, at most 80 columns: pastes into a mail. */
void mms_compare_print_text(FILE *f, const struct mms_compare *c);
void mms_compare_print_json(FILE *f, const struct mms_compare *c);
void mms_compare_print_csv(FILE *f, const struct mms_compare *c, const char *sep);

#endif
