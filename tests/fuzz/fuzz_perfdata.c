// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the perf.data reader (collectors/perfdata*.c).  Any bytes
 * are put in a memfd and read as a capture, as mms_recording_open() does for
 * a file starting with PERFILE2 (the fuzzer is given that prefix by the
 * corpus), and what it makes is opened as a recording and fed into a store.
 * No kernel symbols and no tracefs here: the capture's own formats or
 * nothing.  Built with -Dfuzz=true (clang).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mmscope/collectors.h"
#include "mmscope/recording.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What registry.c gives the collectors, without its BPF sources. */
const struct mms_ksyms *mms_collectors_ksyms(void)
{
	return NULL;
}

const char *mms_tracefs_root(void)
{
	return "/nonexistent";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mms_store_opts so = { .window = 4, .max_rows = 4096 };
	struct mms_rec_import_res res = { 0 };
	struct mms_recording *rec;
	struct mms_store *st;
	char err[512];
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size ||
	    mms_perfdata_import.convert(fd, size, 64ULL << 20, &res, err, sizeof(err))) {
		close(fd);
		return 0;
	}
	close(fd);
	if (!mms_recording_open_mem(res.buf, res.len, &rec, err, sizeof(err))) {
		if (!mms_store_create(&so, &st)) {
			for (uint32_t i = 0; i < mms_recording_count(rec); i++)
				mms_recording_feed(rec, st, i);
			mms_store_destroy(st);
		}
		mms_recording_close(rec);
	}
	free(res.buf);
	return 0;
}
