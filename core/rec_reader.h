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

#include "mmscope/hash.h"
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

/*
 * What reading one file may cost (docs/FORMAT.md, "Limits"), set from the
 * bytes that are there (a hole in a sparse file never counts): memory the
 * reader allocates, bytes it decompresses, rows it decodes.  Every charge is
 * made before the work; one over its limit stops reading as damage.
 */
struct rec_budget {
	uint64_t mem, mem_max;
	uint64_t raw, raw_max;
	uint64_t rows, rows_max;
};

struct mms_recording {
	const uint8_t *buf;
	size_t len;
	uint8_t *owned;		/* buf, when read from a file */
	uint64_t file_size;	/* what fstat said; len is what was read of it */
	size_t crc_ok;		/* blocks ending here or before were checked while reading */
	struct rec_budget bud;
	bool scanning;		/* opening: decoding is charged to the budget */
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
	uint8_t *unpacked;	/* a packed interval's rows, unpacked */
	size_t unpacked_cap;
	struct mms_hash defined[MMS_TAB_NR];	/* while scanning: file ids defined so far */
	uint32_t refs;		/* the opener, and stores holding deferred intervals */
	/*
	 * Feeding (rec_feed.c), in any order: the definitions of each file id
	 * in file order, to find the one that holds at an interval, and the
	 * store id each was interned as.
	 */
	bool indexed;
	struct mms_hash runs[MMS_TAB_NR];	/* file id -> its run + 1 */
	uint32_t *run_start;	/* run r: by_id[run_start[r] .. run_start[r + 1]) */
	uint32_t *by_id;	/* def indexes, grouped by table and file id */
	struct def_sid *sid;	/* by def index; valid for cache_st at cache_gen */
	struct hot_res *hot;	/* [table * REC_HOT + fid % REC_HOT]; the same */
	const struct mms_store *cache_st;
	uint64_t cache_gen;	/* mms_store_id_gen() of cache_st */
	char str[REC_MAX_STR + 1];
	char why[96];		/* a damage reason with figures, while opening */
};

/*
 * The key of a lock row in rec's file: what its minor version says (1.4
 * added the owner and its stack; older files' rows end at flags).
 */
static inline uint32_t rec_lock_key(const struct mms_recording *rec)
{
	return rec->info.minor >= REC_LOCK_KEY_MINOR ? REC_LOCK_KEY : REC_LOCK_KEY_1_3;
}

/* The decoded fixed part of an interval payload. */
struct iv_view {
	struct mms_rec_interval meta;
	uint64_t lost[MMS_LOST_NR];
	uint32_t slots, lock_rs, metric_rs;
	uint32_t lock_key;	/* rec_lock_key(): where a lock row's stat starts */
	const uint8_t *locks, *metrics;
};

/* A block as found in the file. */
struct blk {
	size_t off;		/* of the block header */
	uint16_t type, flags;
	uint32_t stored, raw;
	const uint8_t *payload;
};

/* Budget limits for a file of len bytes. */
void rec_budget_init(struct rec_budget *b, uint64_t len);
/*
 * Takes n bytes of memory (or decompressed bytes, or rows) from the budget;
 * false, with the damage recorded at off naming the limit, when over it.
 */
bool rec_charge_mem(struct mms_recording *rec, size_t off, uint64_t n);
bool rec_charge_raw(struct mms_recording *rec, size_t off, uint64_t n);
bool rec_charge_rows(struct mms_recording *rec, size_t off, uint64_t n);
/* Records damage of the block at off (reading stops there); returns false. */
bool rec_damage(struct mms_recording *rec, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * Reads a recording from fd (size bytes by fstat) block by block into
 * rec->owned: the file header first, then each block's header before its
 * payload, each checksum before the next block; it stops after the first
 * bad block, so a damaged tail or a hole is never read.  0 or -errno.
 */
int rec_read_fd(struct mms_recording *rec, int fd, uint64_t size);

/* Decompresses bk's payload into dst (bk->raw bytes); false is damage. */
bool rec_unpack(struct mms_recording *rec, const struct blk *bk, uint8_t *dst);
/* The payload of bk, decompressed into scratch when needed; NULL when damaged. */
const uint8_t *rec_payload_tmp(struct mms_recording *rec, const struct blk *bk);
/*
 * An interval's payload in the fixed-row layout (packed rows unpacked into
 * rec->unpacked) and its length; NULL when damaged (recorded as damage).
 */
const uint8_t *rec_iv_payload(struct mms_recording *rec, const struct blk *bk, size_t *n);
/*
 * Decodes the fixed part of an interval payload of rec's file (lock rows of
 * rec_lock_key() key bytes); NULL, or what is wrong with it.
 */
const char *rec_parse_iv(const struct mms_recording *rec, const uint8_t *p, size_t n,
			 struct iv_view *v);

#endif
