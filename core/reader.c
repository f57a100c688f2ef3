// SPDX-License-Identifier: GPL-2.0
/*
 * The recording reader (docs/FORMAT.md).  Opening checks every block (CRC,
 * decompression, record sizes, references) and indexes intervals and
 * definitions; it stops at the first bad or truncated block and keeps what
 * came before.  Reading the file, payloads and the budget every open keeps
 * are rec_input.c; feeding intervals into a store is rec_feed.c.  Files
 * come from anywhere: every length is checked before it is used.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mmscope/files.h"
#include "mmscope/recording.h"
#include "rec_reader.h"

/* ---- Blocks ---- */

static bool read_block(struct mms_recording *rec, size_t off, struct blk *bk)
{
	size_t left = rec->len - off;
	const uint8_t *h = rec->buf + off;

	if (left < REC_BLOCK_HDR)
		return rec_damage(rec, off, "cut short: %zu of its 16 header bytes are there", left);
	bk->off = off;
	bk->type = rec_rd16(h);
	bk->flags = rec_rd16(h + 2);
	bk->stored = rec_rd32(h + 4);
	bk->raw = rec_rd32(h + 8);
	bk->payload = h + REC_BLOCK_HDR;
	if (bk->stored > REC_MAX_PAYLOAD || bk->raw > REC_MAX_PAYLOAD)
		return rec_damage(rec, off, "claims %u bytes, more than any block holds", bk->stored);
	if (bk->stored > left - REC_BLOCK_HDR)
		return rec_damage(rec, off, "cut short: %zu of its %u bytes are there",
				  left - REC_BLOCK_HDR, bk->stored);
	/*
	 * The fuzzer's build takes any checksum, so that mutated payloads reach
	 * the decoders behind it (the CRC test itself is in test_recording).
	 */
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	/* Blocks read from a file had theirs checked as they were read. */
	if (off + REC_BLOCK_HDR + bk->stored > rec->crc_ok &&
	    rec_crc(h, bk->payload, bk->stored) != rec_rd32(h + 12))
		return rec_damage(rec, off, "checksum mismatch (the bytes were changed)");
#endif
	if (!(bk->flags & REC_BF_ZSTD) && bk->raw != bk->stored)
		return rec_damage(rec, off, "sizes disagree in an uncompressed block");
	return true;
}

/* ---- Header and END ---- */

static void copy_str(char *dst, size_t cap, const uint8_t *p, size_t n)
{
	n = n < cap - 1 ? n : cap - 1;
	memcpy(dst, p, n);
	dst[n] = 0;	/* kept exact: every output escapes it (mmscope/escape.h) */
}

/* Splits NUL-separated strings; returns where the next starts. */
static const uint8_t *next_str(const uint8_t *p, const uint8_t *end, char *dst, size_t cap)
{
	const uint8_t *z = p < end ? memchr(p, 0, (size_t)(end - p)) : NULL;
	size_t n = z ? (size_t)(z - p) : (size_t)(end - p);

	copy_str(dst, cap, p, n);
	return z ? z + 1 : end;
}

static void header_field(struct mms_rec_info *in, uint16_t tag, const uint8_t *p, uint32_t n)
{
	const uint8_t *end = p + n;
	size_t o = 0;
	uint32_t f;

	switch (tag) {
	case REC_H_TOOL:
		copy_str(in->tool, sizeof(in->tool), p, n);
		break;
	case REC_H_HOST:
		copy_str(in->host, sizeof(in->host), p, n);
		break;
	case REC_H_KERNEL:
		copy_str(in->kernel, sizeof(in->kernel), p, n);
		break;
	case REC_H_START_NS:
		if (n >= 8)
			in->start_ns = rec_rd64(p);
		break;
	case REC_H_ARGV:
		while (p < end && o + 2 < sizeof(in->cmdline)) {
			char arg[512];

			p = next_str(p, end, arg, sizeof(arg));
			o += (size_t)snprintf(in->cmdline + o, sizeof(in->cmdline) - o, "%s%s",
					      o ? " " : "", arg);
		}
		break;
	case REC_H_TARGET:
		copy_str(in->target, sizeof(in->target), p, n);
		break;
	case REC_H_INTERVAL_MS:
		if (n >= 4)
			in->interval_ms = rec_rd32(p);
		break;
	case REC_H_FLAGS:
		if (n >= 4)
			in->flags = rec_rd32(p);
		break;
	case REC_H_OPTIONS:
		copy_str(in->options, sizeof(in->options), p, n);
		break;
	case REC_H_KNOBS:
		copy_str(in->knobs, sizeof(in->knobs), p, n);
		break;
	case REC_H_FAMILY:
		if (n < 4 || (f = rec_rd32(p)) >= MMS_FAM_NR)
			break;	/* a family this mmscope does not know */
		p = next_str(p + 4, end, in->fam[f].source, sizeof(in->fam[f].source));
		p = next_str(p, end, in->fam[f].backend, sizeof(in->fam[f].backend));
		next_str(p, end, in->fam[f].why, sizeof(in->fam[f].why));
		break;
	default:
		break;	/* newer minor versions add fields: skip */
	}
}

/* Tag-length-value fields; false when they do not fit the payload. */
static bool parse_fields(struct mms_recording *rec, const uint8_t *p, size_t n, bool end)
{
	struct rec_cur c = { .p = p, .len = n };

	while (rec_left(&c)) {
		uint16_t tag = rec_get_u16(&c);
		uint32_t len;
		const uint8_t *v;

		rec_get_u16(&c);
		len = rec_get_u32(&c);
		v = rec_get(&c, len);
		if (!v)
			return false;
		if (!end) {
			header_field(&rec->info, tag, v, len);
		} else if (tag == REC_E_REASON) {
			copy_str(rec->info.end_reason, sizeof(rec->info.end_reason), v, len);
		} else if (tag == REC_E_FAILED && len > 4 && rec_rd32(v) < MMS_FAM_NR) {
			struct mms_rec_family *fs = &rec->info.fam[rec_rd32(v)];

			copy_str(fs->failed, sizeof(fs->failed), v + 4, len - 4);
		}
	}
	return !c.bad;
}

/* ---- Definitions ---- */

/* A why of the parsers below: the damage is recorded already (a budget said no). */
static const char recorded[] = "";

/*
 * What a definition costs beyond its bytes: its entry, and its share of the
 * index rec_feed.c builds (run_start, by_id, sid and a run number each).
 */
#define DEF_COST (sizeof(struct def) + 3 * sizeof(uint32_t) + sizeof(struct def_sid))
/*
 * An id map entry: a 12-byte mms_hash slot (tag, index) at a load between a
 * half and a quarter, charged as 32 bytes as when it was an 8-byte slot at a
 * quarter (so the budget stops a file where it always did).
 */
#define IDMAP_COST (4 * 2 * sizeof(uint32_t))

static int add_def(struct mms_recording *rec, size_t off, uint32_t tab, uint32_t fid,
		   const uint8_t *p, uint32_t len)
{
	struct def *d;
	uint32_t i;
	int found;

	if (!rec_charge_mem(rec, off, IDMAP_COST))
		return -ENOSPC;
	if (rec->nr_defs == rec->cap_defs) {
		uint32_t cap = rec->cap_defs ? rec->cap_defs * 2 : 256;

		if (!rec_charge_mem(rec, off, (uint64_t)(cap - rec->cap_defs) * DEF_COST))
			return -ENOSPC;
		d = realloc(rec->defs, cap * sizeof(*d));
		if (!d)
			return -ENOMEM;
		rec->defs = d;
		rec->cap_defs = cap;
	}
	d = &rec->defs[rec->nr_defs++];
	d->pos = rec->nr_ivs;
	d->fid = fid;
	d->tab = tab;
	d->p = p;
	d->len = len;
	rec->info.defs[tab]++;
	found = mms_hash_probe(&rec->defined[tab], fid, &i);
	if (found < 0)
		return -ENOMEM;
	if (!found)
		mms_hash_set(&rec->defined[tab], i, fid, 0);
	return 0;
}

/* A reference to an id no definition so far gave. */
static void check_ref(struct mms_recording *rec, enum mms_table t, uint32_t fid)
{
	if (fid && !mms_hash_find(&rec->defined[t], fid))
		rec->info.dangling++;
}

static const char *parse_defs(struct mms_recording *rec, size_t off, uint16_t type,
			      const uint8_t *p, size_t n)
{
	struct rec_cur c = { .p = p, .len = n };
	uint32_t count = rec_get_u32(&c), rs = 0, min = 8;
	enum mms_table t;

	switch (type) {
	case REC_B_STRINGS:
		t = MMS_TAB_STR;
		break;
	case REC_B_TASKS:
		t = MMS_TAB_TASK;
		rs = rec_get_u32(&c);
		min = REC_TASK_SIZE_1_2;
		break;
	case REC_B_LOCKS:
		t = MMS_TAB_LOCK;
		rs = rec_get_u32(&c);
		min = REC_LOCK_SIZE;
		break;
	default:
		t = MMS_TAB_STACK;
		break;
	}
	if (rs && (rs < min || rs > 4096))
		return "record size out of range";
	if (c.bad || count > rec_left(&c) / (rs > min ? rs : min))
		return "more records than bytes";
	for (uint32_t i = 0; i < count; i++) {
		uint32_t fid = rec_get_u32(&c), len;
		const uint8_t *r;

		if (t == MMS_TAB_STR) {
			len = rec_get_u32(&c);
			if (len > REC_MAX_STR)
				return "string too long";
		} else if (t == MMS_TAB_STACK) {
			len = rec_get_u32(&c);
			if (c.bad || len > REC_MAX_STACK)
				return c.bad ? "record runs past the block" : "stack too deep";
			c.off -= 4;	/* the record starts at nr */
			len = 4 + len * 12;
		} else {
			len = rs - 4;
		}
		r = rec_get(&c, len);
		if (!r)
			return "record runs past the block";
		if (!fid)
			return "definition of id 0";
		if (t == MMS_TAB_TASK) {
			check_ref(rec, MMS_TAB_STR, rec_rd32(r + 8));
			if (len >= REC_TASK_SIZE - 4 && rec_rd32(r + 12))
				check_ref(rec, MMS_TAB_STR, rec_rd32(r + 12));
		} else if (t == MMS_TAB_LOCK) {
			check_ref(rec, MMS_TAB_STR, rec_rd32(r + 12));
			check_ref(rec, MMS_TAB_STR, rec_rd32(r + 16));
			check_ref(rec, MMS_TAB_STR, rec_rd32(r + 24));
		} else if (t == MMS_TAB_STACK) {
			uint32_t nr = rec_rd32(r);

			for (uint32_t k = 0; k < nr; k++)
				check_ref(rec, MMS_TAB_STR, rec_rd32(r + 4 + nr * 8 + k * 4));
		}
		switch (add_def(rec, off, t, fid, r, len)) {
		case 0:
			break;
		case -ENOSPC:
			return recorded;
		default:
			return "out of memory";
		}
	}
	if (rec_left(&c)) {
		snprintf(rec->why, sizeof(rec->why), "%zu bytes after the last record",
			 rec_left(&c));
		return rec->why;
	}
	return NULL;
}

/* Definitions stay readable while the recording is open: keep their bytes. */
static const uint8_t *keep_payload(struct mms_recording *rec, const struct blk *bk)
{
	uint8_t *d, **k;

	if (!(bk->flags & REC_BF_ZSTD))
		return bk->payload;
	/* Charged whole: leftover bytes are damage, so the block is its records. */
	if (!rec_charge_mem(rec, bk->off, (uint64_t)bk->raw + 1 + sizeof(*k)))
		return NULL;
	if (rec->nr_keep == rec->cap_keep) {
		uint32_t cap = rec->cap_keep ? rec->cap_keep * 2 : 64;

		k = realloc(rec->keep, cap * sizeof(*k));
		if (!k)
			goto err_oom;
		rec->keep = k;
		rec->cap_keep = cap;
	}
	d = malloc(bk->raw + 1);
	if (!d)
		goto err_oom;
	rec->keep[rec->nr_keep++] = d;
	return rec_unpack(rec, bk, d) ? d : NULL;

err_oom:
	rec_damage(rec, bk->off, "out of memory");
	return NULL;
}

/* ---- Intervals ---- */

const char *rec_parse_iv(const struct mms_recording *rec, const uint8_t *p, size_t n,
			 struct iv_view *v)
{
	struct rec_cur c = { .p = p, .len = n };
	uint32_t n_lost, stat_size;
	uint64_t need;

	memset(v, 0, sizeof(*v));
	v->meta.seq = rec_get_u64(&c);
	v->meta.start_ns = rec_get_u64(&c);
	v->meta.dur_ns = rec_get_u64(&c);
	v->meta.flags = rec_get_u32(&c);
	n_lost = rec_get_u32(&c);
	if (n_lost > REC_MAX_LOST)
		return "malformed interval";
	for (uint32_t i = 0; i < n_lost; i++) {
		uint64_t x = rec_get_u64(&c);

		if (i < MMS_LOST_NR)
			v->lost[i] = x;
	}
	v->slots = rec_get_u32(&c);
	v->lock_rs = rec_get_u32(&c);
	v->meta.n_locks = rec_get_u32(&c);
	v->metric_rs = rec_get_u32(&c);
	v->meta.n_metrics = rec_get_u32(&c);
	if (c.bad || !v->slots || v->slots > REC_MAX_HIST)
		return "malformed interval";
	stat_size = REC_STAT_FIXED + 4 * v->slots;
	v->lock_key = rec_lock_key(rec);
	if (v->lock_rs < v->lock_key + stat_size || v->lock_rs > 65536 ||
	    v->metric_rs < REC_METRIC_KEY + stat_size || v->metric_rs > 65536)
		return "malformed interval";
	need = (uint64_t)v->meta.n_locks * v->lock_rs + (uint64_t)v->meta.n_metrics * v->metric_rs;
	if (need > rec_left(&c))
		return "malformed interval";
	if (need < rec_left(&c))
		return "bytes after the last row";
	v->locks = p + c.off;
	v->metrics = v->locks + (size_t)v->meta.n_locks * v->lock_rs;
	return NULL;
}

static const char *scan_interval(struct mms_recording *rec, const struct blk *bk,
				 const uint8_t *p, size_t n)
{
	struct iv_view v;
	struct iv_ent *e;
	const char *why;

	why = rec_parse_iv(rec, p, n, &v);
	if (why)
		return why;
	/* Packed rows were charged as they were unpacked. */
	if (!(bk->flags & REC_BF_PACKED) && !rec_charge_rows(rec, bk->off,
			(uint64_t)v.meta.n_locks + v.meta.n_metrics))
		return recorded;
	for (uint32_t i = 0; i < v.meta.n_locks; i++) {
		const uint8_t *r = v.locks + (size_t)i * v.lock_rs;

		check_ref(rec, MMS_TAB_LOCK, rec_rd32(r));
		check_ref(rec, MMS_TAB_STACK, rec_rd32(r + 4));
		check_ref(rec, MMS_TAB_TASK, rec_rd32(r + 8));
		if (v.lock_key >= REC_LOCK_KEY) {	/* 1.4: the owner and its stack */
			check_ref(rec, MMS_TAB_TASK, rec_rd32(r + 16));
			check_ref(rec, MMS_TAB_STACK, rec_rd32(r + 20));
		}
	}
	for (uint32_t i = 0; i < v.meta.n_metrics; i++) {
		const uint8_t *r = v.metrics + (size_t)i * v.metric_rs;

		check_ref(rec, MMS_TAB_TASK, rec_rd32(r));
		check_ref(rec, MMS_TAB_STR, rec_rd32(r + 4));
	}
	if (rec->nr_ivs == rec->cap_ivs) {
		uint32_t cap = rec->cap_ivs ? rec->cap_ivs * 2 : 256;

		if (!rec_charge_mem(rec, bk->off, (uint64_t)(cap - rec->cap_ivs) * sizeof(*e)))
			return recorded;
		e = realloc(rec->ivs, cap * sizeof(*e));
		if (!e)
			return "out of memory";
		rec->ivs = e;
		rec->cap_ivs = cap;
	}
	e = &rec->ivs[rec->nr_ivs++];
	e->off = bk->off;
	e->stored = bk->stored;
	e->raw = bk->raw;
	e->bflags = bk->flags;
	e->meta = v.meta;
	if (rec->nr_ivs == 1)
		rec->info.first_ns = v.meta.start_ns;
	rec->info.end_ns = v.meta.start_ns + v.meta.dur_ns;
	rec->info.intervals = rec->nr_ivs;
	rec->info.lock_rows += v.meta.n_locks;
	rec->info.metric_rows += v.meta.n_metrics;
	rec->info.target_exited += !!(v.meta.flags & MMS_IV_TARGET_EXITED);
	for (int i = 0; i < MMS_LOST_NR; i++)
		rec->info.lost[i] += v.lost[i];
	return NULL;
}

static bool scan_block(struct mms_recording *rec, const struct blk *bk)
{
	const char *why = NULL;
	const uint8_t *p;
	size_t n;

	if (bk->type < REC_B_HEADER || bk->type > REC_B_RUN) {
		rec->info.unknown_blocks++;	/* from a newer mmscope: skip it */
		return true;
	}
	if (bk->flags & ~REC_BF_KNOWN)
		return rec_damage(rec, bk->off, "encoded in a way this mmscope does not know "
				  "(flags %#x): read it with a newer mmscope", bk->flags);
	switch (bk->type) {
	case REC_B_HEADER:
		return rec_damage(rec, bk->off, "a second header");
	case REC_B_INTERVAL:
		p = rec_iv_payload(rec, bk, &n);
		if (!p)
			return false;
		why = scan_interval(rec, bk, p, n);
		break;
	case REC_B_RUN:
		p = rec_payload_tmp(rec, bk);
		if (!p)
			return false;
		if (!rec_run_decode(&rec->info.run, p, bk->raw))
			why = "malformed run block";
		break;
	case REC_B_END:
		p = rec_payload_tmp(rec, bk);
		if (!p)
			return false;
		if (!parse_fields(rec, p, bk->raw, true))
			why = "malformed end block";
		rec->info.closed = true;
		break;
	default:
		p = keep_payload(rec, bk);
		if (!p)
			return false;
		why = parse_defs(rec, bk->off, bk->type, p, bk->raw);
		break;
	}
	if (why && why != recorded)
		return rec_damage(rec, bk->off, "%s", why);
	return !why;
}

static int scan(struct mms_recording *rec, char *errbuf, size_t errlen)
{
	const uint8_t *b = rec->buf;
	struct mms_rec_info *in = &rec->info;
	uint32_t hsize;
	struct blk bk;
	size_t off;
	const uint8_t *p;

	in->file_bytes = rec->file_size;
	if (!rec->len) {
		snprintf(errbuf, errlen, "empty file, not a recording");
		return -EINVAL;
	}
	if (rec->len < REC_MAGIC_LEN || memcmp(b, REC_MAGIC, REC_MAGIC_LEN)) {
		snprintf(errbuf, errlen, "not an mmscope recording (it does not start with the "
			 "mmscope magic bytes)");
		return -EINVAL;
	}
	if (rec->len < REC_FILE_HDR) {
		snprintf(errbuf, errlen, "recording cut short inside its file header");
		return -EBADMSG;
	}
	in->major = rec_rd16(b + 8);
	in->minor = rec_rd16(b + 10);
	hsize = rec_rd32(b + 12);
	if (in->major > MMS_REC_MAJOR) {
		snprintf(errbuf, errlen, "recording format %u.%u is newer than this mmscope reads "
			 "(%u.x): read it with a newer mmscope", in->major, in->minor,
			 MMS_REC_MAJOR);
		return -ENOTSUP;
	}
	if (!in->major || hsize < REC_FILE_HDR || hsize > rec->len) {
		snprintf(errbuf, errlen, "damaged file header (format %u.%u, header size %u)",
			 in->major, in->minor, hsize);
		return -EBADMSG;
	}
	off = hsize;
	if (!read_block(rec, off, &bk) || bk.type != REC_B_HEADER ||
	    (bk.flags & ~REC_BF_KNOWN) || !(p = rec_payload_tmp(rec, &bk)) ||
	    !parse_fields(rec, p, bk.raw, false)) {
		snprintf(errbuf, errlen, "the recording's header block is damaged or missing%s%s",
			 in->damaged ? ": " : "", in->damaged ? in->damage : "");
		return -EBADMSG;
	}
	off += REC_BLOCK_HDR + bk.stored;
	in->blocks = 1;
	in->raw_bytes = bk.raw;
	in->good_bytes = off;
	rec->scanning = true;
	while (off < rec->len) {
		if (!read_block(rec, off, &bk) || !scan_block(rec, &bk))
			break;
		off += REC_BLOCK_HDR + bk.stored;
		in->blocks++;
		in->raw_bytes += bk.raw;
		in->good_bytes = off;
	}
	rec->scanning = false;
	for (int t = 0; t < MMS_TAB_NR; t++)
		mms_hash_free(&rec->defined[t]);
	return 0;
}

static struct mms_recording *rec_alloc(void)
{
	struct mms_recording *rec = calloc(1, sizeof(*rec));

	if (rec && !(rec->dctx = ZSTD_createDCtx())) {
		free(rec);
		return NULL;
	}
	if (rec)
		rec->refs = 1;
	return rec;
}

int mms_recording_open_mem(const void *buf, size_t len, struct mms_recording **out,
			   char *errbuf, size_t errlen)
{
	struct mms_recording *rec = rec_alloc();
	int err;

	if (!rec) {
		snprintf(errbuf, errlen, "out of memory");
		return -ENOMEM;
	}
	rec->buf = buf;
	rec->len = len;
	rec->file_size = len;
	rec_budget_init(&rec->bud, len);
	rec->bud.mem = len;
	err = scan(rec, errbuf, errlen);
	if (err) {
		mms_recording_close(rec);
		return err;
	}
	*out = rec;
	return 0;
}

/*
 * Read, not mapped: a mapping would SIGBUS if the recorder cut the file back
 * (disk full) while we read it.  Read block by block (rec_input.c), so a
 * damaged tail or a hole costs nothing.
 */
static const struct mms_rec_import *import;

void mms_recording_set_import(const struct mms_rec_import *imp)
{
	import = imp;
}

/*
 * A capture of another format (perf.data), read as a recording in memory;
 * 1 when fd is not one.  Never slurped: its reader reads what it needs.
 */
static int open_import(int fd, const char *path, uint64_t size, struct mms_recording **out,
		       char *errbuf, size_t errlen)
{
	static const uint8_t perf_magic[8] = { 'P', 'E', 'R', 'F', 'I', 'L', 'E', '2' };
	struct mms_rec_import_res res = { 0 };
	struct mms_rec_info *in;
	uint8_t head[16];
	ssize_t n = pread(fd, head, sizeof(head), 0);
	char why[384];
	int err;

	if (n <= 0)
		return 1;
	if (!import || !import->match(head, (size_t)n)) {
		if (!import && (size_t)n >= sizeof(perf_magic) && !memcmp(head, perf_magic, 8)) {
			snprintf(errbuf, errlen, "%s is a perf.data capture, which this program "
				 "cannot read: open it with mmscope report, replay or info", path);
			return -ENOTSUP;
		}
		return 1;
	}
	err = import->convert(fd, size, REC_IMPORT_BUDGET, &res, why, sizeof(why));
	if (!err)
		err = mms_recording_open_mem(res.buf, res.len, out, why, sizeof(why));
	if (err) {
		free(res.buf);
		snprintf(errbuf, errlen, "%s: %s", path, why);
		return err;
	}
	(*out)->owned = res.buf;
	in = &(*out)->info;
	snprintf(in->tool, sizeof(in->tool), "%s", res.tool);
	snprintf(in->imported, sizeof(in->imported), "%s", import->format);
	in->file_bytes = size;
	in->good_bytes = size;
	if (res.damage[0]) {
		in->damaged = true;
		in->damaged_at = in->good_bytes = res.damaged_at;
		snprintf(in->damage, sizeof(in->damage), "%s", res.damage);
	}
	return 0;
}

int mms_recording_open(const char *path, struct mms_recording **out, char *errbuf,
		       size_t errlen)
{
	struct mms_recording *rec;
	char why[384];
	struct stat sb;
	int fd, err;

	/* O_NONBLOCK: a FIFO would otherwise hang open() until someone writes to it. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		err = -errno;
		snprintf(errbuf, errlen, "cannot open %s: %s", path, strerror(-err));
		return err;
	}
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		snprintf(errbuf, errlen, "%s is %s, not a recording: give a recording file", path,
			 mms_file_kind(sb.st_mode));
		return -EINVAL;
	}
	err = open_import(fd, path, (uint64_t)sb.st_size, out, errbuf, errlen);
	if (err <= 0) {
		close(fd);
		return err;
	}
	rec = rec_alloc();
	if (!rec) {
		close(fd);
		snprintf(errbuf, errlen, "cannot read %s: out of memory", path);
		return -ENOMEM;
	}
	err = rec_read_fd(rec, fd, (uint64_t)sb.st_size);
	close(fd);
	if (err) {
		mms_recording_close(rec);
		snprintf(errbuf, errlen, "cannot read %s: %s", path, strerror(-err));
		return err;
	}
	if (!rec->len) {
		mms_recording_close(rec);
		snprintf(errbuf, errlen, "%s is empty, not a recording", path);
		return -EINVAL;
	}
	err = scan(rec, why, sizeof(why));
	if (err) {
		mms_recording_close(rec);
		snprintf(errbuf, errlen, "%s: %s", path, why);
		return err;
	}
	*out = rec;
	return 0;
}

void mms_recording_close(struct mms_recording *rec)
{
	/* A store with deferred intervals of it may still need it (rec_feed.c). */
	if (!rec || --rec->refs)
		return;
	for (int t = 0; t < MMS_TAB_NR; t++) {
		mms_hash_free(&rec->defined[t]);
		mms_hash_free(&rec->runs[t]);
	}
	free(rec->run_start);
	free(rec->by_id);
	free(rec->sid);
	free(rec->hot);
	for (uint32_t i = 0; i < rec->nr_keep; i++)
		free(rec->keep[i]);
	free(rec->keep);
	free(rec->defs);
	free(rec->ivs);
	free(rec->scratch);
	free(rec->unpacked);
	ZSTD_freeDCtx(rec->dctx);
	free(rec->owned);
	free(rec);
}

const struct mms_rec_info *mms_recording_info(const struct mms_recording *rec)
{
	return &rec->info;
}

uint32_t mms_recording_count(const struct mms_recording *rec)
{
	return rec->nr_ivs;
}

const struct mms_rec_interval *mms_recording_interval(const struct mms_recording *rec,
						      uint32_t idx)
{
	return idx < rec->nr_ivs ? &rec->ivs[idx].meta : NULL;
}

uint32_t mms_recording_find_time(const struct mms_recording *rec, uint64_t ns)
{
	uint32_t lo = 0, hi = rec->nr_ivs;

	/* Last interval starting at or before ns (starts only go up in a recording). */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (rec->ivs[mid].meta.start_ns <= ns)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

