// SPDX-License-Identifier: GPL-2.0
/* The views in tab order: adding one is one line here (and its .c in meson.build). */
#include <stddef.h>

#include "callers.h"
#include "detail.h"
#include "locks.h"
#include "mmap_lock.h"
#include "owners.h"
#include "rmap.h"
#include "tasks.h"
#include "timeline.h"
#include "vma.h"

const struct mms_view *const mms_views[] = {
	&mms_view_locks,
	&mms_view_detail,
	&mms_view_callers,
	&mms_view_tasks,
	&mms_view_mmap_lock,
	&mms_view_vma,
	&mms_view_rmap,
	&mms_view_timeline,
	&mms_view_owners,
	NULL,
};
