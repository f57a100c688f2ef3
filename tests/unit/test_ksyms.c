// SPDX-License-Identifier: GPL-2.0
/* Unit tests: kallsyms loading and symbolisation (a real file in kallsyms format). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "mmscope/ksyms.h"

static const char kallsyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81001000 T vma_prepare\n"
	"ffffffff81001200 t __split_vma\n"
	"ffffffff82000000 T __sched_text_start\n"
	"ffffffff82000000 T rwsem_down_write_slowpath\n"
	"ffffffff82000800 T __sched_text_end\n"
	"ffffffff82000800 T __lock_text_start\n"
	"ffffffff82000800 T _raw_spin_lock\n"
	"ffffffff82000900 T __lock_text_end\n"
	"ffffffff83000000 D __start_rodata\n"
	"ffffffff84000000 d rcu_state\n"
	"ffffffff84004000 b zone_lock_stats\n"
	"ffffffffc0000000 t helper_fn\t[some_module]\n";

static char path[64];

static int setup(void **state)
{
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/mms-ksyms-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || write(fd, kallsyms, sizeof(kallsyms) - 1) != (ssize_t)sizeof(kallsyms) - 1)
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

static void test_format(void **state)
{
	struct mms_ksyms *ks;
	char buf[128];

	(void)state;
	assert_int_equal(mms_ksyms_load(path, &ks), 0);
	assert_int_equal(mms_ksyms_count(ks), 13);
	assert_false(mms_ksyms_hidden(ks));
	mms_ksyms_format(ks, 0xffffffff8100103cULL, buf, sizeof(buf));
	assert_string_equal(buf, "vma_prepare+0x3c");
	mms_ksyms_format(ks, 0xffffffff81001200ULL, buf, sizeof(buf));
	assert_string_equal(buf, "__split_vma");
	mms_ksyms_format(ks, 0xffffffffc0000010ULL, buf, sizeof(buf));
	assert_string_equal(buf, "helper_fn+0x10");
	mms_ksyms_format(ks, 0x1000, buf, sizeof(buf));
	assert_string_equal(buf, "0x1000");
	assert_true(mms_ksyms_addr(ks, "vma_prepare") == 0xffffffff81001000ULL);
	assert_true(mms_ksyms_addr(ks, "missing") == 0);
	mms_ksyms_destroy(ks);
}

static void test_lock_funcs(void **state)
{
	struct mms_ksyms *ks;

	(void)state;
	assert_int_equal(mms_ksyms_load(path, &ks), 0);
	assert_true(mms_ksyms_is_lock_func(ks, 0xffffffff82000010ULL));
	assert_true(mms_ksyms_is_lock_func(ks, 0xffffffff82000810ULL));
	assert_false(mms_ksyms_is_lock_func(ks, 0xffffffff82000900ULL));
	assert_false(mms_ksyms_is_lock_func(ks, 0xffffffff8100103cULL));
	mms_ksyms_destroy(ks);
}

static void test_data_names(void **state)
{
	struct mms_ksyms *ks;
	char buf[128];

	(void)state;
	assert_int_equal(mms_ksyms_load(path, &ks), 0);
	assert_true(mms_ksyms_data_name(ks, 0xffffffff84000040ULL, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "rcu_state+0x40");
	assert_true(mms_ksyms_data_name(ks, 0xffffffff84004000ULL, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "zone_lock_stats");
	/* A text symbol or a section marker below the address is no name: no guessing. */
	assert_int_equal(mms_ksyms_data_name(ks, 0xffffffff81001010ULL, buf, sizeof(buf)), 0);
	assert_int_equal(mms_ksyms_data_name(ks, 0xffffffff83000100ULL, buf, sizeof(buf)), 0);
	mms_ksyms_destroy(ks);
}

static void test_hidden_and_missing(void **state)
{
	static const char zeros[] = "0000000000000000 T a\n0000000000000000 T b\n";
	char p[64] = "/tmp/mms-ksyms0-XXXXXX";
	struct mms_ksyms *ks;
	char buf[32];
	int fd;

	(void)state;
	assert_int_equal(mms_ksyms_load("/nonexistent/kallsyms", &ks), -2);
	fd = mkstemp(p);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, zeros, sizeof(zeros) - 1), sizeof(zeros) - 1);
	close(fd);
	assert_int_equal(mms_ksyms_load(p, &ks), 0);
	assert_true(mms_ksyms_hidden(ks));
	mms_ksyms_format(ks, 0xffffffff81000000ULL, buf, sizeof(buf));
	assert_string_equal(buf, "0xffffffff81000000");
	mms_ksyms_destroy(ks);
	unlink(p);
}

/* Lines of other shapes are skipped; the last line counts without its newline. */
static void test_odd_lines(void **state)
{
	static const char odd[] =
		"not a symbol line\n"
		"ffffffff81000000 T\n"
		"ffffffff81000000 TT x\n"
		"fffffffff81000000000 T too_wide\n"
		"\n"
		"ffffffff81000100 T first\n"
		"ffffffff81000200 t second\t[mod]\n"
		"ffffffff81000300 T last_without_newline";
	char p[64] = "/tmp/mms-ksyms1-XXXXXX", buf[64];
	struct mms_ksyms *ks;
	int fd;

	(void)state;
	fd = mkstemp(p);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, odd, sizeof(odd) - 1), sizeof(odd) - 1);
	close(fd);
	assert_int_equal(mms_ksyms_load(p, &ks), 0);
	assert_int_equal(mms_ksyms_count(ks), 3);
	mms_ksyms_format(ks, 0xffffffff81000204ULL, buf, sizeof(buf));
	assert_string_equal(buf, "second+0x4");
	assert_int_equal(mms_ksyms_addr(ks, "last_without_newline"), 0xffffffff81000300ULL);
	assert_int_equal(mms_ksyms_addr(ks, "x"), 0);
	mms_ksyms_destroy(ks);
	unlink(p);
}

static void test_real_kallsyms(void **state)
{
	struct mms_ksyms *ks;
	char buf[128];
	size_t lines = 0;
	uint64_t a;
	FILE *f;

	(void)state;
	if (mms_ksyms_load(NULL, &ks))
		skip();
	/* Every line of the kernel's file is one symbol (fgets reads it apart). */
	f = fopen("/proc/kallsyms", "r");
	assert_non_null(f);
	while (fgets(buf, sizeof(buf), f))
		lines += strchr(buf, '\n') != NULL;
	fclose(f);
	assert_true(mms_ksyms_count(ks) + 50 >= lines && mms_ksyms_count(ks) <= lines + 50);
	if (mms_ksyms_hidden(ks)) {
		mms_ksyms_destroy(ks);
		skip();
	}
	/* Round trip on the running kernel: a function's own address names it. */
	a = mms_ksyms_addr(ks, "do_mmap");
	assert_true(a != 0);
	mms_ksyms_format(ks, a + 4, buf, sizeof(buf));
	assert_string_equal(buf, "do_mmap+0x4");
	assert_true(mms_ksyms_is_lock_func(ks, mms_ksyms_addr(ks, "_raw_spin_lock")));
	assert_false(mms_ksyms_is_lock_func(ks, a));
	mms_ksyms_destroy(ks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_lock_funcs),
		cmocka_unit_test(test_data_names),
		cmocka_unit_test(test_hidden_and_missing),
		cmocka_unit_test(test_odd_lines),
		cmocka_unit_test(test_real_kallsyms),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
