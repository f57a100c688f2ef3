// SPDX-License-Identifier: GPL-2.0
/*
 * Tasks: lock waits by thread (tid, process, comm, cgroup).  Enter opens the detail
 * of that thread: the locks it waited on, from where.
 */
#include "lockrows.h"
#include "tasks.h"

static const struct mms_column cols[] = {
	{ "TID", 7, 0, false, true, 3 },
	{ "PID", 7, 0, false, true, 0 },
	{ "COMM", 16, 8, true, true, 0 },
	{ "CGROUP", 18, 6, true, true, 4 },
	{ "CONT/s", 7, 0, false, true, 0 },
	{ "WAIT/s", 7, 0, false, true, 0 },
	{ "AVG", 7, 0, false, true, 0 },
	{ "MAX", 7, 0, false, true, 2 },
	{ "LOCK", 0, 0, true, false, 0 },
	{ "WAIT, LAST MINUTE", 20, 0, true, false, 5 },
};

static const enum lockrows_col kinds[] = {
	LOCKROWS_TID, LOCKROWS_PID, LOCKROWS_NAME, LOCKROWS_CGROUP, LOCKROWS_COUNT, LOCKROWS_WAIT,
	LOCKROWS_AVG, LOCKROWS_MAX, LOCKROWS_LOCK, LOCKROWS_SPARK,
};

static const struct lockrows_cfg cfg = {
	.by = MMS_BY_TASK,
	.cols = cols,
	.kinds = kinds,
	.nr_cols = sizeof(cols) / sizeof(cols[0]),
	.default_sort = 5,
	.focus = MMS_FOCUS_TASK,
	.noun = "tasks",
};

static int tasks_create(void **priv)
{
	return lockrows_create(&cfg, priv);
}

const struct mms_view mms_view_tasks = {
	.name = "Tasks",
	.help = "lock waits by thread: tid, pid, comm, cgroup, rates, a lock it waited on",
	.create = tasks_create,
	.destroy = lockrows_destroy,
	.update = lockrows_update,
	.draw = lockrows_draw,
	.list = lockrows_table,
	.enter = lockrows_enter,
};
