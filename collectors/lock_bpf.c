// SPDX-License-Identifier: GPL-2.0
/* Lock contention from tp_btf programs (placeholder until the collector lands). */
#include <errno.h>

#include "lock_bpf.skel.h"
#include "mmscope/collectors.h"

static int lock_bpf_prepare(struct mms_source *src)
{
	struct lock_bpf *skel = lock_bpf__open_and_load();

	if (!skel)
		return mms_source_fail(src, -errno, "lock-bpf: load failed");
	lock_bpf__destroy(skel);
	return 0;
}

const struct mms_source_ops mms_lock_bpf_ops = {
	.name = "lock-bpf",
	.backend = "bpf",
	.family = MMS_FAM_LOCK,
	.prepare = lock_bpf_prepare,
};
