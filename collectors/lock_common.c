// SPDX-License-Identifier: GPL-2.0
/*
 * User-space helpers shared by the lock-contention sources: stacks, lock
 * names, filters, address hiding (see lock_common.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "lock_common.h"
#include "mmscope/cgroup.h"
#include "mmscope/hash.h"
#include "mmscope/ksyms.h"

/* Raw stack -> store id, valid while the store's epoch stays the same. */
struct stack_ent {
	uint64_t *ips;
	uint32_t nr;
	uint32_t id;
	bool skip;		/* -S rejected it */
};

struct lock_filter {
	uint64_t addr;		/* 0: a name */
	const char *name;	/* the -L entry as given */
};

struct mms_lock_common {
	const struct mms_options *opts;
	const struct mms_ksyms *ks;
	uint64_t key[2];	/* SipHash key for hide() */

	struct lock_filter locks[MMS_MAX_FILTERS];
	int nr_locks;
	uint64_t type_mask;

	struct stack_ent *stacks;	/* the stack cache, found through stack_idx */
	uint32_t stacks_cap, stacks_nr;
	struct mms_hash stack_idx;	/* hash_ips() -> stacks index + 1 */
	uint64_t epoch;
	const struct mms_store *epoch_store;

	struct mms_hash tgids;	/* tgid -> followed? + 1, from the ancestry in /proc */

	uint64_t cgroup_ids[MMS_MAX_FILTERS];	/* -G, resolved */
	int nr_cgroup_ids;
	struct mms_cgroups *cgroups;		/* id -> path of the tasks seen */
};

/* The cache is a cache: past this many raw stacks it starts over. */
#define STACK_CACHE_MAX (1U << 16)
#define TGID_CACHE_MAX (1U << 14)

static char last_error[256];

const char *mms_lock_common_error(void)
{
	return last_error;
}

/* SipHash-2-4, small and keyed: what --hide-addrs needs. */
static inline uint64_t rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

#define SIPROUND                                                                       \
	do {                                                                           \
		v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32);             \
		v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;                                 \
		v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;                                 \
		v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32);             \
	} while (0)

static uint64_t siphash_u64(const uint64_t key[2], uint64_t m)
{
	uint64_t v0 = 0x736f6d6570736575ULL ^ key[0], v1 = 0x646f72616e646f6dULL ^ key[1];
	uint64_t v2 = 0x6c7967656e657261ULL ^ key[0], v3 = 0x7465646279746573ULL ^ key[1];
	uint64_t b = 8ULL << 56;

	v3 ^= m;
	SIPROUND;
	SIPROUND;
	v0 ^= m;
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

static void absorb_file(uint64_t key[2], const char *path, bool *any)
{
	char buf[128];
	size_t n;
	FILE *f = fopen(path, "re");

	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	for (size_t i = 0; i < n; i++) {
		key[0] = siphash_u64(key, key[0] ^ (uint8_t)buf[i]);
		key[1] = siphash_u64(key, key[1] + i);
	}
	*any = n > 0;
}

/*
 * The key: machine-id and boot id, both needed to recompute it, so hashes
 * match across runs within one boot.  Without them, a random key: hashes
 * then only match within one run.
 */
static void hide_key_init(uint64_t key[2])
{
	bool mid = false, boot = false;

	key[0] = 0x6d6d73636f70652dULL;	/* "mmscope-" */
	key[1] = 0x686964652d616464ULL;	/* "hide-add" */
	absorb_file(key, "/etc/machine-id", &mid);
	absorb_file(key, "/proc/sys/kernel/random/boot_id", &boot);
	if (!mid || !boot) {
		if (getrandom(key, 2 * sizeof(uint64_t), 0) != 2 * sizeof(uint64_t))
			key[0] ^= (uint64_t)(uintptr_t)key;
	}
}

uint64_t mms_lock_common_hide(const struct mms_lock_common *lc, uint64_t v)
{
	uint64_t h;

	if (!lc->opts->hide_addrs || !v)
		return v;
	h = siphash_u64(lc->key, v);
	return h ? h : 1;
}

static bool parse_addr(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (strncmp(s, "0x", 2) && strncmp(s, "0X", 2))
		return false;
	errno = 0;
	v = strtoull(s + 2, &end, 16);
	if (errno || *end || end == s + 2)
		return false;
	*out = v;
	return true;
}

static int filters_init(struct mms_lock_common *lc)
{
	const struct mms_options *o = lc->opts;

	for (int i = 0; i < o->nr_locks && i < MMS_MAX_FILTERS; i++) {
		struct lock_filter *f = &lc->locks[lc->nr_locks++];
		const char *s = o->locks[i];

		if (!s || !*s) {
			snprintf(last_error, sizeof(last_error),
				 "empty -L lock filter: give an address (0x...), a symbol or "
				 "a lock name such as mmap_lock");
			return -EINVAL;
		}
		f->name = s;
		if (parse_addr(s, &f->addr))
			continue;
		/* A symbol names a static lock; names like mmap_lock stay names. */
		if (lc->ks && !mms_ksyms_hidden(lc->ks))
			f->addr = mms_ksyms_addr(lc->ks, s);
	}
	if (!o->nr_types) {
		lc->type_mask = ~0ULL;
		return 0;
	}
	for (int i = 0; i < o->nr_types && i < MMS_MAX_FILTERS; i++)
		if (o->types[i] < 64)
			lc->type_mask |= 1ULL << o->types[i];
	return 0;
}

/* -G: paths to ids now, so the kernel (BPF) or the sample's id (perf) can be compared. */
static int cgroups_init(struct mms_lock_common *lc)
{
	const struct mms_options *o = lc->opts;

	for (int i = 0; i < o->nr_cgroups && i < MMS_MAX_FILTERS; i++) {
		int err = mms_cgroup_id(o->cgroups[i], &lc->cgroup_ids[i]);

		if (err) {
			/* A path too long for the message is cut: it is the user's own. */
			snprintf(last_error, sizeof(last_error), "-G: %s '%.180s'",
				 err == -ENODEV ? "no cgroup2 file system is mounted for" :
				 "no such cgroup v2", o->cgroups[i]);
			return err;
		}
		lc->nr_cgroup_ids++;
	}
	return mms_cgroups_create(&lc->cgroups);
}

bool mms_lock_common_filters_need_ksyms(const struct mms_options *opts)
{
	uint64_t a;

	for (int i = 0; i < opts->nr_locks && i < MMS_MAX_FILTERS; i++)
		if (opts->locks[i] && *opts->locks[i] && !parse_addr(opts->locks[i], &a))
			return true;
	return false;
}

void mms_lock_common_set_ksyms(struct mms_lock_common *lc, const struct mms_ksyms *ks)
{
	lc->ks = ks;
}

int mms_lock_common_create(const struct mms_options *opts, const struct mms_ksyms *ks,
			   struct mms_lock_common **out)
{
	struct mms_lock_common *lc = calloc(1, sizeof(*lc));
	int err;

	last_error[0] = '\0';
	if (!lc)
		return -ENOMEM;
	lc->opts = opts;
	lc->ks = ks;
	if (opts->hide_addrs)
		hide_key_init(lc->key);
	err = filters_init(lc);
	if (!err)
		err = cgroups_init(lc);
	if (err) {
		mms_cgroups_destroy(lc->cgroups);
		free(lc);
		return err;
	}
	*out = lc;
	return 0;
}

static void stacks_clear(struct mms_lock_common *lc)
{
	for (uint32_t i = 0; i < lc->stacks_nr; i++)
		free(lc->stacks[i].ips);
	lc->stacks_nr = 0;
	mms_hash_clear(&lc->stack_idx);
}

void mms_lock_common_destroy(struct mms_lock_common *lc)
{
	if (!lc)
		return;
	stacks_clear(lc);
	free(lc->stacks);
	mms_hash_free(&lc->stack_idx);
	mms_hash_free(&lc->tgids);
	mms_cgroups_destroy(lc->cgroups);
	free(lc);
}

int mms_lock_common_cgroup_ids(const struct mms_lock_common *lc, uint64_t *ids, int max)
{
	int n = lc->nr_cgroup_ids < max ? lc->nr_cgroup_ids : max;

	memcpy(ids, lc->cgroup_ids, (size_t)n * sizeof(*ids));
	return n;
}

bool mms_lock_common_target_ok(const struct mms_lock_common *lc, uint32_t cpu, uint64_t cgroup)
{
	int i;

	if (!mms_options_cpu_ok(lc->opts, cpu))
		return false;
	for (i = 0; i < lc->nr_cgroup_ids && lc->cgroup_ids[i] != cgroup; i++)
		;
	return !lc->nr_cgroup_ids || i < lc->nr_cgroup_ids;
}

const char *mms_lock_common_cgroup_path(struct mms_lock_common *lc, uint64_t id)
{
	return id ? mms_cgroups_path(lc->cgroups, id) : NULL;
}

uint32_t mms_lock_common_task(struct mms_lock_common *lc, struct mms_store *st, uint32_t tid,
			      uint32_t tgid, const char *comm, uint64_t cgroup)
{
	return mms_store_task_cg(st, tid, tgid, comm, mms_lock_common_cgroup_path(lc, cgroup));
}

static uint64_t hash_ips(const uint64_t *ips, uint32_t nr)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ nr;

	for (uint32_t i = 0; i < nr; i++) {
		h ^= ips[i];
		h *= 0x100000001b3ULL;
		h ^= h >> 29;
	}
	return h;
}

/* Drops every cached id when the store may have reused some. */
static void check_epoch(struct mms_lock_common *lc, const struct mms_store *st)
{
	uint64_t e = mms_store_epoch(st);

	if (lc->epoch_store == st && lc->epoch == e)
		return;
	stacks_clear(lc);
	lc->epoch = e;
	lc->epoch_store = st;
}

static bool stack_matches(const struct mms_lock_common *lc, char syms[][128], uint32_t n)
{
	const struct mms_options *o = lc->opts;

	if (!o->nr_stack_match)
		return true;
	for (int m = 0; m < o->nr_stack_match; m++)
		for (uint32_t i = 0; i < n; i++)
			if (o->stack_match[m] && strstr(syms[i], o->stack_match[m]))
				return true;
	return false;
}

/* Trims, symbolises and interns one stack; no caching. */
static int stack_resolve(struct mms_lock_common *lc, struct mms_store *st, const uint64_t *ips,
			 uint32_t nr, uint32_t *id)
{
	const struct mms_options *o = lc->opts;
	uint32_t max = mms_lock_kept_frames(o);
	uint64_t kept[MMS_MAX_STACK];
	uint32_t sym_ids[MMS_MAX_STACK];
	char syms[MMS_MAX_STACK][128];
	uint32_t i = 0, n = 0;

	if (max > MMS_MAX_STACK)
		max = MMS_MAX_STACK;
	while (i < nr && mms_ksyms_is_lock_func(lc->ks, ips[i]))
		i++;
	i += o->stack_skip;
	for (; i < nr && n < max && ips[i]; i++, n++) {
		if (lc->ks && !mms_ksyms_hidden(lc->ks) && !o->hide_addrs)
			mms_ksyms_format(lc->ks, ips[i], syms[n], sizeof(syms[n]));
		else if (lc->ks && !mms_ksyms_hidden(lc->ks) && mms_ksyms_find(lc->ks, ips[i]))
			mms_ksyms_format(lc->ks, ips[i], syms[n], sizeof(syms[n]));
		else	/* unknown frame: its address would leak what --hide-addrs hides */
			snprintf(syms[n], sizeof(syms[n]), "%#llx",
				 (unsigned long long)mms_lock_common_hide(lc, ips[i]));
		kept[n] = mms_lock_common_hide(lc, ips[i]);
		/*
		 * A wait inside an interrupt: what it interrupted is arbitrary (a
		 * new stack for every interrupted instruction), not the lock's
		 * caller.  The stack ends at the interrupt's entry.
		 */
		if (mms_ksyms_is_irq_entry(lc->ks, ips[i])) {
			n++;
			break;
		}
	}
	*id = 0;
	if (!stack_matches(lc, syms, n))
		return MMS_LC_SKIP;
	if (!n)
		return 0;
	for (uint32_t k = 0; k < n; k++) {
		sym_ids[k] = mms_store_str(st, syms[k]);
		if (!sym_ids[k])
			return -ENOMEM;
	}
	*id = mms_store_stack(st, kept, sym_ids, n);
	return *id ? 0 : -ENOMEM;
}

int mms_lock_common_stack(struct mms_lock_common *lc, struct mms_store *st, const uint64_t *ips,
			  uint32_t nr, uint32_t *stack_id)
{
	struct mms_hash *x = &lc->stack_idx;
	struct stack_ent *e;
	uint64_t h;
	uint32_t i;
	int err;

	check_epoch(lc, st);
	if (lc->stacks_nr >= STACK_CACHE_MAX)
		stacks_clear(lc);
	if (x->nr + 1 > x->cap / 2 && mms_hash_reserve(x, x->nr + 1))
		return stack_resolve(lc, st, ips, nr, stack_id);
	h = hash_ips(ips, nr);
	for (i = mms_hash_first(x, h); x->vals[i]; i = mms_hash_next(x, i)) {
		e = &lc->stacks[x->vals[i] - 1];
		if (x->tags[i] == h && e->nr == nr &&
		    (!nr || !memcmp(e->ips, ips, nr * sizeof(*ips)))) {
			*stack_id = e->id;
			return e->skip ? MMS_LC_SKIP : 0;
		}
	}
	err = stack_resolve(lc, st, ips, nr, stack_id);
	if (err < 0)
		return err;
	if (lc->stacks_nr == lc->stacks_cap) {
		uint32_t cap = lc->stacks_cap ? lc->stacks_cap * 2 : 512;

		e = realloc(lc->stacks, cap * sizeof(*e));
		if (!e)
			return err;	/* resolved fine, just not cached */
		lc->stacks = e;
		lc->stacks_cap = cap;
	}
	e = &lc->stacks[lc->stacks_nr];
	e->ips = malloc((nr ? nr : 1) * sizeof(*ips));
	if (!e->ips)
		return err;
	if (nr)
		memcpy(e->ips, ips, nr * sizeof(*ips));
	e->nr = nr;
	e->id = *stack_id;
	e->skip = err == MMS_LC_SKIP;
	mms_hash_set(x, i, h, lc->stacks_nr++);
	return err;
}

/* Does "rcu_state+0x40" or "rcu_state" name the symbol sym? */
static bool same_symbol(const char *name, const char *sym)
{
	size_t len = strlen(sym);

	return !strncmp(name, sym, len) && (name[len] == '\0' || name[len] == '+');
}

static bool lock_wanted(const struct mms_lock_common *lc, uint64_t raw_addr, uint32_t kind,
			const char *name, const char *detail)
{
	if (!lc->nr_locks)
		return true;
	for (int i = 0; i < lc->nr_locks; i++) {
		const struct lock_filter *f = &lc->locks[i];

		if (f->addr && f->addr == raw_addr)
			return true;
		if (name && same_symbol(name, f->name))
			return true;
		if (kind != MMS_LOCK_UNKNOWN && kind != MMS_LOCK_STATIC &&
		    kind != MMS_LOCK_SLAB && !strcmp(f->name, mms_lock_kind_name(kind)))
			return true;
		if (detail && *detail && !strcmp(f->name, detail))
			return true;
	}
	return false;
}

int mms_lock_common_lock(struct mms_lock_common *lc, struct mms_store *st,
			 const struct mms_lock_hint *h, uint32_t *lock_id)
{
	struct mms_lock_info info = {
		.addr = mms_lock_common_hide(lc, h->addr),
		.kind = h->kind < MMS_LOCK_KIND_NR ? h->kind : MMS_LOCK_UNKNOWN,
	};
	const char *detail = h->detail && *h->detail ? h->detail : NULL;
	char name[160];

	name[0] = '\0';
	switch (info.kind) {
	case MMS_LOCK_SLAB:
		if (detail)
			snprintf(name, sizeof(name), "&%s", detail);
		else
			info.kind = MMS_LOCK_UNKNOWN;
		break;
	case MMS_LOCK_UNKNOWN:
	case MMS_LOCK_STATIC:
		/* Only a data symbol covering the address names it; no guessing. */
		if (lc->ks && mms_ksyms_data_name(lc->ks, h->addr, name, sizeof(name)) > 0)
			info.kind = MMS_LOCK_STATIC;
		else
			info.kind = MMS_LOCK_UNKNOWN;
		break;
	default:
		snprintf(name, sizeof(name), "%s%s", mms_lock_kind_name(info.kind),
			 h->wait_lock ? ".wait_lock" : "");
		break;
	}
	*lock_id = 0;
	if (!lock_wanted(lc, h->addr, info.kind, name[0] ? name : NULL, detail))
		return MMS_LC_SKIP;
	if (name[0] && !(info.name_id = mms_store_str(st, name)))
		return -ENOMEM;
	if (detail && !(info.detail_id = mms_store_str(st, detail)))
		return -ENOMEM;
	if (info.kind == MMS_LOCK_MMAP || info.kind == MMS_LOCK_SIGLOCK) {
		info.owner_tgid = h->owner_tgid;
		if (h->owner_comm && *h->owner_comm &&
		    !(info.owner_comm_id = mms_store_str(st, h->owner_comm)))
			return -ENOMEM;
	}
	*lock_id = mms_store_lock(st, &info);
	return *lock_id ? 0 : -ENOMEM;
}

int mms_lock_common_filter_addrs(const struct mms_lock_common *lc, uint64_t *addrs, int max)
{
	int n = 0;

	for (int i = 0; i < lc->nr_locks; i++) {
		if (!lc->locks[i].addr)
			return -ENOENT;
		if (n < max)
			addrs[n++] = lc->locks[i].addr;
		else
			return -E2BIG;
	}
	return n;
}

bool mms_lock_common_type_ok(const struct mms_lock_common *lc, uint32_t flags)
{
	if (!lc->opts->nr_types)
		return true;
	return flags < 64 && (lc->type_mask >> flags) & 1;
}

uint64_t mms_lock_common_type_mask(const struct mms_lock_common *lc)
{
	return lc->type_mask;
}

static int tgid_remember(struct mms_lock_common *lc, uint32_t tgid, bool ok)
{
	uint32_t i;
	int found;

	if (lc->tgids.nr >= TGID_CACHE_MAX)
		mms_hash_clear(&lc->tgids);
	found = mms_hash_probe(&lc->tgids, tgid, &i);
	if (found < 0)
		return found;
	if (found)
		lc->tgids.vals[i] = ok + 1;
	else
		mms_hash_set(&lc->tgids, i, tgid, ok);
	return 0;
}

void mms_lock_common_follow(struct mms_lock_common *lc, uint32_t tgid)
{
	tgid_remember(lc, tgid, true);
}

static uint32_t parent_of(uint32_t pid)
{
	char path[64], buf[512], *p;
	unsigned int ppid;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* comm may hold spaces and parentheses: the state follows the last ')'. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %u", &ppid) != 1)
		return 0;
	return ppid;
}

static bool descends_from(uint32_t tgid, uint32_t ancestor)
{
	for (int depth = 0; depth < 64 && tgid > 1; depth++) {
		if (tgid == ancestor)
			return true;
		tgid = parent_of(tgid);
	}
	return false;
}

bool mms_lock_common_task_ok(struct mms_lock_common *lc, uint32_t tid, uint32_t tgid)
{
	const struct mms_options *o = lc->opts;
	uint32_t known;
	bool ok;

	if (o->nr_tids) {
		for (int i = 0; i < o->nr_tids; i++)
			if ((uint32_t)o->tids[i] == tid)
				return true;
		if (!o->pid)
			return false;
	}
	if (!o->pid || tgid == (uint32_t)o->pid)
		return true;
	/* Like perf's inherited events: children forked since, unless --no-inherit. */
	if (o->no_inherit)
		return false;
	known = mms_hash_find(&lc->tgids, tgid);
	if (known)
		return known - 1;
	ok = descends_from(tgid, (uint32_t)o->pid);
	tgid_remember(lc, tgid, ok);
	return ok;
}

int mms_lock_common_add(struct mms_lock_common *lc, struct mms_store *st,
			const struct mms_lock_sample *s)
{
	const struct mms_lock_info *l;
	struct mms_metric_sample m = { 0 };
	const char *metric;
	int err = mms_store_add_lock(st, s);

	if (err)
		return err;
	l = mms_store_get_lock(st, s->lock_id);
	if (!l || l->kind != MMS_LOCK_MMAP)
		return 0;
	if (s->flags & MMS_LCB_WRITE)
		metric = "mmap_lock.wait.write";
	else if (s->flags & MMS_LCB_READ)
		metric = "mmap_lock.wait.read";
	else
		return 0;	/* the rwsem's wait_lock spinning is not a reader or writer wait */
	if (l->owner_tgid) {
		m.proc_id = mms_store_task(st, l->owner_tgid, l->owner_tgid,
					   mms_store_get_str(st, l->owner_comm_id));
		if (!m.proc_id)
			return -ENOMEM;
	}
	m.metric_id = mms_store_str(st, metric);
	if (!m.metric_id)
		return -ENOMEM;
	m.stat = s->wait;
	return mms_store_add_metric(st, &m);
}
