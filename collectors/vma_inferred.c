// SPDX-License-Identifier: GPL-2.0
/*
 * VMA count changes per syscall (the last VMA fallback): calls, and how far
 * mm->map_count went up or down per call, per (process, syscall).  Views
 * must show these as inferred, never as splits or merges.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "mm_agg.h"
#include "vma_inferred.h"
#include "vma_inferred.skel.h"
#include "mmscope/collectors.h"
#include "mmscope/mm_metrics.h"
#include "mmscope/sample.h"

struct vi_priv {
	struct vma_inferred *skel;
	struct mm_agg agg;
	bool agg_ready;
};

static const char *const vi_names[VI_NR] = {
	[VI_CALLS] = MMS_M_VMA_INFERRED_CALLS,
	[VI_UP] = MMS_M_VMA_INFERRED_UP,
	[VI_DOWN] = MMS_M_VMA_INFERRED_DOWN,
};

static struct mms_stat delta_stat(const struct vi_delta *d)
{
	struct mms_stat s = { .count = d->n, .total = d->sum, .min = d->min, .max = d->max };

	for (int i = 0; i < VI_HIST; i++)
		s.hist[i] = d->hist[i];
	return s;
}

/* One (process, syscall) entry: its calls, ups and downs as three rows. */
static int vi_decode(struct mm_agg *a, struct mms_store *st, const struct mm_key *k,
		     const struct mm_val *vals)
{
	struct mms_stat calls = { 0 }, up = { 0 }, down = { 0 };
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
	err = mm_agg_emit(a, st, k, comm, VI_CALLS, &calls);
	if (!err)
		err = mm_agg_emit(a, st, k, comm, VI_UP, &up);
	if (!err)
		err = mm_agg_emit(a, st, k, comm, VI_DOWN, &down);
	return err;
}

static int vi_create(struct mms_source *src, const struct mms_options *opts)
{
	src->priv = calloc(1, sizeof(struct vi_priv));
	return src->priv ? 0 : -ENOMEM;
}

static int vi_prepare(struct mms_source *src)
{
	struct vi_priv *p = src->priv;
	int err;

	p->skel = vma_inferred__open();
	if (!p->skel)
		return mm_bpf_fail(src, -errno, "opening the BPF object");
	p->skel->rodata->mm_filter = mm_filter_mode(src->opts);
	mm_filter_autoload(p->skel->progs.mm_fork, src->opts);
	err = mm_agg_size(p->skel->maps.mm_agg, src->opts->map_entries);
	if (err)
		return mm_bpf_fail(src, err, "sizing the aggregation map");
	err = mm_bpf_load(src, p->skel->skeleton, "loading tp_btf/sys_enter+sys_exit programs");
	if (err)
		return err;
	err = mm_filter_fill(p->skel->maps.mm_targets, src->opts);
	if (err)
		return mm_bpf_fail(src, err, "setting the process filter");
	err = mm_agg_init(&p->agg, p->skel->maps.mm_agg, &p->skel->bss->mm_gen,
			  p->skel->bss->mm_lost, vi_names, VI_NR);
	if (err)
		return mm_bpf_fail(src, err, "setting up aggregation");
	p->agg.decode = vi_decode;
	p->agg_ready = true;
	return 0;
}

static int vi_start(struct mms_source *src)
{
	struct vi_priv *p = src->priv;

	return mm_bpf_attach(src, p->skel->skeleton, "attaching to sys_enter/sys_exit");
}

/*
 * Moves every thread's pending unchanged calls into the aggregation map (the
 * task iterator vi_flush_all), so that they are drained with the interval
 * they were made in.
 */
static void vi_flush_calls(struct vi_priv *p)
{
	struct bpf_link *it = p->skel->links.vi_flush_all;
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

static int vi_drain(struct mms_source *src, struct mms_store *st)
{
	struct vi_priv *p = src->priv;

	if (!p->agg_ready)
		return 0;
	/*
	 * If the iterator cannot run (no memory), the calls stay in their
	 * threads' storage and come with a later drain, or the thread's exit:
	 * late, not lost.
	 */
	vi_flush_calls(p);
	return mm_agg_drain(&p->agg, st);
}

static void vi_stop(struct mms_source *src)
{
	struct vi_priv *p = src->priv;

	vma_inferred__detach(p->skel);
}

static void vi_destroy(struct mms_source *src)
{
	struct vi_priv *p = src->priv;

	if (!p)
		return;
	vma_inferred__destroy(p->skel);
	if (p->agg_ready)
		mm_agg_finish(&p->agg);
	free(p);
}

const struct mms_source_ops mms_vma_inferred_ops = {
	.name = "vma-inferred",
	.backend = "inferred",
	.family = MMS_FAM_VMA,
	.create = vi_create,
	.prepare = vi_prepare,
	.start = vi_start,
	.drain = vi_drain,
	.stop = vi_stop,
	.destroy = vi_destroy,
};
