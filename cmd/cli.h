/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Command-line state shared by the commands in cmd/: the parsed options and
 * the per-command extras.  main.c parses; cmd_*.c run, with what they share
 * from cli.c.
 */
#ifndef MMSCOPE_CMD_CLI_H
#define MMSCOPE_CMD_CLI_H

#include <stdbool.h>

#include "mmscope/options.h"
#include "mmscope/query.h"
#include "mmscope/session.h"

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
	uint8_t fields[8];		/* -F: enum mms_field, in order (MMS_F_NR of them at most) */
	int nr_fields;
	bool all_cpus;			/* -a: system-wide, as without a target (perf's -a) */
	/* record */
	const char *output;
	const char *perfetto;		/* export --perfetto OUT.json */
	const char *openmetrics;	/* --openmetrics DIR (live) */
	bool force;
	int runs;			/* --runs N: a series of N runs, 0: one run as -o names it */
	double cooldown_s;		/* --cooldown: pause between runs */
	const char *score_regex;	/* --score REGEX (or --score-default) */
	const char *score_file;		/* --score-file FILE */
	const char *score_name, *score_unit;
	bool score_lower;		/* --score-lower-better */
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
/* How one run went, for the series that ran it (sent back through a pipe). */
struct mms_run_result {
	int ret;		/* the run's exit code */
	int status;		/* the command's exit status, -1: unknown (it was stopped) */
	int quit_sig;		/* the signal that stopped the run, 0: none */
	bool started;		/* the command ran and the recording exists */
	bool has_score;
	bool want_score;	/* --score or --score-file was given */
	double score;
	char unit[32];
	char error[256];	/* why there is no score */
};

/* One run into path (cmd_record.c): run index of count, 0 of 0 alone; an exit code. */
int mms_record_one(struct mms_cli *cli, const char *path, int index, int count,
		   struct mms_run_result *res);
/* `record --runs N` (record_series.c). */
int mms_record_series(struct mms_cli *cli);
int mms_cmd_replay(struct mms_cli *cli);
int mms_cmd_info(struct mms_cli *cli);
int mms_cmd_compare(struct mms_cli *cli);
int mms_cmd_export(struct mms_cli *cli);
struct mms_compare;
/* The compare view in the TUI (`compare --tui`). */
int mms_cmd_compare_tui(struct mms_cli *cli, const struct mms_compare *c);

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
/*
 * "mmscope: MESSAGE" on stderr, each line through the escaping every text
 * output uses: messages carry paths, names and strings from recordings.
 */
void mms_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Why mms_session_start() failed with e, in buf: the session's own words
 * (err, when it gave some), that the command could not run, or that
 * collecting could not start.  Returns the exit status: 127 for a command
 * that could not run (as a shell says it), MMS_EXIT_FAIL otherwise.
 */
int mms_cli_start_failed(const struct mms_cli *cli, int e, const char *err, char *buf,
			 size_t len);

/*
 * A live command may run here (mms_privileges_check): 0, or MMS_EXIT_NOPERM
 * with what is missing and what to do instead printed.
 */
static inline int mms_cli_require_privileges(const char *what)
{
	char why[512];

	if (!mms_privileges_check(what, why, sizeof(why)))
		return 0;
	mms_cli_error("%s", why);
	return MMS_EXIT_NOPERM;
}

#endif
