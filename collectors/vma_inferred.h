/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by vma_inferred.bpf.c and vma_inferred.c: metric indexes (sub = syscall nr). */
#ifndef MMSCOPE_VMA_INFERRED_H
#define MMSCOPE_VMA_INFERRED_H

enum vi_metric {
	VI_CALLS,
	VI_UP,
	VI_DOWN,
	VI_NR
};

#endif
