// SPDX-License-Identifier: GPL-2.0
/*
 * Timeline: the headline rates over the store's whole window as
 * sparklines, one row per rate, with the interval shown marked, so a
 * paused or replayed moment can be placed in the run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mmscope/format.h"
#include "mmscope/mm_metrics.h"
#include "timeline.h"
#include "util.h"

enum tl_kind { TL_LOCK_COUNT, TL_LOCK_WAIT, TL_METRIC_COUNT, TL_METRIC_TOTAL, TL_LOST };

struct tl_def {
	const char *label;
	enum tl_kind kind;
	const char *metric, *metric2;
	int fam;		/* family, or -1 */
	const char *backend;	/* shown with this backend (NULL: one that measures) */
	bool time;
};

static const struct tl_def defs[] = {
	{ "contentions/s", TL_LOCK_COUNT, NULL, NULL, MMS_FAM_LOCK, NULL, false },
	{ "lock wait/s", TL_LOCK_WAIT, NULL, NULL, MMS_FAM_LOCK, NULL, true },
	{ "mmap_lock waits/s", TL_METRIC_COUNT, MMS_M_MMAP_WAIT_READ, MMS_M_MMAP_WAIT_WRITE,
	  MMS_FAM_LOCK, NULL, false },
	{ "VMA splits/s", TL_METRIC_COUNT, MMS_M_VMA_SPLIT, NULL, MMS_FAM_VMA, NULL, false },
	{ "VMA merges/s", TL_METRIC_COUNT, MMS_M_VMA_MERGE, NULL, MMS_FAM_VMA, NULL, false },
	{ "+VMAs/s (inferred)", TL_METRIC_TOTAL, MMS_M_VMA_INFERRED_UP, NULL, MMS_FAM_VMA,
	  "inferred", false },
	{ "-VMAs/s (inferred)", TL_METRIC_TOTAL, MMS_M_VMA_INFERRED_DOWN, NULL, MMS_FAM_VMA,
	  "inferred", false },
	{ "unmap removals/s", TL_METRIC_COUNT, MMS_M_RMAP_BATCH, NULL, MMS_FAM_RMAP, NULL, false },
	{ "pages unmapped/s", TL_METRIC_TOTAL, MMS_M_RMAP_BATCH, NULL, MMS_FAM_RMAP, NULL, false },
	{ "lost events/s", TL_LOST, NULL, NULL, -1, NULL, false },
};

#define TL_N (sizeof(defs) / sizeof(defs[0]))

struct tl_iv {
	uint64_t seq;
	bool valid;
	double v[TL_N];
};

struct timeline {
	struct mms_list t;	/* a document: scrolls when there are more rows than room */
	struct tl_iv *cache;
	uint32_t cap;
	uint64_t epoch;
	uint64_t *vals[TL_N];
	uint32_t n;
	double max[TL_N];
	bool shown[TL_N];
};

static int view_create(void **priv)
{
	struct timeline *tl = calloc(1, sizeof(*tl));

	if (!tl)
		return -ENOMEM;
	tl->t.no_select = true;
	*priv = tl;
	return 0;
}

static void view_destroy(void *priv)
{
	struct timeline *tl = priv;

	if (!tl)
		return;
	for (size_t i = 0; i < TL_N; i++)
		free(tl->vals[i]);
	free(tl->cache);
	free(tl);
}

static struct mms_list *view_table(void *priv)
{
	return &((struct timeline *)priv)->t;
}

static void compute(const struct mms_store *st, const struct mms_interval *iv, struct tl_iv *out)
{
	double secs = iv->dur_ns ? (double)iv->dur_ns / 1e9 : 1.0;
	uint64_t raw[TL_N] = { 0 };

	for (uint32_t j = 0; j < iv->n_locks; j++) {
		raw[0] += iv->locks[j].wait.count;
		raw[1] += iv->locks[j].wait.total;
	}
	for (uint32_t j = 0; j < iv->n_metrics; j++) {
		const char *name = mms_store_get_str(st, iv->metrics[j].metric_id);

		for (size_t d = 0; d < TL_N; d++) {
			const char *m1 = defs[d].metric, *m2 = defs[d].metric2;

			if (!m1 || (strcmp(name, m1) && (!m2 || strcmp(name, m2))))
				continue;
			raw[d] += defs[d].kind == TL_METRIC_TOTAL ? iv->metrics[j].stat.total :
				  iv->metrics[j].stat.count;
		}
	}
	for (int r = 0; r < MMS_LOST_NR; r++)
		raw[TL_N - 1] += iv->lost[r];
	for (size_t d = 0; d < TL_N; d++)
		out->v[d] = (double)raw[d] / secs;
	out->seq = iv->seq;
	out->valid = true;
}

static bool family_fits(const struct mms_view_env *env, const struct tl_def *d)
{
	const struct mms_family_status *fs;

	if (d->fam < 0 || !env->fam)
		return d->fam < 0;
	fs = &env->fam[d->fam];
	if (!fs->source)
		return false;
	if (d->backend)
		return fs->backend && !strcmp(fs->backend, d->backend);
	/* Inferred and stock sources do not measure what these rows show. */
	return d->fam == MMS_FAM_LOCK || !fs->backend ||
	       (strcmp(fs->backend, "inferred") && strcmp(fs->backend, "stock"));
}

static int view_update(void *priv, const struct mms_view_env *env)
{
	struct timeline *tl = priv;
	uint32_t n = env->valid ? mms_store_count(env->st) : 0;

	tl->n = 0;
	if (!n)
		return 0;
	if (n > tl->cap || tl->epoch != env->epoch) {
		uint32_t cap = n > tl->cap ? n * 2 : tl->cap;
		struct tl_iv *c = calloc(cap, sizeof(*c));

		if (!c)
			return -ENOMEM;
		free(tl->cache);
		tl->cache = c;
		tl->cap = cap;
		tl->epoch = env->epoch;
		for (size_t d = 0; d < TL_N; d++) {
			free(tl->vals[d]);
			tl->vals[d] = calloc(cap, sizeof(uint64_t));
			if (!tl->vals[d])
				return -ENOMEM;
		}
	}
	memset(tl->max, 0, sizeof(tl->max));
	for (uint32_t i = 0; i < n; i++) {
		const struct mms_interval *iv = mms_store_at(env->st, i);
		struct tl_iv *c = &tl->cache[iv->seq % tl->cap];

		if (!c->valid || c->seq != iv->seq)
			compute(env->st, iv, c);
		for (size_t d = 0; d < TL_N; d++) {
			/* Sparklines take integers: keep three decimals of a rate. */
			tl->vals[d][i] = (uint64_t)(c->v[d] * (defs[d].time ? 1 : 1000));
			if (c->v[d] > tl->max[d])
				tl->max[d] = c->v[d];
		}
	}
	tl->n = n;
	for (size_t d = 0; d < TL_N; d++)
		tl->shown[d] = tl->max[d] > 0 || family_fits(env, &defs[d]);
	return 0;
}

static void fmt_value(char *buf, size_t len, const struct tl_def *d, double v)
{
	if (d->time)
		util_fmt_time(buf, len, (uint64_t)v);
	else if (v > 0 && v < 0.05)
		snprintf(buf, len, "<0.1");
	else if (v < 100)
		mms_fmt_count(buf, len, (double)(long)(v * 10 + 0.5) / 10);
	else	/* as util_fmt_rate: from 100 on, decimals are noise */
		mms_fmt_count(buf, len, v < 10000 ? (double)(uint64_t)(v + 0.5) : v);
}

static void clock_label(char *buf, size_t len, uint64_t ns)
{
	time_t t = (time_t)(ns / 1000000000ULL);
	struct tm tm;

	if (localtime_r(&t, &tm))
		strftime(buf, len, "%H:%M:%S", &tm);
	else
		snprintf(buf, len, "?");
}

static void view_draw(void *priv, const struct mms_view_env *env, struct mms_canvas *c, int y,
		      int h)
{
	struct timeline *tl = priv;
	/* Narrow terminals keep the sparkline and the current value; max goes first. */
	const int lw = c->w >= 60 ? 20 : 14, rw = c->w >= 70 ? 24 : 8;
	int sw = c->w - lw - rw - 2, row = 0, nb, cx;
	const struct mms_interval *first, *last;
	char a[16], b[16];
	size_t d;

	if (!tl->n || !env->valid) {
		util_empty(c, y, h, "waiting for the first interval...");
		return;
	}
	if (sw < 4)
		sw = 4;
	first = mms_store_at(env->st, 0);
	last = mms_store_at(env->st, tl->n - 1);
	/*
	 * Live, what the history holds, so that a long run's memory can be
	 * watched.  (A replay holds what was read around the position shown:
	 * seeking and stepping differ there, and the frame must not.)
	 */
	if (env->live)
		mms_canvas_printf(c, 0, y + row++, MMS_ROLE_DIM, c->w,
				  "%u intervals in the window (%llu evicted, %.1f MiB held); marker: "
				  "the interval shown (#%llu)", tl->n,
				  (unsigned long long)mms_store_evicted(env->st),
				  (double)mms_store_bytes(env->st) / (1024.0 * 1024.0),
				  (unsigned long long)mms_store_at(env->st, env->cur)->seq);
	else
		mms_canvas_printf(c, 0, y + row++, MMS_ROLE_DIM, c->w,
				  "%u intervals in the window; marker: the interval shown (#%llu)",
				  tl->n, (unsigned long long)mms_store_at(env->st, env->cur)->seq);
	nb = (int)(tl->n < (uint32_t)sw ? tl->n : (uint32_t)sw);
	cx = lw + 1 + sw - nb + (int)((uint64_t)env->cur * (uint64_t)nb / tl->n);
	for (d = 0; d < TL_N && row < h - 3; d++) {
		uint32_t cur = env->cur;

		if (!tl->shown[d])
			continue;
		mms_canvas_put(c, 0, y + row, MMS_ROLE_LABEL, defs[d].label, lw);
		mms_canvas_spark(c, lw + 1, y + row, sw, tl->vals[d], tl->n, 0,
				 d == TL_N - 1 ? MMS_ROLE_ERROR : MMS_ROLE_SPARK);
		fmt_value(a, sizeof(a), &defs[d], tl->cache[mms_store_at(env->st, cur)->seq %
							     tl->cap].v[d]);
		fmt_value(b, sizeof(b), &defs[d], tl->max[d]);
		if (rw >= 24)
			mms_canvas_printf(c, lw + sw + 2, y + row, MMS_ROLE_NORMAL, rw,
					  "%8s max %8s", a, b);
		else
			mms_canvas_printf(c, lw + sw + 2, y + row, MMS_ROLE_NORMAL, rw, "%8s", a);
		row++;
	}
	if (row + 1 < h) {
		char l[16], r[16];

		mms_canvas_put(c, cx, y + row++, MMS_ROLE_WARN, c->utf8 ? "\xe2\x96\xb2" : "^", 1);
		clock_label(l, sizeof(l), first->start_ns);
		clock_label(r, sizeof(r), last->start_ns + last->dur_ns);
		/* The data is right-aligned when it is narrower than the room. */
		if (nb >= 20)
			mms_canvas_put(c, lw + 1 + sw - nb, y + row, MMS_ROLE_DIM, l, nb);
		mms_canvas_put_right(c, lw + 1, y + row++, sw, MMS_ROLE_DIM, r);
	}
	tl->t.nr = (size_t)row;
	mms_list_set_rows(&tl->t, y, h);
}

const struct mms_view mms_view_timeline = {
	.name = "Timeline",
	.help = "headline rates over the whole window as sparklines; the interval shown is marked",
	.create = view_create,
	.destroy = view_destroy,
	.update = view_update,
	.draw = view_draw,
	.list = view_table,
	.whole_history = true,	/* the sparklines span the window */
};
