// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the recording reader.  Any bytes go through open (the
 * block scan, decompression, record checks; checksums are not checked in
 * this build, so that mutations reach what is behind them), then every
 * readable interval is fed into a small store, in order and out of order,
 * and deferred (decoded when read, as after a replay seek).  Built with
 * -Dfuzz=true (clang).
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
	/* As a replay seek fills the window: undecoded until a view reads it. */
	mms_store_reset(st, 0);
	for (uint32_t i = 0; i < n && i < 8; i++)
		mms_recording_feed_deferred(rec, st, i);
	for (uint32_t i = 0; i < mms_store_count(st); i++)
		mms_store_at(st, i);
	mms_store_destroy(st);
	mms_recording_close(rec);
	return 0;
}
