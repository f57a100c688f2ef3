// SPDX-License-Identifier: GPL-2.0
/* Kernel symbols from /proc/kallsyms (see include/mmscope/ksyms.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmscope/ksyms.h"

struct mms_ksyms {
	struct mms_ksym *syms;	/* sorted by address */
	size_t nr, cap;
	char *names;		/* all names, NUL-separated */
	size_t names_len, names_cap;
	struct mms_ksym **by_name;	/* sorted by name */
	uint64_t sched_start, sched_end, lock_start, lock_end;
	bool hidden;
};

static int cmp_addr(const void *a, const void *b)
{
	const struct mms_ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Prefer text symbols at the same address: they are what callers resolve to. */
	return (x->type == 't' || x->type == 'T') - (y->type == 't' || y->type == 'T');
}

static int cmp_name(const void *a, const void *b)
{
	const struct mms_ksym *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

static int add_name(struct mms_ksyms *ks, const char *name, size_t *off)
{
	size_t len = strlen(name) + 1;

	if (ks->names_len + len > ks->names_cap) {
		size_t cap = ks->names_cap ? ks->names_cap * 2 : 1 << 20;
		char *p;

		while (cap < ks->names_len + len)
			cap *= 2;
		p = realloc(ks->names, cap);
		if (!p)
			return -ENOMEM;
		ks->names = p;
		ks->names_cap = cap;
	}
	memcpy(ks->names + ks->names_len, name, len);
	*off = ks->names_len;
	ks->names_len += len;
	return 0;
}

int mms_ksyms_load(const char *path, struct mms_ksyms **out)
{
	struct mms_ksyms *ks;
	char line[512], name[256], type;
	unsigned long long addr;
	bool any_nonzero = false;
	FILE *f;
	int err = 0;

	f = fopen(path ? path : "/proc/kallsyms", "re");
	if (!f)
		return -errno;
	ks = calloc(1, sizeof(*ks));
	if (!ks) {
		fclose(f);
		return -ENOMEM;
	}
	while (fgets(line, sizeof(line), f)) {
		size_t off;

		/* Module symbols carry a "[module]" suffix; the name is what we keep. */
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (addr)
			any_nonzero = true;
		if (ks->nr == ks->cap) {
			size_t cap = ks->cap ? ks->cap * 2 : 65536;
			struct mms_ksym *p = realloc(ks->syms, cap * sizeof(*p));

			if (!p) {
				err = -ENOMEM;
				goto err_free;
			}
			ks->syms = p;
			ks->cap = cap;
		}
		err = add_name(ks, name, &off);
		if (err)
			goto err_free;
		ks->syms[ks->nr].addr = addr;
		ks->syms[ks->nr].type = type;
		/* Names are fixed up below, once the buffer stops moving. */
		ks->syms[ks->nr].name = (const char *)(uintptr_t)off;
		ks->nr++;
	}
	fclose(f);
	f = NULL;
	for (size_t i = 0; i < ks->nr; i++)
		ks->syms[i].name = ks->names + (uintptr_t)ks->syms[i].name;
	qsort(ks->syms, ks->nr, sizeof(*ks->syms), cmp_addr);
	ks->by_name = malloc((ks->nr ? ks->nr : 1) * sizeof(*ks->by_name));
	if (!ks->by_name) {
		err = -ENOMEM;
		goto err_free;
	}
	for (size_t i = 0; i < ks->nr; i++)
		ks->by_name[i] = &ks->syms[i];
	qsort(ks->by_name, ks->nr, sizeof(*ks->by_name), cmp_name);
	ks->hidden = ks->nr && !any_nonzero;
	ks->sched_start = mms_ksyms_addr(ks, "__sched_text_start");
	ks->sched_end = mms_ksyms_addr(ks, "__sched_text_end");
	ks->lock_start = mms_ksyms_addr(ks, "__lock_text_start");
	ks->lock_end = mms_ksyms_addr(ks, "__lock_text_end");
	*out = ks;
	return 0;

err_free:
	if (f)
		fclose(f);
	mms_ksyms_destroy(ks);
	return err;
}

void mms_ksyms_destroy(struct mms_ksyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->names);
	free(ks->by_name);
	free(ks);
}

size_t mms_ksyms_count(const struct mms_ksyms *ks)
{
	return ks->nr;
}

bool mms_ksyms_hidden(const struct mms_ksyms *ks)
{
	return ks->hidden;
}

const struct mms_ksym *mms_ksyms_find(const struct mms_ksyms *ks, uint64_t addr)
{
	size_t lo = 0, hi = ks->nr;

	if (ks->hidden || !ks->nr || addr < ks->syms[0].addr)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return &ks->syms[lo];
}

uint64_t mms_ksyms_next(const struct mms_ksyms *ks, uint64_t addr)
{
	size_t lo = 0, hi = ks->nr;

	if (ks->hidden)
		return 0;
	while (lo < hi) {	/* the first symbol whose address is above addr */
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ks->nr ? ks->syms[lo].addr : 0;
}

uint64_t mms_ksyms_addr(const struct mms_ksyms *ks, const char *name)
{
	size_t lo = 0, hi = ks->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(ks->by_name[mid]->name, name);

		if (!c)
			return ks->by_name[mid]->addr;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

int mms_ksyms_format(const struct mms_ksyms *ks, uint64_t addr, char *buf, size_t len)
{
	const struct mms_ksym *s = ks ? mms_ksyms_find(ks, addr) : NULL;

	if (!s)
		return snprintf(buf, len, "%#llx", (unsigned long long)addr);
	if (s->addr == addr)
		return snprintf(buf, len, "%s", s->name);
	return snprintf(buf, len, "%s+%#llx", s->name, (unsigned long long)(addr - s->addr));
}

bool mms_ksyms_is_lock_func(const struct mms_ksyms *ks, uint64_t addr)
{
	if (!ks || !ks->sched_start)
		return false;
	return (addr >= ks->sched_start && addr < ks->sched_end) ||
	       (addr >= ks->lock_start && addr < ks->lock_end);
}

bool mms_ksyms_is_irq_entry(const struct mms_ksyms *ks, uint64_t addr)
{
	const struct mms_ksym *s = ks ? mms_ksyms_find(ks, addr) : NULL;

	if (!s || (s->type != 't' && s->type != 'T'))
		return false;
	return !strncmp(s->name, "asm_sysvec_", 11) || !strcmp(s->name, "asm_common_interrupt") ||
	       !strcmp(s->name, "asm_spurious_interrupt");
}

int mms_ksyms_data_name(const struct mms_ksyms *ks, uint64_t addr, char *buf, size_t len)
{
	const struct mms_ksym *s = mms_ksyms_find(ks, addr);

	/*
	 * Only a data symbol containing addr names a lock.  Without
	 * CONFIG_KALLSYMS_ALL there are none, and the nearest text symbol
	 * below a data address says nothing about it: no name, no guess.
	 */
	if (!s)
		return 0;
	switch (s->type) {
	case 'd': case 'D': case 'b': case 'B': case 'r': case 'R':
		break;
	default:
		return 0;
	}
	/* Section markers span whole sections; a far offset is no name either. */
	if (!strncmp(s->name, "__start", 7) || !strncmp(s->name, "__stop", 6) ||
	    !strncmp(s->name, "__end", 5) || !strncmp(s->name, "__bss", 5) ||
	    !strcmp(s->name, "_sdata") || !strcmp(s->name, "_edata") ||
	    !strcmp(s->name, "_end") || addr - s->addr >= 65536)
		return 0;
	if (s->addr == addr)
		return snprintf(buf, len, "%s", s->name);
	return snprintf(buf, len, "%s+%#llx", s->name, (unsigned long long)(addr - s->addr));
}
