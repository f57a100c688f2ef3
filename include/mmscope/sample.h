/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sample model: what a collector emits for one interval.
 *
 * A sample is an aggregate (count, total, min, max and a log2 histogram) of
 * values seen during one interval under one key.  Lock waits are keyed by
 * lock + call stack + task; everything else (mmap_lock, VMA, rmap counters)
 * is a metric keyed by process + metric name + a small sub-key.  Collectors,
 * the store, the recorder and replay all speak this model; views read it
 * back from the store.
 */
#ifndef MMSCOPE_SAMPLE_H
#define MMSCOPE_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>

#include "mmscope/hist.h"

/* Contention flags as the kernel's lock:contention_begin reports them. */
enum mms_lock_flags {
	MMS_LCB_SPIN = 1U << 0,
	MMS_LCB_READ = 1U << 1,
	MMS_LCB_WRITE = 1U << 2,
	MMS_LCB_RT = 1U << 3,
	MMS_LCB_PERCPU = 1U << 4,
	MMS_LCB_MUTEX = 1U << 5,
};

/* Why an event did not make it into a sample.  Every one is counted. */
enum mms_lost_reason {
	MMS_LOST_TASK_SLOT,	/* no per-task wait slot (storage full or nesting too deep) */
	MMS_LOST_STACK,		/* call stack could not be taken */
	MMS_LOST_TIME,		/* end without begin, or clock went backwards */
	MMS_LOST_MAP_FULL,	/* aggregation map full */
	MMS_LOST_PENDING,	/* per-CPU pending ring full */
	MMS_LOST_RING,		/* perf ring buffer overflow (PERF_RECORD_LOST) */
	MMS_LOST_STORE,		/* interval held more rows than the store keeps */
	MMS_LOST_PARSE,		/* record could not be parsed */
	MMS_LOST_NR
};

/* One lock wait aggregate.  Ids refer to the store's interned tables. */
struct mms_lock_sample {
	uint32_t lock_id;	/* mms_store_lock(): address, name, kind */
	uint32_t stack_id;	/* 0: no stack */
	uint32_t task_id;	/* mms_store_task(): tid, tgid, comm */
	uint32_t flags;		/* enum mms_lock_flags of the wait */
	/*
	 * Who held the lock when the wait began (--lock-owner): mms_store_task()
	 * of the owner, 0 when unknown (a lock without an owner field, owners
	 * not asked for), a task of tid 0 named MMS_OWNER_READERS or
	 * MMS_OWNER_NONE for an rwsem without a writer; the owner's stack then,
	 * 0 when not taken.
	 */
	uint32_t owner_id;
	uint32_t owner_stack_id;
#define MMS_OWNER_READERS "<readers>"	/* owner_id's comm (tid 0): an rwsem readers hold */
#define MMS_OWNER_NONE "<none>"		/* ... an rwsem nobody held as the wait began */
	struct mms_stat wait;	/* nanoseconds */
};

/*
 * Processes that lived less than an interval (a fork+exec loop makes a
 * thousand a second) are shown together, one entry per name: the task of
 * such a group has tgid == tid >= MMS_TGID_SHORT, above any real pid
 * (PID_MAX_LIMIT is 4M), and the processes' name as comm.  Views show it as
 * "<comm>" without a pid, as atop shows exited processes.
 */
#define MMS_TGID_SHORT 0x80000000U

static inline bool mms_tgid_short(uint32_t tgid)
{
	return tgid >= MMS_TGID_SHORT;
}

/*
 * The group's tgid for a name: MMS_TGID_SHORT | 31 bits of its FNV-1a hash,
 * the same in every source and every recording, with no table to share.  Two
 * names of one hash (a chance of ~1 in 2^31 per pair) would share a process
 * row, each keeping its name as its task's comm.
 */
static inline uint32_t mms_tgid_short_of(const char *comm)
{
	uint32_t h = 2166136261U;

	for (const char *c = comm; *c; c++)
		h = (h ^ (uint8_t)*c) * 16777619U;
	return MMS_TGID_SHORT | (h & 0x7fffffffU);
}

/*
 * One metric aggregate: "mmap_lock.wait.write" of process 42, "vma.split",
 * "rmap.batch" of folio order 9 ...  Counters use count only.
 */
struct mms_metric_sample {
	uint32_t proc_id;	/* mms_store_task() of the process (tid == tgid), 0: system */
	uint32_t metric_id;	/* interned metric name */
	uint32_t sub;		/* metric-specific sub-key (folio order, syscall nr ...) */
	uint32_t pad;
	struct mms_stat stat;
};

/* struct mms_stat with mms_stat_add, _add_n, _merge and mms_hist_slot: mmscope/hist.h. */
void mms_stat_init(struct mms_stat *s);
/* Lower bound of a histogram slot. */
uint64_t mms_hist_slot_low(unsigned int slot);
/*
 * p-th percentile (0 < p <= 100) estimated from the histogram by linear
 * interpolation inside the slot, clamped to [min, max].  0 when empty.
 */
uint64_t mms_stat_percentile(const struct mms_stat *s, double p);
static inline uint64_t mms_stat_avg(const struct mms_stat *s)
{
	return s->count ? s->total / s->count : 0;
}

const char *mms_lost_reason_name(enum mms_lost_reason r);
/* perf lock contention's name for a flags combination ("rwsem:W", "spinlock" ...). */
const char *mms_lock_type_name(uint32_t flags);
/*
 * Parses a -Y type name ("rwsem:W", or a family such as "rwsem") into the
 * flag values it stands for; returns how many, or -EINVAL when unknown.
 */
int mms_lock_type_parse(const char *name, uint32_t *out, int max);

#endif
