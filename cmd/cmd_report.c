// SPDX-License-Identifier: GPL-2.0
/*
 * `mmscope report`: collect for --duration (or until Ctrl-C, or until the
 * launched command ends) and print perf-lock-contention-style tables; or
 * print them from a recording.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "mmscope/export.h"
#include "mmscope/files.h"
#include "mmscope/recording.h"
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
		  cli->fmt == MMS_OUT_CSV ? MMS_REPORT_CSV :
		  cli->fmt == MMS_OUT_FOLDED ? MMS_REPORT_FOLDED : MMS_REPORT_TEXT;
	ro->sep = cli->sep;
	memcpy(ro->fields, cli->fields, sizeof(ro->fields) < sizeof(cli->fields) ?
	       sizeof(ro->fields) : sizeof(cli->fields));
	ro->nr_fields = cli->nr_fields;
	ro->filters = &cli->opts;
}

/*
 * -o FILE: the report goes there, so a launched command's own output cannot
 * mix in.  Never through a symlink (run as root, a link planted in /tmp must
 * not truncate the file it points to), never into a FIFO or device; 0600, as
 * it holds kernel addresses like a recording.
 */
static FILE *open_out(const char *path)
{
	char err[512];
	FILE *f;
	int fd;

	if (!path)
		return stdout;
	fd = mms_file_open_out(path, err, sizeof(err));
	if (fd < 0) {
		mms_cli_error("%s", err);
		errno = -fd;
		return NULL;
	}
	f = fdopen(fd, "w");
	if (!f) {
		int e = errno;

		close(fd);
		mms_cli_error("cannot write the report to %s: %s", path, strerror(e));
		errno = e;
	}
	return f;
}

static int print_to(const struct mms_cli *cli, const struct mms_store *st,
		    const struct mms_report_opts *ro, const struct mms_report_meta *meta)
{
	FILE *f = open_out(cli->output);
	int e;

	if (!f)
		return -errno;
	e = mms_report_print(f, st, ro, meta);
	if (f != stdout && fclose(f) && !e)
		e = -errno;
	if (e)
		mms_cli_error("writing the report failed: %s", strerror(-e));
	return e;
}

static int report_live(struct mms_cli *cli)
{
	struct mms_report_meta meta = { 0 };
	const struct mms_session_info *info;
	struct mms_report_opts ro;
	struct mms_session *s = NULL;
	struct mms_openmetrics *om = NULL;
	char err[512] = "", gone[64];
	int ret = MMS_EXIT_FAIL, e;
	struct stat sb;

	ret = mms_cli_require_privileges("report (live)");
	if (ret)
		return ret;
	ret = MMS_EXIT_FAIL;
	/* A symlink or non-regular -o would be refused after the whole run: say so before it. */
	if (cli->output && !lstat(cli->output, &sb) && !S_ISREG(sb.st_mode)) {
		if (S_ISLNK(sb.st_mode))
			mms_cli_error("%s is a symbolic link: mmscope does not write through one; "
				      "give the real file name", cli->output);
		else
			mms_cli_error("%s is %s: write the report to a regular file (or to "
				      "stdout, without -o)", cli->output, mms_file_kind(sb.st_mode));
		return MMS_EXIT_FAIL;
	}
	/* A report sums the whole run: keep every interval the memory budget allows. */
	cli->opts.window = 1U << 20;
	/* Nothing printed needs a call stack: do not pay for walking them. */
	if (cli->by == MMS_BY_OWNER)
		cli->opts.lock_owner = true;
	cli->opts.no_stacks = cli->by != MMS_BY_CALLER && cli->by != MMS_BY_STACK &&
			      cli->by != MMS_BY_OWNER &&
			      cli->fmt != MMS_OUT_FOLDED && !cli->stacks &&
			      !cli->opts.nr_stack_match;
	e = mms_session_create(&cli->opts, &s);
	if (e) {
		mms_cli_error("%s", strerror(-e));
		return MMS_EXIT_FAIL;
	}
	e = mms_session_open(s, err, sizeof(err));
	if (e) {
		mms_cli_error("%s", err);
		goto out;
	}
	if (mms_cli_openmetrics(cli, s, &om))
		goto out;
	e = mms_session_start(s, err, sizeof(err));
	if (e) {
		char why[sizeof(err)];

		ret = mms_cli_start_failed(cli, e, err, why, sizeof(why));
		mms_cli_error("%s", why);
		goto out;
	}
	e = mms_session_run(s);
	if (e)
		mms_cli_error("%s", strerror(-e));
	/* Stopped while the sources were still starting: an empty report, said so. */
	if (mms_session_quit_signal(s) && !mms_store_count(mms_session_store(s)))
		mms_cli_error("stopped by %s before the first interval ended: "
			"nothing was collected", strsignal(mms_session_quit_signal(s)));

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
		meta.fam_failed[f] = fs->failed[0] ? fs->failed : NULL;
	}
	if (mms_session_target_gone(s, gone, sizeof(gone))) {
		meta.message = gone;
		mms_cli_error("%s", gone);
	}
	meta.evicted = mms_store_evicted(mms_session_store(s));
	fill_opts(cli, &ro);
	if (print_to(cli, mms_session_store(s), &ro, &meta))
		goto out;
	ret = MMS_EXIT_OK;
	if (cli->opts.cmd && mms_session_child_status(s) >= 0)
		ret = mms_session_child_status(s);
out:
	mms_session_destroy(s);
	mms_cli_openmetrics_end(om);
	return ret;
}

/* The same tables from a recording: no privileges, same code path after loading. */
static int report_file(struct mms_cli *cli)
{
	struct mms_report_meta meta = { 0 };
	struct mms_rec_info info;
	struct mms_report_opts ro;
	struct mms_store *st = NULL;
	char err[512] = "", msg[320] = "";
	int e;

	e = mms_recording_load_new(cli->files[0], &st, &info, err, sizeof(err));
	if (e) {
		mms_cli_error("%s", err[0] ? err : strerror(-e));
		return MMS_EXIT_FAIL;
	}
	meta.host = info.host;
	meta.kernel = info.kernel;
	meta.target = info.target;
	meta.start_ns = info.first_ns ? info.first_ns : info.start_ns;
	for (int f = 0; f < MMS_FAM_NR; f++) {
		meta.fam_source[f] = info.fam[f].source[0] ? info.fam[f].source : NULL;
		meta.fam_backend[f] = info.fam[f].backend;
		meta.fam_why[f] = info.fam[f].why[0] ? info.fam[f].why : NULL;
		meta.fam_failed[f] = info.fam[f].failed[0] ? info.fam[f].failed : NULL;
	}
	if (info.damaged) {
		snprintf(msg, sizeof(msg), "recording damaged at byte %llu (%s): %u intervals "
			 "recovered", (unsigned long long)info.damaged_at, info.damage,
			 info.intervals);
		mms_cli_error("%s: %s", cli->files[0], msg);
		meta.message = msg;
	} else if (info.target_exited) {
		snprintf(msg, sizeof(msg), "%s exited during the recording", info.target);
		meta.message = msg;
	}
	meta.run = &info.run;
	fill_opts(cli, &ro);
	e = print_to(cli, st, &ro, &meta);
	mms_store_destroy(st);
	return e ? MMS_EXIT_FAIL : MMS_EXIT_OK;
}

int mms_cmd_report(struct mms_cli *cli)
{
	return cli->nr_files ? report_file(cli) : report_live(cli);
}

/* export --perfetto OUT FILE: the recording's intervals as a trace (views/perfetto.c). */
int mms_cmd_export(struct mms_cli *cli)
{
	struct mms_export_meta meta = { .source_name = cli->files[0] };
	struct mms_rec_info info;
	struct mms_store *st = NULL;
	char err[512] = "";
	FILE *f;
	int e;

	e = mms_recording_load_new(cli->files[0], &st, &info, err, sizeof(err));
	if (e) {
		mms_cli_error("%s", err[0] ? err : strerror(-e));
		return MMS_EXIT_FAIL;
	}
	if (info.damaged)
		mms_cli_error("%s: recording damaged at byte %llu (%s): exporting the "
			"%u intervals before it", cli->files[0],
			(unsigned long long)info.damaged_at, info.damage, info.intervals);
	meta.host = info.host;
	meta.kernel = info.kernel;
	meta.target = info.target;
	f = open_out(cli->perfetto);
	if (!f) {
		mms_store_destroy(st);
		return MMS_EXIT_FAIL;
	}
	e = mms_export_perfetto(f, st, &meta, cli->entries > 0 ? (unsigned int)cli->entries : 10);
	if (fclose(f) && !e)
		e = -errno;
	if (e)
		mms_cli_error("writing %s failed: %s", cli->perfetto, strerror(-e));
	mms_store_destroy(st);
	return e ? MMS_EXIT_FAIL : MMS_EXIT_OK;
}
