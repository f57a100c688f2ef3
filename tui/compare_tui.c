// SPDX-License-Identifier: GPL-2.0
/*
 * The compare screen (cfg->cmp, `mmscope compare --tui`) in the TUI's loop:
 * its one view (views/compare_view.c), the title line that stands where a
 * session's header would, and the words of its status line and help.  The
 * loop, the keys and the filter prompt are the TUI's own (tui.c, actions.c).
 */
#include <stdio.h>

#include "../views/compare_view.h"
#include "tui_int.h"

const char *const tui_compare_hints[] = {
	"F1", "Help", "Tab", "Group", "/", "Filter", "s", "Sort", "I", "Invert", "q", "Quit", NULL,
};

const char *const tui_compare_notes[] = {
	"Sorting by CHANGE puts the biggest change first, by VERDICT the significant rows first.",
	"Mouse: click a row, or a column title to sort (again: invert); the wheel scrolls.",
	"",
	"Colours: green = a wait significantly lower, red = significantly higher,",
	"yellow = a significant change that is neither better nor worse (rates,",
	"batch sizes), dim = within noise.  Verdicts come from Welch's t-test over",
	"the runs of each side, significant at p < alpha (in the title).",
	NULL,
};

int tui_compare_open(struct tui *t, char *errbuf, size_t errlen)
{
	struct compare_view *v;
	int err = compare_view_create(t->cfg->cmp, &v);

	if (err) {
		snprintf(errbuf, errlen, "out of memory for the compare view");
		return err;
	}
	t->views[0] = &mms_view_compare;
	t->priv[0] = v;
	t->nr_views = 1;
	return 0;
}

int tui_compare_title(struct tui *t, struct mms_canvas *c, int y)
{
	const struct mms_compare *cmp = t->cfg->cmp;
	char title[256];

	snprintf(title, sizeof(title), " mmscope compare   %s: %d run%s   %s: %d run%s   "
		 "Welch's t-test, p < %.2f", cmp->label[0], cmp->runs[0],
		 cmp->runs[0] == 1 ? "" : "s", cmp->label[1], cmp->runs[1],
		 cmp->runs[1] == 1 ? "" : "s", cmp->alpha);
	mms_canvas_fill(c, 0, y, c->w, ' ', MMS_ROLE_TITLE);
	mms_canvas_put(c, 0, y, MMS_ROLE_TITLE, title, c->w);
	return 1;
}
