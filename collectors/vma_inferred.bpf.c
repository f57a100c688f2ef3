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

#include "mm_agg.h"
#include "mm_filter.h"
#include "mmscope/mm_metrics.h"
#include "short_exit.bpf.h"
#include "vma_inferred.h"

#define TS_COMPAT 0x0002	/* x86: a 32-bit syscall is running (other numbers) */

/* The VMA syscalls as small indexes (0: not one), for the per-task counts. */
enum {
	VI_SYS_NONE,
#define VI_ENUM(n, name) VI_SYS_##name,
	MMS_VMA_SYSCALLS(VI_ENUM)
#undef VI_ENUM
	VI_NSYS
};

/* Room for the indexes, a power of two: an index is masked, not compared. */
#define VI_SLOTS 16
_Static_assert(VI_NSYS <= VI_SLOTS, "VI_SLOTS too small for MMS_VMA_SYSCALLS");

static const __u32 vi_nrs[VI_NSYS] = {
#define VI_NR(n, name) [VI_SYS_##name] = n,
	MMS_VMA_SYSCALLS(VI_NR)
#undef VI_NR
};

/*
 * A thread's syscall in flight, and its calls that changed nothing, not yet
 * in mm_agg: most VMA syscalls leave the count alone (a brk() that grows
 * the heap in place), and an add here costs far less than a shared hash
 * update.  The thread adds, the flush subtracts what it took: both atomic,
 * so a flush racing with the thread loses nothing.
 */
struct vi_task {
	int map_count;
	int nr;			/* syscall in flight, 0: none */
	__u32 calls[VI_SLOTS];	/* by index: unchanged calls not yet in mm_agg */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct vi_task);
} vi_tasks SEC(".maps");

/*
 * Processes that lived less than this (ns; user space sets it to the
 * interval, 0: off) are announced in vi_exits when their last thread exits,
 * so that user space can show them together by name instead of a row each.
 */
volatile __u64 vi_short_ns;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, SHORT_EXIT_RING);
} vi_exits SEC(".maps");

static __always_inline int vi_index(long nr)
{
	switch (nr) {
#define VI_CASE(n, name) case n: return VI_SYS_##name;
	MMS_VMA_SYSCALLS(VI_CASE)
#undef VI_CASE
	default:
		return VI_SYS_NONE;
	}
}

/* Takes the pending unchanged calls of one syscall (by index) out of t. */
static __always_inline __u32 vi_take(struct vi_task *t, int i)
{
	__u32 c = *(volatile __u32 *)&t->calls[i];

	if (c)
		__sync_fetch_and_add(&t->calls[i], -c);
	return c;
}

static __always_inline void vi_delta_add(struct vi_delta *s, __u32 d)
{
	__u64 slot = mms_log2(d);

	mms_slot_clamp(slot, VI_HIST);	/* see mmscope/hist.h */
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

	if (!vi_index(nr) || !mm_wanted(bpf_get_current_pid_tgid()))
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
	int i = vi_index(nr) & (VI_SLOTS - 1);	/* masked: a bound the verifier sees */
	struct task_struct *task;
	struct mm_struct *mm;
	struct vi_task *t;
	struct vi_stat *s;
	struct mm_val *v;
	int d;

	if (!i)
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
	if (!d) {
		__sync_fetch_and_add(&t->calls[i], 1);
		return 0;
	}
	v = mm_agg_get(bpf_get_current_pid_tgid() >> 32, VI_SYSCALL, nr);
	if (!v)
		return 0;
	s = (struct vi_stat *)&v->stat;
	/* With the calls before it: an interval's changes never outnumber its calls. */
	s->calls += 1 + vi_take(t, i);
	if (d > 0)
		vi_delta_add(&s->up, d);
	else
		vi_delta_add(&s->down, -d);
	return 0;
}

/* Moves a thread's pending calls into mm_agg's current generation. */
static __always_inline void vi_flush(struct task_struct *task)
{
	struct vi_task *t = bpf_task_storage_get(&vi_tasks, task, 0, 0);
	__u32 tgid;

	if (!t)
		return;
	tgid = task->tgid;
	for (int i = 1; i < VI_NSYS; i++) {
		__u32 c = vi_take(t, i);
		struct mm_val *v;

		if (!c)
			continue;
		v = mm_agg_get_task(task, tgid, VI_SYSCALL, vi_nrs[i]);
		if (v)
			((struct vi_stat *)&v->stat)->calls += c;
	}
}

/* Run by user space before each drain: every thread's pending calls. */
SEC("iter/task")
int vi_flush_all(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;

	if (task)
		vi_flush(task);
	return 0;
}

/*
 * A thread's last calls, before its storage goes; and, for the last thread
 * of a short-lived process, its tgid for user space (short_exit.bpf.h).
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(vi_task_exit, struct task_struct *p)
{
	vi_flush(p);
	short_exit_note(p, vi_short_ns, &vi_exits);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
