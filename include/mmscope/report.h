/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Contention reports from the store: perf lock contention's text layout,
 * JSON and CSV, plus the mm metrics (mmap_lock, VMA, rmap) and the lost
 * events.  `mmscope report` prints these for live runs and recordings
 * alike; nothing here knows where the intervals came from.
 */
#ifndef MMSCOPE_REPORT_H
#define MMSCOPE_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mmscope/query.h"
#include "mmscope/recording.h"
#include "mmscope/source.h"
#include "mmscope/store.h"

/*
 * FOLDED: one "frame;frame;frame VALUE" line per call stack, outermost frame first, for
 * flamegraph.pl, inferno and speedscope: VALUE is the wait in ns, or the contentions with
 * sort MMS_SORT_CONTENDED; by MMS_BY_LOCK puts the lock's name in as the root frame.
 */
enum mms_report_fmt { MMS_REPORT_TEXT, MMS_REPORT_JSON, MMS_REPORT_CSV, MMS_REPORT_FOLDED };

/* Statistic columns of the text and CSV tables (perf lock contention -F). */
enum mms_field {
	MMS_F_CONTENDED,
	MMS_F_WAIT_TOTAL,
	MMS_F_WAIT_MAX,
	MMS_F_WAIT_MIN,
	MMS_F_AVG_WAIT,
	MMS_F_P50,
	MMS_F_P99,
	MMS_F_NR
};

/*
 * Parses a -F list ("contended,wait_total,avg_wait") into out, in the given
 * order; returns how many, or -EINVAL (unknown or repeated name; the name in
 * bad, when not NULL).
 */
int mms_report_fields_parse(const char *list, uint8_t out[MMS_F_NR], const char **bad,
			    size_t *bad_len);

struct mms_report_opts {
	enum mms_group by;
	enum mms_sort sort;
	int entries;		/* rows printed, 0 = all */
	bool stacks;
	bool percentiles;
	enum mms_report_fmt fmt;
	const char *sep;	/* CSV separator, default "," */
	/* -F: columns in this order (nr_fields 0: the default ones, p50/p99 with percentiles). */
	uint8_t fields[MMS_F_NR];
	int nr_fields;
	const struct mms_options *filters;	/* -Y/-L/-S/-p/--tid again, or NULL */
};

struct mms_report_meta {
	const char *host;
	const char *kernel;
	const char *target;
	uint64_t start_ns;	/* CLOCK_REALTIME of the first interval */
	const char *fam_source[MMS_FAM_NR];	/* source used, NULL: none */
	const char *fam_backend[MMS_FAM_NR];
	const char *fam_why[MMS_FAM_NR];	/* why none; with a source: its note, or NULL */
	const char *fam_failed[MMS_FAM_NR];	/* why its source failed mid-run, or NULL */
	const char *message;	/* "process 42 exited", or NULL */
	uint64_t evicted;	/* intervals that fell out of the store */
	const struct mms_rec_run *run;	/* a recording's run and score, or NULL */
};

/*
 * A recording's run and score as a JSON object ("null" without a RUN block),
 * for report --json and info --json.
 */
void mms_report_run_json(FILE *f, const struct mms_rec_run *run);

/* Prints the report over every interval in the store. */
int mms_report_print(FILE *f, const struct mms_store *st, const struct mms_report_opts *o,
		     const struct mms_report_meta *m);

#endif
