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

/* Memory a capture of another format may take while it is read (the converter checks). */
#define REC_IMPORT_BUDGET (192ULL << 20)

/* A definition: from interval pos on, file id fid of table tab is this record. */
struct def {
	uint32_t pos;
	uint32_t fid;
	uint32_t tab;		/* enum mms_table */
	uint32_t len;
	const uint8_t *p;	/* the record past its id */
};

/*
 * The store id a definition was interned as, at intervals [lo, hi): where
 * the file ids it names (the strings of a lock, say) mean what they meant.
 */
struct def_sid {
	uint32_t id;		/* 0: not interned */
	uint32_t lo, hi;
};

/*
 * The last resolution of a file id: its store id at intervals [lo, hi).
 * Rows name the same few locks, stacks and tasks over and over.
 */
#define REC_HOT 4096		/* per table, by file id modulo */
struct hot_res {
	uint32_t fid, id;
	uint32_t lo, hi;
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
	struct rec_buf unpacked;	/* a packed interval's rows, unpacked */
	struct idmap defined[MMS_TAB_NR];	/* while scanning: ids defined so far */
	uint32_t refs;		/* the opener, and stores holding deferred intervals */
	/*
	 * Feeding (rec_feed.c), in any order: the definitions of each file id
	 * in file order, to find the one that holds at an interval, and the
	 * store id each was interned as.
	 */
	bool indexed;
	struct idmap runs[MMS_TAB_NR];	/* file id -> 1 + its run */
	uint32_t *run_start;	/* run r: by_id[run_start[r] .. run_start[r + 1]) */
	uint32_t *by_id;	/* def indexes, grouped by table and file id */
	struct def_sid *sid;	/* by def index; valid for cache_st at cache_gen */
	struct hot_res *hot;	/* [table * REC_HOT + fid % REC_HOT]; the same */
	const struct mms_store *cache_st;
	uint64_t cache_gen;	/* mms_store_id_gen() of cache_st */
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
/*
 * An interval's payload in the fixed-row layout (packed rows unpacked into
 * rec->unpacked) and its length; NULL when damaged (recorded as damage).
 */
const uint8_t *rec_iv_payload(struct mms_recording *rec, const struct blk *bk, size_t *n);
/* Decodes the fixed part of an interval payload; false when it does not fit. */
bool rec_parse_iv(const uint8_t *p, size_t n, struct iv_view *v);

#endif
