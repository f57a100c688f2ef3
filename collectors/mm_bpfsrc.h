/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one skeleton of an mm BPF source (mmap_hold, vma_fentry, vma_inferred,
 * rmap_fentry): open, filter, size, load, aggregate, attach, drain, detach,
 * destroy are written once here; a source is a BPF object built on
 * mm_agg.h and mm_filter.h plus a struct mm_bpfsrc_def saying what is its
 * own (its metric names, its messages, its program choices and decoding).
 * docs/HACKING.md shows how to add one.
 */
#ifndef MMSCOPE_MM_BPFSRC_H
#define MMSCOPE_MM_BPFSRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mm_agg.h"
#include "mmscope/source.h"

struct bpf_link;
struct bpf_object_skeleton;
struct mm_bpfsrc;

/* What one mm BPF source is; everything else is mm_bpfsrc.c's. */
struct mm_bpfsrc_def {
	const char *const *names;	/* metric index (the BPF side's) -> store metric name */
	uint32_t nr_names;
	/* The generated opener: MM_BPFSRC_SKELETON(name) defines name_open. */
	void *(*open)(struct mm_bpfsrc *b);
	/*
	 * Optional, after open: picks the programs for this kernel and sets
	 * the source's rodata.  0, or -errno with src->why set.
	 */
	int (*setup)(struct mms_source *src, struct mm_bpfsrc *b);
	/* For the messages: "loading tp_btf/mmap_lock_* programs". */
	const char *load;
	/*
	 * An fentry/fexit source: the functions it hooks; prepare then also
	 * attaches once, since only an attach tells (mms_bpf_load_fentry_try).
	 * NULL: a tracepoint source (load is the message).
	 */
	const char *fentry;
	/*
	 * With fentry: one function of those, hooked first by a program of two
	 * instructions (mms_bpf_fentry_probe): a kernel that refuses fentry
	 * says so before the object's BTF is parsed and its programs verified.
	 */
	const char *probe;
	/* For the messages: "attaching to mmap_lock tracepoints". */
	const char *attach;
	/* Optional, once loaded and aggregating: b->agg's callbacks, notes. */
	int (*ready)(struct mms_source *src, struct mm_bpfsrc *b);
	/* Optional: after attaching (reading counters the drains take deltas of). */
	void (*started)(struct mm_bpfsrc *b);
	/*
	 * Optional: before each drain of the aggregation map (a task iterator
	 * flushing per-task state, counters of the source's own): 0 or -errno.
	 */
	int (*drain)(struct mm_bpfsrc *b, struct mms_store *st);
	/*
	 * Optional: a second object this source loads, attaches and drains
	 * with its own, when these options ask for it (--mmap-hold --vma-lock:
	 * the hold source counts per-VMA lock faults too); NULL: none.  It
	 * fails with the source.
	 */
	const struct mm_bpfsrc_def *(*with)(const struct mms_options *o);
	/* Optional: frees what b->priv points to (b->priv itself is freed after). */
	void (*destroy)(struct mm_bpfsrc *b);
	size_t priv_size;		/* the source's own state, b->priv, zeroed */
};

struct mm_bpfsrc {
	const struct mm_bpfsrc_def *def;
	void *skel;			/* the skeleton (struct name *), NULL until open */
	/* Bound by MM_BPFSRC_SKELETON's opener: what every mm BPF object has. */
	struct bpf_object_skeleton *obj;
	void (*destroy_skel)(void *skel);
	struct bpf_map *agg_map;	/* mm_agg */
	struct bpf_map *targets;	/* mm_targets */
	struct bpf_program *fork;	/* mm_fork */
	__u32 *filter;			/* mm_filter in .rodata (written before load) */
	volatile __u32 *gen;		/* mm_gen in .bss */
	const __u64 *lost;		/* mm_lost in .bss */
	struct mm_agg agg;
	bool agg_ready;
	void *priv;			/* the source's own state (def->priv_size) */
	struct mm_bpfsrc *with;		/* def->with's object, or NULL */
};

/*
 * Defines `static void *name_open(struct mm_bpfsrc *b)` for the skeleton
 * name.skel.h (include it first): opens it and binds what mm_bpfsrc uses of
 * it to b.  NULL with errno set when it cannot open.
 */
#define MM_BPFSRC_SKELETON(name)					\
	static void name##_destroy_skel(void *skel)			\
	{								\
		name##__destroy(skel);					\
	}								\
									\
	static void *name##_open(struct mm_bpfsrc *b)			\
	{								\
		struct name *s = name##__open();			\
									\
		if (!s)							\
			return NULL;					\
		b->obj = s->skeleton;					\
		b->destroy_skel = name##_destroy_skel;			\
		b->agg_map = s->maps.mm_agg;				\
		b->targets = s->maps.mm_targets;			\
		b->fork = s->progs.mm_fork;				\
		b->filter = &s->rodata->mm_filter;			\
		b->gen = &s->bss->mm_gen;				\
		b->lost = s->bss->mm_lost;				\
		return s;						\
	}

/* The mm_bpfsrc an aggregation callback (decode, extra, flipped) runs for. */
static inline struct mm_bpfsrc *mm_bpfsrc_of(struct mm_agg *a)
{
	return (struct mm_bpfsrc *)((char *)a - offsetof(struct mm_bpfsrc, agg));
}

/* A source's create: `return mm_bpfsrc_create(src, &its_def);`. */
int mm_bpfsrc_create(struct mms_source *src, const struct mm_bpfsrc_def *def);
int mm_bpfsrc_prepare(struct mms_source *src);
int mm_bpfsrc_start(struct mms_source *src);
int mm_bpfsrc_drain(struct mms_source *src, struct mms_store *st);
void mm_bpfsrc_stop(struct mms_source *src);
void mm_bpfsrc_destroy(struct mms_source *src);

/* The ops of an mm BPF source: its name, backend, family and create. */
#define MM_BPFSRC_OPS(n, b, fam, create_fn)				\
	{								\
		.name = n,						\
		.backend = b,						\
		.family = fam,						\
		.create = create_fn,					\
		.prepare = mm_bpfsrc_prepare,				\
		.start = mm_bpfsrc_start,				\
		.drain = mm_bpfsrc_drain,				\
		.stop = mm_bpfsrc_stop,					\
		.destroy = mm_bpfsrc_destroy,				\
	}

/* Runs a task iterator program (attached as link it, may be NULL) over every task once. */
void mm_bpfsrc_iter_run(struct bpf_link *it);

#endif
