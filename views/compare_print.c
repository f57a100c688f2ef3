// SPDX-License-Identifier: GPL-2.0
/*
 * The outputs of `mmscope compare` (see include/mmscope/compare.h): text
 * that pastes into a mail (fixed width, never wider than 80 columns, one
 * block per metric), JSON with every per-run value, and CSV.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "mmscope/compare.h"
#include "mmscope/escape.h"
#include "mmscope/format.h"

#define TEXT_COLS 80
#define LABEL_MIN 6	/* "change" */
#define LABEL_MAX 16

void mms_compare_fmt(char *buf, size_t len, enum mms_cmp_unit unit, double v)
{
	char t[32];
	size_t n;

	switch (unit) {
	case MMS_CMP_NS:
	case MMS_CMP_NS_PER_SEC:
		mms_fmt_time(t, sizeof(t), v > 0 ? (uint64_t)(v + 0.5) : 0, 0);
		n = strlen(t);
		while (n && t[n - 1] == ' ')	/* "1.50 s " */
			t[--n] = 0;
		snprintf(buf, len, "%s%s", t, unit == MMS_CMP_NS_PER_SEC ? "/s" : "");
		break;
	case MMS_CMP_PAGES:
		snprintf(buf, len, "%.2f", v);
		break;
	case MMS_CMP_VALUE:
		/* A score as benchmarks print it: "3511.50", "1.2346e+09" past 12 columns. */
		snprintf(buf, len, fabs(v) < 1e8 ? "%.2f" : "%.5g", v);
		break;
	default:
		snprintf(buf, len, v < 100 ? "%.2f" : "%.0f", v);
		break;
	}
}

static int label_width(const struct mms_compare *c)
{
	int w = LABEL_MIN;

	for (int s = 0; s < 2; s++)
		if ((int)strlen(c->label[s]) > w)
			w = (int)strlen(c->label[s]);
	return w > LABEL_MAX ? LABEL_MAX : w;
}

/* A name that does not fit loses its start: the end of a path says more. */
static void fit(char *buf, size_t len, const char *s, int max)
{
	int n = (int)strlen(s);

	if (n <= max || max < 4)
		snprintf(buf, len, "%.*s", max > 0 ? max : 0, s);
	else
		snprintf(buf, len, "...%s", s + n - (max - 3));
}

static void fmt_change(char *buf, size_t len, const struct mms_cmp_row *r)
{
	if (!isnan(r->change_pct))
		snprintf(buf, len, "%+.2f%%", r->change_pct);
	else if (r->side[0].st.n && r->side[1].st.n)
		snprintf(buf, len, "from 0");	/* base is 0, new is not: no percentage */
	else
		snprintf(buf, len, "n/a");
}

static void fmt_test(char *buf, size_t len, const struct mms_cmp_row *r)
{
	const struct mms_welch *w = &r->welch;
	char p[16];

	buf[0] = 0;
	if (!w->valid || r->side[0].na || r->side[1].na)
		return;
	if (!isfinite(w->t)) {
		snprintf(buf, len, " (no run-to-run noise)");
		return;
	}
	snprintf(p, sizeof(p), w->p < 0.001 ? "p<0.001" : "p=%.3f", w->p);
	snprintf(buf, len, fabs(w->t) < 1000 ? " (t=%.2f, df=%.1f, %s)" : " (t=%.3g, df=%.1f, %s)",
		 w->t, w->df, p);
}

static void text_side(FILE *f, const struct mms_compare *c, const struct mms_cmp_row *r, int s,
		      int lw)
{
	const struct mms_cmp_side *sd = &r->side[s];
	char runs[16], a[32], lo[32], hi[32], label[96];

	if (sd->st.n == sd->runs)
		snprintf(runs, sizeof(runs), "%d", sd->st.n);
	else
		snprintf(runs, sizeof(runs), "%d/%d", sd->st.n, sd->runs);
	mms_esc_text(label, sizeof(label), c->label[s]);
	if (sd->na) {
		fprintf(f, "  %-*.*s %5s  n/a: %s\n", lw, lw, label, "-", mms_compare_na_why(r));
		return;
	}
	if (!sd->st.n) {
		fprintf(f, "  %-*.*s %5s  no data: no event in any run\n", lw, lw, label,
			runs);
		return;
	}
	mms_compare_fmt(a, sizeof(a), r->unit, sd->st.mean);
	mms_compare_fmt(lo, sizeof(lo), r->unit, sd->st.min);
	mms_compare_fmt(hi, sizeof(hi), r->unit, sd->st.max);
	fprintf(f, "  %-*.*s %5s %12s %7.2f%% %12s %12s\n", lw, lw, label, runs, a,
		sd->st.pct_stdev, lo, hi);
}

void mms_compare_print_text(FILE *f, const struct mms_compare *c)
{
	int lw = label_width(c);
	char notes[1024], head[2][96], esc[72];

	for (int s = 0; s < 2; s++) {
		mms_esc_text(esc, sizeof(esc), c->label[s]);
		snprintf(head[s], sizeof(head[s]), "%s: %d run%s", esc, c->runs[s],
			 c->runs[s] == 1 ? "" : "s");
	}
	/* One line when both fit, else one a side. */
	fprintf(f, "%s%s%s\n", head[0], strlen(head[0]) + strlen(head[1]) + 2 <= TEXT_COLS ?
		"; " : "\n", head[1]);
	fprintf(f, "avg, %%stdev, min, max over runs; Welch's t-test, significant at p < %.2f\n",
		c->alpha);
	mms_compare_notes(c, notes, sizeof(notes));
	for (char *line = notes, *nl; *line && (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = 0;
		fputs("not compared: ", f);
		mms_esc_fputs(f, line);
		fputc('\n', f);
	}
	if (!c->nr)
		fprintf(f, "\nno metric to compare: no run had data for the metrics asked for\n");
	for (size_t i = 0; i < c->nr; i++) {
		const struct mms_cmp_row *r = &c->rows[i];
		char name[TEXT_COLS + 1], ch[32], test[64], verdict[64], line[512], ev[256];

		const char *dir = r->higher_better ? ", higher is better" :
				  r->group == MMS_CMP_SCORE ? ", lower is better" : "";
		char ew[4 * 96 + 1];

		mms_esc_text(ev, sizeof(ev), r->name);
		/* A score's unit is the user's (or a recording's): escaped like a name. */
		mms_esc_text(ew, sizeof(ew), r->what);
		fit(name, sizeof(name), ev, TEXT_COLS - 2 - (int)strlen(ew) - (int)strlen(dir));
		fprintf(f, "\n%s: %.*s%s\n", name, TEXT_COLS - 2 - (int)strlen(dir), ew, dir);
		fprintf(f, "  %-*s %5s %12s %8s %12s %12s\n", lw, "", "runs", "avg", "%stdev",
			"min", "max");
		text_side(f, c, r, 0, lw);
		text_side(f, c, r, 1, lw);
		fmt_change(ch, sizeof(ch), r);
		fmt_test(test, sizeof(test), r);
		/* A long --base/--new label in the verdict must not widen the mail. */
		mms_compare_verdict(c, r, verdict, sizeof(verdict));
		mms_esc_text(ev, sizeof(ev), verdict);
		snprintf(line, sizeof(line), "  %-*s %-9s  %s%s", lw, "change", ch, ev, test);
		fprintf(f, "%.*s\n", TEXT_COLS, line);
	}
}

static void json_num_digits(FILE *f, double v, int digits)
{
	if (isfinite(v))
		fprintf(f, "%.*g", digits, v);
	else
		fputs("null", f);
}

static void json_num(FILE *f, double v)
{
	json_num_digits(f, v, 6);
}

/* digits: a score is the benchmark's own figure, and keeps every digit it printed. */
static void json_side(FILE *f, const struct mms_compare *c, const struct mms_cmp_side *sd,
		      int s, int digits)
{
	fprintf(f, "{\"runs\": %d, \"present\": %d, \"na\": %s, \"values\": [", sd->runs,
		sd->present, sd->na ? "true" : "false");
	for (int k = 0; k < c->runs[s]; k++) {
		fputs(k ? ", " : "", f);
		json_num_digits(f, sd->v[k], digits);
	}
	fprintf(f, "], \"n\": %d", sd->st.n);
	if (sd->st.n) {
		fputs(", \"avg\": ", f);
		json_num_digits(f, sd->st.mean, digits);
		fputs(", \"stdev\": ", f);
		json_num_digits(f, sd->st.stdev, digits);
		fprintf(f, ", \"pct_stdev\": %.4f, \"min\": ", sd->st.pct_stdev);
		json_num_digits(f, sd->st.min, digits);
		fputs(", \"max\": ", f);
		json_num_digits(f, sd->st.max, digits);
	}
	fputc('}', f);
}

void mms_compare_print_json(FILE *f, const struct mms_compare *c)
{
	static const char *const units[] = { "ns", "per_sec", "ns_per_sec", "pages", "score" };
	char notes[1024], verdict[64];
	const char *kind;

	fputs("{\n  \"base\": ", f);
	mms_esc_fput_json(f, c->label[0]);
	fputs(", \"new\": ", f);
	mms_esc_fput_json(f, c->label[1]);
	fprintf(f, ", \"runs\": [%d, %d], \"test\": \"welch\", \"alpha\": %.4g,\n  \"notes\": [",
		c->runs[0], c->runs[1], c->alpha);
	mms_compare_notes(c, notes, sizeof(notes));
	for (char *line = notes, *nl; *line && (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = 0;
		fputs(line == notes ? "" : ", ", f);
		mms_esc_fput_json(f, line);
	}
	fputs("],\n  \"rows\": [", f);
	for (size_t i = 0; i < c->nr; i++) {
		const struct mms_cmp_row *r = &c->rows[i];

		kind = r->metric == MMS_CMP_M_AVG ? "avg" : r->metric == MMS_CMP_M_RATE ? "rate" :
		       "sum";
		if (r->group == MMS_CMP_SCORE)
			kind = "score";
		fprintf(f, "%s\n    {\"group\": \"%s\", \"name\": ", i ? "," : "",
			mms_compare_group_name(r->group));
		mms_esc_fput_json(f, r->name);
		fputs(", \"metric\": ", f);
		mms_esc_fput_json(f, r->what);
		fprintf(f, ", \"kind\": \"%s\", \"unit\": \"%s\", \"lower_is_better\": %s, "
			"\"higher_is_better\": %s,\n     \"base\": ", kind, units[r->unit],
			r->lower_better ? "true" : "false", r->higher_better ? "true" : "false");
		json_side(f, c, &r->side[0], 0, r->group == MMS_CMP_SCORE ? 15 : 6);
		fputs(",\n     \"new\": ", f);
		json_side(f, c, &r->side[1], 1, r->group == MMS_CMP_SCORE ? 15 : 6);
		fputs(",\n     \"change_pct\": ", f);
		json_num(f, r->change_pct);
		if (r->welch.valid) {
			fputs(", \"t\": ", f);
			json_num(f, r->welch.t);
			fprintf(f, ", \"df\": %.4g, \"p\": %.6g", r->welch.df, r->welch.p);
		}
		fprintf(f, ", \"significant\": %s, \"verdict\": \"%s\"}",
			mms_compare_significant(c, r) ? "true" : "false",
			mms_compare_verdict(c, r, verdict, sizeof(verdict)));
	}
	fputs("\n  ]\n}\n", f);
}

/* Undefined numbers are empty fields, never a 0 that was not measured. */
static void csv_num_digits(FILE *f, const char *sep, double v, bool defined, int digits)
{
	fputs(sep, f);
	if (defined && isfinite(v))
		fprintf(f, "%.*g", digits, v);
}

static void csv_num(FILE *f, const char *sep, double v, bool defined)
{
	csv_num_digits(f, sep, v, defined, 6);
}

void mms_compare_print_csv(FILE *f, const struct mms_compare *c, const char *sep)
{
	const char *s = sep ? sep : ",";
	char verdict[64];

	fprintf(f, "group%sname%smetric%sunit", s, s, s);
	for (int k = 0; k < 2; k++)
		fprintf(f, "%s%s_runs%s%s_avg%s%s_pct_stdev%s%s_min%s%s_max", s, k ? "new" : "base",
			s, k ? "new" : "base", s, k ? "new" : "base", s, k ? "new" : "base", s,
			k ? "new" : "base");
	fprintf(f, "%schange_pct%st%sp%sverdict\n", s, s, s, s);
	for (size_t i = 0; i < c->nr; i++) {
		static const char *const units[] = { "ns", "per_sec", "ns_per_sec", "pages",
						     "score" };
		const struct mms_cmp_row *r = &c->rows[i];

		fprintf(f, "%s%s", mms_compare_group_name(r->group), s);
		mms_esc_fput_csv(f, r->name, s);
		fputs(s, f);
		if (r->group == MMS_CMP_SCORE)
			mms_esc_fput_csv(f, r->what, s);	/* the user's unit may hold the separator */
		else
			fputs(r->what, f);
		fprintf(f, "%s%s", s, units[r->unit]);
		for (int k = 0; k < 2; k++) {
			const struct mms_runstats *st = &r->side[k].st;
			bool ok = st->n > 0;
			/* A score keeps every digit the benchmark printed, as in JSON. */
			int d = r->group == MMS_CMP_SCORE ? 15 : 6;

			fprintf(f, "%s%d", s, st->n);
			csv_num_digits(f, s, st->mean, ok, d);
			csv_num(f, s, st->pct_stdev, ok);
			csv_num_digits(f, s, st->min, ok, d);
			csv_num_digits(f, s, st->max, ok, d);
		}
		csv_num(f, s, r->change_pct, true);
		csv_num(f, s, r->welch.t, r->welch.valid);
		csv_num(f, s, r->welch.p, r->welch.valid);
		fputs(s, f);
		mms_esc_fput_csv(f, mms_compare_verdict(c, r, verdict, sizeof(verdict)), s);
		fputc('\n', f);
	}
}
