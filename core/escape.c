// SPDX-License-Identifier: GPL-2.0
/* Escaping of outside strings for text, JSON and CSV (see include/mmscope/escape.h). */
#include <string.h>

#include "mmscope/escape.h"

int32_t mms_utf8_next(const unsigned char **sp)
{
	const unsigned char *s = *sp;
	uint32_t cp, min;
	int n;

	if (s[0] < 0x80) {
		*sp = s + 1;
		return s[0];
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		cp = s[0] & 0x1f;
		n = 1;
		min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		cp = s[0] & 0x0f;
		n = 2;
		min = 0x800;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		cp = s[0] & 0x07;
		n = 3;
		min = 0x10000;
	} else {
		goto bad;
	}
	for (int i = 1; i <= n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			goto bad;	/* also stops at the NUL */
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		goto bad;
	*sp = s + n + 1;
	return (int32_t)cp;
bad:
	*sp = s + 1;
	return -1;
}

static bool is_control(int32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
}

bool mms_esc_needed(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		int32_t cp = mms_utf8_next(&p);

		if (cp < 0 || is_control(cp) || cp == '\\')
			return true;
	}
	return false;
}

/*
 * Writes the escape of the character at *p (advanced past it) into out
 * (at least MMS_ESC_MAX + 4 bytes, for a whole 4-byte character); returns
 * its length.
 */
static size_t esc_one(const unsigned char **p, char *out, bool json)
{
	const unsigned char *start = *p;
	int32_t cp = mms_utf8_next(p);
	size_t n = (size_t)(*p - start);

	if (cp < 0)
		return json ? (size_t)(memcpy(out, "\\ufffd", 6), 6) :
			      (size_t)snprintf(out, MMS_ESC_MAX + 1, "\\x%02x", start[0]);
	switch (cp) {
	case '\\':
		return (size_t)(memcpy(out, "\\\\", 2), 2);
	case '\n':
		return (size_t)(memcpy(out, "\\n", 2), 2);
	case '\t':
		return (size_t)(memcpy(out, "\\t", 2), 2);
	case '\r':
		return (size_t)(memcpy(out, "\\r", 2), 2);
	case '"':
		if (json)
			return (size_t)(memcpy(out, "\\\"", 2), 2);
		break;
	default:
		break;
	}
	if (is_control(cp)) {
		if (json || cp >= 0x80)
			return (size_t)snprintf(out, MMS_ESC_MAX + 1, "\\u%04x", (unsigned)cp);
		return (size_t)snprintf(out, MMS_ESC_MAX + 1, "\\x%02x", (unsigned)cp);
	}
	memcpy(out, start, n);
	return n;
}

static size_t esc_buf(char *buf, size_t len, const char *s, bool json)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t o = 0;

	if (!len)
		return 0;
	while (*p) {
		char one[MMS_ESC_MAX + 4];
		size_t n = esc_one(&p, one, json);

		if (o + n >= len)
			break;
		memcpy(buf + o, one, n);
		o += n;
	}
	buf[o] = 0;
	return o;
}

size_t mms_esc_text(char *buf, size_t len, const char *s)
{
	return esc_buf(buf, len, s, false);
}

size_t mms_esc_json(char *buf, size_t len, const char *s)
{
	return esc_buf(buf, len, s, true);
}

static void esc_stream(FILE *f, const char *s, bool json)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	while (*p) {
		char one[MMS_ESC_MAX + 4];
		size_t n = esc_one(&p, one, json);

		fwrite(one, 1, n, f);
	}
}

void mms_esc_fputs(FILE *f, const char *s)
{
	esc_stream(f, s, false);
}

void mms_esc_fput_json(FILE *f, const char *s)
{
	fputc('"', f);
	esc_stream(f, s, true);
	fputc('"', f);
}

void mms_esc_fput_csv(FILE *f, const char *s, const char *sep)
{
	bool quote = false;

	s = s ? s : "";
	for (const unsigned char *p = (const unsigned char *)s; *p && !quote; p++)
		quote = *p == '"' || *p < 0x20 || *p == 0x7f;
	if (!quote && !(sep && *sep && strstr(s, sep))) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void mms_copy_clean(char *dst, size_t cap, const char *src, size_t n)
{
	size_t i;

	if (!cap)
		return;
	for (i = 0; i < n && i + 1 < cap && src[i]; i++)
		dst[i] = (unsigned char)src[i] < 0x20 || src[i] == 0x7f ? '?' : src[i];
	dst[i] = '\0';
}
