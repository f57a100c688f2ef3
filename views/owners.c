// SPDX-License-Identifier: GPL-2.0
/*
 * Owners: lock waits by the task that held the lock when each wait began
 * (--lock-owner, the BPF lock source), and where it held it: the first frame
 * of its stack, taken while it slept or at its own contended acquisition.
 */
#include "lockrows.h"
#include "owners.h"

static const struct mms_column cols[] = {
	{ "TID", 7, 0, false, true, 3 },
	{ "PID", 7, 0, false, true, 4 },
	{ "OWNER", 16, 8, true, true, 0 },
	{ "HELD AT", 26, 12, true, true, 0 },
	{ "CONT/s", 7, 0, false, true, 0 },
	{ "WAIT/s", 7, 0, false, true, 0 },
	{ "AVG", 7, 0, false, true, 0 },
	{ "MAX", 7, 0, false, true, 2 },
	{ "LOCK", 0, 0, true, false, 0 },
	{ "WAIT, LAST MINUTE", 20, 0, true, false, 5 },
};

static const enum lockrows_col kinds[] = {
	LOCKROWS_TID, LOCKROWS_PID, LOCKROWS_NAME, LOCKROWS_HELD, LOCKROWS_COUNT, LOCKROWS_WAIT,
	LOCKROWS_AVG, LOCKROWS_MAX, LOCKROWS_LOCK, LOCKROWS_SPARK,
};

static const struct lockrows_cfg cfg = {
	.by = MMS_BY_OWNER,
	.cols = cols,
	.kinds = kinds,
	.nr_cols = sizeof(cols) / sizeof(cols[0]),
	.default_sort = 5,
	.focus = MMS_FOCUS_NONE,
	.noun = "owners",
	.note = "(owner unknown: readers, spinlocks, or no --lock-owner)",
};

static int owners_create(void **priv)
{
	return lockrows_create(&cfg, priv);
}

const struct mms_view mms_view_owners = {
	.name = "Owners",
	.help = "lock waits by the task that held the lock (--lock-owner) and where it held it",
	.create = owners_create,
	.destroy = lockrows_destroy,
	.update = lockrows_update,
	.draw = lockrows_draw,
	.list = lockrows_table,
	.enter = lockrows_enter,
};
