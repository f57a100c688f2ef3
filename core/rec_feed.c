// SPDX-License-Identifier: GPL-2.0
/*
 * Feeding a recording into a store (see reader.c for opening one), in any
 * order, as replay seeks.  At interval idx a file id means its last
 * definition before idx: an index of each id's definitions (built at the
 * first feed) finds that one by binary search.  The store id a definition
 * was interned as is kept, for the intervals where the ids it names mean the
 * same, until the store frees ids (mms_store_id_gen()): a definition is
 * interned once, not once per seek or per redefinition of another id.
 *
 * An interval goes in now (mms_recording_feed()) or deferred, its rows added
 * when a view first reads it (mms_recording_feed_deferred()); the store then
 * holds a reference to the recording until it needs it no more.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec_reader.h"

/* Intervals [lo, hi) where what was resolved stays the same. */
struct span {
	uint32_t lo, hi;
};

static void narrow(struct span *sp, uint32_t lo, uint32_t hi)
{
	if (!sp)
		return;
	if (sp->lo < lo)
		sp->lo = lo;
	if (sp->hi > hi)
		sp->hi = hi;
}

/* Groups the definitions by table and file id, keeping file order inside each group. */
static int build_index(struct mms_recording *rec)
{
	uint32_t n = rec->nr_defs, runs = 0, *run_of, *next;
	int err = -ENOMEM;

	rec->run_start = calloc(n + 2, sizeof(*rec->run_start));
	rec->by_id = malloc((n + 1) * sizeof(*rec->by_id));
	rec->sid = calloc(n + 1, sizeof(*rec->sid));
	rec->hot = calloc(MMS_TAB_NR * REC_HOT, sizeof(*rec->hot));
	run_of = malloc((n + 1) * sizeof(*run_of));
	if (!rec->run_start || !rec->by_id || !rec->sid || !rec->hot || !run_of)
		goto out;
	for (uint32_t d = 0; d < n; d++) {
		struct mms_hash *m = &rec->runs[rec->defs[d].tab];
		uint32_t i, r;
		int found = mms_hash_probe(m, rec->defs[d].fid, &i);

		if (found < 0)
			goto out;
		if (found) {
			r = m->vals[i];
		} else {
			r = ++runs;
			mms_hash_set(m, i, rec->defs[d].fid, r - 1);
		}
		run_of[d] = r - 1;
		rec->run_start[r]++;
	}
	for (uint32_t r = 0; r < runs; r++)
		rec->run_start[r + 1] += rec->run_start[r];
	next = malloc((runs + 1) * sizeof(*next));
	if (!next)
		goto out;
	memcpy(next, rec->run_start, (runs + 1) * sizeof(*next));
	for (uint32_t d = 0; d < n; d++)
		rec->by_id[next[run_of[d]]++] = d;
	free(next);
	rec->indexed = true;
	err = 0;
out:
	free(run_of);
	if (err) {
		/* Whole or nothing: the next feed tries again. */
		for (int t = 0; t < MMS_TAB_NR; t++)
			mms_hash_free(&rec->runs[t]);
		free(rec->run_start);
		free(rec->by_id);
		free(rec->sid);
		free(rec->hot);
		rec->run_start = rec->by_id = NULL;
		rec->sid = NULL;
		rec->hot = NULL;
	}
	return err;
}

/*
 * The definition of fid at interval idx (its index + 1), 0 when there is
 * none; narrows sp to the intervals where that stays so.
 */
static uint32_t def_at(const struct mms_recording *rec, enum mms_table t, uint32_t fid,
		       uint32_t idx, struct span *sp)
{
	uint32_t r = fid ? mms_hash_find(&rec->runs[t], fid) : 0, lo, hi, end;

	if (!r)
		return 0;	/* never defined: fed as 0 everywhere (counted at open) */
	lo = rec->run_start[r - 1];
	end = hi = rec->run_start[r];
	if (rec->defs[rec->by_id[lo]].pos > idx) {
		narrow(sp, 0, rec->defs[rec->by_id[lo]].pos);
		return 0;
	}
	/* The last one at or before idx (a later one in the same write replaces it). */
	while (hi - lo > 1) {
		uint32_t k = lo + (hi - lo) / 2;

		if (rec->defs[rec->by_id[k]].pos <= idx)
			lo = k;
		else
			hi = k;
	}
	narrow(sp, rec->defs[rec->by_id[lo]].pos,
	       lo + 1 < end ? rec->defs[rec->by_id[lo + 1]].pos : UINT32_MAX);
	return rec->by_id[lo] + 1;
}

/* A file string at interval idx as a C string (valid until the next call). */
static const char *file_str(struct mms_recording *rec, uint32_t fid, uint32_t idx,
			    struct span *sp)
{
	uint32_t d = def_at(rec, MMS_TAB_STR, fid, idx, sp);

	if (!d)
		return "";
	memcpy(rec->str, rec->defs[d - 1].p, rec->defs[d - 1].len);
	rec->str[rec->defs[d - 1].len] = 0;
	return rec->str;
}

static uint32_t res(struct mms_recording *rec, struct mms_store *st, enum mms_table t,
		    uint32_t fid, uint32_t idx, struct span *sp);

/* Interns definition d as the file ids it names mean at idx; narrows sp to where they do. */
static uint32_t intern_def(struct mms_recording *rec, struct mms_store *st, const struct def *d,
			   uint32_t idx, struct span *sp)
{
	const uint8_t *p = d->p;

	switch (d->tab) {
	case MMS_TAB_STR:
		memcpy(rec->str, p, d->len);
		rec->str[d->len] = 0;
		return mms_store_str(st, rec->str);
	case MMS_TAB_TASK: {
		char comm[REC_MAX_STR + 1];

		snprintf(comm, sizeof(comm), "%s", file_str(rec, rec_rd32(p + 8), idx, sp));
		/* 1.3 adds the cgroup's path; a 1.2 record ends before it. */
		return mms_store_task_cg(st, rec_rd32(p), rec_rd32(p + 4), comm,
					 d->len >= REC_TASK_SIZE - 4 && rec_rd32(p + 12) ?
					 file_str(rec, rec_rd32(p + 12), idx, sp) : NULL);
	}
	case MMS_TAB_LOCK: {
		struct mms_lock_info li = {
			.kind = rec_rd32(p),
			.addr = rec_rd64(p + 4),
			.owner_tgid = rec_rd32(p + 20),
		};

		li.name_id = res(rec, st, MMS_TAB_STR, rec_rd32(p + 12), idx, sp);
		li.detail_id = res(rec, st, MMS_TAB_STR, rec_rd32(p + 16), idx, sp);
		li.owner_comm_id = res(rec, st, MMS_TAB_STR, rec_rd32(p + 24), idx, sp);
		return mms_store_lock(st, &li);
	}
	default: {
		uint32_t nr = rec_rd32(p), syms[REC_MAX_STACK];
		uint64_t ips[REC_MAX_STACK];

		for (uint32_t i = 0; i < nr; i++) {
			ips[i] = rec_rd64(p + 4 + i * 8);
			syms[i] = res(rec, st, MMS_TAB_STR, rec_rd32(p + 4 + nr * 8 + i * 4), idx,
				      sp);
		}
		return mms_store_stack(st, ips, syms, nr);
	}
	}
}

/*
 * The store id for file id fid at interval idx, 0 when it was never defined
 * (counted at open); narrows sp to the intervals where it stays so.
 */
static uint32_t res(struct mms_recording *rec, struct mms_store *st, enum mms_table t,
		    uint32_t fid, uint32_t idx, struct span *sp)
{
	struct hot_res *h = &rec->hot[t * REC_HOT + fid % REC_HOT];
	struct span cur = { 0, UINT32_MAX };
	struct def_sid *c = NULL;
	uint32_t d;

	if (!fid)
		return 0;
	if (h->fid == fid && idx >= h->lo && idx < h->hi) {
		narrow(sp, h->lo, h->hi);
		return h->id;
	}
	d = def_at(rec, t, fid, idx, &cur);
	if (d) {
		c = &rec->sid[d - 1];
		if (!c->id || idx < c->lo || idx >= c->hi) {
			struct span mine = { 0, UINT32_MAX };
			uint32_t id = intern_def(rec, st, &rec->defs[d - 1], idx, &mine);

			if (!id)
				return 0;	/* out of memory: not remembered */
			*c = (struct def_sid){ .id = id, .lo = mine.lo, .hi = mine.hi };
		}
		narrow(&cur, c->lo, c->hi);
	}
	*h = (struct hot_res){ .fid = fid, .id = d ? c->id : 0, .lo = cur.lo, .hi = cur.hi };
	narrow(sp, cur.lo, cur.hi);
	return h->id;
}

static void read_stat(const uint8_t *p, uint32_t slots, struct mms_stat *s)
{
	s->count = rec_rd64(p);
	s->total = rec_rd64(p + 8);
	s->min = rec_rd64(p + 16);
	s->max = rec_rd64(p + 24);
	if (slots == MMS_HIST_SLOTS) {
		for (uint32_t i = 0; i < MMS_HIST_SLOTS; i++)
			s->hist[i] = rec_rd32(p + REC_STAT_FIXED + 4 * i);
		return;
	}
	memset(s->hist, 0, sizeof(s->hist));
	/* A finer histogram from a newer writer folds into the last slot. */
	for (uint32_t i = 0; i < slots; i++)
		s->hist[i < MMS_HIST_SLOTS ? i : MMS_HIST_SLOTS - 1] +=
			rec_rd32(p + REC_STAT_FIXED + 4 * i);
}

static int feed_rows(struct mms_recording *rec, struct mms_store *st, const struct iv_view *v,
		     uint32_t idx)
{
	int err;

	for (uint32_t i = 0; i < v->meta.n_locks; i++) {
		const uint8_t *r = v->locks + (size_t)i * v->lock_rs;
		struct mms_lock_sample s = { 0 };

		s.lock_id = res(rec, st, MMS_TAB_LOCK, rec_rd32(r), idx, NULL);
		s.stack_id = res(rec, st, MMS_TAB_STACK, rec_rd32(r + 4), idx, NULL);
		s.task_id = res(rec, st, MMS_TAB_TASK, rec_rd32(r + 8), idx, NULL);
		s.flags = rec_rd32(r + 12);
		/* 1.4: the owner and its stack; older files' rows leave them unknown (0). */
		if (v->lock_key >= REC_LOCK_KEY) {
			s.owner_id = res(rec, st, MMS_TAB_TASK, rec_rd32(r + 16), idx, NULL);
			s.owner_stack_id = res(rec, st, MMS_TAB_STACK, rec_rd32(r + 20), idx,
					       NULL);
		}
		read_stat(r + v->lock_key, v->slots, &s.wait);
		err = mms_store_add_lock(st, &s);
		if (err == -ENOMEM)
			return err;	/* -ENOSPC: the store counted it as lost */
	}
	for (uint32_t i = 0; i < v->meta.n_metrics; i++) {
		const uint8_t *r = v->metrics + (size_t)i * v->metric_rs;
		struct mms_metric_sample s = { 0 };

		s.proc_id = res(rec, st, MMS_TAB_TASK, rec_rd32(r), idx, NULL);
		s.metric_id = res(rec, st, MMS_TAB_STR, rec_rd32(r + 4), idx, NULL);
		s.sub = rec_rd32(r + 8);
		read_stat(r + REC_METRIC_KEY, v->slots, &s.stat);
		err = mms_store_add_metric(st, &s);
		if (err == -ENOMEM)
			return err;
	}
	for (int i = 0; i < MMS_LOST_NR; i++)
		if (v->lost[i])
			mms_store_add_lost(st, i, v->lost[i]);
	return 0;
}

/* Decodes interval idx for feeding into st. */
static int open_iv(struct mms_recording *rec, struct mms_store *st, uint32_t idx,
		   struct iv_view *v)
{
	const struct iv_ent *e = &rec->ivs[idx];
	struct blk bk;
	const uint8_t *p;
	size_t n;

	if (!rec->indexed && build_index(rec))
		return -ENOMEM;
	if (rec->cache_st != st || rec->cache_gen != mms_store_id_gen(st)) {
		memset(rec->sid, 0, rec->nr_defs * sizeof(*rec->sid));
		memset(rec->hot, 0, MMS_TAB_NR * REC_HOT * sizeof(*rec->hot));
		rec->cache_st = st;
		rec->cache_gen = mms_store_id_gen(st);
	}
	bk = (struct blk){ .off = e->off, .flags = e->bflags, .stored = e->stored, .raw = e->raw,
			   .payload = rec->buf + e->off + REC_BLOCK_HDR };
	p = rec_iv_payload(rec, &bk, &n);
	if (!p || rec_parse_iv(rec, p, n, v))
		return -EBADMSG;	/* checked at open: only memory can fail here */
	return 0;
}

int mms_recording_feed(struct mms_recording *rec, struct mms_store *st, uint32_t idx)
{
	struct iv_view v;
	int err;

	if (idx >= rec->nr_ivs)
		return -ERANGE;
	err = open_iv(rec, st, idx, &v);
	if (err)
		return err;
	if (!mms_store_begin(st, v.meta.start_ns)) {
		mms_store_abort(st);
		if (!mms_store_begin(st, v.meta.start_ns))
			return -EBUSY;
	}
	mms_store_reserve(st, v.meta.n_locks, v.meta.n_metrics);
	err = feed_rows(rec, st, &v, idx);
	if (err) {
		mms_store_abort(st);
		return err;
	}
	return mms_store_commit(st, v.meta.dur_ns, v.meta.flags);
}

/* The store's loader: the rows of a deferred interval. */
static int load_deferred(void *ctx, struct mms_store *st, uint64_t cookie)
{
	struct mms_recording *rec = ctx;
	struct iv_view v;
	int err;

	if (cookie >= rec->nr_ivs)
		return -ERANGE;
	err = open_iv(rec, st, (uint32_t)cookie, &v);
	return err ? err : feed_rows(rec, st, &v, (uint32_t)cookie);
}

static void release_deferred(void *ctx)
{
	mms_recording_close(ctx);
}

int mms_recording_feed_deferred(struct mms_recording *rec, struct mms_store *st, uint32_t idx)
{
	const struct mms_store_loader l = { .load = load_deferred, .release = release_deferred,
					    .ctx = rec };
	const struct mms_rec_interval *m;

	if (idx >= rec->nr_ivs)
		return -ERANGE;
	m = &rec->ivs[idx].meta;
	if (mms_store_set_loader(st, &l))
		rec->refs++;
	return mms_store_commit_deferred(st, &(struct mms_deferred_iv){
		.start_ns = m->start_ns, .dur_ns = m->dur_ns, .flags = m->flags,
		.n_locks = m->n_locks, .n_metrics = m->n_metrics, .cookie = idx });
}

int mms_recording_load(const char *path, struct mms_store *st, struct mms_rec_info *info,
		       char *errbuf, size_t errlen)
{
	struct mms_recording *rec;
	int err = mms_recording_open(path, &rec, errbuf, errlen);

	if (err)
		return err;
	for (uint32_t i = 0; i < rec->nr_ivs && !err; i++)
		err = mms_recording_feed(rec, st, i);
	if (err)
		snprintf(errbuf, errlen, "%s: cannot load interval: %s", path, strerror(-err));
	else if (info)
		*info = rec->info;
	mms_recording_close(rec);
	return err;
}

int mms_recording_load_new(const char *path, struct mms_store **st, struct mms_rec_info *info,
			   char *errbuf, size_t errlen)
{
	struct mms_store_opts so = { .max_bytes = 1ULL << 40 };
	struct mms_recording *rec;
	int err = mms_recording_open(path, &rec, errbuf, errlen);

	if (err)
		return err;
	so.window = rec->nr_ivs > 2 ? rec->nr_ivs : 2;
	err = mms_store_create(&so, st);
	for (uint32_t i = 0; i < rec->nr_ivs && !err; i++)
		err = mms_recording_feed(rec, *st, i);
	if (err) {
		snprintf(errbuf, errlen, "%s: cannot load: %s", path, strerror(-err));
		mms_store_destroy(*st);
		*st = NULL;
	} else if (info) {
		*info = rec->info;
	}
	mms_recording_close(rec);
	return err;
}
