// SPDX-License-Identifier: GPL-2.0
/* Tables of mm metrics per process or sub-key (see mtable.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtable.h"
#include "util.h"

#define SPARK_MAX 600

struct mtable_row {
	uint64_t key;		/* tgid, or sub */
	uint32_t proc_id;	/* a task entry of the process (comm) */
	uint32_t pad;
	struct mms_stat s[MTABLE_MAX_METRICS];
};

struct spark_ent {
	uint64_t key;		/* row key * SPARK_MAX + interval offset */
	uint64_t v;
};

struct mtable {
	const struct mtable_cfg *cfg;
	struct mms_list t;
	struct util_agg rows;
	struct util_agg spark;
	uint32_t *order;
	size_t order_cap;
	uint32_t nr_spark;
	double spark_secs[SPARK_MAX];
	struct mms_stat sum[MTABLE_MAX_METRICS];
	uint64_t sel_key;
	const struct mms_view_env *env;	/* during a sort only */
};

int mtable_create(const struct mtable_cfg *cfg, struct mtable **out)
{
	struct mtable *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	util_agg_init(&m->rows, sizeof(struct mtable_row));
	util_agg_init(&m->spark, sizeof(struct spark_ent));
	mtable_set_cfg(m, cfg);
	*out = m;
	return 0;
}

void mtable_destroy(struct mtable *m)
{
	if (!m)
		return;
	util_agg_free(&m->rows);
	util_agg_free(&m->spark);
	free(m->order);
	free(m);
}

void mtable_set_cfg(struct mtable *m, const struct mtable_cfg *cfg)
{
	if (m->cfg == cfg)
		return;
	m->cfg = cfg;
	m->t.cols = cfg->cols;
	m->t.nr_cols = cfg->nr_cols;
	m->t.sort = cfg->default_sort;
	m->t.invert = false;
	m->t.sel = m->t.top = 0;
}

struct mms_list *mtable_table(struct mtable *m)
{
	return &m->t;
}

size_t mtable_total_rows(const struct mtable *m)
{
	return m->rows.n;
}

const struct mms_stat *mtable_sum(const struct mtable *m, int metric)
{
	return &m->sum[metric];
}

/* Which of cfg's metrics a sample is: a bit set (one name can feed several columns). */
static uint32_t sample_metrics(const struct mtable_cfg *cfg, const char *name, uint32_t sub)
{
	uint32_t bits = 0;

	for (int i = 0; i < cfg->nr_metrics; i++) {
		const struct mtable_metric *mt = &cfg->metrics[i];

		if (!strcmp(mt->name, name) && (sub & mt->sub_mask) == mt->sub_val)
			bits |= 1U << i;
	}
	return bits;
}

static uint64_t row_key(const struct mtable *m, const struct mms_view_env *env,
			const struct mms_metric_sample *s)
{
	const struct mms_task *t;

	if (m->cfg->by_sub)
		return s->sub;
	t = mms_store_get_task(env->st, s->proc_id);
	return t ? t->tgid : 0;
}

static int add_interval(struct mtable *m, const struct mms_view_env *env, uint32_t idx,
			bool in_range)
{
	const struct mms_interval *iv = mms_store_at(env->st, idx);
	bool in_spark = idx >= env->spark_from;

	for (uint32_t j = 0; j < iv->n_metrics; j++) {
		const struct mms_metric_sample *s = &iv->metrics[j];
		uint32_t bits = sample_metrics(m->cfg, mms_store_get_str(env->st, s->metric_id),
					       s->sub);
		uint64_t key;

		if (!bits)
			continue;
		key = row_key(m, env, s);
		if (in_range) {
			struct mtable_row *r = util_agg_get(&m->rows, key);

			if (!r)
				return -ENOMEM;
			if (!r->proc_id)
				r->proc_id = s->proc_id;
			for (int i = 0; i < m->cfg->nr_metrics; i++)
				if (bits & (1U << i)) {
					mms_stat_merge(&r->s[i], &s->stat);
					mms_stat_merge(&m->sum[i], &s->stat);
				}
		}
		if (in_spark && (bits & m->cfg->spark_metrics)) {
			struct spark_ent *e = util_agg_get(&m->spark, key * SPARK_MAX +
							 (idx - env->spark_from));

			if (!e)
				return -ENOMEM;
			e->v += m->cfg->spark_totals ? s->stat.total : s->stat.count;
		}
	}
	return 0;
}

static void row_text(const struct mtable *m, const struct mms_view_env *env,
		     const struct mtable_row *r, const struct mtable_col *mc, char *buf, size_t len)
{
	const struct mms_task *t = mms_store_get_task(env->st, r->proc_id);
	const struct mms_stat *s = &r->s[mc->metric];
	double mean;

	switch (mc->what) {
	case MTABLE_PID:
		snprintf(buf, len, "%llu", (unsigned long long)r->key);
		if (!r->key || (!m->cfg->by_sub && mms_tgid_short((uint32_t)r->key)))
			snprintf(buf, len, "-");
		break;
	case MTABLE_COMM:
		if (!m->cfg->by_sub && r->key && mms_tgid_short((uint32_t)r->key)) {
			char rate[32] = "";

			if (m->cfg->group_procs && r->s[m->cfg->group_procs - 1].count)
				util_fmt_rate(rate, sizeof(rate),
					      r->s[m->cfg->group_procs - 1].count, env->secs);
			snprintf(buf, len, "<%s>%s%s%s",
				 t ? mms_store_get_str(env->st, t->comm_id) : "?", rate[0] ? " " : "",
				 rate, rate[0] ? " procs/s" : "");
		} else
			snprintf(buf, len, "%s", !r->key ? "(system)" :
				 t ? mms_store_get_str(env->st, t->comm_id) : "?");
		break;
	case MTABLE_SUB:
		if (!m->cfg->sub_name || !m->cfg->sub_name((uint32_t)r->key, buf, len))
			snprintf(buf, len, "%llu", (unsigned long long)r->key);
		break;
	case MTABLE_COUNT_RATE:
		util_fmt_rate(buf, len, s->count, env->secs);
		break;
	case MTABLE_TOTAL_RATE:
		util_fmt_rate(buf, len, s->total, env->secs);
		break;
	case MTABLE_WAIT_RATE:
		util_fmt_wait_rate(buf, len, s->total, env->secs);
		break;
	case MTABLE_MEAN:
		mean = s->count ? (double)s->total / (double)s->count : 0;
		if (!s->count)
			snprintf(buf, len, "-");
		else
			snprintf(buf, len, mean < 100 ? "%.2f" : "%.0f", mean);
		break;
	case MTABLE_AVG_TIME:
		util_fmt_time(buf, len, mms_stat_avg(s));
		break;
	case MTABLE_MAX:
		snprintf(buf, len, "%llu", (unsigned long long)s->max);
		if (!s->count)
			snprintf(buf, len, "-");
		break;
	case MTABLE_MAX_TIME:
		util_fmt_time(buf, len, s->max);
		break;
	default:
		buf[0] = 0;
	}
}

static struct mtable *sort_m;

static double sort_num(const struct mtable *m, const struct mtable_row *r,
		       const struct mtable_col *mc)
{
	const struct mms_stat *s = &r->s[mc->metric];

	switch (mc->what) {
	case MTABLE_COUNT_RATE:
		return (double)s->count;
	case MTABLE_TOTAL_RATE:
	case MTABLE_WAIT_RATE:
		return (double)s->total;
	case MTABLE_MEAN:
		return s->count ? (double)s->total / (double)s->count : 0;
	case MTABLE_AVG_TIME:
		return (double)mms_stat_avg(s);
	case MTABLE_MAX:
	case MTABLE_MAX_TIME:
		return (double)s->max;
	default:
		(void)m;
		return (double)r->key;
	}
}

static int cmp_rows(const void *a, const void *b)
{
	const struct mtable *m = sort_m;
	const struct mtable_row *x = util_agg_at(&m->rows, *(const uint32_t *)a);
	const struct mtable_row *y = util_agg_at(&m->rows, *(const uint32_t *)b);
	const struct mtable_col *mc = &m->cfg->mcols[m->t.sort];
	bool desc = m->cfg->cols[m->t.sort].left ? m->t.invert : !m->t.invert;
	int c;

	if (mc->what == MTABLE_COMM) {
		char bx[64], by[64];

		row_text(m, m->env, x, mc, bx, sizeof(bx));
		row_text(m, m->env, y, mc, by, sizeof(by));
		c = strcmp(bx, by);
	} else {
		double vx = sort_num(m, x, mc), vy = sort_num(m, y, mc);

		c = vx < vy ? -1 : vx > vy;
	}
	if (!c)
		return x->key < y->key ? -1 : x->key > y->key;
	return desc ? -c : c;
}

static bool row_matches(const struct mtable *m, const struct mms_view_env *env,
			const struct mtable_row *r)
{
	char buf[64];

	if (!env->filter || !*env->filter)
		return true;
	for (int i = 0; i < m->cfg->nr_cols; i++) {
		enum mtable_what w = m->cfg->mcols[i].what;

		if (w != MTABLE_PID && w != MTABLE_COMM && w != MTABLE_SUB)
			continue;
		row_text(m, env, r, &m->cfg->mcols[i], buf, sizeof(buf));
		if (util_match(env->filter, buf))
			return true;
	}
	return false;
}

int mtable_update(struct mtable *m, const struct mms_view_env *env)
{
	uint32_t first;
	size_t n = 0;
	int err = 0;

	if (m->t.nr && m->t.sel < m->t.nr)
		m->sel_key = *(uint64_t *)util_agg_at(&m->rows, m->order[m->t.sel]);
	util_agg_reset(&m->rows);
	util_agg_reset(&m->spark);
	memset(m->sum, 0, sizeof(m->sum));
	m->t.nr = 0;
	m->nr_spark = 0;
	if (!env->valid)
		return 0;
	first = env->spark_from < env->from ? env->spark_from : env->from;
	for (uint32_t i = first; i <= env->cur && !err; i++)
		err = add_interval(m, env, i, i >= env->from);
	for (uint32_t i = env->spark_from; i <= env->cur && m->nr_spark < SPARK_MAX; i++) {
		uint64_t ns = mms_store_at(env->st, i)->dur_ns;

		m->spark_secs[m->nr_spark++] = ns ? (double)ns / 1e9 : 1.0;
	}
	if (err)
		return err;
	if (m->rows.n > m->order_cap) {
		uint32_t *o = realloc(m->order, m->rows.n * sizeof(*o));

		if (!o)
			return -ENOMEM;
		m->order = o;
		m->order_cap = m->rows.n;
	}
	for (uint32_t i = 0; i < m->rows.n; i++)
		if (row_matches(m, env, util_agg_at(&m->rows, i)))
			m->order[n++] = i;
	sort_m = m;
	m->env = env;
	if (n)	/* order is NULL until the first row: qsort(NULL, 0) is undefined */
		qsort(m->order, n, sizeof(*m->order), cmp_rows);
	m->t.nr = n;
	for (size_t i = 0; i < n; i++)
		if (*(uint64_t *)util_agg_at(&m->rows, m->order[i]) == m->sel_key)
			m->t.sel = i;
	if (m->t.sel >= n)
		m->t.sel = n ? n - 1 : 0;
	return 0;
}

static void draw_spark(struct mtable *m, struct mms_canvas *c, int x, int y, int w, uint64_t key)
{
	uint64_t vals[SPARK_MAX];

	for (uint32_t i = 0; i < m->nr_spark; i++) {
		const struct spark_ent *e = util_agg_find(&m->spark, key * SPARK_MAX + i);

		vals[i] = e ? (uint64_t)((double)e->v / m->spark_secs[i]) : 0;
	}
	mms_canvas_spark(c, x, y, w, vals, m->nr_spark, 0, MMS_ROLE_SPARK);
}

void mtable_draw(struct mtable *m, const struct mms_view_env *env, struct mms_canvas *c, int y,
		 int h)
{
	char buf[96];

	if (h < 2)
		return;
	mms_list_layout(&m->t, c->w);
	mms_list_draw_head(&m->t, c, y);
	mms_list_set_rows(&m->t, y + 1, h - 1);
	if (!m->t.nr) {
		util_empty(c, y + 1, h - 1, m->rows.n ? "no rows match the filter (\\ clears it)" :
			 "no events in this range");
		return;
	}
	for (int i = 0; i < h - 1 && m->t.top + (size_t)i < m->t.nr; i++) {
		size_t row = m->t.top + (size_t)i;
		const struct mtable_row *r = util_agg_at(&m->rows, m->order[row]);

		for (int k = 0; k < m->t.nr_cols; k++) {
			const struct mtable_col *mc = &m->cfg->mcols[k];

			if (m->t.w[k] <= 0)
				continue;
			if (mc->what == MTABLE_SPARK) {
				draw_spark(m, c, m->t.x[k], y + 1 + i, m->t.w[k], r->key);
				continue;
			}
			row_text(m, env, r, mc, buf, sizeof(buf));
			if (m->cfg->cols[k].left)
				mms_canvas_put(c, m->t.x[k], y + 1 + i, MMS_ROLE_NORMAL, buf,
					       m->t.w[k]);
			else
				mms_canvas_put_right(c, m->t.x[k], y + 1 + i, m->t.w[k],
						     MMS_ROLE_NORMAL, buf);
		}
		if (row == m->t.sel)
			mms_canvas_paint(c, 0, y + 1 + i, c->w, MMS_ROLE_SELECTED);
	}
}
