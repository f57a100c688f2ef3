/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tracepoint reader for the user-space collectors (vma_tp, rmap_tp,
 * rmap_stock): perf ring buffers on every CPU for a few tracepoints,
 * records parsed with libtraceevent from the tracepoint's own format text,
 * fields found BY NAME, so a tracepoint that gains, loses or moves a field
 * does not break a collector (a missing required field is a clear error).
 *
 * The rings are opened with perf_event_open() directly rather than through
 * libperf: libperf 6.1 hands out no file descriptors, and the session must
 * poll() them.  Filtering by process (and following a launched command's
 * children through sched:sched_process_fork) happens here, before records
 * reach a collector.
 *
 * Lifecycle: create, add (tracefs) or add_format (text), filter, open,
 * enable; fd() to poll, read() when readable; disable; destroy.  Unit tests
 * feed raw payloads through dispatch() without opening anything.
 */
#ifndef MMSCOPE_TP_READER_H
#define MMSCOPE_TP_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mms_options;
struct mms_tp_reader;
struct mms_tp_event;
struct tep_format_field;

struct mms_tp_record {
	const struct mms_tp_event *ev;
	const void *data;	/* raw tracepoint payload, common fields first */
	uint32_t size;
	uint32_t pid;		/* process (tgid) */
	uint32_t tid;
	uint32_t cpu;
	uint64_t time;		/* perf clock, ns */
};

/* Called for every record that passes the filter; non-zero return stops the read. */
typedef int (*mms_tp_handler)(void *ctx, const struct mms_tp_record *rec);

int mms_tp_reader_create(struct mms_tp_reader **out);
void mms_tp_reader_destroy(struct mms_tp_reader *r);

/*
 * Adds sys:name, its format read from tracefs.  -ENOENT when the tracepoint
 * does not exist on this kernel, -EACCES/-EPERM when tracefs cannot be read.
 */
int mms_tp_reader_add(struct mms_tp_reader *r, const char *sys, const char *name,
		      mms_tp_handler fn, void *ctx, struct mms_tp_event **out);
/* The same from format text as tracefs prints it ("name:", "ID:", "format:" ...). */
int mms_tp_reader_add_format(struct mms_tp_reader *r, const char *sys, const char *text,
			     size_t len, mms_tp_handler fn, void *ctx, struct mms_tp_event **out);

const char *mms_tp_event_name(const struct mms_tp_event *ev);
uint32_t mms_tp_event_id(const struct mms_tp_event *ev);
/* A field by name, or NULL when this kernel's tracepoint has no such field. */
struct tep_format_field *mms_tp_field(const struct mms_tp_event *ev, const char *name);
/*
 * Reads a numeric field of a record: 0, -ENOENT (field NULL: absent) or
 * -EINVAL (record too short, or not a number).  Signed fields are sign
 * extended into *val.
 */
int mms_tp_read(const struct mms_tp_record *rec, const struct tep_format_field *f,
		uint64_t *val);
/* mms_tp_read() with a default for absent fields; parse errors count in lost. */
uint64_t mms_tp_get(const struct mms_tp_record *rec, const struct tep_format_field *f,
		    uint64_t dflt);

/*
 * Process filter from the options: -p PID (its threads), --tid (those
 * threads), a launched command (and its children unless --no-inherit,
 * followed through sched:sched_process_fork).  Call before open().
 */
int mms_tp_reader_filter(struct mms_tp_reader *r, const struct mms_options *o);
bool mms_tp_reader_wanted(const struct mms_tp_reader *r, uint32_t pid, uint32_t tid);

/*
 * Hands one raw payload to its event's handler (chosen by common_type), as
 * read() does for every sample.  Returns the handler's result, 0 when the
 * filter dropped it, -ENOENT for an unknown type, -EINVAL when too short.
 */
int mms_tp_reader_dispatch(struct mms_tp_reader *r, const void *raw, uint32_t size,
			   uint32_t pid, uint32_t tid, uint32_t cpu, uint64_t time);

/* Opens every added tracepoint on every online CPU, disabled; pages per CPU ring. */
int mms_tp_reader_open(struct mms_tp_reader *r, unsigned int pages);
int mms_tp_reader_enable(struct mms_tp_reader *r);
int mms_tp_reader_disable(struct mms_tp_reader *r);
/* One descriptor (epoll) that is readable when a ring needs reading. */
int mms_tp_reader_fd(const struct mms_tp_reader *r);
/* Reads every ring empty; returns records dispatched or -errno. */
int mms_tp_reader_read(struct mms_tp_reader *r);

/* Records the kernel dropped (ring full) and records that did not parse, since last asked. */
uint64_t mms_tp_reader_take_lost(struct mms_tp_reader *r);
uint64_t mms_tp_reader_take_parse_errors(struct mms_tp_reader *r);

/*
 * A process's name for the store: from exec/rename records seen, else
 * /proc/PID/comm, else "?".  Valid until the next call.
 */
const char *mms_tp_reader_comm(struct mms_tp_reader *r, uint32_t pid);

#endif
