// SPDX-License-Identifier: GPL-2.0
/*
 * The header above every view: who and what is watched, the sources in use
 * per family (or why none), the headline rates of the interval shown, and
 * what must never go unnoticed: lost events, a followed process that exited,
 * recording, pause.
 */
#include <stdio.h>
#include <string.h>

#include "mmscope/format.h"
#include "mmscope/mm_metrics.h"
#include "util.h"

/* Puts text and returns the next x (one space after it). */
static int seg(struct mms_canvas *c, int x, int y, enum mms_role role, const char *s)
{
	if (x >= c->w)
		return x;
	return x + mms_canvas_put(c, x, y, role, s, c->w - x) + 1;
}

/* "label value": in the title bar both keep the bar's look; elsewhere labels are muted. */
static int pair(struct mms_canvas *c, int x, int y, const char *label, const char *value,
		enum mms_role role)
{
	x = seg(c, x, y, role == MMS_ROLE_TITLE ? MMS_ROLE_TITLE : MMS_ROLE_LABEL, label);
	return seg(c, x, y, role, value) + 1;
}

static void line_title(const struct mms_header *hd, const struct mms_view_env *env,
		       struct mms_canvas *c, int y)
{
	const struct mms_session_info *in = hd->info;
	char buf[64];
	int x = 0;

	mms_canvas_fill(c, 0, y, c->w, ' ', MMS_ROLE_TITLE);
	x = seg(c, x, y, MMS_ROLE_TITLE, hd->replay ? "mmscope replay" : "mmscope") + 1;
	/* What changes and matters comes first, so a narrow terminal cuts the rest. */
	if (hd->replay_note)
		x = seg(c, x, y, MMS_ROLE_WARN, hd->replay_note) + 1;
	if (hd->paused && env->valid) {
		snprintf(buf, sizeof(buf), "PAUSED at #%llu",
			 (unsigned long long)mms_store_at(env->st, env->cur)->seq);
		x = seg(c, x, y, MMS_ROLE_WARN, buf) + 1;
	}
	if (hd->target_note)
		x = seg(c, x, y, MMS_ROLE_WARN, hd->target_note) + 1;
	if (hd->rec_note)
		x = seg(c, x, y, MMS_ROLE_REC, hd->rec_note) + 1;
	if (in) {
		x = pair(c, x, y, "host", in->host, MMS_ROLE_TITLE);
		x = pair(c, x, y, "kernel", in->kernel, MMS_ROLE_TITLE);
		x = pair(c, x, y, "target", in->target, MMS_ROLE_TITLE);
	}
	if (!hd->replay) {
		snprintf(buf, sizeof(buf), "%.2gs", hd->interval_ms / 1000.0);
		pair(c, x, y, "interval", buf, MMS_ROLE_TITLE);
	}
}

/* mmap_lock without hold-time mode: the family works, for waits. */
static bool waits_only(const struct mms_header *hd, int f)
{
	return mms_mmap_waits_only(f, hd->fam[MMS_FAM_LOCK].source, hd->fam[f].why);
}

/* "lock bpf  mmap_lock waits  vma unavailable: why ..." with the whys sharing the room left. */
static void line_sources(const struct mms_header *hd, struct mms_canvas *c, int y)
{
	static const char *const names[MMS_FAM_NR] = { "lock", "mmap_lock", "vma", "rmap" };
	int x = seg(c, 0, y, MMS_ROLE_LABEL, "sources"), nr_bad = 0, room;
	char buf[300];

	if (!hd->fam) {
		seg(c, x, y, MMS_ROLE_DIM, "(recording)");
		return;
	}
	for (int f = 0; f < MMS_FAM_NR; f++)
		if ((!hd->fam[f].source && !waits_only(hd, f)) || hd->fam[f].failed[0])
			nr_bad++;
	/* Room left after the working ones, shared by the unavailable ones. */
	room = c->w - x;
	for (int f = 0; f < MMS_FAM_NR; f++)
		room -= (int)strlen(names[f]) + 2 +
			(hd->fam[f].source ? (int)strlen(hd->fam[f].backend ? hd->fam[f].backend
								      : "?") :
			 waits_only(hd, f) ? (int)strlen("waits") : 0);
	for (int f = 0; f < MMS_FAM_NR; f++) {
		const struct mms_family_status *fs = &hd->fam[f];

		x = seg(c, x, y, MMS_ROLE_NORMAL, names[f]);
		if (fs->failed[0]) {
			/* Stopped working mid-run: say so where its backend was. */
			snprintf(buf, sizeof(buf), "FAILED: %s", fs->failed);
			x += mms_canvas_put(c, x, y, MMS_ROLE_ERROR, buf,
					    room / nr_bad > 14 ? room / nr_bad - 1 : 13) + 2;
			continue;
		}
		if (fs->source) {
			x = seg(c, x, y, MMS_ROLE_GOOD, fs->backend ? fs->backend : "?") + 1;
			continue;
		}
		if (waits_only(hd, f)) {
			x = seg(c, x, y, MMS_ROLE_GOOD, "waits") + 1;
			continue;
		}
		snprintf(buf, sizeof(buf), "unavailable: %s", fs->why[0] ? fs->why : "?");
		x += mms_canvas_put(c, x, y, MMS_ROLE_ERROR, buf,
				    nr_bad && room / nr_bad > 14 ? room / nr_bad - 1 : 13) + 2;
	}
}

struct totals {
	uint64_t count, wait, mmap_waits, splits, merges, up, down, unmaps, pages;
	bool has_vma, has_inferred, has_rmap;
};

static void sum_interval(const struct mms_store *st, const struct mms_interval *iv,
			 struct totals *t)
{
	memset(t, 0, sizeof(*t));
	for (uint32_t j = 0; j < iv->n_locks; j++) {
		t->count += iv->locks[j].wait.count;
		t->wait += iv->locks[j].wait.total;
	}
	for (uint32_t j = 0; j < iv->n_metrics; j++) {
		const struct mms_metric_sample *m = &iv->metrics[j];
		const char *name = mms_store_get_str(st, m->metric_id);

		if (!strcmp(name, MMS_M_MMAP_WAIT_READ) || !strcmp(name, MMS_M_MMAP_WAIT_WRITE)) {
			t->mmap_waits += m->stat.count;
		} else if (!strcmp(name, MMS_M_VMA_SPLIT)) {
			t->splits += m->stat.count;
			t->has_vma = true;
		} else if (!strcmp(name, MMS_M_VMA_MERGE)) {
			t->merges += m->stat.count;
			t->has_vma = true;
		} else if (!strcmp(name, MMS_M_VMA_INFERRED_UP)) {
			t->up += m->stat.total;
			t->has_inferred = true;
		} else if (!strcmp(name, MMS_M_VMA_INFERRED_DOWN)) {
			t->down += m->stat.total;
			t->has_inferred = true;
		} else if (!strcmp(name, MMS_M_RMAP_BATCH)) {
			t->unmaps += m->stat.count;
			t->pages += m->stat.total;
			t->has_rmap = true;
		}
	}
}

static const char *backend(const struct mms_header *hd, enum mms_metric_family f)
{
	return hd->fam && hd->fam[f].source ? (hd->fam[f].backend ? hd->fam[f].backend : "?") :
	       NULL;
}

static void line_rates(const struct mms_header *hd, const struct mms_view_env *env,
		       struct mms_canvas *c, int y)
{
	const struct mms_interval *iv;
	const char *vb = backend(hd, MMS_FAM_VMA), *rb = backend(hd, MMS_FAM_RMAP);
	uint64_t lost = 0;
	struct totals t;
	double secs;
	char a[24], b[24], buf[64];
	int x = 0;

	if (hd->lost)
		for (int r = 0; r < MMS_LOST_NR; r++)
			lost += hd->lost[r];
	if (lost) {
		/* Never hidden: numbers with losses behind them must look suspect. */
		snprintf(buf, sizeof(buf), "LOST %llu event%s", (unsigned long long)lost,
			 lost == 1 ? "" : "s");
		x = seg(c, x, y, MMS_ROLE_ERROR, buf) + 1;
	}
	if (!env->valid) {
		seg(c, x, y, MMS_ROLE_DIM, "waiting for the first interval...");
		return;
	}
	iv = mms_store_at(env->st, env->cur);
	secs = iv->dur_ns ? (double)iv->dur_ns / 1e9 : 1.0;
	sum_interval(env->st, iv, &t);
	util_fmt_rate(a, sizeof(a), t.count, secs);
	x = pair(c, x, y, "contentions", strcat(a, "/s"), MMS_ROLE_VALUE);
	util_fmt_wait_rate(a, sizeof(a), t.wait, secs);
	x = pair(c, x, y, "wait", strcat(a, "/s"), MMS_ROLE_VALUE);
	util_fmt_rate(a, sizeof(a), t.mmap_waits, secs);
	x = pair(c, x, y, "mmap_lock waits", strcat(a, "/s"), MMS_ROLE_VALUE);
	if (t.has_vma || (vb && strcmp(vb, "inferred"))) {
		util_fmt_rate(a, sizeof(a), t.splits, secs);
		util_fmt_rate(b, sizeof(b), t.merges, secs);
		snprintf(buf, sizeof(buf), "%s/s, merges %s/s", a, b);
		x = pair(c, x, y, "VMA splits", buf, MMS_ROLE_VALUE);
	} else if (t.has_inferred || vb) {
		util_fmt_rate(a, sizeof(a), t.up, secs);
		util_fmt_rate(b, sizeof(b), t.down, secs);
		snprintf(buf, sizeof(buf), "+%s/s -%s/s", a, b);
		x = pair(c, x, y, "VMA count (inferred)", buf, MMS_ROLE_VALUE);
	}
	if (t.has_rmap || (rb && strcmp(rb, "stock"))) {
		util_fmt_rate(a, sizeof(a), t.unmaps, secs);
		snprintf(buf, sizeof(buf), "%s/s, mean batch %.1f", a,
			 t.unmaps ? (double)t.pages / (double)t.unmaps : 0.0);
		pair(c, x, y, "unmap batches", buf, MMS_ROLE_VALUE);
	}
}

int mms_header_draw(const struct mms_header *hd, const struct mms_view_env *env,
		    struct mms_canvas *c, int y, int h)
{
	if (h < 1)
		return 0;
	line_title(hd, env, c, y);
	if (h < 3)
		return 1;
	line_sources(hd, c, y + 1);
	line_rates(hd, env, c, y + 2);
	return 3;
}
