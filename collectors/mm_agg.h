/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The in-kernel aggregation shared by the mm BPF collectors (mmap_hold,
 * vma_inferred, vma_fentry, rmap_fentry): one per-CPU hash map whose key is
 * (tgid, generation, metric, sub) and whose value is the process name plus
 * one log2-histogram statistic.  Programs add to the current generation;
 * user space flips the generation, waits for running programs to finish
 * (membarrier, an RCU grace period) and reads and deletes the old one, so
 * every interval gets exactly the events of that interval and min/max are
 * per interval.  Per-CPU values need no atomics on the hot path.
 *
 * Included by BPF programs (after vmlinux.h and bpf_helpers.h, which it
 * gives the map and its helpers) and by user space (mm_agg.c, mm_bpfsrc.c).
 * Which tasks count is mm_filter.h's; the source around both, mm_bpfsrc.h.
 */
#ifndef MMSCOPE_MM_AGG_H
#define MMSCOPE_MM_AGG_H

#ifndef __BPF_HELPERS__
#include <linux/types.h>
#endif

#include "mmscope/hist.h"

#define MM_COMM_LEN 16

struct mm_key {
	__u32 tgid;
	__u32 gen;
	__u32 metric;		/* index into the collector's metric name table */
	__u32 sub;
};

struct mm_val {
	char comm[MM_COMM_LEN];
	struct mms_stat stat;
};

/* Counters of dropped events, in each program's .bss as `__u64 mm_lost[MM_LOST_NR]`. */
enum mm_lost {
	MM_LOST_TASK_SLOT,	/* no per-task state could be had */
	MM_LOST_TIME,		/* end without start (release without acquire ...) */
	MM_LOST_MAP_FULL,	/* aggregation map full */
	MM_LOST_NR
};

#ifdef __BPF_HELPERS__

/* The aggregation map `mm_agg`, `mm_gen`, `mm_lost` and their helpers. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);	/* resized from user space before load */
	__type(key, struct mm_key);
	__type(value, struct mm_val);
} mm_agg SEC(".maps");

volatile __u32 mm_gen;
__u64 mm_lost[MM_LOST_NR];

static const struct mm_val mm_zero_val;

static __always_inline void mm_lost_inc(enum mm_lost r)
{
	__sync_fetch_and_add(&mm_lost[r], 1);
}

/* The entry of (task's process tgid, metric, sub) in generation gen. */
static __always_inline struct mm_val *mm_agg_get_gen(struct task_struct *task, __u32 tgid,
						     __u32 gen, __u32 metric, __u32 sub)
{
	struct mm_key k = { .tgid = tgid, .gen = gen, .metric = metric, .sub = sub };
	struct mm_val *v = bpf_map_lookup_elem(&mm_agg, &k);

	if (v)
		return v;
	bpf_map_update_elem(&mm_agg, &k, &mm_zero_val, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&mm_agg, &k);
	if (!v) {
		mm_lost_inc(MM_LOST_MAP_FULL);
		return NULL;
	}
	/* The process's name, not the thread's: metrics are per process. */
	bpf_probe_read_kernel_str(v->comm, sizeof(v->comm), task->group_leader->comm);
	return v;
}

/* The entry of (task's process tgid, metric, sub) in the current generation. */
static __always_inline struct mm_val *mm_agg_get_task(struct task_struct *task, __u32 tgid,
						      __u32 metric, __u32 sub)
{
	return mm_agg_get_gen(task, tgid, mm_gen, metric, sub);
}

static __always_inline struct mm_val *mm_agg_get(__u32 tgid, __u32 metric, __u32 sub)
{
	return mm_agg_get_task(bpf_get_current_task_btf(), tgid, metric, sub);
}

static __always_inline void mm_agg_add(__u32 tgid, __u32 metric, __u32 sub, __u64 value)
{
	struct mm_val *v = mm_agg_get(tgid, metric, sub);

	if (v)
		mms_stat_add(&v->stat, value);
}

#else /* user side: see mm_agg.c */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bpf/libbpf.h>

struct mms_store;
struct mm_task_id;

struct mm_agg {
	int map_fd;
	int ncpus;
	volatile __u32 *gen;		/* mm_gen in the skeleton's .bss */
	const __u64 *lost;		/* mm_lost in the skeleton's .bss */
	uint64_t lost_seen[MM_LOST_NR];
	const char *const *names;	/* metric index -> metric name */
	uint32_t nr_names;
	struct mm_key *keys;		/* one drain's entries, deleted at its end */
	size_t cap_keys;
	/* One batch read: keys, and per key one value per possible CPU. */
	struct mm_key *bkeys;
	struct mm_val *vals;
	uint32_t batch;			/* entries; grows when a bucket needs it */
	bool batched;			/* the kernel has batch operations for the map */
	/*
	 * Store ids of one drain, so that the many keys of a process or a
	 * metric intern it once: by metric index, and by tgid (+ comm) hash.
	 */
	uint32_t *metric_ids;
	struct mm_task_id *task_ids;
	/* Optional: more rows derived from each row added (after it). */
	int (*extra)(struct mms_store *st, uint32_t proc_id, const struct mm_key *k,
		     const struct mms_stat *s);
	/*
	 * Optional: a collector whose values are not one mms_stat each turns
	 * an entry's per-CPU values into rows itself (mm_agg_emit).
	 */
	int (*decode)(struct mm_agg *a, struct mms_store *st, const struct mm_key *k,
		      const struct mm_val *vals);
	/*
	 * Optional: called once per drain after the generation flipped and
	 * running programs finished, before any entry of it is read.
	 */
	void (*flipped)(struct mm_agg *a, struct mms_store *st);
};

/* Adds one row for k's process and sub under metric; 0 or -errno (-ENOSPC: interval full). */
int mm_agg_emit(struct mm_agg *a, struct mms_store *st, const struct mm_key *k,
		const char *comm, uint32_t metric, const struct mms_stat *stat);
/* The process name from an entry's per-CPU values ("" when none has it). */
void mm_agg_comm(const struct mm_agg *a, const struct mm_val *vals, char comm[MM_COMM_LEN + 1]);
/* An entry's per-CPU statistics summed. */
void mm_agg_sum(const struct mm_agg *a, const struct mm_val *vals, struct mms_stat *sum);

int mm_agg_init(struct mm_agg *a, struct bpf_map *map, volatile __u32 *gen,
		const __u64 *lost, const char *const *names, uint32_t nr_names);
/*
 * Ends the current generation and adds everything it holds to the store's
 * open interval (and the lost counters).  0 or -errno.
 */
int mm_agg_drain(struct mm_agg *a, struct mms_store *st);
void mm_agg_finish(struct mm_agg *a);
/* Sizes the map before load: entries from opts, at least 256, at most 64 MiB worth. */
int mm_agg_size(struct bpf_map *map, uint32_t entries);

#endif /* __BPF_HELPERS__ */

#endif
