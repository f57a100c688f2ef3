// SPDX-License-Identifier: GPL-2.0
/*
 * Per-VMA lock counting for the mmap_lock sources: per process, page faults
 * and those that fell back to mmap_lock (vma_lock.bpf.c); system-wide, the
 * kernel's own vma_lock_{success,abort,retry,miss} from /proc/vmstat where
 * it has them (CONFIG_PER_VMA_LOCK_STATS).  Alone it is the source
 * "vma-lock-bpf" (--vma-lock); with --mmap-hold the hold source runs it too.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm_agg.h"
#include "vma_lock.h"
#include "vma_lock.skel.h"
#include "mmscope/collectors.h"
#include "mmscope/ksyms.h"
#include "mmscope/mm_metrics.h"
#include "mmscope/store.h"

struct vma_lock_counter {
	struct vma_lock *skel;
	struct mm_agg agg;
	bool agg_ready;
	bool have_vmstat;	/* the kernel counts: CONFIG_PER_VMA_LOCK_STATS */
	uint64_t vmstat[MMS_VMA_LOCK_K_NR];	/* last values read */
	uint64_t no_caller_seen;
};

static const char *const vl_names[VL_NR] = {
	[VL_FAULT] = MMS_M_VMA_LOCK_FAULTS,
	[VL_FALLBACK] = MMS_M_VMA_LOCK_FALLBACK,
	[VL_MMAP_RETRY] = MMS_M_VMA_LOCK_MMAP_RETRY,
};


/* The four counters from /proc/vmstat; -ENOENT when the kernel has none of them. */
static int read_vmstat(uint64_t v[MMS_VMA_LOCK_K_NR])
{
	FILE *f = fopen("/proc/vmstat", "re");
	char line[128];
	int found = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		/* "vma_lock_abort 12": the counter's name is vma_lock_ + the sub's name. */
		for (int k = 0; k < MMS_VMA_LOCK_K_NR && !strncmp(line, "vma_lock_", 9); k++) {
			const char *name = mms_vma_lock_kernel_name((uint32_t)k);
			size_t len = strlen(name);

			if (!strncmp(line + 9, name, len) && line[9 + len] == ' ') {
				v[k] = strtoull(line + 9 + len + 1, NULL, 10);
				found |= 1 << k;
			}
		}
	}
	fclose(f);
	return found == (1 << MMS_VMA_LOCK_K_NR) - 1 ? 0 : -ENOENT;
}

/* [lo, hi) of a kernel function: its address to the next symbol's. */
static int func_range(const struct mms_ksyms *ks, const char *name, uint64_t *lo, uint64_t *hi)
{
	uint64_t a = ks ? mms_ksyms_addr(ks, name) : 0, end;
	const struct mms_ksym *s;

	if (!a)
		return -ENOENT;
	/* Functions here are far below 64 KiB; the first address of another symbol ends it. */
	for (end = a + 1; end < a + 65536; end++) {
		s = mms_ksyms_find(ks, end);
		if (!s || s->addr != a)
			break;
	}
	*lo = a;
	*hi = end;
	return 0;
}

int vma_lock_open(struct mms_source *src, bool memcg, struct vma_lock_counter **out)
{
	const struct mms_ksyms *ks = mms_collectors_ksyms();
	struct vma_lock_counter *vl = calloc(1, sizeof(*vl));
	struct vma_lock *sk;
	uint64_t lo, hi;
	int err;

	*out = NULL;
	if (!vl)
		return mms_source_fail(src, -ENOMEM, "out of memory");
	sk = vl->skel = vma_lock__open();
	if (!sk) {
		err = mm_bpf_fail(src, -errno, "opening the per-VMA lock BPF object");
		goto err_free;
	}
	if (func_range(ks, "lock_mm_and_find_vma", &lo, &hi)) {
		err = mms_source_fail(src, -ENOENT, "per-VMA lock: no lock_mm_and_find_vma in "
				      "/proc/kallsyms (a kernel before 6.5, or kallsyms hidden)");
		goto err_close;
	}
	sk->rodata->vl_find_lo = lo;
	sk->rodata->vl_find_hi = hi;
	/* Absent in kernels that set up anon_vma otherwise: nothing to tell apart then. */
	if (!func_range(ks, "__vmf_anon_prepare", &lo, &hi)) {
		sk->rodata->vl_anon_lo = lo;
		sk->rodata->vl_anon_hi = hi;
	}
	sk->rodata->mm_filter = mm_filter_mode(src->opts);
	mm_filter_autoload(sk->progs.mm_fork, src->opts);
	bpf_program__set_autoload(sk->progs.vl_acquired, !memcg);
	bpf_program__set_autoload(sk->progs.vl_acquired_memcg, memcg);
	err = mm_agg_size(sk->maps.mm_agg, src->opts->map_entries);
	if (err) {
		err = mm_bpf_fail(src, err, "sizing the per-VMA lock aggregation map");
		goto err_close;
	}
	err = mm_bpf_load(src, sk->skeleton, "loading tp_btf/page_fault_user and "
			  "mmap_lock_acquire_returned programs");
	if (err)
		goto err_close;
	err = mm_filter_fill(sk->maps.mm_targets, src->opts);
	if (err) {
		err = mm_bpf_fail(src, err, "setting the process filter");
		goto err_close;
	}
	err = mm_agg_init(&vl->agg, sk->maps.mm_agg, &sk->bss->mm_gen, sk->bss->mm_lost,
			  vl_names, VL_NR);
	if (err) {
		err = mm_bpf_fail(src, err, "setting up aggregation");
		goto err_close;
	}
	vl->agg_ready = true;
	vl->have_vmstat = !read_vmstat(vl->vmstat);
	if (!vl->have_vmstat)
		snprintf(src->note, sizeof(src->note), "%s (CONFIG_PER_VMA_LOCK_STATS off)",
			 MMS_VMA_LOCK_NO_KERNEL);
	*out = vl;
	return 0;

err_close:
	vma_lock__destroy(sk);
err_free:
	free(vl);
	return err;
}

int vma_lock_attach(struct mms_source *src, struct vma_lock_counter *vl)
{
	int err = mm_bpf_attach(src, vl->skel->skeleton, "attaching to page_fault_user and "
				"mmap_lock_acquire_returned");

	/* The counters from here on: what was counted before the start is not ours. */
	if (!err && vl->have_vmstat)
		read_vmstat(vl->vmstat);
	return err;
}

/* The kernel's counters: deltas since the last drain, system-wide (proc_id 0). */
static int drain_vmstat(struct vma_lock_counter *vl, struct mms_store *st)
{
	uint64_t now[MMS_VMA_LOCK_K_NR];
	int err = 0;

	if (!vl->have_vmstat || read_vmstat(now))
		return 0;
	for (int k = 0; k < MMS_VMA_LOCK_K_NR && !err; k++) {
		if (now[k] > vl->vmstat[k])
			err = mms_store_add_value(st, 0, MMS_M_VMA_LOCK_KERNEL, (uint32_t)k, 1,
						  now[k] - vl->vmstat[k]);
		vl->vmstat[k] = now[k];
	}
	return err;
}

int vma_lock_drain(struct vma_lock_counter *vl, struct mms_store *st)
{
	uint64_t nc;
	int err;

	if (!vl || !vl->agg_ready)
		return 0;
	err = mm_agg_drain(&vl->agg, st);
	if (!err)
		err = drain_vmstat(vl, st);
	/* A caller not found within VL_DEPTH frames: the acquisition is not booked. */
	nc = vl->skel->bss->vl_no_caller;
	if (nc != vl->no_caller_seen)
		mms_store_add_lost(st, MMS_LOST_STACK, nc - vl->no_caller_seen);
	vl->no_caller_seen = nc;
	return err;
}

void vma_lock_detach(struct vma_lock_counter *vl)
{
	if (vl)
		vma_lock__detach(vl->skel);
}

void vma_lock_close(struct vma_lock_counter *vl)
{
	if (!vl)
		return;
	vma_lock__destroy(vl->skel);
	if (vl->agg_ready)
		mm_agg_finish(&vl->agg);
	free(vl);
}

/* --vma-lock without --mmap-hold: the mmap_lock family's source is this alone. */
static int vls_create(struct mms_source *src, const struct mms_options *opts)
{
	(void)opts;
	src->priv = NULL;
	return 0;
}

static int vls_prepare(struct mms_source *src)
{
	return vma_lock_open(src, mmap_lock_memcg_arg(), (struct vma_lock_counter **)&src->priv);
}

static int vls_start(struct mms_source *src)
{
	return vma_lock_attach(src, src->priv);
}

static int vls_drain(struct mms_source *src, struct mms_store *st)
{
	return vma_lock_drain(src->priv, st);
}

static void vls_stop(struct mms_source *src)
{
	vma_lock_detach(src->priv);
}

static void vls_destroy(struct mms_source *src)
{
	vma_lock_close(src->priv);
}

const struct mms_source_ops mms_vma_lock_bpf_ops = {
	.name = "vma-lock-bpf",
	.backend = "faults",
	.family = MMS_FAM_MMAP_LOCK,
	.create = vls_create,
	.prepare = vls_prepare,
	.start = vls_start,
	.drain = vls_drain,
	.stop = vls_stop,
	.destroy = vls_destroy,
};
