// SPDX-License-Identifier: GPL-2.0
/*
 * VMA: splits, merges by kind, expands and shrinks per second, per process,
 * from the patched tracepoints or fentry.  Where only the inferred source
 * works the view says so on top and shows what that source really measures
 * (VMA-count changes per syscall), by syscall and by process.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmscope/mm_metrics.h"
#include "mtable.h"
#include "util.h"
#include "vma.h"

enum { V_SPLIT, V_MERGE, V_PREV, V_NEXT, V_BOTH, V_EXPAND, V_SHRINK, V_NR };

static const struct mtable_metric measured_metrics[V_NR] = {
	[V_SPLIT] = { MMS_M_VMA_SPLIT, 0, 0 },
	[V_MERGE] = { MMS_M_VMA_MERGE, 0, 0 },
	[V_PREV] = { MMS_M_VMA_MERGE, 3, MMS_VMA_MERGE_PREV },
	[V_NEXT] = { MMS_M_VMA_MERGE, 3, MMS_VMA_MERGE_NEXT },
	[V_BOTH] = { MMS_M_VMA_MERGE, 3, MMS_VMA_MERGE_BOTH },
	[V_EXPAND] = { MMS_M_VMA_EXPAND, 0, 0 },
	[V_SHRINK] = { MMS_M_VMA_SHRINK, 0, 0 },
};

static const struct mms_column measured_cols[] = {
	{ "PID", 7, 0, false, true, 0 },
	{ "COMM", 0, 8, true, true, 0 },
	{ "SPLIT/s", 8, 0, false, true, 0 },
	{ "MERGE/s", 8, 0, false, true, 0 },
	{ "PREV/s", 7, 0, false, true, 3 },
	{ "NEXT/s", 7, 0, false, true, 3 },
	{ "BOTH/s", 7, 0, false, true, 3 },
	{ "EXPAND/s", 8, 0, false, true, 2 },
	{ "SHRINK/s", 8, 0, false, true, 2 },
	{ "SPLITS+MERGES, LAST MIN", 20, 0, true, false, 4 },
};

static const struct mtable_col measured_mcols[] = {
	{ MTABLE_PID, 0 }, { MTABLE_COMM, 0 },
	{ MTABLE_COUNT_RATE, V_SPLIT }, { MTABLE_COUNT_RATE, V_MERGE },
	{ MTABLE_COUNT_RATE, V_PREV }, { MTABLE_COUNT_RATE, V_NEXT }, { MTABLE_COUNT_RATE, V_BOTH },
	{ MTABLE_COUNT_RATE, V_EXPAND }, { MTABLE_COUNT_RATE, V_SHRINK }, { MTABLE_SPARK, 0 },
};

static const struct mtable_cfg measured = {
	.metrics = measured_metrics,
	.nr_metrics = V_NR,
	.cols = measured_cols,
	.mcols = measured_mcols,
	.nr_cols = sizeof(measured_cols) / sizeof(measured_cols[0]),
	.default_sort = 2,
	.spark_metrics = 1U << V_SPLIT | 1U << V_MERGE,
	.noun = "processes",
};

enum { I_CALLS, I_UP, I_DOWN, I_SHORT, I_NR };

static const struct mtable_metric inferred_metrics[I_NR] = {
	[I_CALLS] = { MMS_M_VMA_INFERRED_CALLS, 0, 0 },
	[I_UP] = { MMS_M_VMA_INFERRED_UP, 0, 0 },
	[I_DOWN] = { MMS_M_VMA_INFERRED_DOWN, 0, 0 },
	[I_SHORT] = { MMS_M_VMA_INFERRED_SHORT, 0, 0 },
};

static const struct mms_column inferred_cols[] = {
	{ "PID", 7, 0, false, true, 0 },
	{ "COMM", 0, 8, true, true, 0 },
	{ "CALLS/s", 8, 0, false, true, 0 },
	{ "+VMAs/s", 8, 0, false, true, 0 },
	{ "-VMAs/s", 8, 0, false, true, 0 },
	{ "UP/s", 7, 0, false, true, 2 },
	{ "DOWN/s", 7, 0, false, true, 2 },
	{ "VMA CHANGES, LAST MIN", 20, 0, true, false, 4 },
};

static const struct mtable_col inferred_mcols[] = {
	{ MTABLE_PID, 0 }, { MTABLE_COMM, 0 },
	{ MTABLE_COUNT_RATE, I_CALLS }, { MTABLE_TOTAL_RATE, I_UP },
	{ MTABLE_TOTAL_RATE, I_DOWN }, { MTABLE_COUNT_RATE, I_UP }, { MTABLE_COUNT_RATE, I_DOWN },
	{ MTABLE_SPARK, 0 },
};

static const struct mtable_cfg inferred = {
	.metrics = inferred_metrics,
	.nr_metrics = I_NR,
	.cols = inferred_cols,
	.mcols = inferred_mcols,
	.nr_cols = sizeof(inferred_cols) / sizeof(inferred_cols[0]),
	.default_sort = 2,
	.spark_metrics = 1U << I_UP | 1U << I_DOWN,
	.spark_totals = true,
	.noun = "processes",
	.group_procs = I_SHORT + 1,
};

#define MAX_SYSCALLS 16

/* Inferred: per syscall (sub) calls / up / down. */
struct sys_row {
	uint32_t nr;
	struct mms_stat s[I_NR];
};

struct vma_view {
	struct mtable *m;
	bool is_inferred;
	struct sys_row sys[MAX_SYSCALLS];
	int nr_sys;
	/* Measured: splits by side and file/anon, merges by origin. */
	uint64_t split_below, split_file, merge_origin[4], merge_removed;
};

static int view_create(void **priv)
{
	struct vma_view *v = calloc(1, sizeof(*v));
	int err;

	if (!v)
		return -ENOMEM;
	err = mtable_create(&measured, &v->m);
	if (err) {
		free(v);
		return err;
	}
	*priv = v;
	return 0;
}

static void view_destroy(void *priv)
{
	struct vma_view *v = priv;

	if (!v)
		return;
	mtable_destroy(v->m);
	free(v);
}

/* Which source the data is from: the family status, else what the store holds. */
static bool use_inferred(const struct mms_view_env *env)
{
	const struct mms_family_status *fs = env->fam ? &env->fam[MMS_FAM_VMA] : NULL;

	if (fs && fs->backend)
		return !strcmp(fs->backend, "inferred");
	return env->valid && !util_metric_seen(env->st, MMS_M_VMA_SPLIT) &&
	       !util_metric_seen(env->st, MMS_M_VMA_MERGE) &&
	       util_metric_seen(env->st, MMS_M_VMA_INFERRED_CALLS);
}

static int sys_slot(struct vma_view *v, uint32_t nr)
{
	for (int i = 0; i < v->nr_sys; i++)
		if (v->sys[i].nr == nr)
			return i;
	if (v->nr_sys == MAX_SYSCALLS)
		return -1;
	memset(&v->sys[v->nr_sys], 0, sizeof(v->sys[0]));
	v->sys[v->nr_sys].nr = nr;
	return v->nr_sys++;
}

/* The breakdowns the per-process table has no columns for. */
static void summarise(struct vma_view *v, const struct mms_view_env *env)
{
	v->nr_sys = 0;
	v->split_below = v->split_file = v->merge_removed = 0;
	memset(v->merge_origin, 0, sizeof(v->merge_origin));
	for (uint32_t i = env->from; i <= env->cur; i++) {
		const struct mms_interval *iv = mms_store_at(env->st, i);

		for (uint32_t j = 0; j < iv->n_metrics; j++) {
			const struct mms_metric_sample *s = &iv->metrics[j];
			const char *name = mms_store_get_str(env->st, s->metric_id);
			int k = -1, slot;

			if (!strcmp(name, MMS_M_VMA_SPLIT)) {
				if ((s->sub & 0xff) == MMS_VMA_SPLIT_NEW_BELOW)
					v->split_below += s->stat.count;
				if (s->sub & MMS_VMA_FILE)
					v->split_file += s->stat.count;
			} else if (!strcmp(name, MMS_M_VMA_MERGE)) {
				v->merge_origin[mms_vma_sub_origin(s->sub)] += s->stat.count;
				v->merge_removed += s->stat.total;
			} else if (!strcmp(name, MMS_M_VMA_INFERRED_CALLS)) {
				k = I_CALLS;
			} else if (!strcmp(name, MMS_M_VMA_INFERRED_UP)) {
				k = I_UP;
			} else if (!strcmp(name, MMS_M_VMA_INFERRED_DOWN)) {
				k = I_DOWN;
			}
			if (k < 0)
				continue;
			slot = sys_slot(v, s->sub);
			if (slot >= 0)
				mms_stat_merge(&v->sys[slot].s[k], &s->stat);
		}
	}
}

static int cmp_sys(const void *a, const void *b)
{
	const struct sys_row *x = a, *y = b;

	if (x->s[I_CALLS].count != y->s[I_CALLS].count)
		return x->s[I_CALLS].count > y->s[I_CALLS].count ? -1 : 1;
	return x->nr < y->nr ? -1 : x->nr > y->nr;
}

static int view_update(void *priv, const struct mms_view_env *env)
{
	struct vma_view *v = priv;

	v->is_inferred = use_inferred(env);
	mtable_set_cfg(v->m, v->is_inferred ? &inferred : &measured);
	if (!env->valid)
		return mtable_update(v->m, env);
	summarise(v, env);
	qsort(v->sys, (size_t)v->nr_sys, sizeof(v->sys[0]), cmp_sys);
	return mtable_update(v->m, env);
}

static struct mms_list *view_table(void *priv)
{
	return mtable_table(((struct vma_view *)priv)->m);
}

static int draw_measured(struct vma_view *v, const struct mms_view_env *env,
			 struct mms_canvas *c, int y)
{
	const struct mms_stat *sp = mtable_sum(v->m, V_SPLIT), *mg = mtable_sum(v->m, V_MERGE);
	char a[16], b[16], d[16], e[16], f[16], g[16], h[16], i[16], k[16], l[16];

	util_fmt_rate(a, sizeof(a), sp->count, env->secs);
	util_fmt_rate(b, sizeof(b), v->split_below, env->secs);
	util_fmt_rate(d, sizeof(d), sp->count - v->split_below, env->secs);
	util_fmt_rate(e, sizeof(e), v->split_file, env->secs);
	mms_canvas_printf(c, 0, y, MMS_ROLE_NORMAL, c->w,
			  "splits %s/s: new VMA below %s/s, above %s/s; file-backed %s/s", a, b, d,
			  e);
	util_fmt_rate(f, sizeof(f), mg->count, env->secs);
	util_fmt_rate(g, sizeof(g), mtable_sum(v->m, V_PREV)->count, env->secs);
	util_fmt_rate(h, sizeof(h), mtable_sum(v->m, V_NEXT)->count, env->secs);
	util_fmt_rate(i, sizeof(i), mtable_sum(v->m, V_BOTH)->count, env->secs);
	util_fmt_rate(k, sizeof(k), v->merge_removed, env->secs);
	mms_canvas_printf(c, 0, y + 1, MMS_ROLE_NORMAL, c->w,
			  "merges %s/s: with prev %s/s, next %s/s, both %s/s; VMAs removed %s/s",
			  f, g, h, i, k);
	util_fmt_rate(a, sizeof(a), v->merge_origin[MMS_VMA_ORIGIN_NEW], env->secs);
	util_fmt_rate(b, sizeof(b), v->merge_origin[MMS_VMA_ORIGIN_EXISTING], env->secs);
	util_fmt_rate(d, sizeof(d), v->merge_origin[MMS_VMA_ORIGIN_COPY], env->secs);
	util_fmt_rate(e, sizeof(e), v->merge_origin[MMS_VMA_ORIGIN_UNKNOWN], env->secs);
	util_fmt_rate(l, sizeof(l), mtable_sum(v->m, V_EXPAND)->count, env->secs);
	mms_canvas_printf(c, 0, y + 2, MMS_ROLE_DIM, c->w,
			  "merge origin: new range %s/s, existing %s/s, copy %s/s, unknown %s/s;"
			  " expands %s/s", a, b, d, e, l);
	return 3;
}

static int draw_inferred(struct vma_view *v, const struct mms_view_env *env,
			 struct mms_canvas *c, int y, int max)
{
	int rows = 0;

	mms_canvas_put(c, 0, y + rows++, MMS_ROLE_WARN,
		       "inferred: VMA-count changes per syscall, not splits/merges", c->w);
	mms_canvas_printf(c, 0, y + rows++, MMS_ROLE_COLHEAD, c->w, "%-16s %8s %8s %8s",
			  "SYSCALL", "CALLS/s", "+VMAs/s", "-VMAs/s");
	for (int i = 0; i < v->nr_sys && rows < max; i++, rows++) {
		const char *name = mms_vma_syscall_name(v->sys[i].nr);
		char a[16], b[16], d[16], nb[24];

		util_fmt_rate(a, sizeof(a), v->sys[i].s[I_CALLS].count, env->secs);
		util_fmt_rate(b, sizeof(b), v->sys[i].s[I_UP].total, env->secs);
		util_fmt_rate(d, sizeof(d), v->sys[i].s[I_DOWN].total, env->secs);
		snprintf(nb, sizeof(nb), "%u", v->sys[i].nr);
		mms_canvas_printf(c, 0, y + rows, MMS_ROLE_NORMAL, c->w, "%-16s %8s %8s %8s",
				  name ? name : nb, a, b, d);
	}
	if (!v->nr_sys && rows < max)
		mms_canvas_put(c, 0, y + rows++, MMS_ROLE_DIM, "no VMA syscalls in this range",
			       c->w);
	return rows;
}

static void view_draw(void *priv, const struct mms_view_env *env, struct mms_canvas *c, int y,
		      int h)
{
	struct vma_view *v = priv;
	int rows;

	if (h < 4)
		return;
	rows = util_source(c, y, 3, env, MMS_FAM_VMA, "VMA source");
	if (!env->valid) {
		util_empty(c, y + rows, h - rows, "waiting for the first interval...");
		return;
	}
	if (!util_family_ok(env, MMS_FAM_VMA) && !mtable_total_rows(v->m)) {
		util_empty(c, y + rows, h - rows, "no VMA data: see above for why");
		return;
	}
	if (v->is_inferred)
		rows += draw_inferred(v, env, c, y + rows, (h - rows) / 2);
	else
		rows += draw_measured(v, env, c, y + rows);
	mtable_draw(v->m, env, c, y + rows, h - rows);
}

const struct mms_view mms_view_vma = {
	.name = "VMA",
	.help = "VMA splits, merges by kind, expands per second, per process (or inferred counts)",
	.create = view_create,
	.destroy = view_destroy,
	.update = view_update,
	.draw = view_draw,
	.list = view_table,
	.whole_history = true,	/* which source there was: util_metric_seen() */
};
