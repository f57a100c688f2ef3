/* SPDX-License-Identifier: GPL-2.0 */
/* The mmap_lock view (views/mmap_lock.c). */
#ifndef MMSCOPE_VIEWS_MMAP_LOCK_H
#define MMSCOPE_VIEWS_MMAP_LOCK_H

#include "mmscope/view.h"

extern const struct mms_view mms_view_mmap_lock;

#endif
