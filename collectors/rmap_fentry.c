// SPDX-License-Identifier: GPL-2.0
/*
 * try_to_unmap batch sizes from fentry on try_to_unmap_one and the rmap
 * removal functions (rmap_fentry.bpf.c), chosen from this kernel's BTF.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <bpf/btf.h>

#include "bpf_load.h"
#include "mm_agg.h"
#include "mm_filter.h"
#include "rmap_fentry.h"
#include "rmap_fentry.skel.h"
#include "mmscope/collectors.h"
#include "mmscope/mm_metrics.h"

struct rf_priv {
	struct rmap_fentry *skel;
	struct mm_agg agg;
	bool agg_ready;
};

static const char *const rf_names[RF_NR] = {
	[RF_BATCH] = MMS_M_RMAP_BATCH,
	[RF_BATCH_ANON] = MMS_M_RMAP_BATCH_ANON,
	[RF_BATCH_FILE] = MMS_M_RMAP_BATCH_FILE,
};

static bool has_func(const struct btf *btf, const char *name)
{
	return btf && btf__find_by_name_kind(btf, name, BTF_KIND_FUNC) > 0;
}

/* 0, or -ENOENT with the reason when this kernel has nothing to hook. */
static int choose_programs(struct mms_source *src, struct rmap_fentry *skel)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool ttu = has_func(btf, "try_to_unmap_one");
	bool ptes = has_func(btf, "folio_remove_rmap_ptes");
	bool pmd = ptes && has_func(btf, "folio_remove_rmap_pmd");
	bool page = !ptes && has_func(btf, "page_remove_rmap");
	bool split = has_func(btf, "split_huge_pmd_locked");

	btf__free(btf);
	/* Its removal of the PMD's rmap after the PTEs' is a split, not an unmap. */
	bpf_program__set_autoload(skel->progs.rf_split_enter, split);
	bpf_program__set_autoload(skel->progs.rf_split_exit, split);
	bpf_program__set_autoload(skel->progs.rf_remove_ptes, ptes);
	bpf_program__set_autoload(skel->progs.rf_remove_pmd, pmd);
	bpf_program__set_autoload(skel->progs.rf_page_remove, page);
	if (!ttu)
		return mms_source_fail(src, -ENOENT, "try_to_unmap_one is not in this kernel's "
				       "BTF (inlined or renamed)");
	if (!ptes && !page)
		return mms_source_fail(src, -ENOENT, "neither folio_remove_rmap_ptes nor "
				       "page_remove_rmap is in this kernel's BTF");
	return 0;
}

static int rf_create(struct mms_source *src, const struct mms_options *opts)
{
	src->priv = calloc(1, sizeof(struct rf_priv));
	return src->priv ? 0 : -ENOMEM;
}

static int rf_prepare(struct mms_source *src)
{
	struct rf_priv *p = src->priv;
	int err;

	p->skel = rmap_fentry__open();
	if (!p->skel)
		return mms_bpf_load_fail(src, -errno, "opening the BPF object");
	err = choose_programs(src, p->skel);
	if (err)
		return err;
	p->skel->rodata->mm_filter = mm_filter_mode(src->opts);
	mm_filter_autoload(p->skel->progs.mm_fork, src->opts);
	err = mm_agg_size(p->skel->maps.mm_agg, src->opts->map_entries);
	if (err)
		return mms_bpf_load_fail(src, err, "sizing the aggregation map");
	err = mms_bpf_load_fentry_try(src, p->skel->skeleton, "try_to_unmap_one and the rmap removals");
	if (err)
		return err;
	err = mm_filter_fill(p->skel->maps.mm_targets, src->opts);
	if (err)
		return mms_bpf_load_fail(src, err, "setting the process filter");
	err = mm_agg_init(&p->agg, p->skel->maps.mm_agg, &p->skel->bss->mm_gen,
			  p->skel->bss->mm_lost, rf_names, RF_NR);
	if (err)
		return mms_bpf_load_fail(src, err, "setting up aggregation");
	p->agg_ready = true;
	return 0;
}

static int rf_start(struct mms_source *src)
{
	struct rf_priv *p = src->priv;

	return mms_bpf_load_attach(src, p->skel->skeleton, "attaching fentry to try_to_unmap_one");
}

static int rf_drain(struct mms_source *src, struct mms_store *st)
{
	struct rf_priv *p = src->priv;

	return p->agg_ready ? mm_agg_drain(&p->agg, st) : 0;
}

static void rf_stop(struct mms_source *src)
{
	struct rf_priv *p = src->priv;

	rmap_fentry__detach(p->skel);
}

static void rf_destroy(struct mms_source *src)
{
	struct rf_priv *p = src->priv;

	if (!p)
		return;
	rmap_fentry__destroy(p->skel);
	if (p->agg_ready)
		mm_agg_finish(&p->agg);
	free(p);
}

const struct mms_source_ops mms_rmap_fentry_ops = {
	.name = "rmap-fentry",
	.backend = "fentry",
	.family = MMS_FAM_RMAP,
	.create = rf_create,
	.prepare = rf_prepare,
	.start = rf_start,
	.drain = rf_drain,
	.stop = rf_stop,
	.destroy = rf_destroy,
};
