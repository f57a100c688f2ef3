// SPDX-License-Identifier: GPL-2.0
/*
 * fork_anon: aim7 fork_test-like anon_vma lock contention.  The parent
 * faults in an anonymous region (so it has an anon_vma), then W workers
 * (forked, so they share its anon_vma root) each fork and reap children in a
 * loop; every child writes some pages (copy-on-write into its own anon_vma
 * chained to the root) and exits.  anon_vma_fork() and unlink_anon_vmas()
 * take the root's rwsem for write, so the workers contend on it.
 *
 * The last line is the aim7 fork_test-style score (what `record
 * --score-default` reads): jobs per minute, a job being -j forks (100).
 *
 *   forks_per_sec=1234 forks=2468 workers=4 seconds=2.000
 *   score: 740.4 jobs/min
 */
#include <errno.h>
#include <getopt.h>
#include <stdatomic.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

static void die(const char *what)
{
	fprintf(stderr, "fork_anon: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: fork_anon [-w WORKERS] [-s SECONDS | -n FORKS] [-p PAGES] [-c PAGES] [-j FORKS]\n"
		"                 [-i MS]\n"
		"  -w  concurrent forking workers (default 4)\n"
		"  -s  run this long (default 2) ... or -n: forks per worker\n"
		"  -p  anonymous pages the parent faults in (default 64)\n"
		"  -c  pages each child writes (default 8)\n"
		"  -j  forks that make one job of the jobs/min score (default 100)\n"
		"  -i  print 'progress ns=T n=FORKS' every MS milliseconds\n");
	exit(2);
}

int main(int argc, char **argv)
{
	long workers = 4, iters = 0, progress_ms = 0, pages = 64, child_pages = 8, page = sysconf(_SC_PAGESIZE);
	long job = 100;
	double seconds = 2, secs;
	uint64_t start, deadline;
	atomic_long *forks;
	char *mem;
	int opt;

	while ((opt = getopt(argc, argv, "w:s:n:p:c:j:i:h")) != -1) {
		switch (opt) {
		case 'w': workers = atol(optarg); break;
		case 's': seconds = atof(optarg); break;
		case 'n': iters = atol(optarg); break;
		case 'p': pages = atol(optarg); break;
		case 'c': child_pages = atol(optarg); break;
		case 'j': job = atol(optarg); break;
		case 'i': progress_ms = atol(optarg); break;
		default: usage();
		}
	}
	if (workers < 1 || seconds <= 0 || iters < 0 || pages < 1 || child_pages < 0 ||
	    child_pages > pages || job < 1 || optind != argc)
		usage();
	forks = mmap(NULL, sizeof(*forks), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		     -1, 0);
	mem = mmap(NULL, (size_t)(pages * page), PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (forks == MAP_FAILED || mem == MAP_FAILED)
		die("mmap");
	memset(mem, 1, (size_t)(pages * page));
	start = now_ns();
	deadline = start + (uint64_t)(seconds * 1e9);
	for (long w = 0; w < workers; w++) {
		pid_t parent = getpid(), pid = fork();

		if (pid < 0)
			die("fork worker");
		if (pid)
			continue;
		/* Killed with the parent: whoever stops the workload stops that one. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(1);
		for (long n = 0; iters ? n < iters : now_ns() < deadline; n++) {
			pid_t child = fork();

			if (child < 0)
				die("fork");
			if (!child) {
				for (long i = 0; i < child_pages; i++)
					mem[i * page] = (char)i;
				_exit(0);
			}
			if (waitpid(child, NULL, 0) < 0)
				die("waitpid");
			atomic_fetch_add(forks, 1);
		}
		_exit(0);
	}
	progress_start(forks, progress_ms);
	while (wait(NULL) > 0)
		;
	secs = (double)(now_ns() - start) / 1e9;
	printf("forks_per_sec=%.0f forks=%ld workers=%ld seconds=%.3f\n",
	       (double)atomic_load(forks) / secs, atomic_load(forks), workers, secs);
	printf("score: %.1f jobs/min\n", (double)atomic_load(forks) / (double)job * 60 / secs);
	return 0;
}
