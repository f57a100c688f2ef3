// SPDX-License-Identifier: GPL-2.0
/*
 * mmap_lock hold mode (opt-in): acquisitions, hold times and failed
 * trylocks per process and read/write, aggregated in the kernel by
 * mmap_hold.bpf.c.  Contended waits on mmap_lock come from the lock source.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>

#include "bpf_load.h"
#include "mm_bpfsrc.h"
#include "mmap_hold.h"
#include "mmap_hold.skel.h"
#include "vma_lock.h"
#include "mmscope/collectors.h"
#include "mmscope/mm_metrics.h"
#include "mmscope/source.h"
#include "mmscope/store.h"

/* The source's own state (b->priv). */
struct mh_priv {
	uint32_t sample;	/* 1 in sample acquisitions timed */
};

MM_BPFSRC_SKELETON(mmap_hold)

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
	struct mmap_hold *skel = mm_bpfsrc_of(a)->skel;

	(void)st;
	mm_bpfsrc_iter_run(skel->links.mh_flush_all);
}

/*
 * Sampled: each timed hold stands for `sample` holds, picked at random, so
 * counts, totals and the histogram are scaled by it (unbiased estimates);
 * min and max are those of the holds timed.  Failed trylocks are all counted.
 */
static int mh_decode(struct mm_agg *a, struct mms_store *st, const struct mm_key *k,
		     const struct mm_val *vals)
{
	struct mh_priv *p = mm_bpfsrc_of(a)->priv;
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

/*
 * Whether this kernel's mmap_lock events pass the memcg path (before 6.13):
 * the tracepoint's prototype, from BTF, has a fifth parameter (the first is
 * the probe's data pointer).
 */
bool mmap_lock_memcg_arg(void)
{
	const struct btf *btf = mms_collectors_btf();
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
	return old;
}

static int mh_setup(struct mms_source *src, struct mm_bpfsrc *b)
{
	struct mh_priv *p = b->priv;
	struct mmap_hold *skel = b->skel;
	bool old = mmap_lock_memcg_arg();
	int err;

	p->sample = src->opts->mmap_hold_sample > 1 ? src->opts->mmap_hold_sample : 1;
	while ((1U << skel->rodata->mh_sample_shift) < p->sample)
		skel->rodata->mh_sample_shift++;
	/* --lock-owner: the write holders the lock source books waits to. */
	skel->rodata->mh_holders = src->opts->lock_owner;
	err = src->opts->lock_owner ? mms_bpf_share_map(skel->maps.mm_holders) :
				      bpf_map__set_max_entries(skel->maps.mm_holders, 1);
	if (err)
		return mms_source_fail(src, err, "mmap-hold: sharing the holders map failed: %s",
				       strerror(-err));
	bpf_program__set_autoload(skel->progs.mh_acquired, !old);
	bpf_program__set_autoload(skel->progs.mh_released, !old);
	bpf_program__set_autoload(skel->progs.mh_acquired_memcg, old);
	bpf_program__set_autoload(skel->progs.mh_released_memcg, old);
	return 0;
}

static int mh_ready(struct mms_source *src, struct mm_bpfsrc *b)
{
	struct mh_priv *p = b->priv;

	b->agg.extra = add_acquisitions;
	b->agg.flipped = mh_flipped;
	if (p->sample > 1)
		b->agg.decode = mh_decode;
	return 0;
}

static const struct mm_bpfsrc_def mh_def = {
	.names = mh_names,
	.nr_names = MH_NR,
	.open = mmap_hold_open,
	.setup = mh_setup,
	.load = "loading tp_btf/mmap_lock_* programs",
	.attach = "attaching to mmap_lock tracepoints",
	.ready = mh_ready,
	.with = vma_lock_with,
	.priv_size = sizeof(struct mh_priv),
};

static int mh_create(struct mms_source *src, const struct mms_options *opts)
{
	return mm_bpfsrc_create(src, &mh_def);
}

/* Both modes are the same programs and callbacks; only the name users see differs. */
const struct mms_source_ops mms_mmap_hold_bpf_ops =
	MM_BPFSRC_OPS("mmap-hold-bpf", "bpf", MMS_FAM_MMAP_LOCK, mh_create);

/* --mmap-hold-sample N: the same programs, timing 1 in N acquisitions. */
const struct mms_source_ops mms_mmap_hold_sampled_ops =
	MM_BPFSRC_OPS("mmap-hold-sampled", "sampled", MMS_FAM_MMAP_LOCK, mh_create);
