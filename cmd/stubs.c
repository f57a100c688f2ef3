// SPDX-License-Identifier: GPL-2.0
/* Commands not built yet: each says so instead of pretending. */
#include <stdio.h>

#include "cli.h"

static int not_yet(const char *what)
{
	fprintf(stderr, "mmscope: %s is not available in this build yet\n", what);
	return MMS_EXIT_FAIL;
}

int mms_cmd_compare(struct mms_cli *cli)
{
	(void)cli;
	return not_yet("compare");
}
