/* SPDX-License-Identifier: GPL-2.0 */
/* The rmap view (views/rmap.c). */
#ifndef MMSCOPE_VIEWS_RMAP_H
#define MMSCOPE_VIEWS_RMAP_H

#include "mmscope/view.h"

extern const struct mms_view mms_view_rmap;

#endif
