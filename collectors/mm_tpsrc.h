/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The common body of the user-space tracepoint collectors (vma_tp, rmap_tp,
 * rmap_stock): a tp_reader for the rings, an mm_uagg for the numbers, and
 * the source ops that only move data between them.  A collector embeds
 * struct mm_tpsrc first in its priv, adds its tracepoints in prepare and
 * fills the aggregation from its handlers.
 */
#ifndef MMSCOPE_MM_TPSRC_H
#define MMSCOPE_MM_TPSRC_H

#include <stdbool.h>

#include "mm_uagg.h"
#include "tp_reader.h"

struct mms_source;
struct mms_store;

struct mm_tpsrc {
	struct mms_tp_reader *rd;
	struct mm_uagg agg;
	const char *const *names;	/* metric index -> name */
	uint32_t nr_names;
};

/* Creates the reader; names must outlive the source. */
int mm_tpsrc_init(struct mm_tpsrc *t, const char *const *names, uint32_t nr_names);
/*
 * Adds one tracepoint.  When it does not exist, fails with
 * "tracepoint SYS:NAME not found (HINT)" in src->why.
 */
int mm_tpsrc_add(struct mm_tpsrc *t, struct mms_source *src, const char *sys, const char *name,
		 const char *hint, mms_tp_handler fn, void *ctx, struct mms_tp_event **out);
/* Applies the process filter and opens the rings (after every add). */
int mm_tpsrc_open(struct mm_tpsrc *t, struct mms_source *src);
/* A required field: NULL and src->why set when the tracepoint lacks it. */
struct tep_format_field *mm_tpsrc_field(struct mms_source *src, const struct mms_tp_event *ev,
					const char *name);

/* Source ops for a priv that starts with struct mm_tpsrc. */
int mm_tpsrc_start(struct mms_source *src);
int mm_tpsrc_fd(struct mms_source *src);
int mm_tpsrc_poll_in(struct mms_source *src);
int mm_tpsrc_drain(struct mms_source *src, struct mms_store *st);
void mm_tpsrc_stop(struct mms_source *src);
/* Frees what mm_tpsrc_init made (not the priv). */
void mm_tpsrc_finish(struct mm_tpsrc *t);

#endif
