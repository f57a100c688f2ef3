/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-VMA lock fault counting (vma_lock.bpf.c, vma_lock.c): the metric
 * indexes of the mm_agg map, shared by both sides, and the user-side API the
 * mmap_lock sources call.
 */
#ifndef MMSCOPE_VMA_LOCK_H
#define MMSCOPE_VMA_LOCK_H

/* Kernel-side metrics, named in vma_lock.c (MMS_M_VMA_LOCK_*). */
enum vl_metric {
	VL_FAULT,		/* a user-mode page fault on a user address */
	VL_FALLBACK,		/* its first mmap_lock attempt in lock_mm_and_find_vma() */
	VL_MMAP_RETRY,		/* a further one in the same fault (VM_FAULT_RETRY) */
	VL_NR
};

/* Stack frames looked at for the caller of an mmap_lock acquisition. */
#define VL_DEPTH 12

#ifndef __BPF_HELPERS__
#include <stdbool.h>

struct mms_source;
struct mms_store;
struct vma_lock_counter;

/*
 * Opens and loads the programs (src: for its options and failure reasons).
 * memcg: this kernel's mmap_lock events pass the memcg path (before 6.13).
 */
int vma_lock_open(struct mms_source *src, bool memcg, struct vma_lock_counter **out);
int vma_lock_attach(struct mms_source *src, struct vma_lock_counter *vl);
int vma_lock_drain(struct vma_lock_counter *vl, struct mms_store *st);
void vma_lock_detach(struct vma_lock_counter *vl);
void vma_lock_close(struct vma_lock_counter *vl);	/* NULL: no-op */

/* In mmap_hold.c: whether the mmap_lock tracepoints pass the memcg path. */
bool mmap_lock_memcg_arg(void);
#endif

#endif
