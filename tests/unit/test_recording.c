// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests: the recording format.  Real files in a temporary directory:
 * round trip of every field, ids reused after store sweeps, truncation at
 * every byte of the last write, corruption, wrong magic, newer versions,
 * unknown blocks, file safety (O_EXCL, symlinks, mode), a write failure
 * (RLIMIT_FSIZE stands in for a full disk), and replay seeking.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <cmocka.h>

#include "mmscope/mm_metrics.h"
#include "mmscope/query.h"
#include "mmscope/recording.h"
#include "rec_dump.h"

#define T0 1700000000000000000ULL
/* The minor version the recorder writes: 1.4, lock rows with their owner. */
#define WRITES_MINOR 4
#define MAX_IV 64

static char dir[64];
static char path[128];

/* ---- Building stores ---- */

static uint32_t mk_stack(struct mms_store *st, int depth, int variant)
{
	static const char *const names[] = { "down_write+0x1c", "vma_prepare+0x3c",
					     "__split_vma+0x80", "do_vmi_align_munmap+0x1a0" };
	uint64_t ips[4];
	uint32_t syms[4];

	for (int i = 0; i < depth; i++) {
		ips[i] = 0xffffffff81000000ULL + (uint64_t)i * 0x100 + (uint64_t)variant;
		syms[i] = mms_store_str(st, names[i]);
	}
	return mms_store_stack(st, ips, syms, (uint32_t)depth);
}

/* A lock row whose owner (format 1.4) was task owner, at owner_stack (0, 0: unknown). */
static void add_owned(struct mms_store *st, uint32_t lock, uint32_t stack, uint32_t task,
		      uint32_t flags, uint32_t owner, uint32_t owner_stack, uint64_t ns, uint64_t n)
{
	struct mms_lock_sample s = { .lock_id = lock, .stack_id = stack, .task_id = task,
				     .flags = flags, .owner_id = owner,
				     .owner_stack_id = owner_stack };

	mms_stat_add_n(&s.wait, ns, n);
	mms_stat_add(&s.wait, ns * 7 + 3);
	assert_int_equal(mms_store_add_lock(st, &s), 0);
}

static void add_lock(struct mms_store *st, uint32_t lock, uint32_t stack, uint32_t task,
		     uint32_t flags, uint64_t ns, uint64_t n)
{
	add_owned(st, lock, stack, task, flags, 0, 0, ns, n);
}

/*
 * dump() and the owner of every lock row with its stack (format 1.4), which
 * rec_dump.h does not show: what the tests compare after a round trip.
 */
static char *dump_iv(const struct mms_store *st, const struct mms_interval *iv)
{
	char *base = dump(st, iv), *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fputs(base, f);
	free(base);
	for (uint32_t i = 0; i < iv->n_locks; i++) {
		const struct mms_lock_sample *s = &iv->locks[i];
		const struct mms_stack *k = mms_store_get_stack(st, s->owner_stack_id);

		fprintf(f, "row %u owner", i);
		dump_task(f, st, s->owner_id);
		fprintf(f, " stack");
		for (uint32_t j = 0; k && j < k->nr; j++)
			fprintf(f, " %#llx=%s", (unsigned long long)k->ips[j],
				mms_store_get_str(st, k->sym_ids[j]));
		fprintf(f, "\n");
	}
	fclose(f);
	return buf;
}

/* One interval with every kind of thing in it; uniq adds that many new names. */
static void fill(struct mms_store *st, int i, int uniq, bool last)
{
	struct mms_lock_info mm = { .addr = 0xffff888100001000ULL + (uint64_t)(i % 2) * 64,
				    .kind = MMS_LOCK_MMAP, .owner_tgid = 100 };
	struct mms_lock_info im = { .addr = 0xffff888100002000ULL, .kind = MMS_LOCK_I_MMAP };
	struct mms_lock_info sl = { .addr = 0xffff888100003000ULL, .kind = MMS_LOCK_SLAB };
	struct mms_lock_info bare = { .addr = 0xffff888100004000ULL };
	uint32_t t1, t2, proc, holder, lmm, lim, lsl, lbare;

	assert_non_null(mms_store_begin(st, T0 + (uint64_t)i * 1000000000ULL));
	t1 = mms_store_task(st, 101 + (uint32_t)(i % 3), 100, "worker");
	/* A task's cgroup (format 1.3) comes back with it; "worker" has none. */
	t2 = mms_store_task_cg(st, 200, 200, "kswapd0", "/system.slice/kswapd.scope");
	proc = mms_store_task(st, 100, 100, "worker");
	/* Owners (format 1.4): "holder" and its stack are only ever an owner. */
	holder = mms_store_task(st, 300 + (uint32_t)(i % 2), 300, "holder");
	mm.name_id = mms_store_str(st, "mmap_lock");
	mm.owner_comm_id = mms_store_str(st, "worker");
	im.name_id = mms_store_str(st, "i_mmap_rwsem");
	im.detail_id = mms_store_str(st, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	sl.name_id = mms_store_str(st, "&task_struct");
	sl.detail_id = mms_store_str(st, "task_struct");
	lmm = mms_store_lock(st, &mm);
	lim = mms_store_lock(st, &im);
	lsl = mms_store_lock(st, &sl);
	lbare = mms_store_lock(st, &bare);
	add_owned(st, lmm, mk_stack(st, 3, 0), t1, MMS_LCB_WRITE, holder,
		  mk_stack(st, 2, 8 + i % 2), 1000 + (uint64_t)i, 3);
	add_lock(st, lmm, mk_stack(st, 4, 1), t1, MMS_LCB_READ, 20000, 1);
	add_owned(st, lim, mk_stack(st, 2, 2), t2, MMS_LCB_WRITE, t1, 0, 9470000, 2);
	add_lock(st, lsl, 0, t2, MMS_LCB_SPIN, 150, 10 + (uint64_t)i);
	add_owned(st, lbare, mk_stack(st, 1, 3), t1, MMS_LCB_MUTEX, t2, mk_stack(st, 3, 0),
		  1ULL << 38, 1);
	assert_int_equal(mms_store_add_value(st, proc, "vma.split", 0, 1, 3 + (uint64_t)i), 0);
	assert_int_equal(mms_store_add_value(st, proc, "rmap.batch", 9, 512, 2), 0);
	assert_int_equal(mms_store_add_value(st, 0, "mmap_lock.wait.write", 0, 123456, 4), 0);
	for (int k = 0; k < uniq; k++) {
		char name[48];
		uint32_t t;

		snprintf(name, sizeof(name), "uniq-%d-%d", i, k);
		t = mms_store_task(st, 10000 + (uint32_t)k, 10000, name);
		if (k % 2) {
			add_lock(st, lbare, 0, t, MMS_LCB_SPIN, 100 + (uint64_t)k, 1);
		} else {
			/* An owner of its own, defined only as one: ids reused after sweeps. */
			char own[48];

			snprintf(own, sizeof(own), "uniq-own-%d-%d", i, k);
			add_owned(st, lbare, 0, t, MMS_LCB_SPIN,
				  mms_store_task(st, 20000 + (uint32_t)k, 20000, own),
				  mk_stack(st, 1 + k % 4, 16 + k), 100 + (uint64_t)k, 1);
		}
		assert_int_equal(mms_store_add_value(st, t, name, (uint32_t)k, 7, 1), 0);
	}
	mms_store_add_lost(st, MMS_LOST_STACK, (uint64_t)i);
	mms_store_add_lost(st, MMS_LOST_RING, 2 * (uint64_t)i + 1);
	assert_int_equal(mms_store_commit(st, 1000000000ULL + (uint64_t)i,
					  last ? MMS_IV_TARGET_EXITED : 0), 0);
}

/* ---- Writing ---- */

static struct mms_options opts;
static char *const argv_[] = { "mmscope", "record", "-o", "x.mms", "--hide-addrs", NULL };

static void meta_init(struct mms_rec_meta *m)
{
	memset(m, 0, sizeof(*m));
	mms_options_init(&opts);
	opts.hide_addrs = true;
	m->host = "testhost";
	m->kernel = "6.1.0-test";
	m->target = "pid 100 (worker)";
	m->start_ns = T0 - 5;
	m->argv = argv_;
	m->opts = &opts;
	m->fam[MMS_FAM_LOCK].source = "lock-bpf";
	m->fam[MMS_FAM_LOCK].backend = "bpf";
	m->fam[MMS_FAM_VMA].why = "fentry: not permitted";
}

struct written {
	int n;
	char *dumps[MAX_IV];
	uint64_t size[MAX_IV + 1];	/* file size before interval i, and at the end */
};

/* Writes n intervals; close adds the END block, otherwise the file ends like a kill. */
static void write_file(struct written *w, int n, int uniq, uint32_t window, bool close)
{
	struct mms_store_opts so = { .window = window };
	struct mms_recorder *r;
	struct mms_rec_meta m;
	struct mms_store *st;
	char err[256];

	meta_init(&m);
	unlink(path);
	assert_int_equal(mms_store_create(&so, &st), 0);
	assert_int_equal(mms_recorder_create(path, &m, 0, &r, err, sizeof(err)), 0);
	w->n = n;
	for (int i = 0; i < n; i++) {
		w->size[i] = mms_recorder_bytes(r);
		fill(st, i, uniq, i == n - 1);
		w->dumps[i] = dump_iv(st, mms_store_latest(st));
		assert_int_equal(mms_recorder_write(r, st, mms_store_latest(st)), 0);
	}
	w->size[n] = mms_recorder_bytes(r);
	if (close)
		assert_int_equal(mms_recorder_close(r, ""), 0);
	assert_string_equal(mms_recorder_error(r), "");
	mms_recorder_destroy(r);
	mms_store_destroy(st);
}

static void written_free(struct written *w)
{
	for (int i = 0; i < w->n; i++)
		free(w->dumps[i]);
}

static uint8_t *slurp(size_t *len)
{
	struct stat sb;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	buf = malloc((size_t)sb.st_size + 1);
	assert_int_equal(read(fd, buf, (size_t)sb.st_size), sb.st_size);
	close(fd);
	*len = (size_t)sb.st_size;
	return buf;
}

/* Feeds every interval of rec into a new store and compares with what was written. */
static void check_contents(struct mms_recording *rec, const struct written *w, int n)
{
	struct mms_store_opts so = { .window = MAX_IV };
	struct mms_store *st;

	assert_int_equal(mms_recording_count(rec), n);
	assert_int_equal(mms_store_create(&so, &st), 0);
	for (int i = 0; i < n; i++) {
		char *d;

		assert_int_equal(mms_recording_feed(rec, st, (uint32_t)i), 0);
		d = dump_iv(st, mms_store_latest(st));
		assert_string_equal(d, w->dumps[i]);
		free(d);
	}
	mms_store_destroy(st);
}

/* ---- Tests ---- */

static void test_round_trip(void **state)
{
	const struct mms_rec_info *in;
	struct mms_recording *rec;
	struct written w;
	char err[256];
	struct stat sb;

	(void)state;
	write_file(&w, 5, 0, 600, true);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_int_equal(mms_recording_open(path, &rec, err, sizeof(err)), 0);
	in = mms_recording_info(rec);
	assert_int_equal(in->major, MMS_REC_MAJOR);
	assert_string_equal(in->host, "testhost");
	assert_string_equal(in->kernel, "6.1.0-test");
	assert_string_equal(in->target, "pid 100 (worker)");
	assert_string_equal(in->cmdline, "mmscope record -o x.mms --hide-addrs");
	assert_true(in->start_ns == T0 - 5);
	assert_int_equal(in->interval_ms, 1000);
	assert_true(in->flags & MMS_REC_F_HIDE_ADDRS);
	assert_non_null(strstr(in->options, "hide_addrs=1\n"));
	assert_string_equal(in->fam[MMS_FAM_LOCK].source, "lock-bpf");
	assert_string_equal(in->fam[MMS_FAM_LOCK].backend, "bpf");
	assert_string_equal(in->fam[MMS_FAM_VMA].source, "");
	assert_string_equal(in->fam[MMS_FAM_VMA].why, "fentry: not permitted");
	assert_int_equal(in->intervals, 5);
	assert_true(in->first_ns == T0);
	assert_true(in->end_ns == T0 + 4000000000ULL + 1000000004ULL);
	assert_int_equal(in->lock_rows, 25);
	assert_int_equal(in->metric_rows, 15);
	assert_int_equal(in->lost[MMS_LOST_STACK], 0 + 1 + 2 + 3 + 4);
	assert_int_equal(in->lost[MMS_LOST_RING], 1 + 3 + 5 + 7 + 9);
	assert_int_equal(in->target_exited, 1);
	assert_int_equal(in->dangling, 0);
	assert_true(in->closed);
	assert_false(in->damaged);
	assert_int_equal(in->unknown_blocks, 0);
	assert_true(in->good_bytes == in->file_bytes);
	assert_true(in->file_bytes == (uint64_t)sb.st_size);
	check_contents(rec, &w, 5);
	/* Out of order works too (definitions are replayed up to the interval). */
	{
		struct mms_store *st;
		char *d;

		assert_int_equal(mms_store_create(NULL, &st), 0);
		assert_int_equal(mms_recording_feed(rec, st, 4), 0);
		assert_int_equal(mms_recording_feed(rec, st, 1), 0);
		d = dump_iv(st, mms_store_latest(st));
		assert_string_equal(d, w.dumps[1]);
		free(d);
		assert_int_equal(mms_recording_feed(rec, st, 5), -ERANGE);
		mms_store_destroy(st);
	}
	/* A new store, likely at the old one's address: nothing cached may leak into it. */
	for (int i = 0; i < 5; i++) {
		struct mms_store *st;
		char *d;

		assert_int_equal(mms_store_create(NULL, &st), 0);
		assert_int_equal(mms_recording_feed(rec, st, (uint32_t)i), 0);
		d = dump_iv(st, mms_store_latest(st));
		assert_string_equal(d, w.dumps[i]);
		free(d);
		mms_store_destroy(st);
	}
	mms_recording_close(rec);
	written_free(&w);
}

/*
 * Format 1.3: --vma-lock in the header (flag bit 3, options line), and its
 * rows, per process and system-wide (proc 0), come back as written.
 */
static void test_vma_lock(void **state)
{
	static const uint64_t kernel[MMS_VMA_LOCK_K_NR] = { 99000, 700, 300, 2 };
	const struct mms_rec_info *in;
	struct mms_recording *rec;
	struct mms_recorder *r;
	struct mms_store *st, *back;
	struct mms_rec_meta m;
	struct mms_stat s;
	char err[256];
	uint32_t proc;

	(void)state;
	meta_init(&m);
	opts.vma_lock = true;
	m.fam[MMS_FAM_MMAP_LOCK].source = "vma-lock-bpf";
	m.fam[MMS_FAM_MMAP_LOCK].backend = "faults";
	unlink(path);
	assert_int_equal(mms_store_create(NULL, &st), 0);
	assert_int_equal(mms_recorder_create(path, &m, 0, &r, err, sizeof(err)), 0);
	assert_non_null(mms_store_begin(st, T0));
	proc = mms_store_task(st, 100, 100, "worker");
	assert_int_equal(mms_store_add_value(st, proc, MMS_M_VMA_LOCK_FAULTS, 0, 1, 100000), 0);
	assert_int_equal(mms_store_add_value(st, proc, MMS_M_VMA_LOCK_FALLBACK, 0, 1, 1000), 0);
	assert_int_equal(mms_store_add_value(st, proc, MMS_M_VMA_LOCK_MMAP_RETRY, 0, 1, 5), 0);
	for (int k = 0; k < MMS_VMA_LOCK_K_NR; k++)
		assert_int_equal(mms_store_add_value(st, 0, MMS_M_VMA_LOCK_KERNEL, (uint32_t)k, 1,
						     kernel[k]), 0);
	assert_int_equal(mms_store_commit(st, 1000000000ULL, 0), 0);
	assert_int_equal(mms_recorder_write(r, st, mms_store_latest(st)), 0);
	assert_int_equal(mms_recorder_close(r, ""), 0);
	mms_recorder_destroy(r);
	mms_store_destroy(st);
	opts.vma_lock = false;

	assert_int_equal(mms_recording_open(path, &rec, err, sizeof(err)), 0);
	in = mms_recording_info(rec);
	assert_true(in->minor >= 3);	/* what a --vma-lock recording needs at least */
	assert_true(in->flags & MMS_REC_F_VMA_LOCK);
	assert_non_null(strstr(in->options, "vma_lock=1\n"));
	assert_string_equal(in->fam[MMS_FAM_MMAP_LOCK].source, "vma-lock-bpf");
	assert_string_equal(in->fam[MMS_FAM_MMAP_LOCK].backend, "faults");
	assert_int_equal(mms_store_create(NULL, &back), 0);
	assert_int_equal(mms_recording_feed(rec, back, 0), 0);
	assert_int_equal(mms_query_metric(back, 0, 0, MMS_M_VMA_LOCK_FAULTS, -1, 100, &s), 0);
	assert_int_equal(s.count, 100000);
	assert_int_equal(mms_query_metric(back, 0, 0, MMS_M_VMA_LOCK_FALLBACK, -1, 100, &s), 0);
	assert_int_equal(s.count, 1000);
	assert_int_equal(mms_query_metric(back, 0, 0, MMS_M_VMA_LOCK_MMAP_RETRY, -1, 0, &s), 0);
	assert_int_equal(s.count, 5);
	for (int k = 0; k < MMS_VMA_LOCK_K_NR; k++) {
		assert_int_equal(mms_query_metric(back, 0, 0, MMS_M_VMA_LOCK_KERNEL, k, 0, &s), 0);
		assert_int_equal(s.count, kernel[k]);
	}
	mms_store_destroy(back);
	mms_recording_close(rec);
}

/* Small windows make the writer's store sweep and hand out ids again. */
static void test_id_reuse(void **state)
{
	struct mms_store_opts so = { .window = 3 };
	struct mms_recorder *r;
	struct mms_recording *rec;
	struct mms_source *src;
	struct mms_rec_meta m;
	struct mms_store *st;
	struct written w = { 0 };
	struct mms_options ro;
	char err[256];
	int n = 30;

	(void)state;
	meta_init(&m);
	unlink(path);
	assert_int_equal(mms_store_create(&so, &st), 0);
	assert_int_equal(mms_recorder_create(path, &m, 0, &r, err, sizeof(err)), 0);
	w.n = n;
	for (int i = 0; i < n; i++) {
		fill(st, i, 300, false);
		w.dumps[i] = dump_iv(st, mms_store_latest(st));
		assert_int_equal(mms_recorder_write(r, st, mms_store_latest(st)), 0);
	}
	assert_true(mms_store_epoch(st) >= 2);	/* ids really were reused */
	assert_int_equal(mms_recorder_close(r, ""), 0);
	mms_recorder_destroy(r);
	mms_store_destroy(st);

	assert_int_equal(mms_recording_open(path, &rec, err, sizeof(err)), 0);
	assert_int_equal(mms_recording_info(rec)->dangling, 0);
	check_contents(rec, &w, n);
	mms_recording_close(rec);

	/* Replaying into a store that sweeps too. */
	mms_options_init(&ro);
	ro.window = 3;
	assert_int_equal(mms_replay_open(path, &ro, &src, err, sizeof(err)), 0);
	assert_int_equal(mms_store_create(&so, &st), 0);
	for (int i = 0; i < n; i++) {
		char *d;

		assert_int_equal(mms_replay_step(src, st, 1), 1);
		d = dump_iv(st, mms_store_latest(st));
		assert_string_equal(d, w.dumps[i]);
		free(d);
	}
	assert_true(mms_store_epoch(st) >= 2);
	assert_int_equal(mms_replay_step(src, st, 1), 0);
	mms_store_destroy(st);
	mms_source_destroy(src);
	written_free(&w);
}

static bool at_boundary(const uint8_t *buf, size_t from, size_t cut)
{
	/* Walks the block headers of the last write. */
	while (from < cut)
		from += 16 + (buf[from + 4] | buf[from + 5] << 8 | buf[from + 6] << 16 |
			      (size_t)buf[from + 7] << 24);
	return from == cut;
}

static void test_truncated(void **state)
{
	struct mms_recording *rec;
	struct written w;
	size_t len;
	uint8_t *buf;
	char err[256];

	(void)state;
	write_file(&w, 4, 0, 600, false);
	buf = slurp(&len);
	assert_true(len == w.size[4]);
	assert_int_equal(mms_recording_open_mem(buf, len, &rec, err, sizeof(err)), 0);
	assert_false(mms_recording_info(rec)->closed);	/* like a SIGKILL: no END */
	assert_false(mms_recording_info(rec)->damaged);
	check_contents(rec, &w, 4);
	mms_recording_close(rec);
	for (size_t cut = w.size[3]; cut < len; cut++) {
		const struct mms_rec_info *in;
		uint8_t *copy = malloc(cut + 1);

		/* A copy of exactly cut bytes, so ASan sees any read past the end. */
		memcpy(copy, buf, cut);
		assert_int_equal(mms_recording_open_mem(copy, cut, &rec, err, sizeof(err)), 0);
		in = mms_recording_info(rec);
		assert_int_equal(in->intervals, 3);
		if (at_boundary(buf, w.size[3], cut)) {
			assert_false(in->damaged);
		} else {
			assert_true(in->damaged);
			assert_non_null(strstr(in->damage, "cut short"));
			assert_true(in->good_bytes < cut);
		}
		check_contents(rec, &w, 3);
		mms_recording_close(rec);
		free(copy);
	}
	free(buf);
	written_free(&w);
}

static void test_corrupt(void **state)
{
	struct mms_recording *rec;
	struct written w;
	size_t len;
	uint8_t *buf;
	char err[256];

	(void)state;
	write_file(&w, 4, 0, 600, true);
	buf = slurp(&len);
	/* Last byte of interval 2's write: inside its INTERVAL block. */
	buf[w.size[3] - 1] ^= 0x40;
	assert_int_equal(mms_recording_open_mem(buf, len, &rec, err, sizeof(err)), 0);
	assert_int_equal(mms_recording_info(rec)->intervals, 2);
	assert_true(mms_recording_info(rec)->damaged);
	assert_non_null(strstr(mms_recording_info(rec)->damage, "checksum"));
	assert_false(mms_recording_info(rec)->closed);	/* END is past the damage */
	check_contents(rec, &w, 2);
	mms_recording_close(rec);
	buf[w.size[3] - 1] ^= 0x40;

	/* Wrong magic, empty, too short. */
	buf[1] ^= 1;
	assert_int_equal(mms_recording_open_mem(buf, len, &rec, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not an mmscope recording"));
	buf[1] ^= 1;
	assert_int_equal(mms_recording_open_mem(buf, 0, &rec, err, sizeof(err)), -EINVAL);
	assert_int_equal(mms_recording_open_mem(buf, 12, &rec, err, sizeof(err)), -EBADMSG);
	/* A header block cut short cannot be read at all. */
	assert_int_equal(mms_recording_open_mem(buf, 40, &rec, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "header"));

	/* A newer major version: refused, saying so. */
	buf[8] = MMS_REC_MAJOR + 1;
	assert_int_equal(mms_recording_open_mem(buf, len, &rec, err, sizeof(err)), -ENOTSUP);
	assert_non_null(strstr(err, "newer"));
	/* A newer minor: read. */
	buf[8] = MMS_REC_MAJOR;
	buf[10] = 7;
	assert_int_equal(mms_recording_open_mem(buf, len, &rec, err, sizeof(err)), 0);
	assert_int_equal(mms_recording_info(rec)->minor, 7);
	assert_int_equal(mms_recording_count(rec), 4);
	mms_recording_close(rec);
	free(buf);
	written_free(&w);
}

/* Inserts a block at off (CRC and all), as a newer mmscope would write one. */
/* A block of n stored bytes (raw once decompressed) inserted at off, its CRC right. */
static uint8_t *insert_sized(const uint8_t *buf, size_t len, size_t off, uint16_t type,
			     uint16_t flags, const void *payload, size_t n, size_t raw,
			     size_t *out_len)
{
	uint8_t *o = malloc(len + 16 + n), *h = o + off;
	uLong crc;

	memcpy(o, buf, off);
	h[0] = (uint8_t)type;
	h[1] = (uint8_t)(type >> 8);
	h[2] = (uint8_t)flags;
	h[3] = (uint8_t)(flags >> 8);
	for (int i = 0; i < 4; i++) {
		h[4 + i] = (uint8_t)(n >> (8 * i));
		h[8 + i] = (uint8_t)(raw >> (8 * i));
	}
	memcpy(h + 16, payload, n);
	crc = crc32(crc32(0, Z_NULL, 0), h, 12);
	crc = crc32(crc, h + 16, (uInt)n);
	for (int i = 0; i < 4; i++)
		h[12 + i] = (uint8_t)(crc >> (8 * i));
	memcpy(h + 16 + n, buf + off, len - off);
	*out_len = len + 16 + n;
	return o;
}

static uint8_t *insert_raw(const uint8_t *buf, size_t len, size_t off, uint16_t type,
			   uint16_t flags, const void *payload, size_t n, size_t *out_len)
{
	return insert_sized(buf, len, off, type, flags, payload, n, n, out_len);
}

static uint8_t *insert_block(const uint8_t *buf, size_t len, size_t off, uint16_t type,
			     uint16_t flags, const char *payload, size_t *out_len)
{
	return insert_raw(buf, len, off, type, flags, payload, strlen(payload), out_len);
}

static void test_unknown_block(void **state)
{
	struct mms_recording *rec;
	struct written w;
	size_t len, len2;
	uint8_t *buf, *b2;
	char err[256];

	(void)state;
	write_file(&w, 3, 0, 600, true);
	buf = slurp(&len);
	b2 = insert_block(buf, len, w.size[1], 99, 0, "from the future", &len2);
	assert_int_equal(mms_recording_open_mem(b2, len2, &rec, err, sizeof(err)), 0);
	assert_int_equal(mms_recording_info(rec)->unknown_blocks, 1);
	assert_false(mms_recording_info(rec)->damaged);
	assert_true(mms_recording_info(rec)->closed);
	check_contents(rec, &w, 3);
	mms_recording_close(rec);
	free(b2);
	/* A known type in an encoding this reader lacks: stop there, saying why. */
	b2 = insert_block(buf, len, w.size[1], 2, 0x8, "xxxx", &len2);
	assert_int_equal(mms_recording_open_mem(b2, len2, &rec, err, sizeof(err)), 0);
	assert_int_equal(mms_recording_count(rec), 1);
	assert_true(mms_recording_info(rec)->damaged);
	assert_non_null(strstr(mms_recording_info(rec)->damage, "newer mmscope"));
	mms_recording_close(rec);
	free(b2);
	free(buf);
	written_free(&w);
}

/*
 * The RUN block (format 1.2): a run of a series and its score come back as
 * written; a file without one (every older one) says so; a RUN block that
 * lies (run 4 of 3, a NaN score) is damage, not a number in a table.
 */
static void test_run_block(void **state)
{
	struct mms_rec_run run = { .index = 2, .count = 3, .status = 0, .has_score = true,
				   .lower_better = true, .score = 3511.5, .matches = 4 };
	const struct mms_rec_info *in;
	struct mms_store_opts so = { .window = 8 };
	struct mms_recording *rec;
	struct mms_recorder *r;
	struct mms_rec_meta m;
	struct mms_store *st;
	struct written w;
	size_t len, len2;
	uint8_t *buf, *b2;
	char err[256];

	(void)state;
	strcpy(run.text, "3511.5");
	strcpy(run.name, "Execl Throughput");
	strcpy(run.unit, "lps");
	strcpy(run.source, "regex 'x ([0-9.]+)'");
	meta_init(&m);
	unlink(path);
	assert_int_equal(mms_store_create(&so, &st), 0);
	assert_int_equal(mms_recorder_create(path, &m, 0, &r, err, sizeof(err)), 0);
	fill(st, 0, 0, true);
	assert_int_equal(mms_recorder_write(r, st, mms_store_latest(st)), 0);
	assert_int_equal(mms_recorder_put_run(r, &run), 0);
	assert_int_equal(mms_recorder_close(r, ""), 0);
	mms_recorder_destroy(r);
	mms_store_destroy(st);
	assert_int_equal(mms_recording_open(path, &rec, err, sizeof(err)), 0);
	in = mms_recording_info(rec);
	assert_int_equal(in->minor, WRITES_MINOR);
	assert_true(WRITES_MINOR >= MMS_REC_MINOR);
	assert_true(in->closed && !in->damaged);
	assert_int_equal(in->unknown_blocks, 0);
	assert_true(in->run.present && in->run.has_score && in->run.lower_better);
	assert_false(in->run.interrupted);
	assert_true(in->run.score == 3511.5);
	assert_int_equal(in->run.index, 2);
	assert_int_equal(in->run.count, 3);
	assert_int_equal(in->run.status, 0);
	assert_int_equal(in->run.matches, 4);
	assert_string_equal(in->run.text, "3511.5");
	assert_string_equal(in->run.name, "Execl Throughput");
	assert_string_equal(in->run.unit, "lps");
	assert_string_equal(in->run.source, "regex 'x ([0-9.]+)'");
	assert_int_equal(mms_recording_count(rec), 1);
	mms_recording_close(rec);

	/* Without a RUN block: no run, no score (and nothing else changes). */
	write_file(&w, 2, 0, 600, true);
	buf = slurp(&len);
	assert_int_equal(mms_recording_open_mem(buf, len, &rec, err, sizeof(err)), 0);
	assert_false(mms_recording_info(rec)->run.present);
	assert_false(mms_recording_info(rec)->run.has_score);
	check_contents(rec, &w, 2);
	mms_recording_close(rec);

	/* Lies: run 4 of 3; a score flag with a NaN.  Reading stops there, saying so. */
	{
		static const uint8_t liar[] = { 1, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0,
						2, 0, 0, 0, 4, 0, 0, 0, 3, 0, 0, 0 };
		static const uint8_t nan_score[] = {
			4, 0, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0,
			5, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf8, 0x7f,
		};

		b2 = insert_raw(buf, len, w.size[2], 8, 0, liar, sizeof(liar), &len2);
		assert_int_equal(mms_recording_open_mem(b2, len2, &rec, err, sizeof(err)), 0);
		assert_true(mms_recording_info(rec)->damaged);
		assert_non_null(strstr(mms_recording_info(rec)->damage, "malformed run block"));
		assert_false(mms_recording_info(rec)->run.present);
		assert_int_equal(mms_recording_count(rec), 2);	/* the intervals before it */
		mms_recording_close(rec);
		free(b2);
		b2 = insert_raw(buf, len, w.size[2], 8, 0, nan_score, sizeof(nan_score), &len2);
		assert_int_equal(mms_recording_open_mem(b2, len2, &rec, err, sizeof(err)), 0);
		assert_true(mms_recording_info(rec)->damaged);
		assert_false(mms_recording_info(rec)->run.has_score);
		mms_recording_close(rec);
		free(b2);
	}
	free(buf);
	written_free(&w);
}

/*
 * A packed interval (lock rows only) whose varints are given; the fixed part
 * says 40 histogram slots and the row sizes of the fixed layout whose lock
 * rows have key bytes of key (24 from format 1.4 on: lock, stack, task,
 * flags, owner, owner stack; 16 before, without the owner).
 */
static size_t packed_iv_key(uint8_t *p, uint32_t key, uint32_t n_locks, const uint8_t *cols,
			    size_t n)
{
	const uint32_t stat = 32 + 4 * 40;
	const uint32_t fixed[] = { 0, 40, key + stat, n_locks, 12 + stat, 0 };
	size_t o = 0;

	memset(p, 0, 28);	/* seq, start, duration, flags */
	o = 28;
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++, o += 4)
		for (int b = 0; b < 4; b++)
			p[o + b] = (uint8_t)(fixed[i] >> (8 * b));
	if (n)
		memcpy(p + o, cols, n);
	return o + n;
}

/* One in the layout the recorder writes (1.4). */
static size_t packed_iv(uint8_t *p, uint32_t n_locks, const uint8_t *cols, size_t n)
{
	return packed_iv_key(p, 24, n_locks, cols, n);
}

/* Packed rows (format 1.1) that do not decode: reading stops there, as for damage. */
static void test_packed_malformed(void **state)
{
	static const struct {
		const char *what;
		uint32_t n_locks;
		uint8_t cols[24];
		size_t n;
	} bad[] = {
		/*
		 * lock, stack, task, flags, owner, owner stack, count, total, min,
		 * max-min, nonempty, (gap, value)
		 */
		{ "key over 32 bits", 1, { 0x80, 0x80, 0x80, 0x80, 0x10, 0, 0, 0, 0, 0, 1, 1, 1, 1,
					   0 }, 15 },
		{ "owner over 32 bits", 1, { 0, 0, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x10, 0, 1, 1, 1, 1,
					     0 }, 15 },
		{ "owner stack over 32 bits", 1, { 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0x7f, 1, 1,
						   1, 1, 0 }, 15 },
		{ "varint over 10 bytes", 1, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					       0x7f, 0, 0, 0, 0, 1, 1, 1, 1, 0 }, 19 },
		{ "more non-empty slots than slots", 1, { 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 41 }, 11 },
		{ "slot past the last", 1, { 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 1, 40, 1 }, 13 },
		{ "histogram cut short", 1, { 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 2, 0, 1 }, 13 },
		{ "more rows than bytes", 1000000, { 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0 }, 11 },
	};
	struct mms_recording *rec;
	struct written w;
	size_t len, len2;
	uint8_t *buf, *b2, p[128];
	char err[256];

	(void)state;
	write_file(&w, 3, 0, 600, true);
	buf = slurp(&len);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t n = packed_iv(p, bad[i].n_locks, bad[i].cols, bad[i].n);

		b2 = insert_raw(buf, len, w.size[1], 6, 2, p, n, &len2);
		assert_int_equal(mms_recording_open_mem(b2, len2, &rec, err, sizeof(err)), 0);
		if (mms_recording_count(rec) != 1 || !mms_recording_info(rec)->damaged)
			fail_msg("%s: read %u intervals, damaged %d", bad[i].what,
				 mms_recording_count(rec), mms_recording_info(rec)->damaged);
		assert_non_null(strstr(mms_recording_info(rec)->damage, "malformed interval"));
		mms_recording_close(rec);
		free(b2);
	}
	/* The same bytes made well-formed decode: a row of 1 wait of 5 ns in slot 2. */
	{
		static const uint8_t good[] = { 0, 0, 0, 0, 0, 0, 1, 5, 5, 0, 1, 2, 1 };
		size_t n = packed_iv(p, 1, good, sizeof(good));
		struct mms_store *st;
		const struct mms_interval *iv;

		b2 = insert_raw(buf, len, w.size[1], 6, 2, p, n, &len2);
		assert_int_equal(mms_recording_open_mem(b2, len2, &rec, err, sizeof(err)), 0);
		assert_false(mms_recording_info(rec)->damaged);
		assert_int_equal(mms_recording_count(rec), 4);
		assert_int_equal(mms_store_create(NULL, &st), 0);
		assert_int_equal(mms_recording_feed(rec, st, 1), 0);
		iv = mms_store_latest(st);
		assert_non_null(iv);
		assert_int_equal(iv->n_locks, 1);
		assert_int_equal(iv->locks[0].wait.count, 1);
		assert_int_equal(iv->locks[0].wait.total, 5);
		assert_int_equal(iv->locks[0].wait.max, 5);
		assert_int_equal(iv->locks[0].wait.hist[2], 1);
		mms_store_destroy(st);
		mms_recording_close(rec);
		free(b2);
	}
	free(buf);
	written_free(&w);
}

/* Opens buf with a block inserted after the first write: one interval read, then damage. */
static void expect_damage(const struct written *w, const uint8_t *buf, size_t len, uint16_t type,
			  uint16_t flags, const void *payload, size_t n, size_t raw, int copies,
			  const char *why)
{
	struct mms_recording *rec;
	uint8_t *b2 = NULL, *b3;
	size_t len2 = len;
	char err[256];

	for (int i = 0; i < copies; i++) {
		b3 = insert_sized(b2 ? b2 : buf, len2, w->size[1], type, flags, payload, n, raw,
				  &len2);
		free(b2);
		b2 = b3;
	}
	assert_int_equal(mms_recording_open_mem(b2, len2, &rec, err, sizeof(err)), 0);
	if (mms_recording_count(rec) != 1 || !mms_recording_info(rec)->damaged ||
	    !strstr(mms_recording_info(rec)->damage, why))
		fail_msg("%s: read %u intervals, damage \"%s\"", why, mms_recording_count(rec),
			 mms_recording_info(rec)->damage);
	mms_recording_close(rec);
	free(b2);
}

/*
 * What a hostile file can claim (docs/FORMAT.md, "Limits"): bytes no record
 * accounts for, packed rows of another size than the format's, and well-formed
 * definitions that decompress past the reader's memory budget.
 */
static void test_limits(void **state)
{
	static const uint8_t good[] = { 0, 0, 0, 0, 0, 0, 1, 5, 5, 0, 1, 2, 1, 0 };
	static const uint8_t strs[] = { 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 'a', 'z', 'z' };
	const size_t big = 32U << 20, each = 8 + 4096;
	uint8_t p[128], *raw, *z;
	struct written w;
	size_t len, n, zn;
	uint8_t *buf;

	(void)state;
	write_file(&w, 3, 0, 600, true);
	buf = slurp(&len);
	n = packed_iv(p, 1, good, sizeof(good));	/* one varint too many */
	expect_damage(&w, buf, len, 6, 2, p, n, n, 1, "1 bytes after the last packed row");
	n = packed_iv(p, 1, good, sizeof(good) - 1);
	p[36] = 0;
	p[37] = 0;
	p[38] = 1;	/* lock rows of 65536 bytes */
	expect_damage(&w, buf, len, 6, 2, p, n, n, 1, "the format (1.4) fixes them at 216 and 204");
	n = packed_iv(p, 0, good, 0);	/* no rows, in the fixed layout, and 8 bytes more */
	memset(p + n, 0, 8);
	expect_damage(&w, buf, len, 6, 0, p, n + 8, n + 8, 1, "bytes after the last row");
	expect_damage(&w, buf, len, 2, 0, strs, sizeof(strs), sizeof(strs), 1,
		      "2 bytes after the last record");
	/* 8,000 strings of 4 KiB, compressed to little: three such blocks pass the budget. */
	raw = calloc(1, big);
	z = malloc(ZSTD_compressBound(big));
	assert_non_null(raw);
	assert_non_null(z);
	n = (big - 4) / each;
	raw[0] = (uint8_t)n;
	raw[1] = (uint8_t)(n >> 8);
	for (size_t i = 0; i < n; i++) {
		uint8_t *r = raw + 4 + i * each;

		r[0] = (uint8_t)(i + 1);
		r[1] = (uint8_t)((i + 1) >> 8);
		r[5] = 4096 >> 8;
		memset(r + 8, 'x', 4096);
	}
	n = 4 + n * each;
	zn = ZSTD_compress(z, ZSTD_compressBound(big), raw, n, 1);
	assert_false(ZSTD_isError(zn));
	assert_true(zn < 1U << 20);
	expect_damage(&w, buf, len, 2, 1, z, zn, n, 3, "memory than the reader's budget");
	free(z);
	free(raw);
	free(buf);
	written_free(&w);
}

/* A stack of the given symbols, at ips from base on. */
static uint32_t mk_syms(struct mms_store *st, const char *const *names, int n, uint64_t base)
{
	uint64_t ips[8];
	uint32_t syms[8];

	for (int i = 0; i < n; i++) {
		ips[i] = base + (uint64_t)i * 0x40;
		syms[i] = mms_store_str(st, names[i]);
	}
	return mms_store_stack(st, ips, syms, (uint32_t)n);
}

/* The row of iv whose waits add up to total (each row of the test has its own). */
static const struct mms_lock_sample *row_of(const struct mms_interval *iv, uint64_t total)
{
	for (uint32_t i = 0; i < iv->n_locks; i++)
		if (iv->locks[i].wait.total == total)
			return &iv->locks[i];
	fail_msg("no row of %llu ns", (unsigned long long)total);
	return NULL;
}

static void assert_owner(const struct mms_store *st, const struct mms_lock_sample *s,
			 uint32_t tid, const char *comm, const char *sym0)
{
	const struct mms_task *t = mms_store_get_task(st, s->owner_id);
	const struct mms_stack *k = mms_store_get_stack(st, s->owner_stack_id);

	assert_non_null(t);
	assert_int_equal(t->tid, tid);
	assert_string_equal(mms_store_get_str(st, t->comm_id), comm);
	if (!sym0) {
		assert_int_equal(s->owner_stack_id, 0);
		return;
	}
	assert_non_null(k);
	assert_true(k->nr >= 1);
	assert_string_equal(mms_store_get_str(st, k->sym_ids[0]), sym0);
}

/*
 * Format 1.4: a lock row's owner and the owner's stack come back with it.
 * One waiter's waits split by owner (and by the owner's stack), owners that
 * are only ever owners (defined for that, in the write of the interval that
 * names them), the owner's name and stack symbols resolved after replay;
 * owners 0 (unknown) stay unknown.
 */
static void test_owners(void **state)
{
	static const char *const sa_syms[] = { "mmap_write_lock+0x10", "vm_mmap_pgoff+0x80",
					       "ksys_mmap_pgoff+0x1c" };
	static const char *const sb_syms[] = { "mmap_read_lock+0x20", "do_user_addr_fault+0x1a0" };
	static const char *const sc_syms[] = { "mmap_write_lock_killable+0x18", "__do_sys_brk+0x60" };
	struct mms_lock_info li = { .addr = 0xffff888100001000ULL, .kind = MMS_LOCK_MMAP };
	struct mms_store_opts so = { .window = 8 };
	const struct mms_interval *iv;
	const struct mms_rec_info *in;
	struct mms_recording *rec;
	struct mms_recorder *r;
	struct mms_source *src;
	struct mms_store *st;
	struct mms_rec_meta m;
	struct mms_options ro;
	struct written w = { .n = 2 };
	uint32_t lock, waiter, a, b, c, stk, sa, sb, sc;
	char err[256];

	(void)state;
	meta_init(&m);
	unlink(path);
	assert_int_equal(mms_store_create(&so, &st), 0);
	assert_int_equal(mms_recorder_create(path, &m, 0, &r, err, sizeof(err)), 0);
	assert_non_null(mms_store_begin(st, T0));
	li.name_id = mms_store_str(st, "mmap_lock");
	lock = mms_store_lock(st, &li);
	waiter = mms_store_task(st, 101, 100, "waiter");
	a = mms_store_task(st, 201, 200, "holder-a");
	b = mms_store_task(st, 301, 300, "holder-b");
	stk = mk_stack(st, 3, 0);
	sa = mk_syms(st, sa_syms, 3, 0xffffffff82000000ULL);
	sb = mk_syms(st, sb_syms, 2, 0xffffffff83000000ULL);
	add_owned(st, lock, stk, waiter, MMS_LCB_WRITE, a, sa, 1000, 2);
	add_owned(st, lock, stk, waiter, MMS_LCB_WRITE, b, sb, 20000, 1);
	add_owned(st, lock, stk, waiter, MMS_LCB_WRITE, a, sa, 1000, 1);	/* a's row again */
	add_owned(st, lock, stk, waiter, MMS_LCB_WRITE, a, 0, 300000, 1);	/* a, no stack */
	add_owned(st, lock, stk, waiter, MMS_LCB_WRITE, 0, 0, 4000000, 1);	/* unknown */
	assert_int_equal(mms_store_commit(st, 1000000000ULL, 0), 0);
	iv = mms_store_latest(st);
	assert_int_equal(iv->n_locks, 4);	/* (a, sa), (b, sb), (a, none), unknown */
	w.dumps[0] = dump_iv(st, iv);
	assert_int_equal(mms_recorder_write(r, st, iv), 0);
	/* Then a new owner, named only as one; a waits for b. */
	assert_non_null(mms_store_begin(st, T0 + 1000000000ULL));
	c = mms_store_task(st, 401, 400, "holder-c");
	sc = mk_syms(st, sc_syms, 2, 0xffffffff84000000ULL);
	add_owned(st, lock, stk, waiter, MMS_LCB_WRITE, c, sc, 50000000, 1);
	add_owned(st, lock, sa, a, MMS_LCB_WRITE, b, sb, 600000000, 1);
	assert_int_equal(mms_store_commit(st, 1000000000ULL, MMS_IV_TARGET_EXITED), 0);
	w.dumps[1] = dump_iv(st, mms_store_latest(st));
	assert_int_equal(mms_recorder_write(r, st, mms_store_latest(st)), 0);
	assert_int_equal(mms_recorder_close(r, ""), 0);
	mms_recorder_destroy(r);
	mms_store_destroy(st);

	assert_int_equal(mms_recording_open(path, &rec, err, sizeof(err)), 0);
	in = mms_recording_info(rec);
	assert_int_equal(in->minor, WRITES_MINOR);
	assert_false(in->damaged);
	assert_int_equal(in->dangling, 0);	/* every owner was defined before its interval */
	assert_int_equal(in->lock_rows, 6);
	assert_int_equal(in->defs[MMS_TAB_TASK], 4);
	assert_int_equal(in->defs[MMS_TAB_STACK], 4);
	check_contents(rec, &w, 2);
	mms_recording_close(rec);

	/* Replayed: the owners by name and stack, as the views will show them. */
	mms_options_init(&ro);
	assert_int_equal(mms_replay_open(path, &ro, &src, err, sizeof(err)), 0);
	assert_int_equal(mms_store_create(&so, &st), 0);
	assert_int_equal(mms_replay_step(src, st, 1), 1);
	iv = mms_store_latest(st);
	assert_int_equal(iv->n_locks, 4);
	assert_int_equal(row_of(iv, 3 * 1000 + 2 * 7003)->wait.count, 5);	/* merged */
	assert_owner(st, row_of(iv, 3 * 1000 + 2 * 7003), 201, "holder-a",
		     "mmap_write_lock+0x10");
	assert_owner(st, row_of(iv, 20000 + 140003), 301, "holder-b", "mmap_read_lock+0x20");
	assert_owner(st, row_of(iv, 300000 + 2100003), 201, "holder-a", NULL);
	assert_int_equal(row_of(iv, 4000000 + 28000003)->owner_id, 0);
	assert_int_equal(row_of(iv, 4000000 + 28000003)->owner_stack_id, 0);
	/* The owners split rows of one lock, stack, waiter and flags, and nothing else. */
	for (uint32_t i = 0; i < iv->n_locks; i++) {
		assert_int_equal(iv->locks[i].lock_id, iv->locks[0].lock_id);
		assert_int_equal(iv->locks[i].stack_id, iv->locks[0].stack_id);
		assert_int_equal(iv->locks[i].task_id, iv->locks[0].task_id);
	}
	assert_int_equal(mms_replay_step(src, st, 1), 1);
	iv = mms_store_latest(st);
	assert_int_equal(iv->n_locks, 2);
	assert_owner(st, row_of(iv, 50000000 + 350000003), 401, "holder-c",
		     "mmap_write_lock_killable+0x18");
	assert_owner(st, row_of(iv, 600000000 + 4200000003ULL), 301, "holder-b",
		     "mmap_read_lock+0x20");
	/* The waiter of that row is holder-a, the owner of the first interval's. */
	assert_string_equal(mms_store_get_str(st, mms_store_get_task(st,
			    row_of(iv, 600000000 + 4200000003ULL)->task_id)->comm_id), "holder-a");
	assert_int_equal(mms_replay_step(src, st, 1), 0);
	mms_store_destroy(st);
	mms_source_destroy(src);
	written_free(&w);
}

/* Writes buf as the recording at path. */
static void put_file(const uint8_t *buf, size_t len)
{
	FILE *f;

	unlink(path);
	f = fopen(path, "wx");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/*
 * An owner (or owner stack) id that no definition gave is a reference to
 * nothing, checked as the waiter's task and stack are: counted where `info`
 * says "references to undefined ones" (the same count as an undefined task),
 * read as 0 (the owner unknown), never followed, in opening, feeding and
 * replay.
 */
static void test_owner_undefined(void **state)
{
	/* lock, stack, task, flags, owner, owner stack, then 1 wait of 5 ns; 999999: BF 84 3D */
	static const struct {
		const char *what;
		uint8_t cols[18];
		size_t n;
	} refs[] = {
		{ "owner", { 0, 0, 0, 4, 0xbf, 0x84, 0x3d, 0, 1, 5, 5, 0, 1, 2, 1 }, 15 },
		{ "owner stack", { 0, 0, 0, 4, 0, 0xbf, 0x84, 0x3d, 1, 5, 5, 0, 1, 2, 1 }, 15 },
		{ "both", { 0, 0, 0, 4, 0xbf, 0x84, 0x3d, 0xbf, 0x84, 0x3d, 1, 5, 5, 0, 1, 2, 1 },
		  17 },
		{ "task, as before", { 0, 0, 0xbf, 0x84, 0x3d, 4, 0, 0, 1, 5, 5, 0, 1, 2, 1 }, 15 },
	};
	static const uint64_t dangling[] = { 1, 1, 2, 1 };
	struct mms_recording *rec;
	struct mms_options ro;
	struct mms_source *src;
	struct written w;
	size_t len, len2;
	uint8_t *buf, *b2, p[128];
	char err[256];

	(void)state;
	write_file(&w, 3, 0, 600, true);
	buf = slurp(&len);
	for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++) {
		size_t n = packed_iv(p, 1, refs[i].cols, refs[i].n);
		const struct mms_interval *iv;
		struct mms_store *st;
		char *d;

		b2 = insert_raw(buf, len, w.size[1], 6, 2, p, n, &len2);
		assert_int_equal(mms_recording_open_mem(b2, len2, &rec, err, sizeof(err)), 0);
		if (mms_recording_info(rec)->damaged || mms_recording_count(rec) != 4 ||
		    mms_recording_info(rec)->dangling != dangling[i])
			fail_msg("%s: %u intervals, %llu dangling, damage \"%s\"", refs[i].what,
				 mms_recording_count(rec),
				 (unsigned long long)mms_recording_info(rec)->dangling,
				 mms_recording_info(rec)->damage);
		assert_int_equal(mms_store_create(NULL, &st), 0);
		assert_int_equal(mms_recording_feed(rec, st, 1), 0);
		iv = mms_store_latest(st);
		assert_int_equal(iv->n_locks, 1);
		assert_int_equal(iv->locks[0].task_id, 0);
		assert_int_equal(iv->locks[0].owner_id, 0);
		assert_int_equal(iv->locks[0].owner_stack_id, 0);
		assert_int_equal(iv->locks[0].flags, MMS_LCB_WRITE);
		assert_int_equal(iv->locks[0].wait.count, 1);
		/* The intervals around it are as written. */
		assert_int_equal(mms_recording_feed(rec, st, 2), 0);
		d = dump_iv(st, mms_store_latest(st));
		assert_string_equal(d, w.dumps[1]);
		free(d);
		mms_store_destroy(st);
		mms_recording_close(rec);
		/* Replayed from a file, every interval. */
		put_file(b2, len2);
		mms_options_init(&ro);
		assert_int_equal(mms_replay_open(path, &ro, &src, err, sizeof(err)), 0);
		assert_int_equal(mms_store_create(NULL, &st), 0);
		for (int k = 0; k < 4; k++)
			assert_int_equal(mms_replay_step(src, st, 1), 1);
		assert_int_equal(mms_replay_step(src, st, 1), 0);
		mms_store_destroy(st);
		mms_source_destroy(src);
		free(b2);
	}
	free(buf);
	written_free(&w);
}

static void put_le(uint8_t *p, size_t *o, uint64_t v, int bytes)
{
	for (int b = 0; b < bytes; b++)
		p[(*o)++] = (uint8_t)(v >> (8 * b));
}

/*
 * Lock rows by the file's version: 1.3 and older files' end at flags (16 key
 * bytes) and are read as before, owners unknown; 1.4's have the owner and its
 * stack (24).  Packed rows of the other version's size are damage, as any
 * size the format does not fix; fixed rows (1.0) longer than the key and
 * stat are a newer minor's bytes after the stat, not an owner.
 */
static void test_lock_key_versions(void **state)
{
	/* lock, stack, task 1, flags (write)[, owner task 1, owner stack 0], 1 wait of 5 ns */
	static const uint8_t v13[] = { 0, 0, 1, 4, 1, 5, 5, 0, 1, 2, 1 };
	static const uint8_t v14[] = { 0, 0, 1, 4, 1, 0, 1, 5, 5, 0, 1, 2, 1 };
	/* STRINGS: 1 = "waiter"; TASKS of 16-byte (1.2) records: 1 = 7/7 "waiter" */
	static const uint8_t strs[] = { 1, 0, 0, 0, 1, 0, 0, 0, 6, 0, 0, 0,
					'w', 'a', 'i', 't', 'e', 'r' };
	static const uint8_t tasks[] = { 1, 0, 0, 0, 16, 0, 0, 0, 1, 0, 0, 0,
					 7, 0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0 };
	static const struct {
		uint16_t minor;
		bool packed, v14, ok;
		const char *why;
	} cases[] = {
		{ 3, true, false, true, NULL },
		{ 2, true, false, true, NULL },
		{ 0, false, false, true, NULL },	/* fixed rows, 8 bytes more than 1.0's */
		{ 1, false, false, true, NULL },
		{ 4, true, true, true, NULL },
		{ 4, false, true, true, NULL },
		{ 7, true, true, true, NULL },
		{ 4, true, false, false, "the format (1.4) fixes them at 216 and 204" },
		{ 3, true, true, false, "the format (1.3) fixes them at 208 and 204" },
	};
	struct written w;
	size_t len;
	uint8_t *buf;

	(void)state;
	write_file(&w, 0, 0, 600, true);	/* a header and END: the blocks go between */
	buf = slurp(&len);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t key = cases[i].v14 ? 24 : 16, stat = 32 + 4 * 40;
		const struct mms_rec_info *in;
		struct mms_recording *rec;
		uint8_t p[512], *b1, *b2, *b3;
		size_t n, l1, l2, l3;
		char err[256];

		if (cases[i].packed) {
			n = cases[i].v14 ? packed_iv_key(p, 24, 1, v14, sizeof(v14)) :
					   packed_iv_key(p, 16, 1, v13, sizeof(v13));
		} else {
			/* The fixed layout: the key, the stat, and 8 bytes a newer minor added. */
			n = packed_iv_key(p, key, 1, NULL, 0);
			p[36] = (uint8_t)(key + stat + 8);
			put_le(p, &n, 0, 4);
			put_le(p, &n, 0, 4);
			put_le(p, &n, 1, 4);
			put_le(p, &n, MMS_LCB_WRITE, 4);
			if (cases[i].v14) {
				put_le(p, &n, 1, 4);
				put_le(p, &n, 0, 4);
			}
			put_le(p, &n, 1, 8);
			put_le(p, &n, 5, 8);
			put_le(p, &n, 5, 8);
			put_le(p, &n, 5, 8);
			for (int k = 0; k < 40; k++)
				put_le(p, &n, k == 2, 4);
			put_le(p, &n, 0xaaaaaaaaaaaaaaaaULL, 8);
		}
		buf[10] = (uint8_t)cases[i].minor;
		b1 = insert_raw(buf, len, w.size[0], 6, cases[i].packed ? 2 : 0, p, n, &l1);
		b2 = insert_raw(b1, l1, w.size[0], 4, 0, tasks, sizeof(tasks), &l2);
		b3 = insert_raw(b2, l2, w.size[0], 2, 0, strs, sizeof(strs), &l3);
		assert_int_equal(mms_recording_open_mem(b3, l3, &rec, err, sizeof(err)), 0);
		in = mms_recording_info(rec);
		assert_int_equal(in->minor, cases[i].minor);
		if (!cases[i].ok) {
			if (!in->damaged || mms_recording_count(rec) ||
			    !strstr(in->damage, cases[i].why))
				fail_msg("case %zu: %u intervals, damage \"%s\"", i,
					 mms_recording_count(rec), in->damage);
		} else {
			struct mms_store *st;
			const struct mms_lock_sample *s;

			if (in->damaged || mms_recording_count(rec) != 1 || in->dangling)
				fail_msg("case %zu: %u intervals, damage \"%s\"", i,
					 mms_recording_count(rec), in->damage);
			assert_int_equal(mms_store_create(NULL, &st), 0);
			assert_int_equal(mms_recording_feed(rec, st, 0), 0);
			assert_int_equal(mms_store_latest(st)->n_locks, 1);
			s = &mms_store_latest(st)->locks[0];
			assert_int_equal(mms_store_get_task(st, s->task_id)->tid, 7);
			assert_string_equal(mms_store_get_str(st,
					    mms_store_get_task(st, s->task_id)->comm_id), "waiter");
			assert_int_equal(s->flags, MMS_LCB_WRITE);
			assert_int_equal(s->wait.count, 1);
			assert_int_equal(s->wait.total, 5);
			assert_int_equal(s->wait.max, 5);
			assert_int_equal(s->wait.hist[2], 1);
			/* 1.4: the waiter owned it before (task 1); before 1.4: not known. */
			assert_int_equal(s->owner_id, cases[i].v14 ? s->task_id : 0);
			assert_int_equal(s->owner_stack_id, 0);
			mms_store_destroy(st);
		}
		mms_recording_close(rec);
		free(b3);
		free(b2);
		free(b1);
	}
	free(buf);
	written_free(&w);
}

static void test_file_safety(void **state)
{
	struct mms_recording *rec;
	struct mms_recorder *r;
	struct mms_rec_meta m;
	char err[512], link[160], victim[160];
	struct stat sb;
	int fd;

	(void)state;
	meta_init(&m);
	unlink(path);
	assert_int_equal(mms_recorder_create(path, &m, 0, &r, err, sizeof(err)), 0);
	mms_recorder_destroy(r);
	/* Existing file: refused without --force. */
	assert_int_equal(mms_recorder_create(path, &m, 0, &r, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "already exists"));
	assert_non_null(strstr(err, "--force"));
	chmod(path, 0644);
	assert_int_equal(mms_recorder_create(path, &m, MMS_RECORDER_FORCE, &r, err, sizeof(err)),
			 0);
	mms_recorder_destroy(r);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	/* A symlink at the final component: never followed, even with --force. */
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(link, sizeof(link), "%s/link.mms", dir);
	fd = open(victim, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "keep", 4), 4);
	close(fd);
	assert_int_equal(symlink(victim, link), 0);
	assert_true(mms_recorder_create(link, &m, 0, &r, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "symbolic link"));
	assert_int_equal(mms_recorder_create(link, &m, MMS_RECORDER_FORCE, &r, err, sizeof(err)),
			 -ELOOP);
	assert_non_null(strstr(err, "symbolic link"));
	/* The early check says the same things. */
	assert_int_equal(mms_recorder_check_path(link, MMS_RECORDER_FORCE, err, sizeof(err)),
			 -ELOOP);
	assert_non_null(strstr(err, "symbolic link"));
	assert_int_equal(mms_recorder_check_path(path, 0, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "--force"));
	assert_int_equal(mms_recorder_check_path(path, MMS_RECORDER_FORCE, err, sizeof(err)), 0);
	assert_int_equal(mms_recorder_check_path(dir, MMS_RECORDER_FORCE, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(stat(victim, &sb), 0);
	assert_int_equal(sb.st_size, 4);
	unlink(link);
	unlink(victim);
	/* Not a regular file. */
	assert_int_equal(mms_recorder_create(dir, &m, MMS_RECORDER_FORCE, &r, err, sizeof(err)) < 0,
			 1);
	/* Unreadable input says which file and why. */
	assert_int_equal(mms_recording_open("/nonexistent/x.mms", &rec, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/x.mms"));
}

/* A write that fails half way (RLIMIT_FSIZE: EFBIG, as a full disk gives ENOSPC). */
static void test_write_error(void **state)
{
	struct mms_store_opts so = { .window = 8 };
	struct rlimit old, lim;
	struct mms_recording *rec;
	struct mms_recorder *r;
	struct mms_rec_meta m;
	struct mms_store *st;
	char err[512], want[256];
	uint64_t ok = 0;
	struct stat sb;
	int e = 0;

	(void)state;
	meta_init(&m);
	unlink(path);
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	assert_int_equal(mms_store_create(&so, &st), 0);
	assert_int_equal(mms_recorder_create(path, &m, 0, &r, err, sizeof(err)), 0);
	lim = old;
	lim.rlim_cur = mms_recorder_bytes(r) + 9000;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	for (int i = 0; i < 40 && !e; i++) {
		fill(st, i, 20, false);
		e = mms_recorder_write(r, st, mms_store_latest(st));
		if (!e)
			ok++;
	}
	assert_int_equal(e, -EFBIG);
	snprintf(want, sizeof(want), "recording stopped: %s: %s", path, strerror(EFBIG));
	assert_string_equal(mms_recorder_error(r), want);
	assert_int_equal(mms_recorder_write(r, st, mms_store_latest(st)), -EFBIG);
	assert_int_equal(mms_recorder_close(r, ""), -EFBIG);
	assert_true(ok >= 1);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	assert_int_equal(mms_recorder_intervals(r), ok);
	mms_recorder_destroy(r);
	mms_store_destroy(st);
	/* The file holds every interval that was written, and ends whole. */
	assert_int_equal(mms_recording_open(path, &rec, err, sizeof(err)), 0);
	assert_int_equal(mms_recording_count(rec), ok);
	assert_false(mms_recording_info(rec)->damaged);
	assert_int_equal(stat(path, &sb), 0);
	assert_true(mms_recording_info(rec)->good_bytes == (uint64_t)sb.st_size);
	if (mms_recording_info(rec)->closed)
		assert_string_equal(mms_recording_info(rec)->end_reason, want);
	mms_recording_close(rec);
}

static void test_replay_seek(void **state)
{
	struct mms_options ro;
	struct mms_source *src;
	struct mms_store_opts so = { .window = 4 };
	struct mms_store *st;
	struct written w;
	uint64_t first, end;
	char err[256], *d;

	(void)state;
	write_file(&w, 10, 0, 600, true);
	mms_options_init(&ro);
	ro.window = 4;
	assert_int_equal(mms_replay_open(path, &ro, &src, err, sizeof(err)), 0);
	assert_string_equal(src->ops->name, "replay");
	assert_string_equal(src->ops->backend, "replay");
	assert_int_equal(mms_source_prepare(src), 0);
	assert_int_equal(mms_store_create(&so, &st), 0);
	assert_int_equal(mms_replay_count(src), 10);
	assert_int_equal(mms_replay_time_range(src, &first, &end), 0);
	assert_true(first == T0);
	assert_true(end == T0 + 9000000000ULL + 1000000009ULL);

	assert_int_equal(mms_replay_seek(src, st, 7), 0);
	assert_int_equal(mms_store_count(st), 4);
	assert_int_equal(mms_store_latest(st)->seq, 7);
	assert_int_equal(mms_store_at(st, 0)->seq, 4);
	/* A seek defers the rows: read before a load, an interval has none, and stays so. */
	assert_false(mms_store_loaded(st, 3, 3));
	assert_int_equal(mms_store_latest(st)->n_locks, 0);
	assert_false(mms_store_loaded(st, 3, 3));
	assert_int_equal(mms_store_load(st, 3, 3), 1);
	assert_true(mms_store_loaded(st, 3, 3));
	assert_false(mms_store_loaded(st, 0, 3));
	d = dump_iv(st, mms_store_latest(st));
	assert_string_equal(d, w.dumps[7]);
	free(d);
	/* Backwards: refilled. */
	assert_int_equal(mms_replay_seek(src, st, 2), 0);
	assert_int_equal(mms_store_count(st), 3);
	assert_int_equal(mms_replay_pos(src), 3);
	mms_store_load(st, 0, 0);
	d = dump_iv(st, mms_store_at(st, 0));
	assert_string_equal(d, w.dumps[0]);
	free(d);
	/* By time: the interval covering it. */
	assert_int_equal(mms_replay_seek_time(src, st, T0 + 5000000000ULL + 10), 0);
	assert_int_equal(mms_store_latest(st)->seq, 5);
	mms_store_load(st, 0, mms_store_count(st) - 1);
	d = dump_iv(st, mms_store_latest(st));
	assert_string_equal(d, w.dumps[5]);
	free(d);
	assert_int_equal(mms_replay_step(src, st, 1), 1);
	d = dump_iv(st, mms_store_latest(st));
	assert_string_equal(d, w.dumps[6]);
	free(d);
	/* Past the end: the last. drain: everything left. */
	assert_int_equal(mms_replay_seek(src, st, 1000), 0);
	assert_int_equal(mms_store_latest(st)->seq, 9);
	assert_int_equal(mms_replay_seek(src, st, 0), 0);
	assert_int_equal(mms_source_drain(src, st), 0);
	assert_int_equal(mms_replay_pos(src), 10);
	d = dump_iv(st, mms_store_latest(st));
	assert_string_equal(d, w.dumps[9]);
	free(d);
	mms_store_destroy(st);
	mms_source_destroy(src);

	/* load_new: the whole recording in one store; load: into the caller's. */
	assert_int_equal(mms_recording_load_new(path, &st, NULL, err, sizeof(err)), 0);
	assert_int_equal(mms_store_count(st), 10);
	mms_store_destroy(st);
	{
		struct mms_rec_info info;

		assert_int_equal(mms_store_create(NULL, &st), 0);
		assert_int_equal(mms_recording_load(path, st, &info, err, sizeof(err)), 0);
		assert_int_equal(info.intervals, 10);
		assert_string_equal(info.host, "testhost");
		assert_int_equal(mms_store_count(st), 10);
		d = dump_iv(st, mms_store_at(st, 3));
		assert_string_equal(d, w.dumps[3]);
		free(d);
		mms_store_destroy(st);
	}
	written_free(&w);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/mms-rec-test-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/rec.mms", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	rmdir(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_id_reuse),
		cmocka_unit_test(test_vma_lock),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_unknown_block),
		cmocka_unit_test(test_run_block),
		cmocka_unit_test(test_packed_malformed),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_owners),
		cmocka_unit_test(test_owner_undefined),
		cmocka_unit_test(test_lock_key_versions),
		cmocka_unit_test(test_file_safety),
		cmocka_unit_test(test_write_error),
		cmocka_unit_test(test_replay_seek),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
