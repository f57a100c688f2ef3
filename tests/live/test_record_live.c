// SPDX-License-Identifier: GPL-2.0
/*
 * Live test: what is recorded is exactly what was shown.  One real session
 * (live collectors, a contending workload launched as its command) with two
 * taps: the recorder, and a tap that keeps every committed interval as text
 * with its ids resolved through the session's store.  The recording, read
 * back into a fresh store, must give the same text for every interval:
 * lock names, stacks and symbols, tasks, every statistic and histogram slot,
 * lost counters, start, duration and flags.
 *
 *   test_record_live MMAP_CHURN
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "mmscope/recording.h"
#include "mmscope/session.h"
#include "../unit/rec_dump.h"

#define MAX_IV 256

static char *churn;

struct shown {
	int n;
	char *dumps[MAX_IV];
	uint64_t rows;
};

static void show_tap(void *ctx, struct mms_session *s, const struct mms_interval *iv)
{
	struct shown *sh = ctx;

	if (sh->n < MAX_IV)
		sh->dumps[sh->n++] = dump(mms_session_store(s), iv);
	sh->rows += iv->n_locks + iv->n_metrics;
}

static void test_recorded_equals_shown(void **state)
{
	char *argv[] = { churn, "-t", "4", "-p", "16", "-s", "3", NULL };
	char dir[] = "/tmp/mmscope-reclive-XXXXXX", path[128], err[512];
	struct mms_store_opts so = { .window = MAX_IV };
	struct shown sh = { 0 };
	struct mms_recording *rec;
	struct mms_recorder *r;
	struct mms_session *s;
	struct mms_options o;
	struct mms_store *st;
	int e;

	(void)state;
	if (geteuid()) {
		fprintf(stderr, "SKIP: needs root (BPF, tracepoints)\n");
		exit(77);
	}
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/live.mmscope", dir);
	mms_options_init(&o);
	o.interval_ms = 250;
	o.cmd = argv;
	assert_int_equal(mms_session_create(&o, &s), 0);
	e = mms_session_open(s, err, sizeof(err));
	if (e == -ENOTSUP) {
		fprintf(stderr, "SKIP: %s\n", err);
		exit(77);
	}
	assert_int_equal(e, 0);
	assert_int_equal(mms_recorder_create_session(path, s, 0, &r, err, sizeof(err)), 0);
	mms_session_add_tap(s, mms_recorder_tap, r);
	mms_session_add_tap(s, show_tap, &sh);
	assert_int_equal(mms_session_start(s, NULL, 0), 0);
	assert_int_equal(mms_session_run(s), 0);
	assert_int_equal(mms_session_child_status(s), 0);
	assert_int_equal(mms_recorder_close(r, ""), 0);
	assert_string_equal(mms_recorder_error(r), "");
	assert_int_equal(mms_recorder_intervals(r), sh.n);
	mms_recorder_destroy(r);
	mms_session_destroy(s);

	/* At least 3 s at 250 ms, with real contention in it. */
	assert_true(sh.n >= 10);
	assert_true(sh.rows > 0);
	assert_int_equal(mms_recording_open(path, &rec, err, sizeof(err)), 0);
	assert_int_equal(mms_recording_count(rec), sh.n);
	assert_true(mms_recording_info(rec)->closed);
	assert_false(mms_recording_info(rec)->damaged);
	assert_int_equal(mms_recording_info(rec)->dangling, 0);
	assert_int_equal(mms_recording_info(rec)->target_exited, 1);
	assert_int_equal(mms_store_create(&so, &st), 0);
	for (int i = 0; i < sh.n; i++) {
		char *d;

		assert_int_equal(mms_recording_feed(rec, st, (uint32_t)i), 0);
		d = dump(st, mms_store_latest(st));
		assert_string_equal(d, sh.dumps[i]);
		free(d);
		free(sh.dumps[i]);
	}
	printf("%d intervals, %llu rows: the recording equals what the session held\n", sh.n,
	       (unsigned long long)sh.rows);
	mms_store_destroy(st);
	mms_recording_close(rec);
	unlink(path);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recorded_equals_shown),
	};

	if (argc != 2) {
		fprintf(stderr, "usage: test_record_live MMAP_CHURN\n");
		return 2;
	}
	churn = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
