// SPDX-License-Identifier: GPL-2.0
/*
 * Locks: one row per named lock (mmap_lock of a process, i_mmap_rwsem of a
 * file, a static lock, a slab cache ...) with its contention rate, wait per
 * second, average, max, p99 and a sparkline of its wait over the last minute.
 * Enter opens Lock detail.
 */
#include "locks.h"
#include "lockrows.h"

static const struct mms_column cols[] = {
	{ "CONT/s", 7, 0, false, true, 0 },
	{ "WAIT/s", 7, 0, false, true, 0 },
	{ "AVG", 7, 0, false, true, 0 },
	{ "MAX", 7, 0, false, true, 2 },
	{ "P99", 7, 0, false, true, 3 },
	{ "TYPE", 9, 0, true, true, 4 },
	{ "LOCK", 0, 12, true, true, 0 },
	{ "WAIT, LAST MINUTE", 20, 0, true, false, 5 },
};

static const enum lockrows_col kinds[] = {
	LOCKROWS_COUNT, LOCKROWS_WAIT, LOCKROWS_AVG, LOCKROWS_MAX, LOCKROWS_P99, LOCKROWS_TYPE,
	LOCKROWS_NAME, LOCKROWS_SPARK,
};

static const struct lockrows_cfg cfg = {
	.by = MMS_BY_LOCK,
	.cols = cols,
	.kinds = kinds,
	.nr_cols = sizeof(cols) / sizeof(cols[0]),
	.default_sort = 1,
	.focus = MMS_FOCUS_LOCK,
	.noun = "locks",
};

static int locks_create(void **priv)
{
	return lockrows_create(&cfg, priv);
}

const struct mms_view mms_view_locks = {
	.name = "Locks",
	.help = "one row per named lock: contentions/s, wait/s, avg, max, p99, last minute",
	.create = locks_create,
	.destroy = lockrows_destroy,
	.update = lockrows_update,
	.draw = lockrows_draw,
	.list = lockrows_table,
	.enter = lockrows_enter,
};
