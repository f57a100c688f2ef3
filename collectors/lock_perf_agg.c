// SPDX-License-Identifier: GPL-2.0
/*
 * Time order, begin/end pairing and aggregation for the perf lock collector
 * (see lock_perf.h).  lock_perf.c fills the pool from the rings; drain()
 * flushes the aggregates into the store through lock_common.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <traceevent/event-parse.h>

#include "lock_common.h"
#include "lock_perf.h"
#include "mmscope/hash.h"
#include "mmscope/ksyms.h"

#define LP_MAX_DEPTH 8		/* nested waits per thread, as lock_bpf */
#define LP_STACKS_MAX 65536	/* distinct raw stacks before the table starts over */
#define LP_COMMS_MAX 16384	/* remembered thread names before starting over */

/* One wait in progress. */
struct lp_frame {
	uint64_t addr;
	uint64_t time;
	uint64_t cgroup;
	uint32_t flags;
	uint32_t stack;
};

/* A thread with waits in progress; the slot is freed when the last one ends. */
struct lp_task {
	uint32_t key;		/* task_key(): the tid, or the CPU for idle tasks */
	uint32_t depth;
	struct lp_frame f[LP_MAX_DEPTH];
};

struct lp_agg {
	uint64_t addr;
	uint64_t cgroup;
	uint32_t stack, tid, pid, flags;
	uint32_t comm;		/* comms index + 1 at the wait's end; 0: not known then */
	struct mms_stat wait;
};

struct lp_stack {
	uint32_t off;		/* into ips */
	uint32_t nr;
};

struct lp_comm {
	char comm[LP_COMM_LEN];
};

struct lp_engine {
	const struct mms_options *opts;
	struct mms_lock_common *lc;
	bool filter_tasks;
	bool filter_targets;	/* -C or -G */
	bool offline;		/* no /proc: the records are from another time */

	struct lp_event *pool, *tmp;
	uint32_t pool_nr, pool_cap;

	/* Waits in progress: open addressing, linear probing, backward-shift delete. */
	/* Not mms_hash: that has no delete, and every wait's end deletes here, on the hot path. */
	struct lp_task *tasks;
	uint32_t tasks_nr, tasks_cap, tasks_max;

	/* Aggregates of this interval; used[] lists the occupied slots. */
	/* Not mms_hash: rows behind its index cost bench/parse_bench 14% (0.267 -> 0.305 s). */
	struct lp_agg *agg;
	uint32_t *agg_used;
	uint32_t agg_nr, agg_cap, agg_max;

	/* Raw stacks: ent[1..nr-1], ips in one array, found through st_idx. */
	struct lp_stack *st_ent;
	uint32_t st_nr, st_cap;
	struct mms_hash st_idx;	/* hash_ips() -> id + 1 */
	uint64_t *st_ips;
	size_t st_ips_nr, st_ips_cap;

	/*
	 * Thread names, by tid (0 never: that is the idle task, "swapper").  A
	 * rename (exec, prctl) adds an entry, so a wait keeps the name its
	 * thread had then, as the BPF source's does.
	 */
	struct lp_comm *comms;
	uint32_t comms_nr, comms_cap;
	struct mms_hash comm_idx;	/* tid -> comms index + 1 */

	uint64_t lost[MMS_LOST_NR];
};

static uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

int lp_engine_create(const struct mms_options *opts, struct mms_lock_common *lc,
		     uint32_t pool_cap, struct lp_engine **out)
{
	struct lp_engine *e = calloc(1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	e->opts = opts;
	e->lc = lc;
	e->filter_tasks = opts->pid || opts->nr_tids;
	e->filter_targets = opts->cpu_list || opts->nr_cgroups;
	e->pool_cap = pool_cap ? pool_cap : LP_POOL_DEFAULT;
	e->pool = malloc(e->pool_cap * sizeof(*e->pool));
	e->tmp = malloc(e->pool_cap * sizeof(*e->tmp));
	e->tasks_max = opts->task_entries ? opts->task_entries : 16384;
	e->agg_max = opts->map_entries ? opts->map_entries : 16384;
	e->tasks_cap = 256;
	e->tasks = calloc(e->tasks_cap, sizeof(*e->tasks));
	e->agg_cap = 1024;
	e->agg = calloc(e->agg_cap, sizeof(*e->agg));
	e->agg_used = malloc(e->agg_cap * sizeof(*e->agg_used));
	e->st_nr = 1;	/* id 0: no stack */
	if (!e->pool || !e->tmp || !e->tasks || !e->agg || !e->agg_used) {
		lp_engine_destroy(e);
		return -ENOMEM;
	}
	*out = e;
	return 0;
}

static void stacks_free(struct lp_engine *e)
{
	free(e->st_ent);
	mms_hash_free(&e->st_idx);
	free(e->st_ips);
	e->st_ent = NULL;
	e->st_ips = NULL;
	e->st_nr = 1;
	e->st_cap = 0;
	e->st_ips_nr = e->st_ips_cap = 0;
}

void lp_engine_destroy(struct lp_engine *e)
{
	if (!e)
		return;
	free(e->pool);
	free(e->tmp);
	free(e->tasks);
	free(e->agg);
	free(e->agg_used);
	stacks_free(e);
	free(e->comms);
	mms_hash_free(&e->comm_idx);
	free(e);
}

struct lp_event *lp_engine_slot(struct lp_engine *e)
{
	return e->pool_nr < e->pool_cap ? &e->pool[e->pool_nr] : NULL;
}

void lp_engine_push(struct lp_engine *e)
{
	e->pool_nr++;
}

uint32_t lp_engine_pending(const struct lp_engine *e)
{
	return e->pool_nr;
}

void lp_engine_set_offline(struct lp_engine *e)
{
	e->offline = true;
}

void lp_engine_lost(struct lp_engine *e, enum mms_lost_reason r, uint64_t n)
{
	e->lost[r] += n;
}

/* Records ----------------------------------------------------------------- */

bool lp_field_u64(struct tep_format_field *f, const void *raw, uint32_t raw_size, uint64_t *val)
{
	unsigned long long v;

	if ((uint32_t)f->offset + (uint32_t)f->size > raw_size ||
	    tep_read_number_field(f, raw, &v))
		return false;
	*val = v;
	return true;
}

uint32_t lp_kernel_stack(uint64_t *ips, uint32_t max, const uint64_t *chain, uint64_t nr,
			 const struct mms_ksyms *ks, uint64_t traceiter)
{
	const struct mms_ksym *sym;
	uint32_t n = 0;

	for (uint64_t i = 0; i < nr && n < max; i++) {
		uint64_t ip;

		memcpy(&ip, chain + i, sizeof(ip));
		if (ip == (uint64_t)PERF_CONTEXT_USER)
			break;
		if (ip < (uint64_t)PERF_CONTEXT_MAX)
			ips[n++] = ip;
	}
	if (!n || !traceiter || ips[0] - traceiter >= 4096)
		return n;
	sym = mms_ksyms_find(ks, ips[0]);
	if (sym && sym->addr == traceiter)
		memmove(ips, ips + 1, --n * sizeof(ips[0]));
	return n;
}

/* Stacks ------------------------------------------------------------------ */

static uint64_t hash_ips(const uint64_t *ips, uint32_t nr)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ nr;

	for (uint32_t i = 0; i < nr; i++)
		h = mix64(h ^ ips[i]) + i;
	return h ? h : 1;
}

static int stack_room(struct lp_engine *e, uint32_t nr)
{
	if (e->st_nr + 1 > e->st_cap) {
		uint32_t cap = e->st_cap ? e->st_cap * 2 : 256;
		struct lp_stack *p = realloc(e->st_ent, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		e->st_ent = p;
		e->st_cap = cap;
	}
	if (e->st_ips_nr + nr > e->st_ips_cap) {
		size_t cap = e->st_ips_cap ? e->st_ips_cap * 2 : 4096;
		uint64_t *p;

		while (cap < e->st_ips_nr + nr)
			cap *= 2;
		p = realloc(e->st_ips, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		e->st_ips = p;
		e->st_ips_cap = cap;
	}
	if (e->st_idx.nr + 1 > e->st_idx.cap / 2 && mms_hash_reserve(&e->st_idx, e->st_idx.nr + 1))
		return -ENOMEM;
	return 0;
}

uint32_t lp_engine_stack(struct lp_engine *e, const uint64_t *ips, uint32_t nr)
{
	struct mms_hash *x = &e->st_idx;
	struct lp_stack *s;
	uint64_t h;
	uint32_t i;

	if (!nr)
		return 0;
	if (stack_room(e, nr)) {
		e->lost[MMS_LOST_STACK]++;
		return 0;
	}
	h = hash_ips(ips, nr);
	for (i = mms_hash_first(x, h); x->vals[i]; i = mms_hash_next(x, i)) {
		s = &e->st_ent[x->vals[i] - 1];
		if (x->tags[i] == h && s->nr == nr &&
		    !memcmp(e->st_ips + s->off, ips, nr * sizeof(*ips)))
			return x->vals[i] - 1;
	}
	s = &e->st_ent[e->st_nr];
	s->off = (uint32_t)e->st_ips_nr;
	s->nr = nr;
	memcpy(e->st_ips + e->st_ips_nr, ips, nr * sizeof(*ips));
	e->st_ips_nr += nr;
	mms_hash_set(x, i, h, e->st_nr);
	return e->st_nr++;
}

/*
 * Called after a flush, when no aggregate refers to a stack: starts the table
 * over once it is big, keeping the stacks of waits still in progress (and of
 * records still in the pool).
 */
static void stacks_trim(struct lp_engine *e)
{
	struct lp_stack *ent = e->st_ent;
	uint64_t *ips = e->st_ips;

	if (e->st_nr < LP_STACKS_MAX)
		return;
	e->st_ent = NULL;
	e->st_ips = NULL;
	stacks_free(e);
	for (uint32_t i = 0; i < e->tasks_cap; i++) {
		struct lp_task *t = &e->tasks[i];

		for (uint32_t d = 0; t->depth && d < t->depth; d++)
			if (t->f[d].stack)
				t->f[d].stack = lp_engine_stack(e, ips + ent[t->f[d].stack].off,
								ent[t->f[d].stack].nr);
	}
	for (uint32_t i = 0; i < e->pool_nr; i++) {
		struct lp_event *ev = &e->pool[i];

		if (ev->kind == LP_BEGIN && ev->lock.stack)
			ev->lock.stack = lp_engine_stack(e, ips + ent[ev->lock.stack].off,
							 ent[ev->lock.stack].nr);
	}
	free(ent);
	free(ips);
}

/* Time order --------------------------------------------------------------- */

static uint32_t run_end(const struct lp_event *a, uint32_t i, uint32_t n)
{
	while (i + 1 < n && a[i].time <= a[i + 1].time)
		i++;
	return i + 1;
}

/*
 * Natural merge sort, stable: the pool is a few sorted runs (one per ring,
 * plus what waited from last time), so this is nearly linear.
 */
static void sort_pool(struct lp_engine *e)
{
	struct lp_event *src = e->pool, *dst = e->tmp;
	uint32_t n = e->pool_nr;

	if (run_end(src, 0, n) >= n)
		return;
	for (;;) {
		uint32_t runs = 0;

		for (uint32_t i = 0; i < n; runs++) {
			uint32_t mid = run_end(src, i, n), end = mid < n ? run_end(src, mid, n) : n;
			uint32_t a = i, b = mid, o = i;

			while (a < mid && b < end)
				dst[o++] = src[b].time < src[a].time ? src[b++] : src[a++];
			while (a < mid)
				dst[o++] = src[a++];
			while (b < end)
				dst[o++] = src[b++];
			i = end;
		}
		e->pool = dst;
		e->tmp = src;
		if (runs <= 1)
			return;
		src = e->pool;
		dst = e->tmp;
	}
}

/* Threads ------------------------------------------------------------------ */

static uint32_t task_hash(uint32_t key)
{
	return key * 2654435761U;
}

static struct lp_task *task_find(struct lp_engine *e, uint32_t key)
{
	uint32_t mask = e->tasks_cap - 1;

	for (uint32_t i = task_hash(key) & mask;; i = (i + 1) & mask) {
		if (!e->tasks[i].depth)
			return NULL;
		if (e->tasks[i].key == key)
			return &e->tasks[i];
	}
}

static int tasks_grow(struct lp_engine *e)
{
	struct lp_task *old = e->tasks;
	uint32_t old_cap = e->tasks_cap, cap = old_cap * 2;

	e->tasks = calloc(cap, sizeof(*e->tasks));
	if (!e->tasks) {
		e->tasks = old;
		return -ENOMEM;
	}
	e->tasks_cap = cap;
	for (uint32_t i = 0; i < old_cap; i++) {
		uint32_t mask = cap - 1, j;

		if (!old[i].depth)
			continue;
		for (j = task_hash(old[i].key) & mask; e->tasks[j].depth; j = (j + 1) & mask)
			;
		e->tasks[j] = old[i];
	}
	free(old);
	return 0;
}

static struct lp_task *task_get(struct lp_engine *e, uint32_t key)
{
	struct lp_task *t = task_find(e, key);
	uint32_t mask, i;

	if (t)
		return t;
	if (e->tasks_nr >= e->tasks_max)
		return NULL;
	if ((e->tasks_nr + 1) * 2 > e->tasks_cap && tasks_grow(e))
		return NULL;
	mask = e->tasks_cap - 1;
	for (i = task_hash(key) & mask; e->tasks[i].depth; i = (i + 1) & mask)
		;
	e->tasks_nr++;
	e->tasks[i].key = key;
	return &e->tasks[i];	/* depth 0 until the caller pushes a frame */
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
static void task_del(struct lp_engine *e, struct lp_task *t)
{
	uint32_t mask = e->tasks_cap - 1, i = (uint32_t)(t - e->tasks), j = i;

	for (;;) {
		uint32_t home;

		j = (j + 1) & mask;
		if (!e->tasks[j].depth)
			break;
		home = task_hash(e->tasks[j].key) & mask;
		/* Move j back to i when its home is not cyclically within (i, j]. */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			e->tasks[i] = e->tasks[j];
			i = j;
		}
	}
	e->tasks[i].depth = 0;
	e->tasks_nr--;
}

/* Idle tasks all have tid 0, one per CPU; the CPU tells them apart. */
static uint32_t task_key(uint32_t tid, uint32_t cpu)
{
	return tid ? tid : 0xffff0000U | (cpu & 0xffff);
}

/* Aggregates --------------------------------------------------------------- */

static uint32_t agg_hash(uint64_t addr, uint32_t stack, uint32_t tid, uint32_t flags)
{
	return (uint32_t)mix64(addr ^ ((uint64_t)stack << 40) ^ ((uint64_t)tid << 8) ^ flags);
}

static int agg_grow(struct lp_engine *e)
{
	struct lp_agg *old = e->agg;
	uint32_t old_cap = e->agg_cap, cap = old_cap * 2;
	uint32_t *used = malloc(cap * sizeof(*used));

	e->agg = calloc(cap, sizeof(*e->agg));
	if (!e->agg || !used) {
		free(e->agg);
		free(used);
		e->agg = old;
		return -ENOMEM;
	}
	e->agg_cap = cap;
	for (uint32_t k = 0; k < e->agg_nr; k++) {
		const struct lp_agg *a = &old[e->agg_used[k]];
		uint32_t j = agg_hash(a->addr, a->stack, a->tid, a->flags) & (cap - 1);

		while (e->agg[j].wait.count)
			j = (j + 1) & (cap - 1);
		e->agg[j] = *a;
		used[k] = j;
	}
	free(old);
	free(e->agg_used);
	e->agg_used = used;
	return 0;
}

static void agg_add(struct lp_engine *e, const struct lp_frame *f, uint32_t tid, uint32_t pid,
		    uint64_t delta)
{
	uint32_t mask = e->agg_cap - 1, i, comm = tid ? mms_hash_find(&e->comm_idx, tid) : 0;
	struct lp_agg *a;

	for (i = agg_hash(f->addr, f->stack, tid, f->flags) & mask;; i = (i + 1) & mask) {
		a = &e->agg[i];
		if (!a->wait.count)
			break;
		if (a->addr == f->addr && a->stack == f->stack && a->tid == tid &&
		    a->flags == f->flags && a->cgroup == f->cgroup && a->comm == comm) {
			mms_stat_add(&a->wait, delta);
			return;
		}
	}
	if (e->agg_nr >= e->agg_max) {
		e->lost[MMS_LOST_MAP_FULL]++;
		return;
	}
	if ((e->agg_nr + 1) * 2 > e->agg_cap) {
		if (agg_grow(e)) {
			e->lost[MMS_LOST_MAP_FULL]++;
			return;
		}
		agg_add(e, f, tid, pid, delta);
		return;
	}
	a->addr = f->addr;
	a->cgroup = f->cgroup;
	a->stack = f->stack;
	a->tid = tid;
	a->pid = pid;
	a->flags = f->flags;
	a->comm = comm;
	mms_stat_add(&a->wait, delta);
	e->agg_used[e->agg_nr++] = i;
}

/* Thread names ------------------------------------------------------------- */

/* A new, empty name entry; its index, or UINT32_MAX without memory. */
static uint32_t comm_new(struct lp_engine *e)
{
	if (e->comms_nr == e->comms_cap) {
		uint32_t cap = e->comms_cap ? e->comms_cap * 2 : 512;
		struct lp_comm *c = realloc(e->comms, cap * sizeof(*c));

		if (!c)
			return UINT32_MAX;
		e->comms = c;
		e->comms_cap = cap;
	}
	e->comms[e->comms_nr].comm[0] = '\0';
	return e->comms_nr++;
}

static struct lp_comm *comm_slot(struct lp_engine *e, uint32_t tid, bool add)
{
	uint32_t i, n;
	int found;

	if (!tid)
		return NULL;
	if (!add) {
		i = mms_hash_find(&e->comm_idx, tid);
		return i ? &e->comms[i - 1] : NULL;
	}
	found = mms_hash_probe(&e->comm_idx, tid, &i);
	if (found)
		return found > 0 ? &e->comms[e->comm_idx.vals[i] - 1] : NULL;
	n = comm_new(e);
	if (n == UINT32_MAX)
		return NULL;
	mms_hash_set(&e->comm_idx, i, tid, n);
	return &e->comms[n];
}

static bool read_comm(uint32_t pid, uint32_t tid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	if (buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return true;
}

static void comm_set(struct lp_engine *e, uint32_t tid, const char *comm)
{
	struct lp_comm *c = comm_slot(e, tid, true);
	uint32_t slot, n;

	if (!c)
		return;
	if (c->comm[0] && strncmp(c->comm, comm, LP_COMM_LEN - 1) &&
	    mms_hash_probe(&e->comm_idx, tid, &slot) == 1) {
		/* A rename: the old entry stays for the waits booked under it. */
		n = comm_new(e);
		if (n == UINT32_MAX)
			return;
		e->comm_idx.vals[slot] = n + 1;
		c = &e->comms[n];
	}
	memcpy(c->comm, comm, LP_COMM_LEN);
	c->comm[LP_COMM_LEN - 1] = '\0';
}

/*
 * The name of a thread: from the side band (exec, fork), else /proc while
 * it lives, else its process leader's, else "?".
 */
static const char *comm_of(struct lp_engine *e, uint32_t tid, uint32_t pid)
{
	static char buf[LP_COMM_LEN];
	struct lp_comm *c = comm_slot(e, tid, false);

	if (!tid)
		return "swapper";
	if (c && c->comm[0])
		return c->comm;
	if (!e->offline &&
	    (read_comm(pid, tid, buf, sizeof(buf)) || read_comm(pid, pid, buf, sizeof(buf)))) {
		comm_set(e, tid, buf);
		return buf;
	}
	c = comm_slot(e, pid, false);
	return c && c->comm[0] ? c->comm : "?";
}

/* Names of the threads of one process directory under /proc. */
static void seed_process(struct lp_engine *e, uint32_t pid)
{
	char path[64], comm[LP_COMM_LEN];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		uint32_t tid = (uint32_t)strtoul(de->d_name, NULL, 10);

		if (tid && read_comm(pid, tid, comm, sizeof(comm)))
			comm_set(e, tid, comm);
	}
	closedir(d);
}

void lp_engine_seed_comms(struct lp_engine *e)
{
	struct dirent *de;
	DIR *d;

	if (e->opts->pid) {
		seed_process(e, (uint32_t)e->opts->pid);
		return;
	}
	d = opendir("/proc");
	if (!d)
		return;
	while ((de = readdir(d)) && e->comms_nr < LP_COMMS_MAX) {
		uint32_t pid = (uint32_t)strtoul(de->d_name, NULL, 10);

		if (pid)
			seed_process(e, pid);
	}
	closedir(d);
}

/* Processing ----------------------------------------------------------------- */

static void on_begin(struct lp_engine *e, const struct lp_event *ev, uint32_t cpu)
{
	struct lp_task *t;

	if (e->filter_tasks && !mms_lock_common_task_ok(e->lc, ev->tid, ev->pid))
		return;
	/* -C and -G: where the wait begins, as the BPF source filters. */
	if (e->filter_targets && !mms_lock_common_target_ok(e->lc, cpu, ev->lock.cgroup))
		return;
	t = task_get(e, task_key(ev->tid, cpu));
	if (!t) {
		e->lost[MMS_LOST_TASK_SLOT]++;
		return;
	}
	/* A second begin on the same lock (mutex: spin, then sleep) keeps the first. */
	for (uint32_t d = 0; d < t->depth; d++)
		if (t->f[d].addr == ev->lock.addr)
			return;
	if (t->depth == LP_MAX_DEPTH) {
		/* Too deep: an end went missing somewhere; the oldest wait gives way. */
		memmove(&t->f[0], &t->f[1], (LP_MAX_DEPTH - 1) * sizeof(t->f[0]));
		t->depth--;
		e->lost[MMS_LOST_TASK_SLOT]++;
	}
	t->f[t->depth++] = (struct lp_frame){
		.addr = ev->lock.addr, .time = ev->time, .flags = ev->lock.flags,
		.stack = ev->lock.stack, .cgroup = ev->lock.cgroup,
	};
}

static void on_end(struct lp_engine *e, const struct lp_event *ev, uint32_t cpu)
{
	struct lp_task *t = task_find(e, task_key(ev->tid, cpu));
	struct lp_frame f;
	int d;

	for (d = t ? (int)t->depth - 1 : -1; d >= 0; d--)
		if (t->f[d].addr == ev->lock.addr)
			break;
	if (d < 0) {
		if (!e->filter_tasks || mms_lock_common_task_ok(e->lc, ev->tid, ev->pid))
			e->lost[MMS_LOST_TIME]++;
		return;
	}
	f = t->f[d];
	/* Waits above it never ended: their ends were lost. */
	e->lost[MMS_LOST_TIME] += t->depth - 1 - (uint32_t)d;
	t->depth = (uint32_t)d;
	if (!t->depth)
		task_del(e, t);
	if (ev->time < f.time) {
		e->lost[MMS_LOST_TIME]++;
		return;
	}
	if (!mms_lock_common_type_ok(e->lc, f.flags))
		return;
	agg_add(e, &f, ev->tid, ev->pid, ev->time - f.time);
}

static void on_fork(struct lp_engine *e, const struct lp_event *ev)
{
	struct lp_comm *parent = comm_slot(e, ev->fork.ptid, false);
	char buf[LP_COMM_LEN];

	if (parent && parent->comm[0])
		memcpy(buf, parent->comm, sizeof(buf));
	else if (e->offline || !read_comm(ev->fork.ppid, ev->fork.ptid, buf, sizeof(buf)))
		buf[0] = '\0';
	if (buf[0])
		comm_set(e, ev->tid, buf);
	/*
	 * A launched command's new processes are followed (unless
	 * --no-inherit), even those gone before /proc could tell their parent.
	 */
	if (e->opts->cmd && !e->opts->no_inherit && ev->pid != ev->fork.ppid &&
	    mms_lock_common_task_ok(e->lc, ev->fork.ptid, ev->fork.ppid))
		mms_lock_common_follow(e->lc, ev->pid);
}

static void on_exit_task(struct lp_engine *e, const struct lp_event *ev, uint32_t cpu)
{
	struct lp_task *t = task_find(e, task_key(ev->tid, cpu));

	if (t && ev->tid)
		task_del(e, t);
}

void lp_engine_process(struct lp_engine *e, uint64_t horizon)
{
	uint32_t i;

	sort_pool(e);
	for (i = 0; i < e->pool_nr && e->pool[i].time <= horizon; i++) {
		const struct lp_event *ev = &e->pool[i];
		uint32_t cpu = ev->cpu;

		switch (ev->kind) {
		case LP_BEGIN:
			on_begin(e, ev, cpu);
			break;
		case LP_END:
			on_end(e, ev, cpu);
			break;
		case LP_FORK:
			on_fork(e, ev);
			break;
		case LP_COMM:
			comm_set(e, ev->tid, ev->comm);
			break;
		case LP_EXIT:
			on_exit_task(e, ev, cpu);
			break;
		}
	}
	if (i) {
		memmove(e->pool, e->pool + i, (e->pool_nr - i) * sizeof(*e->pool));
		e->pool_nr -= i;
	}
}

int lp_engine_flush(struct lp_engine *e, struct mms_store *st)
{
	int err = 0;

	for (uint32_t k = 0; k < e->agg_nr && !err; k++) {
		struct lp_agg *a = &e->agg[e->agg_used[k]];
		const struct lp_stack *s = a->stack ? &e->st_ent[a->stack] : NULL;
		struct mms_lock_hint h = { .addr = a->addr };
		struct mms_lock_sample smp = { .flags = a->flags, .wait = a->wait };
		int r;

		r = mms_lock_common_stack(e->lc, st, s ? e->st_ips + s->off : NULL, s ? s->nr : 0,
					  &smp.stack_id);
		if (r == 0)
			r = mms_lock_common_lock(e->lc, st, &h, &smp.lock_id);
		if (r == 0) {
			const char *comm = a->comm && e->comms[a->comm - 1].comm[0] ?
					   e->comms[a->comm - 1].comm : comm_of(e, a->tid, a->pid);

			smp.task_id = mms_lock_common_task(e->lc, st, a->tid, a->pid, comm,
							   a->cgroup);
			r = smp.task_id ? mms_lock_common_add(e->lc, st, &smp) : -ENOMEM;
		}
		if (r < 0 && r != -ENOSPC)	/* -ENOSPC: the store counted it */
			err = r;
	}
	for (uint32_t k = 0; k < e->agg_nr; k++)
		memset(&e->agg[e->agg_used[k]], 0, sizeof(*e->agg));
	e->agg_nr = 0;
	for (int r = 0; r < MMS_LOST_NR; r++) {
		if (e->lost[r])
			mms_store_add_lost(st, r, e->lost[r]);
		e->lost[r] = 0;
	}
	stacks_trim(e);
	if (e->comms_nr > LP_COMMS_MAX) {
		mms_hash_clear(&e->comm_idx);
		e->comms_nr = 0;
	}
	return err;
}
