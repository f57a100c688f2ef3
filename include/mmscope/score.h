/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A benchmark's own score, for `record --score REGEX` and `--score-file
 * FILE`: a POSIX extended regex with one capture group matched line by line
 * against the command's standard output (the last match wins), or a number
 * the benchmark wrote into a file.  The result goes into a recording's RUN
 * block (struct mms_rec_run); every failure is a message that says what the
 * output or the file held and what to change.  Used by cmd/cmd_record.c.
 */
#ifndef MMSCOPE_SCORE_H
#define MMSCOPE_SCORE_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "mmscope/recording.h"

/*
 * What --score-default matches: the line every shipped workload ends with,
 * "score: 1234.56 execs/s".  The word after the number is the unit.
 */
#define MMS_SCORE_DEFAULT_REGEX "^score:[[:space:]]*([^[:space:]]+)"

/* Longer output lines are matched on their first MMS_SCORE_LINE - 1 bytes. */
#define MMS_SCORE_LINE 4096

struct mms_score_rx {
	regex_t re;
	char line[MMS_SCORE_LINE];
	size_t len;
	bool overlong;		/* the line passed MMS_SCORE_LINE: its rest is skipped */
	uint64_t lineno, last_line;
	uint32_t matches;
	char last[64];		/* the last match's capture, cut to fit */
	bool last_cut;		/* ... which was longer than that */
	char unit[32];		/* the word after it on its line */
};

/*
 * Compiles regex (ERE).  -EINVAL with a message when it does not compile or
 * has not exactly one capture group.
 */
int mms_score_rx_init(struct mms_score_rx *m, const char *regex, char *err, size_t len);
void mms_score_rx_free(struct mms_score_rx *m);
/* Output as it comes, in any pieces. */
void mms_score_rx_feed(struct mms_score_rx *m, const char *buf, size_t n);
/* The output ended: matches a last line that had no newline. */
void mms_score_rx_end(struct mms_score_rx *m);
/*
 * The score into run (has_score, score, text, matches, unit when run->unit
 * is empty); else -ENOENT (no match) or -EINVAL (not a number) with
 * run->error saying so.  regex is quoted in messages.
 */
int mms_score_rx_result(const struct mms_score_rx *m, const char *regex, struct mms_rec_run *run);

/*
 * A decimal number, all of text but surrounding blanks ("3511.5", "-2e3");
 * not "1,234", "12 ms", "0x1f", "nan".  -EINVAL with why in err.
 */
int mms_score_parse(const char *text, double *v, char *err, size_t len);

/* What --score-file was before the run: a file left from an earlier run is no score. */
struct mms_score_file_before {
	bool existed;
	struct stat st;
};
void mms_score_file_note(const char *path, struct mms_score_file_before *b);
/* Reads the number the benchmark wrote to path into run, as _rx_result. */
int mms_score_file_result(const char *path, const struct mms_score_file_before *b,
			  struct mms_rec_run *run);

/*
 * One line for people (info, report): "3511.5 lps (Execl Throughput, higher
 * is better; run 2 of 10)", or "none: why".  "" when the run has no RUN block.
 */
void mms_score_describe(char *buf, size_t len, const struct mms_rec_run *run);

/*
 * Copies at most n bytes of s into dst as one line of printable text
 * (control bytes become '?'): for what came from a command or a file.
 */
void mms_score_copy_text(char *dst, size_t cap, const char *s, size_t n);

#endif
