// SPDX-License-Identifier: GPL-2.0
/*
 * VMA split / merge / expand / shrink from fentry/fexit on the kernel's own
 * functions, for kernels without our tracepoints.  User space loads only
 * the programs whose functions this kernel has (BTF):
 *
 *   mainline: __split_vma, vma_merge_new_range (new ranges), vma_modify
 *             (changed ranges), copy_vma (marks merges as copies),
 *             vma_expand (outside a merge), vma_shrink
 *   6.1:      __split_vma, __vma_adjust (insert set = the split already
 *             counted, expand set = a merge; else an expand or shrink).
 *             mmap_region() joins a new mapping to its neighbours in
 *             vma_expand() and brk grows in place, neither through
 *             __vma_adjust: those merges are not seen (vma_fentry.c says so)
 *
 * Merge kinds come from geometry: the merged VMA reaching below the
 * requested range took in prev, above it next.  VMAs removed come from
 * mm->map_count before and after.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "mm_agg.h"
#include "mm_filter.h"
#include "mmscope/mm_metrics.h"
#include "vma_fentry.h"

#define MAX_ERRNO 4095

/* 6.12-6.14 called the VMA being changed vmg->vma, later kernels vmg->middle. */
struct vma_merge_struct___old {
	struct vm_area_struct *vma;
} __attribute__((preserve_access_index));

struct vf_task {
	__u64 req_start, req_end;	/* requested range of the merge in flight */
	__u64 old_start, old_end;	/* 6.1: the adjusted VMA before */
	__u64 middle;			/* vma_modify: the VMA changed */
	int map_count;
	__u8 in_new;			/* inside vma_merge_new_range */
	__u8 in_copy;			/* inside copy_vma */
	__u8 in_modify;
	__u8 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct vf_task);
} vf_tasks SEC(".maps");

static __always_inline struct vf_task *task_state(bool create)
{
	return bpf_task_storage_get(&vf_tasks, bpf_get_current_task_btf(), 0,
				    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
}

static __always_inline int map_count(void)
{
	return BPF_CORE_READ(bpf_get_current_task_btf(), mm, map_count);
}

static __always_inline __u32 cur_tgid(void)
{
	return bpf_get_current_pid_tgid() >> 32;
}

/*
 * The returned pointer as a plain number: the verifier lets unprivileged
 * arithmetic and comparisons happen on scalars only.
 */
static __always_inline __u64 ret_ptr(unsigned long long *ctx, int i)
{
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), &ctx[i]);
	return v;
}

static __always_inline bool is_err(__u64 p)
{
	return !p || p >= (__u64)-MAX_ERRNO;
}

static __always_inline void merged(struct vf_task *t, struct vm_area_struct *res, __u32 origin)
{
	__u64 start = BPF_CORE_READ(res, vm_start), end = BPF_CORE_READ(res, vm_end);
	__u32 kind = (start < t->req_start ? MMS_VMA_MERGE_PREV : 0) |
		     (end > t->req_end ? MMS_VMA_MERGE_NEXT : 0);
	int removed = t->map_count - map_count();

	mm_agg_add(cur_tgid(), VF_MERGE,
		   MMS_VMA_MERGE_SUB(kind, origin, BPF_CORE_READ(res, vm_file) != NULL),
		   removed > 0 ? removed : 0);
}

SEC("fexit/__split_vma")
int BPF_PROG(vf_split, void *vmi_or_mm, struct vm_area_struct *vma, unsigned long addr,
	     int new_below, int ret)
{
	__u32 sub = (new_below ? MMS_VMA_SPLIT_NEW_BELOW : MMS_VMA_SPLIT_NEW_ABOVE) |
		    (BPF_CORE_READ(vma, vm_file) ? MMS_VMA_FILE : 0);

	if (mm_wanted(bpf_get_current_pid_tgid()))
		mm_agg_add(cur_tgid(), ret ? VF_SPLIT_FAILED : VF_SPLIT, sub, 1);
	return 0;
}

SEC("fentry/vma_merge_new_range")
int BPF_PROG(vf_new_enter, struct vma_merge_struct *vmg)
{
	struct vf_task *t;

	if (!mm_wanted(bpf_get_current_pid_tgid()))
		return 0;
	t = task_state(true);
	if (!t) {
		mm_lost_inc(MM_LOST_TASK_SLOT);
		return 0;
	}
	t->req_start = BPF_CORE_READ(vmg, start);
	t->req_end = BPF_CORE_READ(vmg, end);
	t->map_count = map_count();
	t->in_new = 1;
	return 0;
}

SEC("fexit/vma_merge_new_range")
int BPF_PROG(vf_new_exit, struct vma_merge_struct *vmg, struct vm_area_struct *ret)
{
	struct vf_task *t = task_state(false);
	__u64 res = ret_ptr(ctx, 1);

	if (!t || !t->in_new)
		return 0;
	t->in_new = 0;
	if (!is_err(res))
		merged(t, (struct vm_area_struct *)res,
		       t->in_copy ? MMS_VMA_ORIGIN_COPY : MMS_VMA_ORIGIN_NEW);
	return 0;
}

SEC("fentry/vma_modify")
int BPF_PROG(vf_modify_enter, struct vma_merge_struct *vmg)
{
	struct vf_task *t;

	if (!mm_wanted(bpf_get_current_pid_tgid()))
		return 0;
	t = task_state(true);
	if (!t) {
		mm_lost_inc(MM_LOST_TASK_SLOT);
		return 0;
	}
	t->req_start = BPF_CORE_READ(vmg, start);
	t->req_end = BPF_CORE_READ(vmg, end);
	if (bpf_core_field_exists(vmg->middle))
		t->middle = (__u64)BPF_CORE_READ(vmg, middle);
	else
		t->middle = (__u64)BPF_CORE_READ((struct vma_merge_struct___old *)vmg, vma);
	t->map_count = map_count();
	t->in_modify = 1;
	return 0;
}

/* vma_modify() returns the merged VMA (prev or next), or the changed one after splits. */
SEC("fexit/vma_modify")
int BPF_PROG(vf_modify_exit, struct vma_merge_struct *vmg, struct vm_area_struct *ret)
{
	struct vf_task *t = task_state(false);
	__u64 res = ret_ptr(ctx, 1);

	if (!t || !t->in_modify)
		return 0;
	t->in_modify = 0;
	if (!is_err(res) && res != t->middle)
		merged(t, (struct vm_area_struct *)res, MMS_VMA_ORIGIN_EXISTING);
	return 0;
}

SEC("fentry/copy_vma")
int BPF_PROG(vf_copy_enter)
{
	struct vf_task *t;

	if (!mm_wanted(bpf_get_current_pid_tgid()))
		return 0;
	t = task_state(true);
	if (t)
		t->in_copy = 1;
	return 0;
}

SEC("fexit/copy_vma")
int BPF_PROG(vf_copy_exit)
{
	struct vf_task *t = task_state(false);

	if (t)
		t->in_copy = 0;
	return 0;
}

/* vma_expand() outside vma_merge_new_range(): exec's stack move and the like. */
SEC("fexit/vma_expand")
int BPF_PROG(vf_expand, struct vma_merge_struct *vmg, int ret)
{
	struct vf_task *t;

	if (ret || !mm_wanted(bpf_get_current_pid_tgid()))
		return 0;
	t = task_state(false);
	if (!t || !t->in_new)
		mm_agg_add(cur_tgid(), VF_EXPAND, 0, 1);
	return 0;
}

SEC("fexit/vma_shrink")
int BPF_PROG(vf_shrink, void *vmi, struct vm_area_struct *vma, unsigned long start,
	     unsigned long end, unsigned long pgoff, int ret)
{
	if (!ret && mm_wanted(bpf_get_current_pid_tgid()))
		mm_agg_add(cur_tgid(), VF_SHRINK, 0, 1);
	return 0;
}

/* 6.1 */
SEC("fentry/__vma_adjust")
int BPF_PROG(vf_adjust_enter, struct vm_area_struct *vma, unsigned long start,
	     unsigned long end, unsigned long pgoff, struct vm_area_struct *insert,
	     struct vm_area_struct *expand)
{
	struct vf_task *t;

	if (insert || !mm_wanted(bpf_get_current_pid_tgid()))
		return 0;
	t = task_state(true);
	if (!t) {
		mm_lost_inc(MM_LOST_TASK_SLOT);
		return 0;
	}
	t->old_start = BPF_CORE_READ(vma, vm_start);
	t->old_end = BPF_CORE_READ(vma, vm_end);
	t->map_count = map_count();
	return 0;
}

SEC("fexit/__vma_adjust")
int BPF_PROG(vf_adjust_exit, struct vm_area_struct *vma, unsigned long start,
	     unsigned long end, unsigned long pgoff, struct vm_area_struct *insert,
	     struct vm_area_struct *expand, int ret)
{
	struct vf_task *t;
	__u32 kind = 0;
	int removed;

	if (insert || ret || !mm_wanted(bpf_get_current_pid_tgid()))
		return 0;
	t = task_state(false);
	if (!t)
		return 0;
	if (!expand) {
		/* vma_adjust() without a merge: shift_arg_pages() and friends. */
		if (end - start > t->old_end - t->old_start)
			mm_agg_add(cur_tgid(), VF_EXPAND, 0, 1);
		else if (end - start < t->old_end - t->old_start)
			mm_agg_add(cur_tgid(), VF_SHRINK, 0, 1);
		return 0;
	}
	removed = t->map_count - map_count();
	if (start < t->old_start)
		kind |= MMS_VMA_MERGE_NEXT;	/* grew down over the range: it was next */
	if (end > t->old_end)
		kind |= MMS_VMA_MERGE_PREV;	/* grew up over the range: it was prev */
	if (removed >= 2)
		kind = MMS_VMA_MERGE_BOTH;
	mm_agg_add(cur_tgid(), VF_MERGE,
		   MMS_VMA_MERGE_SUB(kind, MMS_VMA_ORIGIN_UNKNOWN,
				     BPF_CORE_READ(vma, vm_file) != NULL),
		   removed > 0 ? removed : 0);
	return 0;
}

/*
 * 6.1: never attached to count anything.  User space only tries to attach
 * it, to say in the source's note what this kernel answers for vma_expand().
 */
SEC("fentry/vma_expand")
int BPF_PROG(vf_expand_probe)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
