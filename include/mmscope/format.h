/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Number formatting shared by reports, views and compare, so a wait reads
 * the same everywhere (perf lock contention's units: ns, us, ms, s, m, h).
 */
#ifndef MMSCOPE_FORMAT_H
#define MMSCOPE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* perf's layout: "%*.2f us" right-aligned in width (width 0: no padding). */
int mms_fmt_time(char *buf, size_t len, uint64_t ns, int width);
/* Compact, for narrow columns: "9.5ms", "120us", "3.2s" (at most 6 chars). */
int mms_fmt_time_short(char *buf, size_t len, uint64_t ns);
/* 1234567 -> "1.23M"; below 10000 printed in full. */
int mms_fmt_count(char *buf, size_t len, double v);
/* Bytes: "512B", "1.5KiB", "3.0MiB". */
int mms_fmt_bytes(char *buf, size_t len, uint64_t bytes);

#endif
