// SPDX-License-Identifier: GPL-2.0
/*
 * The benchmark's score (core/score.c): regexes that cannot work, output
 * with no match, several matches (the last wins), captures that are not
 * numbers, lines split across reads, hostile bytes, and --score-file
 * (missing, left from before the run, not a number).  Every failure must say
 * what the output held.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "mmscope/score.h"

/* Feeds text in pieces of step bytes, ends the output, takes the result. */
static int score_of(const char *regex, const char *text, size_t step, struct mms_rec_run *run)
{
	struct mms_score_rx m;
	char err[256];
	size_t n = strlen(text);

	memset(run, 0, sizeof(*run));
	assert_int_equal(mms_score_rx_init(&m, regex, err, sizeof(err)), 0);
	for (size_t o = 0; o < n; o += step)
		mms_score_rx_feed(&m, text + o, n - o < step ? n - o : step);
	mms_score_rx_end(&m);
	n = (size_t)mms_score_rx_result(&m, regex, run);
	mms_score_rx_free(&m);
	return (int)n;
}

static void test_bad_regex(void **state)
{
	struct mms_score_rx m;
	char err[512];

	(void)state;
	assert_int_equal(mms_score_rx_init(&m, "Throughput ([0-9.]+", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a valid extended regular expression"));
	assert_non_null(strstr(err, "Throughput ([0-9.]+"));
	assert_int_equal(mms_score_rx_init(&m, "Throughput [0-9.]+", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "has 0 capture groups; it needs exactly one"));
	assert_int_equal(mms_score_rx_init(&m, "(Through)put ([0-9.]+)", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "has 2 capture groups"));
	assert_non_null(strstr(err, "drop the others"));
	assert_int_equal(mms_score_rx_init(&m, MMS_SCORE_DEFAULT_REGEX, err, sizeof(err)), 0);
	mms_score_rx_free(&m);
}

static void test_no_match(void **state)
{
	struct mms_rec_run run;

	(void)state;
	assert_int_equal(score_of("Execl Throughput +([0-9.]+)", "hello\nExecl: 12\n", 100, &run),
			 -ENOENT);
	assert_false(run.has_score);
	assert_int_equal(run.matches, 0);
	assert_non_null(strstr(run.error, "no line of the command's output matched "
			       "'Execl Throughput +([0-9.]+)' (2 lines read)"));
	/* No output at all. */
	assert_int_equal(score_of(MMS_SCORE_DEFAULT_REGEX, "", 1, &run), -ENOENT);
	assert_non_null(strstr(run.error, "(0 lines read)"));
}

static void test_last_match_wins(void **state)
{
	const char *out = "score: 1.5 execs/s\nnoise\nscore: 2.25 execs/s\n"
			  "score: 3511.5 lps (29.9 s)\ndone\n";
	struct mms_rec_run run;

	(void)state;
	/* The same whichever way the output is cut into reads. */
	for (size_t step = 1; step <= strlen(out); step += 7) {
		assert_int_equal(score_of(MMS_SCORE_DEFAULT_REGEX, out, step, &run), 0);
		assert_true(run.has_score);
		assert_true(run.score == 3511.5);
		assert_string_equal(run.text, "3511.5");
		assert_int_equal(run.matches, 3);
		assert_string_equal(run.unit, "lps");	/* the word after the number */
	}
	/* Several matches on one line: still the last. */
	assert_int_equal(score_of("n=([0-9]+)", "n=1 n=2 n=3", 4, &run), 0);
	assert_true(run.score == 3);
	assert_int_equal(run.matches, 3);
	/* A last line without a newline counts; a given unit is kept. */
	memset(&run, 0, sizeof(run));
	strcpy(run.unit, "jobs/min");
	{
		struct mms_score_rx m;
		char err[128];

		assert_int_equal(mms_score_rx_init(&m, "jobs ([0-9.]+)", err, sizeof(err)), 0);
		mms_score_rx_feed(&m, "jobs 7.5 widgets", 16);
		mms_score_rx_end(&m);
		assert_int_equal(mms_score_rx_result(&m, "jobs ([0-9.]+)", &run), 0);
		mms_score_rx_free(&m);
	}
	assert_true(run.score == 7.5);
	assert_string_equal(run.unit, "jobs/min");
}

static void test_not_a_number(void **state)
{
	struct mms_rec_run run;
	double v;
	char err[160];

	(void)state;
	/* The last match counts, even when an earlier one was a number. */
	assert_int_equal(score_of(MMS_SCORE_DEFAULT_REGEX, "score: 12\nscore: 1,234 x\n", 5, &run),
			 -EINVAL);
	assert_false(run.has_score);
	assert_non_null(strstr(run.error, "line 2 (the last of 2 matches): '1,234' is not a "
			       "number"));
	assert_non_null(strstr(run.error, "no thousands separators"));
	assert_int_equal(score_of(MMS_SCORE_DEFAULT_REGEX, "score: nan\n", 64, &run), -EINVAL);
	assert_non_null(strstr(run.error, "'nan' is not a number"));
	assert_int_equal(score_of("t=([^ ]*)", "t= x\n", 64, &run), -EINVAL);
	assert_non_null(strstr(run.error, "it is empty"));
	/* Control bytes from the output never reach the message. */
	assert_int_equal(score_of(MMS_SCORE_DEFAULT_REGEX, "score: \033[2J12\n", 64, &run),
			 -EINVAL);
	assert_null(strchr(run.error, '\033'));
	/* A capture too long for a number is said, not cut into one. */
	assert_int_equal(score_of("v=([0-9]+)", "v=1234567890123456789012345678901234567890"
				  "12345678901234567890123456789\n", 64, &run), -EINVAL);
	assert_non_null(strstr(run.error, "too long for a number"));

	assert_int_equal(mms_score_parse(" -2.5e3\t", &v, err, sizeof(err)), 0);
	assert_true(v == -2500);
	assert_int_equal(mms_score_parse("0x1f", &v, err, sizeof(err)), -EINVAL);
	assert_int_equal(mms_score_parse("12 ms", &v, err, sizeof(err)), -EINVAL);
	assert_int_equal(mms_score_parse("1e999", &v, err, sizeof(err)), -EINVAL);
	assert_int_equal(mms_score_parse("1.2.3", &v, err, sizeof(err)), -EINVAL);
}

static void test_long_lines(void **state)
{
	size_t n = 3 * MMS_SCORE_LINE;
	char *out = malloc(n + 64);
	struct mms_rec_run run;

	(void)state;
	/* A huge line costs no memory and does not hide the next line's score. */
	memset(out, 'x', n);
	strcpy(out + n, "\nscore: 42 u\n");
	assert_int_equal(score_of(MMS_SCORE_DEFAULT_REGEX, out, 1000, &run), 0);
	assert_true(run.score == 42);
	assert_int_equal(run.matches, 1);
	free(out);
}

static void write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
	close(fd);
}

static void test_score_file(void **state)
{
	char path[] = "/var/tmp/mmscope-score-XXXXXX";
	struct mms_score_file_before before;
	struct mms_rec_run run = { 0 };
	struct timespec ts[2];
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	/* Never written. */
	mms_score_file_note(path, &before);
	assert_int_equal(mms_score_file_result(path, &before, &run), -ENOENT);
	assert_non_null(strstr(run.error, "the benchmark did not write it"));
	/* Written during the run. */
	write_file(path, "  812.25\n");
	memset(&run, 0, sizeof(run));
	assert_int_equal(mms_score_file_result(path, &before, &run), 0);
	assert_true(run.has_score && run.score == 812.25);
	assert_string_equal(run.text, "812.25");
	/* The next run did not write it: what it holds is the last run's. */
	mms_score_file_note(path, &before);
	memset(&run, 0, sizeof(run));
	assert_int_equal(mms_score_file_result(path, &before, &run), -ENOENT);
	assert_non_null(strstr(run.error, "was not written during the run"));
	/* Rewritten with the same size but not a number. */
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec += 5;
	ts[1] = ts[0];
	write_file(path, "812.2x\n");
	utimensat(AT_FDCWD, path, ts, 0);
	memset(&run, 0, sizeof(run));
	assert_int_equal(mms_score_file_result(path, &before, &run), -EINVAL);
	assert_non_null(strstr(run.error, "'812.2x' is not a number"));
	unlink(path);
	/* Not a regular file. */
	assert_int_equal(mkdir(path, 0700), 0);
	mms_score_file_note("/nonexistent-mmscope", &before);
	memset(&run, 0, sizeof(run));
	assert_true(mms_score_file_result(path, &before, &run) < 0);
	rmdir(path);
}

static void test_describe(void **state)
{
	struct mms_rec_run run = { .present = true, .index = 2, .count = 10, .has_score = true,
				   .score = 3511.5, .matches = 3 };
	char buf[512];

	(void)state;
	strcpy(run.text, "3511.5");
	strcpy(run.unit, "lps");
	strcpy(run.name, "Execl Throughput");
	mms_score_describe(buf, sizeof(buf), &run);
	assert_string_equal(buf, "3511.5 lps (Execl Throughput, higher is better; run 2 of 10; "
			    "the last of the lines that matched)");
	run.has_score = false;
	strcpy(run.error, "no line matched");
	mms_score_describe(buf, sizeof(buf), &run);
	assert_string_equal(buf, "none: no line matched; run 2 of 10");
	run.present = false;
	mms_score_describe(buf, sizeof(buf), &run);
	assert_string_equal(buf, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_regex),
		cmocka_unit_test(test_no_match),
		cmocka_unit_test(test_last_match_wins),
		cmocka_unit_test(test_not_a_number),
		cmocka_unit_test(test_long_lines),
		cmocka_unit_test(test_score_file),
		cmocka_unit_test(test_describe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
