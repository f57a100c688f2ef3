// SPDX-License-Identifier: GPL-2.0
/* Unit tests: the store (interning, intervals, window, byte budget, sweep). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "mmscope/store.h"

static struct mms_lock_sample lock_row(uint32_t lock, uint32_t stack, uint32_t task, uint64_t ns)
{
	struct mms_lock_sample s = { .lock_id = lock, .stack_id = stack, .task_id = task,
				     .flags = MMS_LCB_WRITE };

	mms_stat_add(&s.wait, ns);
	return s;
}

static void test_intern(void **state)
{
	struct mms_store *st;
	uint64_t ips[2] = { 0xffffffff81000010ULL, 0xffffffff81000020ULL };
	uint32_t syms[2], id1, id2;
	struct mms_lock_info li = { .addr = 0x1234, .kind = MMS_LOCK_MMAP };
	const struct mms_stack *k;
	char label[96];

	(void)state;
	assert_int_equal(mms_store_create(NULL, &st), 0);
	id1 = mms_store_str(st, "vma_prepare+0x3c");
	id2 = mms_store_str(st, "vma_prepare+0x3c");
	assert_true(id1 > 0);
	assert_int_equal(id1, id2);
	assert_string_equal(mms_store_get_str(st, id1), "vma_prepare+0x3c");
	assert_string_equal(mms_store_get_str(st, 9999), "");
	syms[0] = id1;
	syms[1] = mms_store_str(st, "__split_vma+0x80");
	id1 = mms_store_stack(st, ips, syms, 2);
	assert_int_equal(mms_store_stack(st, ips, syms, 2), id1);
	k = mms_store_get_stack(st, id1);
	assert_non_null(k);
	assert_int_equal(k->nr, 2);
	assert_true(k->ips[1] == ips[1]);
	assert_string_equal(mms_store_get_str(st, k->sym_ids[1]), "__split_vma+0x80");
	id1 = mms_store_task(st, 10, 9, "worker");
	assert_int_equal(mms_store_task(st, 10, 9, "worker"), id1);
	assert_true(mms_store_task(st, 10, 9, "renamed") != id1);
	assert_int_equal(mms_store_get_task(st, id1)->tgid, 9);
	li.name_id = mms_store_str(st, "mmap_lock");
	li.owner_tgid = 9;
	li.owner_comm_id = mms_store_str(st, "worker");
	id2 = mms_store_lock(st, &li);
	assert_int_equal(mms_store_lock(st, &li), id2);
	mms_store_lock_label(st, id2, label, sizeof(label));
	assert_string_equal(label, "mmap_lock (9 worker)");
	mms_store_destroy(st);
	mms_store_destroy(NULL);
}

static void test_builder_merges(void **state)
{
	struct mms_store *st;
	struct mms_lock_sample a = lock_row(1, 0, 1, 100), b = lock_row(1, 0, 1, 300);
	struct mms_lock_sample c = lock_row(2, 0, 1, 50);
	const struct mms_interval *iv;

	(void)state;
	assert_int_equal(mms_store_create(NULL, &st), 0);
	assert_non_null(mms_store_begin(st, 1000));
	assert_null(mms_store_begin(st, 1000));	/* one builder at a time */
	assert_int_equal(mms_store_add_lock(st, &a), 0);
	assert_int_equal(mms_store_add_lock(st, &b), 0);
	assert_int_equal(mms_store_add_lock(st, &c), 0);
	assert_int_equal(mms_store_add_value(st, 0, "vma.split", 0, 1, 5), 0);
	assert_int_equal(mms_store_add_value(st, 0, "vma.split", 0, 1, 2), 0);
	mms_store_add_lost(st, MMS_LOST_MAP_FULL, 3);
	assert_int_equal(mms_store_commit(st, 1000000000, 0), 0);
	iv = mms_store_latest(st);
	assert_int_equal(iv->n_locks, 2);
	assert_int_equal(iv->locks[0].wait.count, 2);
	assert_int_equal(iv->locks[0].wait.total, 400);
	assert_int_equal(iv->locks[0].wait.min, 100);
	assert_int_equal(iv->n_metrics, 1);
	assert_int_equal(iv->metrics[0].stat.count, 7);
	assert_int_equal(iv->lost[MMS_LOST_MAP_FULL], 3);
	assert_int_equal(iv->dur_ns, 1000000000);
	assert_int_equal(iv->start_ns, 1000);
	/* Adding without an open interval is refused. */
	assert_int_equal(mms_store_add_lock(st, &a), -22);
	mms_store_destroy(st);
}

static void test_window(void **state)
{
	struct mms_store_opts o = { .window = 5 };
	struct mms_store *st;

	(void)state;
	assert_int_equal(mms_store_create(&o, &st), 0);
	for (int i = 0; i < 12; i++) {
		struct mms_lock_sample s = lock_row(1, 0, 1, (uint64_t)i + 1);

		mms_store_begin(st, (uint64_t)i);
		mms_store_add_lock(st, &s);
		assert_int_equal(mms_store_commit(st, 1, 0), 0);
	}
	assert_int_equal(mms_store_count(st), 5);
	assert_int_equal(mms_store_evicted(st), 7);
	assert_int_equal(mms_store_at(st, 0)->seq, 7);
	assert_int_equal(mms_store_latest(st)->seq, 11);
	assert_int_equal(mms_store_latest(st)->locks[0].wait.total, 12);
	assert_int_equal(mms_store_find_seq(st, 9), 2);
	assert_int_equal(mms_store_find_seq(st, 3), -2);
	assert_null(mms_store_at(st, 5));
	mms_store_destroy(st);
}

/* Memory stays bounded however long the run: many intervals with fresh tasks each. */
static void test_bounded_memory(void **state)
{
	struct mms_store_opts o = { .window = 50, .max_bytes = 256 * 1024 };
	uint64_t peak = 0, at_fill = 0;
	struct mms_store *st;
	char comm[16];

	(void)state;
	assert_int_equal(mms_store_create(&o, &st), 0);
	for (uint32_t i = 0; i < 5000; i++) {
		mms_store_begin(st, i);
		for (uint32_t j = 0; j < 40; j++) {
			struct mms_lock_sample s;
			uint32_t tid = i * 40 + j + 1;

			snprintf(comm, sizeof(comm), "t%u", tid);
			s = lock_row(1 + j % 4, 0, mms_store_task(st, tid, tid, comm), 100);
			assert_int_equal(mms_store_add_lock(st, &s), 0);
		}
		assert_int_equal(mms_store_commit(st, 1, 0), 0);
		if (i == 500)
			at_fill = mms_store_bytes(st);
		if (i > 500 && mms_store_bytes(st) > peak)
			peak = mms_store_bytes(st);
	}
	assert_true(mms_store_count(st) <= 50);
	/* 200k distinct tasks went through; memory stays within 3x of the filled window. */
	assert_true(peak < 3 * at_fill);
	assert_true(mms_store_epoch(st) > 0);
	/* The newest interval's tasks are still resolvable after sweeps. */
	{
		const struct mms_interval *iv = mms_store_latest(st);
		const struct mms_task *t = mms_store_get_task(st, iv->locks[0].task_id);

		assert_non_null(t);
		snprintf(comm, sizeof(comm), "t%u", t->tid);
		assert_string_equal(mms_store_get_str(st, t->comm_id), comm);
	}
	mms_store_destroy(st);
}

static void test_byte_budget(void **state)
{
	struct mms_store_opts o = { .window = 1000, .max_bytes = 64 * 1024 };
	struct mms_store *st;

	(void)state;
	assert_int_equal(mms_store_create(&o, &st), 0);
	for (uint32_t i = 0; i < 200; i++) {
		mms_store_begin(st, i);
		for (uint32_t j = 0; j < 20; j++) {
			struct mms_lock_sample s = lock_row(j + 1, 0, 1, 10);

			mms_store_add_lock(st, &s);
		}
		mms_store_commit(st, 1, 0);
	}
	assert_true(mms_store_count(st) < 200);
	assert_true(mms_store_evicted(st) > 0);
	mms_store_destroy(st);
}

static void test_row_cap(void **state)
{
	struct mms_store_opts o = { .max_rows = 3 };
	struct mms_store *st;

	(void)state;
	assert_int_equal(mms_store_create(&o, &st), 0);
	mms_store_begin(st, 0);
	for (uint32_t j = 0; j < 5; j++) {
		struct mms_lock_sample s = lock_row(j + 1, 0, 1, 10);

		mms_store_add_lock(st, &s);
	}
	mms_store_commit(st, 1, 0);
	assert_int_equal(mms_store_latest(st)->n_locks, 3);
	assert_int_equal(mms_store_latest(st)->lost[MMS_LOST_STORE], 2);
	mms_store_destroy(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intern),
		cmocka_unit_test(test_builder_merges),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_bounded_memory),
		cmocka_unit_test(test_byte_budget),
		cmocka_unit_test(test_row_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
