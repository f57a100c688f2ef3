/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by mmap_hold.bpf.c and mmap_hold.c: metric indexes of the mm_agg map. */
#ifndef MMSCOPE_MMAP_HOLD_H
#define MMSCOPE_MMAP_HOLD_H

/* Kernel-side metrics; acquisitions are derived from the holds in user space. */
enum mh_metric {
	MH_HOLD_READ,
	MH_HOLD_WRITE,
	MH_TRYLOCK_FAIL,
	MH_NR
};

/* mmap_locks one task can hold at once (fork holds two, remote access one more). */
#define MH_SLOTS 4

#endif
