/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers private to views/: number formatting for columns, the row filter,
 * a key -> entry aggregation table, and a per-interval series cache that
 * makes sparklines cheap (one query per interval, not one per row and frame).
 */
#ifndef MMSCOPE_VIEWS_UTIL_H
#define MMSCOPE_VIEWS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mmscope/canvas.h"
#include "mmscope/hash.h"
#include "mmscope/query.h"
#include "mmscope/view.h"

/* Events per second, compact ("1.2k"); "0" for none. */
void vu_fmt_rate(char *buf, size_t len, uint64_t n, double secs);
/* Wait per second as a time ("35ms" of waiting each second). */
void vu_fmt_wait_rate(char *buf, size_t len, uint64_t ns, double secs);
/* Compact time, "-" for 0 so that empty cells read as empty. */
void vu_fmt_time(char *buf, size_t len, uint64_t ns);
/* Case-insensitive substring; an empty or NULL filter matches everything. */
bool vu_match(const char *filter, const char *s);
/* A dim message in the middle of an empty area. */
void vu_empty(struct mms_canvas *c, int y, int h, const char *msg);
/* "-- title ----" across the canvas; returns 1 (rows used). */
int vu_section(struct mms_canvas *c, int y, const char *title);
/* A log2 histogram as rows of bars; returns the rows used (at most h). */
int vu_hist(struct mms_canvas *c, int y, int h, const struct mms_stat *s, bool time);

/* Entries of esz bytes that start with their uint64_t key. */
struct vu_agg {
	size_t esz;
	char *ents;
	uint32_t n, cap;
	struct mms_hash idx;	/* key -> entry index + 1 */
};

void vu_agg_init(struct vu_agg *a, size_t esz);
void vu_agg_reset(struct vu_agg *a);
void vu_agg_free(struct vu_agg *a);
/* The entry of key, zeroed (with its key) when new; NULL when out of memory. */
void *vu_agg_get(struct vu_agg *a, uint64_t key);
/* The entry of key, or NULL. */
void *vu_agg_find(const struct vu_agg *a, uint64_t key);
static inline void *vu_agg_at(const struct vu_agg *a, uint32_t i)
{
	return a->ents + (size_t)i * a->esz;
}

struct vu_series;

int vu_series_create(enum mms_group by, struct vu_series **out);
void vu_series_destroy(struct vu_series *s);
/*
 * Per-second wait (or count) of one row key in the intervals of the last
 * minute up to env->cur: out[i] for interval spark_from + i.  Returns n.
 */
uint32_t vu_series_get(struct vu_series *s, const struct mms_view_env *env, uint64_t key,
		       bool counts, uint64_t *out, uint32_t max);

/*
 * "source: NAME (backend)" for a family, or "unavailable: WHY" wrapped over
 * up to max_rows rows.  Returns the rows used.
 */
int vu_source(struct mms_canvas *c, int y, int max_rows, const struct mms_view_env *env,
	      enum mms_metric_family f, const char *what);
/* Is the family's source known to work (or unknown, as in tests)? */
bool vu_family_ok(const struct mms_view_env *env, enum mms_metric_family f);

/*
 * Seeds the cache for interval idx with rows just queried for exactly that
 * interval (same grouping), saving the series its own query: begin with the
 * number of rows, then add every row (key, wait total, wait count), in the
 * pass over them the caller makes anyway.  NULL: not seeded (no memory).
 */
struct vu_seed;

struct vu_seed *vu_series_seed_begin(struct vu_series *s, const struct mms_view_env *env,
				     uint32_t idx, size_t nr);
void vu_series_seed_add(struct vu_seed *sd, uint64_t key, uint64_t total, uint64_t count);

/* Metric total over [env->from, env->cur] (sub < 0: all subs; tgid 0: all). */
void vu_metric(const struct mms_view_env *env, const char *name, long sub, uint32_t tgid,
	       struct mms_stat *out);
/* Does any interval in the store hold this metric? */
bool vu_metric_seen(const struct mms_store *st, const char *name);

#endif
