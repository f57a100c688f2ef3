/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf.data captures, read as recordings (perfdata.c converts, through the
 * same pairing and naming as the live lock-perf source).  This is the file
 * layer (perfdata_file.c): the header, the event attributes, the feature
 * sections mmscope uses (tracing data, host, kernel release, command line,
 * build ids, sample times) and the records of the data section, one at a
 * time.  Nothing is slurped: every size, count and offset is checked
 * against the file before it is read, and memory against a budget.
 */
#ifndef MMSCOPE_PERFDATA_H
#define MMSCOPE_PERFDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PD_MAX_ATTRS 64		/* events in one capture (perf lock record has 2) */
#define PD_MAX_FORMATS 16	/* lock:* event formats kept */
#define PD_MAX_ARGV 64		/* words of the recorded command line */
#define PD_MAX_IDS 65536	/* event ids (one per event and CPU or thread) */

struct pd_attr {
	uint32_t type;
	uint64_t config;	/* the tracepoint id, for PERF_TYPE_TRACEPOINT */
	uint64_t sample_type;
	uint64_t read_format;
	bool sample_id_all;
	uint64_t nr_ids;
};

struct pd_id {
	uint64_t id;
	uint32_t attr;
};

struct pd_format {
	char *text;		/* NUL-terminated */
	size_t len;
	size_t cap;		/* allocated */
};

struct pd_file {
	int fd;
	uint64_t size;		/* of the file */
	uint64_t budget;	/* bytes this reader may allocate */
	uint64_t used;

	uint64_t data_off, data_size;
	uint64_t feat[4];	/* the adds_features bitmap */
	struct pd_attr attrs[PD_MAX_ATTRS];
	uint32_t nr_attrs;
	struct pd_id *ids;	/* sorted by id */
	uint32_t nr_ids;

	/* Features (strings with control characters replaced by '?'). */
	char hostname[72];
	char osrelease[136];
	char version[32];
	char cmdline[1024];	/* NUL-separated words */
	char *argv[PD_MAX_ARGV + 1];
	bool has_sample_time;
	uint64_t first_time, last_time;
	bool has_clock;		/* CLOCK_DATA: sample clock to wall clock */
	uint64_t clock_wall_ns, clock_ref_ns;
	uint8_t kernel_build_id[20];
	uint32_t kernel_build_id_len;	/* 0: none recorded */

	/* Tracing data: the lock system's event formats. */
	bool has_tracing;
	uint8_t long_size;
	uint32_t page_size;
	bool big_endian;
	struct pd_format formats[PD_MAX_FORMATS];
	uint32_t nr_formats;

	/* Records: a window of the data section. */
	uint8_t *rbuf;
	size_t rbuf_cap, rbuf_len, rbuf_pos;
	uint64_t rbuf_off;	/* file offset of rbuf[0] */
	uint64_t records;
	char damage[160];	/* why reading stopped early, "" when it did not */
};

/*
 * Reads and checks the header, the attributes and the features of fd.
 * 0, or -errno with errbuf saying what is wrong (-EINVAL not perf.data or
 * damaged, -ENOTSUP a layout mmscope does not read, -ENOMEM over budget).
 */
int pd_open(struct pd_file *f, int fd, uint64_t size, uint64_t budget, char *errbuf,
	    size_t errlen);
void pd_close(struct pd_file *f);

/*
 * The next record of the data section, valid until the next call: 1, or 0
 * at the end (f->damage says when the rest could not be read).
 */
int pd_next(struct pd_file *f, const uint8_t **rec, uint32_t *type, uint32_t *size,
	    uint16_t *misc);
/* The attribute (index) of an event id, or -1. */
int pd_attr_of(const struct pd_file *f, uint64_t id);
/* Bytes of the data section read so far. */
uint64_t pd_pos(const struct pd_file *f);

/* Allocation against f's budget (NULL when over it); pd_free gives it back. */
void *pd_alloc(struct pd_file *f, size_t n);
void pd_free(struct pd_file *f, void *p, size_t n);

/* The running kernel's GNU build id from /sys/kernel/notes; its length, 0: none. */
uint32_t pd_running_build_id(uint8_t id[20]);

#endif
