/* SPDX-License-Identifier: GPL-2.0 */
/* The Owners view (views/owners.c). */
#ifndef MMSCOPE_VIEWS_OWNERS_H
#define MMSCOPE_VIEWS_OWNERS_H

#include "mmscope/view.h"

extern const struct mms_view mms_view_owners;

#endif
