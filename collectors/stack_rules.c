// SPDX-License-Identifier: GPL-2.0
/*
 * Stack cache rules from samples (stack_rules.h).  A sample holds the
 * frames the unwinder found (return addresses, innermost first) and the
 * stack words from the program's context up; each frame after the context
 * is found among the words, scanning up from the previous one, and
 * consecutive frames give an observation for the inner one's address:
 * the distance to the next, and the next's distance below the top (a frame
 * of two sizes has two distances: NEAR, lock_bpf.h).  The
 * last frame of a complete walk (fewer frames than the depth) gives an end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stack_rules.h"
#include "mmscope/hash.h"

enum { BAD_DELTA = 1, BAD_TOP = 2, BAD_END = 4 };

struct rule {
	uint64_t ra;
	int16_t delta;		/* first observation's distance to the next frame */
	int16_t from_top;	/* ... the next frame's distance below the top */
	int16_t end_k;		/* distance below the top where the stack ended */
	int16_t dmin, dmax;	/* the distances to the next frame seen */
	uint16_t n_cont, n_end;	/* observations (saturating) */
	uint8_t bad;		/* BAD_*: observations disagreed */
	uint16_t given;		/* the kind (LB_HOP_* bits, span) the kernel has */
};

struct mms_stack_rules {
	uint32_t depth;
	struct rule *rules;
	uint32_t nr, cap, given;
	struct mms_hash idx;	/* ra -> rules index + 1 */
	int (*publish)(void *arg, uint64_t ra, const struct lb_hop *hop);
	void *arg;
	/* The first frame above the context: its index in a walk and its word. */
	uint32_t i0, slot0;
	uint16_t n_start;
	bool start_bad;
};

/* Two agreeing observations and no disagreeing one make a rule. */
#define ENOUGH 2

struct mms_stack_rules *mms_stack_rules_new(uint32_t depth,
					    int (*publish)(void *arg, uint64_t ra,
							   const struct lb_hop *hop),
					    void *arg)
{
	struct mms_stack_rules *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->depth = depth;
	r->publish = publish;
	r->arg = arg;
	r->cap = 512;
	r->rules = malloc(r->cap * sizeof(*r->rules));
	if (!r->rules || mms_hash_reserve(&r->idx, r->cap)) {
		mms_stack_rules_free(r);
		return NULL;
	}
	return r;
}

void mms_stack_rules_free(struct mms_stack_rules *r)
{
	if (!r)
		return;
	free(r->rules);
	mms_hash_free(&r->idx);
	free(r);
}

static struct rule *find(struct mms_stack_rules *r, uint64_t ra)
{
	struct rule *e;
	uint32_t i;
	int found = mms_hash_probe(&r->idx, ra, &i);

	if (found)
		return found > 0 ? &r->rules[r->idx.vals[i] - 1] : NULL;
	if (r->nr == r->cap) {
		e = realloc(r->rules, r->cap * 2 * sizeof(*e));
		if (!e)
			return NULL;
		r->rules = e;
		r->cap *= 2;
	}
	e = &r->rules[r->nr];
	memset(e, 0, sizeof(*e));
	e->ra = ra;
	mms_hash_set(&r->idx, i, ra, r->nr++);
	return e;
}

static uint16_t kind_of(const struct rule *e)
{
	uint16_t k = 0;

	if (e->n_cont >= ENOUGH && !(e->bad & BAD_DELTA))
		k |= LB_HOP_FIXED;
	else if (e->n_cont >= ENOUGH && !(e->bad & BAD_TOP))
		k |= LB_HOP_TOP;
	else if (e->n_cont >= ENOUGH && e->dmax - e->dmin <= LB_HOP_SPAN_MAX)
		k |= LB_HOP_NEAR;
	else if (e->bad & BAD_DELTA)
		k |= LB_HOP_NEVER;
	if (e->n_end >= ENOUGH && !(e->bad & BAD_END))
		k |= LB_HOP_END;
	return k;
}

/* Gives the kernel the rule as it stands now; 1 when one it had was taken back. */
static int settle(struct mms_stack_rules *r, struct rule *e)
{
	uint16_t k = kind_of(e);
	struct lb_hop hop = { .delta = e->delta, .from_top = e->from_top, .end_k = e->end_k,
			      .kind = k };
	int lost;

	if (k & LB_HOP_NEAR) {
		hop.delta = e->dmin;
		k |= (uint16_t)((e->dmax - e->dmin) << LB_HOP_SPAN_SHIFT);
		hop.kind = k;
	}
	lost = (e->given & ~k) != 0;

	if (k == e->given)
		return 0;
	if (r->publish(r->arg, e->ra, k ? &hop : NULL))
		return lost;	/* the map is full: the walk stops there, as without */
	if (!e->given)
		r->given++;
	else if (!k)
		r->given--;
	e->given = k;
	return lost;
}

static uint16_t more(uint16_t n)
{
	return n < UINT16_MAX ? n + 1 : n;
}

static int observe_next(struct mms_stack_rules *r, uint64_t ra, long delta, long from_top,
			long own_from_top)
{
	struct rule *e = find(r, ra);

	if (!e || delta <= 0 || delta > INT16_MAX || from_top < 0 || from_top > INT16_MAX)
		return 0;
	if (!e->n_cont) {
		e->delta = e->dmin = e->dmax = (int16_t)delta;
		e->from_top = (int16_t)from_top;
	}
	if (delta < e->dmin)
		e->dmin = (int16_t)delta;
	if (delta > e->dmax)
		e->dmax = (int16_t)delta;
	if (e->delta != delta)
		e->bad |= BAD_DELTA;
	if (e->from_top != from_top)
		e->bad |= BAD_TOP;
	/* A stack went on from where this address was said to end it. */
	if (e->n_end && own_from_top == e->end_k)
		e->bad |= BAD_END;
	e->n_cont = more(e->n_cont);
	return settle(r, e);
}

static int observe_end(struct mms_stack_rules *r, uint64_t ra, long from_top)
{
	struct rule *e = find(r, ra);

	if (!e || from_top <= 0 || from_top > INT16_MAX)
		return 0;
	if (!e->n_end)
		e->end_k = (int16_t)from_top;
	if (e->end_k != from_top)
		e->bad |= BAD_END;
	e->n_end = more(e->n_end);
	return settle(r, e);
}

int mms_stack_rules_add(struct mms_stack_rules *r, const struct lb_learn *l)
{
	uint32_t n, nw = l->nwords < LB_FAST_WORDS ? l->nwords : LB_FAST_WORDS;
	long slot[LB_FAST_MAX + 8], top;
	uint32_t first = UINT32_MAX, last = 0, from = 0;
	int changed = 0;

	if (l->nips <= 0 || !nw || l->top <= l->base || (l->top - l->base) % 8)
		return 0;
	n = (uint32_t)l->nips / 8;
	if (n > LB_FAST_MAX + 8)
		n = LB_FAST_MAX + 8;
	top = (long)((l->top - l->base) / 8);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t w = from;

		while (w < nw && l->raw[w] != l->ips[i])
			w++;
		if (w == nw) {
			if (first != UINT32_MAX)
				break;	/* lost the chain (beyond the words read) */
			continue;	/* still below the context */
		}
		slot[i] = w;
		if (first == UINT32_MAX)
			first = i;
		last = i;
		from = w + 1;
	}
	if (first == UINT32_MAX)
		return 0;
	if (!r->n_start) {
		r->i0 = first;
		r->slot0 = (uint32_t)slot[first];
	} else if (r->i0 != first || r->slot0 != slot[first]) {
		changed |= !r->start_bad;
		r->start_bad = true;
	}
	r->n_start = more(r->n_start);
	for (uint32_t i = first; i < last; i++)
		changed |= observe_next(r, l->ips[i], slot[i + 1] - slot[i], top - slot[i + 1],
					top - slot[i]);
	if (n < r->depth && last == n - 1)
		changed |= observe_end(r, l->ips[last], top - slot[last]);
	return changed;
}

void mms_stack_rules_start(const struct mms_stack_rules *r, uint32_t *s0, uint32_t *fk)
{
	*s0 = *fk = 0;
	if (r->n_start < ENOUGH || r->start_bad || r->i0 >= r->depth ||
	    r->depth - r->i0 > LB_FAST_MAX)
		return;
	*s0 = r->slot0 + 1;
	*fk = r->depth - r->i0;
}

uint32_t mms_stack_rules_count(const struct mms_stack_rules *r)
{
	return r->given;
}

