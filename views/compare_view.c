// SPDX-License-Identifier: GPL-2.0
/*
 * The compare screen (see compare_view.h): a table of a finished
 * comparison, both sides side by side, coloured by verdict, and a detail
 * pane with the selected row's runs.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_view.h"
#include "mmscope/format.h"
#include "util.h"

enum col {
	C_GROUP,
	C_NAME,
	C_METRIC,
	C_BASE,
	C_BASE_SD,
	C_NEW,
	C_NEW_SD,
	C_CHANGE,
	C_VERDICT,
	C_P,
	C_NR
};

/* Narrow terminals lose P first, then GROUP, then the %stdev columns. */
static const struct mms_column cols[C_NR] = {
	[C_GROUP] = { "GROUP", 9, 0, true, true, 5 },
	[C_NAME] = { "NAME", 0, 14, true, true, 0 },
	[C_METRIC] = { "METRIC", 11, 0, true, true, 0 },
	[C_BASE] = { "BASE", 8, 0, false, true, 0 },
	[C_BASE_SD] = { "%SD", 5, 0, false, false, 4 },
	[C_NEW] = { "NEW", 8, 0, false, true, 0 },
	[C_NEW_SD] = { "%SD", 5, 0, false, false, 4 },
	[C_CHANGE] = { "CHANGE", 8, 0, false, true, 0 },
	[C_VERDICT] = { "VERDICT", 13, 0, true, true, 0 },
	[C_P] = { "P", 6, 0, false, false, 6 },
};

/* The detail pane, when the screen has room for it and some rows. */
#define DETAIL_ROWS 7
#define DETAIL_MIN_H 16

struct compare_view {
	const struct mms_compare *c;
	struct mms_list t;
	size_t *idx;		/* rows shown: indexes into c->rows */
	size_t total;		/* rows before filtering */
	unsigned int groups;
	char filter[256];
};

int compare_view_create(const struct mms_compare *c, struct compare_view **out)
{
	struct compare_view *v = calloc(1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	v->idx = calloc(c->nr ? c->nr : 1, sizeof(*v->idx));
	if (!v->idx) {
		free(v);
		return -ENOMEM;
	}
	v->c = c;
	v->t.cols = cols;
	v->t.nr_cols = C_NR;
	v->t.sort = C_GROUP;
	*out = v;
	return compare_view_update(v, 0, NULL);
}

void compare_view_destroy(struct compare_view *v)
{
	if (!v)
		return;
	free(v->idx);
	free(v);
}

struct mms_list *compare_view_list(struct compare_view *v)
{
	return &v->t;
}

const struct mms_cmp_row *compare_view_selected(const struct compare_view *v)
{
	return v->t.nr ? &v->c->rows[v->idx[v->t.sel]] : NULL;
}

/* Verdict order: significant first (smallest p first), then noise, then the rest. */
static double verdict_key(const struct mms_compare *c, const struct mms_cmp_row *r)
{
	if (r->side[0].na || r->side[1].na || !r->welch.valid)
		return 3;
	return (mms_compare_significant(c, r) ? 0 : 1) + r->welch.p / 2;
}

static double num_key(const struct mms_cmp_row *r, int col)
{
	double v;

	switch (col) {
	case C_BASE:
	case C_NEW:
		v = r->side[col == C_NEW].st.n ? r->side[col == C_NEW].st.mean : -1;
		return v;
	default:	/* biggest change first, whichever its sign */
		return isnan(r->change_pct) ? -1 : fabs(r->change_pct);
	}
}

static int cmp_idx(const void *a, const void *b, void *arg)
{
	const struct compare_view *v = arg;
	size_t ia = *(const size_t *)a, ib = *(const size_t *)b;
	const struct mms_cmp_row *x = &v->c->rows[ia], *y = &v->c->rows[ib];
	int r = 0;
	double kx, ky;

	switch (v->t.sort) {
	case C_NAME:
		r = strcasecmp(x->name, y->name);
		break;
	case C_METRIC:
		r = strcmp(x->what, y->what);
		break;
	case C_VERDICT:
		kx = verdict_key(v->c, x);
		ky = verdict_key(v->c, y);
		r = kx < ky ? -1 : kx > ky;
		break;
	case C_BASE:
	case C_NEW:
	case C_CHANGE:
		kx = num_key(x, v->t.sort);
		ky = num_key(y, v->t.sort);
		r = kx > ky ? -1 : kx < ky;	/* descending: largest first */
		break;
	default:
		break;
	}
	if (v->t.invert)
		r = -r;
	/* Ties keep compare's order (group, then weight), so entities stay together. */
	return r ? r : ia < ib ? -1 : ia > ib;
}

int compare_view_update(struct compare_view *v, unsigned int groups, const char *filter)
{
	const struct mms_cmp_row *sel = compare_view_selected(v);
	size_t keep = sel ? (size_t)(sel - v->c->rows) : 0;

	v->groups = groups;
	snprintf(v->filter, sizeof(v->filter), "%s", filter ? filter : "");
	v->t.nr = 0;
	for (size_t i = 0; i < v->c->nr; i++) {
		const struct mms_cmp_row *r = &v->c->rows[i];

		if ((groups && !(groups & r->group)) ||
		    (!util_match(v->filter, r->name) && !util_match(v->filter, r->what)))
			continue;
		v->idx[v->t.nr++] = i;
	}
	v->total = v->c->nr;
	qsort_r(v->idx, v->t.nr, sizeof(*v->idx), cmp_idx, v);
	/* The selection follows its row through sorting and filtering. */
	v->t.sel = 0;
	for (size_t i = 0; sel && i < v->t.nr; i++)
		if (v->idx[i] == keep)
			v->t.sel = i;
	return 0;
}

const char *compare_view_sort_step(struct compare_view *v, int dir)
{
	for (int k = 1; k <= C_NR; k++) {
		int i = ((v->t.sort + dir * k) % C_NR + C_NR) % C_NR;

		/* GROUP is compare's own order: reachable even where the column is dropped. */
		if (cols[i].sortable && (v->t.w[i] > 0 || i == C_GROUP)) {
			v->t.sort = i;
			v->t.invert = false;
			break;
		}
	}
	compare_view_update(v, v->groups, v->filter);
	return v->t.sort == C_GROUP ? "group, then weight (compare's order)" :
	       v->t.sort == C_CHANGE ? "size of the change" :
	       v->t.sort == C_VERDICT ? "verdict: significant first" : cols[v->t.sort].title;
}

unsigned int compare_view_next_group(const struct compare_view *v, unsigned int cur, int dir)
{
	unsigned int present = 0, g = cur;

	for (size_t i = 0; i < v->c->nr; i++)
		present |= v->c->rows[i].group;
	if (!present)
		return 0;
	do {
		/* all (0) -> SCORE -> TOTALS -> ... -> RMAP -> all, in compare's order */
		g = mms_compare_group_step(g, dir);
	} while (g && !(g & present));
	return g;
}

/* Compact, for table cells: "9.47ms", "12.3ms/s", "1.23k". */
static void fmt_short(char *buf, size_t len, enum mms_cmp_unit unit, double v)
{
	static const struct {
		double base;
		const char *unit;
	} t[] = { { 3600e9, "h" }, { 60e9, "m" }, { 1e9, "s" }, { 1e6, "ms" }, { 1e3, "us" },
		  { 1, "ns" } };

	if (v == 0) {
		snprintf(buf, len, "0");
	} else if (unit == MMS_CMP_NS || unit == MMS_CMP_NS_PER_SEC) {
		size_t i = 0;

		while (i + 1 < sizeof(t) / sizeof(t[0]) && v < t[i].base)
			i++;
		v /= t[i].base;
		snprintf(buf, len, v < 10 ? "%.2f%s%s" : v < 100 ? "%.1f%s%s" : "%.0f%s%s", v,
			 t[i].unit, unit == MMS_CMP_NS_PER_SEC ? "/s" : "");
	} else if (unit == MMS_CMP_PAGES || v < 100) {
		snprintf(buf, len, "%.2f", v);
	} else {
		mms_fmt_count(buf, len, v < 10000 ? round(v) : v);
	}
}

static void fmt_pct(char *buf, size_t len, double pct, bool change)
{
	if (change)
		snprintf(buf, len, fabs(pct) < 1000 ? "%+.1f%%" : "%+.0f%%", pct);
	else
		snprintf(buf, len, pct < 100 ? "%.1f%%" : "%.0f%%", pct);
}

/* How the change and verdict look: good news green, bad news red, noise dim. */
static enum mms_role verdict_role(const struct mms_compare *c, const struct mms_cmp_row *r)
{
	if (!mms_compare_significant(c, r))
		return MMS_ROLE_DIM;
	if (r->higher_better)
		return r->side[1].st.mean > r->side[0].st.mean ? MMS_ROLE_GOOD : MMS_ROLE_ERROR;
	if (!r->lower_better)
		return MMS_ROLE_WARN;
	return r->side[1].st.mean < r->side[0].st.mean ? MMS_ROLE_GOOD : MMS_ROLE_ERROR;
}

static bool from_zero(const struct mms_cmp_row *r)
{
	return !r->side[0].na && !r->side[1].na && r->side[0].st.n && r->side[1].st.n;
}

static void cell(struct compare_view *v, struct mms_canvas *c, int y, int col, enum mms_role role,
		 const char *s)
{
	if (v->t.w[col] <= 0)
		return;
	if (cols[col].left)
		mms_canvas_put(c, v->t.x[col], y, role, s, v->t.w[col]);
	else
		mms_canvas_put_right(c, v->t.x[col], y, v->t.w[col], role, s);
}

static void draw_row(struct compare_view *v, struct mms_canvas *c, int y, size_t pos)
{
	const struct mms_cmp_row *r = &v->c->rows[v->idx[pos]];
	const struct mms_cmp_row *prev = pos ? &v->c->rows[v->idx[pos - 1]] : NULL;
	enum mms_role vr = verdict_role(v->c, r);
	char buf[64];

	cell(v, c, y, C_GROUP, MMS_ROLE_DIM, mms_compare_group_name(r->group));
	/* The metrics of one thing follow each other: name it once. */
	if (!prev || v->t.sort != C_GROUP || prev->group != r->group || strcmp(prev->name, r->name))
		cell(v, c, y, C_NAME, MMS_ROLE_NORMAL, r->name);
	cell(v, c, y, C_METRIC, MMS_ROLE_LABEL, r->what);
	for (int s = 0; s < 2; s++) {
		const struct mms_cmp_side *sd = &r->side[s];

		if (sd->na || !sd->st.n) {
			cell(v, c, y, s ? C_NEW : C_BASE, MMS_ROLE_DIM, sd->na ? "n/a" : "-");
			continue;
		}
		fmt_short(buf, sizeof(buf), r->unit, sd->st.mean);
		cell(v, c, y, s ? C_NEW : C_BASE, MMS_ROLE_VALUE, buf);
		if (sd->st.n > 1) {
			fmt_pct(buf, sizeof(buf), sd->st.pct_stdev, false);
			cell(v, c, y, s ? C_NEW_SD : C_BASE_SD, MMS_ROLE_DIM, buf);
		}
	}
	if (!isnan(r->change_pct))
		fmt_pct(buf, sizeof(buf), r->change_pct, true);
	else	/* a base of 0 has no percentage */
		snprintf(buf, sizeof(buf), from_zero(r) ? "from 0" : "n/a");
	cell(v, c, y, C_CHANGE, isnan(r->change_pct) && !from_zero(r) ? MMS_ROLE_DIM : vr, buf);
	cell(v, c, y, C_VERDICT, vr, mms_compare_verdict(v->c, r, buf, sizeof(buf)));
	if (r->welch.valid && !r->side[0].na && !r->side[1].na) {
		snprintf(buf, sizeof(buf), r->welch.p < 0.001 ? "<.001" : "%.3f", r->welch.p);
		cell(v, c, y, C_P, vr, buf);
	}
}

/* "  base   5   9.47 ms  1.23%  9.30 ms .. 9.60 ms" and its runs on the next call. */
static void detail_side(struct compare_view *v, struct mms_canvas *c, int y,
			const struct mms_cmp_row *r, int s, bool runs)
{
	const struct mms_cmp_side *sd = &r->side[s];
	char line[512], a[32], lo[32], hi[32];
	size_t o;

	o = (size_t)snprintf(line, sizeof(line), "  %-10.10s ", v->c->label[s]);
	if (runs) {
		o += (size_t)snprintf(line + o, sizeof(line) - o, "runs:");
		for (int k = 0; k < v->c->runs[s] && o < sizeof(line); k++) {
			mms_compare_fmt(a, sizeof(a), r->unit, sd->v[k]);
			o += (size_t)snprintf(line + o, sizeof(line) - o, "  %s",
					      isnan(sd->v[k]) ? "-" : a);
		}
		mms_canvas_put(c, 0, y, MMS_ROLE_DIM, line, c->w);
		return;
	}
	if (sd->na) {
		snprintf(line + o, sizeof(line) - o, "n/a: %s", mms_compare_na_why(r));
	} else if (!sd->st.n) {
		snprintf(line + o, sizeof(line) - o, "no data: no event in any of %d runs",
			 sd->runs);
	} else {
		mms_compare_fmt(a, sizeof(a), r->unit, sd->st.mean);
		mms_compare_fmt(lo, sizeof(lo), r->unit, sd->st.min);
		mms_compare_fmt(hi, sizeof(hi), r->unit, sd->st.max);
		if (sd->st.n == sd->runs)
			o += (size_t)snprintf(line + o, sizeof(line) - o, "%d run%s: ", sd->runs,
					      sd->runs == 1 ? "" : "s");
		else
			o += (size_t)snprintf(line + o, sizeof(line) - o, "%d of %d runs: ",
					      sd->st.n, sd->runs);
		snprintf(line + o, sizeof(line) - o, "avg %s, %%stdev %.2f, min %s, max %s", a,
			 sd->st.pct_stdev, lo, hi);
	}
	mms_canvas_put(c, 0, y, MMS_ROLE_NORMAL, line, c->w);
}

static void draw_detail(struct compare_view *v, struct mms_canvas *c, int y)
{
	const struct mms_cmp_row *r = compare_view_selected(v);
	char title[192], ch[32], verdict[64], test[96] = "";
	int x;

	if (!r)
		return;
	snprintf(title, sizeof(title), "%s: %s", r->name, r->what);
	util_section(c, y, title);
	detail_side(v, c, y + 1, r, 0, false);
	detail_side(v, c, y + 2, r, 1, false);
	if (!isnan(r->change_pct))
		snprintf(ch, sizeof(ch), "%+.2f%%", r->change_pct);
	else
		snprintf(ch, sizeof(ch), from_zero(r) ? "from 0" : "n/a");
	if (r->welch.valid && !r->side[0].na && !r->side[1].na)
		snprintf(test, sizeof(test), isfinite(r->welch.t) ?
			 "   Welch's t = %.2f, df = %.1f, p = %.3g" : "   no run-to-run noise",
			 r->welch.t, r->welch.df, r->welch.p);
	x = mms_canvas_printf(c, 0, y + 3, MMS_ROLE_NORMAL, c->w, "  %-10s %s  ", "change", ch);
	x += mms_canvas_put(c, x, y + 3, verdict_role(v->c, r),
			    mms_compare_verdict(v->c, r, verdict, sizeof(verdict)), c->w - x);
	mms_canvas_put(c, x, y + 3, MMS_ROLE_DIM, test, c->w - x);
	detail_side(v, c, y + 4, r, 0, true);
	detail_side(v, c, y + 5, r, 1, true);
}

void compare_view_draw(struct compare_view *v, struct mms_canvas *c, int y, int h)
{
	bool detail = h >= DETAIL_MIN_H && v->t.nr;
	int rows = h - 2 - (detail ? DETAIL_ROWS : 0);
	char msg[320];

	if (h < 3)
		return;
	snprintf(msg, sizeof(msg), "%zu of %zu rows%s%s%s%s", v->t.nr, v->total,
		 v->groups ? "  group: " : "", v->groups ? mms_compare_group_name(v->groups) : "",
		 v->filter[0] ? "  matching /" : "", v->filter);
	mms_canvas_put(c, 0, y, MMS_ROLE_DIM, msg, c->w);
	mms_list_layout(&v->t, c->w);
	mms_list_draw_head(&v->t, c, y + 1);
	mms_list_set_rows(&v->t, y + 2, rows);
	if (!v->t.nr) {
		util_empty(c, y + 2, h - 2, v->total ? "no rows match (\\ clears the filter, Tab "
			 "the group)" : "nothing to compare: no run had data for these metrics");
		return;
	}
	for (int i = 0; i < rows && v->t.top + (size_t)i < v->t.nr; i++) {
		size_t pos = v->t.top + (size_t)i;

		draw_row(v, c, y + 2 + i, pos);
		if (pos == v->t.sel)
			mms_canvas_paint(c, 0, y + 2 + i, c->w, MMS_ROLE_SELECTED);
	}
	if (detail)
		draw_detail(v, c, y + h - DETAIL_ROWS + 1);	/* a blank row above it */
}

/* ---- the view class (see mms_view_compare in compare_view.h) ---- */

static void compare_view_op_destroy(void *priv)
{
	compare_view_destroy(priv);
}

static int compare_view_op_update(void *priv, const struct mms_view_env *env)
{
	struct compare_view *v = priv;

	return compare_view_update(v, v->groups, env->filter);
}

static void compare_view_op_draw(void *priv, const struct mms_view_env *env, struct mms_canvas *c,
			    int y, int h)
{
	compare_view_draw(priv, c, y, h);
}

static struct mms_list *compare_view_op_list(void *priv)
{
	return compare_view_list(priv);
}

static const char *compare_view_op_cycle(void *priv, int dir)
{
	struct compare_view *v = priv;

	v->groups = compare_view_next_group(v, v->groups, dir);
	return v->groups ? mms_compare_group_name(v->groups) : "all groups";
}

static const char *compare_view_op_sort_step(void *priv, int dir)
{
	return compare_view_sort_step(priv, dir);
}

const struct mms_view mms_view_compare = {
	.name = "Compare",
	.help = "a finished comparison: both sides, change and verdict; the runs of a row",
	.destroy = compare_view_op_destroy,
	.update = compare_view_op_update,
	.draw = compare_view_op_draw,
	.list = compare_view_op_list,
	.cycle = compare_view_op_cycle,
	.sort_step = compare_view_op_sort_step,
};
