/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User space of short_exit.h: the exits of short-lived processes a source's
 * BPF object announced, kept for two drains (a process's last rows may come
 * in the generation after the one its exit was read with), so that the
 * source can book those processes' rows to their name's group task.
 */
#ifndef MMSCOPE_SHORT_PROCS_H
#define MMSCOPE_SHORT_PROCS_H

#include <linux/types.h>
#include <stdint.h>

#include "short_exit.h"

struct mms_short;

/* Reads the ring buffer ring_fd; NULL (no memory): every process keeps its rows. */
struct mms_short *mms_short_new(int ring_fd);
void mms_short_free(struct mms_short *s);
/*
 * After the source's generation flip: the exits announced up to now become
 * this drain's; each (may be NULL) is called for every one of them.
 * Returns the nanoseconds since the previous flip (0 at the first): the
 * interval just ended, the source's next limit of "short-lived".
 */
uint64_t mms_short_flip(struct mms_short *s, void (*each)(void *ctx, const struct short_exit *e),
			void *ctx);
/* tgid's exit, from this drain or the one before; NULL when it is not short-lived. */
const struct short_exit *mms_short_dead(const struct mms_short *s, uint32_t tgid);

#endif
