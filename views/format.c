// SPDX-License-Identifier: GPL-2.0
/* Number formatting (see include/mmscope/format.h). */
#include <stdio.h>

#include "mmscope/format.h"

int mms_fmt_time(char *buf, size_t len, uint64_t ns, int width)
{
	static const struct {
		double base;
		const char *unit;
	} table[] = {
		{ 1e9 * 3600, "h " }, { 1e9 * 60, "m " }, { 1e9, "s " }, { 1e6, "ms" }, { 1e3, "us" },
	};
	int w = width > 3 ? width - 3 : 0;

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if ((double)ns >= table[i].base)
			return snprintf(buf, len, "%*.2f %s", w, (double)ns / table[i].base,
					table[i].unit);
	return snprintf(buf, len, "%*llu %s", w, (unsigned long long)ns, "ns");
}

int mms_fmt_time_short(char *buf, size_t len, uint64_t ns)
{
	static const struct {
		double base;
		const char *unit;
	} table[] = {
		{ 1e9 * 3600, "h" }, { 1e9 * 60, "m" }, { 1e9, "s" }, { 1e6, "ms" }, { 1e3, "us" },
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		double v = (double)ns / table[i].base;

		if ((double)ns < table[i].base)
			continue;
		return snprintf(buf, len, v < 10 ? "%.1f%s" : "%.0f%s", v, table[i].unit);
	}
	return snprintf(buf, len, "%lluns", (unsigned long long)ns);
}

int mms_fmt_count(char *buf, size_t len, double v)
{
	if (v < 10000)
		return snprintf(buf, len, v == (double)(long long)v ? "%.0f" : "%.1f", v);
	if (v < 1e6)
		return snprintf(buf, len, "%.1fk", v / 1e3);
	if (v < 1e9)
		return snprintf(buf, len, "%.2fM", v / 1e6);
	return snprintf(buf, len, "%.2fG", v / 1e9);
}

int mms_fmt_bytes(char *buf, size_t len, uint64_t bytes)
{
	if (bytes < 1024)
		return snprintf(buf, len, "%lluB", (unsigned long long)bytes);
	if (bytes < (1ULL << 20))
		return snprintf(buf, len, "%.1fKiB", (double)bytes / 1024);
	if (bytes < (1ULL << 30))
		return snprintf(buf, len, "%.1fMiB", (double)bytes / (1 << 20));
	return snprintf(buf, len, "%.2fGiB", (double)bytes / (1 << 30));
}
