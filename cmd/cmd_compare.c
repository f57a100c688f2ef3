// SPDX-License-Identifier: GPL-2.0
/*
 * `mmscope compare A... -- B...`: per-run summaries of two sets of
 * recordings, aggregated per side and compared (views/compare.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "mmscope/compare.h"
#include "mmscope/recording.h"

static int add_side(struct mms_compare *c, int side, char **files, int n)
{
	for (int i = 0; i < n; i++) {
		struct mms_rec_info info;
		struct mms_store *st = NULL;
		unsigned int fams = 0;
		char err[512] = "";
		int e;

		e = mms_recording_load_new(files[i], &st, &info, err, sizeof(err));
		if (e) {
			fprintf(stderr, "mmscope: %s\n", err[0] ? err : strerror(-e));
			return e;
		}
		if (info.damaged)
			fprintf(stderr, "mmscope: %s: damaged after %u intervals (%s); using what "
				"was recovered\n", files[i], info.intervals, info.damage);
		for (int f = 0; f < MMS_FAM_NR; f++)
			if (info.fam[f].source[0])
				fams |= 1U << f;
		e = mms_compare_add_run(c, side, st, fams);
		mms_store_destroy(st);
		if (e) {
			fprintf(stderr, "mmscope: %s: %s\n", files[i],
				e == -E2BIG ? "too many runs (64 a side at most)" : strerror(-e));
			return e;
		}
	}
	return 0;
}

int mms_cmd_compare(struct mms_cli *cli)
{
	struct mms_compare_opts o = { .entries = cli->entries };
	struct mms_compare c;
	int ret = MMS_EXIT_FAIL;

	if (cli->metrics && mms_compare_parse_groups(cli->metrics, &o.groups)) {
		fprintf(stderr, "mmscope: -k takes a list of totals, locks, callers, mmap_lock, vma, "
			"rmap, all\n");
		return MMS_EXIT_USAGE;
	}
	mms_compare_init(&c, cli->base_name, cli->new_name);
	if (add_side(&c, 0, cli->files, cli->nr_files) ||
	    add_side(&c, 1, cli->files_b, cli->nr_files_b))
		goto out;
	if (mms_compare_finish(&c, &o)) {
		fprintf(stderr, "mmscope: compare: out of memory\n");
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
