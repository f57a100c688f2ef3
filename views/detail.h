/* SPDX-License-Identifier: GPL-2.0 */
/* The Detail view (views/detail.c). */
#ifndef MMSCOPE_VIEWS_DETAIL_H
#define MMSCOPE_VIEWS_DETAIL_H

#include "mmscope/view.h"

extern const struct mms_view mms_view_detail;

#endif
