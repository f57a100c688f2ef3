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

void mm_iter_run(struct bpf_link *it)
{
	char buf[64];
	int fd;

	if (!it)
		return;	/* not attached (yet, or any more) */
	fd = bpf_iter_create(bpf_link__fd(it));
	if (fd < 0)
		return;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n == 0 || (n < 0 && errno != EINTR))
			break;
	}
	close(fd);
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

/*
 * libbpf's messages while an mm source loads or attaches: passed on to the
 * print function set before (it shows them under MMSCOPE_DEBUG) and read
 * for what a failure should say: the program that failed and the
 * verifier's last word on it.
 */
static libbpf_print_fn_t log_prev;
static bool log_on;
static char log_prog[64];
static char log_reason[160];

/* The verifier's reason: the last line of its log before "processed N insns". */
static void log_scan(const char *msg)
{
	const char *begin = strstr(msg, "-- BEGIN PROG LOAD LOG --");
	const char *end, *line, *eol, *last = NULL, *last_end = NULL;

	if (!strncmp(msg, "prog '", 6) && (begin || strstr(msg, "': failed to")))
		snprintf(log_prog, sizeof(log_prog), "%.*s", (int)strcspn(msg + 6, "'"), msg + 6);
	if (!begin)
		return;
	end = strstr(begin, "\nprocessed ");
	if (!end)
		end = strstr(begin, "-- END PROG LOAD LOG --");
	if (!end)
		end = begin + strlen(begin);
	for (line = strchr(begin, '\n'); line && ++line < end; line = eol) {
		eol = strchr(line, '\n');
		if (!eol || eol > end)
			eol = end;
		if (eol > line) {
			last = line;
			last_end = eol;
		}
	}
	if (last)
		snprintf(log_reason, sizeof(log_reason), "%.*s", (int)(last_end - last), last);
}

static int log_keep(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *msg = NULL;
	va_list aq;

	va_copy(aq, ap);
	if (level != LIBBPF_DEBUG && vasprintf(&msg, fmt, aq) >= 0)
		log_scan(msg);
	va_end(aq);
	free(msg);
	return log_prev ? log_prev(level, fmt, ap) : 0;
}

void mm_bpf_log_begin(void)
{
	log_prog[0] = 0;
	log_reason[0] = 0;
	if (log_on)
		return;
	log_prev = libbpf_set_print(log_keep);
	log_on = true;
}

void mm_bpf_log_end(void)
{
	if (!log_on)
		return;
	libbpf_set_print(log_prev);
	log_on = false;
}

int mm_bpf_fail(struct mms_source *src, int err, const char *what)
{
	const char *prog = log_prog[0] ? ", program " : "";
	char hint[320] = "";

	if (log_reason[0])
		snprintf(hint, sizeof(hint), " (the verifier rejected %s%s: \"%s\"; "
			 "MMSCOPE_DEBUG=1 shows its log)", log_prog[0] ? "program " : "a program",
			 log_prog, log_reason);
	else if ((err == -EPERM || err == -EACCES) && geteuid())
		snprintf(hint, sizeof(hint), " (needs CAP_BPF and CAP_PERFMON: run as root, or "
			 "replay a recording)");
	else if (err == -EPERM || err == -EACCES)
		snprintf(hint, sizeof(hint), " (refused by the kernel's BPF policy%s%s)", prog,
			 log_prog);
	else if (err == -ENOENT || err == -ESRCH)
		snprintf(hint, sizeof(hint), " (a kernel function or tracepoint it needs is "
			 "missing%s%s)", prog, log_prog);
	else if (err == -EINVAL)
		snprintf(hint, sizeof(hint), " (rejected: kernel too old or different%s%s)", prog,
			 log_prog);
	else if (log_prog[0])
		snprintf(hint, sizeof(hint), " (program %s)", log_prog);
	log_prog[0] = 0;
	log_reason[0] = 0;
	return mms_source_fail(src, err, "%s: %s failed: %s%s", src->ops->name, what,
			       strerror(-err), hint);
}

int mm_bpf_load(struct mms_source *src, struct bpf_object_skeleton *skel, const char *what)
{
	int err;

	mm_bpf_log_begin();
	err = bpf_object__load_skeleton(skel);
	mm_bpf_log_end();
	return err ? mm_bpf_fail(src, err, what) : 0;
}

int mm_bpf_attach(struct mms_source *src, struct bpf_object_skeleton *skel, const char *what)
{
	int err;

	mm_bpf_log_begin();
	err = bpf_object__attach_skeleton(skel);
	mm_bpf_log_end();
	if (!err)
		return 0;
	bpf_object__detach_skeleton(skel);
	return mm_bpf_fail(src, err, what);
}

int mm_bpf_fentry_try(struct mms_source *src, struct bpf_object_skeleton *skel, const char *what)
{
	bool loaded = false;
	char buf[160];
	int err;

	mm_bpf_log_begin();
	err = bpf_object__load_skeleton(skel);
	if (!err) {
		loaded = true;
		err = bpf_object__attach_skeleton(skel);
		bpf_object__detach_skeleton(skel);
	}
	mm_bpf_log_end();
	if (!err)
		return 0;
	/* As root and not the verifier's doing: the kernel does not allow fentry at all. */
	if (err == -EPERM && !geteuid() && !log_reason[0]) {
		log_prog[0] = 0;
		return mms_source_fail(src, err, "%s: fentry/fexit not permitted by this kernel "
				       "(EPERM when %s %s)", src->ops->name,
				       loaded ? "attaching to" : "loading programs for", what);
	}
	snprintf(buf, sizeof(buf), "%s %s", loaded ? "attaching fentry/fexit to" :
		 "loading fentry/fexit on", what);
	return mm_bpf_fail(src, err, buf);
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
