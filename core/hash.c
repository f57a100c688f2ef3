// SPDX-License-Identifier: GPL-2.0
/* The tree's one hash table (mmscope/hash.h): growing, emptying, freeing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mmscope/hash.h"

#define MIN_SLOTS 64

int mms_hash_reserve(struct mms_hash *h, uint32_t n)
{
	uint32_t cap = h->cap ? h->cap : MIN_SLOTS;
	uint64_t *tags;
	uint32_t *vals;

	while (cap / 2 < n) {
		if (cap > UINT32_MAX / 2)
			return -ENOMEM;
		cap *= 2;
	}
	if (cap == h->cap)
		return 0;
	tags = malloc(cap * sizeof(*tags));
	vals = calloc(cap, sizeof(*vals));
	if (!tags || !vals) {
		free(tags);
		free(vals);
		return -ENOMEM;
	}
	for (uint32_t j = 0; j < h->cap; j++) {
		uint32_t i = mms_hash64(h->tags[j]) & (cap - 1);

		if (!h->vals[j])
			continue;
		while (vals[i])
			i = (i + 1) & (cap - 1);
		tags[i] = h->tags[j];
		vals[i] = h->vals[j];
	}
	free(h->tags);
	free(h->vals);
	h->tags = tags;
	h->vals = vals;
	h->cap = cap;
	return 0;
}

void mms_hash_clear(struct mms_hash *h)
{
	if (h->vals)
		memset(h->vals, 0, h->cap * sizeof(*h->vals));
	h->nr = 0;
}

void mms_hash_free(struct mms_hash *h)
{
	free(h->tags);
	free(h->vals);
	memset(h, 0, sizeof(*h));
}
