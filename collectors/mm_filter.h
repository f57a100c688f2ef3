/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which tasks an mm BPF source counts: everything, the processes in
 * mm_targets (-p PID, -- CMD, and a launched command's children, which the
 * program mm_fork adds as they are forked), or the threads in mm_targets
 * (--tid).  A BPF program includes this (after vmlinux.h and bpf_helpers.h)
 * to get mm_filter, mm_targets, mm_wanted() and mm_fork; user space sets
 * them up with mm_filter.c before and after load.
 */
#ifndef MMSCOPE_MM_FILTER_H
#define MMSCOPE_MM_FILTER_H

enum mm_filter_mode {
	MM_FILTER_ALL,		/* system-wide */
	MM_FILTER_TGID,		/* processes in mm_targets */
	MM_FILTER_TID,		/* threads in mm_targets */
};

#define MM_MAX_TARGETS 8192	/* followed processes (a launched command and its children) */

#ifdef __BPF_HELPERS__
const volatile __u32 mm_filter = MM_FILTER_ALL;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MM_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u8);
} mm_targets SEC(".maps");

static __always_inline bool mm_wanted(__u64 pid_tgid)
{
	__u32 id;

	if (mm_filter == MM_FILTER_ALL)
		return true;
	id = mm_filter == MM_FILTER_TGID ? pid_tgid >> 32 : (__u32)pid_tgid;
	return bpf_map_lookup_elem(&mm_targets, &id) != NULL;
}

/* Loaded only when a launched command's children are followed (mm_filter_autoload). */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(mm_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	__u8 one = 1;

	if (mm_filter == MM_FILTER_TGID && bpf_map_lookup_elem(&mm_targets, &ptgid))
		bpf_map_update_elem(&mm_targets, &ctgid, &one, BPF_ANY);
	return 0;
}
#else /* user side: see mm_filter.c */
#include <stdint.h>

struct bpf_map;
struct bpf_program;
struct mms_options;

/* The filter mode for opts (-p / -- CMD: processes, --tid: threads). */
uint32_t mm_filter_mode(const struct mms_options *o);
/*
 * After load: puts the followed pid or tids into mm_targets and switches
 * the fork follower off unless a launched command's children are followed
 * (call before load for fork_prog; it only sets autoload).
 */
void mm_filter_autoload(struct bpf_program *fork_prog, const struct mms_options *o);
int mm_filter_fill(struct bpf_map *targets, const struct mms_options *o);
#endif /* __BPF_HELPERS__ */

#endif
