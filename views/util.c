// SPDX-License-Identifier: GPL-2.0
/* Helpers shared by the views (see views/util.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmscope/format.h"
#include "util.h"

void util_fmt_rate(char *buf, size_t len, uint64_t n, double secs)
{
	double v = secs > 0 ? (double)n / secs : 0;

	if (n && v < 0.05)
		snprintf(buf, len, "<0.1");
	else if (v < 100 && v != (double)(uint64_t)v)
		snprintf(buf, len, "%.1f", v);
	else	/* from 100 on, decimals are noise */
		mms_fmt_count(buf, len, v < 10000 ? (double)(uint64_t)(v + 0.5) : v);
}

void util_fmt_wait_rate(char *buf, size_t len, uint64_t ns, double secs)
{
	util_fmt_time(buf, len, secs > 0 ? (uint64_t)((double)ns / secs) : 0);
}

void util_fmt_time(char *buf, size_t len, uint64_t ns)
{
	if (!ns)
		snprintf(buf, len, "-");
	else
		mms_fmt_time_short(buf, len, ns);
}

bool util_match(const char *filter, const char *s)
{
	return !filter || !*filter || strcasestr(s, filter);
}

void util_empty(struct mms_canvas *c, int y, int h, const char *msg)
{
	int len = (int)strlen(msg), x;

	if (h <= 0)
		return;
	x = len < c->w ? (c->w - len) / 2 : 0;
	mms_canvas_put(c, x, y + h / 3, MMS_ROLE_DIM, msg, c->w);
}

int util_section(struct mms_canvas *c, int y, const char *title)
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

int util_hist(struct mms_canvas *c, int y, int h, const struct mms_stat *s, bool time)
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

void util_agg_init(struct util_agg *a, size_t esz)
{
	memset(a, 0, sizeof(*a));
	a->esz = esz;
}

/*
 * Empties a for the next frame.  Sized by the biggest frame so far, a table
 * over the whole window of a fork-heavy run (a row per process, tens of
 * thousands) would keep that memory for good once the window moves on: when
 * the last frame used under a quarter of it, it shrinks to twice that.
 */
void util_agg_reset(struct util_agg *a)
{
	if (a->cap > 1024 && a->n < a->cap / 4) {
		uint32_t cap = a->n * 2 > 32 ? a->n * 2 : 32;
		char *p = realloc(a->ents, (size_t)cap * a->esz);

		if (p) {
			a->ents = p;
			a->cap = cap;
		}
		/* The index is rebuilt at the size the next frame needs. */
		mms_hash_free(&a->idx);
	}
	a->n = 0;
	mms_hash_clear(&a->idx);
}

void util_agg_free(struct util_agg *a)
{
	free(a->ents);
	mms_hash_free(&a->idx);
	util_agg_init(a, a->esz);
}

void *util_agg_get(struct util_agg *a, uint64_t key)
{
	uint32_t i;
	int found = mms_hash_probe(&a->idx, key, &i);
	void *e;

	if (found)
		return found > 0 ? util_agg_at(a, a->idx.vals[i] - 1) : NULL;
	if (a->n == a->cap) {
		uint32_t cap = a->cap ? a->cap * 2 : 32;
		char *p = realloc(a->ents, cap * a->esz);

		if (!p)
			return NULL;
		a->ents = p;
		a->cap = cap;
	}
	mms_hash_set(&a->idx, i, key, a->n);
	e = util_agg_at(a, a->n++);
	memset(e, 0, a->esz);
	*(uint64_t *)e = key;
	return e;
}

void *util_agg_find(const struct util_agg *a, uint64_t key)
{
	uint32_t v = mms_hash_find(&a->idx, key);

	return v ? util_agg_at(a, v - 1) : NULL;
}

/*
 * The series cache: for each interval (by seq), the rows of one grouping as
 * (key, total, count), looked up by key.  An interval's rows never change
 * once committed, so each is computed once (without labels: a series needs
 * only numbers); ids can only go stale when the store's epoch moves, and
 * then everything is dropped.  Intervals older than the sparkline's
 * minute are let go, so the cache holds about a minute of rows.
 */
#define SERIES_SLOTS 1024
/*
 * On top of that, the last series drawn per row key (more rows than a screen
 * shows): a new interval then costs one lookup per row drawn, not one per
 * row and interval of the minute.
 */
#define ROW_SLOTS 256

struct series_ent {
	uint64_t key1;		/* key + 1 (row keys stay below 2^64 - 1); 0: empty slot */
	uint64_t total, count;
};

/*
 * One interval's rows.  Keys that are interned ids (locks, tasks) index
 * vals[] directly, total and count side by side; other keys go to an
 * open-addressing table.  Either way a lookup reads one place (which
 * util_series_get fetches ahead; mms_hash would read three: tag, index, row),
 * and the ids' array is smaller and quicker to fill than a hash of their keys.
 */
struct series_iv {
	uint64_t seq;
	bool valid;
	bool dense;
	double secs;
	void *buf;		/* dense: uint64_t[2 * nr_ids]; else struct series_ent[mask + 1] */
	size_t bytes;		/* allocated */
	uint32_t nr_ids;
	uint32_t mask;
};

struct series_row {
	uint64_t key;
	bool valid, counts;
	uint64_t base_seq;	/* vals[i] is of the interval with seq base_seq + i */
	uint32_t n, cap;
	uint64_t *vals;
};

#define SPARES 4

struct util_series {
	enum mms_group by;
	uint64_t epoch;
	uint32_t stack_skip;
	uint64_t kept_from;	/* seq below which slots were last let go */
	/* Tables of intervals let go, for the next ones: no allocation per interval. */
	void *spare[SPARES];
	size_t spare_bytes[SPARES];
	struct series_iv iv[SERIES_SLOTS];
	struct series_row rows[ROW_SLOTS];
	struct mms_rows scratch;
};

int util_series_create(enum mms_group by, struct util_series **out)
{
	struct util_series *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->by = by;
	*out = s;
	return 0;
}

static void series_iv_free(struct util_series *s, struct series_iv *v)
{
	int i = 0;

	while (v->buf && i < SPARES && s->spare[i])
		i++;
	if (v->buf && i < SPARES) {
		s->spare[i] = v->buf;
		s->spare_bytes[i] = v->bytes;
	} else {
		free(v->buf);
	}
	*v = (struct series_iv){ 0 };
}

/* need zeroed bytes for v: a spare table not much larger, or a new one. */
static int series_buf(struct util_series *s, struct series_iv *v, size_t need)
{
	for (int i = 0; i < SPARES; i++) {
		if (!s->spare[i] || s->spare_bytes[i] < need || s->spare_bytes[i] / 2 > need)
			continue;
		v->buf = s->spare[i];
		v->bytes = s->spare_bytes[i];
		s->spare[i] = NULL;
		memset(v->buf, 0, need);
		return 0;
	}
	v->buf = calloc(1, need);
	v->bytes = need;
	return v->buf ? 0 : -ENOMEM;
}

static void series_drop(struct util_series *s)
{
	for (int i = 0; i < SERIES_SLOTS; i++)
		series_iv_free(s, &s->iv[i]);
	for (int i = 0; i < SPARES; i++) {
		free(s->spare[i]);
		s->spare[i] = NULL;
	}
	for (int i = 0; i < ROW_SLOTS; i++) {
		free(s->rows[i].vals);
		s->rows[i] = (struct series_row){ 0 };
	}
	s->kept_from = 0;
}

void util_series_destroy(struct util_series *s)
{
	if (!s)
		return;
	series_drop(s);
	mms_rows_free(&s->scratch);
	free(s);
}

/* Row keys of this grouping are ids below this (0: they are not ids). */
static uint32_t series_ids(const struct util_series *s, const struct mms_view_env *env)
{
	if (s->by == MMS_BY_LOCK)
		return mms_store_table_size(env->st, MMS_TAB_LOCK) + 1;
	if (s->by == MMS_BY_TASK)
		return mms_store_table_size(env->st, MMS_TAB_TASK) + 1;
	return 0;
}

/* Starts the table of interval in for nr rows; NULL when out of memory. */
static struct series_iv *series_begin(struct util_series *s, struct series_iv *v,
				      const struct mms_interval *in, size_t nr, uint32_t ids)
{
	uint32_t slots = 16;

	series_iv_free(s, v);
	/* A hash table at most two thirds full: short probes. */
	while (slots < nr + nr / 2)
		slots *= 2;
	/* Ids index an array instead unless that would take far more memory. */
	v->dense = ids && ids <= 3 * slots;
	if (series_buf(s, v, v->dense ? (size_t)ids * 2 * sizeof(uint64_t) :
			     slots * sizeof(struct series_ent)))
		return NULL;
	v->seq = in->seq;
	v->secs = in->dur_ns ? in->dur_ns / 1e9 : 1.0;
	v->nr_ids = v->dense ? ids : 0;
	v->mask = slots - 1;
	v->valid = true;
	return v;
}

/* Rows of one query have distinct keys: no need to look for this one first. */
static void series_add(struct series_iv *v, uint64_t key, uint64_t total, uint64_t count)
{
	struct series_ent *e = v->buf;
	uint64_t *vals = v->buf;
	uint32_t h;

	if (v->dense) {
		if (key < v->nr_ids) {
			vals[2 * key] = total;
			vals[2 * key + 1] = count;
		} else {
			v->valid = false;	/* cannot be: made again by a query when needed */
		}
		return;
	}
	for (h = mms_hash64(key) & v->mask; e[h].key1; h = (h + 1) & v->mask)
		;
	e[h] = (struct series_ent){ .key1 = key + 1, .total = total, .count = count };
}

static int series_fill(struct util_series *s, struct series_iv *v, const struct mms_interval *in,
		       const struct mms_rows *rows, uint32_t ids)
{
	if (!series_begin(s, v, in, rows->nr, ids))
		return -ENOMEM;
	for (size_t i = 0; i < rows->nr; i++)
		series_add(v, rows->rows[i].key, rows->rows[i].wait.total,
			   rows->rows[i].wait.count);
	return v->valid ? 0 : -EINVAL;
}

/* Where the key's values are (or its search starts), to fetch ahead. */
static const void *series_slot(const struct series_iv *v, uint64_t key)
{
	if (v->dense)
		return key < v->nr_ids ? (const uint64_t *)v->buf + 2 * key : v->buf;
	return (const struct series_ent *)v->buf + (mms_hash64(key) & v->mask);
}

/* The key's total or count in the interval; 0 when it had none. */
static uint64_t series_find(const struct series_iv *v, uint64_t key, bool counts)
{
	const struct series_ent *e = v->buf;
	const uint64_t *vals = v->buf;

	if (v->dense)
		return key < v->nr_ids ? vals[2 * key + counts] : 0;
	for (uint32_t h = mms_hash64(key) & v->mask; e[h].key1; h = (h + 1) & v->mask)
		if (e[h].key1 == key + 1)
			return counts ? e[h].count : e[h].total;
	return 0;
}

static void series_check(struct util_series *s, const struct mms_view_env *env)
{
	uint64_t from;

	if (s->epoch != env->epoch || s->stack_skip != env->stack_skip) {
		series_drop(s);
		s->epoch = env->epoch;
		s->stack_skip = env->stack_skip;
	}
	if (!env->valid)
		return;
	/* Once per new minute start: what is older is not drawn (a miss refills it). */
	from = mms_store_at(env->st, env->spark_from)->seq;
	if (from <= s->kept_from)
		return;
	for (int i = 0; i < SERIES_SLOTS; i++)
		if (s->iv[i].valid && s->iv[i].seq < from)
			series_iv_free(s, &s->iv[i]);
	s->kept_from = from;
}

struct util_seed *util_series_seed_begin(struct util_series *s, const struct mms_view_env *env,
				     uint32_t idx, size_t nr)
{
	const struct mms_interval *in = mms_store_at(env->st, idx);

	series_check(s, env);
	if (!in)
		return NULL;
	return (struct util_seed *)series_begin(s, &s->iv[in->seq % SERIES_SLOTS], in, nr,
					      series_ids(s, env));
}

void util_series_seed_add(struct util_seed *sd, uint64_t key, uint64_t total, uint64_t count)
{
	series_add((struct series_iv *)sd, key, total, count);
}

static struct series_iv *series_iv(struct util_series *s, const struct mms_view_env *env,
				   uint32_t idx)
{
	const struct mms_interval *in = mms_store_at(env->st, idx);
	struct series_iv *v = &s->iv[in->seq % SERIES_SLOTS];
	struct mms_query q = { .by = s->by, .from = idx, .to = idx,
			       .stack_skip = env->stack_skip, .no_sort = true,
			       .no_labels = true };

	if (v->valid && v->seq == in->seq)
		return v;
	if (mms_query_locks(env->st, &q, &s->scratch) ||
	    series_fill(s, v, in, &s->scratch, series_ids(s, env))) {
		v->valid = false;
		return NULL;
	}
	return v;
}

/* One value of the series, from the interval's table (made on first use); 0 and !*ok on error. */
static uint64_t series_value(struct util_series *s, const struct mms_view_env *env, uint32_t idx,
			     uint64_t key, bool counts, bool *ok)
{
	struct series_iv *v = series_iv(s, env, idx);

	if (!v)
		*ok = false;
	return v ? (uint64_t)((double)series_find(v, key, counts) / v->secs) : 0;
}

/* Keeps what was just computed for the row, to be shifted along next time. */
static void series_keep(struct series_row *r, uint64_t key, bool counts, uint64_t base_seq,
			const uint64_t *vals, uint32_t n)
{
	if (n > r->cap) {
		uint64_t *p = realloc(r->vals, n * sizeof(*p));

		if (!p) {
			r->valid = false;
			return;
		}
		r->vals = p;
		r->cap = n;
	}
	memcpy(r->vals, vals, n * sizeof(*vals));
	*r = (struct series_row){ .key = key, .valid = true, .counts = counts,
				  .base_seq = base_seq, .n = n, .cap = r->cap, .vals = r->vals };
}

uint32_t util_series_get(struct util_series *s, const struct mms_view_env *env, uint64_t key,
		       bool counts, uint64_t *out, uint32_t max)
{
	struct series_row *r = NULL;
	uint64_t from_seq;
	uint32_t n;
	bool hit, ok = true;

	if (!env->valid || !max)
		return 0;
	series_check(s, env);
	n = env->cur - env->spark_from + 1 < max ? env->cur - env->spark_from + 1 : max;
	from_seq = mms_store_at(env->st, env->spark_from)->seq;
	/* The row cache counts intervals by seq: only where the seqs have no gap. */
	if (mms_store_at(env->st, env->spark_from + n - 1)->seq - from_seq == n - 1)
		r = &s->rows[mms_hash64(key * 2 + counts) & (ROW_SLOTS - 1)];
	hit = r && r->valid && r->key == key && r->counts == counts;
	/*
	 * A row new on screen reads one place in each interval's table, each
	 * likely a cache miss: ask for them all first, so they come in together.
	 */
	for (uint32_t i = 0; i < n; i++) {
		const struct series_iv *v = &s->iv[(from_seq + i) % SERIES_SLOTS];

		if ((!hit || from_seq + i < r->base_seq || from_seq + i - r->base_seq >= r->n) &&
		    v->valid && v->seq == from_seq + i)
			__builtin_prefetch(series_slot(v, key));
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t seq = from_seq + i;

		if (hit && seq >= r->base_seq && seq - r->base_seq < r->n)
			out[i] = r->vals[seq - r->base_seq];
		else
			out[i] = series_value(s, env, env->spark_from + i, key, counts, &ok);
	}
	if (r && ok)	/* a value that could not be had is not kept as a 0 */
		series_keep(r, key, counts, from_seq, out, n);
	return n;
}

void util_metric(const struct mms_view_env *env, const char *name, long sub, uint32_t tgid,
	       struct mms_stat *out)
{
	if (!env->valid) {
		mms_stat_init(out);
		return;
	}
	mms_query_metric(env->st, env->from, env->cur, name, sub, tgid, out);
}

bool util_metric_seen(const struct mms_store *st, const char *name)
{
	for (uint32_t i = 0; i < mms_store_count(st); i++) {
		const struct mms_interval *iv = mms_store_at(st, i);

		for (uint32_t j = 0; j < iv->n_metrics; j++)
			if (!strcmp(mms_store_get_str(st, iv->metrics[j].metric_id), name))
				return true;
	}
	return false;
}

bool util_family_ok(const struct mms_view_env *env, enum mms_metric_family f)
{
	return !env->fam || env->fam[f].source;
}

int util_source(struct mms_canvas *c, int y, int max_rows, const struct mms_view_env *env,
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
		x = mms_canvas_printf(c, 0, y, MMS_ROLE_GOOD, c->w, "%s: %s (%s)", what, fs->source,
				      fs->backend ? fs->backend : "?");
		/* What it cannot measure here, on the same row. */
		if (fs->why[0] && x < c->w)
			mms_canvas_printf(c, x, y, MMS_ROLE_WARN, c->w - x, "; %s", fs->why);
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
