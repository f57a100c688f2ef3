/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Exports for other tools, written from the store like a report, so they work the same
 * on live data, recordings and captures: a Chrome JSON trace for ui.perfetto.dev and
 * chrome://tracing (`mmscope export --perfetto`).  The OpenMetrics text file for
 * node_exporter is a tap on committed intervals instead (openmetrics.h).
 */
#ifndef MMSCOPE_EXPORT_H
#define MMSCOPE_EXPORT_H

#include <stdint.h>
#include <stdio.h>

#include "mmscope/store.h"

struct mms_export_meta {
	const char *host;
	const char *kernel;
	const char *target;
	const char *source_name;	/* the recording's file name, or NULL */
};

/*
 * Counter tracks per interval (contentions/s and wait/s of the top locks, mmap_lock
 * waits per process, VMA and rmap rates, lost events) and instant events (the target
 * exited), timestamps in microseconds from the first interval's start.  top: how many
 * locks and processes get tracks of their own (the rest are summed into "other").
 * 0 or -errno (-EIO when f failed).
 */
int mms_export_perfetto(FILE *f, const struct mms_store *st, const struct mms_export_meta *m,
			unsigned int top);

#endif
