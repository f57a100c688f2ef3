/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reader's state, shared by reader.c (opening: scanning and checking
 * blocks, indexing) and rec_feed.c (feeding intervals into a store).
 * Private to core/.
 */
#ifndef MMSCOPE_CORE_REC_READER_H
#define MMSCOPE_CORE_REC_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zstd.h>

#include "mmscope/recording.h"
#include "rec_format.h"

/* A definition: from interval pos on, file id fid of table tab is this record. */
struct def {
	uint32_t pos;
	uint32_t fid;
	uint32_t tab;		/* enum mms_table */
	uint32_t len;
	const uint8_t *p;	/* the record past its id */
};

struct iv_ent {
	size_t off;		/* of its block header in the file */
	uint32_t stored, raw;
	uint16_t bflags;
	struct mms_rec_interval meta;
};

struct mms_recording {
	const uint8_t *buf;
	size_t len;
	uint8_t *owned;		/* buf, when read from a file */
	struct mms_rec_info info;
	struct def *defs;
	uint32_t nr_defs, cap_defs;
	struct iv_ent *ivs;
	uint32_t nr_ivs, cap_ivs;
	uint8_t **keep;		/* decompressed definition payloads */
	uint32_t nr_keep, cap_keep;
	ZSTD_DCtx *dctx;
	uint8_t *scratch;
	size_t scratch_cap;
	struct idmap defined[MMS_TAB_NR];	/* while scanning: ids defined so far */
	/* Feeding. */
	struct idmap cur[MMS_TAB_NR];	/* file id -> def index + 1 */
	struct idmap cache[MMS_TAB_NR];	/* file id -> id in cache_st */
	uint32_t applied;	/* defs[0 .. applied-1] are in cur */
	const struct mms_store *cache_st;
	uint64_t cache_epoch;
	uint64_t cache_seq;	/* newest interval we committed to cache_st */
	char str[REC_MAX_STR + 1];
};

/* The decoded fixed part of an interval payload. */
struct iv_view {
	struct mms_rec_interval meta;
	uint64_t lost[MMS_LOST_NR];
	uint32_t slots, lock_rs, metric_rs;
	const uint8_t *locks, *metrics;
};

/* A block as found in the file. */
struct blk {
	size_t off;		/* of the block header */
	uint16_t type, flags;
	uint32_t stored, raw;
	const uint8_t *payload;
};

/* The payload of bk, decompressed into scratch when needed; NULL when damaged. */
const uint8_t *rec_payload_tmp(struct mms_recording *rec, const struct blk *bk);
/* Decodes the fixed part of an interval payload; false when it does not fit. */
bool rec_parse_iv(const uint8_t *p, size_t n, struct iv_view *v);

#endif
