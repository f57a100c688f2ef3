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

static void add_lock(struct mms_store *st, uint32_t lock, uint32_t stack, uint32_t task,
		     uint32_t flags, uint64_t ns, uint64_t n)
{
	struct mms_lock_sample s = { .lock_id = lock, .stack_id = stack, .task_id = task,
				     .flags = flags };

	mms_stat_add_n(&s.wait, ns, n);
	mms_stat_add(&s.wait, ns * 7 + 3);
	assert_int_equal(mms_store_add_lock(st, &s), 0);
}

/* One interval with every kind of thing in it; uniq adds that many new names. */
static void fill(struct mms_store *st, int i, int uniq, bool last)
{
	struct mms_lock_info mm = { .addr = 0xffff888100001000ULL + (uint64_t)(i % 2) * 64,
				    .kind = MMS_LOCK_MMAP, .owner_tgid = 100 };
	struct mms_lock_info im = { .addr = 0xffff888100002000ULL, .kind = MMS_LOCK_I_MMAP };
	struct mms_lock_info sl = { .addr = 0xffff888100003000ULL, .kind = MMS_LOCK_SLAB };
	struct mms_lock_info bare = { .addr = 0xffff888100004000ULL };
	uint32_t t1, t2, proc, lmm, lim, lsl, lbare;

	assert_non_null(mms_store_begin(st, T0 + (uint64_t)i * 1000000000ULL));
	t1 = mms_store_task(st, 101 + (uint32_t)(i % 3), 100, "worker");
	/* A task's cgroup (format 1.3) comes back with it; "worker" has none. */
	t2 = mms_store_task_cg(st, 200, 200, "kswapd0", "/system.slice/kswapd.scope");
	proc = mms_store_task(st, 100, 100, "worker");
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
	add_lock(st, lmm, mk_stack(st, 3, 0), t1, MMS_LCB_WRITE, 1000 + (uint64_t)i, 3);
	add_lock(st, lmm, mk_stack(st, 4, 1), t1, MMS_LCB_READ, 20000, 1);
	add_lock(st, lim, mk_stack(st, 2, 2), t2, MMS_LCB_WRITE, 9470000, 2);
	add_lock(st, lsl, 0, t2, MMS_LCB_SPIN, 150, 10 + (uint64_t)i);
	add_lock(st, lbare, mk_stack(st, 1, 3), t1, MMS_LCB_MUTEX, 1ULL << 38, 1);
	assert_int_equal(mms_store_add_value(st, proc, "vma.split", 0, 1, 3 + (uint64_t)i), 0);
	assert_int_equal(mms_store_add_value(st, proc, "rmap.batch", 9, 512, 2), 0);
	assert_int_equal(mms_store_add_value(st, 0, "mmap_lock.wait.write", 0, 123456, 4), 0);
	for (int k = 0; k < uniq; k++) {
		char name[48];
		uint32_t t;

		snprintf(name, sizeof(name), "uniq-%d-%d", i, k);
		t = mms_store_task(st, 10000 + (uint32_t)k, 10000, name);
		add_lock(st, lbare, 0, t, MMS_LCB_SPIN, 100 + (uint64_t)k, 1);
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
		w->dumps[i] = dump(st, mms_store_latest(st));
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
		d = dump(st, mms_store_latest(st));
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
		d = dump(st, mms_store_latest(st));
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
		d = dump(st, mms_store_latest(st));
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
	assert_int_equal(in->minor, 3);	/* what a --vma-lock recording needs at least */
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
		w.dumps[i] = dump(st, mms_store_latest(st));
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
		d = dump(st, mms_store_latest(st));
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
	assert_int_equal(in->minor, MMS_REC_MINOR);
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
 * A packed interval (one lock row) whose varints are given; the fixed part
 * says 40 histogram slots and the fixed layout's row sizes.
 */
static size_t packed_iv(uint8_t *p, uint32_t n_locks, const uint8_t *cols, size_t n)
{
	const uint32_t stat = 32 + 4 * 40;
	const uint32_t fixed[] = { 0, 40, 16 + stat, n_locks, 12 + stat, 0 };
	size_t o = 0;

	memset(p, 0, 28);	/* seq, start, duration, flags */
	o = 28;
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++, o += 4)
		for (int b = 0; b < 4; b++)
			p[o + b] = (uint8_t)(fixed[i] >> (8 * b));
	memcpy(p + o, cols, n);
	return o + n;
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
		/* lock, stack, task, flags, count, total, min, max-min, nonempty, (gap, value) */
		{ "key over 32 bits", 1, { 0x80, 0x80, 0x80, 0x80, 0x10, 0, 0, 0, 1, 1, 1, 1, 0 }, 13 },
		{ "varint over 10 bytes", 1, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					       0x7f, 0, 0, 1, 1, 1, 1, 0 }, 17 },
		{ "more non-empty slots than slots", 1, { 0, 0, 0, 0, 1, 1, 1, 0, 41 }, 9 },
		{ "slot past the last", 1, { 0, 0, 0, 0, 1, 1, 1, 0, 1, 40, 1 }, 11 },
		{ "histogram cut short", 1, { 0, 0, 0, 0, 1, 1, 1, 0, 2, 0, 1 }, 11 },
		{ "more rows than bytes", 1000000, { 0, 0, 0, 0, 1, 1, 1, 0, 0 }, 9 },
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
		static const uint8_t good[] = { 0, 0, 0, 0, 1, 5, 5, 0, 1, 2, 1 };
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
	static const uint8_t good[] = { 0, 0, 0, 0, 1, 5, 5, 0, 1, 2, 1, 0 };
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
	expect_damage(&w, buf, len, 6, 2, p, n, n, 1, "the format fixes them at 208 and 204");
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
	d = dump(st, mms_store_latest(st));
	assert_string_equal(d, w.dumps[7]);
	free(d);
	/* Backwards: refilled. */
	assert_int_equal(mms_replay_seek(src, st, 2), 0);
	assert_int_equal(mms_store_count(st), 3);
	assert_int_equal(mms_replay_pos(src), 3);
	mms_store_load(st, 0, 0);
	d = dump(st, mms_store_at(st, 0));
	assert_string_equal(d, w.dumps[0]);
	free(d);
	/* By time: the interval covering it. */
	assert_int_equal(mms_replay_seek_time(src, st, T0 + 5000000000ULL + 10), 0);
	assert_int_equal(mms_store_latest(st)->seq, 5);
	mms_store_load(st, 0, mms_store_count(st) - 1);
	d = dump(st, mms_store_latest(st));
	assert_string_equal(d, w.dumps[5]);
	free(d);
	assert_int_equal(mms_replay_step(src, st, 1), 1);
	d = dump(st, mms_store_latest(st));
	assert_string_equal(d, w.dumps[6]);
	free(d);
	/* Past the end: the last. drain: everything left. */
	assert_int_equal(mms_replay_seek(src, st, 1000), 0);
	assert_int_equal(mms_store_latest(st)->seq, 9);
	assert_int_equal(mms_replay_seek(src, st, 0), 0);
	assert_int_equal(mms_source_drain(src, st), 0);
	assert_int_equal(mms_replay_pos(src), 10);
	d = dump(st, mms_store_latest(st));
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
		d = dump(st, mms_store_at(st, 3));
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
		cmocka_unit_test(test_file_safety),
		cmocka_unit_test(test_write_error),
		cmocka_unit_test(test_replay_seek),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
