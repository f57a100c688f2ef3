/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Queries over the store: lock waits grouped by lock, caller, task or
 * process over a range of intervals, sorted and filtered; metric totals;
 * per-interval series for sparklines.  Reports, views and compare all use
 * these, so live data and recordings are summarised the same way.
 */
#ifndef MMSCOPE_QUERY_H
#define MMSCOPE_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mmscope/options.h"
#include "mmscope/sample.h"
#include "mmscope/store.h"

enum mms_group {
	MMS_BY_LOCK,	/* lock identity (address + what it is) */
	MMS_BY_CALLER,	/* first frame outside the lock primitives */
	MMS_BY_TASK,	/* thread */
	MMS_BY_PROCESS,	/* tgid */
	MMS_BY_TYPE,	/* lock type (spinlock, rwsem:W ...) */
	MMS_BY_STACK,	/* whole call stack (as perf's BPF mode aggregates); labelled by its caller */
	MMS_BY_CGROUP,	/* the waiting task's cgroup v2 path (perf's --lock-cgroup) */
	MMS_BY_OWNER,	/* the lock's owner when the wait began, and its stack (--lock-owner) */
	MMS_GROUP_NR
};

enum mms_sort {
	MMS_SORT_CONTENDED,
	MMS_SORT_WAIT_TOTAL,
	MMS_SORT_WAIT_MAX,
	MMS_SORT_WAIT_MIN,
	MMS_SORT_AVG_WAIT,
	MMS_SORT_P50,
	MMS_SORT_P99,
	MMS_SORT_NAME,
	MMS_SORT_NR
};

struct mms_row {
	uint64_t key;		/* lock_id, caller ip, task_id, tgid, flags or cgroup string id */
	uint32_t name_id;	/* caller: symbol; otherwise 0 (use mms_query_row_label) */
	uint32_t flags;		/* lock type flags of the (first) wait */
	uint32_t first_lock;	/* a lock / stack / task seen in this row */
	uint32_t first_stack;
	uint32_t first_task;
	uint32_t nr_src;	/* samples merged */
	struct mms_stat wait;
	char label[96];
};

/* MMS_BY_OWNER's row key: the owner's task id and its stack id (0, 0: unknown). */
static inline uint64_t mms_owner_key(const struct mms_lock_sample *s)
{
	return s->owner_id ? (uint64_t)s->owner_id << 32 | s->owner_stack_id : 0;
}

static inline uint32_t mms_owner_task(uint64_t key)
{
	return (uint32_t)(key >> 32);
}

static inline uint32_t mms_owner_stack(uint64_t key)
{
	return (uint32_t)key;
}

struct mms_rows {
	struct mms_row *rows;
	size_t nr;
	size_t cap;
};

struct mms_query {
	enum mms_group by;
	enum mms_sort sort;
	bool ascending;
	uint32_t from;		/* store indexes, inclusive; to < from: empty */
	uint32_t to;
	/* Optional restrictions, all must hold. */
	const char *match;	/* substring of the row label */
	uint64_t lock_id;	/* only this lock (0: all) */
	uint32_t tgid;		/* only this process (0: all) */
	uint32_t stack_skip;	/* frames to skip before the caller; see mms_caller_ip */
	bool stack_per_lock;	/* MMS_BY_STACK: one row per lock and stack (folded --by lock) */
	bool no_sort;		/* rows in first-seen order: for callers that sort them anyway */
	/*
	 * The collection filters again (perf lock contention's -Y, -L, -S,
	 * --tid, -G), so recordings can be narrowed at report time; NULL = none.
	 */
	const struct mms_options *filters;
	/* Optional: lock labels kept from one query to the next (see mms_labels). */
	struct mms_labels *labels;
	/* Rows get an empty label (sparkline series need only numbers); not with match. */
	bool no_labels;
};

/*
 * Lock labels formatted once per lock and reused by later queries: the
 * formatting costs more than grouping a row, and a lock id's label cannot
 * change until the store's epoch moves (then the cache starts over).  A
 * view that queries every interval keeps one; rows read the same either way.
 */
struct mms_labels;

int mms_labels_create(struct mms_labels **out);
void mms_labels_destroy(struct mms_labels *l);

int mms_query_locks(const struct mms_store *st, const struct mms_query *q, struct mms_rows *out);
/*
 * The label mms_query_locks gives a row, for rows queried with no_labels:
 * a caller that needs the labels of only some rows (those on screen) makes
 * just those.  q is the query the rows came from.
 */
void mms_query_row_label(const struct mms_store *st, const struct mms_query *q,
			 struct mms_row *r);
void mms_rows_free(struct mms_rows *r);
void mms_rows_sort(struct mms_rows *r, enum mms_sort sort, bool ascending);
uint64_t mms_row_sort_value(const struct mms_row *row, enum mms_sort sort);

/* One metric summed over [from, to] (all processes, all subs when sub < 0). */
int mms_query_metric(const struct mms_store *st, uint32_t from, uint32_t to, const char *metric,
		     long sub, uint32_t tgid, struct mms_stat *out);

/*
 * Per-interval value of a lock row (by + key) for sparklines: out[i] is the
 * total wait (or count when counts is true) in interval from+i.
 */
int mms_query_series(const struct mms_store *st, const struct mms_query *q, uint64_t key,
		     bool counts, uint64_t *out, uint32_t n);

/* The caller frame of a stack: first frame past stack_skip, as interned symbol id. */
uint32_t mms_stack_caller(const struct mms_stack *s, uint32_t stack_skip, uint64_t *ip);
/* The key of a sample's MMS_BY_CALLER row (its caller and kind of lock); 0: no caller. */
uint64_t mms_caller_key(const struct mms_store *st, const struct mms_lock_sample *s,
			uint32_t stack_skip, uint32_t *name_id);

const char *mms_group_name(enum mms_group g);
int mms_group_parse(const char *s, enum mms_group *g);
const char *mms_sort_name(enum mms_sort s);
int mms_sort_parse(const char *s, enum mms_sort *out);

#endif
