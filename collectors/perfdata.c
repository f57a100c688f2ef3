// SPDX-License-Identifier: GPL-2.0
/*
 * A `perf lock record` capture read as a recording: the reader core/ calls
 * for a file that starts with PERFILE2 (mms_perfdata_import, registered by
 * mms_collectors_init()).  The capture's lock:contention_begin/end samples
 * go through the live lock-perf source's own user-space half (lock_perf_agg:
 * time order, per-thread pairing, aggregation; lock_common: stacks past the
 * lock primitives, names), one interval of the recorder per second of
 * capture, written to a memfd by the recorder and read back: so report,
 * replay, info and compare see one more recording.
 *
 * What a capture cannot give is said in the recording's sources: no mm
 * sources, and kernel addresses stay unnamed unless the capture's kernel
 * is the running one (same release, same build id, same text address).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <traceevent/event-parse.h>

#include "lock_common.h"
#include "lock_perf.h"
#include "perfdata.h"
#include "mmscope/escape.h"
#include "mmscope/collectors.h"
#include "mmscope/ksyms.h"
#include "mmscope/recording.h"

#define PD_IV_NS 1000000000ULL		/* interval, unless the capture is long */
#define PD_MAX_IVS 20000		/* intervals at most: a long capture gets longer ones */
#define PD_POOL (1U << 18)		/* records waiting for their round to end */
#define PD_OUT_MAX (64ULL << 20)	/* the recording made of it */

struct pd_sample {
	uint32_t pid, tid, cpu;
	uint64_t time;
	const uint64_t *chain;
	uint64_t nr;
	const uint8_t *raw;
	uint32_t raw_size;
};

struct pd_conv {
	struct pd_file f;
	bool uniform;		/* one sample layout for all events: no ids needed */
	uint32_t trailer[PD_MAX_ATTRS];	/* bytes of sample_id at the end of other records */

	struct tep_handle *tep;
	int begin_id, end_id;
	struct tep_format_field *f_type, *f_begin_addr, *f_flags, *f_end_addr;

	struct mms_options opts;
	const struct mms_ksyms *ks;	/* NULL: addresses stay unnamed */
	char sym_why[200];
	char fmt_note[64];	/* where the event formats came from, when not the capture */
	uint64_t traceiter;
	struct mms_lock_common *lc;
	struct lp_engine *eng;
	struct mms_store *st;
	struct mms_recorder *rec;
	int memfd;

	uint32_t max_stack;
	uint64_t ips[MMS_MAX_STACK * 2 + MMS_LOCK_FRAMES];

	bool have_t0;
	uint64_t t0, iv_ns, iv_end, last_time;
	uint32_t ivs;
	uint64_t round_max, prev_round_max;
	uint64_t mtime_ns;
	char stop[256];		/* why reading stopped early, "" when it did not */
};

static bool perfdata_match(const uint8_t *head, size_t n)
{
	return n >= 8 && !memcmp(head, "PERFILE2", 8);
}

/* Realtime of a sample time: the capture's clock data, else its file's mtime at the end. */
static uint64_t realtime(const struct pd_conv *c, uint64_t t)
{
	const struct pd_file *f = &c->f;

	if (f->has_clock)
		return f->clock_wall_ns + t - f->clock_ref_ns;
	if (f->has_sample_time && t <= f->last_time && f->last_time - t <= c->mtime_ns)
		return c->mtime_ns - (f->last_time - t);
	return c->mtime_ns;
}

/* ---- Event formats ---- */

static int find_field(struct tep_event *ev, const char *name, struct tep_format_field **out,
		      char *errbuf, size_t errlen)
{
	*out = tep_find_any_field(ev, name);
	if (*out && (*out)->size >= 1 && (*out)->size <= 8 && (*out)->offset >= 0)
		return 0;
	snprintf(errbuf, errlen, "its lock:%s format has no usable '%s' field", ev->name, name);
	return -EINVAL;
}

/*
 * perf writes the event formats last: a capture cut short (perf killed, a
 * full disk, a partial copy) has none.  This machine's formats stand in
 * when its tracepoint ids are the ones the capture's events name.
 */
static bool local_formats(struct pd_conv *c)
{
	static const char *const names[] = { "contention_begin", "contention_end" };

	for (int i = 0; i < 2 && c->f.nr_formats < PD_MAX_FORMATS; i++) {
		struct pd_format *fm = &c->f.formats[c->f.nr_formats];
		char path[512];
		FILE *fp;

		snprintf(path, sizeof(path), "%s/events/lock/%s/format", mms_tracefs_root(),
			 names[i]);
		fp = fopen(path, "re");
		if (!fp)
			return false;
		fm->cap = 65536;
		fm->text = pd_alloc(&c->f, fm->cap);
		fm->len = fm->text ? fread(fm->text, 1, fm->cap - 1, fp) : 0;
		fclose(fp);
		if (!fm->text)
			return false;
		fm->text[fm->len] = '\0';
		c->f.nr_formats++;
	}
	c->f.long_size = sizeof(long);
	c->f.page_size = (uint32_t)sysconf(_SC_PAGESIZE);
	return true;
}

static bool attr_has(const struct pd_conv *c, int id)
{
	for (uint32_t i = 0; i < c->f.nr_attrs; i++)
		if (c->f.attrs[i].type == PERF_TYPE_TRACEPOINT && c->f.attrs[i].config == (uint64_t)id)
			return true;
	return false;
}

/*
 * The format without its print format, which mmscope never prints and which
 * libtraceevent 1.7 cannot parse safely when it is damaged (a field name it
 * does not know: NULL dereference, found by fuzz_perfdata).  Its length.
 */
static size_t fields_only(struct pd_format *fm)
{
	static const char stub[] = "\nprint fmt: \"\"\n";
	const char *p = memmem(fm->text, fm->len, "\nprint fmt:", 11);
	size_t cut = p ? (size_t)(p - fm->text) : fm->len;

	if (cut + sizeof(stub) <= fm->cap) {
		memcpy(fm->text + cut, stub, sizeof(stub));
		fm->len = cut + sizeof(stub) - 1;
	} else {
		fm->text[cut] = '\0';	/* no room for the stub: no print format at all */
		fm->len = cut;
	}
	return fm->len;
}

static int load_formats(struct pd_conv *c, char *errbuf, size_t errlen)
{
	struct tep_event *begin = NULL, *end = NULL;
	bool local = false;
	int err;

	if (!c->f.nr_formats) {
		local = local_formats(c);
		if (!local) {
			snprintf(errbuf, errlen, "it holds no lock tracepoint formats (%s) and this "
				 "machine's cannot be read instead: record it with perf lock record, "
				 "or read it as root on the machine that recorded it",
				 c->f.damage[0] ? "the capture was cut short" : "no tracing data");
			return -EINVAL;
		}
	}
	tep_set_loglevel(TEP_LOG_NONE);
	c->tep = tep_alloc();
	if (!c->tep) {
		snprintf(errbuf, errlen, "out of memory");
		return -ENOMEM;
	}
	tep_set_long_size(c->tep, c->f.long_size ? c->f.long_size : 8);
	tep_set_page_size(c->tep, (int)(c->f.page_size ? c->f.page_size : 4096));
	for (uint32_t i = 0; i < c->f.nr_formats; i++) {
		struct tep_event *ev = NULL;
		size_t len = fields_only(&c->f.formats[i]);

		if (tep_parse_format(c->tep, &ev, c->f.formats[i].text, len, "lock") !=
		    TEP_ERRNO__SUCCESS || !ev)
			continue;
		if (!strcmp(ev->name, "contention_begin"))
			begin = ev;
		else if (!strcmp(ev->name, "contention_end"))
			end = ev;
	}
	if (!begin || !end) {
		snprintf(errbuf, errlen, "it has no lock:contention_begin and contention_end "
			 "events: record it with perf lock record (Linux 5.19 or later)");
		return -EINVAL;
	}
	err = find_field(begin, "common_type", &c->f_type, errbuf, errlen);
	if (!err)
		err = find_field(begin, "lock_addr", &c->f_begin_addr, errbuf, errlen);
	if (!err)
		err = find_field(begin, "flags", &c->f_flags, errbuf, errlen);
	if (!err)
		err = find_field(end, "lock_addr", &c->f_end_addr, errbuf, errlen);
	c->begin_id = begin->id;
	c->end_id = end->id;
	if (!err && local && (!attr_has(c, c->begin_id) || !attr_has(c, c->end_id))) {
		snprintf(errbuf, errlen, "its event formats are missing (%s), and this machine's "
			 "tracepoint ids are not the ones its events name: read it on the machine "
			 "that recorded it", c->f.damage[0] ? "the capture was cut short" :
			 "no tracing data");
		return -EINVAL;
	}
	if (local)
		snprintf(c->fmt_note, sizeof(c->fmt_note), "; event formats of this machine "
			 "(the capture's were cut off)");
	return err;
}

/*
 * The sample layouts: one for all events (samples told apart by their
 * tracepoint id), or, as perf writes with -a (a dummy event for the side
 * band), several, each record then carrying its event id (IDENTIFIER).
 */
static int check_attrs(struct pd_conv *c, char *errbuf, size_t errlen)
{
	const uint64_t known = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW |
			       PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_ADDR |
			       PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
			       PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	const uint64_t id_bits[] = { PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID,
				     PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU,
				     PERF_SAMPLE_IDENTIFIER };
	bool ident = true;

	c->uniform = true;
	for (uint32_t i = 0; i < c->f.nr_attrs; i++) {
		const struct pd_attr *a = &c->f.attrs[i];

		if (a->sample_type & ~known) {
			snprintf(errbuf, errlen, "its samples carry fields mmscope does not read "
				 "(sample_type %#llx): record it with perf lock record",
				 (unsigned long long)a->sample_type);
			return -ENOTSUP;
		}
		if (a->sample_type != c->f.attrs[0].sample_type ||
		    a->sample_id_all != c->f.attrs[0].sample_id_all)
			c->uniform = false;
		ident &= !!(a->sample_type & PERF_SAMPLE_IDENTIFIER);
		for (size_t b = 0; a->sample_id_all && b < sizeof(id_bits) / sizeof(id_bits[0]); b++)
			c->trailer[i] += a->sample_type & id_bits[b] ? 8 : 0;
	}
	if (!c->uniform && !ident) {
		snprintf(errbuf, errlen, "its events have different sample layouts and no "
			 "identifier, which perf lock record does not write");
		return -ENOTSUP;
	}
	return 0;
}

/* The attribute a record belongs to: its id first (samples) or last (others). */
static const struct pd_attr *attr_of(const struct pd_conv *c, const uint8_t *p, uint32_t size,
				     bool sample, uint32_t *idx)
{
	uint64_t id;
	int i;

	if (c->uniform) {
		*idx = 0;
		return &c->f.attrs[0];
	}
	if (size < 16)
		return NULL;
	memcpy(&id, sample ? p + 8 : p + size - 8, 8);
	i = pd_attr_of(&c->f, id);
	/* perf's own synthesized records (id 0) have the first event's layout */
	if (i < 0 && !sample)
		i = 0;
	if (i < 0)
		return NULL;
	*idx = (uint32_t)i;
	return &c->f.attrs[i];
}

/* ---- Symbols ---- */

static void hex_id(char *buf, size_t len, const uint8_t *id, uint32_t n)
{
	size_t o = 0;

	for (uint32_t i = 0; i < n && o + 3 <= len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%02x", id[i]);
	if (!n && len)
		buf[0] = '\0';
}

/* The kernel text address the capture saw, from its kernel mmap record; 0: none. */
static uint64_t capture_text(struct pd_conv *c)
{
	uint8_t *buf = malloc(65536);
	uint64_t off = c->f.data_off, end = off + (c->f.data_size < 65536 ? c->f.data_size : 65536);
	uint64_t text = 0;

	if (!buf || pread(c->f.fd, buf, end - off, (off_t)off) != (ssize_t)(end - off)) {
		free(buf);
		return 0;
	}
	for (uint64_t p = 0; p + 8 <= end - off;) {
		struct perf_event_header h;

		memcpy(&h, buf + p, sizeof(h));
		if (h.size < 8 || h.size > end - off - p)
			break;
		/* mmap: header, pid, tid, start, len, pgoff (_text), filename */
		if (h.type == PERF_RECORD_MMAP && h.size >= 40 + 18 &&
		    (h.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL &&
		    !memcmp(buf + p + 40, "[kernel.kallsyms]", 17)) {
			memcpy(&text, buf + p + 32, 8);
			break;
		}
		p += h.size;
	}
	free(buf);
	return text;
}

/* Names with this machine's kallsyms only when they are the capture's kernel's. */
static void choose_symbols(struct pd_conv *c)
{
	const struct mms_ksyms *ks = mms_collectors_ksyms();
	char a[48], b[48];
	uint8_t id[20];
	uint32_t n;
	struct utsname u;
	uint64_t text, now_text;

	c->ks = NULL;
	if (uname(&u) || strcmp(u.release, c->f.osrelease)) {
		snprintf(c->sym_why, sizeof(c->sym_why), "kernel addresses unnamed: recorded on "
			 "Linux %.40s, this machine runs %.40s", c->f.osrelease[0] ?
			 c->f.osrelease : "(unknown)", u.release);
		return;
	}
	n = pd_running_build_id(id);
	if (c->f.kernel_build_id_len && n &&
	    (n != c->f.kernel_build_id_len || memcmp(id, c->f.kernel_build_id, n))) {
		hex_id(a, sizeof(a), c->f.kernel_build_id, c->f.kernel_build_id_len);
		hex_id(b, sizeof(b), id, n);
		snprintf(c->sym_why, sizeof(c->sym_why), "kernel addresses unnamed: the capture's "
			 "kernel build id %.12s... is not this kernel's %.12s...", a, b);
		return;
	}
	if (!ks || mms_ksyms_hidden(ks)) {
		snprintf(c->sym_why, sizeof(c->sym_why), "kernel addresses unnamed: /proc/kallsyms "
			 "hides them from this user (run as root to name them)");
		return;
	}
	text = capture_text(c);
	now_text = mms_ksyms_addr(ks, "_text");
	if (text && now_text && text != now_text) {
		snprintf(c->sym_why, sizeof(c->sym_why), "kernel addresses unnamed: recorded in "
			 "another boot (kernel text at %#llx, now at %#llx)",
			 (unsigned long long)text, (unsigned long long)now_text);
		return;
	}
	c->ks = ks;
	c->traceiter = mms_ksyms_addr(ks, "__traceiter_contention_begin");
	snprintf(c->sym_why, sizeof(c->sym_why), "named with this machine's kallsyms (the "
		 "same kernel%s)", c->f.kernel_build_id_len && n ? ", build id checked" : "");
}

/* ---- Records ---- */

/* Fields of a sample in sample_type order (perf_output_sample()). */
static bool parse_sample(const struct pd_attr *a, const uint8_t *p, uint32_t size,
			 struct pd_sample *s)
{
	const uint8_t *q = p + 8, *end = p + size;
	uint64_t t = a->sample_type;
	const uint64_t need = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;

	memset(s, 0, sizeof(*s));
	if ((t & need) != need || a->type != PERF_TYPE_TRACEPOINT)
		return false;
#define TAKE(n) do { if ((size_t)(end - q) < (n)) return false; q += (n); } while (0)
	if (t & PERF_SAMPLE_IDENTIFIER)
		TAKE(8);
	if (t & PERF_SAMPLE_IP)
		TAKE(8);
	TAKE(8);	/* TID */
	memcpy(&s->pid, q - 8, 4);
	memcpy(&s->tid, q - 4, 4);
	TAKE(8);	/* TIME */
	memcpy(&s->time, q - 8, 8);
	if (t & PERF_SAMPLE_ADDR)
		TAKE(8);
	if (t & PERF_SAMPLE_ID)
		TAKE(8);
	if (t & PERF_SAMPLE_STREAM_ID)
		TAKE(8);
	if (t & PERF_SAMPLE_CPU) {
		TAKE(8);
		memcpy(&s->cpu, q - 8, 4);
	}
	if (t & PERF_SAMPLE_PERIOD)
		TAKE(8);
	if (t & PERF_SAMPLE_CALLCHAIN) {
		TAKE(8);
		memcpy(&s->nr, q - 8, 8);
		if (s->nr > (uint64_t)(end - q) / 8)
			return false;
		s->chain = (const uint64_t *)q;
		q += s->nr * 8;
	}
	TAKE(4);	/* RAW */
	memcpy(&s->raw_size, q - 4, 4);
	if (s->raw_size > (size_t)(end - q))
		return false;
	s->raw = q;
#undef TAKE
	return true;
}

static void on_sample(struct pd_conv *c, const uint8_t *p, uint32_t size, struct lp_event *ev)
{
	const struct pd_attr *a;
	struct pd_sample s;
	uint64_t type, val;
	uint32_t idx, n;

	a = attr_of(c, p, size, true, &idx);
	if (!a || !parse_sample(a, p, size, &s) || !lp_field_u64(c->f_type, s.raw, s.raw_size, &type))
		goto bad;
	ev->pid = s.pid;
	ev->tid = s.tid;
	ev->time = s.time;
	ev->cpu = (uint16_t)s.cpu;
	if (type == (uint64_t)c->begin_id) {
		if (!lp_field_u64(c->f_begin_addr, s.raw, s.raw_size, &ev->lock.addr) ||
		    !lp_field_u64(c->f_flags, s.raw, s.raw_size, &val))
			goto bad;
		ev->kind = LP_BEGIN;
		ev->lock.flags = (uint32_t)val;
		ev->lock.cgroup = 0;	/* perf lock record keeps no cgroup */
		n = lp_kernel_stack(c->ips, c->max_stack, s.chain, s.nr, c->ks, c->traceiter);
		ev->lock.stack = lp_engine_stack(c->eng, c->ips, n);
	} else if (type == (uint64_t)c->end_id) {
		if (!lp_field_u64(c->f_end_addr, s.raw, s.raw_size, &ev->lock.addr))
			goto bad;
		ev->kind = LP_END;
	} else {
		return;		/* another event recorded beside them */
	}
	if (!c->have_t0) {
		c->have_t0 = true;
		c->t0 = s.time;
		c->iv_end = c->t0 + c->iv_ns;
	}
	if (s.time > c->round_max)
		c->round_max = s.time;
	lp_engine_push(c->eng);
	return;
bad:
	lp_engine_lost(c->eng, MMS_LOST_PARSE, 1);
}

/* COMM, FORK, EXIT: their sample_id trailer has the time and CPU. */
static void on_side(struct pd_conv *c, const uint8_t *p, uint32_t size, uint32_t type,
		    struct lp_event *ev)
{
	uint32_t body = type == PERF_RECORD_COMM ? 16 : 32, idx, trailer;
	const struct pd_attr *a = attr_of(c, p, size, false, &idx);
	const uint8_t *id;
	uint64_t st;

	if (!a)
		goto bad;
	st = a->sample_type;
	trailer = c->trailer[idx];
	if (size < body + trailer + (type == PERF_RECORD_COMM ? 8 : 0))
		goto bad;
	id = p + size - trailer;
	memcpy(&ev->pid, p + 8, 4);
	if (type == PERF_RECORD_COMM) {
		ev->kind = LP_COMM;
		memcpy(&ev->tid, p + 12, 4);
		memset(ev->comm, 0, LP_COMM_LEN);
		/* bounded by the record, control characters replaced */
		if (16 < size - trailer)
			mms_copy_clean(ev->comm, LP_COMM_LEN, (const char *)p + 16,
				       size - trailer - 16);
	} else {
		ev->kind = type == PERF_RECORD_FORK ? LP_FORK : LP_EXIT;
		memcpy(&ev->fork.ppid, p + 12, 4);
		memcpy(&ev->tid, p + 16, 4);
		memcpy(&ev->fork.ptid, p + 20, 4);
		memcpy(&ev->time, p + 24, 8);
	}
	if (trailer && (st & PERF_SAMPLE_TIME)) {
		/* TID, then TIME, ID, STREAM_ID, CPU as the sample type has them */
		id += st & PERF_SAMPLE_TID ? 8 : 0;
		memcpy(&ev->time, id, 8);
		id += 8 + (st & PERF_SAMPLE_ID ? 8 : 0) + (st & PERF_SAMPLE_STREAM_ID ? 8 : 0);
		ev->cpu = 0;
		if (st & PERF_SAMPLE_CPU)
			memcpy(&ev->cpu, id, 2);
	} else if (type == PERF_RECORD_COMM) {
		ev->time = 0;	/* no time: a name learnt before everything */
	}
	lp_engine_push(c->eng);
	return;
bad:
	lp_engine_lost(c->eng, MMS_LOST_PARSE, 1);
}

/* ---- Intervals ---- */

static int commit_interval(struct pd_conv *c, uint64_t start, uint64_t dur)
{
	const struct mms_interval *iv;
	int err;

	if (!mms_store_begin(c->st, realtime(c, start)))
		return -ENOMEM;
	err = lp_engine_flush(c->eng, c->st);
	if (!err)
		err = mms_store_commit(c->st, dur, 0);
	else
		mms_store_abort(c->st);
	iv = err ? NULL : mms_store_latest(c->st);
	if (iv)
		err = mms_recorder_write(c->rec, c->st, iv);
	if (!err && mms_recorder_bytes(c->rec) > PD_OUT_MAX)
		err = -EFBIG;
	c->ivs++;
	return err;
}

/*
 * Processes what is known complete (time <= horizon), one interval at a
 * time: an interval is committed once the horizon has passed its end.
 */
static int advance(struct pd_conv *c, uint64_t horizon)
{
	int err;

	if (!c->have_t0) {
		lp_engine_process(c->eng, horizon);
		return 0;
	}
	while (horizon >= c->iv_end) {
		if (c->ivs >= PD_MAX_IVS)
			return -E2BIG;
		lp_engine_process(c->eng, c->iv_end - 1);
		err = commit_interval(c, c->iv_end - c->iv_ns, c->iv_ns);
		if (err)
			return err;
		c->iv_end += c->iv_ns;
	}
	lp_engine_process(c->eng, horizon);
	return 0;
}

static int read_records(struct pd_conv *c)
{
	const uint8_t *p;
	uint32_t type, size;
	uint16_t misc;
	int err = 0;

	while (!err && pd_next(&c->f, &p, &type, &size, &misc) == 1) {
		struct lp_event *ev = lp_engine_slot(c->eng);

		if (!ev) {
			/* Rounds longer than the pool: what came first goes first. */
			err = advance(c, c->prev_round_max);
			if (!err && !(ev = lp_engine_slot(c->eng)))
				err = advance(c, c->round_max);
			/* Left: side band from past the last sample, which no wait needs. */
			if (!err && !(ev = lp_engine_slot(c->eng))) {
				lp_engine_process(c->eng, UINT64_MAX);
				ev = lp_engine_slot(c->eng);
			}
			if (err || !ev)
				break;
		}
		switch (type) {
		case PERF_RECORD_SAMPLE:
			on_sample(c, p, size, ev);
			break;
		case PERF_RECORD_COMM:
		case PERF_RECORD_FORK:
		case PERF_RECORD_EXIT:
			on_side(c, p, size, type, ev);
			break;
		case PERF_RECORD_LOST:
			if (size >= 24) {
				uint64_t n;

				memcpy(&n, p + 16, 8);
				lp_engine_lost(c->eng, MMS_LOST_RING, n);
			}
			break;
		case PERF_RECORD_LOST_SAMPLES:
			if (size >= 16) {
				uint64_t n;

				memcpy(&n, p + 8, 8);
				lp_engine_lost(c->eng, MMS_LOST_RING, n);
			}
			break;
		case 68:	/* PERF_RECORD_FINISHED_ROUND: what came before the last one is complete */
			err = advance(c, c->prev_round_max);
			c->prev_round_max = c->round_max;
			break;
		case 81:	/* PERF_RECORD_COMPRESSED */
			snprintf(c->stop, sizeof(c->stop), "the capture is compressed (perf "
				 "record -z), which mmscope does not read: record without -z");
			return -ENOTSUP;
		default:
			break;	/* mmaps, throttling, perf's own bookkeeping */
		}
	}
	if (!err)
		err = advance(c, c->round_max);
	/* The last interval, as long as the capture went on into it. */
	if (!err && c->have_t0) {
		lp_engine_process(c->eng, UINT64_MAX);
		err = commit_interval(c, c->iv_end - c->iv_ns,
				      c->round_max + 1 - (c->iv_end - c->iv_ns));
	}
	return err;
}

/* ---- The recording ---- */

static int start_recording(struct pd_conv *c, char *errbuf, size_t errlen)
{
	static const char no_mm[] = "not in a perf lock record capture: record with mmscope "
				    "for mmap_lock, VMA and rmap sources";
	struct mms_rec_meta m = { 0 };
	struct mms_store_opts so = { .window = 2 };
	char lock_why[400], target[128];
	int fd, err;

	err = mms_store_create(&so, &c->st);
	if (err) {
		snprintf(errbuf, errlen, "out of memory");
		return err;
	}
	c->memfd = memfd_create("mmscope-perfdata", MFD_CLOEXEC);
	fd = c->memfd < 0 ? -1 : dup(c->memfd);
	if (fd < 0) {
		snprintf(errbuf, errlen, "cannot make a recording in memory: %s", strerror(errno));
		return -errno;
	}
	snprintf(lock_why, sizeof(lock_why), "a perf lock record capture%s%s: lock waits only; "
		 "%s%s", c->f.version[0] ? " by perf " : "", c->f.version, c->sym_why,
		 c->fmt_note);
	snprintf(target, sizeof(target), "perf.data capture (see command)");
	m.host = c->f.hostname;
	m.kernel = c->f.osrelease;
	m.target = target;
	m.start_ns = realtime(c, c->f.has_sample_time ? c->f.first_time : 0);
	m.argv = c->f.argv[0] ? c->f.argv : NULL;
	m.opts = &c->opts;
	m.fam[MMS_FAM_LOCK].source = "perf.data";
	m.fam[MMS_FAM_LOCK].backend = "perf";
	m.fam[MMS_FAM_LOCK].why = lock_why;
	for (int f = 0; f < MMS_FAM_NR; f++)
		if (f != MMS_FAM_LOCK)
			m.fam[f].why = no_mm;
	return mms_recorder_create_fd(fd, "perf.data", &m, &c->rec, errbuf, errlen);
}

/* The finished recording out of the memfd, within the budget. */
static int take_output(struct pd_conv *c, struct mms_rec_import_res *res, char *errbuf,
		       size_t errlen)
{
	uint8_t **buf = &res->buf;
	size_t *len = &res->len;
	struct stat sb;
	size_t got = 0;

	if (fstat(c->memfd, &sb) || (uint64_t)sb.st_size > PD_OUT_MAX ||
	    (uint64_t)sb.st_size > c->f.budget - c->f.used) {
		snprintf(errbuf, errlen, "the recording made of it is too big");
		return -EFBIG;
	}
	*buf = malloc((size_t)sb.st_size + 1);
	if (!*buf) {
		snprintf(errbuf, errlen, "out of memory");
		return -ENOMEM;
	}
	while (got < (size_t)sb.st_size) {
		ssize_t n = pread(c->memfd, *buf + got, (size_t)sb.st_size - got, (off_t)got);

		if (n <= 0) {
			free(*buf);
			*buf = NULL;
			snprintf(errbuf, errlen, "cannot read the recording back");
			return -EIO;
		}
		got += (size_t)n;
	}
	*len = got;
	return 0;
}

static void conv_finish(struct pd_conv *c)
{
	mms_recorder_destroy(c->rec);
	if (c->memfd >= 0)
		close(c->memfd);
	mms_store_destroy(c->st);
	lp_engine_destroy(c->eng);
	mms_lock_common_destroy(c->lc);
	if (c->tep)
		tep_free(c->tep);
	pd_close(&c->f);
}

static int perfdata_convert(int fd, uint64_t size, uint64_t budget,
			    struct mms_rec_import_res *res, char *errbuf, size_t errlen)
{
	struct pd_conv *c = calloc(1, sizeof(*c));
	char why[256] = "";
	struct stat sb;
	int err;

	if (!c) {
		snprintf(errbuf, errlen, "out of memory");
		return -ENOMEM;
	}
	c->memfd = -1;
	err = pd_open(&c->f, fd, size, budget, why, sizeof(why));
	if (err) {
		snprintf(errbuf, errlen, "a perf.data capture mmscope cannot read: %s", why);
		goto out;
	}
	snprintf(res->tool, sizeof(res->tool), "perf %s",
		 c->f.version[0] ? c->f.version : "(version unknown)");
	if (!fstat(fd, &sb))
		c->mtime_ns = (uint64_t)sb.st_mtim.tv_sec * 1000000000ULL +
			      (uint64_t)sb.st_mtim.tv_nsec;
	err = check_attrs(c, why, sizeof(why));
	if (!err)
		err = load_formats(c, why, sizeof(why));
	if (err) {
		snprintf(errbuf, errlen, "a perf.data capture mmscope cannot read: %s", why);
		goto out;
	}
	mms_options_init(&c->opts);
	c->iv_ns = PD_IV_NS;
	if (c->f.has_sample_time && (c->f.last_time - c->f.first_time) / PD_IV_NS >= PD_MAX_IVS / 2)
		c->iv_ns = ((c->f.last_time - c->f.first_time) / (PD_MAX_IVS / 2) / 1000000 + 1) *
			   1000000;
	c->opts.interval_ms = (uint32_t)(c->iv_ns / 1000000);
	c->max_stack = mms_lock_walk_frames(&c->opts);
	choose_symbols(c);
	err = mms_lock_common_create(&c->opts, c->ks, &c->lc);
	if (!err)
		err = lp_engine_create(&c->opts, c->lc, PD_POOL, &c->eng);
	if (err) {
		snprintf(errbuf, errlen, "out of memory");
		goto out;
	}
	lp_engine_set_offline(c->eng);
	err = start_recording(c, errbuf, errlen);
	if (err)
		goto out;
	err = read_records(c);
	if (err == -E2BIG || err == -EFBIG) {
		snprintf(c->stop, sizeof(c->stop), "read up to data byte %llu of %llu: %s",
			 (unsigned long long)pd_pos(&c->f), (unsigned long long)c->f.data_size,
			 err == -E2BIG ? "its sample times span more than mmscope keeps" :
			 "the recording made of it grew past 64 MiB");
		err = 0;
	} else if (err == -ENOTSUP) {
		snprintf(errbuf, errlen, "%s", c->stop);
		goto out;
	} else if (err) {
		snprintf(errbuf, errlen, "cannot read it: %s", strerror(-err));
		goto out;
	}
	if (c->f.damage[0]) {
		snprintf(res->damage, sizeof(res->damage), "perf.data: %s; the %llu records "
			 "before it were read", c->f.damage, (unsigned long long)c->f.records);
		res->damaged_at = c->f.data_off + pd_pos(&c->f);
	}
	err = mms_recorder_close(c->rec, c->stop);
	if (err) {
		snprintf(errbuf, errlen, "cannot make a recording of it: %s", strerror(-err));
		goto out;
	}
	err = take_output(c, res, errbuf, errlen);
out:
	conv_finish(c);
	free(c);
	return err;
}

const struct mms_rec_import mms_perfdata_import = {
	.format = "perf.data",
	.match = perfdata_match,
	.convert = perfdata_convert,
};
