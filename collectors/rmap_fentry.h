/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by rmap_fentry.bpf.c and rmap_fentry.c: metric indexes (sub = folio order). */
#ifndef MMSCOPE_RMAP_FENTRY_H
#define MMSCOPE_RMAP_FENTRY_H

enum rf_metric {
	RF_BATCH,
	RF_BATCH_ANON,
	RF_BATCH_FILE,
	RF_NR
};

#endif
