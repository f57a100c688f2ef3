// SPDX-License-Identifier: GPL-2.0
/*
 * Callers: lock waits by the caller (the first frame past the lock
 * primitives, as perf lock contention's default), with a lock it waited on.
 * Enter opens the detail of that caller: its stacks, tasks and locks.
 */
#include "callers.h"
#include "lockrows.h"

static const struct mms_column cols[] = {
	{ "CONT/s", 7, 0, false, true, 0 },
	{ "WAIT/s", 7, 0, false, true, 0 },
	{ "AVG", 7, 0, false, true, 0 },
	{ "MAX", 7, 0, false, true, 2 },
	{ "P99", 7, 0, false, true, 3 },
	{ "CALLER", 0, 12, true, true, 0 },
	{ "LOCK", 24, 0, true, false, 4 },
	{ "WAIT, LAST MINUTE", 20, 0, true, false, 5 },
};

static const enum lockrows_col kinds[] = {
	LOCKROWS_COUNT, LOCKROWS_WAIT, LOCKROWS_AVG, LOCKROWS_MAX, LOCKROWS_P99, LOCKROWS_NAME,
	LOCKROWS_LOCK, LOCKROWS_SPARK,
};

static const struct lockrows_cfg cfg = {
	.by = MMS_BY_CALLER,
	.cols = cols,
	.kinds = kinds,
	.nr_cols = sizeof(cols) / sizeof(cols[0]),
	.default_sort = 1,
	.focus = MMS_FOCUS_CALLER,
	.noun = "callers",
};

static int callers_create(void **priv)
{
	return lockrows_create(&cfg, priv);
}

const struct mms_view mms_view_callers = {
	.name = "Callers",
	.help = "lock waits by calling function (function+offset), with a lock each waited on",
	.create = callers_create,
	.destroy = lockrows_destroy,
	.update = lockrows_update,
	.draw = lockrows_draw,
	.list = lockrows_table,
	.enter = lockrows_enter,
};
