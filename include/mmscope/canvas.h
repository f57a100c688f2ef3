/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The canvas: an off-screen grid of cells (a character and a colour role)
 * that views and the header draw into.  Only tui/ turns it into terminal
 * output, so views are testable without a terminal (compare
 * mms_canvas_text() with expected text) and a frame costs no I/O.
 *
 * Roles are semantic ("selected row", "lost events"); tui/ maps them to
 * colour pairs or, on monochrome terminals and with NO_COLOR, to plain
 * attributes.  A canvas made with utf8 = false keeps to ASCII: glyph helpers
 * (sparklines, bars) fall back to ASCII art and other text becomes '?'.
 */
#ifndef MMSCOPE_CANVAS_H
#define MMSCOPE_CANVAS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum mms_role {
	MMS_ROLE_NORMAL,
	MMS_ROLE_TITLE,		/* the first header line */
	MMS_ROLE_LABEL,		/* "interval", "sources" ... in the header */
	MMS_ROLE_VALUE,		/* a number the eye should find */
	MMS_ROLE_DIM,		/* secondary text: units, addresses, empty states */
	MMS_ROLE_TAB,
	MMS_ROLE_TAB_ACTIVE,
	MMS_ROLE_COLHEAD,	/* table column titles */
	MMS_ROLE_COLHEAD_SORT,	/* the column rows are sorted by */
	MMS_ROLE_SELECTED,	/* the selected row */
	MMS_ROLE_GOOD,		/* a source that works */
	MMS_ROLE_WARN,		/* paused, inferred data, a process that exited */
	MMS_ROLE_ERROR,		/* lost events, unavailable sources */
	MMS_ROLE_SPARK,
	MMS_ROLE_BAR,
	MMS_ROLE_STATUS,	/* the bottom line */
	MMS_ROLE_KEY,		/* a key name in the status line and help */
	MMS_ROLE_PROMPT,
	MMS_ROLE_REC,		/* recording in progress */
	MMS_ROLE_NR
};

struct mms_cell {
	uint32_t ch;		/* Unicode code point, always one column wide */
	uint8_t role;		/* enum mms_role */
};

struct mms_canvas {
	int w, h;
	bool utf8;
	struct mms_cell *cells;
};

int mms_canvas_create(int w, int h, bool utf8, struct mms_canvas **out);
/* UTF-8 of code point cp (up to U+10FFFF) into out: its length, 0 when not one. */
size_t mms_utf8_encode(uint32_t cp, char out[4]);
void mms_canvas_destroy(struct mms_canvas *c);
/* New size; contents are cleared.  0 or -ENOMEM (the old grid is kept then). */
int mms_canvas_resize(struct mms_canvas *c, int w, int h);
void mms_canvas_clear(struct mms_canvas *c);

/*
 * Writes UTF-8 text at (x, y), at most max columns (max < 0: to the edge),
 * clipped to the canvas.  Text cut short ends in an ellipsis.  Returns the
 * columns written.
 */
int mms_canvas_put(struct mms_canvas *c, int x, int y, enum mms_role role, const char *s,
		   int max);
/* Right-aligned in [x, x + w). */
int mms_canvas_put_right(struct mms_canvas *c, int x, int y, int w, enum mms_role role,
			 const char *s);
int mms_canvas_printf(struct mms_canvas *c, int x, int y, enum mms_role role, int max,
		      const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* n cells of code point ch. */
void mms_canvas_fill(struct mms_canvas *c, int x, int y, int n, uint32_t ch, enum mms_role role);
/* Changes the role of n cells, keeping their characters (row highlight). */
void mms_canvas_paint(struct mms_canvas *c, int x, int y, int n, enum mms_role role);

/*
 * A sparkline of n values in w cells: values are grouped into w buckets
 * (averaged) when n > w, scaled to max (0: the largest bucket).  Zero is a
 * blank baseline so that quiet periods look quiet.
 */
void mms_canvas_spark(struct mms_canvas *c, int x, int y, int w, const uint64_t *vals,
		      uint32_t n, uint64_t max, enum mms_role role);
/* A horizontal bar of frac (0..1) of w cells, with eighth-cell resolution in UTF-8. */
void mms_canvas_bar(struct mms_canvas *c, int x, int y, int w, double frac, enum mms_role role);

static inline const struct mms_cell *mms_canvas_at(const struct mms_canvas *c, int x, int y)
{
	return &c->cells[(size_t)y * (size_t)c->w + (size_t)x];
}

/*
 * The canvas as UTF-8 text, one line per row, trailing blanks removed.
 * Returns the length it needs (like snprintf).
 */
size_t mms_canvas_text(const struct mms_canvas *c, char *buf, size_t len);

#endif
