// SPDX-License-Identifier: GPL-2.0
/*
 * The list of collectors and their fallback order per metric family, plus
 * what they share: kernel symbols and tracefs.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf_load.h"
#include "mmscope/collectors.h"
#include "mmscope/ksyms.h"
#include "mmscope/recording.h"

static const struct mms_source_ops *const lock_chain[] = {
	&mms_lock_bpf_ops,
	&mms_lock_perf_ops,
	NULL,
};

static const struct mms_source_ops *const mmap_lock_chain[] = {
	&mms_mmap_hold_bpf_ops,
	&mms_mmap_hold_sampled_ops,
	&mms_vma_lock_bpf_ops,
	NULL,
};

static const struct mms_source_ops *const vma_chain[] = {
	&mms_vma_tp_ops,
	&mms_vma_fentry_ops,
	&mms_vma_inferred_ops,
	NULL,
};

static const struct mms_source_ops *const rmap_chain[] = {
	&mms_rmap_tp_ops,
	&mms_rmap_fentry_ops,
	&mms_rmap_stock_ops,
	NULL,
};

static const struct mms_source_ops *const empty_chain[] = { NULL };

const struct mms_source_ops *const *mms_collectors_chain(enum mms_metric_family f)
{
	switch (f) {
	case MMS_FAM_LOCK:
		return lock_chain;
	case MMS_FAM_MMAP_LOCK:
		return mmap_lock_chain;
	case MMS_FAM_VMA:
		return vma_chain;
	case MMS_FAM_RMAP:
		return rmap_chain;
	default:
		return empty_chain;
	}
}

static const struct mms_source_ops *const all[] = {
	&mms_lock_bpf_ops,
	&mms_lock_perf_ops,
	&mms_mmap_hold_bpf_ops,
	&mms_mmap_hold_sampled_ops,
	&mms_vma_lock_bpf_ops,
	&mms_vma_tp_ops,
	&mms_vma_fentry_ops,
	&mms_vma_inferred_ops,
	&mms_rmap_tp_ops,
	&mms_rmap_fentry_ops,
	&mms_rmap_stock_ops,
	NULL,
};

const struct mms_source_ops *const *mms_collectors_all(void)
{
	return all;
}

static enum mms_backend_choice family_choice(enum mms_metric_family f,
					     const struct mms_options *o)
{
	switch (f) {
	case MMS_FAM_LOCK:
		return o->lock_src;
	case MMS_FAM_VMA:
		return o->vma_src;
	case MMS_FAM_RMAP:
		return o->rmap_src;
	case MMS_FAM_MMAP_LOCK:
		return o->mmap_lock_hold || o->vma_lock ? MMS_SRC_AUTO : MMS_SRC_OFF;
	default:
		return MMS_SRC_AUTO;
	}
}

static const char *const choice_backend[] = {
	[MMS_SRC_BPF] = "bpf",
	[MMS_SRC_PERF] = "perf",
	[MMS_SRC_TRACEPOINT] = "tracepoint",
	[MMS_SRC_FENTRY] = "fentry",
	[MMS_SRC_INFERRED] = "inferred",
	[MMS_SRC_STOCK] = "stock",
};

bool mms_collectors_wanted(const struct mms_source_ops *ops, const struct mms_options *opts)
{
	enum mms_backend_choice c = family_choice(ops->family, opts);

	/*
	 * Hold mode: sampled or every acquisition, one source each (with
	 * --vma-lock it counts per-VMA lock faults too); --vma-lock alone:
	 * the fault counting source.
	 */
	if (ops->family == MMS_FAM_MMAP_LOCK && c == MMS_SRC_AUTO) {
		if (!opts->mmap_lock_hold)
			return ops == &mms_vma_lock_bpf_ops;
		return (opts->mmap_hold_sample > 1) == !strcmp(ops->backend, "sampled");
	}
	if (c == MMS_SRC_AUTO)
		return true;
	if (c == MMS_SRC_OFF)
		return false;
	return !strcmp(choice_backend[c], ops->backend);
}

static struct mms_ksyms *ksyms;
static bool ksyms_tried;
static pthread_t ksyms_thread;
static bool ksyms_loading;	/* ksyms_thread runs and owns ksyms until joined */

static void *ksyms_load_thread(void *arg)
{
	(void)arg;
	if (mms_ksyms_load(NULL, &ksyms))
		ksyms = NULL;
	return NULL;
}

void mms_collectors_ksyms_prefetch(void)
{
	sigset_t every, old;

	if (ksyms_tried || ksyms_loading)
		return;
	/* Signals stay with the main thread (its signalfd and handlers). */
	sigfillset(&every);
	pthread_sigmask(SIG_SETMASK, &every, &old);
	ksyms_loading = !pthread_create(&ksyms_thread, NULL, ksyms_load_thread, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

const struct mms_ksyms *mms_collectors_ksyms(void)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

	pthread_mutex_lock(&lock);
	if (ksyms_loading) {
		pthread_join(ksyms_thread, NULL);
		ksyms_loading = false;
		ksyms_tried = true;
	}
	if (!ksyms_tried) {
		ksyms_tried = true;
		if (mms_ksyms_load(NULL, &ksyms))
			ksyms = NULL;
	}
	pthread_mutex_unlock(&lock);
	return ksyms;
}

static struct btf *vmlinux_btf;
static bool btf_tried;

const struct btf *mms_collectors_btf(void)
{
	if (!btf_tried) {
		btf_tried = true;
		vmlinux_btf = btf__load_vmlinux_btf();
		if (libbpf_get_error(vmlinux_btf))
			vmlinux_btf = NULL;
	}
	return vmlinux_btf;
}

void mms_collectors_btf_release(void)
{
	btf__free(vmlinux_btf);
	vmlinux_btf = NULL;
	btf_tried = false;
}

void mms_collectors_cleanup(void)
{
	mms_collectors_ksyms();	/* joins a prefetch still reading */
	mms_ksyms_destroy(ksyms);
	ksyms = NULL;
	ksyms_tried = false;
	mms_collectors_btf_release();
}

static const char *tracefs_root;

const char *mms_tracefs_root(void)
{
	return tracefs_root ? tracefs_root : "/sys/kernel/tracing";
}

int mms_tracefs_ensure(void)
{
	struct stat sb;

	if (!stat("/sys/kernel/tracing/events", &sb)) {
		tracefs_root = "/sys/kernel/tracing";
		return 0;
	}
	if (!stat("/sys/kernel/debug/tracing/events", &sb)) {
		tracefs_root = "/sys/kernel/debug/tracing";
		return 0;
	}
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL))
		return -errno;
	tracefs_root = "/sys/kernel/tracing";
	return 0;
}

void mms_collectors_init(const struct mms_knobs *k)
{
	mms_bpf_load_init(k);
	mms_recording_set_import(&mms_perfdata_import);
}
