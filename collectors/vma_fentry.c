// SPDX-License-Identifier: GPL-2.0
/*
 * VMA split / merge / expand / shrink from fentry/fexit on the kernel's VMA
 * functions (vma_fentry.bpf.c), which ones chosen from this kernel's BTF.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <bpf/btf.h>

#include "bpf_load.h"
#include "mm_agg.h"
#include "mm_filter.h"
#include "vma_fentry.h"
#include "vma_fentry.skel.h"
#include "mmscope/collectors.h"
#include "mmscope/mm_metrics.h"

struct vf_priv {
	struct vma_fentry *skel;
	struct mm_agg agg;
	bool agg_ready;
	bool adjust;		/* 6.1: hooks __vma_adjust (no vma_merge_new_range) */
	bool expand_btf;	/* vma_expand is in BTF */
};

static const char *const vf_names[VF_NR] = {
	[VF_SPLIT] = MMS_M_VMA_SPLIT,
	[VF_SPLIT_FAILED] = MMS_M_VMA_SPLIT_FAILED,
	[VF_MERGE] = MMS_M_VMA_MERGE,
	[VF_EXPAND] = MMS_M_VMA_EXPAND,
	[VF_SHRINK] = MMS_M_VMA_SHRINK,
};

static bool has_func(const struct btf *btf, const char *name)
{
	return btf && btf__find_by_name_kind(btf, name, BTF_KIND_FUNC) > 0;
}

/*
 * Picks the programs for this kernel.  Returns how many hook a split or a
 * merge (0: nothing to measure here).
 */
static int choose_programs(struct vf_priv *p)
{
	struct vma_fentry *skel = p->skel;
	struct btf *btf = btf__load_vmlinux_btf();
	bool split = has_func(btf, "__split_vma");
	bool mainline = has_func(btf, "vma_merge_new_range");
	bool modify = mainline && has_func(btf, "vma_modify");
	bool old = !mainline && has_func(btf, "__vma_adjust");

	p->adjust = old;
	p->expand_btf = has_func(btf, "vma_expand");
	bpf_program__set_autoload(skel->progs.vf_split, split);
	bpf_program__set_autoload(skel->progs.vf_new_enter, mainline);
	bpf_program__set_autoload(skel->progs.vf_new_exit, mainline);
	bpf_program__set_autoload(skel->progs.vf_modify_enter, modify);
	bpf_program__set_autoload(skel->progs.vf_modify_exit, modify);
	bpf_program__set_autoload(skel->progs.vf_copy_enter, mainline && has_func(btf, "copy_vma"));
	bpf_program__set_autoload(skel->progs.vf_copy_exit, mainline && has_func(btf, "copy_vma"));
	bpf_program__set_autoload(skel->progs.vf_expand, mainline && p->expand_btf);
	bpf_program__set_autoload(skel->progs.vf_shrink, mainline && has_func(btf, "vma_shrink"));
	bpf_program__set_autoload(skel->progs.vf_adjust_enter, old);
	bpf_program__set_autoload(skel->progs.vf_adjust_exit, old);
	/* Attached by hand, once, in note_expand(). */
	bpf_program__set_autoload(skel->progs.vf_expand_probe, old && p->expand_btf);
	bpf_program__set_autoattach(skel->progs.vf_expand_probe, false);
	btf__free(btf);
	return split + mainline + modify + old;
}

/*
 * 6.1 joins a new mapping to its neighbours in vma_expand() (mmap_region())
 * and grows brk in place (do_brk_flags()), neither through __vma_adjust():
 * those merges are not counted here.  The note says so, with what this
 * kernel answers when asked to attach to vma_expand(), rather than leaving
 * a vma.merge of 0 for mmap to look measured.
 */
static void note_expand(struct mms_source *src, struct vf_priv *p)
{
	static const char lead[] = "vma.merge does not count new mappings joined to a "
				   "neighbour (mmap, brk)";
	struct bpf_link *link;

	if (!p->adjust)
		return;
	if (!p->expand_btf) {
		snprintf(src->note, sizeof(src->note), "%s: vma_expand() is not in this kernel's "
			 "BTF (inlined) and brk grows its VMA in place", lead);
		return;
	}
	link = bpf_program__attach(p->skel->progs.vf_expand_probe);
	if (!link) {
		snprintf(src->note, sizeof(src->note), "%s: vma_expand() cannot take fentry (%s; "
			 "6.1 declares it inline, which the kernel makes notrace) and brk grows "
			 "its VMA in place", lead, strerror(errno));
		return;
	}
	bpf_link__destroy(link);
	snprintf(src->note, sizeof(src->note), "%s: vma_expand() and brk do not go through "
		 "__vma_adjust(), which this source hooks on this kernel", lead);
}

static int vf_create(struct mms_source *src, const struct mms_options *opts)
{
	src->priv = calloc(1, sizeof(struct vf_priv));
	return src->priv ? 0 : -ENOMEM;
}

static int vf_prepare(struct mms_source *src)
{
	struct vf_priv *p = src->priv;
	int err;

	p->skel = vma_fentry__open();
	if (!p->skel)
		return mms_bpf_load_fail(src, -errno, "opening the BPF object");
	if (!choose_programs(p))
		return mms_source_fail(src, -ENOENT, "none of __split_vma, vma_merge_new_range, "
				       "__vma_adjust is in this kernel's BTF (inlined or renamed)");
	p->skel->rodata->mm_filter = mm_filter_mode(src->opts);
	mm_filter_autoload(p->skel->progs.mm_fork, src->opts);
	err = mm_agg_size(p->skel->maps.mm_agg, src->opts->map_entries);
	if (err)
		return mms_bpf_load_fail(src, err, "sizing the aggregation map");
	err = mms_bpf_load_fentry_try(src, p->skel->skeleton, "the VMA functions");
	if (err)
		return err;
	note_expand(src, p);
	err = mm_filter_fill(p->skel->maps.mm_targets, src->opts);
	if (err)
		return mms_bpf_load_fail(src, err, "setting the process filter");
	err = mm_agg_init(&p->agg, p->skel->maps.mm_agg, &p->skel->bss->mm_gen,
			  p->skel->bss->mm_lost, vf_names, VF_NR);
	if (err)
		return mms_bpf_load_fail(src, err, "setting up aggregation");
	p->agg_ready = true;
	return 0;
}

static int vf_start(struct mms_source *src)
{
	struct vf_priv *p = src->priv;

	return mms_bpf_load_attach(src, p->skel->skeleton, "attaching fentry/fexit to the VMA functions");
}

static int vf_drain(struct mms_source *src, struct mms_store *st)
{
	struct vf_priv *p = src->priv;

	return p->agg_ready ? mm_agg_drain(&p->agg, st) : 0;
}

static void vf_stop(struct mms_source *src)
{
	struct vf_priv *p = src->priv;

	vma_fentry__detach(p->skel);
}

static void vf_destroy(struct mms_source *src)
{
	struct vf_priv *p = src->priv;

	if (!p)
		return;
	vma_fentry__destroy(p->skel);
	if (p->agg_ready)
		mm_agg_finish(&p->agg);
	free(p);
}

const struct mms_source_ops mms_vma_fentry_ops = {
	.name = "vma-fentry",
	.backend = "fentry",
	.family = MMS_FAM_VMA,
	.create = vf_create,
	.prepare = vf_prepare,
	.start = vf_start,
	.drain = vf_drain,
	.stop = vf_stop,
	.destroy = vf_destroy,
};
