// SPDX-License-Identifier: GPL-2.0
/*
 * try_to_unmap batch sizes from fentry: try_to_unmap_one() marks the task
 * as unmapping one folio; every rmap removal inside it is one batch of
 * nr_pages (mainline folio_remove_rmap_ptes / _pmd; 6.1 page_remove_rmap,
 * one page each unless compound).  Removals outside try_to_unmap_one
 * (munmap, zap) are not batches of reclaim and are ignored, and so is the
 * one inside split_huge_pmd_locked(): splitting a PMD-mapped THP to PTEs
 * (reclaim's TTU_SPLIT_HUGE_PMD) removes the PMD's rmap after adding the
 * PTEs', which unmaps nothing (seen on 6.12 as one extra "batch" of 512 per
 * THP before its 512 real ones of 1).
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "mm_agg.h"
#include "mm_filter.h"
#include "rmap_fentry.h"

#define PAGE_MAPPING_ANON 0x1UL

/* Before 6.6 the folio order had a field of its own. */
struct folio___old {
	unsigned char _folio_order;
} __attribute__((preserve_access_index));

/*
 * The flags word: a plain unsigned long in 6.1, memdesc_flags_t (a struct
 * around it) in 6.18.  CO-RE does not relocate a field whose type
 * changed from integer to struct ("failed to resolve CO-RE relocation
 * struct folio.flags" on 6.1), so each shape has a flavour of its own and
 * the one this kernel has is read.
 */
struct folio___ulong_flags {
	unsigned long flags;
} __attribute__((preserve_access_index));

struct memdesc_flags___mms {
	unsigned long f;
} __attribute__((preserve_access_index));

struct folio___memdesc_flags {
	struct memdesc_flags___mms flags;
} __attribute__((preserve_access_index));

struct rf_task {
	__u8 in_ttu;
	__u8 anon;
	__u8 order;
	__u8 in_split;	/* inside split_huge_pmd_locked() */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct rf_task);
} rf_tasks SEC(".maps");

static __always_inline unsigned long folio_flags(struct folio *f)
{
	struct folio___memdesc_flags *fm = (void *)f;
	struct folio___ulong_flags *fu = (void *)f;

	if (bpf_core_field_exists(fu->flags))
		return BPF_CORE_READ(fu, flags);
	if (bpf_core_field_exists(fm->flags.f))
		return BPF_CORE_READ(fm, flags.f);
	return 0;
}

static __always_inline __u32 folio_order_of(struct folio *f)
{
	unsigned long flags = folio_flags(f);

	if (!(flags & (1UL << bpf_core_enum_value(enum pageflags, PG_head))))
		return 0;
	if (bpf_core_field_exists(((struct folio___old *)f)->_folio_order))
		return BPF_CORE_READ((struct folio___old *)f, _folio_order);
	if (bpf_core_field_exists(f->_flags_1))
		return BPF_CORE_READ(f, _flags_1) & 0xff;
	return 0;
}

SEC("fentry/try_to_unmap_one")
int BPF_PROG(rf_ttu_enter, struct folio *folio)
{
	struct rf_task *t;

	if (!mm_wanted(bpf_get_current_pid_tgid()))
		return 0;
	t = bpf_task_storage_get(&rf_tasks, bpf_get_current_task_btf(), 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t) {
		mm_lost_inc(MM_LOST_TASK_SLOT);
		return 0;
	}
	t->in_ttu = 1;
	t->in_split = 0;
	t->order = folio_order_of(folio);
	t->anon = ((unsigned long)BPF_CORE_READ(folio, mapping) & PAGE_MAPPING_ANON) != 0;
	return 0;
}

SEC("fexit/try_to_unmap_one")
int BPF_PROG(rf_ttu_exit)
{
	struct rf_task *t = bpf_task_storage_get(&rf_tasks, bpf_get_current_task_btf(), 0, 0);

	if (t)
		t->in_ttu = 0;
	return 0;
}

/* Only try_to_unmap_one() calls it in reclaim: nothing to filter here. */
SEC("fentry/split_huge_pmd_locked")
int BPF_PROG(rf_split_enter)
{
	struct rf_task *t = bpf_task_storage_get(&rf_tasks, bpf_get_current_task_btf(), 0, 0);

	if (t && t->in_ttu)
		t->in_split = 1;
	return 0;
}

SEC("fexit/split_huge_pmd_locked")
int BPF_PROG(rf_split_exit)
{
	struct rf_task *t = bpf_task_storage_get(&rf_tasks, bpf_get_current_task_btf(), 0, 0);

	if (t)
		t->in_split = 0;
	return 0;
}

static __always_inline void batch(__u64 nr_pages, bool whole)
{
	struct rf_task *t = bpf_task_storage_get(&rf_tasks, bpf_get_current_task_btf(), 0, 0);
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (!t || !t->in_ttu || t->in_split)
		return;
	if (whole)
		nr_pages = 1ULL << (t->order & 31);
	mm_agg_add(tgid, RF_BATCH, t->order, nr_pages);
	mm_agg_add(tgid, t->anon ? RF_BATCH_ANON : RF_BATCH_FILE, t->order, nr_pages);
}

SEC("fentry/folio_remove_rmap_ptes")
int BPF_PROG(rf_remove_ptes, struct folio *folio, struct page *page, int nr_pages)
{
	batch(nr_pages > 0 ? nr_pages : 0, false);
	return 0;
}

SEC("fentry/folio_remove_rmap_pmd")
int BPF_PROG(rf_remove_pmd)
{
	batch(0, true);
	return 0;
}

/* 6.1: one page per call, or the whole compound page. */
SEC("fentry/page_remove_rmap")
int BPF_PROG(rf_page_remove, struct page *page, struct vm_area_struct *vma, bool compound)
{
	batch(1, compound);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
