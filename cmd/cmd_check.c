// SPDX-License-Identifier: GPL-2.0
/*
 * `mmscope check`: every source in the design, really tried (loaded,
 * attached, opened) on this kernel, with the reason when it does not work.
 */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "cli.h"
#include "mmscope/collectors.h"
#include "mmscope/escape.h"

int mms_cmd_check(struct mms_cli *cli)
{
	const struct mms_source_ops *const *all = mms_collectors_all();
	bool lock_ok = false;
	struct utsname u;
	int err;

	if (!uname(&u)) {
		/* The host name is whatever root set: printed escaped, like all outside text. */
		fputs("kernel ", stdout);
		mms_esc_fputs(stdout, u.release);
		fputs(" on ", stdout);
		mms_esc_fputs(stdout, u.nodename);
		fputc('\n', stdout);
	}
	err = mms_tracefs_ensure();
	if (err)
		printf("tracefs: not mounted and cannot mount it: %s\n", strerror(-err));
	if (mms_cli_require_privileges("checking live sources"))
		return MMS_EXIT_NOPERM;
	printf("%-22s %-11s %-10s %s\n", "metric", "backend", "status", "source / reason");
	for (int f = 0; f < MMS_FAM_NR; f++) {
		for (const struct mms_source_ops *const *o = all; *o; o++) {
			struct mms_source *src = NULL;

			if ((*o)->family != (enum mms_metric_family)f)
				continue;
			err = mms_source_new(*o, &cli->opts, &src);
			if (!err)
				err = mms_source_prepare(src);
			if (!err && f == MMS_FAM_LOCK)
				lock_ok = true;
			/* Reasons quote the kernel and libbpf: escaped. */
			printf("%-22s %-11s %-10s ", mms_family_name(f), (*o)->backend,
			       err ? "missing" : "available");
			mms_esc_fputs(stdout, err ? src->why : (*o)->name);
			if (!err && src->note[0]) {
				fputs("; ", stdout);
				mms_esc_fputs(stdout, src->note);
			}
			fputc('\n', stdout);
			mms_source_destroy(src);
		}
	}
	mms_collectors_cleanup();
	if (!lock_ok)
		mms_cli_error("no lock contention source works on this kernel");
	return lock_ok ? MMS_EXIT_OK : MMS_EXIT_FAIL;
}
