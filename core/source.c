// SPDX-License-Identifier: GPL-2.0
/* Generic source lifecycle wrappers (see include/mmscope/source.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmscope/source.h"

int mms_source_fail(struct mms_source *src, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(src->why, sizeof(src->why), fmt, ap);
	va_end(ap);
	return err;
}

static int checked(struct mms_source *src, int err, const char *what)
{
	if (err < 0 && !src->why[0])
		mms_source_fail(src, err, "%s: %s failed: %s", src->ops->name, what,
				strerror(-err));
	return err;
}

int mms_source_new(const struct mms_source_ops *ops, const struct mms_options *opts,
		   struct mms_source **out)
{
	struct mms_source *src = calloc(1, sizeof(*src));
	int err = 0;

	if (!src)
		return -ENOMEM;
	src->ops = ops;
	src->opts = opts;
	if (ops->create)
		err = checked(src, ops->create(src, opts), "create");
	*out = src;	/* even on failure, so the caller can read why and destroy it */
	return err;
}

int mms_source_prepare(struct mms_source *src)
{
	return src->ops->prepare ? checked(src, src->ops->prepare(src), "prepare") : 0;
}

int mms_source_start(struct mms_source *src)
{
	int err = src->ops->start ? checked(src, src->ops->start(src), "start") : 0;

	if (!err)
		src->started = true;
	return err;
}

int mms_source_fd(struct mms_source *src)
{
	return src->ops->fd ? src->ops->fd(src) : -1;
}

int mms_source_poll_in(struct mms_source *src)
{
	return src->ops->poll_in ? checked(src, src->ops->poll_in(src), "read") : 0;
}

int mms_source_drain(struct mms_source *src, struct mms_store *st)
{
	return src->ops->drain ? checked(src, src->ops->drain(src, st), "drain") : 0;
}

void mms_source_stop(struct mms_source *src)
{
	if (src && src->started && src->ops->stop)
		src->ops->stop(src);
	if (src)
		src->started = false;
}

void mms_source_destroy(struct mms_source *src)
{
	if (!src)
		return;
	mms_source_stop(src);
	if (src->ops->destroy)
		src->ops->destroy(src);
	free(src);
}

const char *mms_family_name(enum mms_metric_family f)
{
	static const char *const names[MMS_FAM_NR] = {
		[MMS_FAM_LOCK] = "lock contention",
		[MMS_FAM_MMAP_LOCK] = "mmap_lock",
		[MMS_FAM_VMA] = "VMA split/merge",
		[MMS_FAM_RMAP] = "try_to_unmap batches",
	};

	return (unsigned int)f < MMS_FAM_NR ? names[f] : "?";
}
