// SPDX-License-Identifier: GPL-2.0
/* Defaults for struct mms_options, and the target filters' helpers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmscope/options.h"

void mms_options_init(struct mms_options *o)
{
	memset(o, 0, sizeof(*o));
	o->interval_ms = 1000;
	o->max_stack = 8;
	o->map_entries = 16384;
	o->stack_entries = 8192;
	o->task_entries = 16384;
	o->window = 600;
	mms_knobs_defaults(&o->knobs);
}

static int cpu_num(const char **s, unsigned long *v)
{
	char *end;

	if (**s < '0' || **s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoul(*s, &end, 10);
	if (errno || *v >= MMS_MAX_CPUS)
		return -ERANGE;
	*s = end;
	return 0;
}

int mms_options_set_cpus(struct mms_options *o, const char *list, unsigned int nr_cpus,
			 char *why, size_t why_len)
{
	uint64_t mask[MMS_MAX_CPUS / 64] = { 0 };
	const char *s = list;
	unsigned long lo, hi;

	if (!*s)
		goto bad;
	for (;;) {
		if (cpu_num(&s, &lo))
			goto bad;
		hi = lo;
		if (*s == '-') {
			s++;
			if (cpu_num(&s, &hi) || hi < lo)
				goto bad;
		}
		if (hi >= nr_cpus) {
			snprintf(why, why_len, "CPU %lu in -C '%s' does not exist here (CPUs 0-%u)",
				 hi, list, nr_cpus - 1);
			return -EINVAL;
		}
		for (unsigned long c = lo; c <= hi; c++)
			mask[c / 64] |= 1ULL << (c % 64);
		if (!*s)
			break;
		if (*s++ != ',')
			goto bad;
	}
	memcpy(o->cpus, mask, sizeof(mask));
	o->cpu_list = list;
	return 0;
bad:
	snprintf(why, why_len, "invalid CPU list '%s' for -C (CPUs and ranges, e.g. 0-3,6)",
		 list);
	return -EINVAL;
}

bool mms_options_cgroup_ok(const struct mms_options *o, const char *path)
{
	if (!o->nr_cgroups)
		return true;
	for (int i = 0; i < o->nr_cgroups; i++)
		if (!strcmp(o->cgroups[i], path))
			return true;
	return false;
}
