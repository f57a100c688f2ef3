/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The recording format's constants and byte-level helpers, shared by the
 * recorder and the reader (private to core/).  docs/FORMAT.md is the
 * specification; keep the two in step.
 */
#ifndef MMSCOPE_CORE_REC_FORMAT_H
#define MMSCOPE_CORE_REC_FORMAT_H

#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REC_MAGIC "\x89MMSCOPE"
#define REC_MAGIC_LEN 8
#define REC_FILE_HDR 16		/* magic, u16 major, u16 minor, u32 header size */
#define REC_BLOCK_HDR 16	/* u16 type, u16 flags, u32 stored, u32 raw, u32 crc */
/* Largest payload either way: bounds what a damaged or hostile file costs. */
#define REC_MAX_PAYLOAD (32U << 20)
/*
 * What reading one file may cost, whatever its bytes (docs/FORMAT.md,
 * "Limits"): memory (the file's bytes, kept definitions, indexes, buffers),
 * bytes decompressed, rows decoded, each a base plus a multiple of the
 * file's size.  A file under 1 MiB gets at most 68 MiB of memory.
 */
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define REC_MEM_BASE (64ULL << 20)
#define REC_RAW_BASE (256ULL << 20)
#define REC_ROWS_BASE (1ULL << 20)
#else
/* Smaller bases, the same checks: an input costs the fuzzer milliseconds, not seconds. */
#define REC_MEM_BASE (16ULL << 20)
#define REC_RAW_BASE (64ULL << 20)
#define REC_ROWS_BASE (64ULL << 10)
#endif
#define REC_MEM_PER_BYTE 4
#define REC_RAW_PER_BYTE 64
#define REC_ROWS_PER_BYTE 8
#define REC_MAX_STR 4096
#define REC_MAX_STACK 1024
#define REC_MAX_HIST 256
#define REC_MAX_LOST 64

enum rec_block_type {
	REC_B_HEADER = 1,
	REC_B_STRINGS = 2,
	REC_B_STACKS = 3,
	REC_B_TASKS = 4,
	REC_B_LOCKS = 5,
	REC_B_INTERVAL = 6,
	REC_B_END = 7,
	REC_B_RUN = 8,		/* 1.2: the run of a series and its score, before END */
};

enum rec_block_flags {
	REC_BF_ZSTD = 1U << 0,	/* payload is one zstd frame of raw bytes */
	REC_BF_PACKED = 1U << 1,	/* INTERVAL: rows as varint columns (1.1) */
};
#define REC_BF_KNOWN (REC_BF_ZSTD | REC_BF_PACKED)

/* HEADER fields (tag, length, value). */
enum rec_header_tag {
	REC_H_TOOL = 1,
	REC_H_HOST = 2,
	REC_H_KERNEL = 3,
	REC_H_START_NS = 4,
	REC_H_ARGV = 5,
	REC_H_TARGET = 6,
	REC_H_INTERVAL_MS = 7,
	REC_H_FLAGS = 8,
	REC_H_OPTIONS = 9,
	REC_H_FAMILY = 10,
	REC_H_KNOBS = 11,	/* 1.2: "MMSCOPE_X=v" lines of knobs away from their defaults */
};

/* END fields. */
enum rec_end_tag {
	REC_E_INTERVALS = 1,
	REC_E_REASON = 2,
	REC_E_END_NS = 3,
	REC_E_FAILED = 4,	/* 1.2: u32 family, then why its source failed mid-run (one a family) */
};

/* RUN fields (tag, length, value), as HEADER's. */
enum rec_run_tag {
	REC_R_INDEX = 1,	/* u32 */
	REC_R_COUNT = 2,	/* u32 */
	REC_R_STATUS = 3,	/* u32 (two's complement of -1: unknown) */
	REC_R_FLAGS = 4,	/* u32: bit 0 interrupted, 1 has score, 2 lower is better */
	REC_R_SCORE = 5,	/* u64: IEEE 754 binary64 bits */
	REC_R_MATCHES = 6,	/* u32 */
	REC_R_TEXT = 7,
	REC_R_NAME = 8,
	REC_R_UNIT = 9,
	REC_R_SOURCE = 10,
	REC_R_ERROR = 11,
};

enum rec_run_flags {
	REC_RF_INTERRUPTED = 1U << 0,
	REC_RF_SCORE = 1U << 1,
	REC_RF_LOWER_BETTER = 1U << 2,
};

/* Fixed record sizes as this version writes them (readers accept larger). */
#define REC_TASK_SIZE 20	/* id, tid, tgid, comm, cgroup (1.3) */
#define REC_TASK_SIZE_1_2 16	/* id, tid, tgid, comm: what readers accept */
#define REC_LOCK_SIZE 32	/* id, kind, addr, name, detail, owner tgid, owner comm */
#define REC_STAT_FIXED 32	/* count, total, min, max */
#define REC_LOCK_KEY 24		/* lock, stack, task, flags, owner, owner stack (1.4) */
#define REC_LOCK_KEY_1_3 16	/* lock, stack, task, flags: files of minor 0 to 3 */
#define REC_LOCK_KEY_MINOR 4	/* the first minor whose lock rows have REC_LOCK_KEY */
#define REC_METRIC_KEY 12	/* proc, metric, sub */

/* Growable output buffer; oom sticks so callers check once at the end. */
struct rec_buf {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

void rec_buf_free(struct rec_buf *b);
/* Makes room for n more bytes; returns the write position or NULL. */
uint8_t *rec_buf_reserve(struct rec_buf *b, size_t n);
void rec_put(struct rec_buf *b, const void *p, size_t n);
void rec_put_u16(struct rec_buf *b, uint16_t v);
void rec_put_u32(struct rec_buf *b, uint32_t v);
void rec_put_u64(struct rec_buf *b, uint64_t v);
/* LEB128: 7 bits a byte, low first, at most 10 bytes. */
void rec_put_varint(struct rec_buf *b, uint64_t v);
/* A tag-length-value field. */
void rec_put_field(struct rec_buf *b, uint16_t tag, const void *p, size_t n);
void rec_put_field_str(struct rec_buf *b, uint16_t tag, const char *s);

/* Bounds-checked input cursor; bad sticks and reads give 0. */
struct rec_cur {
	const uint8_t *p;
	size_t len, off;
	bool bad;
};

const uint8_t *rec_get(struct rec_cur *c, size_t n);
uint16_t rec_get_u16(struct rec_cur *c);
uint32_t rec_get_u32(struct rec_cur *c);
uint64_t rec_get_u64(struct rec_cur *c);
/* Truncated or longer than 10 bytes: bad. */
uint64_t rec_get_varint(struct rec_cur *c);
static inline size_t rec_left(const struct rec_cur *c)
{
	return c->bad ? 0 : c->len - c->off;
}

/*
 * Little-endian fields at any alignment.  One access each through these
 * types, not one per byte: the sanitizer build checks one access instead of
 * four or eight, which is most of what reading a large recording costs there.
 */
typedef uint16_t __attribute__((aligned(1), may_alias)) rec_u16_any;
typedef uint32_t __attribute__((aligned(1), may_alias)) rec_u32_any;
typedef uint64_t __attribute__((aligned(1), may_alias)) rec_u64_any;

static inline void rec_le16(uint8_t *p, uint16_t v)
{
	*(rec_u16_any *)p = htole16(v);
}

static inline void rec_le32(uint8_t *p, uint32_t v)
{
	*(rec_u32_any *)p = htole32(v);
}

static inline void rec_le64(uint8_t *p, uint64_t v)
{
	*(rec_u64_any *)p = htole64(v);
}

static inline uint16_t rec_rd16(const uint8_t *p)
{
	return le16toh(*(const rec_u16_any *)p);
}

static inline uint32_t rec_rd32(const uint8_t *p)
{
	return le32toh(*(const rec_u32_any *)p);
}

static inline uint64_t rec_rd64(const uint8_t *p)
{
	return le64toh(*(const rec_u64_any *)p);
}

/* CRC-32 (zlib's) over the first 12 bytes of a block header, then the payload. */
uint32_t rec_crc(const uint8_t *hdr, const uint8_t *payload, size_t n);

struct mms_rec_run;
/* The RUN payload (core/rec_run.c). */
void rec_run_encode(struct rec_buf *b, const struct mms_rec_run *run);
/* false: malformed (a field does not fit, or the score is not a finite number). */
bool rec_run_decode(struct mms_rec_run *run, const uint8_t *p, size_t n);

#endif
