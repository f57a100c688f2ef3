/* SPDX-License-Identifier: GPL-2.0 */
/* The mm_holders map (mm_holders.h), for the BPF objects that share it. */
#ifndef MMSCOPE_MM_HOLDERS_BPF_H
#define MMSCOPE_MM_HOLDERS_BPF_H

#include "mm_holders.h"

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MM_HOLDERS_LOCKS);
	__type(key, __u64);	/* the mmap_lock's address */
	__type(value, struct mm_holders);
} mm_holders SEC(".maps");

/* The open write hold of holders, or NULL. */
static __always_inline struct mm_hold *mm_holders_open(struct mm_holders *hs)
{
	struct mm_hold *h = &hs->h[(hs->head - 1) & (MM_HOLDERS_SLOTS - 1)];

	return hs->head && h->pid && !h->t1 ? h : NULL;
}

#endif
