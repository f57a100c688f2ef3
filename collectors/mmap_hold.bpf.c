// SPDX-License-Identifier: GPL-2.0
/*
 * mmap_lock hold mode: every acquisition and release of any mmap_lock, from
 * the mmap_lock:* tracepoints, aggregated here per (process, read/write).
 * These fire on every acquisition (millions per second under brk or fault
 * storms), so the path is: filter, one task-local slot at acquisition, and
 * at release that slot plus one per-CPU hash update.  Acquisitions are
 * counted by user space from the hold statistics (one hold per acquisition,
 * counted at release), which saves a hash update per acquisition.
 * mmap_lock_start_locking is not attached: waits come from the lock
 * contention source, and a third program per acquisition would only cost.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define MM_AGG_MAP
#define MM_FILTER
#include "mm_agg.h"
#include "mmap_hold.h"

/* One held mmap_lock: which mm, how, and since when. */
struct mh_slot {
	__u64 mm;		/* 0: free */
	__u64 t0;
	__u32 write;
	__u32 pad;
};

struct mh_task {
	struct mh_slot s[MH_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct mh_task);
} mh_tasks SEC(".maps");

static __always_inline void hold_end(__u32 tgid, struct mh_slot *s, __u64 now)
{
	mm_agg_add(tgid, s->write ? MH_HOLD_WRITE : MH_HOLD_READ, 0, now - s->t0);
}

SEC("tp_btf/mmap_lock_acquire_returned")
int BPF_PROG(mh_acquired, struct mm_struct *mm, bool write, bool success)
{
	__u64 id = bpf_get_current_pid_tgid(), key = (__u64)mm, now;
	__u32 tgid = id >> 32, victim = 0;
	struct mh_task *t;
	int i;

	if (!mm_wanted(id))
		return 0;
	if (!success) {
		mm_agg_add(tgid, MH_TRYLOCK_FAIL, 0, 1);
		return 0;
	}
	t = bpf_task_storage_get(&mh_tasks, bpf_get_current_task_btf(), 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t) {
		mm_lost_inc(MM_LOST_TASK_SLOT);
		return 0;
	}
	now = bpf_ktime_get_ns();
	/*
	 * A read acquisition of an mm this task holds for write is
	 * mmap_write_downgrade(): the write hold ends, a read hold begins.
	 */
	if (!write) {
		for (i = 0; i < MH_SLOTS; i++) {
			if (t->s[i].mm == key && t->s[i].write) {
				hold_end(tgid, &t->s[i], now);
				t->s[i].write = 0;
				t->s[i].t0 = now;
				return 0;
			}
		}
	}
	for (i = 0; i < MH_SLOTS; i++) {
		if (!t->s[i].mm)
			break;
		if (t->s[i].t0 < t->s[victim].t0)
			victim = i;
	}
	if (i == MH_SLOTS) {
		/*
		 * All slots taken: one was released by another task
		 * (mmap_read_unlock_non_owner).  Reuse the oldest.
		 */
		mm_lost_inc(MM_LOST_TASK_SLOT);
		i = victim;
	}
	if (i < MH_SLOTS) {
		t->s[i].mm = key;
		t->s[i].t0 = now;
		t->s[i].write = write;
	}
	return 0;
}

SEC("tp_btf/mmap_lock_released")
int BPF_PROG(mh_released, struct mm_struct *mm, bool write)
{
	__u64 id = bpf_get_current_pid_tgid(), key = (__u64)mm;
	struct mh_task *t;
	int i;

	if (!mm_wanted(id))
		return 0;
	t = bpf_task_storage_get(&mh_tasks, bpf_get_current_task_btf(), 0, 0);
	if (!t)
		goto lost;
	for (i = 0; i < MH_SLOTS; i++) {
		if (t->s[i].mm == key && t->s[i].write == write) {
			hold_end(id >> 32, &t->s[i], bpf_ktime_get_ns());
			t->s[i].mm = 0;
			return 0;
		}
	}
lost:
	/* Taken before we attached, or by another task. */
	mm_lost_inc(MM_LOST_TIME);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
