// SPDX-License-Identifier: GPL-2.0
/*
 * `mmscope record -o FILE`: collect headless and write every interval to a
 * recording until --duration, Ctrl-C, or the end of the followed process
 * (with -- CMD, mmscope exits with the command's status).  One summary line
 * goes to stderr at the end.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "mmscope/format.h"
#include "mmscope/recording.h"
#include "mmscope/session.h"

/*
 * Like mms_session_run(), but it also ends when the recording fails and
 * there is no command to see through: collecting into nowhere helps nobody.
 * A launched command is never cut short by a full disk.
 */
static int run(struct mms_session *s, struct mms_recorder *rec, bool follow_cmd, bool *told)
{
	for (;;) {
		struct pollfd fds[32];
		int n = mms_session_pollfds(s, fds, (int)(sizeof(fds) / sizeof(fds[0])));
		enum mms_session_event ev;

		if (poll(fds, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
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

int mms_cmd_record(struct mms_cli *cli)
{
	struct mms_recorder *rec = NULL;
	struct mms_session *s = NULL;
	char err[768] = "";
	bool told = false;
	int ret, e;

	ret = mms_require_privileges("record");
	if (ret)
		return ret;
	ret = MMS_EXIT_FAIL;
	/* Refuse a bad -o now, not after loading every BPF program. */
	if (mms_recorder_check_path(cli->output, cli->force ? MMS_RECORDER_FORCE : 0, err,
				    sizeof(err))) {
		mms_cli_error("%s", err);
		return MMS_EXIT_FAIL;
	}
	e = mms_session_create(&cli->opts, &s);
	if (e) {
		mms_cli_error("cannot set up collection: %s", strerror(-e));
		return MMS_EXIT_FAIL;
	}
	e = mms_session_open(s, err, sizeof(err));
	if (e) {
		mms_cli_error("%s", err);
		goto out;
	}
	e = mms_recorder_create_session(cli->output, s, cli->force ? MMS_RECORDER_FORCE : 0, &rec,
					err, sizeof(err));
	if (e) {
		mms_cli_error("%s", err);
		goto out;
	}
	mms_session_add_tap(s, mms_recorder_tap, rec);
	e = mms_session_start(s, err, sizeof(err));
	if (e) {
		if (err[0])
			mms_cli_error("%s", err);
		else if (cli->opts.cmd)
			mms_cli_error("cannot run '%s': %s", cli->opts.cmd[0],
				strerror(-e));
		else
			mms_cli_error("cannot start collection: %s", strerror(-e));
		/* Nothing was recorded: leave no empty recording behind. */
		mms_recorder_destroy(rec);
		rec = NULL;
		unlink(cli->output);
		ret = cli->opts.cmd && !err[0] ? 127 : MMS_EXIT_FAIL;
		goto out;
	}
	e = run(s, rec, cli->opts.cmd != NULL, &told);
	if (e)
		mms_cli_error("collection failed: %s", strerror(-e));
	mms_recorder_close(rec, e ? strerror(-e) : "");
	if (*mms_recorder_error(rec) && !told)
		mms_cli_error("%s", mms_recorder_error(rec));
	summary(s, rec, cli->output);
	ret = e || *mms_recorder_error(rec) ? MMS_EXIT_FAIL : MMS_EXIT_OK;
	if (cli->opts.cmd && mms_session_child_status(s) > 0)
		ret = mms_session_child_status(s);
out:
	mms_session_destroy(s);
	mms_recorder_destroy(rec);
	return ret;
}
