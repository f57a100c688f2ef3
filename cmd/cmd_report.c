// SPDX-License-Identifier: GPL-2.0
#include "cli.h"
int mms_cmd_report(struct mms_cli *cli)
{
	(void)cli;
	return 1;
}
