// SPDX-License-Identifier: GPL-2.0
/*
 * `mmscope [-p PID | -- CMD]` and `mmscope replay FILE`: the TUI over a live
 * session or over a recording.  Both build a session, hand it to
 * mms_tui_run() with what differs (header facts, recording, playback), and
 * tear down in one order: terminal restored, session destroyed (sources
 * detached, command reaped), then messages printed.
 */
#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "mmscope/format.h"
#include "mmscope/recording.h"
#include "mmscope/session.h"
#include "mmscope/tui.h"

/* The live TUI's first interval: numbers a moment after collecting starts. */
#define FIRST_INTERVAL_MS 100

/* ---- recording from inside the live TUI (R) ---- */

struct rec_ctx {
	struct mms_session *s;
	struct mms_recorder *r;
};

/* Taps every committed interval; writes it while a recording is on. */
static void rec_tap(void *ctx, struct mms_session *s, const struct mms_interval *iv)
{
	struct rec_ctx *rc = ctx;

	if (rc->r)
		mms_recorder_tap(rc->r, s, iv);
}

static int rec_start(void *ctx, const char *path, char *msg, size_t len)
{
	struct rec_ctx *rc = ctx;
	int err;

	/* Never MMS_RECORDER_FORCE here: a typo must not overwrite a file. */
	err = mms_recorder_create_session(path, rc->s, 0, &rc->r, msg, len);
	if (err) {
		rc->r = NULL;
		return err;
	}
	snprintf(msg, len, "recording to %s (R stops)", path);
	return 0;
}

static void rec_stop(void *ctx, char *msg, size_t len)
{
	struct rec_ctx *rc = ctx;
	char bytes[32];
	int err;

	if (!rc->r)
		return;
	err = mms_recorder_close(rc->r, "");
	mms_fmt_bytes(bytes, sizeof(bytes), mms_recorder_bytes(rc->r));
	if (err)
		snprintf(msg, len, "%s", mms_recorder_error(rc->r));
	else
		snprintf(msg, len, "recorded %llu intervals, %s to %s",
			 (unsigned long long)mms_recorder_intervals(rc->r), bytes,
			 mms_recorder_path(rc->r));
	mms_recorder_destroy(rc->r);
	rc->r = NULL;
}

static bool rec_status(void *ctx, char *buf, size_t len)
{
	struct rec_ctx *rc = ctx;
	char bytes[32];

	if (!rc->r)
		return false;
	if (*mms_recorder_error(rc->r)) {
		snprintf(buf, len, "REC FAILED: %s", mms_recorder_error(rc->r));
		return true;
	}
	mms_fmt_bytes(bytes, sizeof(bytes), mms_recorder_bytes(rc->r));
	snprintf(buf, len, "REC %s %llu iv %s", mms_recorder_path(rc->r),
		 (unsigned long long)mms_recorder_intervals(rc->r), bytes);
	return true;
}

static const struct mms_tui_record_ops rec_ops = {
	.start = rec_start,
	.stop = rec_stop,
	.status = rec_status,
};

int mms_cmd_tui(struct mms_cli *cli)
{
	struct rec_ctx rc = { 0 };
	struct mms_tui_config cfg = { 0 };
	struct mms_openmetrics *om = NULL;
	struct mms_session *s = NULL;
	struct mms_tui_term term;
	char err[768] = "", msg[300] = "", gone[300] = "", target[160];
	int ret = MMS_EXIT_FAIL, e, status;

	if (mms_cli_require_privileges("the live TUI"))
		return MMS_EXIT_NOPERM;
	setlocale(LC_ALL, "");
	/* Before the session: a launched command must inherit the redirected fds. */
	if (mms_tui_term_claim(&term, err, sizeof(err))) {
		mms_cli_error("%s", err);
		return MMS_EXIT_FAIL;
	}
	/* The first frame now: loading the sources takes a second or more. */
	if (cli->opts.cmd)
		snprintf(target, sizeof(target), "cmd: %s", cli->opts.cmd[0]);
	else if (cli->opts.pid)
		snprintf(target, sizeof(target), "pid %d", cli->opts.pid);
	else
		snprintf(target, sizeof(target), "system");
	if (mms_tui_splash(&term, cli->opts.no_color, target, err, sizeof(err))) {
		mms_tui_term_release(&term);
		mms_cli_error("%s", err);
		return MMS_EXIT_FAIL;
	}
	mms_start_mark(&cli->opts.knobs, "tui first frame");
	e = mms_session_create(&cli->opts, &s);
	if (e) {
		snprintf(err, sizeof(err), "cannot create a session: %s", strerror(-e));
		goto out;
	}
	e = mms_session_open(s, err, sizeof(err));
	if (!e && mms_cli_openmetrics(cli, s, &om)) {
		snprintf(err, sizeof(err), "--openmetrics %s: not written", cli->openmetrics);
		goto out;
	}
	if (!e) {
		/* The first numbers a tenth of a second after collecting starts. */
		mms_session_set_first_interval(s, FIRST_INTERVAL_MS < mms_session_interval(s) ?
					       FIRST_INTERVAL_MS : mms_session_interval(s));
		e = mms_session_start(s, err, sizeof(err));
		if (e) {
			char why[sizeof(err)];

			ret = mms_cli_start_failed(cli, e, err, why, sizeof(why));
			snprintf(err, sizeof(err), "%s", why);
		}
	}
	if (e)
		goto out;
	rc.s = s;
	mms_session_add_tap(s, rec_tap, &rc);
	cfg.s = s;
	cfg.term = &term;
	cfg.no_color = cli->opts.no_color;
	cfg.rec = &rec_ops;
	cfg.rec_ctx = &rc;
	e = mms_tui_run(&cfg, err, sizeof(err));
	if (!e)
		ret = MMS_EXIT_OK;
out:
	if (rc.r)
		rec_stop(&rc, msg, sizeof(msg));
	status = s ? mms_session_child_status(s) : -1;
	if (ret == MMS_EXIT_OK && cli->opts.cmd && status < 0)
		snprintf(gone, sizeof(gone), "%s was still running: stopped it", cli->opts.cmd[0]);
	if (s && mms_session_quit_signal(s) && !err[0])
		snprintf(err, sizeof(err), "stopped by %s", strsignal(mms_session_quit_signal(s)));
	mms_session_destroy(s);
	mms_tui_term_release(&term);
	mms_cli_openmetrics_end(om);
	if (msg[0])
		mms_cli_error("%s", msg);
	if (gone[0])
		mms_cli_error("%s", gone);
	if (err[0])
		mms_cli_error("%s", err);
	if (ret == MMS_EXIT_OK && cli->opts.cmd)
		return status >= 0 ? status : MMS_EXIT_OK;
	return ret;
}

/* ---- replay: the same TUI over a recording ---- */

struct replay_ctx {
	struct mms_source *src;
	struct mms_store *st;
	struct mms_recording *rec;
};

static uint32_t rp_count(void *ctx)
{
	return mms_replay_count(((struct replay_ctx *)ctx)->src);
}

static uint32_t rp_pos(void *ctx)
{
	return mms_replay_pos(((struct replay_ctx *)ctx)->src);
}

static int rp_step(void *ctx, uint32_t n)
{
	struct replay_ctx *rp = ctx;

	return mms_replay_step(rp->src, rp->st, n);
}

static int rp_seek(void *ctx, uint32_t idx)
{
	struct replay_ctx *rp = ctx;

	return mms_replay_seek(rp->src, rp->st, idx);
}

static uint64_t rp_dur(void *ctx, uint32_t idx)
{
	const struct mms_rec_interval *ri =
		mms_recording_interval(((struct replay_ctx *)ctx)->rec, idx);

	return ri ? ri->dur_ns : 1000000000ULL;
}

static void hms(char *buf, size_t len, uint64_t secs)
{
	snprintf(buf, len, "%02llu:%02llu", (unsigned long long)(secs / 60),
		 (unsigned long long)(secs % 60));
}

static void rp_where(void *ctx, char *buf, size_t len)
{
	struct replay_ctx *rp = ctx;
	uint32_t pos = mms_replay_pos(rp->src), n = mms_replay_count(rp->src);
	const struct mms_rec_interval *ri = pos ? mms_recording_interval(rp->rec, pos - 1) : NULL;
	uint64_t first = 0, end = 0;
	char at[16], total[16], clock[16] = "--:--:--";
	time_t t;
	struct tm tm;

	mms_replay_time_range(rp->src, &first, &end);
	if (ri) {
		t = (time_t)((ri->start_ns + ri->dur_ns) / 1000000000ULL);
		if (localtime_r(&t, &tm))
			strftime(clock, sizeof(clock), "%H:%M:%S", &tm);
	}
	hms(at, sizeof(at), ri && ri->start_ns + ri->dur_ns > first ?
	    (ri->start_ns + ri->dur_ns - first) / 1000000000ULL : 0);
	hms(total, sizeof(total), end > first ? (end - first) / 1000000000ULL : 0);
	snprintf(buf, len, "at %s (%s of %s, %u/%u)", clock, at, total, pos, n);
}

/* "12:03:04" (that clock time on the recording's day), "+90" (seconds in), "#42". */
static int rp_seek_text(void *ctx, const char *text, char *msg, size_t len)
{
	struct replay_ctx *rp = ctx;
	uint64_t first = 0, end = 0, ns;
	unsigned int h, m, sec;
	char *e;
	int err;

	if (mms_replay_time_range(rp->src, &first, &end)) {
		snprintf(msg, len, "the recording is empty");
		return -ENODATA;
	}
	if (text[0] == '#') {
		unsigned long want = strtoul(text + 1, &e, 10);

		if (*e || e == text + 1)
			goto bad;
		for (uint32_t i = 0; i < mms_recording_count(rp->rec); i++)
			if (mms_recording_interval(rp->rec, i)->seq == want)
				return mms_replay_seek(rp->src, rp->st, i);
		snprintf(msg, len, "no interval #%lu in this recording", want);
		return -ENOENT;
	}
	if (text[0] == '+') {
		double d = strtod(text + 1, &e);

		if (*e || e == text + 1 || d < 0)
			goto bad;
		ns = first + (uint64_t)(d * 1e9);
	} else if (sscanf(text, "%u:%u:%u", &h, &m, &sec) == 3 && h < 24 && m < 60 && sec < 61) {
		time_t t = (time_t)(first / 1000000000ULL);
		struct tm tm;

		if (!localtime_r(&t, &tm))
			goto bad;
		tm.tm_hour = (int)h;
		tm.tm_min = (int)m;
		tm.tm_sec = (int)sec;
		t = mktime(&tm);
		if (t < 0)
			goto bad;
		ns = (uint64_t)t * 1000000000ULL;
	} else {
		goto bad;
	}
	if (ns < first || ns > end)
		snprintf(msg, len, "outside the recording: went to the %s",
			 ns < first ? "start" : "end");
	err = mms_replay_seek_time(rp->src, rp->st, ns);
	if (err)
		snprintf(msg, len, "cannot seek: %s", strerror(-err));
	return err;
bad:
	snprintf(msg, len, "'%s' is not a time: use HH:MM:SS, +SECONDS or #INTERVAL", text);
	return -EINVAL;
}

static const struct mms_tui_replay_ops replay_ops = {
	.count = rp_count,
	.pos = rp_pos,
	.step = rp_step,
	.seek = rp_seek,
	.seek_text = rp_seek_text,
	.dur_ns = rp_dur,
	.where = rp_where,
};

/* The recorded facts, in the shapes the header wants. */
static void recorded_header(const struct mms_rec_info *ri, struct mms_session_info *info,
			    struct mms_family_status *fam)
{
	snprintf(info->host, sizeof(info->host), "%s", ri->host);
	snprintf(info->kernel, sizeof(info->kernel), "%s", ri->kernel);
	snprintf(info->target, sizeof(info->target), "%s", ri->target);
	info->start_ns = ri->start_ns;
	for (int f = 0; f < MMS_FAM_NR; f++) {
		fam[f].source = ri->fam[f].source[0] ? ri->fam[f].source : NULL;
		fam[f].backend = ri->fam[f].backend[0] ? ri->fam[f].backend : NULL;
		snprintf(fam[f].why, sizeof(fam[f].why), "%s", ri->fam[f].why);
		/* A source that failed during the run says so in the replay too. */
		snprintf(fam[f].failed, sizeof(fam[f].failed), "%s", ri->fam[f].failed);
	}
}

int mms_cmd_replay(struct mms_cli *cli)
{
	struct mms_family_status fam[MMS_FAM_NR] = { 0 };
	struct mms_session_info info = { 0 };
	struct mms_tui_config cfg = { 0 };
	struct replay_ctx rp = { 0 };
	struct mms_source *src = NULL;
	struct mms_session *s = NULL;
	struct mms_tui_term term;
	const struct mms_rec_info *ri;
	char err[768] = "";
	int e, ret = MMS_EXIT_FAIL;

	setlocale(LC_ALL, "");
	/* Open the file first: a wrong name is said plainly, before any screen. */
	e = mms_replay_open(cli->files[0], &cli->opts, &src, err, sizeof(err));
	if (e) {
		mms_cli_error("%s", err);
		return MMS_EXIT_FAIL;
	}
	ri = mms_replay_info(src);
	if (ri->damaged)
		mms_cli_error("%s is damaged at byte %llu (%s): replaying what is "
			"before it", cli->files[0], (unsigned long long)ri->damaged_at,
			ri->damage);
	e = mms_tui_term_claim(&term, err, sizeof(err));
	if (e) {
		if (e == -ENOTTY)
			snprintf(err, sizeof(err), "replay needs a terminal on stdin and stdout; "
				 "for text output use 'mmscope report %s' or 'mmscope info %s'",
				 cli->files[0], cli->files[0]);
		mms_cli_error("%s", err);
		mms_source_destroy(src);
		return MMS_EXIT_FAIL;
	}
	e = mms_session_create(&cli->opts, &s);
	if (e) {
		snprintf(err, sizeof(err), "cannot create a session: %s", strerror(-e));
		mms_source_destroy(src);
		goto out;
	}
	/* From here the session owns the source. */
	e = mms_session_open_source(s, src, err, sizeof(err));
	if (e)
		goto out;
	rp.src = src;
	rp.st = mms_session_store(s);
	rp.rec = mms_replay_recording(src);
	recorded_header(ri, &info, fam);
	cfg.s = s;
	cfg.term = &term;
	cfg.info = &info;
	cfg.fam = fam;
	cfg.lost = ri->lost;
	cfg.no_color = cli->opts.no_color;
	cfg.replay = &replay_ops;
	cfg.replay_ctx = &rp;
	if (!mms_replay_count(src))
		snprintf(err, sizeof(err), "%s holds no intervals: nothing to replay",
			 cli->files[0]);
	else if (!mms_tui_run(&cfg, err, sizeof(err)))
		ret = MMS_EXIT_OK;
out:
	mms_session_destroy(s);
	mms_tui_term_release(&term);
	if (err[0])
		mms_cli_error("%s", err);
	return ret;
}
