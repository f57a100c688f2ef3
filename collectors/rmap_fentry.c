// SPDX-License-Identifier: GPL-2.0
/*
 * try_to_unmap batch sizes from fentry on try_to_unmap_one and the rmap
 * removal functions (rmap_fentry.bpf.c), chosen from this kernel's BTF.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <bpf/btf.h>

#include "mm_bpfsrc.h"
#include "rmap_fentry.h"
#include "rmap_fentry.skel.h"
#include "mmscope/collectors.h"
#include "mmscope/mm_metrics.h"

MM_BPFSRC_SKELETON(rmap_fentry)

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
static int choose_programs(struct mms_source *src, struct mm_bpfsrc *b)
{
	struct rmap_fentry *skel = b->skel;
	const struct btf *btf = mms_collectors_btf();
	bool ttu = has_func(btf, "try_to_unmap_one");
	bool ptes = has_func(btf, "folio_remove_rmap_ptes");
	bool pmd = ptes && has_func(btf, "folio_remove_rmap_pmd");
	bool page = !ptes && has_func(btf, "page_remove_rmap");
	bool split = has_func(btf, "split_huge_pmd_locked");

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

static const struct mm_bpfsrc_def rf_def = {
	.names = rf_names,
	.nr_names = RF_NR,
	.open = rmap_fentry_open,
	.setup = choose_programs,
	.fentry = "try_to_unmap_one and the rmap removals",
	.probe = "try_to_unmap_one",
	.attach = "attaching fentry to try_to_unmap_one",
};

static int rf_create(struct mms_source *src, const struct mms_options *opts)
{
	return mm_bpfsrc_create(src, &rf_def);
}

const struct mms_source_ops mms_rmap_fentry_ops =
	MM_BPFSRC_OPS("rmap-fentry", "fentry", MMS_FAM_RMAP, rf_create);
