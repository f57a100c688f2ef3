// SPDX-License-Identifier: GPL-2.0
/* Byte-level helpers of the recording format (see rec_format.h, docs/FORMAT.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "rec_format.h"

void rec_buf_free(struct rec_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

uint8_t *rec_buf_reserve(struct rec_buf *b, size_t n)
{
	if (b->oom)
		return NULL;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		uint8_t *p;

		while (cap < b->len + n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	return b->p + b->len;
}

void rec_put(struct rec_buf *b, const void *p, size_t n)
{
	uint8_t *d = rec_buf_reserve(b, n);

	if (!d)
		return;
	if (n)
		memcpy(d, p, n);
	b->len += n;
}

void rec_put_u16(struct rec_buf *b, uint16_t v)
{
	uint8_t x[2];

	rec_le16(x, v);
	rec_put(b, x, sizeof(x));
}

void rec_put_u32(struct rec_buf *b, uint32_t v)
{
	uint8_t x[4];

	rec_le32(x, v);
	rec_put(b, x, sizeof(x));
}

void rec_put_u64(struct rec_buf *b, uint64_t v)
{
	uint8_t x[8];

	rec_le64(x, v);
	rec_put(b, x, sizeof(x));
}

void rec_put_field(struct rec_buf *b, uint16_t tag, const void *p, size_t n)
{
	rec_put_u16(b, tag);
	rec_put_u16(b, 0);
	rec_put_u32(b, (uint32_t)n);
	rec_put(b, p, n);
}

void rec_put_field_str(struct rec_buf *b, uint16_t tag, const char *s)
{
	rec_put_field(b, tag, s ? s : "", s ? strlen(s) : 0);
}

const uint8_t *rec_get(struct rec_cur *c, size_t n)
{
	const uint8_t *p;

	if (c->bad || n > c->len - c->off) {
		c->bad = true;
		return NULL;
	}
	p = c->p + c->off;
	c->off += n;
	return p;
}

uint16_t rec_get_u16(struct rec_cur *c)
{
	const uint8_t *p = rec_get(c, 2);

	return p ? rec_rd16(p) : 0;
}

uint32_t rec_get_u32(struct rec_cur *c)
{
	const uint8_t *p = rec_get(c, 4);

	return p ? rec_rd32(p) : 0;
}

uint64_t rec_get_u64(struct rec_cur *c)
{
	const uint8_t *p = rec_get(c, 8);

	return p ? rec_rd64(p) : 0;
}

void rec_put_varint(struct rec_buf *b, uint64_t v)
{
	uint8_t x[10];
	size_t n = 0;

	do {
		x[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		x[n++] |= v ? 0x80 : 0;
	} while (v);
	rec_put(b, x, n);
}

uint64_t rec_get_varint(struct rec_cur *c)
{
	uint64_t v = 0;

	for (int shift = 0; !c->bad; shift += 7) {
		const uint8_t *p = rec_get(c, 1);

		if (!p)
			break;
		/* The tenth byte holds bit 63 only; longer is malformed. */
		if (shift == 63 && *p > 1) {
			c->bad = true;
			break;
		}
		v |= (uint64_t)(*p & 0x7f) << shift;
		if (!(*p & 0x80))
			return v;
	}
	return 0;
}

uint32_t rec_crc(const uint8_t *hdr, const uint8_t *payload, size_t n)
{
	uLong crc = crc32(0L, Z_NULL, 0);

	crc = crc32(crc, hdr, 12);
	if (n)
		crc = crc32(crc, payload, (uInt)n);
	return (uint32_t)crc;
}
