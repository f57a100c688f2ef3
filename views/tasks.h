/* SPDX-License-Identifier: GPL-2.0 */
/* The Tasks view (views/tasks.c). */
#ifndef MMSCOPE_VIEWS_TASKS_H
#define MMSCOPE_VIEWS_TASKS_H

#include "mmscope/view.h"

extern const struct mms_view mms_view_tasks;

#endif
