/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one way a string from outside (the kernel, a process name, a file
 * path, a recording) is written anywhere: text for people (report, compare,
 * info, check, error messages, the TUI's canvas), JSON and CSV.
 *
 * Text: printable UTF-8 is kept; a backslash is doubled; \n \r \t are
 * written so; other C0 bytes, DEL and every byte of invalid UTF-8
 * (overlong forms, surrogates, past U+10FFFF, cut sequences) as \xHH; C1
 * code points (U+0080..U+009F, which some terminals obey like ESC) as
 * \u00HH.  No byte below 0x20, 0x7f or C1 ever comes out raw.
 *
 * JSON (RFC 8259): `"` and `\` escaped, C0, DEL and C1 as \u00HH (\n, \t
 * ... in their short forms), so the value parses back exactly; invalid
 * UTF-8 bytes, which no JSON text may hold, as U+FFFD.
 *
 * CSV (RFC 4180): the bytes exactly, the field quoted when it holds the
 * separator, a quote, CR, LF or any control character.
 */
#ifndef MMSCOPE_ESCAPE_H
#define MMSCOPE_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Longest output of one input byte in either form (\u00HH). */
#define MMS_ESC_MAX 6

/*
 * Next code point of *sp (advanced past it), or -1 for one invalid byte
 * (*sp advanced by one).  Strict: what the terminal and JSON would reject.
 */
int32_t mms_utf8_next(const unsigned char **sp);
/* True when mms_esc_text() would change s. */
bool mms_esc_needed(const char *s);
/*
 * s escaped for text into buf (always NUL-terminated when len > 0, cut at
 * a whole escape); returns the length written.
 */
size_t mms_esc_text(char *buf, size_t len, const char *s);
/* JSON string body (no quotes added), cut and terminated like mms_esc_text(). */
size_t mms_esc_json(char *buf, size_t len, const char *s);
/*
 * A bounded copy of an outside string that is kept rather than shown at once (a comm in
 * a capture, a score's text): cut at its NUL, at n bytes or at cap - 1, C0 and DEL as
 * '?'.  What is shown later still goes through the escapes above (C1, invalid UTF-8).
 */
void mms_copy_clean(char *dst, size_t cap, const char *src, size_t n);
/* Unbounded forms for streams: text, a quoted JSON string, a CSV field. */
void mms_esc_fputs(FILE *f, const char *s);
void mms_esc_fput_json(FILE *f, const char *s);
void mms_esc_fput_csv(FILE *f, const char *s, const char *sep);

#endif
