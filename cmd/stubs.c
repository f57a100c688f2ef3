// SPDX-License-Identifier: GPL-2.0
/* Commands not built yet: each says so instead of pretending. */
#include <stdio.h>

#include "cli.h"

static int not_yet(const char *what)
{
	fprintf(stderr, "mmscope: %s is not available in this build yet\n", what);
	return MMS_EXIT_FAIL;
}

int mms_cmd_tui(struct mms_cli *cli)
{
	(void)cli;
	return not_yet("the live TUI");
}

int mms_cmd_record(struct mms_cli *cli)
{
	(void)cli;
	return not_yet("record");
}

int mms_cmd_replay(struct mms_cli *cli)
{
	(void)cli;
	return not_yet("replay");
}

int mms_cmd_info(struct mms_cli *cli)
{
	(void)cli;
	return not_yet("info");
}

int mms_cmd_compare(struct mms_cli *cli)
{
	(void)cli;
	return not_yet("compare");
}
