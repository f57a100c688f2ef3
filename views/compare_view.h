/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The compare screen (`mmscope compare ... --tui`): one table with both
 * sides next to each other (avg and %stdev of each, change, verdict), the
 * change and verdict coloured by what the test says, and under it the
 * selected row in full: every run's value, min, max, t, df and p.
 *
 * It renders a finished struct mms_compare into a canvas, like the other
 * views render a store, and is a view of the TUI's loop (mms_view_compare;
 * tui/compare_tui.c puts it on the screen): the TUI's key table and prompt
 * drive it.
 */
#ifndef MMSCOPE_VIEWS_COMPARE_VIEW_H
#define MMSCOPE_VIEWS_COMPARE_VIEW_H

#include <stdbool.h>

#include "mmscope/canvas.h"
#include "mmscope/compare.h"
#include "mmscope/view.h"

struct compare_view;

/* c must outlive the view. */
int compare_view_create(const struct mms_compare *c, struct compare_view **out);
void compare_view_destroy(struct compare_view *v);
/*
 * Which rows show: groups (enum mms_cmp_group bits, 0: all) and rows whose
 * name contains filter (case-insensitive; NULL or "": all).  Re-sorts.
 */
int compare_view_update(struct compare_view *v, unsigned int groups, const char *filter);
/* Sorts by the next (dir 1) or previous (-1) column; returns what it sorts by now. */
const char *compare_view_sort_step(struct compare_view *v, int dir);
/* Next group present after cur (0 = all) in direction dir; wraps through all. */
unsigned int compare_view_next_group(const struct compare_view *v, unsigned int cur, int dir);
void compare_view_draw(struct compare_view *v, struct mms_canvas *c, int y, int h);
struct mms_list *compare_view_list(struct compare_view *v);
/* The selected row, NULL when none shows. */
const struct mms_cmp_row *compare_view_selected(const struct compare_view *v);

/*
 * The view class over a struct compare_view: update() applies env->filter to the
 * group shown, Tab (cycle) picks the group, sort_step() is compare_view_sort_step().
 * It has no create(): the TUI makes the instance with compare_view_create().
 */
extern const struct mms_view mms_view_compare;

#endif
