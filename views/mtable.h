/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A table of mm metrics (mm_metrics.h) per process or per sub-key, summed
 * over the range: the body of the mmap_lock, VMA and rmap views.  Columns
 * say which metric and what of it (rate, mean, max ...); the sparkline
 * column sums chosen metrics per interval over the last minute.
 */
#ifndef MMSCOPE_VIEWS_MTABLE_H
#define MMSCOPE_VIEWS_MTABLE_H

#include "mmscope/view.h"

#define MTABLE_MAX_METRICS 12

struct mtable_metric {
	const char *name;
	uint32_t sub_mask;	/* sample counts when (sub & mask) == val; mask 0: any sub */
	uint32_t sub_val;
};

enum mtable_what {
	MTABLE_PID,
	MTABLE_COMM,
	MTABLE_SUB,		/* the sub-key's name (by_sub tables) */
	MTABLE_COUNT_RATE,	/* events per second */
	MTABLE_TOTAL_RATE,	/* summed values per second (pages/s, VMAs/s) */
	MTABLE_WAIT_RATE,	/* summed nanoseconds per second */
	MTABLE_MEAN,	/* total / count, as a number */
	MTABLE_AVG_TIME,
	MTABLE_MAX,
	MTABLE_MAX_TIME,
	MTABLE_SPARK,
};

struct mtable_col {
	enum mtable_what what;
	int metric;	/* index into metrics[] */
};

struct mtable_cfg {
	bool by_sub;	/* rows per sub-key (folio order) instead of per process */
	const char *(*sub_name)(uint32_t sub, char *buf, size_t len);
	const struct mtable_metric *metrics;
	int nr_metrics;
	const struct mms_column *cols;
	const struct mtable_col *mcols;
	int nr_cols;
	int default_sort;
	uint32_t spark_metrics;	/* bit i: metric i's count goes into the sparkline */
	bool spark_totals;	/* sum values instead of counts */
	const char *noun;
	/* Metric index + 1 whose count is a short-lived group's processes (0: none). */
	int group_procs;
};

struct mtable;

int mtable_create(const struct mtable_cfg *cfg, struct mtable **out);
void mtable_destroy(struct mtable *m);
/* Switches configuration (the VMA view: measured or inferred). */
void mtable_set_cfg(struct mtable *m, const struct mtable_cfg *cfg);
int mtable_update(struct mtable *m, const struct mms_view_env *env);
/* Draws the column titles and rows in [y, y + h). */
void mtable_draw(struct mtable *m, const struct mms_view_env *env, struct mms_canvas *c, int y,
		 int h);
struct mms_list *mtable_table(struct mtable *m);
/* Rows before the filter; and the stat of metric i summed over every row. */
size_t mtable_total_rows(const struct mtable *m);
const struct mms_stat *mtable_sum(const struct mtable *m, int metric);

#endif
