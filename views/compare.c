// SPDX-License-Identifier: GPL-2.0
/*
 * A/B comparison of runs (see include/mmscope/compare.h): each run is
 * summed into entities (a lock, a caller, a process's mmap_lock, a fixed mm
 * metric) keyed by name; finish turns entities into rows of per-run values,
 * statistics per side and a verdict.  The outputs are in compare_print.c.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mmscope/compare.h"
#include "mmscope/mm_metrics.h"
#include "mmscope/query.h"

/* What an entity counts, which decides the rows it gives. */
enum ent_kind {
	K_WAIT,		/* lock waits: count, total ns */
	K_HOLD,		/* mmap_lock holds: count, total ns */
	K_OPS,		/* events: count */
	K_DELTA,	/* summed changes (inferred VMA counts): total */
	K_BATCH,	/* try_to_unmap removals: count, total pages */
	K_SCORE,	/* the benchmark's score: one value a run, in total */
};

struct ent_run {
	double count, total;
	bool seen;
};

struct mms_cmp_ent {
	enum mms_cmp_group group;
	enum ent_kind kind;
	unsigned int need;	/* enum mms_cmp_have bit that measures it */
	int order;		/* fixed rows first, in this order; then by rank */
	const char *what;	/* K_OPS / K_DELTA: the row's name, "splits/s" */
	double rank;
	char name[128];
	struct ent_run run[2][MMS_CMP_MAX_RUNS];
};

#define ORDER_RANKED 1000

enum val { V_AVG, V_COUNT_RATE, V_TOTAL_RATE, V_VALUE };

struct row_def {
	const char *what;	/* NULL: the entity's own */
	enum mms_cmp_metric metric;
	enum mms_cmp_unit unit;
	bool lower_better;
	enum val val;
};

/* The rows of each kind, in print order: the average first, as mails quote it. */
static const struct row_def kind_rows[][3] = {
	[K_WAIT] = {
		{ "avg wait", MMS_CMP_M_AVG, MMS_CMP_NS, true, V_AVG },
		{ "contended/s", MMS_CMP_M_RATE, MMS_CMP_PER_SEC, true, V_COUNT_RATE },
		{ "wait/s", MMS_CMP_M_SUM, MMS_CMP_NS_PER_SEC, true, V_TOTAL_RATE },
	},
	[K_HOLD] = {
		{ "avg hold", MMS_CMP_M_AVG, MMS_CMP_NS, true, V_AVG },
		{ "acquired/s", MMS_CMP_M_RATE, MMS_CMP_PER_SEC, false, V_COUNT_RATE },
		{ "held/s", MMS_CMP_M_SUM, MMS_CMP_NS_PER_SEC, true, V_TOTAL_RATE },
	},
	[K_OPS] = { { NULL, MMS_CMP_M_RATE, MMS_CMP_PER_SEC, false, V_COUNT_RATE } },
	[K_DELTA] = { { NULL, MMS_CMP_M_SUM, MMS_CMP_PER_SEC, false, V_TOTAL_RATE } },
	[K_BATCH] = {
		{ "mean batch (pages)", MMS_CMP_M_AVG, MMS_CMP_PAGES, false, V_AVG },
		{ "pages/s", MMS_CMP_M_SUM, MMS_CMP_PER_SEC, false, V_TOTAL_RATE },
	},
	/* Its direction is the user's (--score-lower-better): fill_row sets it. */
	[K_SCORE] = { { NULL, MMS_CMP_M_ALL, MMS_CMP_VALUE, false, V_VALUE } },
};

/* Metrics of the mm families, and the entity each feeds (summed over processes). */
static const struct fixed_def {
	const char *metric;
	const char *name;
	const char *what;
	enum mms_cmp_group group;
	enum ent_kind kind;
	unsigned int need;
	bool always;		/* a row whenever the source ran, even with no events */
} fixed[] = {
	{ MMS_M_VMA_SPLIT, "VMA split", "splits/s", MMS_CMP_VMA, K_OPS, MMS_CMP_HAVE_VMA, true },
	{ MMS_M_VMA_MERGE, "VMA merge", "merges/s", MMS_CMP_VMA, K_OPS, MMS_CMP_HAVE_VMA, true },
	{ MMS_M_VMA_EXPAND, "VMA expand", "expands/s", MMS_CMP_VMA, K_OPS, MMS_CMP_HAVE_VMA,
	  false },
	{ MMS_M_VMA_SHRINK, "VMA shrink", "shrinks/s", MMS_CMP_VMA, K_OPS, MMS_CMP_HAVE_VMA,
	  false },
	{ MMS_M_VMA_INFERRED_UP, "VMA count up (inferred)", "VMAs/s", MMS_CMP_VMA, K_DELTA,
	  MMS_CMP_HAVE_VMA_INFERRED, true },
	{ MMS_M_VMA_INFERRED_DOWN, "VMA count down (inferred)", "VMAs/s", MMS_CMP_VMA, K_DELTA,
	  MMS_CMP_HAVE_VMA_INFERRED, true },
	{ MMS_M_RMAP_BATCH, "try_to_unmap", NULL, MMS_CMP_RMAP, K_BATCH,
	  MMS_CMP_HAVE_RMAP_BATCH, true },
	/* Summed over processes: the per-VMA lock is about the fault path as a whole. */
	{ MMS_M_VMA_LOCK_FAULTS, "page faults", "faults/s", MMS_CMP_MMAP, K_OPS,
	  MMS_CMP_HAVE_VMA_LOCK, true },
	{ MMS_M_VMA_LOCK_FALLBACK, "faults fell back to mmap_lock", "fallbacks/s", MMS_CMP_MMAP,
	  K_OPS, MMS_CMP_HAVE_VMA_LOCK, true },
	{ MMS_M_VMA_LOCK_MMAP_RETRY, "faults retried under mmap_lock", "retries/s", MMS_CMP_MMAP,
	  K_OPS, MMS_CMP_HAVE_VMA_LOCK, false },
};

#define NR_FIXED (sizeof(fixed) / sizeof(fixed[0]))

/* Per process name: mmap_lock waits (lock source) and holds (--mmap-hold). */
static const struct {
	const char *metric;
	const char *name;
	enum ent_kind kind;
	unsigned int need;
} mmap_defs[] = {
	{ MMS_M_MMAP_WAIT_WRITE, "mmap_lock write wait", K_WAIT, MMS_CMP_HAVE_LOCK },
	{ MMS_M_MMAP_WAIT_READ, "mmap_lock read wait", K_WAIT, MMS_CMP_HAVE_LOCK },
	{ MMS_M_MMAP_HOLD_WRITE, "mmap_lock write hold", K_HOLD, MMS_CMP_HAVE_MMAP_HOLD },
	{ MMS_M_MMAP_HOLD_READ, "mmap_lock read hold", K_HOLD, MMS_CMP_HAVE_MMAP_HOLD },
};

#define NR_MMAP_DEFS (sizeof(mmap_defs) / sizeof(mmap_defs[0]))

void mms_compare_init(struct mms_compare *c, const char *base, const char *new_label)
{
	memset(c, 0, sizeof(*c));
	c->label[0] = base && *base ? base : "base";
	c->label[1] = new_label && *new_label ? new_label : "new";
	c->alpha = 0.05;
}

void mms_compare_free(struct mms_compare *c)
{
	free(c->rows);
	free(c->ents);
	mms_hash_free(&c->idx);
	c->rows = NULL;
	c->ents = NULL;
	c->nr = c->cap = c->nr_ents = c->cap_ents = 0;
}

/* ---- entities by (group, name) ---- */

/* FNV-1a of the name, seeded with the group: the entity's tag in the index. */
static uint64_t ent_tag(enum mms_cmp_group g, const char *name)
{
	uint64_t h = 1469598103934665603ULL ^ (uint64_t)g;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 1099511628211ULL;
	return h;
}

static struct mms_cmp_ent *ent_get(struct mms_compare *c, enum mms_cmp_group g, const char *name,
				   enum ent_kind kind, unsigned int need)
{
	uint64_t tag = ent_tag(g, name);
	struct mms_cmp_ent *e;
	uint32_t i;

	if (c->idx.nr + 1 > c->idx.cap / 2 && mms_hash_reserve(&c->idx, c->idx.nr + 1))
		return NULL;
	for (i = mms_hash_first(&c->idx, tag); c->idx.vals[i]; i = mms_hash_next(&c->idx, i)) {
		e = &c->ents[c->idx.vals[i] - 1];
		if (c->idx.tags[i] == tag && e->group == g && !strcmp(e->name, name))
			return e;
	}
	if (c->nr_ents == c->cap_ents) {
		size_t cap = c->cap_ents ? c->cap_ents * 2 : 64;

		e = realloc(c->ents, cap * sizeof(*e));
		if (!e)
			return NULL;
		c->ents = e;
		c->cap_ents = cap;
	}
	e = &c->ents[c->nr_ents];
	memset(e, 0, sizeof(*e));
	e->group = g;
	e->kind = kind;
	e->need = need;
	e->order = ORDER_RANKED;
	snprintf(e->name, sizeof(e->name), "%s", name);
	mms_hash_set(&c->idx, i, tag, (uint32_t)c->nr_ents++);
	return e;
}

/* Adds one run's numbers to an entity (several keys of one name add up). */
static int ent_add(struct mms_compare *c, int side, struct mms_cmp_ent *e, double count,
		   double total)
{
	struct ent_run *r;

	if (!e)
		return -ENOMEM;
	r = &e->run[side][c->runs[side]];
	r->count += count;
	r->total += total;
	r->seen = true;
	/* Weight by rate, so that a long run does not outweigh short ones. */
	e->rank += (e->kind == K_OPS ? count : total) / c->secs[side][c->runs[side]];
	return 0;
}

/* A fixed metric's entity, in its place among the rows. */
static struct mms_cmp_ent *fixed_get(struct mms_compare *c, size_t k)
{
	struct mms_cmp_ent *e = ent_get(c, fixed[k].group, fixed[k].name, fixed[k].kind,
					fixed[k].need);

	if (e) {
		e->order = (int)k;
		e->what = fixed[k].what;
	}
	return e;
}

/* The kernel's per-VMA lock counter sub (system-wide), after the fixed rows; NULL: unknown sub. */
static struct mms_cmp_ent *kernel_get(struct mms_compare *c, uint32_t sub)
{
	const char *n = mms_vma_lock_kernel_name(sub);
	struct mms_cmp_ent *e;
	char name[64];

	if (!n)
		return NULL;
	snprintf(name, sizeof(name), "per-VMA lock, kernel: %s", n);
	e = ent_get(c, MMS_CMP_MMAP, name, K_OPS, MMS_CMP_HAVE_VMA_LOCK_KERNEL);
	if (e) {
		e->order = (int)(NR_FIXED + sub);
		e->what = sub == MMS_VMA_LOCK_K_MISS ? "lookups/s" : "faults/s";
	}
	return e;
}

/* ---- one run ---- */

/* The locks the mm patches are about, summed per kind in the totals ([0]: all locks). */
static const enum mms_lock_kind mm_kinds[] = {
	MMS_LOCK_UNKNOWN, MMS_LOCK_MMAP, MMS_LOCK_I_MMAP, MMS_LOCK_ANON_VMA,
};

#define NR_MM_KINDS ((int)(sizeof(mm_kinds) / sizeof(mm_kinds[0])))

static bool is_mm_kind(uint32_t kind)
{
	for (int k = 1; k < NR_MM_KINDS; k++)
		if (kind == (uint32_t)mm_kinds[k])
			return true;
	return false;
}

/*
 * A lock's name without what differs from boot to boot: the process name
 * of an mm lock (not its pid), one row for every lock known only by address.
 */
static void lock_cmp_name(const struct mms_store *st, uint32_t lock_id, char *buf, size_t len)
{
	const struct mms_lock_info *l = mms_store_get_lock(st, lock_id);
	const char *name = l ? mms_store_get_str(st, l->name_id) : "";

	if (!*name)
		snprintf(buf, len, "unnamed locks");
	else if ((l->kind == MMS_LOCK_MMAP || l->kind == MMS_LOCK_SIGLOCK) && l->owner_comm_id)
		snprintf(buf, len, "%s (%s)", name, mms_store_get_str(st, l->owner_comm_id));
	else if (l->kind == MMS_LOCK_MMAP || l->kind == MMS_LOCK_SIGLOCK)
		snprintf(buf, len, "%s", name);
	else
		mms_store_lock_label(st, lock_id, buf, len);
}

/*
 * "vma_prepare+0x1d5" -> "vma_prepare": offsets move between kernel builds.
 * A frame without a symbol is unsym's row.
 */
static void caller_cmp_name(const char *label, const char *unsym, char *buf, size_t len)
{
	const char *plus = strrchr(label, '+');

	if (!strncmp(label, "0x", 2) || !strcmp(label, "unknown") || !*label)
		snprintf(buf, len, "%s", unsym);
	else if (plus && !strncmp(plus, "+0x", 3) && plus > label)
		snprintf(buf, len, "%.*s", (int)(plus - label), label);
	else
		snprintf(buf, len, "%s", label);
}

/*
 * An owners row (MMS_BY_OWNER: one owner task and stack) by what stays from
 * run to run: the function of the owner's stack where it held the lock,
 * picked as a caller's is from a waiter's stack (the query's name_id, the
 * frame mms_stack_caller gives); or the bucket of an owner without one.
 */
static void owner_cmp_name(const struct mms_store *st, const struct mms_row *r, char *buf,
			   size_t len)
{
	const struct mms_task *t = mms_store_get_task(st, mms_owner_task(r->key));
	const char *comm = t ? mms_store_get_str(st, t->comm_id) : "";

	if (!t)
		snprintf(buf, len, "%s", MMS_CMP_OWNER_UNKNOWN);
	else if (!t->tid)	/* the collector's pseudo-tasks; any other is not an owner */
		snprintf(buf, len, "%s", !strcmp(comm, MMS_OWNER_READERS) ||
			 !strcmp(comm, MMS_OWNER_NONE) ? comm : MMS_CMP_OWNER_UNKNOWN);
	else if (!r->name_id)
		snprintf(buf, len, "%s", MMS_CMP_OWNER_RUNNING);
	else
		caller_cmp_name(mms_store_get_str(st, r->name_id), MMS_CMP_OWNER_UNSYMBOLISED,
				buf, len);
}

bool mms_compare_has_owners(const struct mms_store *st)
{
	uint32_t n = mms_store_count(st);

	for (uint32_t i = 0; i < n; i++) {
		const struct mms_interval *iv = mms_store_at(st, i);

		for (uint32_t j = 0; j < iv->n_locks; j++)
			if (iv->locks[j].owner_id)
				return true;
	}
	return false;
}

static int add_lock_rows(struct mms_compare *c, int side, const struct mms_store *st,
			 enum mms_group by)
{
	struct mms_query q = { .by = by, .to = mms_store_count(st) - 1, .no_sort = true };
	struct mms_rows rows = { 0 };
	double all_n = 0, all_t = 0;
	int err = mms_query_locks(st, &q, &rows);

	for (size_t i = 0; !err && i < rows.nr; i++) {
		const struct mms_row *r = &rows.rows[i];
		double n = (double)r->wait.count, t = (double)r->wait.total;
		const struct mms_lock_info *l;
		char name[128];
		size_t len;

		if (by == MMS_BY_CALLER) {
			/* A caller per kind of lock, as its rows: "vma_prepare (rwsem:W)". */
			caller_cmp_name(r->label, "unsymbolised callers", name, sizeof(name));
			len = strlen(name);
			snprintf(name + len, sizeof(name) - len, " (%s)", mms_lock_type_name(r->flags));
			err = ent_add(c, side, ent_get(c, MMS_CMP_CALLERS, name, K_WAIT,
							     MMS_CMP_HAVE_LOCK), n, t);
			continue;
		}
		if (by == MMS_BY_OWNER) {
			owner_cmp_name(st, r, name, sizeof(name));
			err = ent_add(c, side, ent_get(c, MMS_CMP_OWNERS, name, K_WAIT,
							     MMS_CMP_HAVE_LOCK_OWNER), n, t);
			continue;
		}
		all_n += n;
		all_t += t;
		lock_cmp_name(st, r->first_lock, name, sizeof(name));
		err = ent_add(c, side, ent_get(c, MMS_CMP_LOCKS, name, K_WAIT, MMS_CMP_HAVE_LOCK),
			      n, t);
		l = mms_store_get_lock(st, r->first_lock);
		if (err || !l || !is_mm_kind(l->kind))
			continue;
		snprintf(name, sizeof(name), "all %s", mms_lock_kind_name(l->kind));
		err = ent_add(c, side, ent_get(c, MMS_CMP_TOTALS, name, K_WAIT, MMS_CMP_HAVE_LOCK),
			      n, t);
	}
	if (!err && by == MMS_BY_LOCK)
		err = ent_add(c, side, ent_get(c, MMS_CMP_TOTALS, "all locks", K_WAIT,
					       MMS_CMP_HAVE_LOCK), all_n, all_t);
	mms_rows_free(&rows);
	return err;
}

static int add_metric(struct mms_compare *c, int side, const struct mms_store *st,
		      const struct mms_metric_sample *m, const char *metric, unsigned int have)
{
	const struct mms_task *t;
	char name[128];

	for (size_t k = 0; k < NR_FIXED; k++)
		if ((have & fixed[k].need) && !strcmp(metric, fixed[k].metric))
			return ent_add(c, side, fixed_get(c, k), (double)m->stat.count,
				       (double)m->stat.total);
	/* A sub this mmscope does not know (a newer or hostile file) is no row. */
	if ((have & MMS_CMP_HAVE_VMA_LOCK_KERNEL) && !strcmp(metric, MMS_M_VMA_LOCK_KERNEL) &&
	    mms_vma_lock_kernel_name(m->sub))
		return ent_add(c, side, kernel_get(c, m->sub), (double)m->stat.count,
			       (double)m->stat.total);
	for (size_t k = 0; k < NR_MMAP_DEFS; k++) {
		if (!(have & mmap_defs[k].need) || strcmp(metric, mmap_defs[k].metric))
			continue;
		t = mms_store_get_task(st, m->proc_id);
		snprintf(name, sizeof(name), "%s (%s)", mmap_defs[k].name,
			 t ? mms_store_get_str(st, t->comm_id) : "unknown process");
		return ent_add(c, side, ent_get(c, MMS_CMP_MMAP, name, mmap_defs[k].kind,
						mmap_defs[k].need),
			       (double)m->stat.count, (double)m->stat.total);
	}
	return 0;
}

int mms_compare_add_run(struct mms_compare *c, int side, const struct mms_store *st,
			unsigned int have)
{
	uint32_t n = mms_store_count(st);
	uint64_t ns = 0;
	int run, err = 0;

	if (side < 0 || side > 1)
		return -EINVAL;
	run = c->runs[side];
	if (run >= MMS_CMP_MAX_RUNS)
		return -E2BIG;
	for (uint32_t i = 0; i < n; i++)
		ns += mms_store_at(st, i)->dur_ns;
	c->secs[side][run] = ns ? (double)ns / 1e9 : 1;
	c->have[side][run] = have;
	/* Rows that exist whenever their source ran: quiet is a real 0 then. */
	for (size_t k = 0; k < NR_FIXED; k++)
		if (fixed[k].always && (have & fixed[k].need) && !fixed_get(c, k))
			return -ENOMEM;
	for (uint32_t k = 0; (have & MMS_CMP_HAVE_VMA_LOCK_KERNEL) && k < MMS_VMA_LOCK_K_NR; k++)
		if (!kernel_get(c, k))
			return -ENOMEM;
	if (have & MMS_CMP_HAVE_LOCK) {
		/*
		 * All locks, then the mm locks as a whole whether they were
		 * contended or not: "no i_mmap_rwsem wait on either side" is
		 * news in an mm patch mail, and robust to file names that vary.
		 */
		for (int k = 0; k < NR_MM_KINDS; k++) {
			char name[64];
			struct mms_cmp_ent *e;

			snprintf(name, sizeof(name), "all %s",
				 k ? mms_lock_kind_name(mm_kinds[k]) : "locks");
			e = ent_get(c, MMS_CMP_TOTALS, name, K_WAIT, MMS_CMP_HAVE_LOCK);
			if (!e)
				return -ENOMEM;
			e->order = k;
		}
		if (n)
			err = add_lock_rows(c, side, st, MMS_BY_LOCK);
		if (!err && n)
			err = add_lock_rows(c, side, st, MMS_BY_CALLER);
		/* A run without owners is no data for them (n/a), not a wait of 0. */
		if (!err && n && (have & MMS_CMP_HAVE_LOCK_OWNER))
			err = add_lock_rows(c, side, st, MMS_BY_OWNER);
	}
	for (uint32_t i = 0; !err && i < n; i++) {
		const struct mms_interval *iv = mms_store_at(st, i);

		for (uint32_t j = 0; !err && j < iv->n_metrics; j++)
			err = add_metric(c, side, st, &iv->metrics[j],
					 mms_store_get_str(st, iv->metrics[j].metric_id), have);
	}
	if (err) {
		/* Leave no half run behind for the next one to add to. */
		for (size_t i = 0; i < c->nr_ents; i++)
			c->ents[i].run[side][run] = (struct ent_run){ 0 };
		return err;
	}
	c->runs[side]++;
	return 0;
}

int mms_compare_add_score(struct mms_compare *c, int side, const char *name, const char *unit,
			  bool lower_better, double v)
{
	struct mms_cmp_ent *e;
	struct ent_run *r;
	int run;

	if (side < 0 || side > 1 || (run = c->runs[side] - 1) < 0 || !isfinite(v))
		return -EINVAL;
	if (!c->score_name[0]) {
		snprintf(c->score_name, sizeof(c->score_name), "%s", name && *name ? name :
			 "score");
		snprintf(c->score_unit, sizeof(c->score_unit), "%s", unit && *unit ? unit :
			 "score");
		c->score_lower = lower_better;
	}
	e = ent_get(c, MMS_CMP_SCORE, c->score_name, K_SCORE, MMS_CMP_HAVE_SCORE);
	if (!e)
		return -ENOMEM;
	e->order = 0;
	e->what = c->score_unit;
	r = &e->run[side][run];
	*r = (struct ent_run){ .count = 1, .total = v, .seen = true };
	c->have[side][run] |= MMS_CMP_HAVE_SCORE;
	return 0;
}

/* ---- statistics ---- */

static double run_value(const struct mms_cmp_ent *e, const struct row_def *d, int s, int k,
			double secs)
{
	const struct ent_run *r = &e->run[s][k];

	switch (d->val) {
	case V_AVG:
		return r->count > 0 ? r->total / r->count : NAN;
	case V_COUNT_RATE:
		return r->count / secs;
	case V_VALUE:
		return r->seen ? r->total : NAN;
	default:
		return r->total / secs;
	}
}

static void fill_row(const struct mms_compare *c, const struct mms_cmp_ent *e,
		     const struct row_def *d, struct mms_cmp_row *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", e->name);
	r->what = d->what ? d->what : e->what ? e->what : "per sec";
	r->group = e->group;
	r->metric = d->metric;
	r->unit = d->unit;
	r->lower_better = d->lower_better;
	if (e->kind == K_SCORE) {
		r->lower_better = c->score_lower;
		r->higher_better = !c->score_lower;
	}
	r->rank = e->rank;
	for (int s = 0; s < 2; s++) {
		struct mms_cmp_side *sd = &r->side[s];
		double v[MMS_CMP_MAX_RUNS];
		int n = 0;

		for (int k = 0; k < MMS_CMP_MAX_RUNS; k++)
			sd->v[k] = NAN;
		for (int k = 0; k < c->runs[s]; k++) {
			if (!(c->have[s][k] & e->need))
				continue;	/* not measured: no value, not a zero */
			sd->runs++;
			sd->v[k] = run_value(e, d, s, k, c->secs[s][k]);
			if (isnan(sd->v[k]))
				continue;
			if (e->run[s][k].seen)
				sd->present++;
			v[n++] = sd->v[k];
		}
		sd->na = !sd->runs;
		mms_runstats(v, n, &sd->st);
	}
	if (!r->side[0].st.n || !r->side[1].st.n)
		r->change_pct = NAN;
	else if (r->side[0].st.mean != 0)
		r->change_pct = (r->side[1].st.mean - r->side[0].st.mean) /
				fabs(r->side[0].st.mean) * 100;
	else
		r->change_pct = r->side[1].st.mean == 0 ? 0 : NAN;
	mms_welch(&r->side[0].st, &r->side[1].st, &r->welch);
}

/*
 * Output order: the benchmark's own figure heads the table, as in the
 * mails; owners (where the waits' locks were held) follow the callers.
 */
static const enum mms_cmp_group group_order[] = {
	MMS_CMP_SCORE, MMS_CMP_TOTALS, MMS_CMP_LOCKS, MMS_CMP_CALLERS, MMS_CMP_OWNERS,
	MMS_CMP_MMAP, MMS_CMP_VMA, MMS_CMP_RMAP,
};

#define NR_GROUPS ((int)(sizeof(group_order) / sizeof(group_order[0])))

static int group_pos(enum mms_cmp_group g)
{
	for (int i = 0; i < NR_GROUPS; i++)
		if (group_order[i] == g)
			return i;
	return NR_GROUPS;
}

unsigned int mms_compare_group_step(unsigned int cur, int dir)
{
	int i = cur ? group_pos((enum mms_cmp_group)cur) : dir > 0 ? -1 : NR_GROUPS;

	i += dir > 0 ? 1 : -1;
	return i < 0 || i >= NR_GROUPS ? 0 : group_order[i];
}

static int cmp_ents(const void *a, const void *b)
{
	const struct mms_cmp_ent *x = *(const struct mms_cmp_ent *const *)a;
	const struct mms_cmp_ent *y = *(const struct mms_cmp_ent *const *)b;

	if (x->group != y->group)
		return group_pos(x->group) < group_pos(y->group) ? -1 : 1;
	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	return strcmp(x->name, y->name);
}

static bool ranked_group(enum mms_cmp_group g)
{
	return g == MMS_CMP_LOCKS || g == MMS_CMP_CALLERS || g == MMS_CMP_OWNERS ||
	       g == MMS_CMP_MMAP;
}

int mms_compare_finish(struct mms_compare *c, const struct mms_compare_opts *o)
{
	unsigned int groups = o && o->groups ? o->groups : MMS_CMP_ALL;
	unsigned int metrics = o && o->metrics ? o->metrics : MMS_CMP_M_ALL;
	int entries = o && o->entries > 0 ? o->entries : 5, in_group = 0;
	enum mms_cmp_group cur = 0;
	struct mms_cmp_ent **order;
	size_t want = 0;

	order = malloc((c->nr_ents ? c->nr_ents : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < c->nr_ents; i++)
		order[i] = &c->ents[i];
	qsort(order, c->nr_ents, sizeof(*order), cmp_ents);
	c->nr = 0;
	for (size_t i = 0; i < c->nr_ents; i++) {
		const struct mms_cmp_ent *e = order[i];

		if (e->group != cur) {
			cur = e->group;
			in_group = 0;
		}
		/* -E limits the ranked entities; rows in a fixed order always show. */
		if (!(groups & e->group) || (ranked_group(e->group) && e->order >= ORDER_RANKED &&
					     in_group++ >= entries)) {
			order[i] = NULL;
			continue;
		}
		for (int k = 0; k < 3; k++)
			if (kind_rows[e->kind][k].metric & metrics)
				want++;	/* the score's kind is every kind: -k avg keeps it */
	}
	if (want > c->cap) {
		struct mms_cmp_row *r = realloc(c->rows, want * sizeof(*r));

		if (!r) {
			free(order);
			return -ENOMEM;
		}
		c->rows = r;
		c->cap = want;
	}
	for (size_t i = 0; i < c->nr_ents; i++) {
		if (!order[i])
			continue;
		for (int k = 0; k < 3; k++) {
			const struct row_def *d = &kind_rows[order[i]->kind][k];

			if (d->metric & metrics)
				fill_row(c, order[i], d, &c->rows[c->nr++]);
		}
	}
	free(order);
	return 0;
}

const char *mms_compare_na_why(const struct mms_cmp_row *r)
{
	return r->group == MMS_CMP_OWNERS ? "no lock owners in its runs (--lock-owner)" :
	       "its runs' sources do not measure this";
}

const char *mms_compare_verdict(const struct mms_compare *c, const struct mms_cmp_row *r,
				char *buf, size_t len)
{
	const struct mms_cmp_side *a = &r->side[0], *b = &r->side[1];

	if (a->na && b->na)
		snprintf(buf, len, "n/a on both");
	else if (a->na || b->na)
		snprintf(buf, len, "n/a on %s", c->label[a->na ? 0 : 1]);
	else if (!a->st.n && !b->st.n)
		snprintf(buf, len, "no data on both");
	else if (!a->st.n || !b->st.n)
		snprintf(buf, len, "no data on %s", c->label[!a->st.n ? 0 : 1]);
	else if (a->runs < 2 || b->runs < 2)
		snprintf(buf, len, "needs 2+ runs a side");
	else if (!r->welch.valid)
		snprintf(buf, len, "too few runs with data");
	else
		snprintf(buf, len, "%s", r->welch.p < c->alpha ? "significant" : "within noise");
	return buf;
}

static const struct {
	const char *name;
	unsigned int bit;
	bool metric;
} keys[] = {
	{ "score", MMS_CMP_SCORE, false },
	{ "totals", MMS_CMP_TOTALS, false }, { "locks", MMS_CMP_LOCKS, false },
	{ "callers", MMS_CMP_CALLERS, false }, { "owners", MMS_CMP_OWNERS, false },
	{ "mmap_lock", MMS_CMP_MMAP, false },
	{ "vma", MMS_CMP_VMA, false }, { "rmap", MMS_CMP_RMAP, false },
	{ "all", MMS_CMP_ALL, false }, { "avg", MMS_CMP_M_AVG, true },
	{ "rate", MMS_CMP_M_RATE, true }, { "sum", MMS_CMP_M_SUM, true },
};

const char *mms_compare_group_name(enum mms_cmp_group g)
{
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		if (!keys[k].metric && keys[k].bit == (unsigned int)g)
			return keys[k].name;
	return "?";
}

int mms_compare_parse_keys(const char *list, unsigned int *groups, unsigned int *metrics)
{
	char buf[256], *tok, *save = NULL;

	*groups = *metrics = 0;
	if (snprintf(buf, sizeof(buf), "%s", list) >= (int)sizeof(buf))
		return -EINVAL;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t k;

		for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (!strcmp(tok, keys[k].name))
				break;
		if (k == sizeof(keys) / sizeof(keys[0]))
			return -EINVAL;
		*(keys[k].metric ? metrics : groups) |= keys[k].bit;
	}
	return *groups || *metrics ? 0 : -EINVAL;
}

int mms_compare_notes(const struct mms_compare *c, char *buf, size_t len)
{
	static const struct {
		unsigned int need;
		const char *note;
	} notes[] = {
		{ MMS_CMP_HAVE_LOCK, "lock waits (no run had a lock contention source)" },
		{ MMS_CMP_HAVE_VMA | MMS_CMP_HAVE_VMA_INFERRED,
		  "VMA split/merge (no run had a VMA source)" },
		{ MMS_CMP_HAVE_RMAP_BATCH,
		  "try_to_unmap batches (need rmap tracepoint or fentry)" },
	};
	unsigned int any = 0;
	size_t o = 0;

	if (len)
		buf[0] = 0;
	for (int s = 0; s < 2; s++)
		for (int k = 0; k < c->runs[s]; k++)
			any |= c->have[s][k];
	for (size_t i = 0; i < sizeof(notes) / sizeof(notes[0]); i++) {
		if ((any & notes[i].need) || o >= len)
			continue;
		o += (size_t)snprintf(buf + o, len - o, "%s\n", notes[i].note);
	}
	return o < len ? (int)o : (int)len;
}
