// SPDX-License-Identifier: GPL-2.0
/*
 * mmap_lock hold mode: every acquisition and release of any mmap_lock, from
 * the mmap_lock:* tracepoints, aggregated per (process, read/write).  These
 * fire on every acquisition (millions per second under brk or fault storms),
 * so nothing on that path touches a shared map: acquisition fills a slot of
 * the task's local storage, release adds the hold to the task's own
 * statistics there, one set per generation parity.  After user space flips
 * the generation and the grace period, nothing writes the old set any more:
 * a task iterator (mh_flush_all) moves every task's old set into mm_agg,
 * and a thread's exit moves both of its sets.  Acquisitions are counted by
 * user space from the hold statistics (one hold per acquisition, counted at
 * release).  mmap_lock_start_locking is not attached: waits come from the
 * lock contention source, and a third program per acquisition would only
 * cost.  With --lock-owner, every write hold also goes to mm_holders (a
 * map shared with the lock source, mm_holders.h): a hash lookup per write
 * acquisition and release, and per read acquisition (a downgrade ends the
 * write hold).
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "mm_agg.h"
#include "mm_filter.h"
#include "mm_holders.bpf.h"
#include "mmap_hold.h"

#define barrier() asm volatile("" ::: "memory")
#define READ_ONCE(x) (*(volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile typeof(x) *)&(x) = (v))

/* One held mmap_lock: which mm, how, and since when. */
struct mh_slot {
	__u64 mm;		/* 0: free */
	__u64 t0;
	__u32 write;
	__u32 pad;
};

/* One generation's statistics of a thread, not yet in mm_agg. */
struct mh_acc {
	__u64 pending;		/* 1: has something; cleared by whoever moves it */
	__u64 trylock_fail;
	struct mms_stat hold[2];	/* read, write */
};

struct mh_task {
	struct mh_slot s[MH_SLOTS];
	struct mh_acc acc[2];	/* by mm_gen & 1 */
	__u32 exited;		/* past sched_process_exit: straight to mm_agg */
	__u32 pad;
};

/*
 * Sampled hold mode (--mmap-hold-sample N): 1 in 1 << mh_sample_shift
 * acquisitions, picked at random, are timed (0: every one).  Two programs
 * that return at once already cost brk 5-9 % of its throughput; a release
 * then looks at the task's storage only while some sampled hold is open
 * anywhere (mh_open), so most runs of both programs end after a random
 * number or a load.  Failed trylocks are counted every time.
 */
const volatile __u32 mh_sample_shift;
__s64 mh_open;

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct mh_task);
} mh_tasks SEC(".maps");

/*
 * --lock-owner: every write hold (sampled or not) goes to mm_holders, where
 * the lock source books the waits it caused (mm_holders.h).  A read
 * acquisition by the open hold's writer is its downgrade: the write hold
 * ends there.
 */
const volatile bool mh_holders;
static const struct mm_holders no_holders;

static __always_inline void holder_acquired(struct mm_struct *mm, bool write, __u64 id)
{
	__u64 lock = (__u64)mm + bpf_core_field_offset(struct mm_struct, mmap_lock);
	struct mm_holders *hs = bpf_map_lookup_elem(&mm_holders, &lock);
	struct mm_hold *h;
	__u32 head;

	if (!write) {
		h = hs ? mm_holders_open(hs) : NULL;
		if (h && h->pid == (__u32)id)
			WRITE_ONCE(h->t1, bpf_ktime_get_ns());
		return;
	}
	if (!hs) {
		bpf_map_update_elem(&mm_holders, &lock, &no_holders, BPF_NOEXIST);
		hs = bpf_map_lookup_elem(&mm_holders, &lock);
		if (!hs)
			return;
	}
	head = hs->head;
	h = &hs->h[head & (MM_HOLDERS_SLOTS - 1)];
	/* pid 0 while the slot is rewritten: a reader skips it. */
	WRITE_ONCE(h->pid, 0);
	barrier();
	h->t0 = bpf_ktime_get_ns();
	h->t1 = 0;
	h->tgid = id >> 32;
	bpf_get_current_comm(h->comm, sizeof(h->comm));
	h->ostack = 0;
	h->sid = -1;
	h->want = 0;
	h->rel.nr = 0;
	barrier();
	WRITE_ONCE(h->pid, (__u32)id);
	WRITE_ONCE(hs->head, head + 1);
}

#define MH_RWSEM_FLAG_WAITERS (1UL << 1)	/* kernel/locking/rwsem.c, since 4.20 */

/*
 * The write hold ends.  A hold some waiter found open, or that has waiters
 * now, takes its holder's stack here, in the holder's own call that took
 * the lock (perf lock contention takes owners' stacks at release too): the
 * lock is still held, so this runs only for holds that made someone wait,
 * once.
 */
static __always_inline void holder_released(void *ctx, struct mm_struct *mm, __u64 id)
{
	__u64 lock = (__u64)mm + bpf_core_field_offset(struct mm_struct, mmap_lock);
	struct mm_holders *hs = bpf_map_lookup_elem(&mm_holders, &lock);
	struct mm_hold *h = hs ? mm_holders_open(hs) : NULL;
	long n;

	if (!h || h->pid != (__u32)id)
		return;
	/*
	 * A waiter that began before this hold (behind a reader, or the lock
	 * free) did not ask; the rwsem's waiters flag says someone waits now.
	 */
	if (!READ_ONCE(h->want) &&
	    (BPF_CORE_READ(mm, mmap_lock.count.counter) & MH_RWSEM_FLAG_WAITERS))
		WRITE_ONCE(h->want, 1);
	if (READ_ONCE(h->want) && !h->rel.nr) {
		n = bpf_get_stack(ctx, h->rel.ips, sizeof(h->rel.ips), 0);
		h->rel.nr = n > 0 ? (__u32)(n / sizeof(__u64)) : 0;
	}
	WRITE_ONCE(h->t1, bpf_ktime_get_ns());
}

static __always_inline void hold_end(struct mh_task *t, __u32 tgid, struct mh_slot *s,
				     __u64 now)
{
	struct mh_acc *a;

	if (t->exited) {
		mm_agg_add(tgid, s->write ? MH_HOLD_WRITE : MH_HOLD_READ, 0, now - s->t0);
		return;
	}
	a = &t->acc[mm_gen & 1];
	mms_stat_add(&a->hold[s->write ? 1 : 0], now - s->t0);
	WRITE_ONCE(a->pending, 1);
}

/*
 * Moves a thread's set acc[idx] into mm_agg's generation gen.  The claim
 * (pending 1 -> 0) keeps the iterator and the thread's exit from both
 * moving one set.
 */
static __always_inline void mh_move(struct task_struct *task, struct mh_task *t, __u32 idx,
				    __u32 gen)
{
	struct mh_acc *a = &t->acc[idx & 1];
	__u32 tgid = task->tgid;
	struct mm_val *v;

	if (__sync_val_compare_and_swap(&a->pending, 1, 0) != 1)
		return;
	for (int w = 0; w < 2; w++) {
		struct mms_stat *h = &a->hold[w];

		if (!h->count)
			continue;
		v = mm_agg_get_gen(task, tgid, gen, w ? MH_HOLD_WRITE : MH_HOLD_READ, 0);
		if (v)
			mms_stat_merge(&v->stat, h);
		h->count = 0;
		h->total = 0;
		h->min = 0;
		h->max = 0;
		for (int i = 0; i < MMS_HIST_SLOTS; i++)
			h->hist[i] = 0;
	}
	if (a->trylock_fail) {
		v = mm_agg_get_gen(task, tgid, gen, MH_TRYLOCK_FAIL, 0);
		if (v)
			mms_stat_add_n(&v->stat, 1, a->trylock_fail);
		a->trylock_fail = 0;
	}
}

static __always_inline int acquired(struct mm_struct *mm, bool write, bool success)
{
	__u64 id = bpf_get_current_pid_tgid(), key = (__u64)mm, now;
	__u32 tgid = id >> 32, victim = 0;
	bool pick = true;
	struct mh_task *t;
	int i;

	if (!mm_wanted(id))
		return 0;
	if (mh_holders && success)
		holder_acquired(mm, write, id);
	if (mh_sample_shift && success) {
		pick = !(bpf_get_prandom_u32() & ((1U << mh_sample_shift) - 1));
		/* A read not picked may still be the downgrade of a sampled write hold. */
		if (!pick && (write || READ_ONCE(mh_open) <= 0))
			return 0;
	}
	t = bpf_task_storage_get(&mh_tasks, bpf_get_current_task_btf(), 0,
				 pick ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	if (!success) {
		if (t && !t->exited) {
			t->acc[mm_gen & 1].trylock_fail++;
			WRITE_ONCE(t->acc[mm_gen & 1].pending, 1);
		} else {
			mm_agg_add(tgid, MH_TRYLOCK_FAIL, 0, 1);
		}
		return 0;
	}
	if (!t) {
		if (pick)
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
				hold_end(t, tgid, &t->s[i], now);
				t->s[i].write = 0;
				t->s[i].t0 = now;
				return 0;
			}
		}
	}
	if (!pick)
		return 0;
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
	} else if (mh_sample_shift) {
		__sync_fetch_and_add(&mh_open, 1);
	}
	if (i < MH_SLOTS) {
		t->s[i].mm = key;
		t->s[i].t0 = now;
		t->s[i].write = write;
	}
	return 0;
}

static __always_inline int released(void *ctx, struct mm_struct *mm, bool write)
{
	__u64 id = bpf_get_current_pid_tgid(), key = (__u64)mm;
	struct mh_task *t;
	int i;

	if (!mm_wanted(id))
		return 0;
	if (mh_holders && write)
		holder_released(ctx, mm, id);
	if (mh_sample_shift && READ_ONCE(mh_open) <= 0)
		return 0;
	t = bpf_task_storage_get(&mh_tasks, bpf_get_current_task_btf(), 0, 0);
	if (!t)
		goto lost;
	for (i = 0; i < MH_SLOTS; i++) {
		if (t->s[i].mm == key && t->s[i].write == write) {
			hold_end(t, id >> 32, &t->s[i], bpf_ktime_get_ns());
			t->s[i].mm = 0;
			if (mh_sample_shift)
				__sync_fetch_and_add(&mh_open, -1);
			return 0;
		}
	}
lost:
	/* Taken before we attached, or by another task; sampled: not picked. */
	if (!mh_sample_shift)
		mm_lost_inc(MM_LOST_TIME);
	return 0;
}

/*
 * Until 6.13 the mmap_lock events also passed the memcg path, before write:
 * read with the other prototype, write would be that pointer and success the
 * write flag (every read acquisition a failed trylock).  User space loads the
 * pair that matches this kernel's BTF.
 */
SEC("tp_btf/mmap_lock_acquire_returned")
int BPF_PROG(mh_acquired, struct mm_struct *mm, bool write, bool success)
{
	return acquired(mm, write, success);
}

SEC("tp_btf/mmap_lock_acquire_returned")
int BPF_PROG(mh_acquired_memcg, struct mm_struct *mm, const char *memcg_path, bool write,
	     bool success)
{
	return acquired(mm, write, success);
}

SEC("tp_btf/mmap_lock_released")
int BPF_PROG(mh_released, struct mm_struct *mm, bool write)
{
	return released(ctx, mm, write);
}

SEC("tp_btf/mmap_lock_released")
int BPF_PROG(mh_released_memcg, struct mm_struct *mm, const char *memcg_path, bool write)
{
	return released(ctx, mm, write);
}

/* Run by user space after the flip and the grace period: every thread's old set. */
SEC("iter/task")
int mh_flush_all(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	__u32 cur = mm_gen;
	struct mh_task *t;

	if (!task)
		return 0;
	t = bpf_task_storage_get(&mh_tasks, task, 0, 0);
	if (t)
		mh_move(task, t, cur - 1, cur - 1);
	return 0;
}

/*
 * A thread's exit: both sets go to the current generation (the old one may
 * be being read), and what it still releases goes straight to mm_agg.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(mh_task_exit, struct task_struct *p)
{
	struct mh_task *t = bpf_task_storage_get(&mh_tasks, p, 0, 0);
	__u32 cur = mm_gen;

	if (!t)
		return 0;
	t->exited = 1;
	/* Holds it never released (another task did, or never): no longer open. */
	for (int i = 0; i < MH_SLOTS; i++) {
		if (t->s[i].mm && mh_sample_shift)
			__sync_fetch_and_add(&mh_open, -1);
		t->s[i].mm = 0;
	}
	mh_move(p, t, cur, cur);
	mh_move(p, t, cur - 1, cur);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
