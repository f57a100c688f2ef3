// SPDX-License-Identifier: GPL-2.0
/*
 * The RUN block of format 1.2 (docs/FORMAT.md): which run of a series a
 * recording is and the benchmark's score, as tag-length-value fields like
 * the header's.  The recorder encodes it just before END; the reader decodes
 * it into mms_rec_info.run.  Older readers skip the block as an unknown type.
 */
#include <math.h>
#include <string.h>

#include "mmscope/recording.h"
#include "mmscope/score.h"
#include "rec_format.h"

static void put_u32(struct rec_buf *b, uint16_t tag, uint32_t v)
{
	uint8_t x[4];

	rec_le32(x, v);
	rec_put_field(b, tag, x, 4);
}

void rec_run_encode(struct rec_buf *b, const struct mms_rec_run *run)
{
	uint32_t flags = 0;
	uint64_t bits;
	uint8_t x[8];

	flags |= run->interrupted ? REC_RF_INTERRUPTED : 0;
	flags |= run->has_score ? REC_RF_SCORE : 0;
	flags |= run->lower_better ? REC_RF_LOWER_BETTER : 0;
	put_u32(b, REC_R_INDEX, run->index);
	put_u32(b, REC_R_COUNT, run->count);
	put_u32(b, REC_R_STATUS, (uint32_t)run->status);
	put_u32(b, REC_R_FLAGS, flags);
	if (run->has_score) {
		memcpy(&bits, &run->score, sizeof(bits));
		rec_le64(x, bits);
		rec_put_field(b, REC_R_SCORE, x, 8);
	}
	put_u32(b, REC_R_MATCHES, run->matches);
	rec_put_field_str(b, REC_R_TEXT, run->text);
	rec_put_field_str(b, REC_R_NAME, run->name);
	rec_put_field_str(b, REC_R_UNIT, run->unit);
	rec_put_field_str(b, REC_R_SOURCE, run->source);
	rec_put_field_str(b, REC_R_ERROR, run->error);
}

/* Text from a file reaches terminals and mails: bounded, one line, no control bytes. */
static void copy_text(char *dst, size_t cap, const uint8_t *p, size_t n)
{
	mms_score_copy_text(dst, cap, (const char *)p, n);
}

bool rec_run_decode(struct mms_rec_run *run, const uint8_t *p, size_t n)
{
	struct rec_cur c = { .p = p, .len = n };
	uint32_t flags = 0;
	bool score = false;

	memset(run, 0, sizeof(*run));
	run->status = -1;
	while (rec_left(&c)) {
		uint16_t tag = rec_get_u16(&c);
		uint32_t len;
		const uint8_t *v;
		uint64_t bits;

		rec_get_u16(&c);
		len = rec_get_u32(&c);
		v = rec_get(&c, len);
		if (c.bad)
			return false;
		switch (tag) {
		case REC_R_INDEX:
		case REC_R_COUNT:
		case REC_R_STATUS:
		case REC_R_FLAGS:
		case REC_R_MATCHES:
			if (len < 4)
				return false;
			*(tag == REC_R_INDEX ? &run->index : tag == REC_R_COUNT ? &run->count :
			  tag == REC_R_FLAGS ? &flags : tag == REC_R_MATCHES ? &run->matches :
			  (uint32_t *)&run->status) = rec_rd32(v);
			break;
		case REC_R_SCORE:
			if (len < 8)
				return false;
			bits = rec_rd64(v);
			memcpy(&run->score, &bits, sizeof(bits));
			score = true;
			break;
		case REC_R_TEXT:
			copy_text(run->text, sizeof(run->text), v, len);
			break;
		case REC_R_NAME:
			copy_text(run->name, sizeof(run->name), v, len);
			break;
		case REC_R_UNIT:
			copy_text(run->unit, sizeof(run->unit), v, len);
			break;
		case REC_R_SOURCE:
			copy_text(run->source, sizeof(run->source), v, len);
			break;
		case REC_R_ERROR:
			copy_text(run->error, sizeof(run->error), v, len);
			break;
		default:
			break;	/* a newer minor version's field */
		}
	}
	/* A hostile index (run 7 of 3) or a NaN score would mislead every table. */
	if ((flags & REC_RF_SCORE) && (!score || !isfinite(run->score)))
		return false;
	if (run->index > run->count)
		return false;
	run->present = true;
	run->interrupted = flags & REC_RF_INTERRUPTED;
	run->has_score = flags & REC_RF_SCORE;
	run->lower_better = flags & REC_RF_LOWER_BETTER;
	return true;
}
