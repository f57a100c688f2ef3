// SPDX-License-Identifier: GPL-2.0
/*
 * try_to_unmap batch sizes from rmap:try_to_unmap_batch, the tracepoint of
 * a kernel with mmscope's patches (kernel/): one record per rmap removal in
 * try_to_unmap_one().  Fields by name, the contract with the patches:
 *
 *   nr_pages (required: pages removed at once), order (folio order; else
 *   derived from folio_nr_pages), anon (else counted as anon)
 *   (also pfn, address, mm, lazyfree: unused here)
 */
#include <errno.h>
#include <stdlib.h>

#include "mm_tpsrc.h"
#include "mmscope/collectors.h"
#include "mmscope/mm_metrics.h"

enum rt_metric {
	RT_BATCH,
	RT_BATCH_ANON,
	RT_BATCH_FILE,
	RT_NR
};

static const char *const rt_names[RT_NR] = {
	[RT_BATCH] = MMS_M_RMAP_BATCH,
	[RT_BATCH_ANON] = MMS_M_RMAP_BATCH_ANON,
	[RT_BATCH_FILE] = MMS_M_RMAP_BATCH_FILE,
};

struct rt_priv {
	struct mm_tpsrc t;	/* first: the shared ops use it */
	struct mms_tp_event *batch;
	struct tep_format_field *nr_pages, *order, *folio_nr, *anon;
};

static uint32_t order_of(uint64_t nr)
{
	return nr > 1 ? 63 - (uint32_t)__builtin_clzll(nr) : 0;
}

static int rt_batch(void *ctx, const struct mms_tp_record *rec)
{
	struct rt_priv *p = ctx;
	uint64_t nr = mms_tp_get(rec, p->nr_pages, 0), order;
	int err;

	order = p->order ? mms_tp_get(rec, p->order, 0) :
		order_of(mms_tp_get(rec, p->folio_nr, 1));
	err = mm_uagg_add(&p->t.agg, rec->pid, RT_BATCH, (uint32_t)order, nr);
	if (!err)
		err = mm_uagg_add(&p->t.agg, rec->pid, mms_tp_get(rec, p->anon, 1) ?
				  RT_BATCH_ANON : RT_BATCH_FILE, (uint32_t)order, nr);
	return err;
}

static int rt_create(struct mms_source *src, const struct mms_options *opts)
{
	struct rt_priv *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	src->priv = p;
	return mm_tpsrc_init(&p->t, rt_names, RT_NR);
}

static int rt_prepare(struct mms_source *src)
{
	struct rt_priv *p = src->priv;
	int err;

	err = mm_tpsrc_add(&p->t, src, "rmap", "try_to_unmap_batch",
			   "needs a kernel with mmscope's patches, see kernel/", rt_batch, p,
			   &p->batch);
	if (err)
		return err;
	p->nr_pages = mm_tpsrc_field(src, p->batch, "nr_pages");
	if (!p->nr_pages)
		return -EINVAL;
	p->order = mms_tp_field(p->batch, "order");
	p->folio_nr = mms_tp_field(p->batch, "folio_nr_pages");
	p->anon = mms_tp_field(p->batch, "anon");
	return mm_tpsrc_open(&p->t, src);
}

static void rt_destroy(struct mms_source *src)
{
	struct rt_priv *p = src->priv;

	if (!p)
		return;
	mm_tpsrc_finish(&p->t);
	free(p);
}

const struct mms_source_ops mms_rmap_tp_ops = {
	.name = "rmap-tracepoint",
	.backend = "tracepoint",
	.family = MMS_FAM_RMAP,
	.create = rt_create,
	.prepare = rt_prepare,
	.start = mm_tpsrc_start,
	.fd = mm_tpsrc_fd,
	.poll_in = mm_tpsrc_poll_in,
	.drain = mm_tpsrc_drain,
	.stop = mm_tpsrc_stop,
	.destroy = rt_destroy,
};
