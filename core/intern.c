// SPDX-License-Identifier: GPL-2.0
/*
 * Interned tables of the store: id -> object, object -> id.  Open addressing
 * over ids; entries no committed interval refers to any more are freed by
 * mms_intern_sweep() and their ids reused.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "intern.h"

#define MIN_SLOTS 64

static uint64_t hash_bytes(const void *p, size_t n)
{
	/* FNV-1a: short keys, no adversary worth a keyed hash here. */
	const unsigned char *c = p;
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= c[i];
		h *= 1099511628211ULL;
	}
	return h;
}

uint64_t mms_intern_hash(const void *key, size_t len)
{
	return hash_bytes(key, len);
}

void mms_intern_init(struct mms_intern *t)
{
	memset(t, 0, sizeof(*t));
}

void mms_intern_finish(struct mms_intern *t)
{
	for (uint32_t id = 1; id <= t->nr; id++)
		free(t->ent[id].key);
	free(t->ent);
	free(t->slots);
	free(t->free_ids);
	memset(t, 0, sizeof(*t));
}

static int rehash(struct mms_intern *t, uint32_t nslots)
{
	uint32_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (uint32_t id = 1; id <= t->nr; id++) {
		uint32_t i;

		if (!t->ent[id].key)
			continue;
		i = (uint32_t)t->ent[id].hash & (nslots - 1);
		while (slots[i])
			i = (i + 1) & (nslots - 1);
		slots[i] = id;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

uint32_t mms_intern_find(const struct mms_intern *t, const void *key, size_t len)
{
	uint64_t h;
	uint32_t i;

	if (!t->nslots)
		return 0;
	h = hash_bytes(key, len);
	for (i = (uint32_t)h & (t->nslots - 1); t->slots[i]; i = (i + 1) & (t->nslots - 1)) {
		const struct mms_intern_ent *e = &t->ent[t->slots[i]];

		if (e->hash == h && e->len == len && !memcmp(e->key, key, len))
			return t->slots[i];
	}
	return 0;
}

static uint32_t new_id(struct mms_intern *t)
{
	struct mms_intern_ent *ent;
	uint32_t cap;

	if (t->nr_free)
		return t->free_ids[--t->nr_free];
	if (t->nr + 1 >= t->cap) {
		cap = t->cap ? t->cap * 2 : 64;
		ent = realloc(t->ent, cap * sizeof(*ent));
		if (!ent)
			return 0;
		memset(ent + t->cap, 0, (cap - t->cap) * sizeof(*ent));
		t->ent = ent;
		t->cap = cap;
	}
	return ++t->nr;
}

uint32_t mms_intern_add(struct mms_intern *t, const void *key, size_t len, uint64_t seq)
{
	struct mms_intern_ent *e;
	uint32_t id = mms_intern_find(t, key, len), i;
	void *copy;

	if (id) {
		if (t->ent[id].last_seq < seq)
			t->ent[id].last_seq = seq;
		return id;
	}
	if ((t->live + 1) * 2 > t->nslots &&
	    rehash(t, t->nslots ? t->nslots * 2 : MIN_SLOTS))
		return 0;
	/* One spare byte so strings stay NUL-terminated. */
	copy = malloc(len + 1);
	if (!copy)
		return 0;
	memcpy(copy, key, len);
	((char *)copy)[len] = 0;
	id = new_id(t);
	if (!id) {
		free(copy);
		return 0;
	}
	e = &t->ent[id];
	e->key = copy;
	e->len = (uint32_t)len;
	e->hash = hash_bytes(key, len);
	e->last_seq = seq;
	e->written = false;
	for (i = (uint32_t)e->hash & (t->nslots - 1); t->slots[i]; i = (i + 1) & (t->nslots - 1))
		;
	t->slots[i] = id;
	t->live++;
	t->bytes += len + 1 + sizeof(*e);
	return id;
}

const void *mms_intern_get(const struct mms_intern *t, uint32_t id)
{
	return id && id <= t->nr ? t->ent[id].key : NULL;
}

bool mms_intern_touch(struct mms_intern *t, uint32_t id, uint64_t seq)
{
	if (!id || id > t->nr || !t->ent[id].key || t->ent[id].last_seq >= seq)
		return false;
	t->ent[id].last_seq = seq;
	return true;
}

uint32_t mms_intern_sweep(struct mms_intern *t, uint64_t keep_from_seq)
{
	uint32_t freed = 0, *ids;

	for (uint32_t id = 1; id <= t->nr; id++) {
		struct mms_intern_ent *e = &t->ent[id];

		if (!e->key || e->last_seq >= keep_from_seq)
			continue;
		if (t->nr_free + 1 > t->cap_free) {
			uint32_t cap = t->cap_free ? t->cap_free * 2 : 64;

			ids = realloc(t->free_ids, cap * sizeof(*ids));
			if (!ids)
				break;
			t->free_ids = ids;
			t->cap_free = cap;
		}
		t->bytes -= e->len + 1 + sizeof(*e);
		free(e->key);
		memset(e, 0, sizeof(*e));
		t->free_ids[t->nr_free++] = id;
		t->live--;
		freed++;
	}
	if (freed)
		rehash(t, t->nslots);
	return freed;
}
