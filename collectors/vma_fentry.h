/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by vma_fentry.bpf.c and vma_fentry.c: metric indexes of the mm_agg map. */
#ifndef MMSCOPE_VMA_FENTRY_H
#define MMSCOPE_VMA_FENTRY_H

enum vf_metric {
	VF_SPLIT,
	VF_SPLIT_FAILED,
	VF_MERGE,
	VF_EXPAND,
	VF_SHRINK,
	VF_NR
};

#endif
