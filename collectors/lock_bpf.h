/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What lock_bpf.bpf.c and lock_bpf.c share: map keys and values.  Fixed-width
 * types and char arrays only, no pointers.
 */
#ifndef MMSCOPE_LOCK_BPF_H
#define MMSCOPE_LOCK_BPF_H

#define LB_HIST_SLOTS 40	/* MMS_HIST_SLOTS */
#define LB_COMM_LEN 16
#define LB_MAX_DEPTH 8		/* nested waits per task (rwsem -> its wait_lock -> IRQ) */
#define LB_RING 512		/* pending records per CPU; a power of two */
#define LB_PATH_DEPTH 6		/* dentry names kept for an i_mmap_rwsem's file */
#define LB_NAME_LEN 32		/* one dentry name (longer ones are cut) */
#define LB_CACHE_LEN 32		/* slab cache name */
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
#define LB_STACK2 (1 << 30)
#define LB_EPOCH_SHIFT 24
#define LB_EPOCH_MASK 63
#define LB_STACK_IDX (((__u32)1 << LB_EPOCH_SHIFT) - 1)

/* One aggregation key: lock + call stack + task + contention flags. */
struct lb_key {
	__u64 lock;
	__s32 stack_id;		/* < 0: no stack (counted as lost) */
	__u32 flags;		/* contention_begin flags */
	__u32 pid;
	__u32 tgid;
	char comm[LB_COMM_LEN];
};

struct lb_stat {
	__u64 count;
	__u64 total;
	__u64 min;
	__u64 max;
	__u32 hist[LB_HIST_SLOTS];
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
	__u32 sepoch;		/* stack epoch of key.stack_id */
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
};

/* What contention_begin found out about a lock address (LRU map by address). */
struct lb_lock_info {
	__u32 kind;		/* enum lb_kind */
	__u32 wait_lock;	/* the rwsem's internal wait_lock, not the rwsem */
	__u32 owner_tgid;
	__u32 seq;		/* iv_seq when named: renamed when older than an interval */
	char owner_comm[LB_COMM_LEN];
	char cache[LB_CACHE_LEN];	/* slab cache, or "" */
	/* I_MMAP: the file, names innermost first, up to the fs root if root set. */
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
struct lb_cost {
	__u64 n;		/* handler runs that reached the end */
	__u64 total;		/* ns from entry to the end */
	__u64 drain;		/* ... in draining this CPU's pending records */
	__u64 stack;		/* ... in bpf_get_stackid */
	__u64 name;		/* ... in naming the lock */
};

#endif
