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

static size_t uagg_hash(uint32_t tgid, uint32_t metric, uint32_t sub, size_t cap)
{
	uint64_t h = ((uint64_t)tgid << 32 | metric << 20 | sub) * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> 32) & (cap - 1);
}

static int uagg_grow(struct mm_uagg *u)
{
	size_t cap = u->idx_cap ? u->idx_cap * 2 : 64;
	uint32_t *idx = calloc(cap, sizeof(*idx));
	struct mm_uagg_row *rows = realloc(u->rows, cap / 2 * sizeof(*rows));

	if (!idx || !rows) {
		free(idx);
		if (rows)
			u->rows = rows;
		return -ENOMEM;
	}
	u->rows = rows;
	u->cap = cap / 2;
	for (size_t i = 0; i < u->nr; i++) {
		size_t h = uagg_hash(rows[i].tgid, rows[i].metric, rows[i].sub, cap);

		while (idx[h])
			h = (h + 1) & (cap - 1);
		idx[h] = (uint32_t)i + 1;
	}
	free(u->idx);
	u->idx = idx;
	u->idx_cap = cap;
	return 0;
}

int mm_uagg_add(struct mm_uagg *u, uint32_t tgid, uint32_t metric, uint32_t sub, uint64_t v)
{
	struct mm_uagg_row *row;
	size_t h;

	if (u->nr == u->cap && uagg_grow(u))
		return -ENOMEM;
	h = uagg_hash(tgid, metric, sub, u->idx_cap);
	for (; u->idx[h]; h = (h + 1) & (u->idx_cap - 1)) {
		row = &u->rows[u->idx[h] - 1];
		if (row->tgid == tgid && row->metric == metric && row->sub == sub) {
			mms_stat_add(&row->stat, v);
			return 0;
		}
	}
	row = &u->rows[u->nr];
	memset(row, 0, sizeof(*row));
	row->tgid = tgid;
	row->metric = metric;
	row->sub = sub;
	mms_stat_add(&row->stat, v);
	u->idx[h] = (uint32_t)++u->nr;
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
	if (u->idx)
		memset(u->idx, 0, u->idx_cap * sizeof(*u->idx));
	return err;
}

void mm_uagg_finish(struct mm_uagg *u)
{
	free(u->rows);
	free(u->idx);
	memset(u, 0, sizeof(*u));
}
