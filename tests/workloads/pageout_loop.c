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
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

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
		"usage: pageout_loop -f FILE [-m PAGES] [-s SECONDS | -n ITERS] [-w] [-i MS]\n"
		"  -f  file to create and map (on a disk filesystem, not tmpfs)\n"
		"  -m  pages (default 512)\n"
		"  -s  run this long (default 2) ... or -n: iterations\n"
		"  -w  after printing 'ready', wait for one byte on stdin\n"
		"  -c  count the pages each pageout dropped (mincore), print dropped=N\n"
		"  -i  print 'progress ns=T n=ITERS' every MS milliseconds\n");
	exit(2);
}

int main(int argc, char **argv)
{
	long pages = 512, iters = 0, progress_ms = 0, page = sysconf(_SC_PAGESIZE), n = 0, dropped = 0;
	double seconds = 2, secs;
	const char *path = NULL;
	uint64_t start, deadline;
	volatile char sink = 0;
	static atomic_long done;
	int opt, fd, wait_stdin = 0, count = 0;
	char *p, c;

	while ((opt = getopt(argc, argv, "f:m:s:n:wci:h")) != -1) {
		switch (opt) {
		case 'f': path = optarg; break;
		case 'm': pages = atol(optarg); break;
		case 's': seconds = atof(optarg); break;
		case 'n': iters = atol(optarg); break;
		case 'w': wait_stdin = 1; break;
		case 'c': count = 1; break;
		case 'i': progress_ms = atol(optarg); break;
		default: usage();
		}
	}
	if (!path || pages < 1 || seconds <= 0 || iters < 0 || optind != argc)
		usage();
	fd = make_file(path, pages, page);
	p = mmap(NULL, (size_t)(pages * page), PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		die("mmap");
	printf("ready pid=%d pages=%ld\n", getpid(), pages);
	fflush(stdout);
	if (wait_stdin && read(0, &c, 1) < 0)
		die("read stdin");
	start = now_ns();
	deadline = start + (uint64_t)(seconds * 1e9);
	progress_start(&done, progress_ms);
	for (; iters ? n < iters : now_ns() < deadline; n++) {
		for (long i = 0; i < pages; i++)
			sink += p[i * page];
		if (madvise(p, (size_t)(pages * page), MADV_PAGEOUT))
			die("madvise(MADV_PAGEOUT)");
		/* Every page was just read, so all were resident before the pageout. */
		if (count)
			dropped += pages - resident(p, pages, page);
		atomic_store(&done, n + 1);
	}
	secs = (double)(now_ns() - start) / 1e9;
	printf("iters_per_sec=%.0f iters=%ld pages=%ld seconds=%.3f resident_after_pageout=%ld",
	       (double)n / secs, n, pages, secs, resident(p, pages, page));
	if (count)
		printf(" dropped=%ld", dropped);
	printf("\n");
	(void)sink;
	close(fd);
	return 0;
}
