/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The store's insides, shared by store.c (tables, building, the ring) and
 * store_defer.c (deferred intervals and rewinding, for replay seeks).
 * Private to core/.
 */
#ifndef MMSCOPE_CORE_STORE_INT_H
#define MMSCOPE_CORE_STORE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "intern.h"
#include "mmscope/store.h"

/* Not mms_hash: compare of hostile_rec.py's distinct took 1.31 -> 1.50 s CPU through it. */
struct row_index {
	uint32_t *slots;	/* row index + 1, 0 = empty */
	uint32_t nslots;
};

struct builder {
	bool open;
	struct mms_interval iv;
	uint32_t cap_locks, cap_metrics;
	struct row_index lock_idx, metric_idx;
};

/* A committed interval as the store holds it. */
struct held {
	struct mms_interval iv;	/* first: readers get &held->iv */
	uint64_t cookie;	/* deferred: what the loader is given */
	uint64_t bytes;		/* counted in iv_bytes: deferred, those of the rows to come */
	uint32_t want_locks;	/* deferred: rows to come */
	uint32_t want_metrics;
	bool deferred;		/* rows not added yet (iv has none meanwhile) */
};

struct mms_store {
	struct mms_store_opts opts;
	struct mms_interval **ring;	/* window slots; each the iv of a struct held */
	uint32_t head;			/* index of the oldest */
	uint32_t count;
	uint64_t next_seq;
	uint64_t iv_bytes;
	uint64_t evicted;
	uint64_t epoch;			/* bumped when ids are reused */
	uint32_t sweep_at;		/* table size that triggers a sweep */
	uint64_t id_gen;		/* see mms_store_id_gen() */
	struct mms_intern tab[MMS_TAB_NR];
	struct mms_stack **stacks;	/* views of interned stacks, by id, in chunks */
	uint32_t nr_chunks;
	struct builder b;		/* the interval being built */
	/* Deferred intervals (store_defer.c). */
	struct builder fb;		/* a deferred interval being filled */
	bool filling;			/* fb is the builder the add functions use */
	bool has_loader;
	struct mms_store_loader loader;
	uint32_t nr_deferred;		/* held intervals not filled yet */
	struct held **limbo;		/* after a rewind: kept intervals, by seq - limbo_seq */
	uint64_t limbo_seq;
	uint32_t nr_limbo;
};

static inline struct held *store_held(const struct mms_interval *iv)
{
	return (struct held *)iv;	/* iv is the first member */
}

/* The interval at ring index idx as it is: a deferred one stays unfilled. */
static inline struct mms_interval *store_ring_at(const struct mms_store *st, uint32_t idx)
{
	return st->ring[(st->head + idx) % st->opts.window];
}

/* store.c */
uint64_t store_new_id_gen(void);
void store_interval_free(struct mms_store *st, struct mms_interval *iv);
uint64_t store_interval_bytes(const struct mms_interval *iv);
void store_builder_begin(struct builder *b, uint64_t seq, uint64_t start_ns);
void store_builder_reserve(struct mms_store *st, struct builder *b, uint32_t n_locks,
			   uint32_t n_metrics);
int store_builder_take(struct builder *b, struct mms_interval *iv);
void store_builder_reset(struct builder *b);
/* Appends a committed interval (evicting, and sweeping unless it is deferred). */
void store_append(struct mms_store *st, struct held *h);
/* Keeps alive what the rows of iv refer to, as if used at seq. */
void store_touch_interval(struct mms_store *st, const struct mms_interval *iv, uint64_t seq);
uint32_t store_live(const struct mms_store *st);
uint64_t store_table_bytes(const struct mms_store *st);
/* After freeing: new epoch and id generation, next sweep threshold. */
void store_swept(struct mms_store *st, uint32_t total, uint32_t freed);

/* store_defer.c */
void store_limbo_clear(struct mms_store *st);
/* Has the loader add the rows of a deferred interval. */
void store_fill(struct mms_store *st, struct held *h);

#endif
