// SPDX-License-Identifier: GPL-2.0
/*
 * The TUI loop (see include/mmscope/tui.h): one poll() over the session's
 * descriptors and the terminal.  Ticks update the active view; keys go to
 * the action table; every change ends in one frame drawn into the canvas
 * and blitted.  In replay the loop paces the recording itself.  The compare
 * screen has no session: the loop then polls a signalfd of its own instead.
 */
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "tui_int.h"

#define MAX_FDS 40

const double tui_speeds[] = { 0.25, 0.5, 1, 2, 4, 8, 16 };
const int tui_nr_speeds = sizeof(tui_speeds) / sizeof(tui_speeds[0]);
#define SPEED_1X 2

uint64_t tui_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void tui_flash(struct tui *t, bool error, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->flash, sizeof(t->flash), fmt, ap);
	va_end(ap);
	t->flash_error = error;
	t->flash_until = tui_now_ms() + (error ? 6000 : 3000);
}

struct mms_list *tui_list(struct tui *t)
{
	const struct mms_view *v = t->views[t->active];

	return v->list ? v->list(t->priv[t->active]) : NULL;
}

void tui_switch(struct tui *t, int view)
{
	if (view < 0 || view >= t->nr_views)
		return;
	t->active = view;
	t->help = false;
}

/* ---- the terminal, kept aside ---- */

static struct mms_tui_term *crash_term;

/* A crash must not leave the terminal raw: restore it, then die as we would have. */
static void crash(int sig)
{
	screen_end();
	if (crash_term)
		mms_tui_term_release(crash_term);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* An unnamed file for what is written while the TUI runs. */
static int capture_file(void)
{
	char path[] = "/tmp/mmscope-tui.XXXXXX";
	int fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd >= 0 || errno != EOPNOTSUPP)
		return fd;
	fd = mkostemp(path, O_CLOEXEC);	/* file systems without O_TMPFILE */
	if (fd >= 0)
		unlink(path);
	return fd;
}

int mms_tui_term_claim(struct mms_tui_term *term, char *errbuf, size_t errlen)
{
	int null_fd;

	memset(term, 0, sizeof(*term));
	term->tty_in = term->tty_out = term->capture = -1;
	term->saved[0] = term->saved[1] = term->saved[2] = -1;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		snprintf(errbuf, errlen, "the live TUI needs a terminal on stdin and stdout; for "
			 "text output use 'mmscope report', to save data 'mmscope record -o FILE'");
		return -ENOTTY;
	}
	term->capture = capture_file();
	null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	for (int i = 0; i < 3; i++)
		term->saved[i] = fcntl(i, F_DUPFD_CLOEXEC, 10);
	term->tty_in = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 10);
	term->tty_out = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 10);
	if (term->capture < 0 || null_fd < 0 || term->tty_in < 0 || term->tty_out < 0 ||
	    term->saved[0] < 0 || term->saved[1] < 0 || term->saved[2] < 0) {
		int e = errno;

		snprintf(errbuf, errlen, "cannot set the terminal aside: %s", strerror(e));
		if (null_fd >= 0)
			close(null_fd);
		mms_tui_term_release(term);
		return -e;
	}
	/*
	 * From here on, what anyone writes (libbpf, a launched command) goes to
	 * the capture file and is shown after the TUI ends, and nobody but the
	 * TUI reads the keyboard.
	 */
	dup2(null_fd, STDIN_FILENO);
	dup2(term->capture, STDOUT_FILENO);
	dup2(term->capture, STDERR_FILENO);
	close(null_fd);
	term->claimed = true;
	crash_term = term;
	signal(SIGSEGV, crash);
	signal(SIGBUS, crash);
	signal(SIGABRT, crash);
	signal(SIGFPE, crash);
	return 0;
}

int mms_tui_splash(struct mms_tui_term *term, bool no_color, const char *target, char *errbuf,
		   size_t errlen)
{
	struct mms_canvas *c;
	int w, h, err;

	err = screen_init(term->tty_in, term->tty_out, no_color, errbuf, errlen);
	if (err)
		return err;
	screen_size(&w, &h);
	if (mms_canvas_create(w, h, screen_utf8(), &c))
		return 0;	/* no first frame then; the TUI's own will say why */
	mms_canvas_fill(c, 0, 0, c->w, ' ', MMS_ROLE_TITLE);
	w = mms_canvas_put(c, 0, 0, MMS_ROLE_TITLE, " mmscope  ", c->w);
	mms_canvas_put(c, w, 0, MMS_ROLE_TITLE, target, c->w - w);
	mms_canvas_put(c, 1, h > 2 ? 2 : h - 1, MMS_ROLE_DIM,
		       screen_utf8() ? "starting sources\u2026" : "starting sources...", c->w - 1);
	screen_blit(c);
	mms_canvas_destroy(c);
	return 0;
}

void mms_tui_term_release(struct mms_tui_term *term)
{
	char buf[8192];
	ssize_t n;
	off_t off = 0;

	screen_end();	/* a start that failed after the first frame */
	if (term->claimed) {
		fflush(stdout);
		fflush(stderr);
		for (int i = 0; i < 3; i++)
			dup2(term->saved[i], i);
		term->claimed = false;
	}
	if (term->capture >= 0) {
		while ((n = pread(term->capture, buf, sizeof(buf), off)) > 0) {
			if (write(STDERR_FILENO, buf, (size_t)n) != n)
				break;
			off += n;
		}
		close(term->capture);
		term->capture = -1;
	}
	for (int i = 0; i < 3; i++)
		if (term->saved[i] >= 0) {
			close(term->saved[i]);
			term->saved[i] = -1;
		}
	if (term->tty_in >= 0)
		close(term->tty_in);
	if (term->tty_out >= 0)
		close(term->tty_out);
	term->tty_in = term->tty_out = -1;
	if (crash_term == term)
		crash_term = NULL;
}

/* ---- the loop ---- */

static int views_create(struct tui *t, char *errbuf, size_t errlen)
{
	for (int i = 0; mms_views[i] && i < TUI_MAX_VIEWS; i++) {
		int err = mms_views[i]->create(&t->priv[i]);

		if (err) {
			snprintf(errbuf, errlen, "cannot create the %s view: %s",
				 mms_views[i]->name, strerror(-err));
			return err;
		}
		t->views[i] = mms_views[i];
		t->nr_views = i + 1;
	}
	return 0;
}

static void views_destroy(struct tui *t)
{
	for (int i = 0; i < t->nr_views; i++)
		t->views[i]->destroy(t->priv[i]);
	t->nr_views = 0;
}

void tui_env_refresh(struct tui *t)
{
	const struct mms_options *o;

	if (!t->s) {	/* the compare screen: no store, only the filter */
		memset(&t->env, 0, sizeof(t->env));
		t->env.filter = t->filter;
		return;
	}
	o = mms_session_options(t->s);
	mms_view_env_init(&t->env, t->st, t->paused ? t->paused_seq : -1, t->range);
	t->env.live = !t->cfg->replay;
	t->env.fam = t->cfg->fam ? t->cfg->fam : mms_session_family(t->s, 0);
	t->env.filter = t->filter;
	t->env.stack_skip = o->stack_skip;
	if (t->paused && t->env.valid)
		t->paused_seq = (int64_t)mms_store_at(t->st, t->env.cur)->seq;
}

/* Updates the active view when something changed since it last looked; then draws. */
static int render(struct tui *t)
{
	uint32_t from, to;
	int err;

	tui_env_refresh(t);
	/* After a replay seek: what the view and the header read, before they read it. */
	if (mms_view_span(t->views[t->active], &t->env, &from, &to))
		mms_store_load(t->st, from, to);
	if (t->view_gen[t->active] != t->gen) {
		err = t->views[t->active]->update(t->priv[t->active], &t->env);
		if (err)
			tui_flash(t, true, "%s view: %s", t->views[t->active]->name,
				  strerror(-err));
		t->view_gen[t->active] = t->gen;
	}
	tui_draw_frame(t);
	screen_blit(t->c);
	if (t->s && t->marks < 2) {
		const struct mms_knobs *k = &mms_session_options(t->s)->knobs;

		if (!t->marks) {
			mms_start_mark(k, "tui views");
			t->marks = 1;
		}
		if (mms_store_count(t->st)) {
			mms_start_mark(k, "tui frame with an interval");
			t->marks = 2;
		}
	}
	return 0;
}

static int on_resize(struct tui *t, bool ask_tty)
{
	int w, h;

	/*
	 * SIGWINCH (from the session's signalfd): ask the terminal and tell
	 * curses, which queues a KEY_RESIZE.  That KEY_RESIZE, or one curses
	 * found itself, only needs the size curses already has: calling
	 * resizeterm() for it again can queue another one, forever.
	 */
	if (ask_tty)
		screen_resize(&w, &h);
	else
		screen_size(&w, &h);
	if (w == t->c->w && h == t->c->h)
		return 0;
	t->w = w;
	t->h = h;
	return mms_canvas_resize(t->c, w, h);
}

/* Replay pacing: feeds the next interval when its recorded length has passed. */
static unsigned int replay_tick(struct tui *t)
{
	const struct mms_tui_replay_ops *r = t->cfg->replay;
	void *ctx = t->cfg->replay_ctx;
	uint64_t now = tui_now_ms();
	uint32_t pos;
	int n;

	if (!t->playing || now < t->next_due)
		return RX_NONE;
	pos = r->pos(ctx);
	if (pos >= r->count(ctx)) {
		t->playing = false;
		tui_flash(t, false, "end of the recording (Home: back to the start)");
		return RX_REDRAW;
	}
	n = r->step(ctx, 1);
	if (n < 0) {
		t->playing = false;
		tui_flash(t, true, "replay stopped: %s", strerror(-n));
		return RX_REDRAW;
	}
	t->next_due = now + (uint64_t)((double)r->dur_ns(ctx, pos) / 1e6 / tui_speeds[t->speed]);
	return RX_UPDATE;
}

static int poll_timeout(const struct tui *t)
{
	uint64_t now = tui_now_ms(), due = UINT64_MAX;

	if (t->cfg->replay && t->playing)
		due = t->next_due;
	if (t->flash[0] && t->flash_until > now && t->flash_until < due)
		due = t->flash_until;	/* to take the message away on time */
	if (due == UINT64_MAX)
		return -1;
	return due <= now ? 0 : (int)(due - now);
}

static unsigned int on_session(struct tui *t, enum mms_session_event ev, char *errbuf,
			       size_t errlen)
{
	switch (ev) {
	case MMS_EV_TICK:
		return RX_UPDATE;
	case MMS_EV_QUIT:
		return RX_QUIT;
	case MMS_EV_RESIZE:	/* loop() takes it with mms_session_take_winch() */
		return RX_NONE;
	case MMS_EV_TARGET_GONE:
		/* Keep the data on screen: the point is to look at it now. */
		mms_session_target_gone(t->s, t->target_note, sizeof(t->target_note));
		tui_flash(t, false, "%s; the data stays until you quit (q)", t->target_note);
		return RX_UPDATE;
	default:
		return RX_NONE;
	}
}

/* Without a session the loop takes the signals itself: see on_signals(). */
static int sig_open(struct tui *t, sigset_t *old, char *errbuf, size_t errlen)
{
	sigset_t mask;
	int err;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigaddset(&mask, SIGWINCH);
	if (sigprocmask(SIG_BLOCK, &mask, old)) {
		err = -errno;
		snprintf(errbuf, errlen, "sigprocmask: %s", strerror(-err));
		return err;
	}
	t->sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (t->sig_fd < 0) {
		err = -errno;
		snprintf(errbuf, errlen, "signalfd: %s", strerror(-err));
		sigprocmask(SIG_SETMASK, old, NULL);
		return err;
	}
	return 0;
}

/* RX_QUIT for Ctrl-C, kill or hangup (a clean end); *winch for SIGWINCH. */
static unsigned int on_signals(struct tui *t, bool *winch)
{
	struct signalfd_siginfo si;
	unsigned int rx = RX_NONE;

	while (read(t->sig_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGWINCH)
			*winch = true;
		else
			rx = RX_QUIT;
	}
	return rx;
}

static int loop(struct tui *t, char *errbuf, size_t errlen)
{
	struct pollfd fds[MAX_FDS];
	bool dirty = true;

	for (;;) {
		unsigned int rx = RX_NONE;
		int n = 0, key, stdin_idx;
		struct screen_mouse m;
		bool flash_on = t->flash[0] && tui_now_ms() < t->flash_until, winch = false;

		if (dirty)
			render(t);
		dirty = false;
		if (t->s)
			n = mms_session_pollfds(t->s, fds, MAX_FDS - 1);
		else
			fds[n++] = (struct pollfd){ .fd = t->sig_fd, .events = POLLIN };
		stdin_idx = n;
		fds[n++] = (struct pollfd){ .fd = t->cfg->term->tty_in, .events = POLLIN };
		if (poll(fds, (nfds_t)n, poll_timeout(t)) < 0) {
			if (errno == EINTR)
				continue;
			snprintf(errbuf, errlen, "poll: %s", strerror(errno));
			return -errno;
		}
		if (t->s) {
			rx |= on_session(t, mms_session_dispatch(t->s, fds, stdin_idx), errbuf,
					 errlen);
			winch = mms_session_take_winch(t->s);
		} else {
			rx |= on_signals(t, &winch);
		}
		if (winch) {
			if (on_resize(t, true)) {
				snprintf(errbuf, errlen, "out of memory resizing the screen");
				rx |= RX_QUIT;
			}
			rx |= RX_REDRAW;
		}
		/*
		 * The terminal hung up: the same end as the SIGHUP that comes with
		 * it (in either order), so the same exit status either way.
		 */
		if (fds[stdin_idx].revents & (POLLHUP | POLLERR))
			return 0;
		while ((key = screen_key(&m)) != -1) {
			if (key == KEY_RESIZE) {	/* curses has the new size already */
				if (on_resize(t, false)) {
					snprintf(errbuf, errlen, "out of memory resizing the screen");
					rx |= RX_QUIT;
				}
				rx |= RX_REDRAW;
			}
			else if (key != -2)
				rx |= tui_key(t, key, &m);
		}
		if (t->cfg->replay)
			rx |= replay_tick(t);
		if (rx & RX_QUIT)
			return errbuf[0] ? -EIO : 0;
		if (rx & RX_UPDATE)
			t->gen++;
		/* A message that just expired needs a frame without it. */
		if (flash_on && tui_now_ms() >= t->flash_until)
			rx |= RX_REDRAW;
		dirty = rx != RX_NONE;
	}
}

int mms_tui_run(const struct mms_tui_config *cfg, char *errbuf, size_t errlen)
{
	struct tui *t = calloc(1, sizeof(*t));
	sigset_t old_mask;
	int err;

	errbuf[0] = 0;
	sigemptyset(&old_mask);
	if (!t) {
		snprintf(errbuf, errlen, "out of memory");
		return -ENOMEM;
	}
	t->cfg = cfg;
	t->s = cfg->cmp ? NULL : cfg->s;
	t->st = t->s ? mms_session_store(t->s) : NULL;
	t->sig_fd = -1;
	t->back = -1;
	t->speed = SPEED_1X;
	t->playing = cfg->replay != NULL;
	t->gen = 1;
	if (cfg->cmp) {
		err = sig_open(t, &old_mask, errbuf, errlen);
		if (err)
			goto err_sig;
	}
	err = cfg->cmp ? tui_compare_open(t, errbuf, errlen) : views_create(t, errbuf, errlen);
	if (err)
		goto err_views;
	err = screen_init(cfg->term->tty_in, cfg->term->tty_out, cfg->no_color, errbuf, errlen);
	if (err)
		goto err_views;
	screen_size(&t->w, &t->h);
	err = mms_canvas_create(t->w, t->h, screen_utf8(), &t->c);
	if (err) {
		snprintf(errbuf, errlen, "out of memory for a %dx%d screen", t->w, t->h);
		goto err_screen;
	}
	if (cfg->replay && cfg->replay->pos(cfg->replay_ctx) == 0)
		cfg->replay->step(cfg->replay_ctx, 1);	/* something to show at once */
	err = loop(t, errbuf, errlen);
	mms_canvas_destroy(t->c);
err_screen:
	screen_end();
err_views:
	views_destroy(t);
	if (t->sig_fd >= 0) {
		close(t->sig_fd);
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
	}
err_sig:
	free(t);
	return err;
}
