// SPDX-License-Identifier: GPL-2.0
/* Short-lived processes' exits, for the sources that group them (short_procs.h). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/libbpf.h>

#include "short_procs.h"

/* Exits of one drain, sorted by tgid. */
struct exits {
	struct short_exit *v;
	size_t nr, cap;
	bool oom;
};

struct mms_short {
	struct ring_buffer *ring;
	struct exits dead[2];	/* [0] this drain's, [1] the one before */
	uint64_t last_flip;	/* CLOCK_MONOTONIC ns */
};

static int cmp_tgid(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int exit_seen(void *ctx, void *data, size_t size)
{
	struct exits *d = ctx;

	if (size < sizeof(struct short_exit) || d->oom)
		return 0;
	if (d->nr == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 1024;
		struct short_exit *v = realloc(d->v, cap * sizeof(*v));

		if (!v) {
			d->oom = true;	/* those processes keep rows of their own */
			return 0;
		}
		d->v = v;
		d->cap = cap;
	}
	memcpy(&d->v[d->nr], data, sizeof(struct short_exit));
	d->v[d->nr++].comm[sizeof(d->v[0].comm) - 1] = 0;
	return 0;
}

struct mms_short *mms_short_new(int ring_fd)
{
	struct mms_short *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	/* The callback's context is fixed: it always fills dead[0]. */
	s->ring = ring_buffer__new(ring_fd, exit_seen, &s->dead[0], NULL);
	if (!s->ring) {
		free(s);
		return NULL;
	}
	return s;
}

void mms_short_free(struct mms_short *s)
{
	if (!s)
		return;
	ring_buffer__free(s->ring);
	free(s->dead[0].v);
	free(s->dead[1].v);
	free(s);
}

uint64_t mms_short_flip(struct mms_short *s, void (*each)(void *ctx, const struct short_exit *e),
			void *ctx)
{
	struct exits t = s->dead[1];
	struct timespec ts;
	uint64_t now, since;

	s->dead[1] = s->dead[0];
	s->dead[0] = t;
	s->dead[0].nr = 0;
	s->dead[0].oom = false;
	ring_buffer__consume(s->ring);
	if (s->dead[0].nr)
		qsort(s->dead[0].v, s->dead[0].nr, sizeof(struct short_exit), cmp_tgid);
	for (size_t i = 0; each && i < s->dead[0].nr; i++)
		each(ctx, &s->dead[0].v[i]);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
	since = s->last_flip ? now - s->last_flip : 0;
	s->last_flip = now;
	return since;
}

const struct short_exit *mms_short_dead(const struct mms_short *s, uint32_t tgid)
{
	for (int i = 0; i < 2; i++) {
		const struct short_exit *e;

		if (!s->dead[i].nr)
			continue;
		e = bsearch(&tgid, s->dead[i].v, s->dead[i].nr, sizeof(struct short_exit),
			    cmp_tgid);
		if (e)
			return e;
	}
	return NULL;
}
