/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Options shared by every command and source: what to follow, which
 * backends, filters (with perf lock contention's meanings) and sizes.
 * Parsed once in main, then read-only.
 */
#ifndef MMSCOPE_OPTIONS_H
#define MMSCOPE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mmscope/knobs.h"

#define MMS_MAX_FILTERS 16
#define MMS_MAX_STACK 32
#define MMS_MAX_CPUS 4096		/* -C takes CPUs 0 .. MMS_MAX_CPUS - 1 */
#define MMS_CGROUP_LEN 256		/* a -G path, normalized ("/a/b") */

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
	bool lock_owner;		/* opt-in: each wait's lock owner and its stack (BPF source) */

	/* Filters, as perf lock contention -Y / -L / -S. */
	uint32_t types[MMS_MAX_FILTERS];	/* lock flag values accepted */
	int nr_types;
	const char *locks[MMS_MAX_FILTERS];	/* address, symbol or lock name */
	int nr_locks;
	const char *stack_match[MMS_MAX_FILTERS];	/* call-stack substrings */
	int nr_stack_match;
	/*
	 * Targets, as perf lock contention -G / -C: waits of tasks in these
	 * cgroups (v2 paths, exactly these, not their children), and waits
	 * that began on these CPUs.
	 */
	char cgroups[MMS_MAX_FILTERS][MMS_CGROUP_LEN];
	int nr_cgroups;
	const char *cpu_list;		/* -C as given ("0-3,6"), NULL: every CPU */
	uint64_t cpus[MMS_MAX_CPUS / 64];	/* bit n: CPU n, with cpu_list */
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

	/* The MMSCOPE_* environment knobs (mmscope/knobs.h), read once by main(). */
	struct mms_knobs knobs;
};

void mms_options_init(struct mms_options *o);

/*
 * Parses a CPU list ("0-3,6", as perf and taskset take it) into o->cpus and
 * o->cpu_list; CPUs must be below nr_cpus.  0, or -EINVAL with a sentence
 * in why.
 */
int mms_options_set_cpus(struct mms_options *o, const char *list, unsigned int nr_cpus,
			 char *why, size_t why_len);

/* Was a wait that began on this CPU asked for (-C)? */
static inline bool mms_options_cpu_ok(const struct mms_options *o, unsigned int cpu)
{
	return !o->cpu_list || (cpu < MMS_MAX_CPUS && ((o->cpus[cpu / 64] >> (cpu % 64)) & 1));
}

/* Is a task of this cgroup path ("" : not known) asked for (-G)? */
bool mms_options_cgroup_ok(const struct mms_options *o, const char *path);

#endif
