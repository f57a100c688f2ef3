/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The MMSCOPE_* environment knobs (diagnostics and benchmarks; the man
 * page's ENVIRONMENT lists them), parsed strictly in one place: main()
 * refuses a value it does not understand, so "MMSCOPE_EMPTY_HANDLERS=0"
 * means off and "=yes" is an error, never a guess.  Recordings made with a
 * knob away from its default carry it in their header (docs/FORMAT.md).
 */
#ifndef MMSCOPE_KNOBS_H
#define MMSCOPE_KNOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mms_knobs {
	int debug;		/* MMSCOPE_DEBUG: 0; 1 verifier logs; 2 libbpf's debug too */
	bool self_cost;		/* MMSCOPE_SELF_COST: time the lock handler's parts */
	bool empty_handlers;	/* MMSCOPE_EMPTY_HANDLERS: lock programs return at once */
	bool stack_cache;	/* MMSCOPE_STACK_CACHE (default 1) */
	uint32_t stack_check;	/* MMSCOPE_STACK_CHECK: 1 cache hit in N walked (default 64) */
	bool start_times;	/* MMSCOPE_START_TIMES=FILE: start_fd is open for append */
	int start_fd;
};

/*
 * The knobs travel in struct mms_options (opts->knobs): main() fills them
 * from the environment once, every source reads them from its options.
 */
/* The defaults: what an unset environment gives. */
void mms_knobs_defaults(struct mms_knobs *k);
/* Parses the environment into k; -EINVAL with the knob and what it takes in errbuf. */
int mms_knobs_load(struct mms_knobs *k, char *errbuf, size_t errlen);
/*
 * MMSCOPE_START_TIMES: appends "SECONDS.NANOSECONDS WHAT" (CLOCK_MONOTONIC)
 * to its file, one write a line, for bench/startup; nothing when unset.
 */
void mms_start_mark(const struct mms_knobs *k, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "MMSCOPE_X=v" lines of the knobs in k away from their defaults ("" when none). */
void mms_knobs_describe(const struct mms_knobs *k, char *buf, size_t len);

#endif
