// SPDX-License-Identifier: GPL-2.0
/*
 * The mm BPF sources' one lifecycle (mm_bpfsrc.h): prepare opens, picks,
 * filters, sizes, loads (and for fentry tries an attach) and sets up the
 * aggregation; start attaches; drain reads one generation into the store.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf_load.h"
#include "mm_bpfsrc.h"
#include "mm_filter.h"

static struct mm_bpfsrc *bpfsrc_new(const struct mm_bpfsrc_def *def)
{
	struct mm_bpfsrc *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->def = def;
	if (def->priv_size && !(b->priv = calloc(1, def->priv_size))) {
		free(b);
		return NULL;
	}
	return b;
}

int mm_bpfsrc_create(struct mms_source *src, const struct mm_bpfsrc_def *def)
{
	src->priv = bpfsrc_new(def);
	return src->priv ? 0 : -ENOMEM;
}

static int bpfsrc_prepare(struct mms_source *src, struct mm_bpfsrc *b)
{
	const struct mm_bpfsrc_def *def = b->def;
	int err;

	if (def->probe) {
		err = mms_bpf_fentry_probe(src, def->probe, def->fentry);
		if (err)
			return err;
	}
	b->skel = def->open(b);
	if (!b->skel)
		return mms_bpf_load_fail(src, -errno, "opening the BPF object");
	if (def->setup) {
		err = def->setup(src, b);
		if (err)
			return err;
	}
	*b->filter = mm_filter_mode(src->opts);
	mm_filter_autoload(b->fork, src->opts);
	err = mm_agg_size(b->agg_map, src->opts->map_entries);
	if (err)
		return mms_bpf_load_fail(src, err, "sizing the aggregation map");
	err = def->fentry ? mms_bpf_load_fentry_try(src, b->obj, def->fentry) :
			    mms_bpf_load(src, b->obj, def->load);
	if (err)
		return err;
	err = mm_filter_fill(b->targets, src->opts);
	if (err)
		return mms_bpf_load_fail(src, err, "setting the process filter");
	err = mm_agg_init(&b->agg, b->agg_map, b->gen, b->lost, def->names, def->nr_names);
	if (err)
		return mms_bpf_load_fail(src, err, "setting up aggregation");
	b->agg_ready = true;
	return def->ready ? def->ready(src, b) : 0;
}

int mm_bpfsrc_prepare(struct mms_source *src)
{
	struct mm_bpfsrc *b = src->priv;
	const struct mm_bpfsrc_def *with = b->def->with ? b->def->with(src->opts) : NULL;
	int err = bpfsrc_prepare(src, b);

	if (err || !with)
		return err;
	b->with = bpfsrc_new(with);
	if (!b->with)
		return mms_bpf_load_fail(src, -ENOMEM, "setting up aggregation");
	return bpfsrc_prepare(src, b->with);
}

int mm_bpfsrc_start(struct mms_source *src)
{
	int err = 0;

	for (struct mm_bpfsrc *b = src->priv; b && !err; b = b->with) {
		err = mms_bpf_load_attach(src, b->obj, b->def->attach);
		if (!err && b->def->started)
			b->def->started(b);
	}
	return err;
}

int mm_bpfsrc_drain(struct mms_source *src, struct mms_store *st)
{
	int err = 0;

	for (struct mm_bpfsrc *b = src->priv; b && !err; b = b->with) {
		if (!b->agg_ready)
			continue;
		if (b->def->drain)
			err = b->def->drain(b, st);
		if (!err)
			err = mm_agg_drain(&b->agg, st);
	}
	return err;
}

void mm_bpfsrc_stop(struct mms_source *src)
{
	for (struct mm_bpfsrc *b = src->priv; b; b = b->with)
		if (b->skel)
			bpf_object__detach_skeleton(b->obj);
}

static void bpfsrc_free(struct mm_bpfsrc *b)
{
	if (!b)
		return;
	bpfsrc_free(b->with);
	if (b->def->destroy && b->priv)
		b->def->destroy(b);
	if (b->skel)
		b->destroy_skel(b->skel);
	if (b->agg_ready)
		mm_agg_finish(&b->agg);
	free(b->priv);
	free(b);
}

void mm_bpfsrc_destroy(struct mms_source *src)
{
	bpfsrc_free(src->priv);
	src->priv = NULL;
}

void mm_bpfsrc_iter_run(struct bpf_link *it)
{
	char buf[64];
	int fd;

	if (!it)
		return;	/* not attached (yet, or any more) */
	fd = bpf_iter_create(bpf_link__fd(it));
	if (fd < 0)
		return;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n == 0 || (n < 0 && errno != EINTR))
			break;
	}
	close(fd);
}

