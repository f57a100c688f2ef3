/* SPDX-License-Identifier: GPL-2.0 */
/* The Locks view (views/locks.c). */
#ifndef MMSCOPE_VIEWS_LOCKS_H
#define MMSCOPE_VIEWS_LOCKS_H

#include "mmscope/view.h"

extern const struct mms_view mms_view_locks;

#endif
