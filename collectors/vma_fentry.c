// SPDX-License-Identifier: GPL-2.0
/*
 * VMA split / merge / expand / shrink from fentry/fexit on the kernel's VMA
 * functions (vma_fentry.bpf.c), which ones chosen from this kernel's BTF.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <bpf/btf.h>

#include "mm_bpfsrc.h"
#include "vma_fentry.h"
#include "vma_fentry.skel.h"
#include "mmscope/collectors.h"
#include "mmscope/mm_metrics.h"

/* The source's own state (b->priv). */
struct vf_priv {
	bool adjust;		/* 6.1: hooks __vma_adjust (no vma_merge_new_range) */
	bool expand_btf;	/* vma_expand is in BTF */
};

MM_BPFSRC_SKELETON(vma_fentry)

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

/* Picks the programs for this kernel: 0, or -ENOENT when none hooks a split or a merge. */
static int choose_programs(struct mms_source *src, struct mm_bpfsrc *b)
{
	struct vf_priv *p = b->priv;
	struct vma_fentry *skel = b->skel;
	const struct btf *btf = mms_collectors_btf();
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
	if (!split && !mainline && !old)
		return mms_source_fail(src, -ENOENT, "none of __split_vma, vma_merge_new_range, "
				       "__vma_adjust is in this kernel's BTF (inlined or renamed)");
	return 0;
}

/*
 * 6.1 joins a new mapping to its neighbours in vma_expand() (mmap_region())
 * and grows brk in place (do_brk_flags()), neither through __vma_adjust():
 * those merges are not counted here.  The note says so, with what this
 * kernel answers when asked to attach to vma_expand(), rather than leaving
 * a vma.merge of 0 for mmap to look measured.
 */
static int note_expand(struct mms_source *src, struct mm_bpfsrc *b)
{
	struct vf_priv *p = b->priv;
	struct vma_fentry *skel = b->skel;
	static const char lead[] = "vma.merge does not count new mappings joined to a "
				   "neighbour (mmap, brk)";
	struct bpf_link *link;

	if (!p->adjust)
		return 0;
	if (!p->expand_btf) {
		snprintf(src->note, sizeof(src->note), "%s: vma_expand() is not in this kernel's "
			 "BTF (inlined) and brk grows its VMA in place", lead);
		return 0;
	}
	link = bpf_program__attach(skel->progs.vf_expand_probe);
	if (!link) {
		snprintf(src->note, sizeof(src->note), "%s: vma_expand() cannot take fentry (%s; "
			 "6.1 declares it inline, which the kernel makes notrace) and brk grows "
			 "its VMA in place", lead, strerror(errno));
		return 0;
	}
	bpf_link__destroy(link);
	snprintf(src->note, sizeof(src->note), "%s: vma_expand() and brk do not go through "
		 "__vma_adjust(), which this source hooks on this kernel", lead);
	return 0;
}

static const struct mm_bpfsrc_def vf_def = {
	.names = vf_names,
	.nr_names = VF_NR,
	.open = vma_fentry_open,
	.setup = choose_programs,
	.fentry = "the VMA functions",
	.probe = "__split_vma",
	.attach = "attaching fentry/fexit to the VMA functions",
	.ready = note_expand,
	.priv_size = sizeof(struct vf_priv),
};

static int vf_create(struct mms_source *src, const struct mms_options *opts)
{
	return mm_bpfsrc_create(src, &vf_def);
}

const struct mms_source_ops mms_vma_fentry_ops =
	MM_BPFSRC_OPS("vma-fentry", "fentry", MMS_FAM_VMA, vf_create);
