// SPDX-License-Identifier: GPL-2.0
/*
 * mprotect_toggle: exact VMA split/merge counts.  A 3-page anonymous
 * read-write mapping sits between PROT_NONE guard pages (so it can merge
 * with nothing else); each toggle makes its middle page read-only (the VMA
 * splits in three: two splits, map_count + 2) and then read-write again (the
 * three merge back into one: map_count - 2).  N toggles are exactly 2N
 * splits and N three-way merges.
 *
 * -r N then adds N mprotect calls that change nothing (read-write again on
 * the read-write range): calls the VMA count does not see.  -W keeps the
 * process alive after "done" until a byte (or EOF) on stdin, so a tracer can
 * read it while it still exists.
 *
 * A tracer attaches between the "ready" line and the go signal (-w: one
 * byte on stdin; -S: sleep), so setup work falls outside its window:
 *
 *   ready pid=123 addr=0x7f... map_count=25
 *   done pid=123 toggles=1000 splits=2000 merges=1000 map_count_before=25
 *   map_count_split=27 map_count_after=25
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "mprotect_toggle: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* mm->map_count as the kernel sees it: one line per VMA in /proc/self/maps. */
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

static void usage(void)
{
	fprintf(stderr,
		"usage: mprotect_toggle [-n TOGGLES] [-r CALLS] [-w | -S SECONDS] [-u USEC] [-W]\n"
		"  -n  toggles (default 1000)\n"
		"  -r  then this many mprotect calls that change nothing (default 0)\n"
		"  -W  after printing 'done', wait for one byte (or EOF) on stdin\n"
		"  -w  after printing 'ready', wait for one byte on stdin\n"
		"  -S  after printing 'ready', sleep this long\n"
		"  -u  sleep this long between toggles (default 0)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	long toggles = 1000, page = sysconf(_SC_PAGESIZE), usec = 0, noops = 0;
	int before, split = -1, after, opt;
	double sleep_s = 0;
	int wait_stdin = 0, wait_end = 0;
	static char outbuf[1024];
	char *guard, *p, c;

	while ((opt = getopt(argc, argv, "n:r:wWS:u:h")) != -1) {
		switch (opt) {
		case 'n': toggles = atol(optarg); break;
		case 'r': noops = atol(optarg); break;
		case 'w': wait_stdin = 1; break;
		case 'W': wait_end = 1; break;
		case 'S': sleep_s = atof(optarg); break;
		case 'u': usec = atol(optarg); break;
		default: usage();
		}
	}
	if (toggles < 0 || noops < 0 || sleep_s < 0 || usec < 0 || optind != argc)
		usage();
	/* No allocation may add a VMA inside the window: static stdout buffer, warm heap. */
	setvbuf(stdout, outbuf, _IOLBF, sizeof(outbuf));
	map_count();
	guard = mmap(NULL, (size_t)(5 * page), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (guard == MAP_FAILED)
		die("mmap guard");
	p = mmap(guard + page, (size_t)(3 * page), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	/* Fault the pages in: the VMA gets its anon_vma now, not during the toggles. */
	memset(p, 1, (size_t)(3 * page));
	before = map_count();
	printf("ready pid=%d addr=%p map_count=%d\n", getpid(), (void *)p, before);
	fflush(stdout);
	if (wait_stdin && read(0, &c, 1) < 0)
		die("read stdin");
	if (sleep_s > 0) {
		struct timespec ts = { (time_t)sleep_s,
				       (long)((sleep_s - (double)(time_t)sleep_s) * 1e9) };

		nanosleep(&ts, NULL);
	}
	for (long i = 0; i < toggles; i++) {
		if (mprotect(p + page, (size_t)page, PROT_READ))
			die("mprotect PROT_READ");
		if (i == 0)
			split = map_count();
		if (mprotect(p + page, (size_t)page, PROT_READ | PROT_WRITE))
			die("mprotect PROT_READ|PROT_WRITE");
		if (usec)
			usleep((useconds_t)usec);
	}
	for (long i = 0; i < noops; i++)
		if (mprotect(p, (size_t)(3 * page), PROT_READ | PROT_WRITE))
			die("mprotect (no change)");
	after = map_count();
	printf("done pid=%d toggles=%ld splits=%ld merges=%ld map_count_before=%d "
	       "map_count_split=%d map_count_after=%d unchanged_calls=%ld\n", getpid(), toggles,
	       2 * toggles, toggles, before, split, after, noops);
	fflush(stdout);
	if (wait_end && read(0, &c, 1) < 0)
		die("read stdin");
	return split == (toggles ? before + 2 : -1) && after == before ? 0 : 1;
}
