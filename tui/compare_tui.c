// SPDX-License-Identifier: GPL-2.0
/*
 * The compare screen's loop (see mms_tui_run_compare() in tui.h): a title
 * line, the compare view (views/compare_view.c) and a status line, one
 * poll() over the terminal and a signalfd (resize, quit).  There is no
 * session and nothing changes underneath: only keys move things.
 */
#include <curses.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "../views/compare_view.h"
#include "mmscope/tui.h"
#include "screen.h"

#define CTRL(c) ((c) & 0x1f)

struct cmp_tui {
	const struct mms_compare *c;
	struct cmpview *v;
	struct mms_canvas *cv;
	unsigned int group;	/* shown group, 0: all */
	char filter[256];
	char saved[256];	/* the filter before editing, for Esc */
	bool prompt;		/* typing a filter */
	bool help;
	char flash[160];
};

static const char *const help_lines[] = {
	"Up Down j k    select a row; its runs show under the table",
	"PgUp PgDn      page up / down        Home End   first / last row",
	"Tab S-Tab      one group only (totals, locks, callers, mmap_lock, vma, rmap)",
	"/              filter rows by name, live; Enter keeps it, Esc drops it",
	"\\              clear the filter",
	"s > <          sort by the next / previous column; I inverts",
	"               CHANGE: biggest change first; VERDICT: significant first",
	"Mouse          click a row, or a column title to sort; the wheel scrolls",
	"^L             repaint               q F10      quit",
	"",
	"Colours: green = a wait significantly lower, red = significantly higher,",
	"yellow = a significant change that is neither better nor worse (rates,",
	"batch sizes), dim = within noise.  Verdicts come from Welch's t-test over",
	"the runs of each side, significant at p < alpha (in the title).",
};

static void draw(struct cmp_tui *t)
{
	struct mms_canvas *c = t->cv;
	char title[256];
	int y = c->h - 1, x = 0;

	mms_canvas_clear(c);
	snprintf(title, sizeof(title), " mmscope compare   %s: %d run%s   %s: %d run%s   "
		 "Welch's t-test, p < %.2f", t->c->label[0], t->c->runs[0],
		 t->c->runs[0] == 1 ? "" : "s", t->c->label[1], t->c->runs[1],
		 t->c->runs[1] == 1 ? "" : "s", t->c->alpha);
	mms_canvas_fill(c, 0, 0, c->w, ' ', MMS_ROLE_TITLE);
	mms_canvas_put(c, 0, 0, MMS_ROLE_TITLE, title, c->w);
	if (t->help) {
		mms_canvas_put(c, 0, 1, MMS_ROLE_TITLE, "compare keys (any key closes this)", c->w);
		for (size_t i = 0; i < sizeof(help_lines) / sizeof(help_lines[0]); i++)
			if ((int)i + 2 < y)
				mms_canvas_put(c, 1, (int)i + 2, MMS_ROLE_NORMAL, help_lines[i],
					       c->w - 1);
	} else if (c->h > 2) {
		cmpview_draw(t->v, c, 1, c->h - 2);
	}
	mms_canvas_fill(c, 0, y, c->w, ' ', MMS_ROLE_STATUS);
	if (t->prompt) {
		mms_canvas_fill(c, 0, y, c->w, ' ', MMS_ROLE_NORMAL);
		x = mms_canvas_put(c, 0, y, MMS_ROLE_PROMPT, "Filter: ", c->w);
		x += mms_canvas_put(c, x, y, MMS_ROLE_NORMAL, t->filter, c->w - x - 1);
		mms_canvas_put(c, x, y, MMS_ROLE_KEY, "_", 1);
	} else if (t->flash[0]) {
		mms_canvas_fill(c, 0, y, c->w, ' ', MMS_ROLE_NORMAL);
		mms_canvas_put(c, 0, y, MMS_ROLE_PROMPT, t->flash, c->w);
	} else {
		static const char *const hints[] = {
			"F1", "Help", "Tab", "Group", "/", "Filter", "s", "Sort", "I", "Invert",
			"q", "Quit", NULL,
		};

		for (int i = 0; hints[i] && x < c->w; i += 2) {
			x += mms_canvas_put(c, x, y, MMS_ROLE_KEY, hints[i], c->w - x);
			x += mms_canvas_put(c, x, y, MMS_ROLE_STATUS, " ", c->w - x);
			x += mms_canvas_put(c, x, y, MMS_ROLE_STATUS, hints[i + 1], c->w - x);
			x += mms_canvas_put(c, x, y, MMS_ROLE_STATUS, "  ", c->w - x);
		}
	}
	screen_blit(c);
}

static void refilter(struct cmp_tui *t)
{
	cmpview_update(t->v, t->group, t->filter);
}

static bool prompt_key(struct cmp_tui *t, int key)
{
	size_t n = strlen(t->filter);

	if (key == 27) {
		snprintf(t->filter, sizeof(t->filter), "%s", t->saved);
		t->prompt = false;
	} else if (key == '\r' || key == '\n' || key == KEY_ENTER) {
		t->prompt = false;
	} else if (key == KEY_BACKSPACE || key == 127 || key == CTRL('h')) {
		/* A whole UTF-8 character. */
		while (n && (t->filter[n - 1] & 0xc0) == 0x80)
			n--;
		t->filter[n ? n - 1 : 0] = 0;
	} else if (key == CTRL('u')) {
		t->filter[0] = 0;
	} else if (key >= 0x20 && key < 0x7f && n + 1 < sizeof(t->filter)) {
		t->filter[n] = (char)key;
		t->filter[n + 1] = 0;
	} else {
		return false;
	}
	refilter(t);
	return true;
}

static void mouse(struct cmp_tui *t, const struct screen_mouse *m)
{
	struct mms_list *l = cmpview_list(t->v);

	if (m->wheel)
		mms_list_move(l, m->wheel * 3);
	else if (m->click && mms_list_click(l, m->x, m->y) == MMS_CLICK_HEAD)
		refilter(t);
}

/* Returns false to quit. */
static bool key(struct cmp_tui *t, int k, const struct screen_mouse *m)
{
	struct mms_list *l = cmpview_list(t->v);

	t->flash[0] = 0;
	if (k == KEY_MOUSE) {
		t->help = false;
		mouse(t, m);
		return true;
	}
	if (t->prompt) {
		prompt_key(t, k);
		return true;
	}
	if (t->help) {
		t->help = false;
		return k != 'q' && k != 'Q' && k != KEY_F(10);
	}
	if (screen_list_key(l, k))
		return true;
	switch (k) {
	case 'q':
	case 'Q':
	case KEY_F(10):
		return false;
	case '?':
	case 'h':
	case KEY_F(1):
		t->help = true;
		break;
	case '\t':
	case KEY_BTAB:
		t->group = cmpview_next_group(t->v, t->group, k == '\t' ? 1 : -1);
		refilter(t);
		snprintf(t->flash, sizeof(t->flash), "showing %s",
			 t->group ? mms_compare_group_name(t->group) : "all groups");
		break;
	case '/':
	case KEY_F(3):
		snprintf(t->saved, sizeof(t->saved), "%s", t->filter);
		t->prompt = true;
		break;
	case '\\':
		t->filter[0] = 0;
		refilter(t);
		break;
	case 's':
	case '>':
	case '.':
	case KEY_F(6):
	case '<':
	case ',':
		snprintf(t->flash, sizeof(t->flash), "sorted by %s",
			 cmpview_sort_step(t->v, k == '<' || k == ',' ? -1 : 1));
		break;
	case 'I':
		l->invert = !l->invert;
		refilter(t);
		break;
	case CTRL('l'):
		screen_invalidate();
		break;
	default:
		break;
	}
	return true;
}

static int loop(struct cmp_tui *t, int tty_in, int sig_fd, char *errbuf, size_t errlen)
{
	for (;;) {
		struct pollfd fds[2] = {
			{ .fd = tty_in, .events = POLLIN },
			{ .fd = sig_fd, .events = POLLIN },
		};
		struct signalfd_siginfo si;
		struct screen_mouse m;
		int k, w, h;

		draw(t);
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			snprintf(errbuf, errlen, "poll: %s", strerror(errno));
			return -errno;
		}
		while (read(sig_fd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo != SIGWINCH)
				return 0;	/* Ctrl-C, kill, hangup: leave cleanly */
			screen_resize(&w, &h);
			if (mms_canvas_resize(t->cv, w, h)) {
				snprintf(errbuf, errlen, "out of memory for a %dx%d screen", w, h);
				return -ENOMEM;
			}
		}
		if (fds[0].revents & (POLLHUP | POLLERR)) {
			snprintf(errbuf, errlen, "the terminal went away");
			return -EIO;
		}
		while ((k = screen_key(&m)) != -1) {
			if (k == KEY_RESIZE) {
				screen_size(&w, &h);
				if (mms_canvas_resize(t->cv, w, h))
					return -ENOMEM;
			} else if (k != -2 && !key(t, k, &m)) {
				return 0;
			}
		}
	}
}

int mms_tui_run_compare(const struct mms_compare *c, struct mms_tui_term *term, bool no_color,
			char *errbuf, size_t errlen)
{
	struct cmp_tui t = { .c = c };
	sigset_t mask, old;
	int err, sig_fd, w, h;

	errbuf[0] = 0;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigaddset(&mask, SIGWINCH);
	if (sigprocmask(SIG_BLOCK, &mask, &old)) {
		snprintf(errbuf, errlen, "sigprocmask: %s", strerror(errno));
		return -errno;
	}
	sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sig_fd < 0) {
		err = -errno;
		snprintf(errbuf, errlen, "signalfd: %s", strerror(errno));
		goto err_mask;
	}
	err = cmpview_create(c, &t.v);
	if (err) {
		snprintf(errbuf, errlen, "out of memory for the compare view");
		goto err_fd;
	}
	err = screen_init(term->tty_in, term->tty_out, no_color, errbuf, errlen);
	if (err)
		goto err_view;
	screen_size(&w, &h);
	err = mms_canvas_create(w, h, screen_utf8(), &t.cv);
	if (err) {
		snprintf(errbuf, errlen, "out of memory for a %dx%d screen", w, h);
		goto err_screen;
	}
	err = loop(&t, term->tty_in, sig_fd, errbuf, errlen);
	mms_canvas_destroy(t.cv);
err_screen:
	screen_end();
err_view:
	cmpview_destroy(t.v);
err_fd:
	close(sig_fd);
err_mask:
	sigprocmask(SIG_SETMASK, &old, NULL);
	return err;
}
