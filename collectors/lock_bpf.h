/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What lock_bpf.bpf.c and lock_bpf.c share: map keys and values.  Fixed-width
 * types and char arrays only, no pointers.
 */
#ifndef MMSCOPE_LOCK_BPF_H
#define MMSCOPE_LOCK_BPF_H

#include "mmscope/hist.h"	/* the maps' values: struct mms_stat */

#define LB_COMM_LEN 16
#define LB_MAX_DEPTH 8		/* nested waits per task (rwsem -> its wait_lock -> IRQ) */
/* Pending records per CPU; a power of two, the ring within a per-CPU value's 32 KiB. */
#define LB_RING 256
#define LB_PATH_DEPTH 6		/* dentry names kept for an i_mmap_rwsem's file */
#define LB_NAME_LEN 32		/* one dentry name (longer ones are cut) */
#define LB_CACHE_LEN 32		/* slab cache name */
/*
 * The journal_t locks LB_KIND_JBD2 names, in its index's order: j_state_lock,
 * j_list_lock, the wait queues j_wait_transaction_locked, j_wait_done_commit,
 * j_wait_commit, j_wait_updates, j_wait_reserved, then j_checkpoint_mutex,
 * j_barrier, j_revoke_lock, j_history_lock.
 */
#define LB_JBD2_FIELDS 11
/* LB_KIND_BLK's index: request_queue's queue_lock, requeue_lock, an hctx's lock, mq_flush_lock. */
#define LB_BLK_FIELDS 4
#define LB_MAX_STACK 127	/* frames the kernel keeps per stack (PERF_MAX_STACK_DEPTH) */

/*
 * A stack id: bits 0-23 the id in its map, 24-29 the stack epoch it was taken
 * in (mod 64), bit 30 set for the second map of the epoch's bank (a hash
 * collision in the first).  Stack maps never free an entry by themselves, so
 * user space empties them: two banks of two maps each, epoch e using bank
 * e & 1; when the bank in use fills up, the other one is emptied and the
 * epoch moves on.  An id older than the previous epoch may name a stack the
 * emptied bank holds now, so it is dropped (counted as a lost stack).
 */
#define LB_STACK_SPILL (1 << 30)
#define LB_EPOCH_SHIFT 24
#define LB_EPOCH_MASK 63
#define LB_STACK_IDX (((__u32)1 << LB_EPOCH_SHIFT) - 1)

/*
 * The stack cache (lock_bpf.bpf.c, "Stacks without the unwinder").  A return
 * address's rule says where the next frame's return address is, in words
 * up the kernel stack from this one's: delta (FIXED), from_top words below
 * the stack's top (TOP: a frame of variable size under a fixed one, such
 * as do_syscall_64's randomized offset over the entry's pt_regs), and
 * whether the stack ends here when the address sits end_k words below the
 * top (END); NEAR when the distance is one of a few, delta to delta + span
 * (a frame of two sizes: rwsem_down_write_slowpath's is 23 or 24 words on
 * 6.18, its place below the top random), and the walk takes the first of
 * them that holds an address with a rule; NEVER when samples disagreed on
 * both distances by more.  User space learns the rules from samples (struct
 * lb_learn).
 */
#define LB_FAST_WORDS 256	/* stack words read above the program's context; a power of 2 */
#define LB_FAST_MAX 64		/* frames a walk follows (stack depth at most); a power of 2 */
#define LB_HOP_FIXED 1
#define LB_HOP_TOP 2
#define LB_HOP_END 4
#define LB_HOP_NEVER 8		/* samples disagree on both: no walk goes past it */
#define LB_HOP_NEAR 16		/* delta .. delta + span, span in kind's bits 8-9 */
#define LB_HOP_SPAN_SHIFT 8
#define LB_HOP_SPAN_MAX 2

struct lb_hop {
	__s16 delta;
	__s16 from_top;
	__s16 end_k;
	__u16 kind;		/* LB_HOP_* bits */
};

/*
 * Rules by return address: an open-addressed table user space writes through
 * mmap (a hash map's lookup cost ~370 ns a frame here, its cache misses):
 * home slot hop_home(ra), then up to LB_HOP_PROBE slots on.  An entry's ra is
 * stored after its rule, each with one 8-byte store; a rule of kind 0 is none.
 */
#define LB_HOP_BITS 11
#define LB_HOP_SLOTS (1U << LB_HOP_BITS)
#define LB_HOP_PROBE 4

struct lb_hop_slot {
	__u64 ra;		/* 0: free */
	union {
		struct lb_hop h;
		__u64 v;
	};
};

static inline __u32 hop_home(__u64 ra)
{
	return (__u32)((ra * 0x9E3779B97F4A7C15ULL) >> (64 - LB_HOP_BITS));
}

/*
 * The cache: per CPU, direct-mapped by a 64-bit hash of the return addresses
 * the rules found, the stack epoch and the rules' generation (distinct
 * stacks colliding: ~n^2 / 2^65, a few thousand stacks ~1e-13; the checks
 * would see it).
 */
#define LB_CACHE_BITS 12
#define LB_CACHE_SLOTS (1U << LB_CACHE_BITS)

struct lb_cache_slot {
	__u64 hash;		/* 0: free */
	__s64 sid;
};

/* A stack the rules could not follow: its frames and the stack words around them. */
struct lb_learn {
	__u64 base;		/* address of raw[0] (the program's context) */
	__u64 top;		/* the task stack's end */
	__u32 nwords;		/* raw words read */
	__s32 nips;		/* frames in ips, or -errno */
	__u64 ips[LB_FAST_MAX + 8];
	__u64 raw[LB_FAST_WORDS];
};

/* One aggregation key: lock + call stack + task + contention flags. */
struct lb_key {
	__u64 lock;
	__s32 stack_id;		/* < 0: no stack (counted as lost) */
	__u32 flags;		/* contention_begin flags */
	__u32 pid;
	__u32 tgid;
	char comm[LB_COMM_LEN];
	__u64 cgroup;		/* the task's cgroup v2 id (--lock-cgroup, the Tasks view) */
	/*
	 * The lock's owner when the wait began (--lock-owner; all 0 without):
	 * owner_pid 0 when no owner is known.  Its stack: owner_stack, the
	 * ostacks key of the stack it was asleep in, else owner_sid, the stack
	 * id of its own last contended acquisition of this lock; 0 / < 0: none.
	 */
	__u32 owner_pid;
	__u32 owner_tgid;	/* with owner_pid 0, an rwsem's LB_OWNER_READERS or _FREE */
	char owner_comm[LB_COMM_LEN];
	__s32 owner_sid;
	__u32 owner_pad;
	__u64 owner_stack;
};

#define LB_OWNER_READERS 1	/* reader-owned (the last reader is not the owner) */
#define LB_OWNER_FREE 2		/* no owner as the wait began (between two holders) */

/* An owner's stack taken while it slept (ostacks' values). */
#define LB_OWNER_DEPTH 32
struct lb_ostack {
	__u32 nr;
	__u32 pad;
	__u64 ips[LB_OWNER_DEPTH];
};

/* The last task that got a lock after waiting for it, and where (acquirers' values). */
struct lb_acq {
	__u32 pid;
	__s32 sid;
};

/* A finished wait on its way from contention_end to the aggregation map. */
struct lb_pend {
	struct lb_key key;
	__u64 delta;
	__u32 gen;		/* aggregation map it belongs to */
	__u32 ready;		/* written completely; cleared by the drain */
};

/*
 * Per-CPU ring of pending records.  Producer: contention_end (never nested
 * with itself on a CPU: the kernel skips a program re-entered on its CPU).
 * Consumers: the drain in contention_begin and the drain program user space
 * runs on each CPU; "draining" keeps them from nesting.
 */
struct lb_ring {
	__u32 head;
	__u32 tail;
	__u32 draining;
	__u32 pad;
	struct lb_pend rec[LB_RING];
};

/* One wait in progress: its key is built in contention_begin. */
struct lb_frame {
	struct lb_key key;	/* key.lock == 0: being written */
	__u64 ts;
	__u32 sid_epoch;	/* stack epoch of key.stack_id */
	__u32 sw;		/* the task's context switches at the begin (spin_stale()) */
};

/* Task local storage: the task's waits in progress, innermost on top. */
struct lb_task {
	__u32 depth;
	__u32 pad;
	struct lb_frame f[LB_MAX_DEPTH];
};

/* Lock kinds as the kernel side tells them (values of enum mms_lock_kind). */
enum lb_kind {
	LB_KIND_UNKNOWN = 0,
	LB_KIND_MMAP = 2,
	LB_KIND_I_MMAP = 3,
	LB_KIND_ANON_VMA = 4,
	LB_KIND_SIGLOCK = 5,
	LB_KIND_SLAB = 6,
	LB_KIND_RQ = 7,		/* a runqueue's __lock; index = its CPU */
	LB_KIND_ZONE = 8,	/* zone->lock (the buddy allocator's); cache = zone name, index = node */
	LB_KIND_LRU = 9,	/* lruvec->lru_lock; index = node, cgroup = its memcg's cgroup id */
	LB_KIND_PTL = 10,	/* a split page-table lock (ptdesc->ptl) */
	LB_KIND_I_PAGES = 11,	/* address_space->i_pages' xa_lock (the page cache); file as I_MMAP */
	LB_KIND_PI = 12,	/* task_struct->pi_lock; cache = the task's comm */
	LB_KIND_I_RWSEM = 13,	/* inode->i_rwsem; file as I_MMAP */
	LB_KIND_I_LOCK = 14,	/* inode->i_lock; file as I_MMAP */
	LB_KIND_EXT4_DATA_SEM = 15,	/* ext4_inode_info->i_data_sem; file as I_MMAP */
	LB_KIND_EXT4_ES_LOCK = 16,	/* ext4_inode_info->i_es_lock; file as I_MMAP */
	LB_KIND_EXT4_RAW_LOCK = 17,	/* ext4_inode_info->i_raw_lock; file as I_MMAP */
	LB_KIND_F_POS = 18,	/* file->f_pos_lock; file as I_MMAP */
	LB_KIND_9P_CHAN = 19,	/* a 9p virtio transport channel's lock; cache = its mount tag */
	LB_KIND_I_PRIVATE = 20,	/* address_space->i_private_lock; file as I_MMAP */
	LB_KIND_D_LOCK = 21,	/* dentry->d_lock; the dentry's path as I_MMAP's */
	LB_KIND_9P_CLIENT = 22,	/* a 9p client's lock (over virtio); cache = the channel's tag */
	LB_KIND_JBD2 = 23,	/* a lock of ext4's jbd2 journal; index = the field, dev = the fs */
	LB_KIND_BLK = 24,	/* a block layer lock; index = the field, cache = the disk */
	LB_KIND_SLAB_NODE = 25,	/* kmem_cache_node->list_lock; cache = the slab cache */
	LB_KIND_PERCPU = 26,	/* set by user space only: a per-CPU variable (kallsyms, pcpu) */
};

/* What contention_begin found out about a lock address (LRU map by address). */
struct lb_lock_info {
	__u32 kind;		/* enum lb_kind */
	__u32 wait_lock;	/* the rwsem's internal wait_lock, not the rwsem */
	__u32 owner_tgid;
	__u32 seq;		/* iv_seq when named: renamed when older than an interval */
	char owner_comm[LB_COMM_LEN];
	char cache[LB_CACHE_LEN];	/* slab cache, zone (ZONE), comm (PI), tag (9P_CHAN) or "" */
	/*
	 * RQ: the CPU; ZONE, LRU: the NUMA node; the inode kinds of a block
	 * device's inode: its i_rdev (kernel dev_t); else the CPU of pcpu.
	 */
	__u32 index;
	__u32 pad1;
	__u64 cgroup;		/* LRU: the lruvec's memory cgroup (its cgroup id), 0: the node's own */
	/*
	 * Not named otherwise and not in a slab object: the lock less the
	 * per-CPU offset of CPU index, the nearest at or below it, plus 1 (0:
	 * none).  Inside the static per-CPU area that is the per-CPU symbol's
	 * address (user space looks it up in BTF and kallsyms).
	 */
	__u64 pcpu;
	/*
	 * With pcpu: where this CPU's runqueue is linked in the per-CPU
	 * section (its address less this CPU's per-CPU offset), plus 1 (0: not
	 * known).  The section is linked at 0 before 6.15 on x86-64 and in the
	 * kernel image since, so user space takes its start from here.
	 */
	__u64 pcpu_anchor;
	/* The inode kinds (I_MMAP ... F_POS): the file, names innermost first, up to the fs root if root set. */
	__u64 ino;
	__u32 dev;		/* kernel dev_t: major << 20 | minor */
	__u16 nr_names;
	__u16 root;
	char names[LB_PATH_DEPTH][LB_NAME_LEN];
};

/* Per-CPU counters (lost events by reason, and how things went). */
enum lb_counter {
	LB_C_TASK_SLOT,		/* no task storage, or nesting deeper than LB_MAX_DEPTH */
	LB_C_STACK,		/* bpf_get_stackid failed: wait kept without a stack */
	LB_C_TIME,		/* clock went backwards */
	LB_C_MAP_FULL,		/* aggregation map full */
	LB_C_PENDING,		/* pending ring full */
	LB_C_STALE,		/* frames whose end was missed, dropped (recursion misses) */
	LB_C_NO_MATCH,		/* end without a frame: filtered, or begin missed */
	LB_C_DRAINED,		/* records moved into the aggregation maps */
	LB_C_FAST_HIT,		/* stack ids the cache gave */
	LB_C_FAST_CHECKED,	/* ... of them also walked, to check the cache */
	LB_C_FAST_BAD,		/* ... and found different: the walk's id was used */
	LB_C_LEARN,		/* samples sent to user space */
	LB_C_FAST_MISS,		/* stacks the rules followed, not in the cache yet */
	LB_C_FAST_NORULE,	/* stacks with a frame without a rule */
	LB_C_FAST_NOWALK,	/* stacks not for the cache (interrupt stacks, too deep) */
	LB_C_HOLDER,		/* mmap_lock waits booked to their write holder (book_holder) */
	LB_C_NR
};

/*
 * contention_begin's own CPU time by its parts, per contention flags value
 * (index flags & 63): kept only when user space sets self_cost (a diagnostic,
 * MMSCOPE_SELF_COST=1; otherwise the verifier removes the code).  Whatever
 * the kernel holds while the handler runs (rwsem and mutex waits call it
 * under the lock's wait_lock, interrupts off) is held that much longer.
 */
#define LB_COST_FLAGS 64

/*
 * The begins the kernel calls with the lock's own wait_lock held (6.12 to
 * 6.18): rwsem_down_write_slowpath's (LCB_F_WRITE 4, interrupts off),
 * __mutex_lock_common's after queueing (LCB_F_MUTEX 32; its first begin,
 * LCB_F_MUTEX | LCB_F_SPIN, and those after a sleep are not), the rt_mutex
 * slow paths' (LCB_F_RT 8, interrupts off) and __down_common's (a
 * semaphore, 0, interrupts off).  The rwsem read slow path, percpu rwsems
 * and spinning locks begin without it.  Every nanosecond spent in such a
 * begin, the lock's releaser and its other waiters wait for the wait_lock.
 */
static inline int lb_under_wait_lock(__u32 flags)
{
	return flags == 4 || flags == 32 || flags == 8 || !flags;
}
struct lb_cost {
	__u64 n;		/* handler runs that reached the end */
	__u64 total;		/* ns from entry to the end */
	__u64 drain;		/* ... in draining this CPU's pending records */
	__u64 stack;		/* ... in taking the stack id */
	__u64 hits;		/* handler runs whose stack id came from the cache */
	__u64 hit_stack;	/* ... and their time taking it */
	__u64 name;		/* ... in naming the lock */
};

#endif
