// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests: the lock source's stack cache rules (collectors/stack_rules.c),
 * learned from samples built by hand: a frame always the same size gives a
 * FIXED rule, one of two sizes a NEAR rule, one of sizes far apart NEVER.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "stack_rules.h"

#define TOP_WORDS 64
#define RA_A 0xffffffff81000010ULL	/* the inner frame: its size varies */
#define RA_B 0xffffffff81000020ULL
#define RA_C 0xffffffff81000030ULL

static struct {
	uint64_t ra;
	struct lb_hop hop;
} given[8];
static int nr_given;

static int publish(void *arg, uint64_t ra, const struct lb_hop *hop)
{
	(void)arg;
	for (int i = 0; i < nr_given; i++) {
		if (given[i].ra == ra) {
			given[i].hop = hop ? *hop : (struct lb_hop){ 0 };
			return 0;
		}
	}
	if (nr_given == 8)
		return -1;
	given[nr_given].ra = ra;
	given[nr_given++].hop = hop ? *hop : (struct lb_hop){ 0 };
	return 0;
}

static struct lb_hop rule_of(uint64_t ra)
{
	for (int i = 0; i < nr_given; i++)
		if (given[i].ra == ra)
			return given[i].hop;
	return (struct lb_hop){ 0 };
}

/* A sample whose frames A, B, C sit at words a, a + d, a + d + 2 above the context. */
static void add(struct mms_stack_rules *r, uint32_t a, uint32_t d)
{
	static struct lb_learn l;

	memset(&l, 0, sizeof(l));
	l.base = 0xffffc90000100000ULL;
	l.top = l.base + TOP_WORDS * 8;
	l.nwords = TOP_WORDS;
	l.ips[0] = RA_A;
	l.ips[1] = RA_B;
	l.ips[2] = RA_C;
	l.nips = 3 * 8;
	l.raw[a] = RA_A;
	l.raw[a + d] = RA_B;
	l.raw[a + d + 2] = RA_C;
	mms_stack_rules_add(r, &l);
}

static void test_fixed(void **state)
{
	struct mms_stack_rules *r = mms_stack_rules_new(16, publish, NULL);

	(void)state;
	nr_given = 0;
	add(r, 2, 23);
	add(r, 4, 23);
	assert_int_equal(rule_of(RA_A).kind & (LB_HOP_FIXED | LB_HOP_NEAR), LB_HOP_FIXED);
	assert_int_equal(rule_of(RA_A).delta, 23);
	mms_stack_rules_free(r);
}

static void test_two_sizes(void **state)
{
	struct mms_stack_rules *r = mms_stack_rules_new(16, publish, NULL);
	struct lb_hop h;

	(void)state;
	nr_given = 0;
	add(r, 2, 23);
	add(r, 4, 24);
	add(r, 6, 23);
	h = rule_of(RA_A);
	assert_int_equal(h.kind & (LB_HOP_FIXED | LB_HOP_TOP | LB_HOP_NEVER | LB_HOP_NEAR),
			 LB_HOP_NEAR);
	assert_int_equal(h.delta, 23);
	assert_int_equal((h.kind >> LB_HOP_SPAN_SHIFT) & 3, 1);
	/* The frame above is always 2 words: FIXED, whichever size A had. */
	assert_int_equal(rule_of(RA_B).kind & LB_HOP_FIXED, LB_HOP_FIXED);
	assert_int_equal(rule_of(RA_B).delta, 2);
	/* Sizes further apart than LB_HOP_SPAN_MAX: no walk goes past it. */
	add(r, 2, 27);
	h = rule_of(RA_A);
	assert_int_equal(h.kind & (LB_HOP_NEAR | LB_HOP_NEVER), LB_HOP_NEVER);
	mms_stack_rules_free(r);
}

/* Many return addresses (past the table's first size): each gets its own rule. */
#define MANY 1500
static uint16_t many_delta[MANY];

static int publish_many(void *arg, uint64_t ra, const struct lb_hop *hop)
{
	uint64_t k = (ra - RA_A) / 16;

	(void)arg;
	if (k < MANY && hop && (hop->kind & LB_HOP_FIXED))
		many_delta[k] = (uint16_t)hop->delta;
	return 0;
}

static void test_many(void **state)
{
	struct mms_stack_rules *r = mms_stack_rules_new(16, publish_many, NULL);
	static struct lb_learn l;

	(void)state;
	memset(many_delta, 0, sizeof(many_delta));
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t k = 0; k < MANY; k++) {
			uint32_t d = 3 + k % 20;

			memset(&l, 0, sizeof(l));
			l.base = 0xffffc90000100000ULL;
			l.top = l.base + TOP_WORDS * 8;
			l.nwords = TOP_WORDS;
			l.ips[0] = RA_A + 16 * k;
			l.ips[1] = RA_B + 16 * MANY;	/* above all of them */
			l.nips = 2 * 8;
			l.raw[2 + pass] = l.ips[0];
			l.raw[2 + pass + d] = l.ips[1];
			mms_stack_rules_add(r, &l);
		}
	}
	for (uint32_t k = 0; k < MANY; k++)
		assert_int_equal(many_delta[k], 3 + k % 20);
	mms_stack_rules_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixed),
		cmocka_unit_test(test_two_sizes),
		cmocka_unit_test(test_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
