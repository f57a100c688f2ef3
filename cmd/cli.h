/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Command-line state shared by the commands in cmd/: the parsed options and
 * the per-command extras.  main.c parses; cmd_*.c run.
 */
#ifndef MMSCOPE_CMD_CLI_H
#define MMSCOPE_CMD_CLI_H

#include <stdbool.h>

#include "mmscope/options.h"
#include "mmscope/query.h"

/* Exit codes users can script against. */
enum {
	MMS_EXIT_OK = 0,
	MMS_EXIT_FAIL = 1,	/* runtime failure */
	MMS_EXIT_USAGE = 2,	/* bad command line */
	MMS_EXIT_NOPERM = 77,	/* missing privileges (sysexits EX_NOPERM) */
};

enum mms_out_fmt { MMS_OUT_TEXT, MMS_OUT_JSON, MMS_OUT_CSV, MMS_OUT_FOLDED };

struct mms_cli {
	struct mms_options opts;
	const char *cmd;		/* "tui", "report", "record", ... */
	/* report / compare */
	enum mms_group by;
	enum mms_sort sort;
	bool sort_given;
	int entries;			/* -E: rows printed, 0 = all */
	bool stacks;
	enum mms_out_fmt fmt;
	const char *sep;		/* -x */
	bool percentiles;
	/* record */
	const char *output;
	const char *perfetto;		/* export --perfetto OUT.json */
	const char *openmetrics;	/* --openmetrics DIR (live) */
	bool force;
	/* files: report FILE, replay FILE, info FILE, compare A... -- B... */
	char **files;
	int nr_files;
	char **files_b;
	int nr_files_b;
	const char *base_name, *new_name;
	bool compare_tui;
	const char *metrics;		/* compare -k list */
};

int mms_cmd_tui(struct mms_cli *cli);
int mms_cmd_check(struct mms_cli *cli);
int mms_cmd_report(struct mms_cli *cli);
int mms_cmd_record(struct mms_cli *cli);
int mms_cmd_replay(struct mms_cli *cli);
int mms_cmd_info(struct mms_cli *cli);
int mms_cmd_compare(struct mms_cli *cli);
int mms_cmd_export(struct mms_cli *cli);
struct mms_compare;
/* The compare view in the TUI (`compare --tui`). */
int mms_cmd_compare_tui(struct mms_cli *cli, const struct mms_compare *c);

/*
 * Checks CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN); prints what is missing
 * and what to do instead.  Returns 0 or MMS_EXIT_NOPERM.
 */
int mms_require_privileges(const char *what);
/*
 * --openmetrics DIR for a live command: adds the metrics file's tap to s (nothing when the
 * option was not given); 0, or -errno with the message printed.  _end prints what went
 * wrong while writing, if anything, and frees it: after mms_session_destroy().
 */
struct mms_openmetrics;
struct mms_session;
int mms_cli_openmetrics(const struct mms_cli *cli, struct mms_session *s,
			struct mms_openmetrics **om);
void mms_cli_openmetrics_end(struct mms_openmetrics *om);

#endif
