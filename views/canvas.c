// SPDX-License-Identifier: GPL-2.0
/* The off-screen canvas (see include/mmscope/canvas.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "mmscope/canvas.h"
#include "mmscope/escape.h"

#define ELLIPSIS_UTF8 0x2026

int mms_canvas_create(int w, int h, bool utf8, struct mms_canvas **out)
{
	struct mms_canvas *c = calloc(1, sizeof(*c));
	int err;

	if (!c)
		return -ENOMEM;
	c->utf8 = utf8;
	err = mms_canvas_resize(c, w, h);
	if (err) {
		free(c);
		return err;
	}
	*out = c;
	return 0;
}

void mms_canvas_destroy(struct mms_canvas *c)
{
	if (!c)
		return;
	free(c->cells);
	free(c);
}

int mms_canvas_resize(struct mms_canvas *c, int w, int h)
{
	struct mms_cell *cells;

	if (w < 1)
		w = 1;
	if (h < 1)
		h = 1;
	cells = calloc((size_t)w * (size_t)h, sizeof(*cells));
	if (!cells)
		return -ENOMEM;
	free(c->cells);
	c->cells = cells;
	c->w = w;
	c->h = h;
	mms_canvas_clear(c);
	return 0;
}

void mms_canvas_clear(struct mms_canvas *c)
{
	size_t n = (size_t)c->w * (size_t)c->h;

	for (size_t i = 0; i < n; i++)
		c->cells[i] = (struct mms_cell){ .ch = ' ', .role = MMS_ROLE_NORMAL };
}

static struct mms_cell *cell(struct mms_canvas *c, int x, int y)
{
	return &c->cells[(size_t)y * (size_t)c->w + (size_t)x];
}

/* Next code point of s; invalid bytes come back as U+FFFD, one byte at a time. */
static uint32_t utf8_next(const unsigned char **sp)
{
	int32_t cp = mms_utf8_next(sp);

	return cp < 0 ? 0xfffd : (uint32_t)cp;
}

/*
 * Outside text shows as the reports show it (\x1b, \u009b): escaped into
 * buf when it needs it, so no control character reaches a cell.
 */
static const char *safe_text(const char *s, char *buf, size_t len)
{
	if (!mms_esc_needed(s))
		return s;
	mms_esc_text(buf, len, s);
	return buf;
}

/* What a code point becomes on this canvas: every cell must be one column wide. */
static uint32_t displayable(const struct mms_canvas *c, uint32_t cp)
{
	if (cp < 0x20 || cp == 0x7f)
		return '?';
	if (cp < 0x80)
		return cp;
	if (!c->utf8 || wcwidth((wchar_t)cp) != 1)
		return '?';
	return cp;
}

static int text_width(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int n = 0;

	while (*p) {
		utf8_next(&p);
		n++;
	}
	return n;
}

int mms_canvas_put(struct mms_canvas *c, int x, int y, enum mms_role role, const char *s,
		   int max)
{
	char esc[1024];
	const unsigned char *p = (const unsigned char *)safe_text(s, esc, sizeof(esc));
	int room, n = 0;

	if (y < 0 || y >= c->h || x >= c->w)
		return 0;
	room = c->w - x;
	if (max >= 0 && max < room)
		room = max;
	while (*p && n < room) {
		uint32_t cp = utf8_next(&p);

		/* Last cell and more to come: mark the cut. */
		if (n == room - 1 && *p && room > 1)
			cp = c->utf8 ? ELLIPSIS_UTF8 : '~';
		if (x + n >= 0) {
			struct mms_cell *k = cell(c, x + n, y);

			k->ch = displayable(c, cp);
			k->role = (uint8_t)role;
		}
		n++;
	}
	return n;
}

int mms_canvas_put_right(struct mms_canvas *c, int x, int y, int w, enum mms_role role,
			 const char *s)
{
	char esc[1024];
	int tw;

	s = safe_text(s, esc, sizeof(esc));
	tw = text_width(s);

	if (tw > w)
		return mms_canvas_put(c, x, y, role, s, w);
	return mms_canvas_put(c, x + w - tw, y, role, s, tw);
}

int mms_canvas_printf(struct mms_canvas *c, int x, int y, enum mms_role role, int max,
		      const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return mms_canvas_put(c, x, y, role, buf, max);
}

void mms_canvas_fill(struct mms_canvas *c, int x, int y, int n, uint32_t ch, enum mms_role role)
{
	if (y < 0 || y >= c->h)
		return;
	for (int i = x < 0 ? 0 : x; i < x + n && i < c->w; i++) {
		struct mms_cell *k = cell(c, i, y);

		k->ch = displayable(c, ch);
		k->role = (uint8_t)role;
	}
}

void mms_canvas_paint(struct mms_canvas *c, int x, int y, int n, enum mms_role role)
{
	if (y < 0 || y >= c->h)
		return;
	for (int i = x < 0 ? 0 : x; i < x + n && i < c->w; i++)
		cell(c, i, y)->role = (uint8_t)role;
}

static void put_cp(struct mms_canvas *c, int x, int y, uint32_t cp, enum mms_role role)
{
	if (x < 0 || y < 0 || x >= c->w || y >= c->h)
		return;
	cell(c, x, y)->ch = cp;
	cell(c, x, y)->role = (uint8_t)role;
}

void mms_canvas_spark(struct mms_canvas *c, int x, int y, int w, const uint64_t *vals,
		      uint32_t n, uint64_t max, enum mms_role role)
{
	static const uint32_t blocks[] = { 0x2581, 0x2582, 0x2583, 0x2584,
					   0x2585, 0x2586, 0x2587, 0x2588 };
	static const char ascii[] = "_.-=+*#@";
	uint64_t bucket[512];
	uint32_t nb, cnt[512];

	if (w <= 0 || !n)
		return;
	if (w > (int)(sizeof(bucket) / sizeof(bucket[0])))
		w = (int)(sizeof(bucket) / sizeof(bucket[0]));
	/* Fewer values than cells: one cell per value, right-aligned (newest at the right). */
	nb = n < (uint32_t)w ? n : (uint32_t)w;
	memset(bucket, 0, sizeof(bucket));
	memset(cnt, 0, sizeof(cnt));
	for (uint32_t i = 0; i < n; i++) {
		bucket[(uint64_t)i * nb / n] += vals[i];
		cnt[(uint64_t)i * nb / n]++;
	}
	/* Averages, so buckets that hold one value more do not stand out. */
	for (uint32_t b = 0; b < nb; b++)
		bucket[b] = cnt[b] ? (bucket[b] + cnt[b] / 2) / cnt[b] : 0;
	if (!max)
		for (uint32_t b = 0; b < nb; b++)
			if (bucket[b] > max)
				max = bucket[b];
	for (uint32_t b = 0; b < nb; b++) {
		int cx = x + w - (int)nb + (int)b;
		uint64_t v = bucket[b] > max ? max : bucket[b];
		int level;

		if (!v || !max) {
			put_cp(c, cx, y, ' ', role);
			continue;
		}
		/* Any non-zero value shows at least the lowest block. */
		level = (int)((v * 8 - 1) / max);
		if (level > 7)
			level = 7;
		put_cp(c, cx, y, c->utf8 ? blocks[level] : (uint32_t)ascii[level], role);
	}
}

void mms_canvas_bar(struct mms_canvas *c, int x, int y, int w, double frac, enum mms_role role)
{
	static const uint32_t eighths[] = { 0, 0x258f, 0x258e, 0x258d, 0x258c, 0x258b, 0x258a,
					    0x2589 };
	long units;

	if (w <= 0)
		return;
	if (frac < 0)
		frac = 0;
	if (frac > 1)
		frac = 1;
	units = (long)(frac * w * 8 + 0.5);
	if (frac > 0 && !units)
		units = 1;	/* a non-zero count is never invisible */
	for (int i = 0; i < w; i++) {
		long u = units - (long)i * 8;

		if (u >= 8)
			put_cp(c, x + i, y, c->utf8 ? 0x2588 : '#', role);
		else if (u > 0)
			put_cp(c, x + i, y, c->utf8 ? eighths[u] : (u >= 4 ? '#' : '|'), role);
		else
			put_cp(c, x + i, y, ' ', MMS_ROLE_NORMAL);
	}
}

size_t mms_utf8_encode(uint32_t cp, char out[4])
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	if (cp > 0x10ffff)
		return 0;
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

static size_t put_utf8(char *buf, size_t len, size_t o, uint32_t cp)
{
	char tmp[4];
	size_t n = mms_utf8_encode(cp, tmp);

	for (size_t i = 0; i < n; i++)
		if (o + i < len)
			buf[o + i] = tmp[i];
	return o + n;
}

size_t mms_canvas_text(const struct mms_canvas *c, char *buf, size_t len)
{
	size_t o = 0;

	for (int y = 0; y < c->h; y++) {
		int end = c->w;

		while (end > 0 && mms_canvas_at(c, end - 1, y)->ch == ' ')
			end--;
		for (int x = 0; x < end; x++)
			o = put_utf8(buf, len, o, mms_canvas_at(c, x, y)->ch);
		o = put_utf8(buf, len, o, '\n');
	}
	if (len)
		buf[o < len ? o : len - 1] = 0;
	return o;
}
