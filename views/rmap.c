// SPDX-License-Identifier: GPL-2.0
/*
 * rmap: try_to_unmap removals per second, pages per second, the batch-size
 * histogram and mean batch, by folio order.  With only the stock vmscan /
 * migrate tracepoints it shows what those measure (pages per reclaim pass,
 * migration entries) and says that these are not batch sizes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmscope/format.h"
#include "mmscope/mm_metrics.h"
#include "mtable.h"
#include "rmap.h"
#include "util.h"

enum { R_BATCH, R_ANON, R_FILE, R_NR };

static const struct mtable_metric metrics[R_NR] = {
	[R_BATCH] = { MMS_M_RMAP_BATCH, 0, 0 },
	[R_ANON] = { MMS_M_RMAP_BATCH_ANON, 0, 0 },
	[R_FILE] = { MMS_M_RMAP_BATCH_FILE, 0, 0 },
};

static const struct mms_column cols[] = {
	{ "FOLIO", 0, 14, true, true, 0 },
	{ "CALLS/s", 8, 0, false, true, 0 },
	{ "PAGES/s", 8, 0, false, true, 0 },
	{ "MEAN", 7, 0, false, true, 0 },
	{ "MAX", 6, 0, false, true, 2 },
	{ "ANON/s", 8, 0, false, true, 3 },
	{ "FILE/s", 8, 0, false, true, 3 },
	{ "CALLS, LAST MINUTE", 20, 0, true, false, 4 },
};

static const struct mtable_col mcols[] = {
	{ MTABLE_SUB, 0 }, { MTABLE_COUNT_RATE, R_BATCH }, { MTABLE_TOTAL_RATE, R_BATCH },
	{ MTABLE_MEAN, R_BATCH }, { MTABLE_MAX, R_BATCH }, { MTABLE_COUNT_RATE, R_ANON },
	{ MTABLE_COUNT_RATE, R_FILE }, { MTABLE_SPARK, 0 },
};

static const char *order_name(uint32_t order, char *buf, size_t len)
{
	char size[16];

	mms_fmt_bytes(size, sizeof(size), 4096ULL << (order < 20 ? order : 20));
	snprintf(buf, len, "order %u (%s)", order, size);
	return buf;
}

static const struct mtable_cfg cfg = {
	.by_sub = true,
	.sub_name = order_name,
	.metrics = metrics,
	.nr_metrics = R_NR,
	.cols = cols,
	.mcols = mcols,
	.nr_cols = sizeof(cols) / sizeof(cols[0]),
	.default_sort = 1,
	.spark_metrics = 1U << R_BATCH,
	.noun = "folio orders",
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

static bool is_stock(const struct mms_view_env *env)
{
	const struct mms_family_status *fs = env->fam ? &env->fam[MMS_FAM_RMAP] : NULL;

	if (fs && fs->backend)
		return !strcmp(fs->backend, "stock");
	return env->valid && !util_metric_seen(env->st, MMS_M_RMAP_BATCH) &&
	       util_metric_seen(env->st, MMS_M_RMAP_STOCK_RECLAIM);
}

static int draw_stock(const struct mms_view_env *env, struct mms_canvas *c, int y, int h)
{
	struct mms_stat rec, scan, shrink, fail, mig;
	char a[16], b[16], d[16], e[16], f[16], g[16], k[16];
	int rows = 0;

	util_metric(env, MMS_M_RMAP_STOCK_RECLAIM, -1, 0, &rec);
	util_metric(env, MMS_M_RMAP_STOCK_SCANNED, -1, 0, &scan);
	util_metric(env, MMS_M_RMAP_STOCK_SHRINK, -1, 0, &shrink);
	util_metric(env, MMS_M_RMAP_STOCK_UNMAP_FAIL, -1, 0, &fail);
	util_metric(env, MMS_M_RMAP_STOCK_MIGRATION, -1, 0, &mig);
	mms_canvas_put(c, 0, y + rows++, MMS_ROLE_WARN,
		       "stock tracepoints: pages per reclaim pass and migration entries, "
		       "NOT try_to_unmap batch sizes", c->w);
	util_fmt_rate(a, sizeof(a), rec.count, env->secs);
	util_fmt_rate(b, sizeof(b), rec.total, env->secs);
	util_fmt_rate(d, sizeof(d), scan.total, env->secs);
	mms_canvas_printf(c, 0, y + rows++, MMS_ROLE_NORMAL, c->w,
			  "reclaim_pages passes %s/s: %s pages/s reclaimed of %s/s scanned", a, b,
			  d);
	util_fmt_rate(e, sizeof(e), shrink.count, env->secs);
	util_fmt_rate(f, sizeof(f), shrink.total, env->secs);
	util_fmt_rate(g, sizeof(g), fail.total, env->secs);
	util_fmt_rate(k, sizeof(k), mig.count, env->secs);
	mms_canvas_printf(c, 0, y + rows++, MMS_ROLE_NORMAL, c->w,
			  "LRU shrinks %s/s (%s pages/s); unmap failures %s pages/s; "
			  "migration entries %s/s", e, f, g, k);
	if (rows < h)
		rows += util_section(c, y + rows, "pages per reclaim pass");
	rows += util_hist(c, y + rows, h - rows, &rec, false);
	return rows;
}

static void view_draw(void *priv, const struct mms_view_env *env, struct mms_canvas *c, int y,
		      int h)
{
	struct mtable *m = priv;
	const struct mms_stat *all = mtable_sum(m, R_BATCH);
	char a[16], b[16];
	int rows, hist_h;

	if (h < 4)
		return;
	rows = util_source(c, y, 3, env, MMS_FAM_RMAP, "try_to_unmap source");
	if (!env->valid) {
		util_empty(c, y + rows, h - rows, "waiting for the first interval...");
		return;
	}
	if (is_stock(env)) {
		draw_stock(env, c, y + rows, h - rows);
		return;
	}
	if (!util_family_ok(env, MMS_FAM_RMAP) && !mtable_total_rows(m)) {
		util_empty(c, y + rows, h - rows, "no try_to_unmap data: see above for why");
		return;
	}
	util_fmt_rate(a, sizeof(a), all->count, env->secs);
	util_fmt_rate(b, sizeof(b), all->total, env->secs);
	mms_canvas_printf(c, 0, y + rows++, MMS_ROLE_NORMAL, c->w,
			  "try_to_unmap removals %s/s, %s pages/s, mean batch %.2f pages", a, b,
			  all->count ? (double)all->total / (double)all->count : 0.0);
	/* The table first gets a few rows; the histogram what it needs of the rest. */
	hist_h = (h - rows) / 2;
	if (hist_h > 1) {
		rows += util_section(c, y + rows, "batch size (pages per removal)");
		rows += util_hist(c, y + rows, hist_h - 1, all, false);
	}
	mtable_draw(m, env, c, y + rows, h - rows);
}

const struct mms_view mms_view_rmap = {
	.name = "rmap",
	.help = "try_to_unmap: removals/s, pages/s, batch sizes, mean batch, by folio order",
	.create = view_create,
	.destroy = view_destroy,
	.update = view_update,
	.draw = view_draw,
	.list = view_table,
	.whole_history = true,	/* which source there was: util_metric_seen() */
};
