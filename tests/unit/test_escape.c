// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests: the one escaping of outside strings (core/escape.c) for text,
 * JSON and CSV.  Expected outputs written by hand from RFC 8259, RFC 4180
 * and the UTF-8 definition (RFC 3629: no overlongs, no surrogates).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mmscope/escape.h"

static void text_is(const char *in, const char *want)
{
	char buf[256];

	mms_esc_text(buf, sizeof(buf), in);
	assert_string_equal(buf, want);
	assert_int_equal(mms_esc_needed(in), strcmp(in, want) != 0);
}

static void test_text(void **state)
{
	(void)state;
	text_is("make", "make");
	text_is("caf\xc3\xa9 \xe2\x80\xa6", "caf\xc3\xa9 \xe2\x80\xa6");	/* é … kept */
	text_is("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m");
	text_is("a\nb\tc\rd", "a\\nb\\tc\\rd");
	text_is("del\x7f", "del\\x7f");
	text_is("back\\slash", "back\\\\slash");
	text_is("csi\xc2\x9b" "2J", "csi\\u009b2J");	/* C1 CSI as UTF-8 */
	text_is("nbsp\xc2\xa0", "nbsp\xc2\xa0");	/* U+00A0 is not C1 */
	text_is("bad\xff\xfe", "bad\\xff\\xfe");
	text_is("overlong\xc0\xaf", "overlong\\xc0\\xaf");
	text_is("surrogate\xed\xa0\x80", "surrogate\\xed\\xa0\\x80");
	text_is("cut\xe2\x80", "cut\\xe2\\x80");
	text_is("past\xf4\x90\x80\x80", "past\\xf4\\x90\\x80\\x80");
	text_is("raw C1 byte\x9b", "raw C1 byte\\x9b");
}

static void test_text_bounded(void **state)
{
	char buf[8];

	(void)state;
	/* Cut at a whole escape, never half of one; always terminated. */
	assert_int_equal(mms_esc_text(buf, sizeof(buf), "ab\x1b\x1b"), 6);
	assert_string_equal(buf, "ab\\x1b");
	assert_int_equal(mms_esc_text(buf, 1, "abc"), 0);
	assert_string_equal(buf, "");
}

static void test_json(void **state)
{
	char buf[256];

	(void)state;
	mms_esc_json(buf, sizeof(buf), "q\"b\\ \x1b[0m\n\x7f\xc2\x9b\xff\xc3\xa9");
	assert_string_equal(buf, "q\\\"b\\\\ \\u001b[0m\\n\\u007f\\u009b\\ufffd\xc3\xa9");
}

static char *stream(void (*fn)(FILE *, const char *), const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fn(f, s);
	fclose(f);
	return buf;
}

static void csv_comma(FILE *f, const char *s)
{
	mms_esc_fput_csv(f, s, ",");
}

static void test_streams(void **state)
{
	char *b;

	(void)state;
	b = stream(mms_esc_fput_json, "a\x1b");
	assert_string_equal(b, "\"a\\u001b\"");
	free(b);
	b = stream(mms_esc_fputs, "\x1b]0;title\x07");
	assert_string_equal(b, "\\x1b]0;title\\x07");
	free(b);
	/* CSV: exact bytes; quoted when a reader would otherwise split or misread. */
	b = stream(csv_comma, "plain");
	assert_string_equal(b, "plain");
	free(b);
	b = stream(csv_comma, "a,b \"q\"");
	assert_string_equal(b, "\"a,b \"\"q\"\"\"");
	free(b);
	b = stream(csv_comma, "x\x1by\r");
	assert_string_equal(b, "\"x\x1by\r\"");
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_text_bounded),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_streams),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
