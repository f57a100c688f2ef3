/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The terminal through ncursesw: start and end, the colour palette (roles
 * of the canvas to colour pairs or plain attributes), blitting a canvas,
 * reading keys and mouse events.  Nothing else in mmscope calls ncurses.
 */
#ifndef MMSCOPE_TUI_SCREEN_H
#define MMSCOPE_TUI_SCREEN_H

#include <stdbool.h>
#include <stddef.h>

#include "mmscope/canvas.h"

struct screen_mouse {
	int x, y;
	bool click;		/* button 1 */
	int wheel;		/* -1 up, +1 down, 0 none */
};

/* Starts curses on the given terminal fds (once: again is a no-op); 0 or -errno with a message. */
int screen_init(int tty_in, int tty_out, bool no_color, char *errbuf, size_t errlen);
/* Restores the terminal; safe to call twice and from the crash handler. */
void screen_end(void);
bool screen_utf8(void);
void screen_size(int *w, int *h);
/* Asks the terminal for its size (after SIGWINCH) and tells curses. */
void screen_resize(int *w, int *h);
void screen_blit(const struct mms_canvas *c);
/* A non-ASCII character typed (for prompts): SCREEN_KEY_CHAR | code point. */
#define SCREEN_KEY_CHAR 0x40000000

/*
 * Next key: an ASCII character, a curses KEY_* code, SCREEN_KEY_CHAR | code
 * point, -1 when none is waiting, -2 for an event to ignore.  KEY_MOUSE fills m.
 */
int screen_key(struct screen_mouse *m);
/* Repaints everything on the next blit (Ctrl-L). */
void screen_invalidate(void);

struct mms_list;
/*
 * The keys every list shares (arrows and j/k, PgUp/PgDn by a screen less one
 * row, Home/End): true when key was one of them and l moved.
 */
bool screen_list_key(struct mms_list *l, int key);

#endif
