// SPDX-License-Identifier: GPL-2.0
/*
 * Replay benchmark: writes a synthetic one-hour recording through the real
 * recorder, then times what a user of `mmscope replay` waits for in it.
 *
 *   replay_bench make FILE [-n INTERVALS] [-l LOCK_ROWS] [-m METRIC_ROWS]
 *   replay_bench seek FILE [-k SEEKS]
 *   replay_bench lost FILE
 *
 * make: INTERVALS (3600) one-second intervals of a busy system-wide session:
 * LOCK_ROWS (300) lock-wait rows (lock x stack x task, skewed towards a few
 * hot locks) and METRIC_ROWS (100) mm metric rows each, over 2,000 locks of
 * every kind, 1,000 eight-frame stacks and 256 live tasks of which 4 are
 * replaced every second, so definitions keep arriving all hour as they do
 * from a machine that runs builds.  Deterministic: the same file every time.
 *
 * seek: opens the file (every block read and checked, as `replay` does),
 * then seeks back and forth far enough that every seek lands outside the
 * store's window (600 intervals, the default): the slow path, not the step
 * forward.  A seek commits the new window's intervals undecoded; what the
 * Locks view reads (the shown interval and the sparklines' minute) is loaded
 * before it is updated and drawn, as the TUI does: seek_frame is when the
 * user sees the new position.  One line, wall and CPU milliseconds:
 *
 *   open_ms=120.1 seek_p50_ms=30.2 seek_max_ms=35.0 seek_frame_p50_ms=31.0 ...
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mmscope/canvas.h"
#include "mmscope/recording.h"
#include "mmscope/view.h"

#define SEC 1000000000ULL
#define T0 (1700000000ULL * SEC)
#define NLOCKS 2000
#define NSTACKS 1000
#define DEPTH 8
#define NTASKS 256
#define MAX_SEEKS 256

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

/* xorshift64*: the same "random" file on every machine. */
static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static uint32_t rnd_below(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

/* Skewed towards 0: a few locks carry most of the waits, as in real sessions. */
static uint32_t rnd_skewed(uint32_t n)
{
	double u = (double)(rnd() >> 11) / (double)(1ULL << 53);

	return (uint32_t)(u * u * u * n);
}

static double now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static const char *const comms[] = { "mmap_churn", "cc1", "make", "kworker/u8:1", "stress-ng-brk",
				     "execl_loop", "systemd-journal", "ld", "postgres", "java" };
static const char *const statics[] = { "rcu_state", "jiffies_lock", "tasklist_lock",
				       "css_set_lock", "pgd_lock", "mmlist_lock" };
static const char *const caches[] = { "&task_struct", "&anon_vma", "&vm_area_struct",
				      "&mm_struct", "&inode_cache", "&dentry", "&kmalloc-256" };
static const char *const metrics[] = {
	"mmap_lock.wait.read", "mmap_lock.wait.write", "vma.inferred.calls", "vma.inferred.up",
	"vma.inferred.down", "rmap.stock.reclaim_pages", "rmap.stock.reclaim_pages.scanned",
	"rmap.stock.unmap_fail",
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static uint32_t task_tid[NTASKS], next_tid = 2000;

static uint32_t task_id(struct mms_store *st, uint32_t slot)
{
	uint32_t tid = task_tid[slot];

	return mms_store_task(st, tid, tid & ~3U, comms[tid % NELEM(comms)]);
}

static uint32_t lock_id(struct mms_store *st, uint32_t i)
{
	struct mms_lock_info li = { .addr = 0xffff888100000000ULL + (uint64_t)i * 0x1c0 };
	char buf[96];

	switch (i % 5) {
	case 0:
		li.kind = MMS_LOCK_MMAP;
		li.name_id = mms_store_str(st, "mmap_lock");
		li.owner_tgid = 2000 + (i / 5) * 4;
		li.owner_comm_id = mms_store_str(st, comms[li.owner_tgid % NELEM(comms)]);
		break;
	case 1:
		li.kind = MMS_LOCK_I_MMAP;
		li.name_id = mms_store_str(st, "i_mmap_rwsem");
		snprintf(buf, sizeof(buf), "/usr/lib/x86_64-linux-gnu/lib%u.so.6", i / 5);
		li.detail_id = mms_store_str(st, buf);
		break;
	case 2:
		li.kind = MMS_LOCK_ANON_VMA;
		li.name_id = mms_store_str(st, "anon_vma");
		break;
	case 3:
		li.kind = MMS_LOCK_SLAB;
		li.name_id = mms_store_str(st, caches[i % NELEM(caches)]);
		li.detail_id = li.name_id;
		break;
	default:
		li.kind = MMS_LOCK_STATIC;
		li.name_id = mms_store_str(st, statics[i % NELEM(statics)]);
		break;
	}
	return li.name_id ? mms_store_lock(st, &li) : 0;
}

static uint32_t stack_id(struct mms_store *st, uint32_t i)
{
	uint64_t ips[DEPTH];
	uint32_t syms[DEPTH];
	char buf[64];

	for (int f = 0; f < DEPTH; f++) {
		/* Frames are shared between stacks, as callers are. */
		uint32_t fn = (i * 31 + (uint32_t)f * 7) % 400;

		ips[f] = 0xffffffff81000000ULL + (uint64_t)fn * 0x400 + (uint64_t)(i % 64) * 4;
		snprintf(buf, sizeof(buf), "kfunc_%u+0x%x", fn, (i % 64) * 4);
		syms[f] = mms_store_str(st, buf);
		if (!syms[f])
			return 0;
	}
	return mms_store_stack(st, ips, syms, DEPTH);
}

static int add_interval(struct mms_store *st, uint32_t iv, uint32_t lock_rows,
			uint32_t metric_rows)
{
	if (!mms_store_begin(st, T0 + (uint64_t)iv * SEC))
		return -ENOMEM;
	/* Tasks come and go: new definitions all hour long. */
	for (int k = 0; k < 4; k++)
		task_tid[rnd_below(NTASKS)] = next_tid++;
	for (uint32_t r = 0; r < lock_rows; r++) {
		uint32_t l = rnd_skewed(NLOCKS);
		struct mms_lock_sample s = {
			.lock_id = lock_id(st, l),
			.stack_id = stack_id(st, (l * 7 + rnd_below(4)) % NSTACKS),
			.task_id = task_id(st, rnd_below(NTASKS)),
			.flags = l % 5 == 4 ? MMS_LCB_SPIN : l % 3 ? MMS_LCB_WRITE : MMS_LCB_READ,
		};
		uint32_t waits = 1 + rnd_below(40);

		if (!s.lock_id || !s.stack_id || !s.task_id)
			return -ENOMEM;
		for (uint32_t w = 0; w < waits; w++)
			mms_stat_add(&s.wait, 500 + (rnd() & ((1ULL << (8 + rnd_below(16))) - 1)));
		if (mms_store_add_lock(st, &s))
			return -ENOMEM;
	}
	for (uint32_t r = 0; r < metric_rows; r++) {
		uint32_t slot = rnd_below(NTASKS), tgid = task_tid[slot] & ~3U;
		struct mms_metric_sample m = {
			.proc_id = mms_store_task(st, tgid, tgid, comms[tgid % NELEM(comms)]),
			.metric_id = mms_store_str(st, metrics[r % NELEM(metrics)]),
			.sub = r % NELEM(metrics) >= 2 && r % NELEM(metrics) <= 4 ? 9 + r % 3 : 0,
		};

		if (!m.proc_id || !m.metric_id)
			return -ENOMEM;
		mms_stat_add_n(&m.stat, 1 + rnd_below(5000), 1 + rnd_below(1000));
		if (mms_store_add_metric(st, &m))
			return -ENOMEM;
	}
	return mms_store_commit(st, SEC, 0);
}

static int cmd_make(const char *path, uint32_t n, uint32_t lock_rows, uint32_t metric_rows)
{
	static char *const argv[] = { "replay_bench", "make", NULL };
	struct mms_store_opts so = { .window = 4 };
	struct mms_recorder *r = NULL;
	struct mms_store *st = NULL;
	struct mms_rec_meta m = { 0 };
	struct mms_options opts;
	double t0 = now(CLOCK_MONOTONIC);
	char err[512] = "";
	int e;

	mms_options_init(&opts);
	m.host = "synthetic";
	m.kernel = "6.18.0-bench";
	m.target = "system";
	m.start_ns = T0;
	m.argv = argv;
	m.opts = &opts;
	m.fam[MMS_FAM_LOCK].source = "lock-bpf";
	m.fam[MMS_FAM_LOCK].backend = "bpf";
	m.fam[MMS_FAM_VMA].source = "vma-inferred";
	m.fam[MMS_FAM_VMA].backend = "inferred";
	m.fam[MMS_FAM_RMAP].source = "rmap-stock";
	m.fam[MMS_FAM_RMAP].backend = "stock";
	for (int i = 0; i < NTASKS; i++)
		task_tid[i] = next_tid++;
	unlink(path);
	e = mms_store_create(&so, &st);
	if (e) {
		snprintf(err, sizeof(err), "cannot create a store: %s", strerror(-e));
		goto out;
	}
	e = mms_recorder_create(path, &m, 0, &r, err, sizeof(err));
	if (e)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		e = add_interval(st, i, lock_rows, metric_rows);
		if (e) {
			snprintf(err, sizeof(err), "interval %u: %s", i, strerror(-e));
			goto out;
		}
		e = mms_recorder_write(r, st, mms_store_latest(st));
		if (e) {
			snprintf(err, sizeof(err), "%s", mms_recorder_error(r));
			goto out;
		}
	}
	e = mms_recorder_close(r, "");
	if (e)
		snprintf(err, sizeof(err), "closing %s: %s", path, strerror(-e));
	else
		printf("wrote %s: %u intervals, %llu bytes, %u lock and %u metric rows per "
		       "interval, in %.1f s\n", path, n,
		       (unsigned long long)mms_recorder_bytes(r), lock_rows, metric_rows,
		       (now(CLOCK_MONOTONIC) - t0) / 1e3);
out:
	if (err[0])
		fprintf(stderr, "replay_bench: %s\n", err);
	mms_recorder_destroy(r);
	mms_store_destroy(st);
	return err[0] ? 1 : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double maximum(const double *v, int n)
{
	double m = 0;

	for (int i = 0; i < n; i++)
		m = v[i] > m ? v[i] : m;
	return m;
}

static int cmd_seek(const char *path, int seeks)
{
	static double wall[MAX_SEEKS], frame[MAX_SEEKS], cpu[MAX_SEEKS];
	const struct mms_view *v = mms_views[0];
	struct mms_source *src = NULL;
	struct mms_canvas *c = NULL;
	struct mms_store *st = NULL;
	struct mms_store_opts so;
	struct mms_view_env env;
	struct mms_options opts;
	void *priv = NULL;
	double t0, open_ms, w0, c0;
	uint32_t count, half, lo, hi;
	char err[512] = "";
	int e;

	mms_options_init(&opts);
	/* The store a replay session makes: the default window and byte budget. */
	memset(&so, 0, sizeof(so));
	so.window = opts.window;
	t0 = now(CLOCK_MONOTONIC);
	e = mms_replay_open(path, &opts, &src, err, sizeof(err));
	open_ms = now(CLOCK_MONOTONIC) - t0;
	if (e)
		goto out;
	count = mms_replay_count(src);
	half = count / 2;
	if (count < 4 * opts.window) {
		snprintf(err, sizeof(err), "%s has %u intervals: seeking needs at least %u (4 "
			 "windows)", path, count, 4 * opts.window);
		goto out;
	}
	if (mms_store_create(&so, &st) || mms_canvas_create(200, 60, true, &c) ||
	    v->create(&priv)) {
		snprintf(err, sizeof(err), "out of memory");
		goto out;
	}
	for (int i = 0; i < seeks; i++) {
		/*
		 * Odd seeks go back into [window, half - window), even ones forward
		 * into [half, count): every jump is more than a window, so every
		 * one refills the store.
		 */
		uint32_t idx = i % 2 ? opts.window + rnd_below(half - 2 * opts.window) :
				       half + rnd_below(count - half);

		w0 = now(CLOCK_MONOTONIC);
		c0 = now(CLOCK_THREAD_CPUTIME_ID);
		e = mms_replay_seek(src, st, idx);
		if (e) {
			snprintf(err, sizeof(err), "seek to %u: %s", idx, strerror(-e));
			goto out;
		}
		wall[i] = now(CLOCK_MONOTONIC) - w0;
		cpu[i] = now(CLOCK_THREAD_CPUTIME_ID) - c0;
		mms_view_env_init(&env, st, -1, MMS_RANGE_INTERVAL);
		if (mms_view_span(v, &env, &lo, &hi))
			mms_store_load(st, lo, hi);
		v->update(priv, &env);
		mms_canvas_clear(c);
		v->draw(priv, &env, c, 4, 55);
		frame[i] = now(CLOCK_MONOTONIC) - w0;
	}
	printf("open_ms=%.1f seek_p50_ms=%.1f seek_max_ms=%.1f seek_frame_p50_ms=%.1f "
	       "seek_frame_max_ms=%.1f seek_cpu_p50_ms=%.1f intervals=%u window=%u seeks=%d\n",
	       open_ms, median(wall, seeks), maximum(wall, seeks), median(frame, seeks),
	       maximum(frame, seeks), median(cpu, seeks), count, opts.window, seeks);
out:
	if (err[0])
		fprintf(stderr, "replay_bench: %s\n", err);
	if (priv)
		v->destroy(priv);
	mms_canvas_destroy(c);
	mms_store_destroy(st);
	mms_source_destroy(src);
	return err[0] ? 1 : 0;
}

/* Which intervals lost events, and why: tells start-up effects from losses under load. */
static int cmd_lost(const char *path)
{
	struct mms_recording *rec = NULL;
	struct mms_store *st = NULL;
	struct mms_store_opts so = { .window = 4 };
	char err[512] = "";
	int e;

	e = mms_recording_open(path, &rec, err, sizeof(err));
	if (!e && mms_store_create(&so, &st))
		snprintf(err, sizeof(err), "out of memory");
	for (uint32_t i = 0; !err[0] && i < mms_recording_count(rec); i++) {
		const struct mms_interval *iv;

		e = mms_recording_feed(rec, st, i);
		if (e) {
			snprintf(err, sizeof(err), "interval %u: %s", i, strerror(-e));
			break;
		}
		iv = mms_store_latest(st);
		for (int r = 0; r < MMS_LOST_NR; r++)
			if (iv->lost[r])
				printf("interval %u of %u: lost %llu (%s)\n", i,
				       mms_recording_count(rec), (unsigned long long)iv->lost[r],
				       mms_lost_reason_name(r));
	}
	if (err[0])
		fprintf(stderr, "replay_bench: %s\n", err);
	mms_store_destroy(st);
	mms_recording_close(rec);
	return err[0] ? 1 : 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: replay_bench make FILE [-n INTERVALS] [-l LOCK_ROWS] [-m METRIC_ROWS]\n"
		"       replay_bench seek FILE [-k SEEKS]\n"
		"       replay_bench lost FILE   (which intervals lost events, and why)\n"
		"  -n  one-second intervals (default 3600: one hour)\n"
		"  -l  lock-wait rows per interval (default 300)\n"
		"  -m  mm metric rows per interval (default 100)\n"
		"  -k  seeks, each refilling the 600-interval window (default 20)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long n = 3600, lock_rows = 300, metric_rows = 100, seeks = 20;

	if (argc == 3 && !strcmp(argv[1], "lost"))
		return cmd_lost(argv[2]);
	if (argc < 3)
		usage();
	for (int i = 3; i < argc; i++) {
		unsigned long *dst = NULL;
		char *end;

		if (!strcmp(argv[i], "-n"))
			dst = &n;
		else if (!strcmp(argv[i], "-l"))
			dst = &lock_rows;
		else if (!strcmp(argv[i], "-m"))
			dst = &metric_rows;
		else if (!strcmp(argv[i], "-k"))
			dst = &seeks;
		if (!dst || i + 1 >= argc)
			usage();
		*dst = strtoul(argv[++i], &end, 10);
		if (*end || !*dst)
			usage();
	}
	if (!strcmp(argv[1], "make"))
		return cmd_make(argv[2], (uint32_t)n, (uint32_t)lock_rows, (uint32_t)metric_rows);
	if (!strcmp(argv[1], "seek"))
		return cmd_seek(argv[2], seeks > MAX_SEEKS ? MAX_SEEKS : (int)seeks);
	usage();
	return 2;
}
