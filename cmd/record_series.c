// SPDX-License-Identifier: GPL-2.0
/*
 * `mmscope record --runs N [--cooldown S] -o base.mms -- CMD`: N runs of the
 * command, each recorded into its own file, base-1.mms ... base-N.mms
 * (numbers zero-padded to the width of N, so that `base-*.mms` lists them in
 * order), which compare then counts as N runs.  Each run is a child process
 * doing exactly what a one-run `record` does: a session drops its
 * privileges once its sources are attached, so this parent, which never
 * opens one, keeps them for the next run.
 *
 * A run counts when the command exits 0 and, with --score, a score was
 * found.  The first run that does not stops the series: its recording is
 * removed (compare would count it as a run) and the finished runs stay.
 * Ctrl-C (SIGINT, SIGTERM, SIGHUP) does the same to the run under way; in a
 * cool-down it just ends the series.  Progress goes to stderr; the
 * command's output to stdout.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "mmscope/recording.h"
#include "mmscope/stats.h"

/* base.mms -> base-07.mms: the number goes before the extension, if there is one. */
static int run_path(char *buf, size_t len, const char *base, int k, int width)
{
	const char *slash = strrchr(base, '/');
	const char *dot = strrchr(slash ? slash + 1 : base, '.');
	char num[16];
	int n;

	snprintf(num, sizeof(num), "%0*d", width > 4 ? 4 : width, k % 10000);
	if (!dot || dot == (slash ? slash + 1 : base))
		n = snprintf(buf, len, "%s-%s", base, num);
	else
		n = snprintf(buf, len, "%.*s-%s%s", (int)(dot - base), base, num, dot);
	return n < (int)len ? 0 : -ENAMETOOLONG;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A signal waiting on sigfd, or 0. */
static int take_signal(int sigfd)
{
	struct signalfd_siginfo si;

	if (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		return (int)si.ssi_signo;
	return 0;
}

/* Runs one run in a child; returns 0, or the signal that came meanwhile (forwarded). */
static int run_child(struct mms_cli *cli, const char *path, int k, const sigset_t *old,
		     int sigfd, struct mms_run_result *res)
{
	int p[2], got = 0, status;
	pid_t pid;
	ssize_t n;

	memset(res, 0, sizeof(*res));
	res->ret = MMS_EXIT_FAIL;
	res->status = -1;
	if (pipe2(p, O_CLOEXEC)) {
		mms_cli_error("run %d/%d: pipe: %s", k, cli->runs, strerror(errno));
		return 0;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		mms_cli_error("run %d/%d: fork: %s", k, cli->runs, strerror(errno));
		close(p[0]);
		close(p[1]);
		return 0;
	}
	if (!pid) {
		struct mms_run_result r;
		int ret;

		close(p[0]);
		close(sigfd);
		/* The run's session blocks these itself; its command gets them unblocked. */
		sigprocmask(SIG_SETMASK, old, NULL);
		ret = mms_record_one(cli, path, k, cli->runs, &r);
		if (write(p[1], &r, sizeof(r)) != (ssize_t)sizeof(r))
			ret = MMS_EXIT_FAIL;
		fflush(NULL);
		_exit(ret);
	}
	close(p[1]);
	for (;;) {
		struct pollfd fds[2] = { { .fd = sigfd, .events = POLLIN },
					 { .fd = p[0], .events = POLLIN } };

		if (poll(fds, 2, -1) < 0 && errno != EINTR)
			break;
		if (fds[0].revents) {
			int sig = take_signal(sigfd);

			/* From a terminal the run got it too; from kill(1) only we did. */
			if (sig) {
				got = got ? got : sig;
				kill(pid, sig);
			}
		}
		if (fds[1].revents)
			break;	/* the result, or EOF: the run is over */
	}
	n = read(p[0], res, sizeof(*res));
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(*res)) {
		memset(res, 0, sizeof(*res));
		res->status = -1;
		res->ret = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		snprintf(res->error, sizeof(res->error), "the run's mmscope process ended without "
			 "a result (%s %d)", WIFEXITED(status) ? "exit status" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		res->started = access(path, F_OK) == 0 && !cli->force;
	}
	return got ? got : res->quit_sig;
}

/* Waits s seconds, counting down on a terminal; returns a signal that cut it short, or 0. */
static int cool_down(double s, int k, int n, int sigfd)
{
	uint64_t end = mono_ms() + (uint64_t)(s * 1000 + 0.5);
	bool tty = isatty(STDERR_FILENO);
	int sig = 0;

	if (!tty)
		mms_cli_error("run %d/%d, cooling down %.0f s", k, n, s);
	for (uint64_t now = mono_ms(); now < end && !sig; now = mono_ms()) {
		struct pollfd p = { .fd = sigfd, .events = POLLIN };
		uint64_t left = end - now;

		if (tty)
			fprintf(stderr, "\rmmscope: run %d/%d, cooling down %llu s  ", k, n,
				(unsigned long long)((left + 999) / 1000));
		/* Wake on the second, so the count steps evenly. */
		if (poll(&p, 1, (int)(left % 1000 ? left % 1000 : 1000)) > 0)
			sig = take_signal(sigfd);
	}
	if (tty)
		fprintf(stderr, "\r%60s\r", "");
	return sig;
}

static void kept(char *buf, size_t len, const char *first, const char *last, int n)
{
	if (!n)
		snprintf(buf, len, "no run finished");
	else if (n == 1)
		snprintf(buf, len, "kept the 1 finished run: %s", first);
	else
		snprintf(buf, len, "kept the %d finished runs: %s .. %s", n, first, last);
}

static void score_summary(const double *v, int n, const char *unit)
{
	struct mms_runstats st;

	if (!n)
		return;
	mms_runstats(v, n, &st);
	mms_cli_error("score over %d run%s: avg %.6g%s%s, %%stdev %.2f%%, min %.6g, "
		"max %.6g", n, n == 1 ? "" : "s", st.mean, *unit ? " " : "", unit, st.pct_stdev,
		st.min, st.max);
}

int mms_record_series(struct mms_cli *cli)
{
	char path[4096], first[4096] = "", last[4096] = "", msg[8400];
	int n = cli->runs, width = 1, done = 0, ret = MMS_EXIT_OK, sigfd;
	struct mms_run_result res;
	char unit[32] = "";
	sigset_t mask, old;
	struct stat sb;
	double *scores;

	for (int x = n; x >= 10; x /= 10)
		width++;
	/* Every name first: run 7 must not find its file taken after an hour of runs. */
	for (int k = 1; k <= n; k++) {
		char err[768];

		if (run_path(path, sizeof(path), cli->output, k, width)) {
			mms_cli_error("-o %s: the name is too long", cli->output);
			return MMS_EXIT_FAIL;
		}
		if (mms_recorder_check_path(path, cli->force ? MMS_RECORDER_FORCE : 0, err,
					    sizeof(err))) {
			mms_cli_error("--runs %d writes %s: %s", n, path, err);
			return MMS_EXIT_FAIL;
		}
	}
	run_path(path, sizeof(path), cli->output, n + 1, width);
	if (!lstat(path, &sb))
		mms_cli_error("note: %s (from an earlier series?) is not part of this "
			"one; remove it, or a glob for these runs counts it too", path);
	scores = calloc((size_t)n, sizeof(*scores));
	if (!scores) {
		mms_cli_error("--runs %d: out of memory", n);
		return MMS_EXIT_FAIL;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, &old) ||
	    (sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		mms_cli_error("--runs: cannot catch signals: %s", strerror(errno));
		free(scores);
		return MMS_EXIT_FAIL;
	}
	for (int k = 1; k <= n; k++) {
		int sig;

		run_path(path, sizeof(path), cli->output, k, width);
		mms_cli_error("run %d/%d: %s", k, n, path);
		sig = run_child(cli, path, k, &old, sigfd, &res);
		if (!sig && res.ret == MMS_EXIT_OK) {
			if (res.has_score) {
				scores[done] = res.score;
				snprintf(unit, sizeof(unit), "%s", res.unit);
			}
			snprintf(done ? last : first, sizeof(first), "%s", path);
			done++;
			if (k < n && cli->cooldown_s > 0 && (sig = cool_down(cli->cooldown_s, k, n,
									     sigfd))) {
				kept(msg, sizeof(msg), first, done > 1 ? last : first, done);
				mms_cli_error("stopped by %s while cooling down: %s",
					strsignal(sig), msg);
				ret = 128 + sig;
				break;
			}
			continue;
		}
		/* This run does not count: compare must not find it among the others. */
		if (res.started)
			unlink(path);
		kept(msg, sizeof(msg), first, done > 1 ? last : first, done);
		if (sig) {
			mms_cli_error("stopped by %s during run %d/%d: %s%s%s",
				strsignal(sig), k, n, msg,
				res.started ? "; removed the unfinished " : "",
				res.started ? path : "");
			ret = 128 + sig;
		} else {
			char why[320];

			if (res.status > 0)
				snprintf(why, sizeof(why), "the command exited with status %d",
					 res.status);
			else if (res.want_score && !res.has_score && res.started)
				snprintf(why, sizeof(why), "no score: %s", res.error);
			else
				snprintf(why, sizeof(why), "%s", res.error[0] ? res.error :
					 "mmscope could not record it (see above)");
			mms_cli_error("run %d/%d does not count: %s.", k, n, why);
			mms_cli_error("stopped the series: %s%s%s", msg,
				      res.started ? "; removed " : "", res.started ? path : "");
			ret = res.ret ? res.ret : MMS_EXIT_FAIL;
		}
		break;
	}
	if (ret == MMS_EXIT_OK)
		mms_cli_error("%d of %d runs recorded: %s%s%s", done, n, first,
			done > 1 ? " .. " : "", done > 1 ? last : "");
	if (cli->score_regex || cli->score_file)
		score_summary(scores, done, unit);
	close(sigfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(scores);
	return ret;
}
