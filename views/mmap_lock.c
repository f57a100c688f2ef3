// SPDX-License-Identifier: GPL-2.0
/*
 * mmap_lock: per process, contended read and write waits (from the lock
 * contention source); with --mmap-hold, acquisitions and hold times (from
 * the mmap_lock:* tracepoints); with --vma-lock, page faults and those that
 * fell back from the per-VMA lock to mmap_lock, and the kernel's own
 * per-VMA lock counters where it keeps them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmap_lock.h"
#include "mmscope/mm_metrics.h"
#include "mtable.h"
#include "util.h"

enum {
	M_WAIT_R, M_WAIT_W, M_ACQ_R, M_ACQ_W, M_HOLD_R, M_HOLD_W, M_TRYFAIL, M_FAULT, M_FALLBACK,
	M_MMAP_RETRY, M_NR
};

static const struct mtable_metric metrics[M_NR] = {
	[M_WAIT_R] = { MMS_M_MMAP_WAIT_READ, 0, 0 },
	[M_WAIT_W] = { MMS_M_MMAP_WAIT_WRITE, 0, 0 },
	[M_ACQ_R] = { MMS_M_MMAP_ACQUIRE_READ, 0, 0 },
	[M_ACQ_W] = { MMS_M_MMAP_ACQUIRE_WRITE, 0, 0 },
	[M_HOLD_R] = { MMS_M_MMAP_HOLD_READ, 0, 0 },
	[M_HOLD_W] = { MMS_M_MMAP_HOLD_WRITE, 0, 0 },
	[M_TRYFAIL] = { MMS_M_MMAP_TRYLOCK_FAIL, 0, 0 },
	[M_FAULT] = { MMS_M_VMA_LOCK_FAULTS, 0, 0 },
	[M_FALLBACK] = { MMS_M_VMA_LOCK_FALLBACK, 0, 0 },
	[M_MMAP_RETRY] = { MMS_M_VMA_LOCK_MMAP_RETRY, 0, 0 },
};

static const struct mms_column cols[] = {
	{ "PID", 7, 0, false, true, 0 },
	{ "COMM", 0, 8, true, true, 0 },
	{ "RD CONT/s", 9, 0, false, true, 0 },
	{ "RD WAIT/s", 9, 0, false, true, 0 },
	{ "RD AVG", 7, 0, false, true, 3 },
	{ "WR CONT/s", 9, 0, false, true, 0 },
	{ "WR WAIT/s", 9, 0, false, true, 0 },
	{ "WR AVG", 7, 0, false, true, 3 },
	{ "HOLD RD", 7, 0, false, true, 4 },
	{ "HOLD WR", 7, 0, false, true, 4 },
	{ "WR MAX", 7, 0, false, true, 5 },
	{ "FAULT/s", 8, 0, false, true, 4 },
	{ "FALLBK/s", 8, 0, false, true, 4 },
	{ "WAIT, LAST MINUTE", 20, 0, true, false, 6 },
};

static const struct mtable_col mcols[] = {
	{ MTABLE_PID, 0 },
	{ MTABLE_COMM, 0 },
	{ MTABLE_COUNT_RATE, M_WAIT_R },
	{ MTABLE_WAIT_RATE, M_WAIT_R },
	{ MTABLE_AVG_TIME, M_WAIT_R },
	{ MTABLE_COUNT_RATE, M_WAIT_W },
	{ MTABLE_WAIT_RATE, M_WAIT_W },
	{ MTABLE_AVG_TIME, M_WAIT_W },
	{ MTABLE_AVG_TIME, M_HOLD_R },
	{ MTABLE_AVG_TIME, M_HOLD_W },
	{ MTABLE_MAX_TIME, M_HOLD_W },
	{ MTABLE_COUNT_RATE, M_FAULT },
	{ MTABLE_COUNT_RATE, M_FALLBACK },
	{ MTABLE_SPARK, 0 },
};

static const struct mtable_cfg cfg = {
	.metrics = metrics,
	.nr_metrics = M_NR,
	.cols = cols,
	.mcols = mcols,
	.nr_cols = sizeof(cols) / sizeof(cols[0]),
	.default_sort = 6,
	.spark_metrics = 1U << M_WAIT_R | 1U << M_WAIT_W,
	.spark_totals = true,
	.noun = "processes",
};

static int view_create(void **priv)
{
	return mtable_create(&cfg, (struct mtable **)priv);
}

static void view_destroy(void *priv)
{
	mtable_destroy(priv);
}

static int view_update(void *priv, const struct mms_view_env *env)
{
	return mtable_update(priv, env);
}

static struct mms_list *view_table(void *priv)
{
	return mtable_table(priv);
}

static void totals(struct mtable *m, const struct mms_view_env *env, struct mms_canvas *c, int y)
{
	const struct mms_stat *wr = mtable_sum(m, M_WAIT_R), *ww = mtable_sum(m, M_WAIT_W);
	char a[16], b[16], d[16], e[16], f[16], g[16];

	util_fmt_rate(a, sizeof(a), wr->count, env->secs);
	util_fmt_wait_rate(b, sizeof(b), wr->total, env->secs);
	util_fmt_rate(d, sizeof(d), ww->count, env->secs);
	util_fmt_wait_rate(e, sizeof(e), ww->total, env->secs);
	util_fmt_rate(f, sizeof(f), mtable_sum(m, M_ACQ_R)->count, env->secs);
	util_fmt_rate(g, sizeof(g), mtable_sum(m, M_ACQ_W)->count, env->secs);
	mms_canvas_printf(c, 0, y, MMS_ROLE_NORMAL, c->w,
			  "contended: read %s/s (%s/s waiting), write %s/s (%s/s waiting)", a, b, d,
			  e);
	if (mtable_sum(m, M_ACQ_R)->count || mtable_sum(m, M_ACQ_W)->count) {
		char h[16];

		util_fmt_rate(h, sizeof(h), mtable_sum(m, M_TRYFAIL)->count, env->secs);
		bool sampled = env->fam && env->fam[MMS_FAM_MMAP_LOCK].backend &&
			       !strcmp(env->fam[MMS_FAM_MMAP_LOCK].backend, "sampled");

		mms_canvas_printf(c, 0, y + 1, MMS_ROLE_NORMAL, c->w,
				  "acquired: read %s/s, write %s/s; failed trylocks %s/s%s", f, g, h,
				  sampled ? "  (holds sampled: acquisitions and hold totals are "
					    "estimates)" : "");
	} else {
		mms_canvas_put(c, 0, y + 1, MMS_ROLE_DIM,
			       "hold times and acquisitions: run with --mmap-hold "
			       "(traces every mmap_lock acquisition)", c->w);
	}
}

/* The family's source counts faults only (--vma-lock without --mmap-hold). */
static bool faults_only(const struct mms_view_env *env)
{
	const struct mms_family_status *fs = env->fam ? &env->fam[MMS_FAM_MMAP_LOCK] : NULL;

	return fs && fs->source && fs->backend && !strcmp(fs->backend, "faults");
}

/* Faults per second and the share of them that fell back, as "12.3k/s, 4.5 %". */
static void fmt_fallback(char *buf, size_t len, uint64_t fell, uint64_t faults, double secs)
{
	char r[16];

	util_fmt_rate(r, sizeof(r), fell, secs);
	if (faults)
		snprintf(buf, len, "%s/s (%.2f %%)", r, 100.0 * (double)fell / (double)faults);
	else
		snprintf(buf, len, "%s/s", r);
}

/*
 * The per-VMA lock line: faults and fallbacks of the processes shown, then
 * the kernel's counters (system-wide) where it has them, or why not.
 */
static void vma_lock_line(struct mtable *m, const struct mms_view_env *env,
			  struct mms_canvas *c, int y)
{
	const struct mms_stat *f = mtable_sum(m, M_FAULT), *fb = mtable_sum(m, M_FALLBACK);
	char a[16], b[48], d[16], k[4][16];
	struct mms_stat ks[MMS_VMA_LOCK_K_NR];
	int x;

	if (!f->count && !util_metric_seen(env->st, MMS_M_VMA_LOCK_FAULTS)) {
		mms_canvas_put(c, 0, y, MMS_ROLE_DIM, "per-VMA lock faults and fallbacks: run with "
			       "--vma-lock", c->w);
		return;
	}
	util_fmt_rate(a, sizeof(a), f->count, env->secs);
	fmt_fallback(b, sizeof(b), fb->count, f->count, env->secs);
	util_fmt_rate(d, sizeof(d), mtable_sum(m, M_MMAP_RETRY)->count, env->secs);
	x = mms_canvas_printf(c, 0, y, MMS_ROLE_NORMAL, c->w, "page faults %s/s: fell back to "
			      "mmap_lock %s, retried under it %s/s", a, b, d);
	/* Without them, the source line above says why. */
	if (!util_metric_seen(env->st, MMS_M_VMA_LOCK_KERNEL))
		return;
	for (int i = 0; i < MMS_VMA_LOCK_K_NR; i++) {
		util_metric(env, MMS_M_VMA_LOCK_KERNEL, i, 0, &ks[i]);
		util_fmt_rate(k[i], sizeof(k[i]), ks[i].count, env->secs);
	}
	if (x + 2 < c->w)
		mms_canvas_printf(c, x, y, MMS_ROLE_NORMAL, c->w - x, "; kernel: success %s/s, "
				  "abort %s/s, retry %s/s, miss %s/s", k[MMS_VMA_LOCK_K_SUCCESS],
				  k[MMS_VMA_LOCK_K_ABORT], k[MMS_VMA_LOCK_K_RETRY],
				  k[MMS_VMA_LOCK_K_MISS]);
}

static void view_draw(void *priv, const struct mms_view_env *env, struct mms_canvas *c, int y,
		      int h)
{
	struct mtable *m = priv;
	int rows;

	if (h < 4)
		return;
	rows = util_source(c, y, 1, env, MMS_FAM_LOCK, "waits");
	rows += util_source(c, y + rows, 2, env, MMS_FAM_MMAP_LOCK, faults_only(env) ?
			  "per-VMA lock (hold times: --mmap-hold)" : "hold times");
	if (!env->valid) {
		util_empty(c, y + rows, h - rows, "waiting for the first interval...");
		return;
	}
	totals(m, env, c, y + rows);
	vma_lock_line(m, env, c, y + rows + 2);
	rows += 3;
	mtable_draw(m, env, c, y + rows, h - rows);
}

const struct mms_view mms_view_mmap_lock = {
	.name = "mmap_lock",
	.help = "per process: contended mmap_lock read/write waits; hold times with --mmap-hold; "
		"page faults that fell back from the per-VMA lock with --vma-lock",
	.create = view_create,
	.destroy = view_destroy,
	.update = view_update,
	.draw = view_draw,
	.list = view_table,
};
