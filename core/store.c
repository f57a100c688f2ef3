// SPDX-License-Identifier: GPL-2.0
/*
 * The store: a ring of committed intervals, the interval being built, and
 * the interned tables.  See include/mmscope/store.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intern.h"
#include "mmscope/store.h"

#define DEFAULT_WINDOW 600
#define DEFAULT_MAX_BYTES (64ULL << 20)
#define DEFAULT_MAX_ROWS 65536

struct row_index {
	uint32_t *slots;	/* row index + 1, 0 = empty */
	uint32_t nslots;
};

struct builder {
	bool open;
	struct mms_interval iv;
	uint32_t cap_locks, cap_metrics;
	struct row_index lock_idx, metric_idx;
};

struct mms_store {
	struct mms_store_opts opts;
	struct mms_interval **ring;	/* window slots */
	uint32_t head;			/* index of the oldest */
	uint32_t count;
	uint64_t next_seq;
	uint64_t iv_bytes;
	uint64_t evicted;
	uint64_t epoch;			/* bumped when ids are reused */
	uint32_t sweep_at;		/* table size that triggers a sweep */
	struct mms_intern tab[MMS_TAB_NR];
	struct mms_stack *stacks;	/* views of interned stacks, by id */
	uint32_t nr_stacks;
	struct builder b;
};

int mms_store_create(const struct mms_store_opts *opts, struct mms_store **out)
{
	struct mms_store *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	if (opts)
		st->opts = *opts;
	if (!st->opts.window)
		st->opts.window = DEFAULT_WINDOW;
	if (!st->opts.max_bytes)
		st->opts.max_bytes = DEFAULT_MAX_BYTES;
	if (!st->opts.max_rows)
		st->opts.max_rows = DEFAULT_MAX_ROWS;
	st->ring = calloc(st->opts.window, sizeof(*st->ring));
	if (!st->ring) {
		free(st);
		return -ENOMEM;
	}
	for (int i = 0; i < MMS_TAB_NR; i++)
		mms_intern_init(&st->tab[i]);
	st->sweep_at = 4096;
	*out = st;
	return 0;
}

static void interval_free(struct mms_interval *iv)
{
	if (!iv)
		return;
	free(iv->locks);
	free(iv->metrics);
	free(iv);
}

static uint64_t interval_bytes(const struct mms_interval *iv)
{
	return sizeof(*iv) + (uint64_t)iv->n_locks * sizeof(*iv->locks) +
	       (uint64_t)iv->n_metrics * sizeof(*iv->metrics);
}

static void builder_reset(struct builder *b)
{
	free(b->iv.locks);
	free(b->iv.metrics);
	free(b->lock_idx.slots);
	free(b->metric_idx.slots);
	memset(b, 0, sizeof(*b));
}

void mms_store_destroy(struct mms_store *st)
{
	if (!st)
		return;
	for (uint32_t i = 0; i < st->count; i++)
		interval_free(st->ring[(st->head + i) % st->opts.window]);
	free(st->ring);
	for (int i = 0; i < MMS_TAB_NR; i++)
		mms_intern_finish(&st->tab[i]);
	free(st->stacks);
	builder_reset(&st->b);
	free(st);
}

/* Sequence number new interned entries are stamped with. */
static uint64_t cur_seq(const struct mms_store *st)
{
	return st->next_seq;
}

uint32_t mms_store_str(struct mms_store *st, const char *s)
{
	return mms_intern_add(&st->tab[MMS_TAB_STR], s ? s : "", strlen(s ? s : ""), cur_seq(st));
}

const char *mms_store_get_str(const struct mms_store *st, uint32_t id)
{
	const char *s = mms_intern_get(&st->tab[MMS_TAB_STR], id);

	return s ? s : "";
}

/* Stack keys: nr, then ips[nr], then sym_ids[nr]. */
static size_t stack_key_len(uint32_t nr)
{
	return sizeof(uint64_t) + nr * (sizeof(uint64_t) + sizeof(uint32_t));
}

static void stack_view(struct mms_stack *v, const void *key)
{
	const uint64_t *k = key;

	v->nr = (uint32_t)k[0];
	v->ips = (uint64_t *)(k + 1);
	v->sym_ids = (uint32_t *)(k + 1 + v->nr);
}

uint32_t mms_store_stack(struct mms_store *st, const uint64_t *ips, const uint32_t *sym_ids,
			 uint32_t nr)
{
	struct mms_intern *t = &st->tab[MMS_TAB_STACK];
	size_t len = stack_key_len(nr);
	uint64_t *key = malloc(len);
	uint32_t id;

	if (!key)
		return 0;
	key[0] = nr;
	memcpy(key + 1, ips, nr * sizeof(*ips));
	memcpy(key + 1 + nr, sym_ids, nr * sizeof(*sym_ids));
	id = mms_intern_add(t, key, len, cur_seq(st));
	free(key);
	if (!id)
		return 0;
	if (id >= st->nr_stacks) {
		uint32_t n = t->cap + 1;
		struct mms_stack *v = realloc(st->stacks, n * sizeof(*v));

		if (!v)
			return 0;
		memset(v + st->nr_stacks, 0, (n - st->nr_stacks) * sizeof(*v));
		st->stacks = v;
		st->nr_stacks = n;
	}
	stack_view(&st->stacks[id], mms_intern_get(t, id));
	for (uint32_t i = 0; i < nr; i++)
		mms_intern_touch(&st->tab[MMS_TAB_STR], sym_ids[i], cur_seq(st));
	return id;
}

const struct mms_stack *mms_store_get_stack(const struct mms_store *st, uint32_t id)
{
	if (!mms_intern_get(&st->tab[MMS_TAB_STACK], id) || id >= st->nr_stacks)
		return NULL;
	return &st->stacks[id];
}

uint32_t mms_store_task(struct mms_store *st, uint32_t tid, uint32_t tgid, const char *comm)
{
	struct mms_task t = { .tid = tid, .tgid = tgid, .comm_id = mms_store_str(st, comm) };

	if (!t.comm_id)
		return 0;
	return mms_intern_add(&st->tab[MMS_TAB_TASK], &t, sizeof(t), cur_seq(st));
}

const struct mms_task *mms_store_get_task(const struct mms_store *st, uint32_t id)
{
	return mms_intern_get(&st->tab[MMS_TAB_TASK], id);
}

uint32_t mms_store_lock(struct mms_store *st, const struct mms_lock_info *info)
{
	struct mms_lock_info k = *info;

	k.pad = 0;
	return mms_intern_add(&st->tab[MMS_TAB_LOCK], &k, sizeof(k), cur_seq(st));
}

const struct mms_lock_info *mms_store_get_lock(const struct mms_store *st, uint32_t id)
{
	return mms_intern_get(&st->tab[MMS_TAB_LOCK], id);
}

uint32_t mms_store_table_size(const struct mms_store *st, enum mms_table t)
{
	return st->tab[t].nr;
}

bool mms_store_mark_written(struct mms_store *st, enum mms_table t, uint32_t id)
{
	struct mms_intern *tab = &st->tab[t];

	if (!id || id > tab->nr || !tab->ent[id].key || tab->ent[id].written)
		return false;
	tab->ent[id].written = true;
	return true;
}

void mms_store_clear_written(struct mms_store *st)
{
	for (int t = 0; t < MMS_TAB_NR; t++)
		for (uint32_t id = 1; id <= st->tab[t].nr; id++)
			st->tab[t].ent[id].written = false;
}

uint64_t mms_store_epoch(const struct mms_store *st)
{
	return st->epoch;
}

/* Keeps everything a row refers to alive for this interval. */
static void touch_task(struct mms_store *st, uint32_t id, uint64_t seq)
{
	const struct mms_task *t = mms_store_get_task(st, id);

	mms_intern_touch(&st->tab[MMS_TAB_TASK], id, seq);
	if (t)
		mms_intern_touch(&st->tab[MMS_TAB_STR], t->comm_id, seq);
}

static void touch_lock_row(struct mms_store *st, const struct mms_lock_sample *s, uint64_t seq)
{
	const struct mms_lock_info *l = mms_store_get_lock(st, s->lock_id);
	const struct mms_stack *k = mms_store_get_stack(st, s->stack_id);
	struct mms_intern *str = &st->tab[MMS_TAB_STR];

	mms_intern_touch(&st->tab[MMS_TAB_LOCK], s->lock_id, seq);
	if (l) {
		mms_intern_touch(str, l->name_id, seq);
		mms_intern_touch(str, l->detail_id, seq);
		mms_intern_touch(str, l->owner_comm_id, seq);
	}
	mms_intern_touch(&st->tab[MMS_TAB_STACK], s->stack_id, seq);
	if (k)
		for (uint32_t i = 0; i < k->nr; i++)
			mms_intern_touch(str, k->sym_ids[i], seq);
	touch_task(st, s->task_id, seq);
}

struct mms_interval *mms_store_begin(struct mms_store *st, uint64_t start_ns)
{
	struct builder *b = &st->b;

	if (b->open)
		return NULL;
	b->open = true;
	b->iv.seq = st->next_seq;
	b->iv.start_ns = start_ns;
	b->iv.n_locks = b->iv.n_metrics = 0;
	b->iv.flags = 0;
	memset(b->iv.lost, 0, sizeof(b->iv.lost));
	if (b->lock_idx.slots)
		memset(b->lock_idx.slots, 0, b->lock_idx.nslots * sizeof(uint32_t));
	if (b->metric_idx.slots)
		memset(b->metric_idx.slots, 0, b->metric_idx.nslots * sizeof(uint32_t));
	return &b->iv;
}

/* Finds the row with this key in a builder index; returns its slot. */
static uint32_t *idx_slot(struct row_index *ix, const void *rows, size_t row_size,
			  const void *key, size_t key_len)
{
	uint64_t h = mms_intern_hash(key, key_len);
	uint32_t i = (uint32_t)h & (ix->nslots - 1);

	while (ix->slots[i]) {
		const char *r = (const char *)rows + (size_t)(ix->slots[i] - 1) * row_size;

		if (!memcmp(r, key, key_len))
			break;
		i = (i + 1) & (ix->nslots - 1);
	}
	return &ix->slots[i];
}

static int idx_grow(struct row_index *ix, const void *rows, size_t row_size, size_t key_len,
		    uint32_t nr)
{
	uint32_t n = ix->nslots ? ix->nslots * 2 : 256;
	struct row_index nix = { .slots = calloc(n, sizeof(uint32_t)), .nslots = n };

	if (!nix.slots)
		return -ENOMEM;
	for (uint32_t r = 0; r < nr; r++) {
		const void *row = (const char *)rows + (size_t)r * row_size;

		*idx_slot(&nix, rows, row_size, row, key_len) = r + 1;
	}
	free(ix->slots);
	*ix = nix;
	return 0;
}

/* Merges or appends a row; rows start with their key of key_len bytes. */
static int add_row(struct mms_store *st, void **rows, uint32_t *nr, uint32_t *cap,
		   struct row_index *ix, const void *row, size_t row_size, size_t key_len,
		   struct mms_stat **stat_out)
{
	struct builder *b = &st->b;
	uint32_t *slot;

	if (!b->open)
		return -EINVAL;
	if ((*nr + 1) * 2 > ix->nslots && idx_grow(ix, *rows, row_size, key_len, *nr))
		return -ENOMEM;
	slot = idx_slot(ix, *rows, row_size, row, key_len);
	if (*slot) {
		*stat_out = (struct mms_stat *)((char *)*rows + (size_t)(*slot - 1) * row_size +
						row_size - sizeof(struct mms_stat));
		return 1;
	}
	if (b->iv.n_locks + b->iv.n_metrics >= st->opts.max_rows) {
		b->iv.lost[MMS_LOST_STORE]++;
		return -ENOSPC;
	}
	if (*nr == *cap) {
		uint32_t c = *cap ? *cap * 2 : 64;
		void *p = realloc(*rows, c * row_size);

		if (!p)
			return -ENOMEM;
		*rows = p;
		*cap = c;
	}
	memcpy((char *)*rows + (size_t)*nr * row_size, row, row_size);
	*slot = ++*nr;
	*stat_out = NULL;
	return 0;
}

int mms_store_add_lock(struct mms_store *st, const struct mms_lock_sample *s)
{
	struct builder *b = &st->b;
	struct mms_stat *stat;
	void *rows = b->iv.locks;
	int err;

	err = add_row(st, &rows, &b->iv.n_locks, &b->cap_locks, &b->lock_idx, s, sizeof(*s),
		      offsetof(struct mms_lock_sample, wait), &stat);
	b->iv.locks = rows;
	if (err < 0)
		return err;
	if (err == 1)
		mms_stat_merge(stat, &s->wait);
	touch_lock_row(st, s, b->iv.seq);
	return 0;
}

int mms_store_add_metric(struct mms_store *st, const struct mms_metric_sample *s)
{
	struct builder *b = &st->b;
	struct mms_metric_sample k = *s;
	struct mms_stat *stat;
	void *rows = b->iv.metrics;
	int err;

	k.pad = 0;
	err = add_row(st, &rows, &b->iv.n_metrics, &b->cap_metrics, &b->metric_idx, &k,
		      sizeof(k), offsetof(struct mms_metric_sample, stat), &stat);
	b->iv.metrics = rows;
	if (err < 0)
		return err;
	if (err == 1)
		mms_stat_merge(stat, &s->stat);
	touch_task(st, s->proc_id, b->iv.seq);
	mms_intern_touch(&st->tab[MMS_TAB_STR], s->metric_id, b->iv.seq);
	return 0;
}

int mms_store_add_value(struct mms_store *st, uint32_t proc_id, const char *metric, uint32_t sub,
			uint64_t value, uint64_t n)
{
	struct mms_metric_sample s = { .proc_id = proc_id, .sub = sub };

	s.metric_id = mms_store_str(st, metric);
	if (!s.metric_id)
		return -ENOMEM;
	mms_stat_add_n(&s.stat, value, n);
	return mms_store_add_metric(st, &s);
}

void mms_store_add_lost(struct mms_store *st, enum mms_lost_reason r, uint64_t n)
{
	if (st->b.open && (unsigned int)r < MMS_LOST_NR)
		st->b.iv.lost[r] += n;
}

static void evict_oldest(struct mms_store *st)
{
	struct mms_interval *iv = st->ring[st->head];

	st->iv_bytes -= interval_bytes(iv);
	interval_free(iv);
	st->ring[st->head] = NULL;
	st->head = (st->head + 1) % st->opts.window;
	st->count--;
	st->evicted++;
}

static void maybe_sweep(struct mms_store *st)
{
	uint64_t keep = st->count ? st->ring[st->head]->seq : st->next_seq;
	uint32_t total = 0, freed = 0;

	for (int t = 0; t < MMS_TAB_NR; t++)
		total += st->tab[t].live;
	if (total < st->sweep_at)
		return;
	for (int t = 0; t < MMS_TAB_NR; t++)
		freed += mms_intern_sweep(&st->tab[t], keep);
	if (freed)
		st->epoch++;
	total -= freed;
	st->sweep_at = total * 2 > 4096 ? total * 2 : 4096;
}

int mms_store_commit(struct mms_store *st, uint64_t dur_ns, uint32_t flags)
{
	struct builder *b = &st->b;
	struct mms_interval *iv;
	uint64_t bytes;

	if (!b->open)
		return -EINVAL;
	iv = malloc(sizeof(*iv));
	if (!iv)
		return -ENOMEM;
	*iv = b->iv;
	iv->dur_ns = dur_ns;
	iv->flags |= flags;
	/* The builder's arrays become the interval's, trimmed to size. */
	iv->locks = b->iv.n_locks ? realloc(b->iv.locks, b->iv.n_locks * sizeof(*iv->locks)) : NULL;
	if (!b->iv.n_locks)
		free(b->iv.locks);
	iv->metrics = b->iv.n_metrics ?
		realloc(b->iv.metrics, b->iv.n_metrics * sizeof(*iv->metrics)) : NULL;
	if (!b->iv.n_metrics)
		free(b->iv.metrics);
	if ((b->iv.n_locks && !iv->locks) || (b->iv.n_metrics && !iv->metrics)) {
		/* realloc to a smaller size does not fail in practice; be safe anyway. */
		free(iv);
		return -ENOMEM;
	}
	b->iv.locks = NULL;
	b->iv.metrics = NULL;
	b->cap_locks = b->cap_metrics = 0;
	b->iv.n_locks = b->iv.n_metrics = 0;
	b->open = false;

	bytes = interval_bytes(iv);
	while (st->count && (st->count == st->opts.window ||
			     st->iv_bytes + bytes > st->opts.max_bytes))
		evict_oldest(st);
	st->ring[(st->head + st->count) % st->opts.window] = iv;
	st->count++;
	st->iv_bytes += bytes;
	st->next_seq++;
	maybe_sweep(st);
	return 0;
}

void mms_store_abort(struct mms_store *st)
{
	st->b.open = false;
	st->b.iv.n_locks = st->b.iv.n_metrics = 0;
}

void mms_store_reset(struct mms_store *st, uint64_t next_seq)
{
	for (uint32_t i = 0; i < st->count; i++)
		interval_free(st->ring[(st->head + i) % st->opts.window]);
	memset(st->ring, 0, st->opts.window * sizeof(*st->ring));
	st->head = st->count = 0;
	st->iv_bytes = 0;
	/* What precedes next_seq is, as far as views can tell, history that fell out. */
	st->evicted = next_seq;
	st->next_seq = next_seq;
	for (int i = 0; i < MMS_TAB_NR; i++) {
		mms_intern_finish(&st->tab[i]);
		mms_intern_init(&st->tab[i]);
	}
	free(st->stacks);
	st->stacks = NULL;
	st->nr_stacks = 0;
	st->sweep_at = 4096;
	builder_reset(&st->b);
	st->epoch++;
}

uint32_t mms_store_count(const struct mms_store *st)
{
	return st->count;
}

const struct mms_interval *mms_store_at(const struct mms_store *st, uint32_t idx)
{
	if (idx >= st->count)
		return NULL;
	return st->ring[(st->head + idx) % st->opts.window];
}

const struct mms_interval *mms_store_latest(const struct mms_store *st)
{
	return st->count ? mms_store_at(st, st->count - 1) : NULL;
}

int mms_store_find_seq(const struct mms_store *st, uint64_t seq)
{
	const struct mms_interval *first = mms_store_at(st, 0);

	/* Seqs are consecutive inside the window. */
	if (!first || seq < first->seq || seq - first->seq >= st->count)
		return -ENOENT;
	return (int)(seq - first->seq);
}

uint64_t mms_store_bytes(const struct mms_store *st)
{
	uint64_t n = st->iv_bytes + st->opts.window * sizeof(*st->ring);

	for (int t = 0; t < MMS_TAB_NR; t++)
		n += st->tab[t].bytes + st->tab[t].nslots * sizeof(uint32_t);
	return n;
}

uint64_t mms_store_evicted(const struct mms_store *st)
{
	return st->evicted;
}

static const char *const kind_names[MMS_LOCK_KIND_NR] = {
	[MMS_LOCK_UNKNOWN] = "unknown",
	[MMS_LOCK_STATIC] = "static",
	[MMS_LOCK_MMAP] = "mmap_lock",
	[MMS_LOCK_I_MMAP] = "i_mmap_rwsem",
	[MMS_LOCK_ANON_VMA] = "anon_vma",
	[MMS_LOCK_SIGLOCK] = "siglock",
	[MMS_LOCK_SLAB] = "slab",
};

const char *mms_lock_kind_name(enum mms_lock_kind k)
{
	return (unsigned int)k < MMS_LOCK_KIND_NR ? kind_names[k] : "unknown";
}

int mms_store_lock_label(const struct mms_store *st, uint32_t lock_id, char *buf, size_t len)
{
	const struct mms_lock_info *l = mms_store_get_lock(st, lock_id);
	const char *name, *detail;

	if (!l)
		return snprintf(buf, len, "?");
	name = mms_store_get_str(st, l->name_id);
	detail = mms_store_get_str(st, l->detail_id);
	if (!*name)
		return snprintf(buf, len, "%#llx", (unsigned long long)l->addr);
	switch (l->kind) {
	case MMS_LOCK_MMAP:
	case MMS_LOCK_SIGLOCK:
		if (l->owner_tgid)
			return snprintf(buf, len, "%s (%u %s)", name, l->owner_tgid,
					mms_store_get_str(st, l->owner_comm_id));
		break;
	case MMS_LOCK_I_MMAP:
		if (*detail)
			return snprintf(buf, len, "%s (%s)", name, detail);
		break;
	default:
		break;
	}
	return snprintf(buf, len, "%s", name);
}
