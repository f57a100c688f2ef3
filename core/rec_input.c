// SPDX-License-Identifier: GPL-2.0
/*
 * A recording's bytes and what they may cost: the file read block by block
 * (never slurped: a hole or a damaged tail is not read at all), payloads
 * decompressed, packed rows unpacked, and every allocation, decompressed
 * byte and decoded row charged to a budget set from the bytes that are
 * there (docs/FORMAT.md, "Limits"), so a small file cannot cost gigabytes or
 * minutes whatever it holds.  Called by reader.c (opening) and rec_feed.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rec_reader.h"

bool rec_damage(struct mms_recording *rec, size_t off, const char *fmt, ...)
{
	size_t n;
	va_list ap;

	rec->info.damaged = true;
	rec->info.damaged_at = off;
	n = (size_t)snprintf(rec->info.damage, sizeof(rec->info.damage), "block at byte %zu: ",
			     off);
	va_start(ap, fmt);
	if (n < sizeof(rec->info.damage))
		vsnprintf(rec->info.damage + n, sizeof(rec->info.damage) - n, fmt, ap);
	va_end(ap);
	return false;
}

void rec_budget_init(struct rec_budget *b, uint64_t len)
{
	*b = (struct rec_budget){
		.mem_max = REC_MEM_BASE + REC_MEM_PER_BYTE * len,
		.raw_max = REC_RAW_BASE + REC_RAW_PER_BYTE * len,
		.rows_max = REC_ROWS_BASE + REC_ROWS_PER_BYTE * len,
	};
}

static bool take(uint64_t *used, uint64_t max, uint64_t n)
{
	if (n > max || *used > max - n)
		return false;
	*used += n;
	return true;
}

bool rec_charge_mem(struct mms_recording *rec, size_t off, uint64_t n)
{
	struct rec_budget *b = &rec->bud;

	if (take(&b->mem, b->mem_max, n))
		return true;
	return rec_damage(rec, off, "needs more memory than the reader's budget for this file "
			  "(%.1f MiB: %llu MiB + %d times the file's size)",
			  (double)b->mem_max / (1 << 20), REC_MEM_BASE >> 20, REC_MEM_PER_BYTE);
}

bool rec_charge_raw(struct mms_recording *rec, size_t off, uint64_t n)
{
	struct rec_budget *b = &rec->bud;

	if (take(&b->raw, b->raw_max, n))
		return true;
	return rec_damage(rec, off, "decompresses to more than the reader's budget for this file "
			  "(%.1f MiB: %llu MiB + %d times the file's size)",
			  (double)b->raw_max / (1 << 20), REC_RAW_BASE >> 20, REC_RAW_PER_BYTE);
}

bool rec_charge_rows(struct mms_recording *rec, size_t off, uint64_t n)
{
	struct rec_budget *b = &rec->bud;

	if (take(&b->rows, b->rows_max, n))
		return true;
	return rec_damage(rec, off, "holds more rows than the reader's budget for this file "
			  "(%llu: %llu + %d per byte of the file)",
			  (unsigned long long)b->rows_max, REC_ROWS_BASE, REC_ROWS_PER_BYTE);
}

/* ---- Payloads ---- */

/* The raw payload of a block: in place, or decompressed into dst (raw bytes). */
bool rec_unpack(struct mms_recording *rec, const struct blk *bk, uint8_t *dst)
{
	unsigned long long fcs;
	size_t n;

	fcs = ZSTD_getFrameContentSize(bk->payload, bk->stored);
	if (fcs != bk->raw)
		return rec_damage(rec, bk->off, "compressed data does not match its size");
	if (rec->scanning && !rec_charge_raw(rec, bk->off, bk->raw))
		return false;
	n = ZSTD_decompressDCtx(rec->dctx, dst, bk->raw, bk->payload, bk->stored);
	if (ZSTD_isError(n) || n != bk->raw)
		return rec_damage(rec, bk->off, "compressed data is corrupt (%s)",
				  ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short");
	return true;
}

/* A buffer of reuse: grown (and charged) to the largest n asked for; NULL is damage. */
static uint8_t *grow(struct mms_recording *rec, size_t off, uint8_t **buf, size_t *cap, size_t n)
{
	uint8_t *p;

	if (n <= *cap)
		return *buf;
	if (!rec_charge_mem(rec, off, n - *cap))
		return NULL;
	p = realloc(*buf, n);
	if (!p) {
		rec_damage(rec, off, "out of memory");
		return NULL;
	}
	*buf = p;
	*cap = n;
	return p;
}

static uint8_t *scratch(struct mms_recording *rec, size_t off, size_t n)
{
	return grow(rec, off, &rec->scratch, &rec->scratch_cap, n + 1);
}

/* Payload of bk for reading now: in the file, or in scratch. */
const uint8_t *rec_payload_tmp(struct mms_recording *rec, const struct blk *bk)
{
	uint8_t *d;

	if (!(bk->flags & REC_BF_ZSTD))
		return bk->payload;
	d = scratch(rec, bk->off, bk->raw);
	return d && rec_unpack(rec, bk, d) ? d : NULL;
}

/*
 * One column of statistics (the writer's put_stat_cols) into the rows at
 * first, stride bytes apart: count, total, min, max - min, non-empty slots,
 * then (gap, value) per non-empty slot.  The slot counts wait in the first
 * slot until the pairs are read.  Without values the column is checked but
 * only those counts are written.
 */
static void unpack_stat_cols(struct rec_cur *c, uint8_t *first, size_t stride, uint32_t n,
			     uint32_t slots, bool values)
{
	uint8_t *r;
	uint32_t i;

	if (!values) {	/* checked, not kept: count, total, min, max - min */
		for (i = 0; i < 4 * n; i++)
			rec_get_varint(c);
	}
	for (int f = 0; f < 3 && values; f++)
		for (i = 0, r = first; i < n; i++, r += stride)
			rec_le64(r + 8 * f, rec_get_varint(c));
	for (i = 0, r = first; i < n && values; i++, r += stride)	/* max - min, mod 2^64 */
		rec_le64(r + 24, rec_rd64(r + 16) + rec_get_varint(c));
	for (i = 0, r = first; i < n; i++, r += stride) {
		uint64_t nz = rec_get_varint(c);

		if (nz > slots)
			c->bad = true;
		rec_le32(r + REC_STAT_FIXED, (uint32_t)nz);
	}
	for (i = 0, r = first; i < n && !c->bad; i++, r += stride) {
		uint32_t nz = rec_rd32(r + REC_STAT_FIXED);
		uint64_t k = 0;

		rec_le32(r + REC_STAT_FIXED, 0);
		for (uint32_t j = 0; j < nz && !c->bad; j++, k++) {
			uint64_t v;

			k += rec_get_varint(c);
			v = rec_get_varint(c);
			if (k >= slots || v > UINT32_MAX) {
				c->bad = true;
				break;
			}
			if (values)
				rec_le32(r + REC_STAT_FIXED + 4 * k, (uint32_t)v);
		}
	}
}

/* n key columns of u32 (varints) into the rows at first. */
static void unpack_keys(struct rec_cur *c, uint8_t *first, size_t stride, uint32_t n, int keys)
{
	for (int f = 0; f < keys; f++) {
		uint8_t *r = first + 4 * f;

		for (uint32_t i = 0; i < n; i++, r += stride) {
			uint64_t v = rec_get_varint(c);

			if (v > UINT32_MAX)
				c->bad = true;
			rec_le32(r, (uint32_t)v);
		}
	}
}

/*
 * A packed interval (docs/FORMAT.md) in the fixed layout, its length in
 * out_n; NULL when it is damaged (recorded at off).
 */
static const uint8_t *unpack_iv(struct mms_recording *rec, size_t off, const uint8_t *p,
				size_t n, size_t *out_n)
{
	struct rec_cur c = { .p = p, .len = n };
	uint32_t n_lost, slots, lock_rs, n_locks, metric_rs, n_metrics, stat_size;
	const uint32_t key = rec_lock_key(rec);	/* 1.4 adds the owner's two columns */
	size_t hdr, rows;
	uint8_t *o;

	rec_get(&c, 28);	/* seq, start, duration, flags */
	n_lost = rec_get_u32(&c);
	if (n_lost > REC_MAX_LOST)
		goto err_bad;
	rec_get(&c, 8 * (size_t)n_lost);
	slots = rec_get_u32(&c);
	lock_rs = rec_get_u32(&c);
	n_locks = rec_get_u32(&c);
	metric_rs = rec_get_u32(&c);
	n_metrics = rec_get_u32(&c);
	if (c.bad || !slots || slots > REC_MAX_HIST)
		goto err_bad;
	/*
	 * Packed rows have no newer bytes to carry: the sizes are the fixed
	 * layout's of the file's version (its minor says which lock key).
	 */
	stat_size = REC_STAT_FIXED + 4 * slots;
	if (lock_rs != key + stat_size || metric_rs != REC_METRIC_KEY + stat_size) {
		rec_damage(rec, off, "packed rows of %u and %u bytes: with %u histogram slots "
			   "the format (%u.%u) fixes them at %u and %u", lock_rs, metric_rs, slots,
			   rec->info.major, rec->info.minor, key + stat_size,
			   REC_METRIC_KEY + stat_size);
		return NULL;
	}
	/* Every row has at least a byte per column: bounds what a claim costs. */
	if ((uint64_t)n_locks * (key / 4 + 5) + (uint64_t)n_metrics * 8 > rec_left(&c))
		goto err_bad;
	if (rec->scanning && !rec_charge_rows(rec, off, (uint64_t)n_locks + n_metrics))
		return NULL;
	hdr = c.off;
	rows = (size_t)n_locks * lock_rs + (size_t)n_metrics * metric_rs;
	o = grow(rec, off, &rec->unpacked, &rec->unpacked_cap, hdr + rows);
	if (!o)
		return NULL;
	memcpy(o, p, hdr);
	/*
	 * Opening checks every byte but reads only the keys (their references):
	 * the statistics are then checked without being written, and the rows
	 * need no zeroing (ASan's and the page faults' cost of a large file).
	 */
	if (!rec->scanning)
		memset(o + hdr, 0, rows);
	unpack_keys(&c, o + hdr, lock_rs, n_locks, (int)(key / 4));
	unpack_stat_cols(&c, o + hdr + key, lock_rs, n_locks, slots, !rec->scanning);
	o += hdr + (size_t)n_locks * lock_rs;
	unpack_keys(&c, o, metric_rs, n_metrics, REC_METRIC_KEY / 4);
	unpack_stat_cols(&c, o + REC_METRIC_KEY, metric_rs, n_metrics, slots, !rec->scanning);
	if (c.bad)
		goto err_bad;
	if (rec_left(&c)) {
		rec_damage(rec, off, "%zu bytes after the last packed row", rec_left(&c));
		return NULL;
	}
	*out_n = hdr + rows;
	return rec->unpacked;

err_bad:
	rec_damage(rec, off, "malformed interval");
	return NULL;
}

const uint8_t *rec_iv_payload(struct mms_recording *rec, const struct blk *bk, size_t *n)
{
	const uint8_t *p = rec_payload_tmp(rec, bk);

	if (!p)
		return NULL;
	*n = bk->raw;
	if (!(bk->flags & REC_BF_PACKED))
		return p;
	return unpack_iv(rec, bk->off, p, bk->raw, n);
}

/* ---- Reading a file ---- */

struct rd {
	int fd;
	uint64_t size;
	uint8_t *buf;
	size_t got, cap;
};

/*
 * Makes bytes [0, end) of the file readable (end clipped to its size);
 * fewer when it is shorter than fstat said (it is being cut back).
 */
static int need(struct rd *r, uint64_t end)
{
	if (end > r->size)
		end = r->size;
	if (end <= r->got)
		return 0;
	if (end > r->cap) {
		uint64_t cap = r->cap ? r->cap : 65536;
		uint8_t *p;

		while (cap < end)
			cap *= 2;
		if (cap > r->size)
			cap = r->size;
		if (cap > SIZE_MAX)
			return -EFBIG;
		p = realloc(r->buf, (size_t)cap);
		if (!p)
			return -ENOMEM;
		r->buf = p;
		r->cap = (size_t)cap;
	}
	while (r->got < end) {
		ssize_t n = read(r->fd, r->buf + r->got, (size_t)end - r->got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			break;
		r->got += (size_t)n;
	}
	return 0;
}

/* Reads up to and including the first bad block; the reader says what is wrong with it. */
static int read_blocks(struct mms_recording *rec, struct rd *r)
{
	uint64_t off;
	uint32_t stored;
	int e;

	/* The file header first: a file the reader refuses is not read further. */
	e = need(r, REC_FILE_HDR);
	if (e || r->got < REC_FILE_HDR || memcmp(r->buf, REC_MAGIC, REC_MAGIC_LEN) ||
	    !rec_rd16(r->buf + 8) || rec_rd16(r->buf + 8) > MMS_REC_MAJOR)
		return e;
	off = rec_rd32(r->buf + 12);
	if (off > REC_MAX_PAYLOAD)
		return 0;	/* no header is that long: the reader says it is damaged */
	while (off < r->size) {
		e = need(r, off + REC_BLOCK_HDR);
		if (e || r->got < off + REC_BLOCK_HDR)
			return e;
		stored = rec_rd32(r->buf + off + 4);
		if (stored > REC_MAX_PAYLOAD)
			return 0;
		e = need(r, off + REC_BLOCK_HDR + stored);
		if (e || r->got < off + REC_BLOCK_HDR + stored)
			return e;
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
		if (rec_crc(r->buf + off, r->buf + off + REC_BLOCK_HDR, stored) !=
		    rec_rd32(r->buf + off + 12))
			return 0;
#endif
		off += REC_BLOCK_HDR + stored;
		rec->crc_ok = (size_t)off;
	}
	return 0;
}

int rec_read_fd(struct mms_recording *rec, int fd, uint64_t size)
{
	struct rd r = { .fd = fd, .size = size };
	int e = read_blocks(rec, &r);

	if (e) {
		free(r.buf);
		return e;
	}
	rec->owned = r.buf;
	rec->buf = r.buf;
	rec->len = r.got;
	rec->file_size = size;
	/* The budget follows what is there; the buffer is its first charge. */
	rec_budget_init(&rec->bud, r.got);
	rec->bud.mem = r.cap;
	return 0;
}
