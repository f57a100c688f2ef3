/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a session is and what it ended up with, as plain data: the facts the
 * header shows (host, kernel, target) and, per metric family, the source in
 * use or why there is none.  The session fills them (session.h); views, the
 * report and recordings read them without seeing the session.
 */
#ifndef MMSCOPE_STATUS_H
#define MMSCOPE_STATUS_H

#include <stdint.h>

#include "mmscope/source.h"	/* enum mms_metric_family: status comes per family */

/* What each family ended up with, for headers, `check` and reports. */
struct mms_family_status {
	const char *source;	/* ops->name of the source in use, or NULL */
	const char *backend;	/* "bpf", "perf", "inferred" ... or NULL */
	/*
	 * When none: why (every candidate's reason).  With a source: what it
	 * cannot measure on this kernel (its note), "" when nothing.
	 */
	char why[256];
	/*
	 * Its source failed while running (a drain error): why, "" while it
	 * works.  The session stops draining it; the other sources go on.
	 */
	char failed[256];
};

struct mms_session_info {
	char host[72];
	char kernel[136];
	char target[128];	/* "system", "pid 42 (stress-ng)", "cmd: sleep 1" */
	uint64_t start_ns;	/* CLOCK_REALTIME */
};

#endif
