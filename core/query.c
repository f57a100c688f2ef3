// SPDX-License-Identifier: GPL-2.0
/* Grouping, sorting and summing over the store (see include/mmscope/query.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmscope/hash.h"
#include "mmscope/query.h"

struct keymap {
	struct mms_hash hash;	/* key -> row index + 1 */
	/*
	 * Keys that are interned ids (locks, tasks) index this directly (row
	 * index + 1): no hashing, and a table far smaller than a hash of keys.
	 */
	uint32_t *dense;
	uint32_t nr_dense;
};

/*
 * The row of key; a new one (*fresh) has only its key set, the caller fills
 * the rest.
 */
static struct mms_row *row_get(struct keymap *m, struct mms_rows *rows, uint64_t key, bool *fresh)
{
	uint32_t i = 0, *slot = NULL;
	struct mms_row *r;
	int found;

	if (key < m->nr_dense) {
		slot = &m->dense[key];
		found = *slot != 0;
	} else {
		found = mms_hash_probe(&m->hash, key, &i);
		if (found < 0)
			return NULL;
		if (found)
			slot = &m->hash.vals[i];
	}
	if (found) {
		*fresh = false;
		return &rows->rows[*slot - 1];
	}
	if (rows->nr == rows->cap) {
		size_t cap = rows->cap ? rows->cap * 2 : 64;
		struct mms_row *p = realloc(rows->rows, cap * sizeof(*p));

		if (!p)
			return NULL;
		rows->rows = p;
		rows->cap = cap;
	}
	if (slot)
		*slot = (uint32_t)rows->nr + 1;
	else
		mms_hash_set(&m->hash, i, key, (uint32_t)rows->nr);
	*fresh = true;
	r = &rows->rows[rows->nr++];
	r->key = key;
	return r;
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

uint64_t mms_caller_key(const struct mms_store *st, const struct mms_lock_sample *s,
			uint32_t stack_skip, uint32_t *name_id)
{
	uint32_t sym = mms_stack_caller(mms_store_get_stack(st, s->stack_id), stack_skip, NULL);
	uint64_t kind = s->flags & ~(uint32_t)(MMS_LCB_READ | MMS_LCB_WRITE) & 0x7fffffffU;

	if (name_id)
		*name_id = sym;
	/*
	 * Same symbol+offset from different stacks is one caller, but not across
	 * kinds of lock: a down_read() that waits may first spin on the rwsem's
	 * wait_lock, and that spin has the same caller.  rwsem:R and :W stay one.
	 */
	return sym ? (uint64_t)1 << 63 | kind << 32 | sym : 0;
}

static uint64_t row_key(const struct mms_store *st, const struct mms_query *q,
			const struct mms_lock_sample *s, uint32_t *name_id)
{
	const struct mms_task *t;

	*name_id = 0;
	switch (q->by) {
	case MMS_BY_LOCK:
		return s->lock_id;
	case MMS_BY_CALLER:
		return mms_caller_key(st, s, q->stack_skip, name_id);
	case MMS_BY_TASK:
		return s->task_id;
	case MMS_BY_PROCESS:
		t = mms_store_get_task(st, s->task_id);
		return t ? t->tgid : 0;
	case MMS_BY_TYPE:
		return s->flags;
	case MMS_BY_STACK:
		return (q->stack_per_lock ? (uint64_t)s->lock_id << 32 : 0) | s->stack_id;
	case MMS_BY_CGROUP:
		t = mms_store_get_task(st, s->task_id);
		return t ? t->cgroup_id : 0;
	case MMS_BY_OWNER:
		return mms_owner_key(s);
	default:
		return 0;
	}
}

struct mms_labels {
	const struct mms_store *st;	/* what the labels were made from */
	uint64_t epoch;
	uint32_t *off;			/* by lock id: offset + 1 into text; 0: not made yet */
	uint32_t nr_off;
	char *text;
	size_t len, cap;
};

int mms_labels_create(struct mms_labels **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void mms_labels_destroy(struct mms_labels *l)
{
	if (!l)
		return;
	free(l->off);
	free(l->text);
	free(l);
}

/* Forgets every label when they may no longer be true (other store, ids reused). */
static void labels_check(struct mms_labels *l, const struct mms_store *st)
{
	if (l->st == st && l->epoch == mms_store_epoch(st))
		return;
	if (l->off)
		memset(l->off, 0, l->nr_off * sizeof(*l->off));
	l->len = 0;
	l->st = st;
	l->epoch = mms_store_epoch(st);
}

/* The label of a lock, made on first use; NULL when out of memory. */
static const char *labels_lock(struct mms_labels *l, const struct mms_store *st, uint32_t id)
{
	char buf[sizeof(((struct mms_row *)0)->label)];
	size_t n;

	if (id < l->nr_off && l->off[id])
		return l->text + l->off[id] - 1;
	/*
	 * A free id (a row older than the last sweep) may be handed out again
	 * before the epoch moves: only labels of live locks are kept.
	 */
	if (!mms_store_get_lock(st, id))
		return NULL;
	if (id >= l->nr_off) {
		uint32_t nr = id + 1 > 2 * l->nr_off ? id + 1 : 2 * l->nr_off;
		uint32_t *off = realloc(l->off, nr * sizeof(*off));

		if (!off)
			return NULL;
		memset(off + l->nr_off, 0, (nr - l->nr_off) * sizeof(*off));
		l->off = off;
		l->nr_off = nr;
	}
	mms_store_lock_label(st, id, buf, sizeof(buf));
	n = strlen(buf) + 1;
	if (l->len + n > l->cap || l->len + n > UINT32_MAX) {
		size_t cap = l->cap ? l->cap * 2 : 4096;
		char *t;

		if (l->len + n > UINT32_MAX)
			return NULL;
		while (cap < l->len + n)
			cap *= 2;
		t = realloc(l->text, cap);
		if (!t)
			return NULL;
		l->text = t;
		l->cap = cap;
	}
	memcpy(l->text + l->len, buf, n);
	l->off[id] = (uint32_t)l->len + 1;
	l->len += n;
	return l->text + l->off[id] - 1;
}

/* snprintf(dst, sizeof(label), "%s", src) without the cost of the format engine. */
static void label_copy(char *dst, const char *src)
{
	size_t n = strnlen(src, sizeof(((struct mms_row *)0)->label) - 1);

	memcpy(dst, src, n);
	dst[n] = 0;
}

void mms_query_row_label(const struct mms_store *st, const struct mms_query *q, struct mms_row *r)
{
	const struct mms_task *t;
	const char *s;

	switch (q->by) {
	case MMS_BY_LOCK:
		if (q->labels)
			labels_check(q->labels, st);
		s = q->labels ? labels_lock(q->labels, st, r->first_lock) : NULL;
		if (s)
			label_copy(r->label, s);
		else
			mms_store_lock_label(st, r->first_lock, r->label, sizeof(r->label));
		break;
	case MMS_BY_CALLER:
		label_copy(r->label, r->name_id ? mms_store_get_str(st, r->name_id) : "unknown");
		break;
	case MMS_BY_STACK:
		r->name_id = mms_stack_caller(mms_store_get_stack(st, r->first_stack),
					      q->stack_skip, NULL);
		label_copy(r->label, r->name_id ? mms_store_get_str(st, r->name_id) : "unknown");
		break;
	case MMS_BY_TASK:
	case MMS_BY_PROCESS:
		t = mms_store_get_task(st, r->first_task);
		if (t && mms_tgid_short(t->tgid))	/* short-lived processes together */
			snprintf(r->label, sizeof(r->label), "<%s>", mms_store_get_str(st, t->comm_id));
		else
			label_copy(r->label, t ? mms_store_get_str(st, t->comm_id) : "?");
		break;
	case MMS_BY_TYPE:
		label_copy(r->label, mms_lock_type_name(r->flags));
		break;
	case MMS_BY_CGROUP:
		/* Waits from a source or recording that did not tell the cgroup. */
		label_copy(r->label, r->key ? mms_store_get_str(st, (uint32_t)r->key) : "unknown");
		break;
	case MMS_BY_OWNER:
		/* The owner's task name; name_id: the first frame of its stack. */
		t = mms_store_get_task(st, mms_owner_task(r->key));
		r->name_id = mms_stack_caller(mms_store_get_stack(st, mms_owner_stack(r->key)),
					      0, NULL);
		label_copy(r->label, t ? mms_store_get_str(st, t->comm_id) : "owner unknown");
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
	if (o->nr_cgroups &&
	    !mms_options_cgroup_ok(o, t && t->cgroup_id ? mms_store_get_str(st, t->cgroup_id) : ""))
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

static void keymap_free(struct keymap *m)
{
	mms_hash_free(&m->hash);
	free(m->dense);
}

/*
 * Sizes the map once.  The most rows a range can give is its samples; one
 * interval's is a good guess.  Grouping by type or process gives few rows
 * whatever the samples: that map grows as needed.
 */
static int keymap_init(struct keymap *m, const struct mms_store *st, const struct mms_query *q)
{
	uint32_t n = mms_store_count(st), most = 0, ids = 0;

	memset(m, 0, sizeof(*m));
	for (uint32_t i = q->from; i <= q->to && i < n; i++) {
		const struct mms_interval *iv = mms_store_at(st, i);

		if (iv->n_locks > most)
			most = iv->n_locks;
	}
	if (q->by == MMS_BY_LOCK)
		ids = mms_store_table_size(st, MMS_TAB_LOCK);
	else if (q->by == MMS_BY_TASK)
		ids = mms_store_table_size(st, MMS_TAB_TASK);
	/* Ids are 1..ids: index them, unless there are far more ids than rows. */
	if (ids && ids / 4 <= most + 1024) {
		m->dense = calloc((size_t)ids + 1, sizeof(*m->dense));
		if (!m->dense)
			return -ENOMEM;
		m->nr_dense = ids + 1;
		return 0;
	}
	if (q->by != MMS_BY_LOCK && q->by != MMS_BY_TASK && q->by != MMS_BY_CALLER)
		most = 0;
	if (most > (1U << 20))
		most = 1U << 20;
	return mms_hash_reserve(&m->hash, most + 1);
}

int mms_query_locks(const struct mms_store *st, const struct mms_query *q, struct mms_rows *out)
{
	struct keymap m = { 0 };
	uint32_t n = mms_store_count(st);
	bool labels = !q->no_labels || q->match;
	size_t w;

	out->nr = 0;
	if (q->from <= q->to && q->from < n && keymap_init(&m, st, q))
		return -ENOMEM;
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
				keymap_free(&m);
				return -ENOMEM;
			}
			if (fresh) {
				r->name_id = name_id;
				r->flags = s->flags;
				r->first_lock = s->lock_id;
				r->first_stack = s->stack_id;
				r->first_task = s->task_id;
				r->nr_src = 1;
				/* Now, while the line is written anyway: labels may come later. */
				r->label[0] = 0;
				/* What mms_stat_merge into a zeroed stat gives, in one copy. */
				if (s->wait.count)
					r->wait = s->wait;
				else
					mms_stat_init(&r->wait);
				continue;
			}
			/* rwsem:R and rwsem:W of one lock read as "rwsem"; other mixes keep the first. */
			if (!((r->flags ^ s->flags) & ~(uint32_t)(MMS_LCB_READ | MMS_LCB_WRITE)))
				r->flags |= s->flags;
			r->nr_src++;
			mms_stat_merge(&r->wait, &s->wait);
		}
	}
	keymap_free(&m);
	/* Labels last: they are only needed for rows that exist. */
	w = 0;
	for (size_t r = 0; labels && r < out->nr; r++) {
		mms_query_row_label(st, q, &out->rows[r]);
		if (q->match && !strstr(out->rows[r].label, q->match))
			continue;
		if (w != r)
			out->rows[w] = out->rows[r];
		w++;
	}
	if (labels)
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
	[MMS_BY_STACK] = "stack",
	[MMS_BY_CGROUP] = "cgroup",
	[MMS_BY_OWNER] = "owner",
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
