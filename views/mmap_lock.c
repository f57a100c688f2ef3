// SPDX-License-Identifier: GPL-2.0
/*
 * mmap_lock: per process, contended read and write waits (from the lock
 * contention source) and, with --mmap-hold, acquisitions and hold times
 * (from the mmap_lock:* tracepoints).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmap_lock.h"
#include "mmscope/mm_metrics.h"
#include "mtable.h"
#include "util.h"

enum { M_WAIT_R, M_WAIT_W, M_ACQ_R, M_ACQ_W, M_HOLD_R, M_HOLD_W, M_TRYFAIL, M_NR };

static const struct mt_metric metrics[M_NR] = {
	[M_WAIT_R] = { MMS_M_MMAP_WAIT_READ, 0, 0 },
	[M_WAIT_W] = { MMS_M_MMAP_WAIT_WRITE, 0, 0 },
	[M_ACQ_R] = { MMS_M_MMAP_ACQUIRE_READ, 0, 0 },
	[M_ACQ_W] = { MMS_M_MMAP_ACQUIRE_WRITE, 0, 0 },
	[M_HOLD_R] = { MMS_M_MMAP_HOLD_READ, 0, 0 },
	[M_HOLD_W] = { MMS_M_MMAP_HOLD_WRITE, 0, 0 },
	[M_TRYFAIL] = { MMS_M_MMAP_TRYLOCK_FAIL, 0, 0 },
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
	{ "WAIT, LAST MINUTE", 20, 0, true, false, 6 },
};

static const struct mt_col mcols[] = {
	{ MT_PID, 0 },
	{ MT_COMM, 0 },
	{ MT_COUNT_RATE, M_WAIT_R },
	{ MT_WAIT_RATE, M_WAIT_R },
	{ MT_AVG_TIME, M_WAIT_R },
	{ MT_COUNT_RATE, M_WAIT_W },
	{ MT_WAIT_RATE, M_WAIT_W },
	{ MT_AVG_TIME, M_WAIT_W },
	{ MT_AVG_TIME, M_HOLD_R },
	{ MT_AVG_TIME, M_HOLD_W },
	{ MT_MAX_TIME, M_HOLD_W },
	{ MT_SPARK, 0 },
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

	vu_fmt_rate(a, sizeof(a), wr->count, env->secs);
	vu_fmt_wait_rate(b, sizeof(b), wr->total, env->secs);
	vu_fmt_rate(d, sizeof(d), ww->count, env->secs);
	vu_fmt_wait_rate(e, sizeof(e), ww->total, env->secs);
	vu_fmt_rate(f, sizeof(f), mtable_sum(m, M_ACQ_R)->count, env->secs);
	vu_fmt_rate(g, sizeof(g), mtable_sum(m, M_ACQ_W)->count, env->secs);
	mms_canvas_printf(c, 0, y, MMS_ROLE_NORMAL, c->w,
			  "contended: read %s/s (%s/s waiting), write %s/s (%s/s waiting)", a, b, d,
			  e);
	if (mtable_sum(m, M_ACQ_R)->count || mtable_sum(m, M_ACQ_W)->count) {
		char h[16];

		vu_fmt_rate(h, sizeof(h), mtable_sum(m, M_TRYFAIL)->count, env->secs);
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

static void view_draw(void *priv, const struct mms_view_env *env, struct mms_canvas *c, int y,
		      int h)
{
	struct mtable *m = priv;
	int rows;

	if (h < 4)
		return;
	rows = vu_source(c, y, 1, env, MMS_FAM_LOCK, "waits");
	rows += vu_source(c, y + rows, 2, env, MMS_FAM_MMAP_LOCK, "hold times");
	if (!env->valid) {
		vu_empty(c, y + rows, h - rows, "waiting for the first interval...");
		return;
	}
	totals(m, env, c, y + rows);
	rows += 2;
	mtable_draw(m, env, c, y + rows, h - rows);
}

const struct mms_view mms_view_mmap_lock = {
	.name = "mmap_lock",
	.help = "per process: contended mmap_lock read/write waits; hold times with --mmap-hold",
	.create = view_create,
	.destroy = view_destroy,
	.update = view_update,
	.draw = view_draw,
	.list = view_table,
};
