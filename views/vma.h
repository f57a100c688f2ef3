/* SPDX-License-Identifier: GPL-2.0 */
/* The VMA view (views/vma.c). */
#ifndef MMSCOPE_VIEWS_VMA_H
#define MMSCOPE_VIEWS_VMA_H

#include "mmscope/view.h"

extern const struct mms_view mms_view_vma;

#endif
