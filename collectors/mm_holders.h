/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmap_lock write holders, shared by mmap_hold.bpf.c (which writes them)
 * and lock_bpf.bpf.c (which books waits to them): the map mm_holders, one
 * value per mmap_lock address, exists in both objects and is one map once
 * loaded (mms_bpf_share_map; the map itself is in mm_holders.bpf.h).  Only with --lock-owner and --mmap-hold.
 *
 * An mmap_lock has one writer at a time, and the hold programs run while
 * the writer still holds it (acquisition after, release before the rwsem
 * operation), so the writes to one value are serialised by the lock
 * itself: the open hold is always the newest entry.
 */
#ifndef MMSCOPE_MM_HOLDERS_H
#define MMSCOPE_MM_HOLDERS_H

#ifndef __BPF_HELPERS__
#include <linux/types.h>
#endif

#define MM_HOLDERS_SLOTS 16	/* write holds kept per mmap_lock; a power of 2 */
#define MM_HOLDERS_LOCKS 256	/* mmap_locks (processes) kept, least recently used go */
#define MM_HOLD_DEPTH 32	/* frames of a holder's stack (lock_bpf's LB_OWNER_DEPTH) */

/* A holder's stack where it released the lock: lock_bpf's struct lb_ostack. */
struct mm_hold_stack {
	__u32 nr;		/* frames in ips; 0: none taken */
	__u32 pad;
	__u64 ips[MM_HOLD_DEPTH];
};

/* One write hold: who, from when, to when (t1 0: still held). */
struct mm_hold {
	__u64 t0;
	__u64 t1;
	__u32 pid;		/* 0: the slot is being written */
	__u32 tgid;
	char comm[16];
	/*
	 * Where it held the lock, from a waiter that found it the owner
	 * (lock_bpf's take_owner): an ostacks key, else a stack id (< 0: none).
	 */
	__u64 ostack;
	__s32 sid;
	/*
	 * Set by a waiter's begin while the hold is open: the release then
	 * takes the holder's stack (in its own syscall, at the unlock), once.
	 */
	__u32 want;
	struct mm_hold_stack rel;
};

struct mm_holders {
	__u32 head;		/* holds ever begun; the newest is head - 1 */
	__u32 pad;
	struct mm_hold h[MM_HOLDERS_SLOTS];
};

#endif
