// SPDX-License-Identifier: GPL-2.0
/*
 * pageout_loop: the "batched remove rmap in try_to_unmap_one" workload.  A
 * private read-only mapping of an M-page file; every iteration reads each
 * page (faulting it back in and mapping it) and then MADV_PAGEOUTs the whole
 * range, so reclaim unmaps every mapped folio through try_to_unmap.
 *
 *   ready pid=123 pages=512
 *   iters_per_sec=85 iters=170 pages=512 seconds=2.001 resident_after_pageout=0
 *
 * resident_after_pageout is what mincore() says after the last pageout:
 * pages the kernel did not drop (dirty, locked, busy).  With -c, mincore()
 * also runs after every pageout and the last line ends in "dropped=N": the
 * pages that left the page cache over all iterations, which is exactly what
 * reclaim freed of this mapping and the oracle for the reclaim tracepoints
 * (a page busy at that moment stays resident and is not counted).
 *
 * -P N runs the seed's shape: N instances, each a process mapping its own
 * file (FILE.0 ...), the counts summed; the last line is the score
 * `mmscope record --score-default` reads, "score: 850.0 loops/s".
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
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

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

static void die(const char *what)
{
	fprintf(stderr, "pageout_loop: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Writes the file once, synced, so every page is clean and can be dropped. */
static int make_file(const char *path, long pages, long page)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	char *buf = malloc((size_t)page);

	if (fd < 0 || !buf)
		die(path);
	for (long i = 0; i < pages; i++) {
		memset(buf, (int)(i & 0xff) | 1, (size_t)page);
		if (write(fd, buf, (size_t)page) != (ssize_t)page)
			die("write");
	}
	if (fsync(fd))
		die("fsync");
	free(buf);
	return fd;
}

static long resident(char *p, long pages, long page)
{
	unsigned char *vec = malloc((size_t)pages);
	long n = 0;

	if (!vec || mincore(p, (size_t)(pages * page), vec))
		die("mincore");
	for (long i = 0; i < pages; i++)
		n += vec[i] & 1;
	free(vec);
	return n;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: pageout_loop -f FILE [-m PAGES] [-s SECONDS | -n ITERS] [-P N] [-w] [-c]\n"
		"                    [-i MS]\n"
		"  -f  file to create and map (on a disk filesystem, not tmpfs)\n"
		"  -m  pages (default 512)\n"
		"  -s  run this long (default 2) ... or -n: iterations (each instance)\n"
		"  -P  instances, each a process with its own file FILE.0 ... (default 1: FILE)\n"
		"  -w  after printing 'ready', wait for one byte on stdin (one instance only)\n"
		"  -c  count the pages each pageout dropped (mincore), print dropped=N\n"
		"  -i  print 'progress ns=T n=ITERS' every MS milliseconds\n");
	exit(2);
}

/* What an instance did, in memory shared with the first process. */
struct result {
	atomic_long iters;
	long dropped, resident;
};

struct job {
	long pages, page, iters;
	uint64_t deadline;
	int count;
};

/* One instance: touch every page of the mapping, MADV_PAGEOUT it all, again. */
static void loop(const struct job *j, char *p, struct result *r, atomic_long *all)
{
	volatile char sink = 0;

	for (long n = 0; j->iters ? n < j->iters : now_ns() < j->deadline; n++) {
		for (long i = 0; i < j->pages; i++)
			sink += p[i * j->page];
		if (madvise(p, (size_t)(j->pages * j->page), MADV_PAGEOUT))
			die("madvise(MADV_PAGEOUT)");
		/* Every page was just read, so all were resident before the pageout. */
		if (j->count)
			r->dropped += j->pages - resident(p, j->pages, j->page);
		atomic_fetch_add(&r->iters, 1);
		atomic_fetch_add(all, 1);
	}
	r->resident = resident(p, j->pages, j->page);
	(void)sink;
}

static char *map_file(const char *path, const struct job *j)
{
	int fd = make_file(path, j->pages, j->page);
	char *p = mmap(NULL, (size_t)(j->pages * j->page), PROT_READ, MAP_PRIVATE, fd, 0);

	if (p == MAP_FAILED)
		die("mmap");
	close(fd);
	return p;
}

int main(int argc, char **argv)
{
	struct job j = { .pages = 512, .page = sysconf(_SC_PAGESIZE) };
	long progress_ms = 0, copies = 1, n = 0, dropped = 0, res = 0;
	double seconds = 2, secs;
	const char *path = NULL;
	struct result *r;
	atomic_long *all;
	uint64_t start;
	int opt, wait_stdin = 0;
	char *p = NULL, c;

	while ((opt = getopt(argc, argv, "f:m:s:n:P:wci:h")) != -1) {
		switch (opt) {
		case 'f': path = optarg; break;
		case 'm': j.pages = atol(optarg); break;
		case 's': seconds = atof(optarg); break;
		case 'n': j.iters = atol(optarg); break;
		case 'P': copies = atol(optarg); break;
		case 'w': wait_stdin = 1; break;
		case 'c': j.count = 1; break;
		case 'i': progress_ms = atol(optarg); break;
		default: usage();
		}
	}
	if (!path || j.pages < 1 || seconds <= 0 || j.iters < 0 || copies < 1 ||
	    (copies > 1 && wait_stdin) || optind != argc)
		usage();
	all = mmap(NULL, sizeof(*all) + (size_t)copies * sizeof(*r), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (all == MAP_FAILED)
		die("mmap");
	r = (struct result *)(all + 1);
	if (copies == 1) {
		p = map_file(path, &j);
		printf("ready pid=%d pages=%ld\n", getpid(), j.pages);
		fflush(stdout);
		if (wait_stdin && read(0, &c, 1) < 0)
			die("read stdin");
	}
	start = now_ns();
	j.deadline = start + (uint64_t)(seconds * 1e9);
	progress_start(all, progress_ms);
	if (copies == 1) {
		loop(&j, p, r, all);
	} else {
		fflush(stdout);
		for (long k = 0; k < copies; k++) {
			pid_t pid = fork();
			char name[4096];

			if (pid < 0)
				die("fork");
			if (pid)
				continue;
			/* Killed with the first process, as every workload's helpers are. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			snprintf(name, sizeof(name), "%s.%ld", path, k);
			loop(&j, map_file(name, &j), &r[k], all);
			_exit(0);
		}
		for (int status; wait(&status) > 0;)
			if (!WIFEXITED(status) || WEXITSTATUS(status))
				return 1;
	}
	secs = (double)(now_ns() - start) / 1e9;
	for (long k = 0; k < copies; k++) {
		n += atomic_load(&r[k].iters);
		dropped += r[k].dropped;
		res += r[k].resident;
	}
	printf("iters_per_sec=%.0f iters=%ld pages=%ld seconds=%.3f resident_after_pageout=%ld",
	       (double)n / secs, n, j.pages, secs, res);
	if (j.count)
		printf(" dropped=%ld", dropped);
	printf("\n");
	/* The line `mmscope record --score-default` reads: loops of every instance, per second. */
	printf("score: %.1f loops/s\n", (double)n / secs);
	return 0;
}
