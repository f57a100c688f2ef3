// SPDX-License-Identifier: GPL-2.0
/*
 * Live test of the lock-bpf source on the running kernel: mmap_churn is
 * launched as a followed command, its waits are aggregated in the kernel and
 * drained into a real store, and the result is checked for what must hold
 * whatever the timing: only the followed process, its mmap_lock named with
 * its pid and comm, per-process mmap_lock metrics equal to the mmap_lock
 * rows, histograms consistent with counts, callers past the lock code,
 * filters applied, nothing lost, and no BPF object left after destroy.
 * (Exact counts against perf lock are tests/live/oracle_perf_lock.sh.)
 *
 *   test_lock_bpf MMAP_CHURN
 *
 * Exits 77 when not root (loading BPF needs CAP_BPF and CAP_PERFMON).
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "mmscope/collectors.h"
#include "mmscope/ksyms.h"
#include "mmscope/query.h"
#include "mmscope/store.h"

static const char *workload, *fpos_writers;

/* BPF programs, maps and links this process holds a descriptor of. */
static int bpf_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[300], target[256];
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d))) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		if (!strncmp(target, "anon_inode:bpf", 14))
			n++;
	}
	closedir(d);
	return n;
}

struct run {
	struct mms_options o;
	struct mms_store *st;
	pid_t child;
	char *argv[8];
};

/*
 * Launches argv as a followed command (o->pid, o->cmd) under lock-bpf, held,
 * like the session holds it, until the source is attached.  Returns its pid.
 */
static pid_t launch(char **argv, struct mms_options *o, struct mms_source **src)
{
	int go[2];
	pid_t child;
	char c = 1;

	assert_int_equal(pipe(go), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	close(go[0]);
	o->pid = child;
	o->cmd = argv;
	*src = NULL;
	if (mms_source_new(&mms_lock_bpf_ops, o, src) || mms_source_prepare(*src) ||
	    mms_source_start(*src))
		fail_msg("lock-bpf: %s", *src ? (*src)->why : "out of memory");
	assert_int_equal(write(go[1], &c, 1), 1);
	close(go[1]);
	return child;
}

/*
 * launch(), wait for the command to end (it must exit 0), then drain all of
 * it into st and commit it as one interval of dur_ns.  Returns its pid.
 */
static pid_t run_to_end(char **argv, struct mms_options *o, struct mms_store *st,
			uint64_t dur_ns)
{
	struct mms_source *src;
	pid_t child;
	int status;

	assert_non_null(mms_store_begin(st, 0));
	child = launch(argv, o, &src);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	mms_source_stop(src);
	/* After stop, drain still collects everything still pending. */
	if (mms_source_drain(src, st))
		fail_msg("lock-bpf drain: %s", src->why);
	mms_source_destroy(src);
	assert_int_equal(mms_store_commit(st, dur_ns, 0), 0);
	return child;
}

/*
 * Runs mmap_churn (4 threads, fixed iterations) under lock-bpf as a launched
 * command, then commits one interval holding all of it.
 */
static void run_workload(struct run *r)
{
	r->argv[0] = (char *)workload;
	r->argv[1] = "-t";
	r->argv[2] = "4";
	r->argv[3] = "-n";
	r->argv[4] = "2000";
	r->argv[5] = NULL;
	assert_int_equal(mms_store_create(NULL, &r->st), 0);
	r->child = run_to_end(r->argv, &r->o, r->st, 1000000000ULL);
}

static uint64_t hist_sum(const struct mms_stat *s)
{
	uint64_t n = 0;

	for (int i = 0; i < MMS_HIST_SLOTS; i++)
		n += s->hist[i];
	return n;
}

static void test_follow_and_names(void **state)
{
	const struct mms_ksyms *ks = mms_collectors_ksyms();
	const struct mms_interval *iv;
	struct mms_stat w, rd;
	struct run r = { 0 };
	uint64_t count = 0, mm_count = 0, mm_total = 0;
	bool caller_seen = false;
	char label[128], want[64];

	(void)state;
	mms_options_init(&r.o);
	assert_int_equal(bpf_fds(), 0);
	run_workload(&r);
	/* Programs, links and maps are all gone with the source. */
	assert_int_equal(bpf_fds(), 0);

	iv = mms_store_latest(r.st);
	assert_non_null(iv);
	snprintf(want, sizeof(want), "mmap_lock (%d mmap_churn)", (int)r.child);
	for (uint32_t i = 0; i < iv->n_locks; i++) {
		const struct mms_lock_sample *s = &iv->locks[i];
		const struct mms_task *t = mms_store_get_task(r.st, s->task_id);
		const struct mms_lock_info *l = mms_store_get_lock(r.st, s->lock_id);
		const struct mms_stack *k = mms_store_get_stack(r.st, s->stack_id);

		assert_non_null(t);
		assert_non_null(l);
		assert_int_equal(t->tgid, (uint32_t)r.child);
		assert_true(s->wait.count > 0);
		assert_int_equal(hist_sum(&s->wait), s->wait.count);
		assert_true(s->wait.min <= s->wait.max);
		assert_true(s->wait.total >= s->wait.min * s->wait.count);
		assert_true(s->wait.total <= s->wait.max * s->wait.count);
		count += s->wait.count;
		if (l->kind == MMS_LOCK_MMAP && (s->flags & (MMS_LCB_READ | MMS_LCB_WRITE))) {
			mms_store_lock_label(r.st, s->lock_id, label, sizeof(label));
			assert_string_equal(label, want);
			mm_count += s->wait.count;
			mm_total += s->wait.total;
		}
		/* Frame 0 is the caller, never inside the lock primitives. */
		if (k && k->nr) {
			const char *f0 = mms_store_get_str(r.st, k->sym_ids[0]);

			if (ks)
				assert_false(mms_ksyms_is_lock_func(ks, k->ips[0]));
			if (strstr(f0, "mprotect") || strstr(f0, "mmap") || strstr(f0, "munmap"))
				caller_seen = true;
		}
	}
	print_message("lock-bpf: %llu waits, %llu on mmap_lock (%llu ns)\n",
		      (unsigned long long)count, (unsigned long long)mm_count,
		      (unsigned long long)mm_total);
	assert_true(count > 0);
	assert_true(mm_count > 0);
	assert_true(caller_seen);
	/* The mmap_lock view's metrics are exactly the mmap_lock rwsem rows. */
	assert_int_equal(mms_query_metric(r.st, 0, 0, "mmap_lock.wait.write", -1,
					  (uint32_t)r.child, &w), 0);
	assert_int_equal(mms_query_metric(r.st, 0, 0, "mmap_lock.wait.read", -1,
					  (uint32_t)r.child, &rd), 0);
	assert_int_equal(w.count + rd.count, mm_count);
	assert_int_equal(w.total + rd.total, mm_total);
	/* Nothing that can be sized away was lost. */
	assert_int_equal(iv->lost[MMS_LOST_TASK_SLOT], 0);
	assert_int_equal(iv->lost[MMS_LOST_MAP_FULL], 0);
	assert_int_equal(iv->lost[MMS_LOST_PENDING], 0);
	mms_store_destroy(r.st);
}

static void test_filters(void **state)
{
	const struct mms_interval *iv;
	struct run r = { 0 };
	uint64_t count = 0;

	(void)state;
	mms_options_init(&r.o);
	/* -Y in the kernel, -L by name in user space. */
	r.o.nr_types = mms_lock_type_parse("rwsem:W", r.o.types, MMS_MAX_FILTERS);
	assert_int_equal(r.o.nr_types, 1);
	r.o.locks[0] = "mmap_lock";
	r.o.nr_locks = 1;
	run_workload(&r);
	iv = mms_store_latest(r.st);
	for (uint32_t i = 0; i < iv->n_locks; i++) {
		const struct mms_lock_info *l = mms_store_get_lock(r.st, iv->locks[i].lock_id);

		assert_int_equal(iv->locks[i].flags, MMS_LCB_WRITE);
		assert_int_equal(l->kind, MMS_LOCK_MMAP);
		count += iv->locks[i].wait.count;
	}
	assert_true(count > 0);
	mms_store_destroy(r.st);
}

/*
 * Stack maps are emptied and reused (two banks, see lock_bpf.h): with one
 * bucket per map a bank holds 2 stacks, so a run drained every 20 ms whose
 * waits have more distinct stacks than that shows them only if the banks
 * are recycled.  Every stack kept is a real one (its caller is past the
 * lock code), and every wait that lost its stack was counted as lost.
 */
static void test_stack_banks(void **state)
{
	const struct mms_ksyms *ks = mms_collectors_ksyms();
	struct mms_source *src = NULL;
	struct mms_store *st = NULL;
	uint64_t waits = 0, nostack = 0, lost = 0;
	uint32_t distinct = 0, seen[64];
	char *argv[] = { (char *)workload, "-t", "4", "-s", "2", NULL };
	struct mms_options o;
	int status, intervals = 0;
	pid_t child, w;

	(void)state;
	mms_options_init(&o);
	o.stack_entries = 1;
	assert_int_equal(mms_store_create(NULL, &st), 0);
	child = launch(argv, &o, &src);
	do {
		usleep(20000);
		w = waitpid(child, &status, WNOHANG);
		if (w == child)
			mms_source_stop(src);
		assert_non_null(mms_store_begin(st, 0));
		if (mms_source_drain(src, st))
			fail_msg("lock-bpf drain: %s", src->why);
		assert_int_equal(mms_store_commit(st, 20000000ULL, 0), 0);
		intervals++;
		for (uint32_t i = 0; i < mms_store_latest(st)->n_locks; i++) {
			const struct mms_lock_sample *s = &mms_store_latest(st)->locks[i];
			const struct mms_stack *k = mms_store_get_stack(st, s->stack_id);
			uint32_t j;

			waits += s->wait.count;
			if (!k || !k->nr) {
				nostack += s->wait.count;
				continue;
			}
			if (ks)
				assert_false(mms_ksyms_is_lock_func(ks, k->ips[0]));
			for (j = 0; j < distinct && seen[j] != s->stack_id; j++)
				;
			if (j == distinct && distinct < 64)
				seen[distinct++] = s->stack_id;
		}
		lost += mms_store_latest(st)->lost[MMS_LOST_STACK];
	} while (w == 0);
	assert_int_equal(w, child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	mms_source_destroy(src);
	print_message("lock-bpf, 1-bucket stack maps: %d intervals, %llu waits, %u distinct "
		      "stacks, %llu waits without a stack, %llu stacks lost\n", intervals,
		      (unsigned long long)waits, distinct, (unsigned long long)nostack,
		      (unsigned long long)lost);
	assert_true(waits > 0);
	assert_true(distinct > 2);
	/*
	 * Every wait without a stack was counted; a few counted at their begin
	 * may have no row (an end the source did not see, counted apart).
	 */
	assert_true(nostack <= lost);
	assert_true(lost - nostack <= 2 + lost / 100);
	mms_store_destroy(st);
}

/*
 * System-wide, processes that lived less than an interval are shown as one
 * group per name: CHILDREN short runs of mmap_churn leave no lock rows of
 * their own, and their waits are the group task's (tgid
 * mms_tgid_short_of("mmap_churn"), the name as comm).  A 10 s interval makes
 * every one of them short-lived however slow the machine; the source is
 * drained once, after they have all ended.
 */
#define CHILDREN 6
static void test_short_lived(void **state)
{
	char *argv[] = { (char *)workload, "-t", "4", "-n", "500", NULL };
	uint32_t group = mms_tgid_short_of("mmap_churn");
	struct mms_source *src = NULL;
	struct mms_store *st = NULL;
	uint64_t grouped = 0, own = 0;
	pid_t kids[CHILDREN];
	struct mms_options o;
	int status;

	(void)state;
	mms_options_init(&o);
	o.interval_ms = 10000;
	assert_int_equal(mms_store_create(NULL, &st), 0);
	assert_non_null(mms_store_begin(st, 0));
	if (mms_source_new(&mms_lock_bpf_ops, &o, &src) || mms_source_prepare(src) ||
	    mms_source_start(src))
		fail_msg("lock-bpf: %s", src ? src->why : "out of memory");
	for (int i = 0; i < CHILDREN; i++) {
		kids[i] = fork();
		assert_true(kids[i] >= 0);
		if (!kids[i]) {
			execv(argv[0], argv);
			_exit(127);
		}
		assert_int_equal(waitpid(kids[i], &status, 0), kids[i]);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	if (mms_source_drain(src, st))
		fail_msg("lock-bpf drain: %s", src->why);
	mms_source_destroy(src);
	assert_int_equal(mms_store_commit(st, 10000000000ULL, 0), 0);
	for (uint32_t i = 0; i < mms_store_latest(st)->n_locks; i++) {
		const struct mms_lock_sample *s = &mms_store_latest(st)->locks[i];
		const struct mms_task *t = mms_store_get_task(st, s->task_id);

		assert_non_null(t);
		for (int k = 0; k < CHILDREN; k++)
			if (t->tgid == (uint32_t)kids[k])
				own += s->wait.count;
		if (t->tgid == group) {
			assert_int_equal(t->tid, group);
			assert_string_equal(mms_store_get_str(st, t->comm_id), "mmap_churn");
			grouped += s->wait.count;
		}
	}
	print_message("lock-bpf system-wide: %d short runs of mmap_churn, %llu waits in their "
		      "group (task %#x), %llu in rows of their own\n", CHILDREN,
		      (unsigned long long)grouped, group, (unsigned long long)own);
	assert_true(grouped > 0);
	assert_int_equal(own, 0);
	mms_store_destroy(st);
}

/*
 * Mutex waits that sleep: the kernel's contention_begin fires for the
 * optimistic spin and again for the sleep, then one contention_end.  They
 * are one wait each, and nothing is left behind in the task's frames: before
 * that was so, every such wait left a frame, a thread's eight frames filled
 * up, and this workload lost about a thousand waits as "task_slot" in 2 s.
 */
static void test_mutex_sleeps(void **state)
{
	char *argv[] = { (char *)fpos_writers, "-f", "/var/tmp/mmscope-test-fpos", "-t", "8", "-s",
			 "2", NULL };
	struct mms_store *st = NULL;
	uint64_t mutex = 0, slow = 0;
	struct mms_options o;

	(void)state;
	mms_options_init(&o);
	assert_int_equal(mms_store_create(NULL, &st), 0);
	run_to_end(argv, &o, st, 2000000000ULL);
	for (uint32_t i = 0; i < mms_store_latest(st)->n_locks; i++) {
		const struct mms_lock_sample *s = &mms_store_latest(st)->locks[i];

		if (!(s->flags & MMS_LCB_MUTEX))
			continue;
		mutex += s->wait.count;
		/* Waits over 1 ms slept: the spin alone gives up long before. */
		for (int k = 20; k < MMS_HIST_SLOTS; k++)
			slow += s->wait.hist[k];
	}
	print_message("lock-bpf, 8 threads writing one fd for 2 s: %llu mutex waits, %llu of "
		      "them over 1 ms; lost: task_slot %llu, time %llu\n",
		      (unsigned long long)mutex, (unsigned long long)slow,
		      (unsigned long long)mms_store_latest(st)->lost[MMS_LOST_TASK_SLOT],
		      (unsigned long long)mms_store_latest(st)->lost[MMS_LOST_TIME]);
	assert_true(slow > 0);
	assert_int_equal(mms_store_latest(st)->lost[MMS_LOST_TASK_SLOT], 0);
	mms_store_destroy(st);
}

static void test_bad_options(void **state)
{
	struct mms_source *src = NULL;
	struct mms_options o;

	(void)state;
	mms_options_init(&o);
	o.map_entries = 0;
	assert_int_equal(mms_source_new(&mms_lock_bpf_ops, &o, &src), -EINVAL);
	assert_non_null(strstr(src->why, "--map-nr-entries"));
	mms_source_destroy(src);
	assert_int_equal(bpf_fds(), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_follow_and_names),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_stack_banks),
		cmocka_unit_test(test_short_lived),
		cmocka_unit_test(test_mutex_sleeps),
	};
	int ret;

	if (argc < 3) {
		fprintf(stderr, "usage: test_lock_bpf MMAP_CHURN FPOS_WRITERS\n");
		return 2;
	}
	workload = argv[1];
	fpos_writers = argv[2];
	if (geteuid() != 0) {
		fprintf(stderr, "test_lock_bpf: needs root (CAP_BPF, CAP_PERFMON): skipped\n");
		return 77;
	}
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	mms_collectors_cleanup();
	return ret;
}
