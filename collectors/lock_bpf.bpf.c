// SPDX-License-Identifier: GPL-2.0
/*
 * Lock contention aggregated in the kernel, from tp_btf/contention_begin and
 * contention_end.
 *
 * contention_end runs with the lock already held, so it only pops the wait's
 * frame (a spin wait's from its CPU's stack of frames, any other's from its
 * task's) and appends a record to a per-CPU pending ring.  Everything
 * costly happens elsewhere: contention_begin (the waiter is about to wait
 * anyway) takes the stack, builds the key, names the lock and drains this
 * CPU's ring into the aggregation map; user space drains every CPU once per
 * interval by running the "drain" program there (BPF_F_TEST_RUN_ON_CPU).
 * Some begins run under the lock's own wait_lock (lb_under_wait_lock()):
 * those leave the ring alone unless it is half full, and take the stack
 * from the cache ("Stacks without the unwinder") whenever it knows it.
 *
 * Three mechanisms, each under a heading of its own below the maps: the
 * generation flip with the pending ring (aggregate, drain_cpu), two banks of
 * stack maps switched by stack_epoch (walk_stack; user space empties the
 * bank not in use, lock_bpf.c maybe_switch_bank), and the learned stack
 * cache (fast_walk, stack_id; the rules from stack_rules.c).
 *
 * Per-interval deltas: records carry the generation (0/1) current when their
 * wait ended, and land in agg0 or agg1 accordingly.  User space flips "gen",
 * drains every CPU until none reports a half-written record, then reads and
 * empties the old generation's map, which nothing writes to any more.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "lock_bpf.h"
#include "mm_holders.bpf.h"
#include "short_exit.bpf.h"

#define ENOMEM 12
#define EBUSY 16
#define EEXIST 17
#define barrier() asm volatile("" ::: "memory")
#define READ_ONCE(x) (*(volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile typeof(x) *)&(x) = (v))

/* Knobs, set by user space between open and load. */
const volatile __u64 type_mask = ~0ULL;	/* bit f: contention flags value f wanted */
const volatile bool filter_types;
const volatile bool filter_locks;
const volatile bool filter_tgids;
const volatile bool filter_tids;
const volatile bool filter_cpus;	/* -C: cpu_filter holds the CPUs */
const volatile bool filter_cgroups;	/* -G: cgroup_filter holds the cgroup ids */
/*
 * The kernel has cgroups (CONFIG_CGROUPS): without them the verifier refuses
 * bpf_get_current_cgroup_id(), so the call sits behind this constant.
 */
const volatile bool know_cgroups;
const volatile bool self_cost;		/* keep lb_cost (a diagnostic) */
/* The bench's floor: every program returns at once (MMSCOPE_EMPTY_HANDLERS). */
const volatile bool empty_handlers;
const volatile bool no_stacks;		/* nothing shows a caller: take no stacks */
const volatile __u64 thread_size = 16384;	/* a task's kernel stack (THREAD_SIZE) */
const volatile __u32 check_every = 64;	/* stack cache hits also walked: 1 in this many */
const volatile __u32 stack_bytes;	/* bpf_get_stack size for samples: the maps' value size */

/* Who holds the lock a wait begins on (--lock-owner): "Owners" below. */
const volatile bool lock_owner;

#define LB_F_SPIN 1U	/* contention_begin flags: LCB_F_SPIN */
#define LB_F_READ 2U	/* LCB_F_READ: alone, an rwsem's reader */
#define LB_F_WRITE 4U	/* LCB_F_WRITE: alone, an rwsem's writer */
#define LB_F_RT 8U	/* LCB_F_RT: alone, an rt_mutex */
#define LB_F_MUTEX 32U	/* LCB_F_MUTEX: with LCB_F_SPIN, a mutex's spin, then its sleep */

/* A task's context switches so far: a spin wait cannot have one inside it. */
static __always_inline __u32 switches(struct task_struct *t)
{
	return (__u32)(t->nvcsw + t->nivcsw);
}

/*
 * A frame whose end was missed: a spin wait (spinlock, rwlock, with
 * preemption off; not a mutex's spin, which goes on as a sleep under the
 * same frame) whose task has been switched out since it began.  Such
 * frames come from an interrupt's wait whose end came while this program
 * was busy on the CPU (the end is skipped, the begin was not); left on the
 * stack, a later end of the same lock would match one and book a wait as
 * long as the time since (a 331 ms spinlock wait on an rq lock was seen once
 * in 12 oracle runs).
 */
static __always_inline bool spin_wait(__u32 flags)
{
	return (flags & (LB_F_SPIN | LB_F_MUTEX)) == LB_F_SPIN;
}

/*
 * On a CPU's stack of spin waits (spins) a frame is also stale when another
 * task began it: the task on the CPU changed, so its wait is over.
 */
static __always_inline bool spin_stale(const struct lb_frame *f, __u32 sw, __u32 pid)
{
	return spin_wait(READ_ONCE(f->key.flags)) && READ_ONCE(f->key.lock) &&
	       (READ_ONCE(f->sw) != sw || READ_ONCE(f->key.pid) != pid);
}

/* The depth once stale frames on top are dropped. */
static __always_inline __u32 drop_stale(struct lb_task *ts, __u32 d, __u32 sw, __u32 pid)
{
	for (int k = 0; k < LB_MAX_DEPTH; k++) {
		if (!d || !spin_stale(&ts->f[(d - 1) & (LB_MAX_DEPTH - 1)], sw, pid))
			break;
		d--;
	}
	return d;
}

/* A wait in progress of this lock on ts: 1 + its index, or 0 (stale frames above it skipped). */
static __always_inline __u32 find_frame(struct lb_task *ts, __u32 d, __u64 addr, __u32 sw,
					__u32 pid)
{
	for (int k = 0; k < LB_MAX_DEPTH; k++) {
		struct lb_frame *f;

		if (k >= d)
			break;
		f = &ts->f[(d - 1 - k) & (LB_MAX_DEPTH - 1)];
		if (READ_ONCE(f->key.lock) == addr && !spin_stale(f, sw, pid))
			return d - k;
	}
	return 0;
}

/* Written by user space through the mmap'ed .bss. */
__u32 gen;		/* generation new records go to */
__u32 iv_seq;		/* interval counter: lock names older than an interval are redone */
__u32 stack_epoch;	/* the bank stacks go to: stack_epoch & 1 (see lock_bpf.h) */
/* The stack cache, set by user space as it learns (0: not yet, or off). */
__u32 walk_start;	/* 1 + the first frame's word above the context */
__u32 walk_key_frames;	/* frames in a cache key */
__u32 rules_gen;	/* moved on when a rule changed: older keys are dead */
int learn_budget;	/* samples user space still takes this interval */
/* System-wide: processes that lived less than this (ns) are announced in lb_exits. */
volatile __u64 lb_short_ns;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, SHORT_EXIT_RING);
} lb_exits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct lb_task);
} tasks SEC(".maps");

/*
 * Spin waits' frames (spinlocks and rwlocks, not a mutex's spin): such a
 * waiter spins with preemption off, so its wait begins and ends on one CPU
 * and waits nest there only through interrupts.  Kept per CPU, as perf
 * keeps them: a task that only ever spun (a fork loop's children, on
 * tasklist_lock and the run queues) gets no task storage, whose creation
 * and freeing at exit cost more than its waits' records.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lb_task);
} spins SEC(".maps");

/*
 * contention_begin builds its frame here and copies it onto the wait's
 * stack at the end: between the two it holds no pointer into either stack,
 * so the verifier checks its body once, not once per kind of stack.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lb_frame);
} frame_buf SEC(".maps");

/* contention_end's copy of the frame it popped (it may run inside a begin). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lb_frame);
} end_buf SEC(".maps");

/*
 * System-wide: one bit per tgid whose threads waited, so its exit is worth
 * announcing (short_exit); cleared when its last thread exits.  Sized by
 * user space to PID_MAX_LIMIT bits; 1 entry when not grouping short processes.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} row_tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lb_ring);
} pending SEC(".maps");

/*
 * Per-CPU: a drain only ever touches its own CPU's copy, so no atomics and
 * no torn min/max.  Each key costs 192 bytes per possible CPU: preallocated
 * only when all of them together are small (lock_bpf.c: configure()), else
 * paid for the keys really seen.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);	/* opts->map_entries */
	__type(key, struct lb_key);
	__type(value, struct mms_stat);
} agg0 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);	/* opts->map_entries */
	__type(key, struct lb_key);
	__type(value, struct mms_stat);
} agg1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 8192);	/* opts->stack_entries */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 64 * sizeof(__u64));	/* resized by user space */
} stacks SEC(".maps");

/* Stacks whose bucket in stacks was taken by another stack. */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 2048);	/* opts->stack_entries / 4 */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 64 * sizeof(__u64));	/* resized by user space */
} stacks2 SEC(".maps");

/* Bank 1 (odd stack epochs): the same two maps again. */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 8192);	/* opts->stack_entries */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 64 * sizeof(__u64));	/* resized by user space */
} stacks_b SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 2048);	/* opts->stack_entries / 4 */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 64 * sizeof(__u64));	/* resized by user space */
} stacks2_b SEC(".maps");

/* Return address -> where the next frame's is (user space learns them; lock_bpf.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, LB_HOP_SLOTS);
	__type(key, __u32);
	__type(value, struct lb_hop_slot);
} hops SEC(".maps");

/* Hash of the return addresses the rules found -> the unwinder's stack id (lock_bpf.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LB_CACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct lb_cache_slot);
} fast_cache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} learn_ring SEC(".maps");

struct fast_buf {
	__u64 ctx_addr;		/* the context's address, read back as a number */
	__u64 stack_addr;	/* the task's stack, likewise */
	__u64 base;
	__u32 top;		/* words from base to the stack's end */
	__u32 nw;		/* words read into raw */
	__u32 nchk;		/* hits since the last check */
	__u32 pad;
	__u64 hash;		/* of the frames found (1 from fast_walk) */
	__u64 raw[LB_FAST_WORDS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fast_buf);
} fast_bufs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);	/* opts->map_entries */
	__type(key, __u64);
	__type(value, struct lb_lock_info);
} lock_infos SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lb_lock_info);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LB_C_NR);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* Filters: present = wanted. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);	/* opts->task_entries */
	__type(key, __u32);
	__type(value, __u8);
} follow_tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u8);
} follow_tids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u64);
	__type(value, __u8);
} lock_filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);		/* the CPUs of -C */
	__type(key, __u32);
	__type(value, __u8);
} cpu_filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);	/* MMS_MAX_FILTERS */
	__type(key, __u64);
	__type(value, __u8);
} cgroup_filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LB_COST_FLAGS);
	__type(key, __u32);
	__type(value, struct lb_cost);
} costs SEC(".maps");

/* Owners: the last task that got each lock after a wait, and where (lb_acq). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);	/* opts->map_entries; 1 without --lock-owner */
	__type(key, __u64);
	__type(value, struct lb_acq);
} acquirers SEC(".maps");

/* Owners' stacks taken while they slept, by a hash of the frames. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);	/* 1 without --lock-owner */
	__type(key, __u64);
	__type(value, struct lb_ostack);
} ostacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lb_ostack);
} ostack_buf SEC(".maps");

extern struct kmem_cache *bpf_get_kmem_cache(__u64 addr) __ksym __weak;
extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;

static const struct mms_stat zero_stat;

static __always_inline void count(__u32 c)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &c);

	if (v)
		__sync_fetch_and_add(v, 1);
}

/* ---- The generation flip and the pending ring ---------------------------- */

/* Adds one record to this CPU's slot of its generation's map.  0 or -errno. */
static __always_inline int aggregate(struct lb_pend *p)
{
	struct mms_stat *s;
	__u64 d = p->delta;
	long err;

	s = p->gen ? bpf_map_lookup_elem(&agg1, &p->key) : bpf_map_lookup_elem(&agg0, &p->key);
	if (!s) {
		if (p->gen)
			err = bpf_map_update_elem(&agg1, &p->key, &zero_stat, BPF_NOEXIST);
		else
			err = bpf_map_update_elem(&agg0, &p->key, &zero_stat, BPF_NOEXIST);
		/*
		 * Map lock taken further up this CPU, or the allocator's per-CPU
		 * cache empty until its refill runs: keep the record for later.
		 */
		if (err == -EBUSY || err == -ENOMEM)
			return -EBUSY;
		s = p->gen ? bpf_map_lookup_elem(&agg1, &p->key) :
			     bpf_map_lookup_elem(&agg0, &p->key);
		if (!s) {
			count(LB_C_MAP_FULL);
			return 0;
		}
	}
	mms_stat_add(s, d);
	return 0;
}

struct drain_ctx {
	__u32 busy;
};

static long drain_one(__u32 i, struct drain_ctx *c)
{
	__u32 zero = 0, tail;
	struct lb_ring *r = bpf_map_lookup_elem(&pending, &zero);
	struct lb_pend *p;

	if (!r)
		return 1;
	tail = READ_ONCE(r->tail);
	if (tail == READ_ONCE(r->head))
		return 1;
	p = &r->rec[tail & (LB_RING - 1)];
	/* Reserved by a contention_end this drain interrupted: it finishes after us. */
	if (!READ_ONCE(p->ready) || aggregate(p)) {
		c->busy = 1;
		return 1;
	}
	WRITE_ONCE(p->ready, 0);
	barrier();
	WRITE_ONCE(r->tail, tail + 1);
	count(LB_C_DRAINED);
	return 0;
}

/*
 * Moves up to max of this CPU's pending records into the maps.  1 when one
 * could not be taken (half-written, or another drain was running).
 */
static __always_inline int drain_cpu(struct lb_ring *r, __u32 max)
{
	struct drain_ctx c = { 0 };

	/*
	 * Everything sharing the ring runs on this CPU, so the only interleaving
	 * is nesting (IRQ, NMI, the test-run IPI), which runs to completion before
	 * the interrupted program goes on: a plain flag keeps drains from nesting.
	 */
	if (READ_ONCE(r->draining))
		return 1;
	WRITE_ONCE(r->draining, 1);
	barrier();
	bpf_loop(max, drain_one, &c, 0);
	barrier();
	WRITE_ONCE(r->draining, 0);
	return c.busy;
}

/* ---- Lock names ---------------------------------------------------------- */

static __always_inline bool cache_is(const char *cache, const char *want, int len)
{
	for (int i = 0; i < len; i++)
		if (cache[i] != want[i])
			return false;
	return true;
}

static __always_inline bool try_mm(struct lb_lock_info *info, __u64 addr)
{
	struct mm_struct *mm = (void *)(addr - bpf_core_field_offset(struct mm_struct, mmap_lock));
	struct task_struct *owner;

	if (!bpf_core_field_exists(struct mm_struct, owner))
		return false;
	owner = BPF_CORE_READ(mm, owner);
	if (!owner || BPF_CORE_READ(owner, mm) != mm)
		return false;
	info->kind = LB_KIND_MMAP;
	info->owner_tgid = BPF_CORE_READ(owner, tgid);
	bpf_probe_read_kernel_str(info->owner_comm, sizeof(info->owner_comm), &owner->comm);
	return true;
}

static __always_inline bool try_anon_vma(struct lb_lock_info *info, __u64 addr)
{
	struct anon_vma *av = (void *)(addr - bpf_core_field_offset(struct anon_vma, rwsem));

	/* Only a root anon_vma's rwsem is ever taken, and a root points to itself. */
	if (BPF_CORE_READ(av, root) != av)
		return false;
	info->kind = LB_KIND_ANON_VMA;
	return true;
}

#define LB_S_IFMT 0170000
#define LB_S_IFBLK 0060000

/* An inode: its i_mapping points to its own address_space (i_data), whose host is it. */
static __always_inline bool inode_ok(struct inode *inode)
{
	return (__u64)BPF_CORE_READ(inode, i_mapping) ==
		       (__u64)inode + bpf_core_field_offset(struct inode, i_data) &&
	       BPF_CORE_READ(inode, i_data.host) == inode;
}

/*
 * A dentry's path into info, innermost name first, up to the filesystem's
 * root if root gets set.  A global function (verified once, for any
 * caller): info may be NULL to it.
 */
__noinline int lb_dentry_names(struct lb_lock_info *info, __u64 dentry_addr)
{
	struct dentry *d = (void *)dentry_addr;
	int i;

	if (!info)
		return 0;
	for (i = 0; i < LB_PATH_DEPTH; i++) {
		struct dentry *parent = BPF_CORE_READ(d, d_parent);
		const unsigned char *name;

		if (!parent || parent == d) {
			info->root = 1;
			break;
		}
		name = BPF_CORE_READ(d, d_name.name);
		bpf_probe_read_kernel_str(info->names[i], LB_NAME_LEN, name);
		info->nr_names = i + 1;
		d = parent;
	}
	if (i == LB_PATH_DEPTH && BPF_CORE_READ(d, d_parent) == d)
		info->root = 1;
	return 0;
}

/*
 * The lock is the inode's, of kind: the file's names go to info, or for a
 * block device's inode its device.
 */
__noinline int lb_inode_names(struct lb_lock_info *info, __u64 inode_addr, __u32 kind)
{
	struct inode *inode = (void *)inode_addr;
	struct hlist_node *first;

	if (!info)
		return 0;
	info->kind = kind;
	info->ino = BPF_CORE_READ(inode, i_ino);
	info->dev = BPF_CORE_READ(inode, i_sb, s_dev);
	first = BPF_CORE_READ(inode, i_dentry.first);
	if (!first) {
		if ((BPF_CORE_READ(inode, i_mode) & LB_S_IFMT) == LB_S_IFBLK)
			info->index = BPF_CORE_READ(inode, i_rdev);
		return 0;
	}
	return lb_dentry_names(info, (__u64)first -
					     bpf_core_field_offset(struct dentry, d_u.d_alias));
}

/* A lock at offset field of an inode. */
static __always_inline bool try_inode_at(struct lb_lock_info *info, __u64 addr, __u64 field,
					 __u32 kind)
{
	struct inode *inode = (void *)(addr - field);

	if (!inode_ok(inode))
		return false;
	lb_inode_names(info, (__u64)inode, kind);
	return true;
}

/* i_mmap_rwsem (the file's rmap), or the page cache's i_pages lock. */
static __always_inline bool try_inode(struct lb_lock_info *info, __u64 addr)
{
	return try_inode_at(info, addr, bpf_core_field_offset(struct inode, i_data) +
				      bpf_core_field_offset(struct address_space, i_mmap_rwsem),
			    LB_KIND_I_MMAP);
}

static __always_inline bool try_i_pages(struct lb_lock_info *info, __u64 addr)
{
	return try_inode_at(info, addr, bpf_core_field_offset(struct inode, i_data) +
				      bpf_core_field_offset(struct address_space, i_pages) +
				      bpf_core_field_offset(struct xarray, xa_lock),
			    LB_KIND_I_PAGES);
}

/* inode->i_rwsem (inode_lock(): writes, truncation, directory operations). */
static __always_inline bool try_i_rwsem(struct lb_lock_info *info, __u64 addr)
{
	return try_inode_at(info, addr, bpf_core_field_offset(struct inode, i_rwsem),
			    LB_KIND_I_RWSEM);
}

/* inode->i_lock, the inode's own spinlock (its state, dirtiness, sizes). */
static __always_inline bool try_i_lock(struct lb_lock_info *info, __u64 addr)
{
	return try_inode_at(info, addr, bpf_core_field_offset(struct inode, i_lock), LB_KIND_I_LOCK);
}

/*
 * ext4's own inode locks, in the ext4_inode_info around the inode: the
 * inode checks out and its superblock is ext4's.  i_data_sem (the block
 * map: writeback, ext4_map_blocks()), i_es_lock (the extent status tree),
 * i_raw_lock (the on-disk inode's copy).
 */
static __always_inline bool try_ext4_at(struct lb_lock_info *info, __u64 addr, __u64 field,
					__u32 kind)
{
	struct inode *inode = (void *)(addr - field +
				       bpf_core_field_offset(struct ext4_inode_info, vfs_inode));
	char fs[5] = {};

	if (!inode_ok(inode) ||
	    bpf_probe_read_kernel(fs, sizeof(fs), BPF_CORE_READ(inode, i_sb, s_type, name)) ||
	    !cache_is(fs, "ext4", 5))
		return false;
	lb_inode_names(info, (__u64)inode, kind);
	return true;
}

static __always_inline bool try_ext4(struct lb_lock_info *info, __u64 addr)
{
	if (!bpf_core_type_exists(struct ext4_inode_info))
		return false;
	return try_ext4_at(info, addr, bpf_core_field_offset(struct ext4_inode_info, i_data_sem),
			   LB_KIND_EXT4_DATA_SEM) ||
	       try_ext4_at(info, addr, bpf_core_field_offset(struct ext4_inode_info, i_es_lock),
			   LB_KIND_EXT4_ES_LOCK) ||
	       try_ext4_at(info, addr, bpf_core_field_offset(struct ext4_inode_info, i_raw_lock),
			   LB_KIND_EXT4_RAW_LOCK);
}

/*
 * file->f_pos_lock (fdget_pos(): read, write, lseek of a shared open file):
 * the file's inode checks out and the file's mapping is the inode's.
 */
static __always_inline bool try_f_pos(struct lb_lock_info *info, __u64 addr)
{
	struct file *f = (void *)(addr - bpf_core_field_offset(struct file, f_pos_lock));
	struct inode *inode = BPF_CORE_READ(f, f_inode);

	if (!inode || BPF_CORE_READ(f, f_mapping) != BPF_CORE_READ(inode, i_mapping) ||
	    !inode_ok(inode))
		return false;
	lb_inode_names(info, (__u64)inode, LB_KIND_F_POS);
	return true;
}

/* mapping->i_private_lock (buffer heads: block_dirty_folio(), a block device's mostly). */
static __always_inline bool try_i_private(struct lb_lock_info *info, __u64 addr)
{
	return try_inode_at(info, addr, bpf_core_field_offset(struct inode, i_data) +
				      bpf_core_field_offset(struct address_space, i_private_lock),
			    LB_KIND_I_PRIVATE);
}

/*
 * A dentry's d_lock (dput(), lookups, renames): the dentry's parent and its
 * inode, if any, are of its superblock, whose root dentry is of it too.
 */
static __always_inline bool try_d_lock(struct lb_lock_info *info, __u64 addr)
{
	struct dentry *d = (void *)(addr - bpf_core_field_offset(struct dentry, d_lockref.lock));
	struct super_block *sb = BPF_CORE_READ(d, d_sb);
	struct dentry *parent = BPF_CORE_READ(d, d_parent);
	struct inode *inode = BPF_CORE_READ(d, d_inode);

	if (!sb || !parent || BPF_CORE_READ(parent, d_sb) != sb ||
	    BPF_CORE_READ(sb, s_root, d_sb) != sb || (inode && BPF_CORE_READ(inode, i_sb) != sb))
		return false;
	info->kind = LB_KIND_D_LOCK;
	info->dev = BPF_CORE_READ(sb, s_dev);
	if (inode)
		info->ino = BPF_CORE_READ(inode, i_ino);
	lb_dentry_names(info, (__u64)d);
	return true;
}

/*
 * The locks of an ext4 filesystem's jbd2 journal (journal_t): the journal's
 * j_private is the filesystem's superblock, whose ext4_sb_info's s_journal
 * is this journal.  index = the field (LB_JBD2_* order, lock_bpf.h), dev =
 * the filesystem's device.
 */
static __always_inline bool try_jbd2(struct lb_lock_info *info, __u64 addr)
{
	__u64 offs[LB_JBD2_FIELDS];

	if (!bpf_core_type_exists(struct journal_s) || !bpf_core_type_exists(struct ext4_sb_info))
		return false;
	offs[0] = bpf_core_field_offset(struct journal_s, j_state_lock);
	offs[1] = bpf_core_field_offset(struct journal_s, j_list_lock);
	offs[2] = bpf_core_field_offset(struct journal_s, j_wait_transaction_locked.lock);
	offs[3] = bpf_core_field_offset(struct journal_s, j_wait_done_commit.lock);
	offs[4] = bpf_core_field_offset(struct journal_s, j_wait_commit.lock);
	offs[5] = bpf_core_field_offset(struct journal_s, j_wait_updates.lock);
	offs[6] = bpf_core_field_offset(struct journal_s, j_wait_reserved.lock);
	offs[7] = bpf_core_field_offset(struct journal_s, j_checkpoint_mutex);
	offs[8] = bpf_core_field_offset(struct journal_s, j_barrier);
	offs[9] = bpf_core_field_offset(struct journal_s, j_revoke_lock);
	offs[10] = bpf_core_field_offset(struct journal_s, j_history_lock);
	for (int i = 0; i < LB_JBD2_FIELDS; i++) {
		struct journal_s *j = (void *)(addr - offs[i]);
		struct super_block *sb = BPF_CORE_READ(j, j_private);
		struct ext4_sb_info *sbi = sb ? BPF_CORE_READ(sb, s_fs_info) : NULL;

		if (!sbi || BPF_CORE_READ(sbi, s_journal) != j)
			continue;
		info->kind = LB_KIND_JBD2;
		info->index = i;
		info->dev = BPF_CORE_READ(sb, s_dev);
		return true;
	}
	return false;
}

/* The inode and file locks, tried where nothing says which object the lock is in. */
static __always_inline bool name_fs(struct lb_lock_info *info, __u64 lock)
{
	return try_i_pages(info, lock) || try_inode(info, lock) || try_i_rwsem(info, lock) ||
	       try_i_lock(info, lock) || try_i_private(info, lock) || try_ext4(info, lock) ||
	       try_f_pos(info, lock) || try_d_lock(info, lock) || try_jbd2(info, lock);
}

/*
 * Locks named by the structure they live in.  Each candidate is the
 * structure that would hold the lock at its field's offset (CO-RE), and is
 * believed only when fields of it point back to where it must be: no
 * guess from the address's range, and none from the waiter's stack.  Run
 * once per lock address and interval (name_lock()).
 */
#define LB_MAX_CPUS 8192	/* NR_CPUS at most (x86 MAXSMP) */
#define LB_MAX_NODES 1024	/* MAX_NUMNODES at most (NODES_SHIFT 10) */

/*
 * A runqueue's lock (raw_spin_rq_lock(); perf calls it rq_lock): the rq it
 * would be the __lock of has a CPU number, and its idle task is that CPU's
 * (pid 0, named swapper/N, and its thread_info says it is on that CPU).
 */
static __always_inline bool try_rq(struct lb_lock_info *info, __u64 lock)
{
	struct rq *rq = (void *)(lock - bpf_core_field_offset(struct rq, __lock));
	struct task_struct *idle;
	char comm[8];
	__u32 cpu;

	if (!bpf_core_field_exists(struct rq, __lock) ||
	    !bpf_core_field_exists(struct task_struct, thread_info.cpu))
		return false;
	cpu = BPF_CORE_READ(rq, cpu);
	idle = BPF_CORE_READ(rq, idle);
	if (cpu >= LB_MAX_CPUS || !idle || BPF_CORE_READ(idle, pid) != 0)
		return false;
	if (bpf_probe_read_kernel(comm, sizeof(comm), &idle->comm) || !cache_is(comm, "swapper/", 8) ||
	    BPF_CORE_READ(idle, thread_info.cpu) != cpu)
		return false;
	info->kind = LB_KIND_RQ;
	info->index = cpu;
	return true;
}

/* A node's pglist_data: its first zone points back to it (every zone's zone_pgdat is set). */
static __always_inline bool is_pgdat(struct pglist_data *pg)
{
	return pg && BPF_CORE_READ(pg, node_zones[0].zone_pgdat) == pg;
}

/*
 * zone->lock, the buddy allocator's: the zone's zone_pgdat is a node whose
 * node_zones array holds the zone at a whole zone's offset.
 */
static __always_inline bool try_zone(struct lb_lock_info *info, __u64 lock)
{
	__u64 zsz = bpf_core_type_size(struct zone), first, z;
	__u64 nz = bpf_core_field_size(struct pglist_data, node_zones);
	struct pglist_data *pg;
	struct zone *zp;

	z = lock - bpf_core_field_offset(struct zone, lock);
	zp = (void *)z;
	pg = BPF_CORE_READ(zp, zone_pgdat);
	if (!pg || !zsz)
		return false;
	first = (__u64)pg + bpf_core_field_offset(struct pglist_data, node_zones);
	if (z < first || z - first >= nz || (z - first) % zsz || !is_pgdat(pg))
		return false;
	info->kind = LB_KIND_ZONE;
	info->index = BPF_CORE_READ(pg, node_id);
	bpf_probe_read_kernel_str(info->cache, sizeof(info->cache), BPF_CORE_READ(zp, name));
	return true;
}

/*
 * lruvec->lru_lock (folio_lruvec_lock*()): a node's own lruvec (no memory
 * cgroups, or memory cgroups off), or a memory cgroup's for one node, whose
 * mem_cgroup_per_node is where the cgroup's nodeinfo[node] points.  Named by
 * this structure, not by the slab cache the per-node info came from:
 * kmalloc caches are merged with others (&pool_workqueue on 6.18).
 */
static __always_inline bool try_lruvec(struct lb_lock_info *info, __u64 lock)
{
	__u64 lv = lock - bpf_core_field_offset(struct lruvec, lru_lock), own, pnode = 0;
	struct mem_cgroup_per_node *pn;
	struct pglist_data *pg;
	struct mem_cgroup *mc;
	__u32 nid;

	if (!bpf_core_field_exists(struct lruvec, pgdat)) {
		/* Without CONFIG_MEMCG the node's own lruvec is the only one. */
		pg = (void *)(lv - bpf_core_field_offset(struct pglist_data, __lruvec));
		if (!is_pgdat(pg))
			return false;
		goto found;
	}
	pg = BPF_CORE_READ((struct lruvec *)lv, pgdat);
	if (!is_pgdat(pg))
		return false;
	own = (__u64)pg + bpf_core_field_offset(struct pglist_data, __lruvec);
	if (lv == own)
		goto found;
	pn = (void *)(lv - bpf_core_field_offset(struct mem_cgroup_per_node, lruvec));
	mc = BPF_CORE_READ(pn, memcg);
	nid = BPF_CORE_READ(pg, node_id);
	if (!mc || nid >= LB_MAX_NODES ||
	    bpf_probe_read_kernel(&pnode, sizeof(pnode),
				  (void *)((__u64)mc + bpf_core_field_offset(struct mem_cgroup, nodeinfo) +
					   nid * sizeof(pnode))) ||
	    pnode != (__u64)pn)
		return false;
	info->cgroup = BPF_CORE_READ(mc, css.cgroup, kn, id);
found:
	info->kind = LB_KIND_LRU;
	info->index = BPF_CORE_READ(pg, node_id);
	return true;
}

/*
 * A split page-table lock (pte_lockptr(), pmd_lockptr()) inside its page
 * table's struct ptdesc: that page is typed a page table (PGTY_table, 6.12
 * on) and in use.  Only where the lock is embedded (not ALLOC_SPLIT_PTLOCKS,
 * whose locks come from the "page->ptl" cache: name_slab()).  Which mm the
 * table belongs to is not recorded for PTE and PMD tables on x86 (pt_mm is
 * set for PGDs only), so the name has no process.
 */
static __always_inline bool try_ptlock(struct lb_lock_info *info, __u64 lock)
{
	__u64 psz = bpf_core_type_size(struct page);
	struct ptdesc *pt;
	__u32 type;
	int ref;

	if (!bpf_core_type_exists(struct ptdesc) ||
	    !bpf_core_enum_value_exists(enum pagetype, PGTY_table) ||
	    bpf_core_field_size(struct ptdesc, ptl) != bpf_core_type_size(spinlock_t))
		return false;
	pt = (void *)(lock - bpf_core_field_offset(struct ptdesc, ptl));
	/* The struct page array starts aligned: with a power-of-two page size, so is each. */
	if (psz && !(psz & (psz - 1)) && ((__u64)pt & (psz - 1)))
		return false;
	type = BPF_CORE_READ(pt, __page_type);
	ref = BPF_CORE_READ(pt, __page_refcount.counter);
	if (type >> 24 != bpf_core_enum_value(enum pagetype, PGTY_table) || ref <= 0)
		return false;
	info->kind = LB_KIND_PTL;
	return true;
}

/*
 * Another process's siglock the waiter can name exactly: its parent's (an
 * exit's do_notify_parent(), a stop's) or its tracer's.  Owner = that process.
 */
static __always_inline bool try_parent_siglock(struct lb_lock_info *info, __u64 lock,
					       struct task_struct *t)
{
	__u64 off = bpf_core_field_offset(struct sighand_struct, siglock);
	struct task_struct *p = BPF_CORE_READ(t, real_parent);

	for (int i = 0; i < 2; i++) {
		__u64 sh = p ? (__u64)BPF_CORE_READ(p, sighand) : 0;

		if (sh && sh + off == lock) {
			info->kind = LB_KIND_SIGLOCK;
			info->owner_tgid = BPF_CORE_READ(p, tgid);
			bpf_probe_read_kernel_str(info->owner_comm, sizeof(info->owner_comm), &p->comm);
			return true;
		}
		p = BPF_CORE_READ(t, parent);
	}
	return false;
}

/*
 * A lock in the sighand_cache (never merged: it has a constructor and is
 * SLAB_TYPESAFE_BY_RCU): a siglock when the sighand_struct it would open
 * has its signalfd wait queue's list where it must be (empty: pointing to
 * itself, or its first entry pointing back).  Whose it is, nothing says.
 */
static __always_inline bool try_sighand(struct lb_lock_info *info, __u64 lock)
{
	struct sighand_struct *sh = (void *)(lock - bpf_core_field_offset(struct sighand_struct, siglock));
	struct list_head *head = &sh->signalfd_wqh.head, *next;

	next = BPF_CORE_READ(head, next);
	if (!next || (next != head && BPF_CORE_READ(next, prev) != head))
		return false;
	info->kind = LB_KIND_SIGLOCK;
	return true;
}

/*
 * A task's pi_lock (try_to_wake_up(), the scheduler's and rt_mutex's): the
 * task it would be in has a struct pid for its pid and a group leader of its
 * thread group.  Named with the task's comm.
 */
static __always_inline bool try_pi_lock(struct lb_lock_info *info, __u64 lock)
{
	struct task_struct *t = (void *)(lock - bpf_core_field_offset(struct task_struct, pi_lock));
	struct task_struct *leader;
	struct pid *tp;
	int pid, nr;

	pid = BPF_CORE_READ(t, pid);
	tp = BPF_CORE_READ(t, thread_pid);
	leader = BPF_CORE_READ(t, group_leader);
	if (pid <= 0 || !tp || !leader || BPF_CORE_READ(leader, tgid) != BPF_CORE_READ(t, tgid))
		return false;
	/* numbers[0]: the pid in the initial namespace, which task->pid is. */
	if (bpf_probe_read_kernel(&nr, sizeof(nr), &tp->numbers[0].nr) || nr != pid)
		return false;
	info->kind = LB_KIND_PI;
	bpf_probe_read_kernel_str(info->cache, LB_COMM_LEN, &t->comm);
	return true;
}

/*
 * A 9p transport channel's lock (net/9p/trans_virtio.c: each request and
 * each completion takes it), or its client's (net/9p/client.c).  Named with
 * the channel's mount tag.
 */
struct virtio_chan___mms {	/* a local type (not in every kernel's BTF), matched by CO-RE */
	spinlock_t lock;
	void *client;
	struct virtio_device *vdev;
	struct virtqueue *vq;
	char *tag;
} __attribute__((preserve_access_index));

struct p9_client___mms {
	spinlock_t lock;
	void *trans;
} __attribute__((preserve_access_index));

/* A 9p virtio channel: its device's priv and its virtqueue's device lead back to it. */
static __always_inline bool is_virtio_chan(struct virtio_chan___mms *ch)
{
	struct virtio_device *vdev = BPF_CORE_READ(ch, vdev);
	struct virtqueue *vq = BPF_CORE_READ(ch, vq);

	return vdev && vq && BPF_CORE_READ(vdev, priv) == ch && BPF_CORE_READ(vq, vdev) == vdev;
}

static __always_inline bool try_virtio_chan(struct lb_lock_info *info, __u64 lock)
{
	struct virtio_chan___mms *ch;
	struct p9_client___mms *c;

	if (!bpf_core_type_exists(struct virtio_chan___mms) ||
	    !bpf_core_type_exists(struct p9_client___mms))
		return false;
	ch = (void *)(lock - bpf_core_field_offset(struct virtio_chan___mms, lock));
	if (is_virtio_chan(ch)) {
		info->kind = LB_KIND_9P_CHAN;
		goto tag;
	}
	/* The 9p client's lock (its request tags): its transport is such a channel, its own. */
	c = (void *)(lock - bpf_core_field_offset(struct p9_client___mms, lock));
	ch = BPF_CORE_READ(c, trans);
	if (!ch || BPF_CORE_READ(ch, client) != c || !is_virtio_chan(ch))
		return false;
	info->kind = LB_KIND_9P_CLIENT;
tag:
	bpf_probe_read_kernel_str(info->cache, sizeof(info->cache), BPF_CORE_READ(ch, tag));
	return true;
}

/* A block device's request queue: its disk's queue is it. */
static __always_inline bool is_queue(struct request_queue *q)
{
	return q && BPF_CORE_READ(q, disk, queue) == q;
}

/*
 * A hardware queue of request queue q: what q's hctx_table holds at its
 * number (the xarray's head itself for queue 0 alone, else a slot of its
 * one node).
 */
static __always_inline bool is_hctx(struct blk_mq_hw_ctx *h, struct request_queue *q)
{
	__u64 head = (__u64)BPF_CORE_READ(q, hctx_table.xa_head), slot = 0;
	__u32 n = BPF_CORE_READ(h, queue_num);
	struct xa_node *node;

	if (head == (__u64)h)
		return !n;
	if ((head & 3) != 2 || n >= 64)
		return false;
	node = (void *)(head - 2);
	if (BPF_CORE_READ(node, shift) ||
	    bpf_probe_read_kernel(&slot, sizeof(slot), &node->slots[n & 63]))
		return false;
	return slot == (__u64)h;
}

/*
 * The block layer's locks (index: LB_BLK_* order, lock_bpf.h): a request
 * queue's queue_lock and requeue_lock, a hardware queue's lock, a flush
 * queue's mq_flush_lock (its flush request's hardware queue holds it).
 * cache = the disk's name.
 */
static __always_inline bool try_blk(struct lb_lock_info *info, __u64 lock)
{
	struct request_queue *q = NULL;
	struct blk_flush_queue *fq;
	struct blk_mq_hw_ctx *h;
	struct gendisk *disk;
	__u32 field;

	q = (void *)(lock - bpf_core_field_offset(struct request_queue, queue_lock));
	field = 0;
	if (is_queue(q))
		goto found;
	q = (void *)(lock - bpf_core_field_offset(struct request_queue, requeue_lock));
	field = 1;
	if (is_queue(q))
		goto found;
	h = (void *)(lock - bpf_core_field_offset(struct blk_mq_hw_ctx, lock));
	q = BPF_CORE_READ(h, queue);
	field = 2;
	if (is_queue(q) && is_hctx(h, q))
		goto found;
	fq = (void *)(lock - bpf_core_field_offset(struct blk_flush_queue, mq_flush_lock));
	h = BPF_CORE_READ(fq, flush_rq, mq_hctx);
	q = h ? BPF_CORE_READ(h, queue) : NULL;
	field = 3;
	if (h && BPF_CORE_READ(h, fq) == fq && is_queue(q) && is_hctx(h, q))
		goto found;
	return false;
found:
	info->kind = LB_KIND_BLK;
	info->index = field;
	disk = BPF_CORE_READ(q, disk);
	bpf_probe_read_kernel_str(info->cache, sizeof(info->cache), &disk->disk_name);
	return true;
}

/*
 * A slab cache's per-node list_lock (kmem_cache_node, perf's
 * &kmem_cache_node): the first slab on its partial list belongs to a cache
 * whose node[] holds it.  With no partial slab nothing tells.  cache = that
 * cache's name.
 */
static __always_inline bool try_slab_node(struct lb_lock_info *info, __u64 lock)
{
	struct kmem_cache_node *n = (void *)(lock - bpf_core_field_offset(struct kmem_cache_node,
									  list_lock));
	__u64 head = (__u64)n + bpf_core_field_offset(struct kmem_cache_node, partial);
	__u64 nodes = bpf_core_field_size(struct kmem_cache, node) / sizeof(__u64);
	struct list_head *next = BPF_CORE_READ(n, partial.next);
	struct kmem_cache *s;
	struct slab *slab;

	if (!next || (__u64)next == head)
		return false;
	slab = (void *)((__u64)next - bpf_core_field_offset(struct slab, slab_list));
	s = BPF_CORE_READ(slab, slab_cache);
	if (!s)
		return false;
	for (int i = 0; i < 8; i++) {
		__u64 p = 0;

		if (i >= nodes)
			break;
		if (bpf_probe_read_kernel(&p, sizeof(p), &s->node[i]) || p != (__u64)n)
			continue;
		info->kind = LB_KIND_SLAB_NODE;
		bpf_probe_read_kernel_str(info->cache, sizeof(info->cache), BPF_CORE_READ(s, name));
		return true;
	}
	return false;
}

static __always_inline bool name_by_structure(struct lb_lock_info *info, __u64 lock)
{
	return try_rq(info, lock) || try_zone(info, lock) || try_lruvec(info, lock) ||
	       try_ptlock(info, lock) || try_blk(info, lock) || try_virtio_chan(info, lock) ||
	       try_slab_node(info, lock);
}

/* A pointer's value as a number (the verifier keeps pointers out of arithmetic with numbers). */
static __always_inline __u64 ptr_value(const void *p)
{
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), &p);
	return v;
}

#define LB_PCPU_CPUS 4096	/* per-CPU areas looked at, at most */

struct pcpu_find {
	__u64 lock;
	__u64 base;		/* scratch's per-CPU pointer: its per_cpu_ptr() less a CPU's offset */
	__u64 anchor;		/* this CPU's runqueue in the section (lb_lock_info.pcpu_anchor), or 0 */
	__u64 best;		/* the chosen CPU's distance (below) */
	__u64 at;		/* the lock less the chosen CPU's per-CPU offset */
	__u32 cpu;
};

/*
 * CPU c's candidate is the lock less c's per-CPU offset: where the lock would
 * be linked in the section were it c's copy.  With an anchor, the candidate
 * nearest to it (per-CPU units are much further apart than the section is
 * long); without one, a section linked at 0: the nearest offset at or below.
 */
static long pcpu_one(__u32 cpu, struct pcpu_find *x)
{
	__u32 zero = 0;
	void *v = bpf_map_lookup_percpu_elem(&scratch, &zero, cpu);
	__u64 off, at, d;

	if (!v)
		return 1;	/* past nr_cpu_ids */
	off = ptr_value(v) - x->base;
	at = x->lock - off;
	if (x->anchor)
		d = at > x->anchor ? at - x->anchor : x->anchor - at;
	else if (off <= x->lock)
		d = at;
	else
		return 0;
	if (d < x->best) {
		x->best = d;
		x->at = at;
		x->cpu = cpu;
	}
	return 0;
}

/*
 * Per-CPU variables: CPU c's copy of one is at its address in the per-CPU
 * section plus __per_cpu_offset[c].  The offsets come from a per-CPU map of
 * our own (its per-CPU pointer against each CPU's copy).  The section's
 * address comes from this CPU's runqueue, which its tasks' fair run queues
 * point to (user space knows where runqueues is in the section from BTF).
 * The lock's address in the section goes to user space, which names it when
 * it falls inside.
 */
static __always_inline void name_pcpu(struct lb_lock_info *info, __u64 lock)
{
	struct pcpu_find x = { .lock = lock, .best = ~0ULL };
	struct bpf_array *arr = (void *)ptr_value(&scratch);
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 rq;

	if (!bpf_core_field_exists(struct bpf_array, pptrs) ||
	    bpf_probe_read_kernel(&x.base, sizeof(x.base), &arr->pptrs[0]) || !x.base)
		return;
	/* info is this CPU's scratch element: its address less base is this CPU's offset. */
	if (bpf_core_field_exists(struct cfs_rq, rq)) {
		rq = (__u64)BPF_CORE_READ(t, se.cfs_rq, rq);
		if (rq)
			x.anchor = rq - (ptr_value(info) - x.base);
	}
	bpf_loop(LB_PCPU_CPUS, pcpu_one, &x, 0);
	if (x.best != ~0ULL) {
		info->pcpu = x.at + 1;
		info->pcpu_anchor = x.anchor ? x.anchor + 1 : 0;
		info->index = x.cpu;
	}
}

static __always_inline void name_slab(struct lb_lock_info *info, __u64 lock)
{
	__u64 wl = bpf_core_field_offset(struct rw_semaphore, wait_lock);
	struct kmem_cache *s;

	if (!bpf_get_kmem_cache) {
		/*
		 * Before 6.13 there is no slab lookup: the layouts alone tell, the
		 * structural ones first, then the inode's (two pointers that must
		 * agree) before anon_vma's (a root pointing to itself right before
		 * the rwsem).
		 */
		if (name_by_structure(info, lock) || try_pi_lock(info, lock) || name_fs(info, lock) ||
		    try_anon_vma(info, lock))
			return;
		info->wait_lock = try_inode(info, lock - wl) || try_i_rwsem(info, lock - wl) ||
				  try_anon_vma(info, lock - wl);
		if (!info->wait_lock)
			name_pcpu(info, lock);
		return;
	}
	s = bpf_get_kmem_cache(lock);
	if (!s) {
		if (!name_by_structure(info, lock))
			name_pcpu(info, lock);
		return;
	}
	info->kind = LB_KIND_SLAB;
	bpf_probe_read_kernel_str(info->cache, sizeof(info->cache), BPF_CORE_READ(s, name));
	/* Each rwsem is also tried as its own wait_lock spinlock. */
	if (cache_is(info->cache, "mm_struct", 10)) {
		if (try_mm(info, lock))
			return;
		info->wait_lock = try_mm(info, lock - wl);
	} else if (cache_is(info->cache, "anon_vma", 9)) {
		if (try_anon_vma(info, lock))
			return;
		info->wait_lock = try_anon_vma(info, lock - wl);
	} else if (cache_is(info->cache, "task_struct", 12)) {
		try_pi_lock(info, lock);
	} else if (cache_is(info->cache, "kmem_cache_node", 16)) {
		try_slab_node(info, lock);
	} else if (cache_is(info->cache, "sighand_cache", 14)) {
		try_sighand(info, lock);
	} else if (cache_is(info->cache, "page->ptl", 10)) {
		info->kind = LB_KIND_PTL;	/* ALLOC_SPLIT_PTLOCKS: the cache holds nothing else */
	} else {
		/*
		 * Inodes live in per-filesystem caches (a block device's in
		 * bdev_cache), memory cgroups' per-node info in kmalloc ones:
		 * validate, do not match names.
		 */
		if (try_lruvec(info, lock) || name_fs(info, lock))
			return;
		info->wait_lock = try_inode(info, lock - wl) || try_i_rwsem(info, lock - wl);
	}
}

/*
 * A lock that is neither the waiter's own mm's or signal lock nor its
 * parent's signal lock.  A global function: the verifier checks it once,
 * not inside contention_begin.
 */
__noinline int lb_name_other(struct lb_lock_info *info, __u64 lock)
{
	if (info)
		name_slab(info, lock);
	return 0;
}

/*
 * The lock this CPU named last, for whom, in which interval: the same lock
 * again (a contended mmap_lock, wait after wait) skips the LRU map.
 */
struct name_memo {
	__u64 lock;
	__u32 tgid;
	__u32 seq;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct name_memo);
} name_memos SEC(".maps");

/* Makes sure lock_infos has a fresh entry for this lock. */
static __always_inline void name_lock(__u64 lock, struct task_struct *t, __u32 tgid)
{
	__u32 seq = READ_ONCE(iv_seq), zero = 0, kind = LB_KIND_UNKNOWN, wait_lock = 0;
	struct name_memo *memo = bpf_map_lookup_elem(&name_memos, &zero);
	struct lb_lock_info *old, *info;
	__u64 mm, sighand;

	if (!memo)
		return;
	if (memo->lock == lock && memo->tgid == tgid && memo->seq == seq)
		return;
	memo->lock = lock;
	memo->tgid = tgid;
	memo->seq = seq;
	mm = (__u64)BPF_CORE_READ(t, mm);
	sighand = (__u64)BPF_CORE_READ(t, sighand);
	if (mm && lock == mm + bpf_core_field_offset(struct mm_struct, mmap_lock)) {
		kind = LB_KIND_MMAP;
	} else if (mm && lock == mm + bpf_core_field_offset(struct mm_struct, mmap_lock) +
					  bpf_core_field_offset(struct rw_semaphore, wait_lock)) {
		/* Its wait_lock (the rwsem's slow paths; without a slab lookup, else unnamed). */
		kind = LB_KIND_MMAP;
		wait_lock = 1;
	} else if (sighand &&
		   lock == sighand + bpf_core_field_offset(struct sighand_struct, siglock)) {
		kind = LB_KIND_SIGLOCK;
	}
	old = bpf_map_lookup_elem(&lock_infos, &lock);
	if (old && old->seq + 1 >= seq &&
	    (kind == LB_KIND_UNKNOWN || (old->kind == kind && old->owner_tgid == tgid)))
		return;
	info = bpf_map_lookup_elem(&scratch, &zero);
	if (!info)
		return;
	__builtin_memset(info, 0, sizeof(*info));
	info->seq = seq;
	if (kind != LB_KIND_UNKNOWN) {
		/* The current task's own mm or signal lock: owner is its process. */
		info->kind = kind;
		info->wait_lock = wait_lock;
		info->owner_tgid = tgid;
		bpf_get_current_comm(info->owner_comm, sizeof(info->owner_comm));
	} else if (!try_parent_siglock(info, lock, t)) {
		lb_name_other(info, lock);
	}
	bpf_map_update_elem(&lock_infos, &lock, info, BPF_ANY);
}

/* ---- The learned stack cache --------------------------------------------- */

/*
 * Stacks without the unwinder.  bpf_get_stackid() costs 5-30 us a wait on
 * this kernel (ORC, no frame pointers): most of contention_begin.  But a
 * return address sits at a fixed distance above the one of the function it
 * returns into, for all but a few functions (alloca, realigned stacks).  So
 * the program reads the stack above its context (bpf_trace_run2's frame, on
 * the waiter's kernel stack) and follows rules user space learned from
 * samples (one unwinder walk and the stack words it ran over); the return
 * addresses it finds are the key of a cache of the unwinder's stack ids.
 * A miss walks as before and fills the cache; 1 hit in check_every walks
 * too and compares (LB_C_FAST_BAD: user space then turns the cache off).
 *
 * 1: b->hash is of this stack's return addresses; 0: a frame without a rule
 * (a sample would teach one); -1: not here (an interrupt's stack, too deep).
 */
struct walk_ctx {
	__u64 h;
	__u32 s, top, nw, fk;
	int ret;
};

/* xxhash64's round and final mix. */
static __always_inline __u64 mix_in(__u64 h, __u64 v)
{
	h += v * 0xC2B2AE3D27D4EB4FULL;
	h = (h << 31) | (h >> 33);
	return h * 0x9E3779B185EBCA87ULL;
}

static __always_inline __u64 mix_end(__u64 h)
{
	h ^= h >> 33;
	h *= 0xC2B2AE3D27D4EB4FULL;
	h ^= h >> 29;
	h *= 0x165667B19E3779F9ULL;
	h ^= h >> 32;
	return h | 1;	/* 0 marks a free slot */
}

/*
 * The rule for ra (a struct lb_hop's bytes), or 0.  A global function: the
 * verifier checks it once, not at each of the walk's calls and probes.
 */
__noinline __u64 lb_find_hop(__u64 ra)
{
	__u32 home = hop_home(ra);

	for (__u32 p = 0; p < LB_HOP_PROBE; p++) {
		__u32 i = (home + p) & (LB_HOP_SLOTS - 1);
		struct lb_hop_slot *e = bpf_map_lookup_elem(&hops, &i);
		__u64 era;

		if (!e)
			break;
		era = READ_ONCE(e->ra);
		if (!era)
			break;
		if (era == ra)
			return READ_ONCE(e->v);
	}
	return 0;
}

static __always_inline struct lb_hop find_hop(__u64 ra)
{
	__u64 v = lb_find_hop(ra);
	struct lb_hop h;

	__builtin_memcpy(&h, &v, sizeof(h));
	return h;
}

/* One frame of the walk: bpf_loop's callback; 1 stops (ret says how it ended). */
static long walk_step(__u32 j, struct walk_ctx *w)
{
	__u32 zero = 0, s = w->s;
	struct fast_buf *b = bpf_map_lookup_elem(&fast_bufs, &zero);
	struct lb_hop h;
	__u64 ra;

	if (!b || s >= w->nw || j >= LB_FAST_MAX) {
		w->ret = -1;	/* beyond the words read */
		return 1;
	}
	ra = b->raw[s & (LB_FAST_WORDS - 1)];
	w->h = mix_in(w->h, ra);
	if (j + 1 >= w->fk) {
		w->ret = 1;
		return 1;
	}
	h = find_hop(ra);
	if ((h.kind & LB_HOP_END) && w->top - s == (__u32)h.end_k) {
		w->ret = 1;
		return 1;
	}
	if (h.kind & LB_HOP_FIXED) {
		w->s = s + h.delta;
	} else if (h.kind & LB_HOP_TOP) {
		w->s = w->top - h.from_top;
	} else if (h.kind & LB_HOP_NEAR) {
		__u32 span = (h.kind >> LB_HOP_SPAN_SHIFT) & 3, n;

		/* The first candidate holding an address with a rule. */
		for (n = 0; n <= LB_HOP_SPAN_MAX; n++) {
			__u32 c = s + h.delta + n;

			if (n > span || c >= w->nw) {
				n = LB_HOP_SPAN_MAX + 1;
				break;
			}
			if (find_hop(b->raw[c & (LB_FAST_WORDS - 1)]).kind)
				break;
		}
		if (n > LB_HOP_SPAN_MAX) {
			w->ret = 0;	/* none known yet: a sample may teach one */
			return 1;
		}
		w->s = s + h.delta + n;
	} else {
		/* No rule yet (a sample may teach one), or none to be had. */
		w->ret = h.kind & LB_HOP_NEVER ? -1 : 0;
		return 1;
	}
	return 0;
}

static __always_inline int fast_walk(void *ctx, struct task_struct *t, struct fast_buf *b)
{
	__u32 gen = READ_ONCE(rules_gen), s0 = READ_ONCE(walk_start);
	__u32 fk = READ_ONCE(walk_key_frames);
	struct walk_ctx w = { 0 };
	__u64 stack, base, bytes;
	__u32 top, nw;

	/* Both addresses as numbers: stored, then read back. */
	WRITE_ONCE(b->ctx_addr, (__u64)ctx);
	WRITE_ONCE(b->stack_addr, (__u64)t->stack);
	base = READ_ONCE(b->ctx_addr);
	stack = READ_ONCE(b->stack_addr);
	if (base < stack || base - stack >= thread_size)
		return -1;
	top = (__u32)((stack + thread_size - base) / 8);
	nw = top < LB_FAST_WORDS ? top : LB_FAST_WORDS;
	b->base = base;
	b->top = top;
	b->nw = nw;
	if (!s0 || !fk || fk > LB_FAST_MAX)
		return 0;
	bytes = (__u64)nw * 8;
	if (bytes > sizeof(b->raw))
		bytes = sizeof(b->raw);
	barrier_var(bytes);
	if (bpf_probe_read_kernel(b->raw, bytes, (void *)base))
		return -1;
	w.h = mix_in(0x27D4EB2F165667C5ULL, gen);
	w.s = s0 - 1;
	w.top = top;
	w.nw = nw;
	w.fk = fk;
	w.ret = -1;
	bpf_loop(LB_FAST_MAX, walk_step, &w, 0);
	b->hash = w.h;
	return w.ret;
}

/* One unwinder walk and the stack words it ran over, for user space to learn from. */
static __always_inline void learn(void *ctx, struct fast_buf *b)
{
	__u32 size = stack_bytes, nw = b->nw;
	struct lb_learn *l;
	__u64 bytes;

	/* Two CPUs may both take the last one: a budget, not a limit. */
	if (READ_ONCE(learn_budget) <= 0)
		return;
	__sync_fetch_and_add(&learn_budget, -1);
	l = bpf_ringbuf_reserve(&learn_ring, sizeof(*l), 0);
	if (!l)
		return;
	l->base = b->base;
	l->top = b->base + (__u64)b->top * 8;
	if (size > sizeof(l->ips))
		size = sizeof(l->ips);
	l->nips = bpf_get_stack(ctx, l->ips, size, 0);
	bytes = (__u64)nw * 8;
	if (bytes > sizeof(l->raw))
		bytes = sizeof(l->raw);
	barrier_var(bytes);
	l->nwords = bpf_probe_read_kernel(l->raw, bytes, (void *)b->base) ? 0 : bytes / 8;
	bpf_ringbuf_submit(l, 0);
	count(LB_C_LEARN);
}

/* ---- Two stack banks, switched by epoch ---------------------------------- */

/* The unwinder's stack id in the bank of epoch se, with its epoch; < 0 when lost. */
static __always_inline long walk_stack(void *ctx, __u32 se)
{
	long sid;

	/*
	 * When its bucket holds another stack: hashed without the first
	 * (machinery) frame it lands in an unrelated bucket of the second map.
	 */
	if (se & 1) {
		sid = bpf_get_stackid(ctx, &stacks_b, 0);
		if (sid == -EEXIST) {
			sid = bpf_get_stackid(ctx, &stacks2_b, 1);
			if (sid >= 0)
				sid |= LB_STACK_SPILL;
		}
	} else {
		sid = bpf_get_stackid(ctx, &stacks, 0);
		if (sid == -EEXIST) {
			sid = bpf_get_stackid(ctx, &stacks2, 1);
			if (sid >= 0)
				sid |= LB_STACK_SPILL;
		}
	}
	if (sid >= 0)
		sid |= (long)(se & LB_EPOCH_MASK) << LB_EPOCH_SHIFT;
	return sid;
}

/* ---- A wait's stack id: the cache, else the bank in use ------------------ */

/*
 * This wait's stack id: from the cache when the rules can follow the stack.
 * The unwinder is called from one place only: the first frame of its stack
 * is the return address of that call, and a second call site would make
 * the same stack two.
 */
static __always_inline long stack_id(void *ctx, struct task_struct *t, __u32 se, bool *hit)
{
	__u32 zero = 0, slot;
	struct fast_buf *b = bpf_map_lookup_elem(&fast_bufs, &zero);
	int fr = b ? fast_walk(ctx, t, b) : -1;
	struct lb_cache_slot *c = NULL;
	bool check = false;
	long sid = -1, slow;
	__u64 h = 0;

	if (fr > 0) {
		h = mix_end(mix_in(b->hash, se));
		slot = (__u32)h & (LB_CACHE_SLOTS - 1);
		c = bpf_map_lookup_elem(&fast_cache, &slot);
		if (c && c->hash == h) {
			sid = c->sid;
			count(LB_C_FAST_HIT);
			if (++b->nchk < check_every) {
				*hit = true;
				return sid;
			}
			b->nchk = 0;
			check = true;
		}
	}
	if (!check)
		count(fr > 0 ? LB_C_FAST_MISS : fr ? LB_C_FAST_NOWALK : LB_C_FAST_NORULE);
	slow = walk_stack(ctx, se);
	if (check) {
		count(LB_C_FAST_CHECKED);
		if (slow == sid)
			return sid;
		count(LB_C_FAST_BAD);
		learn(ctx, b);
	}
	if (c && slow >= 0) {
		c->hash = h;
		c->sid = slow;
	} else if (fr == 0) {
		learn(ctx, b);
	}
	return slow;
}

/* ---- The programs -------------------------------------------------------- */

static __always_inline bool wanted(__u64 lock, __u32 flags, __u32 pid, __u32 tgid)
{
	if (filter_types && (flags >= 64 || !((type_mask >> flags) & 1)))
		return false;
	if (filter_locks && !bpf_map_lookup_elem(&lock_filter, &lock))
		return false;
	if (filter_tids && !bpf_map_lookup_elem(&follow_tids, &pid))
		return false;
	if (filter_tgids && !bpf_map_lookup_elem(&follow_tgids, &tgid))
		return false;
	if (filter_cpus) {
		__u32 cpu = bpf_get_smp_processor_id();

		if (!bpf_map_lookup_elem(&cpu_filter, &cpu))
			return false;
	}
	if (filter_cgroups && know_cgroups) {
		__u64 cg = bpf_get_current_cgroup_id();

		if (!bpf_map_lookup_elem(&cgroup_filter, &cg))
			return false;
	}
	return true;
}

/* ---- Owners (--lock-owner) ------------------------------------------------ */

/*
 * The task a lock's owner field names, or 0: mutexes and rt_mutexes (the
 * flag bits below the task pointer cleared), rwsems owned by a writer.  A
 * reader-owned rwsem names at most the last reader (RWSEM_READER_OWNED):
 * not an owner.  Spinlocks, rwlocks, semaphores and percpu rwsems have no
 * owner field.
 */
static __always_inline __u64 owner_of(__u64 lock, __u32 flags)
{
	long v;

	if (flags == LB_F_MUTEX || flags == (LB_F_MUTEX | LB_F_SPIN)) {
		struct mutex *m = (void *)lock;

		return (__u64)BPF_CORE_READ(m, owner.counter) & ~0x07ULL;
	}
	if (flags == LB_F_RT) {
		struct rt_mutex_base *r = (void *)lock;

		return (__u64)BPF_CORE_READ(r, owner) & ~0x01ULL;
	}
	if (flags == LB_F_READ || flags == LB_F_WRITE) {
		struct rw_semaphore *sem = (void *)lock;

		v = BPF_CORE_READ(sem, owner.counter);
		return v & 1 ? 0 : (__u64)v & ~0x07ULL;
	}
	return 0;
}

/* Waits on locks whose owner field names their owner (writers of rwsems). */
static __always_inline bool owner_of_kind(__u32 flags)
{
	return flags == LB_F_MUTEX || flags == (LB_F_MUTEX | LB_F_SPIN) || flags == LB_F_RT ||
	       flags == LB_F_WRITE;
}

/*
 * The stack of an owner that sleeps: where it waits while holding the lock.
 * Taken only while it is off every CPU, and kept only if it did not run in
 * between (a running task's stack changes under the unwinder).
 */
static __always_inline __u64 sleeping_stack(struct task_struct *ot, __u64 o)
{
	struct task_struct *tt;
	struct lb_ostack *b;
	__u32 zero = 0, sw;
	__u64 h = 0;
	long n;

	if (!bpf_task_from_pid || !bpf_task_release)
		return 0;
	b = bpf_map_lookup_elem(&ostack_buf, &zero);
	if (!b)
		return 0;
	tt = bpf_task_from_pid(BPF_CORE_READ(ot, pid));
	if (!tt)
		return 0;
	if ((__u64)tt != o || tt->on_cpu)
		goto out;
	sw = switches(tt);
	n = bpf_get_task_stack(tt, b->ips, sizeof(b->ips), 0);
	if (n <= 0 || tt->on_cpu || switches(tt) != sw)
		goto out;
	b->nr = (__u32)(n / sizeof(__u64));
	h = 0xcbf29ce484222325ULL;
	for (int i = 0; i < LB_OWNER_DEPTH; i++) {
		if (i >= b->nr)
			break;
		h = (h ^ b->ips[i]) * 0x100000001b3ULL;
	}
	h |= 1;		/* 0 is "none" */
	if (bpf_map_update_elem(&ostacks, &h, b, BPF_NOEXIST) && !bpf_map_lookup_elem(&ostacks, &h)) {
		count(LB_C_STACK);
		h = 0;
	}
out:
	bpf_task_release(tt);
	return h;
}

/*
 * --lock-owner with --mmap-hold: the hold programs keep each mmap_lock's
 * write holders in mm_holders (mm_holders.h).  A waiter that found the
 * open hold's writer the owner, with a stack, leaves the stack there for
 * the waits booked to that hold at their end (book_holder).
 */
const volatile bool know_holders;

static __always_inline void holder_stack(struct lb_frame *f, __u64 lock)
{
	struct mm_holders *hs = bpf_map_lookup_elem(&mm_holders, &lock);
	struct mm_hold *h = hs ? mm_holders_open(hs) : NULL;

	if (!h)
		return;
	/* Someone waits for this hold: its release takes the holder's stack. */
	if (!READ_ONCE(h->want))
		WRITE_ONCE(h->want, 1);
	if (!f->key.owner_pid || READ_ONCE(h->pid) != f->key.owner_pid || h->ostack ||
	    h->sid >= 0 || (!f->key.owner_stack && f->key.owner_sid < 0))
		return;
	h->ostack = f->key.owner_stack;
	h->sid = f->key.owner_sid;
}

/* A hold's release stack into ostacks: its key, 0 when none. */
static __always_inline __u64 release_stack(struct mm_hold *h)
{
	__u64 k = 0xcbf29ce484222325ULL;
	__u32 nr = READ_ONCE(h->rel.nr);

	if (!nr || !READ_ONCE(h->t1))
		return 0;
	for (int i = 0; i < MM_HOLD_DEPTH; i++) {
		if (i >= nr)
			break;
		k = (k ^ h->rel.ips[i]) * 0x100000001b3ULL;
	}
	k |= 1;		/* 0 is "none" */
	if (bpf_map_update_elem(&ostacks, &k, &h->rel, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&ostacks, &k))
		return 0;
	return k;
}

/* The part of [b, e) that h covers, or 0. */
static __always_inline __u64 hold_overlap(const struct mm_hold *h, __u64 b, __u64 e)
{
	__u64 t0 = READ_ONCE(h->t0), t1 = READ_ONCE(h->t1);

	if (!READ_ONCE(h->pid))
		return 0;
	if (t0 > b)
		b = t0;
	if (t1 && t1 < e)
		e = t1;
	return e > b ? e - b : 0;
}

/*
 * An mmap_lock wait [b, e) goes to the writer that held the lock for most
 * of it (its holds summed), when that is more than the time no writer held
 * it (readers, or nobody); else it stays with the owner its begin found.
 * Holds older than the MM_HOLDERS_SLOTS newest count as time without one.
 * Its stack is the holder's at the release of the hold that covered most of
 * the wait, when that was taken (a waiter asked for it: holder_stack).
 */
static __always_inline void book_holder(struct lb_frame *f, __u64 lock, __u64 b, __u64 e)
{
	struct mm_holders *hs = bpf_map_lookup_elem(&mm_holders, &lock);
	__u64 all = 0, best = 0, mine = 0, o;
	__u32 bi = 0, pid, i;
	struct mm_hold *h;
	struct lb_acq *a;

	if (!hs || e <= b)
		return;
	for (i = 0; i < MM_HOLDERS_SLOTS; i++) {
		o = hold_overlap(&hs->h[i], b, e);
		all += o;
		if (o > best) {
			best = o;
			bi = i;
		}
	}
	if (!best)
		return;
	h = &hs->h[bi & (MM_HOLDERS_SLOTS - 1)];
	pid = READ_ONCE(h->pid);
	for (i = 0; i < MM_HOLDERS_SLOTS; i++)
		if (READ_ONCE(hs->h[i].pid) == pid)
			mine += hold_overlap(&hs->h[i], b, e);
	if (all > e - b)
		all = e - b;
	if (!pid || (mine <= e - b - all && pid != f->key.owner_pid))
		return;
	if (mine > e - b - all)
		count(LB_C_HOLDER);
	/* The owner the begin found: the stack where it released the hold, if taken. */
	o = release_stack(h);
	if (pid == f->key.owner_pid && (o || f->key.owner_stack || f->key.owner_sid >= 0)) {
		if (o) {
			f->key.owner_stack = o;
			f->key.owner_sid = -1;
		}
		return;
	}
	f->key.owner_pid = pid;
	f->key.owner_tgid = READ_ONCE(h->tgid);
	__builtin_memcpy(f->key.owner_comm, h->comm, sizeof(f->key.owner_comm));
	f->key.owner_stack = 0;
	f->key.owner_sid = -1;
	/*
	 * Where it held the lock: its stack at the release of the hold that
	 * covered most of the wait, else one a waiter saw, else its last
	 * contended take.
	 */
	f->key.owner_stack = o;
	if (o)
		return;
	for (i = 0; i < MM_HOLDERS_SLOTS; i++) {
		h = &hs->h[i];
		if (READ_ONCE(h->pid) == pid && (h->ostack || h->sid >= 0)) {
			f->key.owner_stack = h->ostack;
			f->key.owner_sid = h->sid;
			return;
		}
	}
	a = bpf_map_lookup_elem(&acquirers, &lock);
	if (a && a->pid == pid)
		f->key.owner_sid = a->sid;
}

/* The owner of the lock a wait begins on, and its stack, into its key. */
static __always_inline void owner_and_stack(struct lb_frame *f, __u64 lock, __u32 flags)
{
	__u64 o = owner_of(lock, flags);
	struct task_struct *ot = (void *)o;
	struct lb_acq *a;

	f->key.owner_sid = -1;
	f->key.owner_stack = 0;
	if (!o) {
		f->key.owner_pid = 0;
		f->key.owner_tgid = 0;
		__builtin_memset(f->key.owner_comm, 0, sizeof(f->key.owner_comm));
		/* An rwsem without a writer: held by readers, or by nobody at that moment. */
		if (flags == LB_F_READ || flags == LB_F_WRITE) {
			struct rw_semaphore *sem = (void *)lock;

			f->key.owner_tgid = BPF_CORE_READ(sem, owner.counter) & 1 ?
					    LB_OWNER_READERS : LB_OWNER_FREE;
		}
		return;
	}
	f->key.owner_pid = BPF_CORE_READ(ot, pid);
	f->key.owner_tgid = BPF_CORE_READ(ot, tgid);
	/* The kernel pads comm with zeros (strscpy_pad): all 16 bytes are the key's. */
	if (bpf_probe_read_kernel(f->key.owner_comm, sizeof(f->key.owner_comm), &ot->comm))
		__builtin_memset(f->key.owner_comm, 0, sizeof(f->key.owner_comm));
	if (no_stacks || !f->key.owner_pid)
		return;
	if (!BPF_CORE_READ(ot, on_cpu)) {
		f->key.owner_stack = sleeping_stack(ot, o);
		if (f->key.owner_stack)
			return;
	}
	a = bpf_map_lookup_elem(&acquirers, &lock);
	if (a && a->pid == f->key.owner_pid)
		f->key.owner_sid = a->sid;
}

static __always_inline void take_owner(struct lb_frame *f, __u64 lock, __u32 flags)
{
	owner_and_stack(f, lock, flags);
	if (know_holders && (flags == LB_F_READ || flags == LB_F_WRITE))
		holder_stack(f, lock);
}

/* The stack a wait with these flags keeps its frame on: a spin's this CPU's, else its task's. */
static __always_inline struct lb_task *frames_of(struct task_struct *t, __u32 flags, __u64 create)
{
	__u32 zero = 0;

	return spin_wait(flags) ? bpf_map_lookup_elem(&spins, &zero) :
				  bpf_task_storage_get(&tasks, t, 0, create);
}

/* ---- Processes with rows (short_exit) ------------------------------------ */

static __always_inline __u64 *rows_word(__u32 tgid, __u64 *bit)
{
	__u32 w = tgid / 64;

	*bit = 1ULL << (tgid & 63);
	return bpf_map_lookup_elem(&row_tgids, &w);
}

static __always_inline void mark_rows(__u32 tgid)
{
	__u64 bit, *v = rows_word(tgid, &bit);

	if (v && !(READ_ONCE(*v) & bit))
		__sync_fetch_and_or(v, bit);
}

/* Whether p's process waited; its last thread clears that. */
static __always_inline bool had_rows(struct task_struct *p)
{
	__u64 bit, *v = rows_word(p->tgid, &bit);

	if (!v || !(READ_ONCE(*v) & bit))
		return false;
	if (!p->signal->live.counter)
		__sync_fetch_and_and(v, ~bit);
	return true;
}

SEC("tp_btf/contention_begin")
int BPF_PROG(contention_begin, void *lock, unsigned int flags)
{
	__u64 now, id = bpf_get_current_pid_tgid(), addr = (__u64)lock;
	__u64 t0 = 0, t1 = 0, t2 = 0, t3 = 0, t4 = 0;
	__u32 pid = (__u32)id, tgid = id >> 32, zero = 0, d, nd, sw, idx;
	struct task_struct *t;
	struct lb_ring *r;
	struct lb_frame *f, *nf;
	struct lb_task *ts;
	bool hit = false;
	long sid;
	__u32 se;

	if (empty_handlers)
		return 0;
	if (!wanted(addr, flags, pid, tgid))
		return 0;
	if (self_cost)
		t0 = bpf_ktime_get_ns();
	t = bpf_get_current_task_btf();
	nf = bpf_map_lookup_elem(&frame_buf, &zero);
	ts = frames_of(t, flags, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!ts || !nf) {
		count(LB_C_TASK_SLOT);
		return 0;
	}
	/* The process has rows now: its exit is worth announcing (short_exit). */
	if (READ_ONCE(lb_short_ns))
		mark_rows(tgid);
	sw = switches(t);
	d = READ_ONCE(ts->depth);
	nd = drop_stale(ts, d, sw, pid);
	if (nd != d) {
		count(LB_C_STALE);
		WRITE_ONCE(ts->depth, nd);
		d = nd;
	}
	/*
	 * The same lock again on top: a mutex's optimistic spin ended and its
	 * sleep begins (begin, begin, one end).  One wait from the first begin,
	 * as perf lock contention counts it; no second frame to leave behind.
	 */
	if (d) {
		idx = d - 1;
		barrier_var(idx);
		if (READ_ONCE(ts->f[idx & (LB_MAX_DEPTH - 1)].key.lock) == addr)
			return 0;
	}
	if (d >= LB_MAX_DEPTH) {
		count(LB_C_TASK_SLOT);
		return 0;
	}
	/*
	 * A bounded share of this CPU's finished waits.  Not under a wait_lock
	 * (others wait for it) unless the ring is filling up: the begins
	 * without one, and user space once an interval, drain the rest.
	 */
	if (self_cost)
		t1 = bpf_ktime_get_ns();
	r = bpf_map_lookup_elem(&pending, &zero);
	if (r) {
		__u32 n = READ_ONCE(r->head) - READ_ONCE(r->tail);

		if (n && (!lb_under_wait_lock(flags) || n >= LB_RING / 2))
			drain_cpu(r, 32);
	}
	if (self_cost)
		t1 = bpf_ktime_get_ns() - t1;
	/*
	 * The frame is built in nf and pushed at the end (no other begin runs
	 * on this CPU meanwhile: the kernel skips a program re-entered there).
	 * Every key field is written below, the owner's only with --lock-owner
	 * (and then all of them): without it they stay 0, as nf is zeroed when
	 * the map is made.
	 */
	nf->sw = sw;

	if (no_stacks) {
		sid = -1;
		goto stacked;
	}
	if (self_cost)
		t2 = bpf_ktime_get_ns();
	se = READ_ONCE(stack_epoch);
	sid = stack_id(ctx, t, se, &hit);
	nf->sid_epoch = se;
	if (self_cost)
		t3 = bpf_ktime_get_ns();
	if (sid < 0)
		count(LB_C_STACK);
stacked:
	nf->key.stack_id = sid;
	nf->key.flags = flags;
	nf->key.pid = pid;
	nf->key.tgid = tgid;
	bpf_get_current_comm(nf->key.comm, sizeof(nf->key.comm));
	nf->key.cgroup = know_cgroups ? bpf_get_current_cgroup_id() : 0;
	if (lock_owner)
		take_owner(nf, addr, flags);
	if (self_cost)
		t4 = bpf_ktime_get_ns();
	name_lock(addr, t, tgid);
	/*
	 * The wait starts when this handler returns: its own work (the stack
	 * walk above costs microseconds) is not lock wait, and counting it
	 * would inflate short spinlock waits several-fold.
	 */
	now = bpf_ktime_get_ns();
	nf->ts = now;
	nf->key.lock = addr;
	/*
	 * Push it.  Which stack is read back from the frame, so no register
	 * carries it across the body above; an end (an interrupt's) may have
	 * dropped stale frames since the depth was read.
	 */
	ts = frames_of(t, READ_ONCE(nf->key.flags), 0);
	if (!ts)
		return 0;
	d = READ_ONCE(ts->depth);
	if (d >= LB_MAX_DEPTH) {
		count(LB_C_TASK_SLOT);
		return 0;
	}
	idx = d;
	barrier_var(idx);
	f = &ts->f[idx & (LB_MAX_DEPTH - 1)];
	*f = *nf;
	barrier();
	WRITE_ONCE(ts->depth, d + 1);
	if (self_cost) {
		__u32 k = flags & (LB_COST_FLAGS - 1);
		struct lb_cost *c = bpf_map_lookup_elem(&costs, &k);

		if (c) {
			c->n++;
			c->total += now - t0;
			c->drain += t1;
			c->stack += t3 - t2;
			if (hit) {
				c->hits++;
				c->hit_stack += t3 - t2;
			}
			c->name += now - t4;
		}
	}
	return 0;
}

/* The critical path: the lock is held now. */
SEC("tp_btf/contention_end")
int BPF_PROG(contention_end, void *lock, int ret)
{
	__u64 addr = (__u64)lock, now, start;
	__u32 zero = 0, d, i, h, sw, pid;
	struct task_struct *t;
	struct lb_ring *r;
	struct lb_task *ts;
	struct lb_frame *f;
	struct lb_pend *p;

	if (empty_handlers)
		return 0;
	t = bpf_get_current_task_btf();
	now = bpf_ktime_get_ns();
	sw = switches(t);
	pid = (__u32)bpf_get_current_pid_tgid();
	/* A spin wait's frame is on this CPU's stack, any other on the task's. */
	ts = bpf_map_lookup_elem(&spins, &zero);
	d = ts ? READ_ONCE(ts->depth) : 0;
	i = d && d <= LB_MAX_DEPTH ? find_frame(ts, d, addr, sw, pid) : 0;
	if (!i) {
		/* Stale spin frames on top go. */
		if (ts && d <= LB_MAX_DEPTH && (i = drop_stale(ts, d, sw, pid)) != d) {
			count(LB_C_STALE);
			WRITE_ONCE(ts->depth, i);
		}
		ts = bpf_task_storage_get(&tasks, t, 0, 0);
		if (!ts)
			return 0;	/* never slept in a wait while followed */
		d = READ_ONCE(ts->depth);
		if (!d || d > LB_MAX_DEPTH)
			return 0;
		i = find_frame(ts, d, addr, sw, pid);
		if (!i) {
			count(LB_C_NO_MATCH);	/* a wait we did not start */
			return 0;
		}
	}
	/* Frames above the match lost their end (this program was busy on the CPU): dropped. */
	if (i != d)
		count(LB_C_STALE);
	i--;
	f = bpf_map_lookup_elem(&end_buf, &zero);
	if (!f)
		return 0;
	/* Popped: the rest works on the copy, so the verifier checks it once for both stacks. */
	*f = ts->f[i & (LB_MAX_DEPTH - 1)];
	barrier();
	WRITE_ONCE(ts->depth, i);
	start = f->ts;
	if (know_holders && !ret && (f->key.flags == LB_F_READ || f->key.flags == LB_F_WRITE))
		book_holder(f, addr, start, now);
	/* The lock is this task's now: the owner later waits will find, and where it waited. */
	if (lock_owner && !ret && owner_of_kind(f->key.flags)) {
		struct lb_acq a = { .pid = pid, .sid = f->key.stack_id };

		bpf_map_update_elem(&acquirers, &addr, &a, BPF_ANY);
	}
	r = bpf_map_lookup_elem(&pending, &zero);
	if (!r)
		return 0;
	if (now < start) {
		count(LB_C_TIME);
		return 0;
	}
	h = READ_ONCE(r->head);
	if (h - READ_ONCE(r->tail) >= LB_RING) {
		count(LB_C_PENDING);
		return 0;
	}
	/* Reserve, fill, then mark ready: a drain interrupting us stops here. */
	WRITE_ONCE(r->head, h + 1);
	barrier();
	p = &r->rec[h & (LB_RING - 1)];
	p->key = f->key;
	/* Its bank was emptied since (a wait across two bank switches). */
	if (f->key.stack_id >= 0 && READ_ONCE(stack_epoch) - f->sid_epoch >= 2) {
		p->key.stack_id = -1;
		count(LB_C_STACK);
	}
	p->delta = now - start;
	p->gen = READ_ONCE(gen);
	barrier();
	WRITE_ONCE(p->ready, 1);
	return 0;
}

/* Run by user space on each CPU (BPF_F_TEST_RUN_ON_CPU); returns 1 if it must retry. */
SEC("raw_tp")
int drain(void *ctx)
{
	__u32 zero = 0;
	struct lb_ring *r = bpf_map_lookup_elem(&pending, &zero);

	return r ? drain_cpu(r, LB_RING) : 0;
}

/* A launched command's children are followed too. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(follow_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	__u8 one = 1;

	if (ptgid != ctgid && bpf_map_lookup_elem(&follow_tgids, &ptgid))
		bpf_map_update_elem(&follow_tgids, &ctgid, &one, BPF_ANY);
	return 0;
}

/*
 * System-wide only: short-lived processes' rows go to their name's group
 * (short_exit.h).  Only processes that have rows: one of whose threads
 * waited, so that its leader has task storage (contention_begin); most
 * exits (a fork loop's children) return here.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(short_exit, struct task_struct *p)
{
	if (!empty_handlers && had_rows(p))
		short_exit_note(p, lb_short_ns, &lb_exits);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
