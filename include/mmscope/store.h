/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The store: a bounded history of intervals plus the interned tables they
 * refer to (strings, call stacks, tasks, locks).
 *
 * Collectors (or replay) fill an interval through a builder and commit it;
 * views, reports and the recorder read committed intervals.  Memory is
 * bounded by the window (number of intervals) and a byte budget: the oldest
 * intervals go first, and interned entries no interval refers to any more
 * are freed and their ids reused.  Pointers returned by the getters stay
 * valid until the next mms_store_commit().
 *
 * Single-threaded by design: everything runs on the one event loop.
 */
#ifndef MMSCOPE_STORE_H
#define MMSCOPE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mmscope/sample.h"

struct mms_store;

struct mms_store_opts {
	uint32_t window;	/* intervals kept; 0: default (600) */
	uint64_t max_bytes;	/* budget for intervals; 0: default (64 MiB) */
	uint32_t max_rows;	/* lock + metric rows per interval; 0: default (65536) */
};

/* What a lock is, as far as it could be told. */
enum mms_lock_kind {
	MMS_LOCK_UNKNOWN,	/* address only */
	MMS_LOCK_STATIC,	/* a kernel symbol */
	MMS_LOCK_MMAP,		/* mm->mmap_lock; owner = process */
	MMS_LOCK_I_MMAP,	/* address_space->i_mmap_rwsem; detail = file */
	MMS_LOCK_ANON_VMA,	/* anon_vma->root->rwsem */
	MMS_LOCK_SIGLOCK,	/* sighand->siglock; owner = process */
	MMS_LOCK_SLAB,		/* inside a slab object; detail = cache */
	/* Named by the structure they live in (lock_bpf.bpf.c verifies it). */
	MMS_LOCK_RQ,		/* a runqueue's lock ("rq_lock", as perf); detail = "cpu N" */
	MMS_LOCK_ZONE,		/* zone->lock; detail = zone ("Normal", "node 1 Normal") */
	MMS_LOCK_LRU,		/* lruvec->lru_lock; detail = memory cgroup path and/or node */
	MMS_LOCK_PTL,		/* a split page-table lock (in the table's struct ptdesc) */
	MMS_LOCK_I_PAGES,	/* address_space->i_pages (page cache xarray); detail = file */
	MMS_LOCK_PI,		/* task_struct->pi_lock; detail = the task's comm */
	MMS_LOCK_I_RWSEM,	/* inode->i_rwsem; detail = file */
	MMS_LOCK_I_LOCK,	/* inode->i_lock; detail = file */
	MMS_LOCK_EXT4_DATA_SEM,	/* ext4's i_data_sem; detail = file */
	MMS_LOCK_EXT4_ES_LOCK,	/* ext4's i_es_lock; detail = file */
	MMS_LOCK_EXT4_RAW_LOCK,	/* ext4's i_raw_lock; detail = file */
	MMS_LOCK_F_POS,		/* file->f_pos_lock; detail = file */
	MMS_LOCK_9P_CHAN,	/* a 9p virtio channel's lock; detail = its mount tag */
	MMS_LOCK_I_PRIVATE,	/* address_space->i_private_lock; detail = file */
	MMS_LOCK_D_LOCK,	/* dentry->d_lock; detail = the dentry's path */
	MMS_LOCK_9P_CLIENT,	/* a 9p client's lock; detail = its channel's mount tag */
	MMS_LOCK_JBD2,		/* a jbd2 journal's lock; detail = "j_state_lock of 254:0" */
	MMS_LOCK_BLK,		/* a block layer lock; detail = "requeue_lock of vda" */
	MMS_LOCK_SLAB_NODE,	/* a slab cache's per-node list_lock; detail = the cache */
	MMS_LOCK_PERCPU,	/* a static per-CPU variable; detail = "symbol+0xoff (cpu N)" */
	MMS_LOCK_KIND_NR
};

struct mms_lock_info {
	uint64_t addr;
	uint32_t kind;		/* enum mms_lock_kind */
	uint32_t name_id;	/* "mmap_lock", "i_mmap_rwsem", "rcu_state", "&task_struct" */
	uint32_t detail_id;	/* file, cache ... or 0 */
	uint32_t owner_tgid;	/* process owning an mm/signal lock, or 0 */
	uint32_t owner_comm_id;
	uint32_t pad;
};

struct mms_task {
	uint32_t tid;
	uint32_t tgid;
	uint32_t comm_id;
	uint32_t cgroup_id;	/* interned cgroup v2 path ("/a/b"), 0: not known */
};

struct mms_stack {
	uint32_t nr;
	uint32_t pad;
	uint64_t *ips;
	uint32_t *sym_ids;	/* "function+0xoff" per frame, interned */
};

enum mms_interval_flags {
	MMS_IV_TARGET_EXITED = 1U << 0,	/* the followed process ended in this interval */
};

struct mms_interval {
	uint64_t seq;		/* 0, 1, 2 ... since the session started */
	uint64_t start_ns;	/* CLOCK_REALTIME at the start */
	uint64_t dur_ns;	/* length, measured on CLOCK_MONOTONIC */
	uint32_t flags;
	uint32_t n_locks;
	uint32_t n_metrics;
	uint32_t pad;
	struct mms_lock_sample *locks;
	struct mms_metric_sample *metrics;
	uint64_t lost[MMS_LOST_NR];
};

/* Aggregate view of one interned table entry's liveness; see the recorder. */
enum mms_table {
	MMS_TAB_STR,
	MMS_TAB_STACK,
	MMS_TAB_TASK,
	MMS_TAB_LOCK,
	MMS_TAB_NR
};

int mms_store_create(const struct mms_store_opts *opts, struct mms_store **out);
void mms_store_destroy(struct mms_store *st);

/* Interning.  Each returns an id > 0, or 0 when out of memory. */
uint32_t mms_store_str(struct mms_store *st, const char *s);
uint32_t mms_store_stack(struct mms_store *st, const uint64_t *ips, const uint32_t *sym_ids,
			 uint32_t nr);
uint32_t mms_store_task(struct mms_store *st, uint32_t tid, uint32_t tgid, const char *comm);
/* The same with the task's cgroup path (NULL or "": not known); part of the task's identity. */
uint32_t mms_store_task_cg(struct mms_store *st, uint32_t tid, uint32_t tgid, const char *comm,
			   const char *cgroup);
uint32_t mms_store_lock(struct mms_store *st, const struct mms_lock_info *info);

/* Lookups.  Unknown ids give "" / NULL. */
const char *mms_store_get_str(const struct mms_store *st, uint32_t id);
const struct mms_stack *mms_store_get_stack(const struct mms_store *st, uint32_t id);
const struct mms_task *mms_store_get_task(const struct mms_store *st, uint32_t id);
const struct mms_lock_info *mms_store_get_lock(const struct mms_store *st, uint32_t id);
/*
 * Recorder support: marks an entry as written to the current recording;
 * true when it was not yet (so its definition must be written now).
 */
bool mms_store_mark_written(struct mms_store *st, enum mms_table t, uint32_t id);
void mms_store_clear_written(struct mms_store *st);
/* Bumped whenever freed ids may be handed out again: drop cached ids. */
uint64_t mms_store_epoch(const struct mms_store *st);
/* Highest id ever handed out in a table (ids are 1..n; some may be free). */
uint32_t mms_store_table_size(const struct mms_store *st, enum mms_table t);

/*
 * Building an interval.  Only one builder at a time.  Rows with the same key
 * (lock_id, stack_id, task_id, flags) or (proc_id, metric_id, sub) merge.
 */
struct mms_interval *mms_store_begin(struct mms_store *st, uint64_t start_ns);
int mms_store_add_lock(struct mms_store *st, const struct mms_lock_sample *s);
int mms_store_add_metric(struct mms_store *st, const struct mms_metric_sample *s);
/* Convenience: one metric value into (proc, name, sub). */
int mms_store_add_value(struct mms_store *st, uint32_t proc_id, const char *metric, uint32_t sub,
			uint64_t value, uint64_t n);
void mms_store_add_lost(struct mms_store *st, enum mms_lost_reason r, uint64_t n);
/* Commits the interval being built; its duration is dur_ns.  Evicts old ones. */
int mms_store_commit(struct mms_store *st, uint64_t dur_ns, uint32_t flags);
/*
 * Sizes the open interval for this many rows (capped at max_rows) when the
 * caller knows them, as a recording's reader does; optional.
 */
void mms_store_reserve(struct mms_store *st, uint32_t n_locks, uint32_t n_metrics);
void mms_store_abort(struct mms_store *st);

/*
 * Drops every interval, the open builder and every interned entry (ids start
 * again at 1; the epoch is bumped); the next interval gets seq next_seq.
 * Replay seeks with it.  Pointers from the store are invalid afterwards.
 */
void mms_store_reset(struct mms_store *st, uint64_t next_seq);

/*
 * Deferred intervals, for replay seeking: an interval committed with its
 * times and row counts only, whose rows the store has its loader add when
 * mms_store_load() is asked for it.  Whoever reads after a seek (the TUI,
 * before it draws) loads what it is about to read, so a seek costs what the
 * views look at (one interval and the sparkline minute), not the whole
 * window, and reading never writes.  Loaded, readers cannot tell: the rows
 * are those load() adds, merged and counted exactly as for a normal commit.
 */
struct mms_store_loader {
	/*
	 * Adds the rows of the interval committed with cookie, with
	 * mms_store_add_lock(), _add_metric() and _add_lost(); must not read
	 * intervals.  On an error the interval stays empty and its rows are
	 * counted lost (MMS_LOST_STORE).
	 */
	int (*load)(void *ctx, struct mms_store *st, uint64_t cookie);
	/* The store no longer needs ctx (it is destroyed, or another loader took over). */
	void (*release)(void *ctx);
	void *ctx;
};

/*
 * Installs l (copied) unless it is installed already: true when it was
 * installed now (release() is then called once, later).  Deferred intervals
 * of a previous loader are filled first.
 */
bool mms_store_set_loader(struct mms_store *st, const struct mms_store_loader *l);

struct mms_deferred_iv {
	uint64_t start_ns, dur_ns;
	uint32_t flags;
	uint32_t n_locks, n_metrics;	/* rows load() adds (for the byte budget) */
	uint64_t cookie;		/* given back to load() */
};

/* Commits a deferred interval (evicting as mms_store_commit() does). */
int mms_store_commit_deferred(struct mms_store *st, const struct mms_deferred_iv *d);

/*
 * Like mms_store_reset(), but keeps the interned tables (ids stay valid,
 * unless they are many: then those no kept interval refers to are freed),
 * and keeps the filled intervals with seqs in [next_seq, keep_to]:
 * mms_store_commit_deferred() takes such an interval back when it commits
 * its seq with the same times, flags and row counts.  Seqs must name the
 * same intervals as before (replay: the recording's index).  Bumps the epoch.
 */
void mms_store_rewind(struct mms_store *st, uint64_t next_seq, uint64_t keep_to);

/*
 * Changes whenever ids may have been freed (sweep, reset) and differs
 * between stores: ids cached under one value still hold while it is the
 * same.  Finer than the epoch, which also moves on a rewind.
 */
uint64_t mms_store_id_gen(const struct mms_store *st);

/*
 * Has the loader add the rows of every deferred interval with an index in
 * [from, to] (to clamped to the last); pointers got before stay valid.  An
 * interval the loader fails on stays empty with its rows counted lost
 * (MMS_LOST_STORE).  Returns how many intervals were filled.
 */
uint32_t mms_store_load(struct mms_store *st, uint32_t from, uint32_t to);
/* True when no interval in [from, to] waits for mms_store_load(). */
bool mms_store_loaded(const struct mms_store *st, uint32_t from, uint32_t to);

/*
 * Committed history, oldest first: index 0 .. count-1.  Reading never
 * writes: a deferred interval not yet loaded has its times, flags and seq
 * but no rows.
 */
uint32_t mms_store_count(const struct mms_store *st);
const struct mms_interval *mms_store_at(const struct mms_store *st, uint32_t idx);
const struct mms_interval *mms_store_latest(const struct mms_store *st);
/* Index of the interval with this seq, or -ENOENT. */
int mms_store_find_seq(const struct mms_store *st, uint64_t seq);
/* Bytes held by intervals and tables. */
uint64_t mms_store_bytes(const struct mms_store *st);
/* Intervals evicted so far (history that fell out of the window). */
uint64_t mms_store_evicted(const struct mms_store *st);

/* Name of a lock kind for output ("mmap_lock", "i_mmap_rwsem" ...). */
const char *mms_lock_kind_name(enum mms_lock_kind k);
/*
 * The name users see for a lock, e.g. "mmap_lock (1234 stress-ng)",
 * "i_mmap_rwsem (/usr/lib/libc.so.6)", "&task_struct", "rcu_state".
 */
int mms_store_lock_label(const struct mms_store *st, uint32_t lock_id, char *buf, size_t len);

#endif
