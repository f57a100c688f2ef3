/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lock source's stack cache rules (lock_bpf.bpf.c, "Stacks without the
 * unwinder"), learned from samples: one unwinder walk and the kernel stack
 * words it went over.  For each return address: how far up the next frame's
 * return address is (always the same distance, or always the same place
 * below the stack's top), and where the stack ends.  A rule is given to the
 * kernel once two samples agree on it and none disagrees; one that a later
 * sample contradicts is taken back.
 */
#ifndef MMSCOPE_STACK_RULES_H
#define MMSCOPE_STACK_RULES_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/types.h>

#include "lock_bpf.h"

struct mms_stack_rules;

/*
 * depth: frames the unwinder keeps (the stack maps' value size / 8).
 * publish(arg, ra, hop) puts a rule in the kernel's map (hop NULL: delete).
 */
struct mms_stack_rules *mms_stack_rules_new(uint32_t depth,
					    int (*publish)(void *arg, uint64_t ra,
							   const struct lb_hop *hop),
					    void *arg);
void mms_stack_rules_free(struct mms_stack_rules *r);

/*
 * Learns from one sample.  1 when a rule already given was taken back or
 * changed (cached keys may be wrong: empty the cache), 0 otherwise.
 */
int mms_stack_rules_add(struct mms_stack_rules *r, const struct lb_learn *l);

/*
 * Where the walk starts: 1 + the first frame's word above the context, and
 * how many frames a key holds; 0, 0 until two samples agree.
 */
void mms_stack_rules_start(const struct mms_stack_rules *r, uint32_t *s0, uint32_t *fk);

/* Rules given to the kernel now. */
uint32_t mms_stack_rules_count(const struct mms_stack_rules *r);

#endif
