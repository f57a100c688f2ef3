/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-VMA lock fault counting (vma_lock.bpf.c, vma_lock.c): the metric
 * indexes of the mm_agg map, shared by both sides, and what the mmap_lock
 * hold source needs to run it with its own.
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

struct mm_bpfsrc_def;
struct mms_options;

/* --vma-lock: this source's object, for a source that runs it with its own. */
const struct mm_bpfsrc_def *vma_lock_with(const struct mms_options *o);

/* In mmap_hold.c: whether the mmap_lock tracepoints pass the memcg path. */
bool mmap_lock_memcg_arg(void);
#endif

#endif
