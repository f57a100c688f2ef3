// SPDX-License-Identifier: GPL-2.0
/*
 * Lock contention from tp_btf/contention_begin + contention_end, aggregated
 * in the kernel (lock_bpf.bpf.c explains the kernel side).  This is the
 * user-space half: load and attach, then once per interval flip the
 * generation, drain every CPU's pending ring, and move the old generation's
 * aggregates into the store with names from lock_common.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf_load.h"
#include "lock_bpf.h"
#include "lock_bpf.skel.h"
#include "lock_common.h"
#include "mm_holders.h"
#include "short_procs.h"
#include "stack_rules.h"
#include "mmscope/cgroup.h"
#include "mmscope/knobs.h"
#include "mmscope/collectors.h"
#include "mmscope/hash.h"
#include "mmscope/ksyms.h"
#include "mmscope/store.h"

_Static_assert(sizeof(struct lb_hop) == sizeof(uint64_t), "a rule is one 8-byte store");

#define HOP_TAB_BYTES ((size_t)LB_HOP_SLOTS * sizeof(struct lb_hop_slot))
/* Each aggregation map preallocated up to this size (key, element, a value per CPU). */
#define AGG_PREALLOC_MAX ((uint64_t)16 << 20)
/* Owners' stacks taken asleep (--lock-owner); the map is emptied when half full. */
#define LB_OSTACKS 4096
#define ROW_TGID_WORDS ((4U << 20) / 64)	/* PID_MAX_LIMIT bits */
/* A stack's frames above the lock primitives: the JITed program, bpf_trace_run2 ... */
#define LB_TRACE_FRAMES 4
_Static_assert(sizeof(struct mms_stat) % 8 == 0, "per-CPU values are 8-byte strided");

enum { PROG_BEGIN, PROG_END, PROG_FORK, PROG_EXIT, NR_LINKS };

/* Raw stack id -> store stack id, valid for one store epoch. */
struct stack_slot {
	uint64_t epoch;		/* store epoch + 1; 0: empty */
	uint32_t id;
	bool skip;
	bool seen;		/* the map holds it: counted in fill */
};

/* A lock's store id, for one drain. */
struct lock_slot {
	uint32_t id;
	bool skip;
};

struct mount_ent {
	uint32_t dev;		/* kernel encoding: major << 20 | minor */
	char root[256];		/* subtree of the fs mounted there */
	char dir[512];
};

struct lb_src {
	struct lock_bpf *skel;
	struct bpf_link *links[NR_LINKS];
	struct mms_lock_common *lc;
	const struct mms_options *opts;
	const struct mms_ksyms *ks;
	int ncpus;			/* possible CPUs: per-CPU value stride */
	uint32_t stack_depth;		/* frames per kernel stack */

	uint64_t counters_prev[LB_C_NR];
	uint64_t misses_prev[2];

	/*
	 * Stack ids of both banks (lock_bpf.h), each bank's first map then
	 * its second; fill: stacks each map holds (as far as drains saw).
	 */
	struct stack_slot *stacks;
	uint32_t nr_stack_slots, bank_slots, map1_slots;
	uint32_t stack_epoch_now;	/* the stack epoch user space set last */
	uint32_t fill[2][2];
	uint64_t *ips;			/* one raw stack */

	struct lock_slot *locks;	/* a cache of the drain's locks, found through lock_idx */
	uint32_t nr_locks, max_locks;
	struct mms_hash lock_idx;	/* lock address -> locks index + 1 */

	struct lb_key *keys;		/* batch buffers */
	struct mms_stat *vals;		/* per CPU, as the maps hold them */
	uint32_t batch;

	struct mount_ent *mounts;
	uint32_t nr_mounts;
	bool mounts_fresh;		/* reread at most once per drain */

	/* Static per-CPU variables, from vmlinux BTF at the first per-CPU lock (pcpu_btf_load()). */
	struct pcpu_var *pcpu_vars;
	uint32_t nr_pcpu_vars;
	char *pcpu_names;
	int64_t pcpu_rq_off;		/* runqueues' offset in the section, -1: not in BTF */
	bool pcpu_tried;

	/* System-wide: short-lived processes' exits (NULL: rows of their own). */
	struct mms_short *dead;

	/* Owners' stacks taken asleep (ostacks key -> store stack id + 1), per store epoch. */
	struct mms_hash ostack_idx;
	uint64_t ostack_epoch;
	uint32_t ostack_seen;		/* keys looked up since the map was last emptied */

	/* The stack cache (lock_bpf.bpf.c): NULL rules when it is off. */
	struct mms_stack_rules *rules;
	struct ring_buffer *learn_rb;
	uint64_t learned;		/* samples read from learn_rb */
	struct lb_hop_slot *hop_tab;	/* the hops map, mmap'ed */
	bool cache_changed;		/* a rule was taken back: empty the cache */
	bool cache_off;			/* a check found a wrong id: never again */
};

static uint32_t roundup_pow2(uint32_t v)
{
	uint32_t r = 1;

	while (r < v && r < (1U << 31))
		r <<= 1;
	return r;
}

/* The second stack map, for stacks whose bucket in the first was taken. */
static uint32_t stacks2_entries(const struct mms_options *o)
{
	return o->stack_entries / 4 ? o->stack_entries / 4 : 1;
}

/* Stack map `second` (0: first, 1: the collisions') of bank `bank`. */
static struct bpf_map *stack_map(const struct lb_src *lb, uint32_t bank, uint32_t second)
{
	struct lock_bpf *skel = lb->skel;

	return bank ? (second ? skel->maps.stacks2_b : skel->maps.stacks_b) :
		      (second ? skel->maps.stacks2 : skel->maps.stacks);
}

static int lb_create(struct mms_source *src, const struct mms_options *opts)
{
	struct lb_src *lb = calloc(1, sizeof(*lb));
	int err;

	if (!lb)
		return -ENOMEM;
	src->priv = lb;
	lb->opts = opts;
	if (!opts->map_entries || !opts->stack_entries || !opts->task_entries)
		return mms_source_fail(src, -EINVAL, "lock-bpf: map sizes must be at least 1 "
				       "(--map-nr-entries, --stack-entries, --task-entries)");
	lb->ncpus = libbpf_num_possible_cpus();
	if (lb->ncpus <= 0)
		return mms_source_fail(src, lb->ncpus ? lb->ncpus : -EINVAL, "lock-bpf: cannot "
				       "count the CPUs (/sys/devices/system/cpu/possible)");
	/* Symbols are read meanwhile (mms_collectors_ksyms_prefetch): wanted at start. */
	if (mms_lock_common_filters_need_ksyms(opts))
		lb->ks = mms_collectors_ksyms();
	err = mms_lock_common_create(opts, lb->ks, &lb->lc);
	if (err)
		return mms_source_fail(src, err, "lock-bpf: %s", mms_lock_common_error());
	lb->map1_slots = roundup_pow2(opts->stack_entries);
	lb->bank_slots = lb->map1_slots + roundup_pow2(stacks2_entries(opts));
	lb->nr_stack_slots = 2 * lb->bank_slots;
	lb->stacks = calloc(lb->nr_stack_slots, sizeof(*lb->stacks));
	lb->ips = calloc(LB_MAX_STACK, sizeof(*lb->ips));
	if (!lb->stacks || !lb->ips)
		return -ENOMEM;
	return 0;
}

static int explain_load_error(struct mms_source *src, int err, const char *what)
{
	const char *libbpf_msg = mms_bpf_load_log_first();	/* libbpf's own words */
	struct stat sb;

	if (stat("/sys/kernel/btf/vmlinux", &sb))
		return mms_source_fail(src, err, "lock-bpf: the kernel has no BTF "
				       "(/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF): tp_btf "
				       "programs cannot load; use --source perf");
	if ((err == -EPERM || err == -EACCES) && geteuid() != 0)
		return mms_source_fail(src, err, "lock-bpf: %s needs CAP_BPF and CAP_PERFMON: run "
				       "as root, or replay a recording", what);
	if (err == -ESRCH || err == -ENOENT)
		return mms_source_fail(src, err, "lock-bpf: the kernel has no lock:contention_"
				       "begin/end tracepoints in its BTF (Linux >= 5.19 needed): "
				       "%s; use --source perf",
				       libbpf_msg[0] ? libbpf_msg : strerror(-err));
	if (err == -EPERM || err == -EACCES)
		return mms_source_fail(src, err, "lock-bpf: %s refused by the kernel (%s): %s; try "
				       "--source perf", what, strerror(-err),
				       libbpf_msg[0] ? libbpf_msg : "lockdown or BPF LSM policy?");
	return mms_source_fail(src, err, "lock-bpf: %s failed: %s%s%s", what, strerror(-err),
			       libbpf_msg[0] ? ": " : "", libbpf_msg);
}

/* System-wide, short-lived processes are shown together per name (short_exit.h). */
static bool short_procs_grouped(const struct mms_options *o)
{
	return o->pid <= 0 && !o->nr_tids;
}

/*
 * MMSCOPE_STACK_CHECK=N: 1 cache hit in N is also walked and compared
 * (default 64; 1 checks every hit).  MMSCOPE_STACK_CACHE=0: no cache.
 */
static uint32_t check_every(const struct lb_src *lb)
{
	return lb->opts->knobs.stack_check;
}

static bool cache_wanted(const struct lb_src *lb)
{
	/* Walks follow LB_FAST_MAX frames: deeper stacks (--max-stack over 48) unwind. */
	return !lb->opts->no_stacks && lb->stack_depth <= LB_FAST_MAX && lb->opts->knobs.stack_cache;
}

/* Puts a rule in the kernel's table (lock_bpf.h): the rule first, then its address. */
static int publish_rule(void *arg, uint64_t ra, const struct lb_hop *hop)
{
	struct lb_src *lb = arg;
	struct lb_hop_slot *tab = lb->hop_tab;
	union {
		struct lb_hop h;
		uint64_t v;
	} u = { .v = 0 };

	if (hop)
		u.h = *hop;
	for (uint32_t p = 0; p < LB_HOP_PROBE; p++) {
		struct lb_hop_slot *e = &tab[(hop_home(ra) + p) & (LB_HOP_SLOTS - 1)];
		uint64_t have = __atomic_load_n(&e->ra, __ATOMIC_RELAXED);

		if (have && have != ra)
			continue;
		if (!have && !hop)
			return 0;
		__atomic_store_n(&e->v, u.v, __ATOMIC_RELEASE);
		__atomic_store_n(&e->ra, ra, __ATOMIC_RELEASE);
		return 0;
	}
	return -ENOSPC;
}

static void unmap_hops(struct lb_src *lb)
{
	if (lb->hop_tab)
		munmap(lb->hop_tab, HOP_TAB_BYTES);
	lb->hop_tab = NULL;
}

static int on_sample(void *ctx, void *data, size_t size)
{
	struct lb_src *lb = ctx;

	if (size >= sizeof(struct lb_learn) && mms_stack_rules_add(lb->rules, data))
		lb->cache_changed = true;
	return 0;
}

/* Samples read so far (each a walk): rules are young until this many. */
#define LEARN_YOUNG 2000
/* Samples the kernel may send before user space has read the last ones. */
#define LEARN_BATCH 128

static bool rules_young(const struct lb_src *lb)
{
	return lb->learned < LEARN_YOUNG;
}

/*
 * Samples the kernel may send next: many while the rules are young, then a
 * few an interval (stacks the rules cannot follow keep asking; each is a walk).
 */
static int learn_budget(const struct lb_src *lb)
{
	return rules_young(lb) ? LEARN_BATCH : 16;
}

/*
 * Learns from the samples sent so far and tells the kernel where walks
 * start.  A rule taken back, or a new start, makes a new generation: keys
 * made under other rules may name other stacks.  (A rule added only lets
 * walks go on where they stopped: no key changes.)
 */
static void learn_rules(struct lb_src *lb)
{
	struct lock_bpf__bss *bss = lb->skel->bss;
	uint32_t s0, fk;

	lb->learned += (uint64_t)ring_buffer__consume(lb->learn_rb);
	if (lb->cache_off)
		return;
	mms_stack_rules_start(lb->rules, &s0, &fk);
	if (lb->cache_changed || s0 != bss->walk_start || fk != bss->walk_key_frames) {
		__atomic_store_n(&bss->walk_key_frames, 0, __ATOMIC_SEQ_CST);
		__atomic_store_n(&bss->walk_start, s0, __ATOMIC_SEQ_CST);
		__atomic_store_n(&bss->rules_gen, bss->rules_gen + 1, __ATOMIC_SEQ_CST);
		__atomic_store_n(&bss->walk_key_frames, fk, __ATOMIC_SEQ_CST);
		lb->cache_changed = false;
	}
}

/*
 * Once per interval: learn, give the kernel the next interval's sample
 * budget.  A wrong id found by a check turns the cache off for the session.
 */
static void stack_cache_update(struct lb_src *lb)
{
	struct lock_bpf__bss *bss = lb->skel->bss;

	if (!lb->rules)
		return;
	if (!lb->cache_off && lb->counters_prev[LB_C_FAST_BAD]) {
		lb->cache_off = true;
		__atomic_store_n(&bss->walk_key_frames, 0, __ATOMIC_SEQ_CST);
	}
	learn_rules(lb);
	__atomic_store_n(&bss->learn_budget, lb->cache_off ? 0 : learn_budget(lb),
			 __ATOMIC_SEQ_CST);
}

/*
 * While the rules are young the samples are read as they come (the learn
 * ring's descriptor is polled), so a session's first interval already
 * walks with what its first waits taught, and the budget is given back
 * as soon as they are read: a new session unwinds every wait only until
 * its stacks are learned, not for a whole interval.
 */
static int lb_fd(struct mms_source *src)
{
	struct lb_src *lb = src->priv;

	return lb && lb->learn_rb && !lb->cache_off ? ring_buffer__epoll_fd(lb->learn_rb) : -1;
}

static int lb_poll_in(struct mms_source *src)
{
	struct lb_src *lb = src->priv;

	if (!lb || !lb->learn_rb)
		return 0;
	learn_rules(lb);
	if (!lb->cache_off && rules_young(lb))
		__atomic_store_n(&lb->skel->bss->learn_budget, learn_budget(lb), __ATOMIC_SEQ_CST);
	return 0;
}

/* -C: the cpu_filter map's size (one entry at least, even unused). */
static uint32_t nr_cpus_wanted(const struct mms_options *o)
{
	uint32_t n = 0;

	for (uint32_t c = 0; o->cpu_list && c < MMS_MAX_CPUS; c++)
		n += mms_options_cpu_ok(o, c);
	return n ? n : 1;
}

/* Sizes, knobs and filters, between open and load. */
static int configure(struct mms_source *src, struct lb_src *lb)
{
	const struct mms_options *o = lb->opts;
	struct lock_bpf *skel = lb->skel;
	uint64_t addrs[MMS_MAX_FILTERS];
	int err = 0;

	/*
	 * What user space keeps of a stack, past the tracing machinery and the
	 * lock primitives: deeper frames would cost every unwind and cache walk
	 * and only split one stack into several keys.
	 */
	lb->stack_depth = mms_lock_walk_frames(o) + LB_TRACE_FRAMES;
	if (lb->stack_depth > LB_MAX_STACK)
		lb->stack_depth = LB_MAX_STACK;
	err = err ?: bpf_map__set_max_entries(skel->maps.agg0, o->map_entries);
	err = err ?: bpf_map__set_max_entries(skel->maps.agg1, o->map_entries);
	/*
	 * Preallocated where that takes little memory: a new key (every new
	 * task that waits) then costs a free-list pop in the drain, not an
	 * allocation of a value per CPU.
	 */
	if ((uint64_t)o->map_entries * ((uint64_t)lb->ncpus * sizeof(struct mms_stat) + 128) <=
	    AGG_PREALLOC_MAX) {
		err = err ?: bpf_map__set_map_flags(skel->maps.agg0, bpf_map__map_flags(
							    skel->maps.agg0) & ~BPF_F_NO_PREALLOC);
		err = err ?: bpf_map__set_map_flags(skel->maps.agg1, bpf_map__map_flags(
							    skel->maps.agg1) & ~BPF_F_NO_PREALLOC);
	}
	err = err ?: bpf_map__set_max_entries(skel->maps.lock_infos, o->map_entries);
	/* Without stacks the maps stay, unused: one entry each. */
	for (uint32_t i = 0; i < 4; i++) {
		struct bpf_map *m = stack_map(lb, i / 2, i % 2);

		err = err ?: bpf_map__set_max_entries(m, o->no_stacks ? 1 : i % 2 ?
						      stacks2_entries(o) : o->stack_entries);
		err = err ?: bpf_map__set_value_size(m, lb->stack_depth * sizeof(uint64_t));
	}
	err = err ?: bpf_map__set_max_entries(skel->maps.follow_tgids, o->task_entries);
	/* A bit for every pid there can be (PID_MAX_LIMIT on 64-bit: 512 KiB), or unused. */
	err = err ?: bpf_map__set_max_entries(skel->maps.row_tgids,
					      short_procs_grouped(o) ? ROW_TGID_WORDS : 1);
	err = err ?: bpf_map__set_max_entries(skel->maps.cpu_filter, nr_cpus_wanted(o));
	/* Owners: one entry each unless asked for. */
	err = err ?: bpf_map__set_max_entries(skel->maps.acquirers,
					      o->lock_owner ? o->map_entries : 1);
	err = err ?: bpf_map__set_max_entries(skel->maps.ostacks,
					      o->lock_owner ? LB_OSTACKS : 1);
	/* With --mmap-hold the hold programs' write holders (mm_holders.h), one map. */
	err = err ?: o->lock_owner && o->mmap_lock_hold ?
		     mms_bpf_share_map(skel->maps.mm_holders) :
		     bpf_map__set_max_entries(skel->maps.mm_holders, 1);
	if (err)
		return mms_source_fail(src, err, "lock-bpf: sizing maps failed: %s",
				       strerror(-err));

	skel->rodata->filter_types = o->nr_types > 0;
	skel->rodata->type_mask = mms_lock_common_type_mask(lb->lc);
	skel->rodata->filter_tids = o->nr_tids > 0;
	skel->rodata->filter_tgids = o->pid > 0;
	skel->rodata->filter_cpus = o->cpu_list != NULL;
	skel->rodata->filter_cgroups = o->nr_cgroups > 0;
	skel->rodata->know_cgroups = mms_cgroups_in_kernel();
	skel->rodata->self_cost = o->knobs.self_cost;
	skel->rodata->empty_handlers = o->knobs.empty_handlers;
	skel->rodata->no_stacks = o->no_stacks;
	skel->rodata->lock_owner = o->lock_owner;
	skel->rodata->know_holders = o->lock_owner && o->mmap_lock_hold;
	skel->rodata->stack_bytes = lb->stack_depth * sizeof(uint64_t);
	skel->rodata->thread_size = (uint64_t)sysconf(_SC_PAGESIZE) * 4;
	skel->rodata->check_every = check_every(lb);
	/* Names (mmap_lock, &task_struct ...) can only be matched in user space. */
	skel->rodata->filter_locks = mms_lock_common_filter_addrs(lb->lc, addrs,
								  MMS_MAX_FILTERS) > 0;
	/* Children forked since start are followed, as perf's inherited events are. */
	bpf_program__set_autoload(skel->progs.follow_fork, o->pid > 0 && !o->no_inherit);
	/* A followed process and its children keep rows of their own: the user asked. */
	bpf_program__set_autoload(skel->progs.short_exit, short_procs_grouped(o));
	return 0;
}

static int fill_filters(struct mms_source *src, struct lb_src *lb)
{
	const struct mms_options *o = lb->opts;
	uint64_t addrs[MMS_MAX_FILTERS];
	uint8_t one = 1;
	int n, err = 0;

	for (int i = 0; i < o->nr_tids && !err; i++) {
		uint32_t tid = (uint32_t)o->tids[i];

		err = bpf_map__update_elem(lb->skel->maps.follow_tids, &tid, sizeof(tid), &one,
					   sizeof(one), BPF_ANY);
	}
	if (o->pid > 0 && !err) {
		uint32_t tgid = (uint32_t)o->pid;

		err = bpf_map__update_elem(lb->skel->maps.follow_tgids, &tgid, sizeof(tgid), &one,
					   sizeof(one), BPF_ANY);
	}
	n = mms_lock_common_filter_addrs(lb->lc, addrs, MMS_MAX_FILTERS);
	for (int i = 0; i < n && !err; i++)
		err = bpf_map__update_elem(lb->skel->maps.lock_filter, &addrs[i], sizeof(addrs[i]),
					   &one, sizeof(one), BPF_ANY);
	n = mms_lock_common_cgroup_ids(lb->lc, addrs, MMS_MAX_FILTERS);
	for (int i = 0; i < n && !err; i++)
		err = bpf_map__update_elem(lb->skel->maps.cgroup_filter, &addrs[i],
					   sizeof(addrs[i]), &one, sizeof(one), BPF_ANY);
	for (uint32_t c = 0; o->cpu_list && c < MMS_MAX_CPUS && !err; c++)
		if (mms_options_cpu_ok(o, c))
			err = bpf_map__update_elem(lb->skel->maps.cpu_filter, &c, sizeof(c), &one,
						   sizeof(one), BPF_ANY);
	if (err)
		return mms_source_fail(src, err, "lock-bpf: setting up filters failed: %s",
				       strerror(-err));
	return 0;
}

static int attach(struct mms_source *src, struct lb_src *lb)
{
	struct bpf_program *progs[NR_LINKS] = {
		lb->skel->progs.contention_begin,
		lb->skel->progs.contention_end,
		lb->skel->progs.follow_fork,
		lb->skel->progs.short_exit,
	};

	/* fork first, end before begin: no begin goes unfollowed or unended. */
	for (int i = NR_LINKS - 1; i >= 0; i--) {
		if (!bpf_program__autoload(progs[i]) || lb->links[i])
			continue;
		lb->links[i] = bpf_program__attach(progs[i]);
		if (!lb->links[i]) {
			int err = -errno;

			return explain_load_error(src, err, "attaching tp_btf programs");
		}
	}
	return 0;
}

static void detach(struct lb_src *lb)
{
	/* begin first: ends of waits already begun still find their frames. */
	for (int i = 0; i < NR_LINKS; i++) {
		bpf_link__destroy(lb->links[i]);
		lb->links[i] = NULL;
	}
}

static int lb_prepare(struct mms_source *src)
{
	struct lb_src *lb = src->priv;
	int err;

	if (lb->skel)
		return 0;
	mms_bpf_load_log_begin();
	lb->skel = lock_bpf__open();
	if (!lb->skel) {
		err = explain_load_error(src, -errno, "opening the BPF object");
		goto out;
	}
	err = configure(src, lb);
	if (err)
		goto out;
	err = lock_bpf__load(lb->skel);
	if (err) {
		err = explain_load_error(src, err, "loading tp_btf programs");
		goto out;
	}
	err = fill_filters(src, lb);
	if (err)
		goto out;
	if (cache_wanted(lb)) {
		void *tab = mmap(NULL, HOP_TAB_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED,
				 bpf_map__fd(lb->skel->maps.hops), 0);

		lb->hop_tab = tab == MAP_FAILED ? NULL : tab;
		lb->rules = lb->hop_tab ? mms_stack_rules_new(lb->stack_depth, publish_rule, lb) :
					  NULL;
		lb->learn_rb = lb->rules ? ring_buffer__new(bpf_map__fd(lb->skel->maps.learn_ring),
							    on_sample, lb, NULL) : NULL;
		/* Without them (no memory) every wait walks its stack, as before. */
		if (!lb->learn_rb) {
			mms_stack_rules_free(lb->rules);
			lb->rules = NULL;
			unmap_hops(lb);
		}
	}
	if (short_procs_grouped(lb->opts)) {
		lb->dead = mms_short_new(bpf_map__fd(lb->skel->maps.lb_exits));
		/* Without it (no memory) every process keeps rows of its own. */
		if (lb->dead)
			lb->skel->bss->lb_short_ns = (uint64_t)lb->opts->interval_ms * 1000000;
	}
	/* Really attach once, so `check` tells the truth; start() attaches again. */
	err = attach(src, lb);
	detach(lb);
out:
	mms_bpf_load_log_end();
	if (err) {
		mms_short_free(lb->dead);
		lb->dead = NULL;
		ring_buffer__free(lb->learn_rb);
		lb->learn_rb = NULL;
		mms_stack_rules_free(lb->rules);
		lb->rules = NULL;
		unmap_hops(lb);
		lock_bpf__destroy(lb->skel);
		lb->skel = NULL;
	}
	return err;
}

static int drain_cpus(struct mms_source *src, struct lb_src *lb);
static void read_counters(struct lb_src *lb, struct mms_store *st);

/* Empties a hash map nothing writes to. */
static void clear_map(struct bpf_map *map)
{
	struct lb_key key;
	int fd = bpf_map__fd(map);

	while (!bpf_map_get_next_key(fd, NULL, &key))
		if (bpf_map_delete_elem(fd, &key))
			break;
}

static int lb_start(struct mms_source *src)
{
	struct lb_src *lb = src->priv;
	int err;

	if (!lb->skel)
		return mms_source_fail(src, -EINVAL, "lock-bpf: started before prepare");
	lb->ks = mms_collectors_ksyms();
	mms_lock_common_set_ksyms(lb->lc, lb->ks);
	/* Whatever prepare's attach test caught is not part of the session. */
	err = drain_cpus(src, lb);
	if (err)
		return err;
	clear_map(lb->skel->maps.agg0);
	clear_map(lb->skel->maps.agg1);
	read_counters(lb, NULL);
	lb->skel->bss->gen = 0;
	lb->skel->bss->iv_seq = 1;
	lb->skel->bss->learn_budget = lb->rules && !lb->cache_off ? learn_budget(lb) : 0;
	mms_bpf_load_log_begin();
	err = attach(src, lb);
	mms_bpf_load_log_end();
	if (err)
		detach(lb);
	return err;
}

static void lb_stop(struct mms_source *src)
{
	detach(src->priv);
}

/* Runs the drain program on every CPU until none has a half-written record. */
static int drain_cpus(struct mms_source *src, struct lb_src *lb)
{
	int fd = bpf_program__fd(lb->skel->progs.drain);

	for (int cpu = 0; cpu < lb->ncpus; cpu++) {
		for (int tries = 0;; tries++) {
			LIBBPF_OPTS(bpf_test_run_opts, o, .flags = BPF_F_TEST_RUN_ON_CPU,
				    .cpu = (uint32_t)cpu);
			int err = bpf_prog_test_run_opts(fd, &o);

			if (err == -ENXIO)
				break;	/* offline CPU */
			if (err)
				return mms_source_fail(src, err, "lock-bpf: draining CPU %d "
						       "failed: %s", cpu, strerror(-err));
			/* Busy: we interrupted a contention_end or a drain there. */
			if (!o.retval || tries >= 1000)
				break;
			if (tries > 10)
				sched_yield();
		}
	}
	return 0;
}

/* Adds what was lost since the last call to st (NULL: only take the baseline). */
static void read_counters(struct lb_src *lb, struct mms_store *st)
{
	static const enum mms_lost_reason reason[LB_C_NR] = {
		[LB_C_TASK_SLOT] = MMS_LOST_TASK_SLOT,
		[LB_C_STACK] = MMS_LOST_STACK,
		[LB_C_TIME] = MMS_LOST_TIME,
		[LB_C_MAP_FULL] = MMS_LOST_MAP_FULL,
		[LB_C_PENDING] = MMS_LOST_PENDING,
	};
	struct bpf_program *progs[2] = { lb->skel->progs.contention_begin,
					 lb->skel->progs.contention_end };
	uint64_t vals[lb->ncpus];

	for (uint32_t c = 0; c < LB_C_NR; c++) {
		uint64_t sum = 0;

		if (bpf_map__lookup_elem(lb->skel->maps.counters, &c, sizeof(c), vals,
					 sizeof(vals), 0))
			continue;
		for (int i = 0; i < lb->ncpus; i++)
			sum += vals[i];
		if (st && c <= LB_C_PENDING && sum > lb->counters_prev[c])
			mms_store_add_lost(st, reason[c], sum - lb->counters_prev[c]);
		lb->counters_prev[c] = sum;
	}
	/*
	 * A program the kernel skipped because it was already running on that
	 * CPU (an IRQ's contention during ours): a wait never begun or ended.
	 */
	for (int i = 0; i < 2; i++) {
		struct bpf_prog_info info = { 0 };
		uint32_t len = sizeof(info);

		if (bpf_obj_get_info_by_fd(bpf_program__fd(progs[i]), &info, &len))
			continue;
		if (st && info.recursion_misses > lb->misses_prev[i])
			mms_store_add_lost(st, MMS_LOST_TIME,
					   info.recursion_misses - lb->misses_prev[i]);
		lb->misses_prev[i] = info.recursion_misses;
	}
}

/*
 * How many leading frames belong to the tracing machinery (the JITed
 * program, bpf_trace_run2 ...) rather than to the kernel's lock code.  The
 * tracepoints fire inside the lock primitives, so everything above the
 * first lock frame is machinery; without kallsyms nothing can be told.
 */
static uint32_t machinery_frames(const struct lb_src *lb, const uint64_t *ips, uint32_t nr)
{
	for (uint32_t i = 0; i < nr && i < 8; i++)
		if (mms_ksyms_is_lock_func(lb->ks, ips[i]))
			return i;
	return 0;
}

static int resolve_stack(struct lb_src *lb, struct mms_store *st, int32_t sid, uint32_t *id)
{
	uint64_t epoch = mms_store_epoch(st) + 1;
	uint32_t age, bank, map2, idx, nr = 0, first, slot_nr;
	struct bpf_map *map;
	struct stack_slot *slot;
	int err;

	*id = 0;
	if (sid < 0)
		return 0;
	age = (lb->stack_epoch_now - ((uint32_t)sid >> LB_EPOCH_SHIFT)) & LB_EPOCH_MASK;
	if (age >= 2) {
		/* Taken before the last bank switch but one: its bank was emptied. */
		mms_store_add_lost(st, MMS_LOST_STACK, 1);
		return 0;
	}
	bank = (lb->stack_epoch_now - age) & 1;
	map2 = (sid & LB_STACK_SPILL) != 0;
	idx = (uint32_t)sid & LB_STACK_IDX;
	map = stack_map(lb, bank, map2);
	slot_nr = bank * lb->bank_slots + (map2 ? lb->map1_slots : 0) + idx;
	if (idx >= (map2 ? lb->bank_slots - lb->map1_slots : lb->map1_slots))
		return 0;
	slot = &lb->stacks[slot_nr];
	if (slot->epoch == epoch) {
		*id = slot->id;
		return slot->skip ? MMS_LC_SKIP : 0;
	}
	if (bpf_map__lookup_elem(map, &idx, sizeof(idx), lb->ips,
				 lb->stack_depth * sizeof(uint64_t), 0))
		return 0;	/* gone: the wait still counts, without a stack */
	if (!slot->seen) {
		slot->seen = true;
		lb->fill[bank][map2]++;
	}
	while (nr < lb->stack_depth && lb->ips[nr])
		nr++;
	first = machinery_frames(lb, lb->ips, nr);
	err = mms_lock_common_stack(lb->lc, st, lb->ips + first, nr - first, id);
	if (err < 0)
		return err;
	slot->epoch = epoch;
	slot->id = *id;
	slot->skip = err == MMS_LC_SKIP;
	return err;
}

/* Empties a stack map nothing will add to before the epoch names its bank. */
static void clear_stack_map(struct bpf_map *map)
{
	int fd = bpf_map__fd(map);
	uint32_t key, next;
	bool have = !bpf_map_get_next_key(fd, NULL, &key);

	while (have) {
		have = !bpf_map_get_next_key(fd, &key, &next);
		bpf_map_delete_elem(fd, &key);
		key = next;
	}
}

/*
 * Stack maps keep every stack they were given, and a busy machine makes new
 * ones all along (brk: ~40 a second), so after some minutes every new stack
 * would be lost.  When an eighth of a map of the bank in use is taken, the
 * other bank is emptied and the next epoch uses it.  A new stack is lost
 * when both its buckets are taken: with the first map x full, the second
 * (a quarter of its size, taking the first's collisions) is about 2x^2 full,
 * so at most 1 in 256 new stacks (1 in 32 at a quarter: measured on brk, up
 * to 6 stacks lost a second at the end of each epoch).
 */
static void maybe_switch_bank(struct lb_src *lb)
{
	uint32_t bank = lb->stack_epoch_now & 1, next = bank ^ 1;
	uint32_t n1 = lb->opts->stack_entries, n2 = stacks2_entries(lb->opts);

	if (lb->opts->no_stacks || (lb->fill[bank][0] * 8 < n1 && lb->fill[bank][1] * 8 < n2))
		return;
	clear_stack_map(stack_map(lb, next, 0));
	clear_stack_map(stack_map(lb, next, 1));
	memset(lb->stacks + next * lb->bank_slots, 0, lb->bank_slots * sizeof(*lb->stacks));
	lb->fill[next][0] = lb->fill[next][1] = 0;
	lb->stack_epoch_now++;
	__atomic_store_n(&lb->skel->bss->stack_epoch, lb->stack_epoch_now, __ATOMIC_SEQ_CST);
}

static int load_mounts(struct lb_src *lb)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[2 * PATH_MAX];
	uint32_t cap = 0;

	lb->nr_mounts = 0;
	lb->mounts_fresh = true;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned int major, minor;
		struct mount_ent *m;

		if (lb->nr_mounts == cap) {
			uint32_t ncap = cap ? cap * 2 : 64;
			struct mount_ent *p = realloc(lb->mounts, ncap * sizeof(*p));

			if (!p)
				break;
			lb->mounts = p;
			cap = ncap;
		}
		m = &lb->mounts[lb->nr_mounts];
		/* Longer roots or directories than the fields hold: skip the mount. */
		if (sscanf(line, "%*u %*u %u:%u %255s %511s", &major, &minor, m->root,
			   m->dir) != 4 || strlen(m->root) >= sizeof(m->root) - 1 ||
		    strlen(m->dir) >= sizeof(m->dir) - 1)
			continue;
		m->dev = major << 20 | minor;
		lb->nr_mounts++;
	}
	fclose(f);
	return 0;
}

/* Where the dentry path inside a filesystem shows up: the mount whose subtree holds it. */
static const struct mount_ent *find_mount(struct lb_src *lb, uint32_t dev, const char *path)
{
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < lb->nr_mounts; i++) {
			const struct mount_ent *m = &lb->mounts[i];
			size_t len = strlen(m->root);

			if (m->dev != dev)
				continue;
			if (!strcmp(m->root, "/") ||
			    (!strncmp(path, m->root, len) && (path[len] == '/' || !path[len])))
				return m;
		}
		if (lb->mounts_fresh || load_mounts(lb))
			break;
	}
	return NULL;
}

/* "/usr/lib/x86_64-linux-gnu/libc.so.6", ".../lib/libc.so.6", or "ino 1234 on 8:1". */
static void file_name(struct lb_src *lb, const struct lb_lock_info *li, char *buf, size_t len)
{
	char path[PATH_MAX] = "";
	const struct mount_ent *m;
	size_t used = 0;
	int nr = li->nr_names < LB_PATH_DEPTH ? li->nr_names : LB_PATH_DEPTH;

	if (!nr && li->index) {
		/* A block device's own inode (its page cache: metadata buffers). */
		snprintf(buf, len, "bdev %u:%u", li->index >> 20, li->index & 0xfffff);
		return;
	}
	if (!nr) {
		snprintf(buf, len, "ino %llu on %u:%u", (unsigned long long)li->ino,
			 li->dev >> 20, li->dev & 0xfffff);
		return;
	}
	for (int i = nr - 1; i >= 0 && used < sizeof(path); i--)
		used += (size_t)snprintf(path + used, sizeof(path) - used, "/%.*s", LB_NAME_LEN,
					 li->names[i]);
	if (!li->root) {
		snprintf(buf, len, "...%s", path);
		return;
	}
	m = find_mount(lb, li->dev, path);
	if (!m) {
		snprintf(buf, len, "%s (on %u:%u)", path, li->dev >> 20, li->dev & 0xfffff);
		return;
	}
	if (strcmp(m->root, "/"))
		memmove(path, path + strlen(m->root), strlen(path + strlen(m->root)) + 1);
	snprintf(buf, len, "%s%s", strcmp(m->dir, "/") ? m->dir : "", path[0] ? path : "/");
}

#define SAME_KIND(a, b) ((int)(a) == (int)(b))
_Static_assert(SAME_KIND(LB_KIND_SLAB, MMS_LOCK_SLAB) && SAME_KIND(LB_KIND_RQ, MMS_LOCK_RQ) &&
	       SAME_KIND(LB_KIND_ZONE, MMS_LOCK_ZONE) && SAME_KIND(LB_KIND_LRU, MMS_LOCK_LRU) &&
	       SAME_KIND(LB_KIND_PTL, MMS_LOCK_PTL) && SAME_KIND(LB_KIND_I_PAGES, MMS_LOCK_I_PAGES) &&
	       SAME_KIND(LB_KIND_PI, MMS_LOCK_PI) && SAME_KIND(LB_KIND_I_RWSEM, MMS_LOCK_I_RWSEM) &&
	       SAME_KIND(LB_KIND_I_LOCK, MMS_LOCK_I_LOCK) &&
	       SAME_KIND(LB_KIND_EXT4_DATA_SEM, MMS_LOCK_EXT4_DATA_SEM) &&
	       SAME_KIND(LB_KIND_EXT4_ES_LOCK, MMS_LOCK_EXT4_ES_LOCK) &&
	       SAME_KIND(LB_KIND_EXT4_RAW_LOCK, MMS_LOCK_EXT4_RAW_LOCK) &&
	       SAME_KIND(LB_KIND_F_POS, MMS_LOCK_F_POS) && SAME_KIND(LB_KIND_9P_CHAN, MMS_LOCK_9P_CHAN) &&
	       SAME_KIND(LB_KIND_I_PRIVATE, MMS_LOCK_I_PRIVATE) &&
	       SAME_KIND(LB_KIND_D_LOCK, MMS_LOCK_D_LOCK) &&
	       SAME_KIND(LB_KIND_9P_CLIENT, MMS_LOCK_9P_CLIENT) && SAME_KIND(LB_KIND_JBD2, MMS_LOCK_JBD2) &&
	       SAME_KIND(LB_KIND_BLK, MMS_LOCK_BLK) && SAME_KIND(LB_KIND_SLAB_NODE, MMS_LOCK_SLAB_NODE) &&
	       SAME_KIND(LB_KIND_PERCPU, MMS_LOCK_PERCPU),
	       "enum lb_kind is enum mms_lock_kind");

static const char *const jbd2_fields[LB_JBD2_FIELDS] = {
	"j_state_lock", "j_list_lock", "j_wait_transaction_locked", "j_wait_done_commit",
	"j_wait_commit", "j_wait_updates", "j_wait_reserved", "j_checkpoint_mutex", "j_barrier",
	"j_revoke_lock", "j_history_lock",
};

static const char *const blk_fields[LB_BLK_FIELDS] = {
	"queue_lock", "requeue_lock", "hctx lock", "mq_flush_lock",
};

/* A static per-CPU variable: its offset in the per-CPU section, its size, its name. */
struct pcpu_var {
	uint32_t off, size;
	uint32_t name;			/* offset in pcpu_names */
};

static int pcpu_var_cmp(const void *a, const void *b)
{
	const struct pcpu_var *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/*
 * The per-CPU section's variables from vmlinux BTF's .data..percpu DATASEC
 * (pahole emits it even where it emits no other variable, as on kernels
 * without CONFIG_KALLSYMS_ALL).  Parsed once, at the first per-CPU lock, and
 * the BTF freed again.  A DATASEC offset is from the section's start: 0 on
 * x86-64 before 6.15, in the kernel image since (pcpu_btf_name()).
 */
static void pcpu_btf_load(struct lb_src *lb)
{
	const struct btf_var_secinfo *vs;
	const struct btf_type *t = NULL;
	size_t names = 0, used = 0;
	struct btf *btf;
	uint32_t id, n, vlen = 0;

	lb->pcpu_tried = true;
	lb->pcpu_rq_off = -1;
#if defined(__x86_64__)
	btf = btf__load_vmlinux_btf();
	if (libbpf_get_error(btf))
		return;
	n = btf__type_cnt(btf);
	for (id = 1; id < n; id++) {
		t = btf__type_by_id(btf, id);
		if (btf_is_datasec(t) && !strcmp(btf__name_by_offset(btf, t->name_off),
						  ".data..percpu"))
			break;
	}
	if (id < n)
		vlen = btf_vlen(t);
	vs = vlen ? btf_var_secinfos(t) : NULL;
	for (uint32_t i = 0; i < vlen; i++)
		names += strlen(btf__name_by_offset(btf, btf__type_by_id(btf, vs[i].type)->name_off)) + 1;
	lb->pcpu_vars = vlen ? calloc(vlen, sizeof(*lb->pcpu_vars)) : NULL;
	lb->pcpu_names = vlen ? malloc(names) : NULL;
	if (!lb->pcpu_vars || !lb->pcpu_names) {
		free(lb->pcpu_vars);
		free(lb->pcpu_names);
		lb->pcpu_vars = NULL;
		lb->pcpu_names = NULL;
		btf__free(btf);
		return;
	}
	for (uint32_t i = 0; i < vlen; i++) {
		const char *nm = btf__name_by_offset(btf, btf__type_by_id(btf, vs[i].type)->name_off);
		size_t l = strlen(nm) + 1;

		if (!*nm || !vs[i].size)
			continue;
		if (!strcmp(nm, "runqueues"))
			lb->pcpu_rq_off = vs[i].offset;
		lb->pcpu_vars[lb->nr_pcpu_vars++] = (struct pcpu_var){
			.off = vs[i].offset, .size = vs[i].size, .name = (uint32_t)used,
		};
		memcpy(lb->pcpu_names + used, nm, l);
		used += l;
	}
	qsort(lb->pcpu_vars, lb->nr_pcpu_vars, sizeof(*lb->pcpu_vars), pcpu_var_cmp);
	btf__free(btf);
#endif
}

/*
 * A per-CPU address in the section as "var" or "var+0xoff", from BTF; 0 when
 * none covers it.  The section's start is where this CPU's runqueue is
 * linked (the program's anchor) less runqueues' offset; without an anchor,
 * a section linked at 0.
 */
static int pcpu_btf_name(struct lb_src *lb, const struct lb_lock_info *li, char *buf, size_t len)
{
	uint64_t addr = li->pcpu - 1;
	uint32_t lo = 0, hi;
	const struct pcpu_var *v;

	if (!lb->pcpu_tried)
		pcpu_btf_load(lb);
	if (li->pcpu_anchor) {
		if (lb->pcpu_rq_off < 0)
			return 0;
		addr -= li->pcpu_anchor - 1 - (uint64_t)lb->pcpu_rq_off;
	}
	hi = lb->nr_pcpu_vars;
	while (lo < hi) {	/* the first variable past addr */
		uint32_t mid = lo + (hi - lo) / 2;

		if (lb->pcpu_vars[mid].off <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	v = &lb->pcpu_vars[lo - 1];
	if (addr - v->off >= v->size)
		return 0;
	if (addr == v->off)
		return snprintf(buf, len, "%s", lb->pcpu_names + v->name);
	return snprintf(buf, len, "%s+%#llx", lb->pcpu_names + v->name,
			(unsigned long long)(addr - v->off));
}

/*
 * The detail of a lock named by its structure ("cpu 1", "Normal", "node 1
 * Normal", "/system.slice"), or of a per-CPU variable (kind set to
 * MMS_LOCK_PERCPU).  Kernel strings come cut to their fields' size.
 */
static void struct_detail(struct lb_src *lb, const struct lb_lock_info *li,
			  struct mms_lock_hint *h, char *buf, size_t len)
{
	char sym[160], node[24] = "";
	const char *path;

	if (li->kind == LB_KIND_ZONE || li->kind == LB_KIND_LRU)
		if (li->index)
			snprintf(node, sizeof(node), "node %u", li->index);
	switch (li->kind) {
	case LB_KIND_RQ:
		snprintf(buf, len, "cpu %u", li->index);
		break;
	case LB_KIND_ZONE:
		snprintf(buf, len, "%s%s%.*s", node, *node && li->cache[0] ? " " : "",
			 LB_CACHE_LEN, li->cache);
		break;
	case LB_KIND_LRU:
		path = mms_lock_common_cgroup_path(lb->lc, li->cgroup);
		if (!path)
			path = "";
		snprintf(buf, len, "%s%s%s", path, *path && *node ? " " : "", node);
		break;
	case LB_KIND_PI:
	case LB_KIND_9P_CHAN:
	case LB_KIND_9P_CLIENT:
	case LB_KIND_SLAB_NODE:
		snprintf(buf, len, "%.*s", LB_CACHE_LEN, li->cache);
		break;
	case LB_KIND_JBD2:
		snprintf(buf, len, "%s of %u:%u",
			 li->index < LB_JBD2_FIELDS ? jbd2_fields[li->index] : "?", li->dev >> 20,
			 li->dev & 0xfffff);
		break;
	case LB_KIND_BLK:
		snprintf(buf, len, "%s of %.*s", li->index < LB_BLK_FIELDS ? blk_fields[li->index] : "?",
			 LB_CACHE_LEN, li->cache);
		break;
	case LB_KIND_UNKNOWN:
		/* BTF first (it knows each variable's size), kallsyms where BTF has no section. */
		if (li->pcpu && (pcpu_btf_name(lb, li, sym, sizeof(sym)) > 0 ||
				 mms_ksyms_percpu_name(lb->ks, li->pcpu - 1, sym, sizeof(sym)) > 0)) {
			h->kind = MMS_LOCK_PERCPU;
			snprintf(buf, len, "%s (cpu %u)", sym, li->index);
		}
		break;
	default:
		break;
	}
	if (*buf)
		h->detail = buf;
}

/* Kinds whose detail is the file of the inode they are in (lb_lock_info's names). */
static bool file_kind(uint32_t kind)
{
	switch (kind) {
	case LB_KIND_I_MMAP:
	case LB_KIND_I_PAGES:
	case LB_KIND_I_RWSEM:
	case LB_KIND_I_LOCK:
	case LB_KIND_EXT4_DATA_SEM:
	case LB_KIND_EXT4_ES_LOCK:
	case LB_KIND_EXT4_RAW_LOCK:
	case LB_KIND_F_POS:
	case LB_KIND_I_PRIVATE:
	case LB_KIND_D_LOCK:
		return true;
	default:
		return false;
	}
}

static int resolve_lock(struct lb_src *lb, struct mms_store *st, uint64_t addr, uint32_t *id)
{
	struct mms_lock_hint h = { .addr = addr };
	struct lb_lock_info li;
	struct lock_slot *slot;
	char detail[PATH_MAX + 32], comm[LB_COMM_LEN + 1];
	uint32_t i;
	int err;

	/* A cache: when full, start over. */
	if (lb->nr_locks == lb->max_locks) {
		mms_hash_clear(&lb->lock_idx);
		lb->nr_locks = 0;
	}
	i = mms_hash_find(&lb->lock_idx, addr);
	if (i) {
		slot = &lb->locks[i - 1];
		*id = slot->id;
		return slot->skip ? MMS_LC_SKIP : 0;
	}
	if (!bpf_map__lookup_elem(lb->skel->maps.lock_infos, &addr, sizeof(addr), &li,
				  sizeof(li), 0)) {
		h.kind = li.kind;
		h.wait_lock = li.wait_lock;
		h.owner_tgid = li.owner_tgid;
		memcpy(comm, li.owner_comm, LB_COMM_LEN);
		comm[LB_COMM_LEN] = '\0';
		h.owner_comm = comm;
		li.cache[LB_CACHE_LEN - 1] = '\0';
		if (li.kind == LB_KIND_SLAB) {
			h.detail = li.cache;
		} else if (file_kind(li.kind)) {
			file_name(lb, &li, detail, sizeof(detail));
			h.detail = detail;
		} else {
			detail[0] = '\0';
			struct_detail(lb, &li, &h, detail, sizeof(detail));
		}
	}
	err = mms_lock_common_lock(lb->lc, st, &h, id);
	if (err < 0 || lb->nr_locks == lb->max_locks || mms_hash_probe(&lb->lock_idx, addr, &i))
		return err;	/* not cached (no room): looked up again next time */
	slot = &lb->locks[lb->nr_locks];
	slot->id = *id;
	slot->skip = err == MMS_LC_SKIP;
	mms_hash_set(&lb->lock_idx, i, addr, lb->nr_locks++);
	return err;
}

static void sum_stat(const struct lb_src *lb, const struct mms_stat *v, struct mms_stat *out)
{
	mms_stat_init(out);
	for (int c = 0; c < lb->ncpus; c++)
		mms_stat_merge(out, &v[c]);
}

/* An owner's stack taken while it slept, as a store stack id (0: gone, or none). */
/* The hold programs' release stacks go into ostacks as they are. */
_Static_assert(sizeof(struct mm_hold_stack) == sizeof(struct lb_ostack) &&
	       MM_HOLD_DEPTH == LB_OWNER_DEPTH, "mm_hold_stack is an lb_ostack");

static int resolve_ostack(struct lb_src *lb, struct mms_store *st, uint64_t key, uint32_t *id)
{
	struct lb_ostack os;
	uint32_t i, nr, first = 0;
	int err;

	*id = 0;
	if (lb->ostack_epoch != mms_store_epoch(st) + 1) {
		mms_hash_clear(&lb->ostack_idx);
		lb->ostack_epoch = mms_store_epoch(st) + 1;
	}
	i = mms_hash_find(&lb->ostack_idx, key);
	if (i) {
		*id = i - 1;
		return 0;
	}
	if (bpf_map__lookup_elem(lb->skel->maps.ostacks, &key, sizeof(key), &os, sizeof(os), 0)) {
		mms_store_add_lost(st, MMS_LOST_STACK, 1);	/* emptied since */
		return 0;
	}
	lb->ostack_seen++;
	nr = os.nr < LB_OWNER_DEPTH ? os.nr : LB_OWNER_DEPTH;
	/* From where it went to sleep: the scheduler's and lock primitives' frames go. */
	while (first < nr && mms_ksyms_is_lock_func(lb->ks, os.ips[first]))
		first++;
	if (first == nr)
		first = 0;
	/* A holder's release stack (mm_holders.h): from the caller of the release's event. */
	for (i = first; i < nr && i < first + 8; i++) {
		const struct mms_ksym *k = lb->ks ? mms_ksyms_find(lb->ks, os.ips[i]) : NULL;

		if (k && !strncmp(k->name, "__mmap_lock_do_trace_released", 29)) {
			first = i + 1 < nr ? i + 1 : first;
			break;
		}
	}
	err = mms_lock_common_stack(lb->lc, st, (const uint64_t *)os.ips + first, nr - first, id);
	if (err < 0)
		return err;
	/* -S filters the waiter's stack, not its owner's. */
	if (mms_hash_probe(&lb->ostack_idx, key, &i) == 0)
		mms_hash_set(&lb->ostack_idx, i, key, *id);
	return 0;
}

/* Empties ostacks once half its room was used: what waits still name is taken again. */
static void trim_ostacks(struct lb_src *lb)
{
	int fd = bpf_map__fd(lb->skel->maps.ostacks);
	uint64_t key, next;
	bool more;

	if (lb->ostack_seen < LB_OSTACKS / 2)
		return;
	/* One pass: each key's successor is found before the key goes. */
	more = !bpf_map_get_next_key(fd, NULL, &key);
	while (more) {
		more = !bpf_map_get_next_key(fd, &key, &next);
		bpf_map_delete_elem(fd, &key);
		key = next;
	}
	mms_hash_clear(&lb->ostack_idx);
	lb->ostack_seen = 0;
}

/* The lock's owner when the wait began (--lock-owner), into s. */
static int add_owner(struct lb_src *lb, struct mms_store *st, const struct lb_key *k,
		     struct mms_lock_sample *s)
{
	char comm[LB_COMM_LEN + 1];
	int err = 0;

	if (!k->owner_pid) {
		/* An rwsem's readers, or none: owners of their own, without a thread. */
		if (k->owner_tgid == LB_OWNER_READERS || k->owner_tgid == LB_OWNER_FREE) {
			s->owner_id = mms_lock_common_task(lb->lc, st, 0, 0, k->owner_tgid ==
							   LB_OWNER_READERS ? MMS_OWNER_READERS :
							   MMS_OWNER_NONE, 0);
			if (!s->owner_id)
				return -ENOMEM;
		}
		return 0;
	}
	memcpy(comm, k->owner_comm, LB_COMM_LEN);
	comm[LB_COMM_LEN] = '\0';
	s->owner_id = mms_lock_common_task(lb->lc, st, k->owner_pid, k->owner_tgid, comm, 0);
	if (!s->owner_id)
		return -ENOMEM;
	if (k->owner_stack)
		err = resolve_ostack(lb, st, k->owner_stack, &s->owner_stack_id);
	else if (k->owner_sid >= 0)
		err = resolve_stack(lb, st, k->owner_sid, &s->owner_stack_id);
	return err < 0 ? err : 0;
}

static int add_key(struct lb_src *lb, struct mms_store *st, const struct lb_key *k,
		   const struct mms_stat *v)
{
	struct mms_lock_sample s = { .flags = k->flags };
	const struct short_exit *dead;
	char comm[LB_COMM_LEN + 1];
	int err;

	/*
	 * -p / --tid / -Y / -G / -C were applied in the kernel (where a short-lived child
	 * of a launched command was still known); only -L names and -S remain.
	 */
	sum_stat(lb, v, &s.wait);
	if (!s.wait.count)
		return 0;
	err = resolve_stack(lb, st, k->stack_id, &s.stack_id);
	if (err)
		return err < 0 ? err : 0;
	err = resolve_lock(lb, st, k->lock, &s.lock_id);
	if (err)
		return err < 0 ? err : 0;
	memcpy(comm, k->comm, LB_COMM_LEN);
	comm[LB_COMM_LEN] = '\0';
	dead = lb->dead ? mms_short_dead(lb->dead, k->tgid) : NULL;
	if (dead) {
		/* Its group, by the name the VMA source books it under: the leader's. */
		uint32_t g = mms_tgid_short_of(dead->comm);

		s.task_id = mms_lock_common_task(lb->lc, st, g, g, dead->comm, k->cgroup);
	} else {
		s.task_id = mms_lock_common_task(lb->lc, st, k->pid, k->tgid, comm, k->cgroup);
	}
	if (!s.task_id)
		return -ENOMEM;
	err = add_owner(lb, st, k, &s);
	if (err)
		return err;
	return mms_lock_common_add(lb->lc, st, &s);
}

static int grow_batch(struct lb_src *lb, uint32_t n)
{
	struct lb_key *k = realloc(lb->keys, n * sizeof(*k));
	struct mms_stat *v;

	if (!k)
		return -ENOMEM;
	lb->keys = k;
	v = realloc(lb->vals, (size_t)n * lb->ncpus * sizeof(*v));
	if (!v)
		return -ENOMEM;
	lb->vals = v;
	lb->batch = n;
	return 0;
}

static int grow_lock_slots(struct lb_src *lb, uint32_t want)
{
	uint32_t n = want > 128 ? want : 128;

	if (n > lb->max_locks) {
		struct lock_slot *p = realloc(lb->locks, n * sizeof(*p));

		if (!p || mms_hash_reserve(&lb->lock_idx, n)) {
			if (p)
				lb->locks = p;
			return -ENOMEM;
		}
		lb->locks = p;
		lb->max_locks = n;
	}
	mms_hash_clear(&lb->lock_idx);
	lb->nr_locks = 0;
	return 0;
}

/* Reads and empties one generation's map (nothing writes to it now). */
static int take_generation(struct mms_source *src, struct lb_src *lb, struct mms_store *st,
			   struct bpf_map *map)
{
	int fd = bpf_map__fd(map);
	uint32_t in = 0, out = 0;
	bool first = true, done = false;
	int err = 0;

	if (!lb->batch && grow_batch(lb, 1024))
		return -ENOMEM;
	/* Lock names are looked up once per drain; size the cache for the map. */
	if (grow_lock_slots(lb, bpf_map__max_entries(map) < 4096 ? bpf_map__max_entries(map) :
			    4096))
		return -ENOMEM;
	while (!done) {
		uint32_t n = lb->batch;

		err = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &in, &out, lb->keys,
						      lb->vals, &n, NULL);
		if (err == -ENOSPC && lb->batch < (1U << 20)) {
			/* A bucket holds more keys than the buffer: grow, retry. */
			if (grow_batch(lb, lb->batch * 2))
				return -ENOMEM;
			continue;
		}
		if (err && err != -ENOENT)
			return mms_source_fail(src, err, "lock-bpf: reading the aggregation map "
					       "failed: %s", strerror(-err));
		done = err == -ENOENT;
		for (uint32_t i = 0; i < n; i++) {
			int e = add_key(lb, st, &lb->keys[i], &lb->vals[(size_t)i * lb->ncpus]);

			/* -ENOSPC: the store counted the row it could not keep. */
			if (e && e != -ENOSPC)
				return mms_source_fail(src, e, "lock-bpf: adding to the store "
						       "failed: %s", strerror(-e));
		}
		in = out;
		first = false;
	}
	return 0;
}

static int lb_drain(struct mms_source *src, struct mms_store *st)
{
	struct lb_src *lb = src->priv;
	uint32_t old;
	int err;

	if (!lb->skel)
		return 0;
	old = lb->skel->bss->gen & 1;
	__atomic_store_n(&lb->skel->bss->gen, !old, __ATOMIC_SEQ_CST);
	__atomic_store_n(&lb->skel->bss->iv_seq, lb->skel->bss->iv_seq + 1, __ATOMIC_SEQ_CST);
	/*
	 * After this every record of the old generation sits in its map: the
	 * test run on each CPU is an IPI there, ordered after the flip.
	 */
	err = drain_cpus(src, lb);
	if (err)
		return err;
	lb->mounts_fresh = false;
	if (lb->dead) {
		/* The exits so far; "short-lived" is now less than the interval just ended. */
		uint64_t since = mms_short_flip(lb->dead, NULL, NULL);

		if (since)
			lb->skel->bss->lb_short_ns = since;
	}
	err = take_generation(src, lb, st, old ? lb->skel->maps.agg1 : lb->skel->maps.agg0);
	if (err)
		return err;
	read_counters(lb, st);
	maybe_switch_bank(lb);
	stack_cache_update(lb);
	if (lb->opts->lock_owner)
		trim_ostacks(lb);
	return 0;
}

/*
 * MMSCOPE_SELF_COST=1: contention_begin's own time per lock type and by part,
 * summed over CPUs, on stderr when the source goes (bench/run --bpf-cost).
 */
static void print_self_cost(struct lb_src *lb)
{
	struct lb_cost *c = calloc((size_t)lb->ncpus, sizeof(*c));
	int fd = bpf_map__fd(lb->skel->maps.costs);

	for (uint32_t k = 0; c && fd >= 0 && k < LB_COST_FLAGS; k++) {
		struct lb_cost sum = { 0 };

		if (bpf_map_lookup_elem(fd, &k, c))
			break;
		for (int i = 0; i < lb->ncpus; i++) {
			sum.n += c[i].n;
			sum.total += c[i].total;
			sum.drain += c[i].drain;
			sum.stack += c[i].stack;
			sum.hits += c[i].hits;
			sum.hit_stack += c[i].hit_stack;
			sum.name += c[i].name;
		}
		if (!sum.n)
			continue;
		fprintf(stderr, "self-cost: contention_begin type=%s waits=%llu ns_per_wait=%.0f "
			"drain=%.0f stack=%.0f name=%.0f cached=%llu cached_stack=%.0f "
			"wait_lock=%d\n", mms_lock_type_name(k),
			(unsigned long long)sum.n, (double)sum.total / (double)sum.n,
			(double)sum.drain / (double)sum.n, (double)sum.stack / (double)sum.n,
			(double)sum.name / (double)sum.n, (unsigned long long)sum.hits,
			sum.hits ? (double)sum.hit_stack / (double)sum.hits : 0.0,
			lb_under_wait_lock(k));
	}
	free(c);
	read_counters(lb, NULL);
	fprintf(stderr, "self-cost: stack-cache hits=%llu misses=%llu no_rule=%llu no_walk=%llu "
		"checked=%llu bad=%llu samples=%llu rules=%u%s holders=%llu\n",
		(unsigned long long)lb->counters_prev[LB_C_FAST_HIT],
		(unsigned long long)lb->counters_prev[LB_C_FAST_MISS],
		(unsigned long long)lb->counters_prev[LB_C_FAST_NORULE],
		(unsigned long long)lb->counters_prev[LB_C_FAST_NOWALK],
		(unsigned long long)lb->counters_prev[LB_C_FAST_CHECKED],
		(unsigned long long)lb->counters_prev[LB_C_FAST_BAD],
		(unsigned long long)lb->counters_prev[LB_C_LEARN],
		lb->rules ? mms_stack_rules_count(lb->rules) : 0, lb->rules ? "" : " (off)",
		(unsigned long long)lb->counters_prev[LB_C_HOLDER]);
}

static void lb_destroy(struct mms_source *src)
{
	struct lb_src *lb = src->priv;

	if (!lb)
		return;
	detach(lb);
	if (lb->skel && lb->skel->rodata && lb->skel->rodata->self_cost &&
	    bpf_map__fd(lb->skel->maps.costs) >= 0)
		print_self_cost(lb);
	lock_bpf__destroy(lb->skel);
	mms_short_free(lb->dead);
	ring_buffer__free(lb->learn_rb);
	mms_stack_rules_free(lb->rules);
	unmap_hops(lb);
	mms_lock_common_destroy(lb->lc);
	free(lb->stacks);
	free(lb->ips);
	free(lb->locks);
	mms_hash_free(&lb->lock_idx);
	mms_hash_free(&lb->ostack_idx);
	free(lb->keys);
	free(lb->vals);
	free(lb->mounts);
	free(lb->pcpu_vars);
	free(lb->pcpu_names);
	free(lb);
	src->priv = NULL;
}

const struct mms_source_ops mms_lock_bpf_ops = {
	.name = "lock-bpf",
	.backend = "bpf",
	.family = MMS_FAM_LOCK,
	.create = lb_create,
	.prepare = lb_prepare,
	.start = lb_start,
	.fd = lb_fd,
	.poll_in = lb_poll_in,
	.drain = lb_drain,
	.stop = lb_stop,
	.destroy = lb_destroy,
};
