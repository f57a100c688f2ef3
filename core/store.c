// SPDX-License-Identifier: GPL-2.0
/*
 * The store: a ring of committed intervals, the interval being built, and
 * the interned tables.  See include/mmscope/store.h; deferred intervals and
 * rewinding (replay seeks) are store_defer.c.
 *
 * Filling a deferred interval may intern new entries in the middle of a
 * frame, so nothing a getter returned may move: stack views live in chunks
 * that are never reallocated.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

#define DEFAULT_WINDOW 600
#define DEFAULT_MAX_BYTES (64ULL << 20)
#define DEFAULT_MAX_ROWS 65536
#define STACK_CHUNK 256
/* Unique across stores, so a cache keyed by it cannot mistake one store for another. */
uint64_t store_new_id_gen(void)
{
	static uint64_t gen;

	return __atomic_add_fetch(&gen, 1, __ATOMIC_RELAXED);
}

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
	st->limbo = calloc(st->opts.window, sizeof(*st->limbo));
	if (!st->ring || !st->limbo) {
		free(st->ring);
		free(st->limbo);
		free(st);
		return -ENOMEM;
	}
	st->id_gen = store_new_id_gen();
	for (int i = 0; i < MMS_TAB_NR; i++)
		mms_intern_init(&st->tab[i]);
	st->sweep_at = 4096;
	*out = st;
	return 0;
}

void store_interval_free(struct mms_store *st, struct mms_interval *iv)
{
	if (!iv)
		return;
	if (store_held(iv)->deferred)
		st->nr_deferred--;
	free(iv->locks);
	free(iv->metrics);
	free(store_held(iv));
}

static void stacks_free(struct mms_store *st)
{
	for (uint32_t i = 0; i < st->nr_chunks; i++)
		free(st->stacks[i]);
	free(st->stacks);
	st->stacks = NULL;
	st->nr_chunks = 0;
}

uint64_t store_interval_bytes(const struct mms_interval *iv)
{
	return sizeof(*iv) + (uint64_t)iv->n_locks * sizeof(*iv->locks) +
	       (uint64_t)iv->n_metrics * sizeof(*iv->metrics);
}

void store_builder_reset(struct builder *b)
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
		store_interval_free(st, store_ring_at(st, i));
	store_limbo_clear(st);
	free(st->ring);
	free(st->limbo);
	for (int i = 0; i < MMS_TAB_NR; i++)
		mms_intern_finish(&st->tab[i]);
	stacks_free(st);
	store_builder_reset(&st->b);
	store_builder_reset(&st->fb);
	if (st->has_loader && st->loader.release)
		st->loader.release(st->loader.ctx);
	free(st);
}

/* The builder rows go to: the deferred interval being filled, if any. */
static struct builder *cur_b(struct mms_store *st)
{
	return st->filling ? &st->fb : &st->b;
}

/* Sequence number new interned entries are stamped with. */
static uint64_t cur_seq(const struct mms_store *st)
{
	return st->filling ? st->fb.iv.seq : st->next_seq;
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
	if (id / STACK_CHUNK >= st->nr_chunks) {
		uint32_t n = id / STACK_CHUNK + 1;
		struct mms_stack **v = realloc(st->stacks, n * sizeof(*v));

		if (!v)
			return 0;
		memset(v + st->nr_chunks, 0, (n - st->nr_chunks) * sizeof(*v));
		st->stacks = v;
		st->nr_chunks = n;
	}
	if (!st->stacks[id / STACK_CHUNK]) {
		st->stacks[id / STACK_CHUNK] = calloc(STACK_CHUNK, sizeof(struct mms_stack));
		if (!st->stacks[id / STACK_CHUNK])
			return 0;
	}
	stack_view(&st->stacks[id / STACK_CHUNK][id % STACK_CHUNK], mms_intern_get(t, id));
	for (uint32_t i = 0; i < nr; i++)
		mms_intern_touch(&st->tab[MMS_TAB_STR], sym_ids[i], cur_seq(st));
	return id;
}

const struct mms_stack *mms_store_get_stack(const struct mms_store *st, uint32_t id)
{
	if (!mms_intern_get(&st->tab[MMS_TAB_STACK], id) || id / STACK_CHUNK >= st->nr_chunks ||
	    !st->stacks[id / STACK_CHUNK])
		return NULL;
	return &st->stacks[id / STACK_CHUNK][id % STACK_CHUNK];
}

uint32_t mms_store_task_cg(struct mms_store *st, uint32_t tid, uint32_t tgid, const char *comm,
			   const char *cgroup)
{
	struct mms_task t = { .tid = tid, .tgid = tgid, .comm_id = mms_store_str(st, comm) };

	if (!t.comm_id)
		return 0;
	if (cgroup && *cgroup) {
		t.cgroup_id = mms_store_str(st, cgroup);
		if (!t.cgroup_id)
			return 0;
	}
	return mms_intern_add(&st->tab[MMS_TAB_TASK], &t, sizeof(t), cur_seq(st));
}

uint32_t mms_store_task(struct mms_store *st, uint32_t tid, uint32_t tgid, const char *comm)
{
	return mms_store_task_cg(st, tid, tgid, comm, NULL);
}

const struct mms_task *mms_store_get_task(const struct mms_store *st, uint32_t id)
{
	return mms_intern_get(&st->tab[MMS_TAB_TASK], id);
}

uint32_t mms_store_lock(struct mms_store *st, const struct mms_lock_info *info)
{
	struct mms_lock_info k = *info;

	k.pad = 0;
	/* Its strings are used as late as it is (see touch_lock_row()). */
	mms_intern_touch(&st->tab[MMS_TAB_STR], k.name_id, cur_seq(st));
	mms_intern_touch(&st->tab[MMS_TAB_STR], k.detail_id, cur_seq(st));
	mms_intern_touch(&st->tab[MMS_TAB_STR], k.owner_comm_id, cur_seq(st));
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

/*
 * Keeps everything a row refers to alive for this interval.  The strings a
 * task, lock or stack names are always marked used at least as late as it
 * (here, and when it is interned), so an entry already used as late as seq
 * has its strings covered: rows repeat the same hot locks and stacks.
 */
static void touch_task(struct mms_store *st, uint32_t id, uint64_t seq)
{
	const struct mms_task *t;

	if (!mms_intern_touch(&st->tab[MMS_TAB_TASK], id, seq))
		return;
	t = mms_store_get_task(st, id);
	mms_intern_touch(&st->tab[MMS_TAB_STR], t->comm_id, seq);
	if (t->cgroup_id)
		mms_intern_touch(&st->tab[MMS_TAB_STR], t->cgroup_id, seq);
}

static void touch_stack(struct mms_store *st, uint32_t id, uint64_t seq)
{
	const struct mms_stack *k;

	if (!mms_intern_touch(&st->tab[MMS_TAB_STACK], id, seq))
		return;
	k = mms_store_get_stack(st, id);
	for (uint32_t i = 0; k && i < k->nr; i++)
		mms_intern_touch(&st->tab[MMS_TAB_STR], k->sym_ids[i], seq);
}

static void touch_lock_row(struct mms_store *st, const struct mms_lock_sample *s, uint64_t seq)
{
	struct mms_intern *str = &st->tab[MMS_TAB_STR];

	if (mms_intern_touch(&st->tab[MMS_TAB_LOCK], s->lock_id, seq)) {
		const struct mms_lock_info *l = mms_store_get_lock(st, s->lock_id);

		mms_intern_touch(str, l->name_id, seq);
		mms_intern_touch(str, l->detail_id, seq);
		mms_intern_touch(str, l->owner_comm_id, seq);
	}
	touch_stack(st, s->stack_id, seq);
	touch_task(st, s->task_id, seq);
	if (s->owner_id)
		touch_task(st, s->owner_id, seq);
	if (s->owner_stack_id)
		touch_stack(st, s->owner_stack_id, seq);
}

void store_builder_begin(struct builder *b, uint64_t seq, uint64_t start_ns)
{
	b->open = true;
	b->iv.seq = seq;
	b->iv.start_ns = start_ns;
	b->iv.n_locks = b->iv.n_metrics = 0;
	b->iv.flags = 0;
	memset(b->iv.lost, 0, sizeof(b->iv.lost));
	if (b->lock_idx.slots)
		memset(b->lock_idx.slots, 0, b->lock_idx.nslots * sizeof(uint32_t));
	if (b->metric_idx.slots)
		memset(b->metric_idx.slots, 0, b->metric_idx.nslots * sizeof(uint32_t));
}

struct mms_interval *mms_store_begin(struct mms_store *st, uint64_t start_ns)
{
	struct builder *b = &st->b;

	if (b->open || st->filling)
		return NULL;
	store_builder_begin(b, st->next_seq, start_ns);
	return &b->iv;
}

/* Row keys are a few 32-bit ids: mixing words is cheaper than hashing bytes. */
static uint32_t row_hash(const void *key, size_t key_len)
{
	const uint8_t *p = key;
	uint64_t h = 0;

	for (size_t i = 0; i + 4 <= key_len; i += 4) {
		uint32_t w;

		memcpy(&w, p + i, 4);
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
	}
	return (uint32_t)(h >> 32);
}

/* Finds the row with this key in a builder index; returns its slot. */
static uint32_t *idx_slot(struct row_index *ix, const void *rows, size_t row_size,
			  const void *key, size_t key_len)
{
	uint32_t i = row_hash(key, key_len) & (ix->nslots - 1);

	while (ix->slots[i]) {
		const char *r = (const char *)rows + (size_t)(ix->slots[i] - 1) * row_size;

		if (!memcmp(r, key, key_len))
			break;
		i = (i + 1) & (ix->nslots - 1);
	}
	return &ix->slots[i];
}

/* Rebuilds the index with at least twice as many slots as want rows (a power of two). */
static int idx_fit(struct row_index *ix, const void *rows, size_t row_size, size_t key_len,
		   uint32_t nr, uint32_t want)
{
	uint32_t n = ix->nslots ? ix->nslots : 256;
	struct row_index nix;

	while ((uint64_t)want * 2 > n && n < (1u << 31))
		n *= 2;
	if (n == ix->nslots)
		return 0;
	nix = (struct row_index){ .slots = calloc(n, sizeof(uint32_t)), .nslots = n };

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
static int add_row(struct mms_store *st, struct builder *b, void **rows, uint32_t *nr,
		   uint32_t *cap, struct row_index *ix, const void *row, size_t row_size,
		   size_t key_len, struct mms_stat **stat_out)
{
	uint32_t *slot;

	if (!b->open)
		return -EINVAL;
	if ((*nr + 1) * 2 > ix->nslots && idx_fit(ix, *rows, row_size, key_len, *nr, *nr + 1))
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

/*
 * Sizes a builder's row arrays and indexes for the rows to come (at most
 * max_rows in all): one allocation per interval instead of a chain of copies
 * as they double, and no copy when the interval closes.  A failure leaves
 * them as they were; add_row grows them then.
 */
void store_builder_reserve(struct mms_store *st, struct builder *b, uint32_t n_locks,
			   uint32_t n_metrics)
{
	uint32_t room = st->opts.max_rows;
	void *p;

	n_locks = n_locks < room ? n_locks : room;
	room -= n_locks;
	n_metrics = n_metrics < room ? n_metrics : room;
	if (n_locks > b->cap_locks && (p = realloc(b->iv.locks, n_locks * sizeof(*b->iv.locks)))) {
		b->iv.locks = p;
		b->cap_locks = n_locks;
	}
	if (n_metrics > b->cap_metrics &&
	    (p = realloc(b->iv.metrics, n_metrics * sizeof(*b->iv.metrics)))) {
		b->iv.metrics = p;
		b->cap_metrics = n_metrics;
	}
	idx_fit(&b->lock_idx, b->iv.locks, sizeof(*b->iv.locks),
		offsetof(struct mms_lock_sample, wait), b->iv.n_locks, n_locks);
	idx_fit(&b->metric_idx, b->iv.metrics, sizeof(*b->iv.metrics),
		offsetof(struct mms_metric_sample, stat), b->iv.n_metrics, n_metrics);
}

void mms_store_reserve(struct mms_store *st, uint32_t n_locks, uint32_t n_metrics)
{
	struct builder *b = cur_b(st);

	if (b->open)
		store_builder_reserve(st, b, n_locks, n_metrics);
}

int mms_store_add_lock(struct mms_store *st, const struct mms_lock_sample *s)
{
	struct builder *b = cur_b(st);
	struct mms_stat *stat;
	void *rows = b->iv.locks;
	int err;

	err = add_row(st, b, &rows, &b->iv.n_locks, &b->cap_locks, &b->lock_idx, s, sizeof(*s),
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
	struct builder *b = cur_b(st);
	struct mms_metric_sample k = *s;
	struct mms_stat *stat;
	void *rows = b->iv.metrics;
	int err;

	k.pad = 0;
	err = add_row(st, b, &rows, &b->iv.n_metrics, &b->cap_metrics, &b->metric_idx, &k,
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
	struct builder *b = cur_b(st);

	if (b->open && (unsigned int)r < MMS_LOST_NR)
		b->iv.lost[r] += n;
}

static void evict_oldest(struct mms_store *st)
{
	struct mms_interval *iv = st->ring[st->head];

	st->iv_bytes -= store_held(iv)->bytes;
	store_interval_free(st, iv);
	st->ring[st->head] = NULL;
	st->head = (st->head + 1) % st->opts.window;
	st->count--;
	st->evicted++;
}

uint32_t store_live(const struct mms_store *st)
{
	uint32_t total = 0;

	for (int t = 0; t < MMS_TAB_NR; t++)
		total += st->tab[t].live;
	return total;
}

uint64_t store_table_bytes(const struct mms_store *st)
{
	uint64_t n = 0;

	for (int t = 0; t < MMS_TAB_NR; t++)
		n += st->tab[t].bytes + st->tab[t].nslots * sizeof(uint32_t);
	return n;
}

void store_swept(struct mms_store *st, uint32_t total, uint32_t freed)
{
	if (freed) {
		st->epoch++;
		st->id_gen = store_new_id_gen();
	}
	total -= freed;
	st->sweep_at = total * 2 > 4096 ? total * 2 : 4096;
}

static void maybe_sweep(struct mms_store *st)
{
	uint64_t keep = st->count ? st->ring[st->head]->seq : st->next_seq;
	uint32_t total = store_live(st), freed = 0;

	if (total < st->sweep_at)
		return;
	for (int t = 0; t < MMS_TAB_NR; t++)
		freed += mms_intern_sweep(&st->tab[t], keep);
	store_swept(st, total, freed);
}

/* The builder's rows and lost counts become iv's, trimmed to size; the builder closes. */
int store_builder_take(struct builder *b, struct mms_interval *iv)
{
	struct mms_lock_sample *locks = NULL;
	struct mms_metric_sample *metrics = NULL;

	/* realloc to a smaller size does not fail in practice; be safe anyway. */
	/* Reserved rows fit exactly: no realloc (which copies under a sanitizer). */
	if (b->iv.n_locks && b->iv.n_locks == b->cap_locks) {
		locks = b->iv.locks;
	} else if (b->iv.n_locks) {
		locks = realloc(b->iv.locks, b->iv.n_locks * sizeof(*locks));
		if (!locks)
			return -ENOMEM;
		b->iv.locks = locks;
		b->cap_locks = b->iv.n_locks;
	}
	if (b->iv.n_metrics && b->iv.n_metrics == b->cap_metrics) {
		metrics = b->iv.metrics;
	} else if (b->iv.n_metrics) {
		metrics = realloc(b->iv.metrics, b->iv.n_metrics * sizeof(*metrics));
		if (!metrics)
			return -ENOMEM;
		b->iv.metrics = metrics;
		b->cap_metrics = b->iv.n_metrics;
	}
	if (!locks)
		free(b->iv.locks);
	if (!metrics)
		free(b->iv.metrics);
	iv->locks = locks;
	iv->metrics = metrics;
	iv->n_locks = b->iv.n_locks;
	iv->n_metrics = b->iv.n_metrics;
	memcpy(iv->lost, b->iv.lost, sizeof(iv->lost));
	b->iv.locks = NULL;
	b->iv.metrics = NULL;
	b->cap_locks = b->cap_metrics = 0;
	b->iv.n_locks = b->iv.n_metrics = 0;
	b->open = false;
	return 0;
}

/*
 * Appends a committed interval, evicting what the window and the byte budget
 * say.  Deferred ones do not sweep: their entries are not marked used yet.
 */
void store_append(struct mms_store *st, struct held *h)
{
	if (!h->deferred)
		h->bytes = store_interval_bytes(&h->iv);
	while (st->count && (st->count == st->opts.window ||
			     st->iv_bytes + h->bytes > st->opts.max_bytes))
		evict_oldest(st);
	st->ring[(st->head + st->count) % st->opts.window] = &h->iv;
	st->count++;
	st->iv_bytes += h->bytes;
	st->next_seq++;
	if (!h->deferred)
		maybe_sweep(st);
}

int mms_store_commit(struct mms_store *st, uint64_t dur_ns, uint32_t flags)
{
	struct builder *b = &st->b;
	struct held *h;

	if (!b->open || st->filling)
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->iv.seq = b->iv.seq;
	h->iv.start_ns = b->iv.start_ns;
	h->iv.dur_ns = dur_ns;
	h->iv.flags = b->iv.flags | flags;
	if (store_builder_take(b, &h->iv)) {
		free(h);
		return -ENOMEM;
	}
	store_limbo_clear(st);
	store_append(st, h);
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
		store_interval_free(st, store_ring_at(st, i));
	store_limbo_clear(st);
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
	stacks_free(st);
	st->sweep_at = 4096;
	store_builder_reset(&st->b);
	st->epoch++;
	st->id_gen = store_new_id_gen();
}

void store_touch_interval(struct mms_store *st, const struct mms_interval *iv, uint64_t seq)
{
	for (uint32_t i = 0; i < iv->n_locks; i++)
		touch_lock_row(st, &iv->locks[i], seq);
	for (uint32_t i = 0; i < iv->n_metrics; i++) {
		touch_task(st, iv->metrics[i].proc_id, seq);
		mms_intern_touch(&st->tab[MMS_TAB_STR], iv->metrics[i].metric_id, seq);
	}
}

/* ---- Reading ---- */

uint32_t mms_store_count(const struct mms_store *st)
{
	return st->count;
}

const struct mms_interval *mms_store_at(const struct mms_store *st, uint32_t idx)
{
	return idx < st->count ? store_ring_at(st, idx) : NULL;
}

const struct mms_interval *mms_store_latest(const struct mms_store *st)
{
	return st->count ? mms_store_at(st, st->count - 1) : NULL;
}

int mms_store_find_seq(const struct mms_store *st, uint64_t seq)
{
	const struct mms_interval *first = st->count ? store_ring_at(st, 0) : NULL;

	/* Seqs are consecutive inside the window. */
	if (!first || seq < first->seq || seq - first->seq >= st->count)
		return -ENOENT;
	return (int)(seq - first->seq);
}

uint64_t mms_store_bytes(const struct mms_store *st)
{
	return st->iv_bytes + st->opts.window * sizeof(*st->ring) + store_table_bytes(st);
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
	[MMS_LOCK_RQ] = "rq_lock",
	[MMS_LOCK_ZONE] = "zone_lock",
	[MMS_LOCK_LRU] = "lru_lock",
	[MMS_LOCK_PTL] = "ptlock",
	[MMS_LOCK_I_PAGES] = "i_pages",
	[MMS_LOCK_PI] = "pi_lock",
	[MMS_LOCK_I_RWSEM] = "i_rwsem",
	[MMS_LOCK_I_LOCK] = "i_lock",
	[MMS_LOCK_EXT4_DATA_SEM] = "i_data_sem",
	[MMS_LOCK_EXT4_ES_LOCK] = "i_es_lock",
	[MMS_LOCK_EXT4_RAW_LOCK] = "i_raw_lock",
	[MMS_LOCK_F_POS] = "f_pos_lock",
	[MMS_LOCK_9P_CHAN] = "virtio_chan",
	[MMS_LOCK_I_PRIVATE] = "i_private_lock",
	[MMS_LOCK_D_LOCK] = "d_lock",
	[MMS_LOCK_9P_CLIENT] = "p9_client",
	[MMS_LOCK_JBD2] = "jbd2",
	[MMS_LOCK_BLK] = "blk",
	[MMS_LOCK_SLAB_NODE] = "list_lock",
	[MMS_LOCK_PERCPU] = "percpu",
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
	case MMS_LOCK_RQ:
	case MMS_LOCK_ZONE:
	case MMS_LOCK_LRU:
	case MMS_LOCK_I_PAGES:
	case MMS_LOCK_PI:
	case MMS_LOCK_I_RWSEM:
	case MMS_LOCK_I_LOCK:
	case MMS_LOCK_EXT4_DATA_SEM:
	case MMS_LOCK_EXT4_ES_LOCK:
	case MMS_LOCK_EXT4_RAW_LOCK:
	case MMS_LOCK_F_POS:
	case MMS_LOCK_9P_CHAN:
	case MMS_LOCK_I_PRIVATE:
	case MMS_LOCK_D_LOCK:
	case MMS_LOCK_9P_CLIENT:
	case MMS_LOCK_JBD2:
	case MMS_LOCK_BLK:
	case MMS_LOCK_SLAB_NODE:
		if (*detail)
			return snprintf(buf, len, "%s (%s)", name, detail);
		break;
	case MMS_LOCK_PERCPU:
		/* The variable, not the kind: "cpu_worker_pools+0x318 (cpu 1)". */
		if (*detail)
			return snprintf(buf, len, "%s", detail);
		break;
	default:
		break;
	}
	return snprintf(buf, len, "%s", name);
}
