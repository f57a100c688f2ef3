// SPDX-License-Identifier: GPL-2.0
/*
 * VMA count changes per syscall, for kernels that allow neither our
 * tracepoints nor fentry: mm->map_count read at entry and exit of the
 * syscalls that can split, merge, create or remove VMAs, per (process,
 * syscall).  The difference is what happened to the VMA count, not how:
 * user space labels it as inferred.  In a threaded process it also holds
 * what other threads did between this thread's entry and exit.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define MM_AGG_MAP
#define MM_FILTER
#include "mm_agg.h"
#include "mmscope/mm_metrics.h"
#include "vma_inferred.h"

#define TS_COMPAT 0x0002	/* x86: a 32-bit syscall is running (other numbers) */

struct vi_task {
	int map_count;
	int nr;			/* syscall in flight, 0: none */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct vi_task);
} vi_tasks SEC(".maps");

static __always_inline bool vi_syscall(long nr)
{
	switch (nr) {
#define VI_CASE(n, name) case n:
	MMS_VMA_SYSCALLS(VI_CASE)
#undef VI_CASE
		return true;
	default:
		return false;
	}
}

static __always_inline void vi_delta_add(struct vi_delta *s, __u32 d)
{
	__u64 slot = mm_log2(d);

	mm_slot_clamp(slot, VI_HIST);	/* see mm_hist_slot */
	if (!s->n || d < s->min)
		s->min = d;
	if (d > s->max)
		s->max = d;
	s->n++;
	s->sum += d;
	s->hist[slot]++;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(vi_enter, struct pt_regs *regs, long nr)
{
	struct task_struct *task;
	struct mm_struct *mm;
	struct vi_task *t;

	if (!vi_syscall(nr) || !mm_wanted(bpf_get_current_pid_tgid()))
		return 0;
	task = bpf_get_current_task_btf();
	if (task->thread_info.status & TS_COMPAT)
		return 0;
	mm = task->mm;
	if (!mm)
		return 0;
	t = bpf_task_storage_get(&vi_tasks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t) {
		mm_lost_inc(MM_LOST_TASK_SLOT);
		return 0;
	}
	t->map_count = mm->map_count;
	t->nr = nr;
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(vi_exit, struct pt_regs *regs, long ret)
{
	long nr = regs->orig_ax;
	struct task_struct *task;
	struct mm_struct *mm;
	struct vi_task *t;
	struct vi_stat *s;
	struct mm_val *v;
	__u32 tgid;
	int d;

	if (!vi_syscall(nr))
		return 0;
	task = bpf_get_current_task_btf();
	t = bpf_task_storage_get(&vi_tasks, task, 0, 0);
	if (!t || t->nr != nr)
		return 0;
	t->nr = 0;
	mm = task->mm;
	if (!mm)
		return 0;
	d = mm->map_count - t->map_count;
	tgid = bpf_get_current_pid_tgid() >> 32;
	v = mm_agg_get(tgid, VI_SYSCALL, nr);
	if (!v)
		return 0;
	s = (struct vi_stat *)&v->stat;
	s->calls++;
	if (d > 0)
		vi_delta_add(&s->up, d);
	else if (d < 0)
		vi_delta_add(&s->down, -d);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
