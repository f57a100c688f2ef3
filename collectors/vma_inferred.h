/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by vma_inferred.bpf.c and vma_inferred.c.  The BPF side keeps one
 * aggregation key per (process, syscall): metric VI_SYSCALL, sub = syscall
 * number, its struct mms_stat read as a struct vi_stat (calls, and the
 * count's ups and downs apart).  User space turns each into the store's
 * three metrics (VI_CALLS, VI_UP, VI_DOWN): one hash update per syscall
 * instead of two, and a third of the keys to drain.
 */
#ifndef MMSCOPE_VMA_INFERRED_H
#define MMSCOPE_VMA_INFERRED_H

enum vi_metric {
	VI_CALLS,
	VI_UP,
	VI_DOWN,
	VI_SHORT,	/* processes of a short-lived group (user space only) */
	VI_NR,
	VI_SYSCALL = VI_NR,	/* the BPF side's folded key (never in the store) */
};

/*
 * log2 slots of a change's size: 16 cover 1 .. 65535, past the default
 * vm.max_map_count (65530), so the clamp into the last slot never changes
 * a real count's slot unless that limit was raised.
 */
#define VI_HIST 16

struct vi_delta {
	__u64 sum;
	__u32 n, min, max;
	__u32 hist[VI_HIST];
	__u32 pad;
};

struct vi_stat {
	__u64 calls;
	struct vi_delta up, down;
};

_Static_assert(sizeof(struct vi_stat) <= sizeof(struct mms_stat),
	       "a vi_stat lives in an mms_stat");

#endif
