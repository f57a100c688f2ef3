// SPDX-License-Identifier: GPL-2.0
/* The sample model's arithmetic: statistics, histograms, lock type names. */
#include <errno.h>
#include <string.h>

#include "mmscope/sample.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

void mms_stat_init(struct mms_stat *s)
{
	memset(s, 0, sizeof(*s));
}

uint64_t mms_hist_slot_low(unsigned int slot)
{
	return slot == 0 ? 0 : 1ULL << slot;
}

uint64_t mms_stat_percentile(const struct mms_stat *s, double p)
{
	uint64_t n = 0, seen = 0, lo, hi, v;
	double rank;

	for (unsigned int i = 0; i < MMS_HIST_SLOTS; i++)
		n += s->hist[i];
	if (!n || p <= 0)
		return n ? s->min : 0;
	if (p >= 100)
		return s->max;
	rank = p / 100.0 * (double)n;
	for (unsigned int i = 0; i < MMS_HIST_SLOTS; i++) {
		if (!s->hist[i] || (double)(seen + s->hist[i]) < rank) {
			seen += s->hist[i];
			continue;
		}
		lo = mms_hist_slot_low(i);
		hi = i + 1 < MMS_HIST_SLOTS ? mms_hist_slot_low(i + 1) : s->max + 1;
		v = lo + (uint64_t)((double)(hi - lo) * ((rank - (double)seen) / s->hist[i]));
		if (v < s->min)
			v = s->min;
		if (v > s->max)
			v = s->max;
		return v;
	}
	return s->max;
}

static const char *const lost_names[MMS_LOST_NR] = {
	[MMS_LOST_TASK_SLOT] = "task_slot",
	[MMS_LOST_STACK] = "stack",
	[MMS_LOST_TIME] = "time",
	[MMS_LOST_MAP_FULL] = "map_full",
	[MMS_LOST_PENDING] = "pending_full",
	[MMS_LOST_RING] = "ring_lost",
	[MMS_LOST_STORE] = "store_full",
	[MMS_LOST_PARSE] = "parse",
};

const char *mms_lost_reason_name(enum mms_lost_reason r)
{
	return (unsigned int)r < MMS_LOST_NR ? lost_names[r] : "unknown";
}

static const struct {
	uint32_t flags;
	const char *name;
} lock_types[] = {
	{ 0, "semaphore" },
	{ MMS_LCB_SPIN, "spinlock" },
	{ MMS_LCB_SPIN | MMS_LCB_READ, "rwlock:R" },
	{ MMS_LCB_SPIN | MMS_LCB_WRITE, "rwlock:W" },
	{ MMS_LCB_READ, "rwsem:R" },
	{ MMS_LCB_WRITE, "rwsem:W" },
	{ MMS_LCB_RT, "rtmutex" },
	{ MMS_LCB_RT | MMS_LCB_READ, "rwlock-rt:R" },
	{ MMS_LCB_RT | MMS_LCB_WRITE, "rwlock-rt:W" },
	{ MMS_LCB_PERCPU | MMS_LCB_READ, "pcpu-sem:R" },
	{ MMS_LCB_PERCPU | MMS_LCB_WRITE, "pcpu-sem:W" },
	{ MMS_LCB_MUTEX, "mutex" },
	{ MMS_LCB_MUTEX | MMS_LCB_SPIN, "mutex" },
	/* Rows that merge read and write waits of one lock. */
	{ MMS_LCB_READ | MMS_LCB_WRITE, "rwsem" },
	{ MMS_LCB_SPIN | MMS_LCB_READ | MMS_LCB_WRITE, "rwlock" },
	{ MMS_LCB_RT | MMS_LCB_READ | MMS_LCB_WRITE, "rwlock-rt" },
	{ MMS_LCB_PERCPU | MMS_LCB_READ | MMS_LCB_WRITE, "pcpu-sem" },
};

const char *mms_lock_type_name(uint32_t flags)
{
	for (size_t i = 0; i < ARRAY_SIZE(lock_types); i++)
		if (lock_types[i].flags == flags)
			return lock_types[i].name;
	return "unknown";
}

int mms_lock_type_parse(const char *name, uint32_t *out, int max)
{
	size_t len = strlen(name);
	int n = 0;

	/* perf's -Y also takes a family without :R/:W ("rwsem" = rwsem:R and rwsem:W). */
	for (size_t i = 0; i < ARRAY_SIZE(lock_types); i++) {
		const char *t = lock_types[i].name;

		if (strcmp(t, name) && !(strncmp(t, name, len) == 0 && t[len] == ':'))
			continue;
		/* "rwsem" means rwsem:R and rwsem:W: waits are never both at once. */
		if ((lock_types[i].flags & (MMS_LCB_READ | MMS_LCB_WRITE)) ==
		    (MMS_LCB_READ | MMS_LCB_WRITE))
			continue;
		if (n >= max)
			return -E2BIG;
		out[n++] = lock_types[i].flags;
	}
	return n ? n : -EINVAL;
}
