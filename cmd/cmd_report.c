// SPDX-License-Identifier: GPL-2.0
/*
 * `mmscope report`: collect for --duration (or until Ctrl-C, or until the
 * launched command ends) and print perf-lock-contention-style tables; or
 * print them from a recording.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "mmscope/report.h"
#include "mmscope/session.h"

static void fill_opts(const struct mms_cli *cli, struct mms_report_opts *ro)
{
	memset(ro, 0, sizeof(*ro));
	ro->by = cli->by;
	ro->sort = cli->sort;
	ro->entries = cli->entries;
	ro->stacks = cli->stacks;
	ro->percentiles = cli->percentiles || cli->sort == MMS_SORT_P50 || cli->sort == MMS_SORT_P99;
	ro->fmt = cli->fmt == MMS_OUT_JSON ? MMS_REPORT_JSON :
		  cli->fmt == MMS_OUT_CSV ? MMS_REPORT_CSV : MMS_REPORT_TEXT;
	ro->sep = cli->sep;
}

static int report_live(struct mms_cli *cli)
{
	struct mms_report_meta meta = { 0 };
	const struct mms_session_info *info;
	struct mms_report_opts ro;
	struct mms_session *s = NULL;
	char err[512] = "", gone[64];
	int ret = MMS_EXIT_FAIL, e;

	ret = mms_require_privileges("report (live)");
	if (ret)
		return ret;
	ret = MMS_EXIT_FAIL;
	/* A report sums the whole run: keep every interval the memory budget allows. */
	cli->opts.window = 1U << 20;
	e = mms_session_create(&cli->opts, &s);
	if (e) {
		fprintf(stderr, "mmscope: %s\n", strerror(-e));
		return MMS_EXIT_FAIL;
	}
	e = mms_session_open(s, err, sizeof(err));
	if (e) {
		fprintf(stderr, "mmscope: %s\n", err);
		goto out;
	}
	e = mms_session_start(s);
	if (e) {
		if (cli->opts.cmd)
			fprintf(stderr, "mmscope: cannot run '%s': %s\n", cli->opts.cmd[0],
				strerror(-e));
		else
			fprintf(stderr, "mmscope: start failed: %s\n", strerror(-e));
		ret = cli->opts.cmd ? 127 : MMS_EXIT_FAIL;
		goto out;
	}
	e = mms_session_run(s);
	if (e)
		fprintf(stderr, "mmscope: %s\n", strerror(-e));

	info = mms_session_info(s);
	meta.host = info->host;
	meta.kernel = info->kernel;
	meta.target = info->target;
	meta.start_ns = info->start_ns;
	for (int f = 0; f < MMS_FAM_NR; f++) {
		const struct mms_family_status *fs = mms_session_family(s, f);

		meta.fam_source[f] = fs->source;
		meta.fam_backend[f] = fs->backend;
		meta.fam_why[f] = fs->why[0] ? fs->why : NULL;
	}
	if (mms_session_target_gone(s, gone, sizeof(gone))) {
		meta.message = gone;
		fprintf(stderr, "mmscope: %s\n", gone);
	}
	meta.evicted = mms_store_evicted(mms_session_store(s));
	fill_opts(cli, &ro);
	e = mms_report_print(stdout, mms_session_store(s), &ro, &meta);
	if (e) {
		fprintf(stderr, "mmscope: writing the report failed: %s\n", strerror(-e));
		goto out;
	}
	ret = MMS_EXIT_OK;
	if (cli->opts.cmd && mms_session_child_status(s) >= 0)
		ret = mms_session_child_status(s);
out:
	mms_session_destroy(s);
	return ret;
}

int mms_cmd_report(struct mms_cli *cli)
{
	if (!cli->nr_files)
		return report_live(cli);
	fprintf(stderr, "mmscope: report FILE is not available in this build yet\n");
	return MMS_EXIT_FAIL;
}
