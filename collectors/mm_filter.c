// SPDX-License-Identifier: GPL-2.0
/* User side of the mm BPF sources' task filter (mm_filter.h): mode, fork follower, targets. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <bpf/libbpf.h>

#include "mm_filter.h"
#include "mmscope/options.h"

uint32_t mm_filter_mode(const struct mms_options *o)
{
	if (o->nr_tids)
		return MM_FILTER_TID;
	return o->pid ? MM_FILTER_TGID : MM_FILTER_ALL;
}

void mm_filter_autoload(struct bpf_program *fork_prog, const struct mms_options *o)
{
	/* A launched command is followed into its children; -p PID is that process only. */
	bool follow = mm_filter_mode(o) == MM_FILTER_TGID && o->cmd && !o->no_inherit;

	bpf_program__set_autoload(fork_prog, follow);
}

int mm_filter_fill(struct bpf_map *targets, const struct mms_options *o)
{
	uint8_t one = 1;
	uint32_t id;

	if (o->nr_tids) {
		for (int i = 0; i < o->nr_tids; i++) {
			id = (uint32_t)o->tids[i];
			if (bpf_map__update_elem(targets, &id, sizeof(id), &one, sizeof(one), 0))
				return -errno;
		}
		return 0;
	}
	if (!o->pid)
		return 0;
	id = (uint32_t)o->pid;
	return bpf_map__update_elem(targets, &id, sizeof(id), &one, sizeof(one), 0) ? -errno : 0;
}
