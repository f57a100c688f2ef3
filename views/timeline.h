/* SPDX-License-Identifier: GPL-2.0 */
/* The Timeline view (views/timeline.c). */
#ifndef MMSCOPE_VIEWS_TIMELINE_H
#define MMSCOPE_VIEWS_TIMELINE_H

#include "mmscope/view.h"

extern const struct mms_view mms_view_timeline;

#endif
