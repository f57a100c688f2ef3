/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The collectors: every live source mmscope has, and the fallback order per
 * metric family (the order is registry.c's table; README.md's "Kernels" says
 * it per kernel, `mmscope check` for the running one).  The session
 * opens sources through here; `check` asks every one of them to really
 * prepare (load, attach, open) and reports what worked and why not.
 */
#ifndef MMSCOPE_COLLECTORS_H
#define MMSCOPE_COLLECTORS_H

#include <stdbool.h>

#include "mmscope/options.h"
#include "mmscope/source.h"

struct mms_ksyms;

/* Lock contention. */
extern const struct mms_source_ops mms_lock_bpf_ops;	/* tp_btf contention_begin/end */
extern const struct mms_source_ops mms_lock_perf_ops;	/* libperf + libtraceevent */
/* mmap_lock acquisitions / hold times (opt-in: fires on every acquisition). */
extern const struct mms_source_ops mms_mmap_hold_bpf_ops;
extern const struct mms_source_ops mms_mmap_hold_sampled_ops;	/* --mmap-hold-sample */
extern const struct mms_source_ops mms_vma_lock_bpf_ops;	/* --vma-lock alone */
/* VMA split / merge. */
extern const struct mms_source_ops mms_vma_tp_ops;	/* patched-kernel vma:* tracepoints */
extern const struct mms_source_ops mms_vma_fentry_ops;	/* fentry/fexit on mm functions */
extern const struct mms_source_ops mms_vma_inferred_ops;	/* map_count per syscall */
/* try_to_unmap batches. */
extern const struct mms_source_ops mms_rmap_tp_ops;	/* patched-kernel rmap:* tracepoint */
extern const struct mms_source_ops mms_rmap_fentry_ops;	/* fentry on try_to_unmap_one */
extern const struct mms_source_ops mms_rmap_stock_ops;	/* vmscan/migrate stock tracepoints */

/* Candidates for a family in fallback order, NULL-terminated. */
const struct mms_source_ops *const *mms_collectors_chain(enum mms_metric_family f);
/* Every source, for `check`, NULL-terminated. */
const struct mms_source_ops *const *mms_collectors_all(void);
/* Does the backend choice in opts allow this source for its family? */
bool mms_collectors_wanted(const struct mms_source_ops *ops, const struct mms_options *opts);

/*
 * Kernel symbols shared by all collectors, loaded on first use (NULL when
 * /proc/kallsyms cannot be read).  _prefetch() starts reading them in a
 * thread of their own (it is the slowest file the start reads), so the
 * sources load their BPF meanwhile; the first mms_collectors_ksyms() then
 * waits for it.  Call it after any fork, before privileges are dropped.
 */
void mms_collectors_ksyms_prefetch(void);
const struct mms_ksyms *mms_collectors_ksyms(void);
/*
 * This kernel's BTF (/sys/kernel/btf/vmlinux), parsed once for every
 * source's look-ups while they are chosen (which functions exist, a
 * tracepoint's prototype); NULL without BTF.  Owned here; freed by
 * mms_collectors_btf_release() once the sources are chosen (it is
 * megabytes) and by mms_collectors_cleanup().
 */
struct btf;
const struct btf *mms_collectors_btf(void);
void mms_collectors_btf_release(void);
void mms_collectors_cleanup(void);

/* perf.data captures read as recordings (collectors/perfdata.c). */
struct mms_rec_import;
extern const struct mms_rec_import mms_perfdata_import;

/*
 * Routes libbpf's own messages: dropped unless MMSCOPE_DEBUG is set (then to
 * stderr), and registers mms_perfdata_import with the recording reader.
 * Sources report their failures through src->why instead, and nothing may
 * print while curses owns the terminal.
 */
void mms_collectors_init(const struct mms_knobs *k);

/* Mounts tracefs at /sys/kernel/tracing if it is not there; 0 or -errno. */
int mms_tracefs_ensure(void);
/* Root of tracefs ("/sys/kernel/tracing" or the debugfs one). */
const char *mms_tracefs_root(void);

#endif
