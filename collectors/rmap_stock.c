// SPDX-License-Identifier: GPL-2.0
/*
 * What stock tracepoints tell about rmap work, for kernels without our
 * rmap tracepoint or fentry: pages reclaimed and unmap failures per
 * reclaim pass (vmscan), and migration entries set per PTE/PMD with their
 * folio order (migrate).  None of these is a try_to_unmap batch size, and
 * the metrics say so in their names (rmap.stock.*).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mm_tpsrc.h"
#include "mmscope/collectors.h"
#include "mmscope/mm_metrics.h"

enum rs_metric {
	RS_RECLAIM,
	RS_SCANNED,
	RS_SHRINK,
	RS_UNMAP_FAIL,
	RS_MIGRATION,
	RS_NR
};

static const char *const rs_names[RS_NR] = {
	[RS_RECLAIM] = MMS_M_RMAP_STOCK_RECLAIM,
	[RS_SCANNED] = MMS_M_RMAP_STOCK_SCANNED,
	[RS_SHRINK] = MMS_M_RMAP_STOCK_SHRINK,
	[RS_UNMAP_FAIL] = MMS_M_RMAP_STOCK_UNMAP_FAIL,
	[RS_MIGRATION] = MMS_M_RMAP_STOCK_MIGRATION,
};

struct rs_priv {
	struct mm_tpsrc t;	/* first: the shared ops use it */
	struct mms_tp_event *reclaim, *shrink, *migr;
	struct tep_format_field *r_nid, *r_scanned, *r_reclaimed, *r_fail;
	struct tep_format_field *s_nid, *s_reclaimed, *s_fail;
	struct tep_format_field *m_order;
};

/* One reclaim_pages() pass (MADV_PAGEOUT, DAMON) on one node. */
static int rs_reclaim(void *ctx, const struct mms_tp_record *rec)
{
	struct rs_priv *p = ctx;
	uint32_t nid = (uint32_t)mms_tp_get(rec, p->r_nid, 0);
	int err;

	if (!p->reclaim)
		return 0;
	err = mm_uagg_add(&p->t.agg, rec->pid, RS_RECLAIM, nid,
			  mms_tp_get(rec, p->r_reclaimed, 0));
	if (!err && p->r_scanned)
		err = mm_uagg_add(&p->t.agg, rec->pid, RS_SCANNED, nid,
				  mms_tp_get(rec, p->r_scanned, 0));
	if (!err && p->r_fail)
		err = mm_uagg_add(&p->t.agg, rec->pid, RS_UNMAP_FAIL,
				  MMS_RMAP_STOCK_RECLAIM_PAGES, mms_tp_get(rec, p->r_fail, 0));
	return err;
}

/* One inactive LRU shrink (kswapd, direct reclaim). */
static int rs_shrink(void *ctx, const struct mms_tp_record *rec)
{
	struct rs_priv *p = ctx;
	int err;

	if (!p->shrink)
		return 0;
	err = mm_uagg_add(&p->t.agg, rec->pid, RS_SHRINK, (uint32_t)mms_tp_get(rec, p->s_nid, 0),
			  mms_tp_get(rec, p->s_reclaimed, 0));
	if (!err && p->s_fail)
		err = mm_uagg_add(&p->t.agg, rec->pid, RS_UNMAP_FAIL,
				  MMS_RMAP_STOCK_SHRINK_INACTIVE, mms_tp_get(rec, p->s_fail, 0));
	return err;
}

/* try_to_migrate_one() turned one PTE/PMD into a migration entry. */
static int rs_migration(void *ctx, const struct mms_tp_record *rec)
{
	struct rs_priv *p = ctx;

	if (!p->migr)
		return 0;
	return mm_uagg_add(&p->t.agg, rec->pid, RS_MIGRATION,
			   (uint32_t)mms_tp_get(rec, p->m_order, 0), 1);
}

static int rs_create(struct mms_source *src, const struct mms_options *opts)
{
	struct rs_priv *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	src->priv = p;
	return mm_tpsrc_init(&p->t, rs_names, RS_NR);
}

/* Adds an optional tracepoint: absent (or lacking its main field) is fine. */
static struct mms_tp_event *add_opt(struct rs_priv *p, const char *sys, const char *name,
				    const char *field, mms_tp_handler fn, int *err)
{
	struct mms_tp_event *ev = NULL;
	int e = mms_tp_reader_add(p->t.rd, sys, name, fn, p, &ev);

	if (e && e != -ENOENT && !*err)
		*err = e;
	return ev && mms_tp_field(ev, field) ? ev : NULL;
}

static int rs_prepare(struct mms_source *src)
{
	struct rs_priv *p = src->priv;
	int err = 0;

	p->reclaim = add_opt(p, "vmscan", "mm_vmscan_reclaim_pages", "nr_reclaimed", rs_reclaim,
			     &err);
	p->shrink = add_opt(p, "vmscan", "mm_vmscan_lru_shrink_inactive", "nr_reclaimed",
			    rs_shrink, &err);
	p->migr = add_opt(p, "migrate", "set_migration_pte", "order", rs_migration, &err);
	if (!p->reclaim && !p->shrink && !p->migr)
		return mms_source_fail(src, err ? err : -ENOENT,
				       "none of vmscan:mm_vmscan_reclaim_pages, "
				       "vmscan:mm_vmscan_lru_shrink_inactive, "
				       "migrate:set_migration_pte is usable%s%s",
				       err ? ": " : " on this kernel", err ? strerror(-err) : "");
	if (p->reclaim) {
		p->r_nid = mms_tp_field(p->reclaim, "nid");
		p->r_scanned = mms_tp_field(p->reclaim, "nr_scanned");
		p->r_reclaimed = mms_tp_field(p->reclaim, "nr_reclaimed");
		p->r_fail = mms_tp_field(p->reclaim, "nr_unmap_fail");
	}
	if (p->shrink) {
		p->s_nid = mms_tp_field(p->shrink, "nid");
		p->s_reclaimed = mms_tp_field(p->shrink, "nr_reclaimed");
		p->s_fail = mms_tp_field(p->shrink, "nr_unmap_fail");
	}
	if (p->migr)
		p->m_order = mms_tp_field(p->migr, "order");
	return mm_tpsrc_open(&p->t, src);
}

static void rs_destroy(struct mms_source *src)
{
	struct rs_priv *p = src->priv;

	if (!p)
		return;
	mm_tpsrc_finish(&p->t);
	free(p);
}

const struct mms_source_ops mms_rmap_stock_ops = {
	.name = "rmap-stock",
	.backend = "stock",
	.family = MMS_FAM_RMAP,
	.create = rs_create,
	.prepare = rs_prepare,
	.start = mm_tpsrc_start,
	.fd = mm_tpsrc_fd,
	.poll_in = mm_tpsrc_poll_in,
	.drain = mm_tpsrc_drain,
	.stop = mm_tpsrc_stop,
	.destroy = rs_destroy,
};
