// SPDX-License-Identifier: GPL-2.0
/*
 * vma_split_file: the "mm/vma: don't remove VMA from rmap if pgoff unchanged"
 * case.  P processes map one shared file over and over, and each cycle
 * splits and shrinks the mapping the ways where the lower VMA keeps its page
 * offset: mprotect() of the upper half splits it (the lower part keeps its
 * pgoff), munmap() of the last quarter shrinks the upper part at its end,
 * then the rest is unmapped.  Every one of these takes the file's
 * i_mmap_rwsem for write in vma_prepare(), so the processes contend on it.
 * With -S each cycle first writes every page and msync()s them: the
 * write-back walks the file's rmap under i_mmap_rwsem for reading, long
 * enough that the splits of the other processes sleep on it (on a machine
 * of few CPUs the writers alone mostly spin and never wait).
 *
 *   cycles_per_sec=1234 cycles=2468 procs=4 pages=16 seconds=2.000
 *   score: 1234.0 cycles/s
 *
 * The last line is the score `mmscope record --score-default` reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>
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

static void die(const char *what)
{
	fprintf(stderr, "vma_split_file: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: vma_split_file -f FILE [-P PROCS] [-p PAGES] [-s SECONDS | -n CYCLES] [-S]\n"
		"                      [-i MS]\n"
		"  -f  the shared file (created; on a disk filesystem or tmpfs)\n"
		"  -P  processes (default 4)\n"
		"  -p  pages a mapping, a multiple of 4 (default 16)\n"
		"  -s  run this long (default 2) ... or -n: cycles per process\n"
		"  -S  write every page and msync it each cycle (rmap walks under the lock)\n"
		"  -i  print 'progress ns=T n=CYCLES' every MS milliseconds\n");
	exit(2);
}

/* map, split (lower keeps pgoff), shrink the upper at its end, unmap. */
static void cycle(int fd, long pages, long page, int sync)
{
	size_t len = (size_t)(pages * page);
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (p == MAP_FAILED)
		die("mmap");
	p[0] = 1;	/* a page in the rmap, as a program's data would be */
	for (long i = 0; sync && i < pages; i++)
		p[i * page] = (char)i;
	if (sync && msync(p, len, MS_SYNC))
		die("msync");
	if (mprotect(p + len / 2, len / 2, PROT_READ))
		die("mprotect (split)");
	if (munmap(p + len / 4 * 3, len / 4))
		die("munmap (shrink)");
	if (munmap(p, len / 4 * 3))
		die("munmap");
}

int main(int argc, char **argv)
{
	long procs = 4, pages = 16, iters = 0, progress_ms = 0, page = sysconf(_SC_PAGESIZE);
	const char *path = NULL;
	double seconds = 2, secs;
	uint64_t start, deadline;
	atomic_long *cycles;
	int opt, fd, sync = 0;

	while ((opt = getopt(argc, argv, "f:P:p:s:n:Si:h")) != -1) {
		switch (opt) {
		case 'f': path = optarg; break;
		case 'P': procs = atol(optarg); break;
		case 'p': pages = atol(optarg); break;
		case 's': seconds = atof(optarg); break;
		case 'n': iters = atol(optarg); break;
		case 'S': sync = 1; break;
		case 'i': progress_ms = atol(optarg); break;
		default: usage();
		}
	}
	if (!path || procs < 1 || pages < 4 || pages % 4 || seconds <= 0 || iters < 0 ||
	    optind != argc)
		usage();
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		die(path);
	if (ftruncate(fd, pages * page))
		die("ftruncate");
	cycles = mmap(NULL, sizeof(*cycles), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	if (cycles == MAP_FAILED)
		die("mmap");
	start = now_ns();
	deadline = start + (uint64_t)(seconds * 1e9);
	fflush(stdout);
	for (long w = 0; w < procs; w++) {
		pid_t parent = getpid(), pid = fork();

		if (pid < 0)
			die("fork");
		if (pid)
			continue;
		/* Killed with the parent: whoever stops the workload stops these. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(1);
		for (long n = 0; iters ? n < iters : now_ns() < deadline; n++) {
			cycle(fd, pages, page, sync);
			atomic_fetch_add(cycles, 1);
		}
		_exit(0);
	}
	progress_start(cycles, progress_ms);
	for (int status; wait(&status) > 0;)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			return 1;
	secs = (double)(now_ns() - start) / 1e9;
	printf("cycles_per_sec=%.0f cycles=%ld procs=%ld pages=%ld seconds=%.3f\n",
	       (double)atomic_load(cycles) / secs, atomic_load(cycles), procs, pages, secs);
	printf("score: %.1f cycles/s\n", (double)atomic_load(cycles) / secs);
	return 0;
}
