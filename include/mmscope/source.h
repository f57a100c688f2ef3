/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The source interface.  A source turns one kernel facility (or a recording)
 * into samples in the store.  Lifecycle, as perf's lock-contention does it:
 *
 *   create(opts)   allocate, check options           (no kernel state yet)
 *   prepare()      open/load everything; fails with a reason for `check`
 *   start()        attach/enable
 *   fd()           descriptor to poll (-1: none); poll_in() when readable
 *   drain()        move everything since the last drain into the interval
 *                  being built in the store
 *   stop()         detach/disable (drain still works afterwards)
 *   destroy()      free everything; destroy(NULL) is a no-op
 *
 * Every failure returns -errno and leaves a human sentence in src->why.
 */
#ifndef MMSCOPE_SOURCE_H
#define MMSCOPE_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mmscope/options.h"

struct mms_store;
struct mms_source;

/* What a source measures; the header and `check` list these. */
enum mms_metric_family {
	MMS_FAM_LOCK,		/* lock contention waits */
	MMS_FAM_MMAP_LOCK,	/* mmap_lock acquisitions and hold times */
	MMS_FAM_VMA,		/* VMA split / merge / expand / shrink */
	MMS_FAM_RMAP,		/* try_to_unmap batch sizes */
	MMS_FAM_NR
};

/* A family's reason when the options left every one of its sources out. */
#define MMS_WHY_OFF "switched off"

/*
 * mmap_lock with its hold-time source switched off still shows waits: they
 * come from the lock contention source (has_lock).  why: the family's reason.
 */
static inline bool mms_mmap_waits_only(enum mms_metric_family f, bool has_lock, const char *why)
{
	return f == MMS_FAM_MMAP_LOCK && has_lock &&
	       !strncmp(why, MMS_WHY_OFF, sizeof(MMS_WHY_OFF) - 1);
}

struct mms_source_ops {
	const char *name;	/* "lock-bpf", "lock-perf", "vma-inferred" ... */
	const char *backend;	/* "bpf", "perf", "tracepoint", "fentry", "inferred", "replay" */
	enum mms_metric_family family;
	int (*create)(struct mms_source *src, const struct mms_options *opts);
	int (*prepare)(struct mms_source *src);
	int (*start)(struct mms_source *src);
	int (*fd)(struct mms_source *src);
	int (*poll_in)(struct mms_source *src);
	int (*drain)(struct mms_source *src, struct mms_store *st);
	void (*stop)(struct mms_source *src);
	void (*destroy)(struct mms_source *src);
};

struct mms_source {
	const struct mms_source_ops *ops;
	const struct mms_options *opts;
	void *priv;
	bool started;
	char why[256];		/* last failure, for users */
	/*
	 * Set by a source that works but cannot measure part of its family on
	 * this kernel: what is missing and why ("" when nothing is).  The
	 * session keeps it as the family's why, so check, reports and
	 * recordings say it instead of showing zeros.
	 */
	char note[256];
};

/* Generic wrappers: they fill src->why where an op did not. */
int mms_source_new(const struct mms_source_ops *ops, const struct mms_options *opts,
		   struct mms_source **out);
int mms_source_prepare(struct mms_source *src);
int mms_source_start(struct mms_source *src);
int mms_source_fd(struct mms_source *src);
int mms_source_poll_in(struct mms_source *src);
int mms_source_drain(struct mms_source *src, struct mms_store *st);
void mms_source_stop(struct mms_source *src);
void mms_source_destroy(struct mms_source *src);
/* printf into src->why; returns err so callers can `return mms_source_fail(...)`. */
int mms_source_fail(struct mms_source *src, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

const char *mms_family_name(enum mms_metric_family f);

#endif
