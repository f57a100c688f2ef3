/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Options shared by every command and source: what to follow, which
 * backends, filters (with perf lock contention's meanings) and sizes.
 * Parsed once in main, then read-only.
 */
#ifndef MMSCOPE_OPTIONS_H
#define MMSCOPE_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#define MMS_MAX_FILTERS 16
#define MMS_MAX_STACK 32

enum mms_backend_choice {
	MMS_SRC_AUTO,		/* best that works, falling back as the design says */
	MMS_SRC_BPF,
	MMS_SRC_PERF,
	MMS_SRC_TRACEPOINT,	/* patched-kernel tracepoints */
	MMS_SRC_FENTRY,
	MMS_SRC_INFERRED,
	MMS_SRC_STOCK,		/* stock tracepoints only (rmap: vmscan/migrate) */
	MMS_SRC_OFF,
};

struct mms_options {
	uint32_t interval_ms;		/* default 1000 */
	double duration_s;		/* 0: until stopped */

	/* Target: whole system, one process (-p), some threads (--tid), or a command. */
	int pid;			/* tgid, 0: system-wide */
	int tids[MMS_MAX_FILTERS];
	int nr_tids;
	char **cmd;			/* argv after "--", NULL-terminated, or NULL */
	bool no_inherit;

	/* Sources. */
	enum mms_backend_choice lock_src;
	enum mms_backend_choice vma_src;
	enum mms_backend_choice rmap_src;
	bool mmap_lock_hold;		/* opt-in: every mmap_lock acquisition */
	uint32_t mmap_hold_sample;	/* time 1 in N of them (a power of two; 0, 1: all) */
	bool vma_lock;			/* opt-in: page faults under the per-VMA lock / fallen back */

	/* Filters, as perf lock contention -Y / -L / -S. */
	uint32_t types[MMS_MAX_FILTERS];	/* lock flag values accepted */
	int nr_types;
	const char *locks[MMS_MAX_FILTERS];	/* address, symbol or lock name */
	int nr_locks;
	const char *stack_match[MMS_MAX_FILTERS];	/* call-stack substrings */
	int nr_stack_match;
	uint32_t max_stack;		/* frames kept per stack (default 8, <= MMS_MAX_STACK) */
	uint32_t stack_skip;		/* frames skipped past the lock primitives (default 0) */
	/*
	 * Set by a live report whose output never shows a caller (--by lock,
	 * task, process or type, no --stacks, no -S): the BPF lock source then
	 * takes no stacks, most of its per-wait cost.  Not a user option.
	 */
	bool no_stacks;

	/* Kernel map sizes (entries). */
	uint32_t map_entries;		/* aggregation keys, default 16384 */
	uint32_t stack_entries;		/* distinct stacks, default 8192 */
	uint32_t task_entries;		/* tasks waiting at once, default 16384 */

	/* Store. */
	uint32_t window;		/* intervals of history kept */

	bool hide_addrs;
	bool no_color;
};

void mms_options_init(struct mms_options *o);

#endif
