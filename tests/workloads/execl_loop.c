// SPDX-License-Identifier: GPL-2.0
/*
 * execl_loop: UnixBench execl-style exec throughput, the workload of
 * "mm/vma: don't remove VMA from rmap if pgoff unchanged" (exec maps and
 * unmaps the same files over and over: i_mmap_rwsem).  Default: fork a
 * child that execs this program (/proc/self/exe --child) and wait for it.
 * -c: UnixBench's own shape, a chain of execs in one process, no fork.
 *
 *   execs_per_sec=1234 execs=2468 seconds=2.000
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "execl_loop: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void report(uint64_t start, long n)
{
	double secs = (double)(now_ns() - start) / 1e9;

	printf("execs_per_sec=%.0f execs=%ld seconds=%.3f\n", (double)n / secs, n, secs);
}

/* --chain START DEADLINE LEFT DONE: one link of the exec chain. */
static int chain(char **argv)
{
	uint64_t start = strtoull(argv[2], NULL, 10), deadline = strtoull(argv[3], NULL, 10);
	long left = atol(argv[4]), done = atol(argv[5]);
	char a[3][32];

	if ((deadline && now_ns() >= deadline) || (!deadline && left <= 0)) {
		report(start, done);
		return 0;
	}
	snprintf(a[0], sizeof(a[0]), "%ld", left - 1);
	snprintf(a[1], sizeof(a[1]), "%ld", done + 1);
	snprintf(a[2], sizeof(a[2]), "%s", argv[3]);
	execl("/proc/self/exe", "execl_loop", "--chain", argv[2], a[2], a[0], a[1], (char *)NULL);
	die("execl /proc/self/exe");
	return 1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: execl_loop [-s SECONDS | -n EXECS] [-c | -i MS]\n"
		"  -s  run this long (default 2) ... or -n: this many execs\n"
		"  -c  exec chain in one process (UnixBench execl) instead of fork + exec\n"
		"  -i  print 'progress ns=T n=EXECS' every MS milliseconds (not with -c)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	double seconds = 2;
	long iters = 0, n = 0, progress_ms = 0;
	static atomic_long done;
	uint64_t start, deadline;
	int opt, use_chain = 0;

	if (argc == 2 && !strcmp(argv[1], "--child"))
		return 0;
	if (argc == 6 && !strcmp(argv[1], "--chain"))
		return chain(argv);
	while ((opt = getopt(argc, argv, "s:n:ci:h")) != -1) {
		switch (opt) {
		case 's': seconds = atof(optarg); break;
		case 'n': iters = atol(optarg); break;
		case 'c': use_chain = 1; break;
		case 'i': progress_ms = atol(optarg); break;
		default: usage();
		}
	}
	if (seconds <= 0 || iters < 0 || optind != argc || (use_chain && progress_ms))
		usage();
	start = now_ns();
	deadline = iters ? 0 : start + (uint64_t)(seconds * 1e9);
	if (use_chain) {
		char a[4][32];

		snprintf(a[0], sizeof(a[0]), "%llu", (unsigned long long)start);
		snprintf(a[1], sizeof(a[1]), "%llu", (unsigned long long)deadline);
		snprintf(a[2], sizeof(a[2]), "%ld", iters);
		snprintf(a[3], sizeof(a[3]), "0");
		fflush(stdout);
		execl("/proc/self/exe", "execl_loop", "--chain", a[0], a[1], a[2], a[3],
		      (char *)NULL);
		die("execl /proc/self/exe");
	}
	progress_start(&done, progress_ms);
	for (; iters ? n < iters : now_ns() < deadline; n++) {
		pid_t pid = fork();
		int status;

		if (pid < 0)
			die("fork");
		if (!pid) {
			execl("/proc/self/exe", "execl_loop", "--child", (char *)NULL);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) < 0)
			die("waitpid");
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "execl_loop: child failed (exec of /proc/self/exe?)\n");
			return 1;
		}
		atomic_store(&done, n + 1);
	}
	report(start, n);
	return 0;
}
