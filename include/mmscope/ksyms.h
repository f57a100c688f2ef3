/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel symbols from /proc/kallsyms: address -> "function+0xoff", symbol ->
 * address, and whether an address is inside the lock primitives (the
 * .spinlock/.lock.text and .sched.text sections, as perf decides it) so
 * callers can be named past them.  Collectors use it; views never do, since
 * stacks carry their names into the store and into recordings.
 */
#ifndef MMSCOPE_KSYMS_H
#define MMSCOPE_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mms_ksyms;

struct mms_ksym {
	uint64_t addr;
	const char *name;
	char type;		/* nm-style type letter */
};

/* Loads a kallsyms-format file (path NULL: /proc/kallsyms). */
int mms_ksyms_load(const char *path, struct mms_ksyms **out);
void mms_ksyms_destroy(struct mms_ksyms *ks);
size_t mms_ksyms_count(const struct mms_ksyms *ks);
/* True when addresses are hidden (all zero: kptr_restrict or no privilege). */
bool mms_ksyms_hidden(const struct mms_ksyms *ks);

/* Symbol containing addr (the last one at or below it), or NULL. */
const struct mms_ksym *mms_ksyms_find(const struct mms_ksyms *ks, uint64_t addr);
/* Address of the first symbol above addr (where addr's symbol ends), or 0. */
uint64_t mms_ksyms_next(const struct mms_ksyms *ks, uint64_t addr);
/* Exact name lookup; 0 when absent. */
uint64_t mms_ksyms_addr(const struct mms_ksyms *ks, const char *name);
/*
 * Writes "function+0xoff" (or "function" at offset 0, or "0x<addr>" when
 * unknown) into buf.  Returns the number of characters written.
 */
int mms_ksyms_format(const struct mms_ksyms *ks, uint64_t addr, char *buf, size_t len);
/* Inside a lock primitive or the scheduler, where callers are not. */
bool mms_ksyms_is_lock_func(const struct mms_ksyms *ks, uint64_t addr);
/*
 * An interrupt's entry stub (x86: asm_sysvec_*, asm_common_interrupt,
 * asm_spurious_interrupt): the frames past it are whatever the interrupt
 * happened to interrupt, not callers of the code inside it.
 */
bool mms_ksyms_is_irq_entry(const struct mms_ksyms *ks, uint64_t addr);
/*
 * Names a static lock: the data symbol containing addr ("rcu_state+0x40").
 * Returns the length written, 0 when no data symbol covers it.
 */
int mms_ksyms_data_name(const struct mms_ksyms *ks, uint64_t addr, char *buf, size_t len);
/*
 * Names a static per-CPU variable by its address in the per-CPU section (a
 * CPU's copy less that CPU's per-CPU offset): "cpu_worker_pools+0x318".
 * Returns the length written, 0 when kallsyms has no per-CPU symbol there.
 */
int mms_ksyms_percpu_name(const struct mms_ksyms *ks, uint64_t addr, char *buf, size_t len);

#endif
