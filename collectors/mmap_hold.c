// SPDX-License-Identifier: GPL-2.0
/*
 * mmap_lock hold mode (opt-in): acquisitions, hold times and failed
 * trylocks per process and read/write, aggregated in the kernel by
 * mmap_hold.bpf.c.  Contended waits on mmap_lock come from the lock source.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include <bpf/btf.h>

#include "mm_agg.h"
#include "mmap_hold.h"
#include "mmap_hold.skel.h"
#include "vma_lock.h"
#include "mmscope/collectors.h"
#include "mmscope/mm_metrics.h"
#include "mmscope/store.h"

struct mh_priv {
	struct mmap_hold *skel;
	struct mm_agg agg;
	uint32_t sample;	/* 1 in sample acquisitions timed */
	struct vma_lock_counter *vl;	/* --vma-lock: per-VMA lock counting too */
	bool agg_ready;
};

static const char *const mh_names[MH_NR] = {
	[MH_HOLD_READ] = MMS_M_MMAP_HOLD_READ,
	[MH_HOLD_WRITE] = MMS_M_MMAP_HOLD_WRITE,
	[MH_TRYLOCK_FAIL] = MMS_M_MMAP_TRYLOCK_FAIL,
};

/* One acquisition per hold: the acquire.* rows are the hold rows' counts. */
static int add_acquisitions(struct mms_store *st, uint32_t proc_id, const struct mm_key *k,
			    const struct mms_stat *s)
{
	if (k->metric != MH_HOLD_READ && k->metric != MH_HOLD_WRITE)
		return 0;
	return mms_store_add_value(st, proc_id, k->metric == MH_HOLD_READ ?
				   MMS_M_MMAP_ACQUIRE_READ : MMS_M_MMAP_ACQUIRE_WRITE, k->sub, 1,
				   s->count);
}

/*
 * After the flip and the grace period: every thread's statistics of the
 * generation just ended move into mm_agg (mh_flush_all), to be read with it.
 * If the iterator cannot run (no memory), they stay in the threads' storage
 * and come with a later generation or the thread's exit: late, not lost.
 */
static void mh_flipped(struct mm_agg *a, struct mms_store *st)
{
	struct mh_priv *p = (struct mh_priv *)((char *)a - offsetof(struct mh_priv, agg));

	(void)st;
	mm_iter_run(p->skel->links.mh_flush_all);
}

/*
 * Sampled: each timed hold stands for `sample` holds, picked at random, so
 * counts, totals and the histogram are scaled by it (unbiased estimates);
 * min and max are those of the holds timed.  Failed trylocks are all counted.
 */
static int mh_decode(struct mm_agg *a, struct mms_store *st, const struct mm_key *k,
		     const struct mm_val *vals)
{
	struct mh_priv *p = (struct mh_priv *)((char *)a - offsetof(struct mh_priv, agg));
	struct mms_stat sum;
	char comm[MM_COMM_LEN + 1];

	mm_agg_sum(a, vals, &sum);
	if (k->metric != MH_TRYLOCK_FAIL) {
		sum.count *= p->sample;
		sum.total *= p->sample;
		for (int i = 0; i < MMS_HIST_SLOTS; i++)
			sum.hist[i] *= p->sample;
	}
	mm_agg_comm(a, vals, comm);
	return mm_agg_emit(a, st, k, comm, k->metric, &sum);
}

static int mh_create(struct mms_source *src, const struct mms_options *opts)
{
	src->priv = calloc(1, sizeof(struct mh_priv));
	return src->priv ? 0 : -ENOMEM;
}

/*
 * Whether this kernel's mmap_lock events pass the memcg path (before 6.13):
 * the tracepoint's prototype, from BTF, has a fifth parameter (the first is
 * the probe's data pointer).
 */
bool mmap_lock_memcg_arg(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_type *t;
	bool old = false;
	int id;

	if (!btf)
		return false;
	id = btf__find_by_name_kind(btf, "btf_trace_mmap_lock_acquire_returned", BTF_KIND_TYPEDEF);
	t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	if (t)
		t = btf__type_by_id(btf, t->type);	/* the pointer */
	if (t && btf_is_ptr(t))
		t = btf__type_by_id(btf, t->type);	/* the prototype */
	if (t && btf_is_func_proto(t))
		old = btf_vlen(t) == 5;
	btf__free(btf);
	return old;
}

static int mh_prepare(struct mms_source *src)
{
	struct mh_priv *p = src->priv;
	bool old;
	int err;

	p->skel = mmap_hold__open();
	if (!p->skel)
		return mm_bpf_fail(src, -errno, "opening the BPF object");
	p->skel->rodata->mm_filter = mm_filter_mode(src->opts);
	p->sample = src->opts->mmap_hold_sample > 1 ? src->opts->mmap_hold_sample : 1;
	while ((1U << p->skel->rodata->mh_sample_shift) < p->sample)
		p->skel->rodata->mh_sample_shift++;
	mm_filter_autoload(p->skel->progs.mm_fork, src->opts);
	old = mmap_lock_memcg_arg();
	bpf_program__set_autoload(p->skel->progs.mh_acquired, !old);
	bpf_program__set_autoload(p->skel->progs.mh_released, !old);
	bpf_program__set_autoload(p->skel->progs.mh_acquired_memcg, old);
	bpf_program__set_autoload(p->skel->progs.mh_released_memcg, old);
	err = mm_agg_size(p->skel->maps.mm_agg, src->opts->map_entries);
	if (err)
		return mm_bpf_fail(src, err, "sizing the aggregation map");
	err = mm_bpf_load(src, p->skel->skeleton, "loading tp_btf/mmap_lock_* programs");
	if (err)
		return err;
	err = mm_filter_fill(p->skel->maps.mm_targets, src->opts);
	if (err)
		return mm_bpf_fail(src, err, "setting the process filter");
	err = mm_agg_init(&p->agg, p->skel->maps.mm_agg, &p->skel->bss->mm_gen,
			  p->skel->bss->mm_lost, mh_names, MH_NR);
	if (err)
		return mm_bpf_fail(src, err, "setting up aggregation");
	p->agg.extra = add_acquisitions;
	p->agg.flipped = mh_flipped;
	if (p->sample > 1)
		p->agg.decode = mh_decode;
	p->agg_ready = true;
	return src->opts->vma_lock ? vma_lock_open(src, old, &p->vl) : 0;
}

static int mh_start(struct mms_source *src)
{
	struct mh_priv *p = src->priv;

	int err = mm_bpf_attach(src, p->skel->skeleton, "attaching to mmap_lock tracepoints");

	return !err && p->vl ? vma_lock_attach(src, p->vl) : err;
}

static int mh_drain(struct mms_source *src, struct mms_store *st)
{
	struct mh_priv *p = src->priv;

	int err = p->agg_ready ? mm_agg_drain(&p->agg, st) : 0;

	return err ? err : vma_lock_drain(p->vl, st);
}

static void mh_stop(struct mms_source *src)
{
	struct mh_priv *p = src->priv;

	mmap_hold__detach(p->skel);
	vma_lock_detach(p->vl);
}

static void mh_destroy(struct mms_source *src)
{
	struct mh_priv *p = src->priv;

	if (!p)
		return;
	mmap_hold__destroy(p->skel);
	vma_lock_close(p->vl);
	if (p->agg_ready)
		mm_agg_finish(&p->agg);
	free(p);
}

/* Both modes are the same programs and callbacks; only the name users see differs. */
#define MH_OPS(n, b)					\
	{						\
		.name = n,				\
		.backend = b,				\
		.family = MMS_FAM_MMAP_LOCK,		\
		.create = mh_create,			\
		.prepare = mh_prepare,			\
		.start = mh_start,			\
		.drain = mh_drain,			\
		.stop = mh_stop,			\
		.destroy = mh_destroy,			\
	}

const struct mms_source_ops mms_mmap_hold_bpf_ops = MH_OPS("mmap-hold-bpf", "bpf");

/* --mmap-hold-sample N: the same programs, timing 1 in N acquisitions. */
const struct mms_source_ops mms_mmap_hold_sampled_ops = MH_OPS("mmap-hold-sampled", "sampled");
