// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test: replay seeking.  A seek keeps what the store holds of the new
 * window and defers the rest (decoded when first read), so the store after
 * any sequence of seeks must hold exactly what a fresh replay stepped from
 * the start to the same point holds: the same intervals, rows, values and
 * names, and every view must draw the same screen from it.  The recording
 * is written through the real recorder by a store with a tiny window, so
 * ids are swept and defined again all along, as in long recordings.
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

#include "mmscope/canvas.h"
#include "mmscope/recording.h"
#include "mmscope/view.h"
#include "rec_dump.h"

#define T0 1700000000000000000ULL
#define SEC 1000000000ULL
#define NIV 160		/* intervals in the recording */
#define WIN 16		/* replay window */
#define NTASKS 64

static char dir[64];
static char path[128];
static uint64_t rng;
static char *written[NIV];	/* each interval as the writer's store held it */

static uint32_t rnd(uint32_t n)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * 2685821657736338717ULL) >> 33) % n;
}

/* ---- The recording ---- */

static uint32_t task_tid[NTASKS], next_tid = 1000;

static uint32_t mk_lock(struct mms_store *st, uint32_t i)
{
	struct mms_lock_info li = { .addr = 0xffff888100000000ULL + (uint64_t)i * 64,
				    .kind = i % 3 ? MMS_LOCK_MMAP : MMS_LOCK_I_MMAP };
	char buf[64];

	if (li.kind == MMS_LOCK_MMAP) {
		li.name_id = mms_store_str(st, "mmap_lock");
		li.owner_tgid = 100 + i;
		snprintf(buf, sizeof(buf), "proc-%u", i % 7);
		li.owner_comm_id = mms_store_str(st, buf);
	} else {
		li.name_id = mms_store_str(st, "i_mmap_rwsem");
		snprintf(buf, sizeof(buf), "/usr/lib/lib%u.so", i);
		li.detail_id = mms_store_str(st, buf);
	}
	return mms_store_lock(st, &li);
}

static uint32_t mk_stack(struct mms_store *st, uint32_t i)
{
	uint64_t ips[3];
	uint32_t syms[3];
	char buf[48];

	for (uint32_t f = 0; f < 3; f++) {
		ips[f] = 0xffffffff81000000ULL + (i * 7 + f) * 0x40;
		snprintf(buf, sizeof(buf), "fn_%u+0x%x", (i * 7 + f) % 23, f * 4);
		syms[f] = mms_store_str(st, buf);
	}
	return mms_store_stack(st, ips, syms, 1 + i % 3);
}

static uint32_t mk_task(struct mms_store *st, uint32_t slot)
{
	char comm[32];

	snprintf(comm, sizeof(comm), "task-%u", task_tid[slot]);
	return mms_store_task(st, task_tid[slot], task_tid[slot] & ~3U, comm);
}

static void add_interval(struct mms_store *st, uint32_t iv)
{
	assert_non_null(mms_store_begin(st, T0 + (uint64_t)iv * SEC));
	/*
	 * Tasks come and go, so definitions keep arriving and the writer's
	 * store soon sweeps (at 4096 entries) and hands ids out again.
	 */
	for (int k = 0; k < 40; k++)
		task_tid[rnd(NTASKS)] = next_tid++;
	for (uint32_t r = 0; r < 40 + rnd(20); r++) {
		uint32_t l = rnd(60);
		struct mms_lock_sample s = {
			.lock_id = mk_lock(st, l),
			.stack_id = r % 5 ? mk_stack(st, (l + rnd(3)) % 30) : 0,
			.task_id = mk_task(st, rnd(NTASKS)),
			.flags = l % 2 ? MMS_LCB_WRITE : MMS_LCB_READ,
		};

		mms_stat_add_n(&s.wait, 100 + rnd(100000), 1 + rnd(9));
		mms_stat_add(&s.wait, 1 + rnd(1000));
		assert_int_equal(mms_store_add_lock(st, &s), 0);
	}
	for (uint32_t r = 0; r < 8; r++) {
		uint32_t tgid = task_tid[rnd(NTASKS)] & ~3U;
		char comm[32];

		snprintf(comm, sizeof(comm), "task-%u", tgid % 13);
		assert_int_equal(mms_store_add_value(st, mms_store_task(st, tgid, tgid, comm),
						     r % 2 ? "vma.split" : "rmap.batch", r % 3,
						     1 + rnd(500), 1 + rnd(4)), 0);
	}
	if (iv % 7 == 3)
		mms_store_add_lost(st, MMS_LOST_RING, iv);
	assert_int_equal(mms_store_commit(st, SEC + iv, iv % 11 == 5 ? MMS_IV_TARGET_EXITED : 0),
			 0);
}

static void write_recording(void)
{
	struct mms_store_opts so = { .window = 3 };
	struct mms_rec_meta m = { .host = "testhost", .kernel = "6.1.0-test", .target = "system",
				  .start_ns = T0 };
	struct mms_recorder *r;
	struct mms_store *st;
	char err[256];

	rng = 0x9e3779b97f4a7c15ULL;
	for (int i = 0; i < NTASKS; i++)
		task_tid[i] = next_tid++;
	m.fam[MMS_FAM_LOCK].source = "lock-bpf";
	m.fam[MMS_FAM_LOCK].backend = "bpf";
	unlink(path);
	assert_int_equal(mms_store_create(&so, &st), 0);
	assert_int_equal(mms_recorder_create(path, &m, 0, &r, err, sizeof(err)), 0);
	for (uint32_t i = 0; i < NIV; i++) {
		add_interval(st, i);
		written[i] = dump(st, mms_store_latest(st));
		assert_int_equal(mms_recorder_write(r, st, mms_store_latest(st)), 0);
	}
	assert_true(mms_store_epoch(st) >= 1);	/* swept: later definitions reuse ids */
	assert_int_equal(mms_recorder_close(r, ""), 0);
	mms_recorder_destroy(r);
	mms_store_destroy(st);
}

/* ---- Comparing ---- */

static struct mms_source *open_replay(uint32_t window)
{
	struct mms_source *src;
	struct mms_options o;
	char err[256];

	mms_options_init(&o);
	o.window = window;
	assert_int_equal(mms_replay_open(path, &o, &src, err, sizeof(err)), 0);
	assert_int_equal(mms_recording_info(mms_replay_recording(src))->dangling, 0);
	return src;
}

/* What a fresh replay holds after stepping from the start up to idx. */
static struct mms_store *stepped(const struct mms_store_opts *so, uint32_t idx)
{
	struct mms_source *src = open_replay(so->window);
	struct mms_store *st;

	assert_int_equal(mms_store_create(so, &st), 0);
	assert_int_equal(mms_replay_step(src, st, idx + 1), (int)idx + 1);
	mms_source_destroy(src);
	return st;
}

static char *draw(const struct mms_view *v, struct mms_store *st)
{
	struct mms_view_env env;
	struct mms_canvas *c;
	uint32_t from, to;
	void *priv;
	char *text;
	size_t n;

	assert_int_equal(mms_canvas_create(160, 40, false, &c), 0);
	assert_int_equal(v->create(&priv), 0);
	mms_view_env_init(&env, st, -1, MMS_RANGE_MINUTE);
	/* As the TUI does: what the view reads is loaded, then read. */
	if (mms_view_span(v, &env, &from, &to))
		mms_store_load(st, from, to);
	assert_int_equal(v->update(priv, &env), 0);
	v->draw(priv, &env, c, 0, 40);
	n = mms_canvas_text(c, NULL, 0);
	text = malloc(n + 1);
	assert_non_null(text);
	mms_canvas_text(c, text, n + 1);
	v->destroy(priv);
	mms_canvas_destroy(c);
	return text;
}

/*
 * The seeking store, read in a scrambled order (so deferred intervals fill
 * in any order), holds what the stepped one does (and, without a row cap,
 * what was written), and views draw the same.
 */
static void same_as_stepped(const struct mms_store_opts *so, struct mms_store *st,
			    uint32_t idx, bool views)
{
	struct mms_store *ref = stepped(so, idx);
	uint32_t n = mms_store_count(ref);

	assert_int_equal(mms_store_count(st), n);
	assert_true(mms_store_evicted(st) == mms_store_evicted(ref));
	assert_true(mms_store_latest(ref)->seq == idx);
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = (k * 7 + idx) % n;

		mms_store_load(st, i, i);
	}
	mms_store_load(st, 0, n - 1);	/* what the scrambled order missed */
	for (uint32_t i = 0; i < n; i++) {
		const struct mms_interval *a = mms_store_at(st, i), *b = mms_store_at(ref, i);
		char *da = dump(st, a), *db = dump(ref, b);

		assert_true(a->seq == b->seq);
		assert_int_equal(mms_store_find_seq(st, a->seq), (int)i);
		assert_string_equal(da, db);
		if (!so->max_rows)
			assert_string_equal(da, written[a->seq]);
		free(da);
		free(db);
	}
	for (int v = 0; views && mms_views[v]; v++) {
		char *ta = draw(mms_views[v], st), *tb = draw(mms_views[v], ref);

		assert_string_equal(ta, tb);
		free(ta);
		free(tb);
	}
	mms_store_destroy(ref);
}

/* ---- Tests ---- */

/* Far and near seeks both ways, the ends, by time, and playing on after a seek. */
static void test_seek_matches_stepping(void **state)
{
	static const uint32_t to[] = { 100, 30, 29, 31, 40, 41, 41, 12, 0, 159, 150, 5, 80, 95,
				       94, 500 };
	struct mms_store_opts so = { .window = WIN };
	struct mms_source *src = open_replay(WIN);
	struct mms_store *st;

	(void)state;
	assert_int_equal(mms_store_create(&so, &st), 0);
	for (size_t i = 0; i < sizeof(to) / sizeof(to[0]); i++) {
		uint32_t idx = to[i] < NIV ? to[i] : NIV - 1;

		assert_int_equal(mms_replay_seek(src, st, to[i]), 0);
		assert_int_equal(mms_replay_pos(src), idx + 1);
		same_as_stepped(&so, st, idx, i % 3 == 0);
	}
	assert_int_equal(mms_replay_seek_time(src, st, T0 + 70 * SEC + 1), 0);
	same_as_stepped(&so, st, 70, true);
	/* Only the newest read before playing on: the rest fills in later. */
	assert_int_equal(mms_replay_seek(src, st, 20), 0);
	mms_store_load(st, mms_store_count(st) - 1, mms_store_count(st) - 1);
	assert_int_equal(mms_replay_step(src, st, 9), 9);
	same_as_stepped(&so, st, 29, true);
	mms_store_destroy(st);
	mms_source_destroy(src);
}

/*
 * A byte budget that holds fewer intervals than the window, and a row cap
 * below what intervals have: deferred intervals are budgeted and cut as
 * filled ones are.  A small budget also makes rewinds free table entries.
 */
static void test_budget_and_row_cap(void **state)
{
	struct mms_store_opts so = { .window = WIN, .max_bytes = 7 * 50 * 216, .max_rows = 40 };
	struct mms_source *src = open_replay(WIN);
	struct mms_store *st;
	uint64_t lost = 0;

	(void)state;
	assert_int_equal(mms_store_create(&so, &st), 0);
	for (uint32_t idx = 150; idx >= 10; idx -= 7) {
		assert_int_equal(mms_replay_seek(src, st, idx), 0);
		same_as_stepped(&so, st, idx, false);
		assert_true(mms_store_count(st) < WIN);
		for (uint32_t i = 0; i < mms_store_count(st); i++)
			lost += mms_store_at(st, i)->lost[MMS_LOST_STORE];
		assert_int_equal(mms_replay_seek(src, st, idx + 3), 0);
		same_as_stepped(&so, st, idx + 3, false);
	}
	assert_true(lost > 0);	/* the row cap really cut rows */
	mms_store_destroy(st);
	mms_source_destroy(src);
}

/* Deferred intervals need the recording: the store keeps it open as long as it does. */
static void test_lifetimes(void **state)
{
	struct mms_store_opts so = { .window = WIN };
	struct mms_source *src = open_replay(WIN);
	struct mms_store *st;

	(void)state;
	assert_int_equal(mms_store_create(&so, &st), 0);
	assert_int_equal(mms_replay_seek(src, st, 120), 0);
	mms_source_destroy(src);	/* nothing read yet */
	same_as_stepped(&so, st, 120, true);
	mms_store_destroy(st);

	/* The other way round. */
	src = open_replay(WIN);
	assert_int_equal(mms_store_create(&so, &st), 0);
	assert_int_equal(mms_replay_seek(src, st, 60), 0);
	mms_store_destroy(st);
	assert_int_equal(mms_store_create(&so, &st), 0);
	assert_int_equal(mms_replay_seek(src, st, 90), 0);
	same_as_stepped(&so, st, 90, false);
	mms_store_destroy(st);
	mms_source_destroy(src);
}

/* A store fed by hand is not taken for the recording's: nothing of it is kept. */
static void test_foreign_store(void **state)
{
	struct mms_store_opts so = { .window = WIN };
	struct mms_source *src = open_replay(WIN);
	struct mms_store *st;

	(void)state;
	assert_int_equal(mms_store_create(&so, &st), 0);
	rng = 42;
	for (uint32_t i = 0; i < 40; i++)
		add_interval(st, 1000 + i);
	assert_int_equal(mms_replay_seek(src, st, 33), 0);
	same_as_stepped(&so, st, 33, true);
	mms_store_destroy(st);
	mms_source_destroy(src);
}

/*
 * Filling marks the strings of a lock, stack or task used only when the
 * lock itself was not marked used as late yet, so interning a lock must
 * mark its strings too: the reader hands mms_store_lock() string ids it
 * kept, as a collector may.  Else a sweep frees a name a held lock uses.
 */
static void test_names_outlive_locks(void **state)
{
	struct mms_store_opts so = { .window = 2 };
	struct mms_lock_info li = { .addr = 0x1000, .kind = MMS_LOCK_I_MMAP };
	struct mms_store *st;
	uint32_t lock = 0;

	(void)state;
	assert_int_equal(mms_store_create(&so, &st), 0);
	li.name_id = mms_store_str(st, "i_mmap_rwsem");
	li.detail_id = mms_store_str(st, "/usr/lib/libc.so.6");
	for (uint32_t i = 0; i < 6; i++) {
		struct mms_lock_sample s = { .flags = MMS_LCB_WRITE };

		assert_non_null(mms_store_begin(st, T0 + i * SEC));
		s.lock_id = lock = mms_store_lock(st, &li);	/* kept string ids */
		mms_stat_add(&s.wait, 1000);
		assert_int_equal(mms_store_add_lock(st, &s), 0);
		/* Entries enough that commit 4 sweeps, and half of them unused by then. */
		for (uint32_t k = 0; (i == 1 || i == 4) && k < 2100; k++) {
			char name[32];

			snprintf(name, sizeof(name), "filler-%u-%u", i, k);
			assert_true(mms_store_str(st, name) > 0);
		}
		assert_int_equal(mms_store_commit(st, SEC, 0), 0);
	}
	assert_true(mms_store_epoch(st) > 0);	/* it did sweep */
	assert_int_equal(mms_store_latest(st)->locks[0].lock_id, lock);
	assert_string_equal(mms_store_get_str(st, mms_store_get_lock(st, lock)->detail_id),
			    "/usr/lib/libc.so.6");
	mms_store_destroy(st);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/mms-seek-test-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/rec.mms", dir);
	write_recording();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int i = 0; i < NIV; i++)
		free(written[i]);
	unlink(path);
	rmdir(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seek_matches_stepping),
		cmocka_unit_test(test_budget_and_row_cap),
		cmocka_unit_test(test_lifetimes),
		cmocka_unit_test(test_foreign_store),
		cmocka_unit_test(test_names_outlive_locks),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
