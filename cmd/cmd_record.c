// SPDX-License-Identifier: GPL-2.0
/*
 * `mmscope record -o FILE`: collect headless and write every interval to a
 * recording until --duration, Ctrl-C, or the end of the followed process
 * (with -- CMD, mmscope exits with the command's status).  One summary line
 * goes to stderr at the end.  With --score the command's standard output
 * goes through a pipe: every byte is copied on to mmscope's own stdout and
 * matched line by line; the score (or why there is none) is written to the
 * recording's RUN block before its END.  --runs N: record_series.c runs
 * this N times.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "mmscope/format.h"
#include "mmscope/recording.h"
#include "mmscope/score.h"
#include "mmscope/session.h"

/* After the command exits, how long its output pipe may stay open (a child it left behind). */
#define DRAIN_MS 2000

/* The command's standard output on its way to ours, matched against --score. */
struct tee {
	int fd;			/* read end, -1: none or at EOF */
	bool copy_failed;	/* our stdout went away: keep matching */
	struct mms_score_rx rx;
};

static void tee_read(struct tee *t)
{
	char buf[65536];

	for (;;) {
		ssize_t n = read(t->fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0 || errno != EAGAIN) {
				close(t->fd);
				t->fd = -1;
			}
			return;
		}
		mms_score_rx_feed(&t->rx, buf, (size_t)n);
		for (ssize_t o = 0, w; !t->copy_failed && o < n; o += w) {
			w = write(STDOUT_FILENO, buf + o, (size_t)(n - o));
			if (w < 0 && errno == EINTR)
				w = 0;
			else if (w <= 0)
				t->copy_failed = true;
		}
	}
}

/* What the command wrote before it exited, up to EOF or DRAIN_MS. */
static void tee_drain(struct tee *t)
{
	struct timespec t0, now;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (t->fd >= 0) {
		struct pollfd p = { .fd = t->fd, .events = POLLIN };
		long ms;

		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = DRAIN_MS - ((now.tv_sec - t0.tv_sec) * 1000 +
				 (now.tv_nsec - t0.tv_nsec) / 1000000);
		if (ms <= 0 || poll(&p, 1, (int)ms) == 0) {
			mms_cli_error("the command's output was still open %d s "
				"after it exited (a process it left running?): the score is "
				"from what came before", DRAIN_MS / 1000);
			break;
		}
		tee_read(t);
	}
	mms_score_rx_end(&t->rx);
}

/*
 * Like mms_session_run(), but it also ends when the recording fails and
 * there is no command to see through: collecting into nowhere helps nobody.
 * A launched command is never cut short by a full disk.
 */
static int run(struct mms_session *s, struct mms_recorder *rec, bool follow_cmd, bool *told,
	       struct tee *tee)
{
	for (;;) {
		struct pollfd fds[33];
		int n = mms_session_pollfds(s, fds, (int)(sizeof(fds) / sizeof(fds[0])) - 1);
		enum mms_session_event ev;
		bool out = tee && tee->fd >= 0;

		if (out)
			fds[n] = (struct pollfd){ .fd = tee->fd, .events = POLLIN };
		if (poll(fds, (nfds_t)(n + out), -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (out && fds[n].revents)
			tee_read(tee);
		ev = mms_session_dispatch(s, fds, n);
		if (*mms_recorder_error(rec) && !*told) {
			*told = true;
			mms_cli_error("%s", mms_recorder_error(rec));
			if (!follow_cmd)
				return 0;
			mms_cli_error("the command keeps running; waiting for it to "
				"exit");
		}
		if (ev == MMS_EV_TARGET_GONE)
			return 0;	/* its last interval is committed */
		if (ev == MMS_EV_QUIT) {
			/* --duration committed the last interval; a signal did not. */
			if (mms_session_quit_signal(s))
				mms_session_flush(s);
			return 0;
		}
	}
}

static void summary(struct mms_session *s, struct mms_recorder *rec, const char *path)
{
	const uint64_t *lost = mms_session_lost(s);
	char bytes[32], lost_s[256] = "", gone[64];
	uint64_t total = 0;
	size_t o = 0;

	for (int r = 0; r < MMS_LOST_NR; r++) {
		if (!lost[r])
			continue;
		total += lost[r];
		if (o < sizeof(lost_s))
			o += (size_t)snprintf(lost_s + o, sizeof(lost_s) - o, "%s%s %llu",
					      o ? ", " : " (", mms_lost_reason_name(r),
					      (unsigned long long)lost[r]);
	}
	if (o && o < sizeof(lost_s) - 1)
		strcat(lost_s, ")");
	mms_fmt_bytes(bytes, sizeof(bytes), mms_recorder_bytes(rec));
	mms_cli_error("recorded %llu intervals, %s to %s; lost events: %llu%s%s%s",
		(unsigned long long)mms_recorder_intervals(rec), bytes, path,
		(unsigned long long)total, lost_s,
		mms_session_target_gone(s, gone, sizeof(gone)) ? "; " : "",
		mms_session_target_gone(s, gone, sizeof(gone)) ? gone : "");
}

/*
 * Opens the session with the command's stdout on a pipe (the command is
 * forked in mms_session_open) and ours back in place for everything else.
 */
static int open_teed(struct mms_session *s, struct tee *tee, char *err, size_t len)
{
	int p[2], saved, e;

	if (pipe2(p, O_CLOEXEC)) {
		snprintf(err, len, "cannot capture the command's output for --score: pipe: %s",
			 strerror(errno));
		return -errno;
	}
	saved = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (saved < 0 || dup2(p[1], STDOUT_FILENO) < 0) {
		e = -errno;
		snprintf(err, len, "cannot capture the command's output for --score: %s%s",
			 strerror(-e), e == -EBADF ? " (mmscope's stdout is closed)" : "");
		close(p[0]);
		close(p[1]);
		if (saved >= 0)
			close(saved);
		return e;
	}
	e = mms_session_open(s, err, len);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	tee->fd = p[0];
	return e;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/* The RUN block: the run's place in its series, the command's end and the score. */
static void fill_run(struct mms_cli *cli, struct mms_session *s, struct tee *tee,
		     const struct mms_score_file_before *before, struct mms_rec_run *run,
		     struct mms_run_result *res)
{
	run->status = mms_session_child_status(s);
	run->interrupted = mms_session_quit_signal(s) && run->status < 0;
	snprintf(run->name, sizeof(run->name), "%s",
		 cli->score_name ? cli->score_name : base_name(cli->opts.cmd[0]));
	snprintf(run->unit, sizeof(run->unit), "%s", cli->score_unit ? cli->score_unit : "");
	run->lower_better = cli->score_lower;
	res->status = run->status;
	res->quit_sig = mms_session_quit_signal(s);
	if (!res->want_score)
		return;
	if (run->interrupted)
		snprintf(run->error, sizeof(run->error), "the run was stopped (%s) before the "
			 "command ended: a score from part of a run is none",
			 strsignal(res->quit_sig));
	else if (cli->score_regex)
		mms_score_rx_result(&tee->rx, cli->score_regex, run);
	else
		mms_score_file_result(cli->score_file, before, run);
	res->has_score = run->has_score;
	res->score = run->score;
	snprintf(res->unit, sizeof(res->unit), "%s", run->unit);
	snprintf(res->error, sizeof(res->error), "%s", run->error);
	if (run->has_score)
		mms_cli_error("score: %s%s%s (%s%s)", run->text, run->unit[0] ? " " :
			"", run->unit, run->name, run->matches > 1 ? ", the last of the lines that "
			"matched" : "");
	else
		mms_cli_error("no score: %s", run->error);
}

int mms_record_one(struct mms_cli *cli, const char *path, int index, int count,
		   struct mms_run_result *res)
{
	struct mms_rec_run rr = { .index = (uint32_t)index, .count = (uint32_t)count };
	struct mms_score_file_before before;
	struct tee tee = { .fd = -1 };
	struct mms_recorder *rec = NULL;
	struct mms_openmetrics *om = NULL;
	struct mms_session *s = NULL;
	char err[768] = "";
	bool told = false;
	int ret = MMS_EXIT_FAIL, e;

	memset(res, 0, sizeof(*res));
	res->status = -1;
	res->want_score = cli->score_regex || cli->score_file;
	/* Refuse a bad -o now, not after loading every BPF program. */
	if (mms_recorder_check_path(path, cli->force ? MMS_RECORDER_FORCE : 0, err,
				    sizeof(err))) {
		mms_cli_error("%s", err);
		return MMS_EXIT_FAIL;
	}
	if (cli->score_regex && mms_score_rx_init(&tee.rx, cli->score_regex, err, sizeof(err))) {
		mms_cli_error("%s", err);
		return MMS_EXIT_USAGE;
	}
	if (cli->score_file)
		mms_score_file_note(cli->score_file, &before);
	e = mms_session_create(&cli->opts, &s);
	if (e) {
		mms_cli_error("cannot set up collection: %s", strerror(-e));
		goto out;
	}
	e = cli->score_regex ? open_teed(s, &tee, err, sizeof(err)) :
			       mms_session_open(s, err, sizeof(err));
	if (e) {
		mms_cli_error("%s", err);
		goto out;
	}
	e = mms_recorder_create_session(path, s, cli->force ? MMS_RECORDER_FORCE : 0, &rec,
					err, sizeof(err));
	if (e) {
		mms_cli_error("%s", err);
		goto out;
	}
	mms_session_add_tap(s, mms_recorder_tap, rec);
	if (mms_cli_openmetrics(cli, s, &om)) {
		mms_recorder_destroy(rec);
		rec = NULL;
		unlink(path);
		goto out;
	}
	e = mms_session_start(s, err, sizeof(err));
	if (e) {
		char why[sizeof(err)];

		ret = mms_cli_start_failed(cli, e, err, why, sizeof(why));
		mms_cli_error("%s", why);
		/* Nothing was recorded: leave no empty recording behind. */
		mms_recorder_destroy(rec);
		rec = NULL;
		unlink(path);
		goto out;
	}
	res->started = true;
	e = run(s, rec, cli->opts.cmd != NULL, &told, cli->score_regex ? &tee : NULL);
	if (e)
		mms_cli_error("collection failed: %s", strerror(-e));
	/* Stopped with the command still running: no score, and nothing to wait for. */
	if (cli->score_regex && mms_session_quit_signal(s) && mms_session_child_status(s) < 0)
		tee_read(&tee);
	else if (cli->score_regex)
		tee_drain(&tee);
	/* A plain recording stays what it was; a run of a series or a score gets its block. */
	if (cli->opts.cmd && (res->want_score || count)) {
		fill_run(cli, s, &tee, &before, &rr, res);
		mms_recorder_put_run(rec, &rr);
	}
	mms_recorder_close(rec, e ? strerror(-e) : "");
	if (*mms_recorder_error(rec) && !told)
		mms_cli_error("%s", mms_recorder_error(rec));
	summary(s, rec, path);
	ret = e || *mms_recorder_error(rec) ? MMS_EXIT_FAIL : MMS_EXIT_OK;
	if (!ret && res->want_score && !res->has_score)
		ret = MMS_EXIT_FAIL;
	if (cli->opts.cmd && mms_session_child_status(s) > 0)
		ret = mms_session_child_status(s);
out:
	mms_session_destroy(s);
	mms_cli_openmetrics_end(om);
	mms_recorder_destroy(rec);
	if (tee.fd >= 0)
		close(tee.fd);
	if (cli->score_regex)
		mms_score_rx_free(&tee.rx);
	res->ret = ret;
	return ret;
}

int mms_cmd_record(struct mms_cli *cli)
{
	struct mms_run_result res;
	int ret;

	/* A regex that cannot work is a usage error, said before anything runs. */
	if (cli->score_regex) {
		struct mms_score_rx rx;
		char err[512];

		if (mms_score_rx_init(&rx, cli->score_regex, err, sizeof(err))) {
			mms_cli_error("%s", err);
			return MMS_EXIT_USAGE;
		}
		mms_score_rx_free(&rx);
	}
	ret = mms_cli_require_privileges("record");
	if (ret)
		return ret;
	if (cli->runs)
		return mms_record_series(cli);
	return mms_record_one(cli, cli->output, 0, 0, &res);
}
