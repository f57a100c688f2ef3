// SPDX-License-Identifier: GPL-2.0
/* Kernel symbols from /proc/kallsyms (see include/mmscope/ksyms.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mmscope/ksyms.h"

struct mms_ksyms {
	struct mms_ksym *syms;	/* sorted by address */
	size_t nr, cap;
	char *names;		/* all names, NUL-separated */
	size_t names_len, names_cap;
	struct mms_ksym **by_name;	/* sorted by name, on the first look-up by name */
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

static int add_sym(struct mms_ksyms *ks, uint64_t addr, char type, const char *name)
{
	size_t off;
	int err;

	if (ks->nr == ks->cap) {
		size_t cap = ks->cap ? ks->cap * 2 : 65536;
		struct mms_ksym *p = realloc(ks->syms, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		ks->syms = p;
		ks->cap = cap;
	}
	err = add_name(ks, name, &off);
	if (err)
		return err;
	ks->syms[ks->nr].addr = addr;
	ks->syms[ks->nr].type = type;
	/* Names are fixed up at the end, once the buffer stops moving. */
	ks->syms[ks->nr].name = (const char *)(uintptr_t)off;
	ks->nr++;
	if (!strcmp(name, "__sched_text_start"))
		ks->sched_start = addr;
	else if (!strcmp(name, "__sched_text_end"))
		ks->sched_end = addr;
	else if (!strcmp(name, "__lock_text_start"))
		ks->lock_start = addr;
	else if (!strcmp(name, "__lock_text_end"))
		ks->lock_end = addr;
	return 0;
}

/*
 * One line, "ADDR TYPE NAME[\t[MODULE]]": 0 and the fields, or -1 for a
 * line of another shape (skipped).  The name is cut at 255 bytes.
 */
static int parse_line(char *line, uint64_t *addr, char *type, char **name)
{
	uint64_t a = 0;
	char *p = line, *n;
	int digits = 0;

	for (;; p++, digits++) {
		unsigned v;

		if (*p >= '0' && *p <= '9')
			v = (unsigned)(*p - '0');
		else if ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'f')
			v = (unsigned)((*p | 0x20) - 'a' + 10);
		else
			break;
		if (digits == 16)
			return -1;
		a = a << 4 | v;
	}
	if (!digits || p[0] != ' ' || !p[1] || p[1] == ' ' || p[2] != ' ')
		return -1;
	*type = p[1];
	n = p + 3;
	p = n + strcspn(n, " \t");
	if (p == n)
		return -1;
	if (p - n > 255)
		p = n + 255;
	*p = 0;
	*addr = a;
	*name = n;
	return 0;
}

int mms_ksyms_load(const char *path, struct mms_ksyms **out)
{
	struct mms_ksyms *ks;
	bool any_nonzero = false;
	size_t have = 0, bufsz = 256 * 1024;
	char *buf;
	ssize_t got;
	int fd, err = 0;

	/* By hand, in large reads: sscanf() took most of the time of a start. */
	fd = open(path ? path : "/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ks = calloc(1, sizeof(*ks));
	buf = malloc(bufsz);
	if (!ks || !buf) {
		err = -ENOMEM;
		goto err_free;
	}
	for (;;) {
		char *line = buf, *nl;

		got = read(fd, buf + have, bufsz - have - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			err = -errno;
			goto err_free;
		}
		have += (size_t)got;
		buf[have] = 0;
		/* At the end, a last line without its newline still counts. */
		while ((nl = memchr(line, '\n', have - (size_t)(line - buf))) || (!got && *line)) {
			uint64_t addr;
			char type, *name;

			if (nl)
				*nl = 0;
			if (!parse_line(line, &addr, &type, &name)) {
				any_nonzero |= addr != 0;
				err = add_sym(ks, addr, type, name);
				if (err)
					goto err_free;
			}
			line = nl ? nl + 1 : buf + have;
		}
		if (!got)
			break;
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have == bufsz - 1)
			have = 0;	/* a line of 256 KiB is no symbol: dropped */
	}
	close(fd);
	fd = -1;
	free(buf);
	buf = NULL;
	for (size_t i = 0; i < ks->nr; i++)
		ks->syms[i].name = ks->names + (uintptr_t)ks->syms[i].name;
	qsort(ks->syms, ks->nr, sizeof(*ks->syms), cmp_addr);
	ks->hidden = ks->nr && !any_nonzero;
	*out = ks;
	return 0;

err_free:
	if (fd >= 0)
		close(fd);
	free(buf);
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

/* The by-name index, built on the first look-up by name (most sessions make none). */
static bool by_name_index(const struct mms_ksyms *cks)
{
	struct mms_ksyms *ks = (struct mms_ksyms *)cks;	/* a cache inside the object */

	if (ks->by_name)
		return true;
	ks->by_name = malloc((ks->nr ? ks->nr : 1) * sizeof(*ks->by_name));
	if (!ks->by_name)
		return false;
	for (size_t i = 0; i < ks->nr; i++)
		ks->by_name[i] = &ks->syms[i];
	qsort(ks->by_name, ks->nr, sizeof(*ks->by_name), cmp_name);
	return true;
}

static const struct mms_ksym *by_name(const struct mms_ksyms *ks, const char *name)
{
	size_t lo = 0, hi = ks->nr;

	if (!by_name_index(ks))
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(ks->by_name[mid]->name, name);

		if (!c)
			return ks->by_name[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

uint64_t mms_ksyms_addr(const struct mms_ksyms *ks, const char *name)
{
	const struct mms_ksym *s = by_name(ks, name);

	return s ? s->addr : 0;
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

int mms_ksyms_percpu_name(const struct mms_ksyms *ks, uint64_t addr, char *buf, size_t len)
{
	const struct mms_ksym *start, *end, *s;

	/*
	 * The section's bounds are symbols too (x86-64: __per_cpu_start is 0);
	 * without CONFIG_KALLSYMS_ALL there are neither, nor variables.
	 */
	if (!ks || ks->hidden)
		return 0;
	start = by_name(ks, "__per_cpu_start");
	end = by_name(ks, "__per_cpu_end");
	if (!start || !end || addr < start->addr || addr >= end->addr)
		return 0;
	s = mms_ksyms_find(ks, addr);
	/* At one address the markers may sort last: the variable there is the name. */
	while (s && s > ks->syms && s[-1].addr == s->addr && !strncmp(s->name, "__per_cpu", 9))
		s--;
	if (!s || s->addr < start->addr || !strncmp(s->name, "__per_cpu", 9) ||
	    addr - s->addr >= 65536)
		return 0;
	if (s->addr == addr)
		return snprintf(buf, len, "%s", s->name);
	return snprintf(buf, len, "%s+%#llx", s->name, (unsigned long long)(addr - s->addr));
}
