/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A metrics file for Prometheus' node_exporter textfile collector (`--openmetrics DIR`):
 * after every committed interval, DIR/mmscope.prom is written anew (a temporary file in
 * DIR renamed over it, so a scrape never reads half a file) with counters summed since
 * mmscope started: contentions and wait seconds per lock, mmap_lock waits per process,
 * VMA operations, rmap removals, lost events.  Labels are names, never pids or addresses,
 * so a series keeps its identity across restarts and hosts; each family keeps at most
 * MMS_OM_MAX_SERIES series and sums the rest under the label value "other".
 *
 * A tap like the recorder (session/session_record.c adds it for record, report and the TUI);
 * it reads only the committed interval and the store's names.
 */
#ifndef MMSCOPE_OPENMETRICS_H
#define MMSCOPE_OPENMETRICS_H

#include <stddef.h>

#include "mmscope/store.h"

#define MMS_OM_FILE "mmscope.prom"
#define MMS_OM_MAX_SERIES 500

struct mms_openmetrics;

struct mms_om_meta {
	const char *host;
	const char *kernel;
	const char *target;
};

/* Opens DIR (a directory, not through a symlink); 0 or -errno with a message in errbuf. */
int mms_openmetrics_create(const char *dir, const struct mms_om_meta *meta,
			   struct mms_openmetrics **out, char *errbuf, size_t errlen);
/* Adds the interval to the counters and rewrites the file; 0 or -errno (then see error). */
int mms_openmetrics_write(struct mms_openmetrics *om, const struct mms_store *st,
			  const struct mms_interval *iv);
/* The first write error, "" when none. */
const char *mms_openmetrics_error(const struct mms_openmetrics *om);
/* Files written so far. */
unsigned long mms_openmetrics_writes(const struct mms_openmetrics *om);
void mms_openmetrics_destroy(struct mms_openmetrics *om);

#endif
