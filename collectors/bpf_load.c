// SPDX-License-Identifier: GPL-2.0
/*
 * The one way a BPF source loads (bpf_load.h): libbpf's print hook, the
 * watch on its messages around a load or attach, and failures explained.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf_load.h"
#include "mmscope/collectors.h"
#include "mmscope/knobs.h"
#include "mmscope/source.h"

static int debug;	/* MMSCOPE_DEBUG, as mms_bpf_load_init() was given it */

/* libbpf's messages outside a watched step: stderr under MMSCOPE_DEBUG, else nowhere. */
static int debug_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!debug || (level == LIBBPF_DEBUG && debug < 2))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/*
 * libbpf's messages while a source opens, loads or attaches are read for
 * what a failure should say: libbpf's first complaint, the program that
 * failed and the verifier's last word on it.  libbpf has one print hook for
 * the process and sources may load in threads of their own (the session
 * prepares the lock source beside the others), so the hook stays installed
 * and the watch is per thread.  Every message then goes on to "outer":
 * debug_print, or libbpf's own printer when mms_bpf_load_init() was not
 * called (the tests that load one source).
 */
static libbpf_print_fn_t outer;
static pthread_once_t hook_once = PTHREAD_ONCE_INIT;
static _Thread_local bool log_on;
static _Thread_local char log_first[256];
static _Thread_local char log_prog[64];
static _Thread_local char log_reason[160];

static int log_keep(enum libbpf_print_level level, const char *fmt, va_list ap);

static void hook_install(void)
{
	libbpf_print_fn_t prev = libbpf_set_print(log_keep);

	if (!outer)
		outer = prev;
}

void mms_bpf_load_init(const struct mms_knobs *k)
{
	debug = k->debug;
	outer = debug_print;
	pthread_once(&hook_once, hook_install);
}

/* Keeps the first complaint: later ones are usually its consequences. */
static void log_keep_first(const char *msg)
{
	size_t n;

	if (log_first[0])
		return;
	snprintf(log_first, sizeof(log_first), "%s", msg);
	n = strlen(log_first);
	while (n && (log_first[n - 1] == '\n' || log_first[n - 1] == ' '))
		log_first[--n] = '\0';
}

/* The verifier's reason: the last line of its log before "processed N insns". */
static void log_scan(const char *msg)
{
	const char *begin = strstr(msg, "-- BEGIN PROG LOAD LOG --");
	const char *end, *line, *eol, *last = NULL, *last_end = NULL;

	if (!strncmp(msg, "prog '", 6) && (begin || strstr(msg, "': failed to")))
		snprintf(log_prog, sizeof(log_prog), "%.*s", (int)strcspn(msg + 6, "'"), msg + 6);
	if (!begin)
		return;
	end = strstr(begin, "\nprocessed ");
	if (!end)
		end = strstr(begin, "-- END PROG LOAD LOG --");
	if (!end)
		end = begin + strlen(begin);
	for (line = strchr(begin, '\n'); line && ++line < end; line = eol) {
		eol = strchr(line, '\n');
		if (!eol || eol > end)
			eol = end;
		if (eol > line) {
			last = line;
			last_end = eol;
		}
	}
	if (last)
		snprintf(log_reason, sizeof(log_reason), "%.*s", (int)(last_end - last), last);
}

static int log_keep(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *msg = NULL;
	va_list aq;

	if (log_on && level != LIBBPF_DEBUG) {
		va_copy(aq, ap);
		if (vasprintf(&msg, fmt, aq) >= 0) {
			log_keep_first(msg);
			log_scan(msg);
		}
		va_end(aq);
		free(msg);
	}
	return outer ? outer(level, fmt, ap) : 0;
}

void mms_bpf_load_log_begin(void)
{
	pthread_once(&hook_once, hook_install);
	log_first[0] = 0;
	log_prog[0] = 0;
	log_reason[0] = 0;
	log_on = true;
}

void mms_bpf_load_log_end(void)
{
	log_on = false;
}

const char *mms_bpf_load_log_first(void)
{
	return log_first;
}

int mms_bpf_load_fail(struct mms_source *src, int err, const char *what)
{
	const char *prog = log_prog[0] ? ", program " : "";
	char hint[320] = "";

	if (log_reason[0])
		snprintf(hint, sizeof(hint), " (the verifier rejected %s%s: \"%s\"; "
			 "MMSCOPE_DEBUG=1 shows its log)", log_prog[0] ? "program " : "a program",
			 log_prog, log_reason);
	else if ((err == -EPERM || err == -EACCES) && geteuid())
		snprintf(hint, sizeof(hint), " (needs CAP_BPF and CAP_PERFMON: run as root, or "
			 "replay a recording)");
	else if (err == -EPERM || err == -EACCES)
		snprintf(hint, sizeof(hint), " (refused by the kernel's BPF policy%s%s)", prog,
			 log_prog);
	else if (err == -ENOENT || err == -ESRCH)
		snprintf(hint, sizeof(hint), " (a kernel function or tracepoint it needs is "
			 "missing%s%s)", prog, log_prog);
	else if (err == -EINVAL)
		snprintf(hint, sizeof(hint), " (rejected: kernel too old or different%s%s)", prog,
			 log_prog);
	else if (log_prog[0])
		snprintf(hint, sizeof(hint), " (program %s)", log_prog);
	log_prog[0] = 0;
	log_reason[0] = 0;
	return mms_source_fail(src, err, "%s: %s failed: %s%s", src->ops->name, what,
			       strerror(-err), hint);
}

int mms_bpf_load(struct mms_source *src, struct bpf_object_skeleton *skel, const char *what)
{
	int err;

	mms_bpf_load_log_begin();
	err = bpf_object__load_skeleton(skel);
	mms_bpf_load_log_end();
	return err ? mms_bpf_load_fail(src, err, what) : 0;
}

int mms_bpf_load_attach(struct mms_source *src, struct bpf_object_skeleton *skel,
			const char *what)
{
	int err;

	mms_bpf_load_log_begin();
	err = bpf_object__attach_skeleton(skel);
	mms_bpf_load_log_end();
	if (!err)
		return 0;
	bpf_object__detach_skeleton(skel);
	return mms_bpf_load_fail(src, err, what);
}

int mms_bpf_fentry_probe(struct mms_source *src, const char *func, const char *what)
{
	const struct btf *btf = mms_collectors_btf();
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int id = btf ? btf__find_by_name_kind(btf, func, BTF_KIND_FUNC) : -1;
	int prog, link, err = 0;
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_TRACE_FENTRY);

	if (id <= 0 || geteuid())
		return 0;
	o.attach_btf_id = (__u32)id;
	prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, "mms_probe", "GPL", insns, 2, &o);
	if (prog < 0) {
		err = -errno;
	} else {
		link = bpf_raw_tracepoint_open(NULL, prog);
		if (link < 0)
			err = -errno;
		else
			close(link);
		close(prog);
	}
	if (err != -EPERM)
		return 0;
	return mms_source_fail(src, err, "%s: fentry/fexit not permitted by this kernel (EPERM "
			       "when %s %s)", src->ops->name, prog < 0 ? "loading programs for" :
			       "attaching to", what);
}

int mms_bpf_load_fentry_try(struct mms_source *src, struct bpf_object_skeleton *skel,
			    const char *what)
{
	bool loaded = false;
	char buf[160];
	int err;

	mms_bpf_load_log_begin();
	err = bpf_object__load_skeleton(skel);
	if (!err) {
		loaded = true;
		err = bpf_object__attach_skeleton(skel);
		bpf_object__detach_skeleton(skel);
	}
	mms_bpf_load_log_end();
	if (!err)
		return 0;
	/* As root and not the verifier's doing: the kernel does not allow fentry at all. */
	if (err == -EPERM && !geteuid() && !log_reason[0]) {
		log_prog[0] = 0;
		return mms_source_fail(src, err, "%s: fentry/fexit not permitted by this kernel "
				       "(EPERM when %s %s)", src->ops->name,
				       loaded ? "attaching to" : "loading programs for", what);
	}
	snprintf(buf, sizeof(buf), "%s %s", loaded ? "attaching fentry/fexit to" :
		 "loading fentry/fexit on", what);
	return mms_bpf_load_fail(src, err, buf);
}

/* ---- Maps shared between objects ---------------------------------------- */

static struct {
	char name[BPF_OBJ_NAME_LEN];
	int fd;
	uint32_t key, value;
} shared[4];
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;

int mms_bpf_share_map(struct bpf_map *map)
{
	const char *name = bpf_map__name(map);
	uint32_t key = bpf_map__key_size(map), value = bpf_map__value_size(map);
	int err = -ENOSPC;
	size_t i;

	pthread_mutex_lock(&shared_lock);
	for (i = 0; i < sizeof(shared) / sizeof(shared[0]); i++) {
		if (!shared[i].name[0]) {
			LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = bpf_map__map_flags(map));
			int fd = bpf_map_create(bpf_map__type(map), name, key, value,
						bpf_map__max_entries(map), &o);

			if (fd < 0) {
				err = -errno;
				break;
			}
			snprintf(shared[i].name, sizeof(shared[i].name), "%s", name);
			shared[i].fd = fd;
			shared[i].key = key;
			shared[i].value = value;
		}
		if (!strncmp(shared[i].name, name, sizeof(shared[i].name) - 1)) {
			err = shared[i].key != key || shared[i].value != value ? -EINVAL :
			      bpf_map__reuse_fd(map, shared[i].fd);
			break;
		}
	}
	pthread_mutex_unlock(&shared_lock);
	return err;
}
