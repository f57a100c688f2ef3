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
void util_fmt_rate(char *buf, size_t len, uint64_t n, double secs);
/* Wait per second as a time ("35ms" of waiting each second). */
void util_fmt_wait_rate(char *buf, size_t len, uint64_t ns, double secs);
/* Compact time, "-" for 0 so that empty cells read as empty. */
void util_fmt_time(char *buf, size_t len, uint64_t ns);
/* Case-insensitive substring; an empty or NULL filter matches everything. */
bool util_match(const char *filter, const char *s);
/* A dim message in the middle of an empty area. */
void util_empty(struct mms_canvas *c, int y, int h, const char *msg);
/* "-- title ----" across the canvas; returns 1 (rows used). */
int util_section(struct mms_canvas *c, int y, const char *title);
/* A log2 histogram as rows of bars; returns the rows used (at most h). */
int util_hist(struct mms_canvas *c, int y, int h, const struct mms_stat *s, bool time);

/* Entries of esz bytes that start with their uint64_t key. */
struct util_agg {
	size_t esz;
	char *ents;
	uint32_t n, cap;
	struct mms_hash idx;	/* key -> entry index + 1 */
};

void util_agg_init(struct util_agg *a, size_t esz);
void util_agg_reset(struct util_agg *a);
void util_agg_free(struct util_agg *a);
/* The entry of key, zeroed (with its key) when new; NULL when out of memory. */
void *util_agg_get(struct util_agg *a, uint64_t key);
/* The entry of key, or NULL. */
void *util_agg_find(const struct util_agg *a, uint64_t key);
static inline void *util_agg_at(const struct util_agg *a, uint32_t i)
{
	return a->ents + (size_t)i * a->esz;
}

struct util_series;

int util_series_create(enum mms_group by, struct util_series **out);
void util_series_destroy(struct util_series *s);
/*
 * Per-second wait (or count) of one row key in the intervals of the last
 * minute up to env->cur: out[i] for interval spark_from + i.  Returns n.
 */
uint32_t util_series_get(struct util_series *s, const struct mms_view_env *env, uint64_t key,
		       bool counts, uint64_t *out, uint32_t max);

/*
 * "source: NAME (backend)" for a family, or "unavailable: WHY" wrapped over
 * up to max_rows rows.  Returns the rows used.
 */
int util_source(struct mms_canvas *c, int y, int max_rows, const struct mms_view_env *env,
	      enum mms_metric_family f, const char *what);
/* Is the family's source known to work (or unknown, as in tests)? */
bool util_family_ok(const struct mms_view_env *env, enum mms_metric_family f);

/*
 * Seeds the cache for interval idx with rows just queried for exactly that
 * interval (same grouping), saving the series its own query: begin with the
 * number of rows, then add every row (key, wait total, wait count), in the
 * pass over them the caller makes anyway.  NULL: not seeded (no memory).
 */
struct util_seed;

struct util_seed *util_series_seed_begin(struct util_series *s, const struct mms_view_env *env,
				     uint32_t idx, size_t nr);
void util_series_seed_add(struct util_seed *sd, uint64_t key, uint64_t total, uint64_t count);

/* Metric total over [env->from, env->cur] (sub < 0: all subs; tgid 0: all). */
void util_metric(const struct mms_view_env *env, const char *name, long sub, uint32_t tgid,
	       struct mms_stat *out);
/* Does any interval in the store hold this metric? */
bool util_metric_seen(const struct mms_store *st, const char *name);

#endif
