// SPDX-License-Identifier: GPL-2.0
/*
 * lock_kinds: T threads (or, for -m signal, T child processes) contending one
 * kind of kernel spinlock for -s seconds, so that a test can check mmscope
 * names it.  Each mode's lock, and how the threads get at it:
 *
 *   wake    rq_lock, pi_lock: pairs of threads bounce a byte through two
 *           pipes, each write waking the other thread (try_to_wake_up takes
 *           the woken task's pi_lock and its CPU's runqueue lock)
 *   pi      pi_lock: the threads ask for one thread's CPU affinity
 *           (sched_getaffinity() reads it under the task's pi_lock)
 *   page    zone_lock, lru_lock: T processes (threads would queue on their
 *           mmap_lock) map, touch and unmap 4 MiB of anonymous memory (new
 *           and freed folios go on and off the LRU under the lruvec's
 *           lru_lock; the per-CPU page lists refill from and drain into the
 *           zone under zone->lock, and with multi-size THP of an order above
 *           3 on, as 64 KiB ones, every folio comes from the zone itself)
 *   ptl     ptlock: the threads write-fault pages of one 2 MiB-aligned
 *           region (one page table, so one split page-table lock), each its
 *           own pages, and MADV_DONTNEED them again
 *   signal  siglock of the parent: T children each kill() their parent with
 *           an ignored signal as fast as they can (each send takes the
 *           parent's sighand->siglock)
 *   write   i_rwsem: the threads pwrite() their own pages of one file -f
 *           (each write takes the inode's i_rwsem; dirtying a page cache
 *           folio, and its writeback, take the mapping's i_pages lock)
 *   mwrite  i_pages: the threads store to their own pages of a shared
 *           mapping of one file -f and start its writeback now and then
 *           (each store to a clean page faults and dirties its folio under
 *           i_pages, with no inode lock to queue on first)
 *   drain   per-CPU worker pools (cpu_worker_pools): the threads read
 *           /proc/sys/vm/stat_refresh, which queues work on every CPU's pool
 *           and waits for it (schedule_on_each_cpu); without it (no root),
 *           they fault a page in and mlock() it (lru_add_drain_all(), one
 *           caller at a time)
 *
 * The last line: "done mode=M ops=N threads=T seconds=S".
 */
#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

#define PT_SPAN (2UL << 20)	/* what one page table maps (x86-64) */

static const char *mode = "wake", *path;
static int nthreads = 4, fd = -1;
static double seconds = 2;
static size_t page;
static char *region;
static atomic_int stop;
static atomic_long ops;
static pthread_barrier_t go;

static void die(const char *what)
{
	fprintf(stderr, "lock_kinds: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* progress.h's clock, in seconds. */
static double now(void)
{
	return (double)now_ns() / 1e9;
}

struct pair {
	int ab[2], ba[2];	/* pipes: a to b, b to a */
};

static void *wake_a(void *arg)
{
	struct pair *p = arg;
	char c = 0;

	pthread_barrier_wait(&go);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (write(p->ab[1], &c, 1) != 1 || read(p->ba[0], &c, 1) != 1)
			break;
		atomic_fetch_add_explicit(&ops, 1, memory_order_relaxed);
	}
	close(p->ab[1]);	/* b's read sees the end */
	return NULL;
}

static void *wake_b(void *arg)
{
	struct pair *p = arg;
	char c;

	pthread_barrier_wait(&go);
	while (read(p->ab[0], &c, 1) == 1)
		if (write(p->ba[1], &c, 1) != 1)
			break;
	close(p->ba[1]);
	return NULL;
}

static pid_t victim;

static void *pi_thread(void *arg)
{
	cpu_set_t set;

	pthread_barrier_wait(&go);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (sched_getaffinity(victim, sizeof(set), &set))
			die("sched_getaffinity");
		atomic_fetch_add_explicit(&ops, 1, memory_order_relaxed);
	}
	return NULL;
}

/* One process of -m page: until the deadline; returns its ops. */
static long page_proc(double end)
{
	size_t len = 4UL << 20;
	long n = 0;

	while (now() < end) {
		char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			die("mmap");
		for (size_t o = 0; o < len; o += page)
			m[o] = 1;
		munmap(m, len);
		n++;
	}
	return n;
}

static void *ptl_thread(void *arg)
{
	long me = (long)arg;
	size_t per = PT_SPAN / page / (size_t)nthreads;

	pthread_barrier_wait(&go);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		/* Thread i's pages interleave with the others': i, i + T, i + 2T ... */
		for (size_t k = 0; k < per; k++)
			region[(k * (size_t)nthreads + (size_t)me) * page] = 1;
		for (size_t k = 0; k < per; k++)
			madvise(region + (k * (size_t)nthreads + (size_t)me) * page, page,
				MADV_DONTNEED);
		atomic_fetch_add_explicit(&ops, 1, memory_order_relaxed);
	}
	return NULL;
}

static void *write_thread(void *arg)
{
	long me = (long)arg;
	char *buf = malloc(page);
	long n = 0;

	if (!buf)
		die("malloc");
	memset(buf, (int)me, page);
	pthread_barrier_wait(&go);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		/* 64 pages of its own, again and again: dirtying, and writeback behind. */
		off_t at = (off_t)((n++ % 64) * nthreads + me) * (off_t)page;

		if (pwrite(fd, buf, page, at) != (ssize_t)page)
			die("pwrite");
		if (n % 64 == 0)
			sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
		atomic_fetch_add_explicit(&ops, 1, memory_order_relaxed);
	}
	free(buf);
	return NULL;
}

static void *mwrite_thread(void *arg)
{
	long me = (long)arg, n = 0;

	pthread_barrier_wait(&go);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (size_t k = 0; k < 64; k++)
			region[(k * (size_t)nthreads + (size_t)me) * page] = (char)n;
		/* Writeback cleans and write-protects the pages: the next stores fault again. */
		if (++n % 2 == 0)
			sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
		atomic_fetch_add_explicit(&ops, 1, memory_order_relaxed);
	}
	return NULL;
}

static void *drain_thread(void *arg)
{
	char *m = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int rfd = open("/proc/sys/vm/stat_refresh", O_RDONLY);
	char c;

	if (m == MAP_FAILED)
		die("mmap");
	pthread_barrier_wait(&go);
	while (rfd >= 0 && !atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (pread(rfd, &c, 1, 0) < 0) {
			close(rfd);
			rfd = -1;
			break;
		}
		atomic_fetch_add_explicit(&ops, 1, memory_order_relaxed);
	}
	if (rfd >= 0)
		close(rfd);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		/* A fresh page in this CPU's LRU batch, then mlock() drains all CPUs'. */
		madvise(m, page, MADV_DONTNEED);
		m[0] = 1;
		if (mlock(m, page))
			die("mlock");
		munlock(m, page);
		atomic_fetch_add_explicit(&ops, 1, memory_order_relaxed);
	}
	return NULL;
}

/*
 * The modes of processes: -m signal's children kill() the parent, which
 * sleeps in waitpid(); -m page's map and unmap memory.
 */
static int run_procs(bool sig)
{
	pid_t parent = getpid(), kids[64];
	int n = nthreads < 64 ? nthreads : 64, status, rc = 0;
	long total = 0;
	int pfd[2];

	if (sig)
		signal(SIGUSR1, SIG_IGN);
	if (pipe(pfd))
		die("pipe");
	for (int i = 0; i < n; i++) {
		kids[i] = fork();
		if (kids[i] < 0)
			die("fork");
		if (!kids[i]) {
			double end;
			long sent = 0;

			if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
				_exit(1);
			end = now() + seconds;
			while (sig && now() < end) {
				for (int k = 0; k < 256; k++)
					if (kill(parent, SIGUSR1))
						_exit(1);
				sent += 256;
			}
			if (!sig)
				sent = page_proc(end);
			if (write(pfd[1], &sent, sizeof(sent)) != sizeof(sent))
				_exit(1);
			_exit(0);
		}
	}
	close(pfd[1]);
	for (int i = 0; i < n; i++) {
		long sent;

		if (waitpid(kids[i], &status, 0) != kids[i] || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			rc = 1;
		if (read(pfd[0], &sent, sizeof(sent)) == sizeof(sent))
			total += sent;
	}
	atomic_store(&ops, total);
	return rc;
}

static void usage(void)
{
	fprintf(stderr, "usage: lock_kinds [-m wake|pi|page|ptl|signal|write|mwrite|drain] "
			"[-t THREADS] [-s SECONDS] [-f FILE (write, mwrite)]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	void *(*fn)(void *) = NULL;
	pthread_t th[128];
	struct pair *pairs = NULL;
	int opt, n = 0, rc = 0;
	double t0;

	while ((opt = getopt(argc, argv, "m:t:s:f:")) != -1) {
		switch (opt) {
		case 'm': mode = optarg; break;
		case 't': nthreads = atoi(optarg); break;
		case 's': seconds = atof(optarg); break;
		case 'f': path = optarg; break;
		default: usage();
		}
	}
	if (nthreads < 1 || nthreads > 64 || seconds <= 0)
		usage();
	page = (size_t)sysconf(_SC_PAGESIZE);
	t0 = now();
	if (!strcmp(mode, "signal") || !strcmp(mode, "page")) {
		rc = run_procs(!strcmp(mode, "signal"));
		goto out;
	}
	if (!strcmp(mode, "wake")) {
		pairs = calloc((size_t)nthreads, sizeof(*pairs));
		if (!pairs)
			die("calloc");
	} else if (!strcmp(mode, "pi")) {
		victim = (pid_t)syscall(SYS_gettid);
		fn = pi_thread;
	} else if (!strcmp(mode, "ptl")) {
		/* A page table's worth, aligned: map twice that and cut. */
		char *m = mmap(NULL, 2 * PT_SPAN, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			die("mmap");
		region = (char *)(((uintptr_t)m + PT_SPAN - 1) & ~(PT_SPAN - 1));
		madvise(region, PT_SPAN, MADV_NOHUGEPAGE);	/* PTEs, not one PMD */
		fn = ptl_thread;
	} else if (!strcmp(mode, "write")) {
		if (!path)
			usage();
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd < 0)
			die(path);
		fn = write_thread;
	} else if (!strcmp(mode, "mwrite")) {
		size_t len = 64 * (size_t)nthreads * page;

		if (!path)
			usage();
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || ftruncate(fd, (off_t)len))
			die(path);
		region = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (region == MAP_FAILED)
			die("mmap");
		fn = mwrite_thread;
	} else if (!strcmp(mode, "drain")) {
		fn = drain_thread;
	} else {
		usage();
	}
	n = pairs ? 2 * nthreads : nthreads;
	pthread_barrier_init(&go, NULL, (unsigned)n + 1);
	for (int i = 0; i < nthreads; i++) {
		if (pairs) {
			if (pipe(pairs[i].ab) || pipe(pairs[i].ba))
				die("pipe");
			errno = pthread_create(&th[2 * i], NULL, wake_a, &pairs[i]);
			if (!errno)
				errno = pthread_create(&th[2 * i + 1], NULL, wake_b, &pairs[i]);
		} else {
			errno = pthread_create(&th[i], NULL, fn, (void *)(long)i);
		}
		if (errno)
			die("pthread_create");
	}
	pthread_barrier_wait(&go);
	t0 = now();
	while (now() - t0 < seconds)
		usleep(10000);
	atomic_store(&stop, 1);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	if (fd >= 0)
		close(fd);
out:
	printf("done mode=%s ops=%ld threads=%d seconds=%.3f\n", mode, atomic_load(&ops), nthreads,
	       now() - t0);
	return rc;
}
