// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the recording reader.  Any bytes go through open (the
 * block scan, CRC, decompression, record checks), then every readable
 * interval is fed into a small store, in order and out of order, through the
 * replay source as the TUI drives it.  Built with -Dfuzz=true (clang).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "mmscope/recording.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mms_store_opts so = { .window = 4, .max_rows = 4096 };
	struct mms_recording *rec;
	struct mms_store *st;
	char err[512];
	uint32_t n;

	if (mms_recording_open_mem(data, size, &rec, err, sizeof(err)))
		return 0;
	if (mms_store_create(&so, &st)) {
		mms_recording_close(rec);
		return 0;
	}
	n = mms_recording_count(rec);
	for (uint32_t i = 0; i < n; i++)
		mms_recording_feed(rec, st, i);
	/* Backwards: definitions are replayed from the start again. */
	if (n > 1) {
		mms_recording_feed(rec, st, n / 2);
		mms_recording_feed(rec, st, 0);
		mms_recording_feed(rec, st, n - 1);
	}
	mms_recording_find_time(rec, (uint64_t)size << 20);
	mms_store_destroy(st);
	mms_recording_close(rec);
	return 0;
}
