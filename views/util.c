// SPDX-License-Identifier: GPL-2.0
/* Helpers shared by the views (see views/util.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmscope/format.h"
#include "util.h"

void vu_fmt_rate(char *buf, size_t len, uint64_t n, double secs)
{
	double v = secs > 0 ? (double)n / secs : 0;

	if (n && v < 0.05)
		snprintf(buf, len, "<0.1");
	else if (v < 100 && v != (double)(uint64_t)v)
		snprintf(buf, len, "%.1f", v);
	else	/* from 100 on, decimals are noise */
		mms_fmt_count(buf, len, v < 10000 ? (double)(uint64_t)(v + 0.5) : v);
}

void vu_fmt_wait_rate(char *buf, size_t len, uint64_t ns, double secs)
{
	vu_fmt_time(buf, len, secs > 0 ? (uint64_t)((double)ns / secs) : 0);
}

void vu_fmt_time(char *buf, size_t len, uint64_t ns)
{
	if (!ns)
		snprintf(buf, len, "-");
	else
		mms_fmt_time_short(buf, len, ns);
}

bool vu_match(const char *filter, const char *s)
{
	return !filter || !*filter || strcasestr(s, filter);
}

void vu_empty(struct mms_canvas *c, int y, int h, const char *msg)
{
	int len = (int)strlen(msg), x;

	if (h <= 0)
		return;
	x = len < c->w ? (c->w - len) / 2 : 0;
	mms_canvas_put(c, x, y + h / 3, MMS_ROLE_DIM, msg, c->w);
}

int vu_section(struct mms_canvas *c, int y, const char *title)
{
	uint32_t line = c->utf8 ? 0x2500 : '-';

	mms_canvas_fill(c, 0, y, 2, line, MMS_ROLE_DIM);
	mms_canvas_put(c, 3, y, MMS_ROLE_LABEL, title, c->w - 4);
	mms_canvas_fill(c, 4 + (int)strlen(title), y, c->w, line, MMS_ROLE_DIM);
	return 1;
}

static void slot_label(char *buf, size_t len, unsigned int i, bool time)
{
	char a[16], b[16];

	if (time) {
		mms_fmt_time_short(a, sizeof(a), mms_hist_slot_low(i));
		mms_fmt_time_short(b, sizeof(b), mms_hist_slot_low(i + 1));
	} else {
		snprintf(a, sizeof(a), "%llu", (unsigned long long)mms_hist_slot_low(i));
		snprintf(b, sizeof(b), "%llu", (unsigned long long)mms_hist_slot_low(i + 1));
	}
	snprintf(buf, len, "%6s-%-6s", a, b);
}

int vu_hist(struct mms_canvas *c, int y, int h, const struct mms_stat *s, bool time)
{
	unsigned int lo = MMS_HIST_SLOTS, hi = 0;
	uint32_t max = 0;
	int rows = 0;

	for (unsigned int i = 0; i < MMS_HIST_SLOTS; i++)
		if (s->hist[i]) {
			lo = i < lo ? i : lo;
			hi = i;
			max = s->hist[i] > max ? s->hist[i] : max;
		}
	if (lo == MMS_HIST_SLOTS)
		return 0;
	for (unsigned int i = lo; i <= hi && rows < h; i++, rows++) {
		char label[40], n[24];
		int bw = c->w - 13 - 10 - 2;

		slot_label(label, sizeof(label), i, time);
		mms_canvas_put(c, 0, y + rows, MMS_ROLE_DIM, label, 13);
		snprintf(n, sizeof(n), "%u", s->hist[i]);
		mms_canvas_put_right(c, 14, y + rows, 9, MMS_ROLE_VALUE, n);
		if (bw > 40)
			bw = 40;
		mms_canvas_bar(c, 24, y + rows, bw, (double)s->hist[i] / max, MMS_ROLE_BAR);
	}
	return rows;
}

void vu_agg_init(struct vu_agg *a, size_t esz)
{
	memset(a, 0, sizeof(*a));
	a->esz = esz;
}

void vu_agg_reset(struct vu_agg *a)
{
	a->n = 0;
	if (a->hidx)
		memset(a->hidx, 0, a->hcap * sizeof(*a->hidx));
}

void vu_agg_free(struct vu_agg *a)
{
	free(a->ents);
	free(a->hkeys);
	free(a->hidx);
	vu_agg_init(a, a->esz);
}

static uint32_t hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (uint32_t)k;
}

static int agg_rehash(struct vu_agg *a)
{
	uint32_t cap = a->hcap ? a->hcap * 2 : 64;
	uint64_t *keys = calloc(cap, sizeof(*keys));
	uint32_t *idx = calloc(cap, sizeof(*idx));

	if (!keys || !idx) {
		free(keys);
		free(idx);
		return -ENOMEM;
	}
	for (uint32_t e = 0; e < a->n; e++) {
		uint64_t k = *(uint64_t *)vu_agg_at(a, e);
		uint32_t i = hash64(k) & (cap - 1);

		while (idx[i])
			i = (i + 1) & (cap - 1);
		keys[i] = k;
		idx[i] = e + 1;
	}
	free(a->hkeys);
	free(a->hidx);
	a->hkeys = keys;
	a->hidx = idx;
	a->hcap = cap;
	return 0;
}

void *vu_agg_get(struct vu_agg *a, uint64_t key)
{
	uint32_t i;
	void *e;

	if ((a->n + 1) * 2 > a->hcap && agg_rehash(a))
		return NULL;
	for (i = hash64(key) & (a->hcap - 1); a->hidx[i]; i = (i + 1) & (a->hcap - 1))
		if (a->hkeys[i] == key)
			return vu_agg_at(a, a->hidx[i] - 1);
	if (a->n == a->cap) {
		uint32_t cap = a->cap ? a->cap * 2 : 32;
		char *p = realloc(a->ents, cap * a->esz);

		if (!p)
			return NULL;
		a->ents = p;
		a->cap = cap;
	}
	a->hkeys[i] = key;
	a->hidx[i] = a->n + 1;
	e = vu_agg_at(a, a->n++);
	memset(e, 0, a->esz);
	*(uint64_t *)e = key;
	return e;
}

void *vu_agg_find(const struct vu_agg *a, uint64_t key)
{
	if (!a->hcap)
		return NULL;
	for (uint32_t i = hash64(key) & (a->hcap - 1); a->hidx[i]; i = (i + 1) & (a->hcap - 1))
		if (a->hkeys[i] == key)
			return vu_agg_at(a, a->hidx[i] - 1);
	return NULL;
}

/*
 * The series cache: for each interval (by seq), the rows of one grouping as
 * (key, total, count) sorted by key.  An interval's rows never change once
 * committed, so each is computed once; ids can only go stale when the
 * store's epoch moves, and then everything is dropped.
 */
#define SERIES_SLOTS 1024

struct series_ent {
	uint64_t key, total, count;
};

struct series_iv {
	uint64_t seq;
	bool valid;
	uint32_t n;
	double secs;
	struct series_ent *e;
};

struct vu_series {
	enum mms_group by;
	uint64_t epoch;
	uint32_t stack_skip;
	struct series_iv iv[SERIES_SLOTS];
	struct mms_rows scratch;
};

int vu_series_create(enum mms_group by, struct vu_series **out)
{
	struct vu_series *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->by = by;
	*out = s;
	return 0;
}

static void series_drop(struct vu_series *s)
{
	for (int i = 0; i < SERIES_SLOTS; i++) {
		free(s->iv[i].e);
		s->iv[i] = (struct series_iv){ 0 };
	}
}

void vu_series_destroy(struct vu_series *s)
{
	if (!s)
		return;
	series_drop(s);
	mms_rows_free(&s->scratch);
	free(s);
}

static int cmp_ent(const void *a, const void *b)
{
	const struct series_ent *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

static int series_fill(struct series_iv *v, const struct mms_interval *in,
		       const struct mms_rows *rows)
{
	free(v->e);
	*v = (struct series_iv){ .seq = in->seq, .secs = in->dur_ns ? in->dur_ns / 1e9 : 1.0 };
	v->e = malloc((rows->nr ? rows->nr : 1) * sizeof(*v->e));
	if (!v->e)
		return -ENOMEM;
	for (size_t i = 0; i < rows->nr; i++)
		v->e[i] = (struct series_ent){ .key = rows->rows[i].key,
					       .total = rows->rows[i].wait.total,
					       .count = rows->rows[i].wait.count };
	v->n = (uint32_t)rows->nr;
	qsort(v->e, v->n, sizeof(*v->e), cmp_ent);
	v->valid = true;
	return 0;
}

static void series_check(struct vu_series *s, const struct mms_view_env *env)
{
	if (s->epoch != env->epoch || s->stack_skip != env->stack_skip) {
		series_drop(s);
		s->epoch = env->epoch;
		s->stack_skip = env->stack_skip;
	}
}

void vu_series_seed(struct vu_series *s, const struct mms_view_env *env, uint32_t idx,
		    const struct mms_rows *rows)
{
	const struct mms_interval *in = mms_store_at(env->st, idx);

	series_check(s, env);
	if (in)
		series_fill(&s->iv[in->seq % SERIES_SLOTS], in, rows);
}

static struct series_iv *series_iv(struct vu_series *s, const struct mms_view_env *env,
				   uint32_t idx)
{
	const struct mms_interval *in = mms_store_at(env->st, idx);
	struct series_iv *v = &s->iv[in->seq % SERIES_SLOTS];
	struct mms_query q = { .by = s->by, .from = idx, .to = idx,
			       .stack_skip = env->stack_skip, .no_sort = true };

	if (v->valid && v->seq == in->seq)
		return v;
	v->valid = false;
	if (mms_query_locks(env->st, &q, &s->scratch) || series_fill(v, in, &s->scratch))
		return NULL;
	return v;
}

uint32_t vu_series_get(struct vu_series *s, const struct mms_view_env *env, uint64_t key,
		       bool counts, uint64_t *out, uint32_t max)
{
	uint32_t n = 0;

	if (!env->valid)
		return 0;
	series_check(s, env);
	for (uint32_t i = env->spark_from; i <= env->cur && n < max; i++, n++) {
		struct series_iv *v = series_iv(s, env, i);
		struct series_ent k = { .key = key }, *e;

		out[n] = 0;
		if (!v)
			continue;
		e = bsearch(&k, v->e, v->n, sizeof(*v->e), cmp_ent);
		if (e)
			out[n] = (uint64_t)((double)(counts ? e->count : e->total) / v->secs);
	}
	return n;
}

void vu_metric(const struct mms_view_env *env, const char *name, long sub, uint32_t tgid,
	       struct mms_stat *out)
{
	if (!env->valid) {
		mms_stat_init(out);
		return;
	}
	mms_query_metric(env->st, env->from, env->cur, name, sub, tgid, out);
}

bool vu_metric_seen(const struct mms_store *st, const char *name)
{
	for (uint32_t i = 0; i < mms_store_count(st); i++) {
		const struct mms_interval *iv = mms_store_at(st, i);

		for (uint32_t j = 0; j < iv->n_metrics; j++)
			if (!strcmp(mms_store_get_str(st, iv->metrics[j].metric_id), name))
				return true;
	}
	return false;
}

bool vu_family_ok(const struct mms_view_env *env, enum mms_metric_family f)
{
	return !env->fam || env->fam[f].source;
}

int vu_source(struct mms_canvas *c, int y, int max_rows, const struct mms_view_env *env,
	      enum mms_metric_family f, const char *what)
{
	const struct mms_family_status *fs = env->fam ? &env->fam[f] : NULL;
	char buf[512];
	int x, rows = 0;
	size_t off = 0, len;

	if (!fs) {
		mms_canvas_printf(c, 0, y, MMS_ROLE_DIM, c->w, "%s: source not known", what);
		return 1;
	}
	if (fs->source) {
		mms_canvas_printf(c, 0, y, MMS_ROLE_GOOD, c->w, "%s: %s (%s)", what, fs->source,
				  fs->backend ? fs->backend : "?");
		return 1;
	}
	x = mms_canvas_printf(c, 0, y, MMS_ROLE_ERROR, c->w, "%s unavailable: ", what);
	snprintf(buf, sizeof(buf), "%s", fs->why[0] ? fs->why : "no source works");
	len = strlen(buf);
	while (off < len && rows < max_rows) {
		int room = c->w - x;
		size_t take;

		if (room <= 0)
			break;
		if (rows + 1 == max_rows) {	/* the last row: what fits, cut with an ellipsis */
			mms_canvas_put(c, x, y + rows++, MMS_ROLE_ERROR, buf + off, -1);
			break;
		}
		take = len - off < (size_t)room ? len - off : (size_t)room;
		/* Break at a space when the rest does not fit, like a pager would. */
		if (off + take < len)
			for (size_t k = take; k > (size_t)room / 2; k--)
				if (buf[off + k] == ' ') {
					take = k;
					break;
				}
		{
			char part[512];

			memcpy(part, buf + off, take);
			part[take] = 0;
			mms_canvas_put(c, x, y + rows, MMS_ROLE_ERROR, part, (int)take);
		}
		off += take;
		while (off < len && buf[off] == ' ')
			off++;
		rows++;
		x = 2;
	}
	return rows ? rows : 1;
}
