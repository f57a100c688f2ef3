// SPDX-License-Identifier: GPL-2.0
/*
 * thp_pageout: try_to_unmap batches of PMD-mapped THPs.  Maps N anonymous
 * THPs (MADV_HUGEPAGE, one write each so every one is PMD-mapped), marks
 * them lazyfree with MADV_FREE over whole PMDs (no split, no swap needed to
 * drop them), then MADV_PAGEOUTs them, so reclaim unmaps each THP through
 * try_to_unmap_one.  Pinned to one CPU: the lazyfree and LRU batches are
 * per CPU and MADV_PAGEOUT drains only its own.
 *
 *   ready pid=123 thps=4 anon_huge_kb=8192
 *   done pid=123 thps=4 anon_huge_kb_after=0 resident_after=0
 *
 * kb values are /proc/self/smaps_rollup's for the whole process;
 * resident_after is mincore()'s count of the THP range's pages still mapped.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#define THP_SIZE (2UL << 20)

static void die(const char *what)
{
	fprintf(stderr, "thp_pageout: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* One field of /proc/self/smaps_rollup, in kB (the kernel's sum over all VMAs). */
static long rollup_kb(const char *field)
{
	char line[256];
	size_t n = strlen(field);
	long kb = -1;
	FILE *f = fopen("/proc/self/smaps_rollup", "re");

	if (!f)
		die("/proc/self/smaps_rollup");
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':')
			kb = atol(line + n + 1);
	fclose(f);
	return kb;
}

static long resident(char *p, size_t len)
{
	size_t pages = len / (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *vec = malloc(pages);
	long n = 0;

	if (!vec || mincore(p, len, vec))
		die("mincore");
	for (size_t i = 0; i < pages; i++)
		n += vec[i] & 1;
	free(vec);
	return n;
}

int main(int argc, char **argv)
{
	long thps = 4;
	int opt, wait_stdin = 0;
	static char outbuf[1024];
	cpu_set_t cpus;
	uintptr_t base;
	char *p, c;

	while ((opt = getopt(argc, argv, "n:wh")) != -1) {
		switch (opt) {
		case 'n': thps = atol(optarg); break;
		case 'w': wait_stdin = 1; break;
		default:
			fprintf(stderr, "usage: thp_pageout [-n THPS] [-w]\n");
			return 2;
		}
	}
	if (thps < 1 || optind != argc) {
		fprintf(stderr, "usage: thp_pageout [-n THPS] [-w]\n");
		return 2;
	}
	setvbuf(stdout, outbuf, _IOLBF, sizeof(outbuf));
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		die("sched_setaffinity(cpu 0)");
	/* One THP more than needed, so a 2 MB aligned start fits inside. */
	p = mmap(NULL, (size_t)(thps + 1) * THP_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	base = ((uintptr_t)p + THP_SIZE - 1) & ~(THP_SIZE - 1);
	p = (char *)base;
	if (madvise(p, (size_t)thps * THP_SIZE, MADV_HUGEPAGE))
		die("madvise(MADV_HUGEPAGE) (is CONFIG_TRANSPARENT_HUGEPAGE set?)");
	for (long i = 0; i < thps; i++)
		p[(size_t)i * THP_SIZE] = 1;
	/* Whole PMDs: madvise_free_huge_pmd() marks each THP lazyfree without splitting it. */
	if (madvise(p, (size_t)thps * THP_SIZE, MADV_FREE))
		die("madvise(MADV_FREE)");
	printf("ready pid=%d thps=%ld anon_huge_kb=%ld\n", getpid(), thps,
	       rollup_kb("AnonHugePages"));
	fflush(stdout);
	if (wait_stdin && read(0, &c, 1) < 0)
		die("read stdin");
	if (madvise(p, (size_t)thps * THP_SIZE, MADV_PAGEOUT))
		die("madvise(MADV_PAGEOUT)");
	printf("done pid=%d thps=%ld anon_huge_kb_after=%ld resident_after=%ld\n", getpid(), thps,
	       rollup_kb("AnonHugePages"), resident(p, (size_t)thps * THP_SIZE));
	return 0;
}
