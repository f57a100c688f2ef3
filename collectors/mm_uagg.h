/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User-space aggregation for the mm tracepoint collectors (mm_tpsrc.c and
 * its sources): the rows the BPF sources aggregate in the kernel (mm_agg.h),
 * (tgid, metric, sub) -> statistic, filled record by record between drains.
 */
#ifndef MMSCOPE_MM_UAGG_H
#define MMSCOPE_MM_UAGG_H

#include <stddef.h>
#include <stdint.h>

#include "mmscope/hash.h"

struct mms_store;

struct mm_uagg_row;

struct mm_uagg {
	struct mm_uagg_row *rows;
	size_t nr, cap;
	struct mms_hash idx;	/* (tgid, metric, sub) -> row index + 1 */
};

int mm_uagg_add(struct mm_uagg *u, uint32_t tgid, uint32_t metric, uint32_t sub, uint64_t v);
/* Adds every row to the store's open interval and empties u. */
int mm_uagg_drain(struct mm_uagg *u, struct mms_store *st, const char *const *names,
		  uint32_t nr_names, const char *(*comm)(void *ctx, uint32_t pid), void *ctx);
void mm_uagg_finish(struct mm_uagg *u);

#endif
