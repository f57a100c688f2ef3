// SPDX-License-Identifier: GPL-2.0
/*
 * `mmscope info FILE`: what a recording holds (header, time span, sources,
 * rows, lost events) and whether it is whole: complete, unfinished (the
 * recorder was killed: every whole interval is still there) or damaged
 * (reading stopped at a bad block).  Plain text, or --json.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "mmscope/escape.h"
#include "mmscope/format.h"
#include "mmscope/recording.h"
#include "mmscope/report.h"
#include "mmscope/score.h"

static const char *const fam_key[MMS_FAM_NR] = {
	[MMS_FAM_LOCK] = "lock",
	[MMS_FAM_MMAP_LOCK] = "mmap_lock",
	[MMS_FAM_VMA] = "vma",
	[MMS_FAM_RMAP] = "rmap",
};

static const char *const tab_name[MMS_TAB_NR] = {
	[MMS_TAB_STR] = "strings",
	[MMS_TAB_STACK] = "stacks",
	[MMS_TAB_TASK] = "tasks",
	[MMS_TAB_LOCK] = "locks",
};

static void fmt_when(char *buf, size_t len, uint64_t ns)
{
	time_t t = (time_t)(ns / 1000000000ULL);
	struct tm tm;
	char a[32], z[8];

	if (!ns || !localtime_r(&t, &tm)) {
		snprintf(buf, len, "unknown");
		return;
	}
	strftime(a, sizeof(a), "%Y-%m-%d %H:%M:%S", &tm);
	strftime(z, sizeof(z), "%z", &tm);
	snprintf(buf, len, "%s.%03u %s", a, (unsigned int)(ns / 1000000 % 1000), z);
}

static double span_s(const struct mms_rec_info *in)
{
	return in->intervals && in->end_ns > in->first_ns ?
	       (double)(in->end_ns - in->first_ns) / 1e9 : 0;
}

/* Every string of a recording is its writer's: escaped before it reaches a terminal. */
static const char *esc(char *buf, size_t len, const char *s)
{
	mms_esc_text(buf, len, s);
	return buf;
}

#define ESC_LEN (4 * 1536 + 1)
#define ESC(s) esc((char[ESC_LEN]){ 0 }, ESC_LEN, (s))

static void print_status(const struct mms_rec_info *in)
{
	if (in->damaged)
		printf("status      damaged: %s\n"
		       "            %u intervals before it are readable; %llu bytes from byte "
		       "%llu on are not\n", ESC(in->damage), in->intervals,
		       (unsigned long long)(in->file_bytes - in->good_bytes),
		       (unsigned long long)in->good_bytes);
	else if (!in->closed)
		printf("status      unfinished: no end block (the recorder was killed or crashed);"
		       " all %u whole intervals are readable\n", in->intervals);
	else
		printf("status      complete\n");
	if (in->end_reason[0])
		printf("stopped     %s\n", ESC(in->end_reason));
}

static void print_text(const char *path, const struct mms_rec_info *in)
{
	char when[64], end[64], size[32], raw[32];
	uint64_t lost = 0;
	const char *o;

	printf("recording   %s\n", ESC(path));
	if (in->imported[0])
		printf("format      %s capture, written by %s, read as a recording\n",
		       ESC(in->imported), ESC(in->tool));
	else
		printf("format      %u.%u, written by %s\n", in->major, in->minor,
		       in->tool[0] ? ESC(in->tool) : "an unknown tool");
	print_status(in);
	printf("host        %s (kernel %s)\n", ESC(in->host), ESC(in->kernel));
	printf("command     %s\n", ESC(in->cmdline));
	printf("target      %s\n", ESC(in->target));
	if (in->run.present) {
		char score[512];

		if (in->run.count)
			printf("run         %u of %u\n", in->run.index, in->run.count);
		if (in->run.interrupted)
			printf("exit        stopped by a signal before the command ended\n");
		else if (in->run.status >= 0)
			printf("exit        the command exited with status %d\n",
			       (int)in->run.status);
		mms_score_describe(score, sizeof(score), &in->run);
		if (in->run.has_score || in->run.error[0])
			printf("score       %s\n", ESC(score));
		if (in->run.source[0])
			printf("            from %s\n", ESC(in->run.source));
	}
	fmt_when(when, sizeof(when), in->start_ns);
	printf("started     %s\n", when);
	fmt_when(end, sizeof(end), in->end_ns);
	printf("duration    %.2f s in %u intervals of %u ms, until %s\n", span_s(in),
	       in->intervals, in->interval_ms, in->intervals ? end : "-");
	printf("rows        %llu lock wait, %llu metric\n", (unsigned long long)in->lock_rows,
	       (unsigned long long)in->metric_rows);
	for (int r = 0; r < MMS_LOST_NR; r++)
		lost += in->lost[r];
	printf("lost        %llu events", (unsigned long long)lost);
	for (int r = 0, n = 0; r < MMS_LOST_NR; r++)
		if (in->lost[r])
			printf("%s%s %llu", n++ ? ", " : ": ", mms_lost_reason_name(r),
			       (unsigned long long)in->lost[r]);
	printf("\n");
	if (in->target_exited)
		printf("target      exited during the recording\n");
	for (int f = 0; f < MMS_FAM_NR; f++) {
		const struct mms_rec_family *fs = &in->fam[f];

		printf("%-11s %s: ", f ? "" : "sources", mms_family_name(f));
		if (fs->source[0])
			printf("%s (%s)%s%s\n", ESC(fs->source), ESC(fs->backend),
			       fs->why[0] ? "; " : "", ESC(fs->why));
		else if (mms_mmap_waits_only(f, in->fam[MMS_FAM_LOCK].source[0], fs->why))
			printf("waits from the lock source; hold times switched off "
			       "(--mmap-hold)\n");
		else
			printf("none: %s\n", fs->why[0] ? ESC(fs->why) : "not recorded");
		if (fs->failed[0])
			printf("%-11s   FAILED during the run, its data stops there: %s\n", "",
			       ESC(fs->failed));
	}
	printf("defined     %llu strings, %llu stacks, %llu tasks, %llu locks",
	       (unsigned long long)in->defs[MMS_TAB_STR],
	       (unsigned long long)in->defs[MMS_TAB_STACK],
	       (unsigned long long)in->defs[MMS_TAB_TASK],
	       (unsigned long long)in->defs[MMS_TAB_LOCK]);
	if (in->dangling)
		printf("; %llu references to undefined ones", (unsigned long long)in->dangling);
	printf("\n");
	mms_fmt_bytes(size, sizeof(size), in->file_bytes);
	mms_fmt_bytes(raw, sizeof(raw), in->raw_bytes);
	printf("size        %s (%llu bytes; %s uncompressed), %u blocks", size,
	       (unsigned long long)in->file_bytes, raw, in->blocks);
	if (in->unknown_blocks)
		printf(", %u of types this mmscope does not know (skipped)", in->unknown_blocks);
	printf("\n");
	if (in->flags & MMS_REC_F_HIDE_ADDRS)
		printf("addresses   hidden (--hide-addrs): kernel addresses are hashes\n");
	o = in->knobs;
	for (int first = 1; *o; first = 0) {
		const char *nl = strchr(o, '\n');
		int n = nl ? (int)(nl - o) : (int)strlen(o);
		char line[256];

		snprintf(line, sizeof(line), "%.*s", n, o);
		printf("%-11s %s%s\n", first ? "knobs" : "", ESC(line),
		       first ? " (a diagnostic setting: not a default run, see mmscope(1))" : "");
		o += n + (nl ? 1 : 0);
	}
	o = in->options;
	for (int first = 1; *o; first = 0) {
		const char *nl = strchr(o, '\n');
		int n = nl ? (int)(nl - o) : (int)strlen(o);

		char line[1536];

		snprintf(line, sizeof(line), "%.*s", n, o);
		printf("%-11s %s\n", first ? "options" : "", ESC(line));
		o += n + (nl ? 1 : 0);
	}
}

static void json_str(const char *key, const char *v, bool comma)
{
	printf("  \"%s\": ", key);
	mms_esc_fput_json(stdout, v);
	printf("%s\n", comma ? "," : "");
}

static void json_u64(const char *key, uint64_t v)
{
	printf("  \"%s\": %llu,\n", key, (unsigned long long)v);
}

static void json_options(const char *opts)
{
	const char *o = opts;
	bool first = true;

	printf("  \"options\": {");
	while (*o) {
		const char *nl = strchr(o, '\n'), *eq;
		size_t n = nl ? (size_t)(nl - o) : strlen(o);
		char line[1536];

		snprintf(line, sizeof(line), "%.*s", (int)n, o);
		o += n + (nl ? 1 : 0);
		eq = strchr(line, '=');
		if (!eq)
			continue;
		line[eq - line] = 0;
		fputs(first ? "" : ", ", stdout);
		mms_esc_fput_json(stdout, line);
		fputs(": ", stdout);
		mms_esc_fput_json(stdout, eq + 1);
		first = false;
	}
	printf("}\n");
}

static void print_json(const char *path, const struct mms_rec_info *in)
{
	char ver[16];

	if (in->imported[0])
		snprintf(ver, sizeof(ver), "%s", in->imported);
	else
		snprintf(ver, sizeof(ver), "%u.%u", in->major, in->minor);
	printf("{\n");
	json_str("file", path, true);
	json_str("format", ver, true);
	json_str("tool", in->tool, true);
	printf("  \"complete\": %s,\n", in->closed && !in->damaged ? "true" : "false");
	printf("  \"closed\": %s,\n", in->closed ? "true" : "false");
	json_str("end_reason", in->end_reason, true);
	printf("  \"damaged\": %s,\n", in->damaged ? "true" : "false");
	json_u64("damaged_at", in->damaged ? in->damaged_at : 0);
	json_str("damage", in->damage, true);
	json_str("host", in->host, true);
	json_str("kernel", in->kernel, true);
	json_str("cmdline", in->cmdline, true);
	json_str("target", in->target, true);
	json_u64("start_ns", in->start_ns);
	json_u64("first_ns", in->first_ns);
	json_u64("end_ns", in->end_ns);
	printf("  \"duration_s\": %.3f,\n", span_s(in));
	json_u64("intervals", in->intervals);
	json_u64("interval_ms", in->interval_ms);
	json_u64("lock_rows", in->lock_rows);
	json_u64("metric_rows", in->metric_rows);
	json_u64("target_exited", in->target_exited);
	printf("  \"lost\": {");
	for (int r = 0; r < MMS_LOST_NR; r++)
		printf("%s\"%s\": %llu", r ? ", " : "", mms_lost_reason_name(r),
		       (unsigned long long)in->lost[r]);
	printf("},\n  \"sources\": {\n");
	for (int f = 0; f < MMS_FAM_NR; f++) {
		printf("    \"%s\": {\"source\": ", fam_key[f]);
		mms_esc_fput_json(stdout, in->fam[f].source);
		fputs(", \"backend\": ", stdout);
		mms_esc_fput_json(stdout, in->fam[f].backend);
		fputs(", \"why\": ", stdout);
		mms_esc_fput_json(stdout, in->fam[f].why);
		fputs(", \"failed\": ", stdout);
		if (in->fam[f].failed[0])
			mms_esc_fput_json(stdout, in->fam[f].failed);
		else
			fputs("null", stdout);
		printf("}%s\n", f + 1 < MMS_FAM_NR ? "," : "");
	}
	printf("  },\n  \"defined\": {");
	for (int t = 0; t < MMS_TAB_NR; t++)
		printf("%s\"%s\": %llu", t ? ", " : "", tab_name[t],
		       (unsigned long long)in->defs[t]);
	printf("},\n");
	json_u64("dangling", in->dangling);
	json_u64("file_bytes", in->file_bytes);
	json_u64("good_bytes", in->good_bytes);
	json_u64("raw_bytes", in->raw_bytes);
	json_u64("blocks", in->blocks);
	json_u64("unknown_blocks", in->unknown_blocks);
	printf("  \"hide_addrs\": %s,\n", in->flags & MMS_REC_F_HIDE_ADDRS ? "true" : "false");
	printf("  \"run\": ");
	mms_report_run_json(stdout, &in->run);
	printf(",\n");
	printf("  \"knobs\": {");
	for (const char *o = in->knobs, *nl, *eq; *o; o = nl ? nl + 1 : o + strlen(o)) {
		char line[256];

		nl = strchr(o, '\n');
		snprintf(line, sizeof(line), "%.*s", nl ? (int)(nl - o) : (int)strlen(o), o);
		eq = strchr(line, '=');
		if (!eq)
			continue;
		line[eq - line] = 0;
		fputs(o == in->knobs ? "" : ", ", stdout);
		mms_esc_fput_json(stdout, line);
		fputs(": ", stdout);
		mms_esc_fput_json(stdout, eq + 1);
	}
	printf("},\n");
	json_options(in->options);
	printf("}\n");
}

int mms_cmd_info(struct mms_cli *cli)
{
	struct mms_recording *rec;
	char err[512];
	int e;

	e = mms_recording_open(cli->files[0], &rec, err, sizeof(err));
	if (e) {
		mms_cli_error("%s", err);
		return MMS_EXIT_FAIL;
	}
	if (cli->fmt == MMS_OUT_JSON)
		print_json(cli->files[0], mms_recording_info(rec));
	else
		print_text(cli->files[0], mms_recording_info(rec));
	mms_recording_close(rec);
	return MMS_EXIT_OK;
}
