// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests: the canvas and the views, rendered from a store filled by hand
 * into an off-screen canvas and compared with the text a user would read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <locale.h>

#include "mmscope/canvas.h"
#include "mmscope/mm_metrics.h"
#include "mmscope/view.h"

#define SEC 1000000000ULL

static const struct mms_view *view(const char *name)
{
	for (int i = 0; mms_views[i]; i++)
		if (!strcmp(mms_views[i]->name, name))
			return mms_views[i];
	fail_msg("no view %s", name);
	return NULL;
}

static char *text(const struct mms_canvas *c)
{
	size_t n = mms_canvas_text(c, NULL, 0);
	char *buf = malloc(n + 1);

	assert_non_null(buf);
	mms_canvas_text(c, buf, n + 1);
	return buf;
}

/* Line y of the canvas, trailing blanks removed (static buffer). */
static const char *line(const struct mms_canvas *c, int y)
{
	static char buf[1024];
	char *all = text(c), *p = all;

	for (int i = 0; i < y && p; i++) {
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	assert_non_null(p);
	snprintf(buf, sizeof(buf), "%.*s", (int)(strchr(p, '\n') - p), p);
	free(all);
	return buf;
}

static void add_wait(struct mms_store *st, uint32_t lock, uint32_t stack, uint32_t task,
		     uint32_t flags, uint64_t ns, uint64_t n)
{
	struct mms_lock_sample s = { .lock_id = lock, .stack_id = stack, .task_id = task,
				     .flags = flags };

	mms_stat_add_n(&s.wait, ns, n);
	assert_int_equal(mms_store_add_lock(st, &s), 0);
}

struct fixture {
	struct mms_store *st;
	uint32_t mm_lock, i_mmap, rcu, t1, t2, stack;
};

/*
 * Three intervals of one second.  The last: mmap_lock of 42 (stress-ng)
 * 10 waits of 2 ms by tid 43; i_mmap_rwsem of libc 4 waits of 1 ms by 44;
 * rcu_state 100 waits of 1 us by 43.
 */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct mms_lock_info li = { .addr = 0xffff888100000000ULL, .kind = MMS_LOCK_MMAP };
	uint64_t ips[2] = { 0xffffffff81000010ULL, 0xffffffff81000020ULL };
	uint32_t syms[2];

	assert_non_null(f);
	assert_int_equal(mms_store_create(NULL, &f->st), 0);
	li.name_id = mms_store_str(f->st, "mmap_lock");
	li.owner_tgid = 42;
	li.owner_comm_id = mms_store_str(f->st, "stress-ng");
	f->mm_lock = mms_store_lock(f->st, &li);
	li = (struct mms_lock_info){ .addr = 0xffff888200000000ULL, .kind = MMS_LOCK_I_MMAP };
	li.name_id = mms_store_str(f->st, "i_mmap_rwsem");
	li.detail_id = mms_store_str(f->st, "/usr/lib/libc.so.6");
	f->i_mmap = mms_store_lock(f->st, &li);
	li = (struct mms_lock_info){ .addr = 0xffffffff83000000ULL, .kind = MMS_LOCK_STATIC };
	li.name_id = mms_store_str(f->st, "rcu_state");
	f->rcu = mms_store_lock(f->st, &li);
	f->t1 = mms_store_task(f->st, 43, 42, "stress-ng");
	f->t2 = mms_store_task(f->st, 44, 44, "cc1");
	syms[0] = mms_store_str(f->st, "vma_prepare+0x3c");
	syms[1] = mms_store_str(f->st, "__split_vma+0x80");
	f->stack = mms_store_stack(f->st, ips, syms, 2);
	for (int i = 0; i < 3; i++) {
		assert_non_null(mms_store_begin(f->st, 1700000000ULL * SEC + i * SEC));
		add_wait(f->st, f->mm_lock, f->stack, f->t1, MMS_LCB_WRITE, 2000000, 10 * (i + 1));
		if (i == 2) {
			add_wait(f->st, f->i_mmap, f->stack, f->t2, MMS_LCB_WRITE, 1000000, 4);
			add_wait(f->st, f->rcu, 0, f->t1, MMS_LCB_SPIN, 1000, 100);
		}
		assert_int_equal(mms_store_commit(f->st, SEC, 0), 0);
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	mms_store_destroy(f->st);
	free(f);
	return 0;
}

static void test_canvas(void **state)
{
	struct mms_canvas *c;
	uint64_t vals[4] = { 0, 1, 4, 8 };
	char *t;

	(void)state;
	assert_int_equal(mms_canvas_create(12, 3, false, &c), 0);
	assert_int_equal(mms_canvas_put(c, 0, 0, MMS_ROLE_NORMAL, "i_mmap_rwsem (libc)", 10), 10);
	mms_canvas_put_right(c, 0, 1, 12, MMS_ROLE_VALUE, "35ms");
	mms_canvas_spark(c, 0, 2, 4, vals, 4, 0, MMS_ROLE_SPARK);
	/* Non-ASCII on an ASCII canvas becomes '?', never a broken byte. */
	mms_canvas_put(c, 6, 2, MMS_ROLE_NORMAL, "\xc3\xa9t\xc3\xa9", -1);
	t = text(c);
	assert_string_equal(t, "i_mmap_rw~\n        35ms\n _=@  ?t?\n");
	assert_int_equal(mms_canvas_at(c, 8, 1)->role, MMS_ROLE_VALUE);
	free(t);
	/* UTF-8: block sparklines and an ellipsis for cut text. */
	c->utf8 = true;
	mms_canvas_clear(c);
	mms_canvas_put(c, 0, 0, MMS_ROLE_NORMAL, "abcdefghijklmnop", -1);
	mms_canvas_spark(c, 0, 1, 4, vals, 4, 0, MMS_ROLE_SPARK);
	mms_canvas_bar(c, 0, 2, 4, 0.5, MMS_ROLE_BAR);
	t = text(c);
	assert_string_equal(t, "abcdefghijk\xe2\x80\xa6\n \xe2\x96\x81\xe2\x96\x84\xe2\x96\x88\n"
			       "\xe2\x96\x88\xe2\x96\x88\n");
	free(t);
	mms_canvas_destroy(c);
}

static void test_env(void **state)
{
	struct fixture *f = *state;
	struct mms_view_env env;

	mms_view_env_init(&env, f->st, -1, MMS_RANGE_INTERVAL);
	assert_true(env.valid);
	assert_int_equal(env.cur, 2);
	assert_int_equal(env.from, 2);
	assert_int_equal(env.spark_from, 0);
	mms_view_env_init(&env, f->st, 1, MMS_RANGE_ALL);
	assert_int_equal(env.cur, 1);
	assert_int_equal(env.from, 0);
	assert_true(env.secs > 1.99 && env.secs < 2.01);
}

static void render(const struct mms_view *v, void *priv, struct mms_view_env *env,
		   struct mms_canvas *c)
{
	assert_int_equal(v->update(priv, env), 0);
	mms_canvas_clear(c);
	v->draw(priv, env, c, 0, c->h);
}

static void test_locks(void **state)
{
	struct fixture *f = *state;
	const struct mms_view *v = view("Locks");
	struct mms_view_env env;
	struct mms_canvas *c;
	struct mms_list *l;
	struct mms_focus fo;
	void *priv;

	assert_int_equal(mms_canvas_create(100, 8, false, &c), 0);
	assert_int_equal(v->create(&priv), 0);
	mms_view_env_init(&env, f->st, -1, MMS_RANGE_INTERVAL);
	render(v, priv, &env, c);
	assert_string_equal(line(c, 0), "3 locks  range: interval, 1.0 s to #2");
	assert_string_equal(line(c, 1), " CONT/s WAIT/sv     AVG     MAX     P99 TYPE      LOCK"
			    "                          WAIT, LAST MINUTE");
	/* 30 waits of 2 ms in one second: 60 ms of waiting per second; the spark grows. */
	assert_string_equal(line(c, 2), "     30    60ms   2.0ms   2.0ms   2.0ms rwsem:W   "
			    "mmap_lock (42 stress-ng)                       -*@");
	/* Names wider than their column are cut, and the cut is marked. */
	assert_string_equal(line(c, 3), "      4   4.0ms   1.0ms   1.0ms   1.0ms rwsem:W   "
			    "i_mmap_rwsem (/usr/lib/libc.~                    @");
	assert_string_equal(line(c, 4), "    100   100us   1.0us   1.0us   1.0us spinlock  "
			    "rcu_state                                        @");
	/* Sort by contentions: rcu_state first. */
	l = v->list(priv);
	mms_list_sort_col(l, 0);
	render(v, priv, &env, c);
	assert_non_null(strstr(line(c, 2), "rcu_state"));
	/* Filter: case-insensitive substring of the lock name. */
	env.filter = "MMAP";
	render(v, priv, &env, c);
	assert_string_equal(line(c, 0), "2 locks matching /MMAP  range: interval, 1.0 s to #2  "
			    "(3 in all)");
	/* Mouse: a click on a title sorts by it (again: inverts); on a row selects it. */
	assert_int_equal(mms_list_click(l, 60, 1), MMS_CLICK_HEAD);
	assert_int_equal(l->sort, 6);
	assert_int_equal(mms_list_click(l, 60, 1), MMS_CLICK_HEAD);
	assert_true(l->invert);
	render(v, priv, &env, c);
	assert_non_null(strstr(line(c, 2), "mmap_lock (42"));	/* names descending */
	assert_int_equal(mms_list_click(l, 3, 3), MMS_CLICK_ROW);
	assert_int_equal(l->sel, 1);
	assert_int_equal(mms_list_click(l, 3, 7), MMS_CLICK_NONE);	/* below the rows */
	mms_list_click(l, 3, 2);
	/* Enter on the selected row drills into that lock. */
	assert_true(v->enter(priv, &fo));
	assert_int_equal(fo.kind, MMS_FOCUS_LOCK);
	assert_int_equal(fo.key, f->mm_lock);	/* the selection stays on its row */
	v->destroy(priv);
	mms_canvas_destroy(c);
}

static void test_detail(void **state)
{
	struct fixture *f = *state;
	const struct mms_view *v = view("Detail");
	struct mms_focus fo = { .kind = MMS_FOCUS_LOCK };
	struct mms_view_env env;
	struct mms_canvas *c;
	char *t;
	void *priv;

	fo.key = f->mm_lock;
	snprintf(fo.label, sizeof(fo.label), "mmap_lock (42 stress-ng)");
	assert_int_equal(mms_canvas_create(80, 40, false, &c), 0);
	assert_int_equal(v->create(&priv), 0);
	v->focus(priv, &fo);
	mms_view_env_init(&env, f->st, -1, MMS_RANGE_ALL);
	render(v, priv, &env, c);
	t = text(c);
	assert_string_equal(line(c, 0), "Lock mmap_lock (42 stress-ng)");
	assert_string_equal(line(c, 2), "whole window, 3.0 s: 60 contentions (20/s), 120.00 ms "
			    "waited");
	/* Names wider than their column are cut, and the cut is marked. */
	assert_string_equal(line(c, 3), "avg 2.0ms  min 2.0ms  max 2.0ms  p50 2.0ms  p99 2.0ms");
	/* All 60 waits in one log2 slot: 1.0ms-2.1ms (2 ms = 2,000,000 ns < 2^21). */
	assert_non_null(strstr(t, "\n 1.0ms-2.1ms         60 "
			       "########################################\n"));
	assert_non_null(strstr(t, "\n     20    40ms   2.0ms   2.0ms       43      42 "
			       "stress-ng\n"));
	assert_non_null(strstr(t, "\n     20    40ms   2.0ms   2.0ms  vma_prepare+0x3c\n"
			       "                                 __split_vma+0x80\n"));
	free(t);
	v->destroy(priv);
	mms_canvas_destroy(c);
}

static void add_metric(struct mms_store *st, uint32_t proc, const char *name, uint32_t sub,
		       uint64_t value, uint64_t n)
{
	assert_int_equal(mms_store_add_value(st, proc, name, sub, value, n), 0);
}

static void test_mm_views(void **state)
{
	struct fixture *f = *state;
	struct mms_family_status fam[MMS_FAM_NR] = {
		[MMS_FAM_LOCK] = { .source = "lock-bpf", .backend = "bpf" },
		[MMS_FAM_VMA] = { .source = "vma-inferred", .backend = "inferred" },
		[MMS_FAM_RMAP] = { .source = "rmap-tp", .backend = "tracepoint" },
	};
	uint32_t proc = mms_store_task(f->st, 42, 42, "stress-ng");
	uint32_t group = mms_store_task(f->st, MMS_TGID_SHORT, MMS_TGID_SHORT, "cc1");
	struct mms_view_env env;
	struct mms_canvas *c;
	char *t;
	void *priv;

	snprintf(fam[MMS_FAM_MMAP_LOCK].why, sizeof(fam[0].why), "switched off: use --mmap-hold");
	assert_non_null(mms_store_begin(f->st, 1700000003ULL * SEC));
	/* 6 removals of one order-0 page, 2 of a whole order-9 folio (512 pages). */
	add_metric(f->st, proc, MMS_M_RMAP_BATCH, 0, 1, 6);
	add_metric(f->st, proc, MMS_M_RMAP_BATCH, 9, 512, 2);
	/* 10 mprotect calls, each adding 2 VMAs. */
	add_metric(f->st, proc, MMS_M_VMA_INFERRED_CALLS, 10, 1, 10);
	add_metric(f->st, proc, MMS_M_VMA_INFERRED_UP, 10, 2, 10);
	/* 5 short-lived processes named cc1, 3 mmap calls between them. */
	add_metric(f->st, group, MMS_M_VMA_INFERRED_CALLS, 9, 1, 3);
	add_metric(f->st, group, MMS_M_VMA_INFERRED_SHORT, 0, 1, 5);
	add_metric(f->st, proc, MMS_M_MMAP_WAIT_WRITE, 0, 3000000, 5);
	assert_int_equal(mms_store_commit(f->st, 2 * SEC, 0), 0);
	assert_int_equal(mms_canvas_create(120, 30, false, &c), 0);
	mms_view_env_init(&env, f->st, -1, MMS_RANGE_INTERVAL);
	env.fam = fam;

	assert_int_equal(view("rmap")->create(&priv), 0);
	render(view("rmap"), priv, &env, c);
	t = text(c);
	/* 8 removals, 6 + 1024 pages in 2 s; mean (6 + 1024) / 8 = 128.75. */
	assert_non_null(strstr(t, "try_to_unmap source: rmap-tp (tracepoint)\n"));
	assert_non_null(strstr(t, "try_to_unmap removals 4/s, 515 pages/s, mean batch 128.75 "
			       "pages\n"));
	assert_non_null(strstr(t, "order 9 (2.0MiB)"));
	free(t);
	view("rmap")->destroy(priv);

	assert_int_equal(view("VMA")->create(&priv), 0);
	render(view("VMA"), priv, &env, c);
	t = text(c);
	assert_non_null(strstr(t, "inferred: VMA-count changes per syscall, not splits/merges"));
	{
		char want[64];

		snprintf(want, sizeof(want), "\n%-16s %8s %8s %8s\n", "mprotect", "5", "10", "0");
		assert_non_null(strstr(t, want));
	}
	/* The group: no pid, its name in <>, its processes a second. */
	assert_non_null(strstr(t, "      - <cc1> 2.5 procs/s "));
	assert_non_null(strstr(t, "     42 stress-ng "));
	free(t);
	view("VMA")->destroy(priv);

	assert_int_equal(view("mmap_lock")->create(&priv), 0);
	render(view("mmap_lock"), priv, &env, c);
	t = text(c);
	assert_non_null(strstr(t, "hold times unavailable: switched off: use --mmap-hold"));
	assert_non_null(strstr(t, "contended: read 0/s (-/s waiting), write 2.5/s (7.5ms/s "
			       "waiting)"));
	free(t);
	view("mmap_lock")->destroy(priv);
	mms_canvas_destroy(c);
}

static void test_header(void **state)
{
	struct fixture *f = *state;
	struct mms_session_info info = { .host = "vm", .kernel = "6.18", .target = "system" };
	uint64_t lost[MMS_LOST_NR] = { [MMS_LOST_STACK] = 7 };
	struct mms_header hd = { .info = &info, .lost = lost, .interval_ms = 1000 };
	struct mms_view_env env;
	struct mms_canvas *c;

	assert_int_equal(mms_canvas_create(120, 3, false, &c), 0);
	mms_view_env_init(&env, f->st, -1, MMS_RANGE_INTERVAL);
	assert_int_equal(mms_header_draw(&hd, &env, c, 0, 3), 3);
	assert_string_equal(line(c, 0),
			    "mmscope  host vm  kernel 6.18  target system  interval 1s");
	/* Lost events lead the rates line. */
	assert_string_equal(line(c, 2), "LOST 7 events  contentions 134/s  wait 64ms/s  "
			    "mmap_lock waits 0/s");
	mms_canvas_destroy(c);
}

/*
 * The sources line: mmap_lock without hold-time mode still has its waits
 * (from the lock source); without a lock source it has nothing.
 */
static void test_header_sources(void **state)
{
	struct fixture *f = *state;
	struct mms_session_info info = { .host = "vm", .kernel = "6.18", .target = "system" };
	uint64_t lost[MMS_LOST_NR] = { 0 };
	struct mms_family_status fam[MMS_FAM_NR] = {
		[MMS_FAM_LOCK] = { .source = "lock-bpf", .backend = "bpf" },
		[MMS_FAM_VMA] = { .source = "vma-inferred", .backend = "inferred" },
	};
	struct mms_header hd = { .info = &info, .lost = lost, .interval_ms = 1000, .fam = fam };
	struct mms_view_env env;
	struct mms_canvas *c;

	snprintf(fam[MMS_FAM_MMAP_LOCK].why, sizeof(fam[0].why), "switched off");
	snprintf(fam[MMS_FAM_RMAP].why, sizeof(fam[0].why), "no rmap:try_to_unmap_batch");
	assert_int_equal(mms_canvas_create(120, 3, false, &c), 0);
	mms_view_env_init(&env, f->st, -1, MMS_RANGE_INTERVAL);
	assert_int_equal(mms_header_draw(&hd, &env, c, 0, 3), 3);
	assert_string_equal(line(c, 1), "sources lock bpf  mmap_lock waits  vma inferred  "
			    "rmap unavailable: no rmap:try_to_unmap_batch");
	fam[MMS_FAM_LOCK].source = NULL;
	snprintf(fam[MMS_FAM_LOCK].why, sizeof(fam[0].why), "switched off");
	mms_canvas_clear(c);
	assert_int_equal(mms_header_draw(&hd, &env, c, 0, 3), 3);
	assert_non_null(strstr(line(c, 1), "lock unavailable: switched"));
	assert_non_null(strstr(line(c, 1), "mmap_lock unavailable: switched"));
	mms_canvas_destroy(c);
}

int main(void)
{
	/* As the TUI does: wcwidth() must know the glyphs of a UTF-8 canvas. */
	setlocale(LC_ALL, "C.UTF-8");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_canvas),
		cmocka_unit_test_setup_teardown(test_env, setup, teardown),
		cmocka_unit_test_setup_teardown(test_locks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_detail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mm_views, setup, teardown),
		cmocka_unit_test_setup_teardown(test_header, setup, teardown),
		cmocka_unit_test_setup_teardown(test_header_sources, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
