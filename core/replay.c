// SPDX-License-Identifier: GPL-2.0
/*
 * Replay: a recording behind the source interface, so views, reports and
 * compare cannot tell it from live collection.  Unlike a live source it
 * commits whole intervals itself, with their recorded start, duration and
 * flags (a rate must be computed over the time that was recorded, not over
 * how fast the file is read).  The TUI paces it (step), jumps (seek);
 * report drains it all at once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmscope/recording.h"

#define DEFAULT_WINDOW 600

struct replay {
	struct mms_recording *rec;
	uint32_t pos;		/* next interval to feed */
	uint32_t window;	/* intervals the store keeps */
};

static int replay_create(struct mms_source *src, const struct mms_options *opts)
{
	struct replay *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->window = opts && opts->window ? opts->window : DEFAULT_WINDOW;
	src->priv = r;
	return 0;
}

static int replay_prepare(struct mms_source *src)
{
	struct replay *r = src->priv;

	if (!r->rec)
		return mms_source_fail(src, -ENODATA, "replay: no recording opened "
				       "(make this source with mms_replay_open())");
	return 0;
}

static int replay_drain(struct mms_source *src, struct mms_store *st)
{
	int n = mms_replay_step(src, st, UINT32_MAX);

	return n < 0 ? n : 0;
}

static void replay_destroy(struct mms_source *src)
{
	struct replay *r = src->priv;

	if (!r)
		return;
	mms_recording_close(r->rec);
	free(r);
	src->priv = NULL;
}

const struct mms_source_ops mms_replay_ops = {
	.name = "replay",
	.backend = "replay",
	.family = MMS_FAM_LOCK,
	.create = replay_create,
	.prepare = replay_prepare,
	.drain = replay_drain,
	.destroy = replay_destroy,
};

int mms_replay_open(const char *path, const struct mms_options *opts, struct mms_source **out,
		    char *errbuf, size_t errlen)
{
	struct mms_source *src = NULL;
	struct replay *r;
	int err;

	err = mms_source_new(&mms_replay_ops, opts, &src);
	if (err) {
		snprintf(errbuf, errlen, "%s", src && src->why[0] ? src->why : strerror(-err));
		mms_source_destroy(src);
		return err;
	}
	r = src->priv;
	err = mms_recording_open(path, &r->rec, errbuf, errlen);
	if (err) {
		mms_source_destroy(src);
		return err;
	}
	*out = src;
	return 0;
}

struct mms_recording *mms_replay_recording(struct mms_source *src)
{
	return ((struct replay *)src->priv)->rec;
}

const struct mms_rec_info *mms_replay_info(struct mms_source *src)
{
	return mms_recording_info(mms_replay_recording(src));
}

uint32_t mms_replay_count(struct mms_source *src)
{
	return mms_recording_count(mms_replay_recording(src));
}

int mms_replay_time_range(struct mms_source *src, uint64_t *first_ns, uint64_t *end_ns)
{
	struct mms_recording *rec = mms_replay_recording(src);
	uint32_t n = mms_recording_count(rec);
	const struct mms_rec_interval *a, *b;

	if (!n)
		return -ENODATA;
	a = mms_recording_interval(rec, 0);
	b = mms_recording_interval(rec, n - 1);
	*first_ns = a->start_ns;
	*end_ns = b->start_ns + b->dur_ns;
	return 0;
}

uint32_t mms_replay_pos(struct mms_source *src)
{
	return ((struct replay *)src->priv)->pos;
}

int mms_replay_step(struct mms_source *src, struct mms_store *st, uint32_t n)
{
	struct replay *r = src->priv;
	uint32_t count, done = 0;

	if (!r->rec)
		return replay_prepare(src);
	count = mms_recording_count(r->rec);
	while (done < n && r->pos < count && done < INT32_MAX) {
		int err = mms_recording_feed(r->rec, st, r->pos);

		if (err)
			return mms_source_fail(src, err, "replay: interval %u cannot be loaded: %s",
					       r->pos, strerror(-err));
		r->pos++;
		done++;
	}
	return (int)done;
}

/* The old way, for files whose rows may merge when read (see mms_replay_seek()). */
static int refill(struct mms_source *src, struct mms_store *st, uint32_t from, uint32_t idx)
{
	struct replay *r = src->priv;
	int n;

	/* Store seqs then match recording indexes, whatever was played before. */
	mms_store_reset(st, from);
	r->pos = from;
	n = mms_replay_step(src, st, idx + 1 - from);
	return n < 0 ? n : 0;
}

int mms_replay_seek(struct mms_source *src, struct mms_store *st, uint32_t idx)
{
	struct replay *r = src->priv;
	uint32_t count, from;
	int err;

	if (!r->rec)
		return replay_prepare(src);
	count = mms_recording_count(r->rec);
	if (!count)
		return -ENODATA;
	if (idx >= count)
		idx = count - 1;
	if (idx + 1 == r->pos)
		return 0;
	/* One forward is playing on. */
	if (idx == r->pos) {
		err = mms_replay_step(src, st, 1);
		return err < 0 ? err : 0;
	}
	from = idx + 1 > r->window ? idx + 1 - r->window : 0;
	/*
	 * A deferred interval is budgeted for as many rows as the file has.
	 * Rows merge when read only where two references mean the same thing,
	 * which no file mmscope wrote has; references to ids never defined (fed
	 * as 0) are how other files have it, so those are read at once, as
	 * played.  (Any other such file could keep an interval less under a
	 * tight byte budget than playing would.)
	 */
	if (mms_recording_info(r->rec)->dangling)
		return refill(src, st, from, idx);
	/*
	 * Store seqs are recording indexes (a store starts at 0 and seeks keep
	 * it so): what the store has of the new window stays, decoded and
	 * interned; the rest is decoded when a view reads it.
	 */
	mms_store_rewind(st, from, idx);
	for (r->pos = from; r->pos <= idx; r->pos++) {
		err = mms_recording_feed_deferred(r->rec, st, r->pos);
		if (err)
			return mms_source_fail(src, err, "replay: interval %u cannot be loaded: %s",
					       r->pos, strerror(-err));
	}
	return 0;
}

int mms_replay_seek_time(struct mms_source *src, struct mms_store *st, uint64_t ns)
{
	struct replay *r = src->priv;

	if (!r->rec)
		return replay_prepare(src);
	return mms_replay_seek(src, st, mms_recording_find_time(r->rec, ns));
}
