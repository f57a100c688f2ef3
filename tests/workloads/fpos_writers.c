// SPDX-License-Identifier: GPL-2.0
/*
 * fpos_writers: T threads write() to one shared file descriptor, so every
 * write takes the file's f_pos_lock, a mutex, and the waiters sleep in it
 * while a holder is in the filesystem: mutex waits whose optimistic spin
 * ends in a sleep (the kernel's contention_begin fires twice for them, once
 * for the spin and once for the sleep, then one contention_end).
 *
 *   fpos_writers -f FILE [-t THREADS] [-s SECONDS]
 *   writes_per_sec=1234 writes=2468 threads=8 seconds=2.000
 */
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

#define CHUNK 65536
#define WRAP (64L << 20)	/* the file starts over past this */

static int fd;
static double secs = 2;
static atomic_long writes;
static char buf[CHUNK];

/* progress.h's clock, in seconds. */
static double now(void)
{
	return (double)now_ns() / 1e9;
}

static void *writer(void *arg)
{
	double end = *(double *)arg;

	while (now() < end) {
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			perror("fpos_writers: write");
			exit(1);
		}
		atomic_fetch_add(&writes, 1);
		if (lseek(fd, 0, SEEK_CUR) > WRAP && lseek(fd, 0, SEEK_SET) < 0) {
			perror("fpos_writers: lseek");
			exit(1);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *path = NULL;
	int threads = 8, opt;
	pthread_t tid[64];
	double start, end;

	while ((opt = getopt(argc, argv, "f:t:s:")) != -1) {
		switch (opt) {
		case 'f': path = optarg; break;
		case 't': threads = atoi(optarg); break;
		case 's': secs = atof(optarg); break;
		default: goto usage;
		}
	}
	if (!path || threads < 1 || threads > 64 || secs <= 0 || optind != argc)
		goto usage;
	fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	start = now();
	end = start + secs;
	for (int i = 0; i < threads; i++)
		if (pthread_create(&tid[i], NULL, writer, &end)) {
			fprintf(stderr, "fpos_writers: cannot start a thread\n");
			return 1;
		}
	for (int i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	close(fd);
	unlink(path);
	printf("writes_per_sec=%.0f writes=%ld threads=%d seconds=%.3f\n",
	       (double)writes / (now() - start), (long)writes, threads, now() - start);
	return 0;
usage:
	fprintf(stderr, "usage: fpos_writers -f FILE [-t THREADS (1-64)] [-s SECONDS]\n");
	return 2;
}
