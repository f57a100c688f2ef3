// SPDX-License-Identifier: GPL-2.0
/*
 * `mmscope export --perfetto`: the store as a Chrome JSON trace (the "Trace Event
 * Format" that ui.perfetto.dev and chrome://tracing open).  Every interval becomes one
 * counter event per track at the interval's start, holding the interval's rates; one more
 * event of zeros closes each track at the last interval's end.  Tracks are grouped into
 * pseudo-processes (locks, mmap_lock, VMA, rmap, lost events) so the UI shows them as
 * five groups; instant events mark what happened once (the target exited).
 *
 * Timestamps are microseconds from the first interval's start (CLOCK_REALTIME in the
 * recording), forced to never go back: the format wants them ordered, and a clock step
 * between two intervals would otherwise put one before the other.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mmscope/escape.h"
#include "mmscope/export.h"
#include "mmscope/mm_metrics.h"
#include "mmscope/query.h"

enum group { G_LOCKS = 1, G_MMAP, G_VMA, G_RMAP, G_LOST, G_EVENTS };

static const char *const group_names[] = {
	[G_LOCKS] = "locks: contentions/s, wait ms/s",
	[G_MMAP] = "mmap_lock waits per process",
	[G_VMA] = "VMA operations/s",
	[G_RMAP] = "rmap (try_to_unmap) per second",
	[G_LOST] = "lost events/s",
	[G_EVENTS] = "events",
};

/* mmap_lock wait, per process: summed over the whole store to choose the top ones. */
struct proc_wait {
	uint32_t proc_id;
	uint64_t wait;
	unsigned int track;	/* 1 + index among the top, 0: "other" */
};

struct ctx {
	FILE *f;
	const struct mms_store *st;
	bool first;		/* no event written yet: no comma before it */
	double ts;		/* last timestamp written, us */
};

static void json_str(FILE *f, const char *s)
{
	mms_esc_fput_json(f, s ? s : "");
}

static void event_begin(struct ctx *c, const char *name, char ph, double ts, int pid)
{
	fputs(c->first ? "\n" : ",\n", c->f);
	c->first = false;
	fputs("{\"name\":", c->f);
	json_str(c->f, name);
	fprintf(c->f, ",\"ph\":\"%c\",\"ts\":%.3f,\"pid\":%d,\"tid\":%d", ph, ts, pid, pid);
}

/* One counter event: args are name/value pairs, values per second of the interval. */
static void counter(struct ctx *c, const char *name, int pid, double ts, unsigned int n,
		    const char *const keys[], const double vals[])
{
	event_begin(c, name, 'C', ts, pid);
	fputs(",\"args\":{", c->f);
	for (unsigned int i = 0; i < n; i++) {
		if (i)
			fputc(',', c->f);
		json_str(c->f, keys[i]);
		fprintf(c->f, ":%.10g", vals[i]);
	}
	fputs("}}", c->f);
}

static void metadata(struct ctx *c)
{
	for (int g = G_LOCKS; g <= G_EVENTS; g++) {
		event_begin(c, "process_name", 'M', 0, g);
		fputs(",\"args\":{\"name\":", c->f);
		json_str(c->f, group_names[g]);
		fputs("}}", c->f);
		event_begin(c, "process_sort_index", 'M', 0, g);
		fprintf(c->f, ",\"args\":{\"sort_index\":%d}}", g);
	}
}

static int cmp_proc_id(const void *a, const void *b)
{
	const struct proc_wait *x = a, *y = b;

	return x->proc_id < y->proc_id ? -1 : x->proc_id > y->proc_id;
}

static int cmp_proc_wait(const void *a, const void *b)
{
	const struct proc_wait *x = a, *y = b;

	if (x->wait != y->wait)
		return x->wait < y->wait ? 1 : -1;
	return cmp_proc_id(a, b);
}

static bool is_mmap_wait(const struct mms_store *st, const struct mms_metric_sample *m)
{
	const char *n = mms_store_get_str(st, m->metric_id);

	return !strcmp(n, MMS_M_MMAP_WAIT_READ) || !strcmp(n, MMS_M_MMAP_WAIT_WRITE);
}

/*
 * The processes with mmap_lock waits, the top ones first, each with its track number;
 * returned sorted by proc_id (for bsearch) in *out, with *nr entries.
 */
static int mmap_procs(const struct mms_store *st, unsigned int top, struct proc_wait **out,
		      size_t *nr)
{
	struct proc_wait *p = NULL;
	size_t n = 0, cap = 0, w;
	uint32_t count = mms_store_count(st);

	for (uint32_t i = 0; i < count; i++) {
		const struct mms_interval *iv = mms_store_at(st, i);

		for (uint32_t j = 0; j < iv->n_metrics; j++) {
			const struct mms_metric_sample *m = &iv->metrics[j];

			if (!is_mmap_wait(st, m))
				continue;
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 64;
				struct proc_wait *np = realloc(p, nc * sizeof(*p));

				if (!np) {
					free(p);
					return -ENOMEM;
				}
				p = np;
				cap = nc;
			}
			p[n++] = (struct proc_wait){ .proc_id = m->proc_id, .wait = m->stat.total };
		}
	}
	if (n > 1)
		qsort(p, n, sizeof(*p), cmp_proc_id);
	for (size_t i = w = 0; i < n; i++) {
		if (w && p[w - 1].proc_id == p[i].proc_id) {
			p[w - 1].wait += p[i].wait;
			continue;
		}
		p[w++] = p[i];
	}
	n = w;
	if (n > 1)
		qsort(p, n, sizeof(*p), cmp_proc_wait);
	for (size_t i = 0; i < n; i++)
		p[i].track = i < top ? (unsigned int)i + 1 : 0;
	if (n > 1)
		qsort(p, n, sizeof(*p), cmp_proc_id);
	*out = p;
	*nr = n;
	return 0;
}

static void proc_label(const struct mms_store *st, uint32_t proc_id, char *buf, size_t len)
{
	const struct mms_task *t = mms_store_get_task(st, proc_id);

	if (!t)
		snprintf(buf, len, "system");
	else if (mms_tgid_short(t->tgid))
		snprintf(buf, len, "<%s>", mms_store_get_str(st, t->comm_id));
	else
		snprintf(buf, len, "%s (%u)", mms_store_get_str(st, t->comm_id), t->tgid);
}

/* Sum of one metric over an interval, all processes and subs. */
static void metric_sum(const struct mms_store *st, uint32_t i, const char *name,
		       struct mms_stat *out)
{
	mms_query_metric(st, i, i, name, -1, 0, out);
}

static void interval_tracks(struct ctx *c, uint32_t i, double ts, double secs,
			    const struct mms_rows *locks, const struct mms_query *lq,
			    const struct proc_wait *procs, size_t nr_procs, double *mm,
			    unsigned int nr_mm, bool zero)
{
	static const char *const lock_keys[] = { "contentions/s", "wait ms/s" };
	static const char *const mm_keys[] = { "waits/s", "wait ms/s" };
	const struct mms_interval *iv = mms_store_at(c->st, i);
	const double z = zero ? 0 : 1;
	char label[512];
	double v[4];
	uint64_t lost = 0;
	struct mms_stat s;

	/* All locks, then the top ones. */
	v[0] = v[1] = 0;
	for (uint32_t j = 0; j < iv->n_locks; j++) {
		v[0] += (double)iv->locks[j].wait.count;
		v[1] += (double)iv->locks[j].wait.total;
	}
	v[0] = z * v[0] / secs;
	v[1] = z * v[1] / 1e6 / secs;
	counter(c, "all locks", G_LOCKS, ts, 2, lock_keys, v);
	for (size_t r = 0; r < locks->nr; r++) {
		uint64_t n = 0, w = 0;

		mms_query_series(c->st, lq, locks->rows[r].key, true, &n, 1);
		mms_query_series(c->st, lq, locks->rows[r].key, false, &w, 1);
		v[0] = z * (double)n / secs;
		v[1] = z * (double)w / 1e6 / secs;
		mms_store_lock_label(c->st, locks->rows[r].first_lock, label, sizeof(label));
		counter(c, label, G_LOCKS, ts, 2, lock_keys, v);
	}

	/* mmap_lock waits of the top processes (from the lock source's wait.* metrics). */
	memset(mm, 0, sizeof(*mm) * 2 * nr_mm);
	for (uint32_t j = 0; j < iv->n_metrics; j++) {
		const struct mms_metric_sample *m = &iv->metrics[j];
		struct proc_wait key = { .proc_id = m->proc_id };
		const struct proc_wait *p;

		if (!is_mmap_wait(c->st, m))
			continue;
		p = bsearch(&key, procs, nr_procs, sizeof(*procs), cmp_proc_id);
		if (!p)
			continue;
		mm[2 * p->track] += (double)m->stat.count;
		mm[2 * p->track + 1] += (double)m->stat.total;
	}
	for (size_t k = 0; k < nr_procs; k++) {
		const struct proc_wait *p = &procs[k];

		if (!p->track)
			continue;
		proc_label(c->st, p->proc_id, label, sizeof(label));
		v[0] = z * mm[2 * p->track] / secs;
		v[1] = z * mm[2 * p->track + 1] / 1e6 / secs;
		counter(c, label, G_MMAP, ts, 2, mm_keys, v);
	}
	if (nr_procs > nr_mm - 1) {
		v[0] = z * mm[0] / secs;
		v[1] = z * mm[1] / 1e6 / secs;
		counter(c, "other processes", G_MMAP, ts, 2, mm_keys, v);
	}

	/* VMA: measured operations and, where only those exist, inferred count changes. */
	metric_sum(c->st, i, MMS_M_VMA_SPLIT, &s);
	v[0] = z * (double)s.count / secs;
	metric_sum(c->st, i, MMS_M_VMA_MERGE, &s);
	v[1] = z * (double)s.count / secs;
	metric_sum(c->st, i, MMS_M_VMA_INFERRED_UP, &s);
	v[2] = z * (double)s.total / secs;
	metric_sum(c->st, i, MMS_M_VMA_INFERRED_DOWN, &s);
	v[3] = z * (double)s.total / secs;
	counter(c, "VMA", G_VMA, ts, 4,
		(const char *const[]){ "splits/s", "merges/s", "inferred count +/s",
				       "inferred count -/s" }, v);

	/* rmap: try_to_unmap removals and the pages they removed; stock reclaim. */
	metric_sum(c->st, i, MMS_M_RMAP_BATCH, &s);
	v[0] = z * (double)s.count / secs;
	v[1] = z * (double)s.total / secs;
	metric_sum(c->st, i, MMS_M_RMAP_STOCK_RECLAIM, &s);
	v[2] = z * (double)s.total / secs;
	counter(c, "rmap", G_RMAP, ts, 3,
		(const char *const[]){ "removals/s", "pages removed/s", "pages reclaimed/s" }, v);

	for (int r = 0; r < MMS_LOST_NR; r++)
		lost += iv->lost[r];
	v[0] = z * (double)lost / secs;
	counter(c, "lost events", G_LOST, ts, 1, (const char *const[]){ "lost/s" }, v);
}

int mms_export_perfetto(FILE *f, const struct mms_store *st, const struct mms_export_meta *m,
			unsigned int top)
{
	struct ctx c = { .f = f, .st = st, .first = true };
	uint32_t n = mms_store_count(st);
	struct mms_query q = { .by = MMS_BY_LOCK, .sort = MMS_SORT_WAIT_TOTAL, .no_labels = true };
	struct mms_rows locks = { 0 };
	struct proc_wait *procs = NULL;
	size_t nr_procs = 0;
	double *mm = NULL;
	uint64_t base = n ? mms_store_at(st, 0)->start_ns : 0;
	int err;

	if (!top)
		top = 1;
	q.from = 0;
	q.to = n ? n - 1 : 0;
	if (!n)
		q.from = 1;
	err = mms_query_locks(st, &q, &locks);
	if (err)
		return err;
	if (locks.nr > top)
		locks.nr = top;
	err = mmap_procs(st, top, &procs, &nr_procs);
	if (err)
		goto out;
	mm = calloc(2 * ((size_t)top + 1), sizeof(*mm));
	if (!mm) {
		err = -ENOMEM;
		goto out;
	}

	fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"producer\":", f);
	json_str(f, "mmscope " MMS_VERSION);
	fputs(",\"host\":", f);
	json_str(f, m ? m->host : NULL);
	fputs(",\"kernel\":", f);
	json_str(f, m ? m->kernel : NULL);
	fputs(",\"target\":", f);
	json_str(f, m ? m->target : NULL);
	fputs(",\"recording\":", f);
	json_str(f, m ? m->source_name : NULL);
	fprintf(f, ",\"start_realtime_ns\":%llu},\"traceEvents\":[", (unsigned long long)base);
	metadata(&c);
	for (uint32_t i = 0; i < n; i++) {
		const struct mms_interval *iv = mms_store_at(st, i);
		double ts = iv->start_ns > base ? (double)(iv->start_ns - base) / 1e3 : 0;
		double secs = iv->dur_ns ? (double)iv->dur_ns / 1e9 : 1;
		double end;

		if (ts < c.ts)
			ts = c.ts;
		q.from = q.to = i;
		interval_tracks(&c, i, ts, secs, &locks, &q, procs, nr_procs, mm, top + 1, false);
		c.ts = ts;
		end = ts + (double)iv->dur_ns / 1e3;
		if (iv->flags & MMS_IV_TARGET_EXITED) {
			event_begin(&c, "target exited", 'i', end, G_EVENTS);
			fputs(",\"s\":\"g\",\"args\":{\"target\":", f);
			json_str(f, m ? m->target : NULL);
			fputs("}}", f);
			c.ts = end;
		}
		if (i + 1 == n)	/* close every track at the end of the last interval */
			interval_tracks(&c, i, end, secs, &locks, &q, procs, nr_procs, mm, top + 1,
					true);
	}
	fputs("\n]}\n", f);
	if (fflush(f) || ferror(f))
		err = -EIO;
out:
	free(mm);
	free(procs);
	mms_rows_free(&locks);
	return err;
}
