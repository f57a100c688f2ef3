// SPDX-License-Identifier: GPL-2.0
/*
 * mmap_churn: threads (and optionally processes) mapping, protecting and
 * unmapping memory as fast as they can, so that mmap_lock (threads of one
 * process) and, with -f, i_mmap_rwsem of one shared file (several processes
 * mapping it) contend.  Tests and benches run it; the last line of output is
 * machine-readable:
 *
 *   ops_per_sec=123456 ops=246912 threads=4 procs=1 seconds=2.000
 *
 * One op is one mmap + touch + mprotect + munmap cycle.  With -w it prints
 * "ready pid=N" first and waits for a byte on stdin, so a tracer can attach
 * to N before the threads and processes are even created.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

struct churn {
	int threads, procs;
	double seconds;		/* used when iters == 0 */
	long iters;		/* per thread */
	long pages;
	const char *file;
	const char *name;	/* -N: comm for every process and thread */
	bool sync;		/* msync(MS_SYNC) the file mapping after writing it */
	bool wait_go;		/* print "ready", wait for a byte on stdin */
	long progress_ms;	/* -i */
	int fd;
	long page;
	uint64_t deadline_ns;
	atomic_long *ops;	/* shared between processes */
};

static void die(const char *what)
{
	fprintf(stderr, "mmap_churn: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* One cycle on a mapping: touch every page, split it with mprotect, unmap. */
static int cycle(const struct churn *c, int flags, int fd, bool write)
{
	size_t len = (size_t)(c->pages * c->page);
	volatile char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fd, 0);

	if (p == MAP_FAILED)
		return -errno;
	for (long i = 0; i < c->pages; i++) {
		if (write)
			p[i * c->page] = (char)i;
		else
			(void)p[i * c->page];
	}
	/* Writing back a shared mapping walks its rmap under i_mmap_rwsem (page_mkclean). */
	if (write && c->sync && fd >= 0 && msync((void *)p, len, MS_SYNC))
		return -errno;
	if (c->pages >= 3 && mprotect((char *)p + c->page, (size_t)c->page, PROT_READ))
		return -errno;
	if (munmap((void *)p, len))
		return -errno;
	return 0;
}

static void *worker(void *arg)
{
	const struct churn *c = arg;
	long n = 0, booked = 0;
	int err;

	for (;;) {
		if (n - booked == 16) {	/* for -i: booked in steps, not per op */
			atomic_fetch_add(c->ops, 16);
			booked = n;
		}
		if (c->iters ? n >= c->iters : (n % 16 == 0 && now_ns() >= c->deadline_ns))
			break;
		err = cycle(c, MAP_PRIVATE | MAP_ANONYMOUS, -1, true);
		if (!err && c->fd >= 0)
			err = cycle(c, MAP_SHARED, c->fd, n & 1);
		if (err) {
			errno = -err;
			die("mmap/mprotect/munmap");
		}
		n++;
	}
	atomic_fetch_add(c->ops, n - booked);
	return NULL;
}

static void run_threads(struct churn *c)
{
	pthread_t *tids = calloc((size_t)c->threads, sizeof(*tids));

	if (!tids)
		die("calloc");
	for (int i = 0; i < c->threads; i++) {
		errno = pthread_create(&tids[i], NULL, worker, c);
		if (errno)
			die("pthread_create");
	}
	for (int i = 0; i < c->threads; i++)
		pthread_join(tids[i], NULL);
	free(tids);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: mmap_churn [-t THREADS] [-P PROCS] [-s SECONDS | -n ITERS] [-p PAGES] "
		"[-f FILE [-S]] [-w] [-i MS] [-N NAME]\n"
		"  -t  threads per process (default 4)\n"
		"  -P  processes (default 1); with -f they contend on the file's i_mmap_rwsem\n"
		"  -s  run this long (default 2) ... or -n: cycles per thread\n"
		"  -p  pages per mapping (default 8)\n"
		"  -f  also map this file MAP_SHARED each cycle (created, PAGES long)\n"
		"  -S  msync(MS_SYNC) the file mapping after writing it (rmap walks)\n"
		"  -w  print 'ready pid=N', then wait for one byte on stdin (a tracer attaches)\n"
		"  -i  print 'progress ns=T n=OPS' every MS milliseconds (in steps of 16 a thread)\n"
		"  -N  name the processes and threads NAME (prctl PR_SET_NAME: any bytes, cut\n"
		"      to 15), as any user can: tests feed escape sequences to mmscope this way\n");
	exit(2);
}

static void parse(struct churn *c, int argc, char **argv)
{
	int opt;

	while ((opt = getopt(argc, argv, "t:P:s:n:p:f:Swi:N:h")) != -1) {
		switch (opt) {
		case 't':
			c->threads = atoi(optarg);
			break;
		case 'P':
			c->procs = atoi(optarg);
			break;
		case 's':
			c->seconds = atof(optarg);
			break;
		case 'n':
			c->iters = atol(optarg);
			break;
		case 'p':
			c->pages = atol(optarg);
			break;
		case 'f':
			c->file = optarg;
			break;
		case 'S':
			c->sync = true;
			break;
		case 'w':
			c->wait_go = true;
			break;
		case 'i':
			c->progress_ms = atol(optarg);
			break;
		case 'N':
			c->name = optarg;
			break;
		default:
			usage();
		}
	}
	if (c->threads < 1 || c->procs < 1 || c->pages < 1 || c->seconds <= 0 || c->iters < 0 ||
	    optind != argc)
		usage();
}

int main(int argc, char **argv)
{
	struct churn c = { .threads = 4, .procs = 1, .seconds = 2, .pages = 8, .fd = -1 };
	uint64_t start;
	double secs;
	struct stat sb;

	parse(&c, argc, argv);
	/* Before any fork or thread: they inherit the name. */
	if (c.name && prctl(PR_SET_NAME, c.name, 0, 0, 0))
		die("prctl(PR_SET_NAME)");
	c.page = sysconf(_SC_PAGESIZE);
	c.ops = mmap(NULL, sizeof(*c.ops), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		     -1, 0);
	if (c.ops == MAP_FAILED)
		die("mmap counter");
	if (c.file) {
		c.fd = open(c.file, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (c.fd < 0)
			die(c.file);
		/* Only ever grown: another program may map more of the same file. */
		if (fstat(c.fd, &sb))
			die("fstat");
		if (sb.st_size < c.pages * c.page && ftruncate(c.fd, c.pages * c.page))
			die("ftruncate");
	}
	if (c.wait_go) {
		char go;

		printf("ready pid=%d\n", getpid());
		fflush(stdout);
		if (read(0, &go, 1) < 0)
			die("read stdin");
	}
	start = now_ns();
	c.deadline_ns = start + (uint64_t)(c.seconds * 1e9);
	for (int i = 1; i < c.procs; i++) {
		pid_t parent = getpid(), pid = fork();

		if (pid < 0)
			die("fork");
		if (!pid) {
			/* Killed with the first process: a test's cleanup kills that one. */
			if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
				_exit(1);
			run_threads(&c);
			_exit(0);
		}
	}
	progress_start(c.ops, c.progress_ms);
	run_threads(&c);
	while (wait(NULL) > 0)
		;
	secs = (double)(now_ns() - start) / 1e9;
	printf("ops_per_sec=%.0f ops=%ld threads=%d procs=%d seconds=%.3f\n",
	       (double)atomic_load(c.ops) / secs, atomic_load(c.ops), c.threads, c.procs, secs);
	return 0;
}
