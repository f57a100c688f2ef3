// SPDX-License-Identifier: GPL-2.0
/* Grouping, sorting and summing over the store (see include/mmscope/query.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmscope/query.h"

struct keymap {
	uint64_t *keys;
	uint32_t *vals;		/* row index + 1 */
	uint32_t n;
};

static uint32_t hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (uint32_t)k;
}

static int keymap_grow(struct keymap *m, const struct mms_rows *rows)
{
	uint32_t n = m->n ? m->n * 2 : 256;
	uint64_t *keys = calloc(n, sizeof(*keys));
	uint32_t *vals = calloc(n, sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (size_t r = 0; r < rows->nr; r++) {
		uint32_t i = hash64(rows->rows[r].key) & (n - 1);

		while (vals[i])
			i = (i + 1) & (n - 1);
		keys[i] = rows->rows[r].key;
		vals[i] = (uint32_t)r + 1;
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->n = n;
	return 0;
}

static struct mms_row *row_get(struct keymap *m, struct mms_rows *rows, uint64_t key, bool *fresh)
{
	uint32_t i;

	if ((rows->nr + 1) * 2 > m->n && keymap_grow(m, rows))
		return NULL;
	for (i = hash64(key) & (m->n - 1); m->vals[i]; i = (i + 1) & (m->n - 1))
		if (m->keys[i] == key) {
			*fresh = false;
			return &rows->rows[m->vals[i] - 1];
		}
	if (rows->nr == rows->cap) {
		size_t cap = rows->cap ? rows->cap * 2 : 64;
		struct mms_row *p = realloc(rows->rows, cap * sizeof(*p));

		if (!p)
			return NULL;
		rows->rows = p;
		rows->cap = cap;
	}
	m->keys[i] = key;
	m->vals[i] = (uint32_t)rows->nr + 1;
	*fresh = true;
	memset(&rows->rows[rows->nr], 0, sizeof(rows->rows[0]));
	rows->rows[rows->nr].key = key;
	return &rows->rows[rows->nr++];
}

uint32_t mms_stack_caller(const struct mms_stack *s, uint32_t stack_skip, uint64_t *ip)
{
	if (!s || stack_skip >= s->nr) {
		if (ip)
			*ip = 0;
		return 0;
	}
	if (ip)
		*ip = s->ips[stack_skip];
	return s->sym_ids[stack_skip];
}

static uint64_t row_key(const struct mms_store *st, const struct mms_query *q,
			const struct mms_lock_sample *s, uint32_t *name_id)
{
	const struct mms_task *t;
	uint64_t ip;

	*name_id = 0;
	switch (q->by) {
	case MMS_BY_LOCK:
		return s->lock_id;
	case MMS_BY_CALLER:
		*name_id = mms_stack_caller(mms_store_get_stack(st, s->stack_id), q->stack_skip, &ip);
		/* Same symbol+offset from different stacks is one caller. */
		return *name_id ? ((uint64_t)1 << 63) | *name_id : 0;
	case MMS_BY_TASK:
		return s->task_id;
	case MMS_BY_PROCESS:
		t = mms_store_get_task(st, s->task_id);
		return t ? t->tgid : 0;
	case MMS_BY_TYPE:
		return s->flags;
	default:
		return 0;
	}
}

static void row_label(const struct mms_store *st, const struct mms_query *q, struct mms_row *r)
{
	const struct mms_task *t = mms_store_get_task(st, r->first_task);

	switch (q->by) {
	case MMS_BY_LOCK:
		mms_store_lock_label(st, r->first_lock, r->label, sizeof(r->label));
		break;
	case MMS_BY_CALLER:
		snprintf(r->label, sizeof(r->label), "%s",
			 r->name_id ? mms_store_get_str(st, r->name_id) : "unknown");
		break;
	case MMS_BY_TASK:
	case MMS_BY_PROCESS:
		snprintf(r->label, sizeof(r->label), "%s",
			 t ? mms_store_get_str(st, t->comm_id) : "?");
		break;
	case MMS_BY_TYPE:
		snprintf(r->label, sizeof(r->label), "%s", mms_lock_type_name(r->flags));
		break;
	default:
		r->label[0] = 0;
	}
}

/* -L: an address, or a lock's name ("mmap_lock", "&task_struct") or full label. */
static bool lock_filter_hit(const struct mms_store *st, uint32_t lock_id, const char *want)
{
	const struct mms_lock_info *l = mms_store_get_lock(st, lock_id);
	char label[128], *end;
	unsigned long long a;

	if (!l)
		return false;
	a = strtoull(want, &end, 16);
	if (!*end && end != want)
		return l->addr == a;
	if (!strcmp(mms_store_get_str(st, l->name_id), want))
		return true;
	mms_store_lock_label(st, lock_id, label, sizeof(label));
	return !strcmp(label, want);
}

static bool filters_match(const struct mms_store *st, const struct mms_options *o,
			  const struct mms_lock_sample *s, const struct mms_task *t)
{
	const struct mms_stack *k;
	bool hit;
	int i;

	if (o->nr_types) {
		for (i = 0; i < o->nr_types && o->types[i] != s->flags; i++)
			;
		if (i == o->nr_types)
			return false;
	}
	if (o->nr_tids) {
		for (i = 0; i < o->nr_tids && (!t || (uint32_t)o->tids[i] != t->tid); i++)
			;
		if (i == o->nr_tids)
			return false;
	}
	if (o->pid && (!t || t->tgid != (uint32_t)o->pid))
		return false;
	for (i = 0, hit = !o->nr_locks; i < o->nr_locks && !hit; i++)
		hit = lock_filter_hit(st, s->lock_id, o->locks[i]);
	if (!hit)
		return false;
	if (!o->nr_stack_match)
		return true;
	k = mms_store_get_stack(st, s->stack_id);
	for (uint32_t f = 0; k && f < k->nr; f++)
		for (i = 0; i < o->nr_stack_match; i++)
			if (strstr(mms_store_get_str(st, k->sym_ids[f]), o->stack_match[i]))
				return true;
	return false;
}

static bool sample_matches(const struct mms_store *st, const struct mms_query *q,
			   const struct mms_lock_sample *s)
{
	const struct mms_task *t = NULL;

	if (q->lock_id && s->lock_id != q->lock_id)
		return false;
	if (q->tgid || q->filters)
		t = mms_store_get_task(st, s->task_id);
	if (q->tgid && (!t || t->tgid != q->tgid))
		return false;
	return !q->filters || filters_match(st, q->filters, s, t);
}

int mms_query_locks(const struct mms_store *st, const struct mms_query *q, struct mms_rows *out)
{
	struct keymap m = { 0 };
	uint32_t n = mms_store_count(st);
	size_t w;

	out->nr = 0;
	for (uint32_t i = q->from; i <= q->to && i < n; i++) {
		const struct mms_interval *iv = mms_store_at(st, i);

		for (uint32_t j = 0; j < iv->n_locks; j++) {
			const struct mms_lock_sample *s = &iv->locks[j];
			struct mms_row *r;
			uint32_t name_id;
			uint64_t key;
			bool fresh;

			if (!sample_matches(st, q, s))
				continue;
			key = row_key(st, q, s, &name_id);
			r = row_get(&m, out, key, &fresh);
			if (!r) {
				free(m.keys);
				free(m.vals);
				return -ENOMEM;
			}
			if (fresh) {
				r->name_id = name_id;
				r->flags = s->flags;
				r->first_lock = s->lock_id;
				r->first_stack = s->stack_id;
				r->first_task = s->task_id;
			}
			/* rwsem:R and rwsem:W of one lock read as "rwsem"; other mixes keep the first. */
			if (!((r->flags ^ s->flags) & ~(uint32_t)(MMS_LCB_READ | MMS_LCB_WRITE)))
				r->flags |= s->flags;
			r->nr_src++;
			mms_stat_merge(&r->wait, &s->wait);
		}
	}
	free(m.keys);
	free(m.vals);
	/* Labels last: they are only needed for rows that exist. */
	w = 0;
	for (size_t r = 0; r < out->nr; r++) {
		row_label(st, q, &out->rows[r]);
		if (q->match && !strstr(out->rows[r].label, q->match))
			continue;
		out->rows[w++] = out->rows[r];
	}
	out->nr = w;
	if (!q->no_sort)
		mms_rows_sort(out, q->sort, q->ascending);
	return 0;
}

void mms_rows_free(struct mms_rows *r)
{
	free(r->rows);
	memset(r, 0, sizeof(*r));
}

uint64_t mms_row_sort_value(const struct mms_row *row, enum mms_sort sort)
{
	const struct mms_stat *s = &row->wait;

	switch (sort) {
	case MMS_SORT_CONTENDED:
		return s->count;
	case MMS_SORT_WAIT_TOTAL:
		return s->total;
	case MMS_SORT_WAIT_MAX:
		return s->max;
	case MMS_SORT_WAIT_MIN:
		return s->min;
	case MMS_SORT_AVG_WAIT:
		return mms_stat_avg(s);
	case MMS_SORT_P50:
		return mms_stat_percentile(s, 50);
	case MMS_SORT_P99:
		return mms_stat_percentile(s, 99);
	default:
		return 0;
	}
}

static enum mms_sort sort_key;
static bool sort_asc;

static int cmp_rows(const void *a, const void *b)
{
	const struct mms_row *x = a, *y = b;
	uint64_t vx, vy;
	int c;

	if (sort_key == MMS_SORT_NAME) {
		c = strcmp(x->label, y->label);
	} else {
		vx = mms_row_sort_value(x, sort_key);
		vy = mms_row_sort_value(y, sort_key);
		c = vx < vy ? -1 : vx > vy;
		if (!c)	/* ties: a stable, meaningful order */
			c = x->wait.total < y->wait.total ? -1 : x->wait.total > y->wait.total;
		if (!c)
			c = strcmp(y->label, x->label);
		c = -c;	/* numbers sort descending by default */
	}
	return sort_asc ? -c : c;
}

void mms_rows_sort(struct mms_rows *r, enum mms_sort sort, bool ascending)
{
	/* qsort has no context argument in C11; the loop is single-threaded. */
	sort_key = sort;
	sort_asc = ascending;
	if (r->nr > 1)
		qsort(r->rows, r->nr, sizeof(*r->rows), cmp_rows);
}

int mms_query_metric(const struct mms_store *st, uint32_t from, uint32_t to, const char *metric,
		     long sub, uint32_t tgid, struct mms_stat *out)
{
	uint32_t n = mms_store_count(st);

	mms_stat_init(out);
	for (uint32_t i = from; i <= to && i < n; i++) {
		const struct mms_interval *iv = mms_store_at(st, i);

		for (uint32_t j = 0; j < iv->n_metrics; j++) {
			const struct mms_metric_sample *m = &iv->metrics[j];
			const struct mms_task *t;

			if (strcmp(mms_store_get_str(st, m->metric_id), metric))
				continue;
			if (sub >= 0 && m->sub != (uint32_t)sub)
				continue;
			if (tgid) {
				t = mms_store_get_task(st, m->proc_id);
				if (!t || t->tgid != tgid)
					continue;
			}
			mms_stat_merge(out, &m->stat);
		}
	}
	return 0;
}

int mms_query_series(const struct mms_store *st, const struct mms_query *q, uint64_t key,
		     bool counts, uint64_t *out, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++) {
		const struct mms_interval *iv = mms_store_at(st, q->from + k);

		out[k] = 0;
		if (!iv || q->from + k > q->to)
			continue;
		for (uint32_t j = 0; j < iv->n_locks; j++) {
			const struct mms_lock_sample *s = &iv->locks[j];
			uint32_t name_id;

			if (!sample_matches(st, q, s) || row_key(st, q, s, &name_id) != key)
				continue;
			out[k] += counts ? s->wait.count : s->wait.total;
		}
	}
	return 0;
}

static const char *const group_names[MMS_GROUP_NR] = {
	[MMS_BY_LOCK] = "lock",
	[MMS_BY_CALLER] = "caller",
	[MMS_BY_TASK] = "task",
	[MMS_BY_PROCESS] = "process",
	[MMS_BY_TYPE] = "type",
};

const char *mms_group_name(enum mms_group g)
{
	return (unsigned int)g < MMS_GROUP_NR ? group_names[g] : "?";
}

int mms_group_parse(const char *s, enum mms_group *g)
{
	for (int i = 0; i < MMS_GROUP_NR; i++)
		if (!strcmp(s, group_names[i])) {
			*g = i;
			return 0;
		}
	return -EINVAL;
}

static const char *const sort_names[MMS_SORT_NR] = {
	[MMS_SORT_CONTENDED] = "contended",
	[MMS_SORT_WAIT_TOTAL] = "wait_total",
	[MMS_SORT_WAIT_MAX] = "wait_max",
	[MMS_SORT_WAIT_MIN] = "wait_min",
	[MMS_SORT_AVG_WAIT] = "avg_wait",
	[MMS_SORT_P50] = "p50",
	[MMS_SORT_P99] = "p99",
	[MMS_SORT_NAME] = "name",
};

const char *mms_sort_name(enum mms_sort s)
{
	return (unsigned int)s < MMS_SORT_NR ? sort_names[s] : "?";
}

int mms_sort_parse(const char *s, enum mms_sort *out)
{
	for (int i = 0; i < MMS_SORT_NR; i++)
		if (!strcmp(s, sort_names[i])) {
			*out = i;
			return 0;
		}
	return -EINVAL;
}
