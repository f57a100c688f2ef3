// SPDX-License-Identifier: GPL-2.0
/*
 * `mmscope compare A... -- B...`: per-run summaries of two sets of
 * recordings, aggregated per side and compared (views/compare.c), printed
 * as text, JSON or CSV, or shown in the TUI (tui/compare_tui.c).
 */
#include <errno.h>
#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "mmscope/compare.h"
#include "mmscope/mm_metrics.h"
#include "mmscope/recording.h"
#include "mmscope/tui.h"

/* mmscope's recorded command line has --lock-owner (before any "--" CMD). */
static bool argv_lock_owner(const char *cmdline)
{
	char buf[sizeof(((struct mms_rec_info *)0)->cmdline)], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", cmdline);
	for (tok = strtok_r(buf, " ", &save); tok && strcmp(tok, "--");
	     tok = strtok_r(NULL, " ", &save))
		if (!strcmp(tok, "--lock-owner"))
			return true;
	return false;
}

/*
 * What a recording's sources measured, from its header; lock owners from
 * its waits (a 1.4 file's lock rows name them with --lock-owner), or its
 * command line when no wait had an owner (only spinlocks contended).
 */
static unsigned int rec_have(const struct mms_rec_info *info, const struct mms_store *st)
{
	const struct mms_rec_family *f = info->fam;
	unsigned int have = 0;

	if (f[MMS_FAM_LOCK].source[0])
		have |= MMS_CMP_HAVE_LOCK;
	if ((have & MMS_CMP_HAVE_LOCK) &&
	    (mms_compare_has_owners(st) || ((info->major > 1 || info->minor >= 4) &&
					    !strcmp(f[MMS_FAM_LOCK].source, "lock-bpf") &&
					    argv_lock_owner(info->cmdline))))
		have |= MMS_CMP_HAVE_LOCK_OWNER;
	/* --vma-lock alone (backend "faults") times no holds. */
	if (f[MMS_FAM_MMAP_LOCK].source[0] && strcmp(f[MMS_FAM_MMAP_LOCK].backend, "faults"))
		have |= MMS_CMP_HAVE_MMAP_HOLD;
	if (f[MMS_FAM_MMAP_LOCK].source[0] && (info->flags & MMS_REC_F_VMA_LOCK)) {
		have |= MMS_CMP_HAVE_VMA_LOCK;
		if (!strstr(f[MMS_FAM_MMAP_LOCK].why, MMS_VMA_LOCK_NO_KERNEL))
			have |= MMS_CMP_HAVE_VMA_LOCK_KERNEL;
	}
	/* The inferred source sees VMA count changes, not splits or merges. */
	if (f[MMS_FAM_VMA].source[0])
		have |= !strcmp(f[MMS_FAM_VMA].backend, "inferred") ? MMS_CMP_HAVE_VMA_INFERRED :
									MMS_CMP_HAVE_VMA;
	/* The stock source counts reclaim passes, not try_to_unmap batch sizes. */
	if (f[MMS_FAM_RMAP].source[0] && strcmp(f[MMS_FAM_RMAP].backend, "stock"))
		have |= MMS_CMP_HAVE_RMAP_BATCH;
	return have;
}

/* The run's score, if it has one; a run without is n/a on its side, said once. */
static int add_score(struct mms_compare *c, int side, const char *file,
		     const struct mms_rec_run *run)
{
	int e;

	if (!run->has_score) {
		if (run->present && run->error[0])
			fprintf(stderr, "mmscope: %s has no score: %s\n", file, run->error);
		return 0;
	}
	if (c->score_name[0] && (strcmp(c->score_name, run->name) ||
				 strcmp(c->score_unit, run->unit[0] ? run->unit : "score") ||
				 c->score_lower != run->lower_better))
		fprintf(stderr, "mmscope: note: %s's score is '%s' (%s, %s is better), the first "
			"run's '%s' (%s, %s): compared as one\n", file, run->name, run->unit,
			run->lower_better ? "lower" : "higher", c->score_name, c->score_unit,
			c->score_lower ? "lower" : "higher");
	e = mms_compare_add_score(c, side, run->name, run->unit, run->lower_better, run->score);
	if (e)
		fprintf(stderr, "mmscope: %s: its score: %s\n", file, strerror(-e));
	return e;
}

static int add_side(struct mms_compare *c, int side, char **files, int n)
{
	for (int i = 0; i < n; i++) {
		struct mms_rec_info info;
		struct mms_store *st = NULL;
		char err[512] = "";
		int e;

		e = mms_recording_load_new(files[i], &st, &info, err, sizeof(err));
		if (e) {
			mms_cli_error("%s", err[0] ? err : strerror(-e));
			return e;
		}
		if (info.damaged)
			mms_cli_error("%s: damaged after %u intervals (%s); using what "
				"was recovered", files[i], info.intervals, info.damage);
		if (!mms_store_count(st)) {
			mms_cli_error("%s holds no intervals, so it cannot stand for a "
				"run: record longer (--duration) or leave it out", files[i]);
			mms_store_destroy(st);
			return -ENODATA;
		}
		e = mms_compare_add_run(c, side, st, rec_have(&info, st));
		mms_store_destroy(st);
		if (e) {
			mms_cli_error("%s: %s", files[i],
				e == -E2BIG ? "too many runs: 64 a side at most" : strerror(-e));
			return e;
		}
		e = add_score(c, side, files[i], &info.run);
		if (e)
			return e;
	}
	return 0;
}

int mms_cmd_compare(struct mms_cli *cli)
{
	struct mms_compare_opts o = { .entries = cli->entries };
	struct mms_compare c;
	int ret = MMS_EXIT_FAIL;

	if (cli->metrics && mms_compare_parse_keys(cli->metrics, &o.groups, &o.metrics)) {
		mms_cli_error("-k '%s': takes a comma list of groups (score, totals, locks, "
			"callers, owners, mmap_lock, vma, rmap, all) and kinds (avg, rate, sum)",
			cli->metrics);
		return MMS_EXIT_USAGE;
	}
	if (cli->compare_tui && cli->fmt != MMS_OUT_TEXT) {
		mms_cli_error("--tui shows the comparison on screen; --json and --csv "
			"print it: choose one");
		return MMS_EXIT_USAGE;
	}
	mms_compare_init(&c, cli->base_name, cli->new_name);
	if (add_side(&c, 0, cli->files, cli->nr_files) ||
	    add_side(&c, 1, cli->files_b, cli->nr_files_b))
		goto out;
	if (mms_compare_finish(&c, &o)) {
		mms_cli_error("compare: out of memory");
		goto out;
	}
	if (cli->compare_tui) {
		ret = mms_cmd_compare_tui(cli, &c);
		goto out;
	}
	switch (cli->fmt) {
	case MMS_OUT_JSON:
		mms_compare_print_json(stdout, &c);
		break;
	case MMS_OUT_CSV:
		mms_compare_print_csv(stdout, &c, cli->sep);
		break;
	default:
		mms_compare_print_text(stdout, &c);
		break;
	}
	ret = fflush(stdout) ? MMS_EXIT_FAIL : MMS_EXIT_OK;
out:
	mms_compare_free(&c);
	return ret;
}

int mms_cmd_compare_tui(struct mms_cli *cli, const struct mms_compare *c)
{
	struct mms_tui_config cfg = { 0 };
	struct mms_tui_term term;
	char err[512] = "";
	int e;

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		mms_cli_error("compare --tui needs a terminal on stdin and stdout; "
			"without --tui it prints text (or --json, --csv)");
		return MMS_EXIT_FAIL;
	}
	setlocale(LC_ALL, "");
	if (mms_tui_term_claim(&term, err, sizeof(err))) {
		mms_cli_error("%s", err);
		return MMS_EXIT_FAIL;
	}
	cfg.cmp = c;
	cfg.term = &term;
	cfg.no_color = cli->opts.no_color;
	e = mms_tui_run(&cfg, err, sizeof(err));
	mms_tui_term_release(&term);
	if (e && err[0])
		mms_cli_error("%s", err);
	return e ? MMS_EXIT_FAIL : MMS_EXIT_OK;
}
