/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -i MS for the workloads: a thread writes "progress ns=T n=N" every MS
 * milliseconds, T on CLOCK_MONOTONIC and N the ops done so far, so a bench can
 * take a long run's rate window by window (bench/interleave) instead of one
 * rate per run.  Each line is formatted on the stack and goes out with one
 * write(), never through a stdio FILE: dprintf() links a FILE into stdio's
 * list while it writes, and exit() in the main thread then flushed it a second
 * time (the last line printed twice, seen under ASan).
 */
#ifndef MMS_WORKLOAD_PROGRESS_H
#define MMS_WORKLOAD_PROGRESS_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* CLOCK_MONOTONIC in ns: the clock of the progress lines and of the workloads' deadlines. */
static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

struct progress {
	atomic_long *ops;
	long ms;
};

static void *progress_thread(void *arg)
{
	const struct progress *p = arg;
	struct timespec next, now;
	char line[64];
	int len;

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		next.tv_nsec += p->ms % 1000 * 1000000L;
		next.tv_sec += p->ms / 1000 + next.tv_nsec / 1000000000L;
		next.tv_nsec %= 1000000000L;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
		clock_gettime(CLOCK_MONOTONIC, &now);
		len = snprintf(line, sizeof(line), "progress ns=%llu n=%ld\n",
			       (unsigned long long)now.tv_sec * 1000000000ULL +
			       (unsigned long long)now.tv_nsec, atomic_load(p->ops));
		if (write(1, line, (size_t)len) < 0 && errno == EPIPE)
			return NULL;
	}
	return NULL;
}

/* Start the writer when ms > 0; it runs until the process exits. */
static inline void progress_start(atomic_long *ops, long ms)
{
	static struct progress p;
	pthread_t tid;

	if (ms <= 0)
		return;
	p = (struct progress){ .ops = ops, .ms = ms };
	errno = pthread_create(&tid, NULL, progress_thread, &p);
	if (errno) {
		fprintf(stderr, "progress: pthread_create: %s\n", strerror(errno));
		exit(1);
	}
	pthread_detach(tid);
}

#endif
