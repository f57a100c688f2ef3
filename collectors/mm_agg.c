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
#include "mmscope/sample.h"
#include "mmscope/store.h"

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

/* A process's store id in one drain (see struct mm_agg). */
struct mm_task_id {
	uint32_t tgid;
	uint32_t id;		/* 0: empty */
	char comm[MM_COMM_LEN + 1];
};

#define TASK_IDS 2048	/* a power of two */

int mm_agg_init(struct mm_agg *a, struct bpf_map *map, volatile __u32 *gen,
		const __u64 *lost, const char *const *names, uint32_t nr_names)
{
	memset(a, 0, sizeof(*a));
	a->ncpus = libbpf_num_possible_cpus();
	if (a->ncpus <= 0)
		return a->ncpus ? a->ncpus : -EINVAL;
	a->metric_ids = calloc(nr_names ? nr_names : 1, sizeof(*a->metric_ids));
	a->task_ids = calloc(TASK_IDS, sizeof(*a->task_ids));
	if (!a->metric_ids || !a->task_ids) {
		mm_agg_finish(a);
		return -ENOMEM;
	}
	a->map_fd = bpf_map__fd(map);
	a->batched = true;	/* until the kernel says otherwise */
	a->gen = gen;
	a->lost = lost;
	a->names = names;
	a->nr_names = nr_names;
	return 0;
}

void mm_agg_finish(struct mm_agg *a)
{
	free(a->keys);
	free(a->bkeys);
	free(a->vals);
	free(a->metric_ids);
	free(a->task_ids);
	a->keys = NULL;
	a->bkeys = NULL;
	a->vals = NULL;
	a->metric_ids = NULL;
	a->task_ids = NULL;
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

/* What the bpf() system call returns for an operation a map type does not have. */
#define KERNEL_ENOTSUPP 524
/* A batch's values take at most this much memory, whatever the number of CPUs. */
#define BATCH_BYTES (4U << 20)

/* mms_store_task() of a process, once per drain for the many keys it has. */
static uint32_t task_id(struct mm_agg *a, struct mms_store *st, uint32_t tgid, const char *comm)
{
	struct mm_task_id *t = &a->task_ids[(tgid * 0x9e3779b1U) >> 16 & (TASK_IDS - 1)];
	size_t len = strnlen(comm, MM_COMM_LEN);

	if (t->id && t->tgid == tgid && !strncmp(t->comm, comm, sizeof(t->comm)))
		return t->id;
	t->id = mms_store_task(st, tgid, tgid, comm);
	t->tgid = tgid;
	memcpy(t->comm, comm, len);
	t->comm[len] = 0;
	return t->id;
}

int mm_agg_emit(struct mm_agg *a, struct mms_store *st, const struct mm_key *k,
		const char *comm, uint32_t metric, const struct mms_stat *stat)
{
	struct mms_metric_sample s = { .stat = *stat };
	int err;

	if (!s.stat.count || metric >= a->nr_names)
		return 0;
	s.proc_id = k->tgid ? task_id(a, st, k->tgid, comm[0] ? comm : "?") : 0;
	if (!a->metric_ids[metric])
		a->metric_ids[metric] = mms_store_str(st, a->names[metric]);
	s.metric_id = a->metric_ids[metric];
	s.sub = k->sub;
	if ((k->tgid && !s.proc_id) || !s.metric_id)
		return -ENOMEM;
	err = mms_store_add_metric(st, &s);
	return !err && a->extra ? a->extra(st, s.proc_id, k, &s.stat) : err;
}

void mm_agg_comm(const struct mm_agg *a, const struct mm_val *vals, char comm[MM_COMM_LEN + 1])
{
	comm[0] = 0;
	for (int c = 0; c < a->ncpus; c++) {
		if (vals[c].comm[0]) {
			memcpy(comm, vals[c].comm, MM_COMM_LEN);
			comm[MM_COMM_LEN] = 0;
			return;
		}
	}
}

void mm_agg_sum(const struct mm_agg *a, const struct mm_val *vals, struct mms_stat *sum)
{
	mms_stat_init(sum);
	for (int c = 0; c < a->ncpus; c++)
		mms_stat_merge(sum, &vals[c].stat);
}

static int add_key(struct mm_agg *a, struct mms_store *st, const struct mm_key *k,
		   const struct mm_val *vals)
{
	struct mms_stat sum;
	char comm[MM_COMM_LEN + 1];

	if (a->decode)
		return a->decode(a, st, k, vals);
	mm_agg_sum(a, vals, &sum);
	mm_agg_comm(a, vals, comm);
	return mm_agg_emit(a, st, k, comm, k->metric, &sum);
}

/* Room for a batch of n entries: keys and their per-CPU values. */
static int grow_batch(struct mm_agg *a, uint32_t n)
{
	struct mm_key *k = realloc(a->bkeys, n * sizeof(*k));
	struct mm_val *v;

	if (!k)
		return -ENOMEM;
	a->bkeys = k;
	v = realloc(a->vals, (size_t)n * (size_t)a->ncpus * sizeof(*v));
	if (!v)
		return -ENOMEM;
	a->vals = v;
	a->batch = n;
	return 0;
}

/* Adds an entry read from the map and keeps its key for deleting (unless it is current). */
static int take(struct mm_agg *a, struct mms_store *st, uint32_t cur, const struct mm_key *k,
		const struct mm_val *vals, size_t *nr)
{
	int err;

	if (k->gen == cur)
		return 0;	/* the generation programs write to now */
	if (*nr == a->cap_keys) {
		size_t cap = a->cap_keys ? a->cap_keys * 2 : 1024;
		struct mm_key *keys = realloc(a->keys, cap * sizeof(*keys));

		if (!keys)
			return -ENOMEM;
		a->keys = keys;
		a->cap_keys = cap;
	}
	a->keys[(*nr)++] = *k;
	err = add_key(a, st, k, vals);
	/* -ENOSPC: the interval is full; the store counted the row it could not keep. */
	return err == -ENOSPC ? 0 : err;
}

/*
 * Reads the map a batch at a time (keys with their per-CPU values): a few
 * system calls per interval, where key by key took three per entry.
 * -EOPNOTSUPP when the kernel has no batch operations for the map (nothing
 * was read then).
 */
static int read_batched(struct mm_agg *a, struct mms_store *st, uint32_t cur, size_t *nr)
{
	uint32_t in = 0, out = 0;
	bool first = true, done = false;
	int err;

	while (!done) {
		uint32_t n = a->batch;

		err = bpf_map_lookup_batch(a->map_fd, first ? NULL : &in, &out, a->bkeys, a->vals,
					   &n, NULL);
		if (err == -ENOSPC && a->batch < (1U << 20)) {
			/* A bucket holds more entries than the buffer: grow, retry. */
			err = grow_batch(a, a->batch * 2);
			if (err)
				return err;
			continue;
		}
		if (first && (err == -EINVAL || err == -EOPNOTSUPP || err == -KERNEL_ENOTSUPP))
			return -EOPNOTSUPP;
		if (err && err != -ENOENT)
			return err;
		done = err == -ENOENT;
		for (uint32_t i = 0; i < n; i++) {
			err = take(a, st, cur, &a->bkeys[i], a->vals + i * (size_t)a->ncpus, nr);
			if (err)
				return err;
		}
		in = out;
		first = false;
	}
	return 0;
}

/* The same key by key, for kernels without batch operations. */
static int read_keys(struct mm_agg *a, struct mms_store *st, uint32_t cur, size_t *nr)
{
	struct mm_key k, next;
	void *prev = NULL;
	int err;

	while (!bpf_map_get_next_key(a->map_fd, prev, &next)) {
		k = next;
		prev = &k;
		if (next.gen == cur || bpf_map_lookup_elem(a->map_fd, &next, a->vals))
			continue;	/* current, or gone: nothing to add */
		err = take(a, st, cur, &next, a->vals, nr);
		if (err)
			return err;
	}
	return errno == ENOENT ? 0 : -errno;
}

/* Deletes the entries taken; what a batch could not delete goes key by key. */
static void delete_keys(struct mm_agg *a, size_t nr)
{
	size_t done = 0;

	while (a->batched && done < nr) {
		uint32_t n = nr - done > (1U << 20) ? 1U << 20 : (uint32_t)(nr - done);
		int err = bpf_map_delete_batch(a->map_fd, a->keys + done, &n, NULL);

		done += n;
		if (err)
			break;
	}
	for (; done < nr; done++)
		bpf_map_delete_elem(a->map_fd, &a->keys[done]);
}

int mm_agg_drain(struct mm_agg *a, struct mms_store *st)
{
	uint32_t cur = *a->gen + 1;
	size_t nr = 0;
	int err = 0;

	if (!a->batch) {
		uint32_t n = BATCH_BYTES / ((uint32_t)a->ncpus * (uint32_t)sizeof(*a->vals));

		err = grow_batch(a, n < 64 ? 64 : n > 4096 ? 4096 : n);
		if (err)
			return err;
	}
	*a->gen = cur;
	/* Ids are good for this interval's store only: interned again next time. */
	memset(a->metric_ids, 0, a->nr_names * sizeof(*a->metric_ids));
	memset(a->task_ids, 0, TASK_IDS * sizeof(*a->task_ids));
	grace_period();
	if (a->flipped)
		a->flipped(a, st);
	/*
	 * Entries are added as they are read and deleted after: after a
	 * failure, what was not read yet is left for the next drain.
	 */
	err = a->batched ? read_batched(a, st, cur, &nr) : -EOPNOTSUPP;
	if (err == -EOPNOTSUPP) {
		a->batched = false;
		err = read_keys(a, st, cur, &nr);
	}
	delete_keys(a, nr);
	for (int r = 0; a->lost && r < MM_LOST_NR; r++) {
		uint64_t now = a->lost[r];

		if (now != a->lost_seen[r])
			mms_store_add_lost(st, lost_reason[r], now - a->lost_seen[r]);
		a->lost_seen[r] = now;
	}
	return err;
}
