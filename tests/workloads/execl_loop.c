// SPDX-License-Identifier: GPL-2.0
/*
 * execl_loop: UnixBench execl-style exec throughput, the workload of
 * "mm/vma: don't remove VMA from rmap if pgoff unchanged" (exec maps and
 * unmaps the same files over and over: i_mmap_rwsem).  Default: fork a
 * child that execs this program (/proc/self/exe --child) and wait for it.
 * -c: UnixBench's own shape, a chain of execs in one process, no fork.
 * -P N: N copies at once (UnixBench's -c N), every one counted.  The last
 * line is the score `mmscope record --score-default` reads.
 *
 *   execs_per_sec=1234 execs=2468 seconds=2.000 copies=1
 *   score: 1234.0 execs/s
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

static void die(const char *what)
{
	fprintf(stderr, "execl_loop: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void report(uint64_t start, long n, long copies)
{
	double secs = (double)(now_ns() - start) / 1e9;

	printf("execs_per_sec=%.0f execs=%ld seconds=%.3f copies=%ld\n", (double)n / secs, n,
	       secs, copies);
	/* The line `mmscope record --score-default` reads: UnixBench's "Execl Throughput". */
	printf("score: %.1f execs/s\n", (double)n / secs);
}

/*
 * --chain START DEADLINE LEFT DONE FD: one link of the exec chain; the last
 * writes how many execs the chain made to FD, a pipe to the first process.
 */
static int chain(char **argv)
{
	uint64_t deadline = strtoull(argv[3], NULL, 10);
	long left = atol(argv[4]), done = atol(argv[5]);
	char a[3][32];

	if ((deadline && now_ns() >= deadline) || (!deadline && left <= 0)) {
		dprintf(atoi(argv[6]), "%ld\n", done);
		return 0;
	}
	snprintf(a[0], sizeof(a[0]), "%ld", left - 1);
	snprintf(a[1], sizeof(a[1]), "%ld", done + 1);
	snprintf(a[2], sizeof(a[2]), "%s", argv[3]);
	execl("/proc/self/exe", "execl_loop", "--chain", argv[2], a[2], a[0], a[1], argv[6],
	      (char *)NULL);
	die("execl /proc/self/exe");
	return 1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: execl_loop [-s SECONDS | -n EXECS] [-P COPIES] [-c | -i MS]\n"
		"  -s  run this long (default 2) ... or -n: this many execs (each copy)\n"
		"  -P  copies running at once, as UnixBench's -c (default 1)\n"
		"  -c  exec chains, one process each (UnixBench execl) instead of fork + exec\n"
		"  -i  print 'progress ns=T n=EXECS' every MS milliseconds (not with -c)\n");
	exit(2);
}

/* UnixBench's shape: each copy is one process that execs itself over and over. */
static long run_chains(uint64_t start, uint64_t deadline, long iters, long copies)
{
	char a[4][32], buf[64];
	long total = 0;
	int p[2];
	FILE *f;

	if (pipe(p))
		die("pipe");
	snprintf(a[0], sizeof(a[0]), "%llu", (unsigned long long)start);
	snprintf(a[1], sizeof(a[1]), "%llu", (unsigned long long)deadline);
	snprintf(a[2], sizeof(a[2]), "%ld", iters);
	snprintf(a[3], sizeof(a[3]), "%d", p[1]);
	fflush(stdout);
	for (long c = 0; c < copies; c++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (!pid) {
			/* Killed with the first process, as every workload's helpers are. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(p[0]);
			execl("/proc/self/exe", "execl_loop", "--chain", a[0], a[1], a[2], "0",
			      a[3], (char *)NULL);
			die("execl /proc/self/exe");
		}
	}
	close(p[1]);
	f = fdopen(p[0], "r");
	if (!f)
		die("fdopen");
	while (fgets(buf, sizeof(buf), f))
		total += atol(buf);
	fclose(f);
	while (wait(NULL) > 0)
		;
	return total;
}

int main(int argc, char **argv)
{
	double seconds = 2;
	long iters = 0, progress_ms = 0, copies = 1, n;
	atomic_long *done;
	uint64_t start, deadline;
	int opt, use_chain = 0;

	if (argc == 2 && !strcmp(argv[1], "--child"))
		return 0;
	if (argc == 7 && !strcmp(argv[1], "--chain"))
		return chain(argv);
	while ((opt = getopt(argc, argv, "s:n:P:ci:h")) != -1) {
		switch (opt) {
		case 's': seconds = atof(optarg); break;
		case 'n': iters = atol(optarg); break;
		case 'P': copies = atol(optarg); break;
		case 'c': use_chain = 1; break;
		case 'i': progress_ms = atol(optarg); break;
		default: usage();
		}
	}
	if (seconds <= 0 || iters < 0 || copies < 1 || optind != argc ||
	    (use_chain && progress_ms))
		usage();
	start = now_ns();
	deadline = iters ? 0 : start + (uint64_t)(seconds * 1e9);
	if (use_chain) {
		report(start, run_chains(start, deadline, iters, copies), copies);
		return 0;
	}
	done = mmap(NULL, sizeof(*done), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
		    0);
	if (done == MAP_FAILED)
		die("mmap");
	progress_start(done, progress_ms);
	fflush(stdout);
	for (long c = 0; c < copies; c++) {
		pid_t w = copies > 1 ? fork() : 0;

		if (w < 0)
			die("fork");
		if (w)
			continue;
		if (copies > 1)
			prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (n = 0; iters ? n < iters : now_ns() < deadline; n++) {
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
				fprintf(stderr, "execl_loop: child failed (exec of "
					"/proc/self/exe?)\n");
				_exit(1);
			}
			atomic_fetch_add(done, 1);
		}
		if (copies > 1)
			_exit(0);
	}
	for (int status; copies > 1 && wait(&status) > 0;)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			return 1;
	report(start, atomic_load(done), copies);
	return 0;
}
