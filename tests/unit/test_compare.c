// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests: A/B comparison (views/compare.c) on runs built by hand, one
 * store per run, as `mmscope compare` loads recordings.  Expected numbers
 * are worked out here from the waits put in, not taken from the code.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compare_view.h"
#include "mmscope/compare.h"
#include "mmscope/mm_metrics.h"

#define SEC 1000000000ULL
#define MS 1000000ULL
#define assert_close(a, b, tol) assert_true(fabs((a) - (b)) <= (tol))

static struct mms_store *new_store(void)
{
	struct mms_store *st;

	assert_int_equal(mms_store_create(NULL, &st), 0);
	return st;
}

static uint32_t lock(struct mms_store *st, enum mms_lock_kind kind, uint64_t addr,
		     const char *name, const char *detail, uint32_t owner, const char *comm)
{
	struct mms_lock_info li = { .addr = addr, .kind = kind, .owner_tgid = owner };

	li.name_id = name ? mms_store_str(st, name) : 0;
	li.detail_id = detail ? mms_store_str(st, detail) : 0;
	li.owner_comm_id = comm ? mms_store_str(st, comm) : 0;
	return mms_store_lock(st, &li);
}

static uint32_t stack(struct mms_store *st, const char *caller)
{
	uint64_t ip = 0xffffffff81000000ULL + strlen(caller);
	uint32_t sym = mms_store_str(st, caller);

	return mms_store_stack(st, &ip, &sym, 1);
}

static void wait(struct mms_store *st, uint32_t lock_id, uint32_t stack_id, uint64_t ns,
		 uint64_t n)
{
	struct mms_lock_sample s = { .lock_id = lock_id, .stack_id = stack_id,
				     .task_id = mms_store_task(st, 7, 7, "t"),
				     .flags = MMS_LCB_WRITE };

	mms_stat_add_n(&s.wait, ns, n);
	assert_int_equal(mms_store_add_lock(st, &s), 0);
}

static void metric(struct mms_store *st, uint32_t tgid, const char *comm, const char *name,
		   uint64_t value, uint64_t n)
{
	uint32_t proc = tgid ? mms_store_task(st, tgid, tgid, comm) : 0;

	assert_int_equal(mms_store_add_value(st, proc, name, 0, value, n), 0);
}

static void begin(struct mms_store *st, int i)
{
	assert_non_null(mms_store_begin(st, 1700000000ULL * SEC + (uint64_t)i * SEC));
}

static void commit(struct mms_store *st)
{
	assert_int_equal(mms_store_commit(st, SEC, 0), 0);
}

static void add(struct mms_compare *c, int side, struct mms_store *st, unsigned int have)
{
	assert_int_equal(mms_compare_add_run(c, side, st, have), 0);
	mms_store_destroy(st);
}

static const struct mms_cmp_row *row(const struct mms_compare *c, enum mms_cmp_group g,
				     const char *name, const char *what)
{
	for (size_t i = 0; i < c->nr; i++)
		if (c->rows[i].group == g && !strcmp(c->rows[i].name, name) &&
		    !strcmp(c->rows[i].what, what))
			return &c->rows[i];
	return NULL;
}

static size_t count_rows(const struct mms_compare *c, enum mms_cmp_group g, const char *what)
{
	size_t n = 0;

	for (size_t i = 0; i < c->nr; i++)
		n += c->rows[i].group == g && (!what || !strcmp(c->rows[i].what, what));
	return n;
}

static char *text_of(const struct mms_compare *c, int fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	if (fmt == 0)
		mms_compare_print_text(f, c);
	else if (fmt == 1)
		mms_compare_print_json(f, c);
	else
		mms_compare_print_csv(f, c, ",");
	fclose(f);
	return buf;
}

/*
 * i_mmap_rwsem of one file, at a different address in every run (as after
 * a reboot): per-run avg waits 9.20 .. 9.65 ms on base, 8.30 .. 8.50 ms on
 * new, 4 waits a second on both.
 */
static void ab_runs(struct mms_compare *c)
{
	static const double base[] = { 9.20, 9.60, 9.50, 9.40, 9.65 };
	static const double new_ms[] = { 8.30, 8.45, 8.40, 8.50, 8.45 };

	for (int s = 0; s < 2; s++)
		for (int k = 0; k < 5; k++) {
			struct mms_store *st = new_store();
			uint32_t l = lock(st, MMS_LOCK_I_MMAP, 0xffff888100000000ULL + k * 4096 +
					  s * 65536, "i_mmap_rwsem", "/srv/file", 0, NULL);

			begin(st, 0);
			wait(st, l, stack(st, "vma_prepare+0x1d5"),
			     (uint64_t)llround((s ? new_ms : base)[k] * MS), 4);
			commit(st);
			add(c, s, st, MMS_CMP_HAVE_LOCK | MMS_CMP_HAVE_VMA);
		}
}

static void test_statistics(void **state)
{
	struct mms_compare c;
	const struct mms_cmp_row *r;
	double va = 0.032 / 5, vb = 0.00575 / 5, t;
	char v[64];

	(void)state;
	mms_compare_init(&c, "v6.18", "patched");
	ab_runs(&c);
	assert_int_equal(mms_compare_finish(&c, NULL), 0);
	r = row(&c, MMS_CMP_LOCKS, "i_mmap_rwsem (/srv/file)", "avg wait");
	assert_non_null(r);
	assert_int_equal(count_rows(&c, MMS_CMP_LOCKS, "avg wait"), 1);	/* one name, one row */
	assert_int_equal(r->side[0].st.n, 5);
	assert_close(r->side[0].st.mean, 9.47 * MS, 1);
	/* deviations -.27 .13 .03 -.07 .18: squares sum to .128 ms^2, / 4 */
	assert_close(r->side[0].st.stdev, sqrt(0.032) * MS, 1);
	assert_close(r->side[0].st.pct_stdev, sqrt(0.032) / 9.47 * 100, 1e-6);
	assert_close(r->side[0].st.min, 9.20 * MS, 0.5);
	assert_close(r->side[0].st.max, 9.65 * MS, 0.5);
	/* new: mean 8.42, deviations -.12 .03 -.02 .08 .03: .023 / 4 = .00575 */
	assert_close(r->side[1].st.mean, 8.42 * MS, 1);
	assert_close(r->change_pct, (8.42 - 9.47) / 9.47 * 100, 1e-6);
	t = (8.42 - 9.47) / sqrt(va + vb);
	assert_true(r->welch.valid);
	assert_close(r->welch.t, t, 1e-6);
	assert_close(r->welch.df, (va + vb) * (va + vb) / (va * va / 4 + vb * vb / 4), 1e-6);
	assert_true(r->welch.p < 0.001);
	assert_string_equal(mms_compare_verdict(&c, r, v, sizeof(v)), "significant");
	/* 4 contentions a second on both sides, every run: no change, no noise. */
	r = row(&c, MMS_CMP_LOCKS, "i_mmap_rwsem (/srv/file)", "contended/s");
	assert_non_null(r);
	assert_close(r->side[0].st.mean, 4, 1e-12);
	assert_close(r->change_pct, 0, 1e-12);
	assert_string_equal(mms_compare_verdict(&c, r, v, sizeof(v)), "within noise");
	/* The caller by function: the offset may differ between the two kernels. */
	assert_non_null(row(&c, MMS_CMP_CALLERS, "vma_prepare (rwsem:W)", "avg wait"));
	/* The mm lock kind as a whole, and every lock. */
	assert_non_null(row(&c, MMS_CMP_TOTALS, "all i_mmap_rwsem", "avg wait"));
	r = row(&c, MMS_CMP_TOTALS, "all locks", "wait/s");
	assert_non_null(r);
	assert_close(r->side[0].st.mean, 4 * 9.47 * MS, 4);
	mms_compare_free(&c);
}

/*
 * The benchmark's score, compared first: the seed mail's Execl table (3
 * runs a side here: 3494.5 3511.5 3528.5 against 4047.4 4069.0 4090.6), with
 * the lock rows after it; a side without scores is n/a, not a zero.
 */
static void test_score(void **state)
{
	static const double base[] = { 3494.5, 3511.5, 3528.5 }, new_v[] = { 4047.4, 4069.0,
									      4090.6 };
	const struct mms_cmp_row *r;
	struct mms_compare c;
	char v[64], *txt, *json;

	(void)state;
	mms_compare_init(&c, "v7.3-rc4", "+ patch");
	for (int s = 0; s < 2; s++)
		for (int k = 0; k < 3; k++) {
			struct mms_store *st = new_store();
			uint32_t l = lock(st, MMS_LOCK_I_MMAP, 0x1000 + (uint64_t)k, "i_mmap_rwsem",
					  "/bin/sh", 0, NULL);

			begin(st, 0);
			wait(st, l, stack(st, "vma_prepare+0x1d5"), (uint64_t)(9 + s) * MS, 2);
			commit(st);
			add(&c, s, st, MMS_CMP_HAVE_LOCK);
			assert_int_equal(mms_compare_add_score(&c, s, "Execl Throughput", "lps",
							       false, (s ? new_v : base)[k]), 0);
		}
	assert_int_equal(mms_compare_finish(&c, NULL), 0);
	r = &c.rows[0];	/* first */
	assert_int_equal(r->group, MMS_CMP_SCORE);
	assert_string_equal(r->name, "Execl Throughput");
	assert_string_equal(r->what, "lps");
	assert_true(r->higher_better && !r->lower_better);
	assert_int_equal(r->side[0].st.n, 3);
	assert_close(r->side[0].st.mean, 3511.5, 1e-9);
	assert_close(r->side[0].st.stdev, 17, 1e-9);	/* deviations -17 0 17 */
	assert_close(r->side[0].st.min, 3494.5, 1e-9);
	assert_close(r->side[0].st.max, 3528.5, 1e-9);
	assert_close(r->side[1].st.mean, 4069.0, 1e-9);
	assert_close(r->change_pct, (4069.0 - 3511.5) / 3511.5 * 100, 1e-9);
	assert_string_equal(mms_compare_verdict(&c, r, v, sizeof(v)), "significant");
	assert_int_equal(count_rows(&c, MMS_CMP_SCORE, NULL), 1);
	assert_non_null(row(&c, MMS_CMP_LOCKS, "i_mmap_rwsem (/bin/sh)", "avg wait"));
	txt = text_of(&c, 0);
	assert_non_null(strstr(txt, "\nExecl Throughput: lps, higher is better\n"));
	assert_non_null(strstr(txt, "3511.50    0.48%      3494.50      3528.50"));
	assert_non_null(strstr(txt, "+15.88%    significant"));
	/* The score block comes before every lock block. */
	assert_true(strstr(txt, "Execl Throughput") < strstr(txt, "i_mmap_rwsem"));
	for (char *line = txt, *nl; (nl = strchr(line, '\n')); line = nl + 1)
		assert_true(nl - line <= 80);
	json = text_of(&c, 1);
	assert_non_null(strstr(json, "\"group\": \"score\", \"name\": \"Execl Throughput\", "
			       "\"metric\": \"lps\", \"kind\": \"score\", \"unit\": \"score\", "
			       "\"lower_is_better\": false, \"higher_is_better\": true"));
	free(txt);
	free(json);
	/* -k score alone, and -k locks leaves it out. */
	{
		struct mms_compare_opts o = { .groups = MMS_CMP_LOCKS };

		assert_int_equal(mms_compare_finish(&c, &o), 0);
		assert_int_equal(count_rows(&c, MMS_CMP_SCORE, NULL), 0);
		assert_int_equal(mms_compare_parse_keys("score", &o.groups, &o.metrics), 0);
		assert_int_equal(o.groups, MMS_CMP_SCORE);
		assert_int_equal(mms_compare_finish(&c, &o), 0);
		assert_int_equal(c.nr, 1);
	}
	mms_compare_free(&c);

	/* Lower is better (a time); one side without scores is n/a on that side. */
	mms_compare_init(&c, NULL, NULL);
	for (int s = 0; s < 2; s++)
		for (int k = 0; k < 2; k++) {
			struct mms_store *st = new_store();

			begin(st, 0);
			commit(st);
			add(&c, s, st, MMS_CMP_HAVE_LOCK);
			if (!s)
				assert_int_equal(mms_compare_add_score(&c, s, "elapsed", "s", true,
								       10 + k), 0);
		}
	assert_int_equal(mms_compare_finish(&c, NULL), 0);
	r = &c.rows[0];
	assert_int_equal(r->group, MMS_CMP_SCORE);
	assert_true(r->lower_better && !r->higher_better);
	assert_true(r->side[1].na);
	assert_string_equal(mms_compare_verdict(&c, r, v, sizeof(v)), "n/a on new");
	txt = text_of(&c, 0);
	assert_non_null(strstr(txt, "elapsed: s, lower is better"));
	free(txt);
	/* No run to score, or a score that is not a number. */
	assert_int_equal(mms_compare_add_score(&c, 0, "x", "", false, NAN), -EINVAL);
	mms_compare_free(&c);
	mms_compare_init(&c, NULL, NULL);
	assert_int_equal(mms_compare_add_score(&c, 0, "x", "", false, 1), -EINVAL);
	mms_compare_free(&c);
}

/*
 * Per run, avg wait is total / count over every key of a name, not the mean
 * of per-key averages: 10 waits of 1 ms on one task_struct and 30 of 3 ms on
 * another are 100 ms over 40 waits, 2.5 ms (the mean of averages says 2 ms).
 */
static void test_avg_over_merged(void **state)
{
	struct mms_compare c;
	const struct mms_cmp_row *r;

	(void)state;
	mms_compare_init(&c, NULL, NULL);
	for (int s = 0; s < 2; s++)
		for (int k = 0; k < 2; k++) {
			struct mms_store *st = new_store();
			uint32_t a = lock(st, MMS_LOCK_SLAB, 0xffff888000001000ULL, "&task_struct",
					  NULL, 0, NULL);
			uint32_t b = lock(st, MMS_LOCK_SLAB, 0xffff888000002000ULL, "&task_struct",
					  NULL, 0, NULL);

			for (int i = 0; i < 2; i++) {	/* two 1 s intervals */
				begin(st, i);
				wait(st, a, stack(st, "f+0x1"), 1 * MS, 5);
				wait(st, b, stack(st, "f+0x2"), 3 * MS, 15);
				commit(st);
			}
			add(&c, s, st, MMS_CMP_HAVE_LOCK);
		}
	assert_int_equal(mms_compare_finish(&c, NULL), 0);
	r = row(&c, MMS_CMP_LOCKS, "&task_struct", "avg wait");
	assert_non_null(r);
	assert_close(r->side[0].v[0], 2.5 * MS, 1e-6);
	assert_close(r->side[1].v[1], 2.5 * MS, 1e-6);
	/* Rates over the run's recorded time: 40 waits in 2 s. */
	r = row(&c, MMS_CMP_LOCKS, "&task_struct", "contended/s");
	assert_close(r->side[0].v[0], 20, 1e-9);
	r = row(&c, MMS_CMP_CALLERS, "f (rwsem:W)", "avg wait");
	assert_non_null(r);
	assert_close(r->side[0].v[1], 2.5 * MS, 1e-6);
	mms_compare_free(&c);
}

/*
 * mmap_lock of a process named "worker" is pid 100 at one address on base
 * and pid 200 at another on new: one row, in the lock table and in the
 * mmap_lock table.
 */
static void test_match_by_name(void **state)
{
	struct mms_compare c;
	const struct mms_cmp_row *r;

	(void)state;
	mms_compare_init(&c, NULL, NULL);
	for (int s = 0; s < 2; s++)
		for (int k = 0; k < 2; k++) {
			struct mms_store *st = new_store();
			uint32_t pid = 100 + 100 * (uint32_t)s + (uint32_t)k;
			uint32_t l = lock(st, MMS_LOCK_MMAP, 0xffff888100000000ULL + pid * 64,
					  "mmap_lock", NULL, pid, "worker");
			uint32_t u = lock(st, MMS_LOCK_UNKNOWN, 0xffffffff83000000ULL + pid, NULL,
					  NULL, 0, NULL);

			begin(st, 0);
			wait(st, l, stack(st, "do_mprotect_pkey+0x159"), (2 + s) * MS, 10);
			wait(st, u, stack(st, "0xffffffff81234567"), 1000, 1);
			metric(st, pid, "worker", MMS_M_MMAP_WAIT_WRITE, (2 + s) * MS, 10);
			commit(st);
			add(&c, s, st, MMS_CMP_HAVE_LOCK);
		}
	assert_int_equal(mms_compare_finish(&c, NULL), 0);
	assert_int_equal(count_rows(&c, MMS_CMP_LOCKS, "avg wait"), 2);
	r = row(&c, MMS_CMP_LOCKS, "mmap_lock (worker)", "avg wait");
	assert_non_null(r);
	assert_int_equal(r->side[0].st.n, 2);
	assert_int_equal(r->side[1].st.n, 2);
	assert_close(r->change_pct, 50, 1e-9);
	/* Locks known by address only are one row, never matched by address. */
	r = row(&c, MMS_CMP_LOCKS, "unnamed locks", "contended/s");
	assert_non_null(r);
	assert_close(r->side[1].st.mean, 1, 1e-12);
	assert_non_null(row(&c, MMS_CMP_CALLERS, "unsymbolised callers (rwsem:W)", "avg wait"));
	assert_int_equal(count_rows(&c, MMS_CMP_MMAP, "avg wait"), 1);
	r = row(&c, MMS_CMP_MMAP, "mmap_lock write wait (worker)", "avg wait");
	assert_non_null(r);
	assert_close(r->side[1].st.mean, 3 * MS, 1e-6);
	assert_non_null(row(&c, MMS_CMP_TOTALS, "all mmap_lock", "wait/s"));
	mms_compare_free(&c);
}

/*
 * Base has no rmap batch source and a VMA source that saw nothing; new has
 * both and sees events.  rmap rows are n/a on base (no number at all), VMA
 * splits are a measured 0 on base; merges, 0 on both, are within noise.
 */
static void test_na_and_zero(void **state)
{
	struct mms_compare c;
	const struct mms_cmp_row *r;
	char v[64], *out;

	(void)state;
	mms_compare_init(&c, "a-very-long-base-label", "new");
	for (int s = 0; s < 2; s++)
		for (int k = 0; k < 3; k++) {
			struct mms_store *st = new_store();

			begin(st, 0);
			if (s) {
				metric(st, 300, "reclaim", MMS_M_RMAP_BATCH, 16, 10 + (uint64_t)k);
				metric(st, 300, "reclaim", MMS_M_VMA_SPLIT, 1, 50 + (uint64_t)k);
			}
			commit(st);
			add(&c, s, st, MMS_CMP_HAVE_LOCK | MMS_CMP_HAVE_VMA |
			    (s ? MMS_CMP_HAVE_RMAP_BATCH : 0));
		}
	assert_int_equal(mms_compare_finish(&c, NULL), 0);
	r = row(&c, MMS_CMP_RMAP, "try_to_unmap", "mean batch (pages)");
	assert_non_null(r);
	assert_true(r->side[0].na);
	assert_int_equal(r->side[0].st.n, 0);
	assert_true(isnan(r->side[0].v[0]));
	assert_true(isnan(r->change_pct));
	assert_close(r->side[1].st.mean, 16, 1e-12);
	assert_string_equal(mms_compare_verdict(&c, r, v, sizeof(v)),
			    "n/a on a-very-long-base-label");
	assert_false(mms_compare_significant(&c, r));
	r = row(&c, MMS_CMP_RMAP, "try_to_unmap", "pages/s");
	assert_close(r->side[1].st.mean, 16 * 11, 1e-9);	/* 160, 176, 192 */
	r = row(&c, MMS_CMP_VMA, "VMA split", "splits/s");
	assert_non_null(r);
	assert_false(r->side[0].na);
	assert_int_equal(r->side[0].st.n, 3);
	assert_close(r->side[0].st.mean, 0, 0);
	assert_close(r->side[1].st.mean, 51, 1e-9);
	assert_string_equal(mms_compare_verdict(&c, r, v, sizeof(v)), "significant");
	r = row(&c, MMS_CMP_VMA, "VMA merge", "merges/s");
	assert_non_null(r);
	assert_close(r->change_pct, 0, 0);
	assert_string_equal(mms_compare_verdict(&c, r, v, sizeof(v)), "within noise");
	/* No lock waited anywhere: the totals are 0, averages have no data. */
	r = row(&c, MMS_CMP_TOTALS, "all locks", "avg wait");
	assert_non_null(r);
	assert_string_equal(mms_compare_verdict(&c, r, v, sizeof(v)), "no data on both");
	/* The mm locks are there even untouched: a measured 0 on both sides. */
	r = row(&c, MMS_CMP_TOTALS, "all i_mmap_rwsem", "contended/s");
	assert_non_null(r);
	assert_int_equal(r->side[0].st.n, 3);
	assert_close(r->side[1].st.max, 0, 0);
	assert_string_equal(mms_compare_verdict(&c, r, v, sizeof(v)), "within noise");
	/* Text: n/a is said, never a 0; nothing wider than 80 columns. */
	out = text_of(&c, 0);
	assert_non_null(strstr(out, "n/a on a-very-long-base-label"));
	for (char *line = out, *nl; (nl = strchr(line, '\n')); line = nl + 1)
		assert_true(nl - line <= 80);
	free(out);
	out = text_of(&c, 2);
	/* CSV: the base columns of the rmap rows are empty, not 0. */
	assert_non_null(strstr(out, "rmap,try_to_unmap,mean batch (pages),pages,0,,,,,3,16,"));
	free(out);
	out = text_of(&c, 1);
	assert_non_null(strstr(out, "\"values\": [null, null, null]"));
	free(out);
	mms_compare_free(&c);
}

/* -E keeps the heaviest names per group; -k picks groups and kinds of number. */
/*
 * --vma-lock rows: faults and fallbacks summed over processes; the kernel's
 * counters (system-wide, proc 0) only on the side whose kernel kept them,
 * n/a on the other; hold rows n/a where only faults were counted.
 */
static void test_vma_lock(void **state)
{
	struct mms_compare c;
	const struct mms_cmp_row *r;
	char v[64];

	(void)state;
	mms_compare_init(&c, "stock", "patched");
	for (int s = 0; s < 2; s++)
		for (int k = 0; k < 3; k++) {
			struct mms_store *st = new_store();

			begin(st, 0);
			metric(st, 300, "faulter", MMS_M_VMA_LOCK_FAULTS, 1, 50000);
			metric(st, 301, "other", MMS_M_VMA_LOCK_FAULTS, 1, 1000 + (uint64_t)k);
			metric(st, 300, "faulter", MMS_M_VMA_LOCK_FALLBACK, 1,
			       s ? 10 + (uint64_t)k : 900 + (uint64_t)k);
			if (s)
				assert_int_equal(mms_store_add_value(st, 0, MMS_M_VMA_LOCK_KERNEL,
								     MMS_VMA_LOCK_K_ABORT, 1, 7),
						 0);
			commit(st);
			add(&c, s, st, MMS_CMP_HAVE_LOCK | MMS_CMP_HAVE_VMA_LOCK |
			    (s ? MMS_CMP_HAVE_VMA_LOCK_KERNEL : 0));
		}
	assert_int_equal(mms_compare_finish(&c, NULL), 0);
	r = row(&c, MMS_CMP_MMAP, "page faults", "faults/s");
	assert_non_null(r);
	assert_close(r->side[0].st.mean, 51001, 1e-9);
	r = row(&c, MMS_CMP_MMAP, "faults fell back to mmap_lock", "fallbacks/s");
	assert_non_null(r);
	assert_close(r->side[0].st.mean, 901, 1e-9);
	assert_close(r->side[1].st.mean, 11, 1e-9);
	assert_string_equal(mms_compare_verdict(&c, r, v, sizeof(v)), "significant");
	r = row(&c, MMS_CMP_MMAP, "per-VMA lock, kernel: abort", "faults/s");
	assert_non_null(r);
	assert_true(r->side[0].na);
	assert_close(r->side[1].st.mean, 7, 1e-9);
	/* Measured, if quiet: a 0, not n/a. */
	r = row(&c, MMS_CMP_MMAP, "per-VMA lock, kernel: miss", "lookups/s");
	assert_non_null(r);
	assert_close(r->side[1].st.mean, 0, 0);
	assert_null(row(&c, MMS_CMP_MMAP, "mmap_lock read hold (faulter)", "avg hold"));
	mms_compare_free(&c);
}

static void test_selection(void **state)
{
	static const char *const names[] = { "a_lock", "b_lock", "c_lock", "d_lock" };
	struct mms_compare_opts o = { .entries = 2 };
	unsigned int g, m;
	struct mms_compare c;
	size_t i;

	(void)state;
	mms_compare_init(&c, NULL, NULL);
	for (int s = 0; s < 2; s++)
		for (int k = 0; k < 2; k++) {
			struct mms_store *st = new_store();

			begin(st, 0);
			/* d waits most, then c, b, a. */
			for (int n = 0; n < 4; n++)
				wait(st, lock(st, MMS_LOCK_STATIC, 0xffffffff83000000ULL + n,
					      names[n], NULL, 0, NULL), 0, (uint64_t)(n + 1) * MS,
				     10);
			commit(st);
			add(&c, s, st, MMS_CMP_HAVE_LOCK);
		}
	assert_int_equal(mms_compare_finish(&c, &o), 0);
	assert_int_equal(count_rows(&c, MMS_CMP_LOCKS, NULL), 6);
	for (i = 0; i < c.nr && c.rows[i].group != MMS_CMP_LOCKS; i++)
		;
	assert_true(i < c.nr);
	assert_string_equal(c.rows[i].name, "d_lock");	/* the heaviest first */
	assert_non_null(row(&c, MMS_CMP_LOCKS, "c_lock", "wait/s"));
	assert_null(row(&c, MMS_CMP_LOCKS, "b_lock", "wait/s"));
	assert_int_equal(mms_compare_parse_keys("locks,avg", &g, &m), 0);
	assert_int_equal(g, MMS_CMP_LOCKS);
	assert_int_equal(m, MMS_CMP_M_AVG);
	o = (struct mms_compare_opts){ .groups = g, .metrics = m };
	assert_int_equal(mms_compare_finish(&c, &o), 0);
	assert_int_equal(c.nr, 4);
	for (i = 0; i < c.nr; i++)
		assert_string_equal(c.rows[i].what, "avg wait");
	assert_int_equal(mms_compare_parse_keys("totals", &g, &m), 0);
	assert_int_equal(m, 0);
	assert_int_equal(mms_compare_parse_keys("locks,bogus", &g, &m), -EINVAL);
	assert_int_equal(mms_compare_parse_keys("", &g, &m), -EINVAL);
	mms_compare_free(&c);
}

/* A wait booked to owner (a task id, 0: unknown) holding at owner_stack (0: none). */
static void owned_wait(struct mms_store *st, uint32_t lock_id, uint32_t owner,
		       uint32_t owner_stack, uint64_t ns, uint64_t n)
{
	struct mms_lock_sample s = { .lock_id = lock_id, .stack_id = stack(st, "down_write+0x1"),
				     .task_id = mms_store_task(st, 7, 7, "writer"),
				     .flags = MMS_LCB_WRITE, .owner_id = owner,
				     .owner_stack_id = owner_stack };

	mms_stat_add_n(&s.wait, ns, n);
	assert_int_equal(mms_store_add_lock(st, &s), 0);
}

/*
 * Owners runs, 1 s each.  Base run k: handle_userfault holds the inode lock
 * for (9 + k) waits of 1 ms, booked to two holder threads (tids and offsets
 * differ from run to run, as they do between boots): 9, 10, 11 ms/s.  New
 * run k: 4 + k waits: 4, 5, 6 ms/s.  Both sides: 4 waits of 500 us on
 * readers (2 ms/s); base only: 2 of 100 us on a free rwsem, 3 of 1 ms on a
 * spinlock (owner unknown), 1 of 3 ms on an owner that was running (no
 * stack), 1 of 1 ms on an unsymbolised owner stack, and an owner stack whose
 * symbol carries an escape sequence.  Every run names a caller of its own.
 */
static void owner_runs(struct mms_compare *c, int side, unsigned int have)
{
	for (int k = 0; k < 3; k++) {
		struct mms_store *st = new_store();
		uint32_t l = lock(st, MMS_LOCK_STATIC, 0xffff888100000000ULL + (uint64_t)k,
				  "&sb->s_type->i_mutex_key", NULL, 0, NULL);
		uint32_t sp = lock(st, MMS_LOCK_STATIC, 0xffffffff83000000ULL, "rcu_state", NULL,
				   0, NULL);
		uint32_t h1 = mms_store_task(st, 100 + (uint32_t)k, 99, "holder");
		uint32_t h2 = mms_store_task(st, 200 + (uint32_t)k, 99, "holder2");
		char f1[64], f2[64];

		snprintf(f1, sizeof(f1), "handle_userfault+0x%x", 0x1a5 + k);
		snprintf(f2, sizeof(f2), "handle_userfault+0x%x", 0x2b0 + k);
		begin(st, 0);
		if (side == 0) {
			owned_wait(st, l, h1, stack(st, f1), 1 * MS, 5);
			owned_wait(st, l, h2, stack(st, f2), 1 * MS, 4 + (uint64_t)k);
			owned_wait(st, l, mms_store_task(st, 0, 0, MMS_OWNER_NONE), 0, 100000, 2);
			owned_wait(st, sp, 0, 0, 1 * MS, 3);
			owned_wait(st, l, h1, 0, 3 * MS, 1);
			owned_wait(st, l, h2, stack(st, "0xffffffff81234567"), 1 * MS, 1);
			owned_wait(st, l, h2, stack(st, "evil\x1b]0;x\x07+0x10"), 1000, 1);
			/* A pseudo-task of another name is no owner the collector makes. */
			owned_wait(st, l, mms_store_task(st, 0, 0, "\x1b[2J"), 0, 1000, 1);
		} else {
			owned_wait(st, l, h1, stack(st, f1), 1 * MS, 4 + (uint64_t)k);
		}
		owned_wait(st, l, mms_store_task(st, 0, 0, MMS_OWNER_READERS), 0, 500000, 4);
		commit(st);
		assert_true(mms_compare_has_owners(st));
		add(c, side, st, have);
	}
}

static void test_owners(void **state)
{
	struct mms_compare_opts o = { .entries = 20 };
	struct mms_compare c;
	const struct mms_cmp_row *r;
	size_t first_owner = SIZE_MAX, last_caller = 0, first_mmap = SIZE_MAX;
	char v[64], *txt, *json;
	unsigned int g, m;

	(void)state;
	mms_compare_init(&c, "base", "new");
	owner_runs(&c, 0, MMS_CMP_HAVE_LOCK | MMS_CMP_HAVE_LOCK_OWNER | MMS_CMP_HAVE_VMA);
	owner_runs(&c, 1, MMS_CMP_HAVE_LOCK | MMS_CMP_HAVE_LOCK_OWNER | MMS_CMP_HAVE_VMA);
	assert_int_equal(mms_compare_finish(&c, &o), 0);
	/* By function: two threads, two call sites, three runs of other tids: one row. */
	r = row(&c, MMS_CMP_OWNERS, "handle_userfault", "wait/s");
	assert_non_null(r);
	assert_int_equal(count_rows(&c, MMS_CMP_OWNERS, "wait/s"), 7);
	for (int k = 0; k < 3; k++) {
		assert_close(r->side[0].v[k], (9 + k) * (double)MS, 1e-6);
		assert_close(r->side[1].v[k], (4 + k) * (double)MS, 1e-6);
	}
	assert_close(r->side[0].st.mean, 10 * (double)MS, 1e-6);
	assert_close(r->side[1].st.mean, 5 * (double)MS, 1e-6);
	assert_close(r->side[0].st.stdev, 1 * (double)MS, 1e-6);
	assert_close(r->change_pct, -50, 1e-9);
	/* t = -5 / sqrt(1/3 + 1/3), df 4 */
	assert_true(r->welch.valid);
	assert_close(r->welch.t, -5 / sqrt(2.0 / 3), 1e-9);
	assert_close(r->welch.df, 4, 1e-9);
	assert_true(r->lower_better);
	assert_string_equal(mms_compare_verdict(&c, r, v, sizeof(v)), "significant");
	r = row(&c, MMS_CMP_OWNERS, "handle_userfault", "contended/s");
	assert_non_null(r);
	assert_close(r->side[0].st.mean, 10, 1e-9);
	assert_close(r->side[1].st.mean, 5, 1e-9);
	r = row(&c, MMS_CMP_OWNERS, "handle_userfault", "avg wait");
	assert_non_null(r);
	assert_close(r->side[0].st.mean, 1 * (double)MS, 1e-6);
	assert_close(r->change_pct, 0, 1e-9);
	/* The buckets, by report --lock-owner's names. */
	r = row(&c, MMS_CMP_OWNERS, MMS_OWNER_READERS, "wait/s");
	assert_non_null(r);
	assert_close(r->side[0].st.mean, 2 * (double)MS, 1e-6);
	assert_close(r->side[1].st.mean, 2 * (double)MS, 1e-6);
	r = row(&c, MMS_CMP_OWNERS, MMS_OWNER_NONE, "wait/s");
	assert_non_null(r);
	assert_close(r->side[0].st.mean, 200000, 1e-6);
	/* Measured on new (its runs have owners), none seen: a real 0, not n/a. */
	assert_false(r->side[1].na);
	assert_int_equal(r->side[1].st.n, 3);
	assert_close(r->side[1].st.max, 0, 0);
	r = row(&c, MMS_CMP_OWNERS, MMS_CMP_OWNER_UNKNOWN, "wait/s");
	assert_non_null(r);
	/* With the pseudo-task of another name. */
	assert_close(r->side[0].st.mean, 3 * (double)MS + 1000, 1e-6);
	r = row(&c, MMS_CMP_OWNERS, MMS_CMP_OWNER_RUNNING, "wait/s");
	assert_non_null(r);
	assert_close(r->side[0].st.mean, 3 * (double)MS, 1e-6);
	r = row(&c, MMS_CMP_OWNERS, MMS_CMP_OWNER_UNSYMBOLISED, "contended/s");
	assert_non_null(r);
	assert_close(r->side[0].st.mean, 1, 1e-9);
	r = row(&c, MMS_CMP_OWNERS, MMS_CMP_OWNER_UNKNOWN, "avg wait");
	assert_string_equal(mms_compare_verdict(&c, r, v, sizeof(v)), "no data on new");
	/* Callers stay the waiters' own; the owners group follows them. */
	assert_non_null(row(&c, MMS_CMP_CALLERS, "down_write (rwsem:W)", "wait/s"));
	assert_null(row(&c, MMS_CMP_CALLERS, "handle_userfault (rwsem:W)", "wait/s"));
	for (size_t i = 0; i < c.nr; i++) {
		if (c.rows[i].group == MMS_CMP_CALLERS)
			last_caller = i;
		if (c.rows[i].group == MMS_CMP_OWNERS && first_owner == SIZE_MAX)
			first_owner = i;
		if (c.rows[i].group == MMS_CMP_VMA && first_mmap == SIZE_MAX)
			first_mmap = i;
	}
	assert_true(last_caller < first_owner && first_owner < first_mmap);
	/* The heaviest first. */
	assert_string_equal(c.rows[first_owner].name, "handle_userfault");
	txt = text_of(&c, 0);
	assert_non_null(strstr(txt, "\nhandle_userfault: wait/s\n"));
	assert_non_null(strstr(txt, "  base       3   10.00 ms/s   10.00%    9.00 ms/s   "
			       "11.00 ms/s\n"));
	assert_non_null(strstr(txt, "  change -50.00%    significant (t=-6.12, df=4.0, "
			       "p=0.004)\n"));
	assert_non_null(strstr(txt, "\n<readers>: wait/s\n"));
	assert_non_null(strstr(txt, "\n(no stack: it was running): wait/s\n"));
	/* A recording's symbol reaches the terminal escaped. */
	assert_null(strchr(txt, '\x1b'));
	assert_non_null(strstr(txt, "\\x1b]0;x\\x07: wait/s"));
	json = text_of(&c, 1);
	assert_non_null(strstr(json, "{\"group\": \"owners\", \"name\": \"handle_userfault\", "
			       "\"metric\": \"wait/s\", \"kind\": \"sum\", "
			       "\"unit\": \"ns_per_sec\""));
	assert_non_null(strstr(json, "\"values\": [9e+06, 1e+07, 1.1e+07]"));
	assert_null(strchr(json, '\x1b'));
	free(txt);
	free(json);
	/* -k owners: only owners rows; -E 1: the heaviest function alone. */
	assert_int_equal(mms_compare_parse_keys("owners", &g, &m), 0);
	assert_int_equal(g, MMS_CMP_OWNERS);
	assert_string_equal(mms_compare_group_name(MMS_CMP_OWNERS), "owners");
	o = (struct mms_compare_opts){ .groups = g, .entries = 1 };
	assert_int_equal(mms_compare_finish(&c, &o), 0);
	assert_int_equal(c.nr, 3);
	for (size_t i = 0; i < c.nr; i++)
		assert_string_equal(c.rows[i].name, "handle_userfault");
	assert_int_equal(mms_compare_parse_keys("owners,callers,sum", &g, &m), 0);
	assert_int_equal(g, MMS_CMP_OWNERS | MMS_CMP_CALLERS);
	assert_int_equal(MMS_CMP_ALL & MMS_CMP_OWNERS, MMS_CMP_OWNERS);
	mms_compare_free(&c);

	/*
	 * New without owners (an older recording, or no --lock-owner): its
	 * owners rows are n/a, never a 0, though the waits are there; the
	 * store's owner fields are not read for a run that has none.
	 */
	mms_compare_init(&c, "owners", "plain");
	owner_runs(&c, 0, MMS_CMP_HAVE_LOCK | MMS_CMP_HAVE_LOCK_OWNER);
	owner_runs(&c, 1, MMS_CMP_HAVE_LOCK);
	assert_int_equal(mms_compare_finish(&c, &o), 0);
	r = row(&c, MMS_CMP_OWNERS, "handle_userfault", "wait/s");
	assert_non_null(r);
	assert_true(r->side[1].na);
	assert_int_equal(r->side[1].runs, 0);
	assert_true(isnan(r->side[1].v[0]) && isnan(r->change_pct));
	assert_close(r->side[0].st.mean, 10 * (double)MS, 1e-6);
	assert_string_equal(mms_compare_verdict(&c, r, v, sizeof(v)), "n/a on plain");
	assert_false(mms_compare_significant(&c, r));
	txt = text_of(&c, 0);
	assert_non_null(strstr(txt, "  plain      -  n/a: no lock owners in its runs "
			       "(--lock-owner)\n"));
	for (char *line = txt, *nl; (nl = strchr(line, '\n')); line = nl + 1)
		assert_true(nl - line <= 80);
	free(txt);
	json = text_of(&c, 1);
	assert_non_null(strstr(json, "\"new\": {\"runs\": 0, \"present\": 0, \"na\": true, "
			       "\"values\": [null, null, null], \"n\": 0}"));
	free(json);
	mms_compare_free(&c);

	/* No owners anywhere: no owners row, and a store without owners says so. */
	mms_compare_init(&c, NULL, NULL);
	for (int s = 0; s < 2; s++)
		owner_runs(&c, s, MMS_CMP_HAVE_LOCK);
	assert_int_equal(mms_compare_finish(&c, NULL), 0);
	assert_int_equal(count_rows(&c, MMS_CMP_OWNERS, NULL), 0);
	mms_compare_free(&c);
	{
		struct mms_store *st = new_store();

		begin(st, 0);
		wait(st, lock(st, MMS_LOCK_STATIC, 0x1000, "x", NULL, 0, NULL), 0, MS, 1);
		commit(st);
		assert_false(mms_compare_has_owners(st));
		mms_store_destroy(st);
	}
}

static void test_view(void **state)
{
	struct mms_compare c;
	struct mms_canvas *cv;
	struct compare_view *v;
	char *txt;
	size_t n;

	(void)state;
	mms_compare_init(&c, "v6.18", "patched");
	ab_runs(&c);
	assert_int_equal(mms_compare_finish(&c, NULL), 0);
	assert_int_equal(compare_view_create(&c, &v), 0);
	assert_int_equal(mms_canvas_create(80, 24, false, &cv), 0);
	compare_view_update(v, MMS_CMP_LOCKS, NULL);
	compare_view_draw(v, cv, 0, 24);
	n = mms_canvas_text(cv, NULL, 0);
	txt = malloc(n + 1);
	assert_non_null(txt);
	mms_canvas_text(cv, txt, n + 1);
	assert_non_null(strstr(txt, "3 of "));
	assert_non_null(strstr(txt, "i_mmap_rwsem"));
	assert_non_null(strstr(txt, "-11.1%"));
	assert_non_null(strstr(txt, "significant"));
	/* The detail pane: every run of both sides. */
	assert_non_null(strstr(txt, "runs:  9.20 ms  9.60 ms  9.50 ms  9.40 ms  9.65 ms"));
	assert_non_null(strstr(txt, "Welch's t = -12.08"));
	free(txt);
	assert_string_equal(compare_view_selected(v)->what, "avg wait");
	mms_canvas_destroy(cv);
	compare_view_destroy(v);
	mms_compare_free(&c);

	/* Tab goes callers -> owners -> mmap_lock..., and back; owners say why n/a. */
	mms_compare_init(&c, "owners", "plain");
	owner_runs(&c, 0, MMS_CMP_HAVE_LOCK | MMS_CMP_HAVE_LOCK_OWNER);
	owner_runs(&c, 1, MMS_CMP_HAVE_LOCK);
	assert_int_equal(mms_compare_finish(&c, NULL), 0);
	assert_int_equal(compare_view_create(&c, &v), 0);
	assert_int_equal(compare_view_next_group(v, MMS_CMP_CALLERS, 1), MMS_CMP_OWNERS);
	/* Nothing after owners here: all. */
	assert_int_equal(compare_view_next_group(v, MMS_CMP_OWNERS, 1), 0);
	assert_int_equal(compare_view_next_group(v, 0, -1), MMS_CMP_OWNERS);
	assert_int_equal(compare_view_next_group(v, MMS_CMP_OWNERS, -1), MMS_CMP_CALLERS);
	assert_int_equal(mms_compare_group_step(MMS_CMP_OWNERS, 1), MMS_CMP_MMAP);
	assert_int_equal(mms_compare_group_step(MMS_CMP_RMAP, 1), 0);
	assert_int_equal(mms_compare_group_step(0, 1), MMS_CMP_SCORE);
	assert_int_equal(mms_compare_group_step(MMS_CMP_SCORE, -1), 0);
	compare_view_update(v, MMS_CMP_OWNERS, NULL);
	assert_int_equal(mms_canvas_create(100, 30, false, &cv), 0);
	compare_view_draw(v, cv, 0, 30);
	n = mms_canvas_text(cv, NULL, 0);
	txt = malloc(n + 1);
	assert_non_null(txt);
	mms_canvas_text(cv, txt, n + 1);
	assert_non_null(strstr(txt, "group: owners"));
	assert_non_null(strstr(txt, "owners    handle_userfault   avg wait"));
	assert_non_null(strstr(txt, "n/a: no lock owners in its runs (--lock-owner)"));
	free(txt);
	mms_canvas_destroy(cv);
	compare_view_destroy(v);
	mms_compare_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_statistics),
		cmocka_unit_test(test_score),
		cmocka_unit_test(test_avg_over_merged),
		cmocka_unit_test(test_match_by_name),
		cmocka_unit_test(test_na_and_zero),
		cmocka_unit_test(test_selection),
		cmocka_unit_test(test_vma_lock),
		cmocka_unit_test(test_owners),
		cmocka_unit_test(test_view),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
