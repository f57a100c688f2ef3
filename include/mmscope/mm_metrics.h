/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names and sub-keys of the memory-management metrics: mmap_lock hold mode,
 * VMA split / merge (measured or inferred), try_to_unmap batches.  The mm
 * collectors write them, views, reports and compare read them back with
 * mms_query_metric(); both sides use these constants so a typo cannot make a
 * metric silently empty.  Every metric is per process: proc_id is
 * mms_store_task(tgid, tgid, comm).
 */
#ifndef MMSCOPE_MM_METRICS_H
#define MMSCOPE_MM_METRICS_H

#ifndef __BPF_HELPERS__
#include <stdint.h>
#endif

/*
 * mmap_lock, from the mmap_lock:* tracepoints (opt-in, --mmap-hold).
 * acquire.*: successful acquisitions (stat value 1 each; trylocks included),
 * counted when released, so each has its hold.* entry: the counts are equal.
 * hold.*: nanoseconds from acquisition to release.  A write lock downgraded
 * to read ends its write hold and starts a read hold.  trylock_fail: failed
 * mmap_read_trylock() (and killable locks given up on a fatal signal).
 * wait.*: contended waits, written by the lock contention source.
 */
#define MMS_M_MMAP_ACQUIRE_READ "mmap_lock.acquire.read"
#define MMS_M_MMAP_ACQUIRE_WRITE "mmap_lock.acquire.write"
#define MMS_M_MMAP_HOLD_READ "mmap_lock.hold.read"
#define MMS_M_MMAP_HOLD_WRITE "mmap_lock.hold.write"
#define MMS_M_MMAP_TRYLOCK_FAIL "mmap_lock.trylock_fail"
#define MMS_M_MMAP_WAIT_READ "mmap_lock.wait.read"
#define MMS_M_MMAP_WAIT_WRITE "mmap_lock.wait.write"

/*
 * Per-VMA lock (--vma-lock, or with --mmap-hold), per process:
 *   vma_lock.faults       value 1 per user-mode page fault on a user address
 *                         (exceptions:page_fault_user): each one first tries
 *                         the per-VMA lock (lock_vma_under_rcu())
 *   vma_lock.fallback     value 1 per such fault that then took mmap_lock in
 *                         lock_mm_and_find_vma(): no VMA could be locked
 *                         (abort), or the handler returned VM_FAULT_RETRY under
 *                         the VMA lock (retry); faults - fallback were served
 *                         under the per-VMA lock
 *   vma_lock.mmap_retry   value 1 per further mmap_lock acquisition in a fault
 *                         that fell back (VM_FAULT_RETRY under mmap_lock)
 * and system-wide (proc_id 0), the kernel's own counters where it has them
 * (CONFIG_PER_VMA_LOCK_STATS, /proc/vmstat), value 1, count = the increase:
 *   vma_lock.kernel       sub = MMS_VMA_LOCK_K_*
 */
#define MMS_M_VMA_LOCK_FAULTS "vma_lock.faults"
#define MMS_M_VMA_LOCK_FALLBACK "vma_lock.fallback"
#define MMS_M_VMA_LOCK_MMAP_RETRY "vma_lock.mmap_retry"
#define MMS_M_VMA_LOCK_KERNEL "vma_lock.kernel"

enum mms_vma_lock_kernel_sub {
	MMS_VMA_LOCK_K_SUCCESS,	/* vma_lock_success: served under the per-VMA lock */
	MMS_VMA_LOCK_K_ABORT,	/* vma_lock_abort: no VMA could be locked, fell back */
	MMS_VMA_LOCK_K_RETRY,	/* vma_lock_retry: VM_FAULT_RETRY under the VMA lock */
	MMS_VMA_LOCK_K_MISS,	/* vma_lock_miss: the VMA found was detached, looked again */
	MMS_VMA_LOCK_K_NR
};

/* The source's note when the kernel keeps no such counters (compare reads it back). */
#define MMS_VMA_LOCK_NO_KERNEL "per-VMA lock kernel counters: none in /proc/vmstat"

#ifndef __BPF_HELPERS__
/* "abort" for MMS_VMA_LOCK_K_ABORT: the sub of vma_lock.kernel. */
static inline const char *mms_vma_lock_kernel_name(uint32_t sub)
{
	static const char *const n[MMS_VMA_LOCK_K_NR] = { "success", "abort", "retry", "miss" };

	return sub < MMS_VMA_LOCK_K_NR ? n[sub] : NULL;
}
#endif

/*
 * VMA operations as the kernel performs them (patched tracepoints or
 * fentry/fexit), one stat value per operation:
 *   vma.split   value 1; sub = MMS_VMA_SPLIT_* | MMS_VMA_FILE
 *   vma.split_failed   value 1; sub as vma.split
 *   vma.merge   value = VMAs removed by the merge (0, 1, 2);
 *               sub = MMS_VMA_MERGE_SUB(kind, origin, file)
 *   vma.expand  value 1 (vma_expand() outside a merge: exec stack move ...)
 *   vma.shrink  value 1 (vma_shrink())
 */
#define MMS_M_VMA_SPLIT "vma.split"
#define MMS_M_VMA_SPLIT_FAILED "vma.split_failed"
#define MMS_M_VMA_MERGE "vma.merge"
#define MMS_M_VMA_EXPAND "vma.expand"
#define MMS_M_VMA_SHRINK "vma.shrink"

/* vma.split sub: where the new VMA went, plus MMS_VMA_FILE. */
enum mms_vma_split_sub {
	MMS_VMA_SPLIT_NEW_ABOVE = 0,	/* new VMA is the upper part */
	MMS_VMA_SPLIT_NEW_BELOW = 1,	/* new VMA is the lower part */
};

/* Merged with which neighbour(s) of the range (bits). */
enum mms_vma_merge_kind {
	MMS_VMA_MERGE_PREV = 1,		/* the range joined the VMA before it */
	MMS_VMA_MERGE_NEXT = 2,		/* the range joined the VMA after it */
	MMS_VMA_MERGE_BOTH = 3,		/* prev, range and next became one */
};

/* What was being merged. */
enum mms_vma_origin {
	MMS_VMA_ORIGIN_NEW = 0,		/* a new range: mmap, brk (vma_merge_new_range) */
	MMS_VMA_ORIGIN_EXISTING = 1,	/* a changed range: mprotect, madvise, mlock ... */
	MMS_VMA_ORIGIN_COPY = 2,	/* mremap's copy_vma */
	MMS_VMA_ORIGIN_UNKNOWN = 3,	/* the kernel does not tell (6.1's __vma_adjust) */
};

#define MMS_VMA_FILE (1U << 8)	/* file-backed VMA (else anonymous) */
#define MMS_VMA_MERGE_SUB(kind, origin, file) \
	(((kind) & 3U) | ((origin) & 3U) << 4 | ((file) ? MMS_VMA_FILE : 0))

#ifndef __BPF_HELPERS__
static inline uint32_t mms_vma_merge_sub(unsigned int kind, unsigned int origin, int file)
{
	return MMS_VMA_MERGE_SUB(kind, origin, file);
}

static inline unsigned int mms_vma_sub_kind(uint32_t sub)
{
	return sub & 3U;
}

static inline unsigned int mms_vma_sub_origin(uint32_t sub)
{
	return (sub >> 4) & 3U;
}

static inline const char *mms_vma_merge_kind_name(unsigned int kind)
{
	static const char *const n[4] = { "none", "prev", "next", "both" };

	return n[kind & 3U];
}

static inline const char *mms_vma_origin_name(unsigned int origin)
{
	static const char *const n[4] = { "new", "existing", "copy", "unknown" };

	return n[origin & 3U];
}
#endif

/*
 * VMA count changes per syscall, inferred from mm->map_count at syscall
 * entry and exit where neither tracepoints nor fentry work.  These are NOT
 * splits or merges: a +2 can be one split into three, a -1 a merge or an
 * unmap, and another thread of the process can change the count meanwhile.
 *   vma.inferred.calls  value 1 per call; sub = syscall number
 *   vma.inferred.up     value = map_count increase of one call; sub = nr
 *   vma.inferred.down   value = map_count decrease of one call; sub = nr
 *   vma.inferred.short_lived  value 1 per process of a short-lived group
 *                       (MMS_TGID_SHORT) that exited in the interval; sub 0
 */
#define MMS_M_VMA_INFERRED_CALLS "vma.inferred.calls"
#define MMS_M_VMA_INFERRED_UP "vma.inferred.up"
#define MMS_M_VMA_INFERRED_DOWN "vma.inferred.down"
#define MMS_M_VMA_INFERRED_SHORT "vma.inferred.short_lived"

/* The syscalls measured, as X(x86_64 number, name); the BPF side uses it too. */
#define MMS_VMA_SYSCALLS(X) \
	X(9, mmap) \
	X(10, mprotect) \
	X(11, munmap) \
	X(12, brk) \
	X(25, mremap) \
	X(28, madvise) \
	X(30, shmat) \
	X(67, shmdt) \
	X(149, mlock) \
	X(150, munlock) \
	X(151, mlockall) \
	X(152, munlockall) \
	X(216, remap_file_pages) \
	X(325, mlock2) \
	X(329, pkey_mprotect)

#ifndef __BPF_HELPERS__
/* "mprotect" for 10, or NULL: the sub of the vma.inferred.* metrics. */
static inline const char *mms_vma_syscall_name(uint32_t nr)
{
	switch (nr) {
#define MMS_X_(n, name) case n: return #name;
	MMS_VMA_SYSCALLS(MMS_X_)
#undef MMS_X_
	default:
		return NULL;
	}
}
#endif

/*
 * try_to_unmap batches (patched tracepoint or fentry): one value per rmap
 * removal, value = pages removed at once, sub = folio order.  .anon and .file
 * hold the same removals split by folio kind.
 */
#define MMS_M_RMAP_BATCH "rmap.batch"
#define MMS_M_RMAP_BATCH_ANON "rmap.batch.anon"
#define MMS_M_RMAP_BATCH_FILE "rmap.batch.file"

/*
 * What stock tracepoints tell about reclaim and migration.  These are not
 * batch sizes: they count pages per reclaim call and migration entries.
 *   rmap.stock.reclaim_pages          value = pages reclaimed by one
 *                                     reclaim_pages() pass (MADV_PAGEOUT,
 *                                     DAMON); sub = NUMA node
 *   rmap.stock.reclaim_pages.scanned  value = pages scanned by that pass
 *   rmap.stock.shrink_inactive        value = pages reclaimed by one LRU
 *                                     shrink (kswapd, direct reclaim); sub = node
 *   rmap.stock.unmap_fail             value = pages whose unmap failed in one
 *                                     pass; sub = MMS_RMAP_STOCK_*
 *   rmap.stock.migration_entries      value 1 per PTE/PMD turned into a
 *                                     migration entry; sub = folio order
 */
#define MMS_M_RMAP_STOCK_RECLAIM "rmap.stock.reclaim_pages"
#define MMS_M_RMAP_STOCK_SCANNED "rmap.stock.reclaim_pages.scanned"
#define MMS_M_RMAP_STOCK_SHRINK "rmap.stock.shrink_inactive"
#define MMS_M_RMAP_STOCK_UNMAP_FAIL "rmap.stock.unmap_fail"
#define MMS_M_RMAP_STOCK_MIGRATION "rmap.stock.migration_entries"

enum mms_rmap_stock_sub {
	MMS_RMAP_STOCK_RECLAIM_PAGES = 0,	/* from vmscan:mm_vmscan_reclaim_pages */
	MMS_RMAP_STOCK_SHRINK_INACTIVE = 1,	/* from vmscan:mm_vmscan_lru_shrink_inactive */
};

#endif
