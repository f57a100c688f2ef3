/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lock-wait table behind Locks, Callers, Tasks and Owners: the same rows
 * (mms_query_locks grouped one way), columns chosen per view.  Each of those
 * views is a configuration of this plus its class table.
 */
#ifndef MMSCOPE_VIEWS_LOCKROWS_H
#define MMSCOPE_VIEWS_LOCKROWS_H

#include "mmscope/query.h"
#include "mmscope/view.h"

enum lockrows_col {
	LOCKROWS_NAME,	/* the row's label: lock name, caller symbol, comm */
	LOCKROWS_TYPE,	/* lock type of the first wait */
	LOCKROWS_TID,
	LOCKROWS_PID,
	LOCKROWS_CGROUP,	/* the task's cgroup v2 path (tasks) */
	LOCKROWS_LOCK,	/* a lock this row waited on (callers, tasks) */
	LOCKROWS_COUNT,	/* contentions per second */
	LOCKROWS_WAIT,	/* wait per second */
	LOCKROWS_AVG,
	LOCKROWS_MAX,
	LOCKROWS_P99,
	LOCKROWS_SPARK,	/* wait per second over the last minute */
	LOCKROWS_HELD,	/* owners: the first frame of the owner's stack */
};

struct lockrows_cfg {
	enum mms_group by;
	const struct mms_column *cols;
	const enum lockrows_col *kinds;
	int nr_cols;
	int default_sort;		/* column index */
	enum mms_focus_kind focus;	/* what Enter drills into */
	const char *noun;		/* "locks", "callers", "tasks" */
	const char *note;		/* after the counts on the header line, or NULL */
};

int lockrows_create(const struct lockrows_cfg *cfg, void **priv);
void lockrows_destroy(void *priv);
int lockrows_update(void *priv, const struct mms_view_env *env);
void lockrows_draw(void *priv, const struct mms_view_env *env, struct mms_canvas *c, int y,
		   int h);
struct mms_list *lockrows_table(void *priv);
bool lockrows_enter(void *priv, struct mms_focus *out);

#endif
