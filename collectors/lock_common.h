/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the lock-contention sources (lock_bpf.c, lock_perf.c) share in user
 * space: turning raw kernel stacks into interned "function+0xoff" stacks past
 * the lock primitives, naming locks from what the source could tell about
 * them, the -S / -L / -Y / -p / --tid / -G / -C filters, hiding addresses, and adding
 * a wait aggregate to the store together with the per-process mmap_lock
 * metrics it implies.
 *
 * One context per source; single-threaded like the rest of the event loop.
 * Ids handed out stay valid as long as the store's epoch does not change;
 * the context notices epoch changes itself and drops its caches.
 */
#ifndef MMSCOPE_LOCK_COMMON_H
#define MMSCOPE_LOCK_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include "mmscope/options.h"
#include "mmscope/sample.h"
#include "mmscope/store.h"

struct mms_ksyms;
struct mms_lock_common;

/*
 * Frames a wait's stack may have inside the lock primitives (the slow path,
 * the API function, a mutex's inner ones), taken on top of --max-stack and
 * --stack-skip: mms_lock_common_stack() drops them.
 */
#define MMS_LOCK_FRAMES 8

/* Frames of a wait's stack that are kept: --max-stack, 8 by default. */
static inline uint32_t mms_lock_kept_frames(const struct mms_options *o)
{
	return o->max_stack ? o->max_stack : 8;
}

/* Frames a source takes of a wait's stack: the kept ones past --stack-skip and the primitives. */
static inline uint32_t mms_lock_walk_frames(const struct mms_options *o)
{
	return mms_lock_kept_frames(o) + o->stack_skip + MMS_LOCK_FRAMES;
}

/* Positive return of the stack/lock functions: a filter (-S, -L) rejected the event. */
#define MMS_LC_SKIP 1

/*
 * ks may be NULL (no kallsyms: stacks become raw "0x..." frames, no static
 * names).  Fails with -EINVAL when an -L entry is malformed (message in
 * mms_lock_common_error()).
 */
int mms_lock_common_create(const struct mms_options *opts, const struct mms_ksyms *ks,
			   struct mms_lock_common **out);
void mms_lock_common_destroy(struct mms_lock_common *lc);
/*
 * The symbols for stacks and names, when they arrive after create() (a
 * source that loads its BPF while kallsyms is still being read).
 */
void mms_lock_common_set_ksyms(struct mms_lock_common *lc, const struct mms_ksyms *ks);
/* A cgroup's path by its id (the resolver the tasks' cgroups use); NULL when unknown. */
const char *mms_lock_common_cgroup_path(struct mms_lock_common *lc, uint64_t id);
/* Does create() need the symbols now (an -L entry that may be a symbol)? */
bool mms_lock_common_filters_need_ksyms(const struct mms_options *opts);
/* Last create() failure as a sentence for users ("" when none). */
const char *mms_lock_common_error(void);

/*
 * Raw kernel IPs of one contention, innermost first (as bpf_get_stackid and
 * PERF_SAMPLE_CALLCHAIN give them, without PERF_CONTEXT_* markers).  Drops the
 * lock-primitive frames and opts->stack_skip more, keeps opts->max_stack
 * frames and none past an interrupt's entry (mms_ksyms_is_irq_entry),
 * symbolises and interns them.  *stack_id = 0 when nothing is left.
 * Returns 0, MMS_LC_SKIP when -S rejects the stack, or -ENOMEM.
 * Cached by raw stack until the store's epoch changes, so call it freely.
 */
int mms_lock_common_stack(struct mms_lock_common *lc, struct mms_store *st, const uint64_t *ips,
			  uint32_t nr, uint32_t *stack_id);

/* What a source knows about a lock (all optional except addr). */
struct mms_lock_hint {
	uint64_t addr;		/* raw kernel address (hidden here if opts->hide_addrs) */
	uint32_t kind;		/* enum mms_lock_kind; MMS_LOCK_UNKNOWN: try kallsyms */
	uint32_t owner_tgid;	/* MMAP / SIGLOCK: the owning process */
	const char *owner_comm;
	const char *detail;	/* I_MMAP: file; SLAB: cache name (no '&'); else NULL */
	bool wait_lock;		/* MMAP/I_MMAP/ANON_VMA: the rwsem's wait_lock spinlock */
};

/*
 * Names and interns a lock: mmap_lock / i_mmap_rwsem / anon_vma / siglock by
 * kind ("mmap_lock.wait_lock" for the rwsem's internal spinlock), "&<cache>"
 * for SLAB, the data symbol for static locks (kallsyms; when none covers the
 * address the lock stays unnamed rather than guessed).
 * Returns 0, MMS_LC_SKIP when -L rejects the lock, or -ENOMEM.
 */
int mms_lock_common_lock(struct mms_lock_common *lc, struct mms_store *st,
			 const struct mms_lock_hint *h, uint32_t *lock_id);

/*
 * -L entries that are plain addresses (0x...) or kernel symbols, for a
 * filter in the kernel.  Returns how many were written, 0 without -L, or
 * -ENOENT when some entry is a name (mmap_lock, &task_struct ...): then the
 * kernel cannot filter by address alone and user space must (the lock()
 * call above always applies the whole -L).
 */
int mms_lock_common_filter_addrs(const struct mms_lock_common *lc, uint64_t *addrs, int max);

/* -Y: is a wait with these contention flags wanted? (true without -Y) */
bool mms_lock_common_type_ok(const struct mms_lock_common *lc, uint32_t flags);
/* Bit f set for every wanted flags value f (< 64); ~0 without -Y.  For BPF. */
uint64_t mms_lock_common_type_mask(const struct mms_lock_common *lc);

/*
 * -p / --tid / launched command: is this thread followed?  With opts->pid
 * (-p, or a launched command's pid) and without opts->no_inherit,
 * descendants of opts->pid are followed too, as perf's inherited events do
 * (checked through /proc and cached; a child that already exited cannot be
 * found there, so a source that sees fork events feeds them to
 * mms_lock_common_follow()).
 */
bool mms_lock_common_task_ok(struct mms_lock_common *lc, uint32_t tid, uint32_t tgid);
void mms_lock_common_follow(struct mms_lock_common *lc, uint32_t tgid);

/*
 * -G and -C.  The cgroup ids of -G (resolved at create(), which fails with
 * -ENOENT for a cgroup that does not exist): how many were written.
 */
int mms_lock_common_cgroup_ids(const struct mms_lock_common *lc, uint64_t *ids, int max);
/* Is a wait that began on cpu, in a task of cgroup id cgroup, wanted? */
bool mms_lock_common_target_ok(const struct mms_lock_common *lc, uint32_t cpu, uint64_t cgroup);
/*
 * Interns a waiting task with its cgroup's path (cgroup: the kernel's id,
 * 0: not known), for the Tasks view, --lock-cgroup and recordings.
 */
uint32_t mms_lock_common_task(struct mms_lock_common *lc, struct mms_store *st, uint32_t tid,
			      uint32_t tgid, const char *comm, uint64_t cgroup);

/*
 * With opts->hide_addrs: a keyed 64-bit hash of v (never 0 for v != 0);
 * otherwise v.  The key comes from this machine's machine-id and boot id,
 * so the same address hashes the same way in every run during one boot
 * (kernel addresses only mean something within one boot anyway) and cannot
 * be reversed by someone who reads a recording but not this machine.
 */
uint64_t mms_lock_common_hide(const struct mms_lock_common *lc, uint64_t v);

/*
 * Adds one wait aggregate (ids from the functions above) to the interval
 * being built, and for a lock of kind MMS_LOCK_MMAP also the metric
 * "mmap_lock.wait.read" or "mmap_lock.wait.write" (by MMS_LCB_READ /
 * MMS_LCB_WRITE of s->flags) of the lock's owner process.  0 or -errno.
 */
int mms_lock_common_add(struct mms_lock_common *lc, struct mms_store *st,
			const struct mms_lock_sample *s);

#endif
