// SPDX-License-Identifier: GPL-2.0
/* Defaults for struct mms_options. */
#include <string.h>

#include "mmscope/options.h"

void mms_options_init(struct mms_options *o)
{
	memset(o, 0, sizeof(*o));
	o->interval_ms = 1000;
	o->max_stack = 8;
	o->map_entries = 16384;
	o->stack_entries = 8192;
	o->task_entries = 16384;
	o->window = 600;
}
