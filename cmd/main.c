// SPDX-License-Identifier: GPL-2.0
/*
 * mmscope's entry point: parses the command line (one option table for every
 * command, so filters mean the same everywhere) and runs the command.
 */
#include <errno.h>
#include <malloc.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "mmscope/cgroup.h"
#include "mmscope/collectors.h"
#include "mmscope/escape.h"
#include "mmscope/knobs.h"
#include "mmscope/report.h"
#include "mmscope/score.h"

enum {
	OPT_TID = 256, OPT_INTERVAL, OPT_DURATION, OPT_SOURCE, OPT_VMA_SOURCE, OPT_RMAP_SOURCE,
	OPT_MMAP_HOLD, OPT_MMAP_HOLD_SAMPLE, OPT_VMA_LOCK, OPT_LOCK_OWNER, OPT_MAX_STACK,
	OPT_STACK_SKIP, OPT_STACK_ENTRIES,
	OPT_TASK_ENTRIES, OPT_WINDOW, OPT_HIDE_ADDRS, OPT_NO_COLOR, OPT_NO_INHERIT, OPT_BY,
	OPT_STACKS, OPT_JSON, OPT_CSV, OPT_FOLDED, OPT_PERFETTO, OPT_OPENMETRICS, OPT_FORCE,
	OPT_BASE, OPT_NEW, OPT_TUI, OPT_PCT,
	OPT_RUNS, OPT_COOLDOWN, OPT_SCORE, OPT_SCORE_DEFAULT, OPT_SCORE_FILE, OPT_SCORE_NAME,
	OPT_SCORE_UNIT, OPT_SCORE_LOWER, OPT_LOCK_CGROUP,
};

static const struct option long_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, OPT_TID },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "delay", required_argument, NULL, 'd' },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "source", required_argument, NULL, OPT_SOURCE },
	{ "vma-source", required_argument, NULL, OPT_VMA_SOURCE },
	{ "rmap-source", required_argument, NULL, OPT_RMAP_SOURCE },
	{ "mmap-hold", no_argument, NULL, OPT_MMAP_HOLD },
	{ "mmap-hold-sample", required_argument, NULL, OPT_MMAP_HOLD_SAMPLE },
	{ "vma-lock", no_argument, NULL, OPT_VMA_LOCK },
	{ "lock-owner", no_argument, NULL, OPT_LOCK_OWNER },
	{ "type-filter", required_argument, NULL, 'Y' },
	{ "lock-filter", required_argument, NULL, 'L' },
	{ "callstack-filter", required_argument, NULL, 'S' },
	{ "max-stack", required_argument, NULL, OPT_MAX_STACK },
	{ "stack-skip", required_argument, NULL, OPT_STACK_SKIP },
	{ "map-nr-entries", required_argument, NULL, 'M' },
	{ "cgroup-filter", required_argument, NULL, 'G' },
	{ "lock-cgroup", no_argument, NULL, OPT_LOCK_CGROUP },
	{ "cpu", required_argument, NULL, 'C' },
	{ "field", required_argument, NULL, 'F' },
	{ "threads", no_argument, NULL, 't' },
	{ "lock-addr", no_argument, NULL, 'l' },
	{ "use-bpf", no_argument, NULL, 'b' },
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "input", required_argument, NULL, 'i' },
	{ "stack-entries", required_argument, NULL, OPT_STACK_ENTRIES },
	{ "task-entries", required_argument, NULL, OPT_TASK_ENTRIES },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "hide-addrs", no_argument, NULL, OPT_HIDE_ADDRS },
	{ "no-color", no_argument, NULL, OPT_NO_COLOR },
	{ "no-inherit", no_argument, NULL, OPT_NO_INHERIT },
	{ "by", required_argument, NULL, OPT_BY },
	{ "entries", required_argument, NULL, 'E' },
	{ "key", required_argument, NULL, 'k' },
	{ "stacks", no_argument, NULL, OPT_STACKS },
	{ "percentiles", no_argument, NULL, OPT_PCT },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "csv", no_argument, NULL, OPT_CSV },
	{ "folded", no_argument, NULL, OPT_FOLDED },
	{ "perfetto", required_argument, NULL, OPT_PERFETTO },
	{ "openmetrics", required_argument, NULL, OPT_OPENMETRICS },
	{ "field-separator", required_argument, NULL, 'x' },
	{ "output", required_argument, NULL, 'o' },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "base", required_argument, NULL, OPT_BASE },
	{ "new", required_argument, NULL, OPT_NEW },
	{ "tui", no_argument, NULL, OPT_TUI },
	{ "runs", required_argument, NULL, OPT_RUNS },
	{ "cooldown", required_argument, NULL, OPT_COOLDOWN },
	{ "score", required_argument, NULL, OPT_SCORE },
	{ "score-default", no_argument, NULL, OPT_SCORE_DEFAULT },
	{ "score-file", required_argument, NULL, OPT_SCORE_FILE },
	{ "score-name", required_argument, NULL, OPT_SCORE_NAME },
	{ "score-unit", required_argument, NULL, OPT_SCORE_UNIT },
	{ "score-lower-better", no_argument, NULL, OPT_SCORE_LOWER },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: mmscope [-p PID | -- CMD ARGS...] [options]     live workbench (TUI)\n"
"       mmscope report [FILE] [options] [-- CMD ARGS...]  contention tables\n"
"       mmscope record -o FILE [options] [-- CMD ARGS...] headless recording\n"
"       mmscope replay FILE                              the TUI over a recording\n"
"       mmscope info FILE                                what a recording holds\n"
"       mmscope compare A... -- B...                     A/B tables for a patch mail\n"
"       mmscope export --perfetto OUT.json FILE          a trace for ui.perfetto.dev\n"
"       mmscope check                                    which sources work here, and why not\n"
"\n"
"Target:\n"
"  -p, --pid PID            follow one process (all its threads, also later ones)\n"
"      --tid TID[,TID...]   follow these threads only\n"
"  -- CMD ARGS...           launch CMD and follow it (and its children, unless --no-inherit);\n"
"                           mmscope exits with CMD's exit status\n"
"Collection:\n"
"  -d, --delay SECS         interval (default 1; --interval MS also works)\n"
"      --duration SECS      stop after this long (report, record)\n"
"      --source bpf|perf    lock contention source (default: bpf, falling back to perf)\n"
"      --vma-source tracepoint|fentry|inferred|off\n"
"      --rmap-source tracepoint|fentry|stock|off\n"
"      --mmap-hold          also trace every mmap_lock acquisition (hold times; costly)\n"
"      --mmap-hold-sample N time 1 in N acquisitions at random (estimates; cheaper)\n"
"      --vma-lock           count page faults served under the per-VMA lock and those\n"
"                           that fell back to mmap_lock, per process\n"
"      --lock-owner         who held each lock a wait began on (mutex, rt_mutex, rwsem\n"
"                           writer) and its stack; report groups waits by owner\n"
"      --window N           intervals of history kept (default 600)\n"
"  -M, --map-nr-entries N, --stack-entries N, --task-entries N   kernel map sizes\n"
"  -b, --use-bpf            --source bpf;  -a, --all-cpus: the whole system (the default)\n"
"Filters (as perf lock contention):\n"
"  -G, --cgroup-filter CG   only waits of tasks in these cgroup v2 paths (/a/b,...)\n"
"  -C, --cpu CPUS           only waits begun on these CPUs (0-3,6; live only)\n"
"  -Y, --type-filter TYPE   spinlock, rwlock[:R|:W], rwsem[:R|:W], mutex, rtmutex, ...\n"
"  -L, --lock-filter LOCK   address, symbol, or name (mmap_lock, i_mmap_rwsem, &cache)\n"
"  -S, --callstack-filter STR   only waits whose call stack has a symbol containing STR\n"
"      --max-stack N        frames kept per stack (default 8)\n"
"      --stack-skip N       frames to skip past the lock primitives (default 0)\n"
"Output (report, compare):\n"
"      --by lock|caller|task|process|type|stack|cgroup|owner   grouping (default\n"
"                           caller, like perf); -t, --threads: task; -l, --lock-addr:\n"
"                           lock; --lock-cgroup: cgroup; --lock-owner: owner\n"
"  -F, --field LIST         text/CSV columns: contended, wait_total, wait_max, wait_min,\n"
"                           avg_wait, p50, p99\n"
"  -E, --entries N          print N rows\n"
"  -k, --key KEY            sort: contended, wait_total, wait_max, wait_min, avg_wait, p50, p99\n"
"      --percentiles        add p50/p99 columns\n"
"      --stacks             print each row's call stack\n"
"      --json | --csv | -x SEP\n"
"  -i, --input FILE         the recording to read (as FILE)\n"
"      --folded             wait (-k contended: count) by call stack, for flame graphs;\n"
"                           with --by lock the lock is the root frame\n"
"Compare (A/B of recordings: docs/COMPARE.md):\n"
"      --base NAME, --new NAME   labels of the two sides (default base, new)\n"
"  -k, --key LIST           score,totals,locks,callers,owners,mmap_lock,vma,rmap; avg,rate,sum\n"
"  -E, --entries N          locks, callers and processes per group (default 5)\n"
"      --tui                both sides next to each other on screen\n"
"Export:\n"
"      --perfetto OUT.json  Chrome JSON trace: counter tracks per interval (-E N: locks\n"
"                           and processes with tracks of their own, default 10)\n"
"Recording:\n"
"  -o, --output FILE        recording file (mode 0600; --force to overwrite)\n"
"      --hide-addrs         replace kernel addresses with stable hashes\n"
"      --openmetrics DIR    live (TUI, record, report): DIR/mmscope.prom rewritten every\n"
"                           interval for node_exporter's textfile collector\n"
"      --runs N             run CMD N times, one recording each: FILE-1 ... FILE-N\n"
"      --cooldown SECS      pause between runs\n"
"      --score REGEX        CMD's score: the one group of REGEX on its stdout (last match)\n"
"      --score-default      the same for the workloads' last line, 'score: N UNIT'\n"
"      --score-file FILE    CMD's score: the number it wrote to FILE\n"
"      --score-name NAME, --score-unit UNIT, --score-lower-better  how it is labelled\n"
"Other:\n"
"      --no-color           monochrome (NO_COLOR is honoured too)\n"
"  -h, --help, -V, --version\n"
"\n"
"Needs root (CAP_BPF + CAP_PERFMON) for live data; replay, report FILE, info and\n"
"compare work unprivileged on recordings (try: mmscope replay examples/demo.mmscope).\n");
}

static int parse_uint(const char *s, const char *what, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 0);
	if (errno || end == s || *end || *out > max || s[0] == '-') {
		mms_cli_error("invalid %s '%s'", what, s);
		return -EINVAL;
	}
	return 0;
}

static int parse_backend(const char *s, enum mms_backend_choice *out)
{
	static const struct {
		const char *name;
		enum mms_backend_choice c;
	} t[] = {
		{ "auto", MMS_SRC_AUTO }, { "bpf", MMS_SRC_BPF }, { "perf", MMS_SRC_PERF },
		{ "tracepoint", MMS_SRC_TRACEPOINT }, { "fentry", MMS_SRC_FENTRY },
		{ "inferred", MMS_SRC_INFERRED }, { "stock", MMS_SRC_STOCK }, { "off", MMS_SRC_OFF },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(s, t[i].name)) {
			*out = t[i].c;
			return 0;
		}
	mms_cli_error("unknown source '%s'", s);
	return -EINVAL;
}

static int add_tids(struct mms_options *o, char *list)
{
	for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		unsigned long v;

		if (o->nr_tids >= MMS_MAX_FILTERS) {
			mms_cli_error("at most %d --tid values", MMS_MAX_FILTERS);
			return -E2BIG;
		}
		if (parse_uint(tok, "thread id", INT_MAX, &v) || !v)
			return -EINVAL;
		o->tids[o->nr_tids++] = (int)v;
	}
	return 0;
}

static int add_types(struct mms_options *o, char *list)
{
	for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		int n = mms_lock_type_parse(tok, o->types + o->nr_types,
					    MMS_MAX_FILTERS - o->nr_types);

		if (n < 0) {
			mms_cli_error("unknown lock type '%s' (spinlock, rwlock[:R|:W], "
				"rwsem[:R|:W], mutex, rtmutex, semaphore, pcpu-sem[:R|:W])", tok);
			return n;
		}
		o->nr_types += n;
	}
	return 0;
}

static int add_str(const char **arr, int *nr, const char *s, const char *what)
{
	if (*nr >= MMS_MAX_FILTERS) {
		mms_cli_error("at most %d %s filters", MMS_MAX_FILTERS, what);
		return -E2BIG;
	}
	arr[(*nr)++] = s;
	return 0;
}

/* -G: cgroup v2 paths as perf takes them ("/system.slice/cron.service" or without the '/'). */
static int add_cgroups(struct mms_options *o, char *list)
{
	for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		if (o->nr_cgroups >= MMS_MAX_FILTERS) {
			mms_cli_error("at most %d -G cgroups", MMS_MAX_FILTERS);
			return -E2BIG;
		}
		if (strlen(tok) >= MMS_CGROUP_LEN || mms_esc_needed(tok)) {
			mms_cli_error("-G '%s': a cgroup path of printable characters, shorter "
				"than %d bytes", tok, MMS_CGROUP_LEN);
			return -EINVAL;
		}
		mms_cgroup_normalize(o->cgroups[o->nr_cgroups++], MMS_CGROUP_LEN, tok);
	}
	if (!o->nr_cgroups) {
		mms_cli_error("-G needs a cgroup path (-G /system.slice/cron.service)");
		return -EINVAL;
	}
	return 0;
}

static int set_cpus(struct mms_options *o, const char *list)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	char why[256];

	if (mms_options_set_cpus(o, list, n > 0 && n <= MMS_MAX_CPUS ? (unsigned int)n :
				 MMS_MAX_CPUS, why, sizeof(why))) {
		mms_cli_error("%s", why);
		return -EINVAL;
	}
	return 0;
}

static int set_fields(struct mms_cli *cli, const char *list)
{
	const char *bad = list;
	size_t len = 0;
	int n = mms_report_fields_parse(list, cli->fields, &bad, &len);

	if (n < 0) {
		mms_cli_error("-F: unknown or repeated field '%.*s' (contended, wait_total, "
			"wait_max, wait_min, avg_wait, p50, p99, each once)", (int)len, bad);
		return -EINVAL;
	}
	cli->nr_fields = n;
	return 0;
}

static int parse_one(struct mms_cli *cli, int c, char *arg)
{
	struct mms_options *o = &cli->opts;
	unsigned long v;
	char *end;
	double d;

	switch (c) {
	case 'p':
		if (parse_uint(arg, "PID", INT_MAX, &v) || !v)
			return -EINVAL;
		o->pid = (int)v;
		return 0;
	case OPT_TID:
		return add_tids(o, arg);
	case OPT_INTERVAL:
		if (parse_uint(arg, "interval", 60000, &v) || v < 100) {
			mms_cli_error("--interval takes 100..60000 ms");
			return -EINVAL;
		}
		o->interval_ms = (uint32_t)v;
		return 0;
	case 'd':
		d = strtod(arg, &end);
		if (end == arg || *end || d < 0.1 || d > 60) {
			mms_cli_error("--delay takes 0.1..60 seconds");
			return -EINVAL;
		}
		o->interval_ms = (uint32_t)(d * 1000 + 0.5);
		return 0;
	case OPT_DURATION:
		d = strtod(arg, &end);
		if (end == arg || *end || d <= 0) {
			mms_cli_error("invalid --duration '%s' (seconds > 0)", arg);
			return -EINVAL;
		}
		o->duration_s = d;
		return 0;
	case OPT_SOURCE:
		return parse_backend(arg, &o->lock_src);
	case OPT_VMA_SOURCE:
		return parse_backend(arg, &o->vma_src);
	case OPT_RMAP_SOURCE:
		return parse_backend(arg, &o->rmap_src);
	case OPT_MMAP_HOLD:
		o->mmap_lock_hold = true;
		return 0;
	case OPT_VMA_LOCK:
		o->vma_lock = true;
		return 0;
	case OPT_LOCK_OWNER:
		/* Collected live (BPF lock source); report groups by it. */
		o->lock_owner = true;
		cli->by = MMS_BY_OWNER;
		return 0;
	case OPT_MMAP_HOLD_SAMPLE:
		if (parse_uint(arg, "--mmap-hold-sample", 1UL << 16, &v))
			return -EINVAL;
		if (!v || (v & (v - 1))) {
			mms_cli_error("--mmap-hold-sample wants a power of two from 1 to "
				"65536, not '%s'", arg);
			return -EINVAL;
		}
		o->mmap_lock_hold = true;
		o->mmap_hold_sample = (uint32_t)v;
		return 0;
	case 'Y':
		return add_types(o, arg);
	case 'L':
		return add_str(o->locks, &o->nr_locks, arg, "lock");
	case 'S':
		return add_str(o->stack_match, &o->nr_stack_match, arg, "call-stack");
	case OPT_MAX_STACK:
		if (parse_uint(arg, "--max-stack", MMS_MAX_STACK, &v) || !v)
			return -EINVAL;
		o->max_stack = (uint32_t)v;
		return 0;
	case OPT_STACK_SKIP:
		if (parse_uint(arg, "--stack-skip", MMS_MAX_STACK, &v))
			return -EINVAL;
		o->stack_skip = (uint32_t)v;
		return 0;
	case 'M':
	case OPT_STACK_ENTRIES:
	case OPT_TASK_ENTRIES:
		if (parse_uint(arg, "map size", 1UL << 24, &v) || !v)
			return -EINVAL;
		*(c == 'M' ? &o->map_entries :
		  c == OPT_STACK_ENTRIES ? &o->stack_entries : &o->task_entries) = (uint32_t)v;
		return 0;
	case OPT_WINDOW:
		if (parse_uint(arg, "--window", 1UL << 20, &v) || v < 2)
			return -EINVAL;
		o->window = (uint32_t)v;
		return 0;
	case OPT_HIDE_ADDRS:
		o->hide_addrs = true;
		return 0;
	case OPT_NO_COLOR:
		o->no_color = true;
		return 0;
	case OPT_NO_INHERIT:
		o->no_inherit = true;
		return 0;
	case OPT_BY:
		if (mms_group_parse(arg, &cli->by)) {
			mms_cli_error("--by takes lock, caller, task, process, type, stack, "
				"cgroup or owner");
			return -EINVAL;
		}
		return 0;
	case OPT_LOCK_CGROUP:
		cli->by = MMS_BY_CGROUP;
		return 0;
	case 't':
		cli->by = MMS_BY_TASK;
		return 0;
	case 'l':
		cli->by = MMS_BY_LOCK;
		return 0;
	case 'b':
		o->lock_src = MMS_SRC_BPF;
		return 0;
	case 'a':
		cli->all_cpus = true;
		return 0;
	case 'i':
		cli->files[cli->nr_files++] = arg;
		return 0;
	case 'G':
		return add_cgroups(o, arg);
	case 'C':
		if (o->cpu_list) {
			mms_cli_error("one -C list, please (CPUs and ranges: -C 0-3,6)");
			return -EINVAL;
		}
		return set_cpus(o, arg);
	case 'F':
		return set_fields(cli, arg);
	case 'E':
		if (parse_uint(arg, "--entries", INT_MAX, &v))
			return -EINVAL;
		cli->entries = (int)v;
		return 0;
	case 'k':
		if (!strcmp(cli->cmd, "compare")) {
			cli->metrics = arg;
			return 0;
		}
		if (mms_sort_parse(arg, &cli->sort)) {
			mms_cli_error("unknown key '%s' (contended, wait_total, wait_max, "
				"wait_min, avg_wait, p50, p99)", arg);
			return -EINVAL;
		}
		cli->sort_given = true;
		return 0;
	case OPT_STACKS:
		cli->stacks = true;
		return 0;
	case OPT_PCT:
		cli->percentiles = true;
		return 0;
	case OPT_JSON:
		cli->fmt = MMS_OUT_JSON;
		return 0;
	case OPT_CSV:
		cli->fmt = MMS_OUT_CSV;
		return 0;
	case OPT_FOLDED:
		cli->fmt = MMS_OUT_FOLDED;
		return 0;
	case OPT_PERFETTO:
		cli->perfetto = arg;
		return 0;
	case OPT_OPENMETRICS:
		cli->openmetrics = arg;
		return 0;
	case 'x':
		cli->fmt = MMS_OUT_CSV;
		cli->sep = arg;
		return 0;
	case 'o':
		cli->output = arg;
		return 0;
	case OPT_FORCE:
		cli->force = true;
		return 0;
	case OPT_BASE:
		cli->base_name = arg;
		return 0;
	case OPT_NEW:
		cli->new_name = arg;
		return 0;
	case OPT_TUI:
		cli->compare_tui = true;
		return 0;
	case OPT_RUNS:
		if (parse_uint(arg, "--runs", 1000, &v) || !v) {
			fprintf(stderr, "mmscope: --runs takes 1..1000\n");
			return -EINVAL;
		}
		cli->runs = (int)v;
		return 0;
	case OPT_COOLDOWN:
		d = strtod(arg, &end);
		if (end == arg || *end || !(d >= 0 && d <= 86400)) {
			fprintf(stderr, "mmscope: invalid --cooldown '%s' (0..86400 seconds)\n", arg);
			return -EINVAL;
		}
		cli->cooldown_s = d;
		return 0;
	case OPT_SCORE:
	case OPT_SCORE_DEFAULT:
	case OPT_SCORE_FILE:
		if (cli->score_regex || cli->score_file) {
			fprintf(stderr, "mmscope: one score a run: --score, --score-default or "
				"--score-file, once\n");
			return -EINVAL;
		}
		*(c == OPT_SCORE_FILE ? &cli->score_file : &cli->score_regex) =
			c == OPT_SCORE_DEFAULT ? MMS_SCORE_DEFAULT_REGEX : arg;
		return 0;
	case OPT_SCORE_NAME:
		cli->score_name = arg;
		return 0;
	case OPT_SCORE_UNIT:
		cli->score_unit = arg;
		return 0;
	case OPT_SCORE_LOWER:
		cli->score_lower = true;
		return 0;
	default:
		return -EINVAL;
	}
}

static const char *const commands[] = {
	"report", "record", "replay", "info", "compare", "check", "export", NULL,
};

static int parse(struct mms_cli *cli, int argc, char **argv)
{
	int c, first = 1;

	cli->cmd = "tui";
	if (argc > 1)
		for (const char *const *k = commands; *k; k++)
			if (!strcmp(argv[1], *k)) {
				cli->cmd = *k;
				first = 2;
			}
	/*
	 * Options may sit among file names; "--" ends them: what follows is the
	 * command, or compare's B side.  getopt stops at each file name ("+"),
	 * which is collected, and parsing goes on after it.
	 */
	cli->files = calloc((size_t)argc, sizeof(*cli->files));
	if (!cli->files)
		return -ENOMEM;
	optind = first;
	opterr = 1;
	for (;;) {
		c = getopt_long(argc, argv, "+hVp:d:Y:L:S:E:k:x:o:G:C:F:M:tlabi:", long_opts, NULL);
		if (c == -1) {
			if (optind >= argc || !strcmp(argv[optind - 1], "--") ||
			    !strcmp(argv[optind], "--"))
				break;
			cli->files[cli->nr_files++] = argv[optind++];
			continue;
		}
		if (c == 'h') {
			usage(stdout);
			exit(MMS_EXIT_OK);
		}
		if (c == 'V') {
			printf("mmscope %s\n", MMS_VERSION);
			exit(MMS_EXIT_OK);
		}
		if (c == '?' || parse_one(cli, c, optarg)) {
			fprintf(stderr, "Try 'mmscope --help'.\n");
			return -EINVAL;
		}
	}
	/* getopt consumes a "--" it meets: step back onto it. */
	if (optind > first && optind <= argc && !strcmp(argv[optind - 1], "--"))
		optind--;
	if (optind < argc) {	/* "--" */
		optind++;
		if (!strcmp(cli->cmd, "compare")) {
			cli->files_b = argv + optind;
			cli->nr_files_b = argc - optind;
			for (int i = optind; i < argc; i++)
				if (argv[i][0] == '-' && argv[i][1]) {
					mms_cli_error("options go before '--' (found '%s' "
						"among the B recordings)", argv[i]);
					return -EINVAL;
				}
		} else if (optind < argc) {
			cli->opts.cmd = argv + optind;
		} else {
			mms_cli_error("'--' must be followed by a command");
			return -EINVAL;
		}
	}
	return 0;
}

/* -G, -C, -F, -a: what they apply to, and whether the cgroups exist. */
static int validate_targets(struct mms_cli *cli, bool live)
{
	struct mms_options *o = &cli->opts;
	bool narrows = !strcmp(cli->cmd, "report") || live;

	if (cli->all_cpus && (o->pid || o->nr_tids || o->cmd)) {
		mms_cli_error("-a (every CPU, the whole system) and -p, --tid or -- CMD "
			"exclude each other");
		return -EINVAL;
	}
	if ((o->lock_owner || cli->by == MMS_BY_OWNER) && live && o->lock_src != MMS_SRC_AUTO &&
	    o->lock_src != MMS_SRC_BPF) {
		mms_cli_error("--lock-owner needs the BPF lock source (--source bpf): the "
			"contention tracepoints do not say who holds the lock");
		return -EINVAL;
	}
	if ((o->nr_cgroups || o->cpu_list) && !narrows) {
		mms_cli_error("-G and -C choose what live collection and report keep; "
			"%s does not take them", cli->cmd);
		return -EINVAL;
	}
	if (o->cpu_list && !live) {
		mms_cli_error("-C is for live data: a recording does not keep the CPU a wait "
			"began on (record with -C to keep only those waits)");
		return -EINVAL;
	}
	if (cli->nr_fields && (strcmp(cli->cmd, "report") || cli->fmt == MMS_OUT_JSON ||
			       cli->fmt == MMS_OUT_FOLDED)) {
		mms_cli_error("-F picks the columns of report's text and CSV tables "
			"(--json has every statistic)");
		return -EINVAL;
	}
	for (int i = 0; live && i < o->nr_cgroups; i++) {
		uint64_t id;
		int e = mms_cgroup_id(o->cgroups[i], &id);

		if (e == -ENODEV) {
			mms_cli_error("-G needs cgroup v2, and no cgroup2 file system is mounted "
				"(at /sys/fs/cgroup or /sys/fs/cgroup/unified)");
			return -EINVAL;
		}
		if (e) {
			mms_cli_error("-G: no cgroup '%s' under %s", o->cgroups[i],
				mms_cgroup_root());
			return -EINVAL;
		}
	}
	return 0;
}

static int validate(struct mms_cli *cli)
{
	struct mms_options *o = &cli->opts;
	bool live = strcmp(cli->cmd, "replay") && strcmp(cli->cmd, "info") &&
		    strcmp(cli->cmd, "compare") && strcmp(cli->cmd, "check") &&
		    strcmp(cli->cmd, "export") &&
		    !(!strcmp(cli->cmd, "report") && cli->nr_files);

	if (o->pid && o->cmd) {
		mms_cli_error("-p and -- CMD exclude each other");
		return -EINVAL;
	}
	/* On a recording, -p and --tid narrow the report instead of choosing a target. */
	if (!live && (o->cmd || ((o->pid || o->nr_tids) && strcmp(cli->cmd, "report")))) {
		mms_cli_error("%s works on recordings; -p, --tid and -- CMD are for "
			"live data", cli->cmd);
		return -EINVAL;
	}
	if (live && cli->nr_files && strcmp(cli->cmd, "report")) {
		mms_cli_error("unexpected argument '%s'", cli->files[0]);
		return -EINVAL;
	}
	if (!strcmp(cli->cmd, "report") && cli->nr_files > 1) {
		mms_cli_error("report takes one recording");
		return -EINVAL;
	}
	if (!strcmp(cli->cmd, "export") && (cli->nr_files != 1 || !cli->perfetto)) {
		fprintf(stderr, "mmscope: export takes one recording and where to write: "
			"mmscope export --perfetto OUT.json FILE\n");
		return -EINVAL;
	}
	if (cli->openmetrics && !live) {
		fprintf(stderr, "mmscope: --openmetrics is for live data (the TUI, record, "
			"report): %s works on recordings\n", cli->cmd);
		return -EINVAL;
	}
	if (cli->perfetto && strcmp(cli->cmd, "export")) {
		fprintf(stderr, "mmscope: --perfetto is for export: mmscope export --perfetto "
			"OUT.json FILE\n");
		return -EINVAL;
	}
	if ((!strcmp(cli->cmd, "replay") || !strcmp(cli->cmd, "info")) && cli->nr_files != 1) {
		mms_cli_error("%s takes one recording: mmscope %s FILE", cli->cmd,
			cli->cmd);
		return -EINVAL;
	}
	if (cli->fmt == MMS_OUT_FOLDED && strcmp(cli->cmd, "report")) {
		fprintf(stderr, "mmscope: --folded is a report format (mmscope report [FILE] "
			"--folded); %s has text, --json and --csv\n", cli->cmd);
		return -EINVAL;
	}
	if (!strcmp(cli->cmd, "record") && !cli->output) {
		mms_cli_error("record needs -o FILE");
		return -EINVAL;
	}
	if ((cli->runs || cli->cooldown_s || cli->score_regex || cli->score_file ||
	     cli->score_name || cli->score_unit || cli->score_lower) &&
	    (strcmp(cli->cmd, "record") || !o->cmd)) {
		fprintf(stderr, "mmscope: --runs, --cooldown and --score* are for "
			"record -o FILE ... -- CMD: they run the command and read its score\n");
		return -EINVAL;
	}
	if ((cli->score_name || cli->score_unit || cli->score_lower) && !cli->score_regex &&
	    !cli->score_file) {
		fprintf(stderr, "mmscope: --score-name, --score-unit and --score-lower-better "
			"describe a score: add --score REGEX, --score-default or --score-file\n");
		return -EINVAL;
	}
	if (cli->cooldown_s && !cli->runs) {
		fprintf(stderr, "mmscope: --cooldown is the pause between --runs\n");
		return -EINVAL;
	}
	if (!strcmp(cli->cmd, "compare") && (!cli->nr_files || !cli->nr_files_b)) {
		mms_cli_error("compare needs recordings on both sides: "
			"mmscope compare A1 [A2...] -- B1 [B2...]");
		return -EINVAL;
	}
	if (o->nr_tids && (o->pid || o->cmd)) {
		mms_cli_error("--tid and -p/-- CMD exclude each other");
		return -EINVAL;
	}
	return validate_targets(cli, live);
}

static int run(struct mms_cli *cli)
{
	if (!strcmp(cli->cmd, "check"))
		return mms_cmd_check(cli);
	if (!strcmp(cli->cmd, "report"))
		return mms_cmd_report(cli);
	if (!strcmp(cli->cmd, "record"))
		return mms_cmd_record(cli);
	if (!strcmp(cli->cmd, "replay"))
		return mms_cmd_replay(cli);
	if (!strcmp(cli->cmd, "info"))
		return mms_cmd_info(cli);
	if (!strcmp(cli->cmd, "compare"))
		return mms_cmd_compare(cli);
	if (!strcmp(cli->cmd, "export"))
		return mms_cmd_export(cli);
	return mms_cmd_tui(cli);
}

int main(int argc, char **argv)
{
	struct mms_cli cli = { .by = MMS_BY_CALLER, .sort = MMS_SORT_WAIT_TOTAL };
	char why[256];
	int ret;

	/*
	 * Each interval's rows are one block of up to megabytes, freed when the
	 * interval leaves the window.  From the heap, blocks of changing sizes
	 * freed oldest first fragment it and RSS creeps up over hours; mapped
	 * one by one (a fixed threshold also stops glibc raising it), freeing
	 * one returns it, and RSS follows what the history holds.
	 */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	mms_options_init(&cli.opts);
	/* A knob mmscope cannot read is refused, never guessed (MMSCOPE_X=0 is off). */
	if (mms_knobs_load(&cli.opts.knobs, why, sizeof(why))) {
		mms_cli_error("%s", why);
		return MMS_EXIT_USAGE;
	}
	mms_start_mark(&cli.opts.knobs, "main");
	mms_collectors_init(&cli.opts.knobs);
	if (parse(&cli, argc, argv) || validate(&cli)) {
		free(cli.files);
		return MMS_EXIT_USAGE;
	}
	if (getenv("NO_COLOR") && *getenv("NO_COLOR"))
		cli.opts.no_color = true;
	ret = run(&cli);
	free(cli.files);
	return ret;
}
