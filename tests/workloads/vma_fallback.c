// SPDX-License-Identifier: GPL-2.0
/*
 * vma_fallback: page faults that fall back from the per-VMA lock to
 * mmap_lock, on purpose.  One anonymous region B (between PROT_NONE guards,
 * so it merges with nothing) has its lower half populated; T faulter
 * threads write one byte to each page of its upper half (one fresh
 * anonymous page each: exactly one page fault per touch), then MADV_DONTNEED
 * that half and start over.  With -m, one more thread toggles B between
 * read-write and read-write-exec with mprotect(): each call holds mmap_lock
 * for write and B's VMA write-locked while it rewrites the PTEs of the
 * populated half (milliseconds), so a fault on B meanwhile cannot take the
 * VMA lock (lock_vma_under_rcu() aborts) and waits for mmap_lock instead.
 * Without -m no fault on B has a reason to fall back.
 *
 *   ready pid=123
 *   done pid=123 touches=N mprotects=M
 *
 * -t T faulters (default 2), -s SECS (default 2), -M MiB of B (default 64),
 * -w: wait for one byte on stdin after "ready", so a tracer attaches first.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static char *region;
static size_t region_len, page;
static int nthreads;
static atomic_int stop;
static atomic_long touches, mprotects;

static void die(const char *what)
{
	fprintf(stderr, "vma_fallback: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void *faulter(void *arg)
{
	size_t half = region_len / 2, nth = (size_t)(uintptr_t)arg, n = (size_t)nthreads;
	char *top = region + half;
	long mine = 0;

	/* Each faulter owns every nth page of the upper half, so a touch is one fault. */
	while (!atomic_load(&stop)) {
		for (size_t off = nth * page; off < half && !atomic_load(&stop); off += n * page) {
			top[off] = 1;
			mine++;
		}
		if (madvise(top, half, MADV_DONTNEED))
			die("madvise");
	}
	atomic_fetch_add(&touches, mine);
	return NULL;
}

static void *mprotector(void *arg)
{
	int prot[2] = { PROT_READ | PROT_WRITE | PROT_EXEC, PROT_READ | PROT_WRITE };
	long i = 0;

	(void)arg;
	while (!atomic_load(&stop)) {
		if (mprotect(region, region_len, prot[i & 1]))
			die("mprotect");
		i++;
	}
	/* End read-write, as the faulters need it. */
	if (i & 1 && mprotect(region, region_len, prot[1]))
		die("mprotect");
	atomic_store(&mprotects, i);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 2, opt, with_m = 0, wait_in = 0;
	double secs = 2;
	size_t mib = 64;
	pthread_t th[65], mp;
	struct timespec ts;
	char *base;

	while ((opt = getopt(argc, argv, "t:s:M:mw")) != -1) {
		switch (opt) {
		case 't':
			threads = atoi(optarg);
			break;
		case 's':
			secs = atof(optarg);
			break;
		case 'M':
			mib = (size_t)atol(optarg);
			break;
		case 'm':
			with_m = 1;
			break;
		case 'w':
			wait_in = 1;
			break;
		default:
			fprintf(stderr, "usage: vma_fallback [-t T] [-s SECS] [-M MiB] [-m] [-w]\n");
			return 2;
		}
	}
	if (threads < 1 || threads > 64 || secs <= 0 || mib < 2 || mib > 4096) {
		fprintf(stderr, "vma_fallback: -t 1..64, -s > 0, -M 2..4096\n");
		return 2;
	}
	page = (size_t)sysconf(_SC_PAGESIZE);
	region_len = mib << 20;
	base = mmap(NULL, region_len + 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		die("mmap");
	region = base + page;
	if (mprotect(region, region_len, PROT_READ | PROT_WRITE))
		die("mprotect");
	/* Small pages only: with THP one fault could fill 512 of them. */
	if (madvise(region, region_len, MADV_NOHUGEPAGE))
		die("madvise");
	/* The lower half populated: what makes each mprotect() slow. */
	memset(region, 1, region_len / 2);
	printf("ready pid=%d\n", (int)getpid());
	fflush(stdout);
	if (wait_in) {
		char c;

		if (read(0, &c, 1) < 0)
			die("stdin");
	}
	nthreads = threads;
	for (int i = 0; i < threads; i++) {
		/* Thread i touches pages i, i + T, i + 2T ... */
		if (pthread_create(&th[i], NULL, faulter, (void *)(uintptr_t)i))
			die("pthread_create");
	}
	if (with_m && pthread_create(&mp, NULL, mprotector, NULL))
		die("pthread_create");
	ts.tv_sec = (time_t)secs;
	ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
	atomic_store(&stop, 1);
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	if (with_m)
		pthread_join(mp, NULL);
	printf("done pid=%d touches=%ld mprotects=%ld\n", (int)getpid(), atomic_load(&touches),
	       atomic_load(&mprotects));
	return 0;
}
