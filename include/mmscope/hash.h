/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tree's one hash table: 64-bit tags to a dense index (a row of the
 * caller's array, kept as index + 1, 0 marking an empty slot), open
 * addressing with linear probing in a power-of-two table at most half full.
 * The tag is stored in its slot, so growing reads no row, and a probe reads
 * a row only when the tags match.
 *
 * Keys of 64 bits or less are their own tag (mms_hash_find, mms_hash_probe
 * and mms_hash_set do everything).  Longer keys (names, stacks, tuples) use
 * a 64-bit hash of themselves as the tag and compare their rows while probing:
 *
 *	for (i = mms_hash_first(h, tag); h->vals[i]; i = mms_hash_next(h, i))
 *		if (h->tags[i] == tag && same(&rows[h->vals[i] - 1], key))
 *			return ...;
 *	mms_hash_set(h, i, tag, new_row);	(after mms_hash_reserve(h, h->nr + 1))
 *
 * With no array behind it, the index is a value of the caller's below
 * UINT32_MAX: 0 for every key of a set, a flag, a run number.
 */
#ifndef MMSCOPE_HASH_H
#define MMSCOPE_HASH_H

#include <errno.h>
#include <stdint.h>

struct mms_hash {
	uint64_t *tags;
	uint32_t *vals;		/* index + 1; 0: empty */
	uint32_t cap;		/* slots: 0 or a power of two */
	uint32_t nr;		/* slots in use */
};

/* A 64-bit mix (murmur3's finalizer, first half) cut to the bits a slot needs. */
static inline uint32_t mms_hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (uint32_t)k;
}

/* Room for n entries (the table at most half full); 0 or -ENOMEM (h unchanged). */
int mms_hash_reserve(struct mms_hash *h, uint32_t n);
/* Empties h, keeping its memory. */
void mms_hash_clear(struct mms_hash *h);
/* Frees h's memory; h is empty and usable after. */
void mms_hash_free(struct mms_hash *h);

/* The first slot to look at for tag (h->cap > 0), and the one after slot i. */
static inline uint32_t mms_hash_first(const struct mms_hash *h, uint64_t tag)
{
	return mms_hash64(tag) & (h->cap - 1);
}

static inline uint32_t mms_hash_next(const struct mms_hash *h, uint32_t i)
{
	return (i + 1) & (h->cap - 1);
}

/* Fills the empty slot i, where probing for tag stopped, with index idx. */
static inline void mms_hash_set(struct mms_hash *h, uint32_t i, uint64_t tag, uint32_t idx)
{
	h->tags[i] = tag;
	h->vals[i] = idx + 1;
	h->nr++;
}

/* 64-bit keys: the index + 1 of key, 0 when absent. */
static inline uint32_t mms_hash_find(const struct mms_hash *h, uint64_t key)
{
	if (!h->cap)
		return 0;
	for (uint32_t i = mms_hash_first(h, key); h->vals[i]; i = mms_hash_next(h, i))
		if (h->tags[i] == key)
			return h->vals[i];
	return 0;
}

/*
 * 64-bit keys, to add: makes room for one more entry, then *slot is where
 * key is (1: h->vals[*slot] is its index + 1) or goes (0: mms_hash_set(h,
 * *slot, key, idx) adds it).  -ENOMEM when the table cannot grow.
 */
static inline int mms_hash_probe(struct mms_hash *h, uint64_t key, uint32_t *slot)
{
	uint32_t i;

	if (h->nr + 1 > h->cap / 2 && mms_hash_reserve(h, h->nr + 1))
		return -ENOMEM;
	for (i = mms_hash_first(h, key); h->vals[i]; i = mms_hash_next(h, i))
		if (h->tags[i] == key)
			break;
	*slot = i;
	return h->vals[i] != 0;
}

#endif
