/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the BPF objects that announce short-lived processes' exits
 * (short_exit.bpf.h) and user space (short_procs.c).  System-wide, a process
 * that lived less than an interval gets no rows of its own: its rows are
 * booked to one task per name (MMS_TGID_SHORT), as atop shows exited
 * processes, or a fork+exec loop would write a task and its rows for each of
 * a thousand processes a second.
 */
#ifndef MMSCOPE_SHORT_EXIT_H
#define MMSCOPE_SHORT_EXIT_H

/* The last thread of a process that lived less than the interval exited. */
struct short_exit {
	__u32 tgid;
	char comm[16];		/* the group leader's: the name its rows carry */
};

/* Ring buffer bytes: ~16k exits per interval (24 bytes each with the header). */
#define SHORT_EXIT_RING (256 * 1024)

#endif
