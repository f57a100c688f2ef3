// SPDX-License-Identifier: GPL-2.0
/* The MMSCOPE_* knobs, parsed strictly (see include/mmscope/knobs.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mmscope/knobs.h"

static const struct mms_knobs defaults = { .stack_cache = true, .stack_check = 64 };

void mms_knobs_defaults(struct mms_knobs *k)
{
	*k = defaults;
}

/* An unsigned decimal in [lo, hi], the whole string; unset or "" leaves *v. */
static int knob_uint(const char *name, unsigned long lo, unsigned long hi, unsigned long *v,
		     const char *takes, char *errbuf, size_t errlen)
{
	const char *s = getenv(name);
	unsigned long n;
	char *end;

	if (!s || !*s)
		return 0;
	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || *end || *s < '0' || *s > '9' || n < lo || n > hi) {
		snprintf(errbuf, errlen, "%s=%.64s: takes %s; unset it for the default", name, s,
			 takes);
		return -EINVAL;
	}
	*v = n;
	return 0;
}

int mms_knobs_load(struct mms_knobs *k, char *errbuf, size_t errlen)
{
	unsigned long debug = 0, cost = 0, empty = 0, cache = 1, check = defaults.stack_check;
	const char *s;
	int err;

	*k = defaults;
	err = knob_uint("MMSCOPE_DEBUG", 0, 2, &debug, "0, 1 or 2", errbuf, errlen);
	if (!err)
		err = knob_uint("MMSCOPE_SELF_COST", 0, 1, &cost, "0 or 1", errbuf, errlen);
	if (!err)
		err = knob_uint("MMSCOPE_EMPTY_HANDLERS", 0, 1, &empty, "0 or 1", errbuf, errlen);
	if (!err)
		err = knob_uint("MMSCOPE_STACK_CACHE", 0, 1, &cache, "0 or 1", errbuf, errlen);
	if (!err)
		err = knob_uint("MMSCOPE_STACK_CHECK", 1, UINT32_MAX, &check,
				"a count from 1 (1 checks every cache hit)", errbuf, errlen);
	if (err)
		return err;
	s = getenv("MMSCOPE_START_TIMES");
	if (s && *s) {
		/* A diagnostics file named by whoever runs mmscope: never through a link. */
		k->start_fd = open(s, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC |
				   O_NOCTTY, 0600);
		if (k->start_fd < 0) {
			snprintf(errbuf, errlen, "MMSCOPE_START_TIMES=%.64s: cannot open it: %s "
				 "(it takes a file to append to; unset it for none)", s,
				 strerror(errno));
			return -EINVAL;
		}
		k->start_times = true;
	}
	k->debug = (int)debug;
	k->self_cost = cost;
	k->empty_handlers = empty;
	k->stack_cache = cache;
	k->stack_check = (uint32_t)check;
	return 0;
}

void mms_start_mark(const struct mms_knobs *k, const char *fmt, ...)
{
	struct timespec ts;
	char line[160];
	va_list ap;
	int n;

	if (!k->start_times)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	n = snprintf(line, sizeof(line), "%lld.%09ld ", (long long)ts.tv_sec, ts.tv_nsec);
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(k->start_fd, line, (size_t)n) < 0)
		return;	/* a diagnostics line lost: nothing to tell anyone */
}

void mms_knobs_describe(const struct mms_knobs *k, char *buf, size_t len)
{
	size_t o = 0;

#define ADD(cond, ...)                                                                      \
	do {                                                                                \
		if ((cond) && o < len)                                                      \
			o += (size_t)snprintf(buf + o, len - o, __VA_ARGS__);               \
	} while (0)
	if (len)
		buf[0] = 0;
	ADD(k->debug != defaults.debug, "MMSCOPE_DEBUG=%d\n", k->debug);
	ADD(k->self_cost, "MMSCOPE_SELF_COST=1\n");
	ADD(k->empty_handlers, "MMSCOPE_EMPTY_HANDLERS=1\n");
	ADD(!k->stack_cache, "MMSCOPE_STACK_CACHE=0\n");
	ADD(k->stack_check != defaults.stack_check, "MMSCOPE_STACK_CHECK=%u\n", k->stack_check);
#undef ADD
}
