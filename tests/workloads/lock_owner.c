// SPDX-License-Identifier: GPL-2.0
/*
 * lock_owner: one named thread holds a lock for a known time while named
 * waiters queue behind it, so a test can check that their waits are booked
 * to that owner (its tid is printed).  Every thread is created and named
 * (pthread_setname_np) before "ready"; they start together after it.
 *
 * -m mmap (default): one region of -M MiB of anonymous memory, populated.
 * "holder" toggles it read-only and read-write with mprotect(): each call
 * holds mmap_lock for write for milliseconds while it rewrites the PTEs.
 * T "mapper" threads mmap() one anonymous page and munmap() it (never
 * touched: a fault alone would not take mmap_lock for write), each call
 * waiting for mmap_lock behind the holder.
 *
 * -m file -f PATH: "holder" writes one page to PATH from a buffer registered
 * with userfaultfd (missing pages).  The copy from the buffer faults while
 * the write holds the file's inode lock (i_rwsem), so the holder sleeps in
 * handle_userfault() holding it until "uffd", the fault handler thread,
 * resolves the fault -d MS later with a zero page.  The buffer is then
 * dropped (MADV_DONTNEED), so the next write faults again.  T "writer"
 * threads pwrite() one byte to PATH, each waiting for the inode lock behind
 * the sleeping holder.  Needs kernel-mode faults handled: userfaultfd(2)
 * without UFFD_USER_MODE_ONLY (CAP_SYS_PTRACE or vm.unprivileged_userfaultfd)
 * or /dev/userfaultfd; exits 2 when neither is available.
 *
 *   ready pid=123 holder_tid=124
 *   done pid=123 holder_tid=124 holds=N waiters_ops=M
 *
 * holds: mprotect() calls or holder writes; waiters_ops: mapper mmap()s or
 * writer writes.  -t T waiters (default 3), -s SECS (default 2), -M MiB
 * (default 64), -d MS the holder sleeps per write (default 20), -p USEC a
 * waiter pauses after each munmap() or write (default 0: waiters then often
 * wait for each other on a machine of few CPUs, one preempted while it holds
 * the lock, not only for the holder), -w: wait for
 * one byte on stdin after "ready", so a tracer attaches first.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static char *region;
static size_t region_len, page;
static int file_mode, fd = -1, uffd = -1;
static long delay_ms = 20, pause_us;
static pid_t holder_tid;
static pthread_barrier_t named, go;
static atomic_int stop, uffd_stop;
static atomic_long holds, waiter_ops;

static void die(const char *what)
{
	fprintf(stderr, "lock_owner: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Not a failure of the workload: this kernel or this user cannot run it. */
static void unavailable(const char *what)
{
	fprintf(stderr, "lock_owner: %s: %s (not available here)\n", what, strerror(errno));
	exit(2);
}

/* Named and counted in before "ready", started after it. */
static void start(const char *name)
{
	errno = pthread_setname_np(pthread_self(), name);
	if (errno)
		die("pthread_setname_np");
	pthread_barrier_wait(&named);
	pthread_barrier_wait(&go);
}

/* -p: a waiter's pause after each operation. */
static void pause_waiter(void)
{
	struct timespec ts = { pause_us / 1000000, pause_us % 1000000 * 1000L };

	while (pause_us && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void *mprotect_holder(void *arg)
{
	int prot[2] = { PROT_READ, PROT_READ | PROT_WRITE };
	long i = 0;

	(void)arg;
	holder_tid = gettid();
	start("holder");
	while (!atomic_load(&stop)) {
		if (mprotect(region, region_len, prot[i & 1]))
			die("mprotect");
		i++;
	}
	atomic_store(&holds, i);
	return NULL;
}

static void *mapper(void *arg)
{
	long mine = 0;
	void *p;

	(void)arg;
	start("mapper");
	while (!atomic_load(&stop)) {
		p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			die("mmap");
		if (munmap(p, page))
			die("munmap");
		mine++;
		pause_waiter();
	}
	atomic_fetch_add(&waiter_ops, mine);
	return NULL;
}

static void *write_holder(void *arg)
{
	long i = 0;
	ssize_t n;

	(void)arg;
	holder_tid = gettid();
	start("holder");
	while (!atomic_load(&stop)) {
		/* Faults on region (missing) with the inode lock held: sleeps until "uffd". */
		n = pwrite(fd, region, page, 0);
		if (n != (ssize_t)page) {
			if (n >= 0)
				errno = EIO;
			die("pwrite from the userfaultfd buffer");
		}
		if (madvise(region, page, MADV_DONTNEED))
			die("madvise");
		i++;
	}
	atomic_store(&holds, i);
	return NULL;
}

static void *writer(void *arg)
{
	off_t off = (off_t)(page + (size_t)(uintptr_t)arg);
	char b = 'w';
	long mine = 0;

	start("writer");
	while (!atomic_load(&stop)) {
		if (pwrite(fd, &b, 1, off) != 1)
			die("pwrite");
		mine++;
		pause_waiter();
	}
	atomic_fetch_add(&waiter_ops, mine);
	return NULL;
}

static void *uffd_handler(void *arg)
{
	struct timespec ts = { delay_ms / 1000, delay_ms % 1000 * 1000000L };
	struct pollfd pfd = { .fd = uffd, .events = POLLIN };
	struct uffdio_zeropage zp;
	struct uffd_msg msg;
	ssize_t n;

	(void)arg;
	start("uffd");
	/* Runs until the holder is joined: it may still be asleep in a fault at stop. */
	while (!atomic_load(&uffd_stop)) {
		n = poll(&pfd, 1, 50);
		if (n < 0 && errno != EINTR)
			die("poll userfaultfd");
		if (n <= 0)
			continue;
		n = read(uffd, &msg, sizeof(msg));
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n != (ssize_t)sizeof(msg))
			die("read userfaultfd");
		if (msg.event != UFFD_EVENT_PAGEFAULT)
			continue;
		/* The holder sleeps in handle_userfault() this long, holding i_rwsem. */
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
		ts = (struct timespec){ delay_ms / 1000, delay_ms % 1000 * 1000000L };
		zp.range.start = msg.arg.pagefault.address & ~(uint64_t)(page - 1);
		zp.range.len = page;
		zp.mode = 0;
		if (ioctl(uffd, UFFDIO_ZEROPAGE, &zp) && errno != EEXIST)
			die("UFFDIO_ZEROPAGE");
	}
	return NULL;
}

/* A userfaultfd that handles kernel-mode faults (a write's copy from user space). */
static int open_uffd(void)
{
	int dev, u;

	u = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (u >= 0)
		return u;
	dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		unavailable("userfaultfd(2) and /dev/userfaultfd");
	u = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
	if (u < 0)
		unavailable("/dev/userfaultfd USERFAULTFD_IOC_NEW");
	close(dev);
	return u;
}

static void setup_file(const char *path)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		die(path);
	uffd = open_uffd();
	if (ioctl(uffd, UFFDIO_API, &api))
		unavailable("UFFDIO_API");
	region_len = page;
	region = mmap(NULL, region_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		      -1, 0);
	if (region == MAP_FAILED)
		die("mmap");
	reg.range.start = (uint64_t)(uintptr_t)region;
	reg.range.len = region_len;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		unavailable("UFFDIO_REGISTER");
}

static void setup_mmap(size_t mib)
{
	char *base;

	region_len = mib << 20;
	/* Between PROT_NONE guards: it merges with no mapper's page. */
	base = mmap(NULL, region_len + 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		die("mmap");
	region = base + page;
	if (mprotect(region, region_len, PROT_READ | PROT_WRITE))
		die("mprotect");
	/* Small pages only: with THP an mprotect() rewrites 512 times fewer entries. */
	if (madvise(region, region_len, MADV_NOHUGEPAGE))
		die("madvise");
	/* Populated: what makes each mprotect() slow. */
	memset(region, 1, region_len);
}

int main(int argc, char **argv)
{
	int threads = 3, opt, wait_in = 0, nth;
	const char *mode = "mmap", *path = NULL;
	double secs = 2;
	size_t mib = 64;
	pthread_t th[64], hold, uh;
	struct timespec ts;

	while ((opt = getopt(argc, argv, "m:f:t:s:M:d:p:w")) != -1) {
		switch (opt) {
		case 'm':
			mode = optarg;
			break;
		case 'f':
			path = optarg;
			break;
		case 't':
			threads = atoi(optarg);
			break;
		case 's':
			secs = atof(optarg);
			break;
		case 'M':
			mib = (size_t)atol(optarg);
			break;
		case 'd':
			delay_ms = atol(optarg);
			break;
		case 'p':
			pause_us = atol(optarg);
			break;
		case 'w':
			wait_in = 1;
			break;
		default:
			goto usage;
		}
	}
	if (!strcmp(mode, "file"))
		file_mode = 1;
	else if (strcmp(mode, "mmap"))
		goto usage;
	if (threads < 1 || threads > 64 || secs <= 0 || mib < 1 || mib > 4096 || delay_ms < 1 ||
	    delay_ms > 10000 || pause_us < 0 || pause_us > 1000000 || file_mode != !!path || optind != argc)
		goto usage;
	page = (size_t)sysconf(_SC_PAGESIZE);
	if (file_mode)
		setup_file(path);
	else
		setup_mmap(mib);
	/* Main, the holder, the waiters and (file mode) the uffd handler. */
	nth = 2 + threads + file_mode;
	if (pthread_barrier_init(&named, NULL, (unsigned int)nth) ||
	    pthread_barrier_init(&go, NULL, (unsigned int)nth))
		die("pthread_barrier_init");
	errno = pthread_create(&hold, NULL, file_mode ? write_holder : mprotect_holder, NULL);
	if (errno)
		die("pthread_create");
	for (int i = 0; i < threads; i++) {
		errno = pthread_create(&th[i], NULL, file_mode ? writer : mapper,
				       (void *)(uintptr_t)i);
		if (errno)
			die("pthread_create");
	}
	if (file_mode) {
		errno = pthread_create(&uh, NULL, uffd_handler, NULL);
		if (errno)
			die("pthread_create");
	}
	/* Every thread named, holder_tid set. */
	pthread_barrier_wait(&named);
	printf("ready pid=%d holder_tid=%d\n", (int)getpid(), (int)holder_tid);
	fflush(stdout);
	if (wait_in) {
		char c;

		if (read(0, &c, 1) < 0)
			die("stdin");
	}
	pthread_barrier_wait(&go);
	ts.tv_sec = (time_t)secs;
	ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
	atomic_store(&stop, 1);
	pthread_join(hold, NULL);
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	if (file_mode) {
		atomic_store(&uffd_stop, 1);
		pthread_join(uh, NULL);
	}
	printf("done pid=%d holder_tid=%d holds=%ld waiters_ops=%ld\n", (int)getpid(),
	       (int)holder_tid, atomic_load(&holds), atomic_load(&waiter_ops));
	return 0;
usage:
	fprintf(stderr, "usage: lock_owner [-m mmap|file] [-f PATH] [-t T] [-s SECS] [-M MiB] "
		"[-d MS] [-p USEC] [-w]\n"
		"  -m file needs -f PATH; -t 1..64, -s > 0, -M 1..4096, -d 1..10000, "
		"-p 0..1000000\n");
	return 2;
}
