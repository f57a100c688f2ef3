// SPDX-License-Identifier: GPL-2.0
/*
 * Per-VMA lock counting for the mmap_lock sources: per process, page faults
 * and those that fell back to mmap_lock (vma_lock.bpf.c); system-wide, the
 * kernel's own vma_lock_{success,abort,retry,miss} from /proc/vmstat where
 * it has them (CONFIG_PER_VMA_LOCK_STATS).  Alone it is the source
 * "vma-lock-bpf" (--vma-lock); with --mmap-hold the hold source runs it too
 * (mm_bpfsrc_def.with).  An mm BPF source as docs/HACKING.md adds one.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm_bpfsrc.h"
#include "vma_lock.h"
#include "vma_lock.skel.h"
#include "mmscope/collectors.h"
#include "mmscope/ksyms.h"
#include "mmscope/mm_metrics.h"
#include "mmscope/store.h"

/* The source's own state (b->priv). */
struct vl_priv {
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

	if (!a)
		return -ENOENT;
	/* The next symbol ends it; functions here are far below 64 KiB. */
	end = mms_ksyms_next(ks, a);
	*lo = a;
	*hi = end > a && end - a < 65536 ? end : a + 65536;
	return 0;
}

MM_BPFSRC_SKELETON(vma_lock)

static int vl_setup(struct mms_source *src, struct mm_bpfsrc *b)
{
	const struct mms_ksyms *ks = mms_collectors_ksyms();
	struct vma_lock *sk = b->skel;
	bool memcg = mmap_lock_memcg_arg();
	uint64_t lo, hi;

	if (func_range(ks, "lock_mm_and_find_vma", &lo, &hi))
		return mms_source_fail(src, -ENOENT, "per-VMA lock: no lock_mm_and_find_vma in "
				       "/proc/kallsyms (a kernel before 6.5, or kallsyms hidden)");
	sk->rodata->vl_find_lo = lo;
	sk->rodata->vl_find_hi = hi;
	/* Absent in kernels that set up anon_vma otherwise: nothing to tell apart then. */
	if (!func_range(ks, "__vmf_anon_prepare", &lo, &hi)) {
		sk->rodata->vl_anon_lo = lo;
		sk->rodata->vl_anon_hi = hi;
	}
	bpf_program__set_autoload(sk->progs.vl_acquired, !memcg);
	bpf_program__set_autoload(sk->progs.vl_acquired_memcg, memcg);
	return 0;
}

static int vl_ready(struct mms_source *src, struct mm_bpfsrc *b)
{
	struct vl_priv *p = b->priv;

	p->have_vmstat = !read_vmstat(p->vmstat);
	if (!p->have_vmstat)
		snprintf(src->note, sizeof(src->note), "%s (CONFIG_PER_VMA_LOCK_STATS off)",
			 MMS_VMA_LOCK_NO_KERNEL);
	return 0;
}

/* The counters from here on: what was counted before the start is not ours. */
static void vl_started(struct mm_bpfsrc *b)
{
	struct vl_priv *p = b->priv;

	if (p->have_vmstat)
		read_vmstat(p->vmstat);
}

/* The kernel's counters: deltas since the last drain, system-wide (proc_id 0). */
static int drain_vmstat(struct vl_priv *p, struct mms_store *st)
{
	uint64_t now[MMS_VMA_LOCK_K_NR];
	int err = 0;

	if (!p->have_vmstat || read_vmstat(now))
		return 0;
	for (int k = 0; k < MMS_VMA_LOCK_K_NR && !err; k++) {
		if (now[k] > p->vmstat[k])
			err = mms_store_add_value(st, 0, MMS_M_VMA_LOCK_KERNEL, (uint32_t)k, 1,
						  now[k] - p->vmstat[k]);
		p->vmstat[k] = now[k];
	}
	return err;
}

static int vl_drain(struct mm_bpfsrc *b, struct mms_store *st)
{
	struct vl_priv *p = b->priv;
	struct vma_lock *sk = b->skel;
	uint64_t nc = sk->bss->vl_no_caller;

	/* A caller not found within VL_DEPTH frames: the acquisition is not booked. */
	if (nc != p->no_caller_seen)
		mms_store_add_lost(st, MMS_LOST_STACK, nc - p->no_caller_seen);
	p->no_caller_seen = nc;
	return drain_vmstat(p, st);
}

static const struct mm_bpfsrc_def vl_def = {
	.names = vl_names,
	.nr_names = VL_NR,
	.open = vma_lock_open,
	.setup = vl_setup,
	.load = "loading tp_btf/page_fault_user and mmap_lock_acquire_returned programs",
	.attach = "attaching to page_fault_user and mmap_lock_acquire_returned",
	.ready = vl_ready,
	.started = vl_started,
	.drain = vl_drain,
	.priv_size = sizeof(struct vl_priv),
};

const struct mm_bpfsrc_def *vma_lock_with(const struct mms_options *o)
{
	return o->vma_lock ? &vl_def : NULL;
}

static int vl_create(struct mms_source *src, const struct mms_options *opts)
{
	(void)opts;
	return mm_bpfsrc_create(src, &vl_def);
}

/* --vma-lock without --mmap-hold: the mmap_lock family's source is this alone. */
const struct mms_source_ops mms_vma_lock_bpf_ops =
	MM_BPFSRC_OPS("vma-lock-bpf", "faults", MMS_FAM_MMAP_LOCK, vl_create);
