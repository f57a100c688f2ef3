// SPDX-License-Identifier: GPL-2.0
/*
 * The session: sources + store + timer + signals + target process, on one
 * poll() loop.  See include/mmscope/session.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mmscope/collectors.h"
#include "mmscope/session.h"

#define MAX_SOURCES 16
#define MAX_TAPS 4

struct mms_session {
	struct mms_options opts;	/* private copy: the target pid is filled in */
	struct mms_store *store;
	struct mms_source *src[MAX_SOURCES];
	bool src_failed[MAX_SOURCES];	/* drain failed: not drained or polled again */
	int nr_src;
	struct mms_family_status fam[MMS_FAM_NR];
	struct mms_session_info info;
	struct {
		mms_tap_fn fn;
		void *ctx;
	} taps[MAX_TAPS];
	int nr_taps;

	int timer_fd, sig_fd, pid_fd, end_fd;
	uint32_t interval_ms;
	uint32_t first_ms;		/* the first interval's length; 0: interval_ms */
	uint64_t iv_start_mono, iv_start_real;
	uint64_t end_mono;		/* --duration deadline (CLOCK_MONOTONIC), 0: none */
	bool started;
	int quit_sig;
	uint64_t lost[MMS_LOST_NR];

	pid_t child;		/* launched command, 0: none */
	int go_fd;		/* write end: lets the child exec */
	int child_status;	/* exit status, -1 while running */
	bool target_gone;
	bool winch;		/* a SIGWINCH not yet taken (mms_session_take_winch) */
	bool gone_reported;
	sigset_t old_mask;
};

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int pidfd_open_(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

int mms_session_create(const struct mms_options *opts, struct mms_session **out)
{
	struct mms_store_opts so = { .window = opts->window };
	struct mms_session *s = calloc(1, sizeof(*s));
	struct utsname u;
	int err;

	if (!s)
		return -ENOMEM;
	s->opts = *opts;
	s->timer_fd = s->sig_fd = s->pid_fd = s->end_fd = s->go_fd = -1;
	s->child_status = -1;
	s->interval_ms = opts->interval_ms ? opts->interval_ms : 1000;
	err = mms_store_create(&so, &s->store);
	if (err) {
		free(s);
		return err;
	}
	if (!uname(&u)) {
		snprintf(s->info.host, sizeof(s->info.host), "%s", u.nodename);
		snprintf(s->info.kernel, sizeof(s->info.kernel), "%s", u.release);
	}
	snprintf(s->info.target, sizeof(s->info.target), "system");
	*out = s;
	return 0;
}

static void read_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	buf[0] = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		n = 0;
	buf[n] = 0;
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = 0;
}

/*
 * Forks the command stopped behind a pipe, so every source can be set up for
 * its pid before it runs.  exec failure comes back through a CLOEXEC pipe.
 */
static int launch(struct mms_session *s, char *errbuf, size_t errlen)
{
	int go[2], report[2], e = 0;
	ssize_t n;
	char c;

	if (pipe2(go, O_CLOEXEC) || pipe2(report, O_CLOEXEC)) {
		snprintf(errbuf, errlen, "cannot launch %s: pipe: %s", s->opts.cmd[0],
			 strerror(errno));
		return -errno;
	}
	s->child = fork();
	if (s->child < 0) {
		e = errno;
		snprintf(errbuf, errlen, "cannot launch %s: fork: %s", s->opts.cmd[0], strerror(e));
		return -e;
	}
	if (!s->child) {
		sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
		close(go[1]);
		close(report[0]);
		/* Wait for the go byte; EOF means the parent gave up. */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		mms_privileges_before_exec();
		execvp(s->opts.cmd[0], s->opts.cmd);
		e = errno;
		n = write(report[1], &e, sizeof(e));
		(void)n;
		_exit(127);
	}
	close(go[0]);
	close(report[1]);
	s->go_fd = go[1];
	/* Keep the report pipe: start() reads it after letting the child go. */
	s->end_fd = report[0];
	s->opts.pid = s->child;
	snprintf(s->info.target, sizeof(s->info.target), "cmd: %s (pid %d)", s->opts.cmd[0],
		 s->child);
	return 0;
}

static int check_pid(struct mms_session *s, char *errbuf, size_t errlen)
{
	char comm[32];

	if (kill(s->opts.pid, 0) && errno == ESRCH) {
		snprintf(errbuf, errlen, "process %d does not exist", s->opts.pid);
		return -ESRCH;
	}
	read_comm(s->opts.pid, comm, sizeof(comm));
	snprintf(s->info.target, sizeof(s->info.target), "pid %d (%s)", s->opts.pid,
		 comm[0] ? comm : "?");
	return 0;
}

/*
 * The BPF lock source takes the longest to prepare (its verifier pass is
 * most of it) and shares nothing with the other families' sources, so it
 * prepares in a thread of its own while they prepare here.  Only it: the
 * perf fallback finds its events among the process's open fds, which would
 * race with others opening theirs.
 */
struct early {
	const struct mms_source_ops *ops;	/* NULL: nothing prepared early */
	struct mms_source *src;
	int err;
	pthread_t thread;
	bool threaded;
	const struct mms_session *s;
};

static void mark_prepared(const struct mms_session *s, const struct mms_source_ops *ops, int err)
{
	mms_start_mark(&s->opts.knobs, "prepared %s%s", ops->name, err ? " (failed)" : "");
}

static void *early_prepare(void *arg)
{
	struct early *e = arg;

	e->err = mms_source_prepare(e->src);
	mark_prepared(e->s, e->ops, e->err);
	return NULL;
}

static void early_begin(struct mms_session *s, struct early *e)
{
	sigset_t every, old;

	*e = (struct early){ .s = s };
	if (!mms_collectors_wanted(&mms_lock_bpf_ops, &s->opts))
		return;
	e->ops = &mms_lock_bpf_ops;
	e->err = mms_source_new(e->ops, &s->opts, &e->src);
	if (e->err)
		return;
	/* Signals stay with this thread (the signalfd). */
	sigfillset(&every);
	pthread_sigmask(SIG_SETMASK, &every, &old);
	e->threaded = !pthread_create(&e->thread, NULL, early_prepare, e);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!e->threaded)
		early_prepare(e);
}

static void early_end(struct early *e)
{
	if (e->threaded)
		pthread_join(e->thread, NULL);
	e->threaded = false;
}

static void open_family(struct mms_session *s, enum mms_metric_family f, struct early *e)
{
	const struct mms_source_ops *const *chain = mms_collectors_chain(f);
	struct mms_family_status *st = &s->fam[f];
	size_t used = 0;

	for (; *chain; chain++) {
		struct mms_source *src = NULL;
		int err;

		if (!mms_collectors_wanted(*chain, &s->opts))
			continue;
		if (e && e->ops == *chain) {
			early_end(e);
			src = e->src;
			err = e->err;
			e->ops = NULL;
		} else {
			err = mms_source_new(*chain, &s->opts, &src);
			if (!err)
				err = mms_source_prepare(src);
			mark_prepared(s, *chain, err);
		}
		if (!err && s->nr_src < MAX_SOURCES) {
			s->src[s->nr_src++] = src;
			st->source = (*chain)->name;
			st->backend = (*chain)->backend;
			snprintf(st->why, sizeof(st->why), "%s", src->note);
			return;
		}
		used += (size_t)snprintf(st->why + used, used < sizeof(st->why) ?
					 sizeof(st->why) - used : 0, "%s%s", used ? "; " : "",
					 src ? src->why : "out of memory");
		mms_source_destroy(src);
		if (used >= sizeof(st->why))
			used = sizeof(st->why) - 1;
	}
	if (!st->why[0])
		snprintf(st->why, sizeof(st->why), MMS_WHY_OFF);
}

/* The lock family last (its source prepared meanwhile), its source first as before. */
static void open_families(struct mms_session *s)
{
	struct early e;
	int first;

	early_begin(s, &e);
	for (int f = 0; f < MMS_FAM_NR; f++)
		if (f != MMS_FAM_LOCK)
			open_family(s, f, NULL);
	first = s->nr_src;
	open_family(s, MMS_FAM_LOCK, &e);
	if (e.ops) {	/* not in the lock chain after all */
		early_end(&e);
		mms_source_destroy(e.src);
	}
	if (s->nr_src > first && first > 0) {
		struct mms_source *lock = s->src[first];

		memmove(&s->src[1], &s->src[0], (size_t)first * sizeof(s->src[0]));
		s->src[0] = lock;
	}
}

static int setup_fds(struct mms_session *s, char *errbuf, size_t errlen)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGWINCH);
	sigaddset(&mask, SIGPIPE);
	if (sigprocmask(SIG_BLOCK, &mask, &s->old_mask)) {
		snprintf(errbuf, errlen, "sigprocmask: %s", strerror(errno));
		return -errno;
	}
	s->sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	s->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (s->sig_fd < 0 || s->timer_fd < 0) {
		snprintf(errbuf, errlen, "signalfd/timerfd: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

int mms_session_open(struct mms_session *s, char *errbuf, size_t errlen)
{
	int err = setup_fds(s, errbuf, errlen);

	if (err)
		return err;
	mms_start_mark(&s->opts.knobs, "session open");
	mms_tracefs_ensure();
	if (s->opts.cmd) {
		err = launch(s, errbuf, errlen);
		if (err)
			return err;
	} else if (s->opts.pid) {
		err = check_pid(s, errbuf, errlen);
		if (err)
			return err;
	}
	mms_collectors_ksyms_prefetch();	/* the command is forked: threads are safe */
	open_families(s);
	mms_collectors_btf_release();	/* the sources are chosen */
	mms_start_mark(&s->opts.knobs, "sources prepared");
	if (!s->fam[MMS_FAM_LOCK].source) {
		snprintf(errbuf, errlen, "no lock contention source works: %s",
			 s->fam[MMS_FAM_LOCK].why);
		return -ENOTSUP;
	}
	return 0;
}

int mms_session_open_source(struct mms_session *s, struct mms_source *src, char *errbuf,
			    size_t errlen)
{
	int err = setup_fds(s, errbuf, errlen);

	if (err)
		return err;
	s->src[s->nr_src++] = src;
	s->fam[src->ops->family].source = src->ops->name;
	s->fam[src->ops->family].backend = src->ops->backend;
	return 0;
}

static int arm_timer(struct mms_session *s, uint32_t first_ms)
{
	struct itimerspec its = { 0 };

	its.it_interval.tv_sec = s->interval_ms / 1000;
	its.it_interval.tv_nsec = (long)(s->interval_ms % 1000) * 1000000L;
	its.it_value.tv_sec = first_ms / 1000;
	its.it_value.tv_nsec = (long)(first_ms % 1000) * 1000000L;
	return timerfd_settime(s->timer_fd, 0, &its, NULL) ? -errno : 0;
}

int mms_session_start(struct mms_session *s, char *errbuf, size_t errlen)
{
	int err;

	if (errlen)
		errbuf[0] = 0;
	for (int i = 0; i < s->nr_src; i++) {
		err = mms_source_start(s->src[i]);
		if (err)
			return err;
		mms_start_mark(&s->opts.knobs, "started %s", s->src[i]->ops->name);
	}
	/*
	 * Before the first interval and before the command runs: nothing seen
	 * yet.  Symbols first: kallsyms shows 0 addresses once CAP_SYSLOG is gone.
	 */
	mms_collectors_ksyms();
	mms_start_mark(&s->opts.knobs, "kernel symbols");
	err = mms_privileges_drop(errbuf, errlen);
	if (err)
		return err;
	s->iv_start_mono = now_ns(CLOCK_MONOTONIC);
	s->iv_start_real = now_ns(CLOCK_REALTIME);
	s->info.start_ns = s->iv_start_real;
	if (!mms_store_begin(s->store, s->iv_start_real))
		return -EBUSY;
	err = arm_timer(s, s->first_ms ? s->first_ms : s->interval_ms);
	if (err)
		return err;
	if (s->child) {
		char go = 1;
		int e = 0;

		if (write(s->go_fd, &go, 1) != 1)
			return -errno;
		close(s->go_fd);
		s->go_fd = -1;
		/* EOF on the report pipe: exec succeeded.  An errno: it failed. */
		if (read(s->end_fd, &e, sizeof(e)) == sizeof(e)) {
			close(s->end_fd);
			s->end_fd = -1;
			waitpid(s->child, NULL, 0);
			s->child = 0;
			return -e;
		}
		close(s->end_fd);
		s->end_fd = -1;
	}
	if (s->opts.pid) {
		s->pid_fd = pidfd_open_(s->opts.pid);
		/*
		 * Gone (and reaped) while the sources loaded: a ready descriptor in
		 * its place ends the run the way the pidfd would have.
		 */
		if (s->pid_fd < 0 && errno == ESRCH)
			s->pid_fd = eventfd(1, EFD_CLOEXEC);
	}
	if (s->opts.duration_s > 0) {
		struct itimerspec its = { 0 };
		uint64_t ns = (uint64_t)(s->opts.duration_s * 1e9);

		s->end_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (s->end_fd < 0)
			return -errno;
		s->end_mono = now_ns(CLOCK_MONOTONIC) + ns;
		its.it_value.tv_sec = (time_t)(ns / 1000000000ULL);
		its.it_value.tv_nsec = (long)(ns % 1000000000ULL);
		timerfd_settime(s->end_fd, 0, &its, NULL);
	}
	s->started = true;
	mms_start_mark(&s->opts.knobs, "collecting");
	return 0;
}

void mms_session_destroy(struct mms_session *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nr_src; i++)
		mms_source_destroy(s->src[i]);
	if (s->child && s->child_status < 0) {
		/* The command outlives no session: it was ours to run. */
		if (s->go_fd >= 0) {
			close(s->go_fd);
			s->go_fd = -1;
		} else {
			kill(s->child, SIGTERM);
		}
		waitpid(s->child, NULL, 0);
	}
	for (int *fd = &s->timer_fd; fd <= &s->end_fd; fd++)
		if (*fd >= 0)
			close(*fd);
	if (s->go_fd >= 0)
		close(s->go_fd);
	if (s->sig_fd >= 0)
		sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
	mms_store_destroy(s->store);
	mms_collectors_cleanup();
	free(s);
}

struct mms_store *mms_session_store(struct mms_session *s)
{
	return s->store;
}

const struct mms_family_status *mms_session_family(const struct mms_session *s,
						   enum mms_metric_family f)
{
	return &s->fam[f];
}

const struct mms_session_info *mms_session_info(const struct mms_session *s)
{
	return &s->info;
}

void mms_session_add_tap(struct mms_session *s, mms_tap_fn fn, void *ctx)
{
	if (s->nr_taps < MAX_TAPS) {
		s->taps[s->nr_taps].fn = fn;
		s->taps[s->nr_taps].ctx = ctx;
		s->nr_taps++;
	}
}

int mms_session_pollfds(struct mms_session *s, struct pollfd *fds, int max)
{
	int n = 0;

#define ADD(f) do { if ((f) >= 0 && n < max) fds[n++] = (struct pollfd){ .fd = (f), .events = POLLIN }; } while (0)
	ADD(s->timer_fd);
	ADD(s->sig_fd);
	ADD(s->end_fd);
	ADD(s->pid_fd);
	for (int i = 0; i < s->nr_src; i++)
		if (!s->src_failed[i])
			ADD(mms_source_fd(s->src[i]));
#undef ADD
	return n;
}

/*
 * A source whose drain fails is marked failed with its reason and left
 * alone (stopped, neither drained nor polled again): the others go on and
 * intervals keep coming.  Returning the error instead would stop every
 * commit from then on, silently.
 */
static void source_failed(struct mms_session *s, int i, int err)
{
	struct mms_source *src = s->src[i];
	struct mms_family_status *fs = &s->fam[src->ops->family];

	s->src_failed[i] = true;
	const char *why = src->why[0] ? src->why : strerror(-err);
	size_t n = strlen(src->ops->name);

	if (!fs->failed[0] && !strncmp(why, src->ops->name, n) && why[n] == ':')
		snprintf(fs->failed, sizeof(fs->failed), "%s", why);
	else if (!fs->failed[0])
		snprintf(fs->failed, sizeof(fs->failed), "%s: %.200s", src->ops->name, why);
	mms_source_stop(src);
}

int mms_session_flush(struct mms_session *s)
{
	/* Both clocks at one moment: the next interval starts where this one ends. */
	uint64_t now = now_ns(CLOCK_MONOTONIC), now_real = now_ns(CLOCK_REALTIME);
	const struct mms_interval *iv;
	uint32_t flags = 0;
	int err;

	if (!s->started)
		return 0;
	for (int i = 0; i < s->nr_src; i++) {
		if (s->src_failed[i])
			continue;
		err = mms_source_drain(s->src[i], s->store);
		if (err && err != -EAGAIN)
			source_failed(s, i, err);
	}
	if (s->target_gone && !s->gone_reported) {
		flags |= MMS_IV_TARGET_EXITED;
		s->gone_reported = true;
	}
	err = mms_store_commit(s->store, now - s->iv_start_mono, flags);
	if (err)
		return err;
	if (mms_store_count(s->store) == 1)
		mms_start_mark(&s->opts.knobs, "first interval");
	iv = mms_store_latest(s->store);
	for (int r = 0; r < MMS_LOST_NR; r++)
		s->lost[r] += iv->lost[r];
	for (int t = 0; t < s->nr_taps; t++)
		s->taps[t].fn(s->taps[t].ctx, s, iv);
	s->iv_start_mono = now;
	s->iv_start_real = now_real;
	mms_store_begin(s->store, s->iv_start_real);
	return 0;
}

/*
 * Ends the open interval unless it only just began: the interval timer and
 * the --duration timer often fire together, and a 0.1 ms interval is noise.
 */
static void flush_if_open(struct mms_session *s)
{
	if (s->started && now_ns(CLOCK_MONOTONIC) - s->iv_start_mono >= 5000000ULL)
		mms_session_flush(s);
}

static void reap_child(struct mms_session *s)
{
	int status;

	if (!s->child || s->child_status >= 0)
		return;
	if (waitpid(s->child, &status, WNOHANG) != s->child)
		return;
	if (WIFEXITED(status))
		s->child_status = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		s->child_status = 128 + WTERMSIG(status);
	else
		s->child_status = 1;
}

enum mms_session_event mms_session_dispatch(struct mms_session *s, const struct pollfd *fds,
					    int n)
{
	enum mms_session_event ev = MMS_EV_NONE;

	for (int i = 0; i < n; i++) {
		uint64_t ticks;

		if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		if (fds[i].fd == s->timer_fd) {
			if (read(s->timer_fd, &ticks, sizeof(ticks)) > 0 && !mms_session_flush(s))
				ev = ev == MMS_EV_NONE ? MMS_EV_TICK : ev;
			/* --duration on an interval boundary: that tick was the last one. */
			if (s->end_mono && s->iv_start_mono + 10000000ULL >= s->end_mono)
				ev = MMS_EV_QUIT;
		} else if (fds[i].fd == s->sig_fd) {
			struct signalfd_siginfo si;

			while (read(s->sig_fd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGWINCH) {
					/* Also kept apart: a tick in the same poll wins ev. */
					s->winch = true;
					ev = ev == MMS_EV_NONE ? MMS_EV_RESIZE : ev;
					continue;
				}
				if (si.ssi_signo == SIGPIPE)
					continue;
				s->quit_sig = (int)si.ssi_signo;
				ev = MMS_EV_QUIT;
			}
		} else if (fds[i].fd == s->end_fd) {
			if (read(s->end_fd, &ticks, sizeof(ticks)) > 0) {
				/* A last partial interval, unless a tick just ended at the deadline. */
				if (s->iv_start_mono + 10000000ULL < s->end_mono)
					mms_session_flush(s);
				ev = MMS_EV_QUIT;
			}
		} else if (fds[i].fd == s->pid_fd) {
			/* The followed process ended: close its last interval and say so. */
			close(s->pid_fd);
			s->pid_fd = -1;
			s->target_gone = true;
			reap_child(s);
			mms_session_flush(s);
			ev = MMS_EV_TARGET_GONE;
		} else {
			for (int k = 0; k < s->nr_src; k++)
				if (!s->src_failed[k] && mms_source_fd(s->src[k]) == fds[i].fd)
					mms_source_poll_in(s->src[k]);
		}
	}
	return ev;
}

int mms_session_set_interval(struct mms_session *s, uint32_t ms)
{
	if (ms < 100 || ms > 60000)
		return -EINVAL;
	s->interval_ms = ms;
	return s->started ? arm_timer(s, ms) : 0;
}

int mms_session_set_first_interval(struct mms_session *s, uint32_t ms)
{
	if (ms < 100 || ms > s->interval_ms || s->started)
		return -EINVAL;
	s->first_ms = ms;
	return 0;
}

uint32_t mms_session_interval(const struct mms_session *s)
{
	return s->interval_ms;
}

int mms_session_run(struct mms_session *s)
{
	struct pollfd fds[MAX_SOURCES + 8];

	for (;;) {
		int n = mms_session_pollfds(s, fds, (int)(sizeof(fds) / sizeof(fds[0])));
		enum mms_session_event ev;

		if (poll(fds, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		ev = mms_session_dispatch(s, fds, n);
		if (ev == MMS_EV_QUIT || ev == MMS_EV_TARGET_GONE)
			break;
	}
	/* A signal ends the run mid-interval: keep what it saw. */
	if (!s->target_gone && s->quit_sig)
		flush_if_open(s);
	return 0;
}

bool mms_session_take_winch(struct mms_session *s)
{
	bool w = s->winch;

	s->winch = false;
	return w;
}

int mms_session_quit_signal(const struct mms_session *s)
{
	return s->quit_sig;
}

int mms_session_child_status(const struct mms_session *s)
{
	return s->child_status;
}

bool mms_session_target_gone(const struct mms_session *s, char *buf, size_t len)
{
	if (s->target_gone && buf)
		snprintf(buf, len, "process %d exited", s->opts.pid);
	return s->target_gone;
}

const uint64_t *mms_session_lost(const struct mms_session *s)
{
	return s->lost;
}

const struct mms_options *mms_session_options(const struct mms_session *s)
{
	return &s->opts;
}
