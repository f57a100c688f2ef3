// SPDX-License-Identifier: GPL-2.0
/*
 * vma_grow: exact "merge with prev" counts.  Maps one anonymous page in a
 * hole it made itself (a page of free space on each side, so nothing else
 * is adjacent), then maps N more pages, each right after the previous end
 * with MAP_FIXED_NOREPLACE.  Each new mapping joins the one before it
 * through mmap_region()'s vma_expand() path: N merges with prev of a new
 * range, no split, and map_count does not change.
 *
 *   ready pid=123 addr=0x7f... map_count=25
 *   done pid=123 steps=100 merges_prev=100 map_count_after=25
 *
 * -w waits for one byte on stdin after "ready", so a tracer can start then.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static void die(const char *what)
{
	fprintf(stderr, "vma_grow: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int map_count(void)
{
	char buf[4096];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		die("/proc/self/maps");
	while (fgets(buf, sizeof(buf), f))
		if (strchr(buf, '\n'))
			n++;
	fclose(f);
	return n;
}

static char *map_at(char *addr, long len)
{
	char *p = mmap(addr, (size_t)len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		die("mmap(MAP_FIXED_NOREPLACE)");
	if (p != addr) {
		/* Kernels before 4.17 treat the flag as a hint. */
		errno = EEXIST;
		die("mmap landed elsewhere");
	}
	return p;
}

int main(int argc, char **argv)
{
	long steps = 100, page = sysconf(_SC_PAGESIZE);
	int opt, before, after, wait_stdin = 0;
	static char outbuf[1024];
	char *hole, *base, c;

	while ((opt = getopt(argc, argv, "n:wh")) != -1) {
		switch (opt) {
		case 'n': steps = atol(optarg); break;
		case 'w': wait_stdin = 1; break;
		default:
			fprintf(stderr, "usage: vma_grow [-n STEPS] [-w]\n");
			return 2;
		}
	}
	if (steps < 0 || optind != argc) {
		fprintf(stderr, "usage: vma_grow [-n STEPS] [-w]\n");
		return 2;
	}
	setvbuf(stdout, outbuf, _IOLBF, sizeof(outbuf));
	map_count();	/* warms the heap: no allocation adds a VMA later */
	/* A hole of steps + 3 pages: guard page, steps + 1 pages used, guard page. */
	hole = mmap(NULL, (size_t)((steps + 3) * page), PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (hole == MAP_FAILED)
		die("mmap hole");
	if (munmap(hole, (size_t)((steps + 3) * page)))
		die("munmap hole");
	base = map_at(hole + page, page);
	before = map_count();
	printf("ready pid=%d addr=%p map_count=%d\n", getpid(), (void *)base, before);
	fflush(stdout);
	if (wait_stdin && read(0, &c, 1) < 0)
		die("read stdin");
	for (long i = 1; i <= steps; i++)
		map_at(base + i * page, page);
	after = map_count();
	printf("done pid=%d steps=%ld merges_prev=%ld map_count_after=%d\n", getpid(), steps,
	       steps, after);
	return after == before ? 0 : 1;
}
