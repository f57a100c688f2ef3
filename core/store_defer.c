// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred intervals and rewinding: what makes a replay seek cost what the
 * views look at rather than the whole window (see include/mmscope/store.h).
 *
 * A seek rewinds the store, keeping its interned tables and the filled
 * intervals of the new window, then commits the rest deferred: times and
 * row counts only.  mms_store_load(), asked for before reading, has the
 * loader add a deferred interval's rows through a second builder, with the
 * same merging, row limit and marking of entries as a normal commit, so
 * readers cannot tell once it is loaded.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

/*
 * After a rewind the tables keep what other windows interned (replay seeks
 * back and forth over the same locks and stacks), up to this share of the
 * byte budget; beyond it a rewind frees what no kept interval refers to.
 */
#define REWIND_TABLE_SHARE 4

void store_limbo_clear(struct mms_store *st)
{
	for (uint32_t i = 0; st->nr_limbo && i < st->opts.window; i++) {
		if (!st->limbo[i])
			continue;
		store_interval_free(st, &st->limbo[i]->iv);
		st->limbo[i] = NULL;
		st->nr_limbo--;
	}
}

/*
 * Frees every interned entry no kept interval refers to.  After a rewind
 * the entries' last use says nothing (seqs jumped), so the kept intervals
 * mark theirs again, one past their seq so that seq 0 is told from unused.
 */
static void compact(struct mms_store *st)
{
	uint32_t total = store_live(st), freed = 0;

	for (int t = 0; t < MMS_TAB_NR; t++)
		for (uint32_t id = 1; id <= st->tab[t].nr; id++)
			st->tab[t].ent[id].last_seq = 0;
	for (uint32_t i = 0; st->nr_limbo && i < st->opts.window; i++)
		if (st->limbo[i])
			store_touch_interval(st, &st->limbo[i]->iv, st->limbo[i]->iv.seq + 1);
	for (int t = 0; t < MMS_TAB_NR; t++)
		freed += mms_intern_sweep(&st->tab[t], 1);
	store_swept(st, total, freed);
}

void mms_store_rewind(struct mms_store *st, uint64_t next_seq, uint64_t keep_to)
{
	store_limbo_clear(st);
	st->limbo_seq = next_seq;
	for (uint32_t i = 0; i < st->count; i++) {
		struct mms_interval *iv = store_ring_at(st, i);
		uint64_t k = iv->seq - next_seq;

		if (iv->seq >= next_seq && iv->seq <= keep_to && k < st->opts.window &&
		    !store_held(iv)->deferred) {
			st->limbo[k] = store_held(iv);
			st->nr_limbo++;
		} else {
			store_interval_free(st, iv);
		}
	}
	memset(st->ring, 0, st->opts.window * sizeof(*st->ring));
	st->head = st->count = 0;
	st->iv_bytes = 0;
	st->evicted = next_seq;
	st->next_seq = next_seq;
	store_builder_reset(&st->b);
	st->epoch++;
	if (store_table_bytes(st) * REWIND_TABLE_SHARE >= st->opts.max_bytes)
		compact(st);
}

/* Rows a deferred interval will hold: what fits in max_rows, locks first (see add_row). */
static void deferred_rows(const struct mms_store *st, const struct mms_deferred_iv *d,
			  uint32_t *n_locks, uint32_t *n_metrics)
{
	uint32_t max = st->opts.max_rows;

	*n_locks = d->n_locks < max ? d->n_locks : max;
	*n_metrics = d->n_metrics < max - *n_locks ? d->n_metrics : max - *n_locks;
}

/* The kept interval (mms_store_rewind()) for the next seq when d describes it, else NULL. */
static struct held *take_kept(struct mms_store *st, const struct mms_deferred_iv *d)
{
	uint64_t k = st->next_seq - st->limbo_seq;
	uint32_t n_locks, n_metrics;
	struct held *h;

	if (!st->nr_limbo || st->next_seq < st->limbo_seq || k >= st->opts.window ||
	    !st->limbo[k])
		return NULL;
	h = st->limbo[k];
	st->limbo[k] = NULL;
	st->nr_limbo--;
	deferred_rows(st, d, &n_locks, &n_metrics);
	if (h->iv.start_ns == d->start_ns && h->iv.dur_ns == d->dur_ns &&
	    h->iv.flags == d->flags && h->iv.n_locks == n_locks && h->iv.n_metrics == n_metrics)
		return h;
	store_interval_free(st, &h->iv);
	return NULL;
}

int mms_store_commit_deferred(struct mms_store *st, const struct mms_deferred_iv *d)
{
	struct held *h;
	uint32_t n_locks, n_metrics;

	if (st->b.open || st->filling)
		return -EBUSY;
	h = take_kept(st, d);
	if (!h) {
		h = calloc(1, sizeof(*h));
		if (!h)
			return -ENOMEM;
		h->iv.seq = st->next_seq;
		h->iv.start_ns = d->start_ns;
		h->iv.dur_ns = d->dur_ns;
		h->iv.flags = d->flags;
		h->cookie = d->cookie;
		h->deferred = true;
		deferred_rows(st, d, &n_locks, &n_metrics);
		h->want_locks = n_locks;
		h->want_metrics = n_metrics;
		h->bytes = sizeof(h->iv) + (uint64_t)n_locks * sizeof(struct mms_lock_sample) +
			   (uint64_t)n_metrics * sizeof(struct mms_metric_sample);
		st->nr_deferred++;
	}
	store_append(st, h);
	return 0;
}

void store_fill(struct mms_store *st, struct held *h)
{
	struct builder *b = &st->fb;
	int err = -ENOENT;

	if (st->filling)
		return;		/* load() read an interval: it gets it empty */
	h->deferred = false;
	st->nr_deferred--;
	store_builder_begin(b, h->iv.seq, h->iv.start_ns);
	store_builder_reserve(st, b, h->want_locks, h->want_metrics);
	st->filling = true;
	if (st->has_loader)
		err = st->loader.load(st->loader.ctx, st, h->cookie);
	st->filling = false;
	if (err || store_builder_take(b, &h->iv)) {
		/* Only memory can fail here (the file was checked): say the rows are lost. */
		b->open = false;
		b->iv.n_locks = b->iv.n_metrics = 0;
		h->iv.lost[MMS_LOST_STORE] += h->want_locks + h->want_metrics;
	}
	st->iv_bytes -= h->bytes;
	h->bytes = store_interval_bytes(&h->iv);
	st->iv_bytes += h->bytes;
}

uint32_t mms_store_load(struct mms_store *st, uint32_t from, uint32_t to)
{
	uint32_t filled = 0;

	if (st->filling)
		return 0;	/* load() must not read intervals */
	if (to >= st->count)
		to = st->count - 1;
	for (uint32_t i = from; st->nr_deferred && st->count && i <= to; i++) {
		struct held *h = store_held(store_ring_at(st, i));

		/* Filling adds what the interval always stood for: readers see no change. */
		if (h->deferred) {
			store_fill(st, h);
			filled++;
		}
	}
	return filled;
}

bool mms_store_loaded(const struct mms_store *st, uint32_t from, uint32_t to)
{
	if (to >= st->count)
		to = st->count - 1;
	for (uint32_t i = from; st->nr_deferred && st->count && i <= to; i++)
		if (store_held(store_ring_at(st, i))->deferred)
			return false;
	return true;
}

bool mms_store_set_loader(struct mms_store *st, const struct mms_store_loader *l)
{
	if (l && st->has_loader && st->loader.load == l->load && st->loader.ctx == l->ctx)
		return false;
	/* What the previous loader deferred, only it can fill. */
	if (st->count)
		mms_store_load(st, 0, st->count - 1);
	if (st->has_loader && st->loader.release)
		st->loader.release(st->loader.ctx);
	st->has_loader = l != NULL;
	if (l)
		st->loader = *l;
	return l != NULL;
}

uint64_t mms_store_id_gen(const struct mms_store *st)
{
	return st->id_gen;
}
