// SPDX-License-Identifier: GPL-2.0
/*
 * VMA split / merge from the tracepoints of a kernel with mmscope's patches
 * (kernel/).  Fields are found by name; the ones used here are the
 * contract with the patches:
 *
 *   vma:vma_split   new_below (required), anon, error
 *                   (also mm, start, end, addr, vm_flags, map_count: unused here)
 *   vma:vma_merge   kind (required: 1 prev, 2 next, 3 both), removed (VMAs
 *                   freed), origin (0 new, 1 existing, 2 copy), anon
 *                   (also mm, req_start, req_end, start, end)
 *
 * Absent optional fields read as: anon 1, error 0, removed 0, origin unknown.
 */
#include <errno.h>
#include <stdlib.h>

#include "mm_tpsrc.h"
#include "mmscope/collectors.h"
#include "mmscope/mm_metrics.h"

#define PATCH_HINT "needs a kernel with mmscope's patches, see kernel/"

enum vt_metric {
	VT_SPLIT,
	VT_SPLIT_FAILED,
	VT_MERGE,
	VT_NR
};

static const char *const vt_names[VT_NR] = {
	[VT_SPLIT] = MMS_M_VMA_SPLIT,
	[VT_SPLIT_FAILED] = MMS_M_VMA_SPLIT_FAILED,
	[VT_MERGE] = MMS_M_VMA_MERGE,
};

struct vt_priv {
	struct mm_tpsrc t;	/* first: the shared ops use it */
	struct mms_tp_event *split, *merge;
	struct tep_format_field *s_below, *s_anon, *s_error;
	struct tep_format_field *m_kind, *m_removed, *m_origin, *m_anon;
};

static int vt_split(void *ctx, const struct mms_tp_record *rec)
{
	struct vt_priv *p = ctx;
	uint32_t sub = mms_tp_get(rec, p->s_below, 0) ? MMS_VMA_SPLIT_NEW_BELOW :
			MMS_VMA_SPLIT_NEW_ABOVE;

	if (!mms_tp_get(rec, p->s_anon, 1))
		sub |= MMS_VMA_FILE;
	return mm_uagg_add(&p->t.agg, rec->pid, mms_tp_get(rec, p->s_error, 0) ?
			   VT_SPLIT_FAILED : VT_SPLIT, sub, 1);
}

static int vt_merge(void *ctx, const struct mms_tp_record *rec)
{
	struct vt_priv *p = ctx;
	uint32_t sub = mms_vma_merge_sub((unsigned int)mms_tp_get(rec, p->m_kind, 0),
					 (unsigned int)mms_tp_get(rec, p->m_origin,
								  MMS_VMA_ORIGIN_UNKNOWN),
					 !mms_tp_get(rec, p->m_anon, 1));

	return mm_uagg_add(&p->t.agg, rec->pid, VT_MERGE, sub,
			   mms_tp_get(rec, p->m_removed, 0));
}

static int vt_create(struct mms_source *src, const struct mms_options *opts)
{
	struct vt_priv *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	src->priv = p;
	return mm_tpsrc_init(&p->t, vt_names, VT_NR);
}

static int vt_prepare(struct mms_source *src)
{
	struct vt_priv *p = src->priv;
	int err;

	err = mm_tpsrc_add(&p->t, src, "vma", "vma_split", PATCH_HINT, vt_split, p, &p->split);
	if (!err)
		err = mm_tpsrc_add(&p->t, src, "vma", "vma_merge", PATCH_HINT, vt_merge, p,
				   &p->merge);
	if (err)
		return err;
	p->s_below = mm_tpsrc_field(src, p->split, "new_below");
	p->m_kind = mm_tpsrc_field(src, p->merge, "kind");
	if (!p->s_below || !p->m_kind)
		return -EINVAL;
	p->s_anon = mms_tp_field(p->split, "anon");
	p->s_error = mms_tp_field(p->split, "error");
	p->m_removed = mms_tp_field(p->merge, "removed");
	p->m_origin = mms_tp_field(p->merge, "origin");
	p->m_anon = mms_tp_field(p->merge, "anon");
	return mm_tpsrc_open(&p->t, src);
}

static void vt_destroy(struct mms_source *src)
{
	struct vt_priv *p = src->priv;

	if (!p)
		return;
	mm_tpsrc_finish(&p->t);
	free(p);
}

const struct mms_source_ops mms_vma_tp_ops = {
	.name = "vma-tracepoint",
	.backend = "tracepoint",
	.family = MMS_FAM_VMA,
	.create = vt_create,
	.prepare = vt_prepare,
	.start = mm_tpsrc_start,
	.fd = mm_tpsrc_fd,
	.poll_in = mm_tpsrc_poll_in,
	.drain = mm_tpsrc_drain,
	.stop = mm_tpsrc_stop,
	.destroy = vt_destroy,
};
