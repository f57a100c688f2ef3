// SPDX-License-Identifier: GPL-2.0
/*
 * Per-VMA lock fault counting: per process, user-mode page faults and those
 * that fell back to mmap_lock.  exceptions:page_fault_user fires at the
 * start of every user-mode fault, before lock_vma_under_rcu(); a fault that
 * falls back (lock_vma_under_rcu() found no VMA it could lock, or the
 * handler returned VM_FAULT_RETRY under the VMA lock) then takes mmap_lock
 * for read in lock_mm_and_find_vma(), which fires mmap_lock_acquire_returned.
 * A read acquisition is that fault's only if lock_mm_and_find_vma() is on
 * its stack: the caller is checked, not guessed from the order of events.
 * The check (bpf_get_stack) runs only for a task whose last fault was a
 * user fault that has not been seen to end: the first acquisition from
 * elsewhere ends it, and a kernel-mode fault (page_fault_kernel) too, so it
 * costs at most one stack walk per fault that does not fall back.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "mm_agg.h"
#include "mm_filter.h"
#include "vma_lock.h"

/* Address ranges from kallsyms, set before load. */
const volatile __u64 vl_find_lo, vl_find_hi;	/* lock_mm_and_find_vma() */
const volatile __u64 vl_anon_lo, vl_anon_hi;	/* __vmf_anon_prepare() */

enum vl_state {
	VL_NONE,		/* not in a user fault we know of */
	VL_USER,		/* in a user fault, no mmap_lock attempt yet */
	VL_FELL,		/* in a user fault that fell back to mmap_lock */
};

enum vl_after {
	VL_A_NONE,
	VL_A_TRYFAIL,		/* a failed trylock: mmap_read_lock_killable() follows */
	VL_A_WRITE,		/* stack expansion's write lock: a downgrade follows */
};

struct vl_task {
	__u32 state;
	__u32 after;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct vl_task);
} vl_tasks SEC(".maps");

/* Acquisitions whose caller was not within VL_DEPTH frames (counted, not booked). */
__u64 vl_no_caller;

SEC("tp_btf/page_fault_user")
int BPF_PROG(vl_fault_user, unsigned long address, struct pt_regs *regs, unsigned long error)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct vl_task *t;

	/* The kernel half: vsyscall emulation or a bad access, no VMA lookup. */
	if ((long)address < 0 || !mm_wanted(id))
		return 0;
	t = bpf_task_storage_get(&vl_tasks, bpf_get_current_task_btf(), 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (t) {
		t->state = VL_USER;
		t->after = VL_A_NONE;
	} else {
		mm_lost_inc(MM_LOST_TASK_SLOT);
	}
	mm_agg_add(id >> 32, VL_FAULT, 0, 1);
	return 0;
}

/* A kernel-mode fault (uaccess in a system call) never tries the VMA lock on x86. */
SEC("tp_btf/page_fault_kernel")
int BPF_PROG(vl_fault_kernel, unsigned long address, struct pt_regs *regs, unsigned long error)
{
	struct vl_task *t = bpf_task_storage_get(&vl_tasks, bpf_get_current_task_btf(), 0, 0);

	if (t)
		t->state = VL_NONE;
	return 0;
}

/* 1: inside lock_mm_and_find_vma(), 2: inside __vmf_anon_prepare(), 0: elsewhere. */
static __always_inline int caller(void *ctx)
{
	__u64 ips[VL_DEPTH];
	long n = bpf_get_stack(ctx, ips, sizeof(ips), 0);

	if (n <= 0)
		return -1;
	n /= 8;
	for (int i = 0; i < VL_DEPTH; i++) {
		if (i >= n)
			break;
		if (ips[i] >= vl_find_lo && ips[i] < vl_find_hi)
			return 1;
		if (ips[i] >= vl_anon_lo && ips[i] < vl_anon_hi)
			return 2;
	}
	return n >= VL_DEPTH ? -1 : 0;
}

static __always_inline int acquired(void *ctx, struct mm_struct *mm, bool write, bool success)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct vl_task *t;
	__u32 tgid;
	int c;

	t = bpf_task_storage_get(&vl_tasks, task, 0, 0);
	if (!t || t->state == VL_NONE || mm != task->mm)
		return 0;
	c = caller(ctx);
	if (c < 0) {
		__sync_fetch_and_add(&vl_no_caller, 1);
		return 0;
	}
	if (c == 2)		/* anon_vma set-up under the VMA lock: still that fault */
		return 0;
	if (c == 0) {		/* from elsewhere: the fault is over */
		t->state = VL_NONE;
		return 0;
	}
	tgid = bpf_get_current_pid_tgid() >> 32;
	if (write) {
		t->after = success ? VL_A_WRITE : VL_A_NONE;
		return 0;
	}
	if (t->state == VL_USER) {
		t->state = VL_FELL;
		mm_agg_add(tgid, VL_FALLBACK, 0, 1);
	} else if (t->after == VL_A_NONE) {
		mm_agg_add(tgid, VL_MMAP_RETRY, 0, 1);
	}
	/* After a failed trylock, the killable lock's end is the same attempt. */
	t->after = success ? VL_A_NONE : VL_A_TRYFAIL;
	return 0;
}

/* Until 6.13 the event also passed the memcg path; user space loads the matching one. */
SEC("tp_btf/mmap_lock_acquire_returned")
int BPF_PROG(vl_acquired, struct mm_struct *mm, bool write, bool success)
{
	return acquired(ctx, mm, write, success);
}

SEC("tp_btf/mmap_lock_acquire_returned")
int BPF_PROG(vl_acquired_memcg, struct mm_struct *mm, const char *memcg_path, bool write,
	     bool success)
{
	return acquired(ctx, mm, write, success);
}

char LICENSE[] SEC("license") = "GPL";
