/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The BPF half of short_exit.h, for objects that have a tp_btf
 * sched_process_exit program: include after vmlinux.h and the libbpf
 * helpers, declare a ring buffer of SHORT_EXIT_RING bytes and a volatile
 * __u64 limit user space sets (0: off), and call short_exit_note().
 */
#ifndef MMSCOPE_SHORT_EXIT_BPF_H
#define MMSCOPE_SHORT_EXIT_BPF_H

#include "short_exit.h"

#ifndef PF_KTHREAD
#define PF_KTHREAD 0x00200000
#endif

/*
 * At sched_process_exit of p: when p is its process's last thread (do_exit()
 * has counted it out of signal->live before this tracepoint) and the process
 * lived less than short_ns, announce its tgid.  A full ring only means the
 * process keeps rows of its own.
 */
static __always_inline void short_exit_note(struct task_struct *p, __u64 short_ns, void *ring)
{
	struct short_exit e = {};

	if (!short_ns || p->signal->live.counter || (p->flags & PF_KTHREAD))
		return;
	if (bpf_ktime_get_ns() - p->group_leader->start_time >= short_ns)
		return;
	e.tgid = p->tgid;
	bpf_probe_read_kernel_str(e.comm, sizeof(e.comm), p->group_leader->comm);
	bpf_ringbuf_output(ring, &e, sizeof(e), BPF_RB_NO_WAKEUP);
}

#endif
