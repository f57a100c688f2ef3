/* SPDX-License-Identifier: GPL-2.0 */
/* Byte-key interning used by the store's tables (private to core/). */
#ifndef MMSCOPE_CORE_INTERN_H
#define MMSCOPE_CORE_INTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mms_intern_ent {
	void *key;		/* NULL: free id */
	uint64_t hash;
	uint64_t last_seq;	/* newest interval referring to it */
	uint32_t len;
	bool written;		/* the recorder has written its definition */
};

struct mms_intern {
	struct mms_intern_ent *ent;	/* indexed by id, 1..nr */
	uint32_t nr, cap, live;
	/* Not mms_hash: 4-byte slots are what mms_store_bytes() counts, which decides eviction. */
	uint32_t *slots;		/* ids, 0 = empty */
	uint32_t nslots;
	uint32_t *free_ids;
	uint32_t nr_free, cap_free;
	uint64_t bytes;
};

void mms_intern_init(struct mms_intern *t);
void mms_intern_finish(struct mms_intern *t);
uint32_t mms_intern_find(const struct mms_intern *t, const void *key, size_t len);
uint32_t mms_intern_add(struct mms_intern *t, const void *key, size_t len, uint64_t seq);
const void *mms_intern_get(const struct mms_intern *t, uint32_t id);
/* Marks id used at seq; true when that is later than it was used so far. */
bool mms_intern_touch(struct mms_intern *t, uint32_t id, uint64_t seq);
/* Frees entries last used before keep_from_seq; returns how many. */
uint32_t mms_intern_sweep(struct mms_intern *t, uint64_t keep_from_seq);
uint64_t mms_intern_hash(const void *key, size_t len);

#endif
