// SPDX-License-Identifier: GPL-2.0
/*
 * A/B comparison of runs (see include/mmscope/compare.h): per-run metric
 * values from stores, statistics per side, verdicts, and the three outputs.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mmscope/compare.h"
#include "mmscope/format.h"
#include "mmscope/query.h"
#include "mmscope/source.h"

void mms_compare_init(struct mms_compare *c, const char *base, const char *new_label)
{
	memset(c, 0, sizeof(*c));
	c->label[0] = base ? base : "base";
	c->label[1] = new_label ? new_label : "new";
	c->alpha = 0.05;
}

void mms_compare_free(struct mms_compare *c)
{
	free(c->rows);
	c->rows = NULL;
	c->nr = c->cap = 0;
}

static struct mms_cmp_row *row_get(struct mms_compare *c, enum mms_cmp_group g, const char *name,
				   const char *what, enum mms_cmp_unit unit)
{
	struct mms_cmp_row *r;

	for (size_t i = 0; i < c->nr; i++) {
		r = &c->rows[i];
		if (r->group == g && !strcmp(r->name, name) && !strcmp(r->what, what))
			return r;
	}
	if (c->nr == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;

		r = realloc(c->rows, cap * sizeof(*r));
		if (!r)
			return NULL;
		c->rows = r;
		c->cap = cap;
	}
	r = &c->rows[c->nr++];
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	snprintf(r->what, sizeof(r->what), "%s", what);
	r->group = g;
	r->unit = unit;
	for (int s = 0; s < 2; s++)
		for (int k = 0; k < MMS_CMP_MAX_RUNS; k++)
			r->side[s].v[k] = NAN;
	return r;
}

/* Adds value to a row's current run (rows summed from several keys add up). */
static int put(struct mms_compare *c, int side, enum mms_cmp_group g, const char *name,
	       const char *what, enum mms_cmp_unit unit, double v, double rank)
{
	struct mms_cmp_row *r = row_get(c, g, name, what, unit);
	int run = c->runs[side];

	if (!r)
		return -ENOMEM;
	r->side[side].v[run] = isnan(r->side[side].v[run]) ? v : r->side[side].v[run] + v;
	r->rank += rank;
	return 0;
}

/* A lock's name without what differs from boot to boot (addresses, pids). */
static void lock_cmp_name(const struct mms_store *st, uint32_t lock_id, char *buf, size_t len)
{
	const struct mms_lock_info *l = mms_store_get_lock(st, lock_id);

	if (l && (l->kind == MMS_LOCK_MMAP || l->kind == MMS_LOCK_SIGLOCK) && l->owner_comm_id)
		snprintf(buf, len, "%s (%s)", mms_store_get_str(st, l->name_id),
			 mms_store_get_str(st, l->owner_comm_id));
	else
		mms_store_lock_label(st, lock_id, buf, len);
}

static double store_secs(const struct mms_store *st)
{
	uint64_t ns = 0;

	for (uint32_t i = 0; i < mms_store_count(st); i++)
		ns += mms_store_at(st, i)->dur_ns;
	return ns ? (double)ns / 1e9 : 1;
}

/* Sums wait stats per comparable name, then one value per name and metric. */
static int add_lock_rows(struct mms_compare *c, int side, const struct mms_store *st,
			 enum mms_group by, enum mms_cmp_group g, double secs)
{
	struct mms_query q = { .by = by, .to = mms_store_count(st) - 1 };
	struct mms_rows rows = { 0 };
	int err = mms_query_locks(st, &q, &rows);

	for (size_t i = 0; !err && i < rows.nr; i++) {
		const struct mms_row *r = &rows.rows[i];
		char name[96];
		double rank = (double)r->wait.total;

		if (by == MMS_BY_LOCK)
			lock_cmp_name(st, r->first_lock, name, sizeof(name));
		else
			snprintf(name, sizeof(name), "%s", r->label);
		/* avg wait is derived later from these two, over the merged keys. */
		err = put(c, side, g, name, "wait/s", MMS_CMP_NS_PER_SEC,
				  (double)r->wait.total / secs, rank);
		if (!err)
			err = put(c, side, g, name, "contended/s", MMS_CMP_PER_SEC,
				  (double)r->wait.count / secs, rank);
	}
	mms_rows_free(&rows);
	return err;
}

static int add_metric(struct mms_compare *c, int side, const struct mms_store *st,
		      const char *metric, enum mms_cmp_group g, const char *name, double secs,
		      bool per_process)
{
	uint32_t n = mms_store_count(st);

	for (uint32_t i = 0; i < n; i++) {
		const struct mms_interval *iv = mms_store_at(st, i);

		for (uint32_t j = 0; j < iv->n_metrics; j++) {
			const struct mms_metric_sample *m = &iv->metrics[j];
			const struct mms_task *t;
			char nm[96];
			int err;

			if (strcmp(mms_store_get_str(st, m->metric_id), metric))
				continue;
			t = mms_store_get_task(st, m->proc_id);
			if (per_process)
				snprintf(nm, sizeof(nm), "%s (%s)", name,
					 t ? mms_store_get_str(st, t->comm_id) : "system");
			else
				snprintf(nm, sizeof(nm), "%s", name);
			err = put(c, side, g, nm, "~count", MMS_CMP_PER_SEC,
				  (double)m->stat.count, 0);
			if (!err)
				err = put(c, side, g, nm, "~total", MMS_CMP_PER_SEC,
					  (double)m->stat.total, (double)m->stat.total);
			if (!err)
				err = put(c, side, g, nm, "count/s", MMS_CMP_PER_SEC,
					  (double)m->stat.count / secs, 0);
			if (!err && g == MMS_CMP_MMAP)
				err = put(c, side, g, nm, "wait/s", MMS_CMP_NS_PER_SEC,
					  (double)m->stat.total / secs, 0);
			if (!err && g == MMS_CMP_RMAP)
				err = put(c, side, g, nm, "pages/s", MMS_CMP_PER_SEC,
					  (double)m->stat.total / secs, 0);
			if (err)
				return err;
		}
	}
	return 0;
}

int mms_compare_add_run(struct mms_compare *c, int side, const struct mms_store *st,
			unsigned int families)
{
	double secs = store_secs(st);
	struct mms_stat all = { 0 };
	int err = 0;

	if (c->runs[side] >= MMS_CMP_MAX_RUNS)
		return -E2BIG;
	for (uint32_t i = 0; i < mms_store_count(st); i++) {
		const struct mms_interval *iv = mms_store_at(st, i);

		for (uint32_t j = 0; j < iv->n_locks; j++)
			mms_stat_merge(&all, &iv->locks[j].wait);
	}
	if (families & (1U << MMS_FAM_LOCK)) {
		err = put(c, side, MMS_CMP_TOTALS, "all locks", "contended/s", MMS_CMP_PER_SEC,
			  (double)all.count / secs, 0);
		if (!err)
			err = put(c, side, MMS_CMP_TOTALS, "all locks", "wait/s",
				  MMS_CMP_NS_PER_SEC, (double)all.total / secs, 0);
		if (!err && mms_store_count(st))
			err = add_lock_rows(c, side, st, MMS_BY_LOCK, MMS_CMP_LOCKS, secs);
		if (!err && mms_store_count(st))
			err = add_lock_rows(c, side, st, MMS_BY_CALLER, MMS_CMP_CALLERS, secs);
		if (!err)
			err = add_metric(c, side, st, "mmap_lock.wait.write", MMS_CMP_MMAP,
					 "mmap_lock write wait", secs, true);
		if (!err)
			err = add_metric(c, side, st, "mmap_lock.wait.read", MMS_CMP_MMAP,
					 "mmap_lock read wait", secs, true);
	}
	if (!err && (families & (1U << MMS_FAM_VMA))) {
		static const char *const vma[][2] = {
			{ "vma.split", "VMA splits" }, { "vma.merge", "VMA merges" },
			{ "vma.expand", "VMA expands" }, { "vma.shrink", "VMA shrinks" },
			{ "vma.inferred.up", "VMA count up (inferred)" },
			{ "vma.inferred.down", "VMA count down (inferred)" },
		};

		for (size_t k = 0; !err && k < sizeof(vma) / sizeof(vma[0]); k++)
			err = add_metric(c, side, st, vma[k][0], MMS_CMP_VMA, vma[k][1], secs, false);
	}
	if (!err && (families & (1U << MMS_FAM_RMAP)))
		err = add_metric(c, side, st, "rmap.batch", MMS_CMP_RMAP, "try_to_unmap", secs,
				 false);
	if (err)
		return err;
	/* Which rows this run could have had: rates it lacks are zeros, not gaps. */
	for (size_t i = 0; i < c->nr; i++) {
		struct mms_cmp_row *r = &c->rows[i];
		bool has = r->group == MMS_CMP_VMA ? families & (1U << MMS_FAM_VMA) :
			   r->group == MMS_CMP_RMAP ? families & (1U << MMS_FAM_RMAP) :
			   families & (1U << MMS_FAM_LOCK);

		if (has)
			r->side[side].runs++;
	}
	c->runs[side]++;
	return 0;
}

static struct mms_cmp_row *find(struct mms_compare *c, const struct mms_cmp_row *like,
				const char *what)
{
	for (size_t i = 0; i < c->nr; i++)
		if (c->rows[i].group == like->group && !strcmp(c->rows[i].name, like->name) &&
		    !strcmp(c->rows[i].what, what))
			return &c->rows[i];
	return NULL;
}

/* Derived per-run values: avg wait = wait/s / contended/s; mean batch = total / count. */
static int derive(struct mms_compare *c)
{
	size_t n = c->nr;

	for (size_t i = 0; i < n; i++) {
		struct mms_cmp_row base = c->rows[i], *d;
		char den_what[32];
		const struct mms_cmp_row *num, *den;
		const char *what;
		enum mms_cmp_unit unit;

		if (!strcmp(base.what, "wait/s") && base.group != MMS_CMP_MMAP) {
			num = &c->rows[i];
			den = find(c, &base, "contended/s");
			what = "avg wait";
			unit = MMS_CMP_NS;
		} else if (!strcmp(base.what, "~total") &&
			   (base.group == MMS_CMP_RMAP || base.group == MMS_CMP_MMAP)) {
			num = &c->rows[i];
			den = find(c, &base, "~count");
			what = base.group == MMS_CMP_RMAP ? "mean batch (pages)" : "avg wait";
			unit = base.group == MMS_CMP_RMAP ? MMS_CMP_PAGES : MMS_CMP_NS;
		} else {
			continue;
		}
		if (!den)
			continue;
		snprintf(den_what, sizeof(den_what), "%s", den->what);
		d = row_get(c, base.group, base.name, what, unit);
		if (!d)
			return -ENOMEM;
		/* row_get may have moved the array. */
		num = find(c, &base, base.what);
		den = find(c, &base, den_what);
		d->rank = num->rank;
		for (int s = 0; s < 2; s++) {
			d->side[s].runs = num->side[s].runs;
			for (int k = 0; k < c->runs[s]; k++)
				d->side[s].v[k] = den->side[s].v[k] > 0 ?
					num->side[s].v[k] / den->side[s].v[k] : NAN;
		}
	}
	return 0;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct mms_cmp_row *x = a, *y = b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	if (strcmp(x->name, y->name))
		return strcmp(x->name, y->name);
	return strcmp(x->what, y->what);
}

static void finish_row(struct mms_cmp_row *r, int runs[2])
{
	for (int s = 0; s < 2; s++) {
		struct mms_cmp_side *sd = &r->side[s];
		double v[MMS_CMP_MAX_RUNS];
		int n = 0;
		bool avg = r->unit == MMS_CMP_NS || r->unit == MMS_CMP_PAGES;

		sd->present = 0;
		for (int k = 0; k < runs[s]; k++) {
			if (!isnan(sd->v[k])) {
				v[n++] = sd->v[k];
				sd->present++;
			} else if (!avg && sd->runs) {
				v[n++] = 0;	/* the source ran and saw nothing */
			}
		}
		sd->na = !sd->runs;
		mms_runstats(v, n, &sd->st);
	}
	r->change_pct = r->side[0].st.n && r->side[1].st.n && r->side[0].st.mean != 0 ?
		(r->side[1].st.mean - r->side[0].st.mean) / r->side[0].st.mean * 100 : NAN;
	mms_welch(&r->side[0].st, &r->side[1].st, &r->welch);
}

int mms_compare_finish(struct mms_compare *c, const struct mms_compare_opts *o)
{
	unsigned int groups = o && o->groups ? o->groups : MMS_CMP_ALL;
	int entries = o && o->entries ? o->entries : 5;
	size_t w = 0;
	int err = derive(c);

	if (err)
		return err;
	qsort(c->rows, c->nr, sizeof(*c->rows), cmp_rows);
	for (size_t i = 0; i < c->nr; i++) {
		struct mms_cmp_row *r = &c->rows[i];
		int rank_pos = 0;

		if (!(groups & r->group) || r->what[0] == '~')
			continue;
		/* Top entries per group by name: count the distinct names before this one. */
		if (r->group == MMS_CMP_LOCKS || r->group == MMS_CMP_CALLERS ||
		    r->group == MMS_CMP_MMAP) {
			for (size_t j = 0; j < i; j++)
				if (c->rows[j].group == r->group && c->rows[j].what[0] != '~' &&
				    !strcmp(c->rows[j].what, r->what))
					rank_pos++;
			if (rank_pos >= entries)
				continue;
		}
		finish_row(r, c->runs);
		c->rows[w++] = *r;
	}
	c->nr = w;
	return 0;
}

const char *mms_compare_verdict(const struct mms_compare *c, const struct mms_cmp_row *r)
{
	static char buf[48];

	if (r->side[0].na) {
		snprintf(buf, sizeof(buf), "n/a on %s", c->label[0]);
		return buf;
	}
	if (r->side[1].na) {
		snprintf(buf, sizeof(buf), "n/a on %s", c->label[1]);
		return buf;
	}
	if (!r->side[0].st.n || !r->side[1].st.n)
		return "no data on one side";
	if (!r->welch.valid)
		return "n/a (needs 2+ runs a side)";
	return r->welch.p < c->alpha ? "significant" : "within noise";
}

int mms_compare_parse_groups(const char *list, unsigned int *groups)
{
	static const struct {
		const char *name;
		unsigned int bit;
	} t[] = {
		{ "totals", MMS_CMP_TOTALS }, { "locks", MMS_CMP_LOCKS },
		{ "callers", MMS_CMP_CALLERS }, { "mmap_lock", MMS_CMP_MMAP },
		{ "vma", MMS_CMP_VMA }, { "rmap", MMS_CMP_RMAP }, { "all", MMS_CMP_ALL },
	};
	char buf[256], *tok, *save = NULL;

	*groups = 0;
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t k;

		for (k = 0; k < sizeof(t) / sizeof(t[0]); k++)
			if (!strcmp(tok, t[k].name))
				break;
		if (k == sizeof(t) / sizeof(t[0]))
			return -EINVAL;
		*groups |= t[k].bit;
	}
	return *groups ? 0 : -EINVAL;
}

static void fmt_val(char *buf, size_t len, enum mms_cmp_unit unit, double v)
{
	char t[24];

	switch (unit) {
	case MMS_CMP_NS:
		mms_fmt_time(buf, len, (uint64_t)(v + 0.5), 0);
		break;
	case MMS_CMP_NS_PER_SEC:
		mms_fmt_time(t, sizeof(t), (uint64_t)(v + 0.5), 0);
		snprintf(buf, len, "%s/s", t);
		break;
	case MMS_CMP_PAGES:
		snprintf(buf, len, "%.2f", v);
		break;
	default:
		snprintf(buf, len, v < 100 ? "%.2f" : "%.0f", v);
		break;
	}
}

void mms_compare_print_text(FILE *f, const struct mms_compare *c)
{
	fprintf(f, "%s: %d run%s, %s: %d run%s; Welch's t-test, significant at p < %.2f\n",
		c->label[0], c->runs[0], c->runs[0] == 1 ? "" : "s", c->label[1], c->runs[1],
		c->runs[1] == 1 ? "" : "s", c->alpha);
	for (size_t i = 0; i < c->nr; i++) {
		const struct mms_cmp_row *r = &c->rows[i];
		char ch[32];

		fprintf(f, "\n%.60s: %s\n", r->name, r->what);
		fprintf(f, "  %-10s %4s %12s %8s %12s %12s\n", "", "runs", "avg", "%stdev", "min",
			"max");
		for (int s = 0; s < 2; s++) {
			const struct mms_cmp_side *sd = &r->side[s];
			char a[32], lo[32], hi[32];

			if (sd->na || !sd->st.n) {
				fprintf(f, "  %-10.10s %4d %12s\n", c->label[s], sd->st.n,
					sd->na ? "n/a" : "-");
				continue;
			}
			fmt_val(a, sizeof(a), r->unit, sd->st.mean);
			fmt_val(lo, sizeof(lo), r->unit, sd->st.min);
			fmt_val(hi, sizeof(hi), r->unit, sd->st.max);
			fprintf(f, "  %-10.10s %4d %12s %7.2f%% %12s %12s\n", c->label[s], sd->st.n,
				a, sd->st.pct_stdev, lo, hi);
		}
		if (isnan(r->change_pct))
			snprintf(ch, sizeof(ch), "n/a");
		else
			snprintf(ch, sizeof(ch), "%+.2f%%", r->change_pct);
		fprintf(f, "  %-10s %s  %s", "change", ch, mms_compare_verdict(c, r));
		if (r->welch.valid)
			fprintf(f, r->welch.p < 0.001 ? " (t=%.2f, df=%.1f, p<0.001)" :
				" (t=%.2f, df=%.1f, p=%.3f)", r->welch.t, r->welch.df, r->welch.p);
		fputc('\n', f);
	}
}

static void json_side(FILE *f, const struct mms_cmp_side *sd)
{
	if (sd->na || !sd->st.n) {
		fprintf(f, "{\"runs\": %d, \"na\": %s}", sd->st.n, sd->na ? "true" : "false");
		return;
	}
	fprintf(f, "{\"runs\": %d, \"avg\": %.6g, \"stdev\": %.6g, \"pct_stdev\": %.4f, "
		"\"min\": %.6g, \"max\": %.6g}", sd->st.n, sd->st.mean, sd->st.stdev,
		sd->st.pct_stdev, sd->st.min, sd->st.max);
}

void mms_compare_print_json(FILE *f, const struct mms_compare *c)
{
	static const char *const units[] = { "ns", "per_sec", "ns_per_sec", "pages" };
	char esc[256];

	fprintf(f, "{\n  \"base\": \"%s\", \"new\": \"%s\", \"runs\": [%d, %d], "
		"\"test\": \"welch\", \"alpha\": %.2f,\n  \"rows\": [", c->label[0], c->label[1],
		c->runs[0], c->runs[1], c->alpha);
	for (size_t i = 0; i < c->nr; i++) {
		const struct mms_cmp_row *r = &c->rows[i];

		mms_fmt_json_str(esc, sizeof(esc), r->name);
		fprintf(f, "%s\n    {\"name\": \"%s\", \"metric\": \"%s\", \"unit\": \"%s\", "
			"\"base\": ", i ? "," : "", esc, r->what, units[r->unit]);
		json_side(f, &r->side[0]);
		fputs(", \"new\": ", f);
		json_side(f, &r->side[1]);
		if (isnan(r->change_pct))
			fputs(", \"change_pct\": null", f);
		else
			fprintf(f, ", \"change_pct\": %.4f", r->change_pct);
		if (r->welch.valid && isfinite(r->welch.t))
			fprintf(f, ", \"t\": %.4f, \"df\": %.2f, \"p\": %.6g", r->welch.t,
				r->welch.df, r->welch.p);
		fprintf(f, ", \"verdict\": \"%s\"}", mms_compare_verdict(c, r));
	}
	fputs("\n  ]\n}\n", f);
}

void mms_compare_print_csv(FILE *f, const struct mms_compare *c, const char *sep)
{
	const char *s = sep ? sep : ",";

	fprintf(f, "name%smetric%sbase_runs%sbase_avg%sbase_pct_stdev%sbase_min%sbase_max%s"
		"new_runs%snew_avg%snew_pct_stdev%snew_min%snew_max%schange_pct%sp%sverdict\n",
		s, s, s, s, s, s, s, s, s, s, s, s, s, s);
	for (size_t i = 0; i < c->nr; i++) {
		const struct mms_cmp_row *r = &c->rows[i];

		fprintf(f, "\"%s\"%s%s", r->name, s, r->what);
		for (int k = 0; k < 2; k++) {
			const struct mms_runstats *st = &r->side[k].st;

			fprintf(f, "%s%d%s%.6g%s%.4f%s%.6g%s%.6g", s, st->n, s, st->mean, s,
				st->pct_stdev, s, st->min, s, st->max);
		}
		fprintf(f, "%s%.4f%s%.6g%s%s\n", s, isnan(r->change_pct) ? 0.0 : r->change_pct, s,
			r->welch.valid ? r->welch.p : 1.0, s, mms_compare_verdict(c, r));
	}
}
