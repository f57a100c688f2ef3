/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The user-space half of the perf lock collector (lock_perf.c): parsed
 * lock:contention_begin/end records (and the fork/comm/exit side band) go
 * into a pool, are put in time order, paired per thread (a per-thread stack
 * of waits in progress, since waits nest) and aggregated per lock + stack +
 * thread + flags until drain() moves the aggregates into the store.
 *
 * Why a pool and a time order: the kernel writes one ring per CPU, and a
 * wait that sleeps often begins on one CPU and ends on another.  Records are
 * only processed once every ring has been read past their time (the
 * horizon, see lock_perf.c), so an end is never seen before its begin.
 *
 * Nothing on the per-event path allocates once the tables have grown to the
 * workload's size.
 */
#ifndef MMSCOPE_LOCK_PERF_H
#define MMSCOPE_LOCK_PERF_H

#include <stdbool.h>
#include <stdint.h>

#include "mmscope/options.h"
#include "mmscope/sample.h"
#include "mmscope/store.h"

struct mms_ksyms;
struct mms_lock_common;
struct lp_engine;
struct tep_format_field;

enum lp_kind {
	LP_BEGIN,		/* contention_begin: addr, flags, stack */
	LP_END,			/* contention_end: addr */
	LP_FORK,		/* PERF_RECORD_FORK: tid/pid of the child, ppid/ptid */
	LP_COMM,		/* PERF_RECORD_COMM: comm of tid */
	LP_EXIT,		/* PERF_RECORD_EXIT: tid is gone */
};

#define LP_COMM_LEN 16

struct lp_event {
	uint64_t time;		/* CLOCK_MONOTONIC ns */
	uint32_t tid;
	uint32_t pid;		/* tgid */
	union {
		struct {
			uint64_t addr;
			uint32_t flags;
			uint32_t stack;		/* lp_engine_stack() id, 0: none */
			uint64_t cgroup;	/* the task's cgroup v2 id, 0: not known */
		} lock;
		struct {
			uint32_t ppid;
			uint32_t ptid;
		} fork;
		char comm[LP_COMM_LEN];
	};
	uint8_t kind;		/* enum lp_kind */
	uint16_t cpu;		/* tells idle tasks (all tid 0) apart */
};

/*
 * Record helpers shared by the two readers of these samples (lock_perf.c
 * from the rings, perfdata.c from a perf.data file).
 *
 * A tracepoint field found by name; false when the record is too short.
 */
bool lp_field_u64(struct tep_format_field *f, const void *raw, uint32_t raw_size, uint64_t *val);
/*
 * The kernel frames of a callchain into ips (at most max), without
 * PERF_CONTEXT_* markers and without user frames (past PERF_CONTEXT_USER);
 * returns how many.  The first frame is the tracepoint's caller: the lock
 * slow path, or, when more than one probe (a BPF tracer too) is attached,
 * the tracepoint's iterator traceiter (0: unknown), which is no caller: it
 * goes (ks names it; may be NULL).
 */
uint32_t lp_kernel_stack(uint64_t *ips, uint32_t max, const uint64_t *chain, uint64_t nr,
			 const struct mms_ksyms *ks, uint64_t traceiter);

/* Pool size (records waiting for the horizon) when opts does not say. */
#define LP_POOL_DEFAULT 16384

int lp_engine_create(const struct mms_options *opts, struct mms_lock_common *lc,
		     uint32_t pool_cap, struct lp_engine **out);
void lp_engine_destroy(struct lp_engine *e);

/* Room for one more record, or NULL when the pool is full (process first). */
struct lp_event *lp_engine_slot(struct lp_engine *e);
/* The record written into the last slot is complete. */
void lp_engine_push(struct lp_engine *e);
uint32_t lp_engine_pending(const struct lp_engine *e);

/*
 * Interns a raw kernel stack (innermost first, no PERF_CONTEXT_* markers)
 * into a local id > 0; 0 when nr == 0 or out of memory (counted as lost).
 */
uint32_t lp_engine_stack(struct lp_engine *e, const uint64_t *ips, uint32_t nr);

/*
 * Puts the pool in time order and processes every record with time <=
 * horizon (UINT64_MAX: all); later ones wait for the next call.
 */
void lp_engine_process(struct lp_engine *e, uint64_t horizon);

void lp_engine_lost(struct lp_engine *e, enum mms_lost_reason r, uint64_t n);

/*
 * Learns the names of the threads that exist now (of the followed process,
 * or all), so a thread that ends before the next drain is still named;
 * threads born later are named from fork and exec records.
 */
void lp_engine_seed_comms(struct lp_engine *e);

/*
 * Names threads from the records alone, never from /proc: for a capture
 * read from a file, whose threads are not this machine's.
 */
void lp_engine_set_offline(struct lp_engine *e);

/*
 * Moves the aggregates (and lost counts) into the interval being built in
 * st and starts over.  Waits still in progress stay for the next interval.
 */
int lp_engine_flush(struct lp_engine *e, struct mms_store *st);

#endif
