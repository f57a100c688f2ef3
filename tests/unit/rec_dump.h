/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test helper: an interval as text with every id resolved through its store
 * (lock names, stacks with symbols, task names, every statistic), so two
 * stores with different ids can be compared field by field.  Used by the
 * recording unit test and the live recording test.
 */
#ifndef MMSCOPE_TESTS_REC_DUMP_H
#define MMSCOPE_TESTS_REC_DUMP_H

#include <stdio.h>
#include <stdlib.h>

#include "mmscope/store.h"

static void dump_stat(FILE *f, const struct mms_stat *s)
{
	fprintf(f, " n=%llu sum=%llu min=%llu max=%llu h=", (unsigned long long)s->count,
		(unsigned long long)s->total, (unsigned long long)s->min,
		(unsigned long long)s->max);
	for (int i = 0; i < MMS_HIST_SLOTS; i++)
		fprintf(f, "%u,", s->hist[i]);
	fprintf(f, "\n");
}

static void dump_task(FILE *f, const struct mms_store *st, uint32_t id)
{
	const struct mms_task *t = mms_store_get_task(st, id);

	if (!t) {
		fprintf(f, " task -");
		return;
	}
	fprintf(f, " task %u/%u %s", t->tid, t->tgid, mms_store_get_str(st, t->comm_id));
	if (t->cgroup_id)
		fprintf(f, " cgroup %s", mms_store_get_str(st, t->cgroup_id));
}

static char *dump(const struct mms_store *st, const struct mms_interval *iv)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fprintf(f, "start %llu dur %llu flags %u lost", (unsigned long long)iv->start_ns,
		(unsigned long long)iv->dur_ns, iv->flags);
	for (int r = 0; r < MMS_LOST_NR; r++)
		fprintf(f, " %llu", (unsigned long long)iv->lost[r]);
	fprintf(f, "\n");
	for (uint32_t i = 0; i < iv->n_locks; i++) {
		const struct mms_lock_sample *s = &iv->locks[i];
		const struct mms_lock_info *l = mms_store_get_lock(st, s->lock_id);
		const struct mms_stack *k = mms_store_get_stack(st, s->stack_id);

		if (l)
			fprintf(f, "lock %#llx kind %u '%s' '%s' %u '%s'",
				(unsigned long long)l->addr, l->kind,
				mms_store_get_str(st, l->name_id), mms_store_get_str(st, l->detail_id),
				l->owner_tgid, mms_store_get_str(st, l->owner_comm_id));
		else
			fprintf(f, "lock -");
		fprintf(f, " stack");
		for (uint32_t j = 0; k && j < k->nr; j++)
			fprintf(f, " %#llx=%s", (unsigned long long)k->ips[j],
				mms_store_get_str(st, k->sym_ids[j]));
		dump_task(f, st, s->task_id);
		fprintf(f, " flags %u", s->flags);
		dump_stat(f, &s->wait);
	}
	for (uint32_t i = 0; i < iv->n_metrics; i++) {
		const struct mms_metric_sample *s = &iv->metrics[i];

		fprintf(f, "metric '%s' sub %u", mms_store_get_str(st, s->metric_id), s->sub);
		dump_task(f, st, s->proc_id);
		dump_stat(f, &s->stat);
	}
	fclose(f);
	return buf;
}

#endif
