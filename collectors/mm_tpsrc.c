// SPDX-License-Identifier: GPL-2.0
/* The common body of the user-space tracepoint collectors (see mm_tpsrc.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "mm_tpsrc.h"
#include "mmscope/sample.h"
#include "mmscope/source.h"
#include "mmscope/store.h"

/* Per CPU ring: 1 MiB holds ~10k records, several intervals of a busy reclaim. */
#define RING_PAGES 256

int mm_tpsrc_init(struct mm_tpsrc *t, const char *const *names, uint32_t nr_names)
{
	memset(t, 0, sizeof(*t));
	t->names = names;
	t->nr_names = nr_names;
	return mms_tp_reader_create(&t->rd);
}

void mm_tpsrc_finish(struct mm_tpsrc *t)
{
	mms_tp_reader_destroy(t->rd);
	mm_uagg_finish(&t->agg);
	t->rd = NULL;
}

int mm_tpsrc_add(struct mm_tpsrc *t, struct mms_source *src, const char *sys, const char *name,
		 const char *hint, mms_tp_handler fn, void *ctx, struct mms_tp_event **out)
{
	int err = mms_tp_reader_add(t->rd, sys, name, fn, ctx, out);

	if (err == -ENOENT)
		return mms_source_fail(src, err, "tracepoint %s:%s not found (%s)", sys, name,
				       hint);
	if (err == -EACCES || err == -EPERM)
		return mms_source_fail(src, err, "%s: cannot read the format of %s:%s in "
				       "tracefs: %s (run as root)", src->ops->name, sys, name,
				       strerror(-err));
	if (err)
		return mms_source_fail(src, err, "%s: cannot parse the format of %s:%s: %s",
				       src->ops->name, sys, name, strerror(-err));
	return 0;
}

struct tep_format_field *mm_tpsrc_field(struct mms_source *src, const struct mms_tp_event *ev,
					const char *name)
{
	struct tep_format_field *f = mms_tp_field(ev, name);

	if (!f)
		mms_source_fail(src, -EINVAL, "tracepoint %s has no field '%s' (a kernel patch "
				"other than mmscope's? see kernel/)", mms_tp_event_name(ev), name);
	return f;
}

int mm_tpsrc_open(struct mm_tpsrc *t, struct mms_source *src)
{
	int err = mms_tp_reader_filter(t->rd, src->opts);

	if (err)
		return mms_source_fail(src, err, "%s: cannot follow the command's children "
				       "(sched:sched_process_fork): %s; use --no-inherit",
				       src->ops->name, strerror(-err));
	err = mms_tp_reader_open(t->rd, RING_PAGES);
	if (err == -EACCES || err == -EPERM)
		return mms_source_fail(src, err, "%s: perf_event_open on tracepoints failed: %s "
				       "(needs CAP_PERFMON: run as root, or lower "
				       "kernel.perf_event_paranoid)", src->ops->name,
				       strerror(-err));
	if (err)
		return mms_source_fail(src, err, "%s: opening perf rings failed: %s",
				       src->ops->name, strerror(-err));
	return 0;
}

int mm_tpsrc_start(struct mms_source *src)
{
	struct mm_tpsrc *t = src->priv;

	return mms_tp_reader_enable(t->rd);
}

int mm_tpsrc_fd(struct mms_source *src)
{
	struct mm_tpsrc *t = src->priv;

	return mms_tp_reader_fd(t->rd);
}

int mm_tpsrc_poll_in(struct mms_source *src)
{
	struct mm_tpsrc *t = src->priv;
	int n = mms_tp_reader_read(t->rd);

	return n < 0 ? n : 0;
}

static const char *comm_of(void *ctx, uint32_t pid)
{
	return mms_tp_reader_comm(ctx, pid);
}

int mm_tpsrc_drain(struct mms_source *src, struct mms_store *st)
{
	struct mm_tpsrc *t = src->priv;
	int n = mms_tp_reader_read(t->rd);
	uint64_t lost;

	if (n < 0)
		return n;
	lost = mms_tp_reader_take_lost(t->rd);
	if (lost)
		mms_store_add_lost(st, MMS_LOST_RING, lost);
	lost = mms_tp_reader_take_parse_errors(t->rd);
	if (lost)
		mms_store_add_lost(st, MMS_LOST_PARSE, lost);
	return mm_uagg_drain(&t->agg, st, t->names, t->nr_names, comm_of, t->rd);
}

void mm_tpsrc_stop(struct mms_source *src)
{
	struct mm_tpsrc *t = src->priv;

	mms_tp_reader_disable(t->rd);
}
