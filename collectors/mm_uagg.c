// SPDX-License-Identifier: GPL-2.0
/* User-space aggregation for the mm tracepoint collectors (mm_uagg.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mm_uagg.h"
#include "mmscope/sample.h"
#include "mmscope/store.h"

struct mm_uagg_row {
	uint32_t tgid, metric, sub, pad;
	struct mms_stat stat;
};

/* The row's tag in the index: its key packed (metric and sub are small), compared in full. */
static uint64_t row_tag(uint32_t tgid, uint32_t metric, uint32_t sub)
{
	return (uint64_t)tgid << 32 | metric << 20 | sub;
}

int mm_uagg_add(struct mm_uagg *u, uint32_t tgid, uint32_t metric, uint32_t sub, uint64_t v)
{
	uint64_t tag = row_tag(tgid, metric, sub);
	struct mm_uagg_row *row;
	uint32_t i;

	if (mms_hash_reserve(&u->idx, (uint32_t)u->nr + 1))
		return -ENOMEM;
	for (i = mms_hash_first(&u->idx, tag); u->idx.vals[i]; i = mms_hash_next(&u->idx, i)) {
		row = &u->rows[u->idx.vals[i] - 1];
		if (u->idx.tags[i] == tag && row->tgid == tgid && row->metric == metric &&
		    row->sub == sub) {
			mms_stat_add(&row->stat, v);
			return 0;
		}
	}
	if (u->nr == u->cap) {
		size_t cap = u->cap ? u->cap * 2 : 32;
		struct mm_uagg_row *rows = realloc(u->rows, cap * sizeof(*rows));

		if (!rows)
			return -ENOMEM;
		u->rows = rows;
		u->cap = cap;
	}
	row = &u->rows[u->nr];
	memset(row, 0, sizeof(*row));
	row->tgid = tgid;
	row->metric = metric;
	row->sub = sub;
	mms_stat_add(&row->stat, v);
	mms_hash_set(&u->idx, i, tag, (uint32_t)u->nr++);
	return 0;
}

int mm_uagg_drain(struct mm_uagg *u, struct mms_store *st, const char *const *names,
		  uint32_t nr_names, const char *(*comm)(void *ctx, uint32_t pid), void *ctx)
{
	int err = 0;

	for (size_t i = 0; !err && i < u->nr; i++) {
		const struct mm_uagg_row *row = &u->rows[i];
		struct mms_metric_sample s = { .sub = row->sub, .stat = row->stat };

		if (row->metric >= nr_names)
			continue;
		s.proc_id = row->tgid ? mms_store_task(st, row->tgid, row->tgid,
						       comm(ctx, row->tgid)) : 0;
		s.metric_id = mms_store_str(st, names[row->metric]);
		err = (row->tgid && !s.proc_id) || !s.metric_id ? -ENOMEM :
		      mms_store_add_metric(st, &s);
	}
	u->nr = 0;
	mms_hash_clear(&u->idx);
	return err;
}

void mm_uagg_finish(struct mm_uagg *u)
{
	free(u->rows);
	mms_hash_free(&u->idx);
	memset(u, 0, sizeof(*u));
}
