// SPDX-License-Identifier: GPL-2.0
/*
 * VMA count changes per syscall (the last VMA fallback): calls, and how far
 * mm->map_count went up or down per call, per (process, syscall).  Views
 * must show these as inferred, never as splits or merges.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "mm_bpfsrc.h"
#include "mm_filter.h"
#include "short_procs.h"
#include "vma_inferred.h"
#include "vma_inferred.skel.h"
#include "mmscope/collectors.h"
#include "mmscope/mm_metrics.h"
#include "mmscope/sample.h"

/* The source's own state (b->priv). */
struct vi_priv {
	/*
	 * System-wide, processes that lived less than an interval are shown
	 * together per name (see MMS_TGID_SHORT).  Their exits arrive in
	 * vi_exits (short_procs.h).
	 */
	struct mms_short *dead;		/* NULL: every process keeps its own rows */
};

struct vi_flip_ctx {
	struct mm_agg *a;
	struct mms_store *st;
};

MM_BPFSRC_SKELETON(vma_inferred)

static const char *const vi_names[VI_NR] = {
	[VI_CALLS] = MMS_M_VMA_INFERRED_CALLS,
	[VI_UP] = MMS_M_VMA_INFERRED_UP,
	[VI_DOWN] = MMS_M_VMA_INFERRED_DOWN,
	[VI_SHORT] = MMS_M_VMA_INFERRED_SHORT,
};

static struct mms_stat delta_stat(const struct vi_delta *d)
{
	struct mms_stat s = { .count = d->n, .total = d->sum, .min = d->min, .max = d->max };

	for (int i = 0; i < VI_HIST; i++)
		s.hist[i] = d->hist[i];
	return s;
}

/* Each short-lived process that exited counts once in its group's VI_SHORT row. */
static void vi_exit_counted(void *ctx, const struct short_exit *e)
{
	struct vi_flip_ctx *f = ctx;
	struct mm_key k = { .tgid = mms_tgid_short_of(e->comm) };
	struct mms_stat s = { .count = 1, .total = 1, .min = 1, .max = 1 };

	s.hist[0] = 1;
	/* No room in the interval: the count is lost, the rows are not. */
	mm_agg_emit(f->a, f->st, &k, e->comm, VI_SHORT, &s);
}

/*
 * After the flip: the exits announced up to now.  "Short-lived" is less
 * than the interval just ended (the interval can change while running).
 */
static void vi_flipped(struct mm_agg *a, struct mms_store *st)
{
	struct mm_bpfsrc *b = mm_bpfsrc_of(a);
	struct vi_priv *p = b->priv;
	struct vma_inferred *skel = b->skel;
	struct vi_flip_ctx f = { .a = a, .st = st };
	uint64_t since = mms_short_flip(p->dead, vi_exit_counted, &f);

	if (since)
		skel->bss->vi_short_ns = since;
}

/* One (process, syscall) entry: its calls, ups and downs as three rows. */
static int vi_decode(struct mm_agg *a, struct mms_store *st, const struct mm_key *key,
		     const struct mm_val *vals)
{
	struct vi_priv *p = mm_bpfsrc_of(a)->priv;
	struct mms_stat calls = { 0 }, up = { 0 }, down = { 0 };
	struct mm_key group = *key;
	const struct mm_key *k = key;
	char comm[MM_COMM_LEN + 1];
	int err;

	if (k->metric != VI_SYSCALL)
		return 0;
	for (int c = 0; c < a->ncpus; c++) {
		struct vi_stat one;
		struct mms_stat s;

		memcpy(&one, &vals[c].stat, sizeof(one));
		calls.count += one.calls;
		s = delta_stat(&one.up);
		mms_stat_merge(&up, &s);
		s = delta_stat(&one.down);
		mms_stat_merge(&down, &s);
	}
	/* Each call counts 1: the row the store has always had for calls. */
	calls.total = calls.count;
	calls.min = calls.max = 1;
	calls.hist[0] = (uint32_t)calls.count;
	mm_agg_comm(a, vals, comm);
	if (p->dead && comm[0] && mms_short_dead(p->dead, k->tgid)) {
		group.tgid = mms_tgid_short_of(comm);
		k = &group;
	}
	err = mm_agg_emit(a, st, k, comm, VI_CALLS, &calls);
	if (!err)
		err = mm_agg_emit(a, st, k, comm, VI_UP, &up);
	if (!err)
		err = mm_agg_emit(a, st, k, comm, VI_DOWN, &down);
	return err;
}

static int vi_ready(struct mms_source *src, struct mm_bpfsrc *b)
{
	struct vi_priv *p = b->priv;
	struct vma_inferred *skel = b->skel;

	b->agg.decode = vi_decode;
	if (mm_filter_mode(src->opts) != MM_FILTER_ALL)
		return 0;	/* followed processes keep their own rows */
	p->dead = mms_short_new(bpf_map__fd(skel->maps.vi_exits));
	if (!p->dead)
		return 0;	/* every process keeps its own rows */
	b->agg.flipped = vi_flipped;
	skel->bss->vi_short_ns = (uint64_t)src->opts->interval_ms * 1000000;
	return 0;
}

/*
 * Moves every thread's pending unchanged calls into the aggregation map (the
 * task iterator vi_flush_all), so that they are drained with the interval
 * they were made in.  If the iterator cannot run (no memory), the calls stay
 * in their threads' storage and come with a later drain, or the thread's
 * exit: late, not lost.
 */
static int vi_flush_calls(struct mm_bpfsrc *b, struct mms_store *st)
{
	struct vma_inferred *skel = b->skel;

	(void)st;
	mm_bpfsrc_iter_run(skel->links.vi_flush_all);
	return 0;
}

static void vi_destroy(struct mm_bpfsrc *b)
{
	struct vi_priv *p = b->priv;

	mms_short_free(p->dead);
}

static const struct mm_bpfsrc_def vi_def = {
	.names = vi_names,
	.nr_names = VI_NR,
	.open = vma_inferred_open,
	.load = "loading tp_btf/sys_enter+sys_exit programs",
	.attach = "attaching to sys_enter/sys_exit",
	.ready = vi_ready,
	.drain = vi_flush_calls,
	.destroy = vi_destroy,
	.priv_size = sizeof(struct vi_priv),
};

static int vi_create(struct mms_source *src, const struct mms_options *opts)
{
	return mm_bpfsrc_create(src, &vi_def);
}

const struct mms_source_ops mms_vma_inferred_ops =
	MM_BPFSRC_OPS("vma-inferred", "inferred", MMS_FAM_VMA, vi_create);
