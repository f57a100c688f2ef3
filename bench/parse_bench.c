// SPDX-License-Identifier: GPL-2.0
/*
 * Parse-rate benchmark of the perf fallback (lock-perf): how many
 * lock:contention_begin/end records one core turns into samples per second.
 *
 * No workload on a 2-CPU machine makes more than ~10,000 contentions a
 * second, far too few to see a per-event cost next to the per-interval
 * one, so this drives the collector's user-space engine (lock_perf.h, the
 * code every record goes through once it is out of the ring) with a
 * synthetic stream at full speed:
 *
 *   - 64 threads on 2 CPUs, 256 locks (each thread uses 32, a few of them
 *     hot), 512 distinct call stacks of 12 frames (two per lock and depth)
 *     built from this kernel's real function addresses, so flush symbolises
 *     and names them as on live data; one wait in sixteen nests a spinlock
 *     wait inside a sleeping one;
 *   - the records of each batch are pushed CPU ring by CPU ring, as
 *     lock_perf.c reads them, so the engine puts them in time order;
 *   - every record's stack is interned (lp_engine_stack, as parse_sample()
 *     does), batches are processed, and every million records an interval
 *     is flushed into a store and committed.
 *
 * Timed: the thread's CPU time in the engine and the store, not the
 * generation of the records.  Not included: perf_mmap__read_event() and the
 * three tep_read_number_field() calls per record (a few tens of ns).  The
 * result is checked: every wait that ended must be in the store, none lost.
 *
 *   events=10000000 cpu_s=2.10 events_per_cpu_s=4761904 lost=0 waits=... ok
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lock_common.h"
#include "lock_perf.h"
#include "mmscope/collectors.h"
#include "mmscope/ksyms.h"
#include "mmscope/store.h"

#define THREADS 64
#define LOCKS 256
#define STACKS 512
#define DEPTH 12
#define BATCH 8192
#define PER_INTERVAL 1000000ULL

struct thread {
	uint32_t depth;
	uint64_t addr[2];
};

static uint64_t rng = 0x2545f4914f6cdd1dULL;
static uint64_t stack_ips[STACKS][DEPTH];
static struct lp_event batch[BATCH];
static uint32_t batch_stack[BATCH];

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Lock primitives first (lock_common drops them), then the callers, innermost first. */
static const char *const prims[] = { "rwsem_down_write_slowpath", "down_write",
				     "rwsem_down_read_slowpath", "down_read",
				     "queued_spin_lock_slowpath", "_raw_spin_lock" };
static const char *const callers[] = {
	"__mmap_region", "do_mmap", "vm_mmap_pgoff", "ksys_mmap_pgoff", "do_vmi_munmap",
	"__vm_munmap", "do_mprotect_pkey", "mprotect_fixup", "lock_mm_and_find_vma",
	"do_user_addr_fault", "exc_page_fault", "unlink_file_vma", "free_pgtables",
	"exit_mmap", "__mmput", "vma_prepare", "anon_vma_fork", "dup_mmap", "copy_process",
	"kernel_clone", "do_syscall_64", "entry_SYSCALL_64_after_hwframe",
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Real text addresses where kallsyms has them, made-up ones where not. */
static uint64_t func_addr(const struct mms_ksyms *ks, const char *name, uint32_t k)
{
	uint64_t a = ks ? mms_ksyms_addr(ks, name) : 0;

	return a ? a : 0xffffffff81000000ULL + (uint64_t)k * 0x800;
}

static void make_stacks(const struct mms_ksyms *ks)
{
	for (uint32_t s = 0; s < STACKS; s++) {
		uint32_t p = (s % 3) * 2;

		stack_ips[s][0] = func_addr(ks, prims[p], p) + 0x40 + (s % 4) * 8;
		stack_ips[s][1] = func_addr(ks, prims[p + 1], p + 1) + 0x1c;
		for (uint32_t f = 2; f < DEPTH; f++) {
			uint32_t c = (s * 7 + f * 3 + s / 64) % NELEM(callers);

			stack_ips[s][f] = func_addr(ks, callers[c], 100 + c) + 0x20 +
					  ((s >> (f % 5)) % 8) * 4;
		}
	}
}

/* Each thread works on 32 locks (4 of them its own), a few of which are hot. */
static uint32_t hot_lock(uint32_t thread)
{
	double u = (double)(rnd() >> 11) / (double)(1ULL << 53);

	return (thread * 4 + (uint32_t)(u * u * 32)) % LOCKS;
}

/*
 * One batch of records in time order; returns how many waits it ends.
 * Threads 0..31 run on CPU 0, 32..63 on CPU 1.
 */
static uint64_t make_batch(struct thread *th, uint64_t *t)
{
	uint64_t ends = 0;

	for (uint32_t i = 0; i < BATCH; i++) {
		uint32_t j = (uint32_t)(rnd() % THREADS);
		struct thread *x = &th[j];
		struct lp_event *ev = &batch[i];

		memset(ev, 0, sizeof(*ev));
		ev->time = (*t += 40);
		ev->tid = 10000 + j;
		ev->pid = 10000 + (j & ~3U);
		ev->cpu = (uint16_t)(j / (THREADS / 2));
		batch_stack[i] = 0;
		/* End the innermost wait, or begin one (1 in 16 nests a spinlock). */
		if (x->depth && (x->depth == 2 || rnd() % 16)) {
			ev->kind = LP_END;
			ev->lock.addr = x->addr[--x->depth];
			ends++;
			continue;
		}
		ev->kind = LP_BEGIN;
		if (x->depth) {
			ev->lock.addr = x->addr[0] + 8;	/* the rwsem's wait_lock */
			ev->lock.flags = MMS_LCB_SPIN;
		} else {
			uint32_t l = hot_lock(j);

			ev->lock.addr = 0xffff888104000000ULL + (uint64_t)l * 0x240;
			ev->lock.flags = l % 3 ? MMS_LCB_WRITE : MMS_LCB_READ;
		}
		x->addr[x->depth++] = ev->lock.addr;
		/* A lock is taken from a couple of places: two stacks per lock and depth. */
		batch_stack[i] = (uint32_t)((ev->lock.addr >> 6) * 2 + x->depth * 7 + rnd() % 2) %
				 STACKS + 1;
	}
	return ends;
}

/* What lock_perf.c does with a batch: per ring, slot + stack + push; then process. */
static void feed_batch(struct lp_engine *e, uint64_t horizon)
{
	for (uint16_t cpu = 0; cpu < 2; cpu++)
		for (uint32_t i = 0; i < BATCH; i++) {
			struct lp_event *ev;

			if (batch[i].cpu != cpu)
				continue;
			ev = lp_engine_slot(e);
			if (!ev) {
				lp_engine_process(e, UINT64_MAX);
				ev = lp_engine_slot(e);
			}
			*ev = batch[i];
			if (batch_stack[i])
				ev->lock.stack = lp_engine_stack(e, stack_ips[batch_stack[i] - 1],
								 DEPTH);
			lp_engine_push(e);
		}
	lp_engine_process(e, horizon);
}

static int flush(struct lp_engine *e, struct mms_store *st, uint64_t t, uint64_t *waits,
		 uint64_t *lost)
{
	const struct mms_interval *iv;
	int err;

	if (!mms_store_begin(st, t))
		return -ENOMEM;
	err = lp_engine_flush(e, st);
	if (!err)
		err = mms_store_commit(st, 1000000000ULL, 0);
	if (err)
		return err;
	iv = mms_store_latest(st);
	for (uint32_t i = 0; i < iv->n_locks; i++)
		*waits += iv->locks[i].wait.count;
	for (int r = 0; r < MMS_LOST_NR; r++) {
		if (iv->lost[r] && !*lost)
			fprintf(stderr, "parse_bench: lost %llu (%s)\n",
				(unsigned long long)iv->lost[r], mms_lost_reason_name(r));
		*lost += iv->lost[r];
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t events = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000ULL;
	uint64_t t = 1000000000ULL, done = 0, ends = 0, waits = 0, lost = 0, next = PER_INTERVAL;
	struct mms_store_opts so = { .window = 4 };
	struct thread th[THREADS] = { 0 };
	struct mms_lock_common *lc = NULL;
	struct mms_store *st = NULL;
	struct lp_engine *e = NULL;
	struct mms_options opts;
	double cpu = 0, c0;
	int err;

	if (argc > 2 || !events) {
		fprintf(stderr, "usage: parse_bench [EVENTS]   (default 10000000)\n");
		return 2;
	}
	mms_options_init(&opts);
	mms_collectors_init(&opts.knobs);
	make_stacks(mms_collectors_ksyms());
	err = mms_lock_common_create(&opts, mms_collectors_ksyms(), &lc);
	if (!err)
		err = lp_engine_create(&opts, lc, 2 * BATCH + LP_POOL_DEFAULT, &e);
	if (!err)
		err = mms_store_create(&so, &st);
	if (err) {
		fprintf(stderr, "parse_bench: setup failed: %s\n", strerror(-err));
		goto out;
	}
	/* The threads are named once, as COMM records name them on a live system. */
	for (uint32_t j = 0; j < THREADS; j++) {
		struct lp_event *ev = lp_engine_slot(e);

		memset(ev, 0, sizeof(*ev));
		ev->kind = LP_COMM;
		ev->time = t;
		ev->tid = 10000 + j;
		ev->pid = 10000 + (j & ~3U);
		snprintf(ev->comm, sizeof(ev->comm), "worker-%u", j);
		lp_engine_push(e);
	}
	while (done < events) {
		ends += make_batch(th, &t);
		c0 = cpu_now();
		/* Records of the last microsecond wait for the next pass, as in lock_perf.c. */
		feed_batch(e, t - 1000);
		done += BATCH;
		if (done >= next || done >= events) {
			if (done >= events)
				lp_engine_process(e, UINT64_MAX);
			err = flush(e, st, t, &waits, &lost);
			next += PER_INTERVAL;
		}
		cpu += cpu_now() - c0;
		if (err) {
			fprintf(stderr, "parse_bench: flush failed: %s\n", strerror(-err));
			goto out;
		}
	}
	printf("events=%llu cpu_s=%.3f events_per_cpu_s=%.0f lost=%llu waits=%llu ended=%llu "
	       "%s\n", (unsigned long long)done, cpu, (double)done / cpu,
	       (unsigned long long)lost, (unsigned long long)waits, (unsigned long long)ends,
	       waits == ends && !lost ? "ok" : "WRONG");
	if (waits != ends || lost)
		err = -EPROTO;
out:
	lp_engine_destroy(e);
	mms_lock_common_destroy(lc);
	mms_store_destroy(st);
	mms_collectors_cleanup();
	return err ? 1 : 0;
}
