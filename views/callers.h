/* SPDX-License-Identifier: GPL-2.0 */
/* The Callers view (views/callers.c). */
#ifndef MMSCOPE_VIEWS_CALLERS_H
#define MMSCOPE_VIEWS_CALLERS_H

#include "mmscope/view.h"

extern const struct mms_view mms_view_callers;

#endif
