// SPDX-License-Identifier: GPL-2.0
/*
 * The recorder: appends committed intervals of a store to a recording
 * (docs/FORMAT.md).  Each interval, with the definitions it needs that the
 * file lacks, goes out in one write(), so a SIGKILL loses at most the
 * interval being written, and the reader stops cleanly before a torn one.
 * A failed write cuts the file back to its last whole block and stops the
 * recording; the session goes on.  Called from the session's tap.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "mmscope/files.h"
#include "mmscope/recording.h"
#include "rec_format.h"

#ifndef MMS_VERSION
#define MMS_VERSION "unknown"
#endif

#define ZSTD_LEVEL 3
#define COMPRESS_MIN 64		/* smaller payloads never shrink */
#define SYNC_EVERY_NS 1000000000ULL

struct mms_recorder {
	int fd;
	char *path;
	uint64_t good_off;	/* file length after the last whole block */
	uint64_t intervals;
	uint64_t last_sync;	/* CLOCK_MONOTONIC */
	bool failed, closed, cleared;
	int err;
	char error[512];
	ZSTD_CCtx *cctx;
	struct rec_buf out;	/* the blocks of one write() */
	struct rec_buf raw;	/* an interval payload before compression */
	struct rec_buf defs[MMS_TAB_NR];
	uint32_t ndefs[MMS_TAB_NR];
	char *src_failed[MMS_FAM_NR];	/* why a family's source failed mid-run */
};

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Frames raw as one block at the end of out, compressed when that is smaller. */
/* enc: how raw is encoded (REC_BF_PACKED); zstd is added here when it shrinks it. */
static void append_block(struct mms_recorder *r, uint16_t type, uint16_t enc, const uint8_t *raw,
			 size_t n)
{
	struct rec_buf *out = &r->out;
	size_t at = out->len, stored = n;
	uint16_t flags = 0;
	uint8_t *h;

	if (n >= COMPRESS_MIN) {
		size_t bound = ZSTD_compressBound(n), c;

		if (!rec_buf_reserve(out, REC_BLOCK_HDR + bound))
			return;
		c = ZSTD_compressCCtx(r->cctx, out->p + at + REC_BLOCK_HDR, bound, raw, n,
				      ZSTD_LEVEL);
		if (!ZSTD_isError(c) && c < n) {
			stored = c;
			flags = REC_BF_ZSTD;
		}
	}
	if (!flags) {
		if (!rec_buf_reserve(out, REC_BLOCK_HDR + n))
			return;
		if (n)
			memcpy(out->p + at + REC_BLOCK_HDR, raw, n);
	}
	h = out->p + at;
	rec_le16(h, type);
	rec_le16(h + 2, flags | enc);
	rec_le32(h + 4, (uint32_t)stored);
	rec_le32(h + 8, (uint32_t)n);
	rec_le32(h + 12, rec_crc(h, h + REC_BLOCK_HDR, stored));
	out->len += REC_BLOCK_HDR + stored;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Cuts whatever part of a block made it to the file, so the file ends whole. */
static void cut_back(struct mms_recorder *r)
{
	if (ftruncate(r->fd, (off_t)r->good_off) || lseek(r->fd, (off_t)r->good_off, SEEK_SET) < 0)
		return;	/* the reader still stops cleanly at the torn block */
}

static int put_end(struct mms_recorder *r, const char *reason)
{
	struct rec_buf b = { 0 };
	int err;

	rec_put_u16(&b, REC_E_INTERVALS);
	rec_put_u16(&b, 0);
	rec_put_u32(&b, 8);
	rec_put_u64(&b, r->intervals);
	rec_put_field_str(&b, REC_E_REASON, reason);
	for (int f = 0; f < MMS_FAM_NR; f++) {
		struct rec_buf t = { 0 };

		if (!r->src_failed[f])
			continue;
		rec_put_u32(&t, (uint32_t)f);
		rec_put(&t, r->src_failed[f], strlen(r->src_failed[f]) + 1);
		if (t.oom)
			b.oom = true;
		else
			rec_put_field(&b, REC_E_FAILED, t.p, t.len);
		rec_buf_free(&t);
	}
	rec_put_u16(&b, REC_E_END_NS);
	rec_put_u16(&b, 0);
	rec_put_u32(&b, 8);
	rec_put_u64(&b, now_ns(CLOCK_REALTIME));
	r->out.len = 0;
	if (!b.oom)
		append_block(r, REC_B_END, 0, b.p, b.len);
	err = b.oom || r->out.oom ? -ENOMEM : write_all(r->fd, r->out.p, r->out.len);
	rec_buf_free(&b);
	if (err)
		cut_back(r);
	else
		r->good_off += r->out.len;
	return err;
}

/* Stops the recording for good, leaving the file valid and saying why at its end. */
static int fail(struct mms_recorder *r, int err, const char *what)
{
	r->failed = true;
	r->err = err;
	snprintf(r->error, sizeof(r->error), "recording stopped: %s: %s%s%s", r->path,
		 what ? what : "", what ? ": " : "", strerror(-err));
	cut_back(r);
	put_end(r, r->error);
	fdatasync(r->fd);
	close(r->fd);
	r->fd = -1;
	r->closed = true;
	return err;
}

static int commit_out(struct mms_recorder *r)
{
	uint64_t now;
	int err;

	if (r->out.oom)
		return fail(r, -ENOMEM, NULL);
	err = write_all(r->fd, r->out.p, r->out.len);
	if (err)
		return fail(r, err, NULL);
	r->good_off += r->out.len;
	/*
	 * write() alone survives a SIGKILL; fdatasync() also survives a power
	 * cut.  It costs ~0.15 ms here but can take tens of ms on slow disks,
	 * so at most once a second.
	 */
	now = now_ns(CLOCK_MONOTONIC);
	if (now - r->last_sync >= SYNC_EVERY_NS) {
		r->last_sync = now;
		if (fdatasync(r->fd) && errno != EINVAL && errno != EROFS)
			return fail(r, -errno, "fdatasync");
	}
	return 0;
}

/* ---- Header ---- */

static const char *choice_name(enum mms_backend_choice c)
{
	static const char *const names[] = {
		[MMS_SRC_AUTO] = "auto", [MMS_SRC_BPF] = "bpf", [MMS_SRC_PERF] = "perf",
		[MMS_SRC_TRACEPOINT] = "tracepoint", [MMS_SRC_FENTRY] = "fentry",
		[MMS_SRC_INFERRED] = "inferred", [MMS_SRC_STOCK] = "stock", [MMS_SRC_OFF] = "off",
	};

	return (unsigned int)c < sizeof(names) / sizeof(names[0]) ? names[c] : "?";
}

static void opt_line(struct rec_buf *b, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void opt_line(struct rec_buf *b, const char *key, const char *fmt, ...)
{
	char val[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	rec_put(b, key, strlen(key));
	rec_put(b, "=", 1);
	rec_put(b, val, strlen(val));
	rec_put(b, "\n", 1);
}

static void opt_list(struct rec_buf *b, const char *key, const char *const *v, int n)
{
	char val[512];
	size_t o = 0;

	val[0] = 0;
	for (int i = 0; i < n && o < sizeof(val); i++)
		o += (size_t)snprintf(val + o, sizeof(val) - o, "%s%s", i ? "," : "", v[i]);
	if (n)
		opt_line(b, key, "%s", val);
}

/* Options as "key=value" lines: for people (`info`) and for compare's sanity checks. */
static void options_text(struct rec_buf *b, const struct mms_options *o)
{
	const char *types[MMS_MAX_FILTERS];
	char tids[256];
	size_t n = 0;

	opt_line(b, "interval_ms", "%u", o->interval_ms);
	if (o->duration_s > 0)
		opt_line(b, "duration_s", "%g", o->duration_s);
	if (o->pid)
		opt_line(b, "pid", "%d", o->pid);
	tids[0] = 0;
	for (int i = 0; i < o->nr_tids && n < sizeof(tids); i++)
		n += (size_t)snprintf(tids + n, sizeof(tids) - n, "%s%d", i ? "," : "", o->tids[i]);
	if (o->nr_tids)
		opt_line(b, "tids", "%s", tids);
	if (o->no_inherit)
		opt_line(b, "no_inherit", "1");
	opt_line(b, "lock_source", "%s", choice_name(o->lock_src));
	opt_line(b, "vma_source", "%s", choice_name(o->vma_src));
	opt_line(b, "rmap_source", "%s", choice_name(o->rmap_src));
	opt_line(b, "mmap_hold", "%d", o->mmap_lock_hold);
	if (o->mmap_hold_sample > 1)
		opt_line(b, "mmap_hold_sample", "%u", o->mmap_hold_sample);
	if (o->vma_lock)
		opt_line(b, "vma_lock", "1");
	for (int i = 0; i < o->nr_types; i++)
		types[i] = mms_lock_type_name(o->types[i]);
	opt_list(b, "type_filter", types, o->nr_types);
	opt_list(b, "lock_filter", o->locks, o->nr_locks);
	opt_list(b, "callstack_filter", o->stack_match, o->nr_stack_match);
	for (int i = 0; i < o->nr_cgroups; i++)
		types[i] = o->cgroups[i];
	opt_list(b, "cgroup_filter", types, o->nr_cgroups);
	if (o->cpu_list)
		opt_line(b, "cpu_filter", "%s", o->cpu_list);
	opt_line(b, "max_stack", "%u", o->max_stack);
	opt_line(b, "stack_skip", "%u", o->stack_skip);
	opt_line(b, "map_nr_entries", "%u", o->map_entries);
	opt_line(b, "stack_entries", "%u", o->stack_entries);
	opt_line(b, "task_entries", "%u", o->task_entries);
	opt_line(b, "window", "%u", o->window);
	opt_line(b, "hide_addrs", "%d", o->hide_addrs);
}

static void encode_header(struct rec_buf *b, const struct mms_rec_meta *m)
{
	const struct mms_options *o = m->opts;
	struct rec_buf t = { 0 };
	uint32_t flags = 0;
	uint8_t x[8];

	rec_put_field_str(b, REC_H_TOOL, "mmscope " MMS_VERSION);
	rec_put_field_str(b, REC_H_HOST, m->host);
	rec_put_field_str(b, REC_H_KERNEL, m->kernel);
	rec_le64(x, m->start_ns);
	rec_put_field(b, REC_H_START_NS, x, 8);
	for (char *const *a = m->argv; a && *a; a++)
		rec_put(&t, *a, strlen(*a) + 1);
	rec_put_field(b, REC_H_ARGV, t.p, t.len);
	rec_put_field_str(b, REC_H_TARGET, m->target);
	if (o) {
		rec_le32(x, o->interval_ms);
		rec_put_field(b, REC_H_INTERVAL_MS, x, 4);
		flags |= o->hide_addrs ? MMS_REC_F_HIDE_ADDRS : 0;
		flags |= o->mmap_lock_hold ? MMS_REC_F_MMAP_HOLD : 0;
		flags |= o->cmd ? MMS_REC_F_COMMAND : 0;
		flags |= o->vma_lock ? MMS_REC_F_VMA_LOCK : 0;
		t.len = 0;
		options_text(&t, o);
		rec_put_field(b, REC_H_OPTIONS, t.p, t.len);
	}
	rec_le32(x, flags);
	rec_put_field(b, REC_H_FLAGS, x, 4);
	if (m->knobs && *m->knobs)
		rec_put_field_str(b, REC_H_KNOBS, m->knobs);
	for (int f = 0; f < MMS_FAM_NR; f++) {
		const char *s[3] = { m->fam[f].source, m->fam[f].backend, m->fam[f].why };

		t.len = 0;
		rec_put_u32(&t, (uint32_t)f);
		for (int i = 0; i < 3; i++)
			rec_put(&t, s[i] ? s[i] : "", s[i] ? strlen(s[i]) + 1 : 1);
		rec_put_field(b, REC_H_FAMILY, t.p, t.len);
	}
	if (t.oom)
		b->oom = true;
	rec_buf_free(&t);
}

/* ---- Creating the file ---- */

static int path_error(const char *path, int e, char *errbuf, size_t errlen)
{
	struct stat sb;

	if ((e == EEXIST || e == ELOOP) && !lstat(path, &sb) && S_ISLNK(sb.st_mode))
		snprintf(errbuf, errlen, "%s is a symbolic link: mmscope does not write "
			 "through one; give the real file name", path);
	else if (e == EEXIST)
		snprintf(errbuf, errlen, "%s already exists: choose another name, or add "
			 "--force to overwrite it", path);
	else
		snprintf(errbuf, errlen, "cannot create %s: %s", path, strerror(e));
	return -e;
}

int mms_recorder_check_path(const char *path, unsigned int flags, char *errbuf, size_t errlen)
{
	struct stat sb;

	if (lstat(path, &sb))
		return 0;	/* absent (or unreachable: create will say why) */
	if (S_ISLNK(sb.st_mode))
		return path_error(path, ELOOP, errbuf, errlen);
	if (!(flags & MMS_RECORDER_FORCE))
		return path_error(path, EEXIST, errbuf, errlen);
	return mms_file_may_replace(path, &sb, errbuf, errlen);
}

/*
 * --force: a new file beside path (same directory, so rename() is atomic),
 * renamed over the old one once its header is written.  Never the old
 * inode: a reader holding it keeps the old recording, its owner keeps it,
 * its other hard links are not rewritten.  tmp gets the temporary name.
 */
static int open_replacement(const char *path, char **tmp, char *errbuf, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	int dlen = slash ? (int)(slash - path + 1) : 0;
	struct stat sb;
	int fd, err;

	if (!lstat(path, &sb)) {
		if (S_ISLNK(sb.st_mode))
			return path_error(path, ELOOP, errbuf, errlen);
		err = mms_file_may_replace(path, &sb, errbuf, errlen);
		if (err)
			return err;
	} else if (errno != ENOENT) {
		return path_error(path, errno, errbuf, errlen);
	}
	if (asprintf(tmp, "%.*s.%s.XXXXXX", dlen, path, slash ? slash + 1 : path) < 0) {
		*tmp = NULL;
		snprintf(errbuf, errlen, "cannot record to %s: out of memory", path);
		return -ENOMEM;
	}
	fd = mkostemp(*tmp, O_CLOEXEC);	/* O_EXCL, 0600 */
	if (fd < 0) {
		err = errno;
		snprintf(errbuf, errlen, "cannot create a new file beside %s (--force writes "
			 "one and renames it over the old): %s", path, strerror(err));
		free(*tmp);
		*tmp = NULL;
		return -err;
	}
	mms_file_chown_sudo(fd);
	return fd;
}

static int open_file(const char *path, unsigned int flags, char *errbuf, size_t errlen)
{
	int oflags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_EXCL;
	struct stat sb;
	int fd;

	fd = open(path, oflags, 0600);
	if (fd < 0)
		return path_error(path, errno, errbuf, errlen);
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		snprintf(errbuf, errlen, "%s is not a regular file: record into a file", path);
		close(fd);
		return -EINVAL;
	}
	fcntl(fd, F_SETFL, 0);
	mms_file_chown_sudo(fd);	/* under sudo it belongs to whoever asked for it */
	return fd;
}

/* Writes the file header and the header block to r->fd. */
static int start_file(struct mms_recorder *r, const struct mms_rec_meta *meta, char *errbuf,
		      size_t errlen)
{
	struct mms_rec_meta m = *meta;
	struct rec_buf hdr = { 0 };
	uint8_t *fh;
	int err;

	if (!m.start_ns)
		m.start_ns = now_ns(CLOCK_REALTIME);
	fh = rec_buf_reserve(&r->out, REC_FILE_HDR);
	if (fh) {
		memcpy(fh, REC_MAGIC, REC_MAGIC_LEN);
		rec_le16(fh + 8, MMS_REC_MAJOR);
		rec_le16(fh + 10, MMS_REC_MINOR);
		rec_le32(fh + 12, REC_FILE_HDR);
		r->out.len = REC_FILE_HDR;
	}
	encode_header(&hdr, &m);
	if (!hdr.oom)
		append_block(r, REC_B_HEADER, 0, hdr.p, hdr.len);
	err = hdr.oom || r->out.oom ? -ENOMEM : write_all(r->fd, r->out.p, r->out.len);
	rec_buf_free(&hdr);
	if (err) {
		snprintf(errbuf, errlen, "cannot write %s: %s", r->path, strerror(-err));
		return err;
	}
	r->good_off = r->out.len;
	r->last_sync = now_ns(CLOCK_MONOTONIC);
	return 0;
}

static struct mms_recorder *recorder_new(const char *path, char *errbuf, size_t errlen)
{
	struct mms_recorder *r = calloc(1, sizeof(*r));

	if (r)
		r->fd = -1;
	if (!r || !(r->path = strdup(path)) || !(r->cctx = ZSTD_createCCtx())) {
		snprintf(errbuf, errlen, "cannot record to %s: out of memory", path);
		mms_recorder_destroy(r);
		return NULL;
	}
	return r;
}

int mms_recorder_create(const char *path, const struct mms_rec_meta *meta, unsigned int flags,
			struct mms_recorder **out, char *errbuf, size_t errlen)
{
	struct mms_recorder *r = recorder_new(path, errbuf, errlen);
	char *tmp = NULL;
	int err;

	if (!r)
		return -ENOMEM;
	r->fd = flags & MMS_RECORDER_FORCE ? open_replacement(path, &tmp, errbuf, errlen) :
					     open_file(path, flags, errbuf, errlen);
	if (r->fd < 0) {
		err = r->fd;
		goto err_free;
	}
	err = start_file(r, meta, errbuf, errlen);
	if (err)
		goto err_unlink;
	/* --force: the new file takes the old one's name only once it is a recording. */
	if (tmp && rename(tmp, path)) {
		err = -errno;
		snprintf(errbuf, errlen, "cannot replace %s: %s", path, strerror(-err));
		goto err_unlink;
	}
	free(tmp);
	*out = r;
	return 0;

err_unlink:
	close(r->fd);
	unlink(tmp ? tmp : path);
	r->fd = -1;
err_free:
	free(tmp);
	mms_recorder_destroy(r);
	return err;
}

int mms_recorder_create_fd(int fd, const char *name, const struct mms_rec_meta *meta,
			   struct mms_recorder **out, char *errbuf, size_t errlen)
{
	struct mms_recorder *r = recorder_new(name, errbuf, errlen);
	int err;

	if (!r) {
		close(fd);
		return -ENOMEM;
	}
	r->fd = fd;
	err = start_file(r, meta, errbuf, errlen);
	if (err) {
		mms_recorder_destroy(r);
		return err;
	}
	*out = r;
	return 0;
}

/* ---- Intervals ---- */

static void def_begin(struct mms_recorder *r, enum mms_table t, uint32_t rec_size)
{
	if (r->ndefs[t]++)
		return;
	rec_put_u32(&r->defs[t], 0);	/* count, patched at the end */
	if (rec_size)
		rec_put_u32(&r->defs[t], rec_size);
}

static void def_str(struct mms_recorder *r, struct mms_store *st, uint32_t id)
{
	struct rec_buf *b = &r->defs[MMS_TAB_STR];
	const char *s;
	size_t n;

	if (!mms_store_mark_written(st, MMS_TAB_STR, id))
		return;
	s = mms_store_get_str(st, id);
	n = strnlen(s, REC_MAX_STR);
	def_begin(r, MMS_TAB_STR, 0);
	rec_put_u32(b, id);
	rec_put_u32(b, (uint32_t)n);
	rec_put(b, s, n);
}

static void def_task(struct mms_recorder *r, struct mms_store *st, uint32_t id)
{
	struct rec_buf *b = &r->defs[MMS_TAB_TASK];
	const struct mms_task *t;

	if (!mms_store_mark_written(st, MMS_TAB_TASK, id))
		return;
	t = mms_store_get_task(st, id);
	def_str(r, st, t->comm_id);
	if (t->cgroup_id)
		def_str(r, st, t->cgroup_id);
	def_begin(r, MMS_TAB_TASK, REC_TASK_SIZE);
	rec_put_u32(b, id);
	rec_put_u32(b, t->tid);
	rec_put_u32(b, t->tgid);
	rec_put_u32(b, t->comm_id);
	rec_put_u32(b, t->cgroup_id);
}

static void def_lock(struct mms_recorder *r, struct mms_store *st, uint32_t id)
{
	struct rec_buf *b = &r->defs[MMS_TAB_LOCK];
	const struct mms_lock_info *l;

	if (!mms_store_mark_written(st, MMS_TAB_LOCK, id))
		return;
	l = mms_store_get_lock(st, id);
	def_str(r, st, l->name_id);
	def_str(r, st, l->detail_id);
	def_str(r, st, l->owner_comm_id);
	def_begin(r, MMS_TAB_LOCK, REC_LOCK_SIZE);
	rec_put_u32(b, id);
	rec_put_u32(b, l->kind);
	rec_put_u64(b, l->addr);
	rec_put_u32(b, l->name_id);
	rec_put_u32(b, l->detail_id);
	rec_put_u32(b, l->owner_tgid);
	rec_put_u32(b, l->owner_comm_id);
}

static void def_stack(struct mms_recorder *r, struct mms_store *st, uint32_t id)
{
	struct rec_buf *b = &r->defs[MMS_TAB_STACK];
	const struct mms_stack *k;
	uint32_t nr;

	if (!mms_store_mark_written(st, MMS_TAB_STACK, id))
		return;
	k = mms_store_get_stack(st, id);
	nr = k->nr < REC_MAX_STACK ? k->nr : REC_MAX_STACK;
	for (uint32_t i = 0; i < nr; i++)
		def_str(r, st, k->sym_ids[i]);
	def_begin(r, MMS_TAB_STACK, 0);
	rec_put_u32(b, id);
	rec_put_u32(b, nr);
	for (uint32_t i = 0; i < nr; i++)
		rec_put_u64(b, k->ips[i]);
	for (uint32_t i = 0; i < nr; i++)
		rec_put_u32(b, k->sym_ids[i]);
}

/* One u32 field of every row as varints: first is row 0's, rows are stride bytes apart. */
static void put_u32_col(struct rec_buf *b, const uint32_t *first, size_t stride, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		rec_put_varint(b, *(const uint32_t *)((const char *)first + (size_t)i * stride));
}

/*
 * A column of statistics, one field of every row at a time: count, total,
 * min, max - min, the number of non-empty histogram slots, then each row's
 * non-empty slots as (gap from the previous one, value).  Rows are stride
 * bytes apart from first.
 */
static void put_stat_cols(struct rec_buf *b, const struct mms_stat *first, size_t stride,
			  uint32_t n)
{
#define ROW(i) ((const struct mms_stat *)((const char *)first + (size_t)(i) * stride))
	for (uint32_t i = 0; i < n; i++)
		rec_put_varint(b, ROW(i)->count);
	for (uint32_t i = 0; i < n; i++)
		rec_put_varint(b, ROW(i)->total);
	for (uint32_t i = 0; i < n; i++)
		rec_put_varint(b, ROW(i)->min);
	for (uint32_t i = 0; i < n; i++)
		rec_put_varint(b, ROW(i)->max - ROW(i)->min);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t nz = 0;

		for (int k = 0; k < MMS_HIST_SLOTS; k++)
			nz += !!ROW(i)->hist[k];
		rec_put_varint(b, nz);
	}
	for (uint32_t i = 0; i < n; i++) {
		int next = 0;

		for (int k = 0; k < MMS_HIST_SLOTS; k++) {
			if (!ROW(i)->hist[k])
				continue;
			rec_put_varint(b, (uint64_t)(k - next));
			rec_put_varint(b, ROW(i)->hist[k]);
			next = k + 1;
		}
	}
#undef ROW
}

/*
 * The fixed part, then the rows packed (REC_BF_PACKED, docs/FORMAT.md):
 * varint columns, so zstd sees like next to like.  The row sizes written
 * are those of the fixed layout the reader unpacks them into.
 */
static void encode_interval(struct rec_buf *b, const struct mms_interval *iv)
{
	const uint32_t stat_size = REC_STAT_FIXED + 4 * MMS_HIST_SLOTS;
	const struct mms_lock_sample *l = iv->locks;
	const struct mms_metric_sample *m = iv->metrics;

	rec_put_u64(b, iv->seq);
	rec_put_u64(b, iv->start_ns);
	rec_put_u64(b, iv->dur_ns);
	rec_put_u32(b, iv->flags);
	rec_put_u32(b, MMS_LOST_NR);
	for (int i = 0; i < MMS_LOST_NR; i++)
		rec_put_u64(b, iv->lost[i]);
	rec_put_u32(b, MMS_HIST_SLOTS);
	rec_put_u32(b, REC_LOCK_KEY + stat_size);
	rec_put_u32(b, iv->n_locks);
	rec_put_u32(b, REC_METRIC_KEY + stat_size);
	rec_put_u32(b, iv->n_metrics);
	if (iv->n_locks) {
		put_u32_col(b, &l->lock_id, sizeof(*l), iv->n_locks);
		put_u32_col(b, &l->stack_id, sizeof(*l), iv->n_locks);
		put_u32_col(b, &l->task_id, sizeof(*l), iv->n_locks);
		put_u32_col(b, &l->flags, sizeof(*l), iv->n_locks);
		put_u32_col(b, &l->owner_id, sizeof(*l), iv->n_locks);
		put_u32_col(b, &l->owner_stack_id, sizeof(*l), iv->n_locks);
		put_stat_cols(b, &l->wait, sizeof(*l), iv->n_locks);
	}
	if (iv->n_metrics) {
		put_u32_col(b, &m->proc_id, sizeof(*m), iv->n_metrics);
		put_u32_col(b, &m->metric_id, sizeof(*m), iv->n_metrics);
		put_u32_col(b, &m->sub, sizeof(*m), iv->n_metrics);
		put_stat_cols(b, &m->stat, sizeof(*m), iv->n_metrics);
	}
}

/* Definitions before what uses them: strings, then tasks, locks and stacks. */
static void append_defs(struct mms_recorder *r)
{
	static const struct {
		enum mms_table t;
		uint16_t type;
	} order[] = {
		{ MMS_TAB_STR, REC_B_STRINGS }, { MMS_TAB_TASK, REC_B_TASKS },
		{ MMS_TAB_LOCK, REC_B_LOCKS }, { MMS_TAB_STACK, REC_B_STACKS },
	};

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		struct rec_buf *b = &r->defs[order[i].t];

		if (!r->ndefs[order[i].t])
			continue;
		if (b->oom) {
			r->out.oom = true;
			return;
		}
		rec_le32(b->p, r->ndefs[order[i].t]);
		append_block(r, order[i].type, 0, b->p, b->len);
	}
}

int mms_recorder_write(struct mms_recorder *r, struct mms_store *st,
		       const struct mms_interval *iv)
{
	if (r->failed)
		return r->err;
	if (r->closed)
		return -EBADF;
	if (!r->cleared) {
		/* Another recording of this store may have marked entries written. */
		mms_store_clear_written(st);
		r->cleared = true;
	}
	r->out.len = 0;
	r->raw.len = 0;
	for (int t = 0; t < MMS_TAB_NR; t++) {
		r->defs[t].len = 0;
		r->ndefs[t] = 0;
	}
	for (uint32_t i = 0; i < iv->n_locks; i++) {
		const struct mms_lock_sample *l = &iv->locks[i];

		def_lock(r, st, l->lock_id);
		def_stack(r, st, l->stack_id);
		def_task(r, st, l->task_id);
		/* 1.4: the owner, when known, and its stack, when taken. */
		if (l->owner_id)
			def_task(r, st, l->owner_id);
		if (l->owner_stack_id)
			def_stack(r, st, l->owner_stack_id);
	}
	for (uint32_t i = 0; i < iv->n_metrics; i++) {
		def_task(r, st, iv->metrics[i].proc_id);
		def_str(r, st, iv->metrics[i].metric_id);
	}
	append_defs(r);
	encode_interval(&r->raw, iv);
	if (r->raw.oom)
		return fail(r, -ENOMEM, NULL);
	if (r->raw.len > REC_MAX_PAYLOAD)
		return fail(r, -EFBIG, "interval too large for the format");
	append_block(r, REC_B_INTERVAL, REC_BF_PACKED, r->raw.p, r->raw.len);
	if (commit_out(r))
		return r->err;
	r->intervals++;
	return 0;
}

int mms_recorder_put_run(struct mms_recorder *r, const struct mms_rec_run *run)
{
	struct rec_buf b = { 0 };
	int err;

	if (r->failed)
		return r->err;
	if (r->closed)
		return -EBADF;
	rec_run_encode(&b, run);
	r->out.len = 0;
	if (!b.oom)
		append_block(r, REC_B_RUN, 0, b.p, b.len);
	else
		r->out.oom = true;
	rec_buf_free(&b);
	err = commit_out(r);
	return err ? r->err : 0;
}

void mms_recorder_source_failed(struct mms_recorder *r, int family, const char *why)
{
	if (r && family >= 0 && family < MMS_FAM_NR && !r->src_failed[family])
		r->src_failed[family] = strndup(why, 255);	/* NULL (no memory): not said */
}

int mms_recorder_close(struct mms_recorder *r, const char *reason)
{
	int err;

	if (r->failed)
		return r->err;
	if (r->closed)
		return 0;
	err = put_end(r, reason);
	if (err)
		return fail(r, err, NULL);
	if (fdatasync(r->fd) && errno != EINVAL && errno != EROFS)
		return fail(r, -errno, "fdatasync");
	if (close(r->fd)) {
		r->fd = -1;
		return fail(r, -errno, "close");
	}
	r->fd = -1;
	r->closed = true;
	return 0;
}

void mms_recorder_destroy(struct mms_recorder *r)
{
	if (!r)
		return;
	/* Without close() there is no END block: readers see an unfinished recording. */
	if (r->fd >= 0)
		close(r->fd);
	ZSTD_freeCCtx(r->cctx);
	rec_buf_free(&r->out);
	rec_buf_free(&r->raw);
	for (int t = 0; t < MMS_TAB_NR; t++)
		rec_buf_free(&r->defs[t]);
	for (int f = 0; f < MMS_FAM_NR; f++)
		free(r->src_failed[f]);
	free(r->path);
	free(r);
}

const char *mms_recorder_error(const struct mms_recorder *r)
{
	return r->failed ? r->error : "";
}

uint64_t mms_recorder_intervals(const struct mms_recorder *r)
{
	return r->intervals;
}

uint64_t mms_recorder_bytes(const struct mms_recorder *r)
{
	return r->good_off;
}

const char *mms_recorder_path(const struct mms_recorder *r)
{
	return r->path;
}
