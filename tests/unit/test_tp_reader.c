// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests: the tracepoint reader's parsing (libtraceevent, fields by
 * name) against format text and raw records in tests/data, its process
 * filter, the user-space aggregation the tracepoint collectors use, and the
 * mm metric sub-key helpers.
 *
 *   test_tp_reader DATA_DIR
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <event-parse.h>

#include "mm_uagg.h"
#include "mmscope/mm_metrics.h"
#include "mmscope/options.h"
#include "mmscope/query.h"
#include "mmscope/store.h"
#include "tp_reader.h"

static const char *data_dir;

static char *slurp(const char *name, size_t *len)
{
	char path[1024], *buf;
	long n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", data_dir, name);
	f = fopen(path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = 0;
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void add_format(struct mms_tp_reader *r, const char *sys, const char *file,
		       mms_tp_handler fn, void *ctx, struct mms_tp_event **ev)
{
	size_t len;
	char *text = slurp(file, &len);

	assert_int_equal(mms_tp_reader_add_format(r, sys, text, len, fn, ctx, ev), 0);
	free(text);
}

/* One raw record from mm_records.hex, by its event tag and position among those. */
struct raw {
	uint32_t pid, tid, size;
	uint8_t data[256];
};

static int load_raw(const char *tag, struct raw *out, int max)
{
	size_t len;
	char *text = slurp("mm_records.hex", &len), *save = NULL, *line;
	int n = 0;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char ev[64], hex[600];
		struct raw *r = &out[n];

		if (line[0] == '#' || n == max)
			continue;
		assert_int_equal(sscanf(line, "%63s %u %u %599s", ev, &r->pid, &r->tid, hex), 4);
		if (strcmp(ev, tag))
			continue;
		r->size = (uint32_t)strlen(hex) / 2;
		for (uint32_t i = 0; i < r->size; i++)
			assert_int_equal(sscanf(hex + 2 * i, "%2hhx", &r->data[i]), 1);
		n++;
	}
	free(text);
	return n;
}

/* What a handler saw: every field it was asked for, by name. */
struct seen {
	int calls;
	const char *names[12];
	int nr_names;
	uint64_t val[8][12];
	int err[8][12];
	uint32_t pid[8], tid[8];
};

static int remember(void *ctx, const struct mms_tp_record *rec)
{
	struct seen *s = ctx;
	int i = s->calls++;

	if (i >= 8)
		return 0;
	s->pid[i] = rec->pid;
	s->tid[i] = rec->tid;
	for (int f = 0; f < s->nr_names; f++)
		s->err[i][f] = mms_tp_read(rec, mms_tp_field(rec->ev, s->names[f]), &s->val[i][f]);
	return 0;
}

static int dispatch(struct mms_tp_reader *r, const struct raw *raw)
{
	return mms_tp_reader_dispatch(r, raw->data, raw->size, raw->pid, raw->tid, 0, 1);
}

static void test_formats(void **state)
{
	struct mms_tp_event *split, *merge, *batch;
	struct mms_tp_reader *r;
	struct tep_format_field *f;

	(void)state;
	assert_int_equal(mms_tp_reader_create(&r), 0);
	add_format(r, "vma", "vma_split.format", remember, NULL, &split);
	add_format(r, "vma", "vma_merge.format", remember, NULL, &merge);
	add_format(r, "rmap", "try_to_unmap_batch.format", remember, NULL, &batch);
	assert_string_equal(mms_tp_event_name(split), "vma:vma_split");
	assert_string_equal(mms_tp_event_name(batch), "rmap:try_to_unmap_batch");
	assert_int_equal(mms_tp_event_id(split), 1801);
	assert_int_equal(mms_tp_event_id(merge), 1802);
	assert_int_equal(mms_tp_event_id(batch), 1803);
	f = mms_tp_field(split, "new_below");
	assert_non_null(f);
	assert_int_equal(f->offset, 48);
	assert_int_equal(f->size, 4);
	assert_non_null(mms_tp_field(merge, "kind"));
	assert_non_null(mms_tp_field(batch, "lazyfree"));
	assert_null(mms_tp_field(batch, "no_such_field"));
	assert_null(mms_tp_field(split, "kind"));
	/* Garbage is refused, not half-parsed. */
	assert_int_equal(mms_tp_reader_add_format(r, "x", "nonsense", 8, remember, NULL, NULL),
			 -EINVAL);
	mms_tp_reader_destroy(r);
	mms_tp_reader_destroy(NULL);
}

static void test_records(void **state)
{
	struct seen split = { .names = { "start", "addr", "new_below", "map_count", "error", "anon" },
			      .nr_names = 6 };
	struct seen merge = { .names = { "kind", "removed", "origin", "anon", "req_start", "end" },
			      .nr_names = 6 };
	struct seen batch = { .names = { "order", "nr_pages", "folio_nr_pages", "anon", "lazyfree",
					 "pfn" }, .nr_names = 6 };
	struct raw raw[4];
	struct mms_tp_reader *r;

	(void)state;
	assert_int_equal(mms_tp_reader_create(&r), 0);
	add_format(r, "vma", "vma_split.format", remember, &split, NULL);
	add_format(r, "vma", "vma_merge.format", remember, &merge, NULL);
	add_format(r, "rmap", "try_to_unmap_batch.format", remember, &batch, NULL);

	assert_int_equal(load_raw("vma_split", raw, 2), 2);
	assert_int_equal(dispatch(r, &raw[0]), 0);
	assert_int_equal(dispatch(r, &raw[1]), 0);
	assert_int_equal(split.calls, 2);
	assert_true(split.val[0][0] == 0x7f0000000000ULL);
	assert_true(split.val[0][1] == 0x7f0000001000ULL);
	assert_int_equal(split.val[0][2], 0);
	assert_int_equal(split.val[0][3], 27);
	assert_int_equal(split.val[0][4], 0);
	assert_int_equal(split.val[0][5], 1);
	/* Second: a thread of 100, file-backed, -ENOMEM sign-extended. */
	assert_int_equal(split.pid[1], 100);
	assert_int_equal(split.tid[1], 101);
	assert_int_equal(split.val[1][2], 1);
	assert_int_equal(split.val[1][3], 65530);
	assert_int_equal((int64_t)split.val[1][4], -12);
	assert_int_equal(split.val[1][5], 0);

	assert_int_equal(load_raw("vma_merge", raw, 1), 1);
	assert_int_equal(dispatch(r, &raw[0]), 0);
	assert_int_equal(merge.calls, 1);
	assert_int_equal(merge.val[0][0], MMS_VMA_MERGE_BOTH);
	assert_int_equal(merge.val[0][1], 2);
	assert_int_equal(merge.val[0][2], MMS_VMA_ORIGIN_EXISTING);
	assert_int_equal(merge.val[0][3], 1);
	assert_true(merge.val[0][4] == 0x7f0000001000ULL);
	assert_true(merge.val[0][5] == 0x7f0000003000ULL);

	assert_int_equal(load_raw("try_to_unmap_batch", raw, 2), 2);
	assert_int_equal(dispatch(r, &raw[0]), 0);
	assert_int_equal(dispatch(r, &raw[1]), 0);
	assert_int_equal(batch.calls, 2);
	assert_int_equal(batch.val[0][0], 9);
	assert_int_equal(batch.val[0][1], 512);
	assert_int_equal(batch.val[0][2], 512);
	assert_int_equal(batch.val[0][3], 1);
	assert_int_equal(batch.val[0][4], 0);
	assert_true(batch.val[0][5] == 0x12a400);
	assert_int_equal(batch.val[1][0], 4);
	assert_int_equal(batch.val[1][1], 16);
	assert_int_equal(batch.val[1][3], 0);
	assert_int_equal(batch.val[1][4], 1);
	assert_int_equal(mms_tp_reader_take_parse_errors(r), 0);
	mms_tp_reader_destroy(r);
}

/* A kernel whose tracepoint gained fields (and so moved the old ones) still reads right. */
static void test_moved_fields(void **state)
{
	struct seen batch = { .names = { "order", "nr_pages", "anon", "memcg_id", "flags" },
			      .nr_names = 5 };
	struct mms_tp_reader *r;
	struct raw raw[1];

	(void)state;
	assert_int_equal(mms_tp_reader_create(&r), 0);
	add_format(r, "rmap", "try_to_unmap_batch_v2.format", remember, &batch, NULL);
	assert_int_equal(load_raw("try_to_unmap_batch_v2", raw, 1), 1);
	assert_int_equal(dispatch(r, &raw[0]), 0);
	assert_int_equal(batch.calls, 1);
	assert_int_equal(batch.pid[0], 300);
	assert_int_equal(batch.val[0][0], 2);
	assert_int_equal(batch.val[0][1], 4);
	assert_int_equal(batch.val[0][2], 1);
	assert_int_equal(batch.val[0][3], 77);
	assert_int_equal(batch.val[0][4], 5);
	mms_tp_reader_destroy(r);
}

static void test_bad_records(void **state)
{
	struct seen split = { .names = { "new_below", "anon" }, .nr_names = 2 };
	uint8_t unknown[16] = { 0x0f, 0x27 };	/* common_type 9999 */
	struct mms_tp_reader *r;
	struct raw raw[3];

	(void)state;
	assert_int_equal(mms_tp_reader_create(&r), 0);
	add_format(r, "vma", "vma_split.format", remember, &split, NULL);
	/* The third vma_split record is cut short at 40 bytes. */
	assert_int_equal(load_raw("vma_split", raw, 3), 3);
	assert_int_equal(raw[2].size, 40);
	assert_int_equal(dispatch(r, &raw[2]), 0);
	assert_int_equal(split.calls, 1);
	assert_int_equal(split.err[0][0], -EINVAL);
	assert_int_equal(split.err[0][1], -EINVAL);
	assert_int_equal(mms_tp_reader_dispatch(r, unknown, sizeof(unknown), 1, 1, 0, 0), -ENOENT);
	assert_int_equal(mms_tp_reader_dispatch(r, unknown, 4, 1, 1, 0, 0), -EINVAL);
	assert_int_equal(split.calls, 1);
	mms_tp_reader_destroy(r);
}

static void test_filter(void **state)
{
	struct seen split = { .names = { "new_below" }, .nr_names = 1 };
	struct seen batch = { .names = { "nr_pages" }, .nr_names = 1 };
	struct mms_tp_reader *r;
	struct raw s[2], b[2];
	struct mms_options o;

	(void)state;
	assert_int_equal(load_raw("vma_split", s, 2), 2);
	assert_int_equal(load_raw("try_to_unmap_batch", b, 2), 2);

	/* -p 100: process 100's threads only. */
	mms_options_init(&o);
	o.pid = 100;
	assert_int_equal(mms_tp_reader_create(&r), 0);
	add_format(r, "vma", "vma_split.format", remember, &split, NULL);
	add_format(r, "rmap", "try_to_unmap_batch.format", remember, &batch, NULL);
	assert_int_equal(mms_tp_reader_filter(r, &o), 0);
	assert_int_equal(dispatch(r, &s[0]), 0);
	assert_int_equal(dispatch(r, &s[1]), 0);
	assert_int_equal(dispatch(r, &b[0]), 0);
	assert_int_equal(split.calls, 2);
	assert_int_equal(batch.calls, 0);
	assert_true(mms_tp_reader_wanted(r, 100, 12345));
	assert_false(mms_tp_reader_wanted(r, 200, 200));
	mms_tp_reader_destroy(r);

	/* --tid 101: that thread only. */
	memset(&split, 0, offsetof(struct seen, names));
	mms_options_init(&o);
	o.tids[o.nr_tids++] = 101;
	assert_int_equal(mms_tp_reader_create(&r), 0);
	add_format(r, "vma", "vma_split.format", remember, &split, NULL);
	assert_int_equal(mms_tp_reader_filter(r, &o), 0);
	assert_int_equal(dispatch(r, &s[0]), 0);
	assert_int_equal(dispatch(r, &s[1]), 0);
	assert_int_equal(split.calls, 1);
	assert_int_equal(split.tid[0], 101);
	mms_tp_reader_destroy(r);
}

static const char *comm_fn(void *ctx, uint32_t pid)
{
	(void)ctx;
	return pid == 7 ? "seven" : "other";
}

static void test_uagg(void **state)
{
	static const char *const names[] = { MMS_M_RMAP_BATCH, MMS_M_RMAP_BATCH_ANON };
	struct mm_uagg u = { 0 };
	struct mms_store *st;
	struct mms_stat s;

	(void)state;
	assert_int_equal(mms_store_create(NULL, &st), 0);
	assert_non_null(mms_store_begin(st, 0));
	/* 512 + 1 + 1 + 16 pages at order 9/0/0/4 for pid 7, and 1000 other processes. */
	assert_int_equal(mm_uagg_add(&u, 7, 0, 9, 512), 0);
	assert_int_equal(mm_uagg_add(&u, 7, 0, 0, 1), 0);
	assert_int_equal(mm_uagg_add(&u, 7, 0, 0, 1), 0);
	assert_int_equal(mm_uagg_add(&u, 7, 1, 4, 16), 0);
	for (uint32_t pid = 1000; pid < 2000; pid++)
		assert_int_equal(mm_uagg_add(&u, pid, 0, 0, pid), 0);
	assert_int_equal(u.nr, 1003);
	assert_int_equal(mm_uagg_drain(&u, st, names, 2, comm_fn, NULL), 0);
	assert_int_equal(u.nr, 0);
	assert_int_equal(mms_store_commit(st, 1, 0), 0);
	assert_int_equal(mms_query_metric(st, 0, 0, MMS_M_RMAP_BATCH, 0, 7, &s), 0);
	assert_int_equal(s.count, 2);
	assert_int_equal(s.total, 2);
	assert_int_equal(mms_query_metric(st, 0, 0, MMS_M_RMAP_BATCH, 9, 7, &s), 0);
	assert_int_equal(s.count, 1);
	assert_int_equal(s.max, 512);
	assert_int_equal(s.hist[9], 1);
	assert_int_equal(mms_query_metric(st, 0, 0, MMS_M_RMAP_BATCH_ANON, -1, 0, &s), 0);
	assert_int_equal(s.total, 16);
	assert_int_equal(mms_query_metric(st, 0, 0, MMS_M_RMAP_BATCH, 0, 1999, &s), 0);
	assert_int_equal(s.total, 1999);
	assert_int_equal(mms_query_metric(st, 0, 0, MMS_M_RMAP_BATCH, -1, 0, &s), 0);
	assert_int_equal(s.count, 1003);
	assert_string_equal(mms_store_get_str(st, mms_store_get_task(st,
			    mms_store_latest(st)->metrics[0].proc_id)->comm_id), "seven");
	/* Empty after a drain: the next interval starts from nothing. */
	assert_non_null(mms_store_begin(st, 0));
	assert_int_equal(mm_uagg_drain(&u, st, names, 2, comm_fn, NULL), 0);
	assert_int_equal(mms_store_commit(st, 1, 0), 0);
	assert_int_equal(mms_store_latest(st)->n_metrics, 0);
	mm_uagg_finish(&u);
	mms_store_destroy(st);
}

static void test_metric_helpers(void **state)
{
	uint32_t sub = mms_vma_merge_sub(MMS_VMA_MERGE_NEXT, MMS_VMA_ORIGIN_COPY, 1);

	(void)state;
	assert_int_equal(mms_vma_sub_kind(sub), MMS_VMA_MERGE_NEXT);
	assert_int_equal(mms_vma_sub_origin(sub), MMS_VMA_ORIGIN_COPY);
	assert_true(sub & MMS_VMA_FILE);
	assert_string_equal(mms_vma_merge_kind_name(mms_vma_sub_kind(sub)), "next");
	assert_string_equal(mms_vma_origin_name(MMS_VMA_ORIGIN_EXISTING), "existing");
	assert_string_equal(mms_vma_syscall_name(10), "mprotect");
	assert_string_equal(mms_vma_syscall_name(329), "pkey_mprotect");
	assert_null(mms_vma_syscall_name(0));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_formats),
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_moved_fields),
		cmocka_unit_test(test_bad_records),
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_uagg),
		cmocka_unit_test(test_metric_helpers),
	};

	if (argc != 2) {
		fprintf(stderr, "usage: test_tp_reader DATA_DIR\n");
		return 2;
	}
	data_dir = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
