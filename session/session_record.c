// SPDX-License-Identifier: GPL-2.0
/*
 * Recording a session: fills a recording's header from the session (host,
 * kernel, target, the source of every family or why there is none, options,
 * mmscope's command line) and taps the session so every committed interval
 * is written.  Used by `mmscope record` and by the TUI's record toggle.  The
 * --openmetrics file is the same kind of tap.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mmscope/openmetrics.h"
#include "mmscope/knobs.h"
#include "mmscope/recording.h"
#include "mmscope/session.h"

#define MAX_ARGS 128

/* mmscope's own argv, as the kernel has it (no need to thread argv through). */
static int self_argv(char *buf, size_t len, char **argv, int max)
{
	ssize_t n = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC), argc = 0;

	if (fd >= 0) {
		n = read(fd, buf, len - 1);
		close(fd);
	}
	if (n <= 0)
		n = 0;
	buf[n] = 0;
	for (ssize_t i = 0; i < n && argc < max - 1; i += (ssize_t)strlen(buf + i) + 1)
		argv[argc++] = buf + i;
	argv[argc] = NULL;
	return argc;
}

int mms_recorder_create_session(const char *path, struct mms_session *s, unsigned int flags,
				struct mms_recorder **out, char *errbuf, size_t errlen)
{
	const struct mms_session_info *info = mms_session_info(s);
	struct mms_rec_meta m = { 0 };
	char *argv[MAX_ARGS];
	char knobs[256];
	char *cmdline;
	int err;

	cmdline = malloc(8192);
	if (!cmdline)
		return -ENOMEM;
	self_argv(cmdline, 8192, argv, MAX_ARGS);
	m.host = info->host;
	m.kernel = info->kernel;
	m.target = info->target;
	m.start_ns = 0;	/* now: recording may begin long after the session (TUI toggle) */
	m.argv = argv;
	m.opts = mms_session_options(s);
	mms_knobs_describe(&m.opts->knobs, knobs, sizeof(knobs));
	m.knobs = knobs;
	for (int f = 0; f < MMS_FAM_NR; f++) {
		const struct mms_family_status *fs = mms_session_family(s, f);

		m.fam[f].source = fs->source;
		m.fam[f].backend = fs->backend;
		m.fam[f].why = fs->why;
	}
	err = mms_recorder_create(path, &m, flags, out, errbuf, errlen);
	free(cmdline);
	return err;
}

void mms_recorder_tap(void *ctx, struct mms_session *s, const struct mms_interval *iv)
{
	for (int f = 0; f < MMS_FAM_NR; f++)
		if (mms_session_family(s, f)->failed[0])
			mms_recorder_source_failed(ctx, f, mms_session_family(s, f)->failed);
	mms_recorder_write(ctx, mms_session_store(s), iv);
}

static void openmetrics_tap(void *ctx, struct mms_session *s, const struct mms_interval *iv)
{
	mms_openmetrics_write(ctx, mms_session_store(s), iv);
}

int mms_openmetrics_add_tap(struct mms_session *s, const char *dir,
			    struct mms_openmetrics **out, char *errbuf, size_t errlen)
{
	const struct mms_session_info *info = mms_session_info(s);
	struct mms_om_meta m = { .host = info->host, .kernel = info->kernel,
				 .target = info->target };
	int err = mms_openmetrics_create(dir, &m, out, errbuf, errlen);

	if (!err)
		mms_session_add_tap(s, openmetrics_tap, *out);
	return err;
}
