// SPDX-License-Identifier: GPL-2.0
/* Commands not built yet: each says so instead of pretending. */
#include <stdio.h>

#include "cli.h"

int mms_cmd_compare_tui(struct mms_cli *cli, const struct mms_compare *c)
{
	(void)cli;
	(void)c;
	fprintf(stderr, "mmscope: compare --tui is not available in this build yet\n");
	return MMS_EXIT_FAIL;
}
