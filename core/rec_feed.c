// SPDX-License-Identifier: GPL-2.0
/*
 * Feeding a recording into a store (see reader.c for opening one).  File ids
 * are resolved through the definitions that precede an interval and
 * re-interned into the target store; the store ids are cached until the
 * store's epoch changes or a file id is redefined.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec_reader.h"

static void clear_cache(struct mms_recording *rec)
{
	for (int t = 0; t < MMS_TAB_NR; t++)
		rec_idmap_clear(&rec->cache[t]);
}

/* Makes cur hold exactly the definitions that precede interval idx. */
static int apply_defs(struct mms_recording *rec, uint32_t idx)
{
	if (rec->applied && rec->defs[rec->applied - 1].pos > idx) {
		for (int t = 0; t < MMS_TAB_NR; t++)
			rec_idmap_clear(&rec->cur[t]);
		clear_cache(rec);
		rec->applied = 0;
	}
	while (rec->applied < rec->nr_defs && rec->defs[rec->applied].pos <= idx) {
		const struct def *d = &rec->defs[rec->applied];
		int r = rec_idmap_put(&rec->cur[d->tab], d->fid, rec->applied + 1);

		if (r < 0)
			return r;
		/* A reused id: whatever was derived from the old meaning is stale. */
		if (r > 0)
			clear_cache(rec);
		rec->applied++;
	}
	return 0;
}

static const struct def *cur_def(const struct mms_recording *rec, enum mms_table t, uint32_t fid)
{
	uint32_t d = fid ? rec_idmap_get(&rec->cur[t], fid) : 0;

	return d ? &rec->defs[d - 1] : NULL;
}

/* A file string as a C string (valid until the next call). */
static const char *file_str(struct mms_recording *rec, uint32_t fid)
{
	const struct def *d = cur_def(rec, MMS_TAB_STR, fid);

	if (!d)
		return "";
	memcpy(rec->str, d->p, d->len);
	rec->str[d->len] = 0;
	return rec->str;
}

static uint32_t res(struct mms_recording *rec, struct mms_store *st, enum mms_table t,
		    uint32_t fid);

static uint32_t intern_def(struct mms_recording *rec, struct mms_store *st, const struct def *d)
{
	const uint8_t *p = d->p;

	switch (d->tab) {
	case MMS_TAB_STR:
		return mms_store_str(st, file_str(rec, d->fid));
	case MMS_TAB_TASK:
		return mms_store_task(st, rec_rd32(p), rec_rd32(p + 4), file_str(rec, rec_rd32(p + 8)));
	case MMS_TAB_LOCK: {
		struct mms_lock_info li = {
			.kind = rec_rd32(p),
			.addr = rec_rd64(p + 4),
			.owner_tgid = rec_rd32(p + 20),
		};

		li.name_id = res(rec, st, MMS_TAB_STR, rec_rd32(p + 12));
		li.detail_id = res(rec, st, MMS_TAB_STR, rec_rd32(p + 16));
		li.owner_comm_id = res(rec, st, MMS_TAB_STR, rec_rd32(p + 24));
		return mms_store_lock(st, &li);
	}
	default: {
		uint32_t nr = rec_rd32(p), syms[REC_MAX_STACK];
		uint64_t ips[REC_MAX_STACK];

		for (uint32_t i = 0; i < nr; i++) {
			ips[i] = rec_rd64(p + 4 + i * 8);
			syms[i] = res(rec, st, MMS_TAB_STR, rec_rd32(p + 4 + nr * 8 + i * 4));
		}
		return mms_store_stack(st, ips, syms, nr);
	}
	}
}

/* The store id for a file id; 0 when it was never defined (counted at open). */
static uint32_t res(struct mms_recording *rec, struct mms_store *st, enum mms_table t,
		    uint32_t fid)
{
	const struct def *d;
	uint32_t id;

	if (!fid)
		return 0;
	id = rec_idmap_get(&rec->cache[t], fid);
	if (id)
		return id;
	d = cur_def(rec, t, fid);
	if (!d)
		return 0;
	id = intern_def(rec, st, d);
	if (id)
		rec_idmap_put(&rec->cache[t], fid, id);
	return id;
}

static void read_stat(const uint8_t *p, uint32_t slots, struct mms_stat *s)
{
	s->count = rec_rd64(p);
	s->total = rec_rd64(p + 8);
	s->min = rec_rd64(p + 16);
	s->max = rec_rd64(p + 24);
	memset(s->hist, 0, sizeof(s->hist));
	/* A finer histogram from a newer writer folds into the last slot. */
	for (uint32_t i = 0; i < slots; i++)
		s->hist[i < MMS_HIST_SLOTS ? i : MMS_HIST_SLOTS - 1] +=
			rec_rd32(p + REC_STAT_FIXED + 4 * i);
}

static int feed_rows(struct mms_recording *rec, struct mms_store *st, const struct iv_view *v)
{
	int err;

	for (uint32_t i = 0; i < v->meta.n_locks; i++) {
		const uint8_t *r = v->locks + (size_t)i * v->lock_rs;
		struct mms_lock_sample s;

		s.lock_id = res(rec, st, MMS_TAB_LOCK, rec_rd32(r));
		s.stack_id = res(rec, st, MMS_TAB_STACK, rec_rd32(r + 4));
		s.task_id = res(rec, st, MMS_TAB_TASK, rec_rd32(r + 8));
		s.flags = rec_rd32(r + 12);
		read_stat(r + REC_LOCK_KEY, v->slots, &s.wait);
		err = mms_store_add_lock(st, &s);
		if (err == -ENOMEM)
			return err;	/* -ENOSPC: the store counted it as lost */
	}
	for (uint32_t i = 0; i < v->meta.n_metrics; i++) {
		const uint8_t *r = v->metrics + (size_t)i * v->metric_rs;
		struct mms_metric_sample s = { 0 };

		s.proc_id = res(rec, st, MMS_TAB_TASK, rec_rd32(r));
		s.metric_id = res(rec, st, MMS_TAB_STR, rec_rd32(r + 4));
		s.sub = rec_rd32(r + 8);
		read_stat(r + REC_METRIC_KEY, v->slots, &s.stat);
		err = mms_store_add_metric(st, &s);
		if (err == -ENOMEM)
			return err;
	}
	return 0;
}

int mms_recording_feed(struct mms_recording *rec, struct mms_store *st, uint32_t idx)
{
	const struct mms_interval *last;
	const struct iv_ent *e;
	struct iv_view v;
	struct blk bk;
	const uint8_t *p;
	int err;

	if (idx >= rec->nr_ivs)
		return -ERANGE;
	e = &rec->ivs[idx];
	last = mms_store_latest(st);
	/*
	 * Cached ids hold while the store is the one we fed last (not a new one
	 * at the same address: its newest interval is still ours) and none of
	 * its ids were freed since.
	 */
	if (rec->cache_st != st || rec->cache_epoch != mms_store_epoch(st) || !last ||
	    last->seq != rec->cache_seq) {
		clear_cache(rec);
		rec->cache_st = st;
		rec->cache_epoch = mms_store_epoch(st);
	}
	err = apply_defs(rec, idx);
	if (err)
		return err;
	bk = (struct blk){ .off = e->off, .flags = e->bflags, .stored = e->stored, .raw = e->raw,
			   .payload = rec->buf + e->off + REC_BLOCK_HDR };
	p = rec_payload_tmp(rec, &bk);
	if (!p || !rec_parse_iv(p, e->raw, &v))
		return -EBADMSG;	/* checked at open: only memory can fail here */
	if (!mms_store_begin(st, v.meta.start_ns)) {
		mms_store_abort(st);
		if (!mms_store_begin(st, v.meta.start_ns))
			return -EBUSY;
	}
	err = feed_rows(rec, st, &v);
	if (err) {
		mms_store_abort(st);
		return err;
	}
	for (int i = 0; i < MMS_LOST_NR; i++)
		if (v.lost[i])
			mms_store_add_lost(st, i, v.lost[i]);
	err = mms_store_commit(st, v.meta.dur_ns, v.meta.flags);
	if (!err)
		rec->cache_seq = mms_store_latest(st)->seq;
	return err;
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
