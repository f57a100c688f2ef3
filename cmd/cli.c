// SPDX-License-Identifier: GPL-2.0
/*
 * What the commands share (cli.h): errors on stderr through the escaping,
 * the account of a failed start, the --openmetrics tap.  main.c parses the
 * command line and dispatches; the commands call down to here, not back up.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "mmscope/escape.h"
#include "mmscope/openmetrics.h"

int mms_cli_start_failed(const struct mms_cli *cli, int e, const char *err, char *buf,
			 size_t len)
{
	if (err[0]) {
		snprintf(buf, len, "%s", err);
		return MMS_EXIT_FAIL;
	}
	if (cli->opts.cmd) {
		snprintf(buf, len, "cannot run '%s': %s", cli->opts.cmd[0], strerror(-e));
		return 127;
	}
	snprintf(buf, len, "cannot start collecting: %s", strerror(-e));
	return MMS_EXIT_FAIL;
}

void mms_cli_error(const char *fmt, ...)
{
	char buf[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fputs("mmscope: ", stderr);
	for (char *line = buf, *nl;; line = nl + 1) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		mms_esc_fputs(stderr, line);
		fputc('\n', stderr);
		if (!nl || !nl[1])
			break;
	}
}

int mms_cli_openmetrics(const struct mms_cli *cli, struct mms_session *s,
			struct mms_openmetrics **om)
{
	char err[512];
	int e;

	*om = NULL;
	if (!cli->openmetrics)
		return 0;
	e = mms_openmetrics_add_tap(s, cli->openmetrics, om, err, sizeof(err));
	if (e)
		mms_cli_error("%s", err);
	return e;
}

void mms_cli_openmetrics_end(struct mms_openmetrics *om)
{
	if (om && *mms_openmetrics_error(om))
		mms_cli_error("%s (%lu files written before)",
			mms_openmetrics_error(om), mms_openmetrics_writes(om));
	mms_openmetrics_destroy(om);
}
