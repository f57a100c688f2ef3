/* SPDX-License-Identifier: GPL-2.0 */
/* Structs shared by lock_bpf.bpf.c and lock_bpf.c (placeholder). */
#ifndef MMSCOPE_LOCK_BPF_H
#define MMSCOPE_LOCK_BPF_H
#endif
