// SPDX-License-Identifier: GPL-2.0
/*
 * brk_loop: heap grow/shrink, stress-ng --brk's cycle with a bounded heap.
 * P processes each repeat: grow the heap by a page and touch it (7 times),
 * brk() to where it is, shrink it by a page.  Every brk() takes mmap_lock for
 * write, every touch faults a page in under the per-VMA lock or mmap_lock for
 * read.  When the heap reaches -m MB it goes back to its start in one brk(),
 * as stress-ng does on ENOMEM; stress-ng grows until the machine runs out
 * (24 GB in a minute here, then the OOM killer), and under an RLIMIT_DATA its
 * workers crash and restart at the limit: either way a window of a long run
 * measured that, not the loop.  An op is one of the nine steps.
 *
 *   brk_ops_per_sec=98000 ops=196000 instances=2 seconds=2.000
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

#define BATCH 64	/* ops a process counts before it adds them to the shared total */

static void die(const char *what)
{
	fprintf(stderr, "brk_loop: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: brk_loop [-P PROCS] [-s SECONDS | -n OPS] [-m MB] [-i MS]\n"
		"  -P  processes (default: the online CPUs)\n"
		"  -s  run this long (default 2) ... or -n: ops per process\n"
		"  -m  heap size at which it goes back to its start (default 64)\n"
		"  -i  print 'progress ns=T n=OPS' every MS milliseconds\n");
	exit(2);
}

/* One process's loop; the heap is its own, so nothing here contends across processes. */
static void run(atomic_long *ops, long iters, uint64_t deadline, long page, size_t limit)
{
	char *start = sbrk(0), *top;
	long n = 0, step = 0, local = 0;

	if (start == (void *)-1)
		die("sbrk");
	while (iters ? n < iters : (n % BATCH || now_ns() < deadline)) {
		top = sbrk(0);
		if (++step < 8) {
			if ((size_t)(top - start) >= limit) {
				if (brk(start))
					die("brk to the start");
			} else {
				if (sbrk(page) == (void *)-1)
					die("sbrk grow");
				top[0] = 1;
			}
		} else if (step == 8) {
			if (brk(top))
				die("brk");
		} else {
			step = 0;
			if (top > start && brk(top - page))
				die("brk shrink");
		}
		n++;
		if (++local == BATCH) {
			atomic_fetch_add(ops, local);
			local = 0;
		}
	}
	atomic_fetch_add(ops, local);
}

int main(int argc, char **argv)
{
	long procs = sysconf(_SC_NPROCESSORS_ONLN), iters = 0, progress_ms = 0, mb = 64;
	long page = sysconf(_SC_PAGESIZE);
	double seconds = 2, secs;
	uint64_t start, deadline;
	atomic_long *ops;
	int opt, status, failed = 0;

	while ((opt = getopt(argc, argv, "P:s:n:m:i:h")) != -1) {
		switch (opt) {
		case 'P': procs = atol(optarg); break;
		case 's': seconds = atof(optarg); break;
		case 'n': iters = atol(optarg); break;
		case 'm': mb = atol(optarg); break;
		case 'i': progress_ms = atol(optarg); break;
		default: usage();
		}
	}
	if (procs < 1 || procs > 1024 || seconds <= 0 || iters < 0 || mb < 1 || mb > 65536 ||
	    optind != argc)
		usage();
	ops = mmap(NULL, sizeof(*ops), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ops == MAP_FAILED)
		die("mmap");
	start = now_ns();
	deadline = start + (uint64_t)(seconds * 1e9);
	for (long p = 0; p < procs; p++) {
		pid_t parent = getpid(), pid = fork();

		if (pid < 0)
			die("fork");
		if (pid)
			continue;
		/* Killed with the parent: whoever stops the workload stops these. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(1);
		run(ops, iters, deadline, page, (size_t)mb << 20);
		_exit(0);
	}
	progress_start(ops, progress_ms);
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed = 1;
	if (failed) {
		fprintf(stderr, "brk_loop: a process failed\n");
		return 1;
	}
	secs = (double)(now_ns() - start) / 1e9;
	printf("brk_ops_per_sec=%.0f ops=%ld instances=%ld seconds=%.3f\n",
	       (double)atomic_load(ops) / secs, atomic_load(ops), procs, secs);
	return 0;
}
