// SPDX-License-Identifier: GPL-2.0
/* The terminal through ncursesw (see screen.h).  The only file that includes curses.h. */
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <wchar.h>

#include "mmscope/view.h"
#include "screen.h"

#define RUN_MAX 1024

static SCREEN *scr;
static FILE *in_fp, *out_fp;
static int tty_out_fd = -1;
static bool utf8;
static attr_t attrs[MMS_ROLE_NR];

struct role_style {
	short fg, bg;
	attr_t color_attr;	/* added to the pair on colour terminals */
	attr_t mono;		/* the whole look on monochrome terminals / NO_COLOR */
};

/*
 * The palette: one place that says what each role looks like.  -1 is the
 * terminal's default colour (use_default_colors), so the user's background
 * shows through.
 */
static const struct role_style styles[MMS_ROLE_NR] = {
	[MMS_ROLE_NORMAL] = { -1, -1, A_NORMAL, A_NORMAL },
	[MMS_ROLE_TITLE] = { COLOR_BLACK, COLOR_CYAN, A_NORMAL, A_REVERSE },
	[MMS_ROLE_LABEL] = { COLOR_CYAN, -1, A_NORMAL, A_NORMAL },
	[MMS_ROLE_VALUE] = { -1, -1, A_BOLD, A_BOLD },
	[MMS_ROLE_DIM] = { COLOR_BLUE, -1, A_BOLD, A_DIM },
	[MMS_ROLE_TAB] = { -1, -1, A_NORMAL, A_NORMAL },
	[MMS_ROLE_TAB_ACTIVE] = { COLOR_BLACK, COLOR_GREEN, A_BOLD, A_REVERSE | A_BOLD },
	[MMS_ROLE_COLHEAD] = { COLOR_BLACK, COLOR_GREEN, A_NORMAL, A_UNDERLINE | A_BOLD },
	[MMS_ROLE_COLHEAD_SORT] = { COLOR_BLACK, COLOR_CYAN, A_BOLD, A_REVERSE | A_BOLD },
	[MMS_ROLE_SELECTED] = { COLOR_BLACK, COLOR_CYAN, A_NORMAL, A_REVERSE },
	[MMS_ROLE_GOOD] = { COLOR_GREEN, -1, A_NORMAL, A_NORMAL },
	[MMS_ROLE_WARN] = { COLOR_YELLOW, -1, A_BOLD, A_BOLD },
	[MMS_ROLE_ERROR] = { COLOR_RED, -1, A_BOLD, A_BOLD | A_UNDERLINE },
	[MMS_ROLE_SPARK] = { COLOR_CYAN, -1, A_NORMAL, A_NORMAL },
	[MMS_ROLE_BAR] = { COLOR_MAGENTA, -1, A_NORMAL, A_NORMAL },
	[MMS_ROLE_STATUS] = { COLOR_BLACK, COLOR_CYAN, A_NORMAL, A_NORMAL },
	[MMS_ROLE_KEY] = { -1, -1, A_BOLD, A_REVERSE },
	[MMS_ROLE_PROMPT] = { COLOR_YELLOW, -1, A_BOLD, A_BOLD },
	[MMS_ROLE_REC] = { COLOR_WHITE, COLOR_RED, A_BOLD, A_REVERSE | A_BOLD },
};

static void palette(bool color)
{
	for (int r = 0; r < MMS_ROLE_NR; r++) {
		if (!color) {
			attrs[r] = styles[r].mono;
			continue;
		}
		init_pair((short)(r + 1), styles[r].fg, styles[r].bg);
		attrs[r] = COLOR_PAIR(r + 1) | styles[r].color_attr;
	}
}

int screen_init(int tty_in, int tty_out, bool no_color, char *errbuf, size_t errlen)
{
	const char *term = getenv("TERM");
	/* Not inherited by a command the session launches after the screen is up. */
	int fin, fout;

	if (scr)
		return 0;	/* already up: mms_tui_splash() started it */
	fin = fcntl(tty_in, F_DUPFD_CLOEXEC, 3);
	fout = fcntl(tty_out, F_DUPFD_CLOEXEC, 3);
	utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
	in_fp = fin >= 0 ? fdopen(fin, "r") : NULL;
	out_fp = fout >= 0 ? fdopen(fout, "w") : NULL;
	if (!in_fp || !out_fp) {
		snprintf(errbuf, errlen, "cannot open the terminal: %s", strerror(errno));
		goto err_files;
	}
	scr = newterm(NULL, out_fp, in_fp);
	if (!scr) {
		snprintf(errbuf, errlen,
			 "cannot start the TUI on terminal type '%s': unknown to terminfo. "
			 "Set TERM (e.g. TERM=xterm-256color), or use 'mmscope report'",
			 term ? term : "(unset)");
		goto err_files;
	}
	tty_out_fd = fout;
	set_term(scr);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	intrflush(stdscr, FALSE);
	set_escdelay(25);
	curs_set(0);
	mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
	mouseinterval(0);
	if (!no_color && has_colors() && start_color() == OK) {
		use_default_colors();
		palette(true);
	} else {
		palette(false);
	}
	return 0;

err_files:
	if (in_fp)
		fclose(in_fp);
	else if (fin >= 0)
		close(fin);
	if (out_fp)
		fclose(out_fp);
	else if (fout >= 0)
		close(fout);
	in_fp = out_fp = NULL;
	return -ENOTTY;
}

void screen_end(void)
{
	if (!scr)
		return;
	endwin();
	delscreen(scr);
	scr = NULL;
	fclose(in_fp);
	fclose(out_fp);
	in_fp = out_fp = NULL;
	tty_out_fd = -1;
}

bool screen_utf8(void)
{
	return utf8;
}

void screen_size(int *w, int *h)
{
	*w = COLS;
	*h = LINES;
}

void screen_resize(int *w, int *h)
{
	struct winsize ws;

	/* SIGWINCH comes through the session's signalfd, so curses never saw it. */
	if (tty_out_fd >= 0 && !ioctl(tty_out_fd, TIOCGWINSZ, &ws) && ws.ws_row && ws.ws_col)
		resizeterm(ws.ws_row, ws.ws_col);
	screen_size(w, h);
}

void screen_invalidate(void)
{
	clearok(curscr, TRUE);
}

void screen_blit(const struct mms_canvas *c)
{
	wchar_t run[RUN_MAX];

	for (int y = 0; y < c->h && y < LINES; y++) {
		int x = 0;

		while (x < c->w && x < COLS) {
			uint8_t role = mms_canvas_at(c, x, y)->role;
			int n = 0;

			while (x + n < c->w && x + n < COLS && n < RUN_MAX &&
			       mms_canvas_at(c, x + n, y)->role == role) {
				run[n] = (wchar_t)mms_canvas_at(c, x + n, y)->ch;
				n++;
			}
			attrset(attrs[role < MMS_ROLE_NR ? role : 0]);
			/* The bottom-right cell makes curses report an error it handled: ignore. */
			mvaddnwstr(y, x, run, n);
			x += n;
		}
	}
	attrset(A_NORMAL);
	refresh();
}

int screen_key(struct screen_mouse *m)
{
	wint_t wk;
	int r = get_wch(&wk);
	MEVENT ev;

	if (r == ERR)
		return -1;
	if (r == KEY_CODE_YES && wk == KEY_MOUSE) {
		memset(m, 0, sizeof(*m));
		if (getmouse(&ev) != OK)
			return -2;	/* a mouse event we do not use */
		m->x = ev.x;
		m->y = ev.y;
		m->click = ev.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED);
		m->wheel = ev.bstate & BUTTON4_PRESSED ? -1 : ev.bstate & BUTTON5_PRESSED ? 1 : 0;
		return KEY_MOUSE;
	}
	if (r == KEY_CODE_YES)
		return (int)wk;
	/* Non-ASCII characters could collide with curses' key codes: flag them. */
	return wk < 0x80 ? (int)wk : (int)(wk | SCREEN_KEY_CHAR);
}

bool screen_list_key(struct mms_list *l, int key)
{
	long page = l->h_rows > 1 ? l->h_rows - 1 : 1;

	switch (key) {
	case KEY_UP:
	case 'k':
		mms_list_move(l, -1);
		return true;
	case KEY_DOWN:
	case 'j':
		mms_list_move(l, 1);
		return true;
	case KEY_PPAGE:
	case KEY_NPAGE:
		mms_list_move(l, key == KEY_PPAGE ? -page : page);
		return true;
	case KEY_HOME:
	case KEY_END:
		mms_list_home(l, key == KEY_END);
		return true;
	default:
		return false;
	}
}
