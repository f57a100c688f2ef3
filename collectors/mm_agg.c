// SPDX-License-Identifier: GPL-2.0
/*
 * User side of the mm collectors' in-kernel aggregation (see mm_agg.h):
 * generation flip, grace period, read-sum-delete of the old generation into
 * the store.
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "mm_agg.h"
#include "mmscope/options.h"
#include "mmscope/sample.h"
#include "mmscope/source.h"
#include "mmscope/store.h"

_Static_assert(MM_HIST_SLOTS == MMS_HIST_SLOTS, "kernel and store histograms differ");
_Static_assert(sizeof(struct mm_val) % 8 == 0, "per-CPU values are 8-byte aligned");

static const enum mms_lost_reason lost_reason[MM_LOST_NR] = {
	[MM_LOST_TASK_SLOT] = MMS_LOST_TASK_SLOT,
	[MM_LOST_TIME] = MMS_LOST_TIME,
	[MM_LOST_MAP_FULL] = MMS_LOST_MAP_FULL,
};

/*
 * The map is preallocated (tracing programs on older kernels need that) and
 * per CPU, so its memory is entries x CPUs x value: keep it under 64 MiB on
 * big machines and let the rest count as MAP_FULL losses.
 */
int mm_agg_size(struct bpf_map *map, uint32_t entries)
{
	int ncpus = libbpf_num_possible_cpus();
	uint64_t cap = (64ULL << 20) / sizeof(struct mm_val) / (uint64_t)(ncpus > 0 ? ncpus : 1);

	if (entries > cap)
		entries = (uint32_t)cap;
	return bpf_map__set_max_entries(map, entries < 256 ? 256 : entries);
}

int mm_agg_init(struct mm_agg *a, struct bpf_map *map, volatile __u32 *gen,
		const __u64 *lost, const char *const *names, uint32_t nr_names)
{
	memset(a, 0, sizeof(*a));
	a->ncpus = libbpf_num_possible_cpus();
	if (a->ncpus <= 0)
		return a->ncpus ? a->ncpus : -EINVAL;
	a->vals = calloc((size_t)a->ncpus, sizeof(*a->vals));
	if (!a->vals)
		return -ENOMEM;
	a->map_fd = bpf_map__fd(map);
	a->gen = gen;
	a->lost = lost;
	a->names = names;
	a->nr_names = nr_names;
	return 0;
}

void mm_agg_finish(struct mm_agg *a)
{
	free(a->keys);
	free(a->vals);
	a->keys = NULL;
	a->vals = NULL;
}

/*
 * Waits until every BPF program that may have read the old generation has
 * returned: they run inside RCU read-side sections, and MEMBARRIER_CMD_GLOBAL
 * is a synchronize_rcu().  Where it is refused (nohz_full), a short sleep
 * covers a program that was not preempted, which is all but certain.
 */
static void grace_period(void)
{
	struct timespec ts = { .tv_nsec = 2000000 };

	if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0)
		return;
	nanosleep(&ts, NULL);
}

static int collect_keys(struct mm_agg *a, uint32_t cur, size_t *nr)
{
	struct mm_key k, next;
	void *prev = NULL;

	*nr = 0;
	while (!bpf_map_get_next_key(a->map_fd, prev, &next)) {
		k = next;
		prev = &k;
		if (next.gen == cur)
			continue;
		if (*nr == a->cap_keys) {
			size_t cap = a->cap_keys ? a->cap_keys * 2 : 256;
			struct mm_key *keys = realloc(a->keys, cap * sizeof(*keys));

			if (!keys)
				return -ENOMEM;
			a->keys = keys;
			a->cap_keys = cap;
		}
		a->keys[(*nr)++] = next;
	}
	return errno == ENOENT ? 0 : -errno;
}

static int add_key(struct mm_agg *a, struct mms_store *st, const struct mm_key *k)
{
	struct mms_metric_sample s = { 0 };
	char comm[MM_COMM_LEN + 1] = "";
	int err;

	if (bpf_map_lookup_elem(a->map_fd, k, a->vals))
		return errno == ENOENT ? 0 : -errno;
	for (int c = 0; c < a->ncpus; c++) {
		const struct mm_stat *ks = &a->vals[c].stat;
		struct mms_stat one = {
			.count = ks->count, .total = ks->total, .min = ks->min, .max = ks->max,
		};

		if (!comm[0] && a->vals[c].comm[0])
			memcpy(comm, a->vals[c].comm, MM_COMM_LEN);
		memcpy(one.hist, ks->hist, sizeof(one.hist));
		mms_stat_merge(&s.stat, &one);
	}
	if (!s.stat.count || k->metric >= a->nr_names)
		return 0;
	s.proc_id = k->tgid ? mms_store_task(st, k->tgid, k->tgid, comm[0] ? comm : "?") : 0;
	s.metric_id = mms_store_str(st, a->names[k->metric]);
	s.sub = k->sub;
	if ((k->tgid && !s.proc_id) || !s.metric_id)
		return -ENOMEM;
	err = mms_store_add_metric(st, &s);
	return !err && a->extra ? a->extra(st, s.proc_id, k, &s.stat) : err;
}

int mm_agg_drain(struct mm_agg *a, struct mms_store *st)
{
	uint32_t cur = *a->gen + 1;
	size_t nr = 0;
	int err;

	*a->gen = cur;
	grace_period();
	err = collect_keys(a, cur, &nr);
	for (size_t i = 0; !err && i < nr; i++) {
		err = add_key(a, st, &a->keys[i]);
		bpf_map_delete_elem(a->map_fd, &a->keys[i]);
	}
	for (int r = 0; a->lost && r < MM_LOST_NR; r++) {
		uint64_t now = a->lost[r];

		if (now != a->lost_seen[r])
			mms_store_add_lost(st, lost_reason[r], now - a->lost_seen[r]);
		a->lost_seen[r] = now;
	}
	return err;
}

uint32_t mm_filter_mode(const struct mms_options *o)
{
	if (o->nr_tids)
		return MM_FILTER_TID;
	return o->pid ? MM_FILTER_TGID : MM_FILTER_ALL;
}

void mm_filter_autoload(struct bpf_program *fork_prog, const struct mms_options *o)
{
	/* A launched command is followed into its children; -p PID is that process only. */
	bool follow = mm_filter_mode(o) == MM_FILTER_TGID && o->cmd && !o->no_inherit;

	bpf_program__set_autoload(fork_prog, follow);
}

int mm_filter_fill(struct bpf_map *targets, const struct mms_options *o)
{
	uint8_t one = 1;
	uint32_t id;

	if (o->nr_tids) {
		for (int i = 0; i < o->nr_tids; i++) {
			id = (uint32_t)o->tids[i];
			if (bpf_map__update_elem(targets, &id, sizeof(id), &one, sizeof(one), 0))
				return -errno;
		}
		return 0;
	}
	if (!o->pid)
		return 0;
	id = (uint32_t)o->pid;
	return bpf_map__update_elem(targets, &id, sizeof(id), &one, sizeof(one), 0) ? -errno : 0;
}

static char bpf_log[32768];
static size_t bpf_log_len;

int mm_bpf_log_keep(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	int n;

	if (level == LIBBPF_DEBUG || bpf_log_len >= sizeof(bpf_log) - 1)
		return 0;
	n = vsnprintf(bpf_log + bpf_log_len, sizeof(bpf_log) - bpf_log_len, fmt, ap);
	if (n > 0)
		bpf_log_len += (size_t)n < sizeof(bpf_log) - bpf_log_len ? (size_t)n :
			       sizeof(bpf_log) - bpf_log_len - 1;
	return n;
}

void mm_bpf_log_reset(void)
{
	bpf_log_len = 0;
	bpf_log[0] = 0;
}

void mm_bpf_log_flush(void)
{
	fputs(bpf_log, stderr);
	mm_bpf_log_reset();
}

int mm_bpf_fail(struct mms_source *src, int err, const char *what)
{
	const char *hint = "";

	if (err == -EPERM || err == -EACCES)
		hint = geteuid() ? " (needs CAP_BPF and CAP_PERFMON: run as root, or replay a "
				   "recording)" : " (refused by the kernel's BPF policy)";
	else if (err == -ENOENT || err == -ESRCH)
		hint = " (a kernel function or tracepoint it needs is missing)";
	else if (err == -EINVAL)
		hint = " (rejected by the verifier: kernel too old or different)";
	return mms_source_fail(src, err, "%s: %s failed: %s%s", src->ops->name, what,
			       strerror(-err), hint);
}

struct mm_uagg_row {
	uint32_t tgid, metric, sub, pad;
	struct mms_stat stat;
};

static size_t uagg_hash(uint32_t tgid, uint32_t metric, uint32_t sub, size_t cap)
{
	uint64_t h = ((uint64_t)tgid << 32 | metric << 20 | sub) * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> 32) & (cap - 1);
}

static int uagg_grow(struct mm_uagg *u)
{
	size_t cap = u->idx_cap ? u->idx_cap * 2 : 64;
	uint32_t *idx = calloc(cap, sizeof(*idx));
	struct mm_uagg_row *rows = realloc(u->rows, cap / 2 * sizeof(*rows));

	if (!idx || !rows) {
		free(idx);
		if (rows)
			u->rows = rows;
		return -ENOMEM;
	}
	u->rows = rows;
	u->cap = cap / 2;
	for (size_t i = 0; i < u->nr; i++) {
		size_t h = uagg_hash(rows[i].tgid, rows[i].metric, rows[i].sub, cap);

		while (idx[h])
			h = (h + 1) & (cap - 1);
		idx[h] = (uint32_t)i + 1;
	}
	free(u->idx);
	u->idx = idx;
	u->idx_cap = cap;
	return 0;
}

int mm_uagg_add(struct mm_uagg *u, uint32_t tgid, uint32_t metric, uint32_t sub, uint64_t v)
{
	struct mm_uagg_row *row;
	size_t h;

	if (u->nr == u->cap && uagg_grow(u))
		return -ENOMEM;
	h = uagg_hash(tgid, metric, sub, u->idx_cap);
	for (; u->idx[h]; h = (h + 1) & (u->idx_cap - 1)) {
		row = &u->rows[u->idx[h] - 1];
		if (row->tgid == tgid && row->metric == metric && row->sub == sub) {
			mms_stat_add(&row->stat, v);
			return 0;
		}
	}
	row = &u->rows[u->nr];
	memset(row, 0, sizeof(*row));
	row->tgid = tgid;
	row->metric = metric;
	row->sub = sub;
	mms_stat_add(&row->stat, v);
	u->idx[h] = (uint32_t)++u->nr;
	return 0;
}

int mm_uagg_drain(struct mm_uagg *u, struct mms_store *st, const char *const *names,
		  uint32_t nr_names, const char *(*comm)(void *ctx, uint32_t pid), void *ctx)
{
	int err = 0;

	for (size_t i = 0; !err && i < u->nr; i++) {
		const struct mm_uagg_row *row = &u->rows[i];
		struct mms_metric_sample s = { .sub = row->sub, .stat = row->stat };

		if (row->metric >= nr_names)
			continue;
		s.proc_id = row->tgid ? mms_store_task(st, row->tgid, row->tgid,
						       comm(ctx, row->tgid)) : 0;
		s.metric_id = mms_store_str(st, names[row->metric]);
		err = (row->tgid && !s.proc_id) || !s.metric_id ? -ENOMEM :
		      mms_store_add_metric(st, &s);
	}
	u->nr = 0;
	if (u->idx)
		memset(u->idx, 0, u->idx_cap * sizeof(*u->idx));
	return err;
}

void mm_uagg_finish(struct mm_uagg *u)
{
	free(u->rows);
	free(u->idx);
	memset(u, 0, sizeof(*u));
}
