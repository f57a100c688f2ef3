// SPDX-License-Identifier: GPL-2.0
/*
 * The perf.data file layer (see perfdata.h): what perf's tools/perf/util/
 * header.c writes, read the way a hostile file must be read.  Only the
 * little-endian file layout ("PERFILE2", not a pipe) is read, as perf 6.1
 * writes it on x86 and arm64.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "perfdata.h"
#include "mmscope/escape.h"

#define PD_MAGIC 0x32454c4946524550ULL	/* "PERFILE2", little-endian */
#define PD_HDR_SIZE 104
#define PD_ATTR_MIN 64			/* PERF_ATTR_SIZE_VER0 */
#define PD_ATTR_MAX 4096
#define PD_STR_MAX 4096
#define PD_FORMAT_MAX 65536
#define PD_RBUF (1U << 20)		/* records are at most 64 KiB */

enum {
	FEAT_TRACING_DATA = 1,
	FEAT_BUILD_ID = 2,
	FEAT_HOSTNAME = 3,
	FEAT_OSRELEASE = 4,
	FEAT_VERSION = 5,
	FEAT_CMDLINE = 11,
	FEAT_SAMPLE_TIME = 21,
	FEAT_CLOCK_DATA = 29,
	FEAT_BITS = 256,
};

struct sect {
	uint64_t off, size;
};

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

void *pd_alloc(struct pd_file *f, size_t n)
{
	void *p;

	if (n > f->budget - f->used)
		return NULL;
	p = malloc(n ? n : 1);
	if (p)
		f->used += n;
	return p;
}

void pd_free(struct pd_file *f, void *p, size_t n)
{
	if (!p)
		return;
	free(p);
	f->used -= n;
}

/* Exactly n bytes at off, inside the file; false when not there. */
static bool read_at(const struct pd_file *f, uint64_t off, void *buf, size_t n)
{
	size_t got = 0;

	if (off > f->size || n > f->size - off)
		return false;
	while (got < n) {
		ssize_t r = pread(f->fd, (uint8_t *)buf + got, n - got, (off_t)(off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		got += (size_t)r;
	}
	return true;
}

static bool sect_ok(const struct pd_file *f, struct sect s)
{
	return s.off <= f->size && s.size <= f->size - s.off;
}


/* struct perf_header_string: u32 len, then len bytes (NUL-padded). */
static bool read_string(const struct pd_file *f, uint64_t *off, uint64_t end, char *dst,
			size_t cap)
{
	char buf[PD_STR_MAX];
	uint8_t l[4];
	uint32_t len;

	if (end - *off < 4 || !read_at(f, *off, l, 4))
		return false;
	len = rd32(l);
	if (len > end - *off - 4)
		return false;
	if (len > sizeof(buf))
		len = sizeof(buf);	/* kept cut short; the next string is past all of it */
	if (!read_at(f, *off + 4, buf, len))
		return false;
	mms_copy_clean(dst, cap, buf, len);
	*off += 4 + (uint64_t)rd32(l);
	return true;
}

static void read_cmdline(struct pd_file *f, struct sect s)
{
	uint64_t off = s.off + 4, end = s.off + s.size;
	size_t used = 0;
	uint8_t n4[4];
	uint32_t nr;

	if (s.size < 4 || !read_at(f, s.off, n4, 4))
		return;
	nr = rd32(n4);
	for (uint32_t i = 0; i < nr && i < PD_MAX_ARGV && used + 1 < sizeof(f->cmdline); i++) {
		char *w = f->cmdline + used;

		if (!read_string(f, &off, end, w, sizeof(f->cmdline) - used))
			break;
		f->argv[i] = w;
		used += strlen(w) + 1;
	}
}

/*
 * struct build_id_event: header, pid, build_id[24], filename.  Only the
 * kernel's is wanted: it says whether this machine's symbols are the ones.
 */
static void read_build_ids(struct pd_file *f, struct sect s)
{
	uint64_t off = s.off, end = s.off + s.size;
	uint8_t buf[8 + 4 + 24 + 64];

	for (int n = 0; n < 65536 && end - off >= 36; n++) {
		uint16_t misc, size;
		char name[64];

		if (!read_at(f, off, buf, end - off < sizeof(buf) ? end - off : sizeof(buf)))
			return;
		memcpy(&misc, buf + 4, 2);
		memcpy(&size, buf + 6, 2);
		if (size < 36 || size > end - off)
			return;
		mms_copy_clean(name, sizeof(name), (const char *)buf + 36,
			   size - 36U < sizeof(name) ? size - 36U : sizeof(name));
		if ((misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL &&
		    !strcmp(name, "[kernel.kallsyms]")) {
			/* PERF_RECORD_MISC_BUILD_ID_SIZE: the length is in byte 20 of the id. */
			uint32_t len = misc & (1U << 15) ? buf[12 + 20] : 20;

			f->kernel_build_id_len = len <= 20 ? len : 20;
			memcpy(f->kernel_build_id, buf + 12, f->kernel_build_id_len);
			return;
		}
		off += size;
	}
}

/* Tracing data (tools/perf/util/trace-event-read.c): a cursor in its section. */
struct tcur {
	const struct pd_file *f;
	uint64_t off, end;
	bool bad;
};

static bool tc_read(struct tcur *c, void *buf, size_t n)
{
	if (c->bad || n > c->end - c->off || !read_at(c->f, c->off, buf, n)) {
		c->bad = true;
		return false;
	}
	c->off += n;
	return true;
}

static uint64_t tc_u(struct tcur *c, size_t n)
{
	uint8_t b[8] = { 0 };

	tc_read(c, b, n);
	return n == 8 ? rd64(b) : rd32(b);
}

static void tc_skip(struct tcur *c, uint64_t n)
{
	if (n > c->end - c->off)
		c->bad = true;
	else
		c->off += n;
}

/* A NUL-terminated string of at most cap - 1 bytes. */
static void tc_str(struct tcur *c, char *dst, size_t cap)
{
	size_t i = 0;
	char ch = 1;

	while (ch && !c->bad) {
		if (!tc_read(c, &ch, 1))
			break;
		if (i + 1 >= cap && ch) {
			c->bad = true;
			break;
		}
		dst[i++] = ch;
	}
	dst[i < cap ? i : cap - 1] = '\0';
}

static int read_tracing(struct pd_file *f, struct sect s)
{
	static const char magic[10] = "\027\010\104tracing";
	struct tcur c = { .f = f, .off = s.off, .end = s.off + s.size };
	char buf[16], name[64];
	uint8_t b[2];
	uint32_t n;

	if (!tc_read(&c, buf, 10) || memcmp(buf, magic, 10))
		return -EINVAL;
	tc_str(&c, buf, sizeof(buf));	/* version */
	tc_read(&c, b, 2);
	f->big_endian = b[0];
	f->long_size = b[1];
	f->page_size = (uint32_t)tc_u(&c, 4);
	if (c.bad || f->big_endian)
		return c.bad ? -EINVAL : -ENOTSUP;
	tc_str(&c, name, sizeof(name));		/* "header_page" */
	tc_skip(&c, tc_u(&c, 8));
	tc_str(&c, name, sizeof(name));		/* "header_event" */
	tc_skip(&c, tc_u(&c, 8));
	n = (uint32_t)tc_u(&c, 4);		/* ftrace's own events */
	for (uint32_t i = 0; i < n && !c.bad; i++)
		tc_skip(&c, tc_u(&c, 8));
	n = (uint32_t)tc_u(&c, 4);		/* systems */
	for (uint32_t i = 0; i < n && !c.bad; i++) {
		uint32_t events;

		tc_str(&c, name, sizeof(name));
		events = (uint32_t)tc_u(&c, 4);
		for (uint32_t e = 0; e < events && !c.bad; e++) {
			uint64_t len = tc_u(&c, 8);
			struct pd_format *fm = &f->formats[f->nr_formats];

			if (c.bad || strcmp(name, "lock") || f->nr_formats == PD_MAX_FORMATS ||
			    len > PD_FORMAT_MAX) {
				tc_skip(&c, len);
				continue;
			}
			fm->cap = len + 1;
			fm->text = pd_alloc(f, fm->cap);
			if (!fm->text)
				return -ENOMEM;
			if (!tc_read(&c, fm->text, len)) {
				pd_free(f, fm->text, fm->cap);
				fm->text = NULL;
				break;
			}
			fm->text[len] = '\0';
			fm->len = len;
			f->nr_formats++;
		}
	}
	/* The kallsyms and printk formats that follow are not needed. */
	f->has_tracing = true;
	return c.bad && !f->nr_formats ? -EINVAL : 0;
}

static int read_features(struct pd_file *f, char *errbuf, size_t errlen)
{
	uint64_t at = f->data_off + f->data_size;
	uint32_t idx = 0;
	uint8_t s16[16];
	int err;

	for (int bit = 0; bit < FEAT_BITS; bit++) {
		struct sect s;

		if (!(f->feat[bit / 64] >> (bit % 64) & 1))
			continue;
		if (!read_at(f, at + 16ULL * idx++, s16, 16))
			break;	/* a capture cut short: the features are gone, the data is not */
		s.off = rd64(s16);
		s.size = rd64(s16 + 8);
		if (!sect_ok(f, s))
			continue;
		switch (bit) {
		case FEAT_TRACING_DATA:
			err = read_tracing(f, s);
			if (err == -ENOMEM) {
				snprintf(errbuf, errlen, "its event formats need more memory than "
					 "mmscope allows a capture");
				return err;
			}
			if (err == -ENOTSUP) {
				snprintf(errbuf, errlen, "it was recorded on a big-endian machine, "
					 "which mmscope does not read");
				return err;
			}
			break;
		case FEAT_BUILD_ID:
			read_build_ids(f, s);
			break;
		case FEAT_HOSTNAME:
			read_string(f, &s.off, s.off + s.size, f->hostname, sizeof(f->hostname));
			break;
		case FEAT_OSRELEASE:
			read_string(f, &s.off, s.off + s.size, f->osrelease, sizeof(f->osrelease));
			break;
		case FEAT_VERSION:
			read_string(f, &s.off, s.off + s.size, f->version, sizeof(f->version));
			break;
		case FEAT_CMDLINE:
			read_cmdline(f, s);
			break;
		case FEAT_SAMPLE_TIME:
			if (s.size >= 16 && read_at(f, s.off, s16, 16)) {
				f->first_time = rd64(s16);
				f->last_time = rd64(s16 + 8);
				f->has_sample_time = f->last_time >= f->first_time;
			}
			break;
		case FEAT_CLOCK_DATA: {
			uint8_t cd[24];

			/* u32 version, u32 clockid, u64 wall clock, u64 that clock */
			if (s.size >= 24 && read_at(f, s.off, cd, 24) && rd32(cd) == 1) {
				f->clock_wall_ns = rd64(cd + 8);
				f->clock_ref_ns = rd64(cd + 16);
				f->has_clock = true;
			}
			break;
		}
		default:
			break;
		}
	}
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	const struct pd_id *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Appends attribute attr's ids (the ids section: u64 each). */
static int read_ids(struct pd_file *f, struct sect s, uint32_t attr)
{
	uint64_t n = s.size / 8;
	uint8_t b[8];

	if (n > PD_MAX_IDS - f->nr_ids)
		return -E2BIG;
	if (!n)
		return 0;
	{
		size_t old = f->nr_ids * sizeof(*f->ids), sz = old + n * sizeof(*f->ids);
		struct pd_id *p = pd_alloc(f, sz);

		if (!p)
			return -ENOMEM;
		if (f->ids)
			memcpy(p, f->ids, old);
		pd_free(f, f->ids, old);
		f->ids = p;
	}
	for (uint64_t i = 0; i < n; i++) {
		if (!read_at(f, s.off + i * 8, b, 8))
			return -EINVAL;
		f->ids[f->nr_ids].id = rd64(b);
		f->ids[f->nr_ids++].attr = attr;
	}
	return 0;
}

static int read_attrs(struct pd_file *f, uint64_t attr_size, struct sect s, char *errbuf,
		      size_t errlen)
{
	uint8_t buf[PD_ATTR_MAX + 16];
	uint64_t nr = s.size / attr_size;

	if (s.size % attr_size || !nr || nr > PD_MAX_ATTRS) {
		snprintf(errbuf, errlen, "its attribute section holds %llu bytes, not 1 to %d "
			 "attributes of %llu bytes", (unsigned long long)s.size, PD_MAX_ATTRS,
			 (unsigned long long)attr_size);
		return -EINVAL;
	}
	for (uint64_t i = 0; i < nr; i++) {
		struct pd_attr *a = &f->attrs[i];
		struct sect ids;
		int err;

		if (!read_at(f, s.off + i * attr_size, buf, attr_size)) {
			snprintf(errbuf, errlen, "attribute %llu is cut short",
				 (unsigned long long)i);
			return -EINVAL;
		}
		/* struct perf_event_attr's first fields; the ids section follows it */
		a->type = rd32(buf);
		a->config = rd64(buf + 8);
		a->sample_type = rd64(buf + 24);
		a->read_format = rd64(buf + 32);
		a->sample_id_all = rd64(buf + 40) >> 18 & 1;
		ids.off = rd64(buf + attr_size - 16);
		ids.size = rd64(buf + attr_size - 8);
		if (!sect_ok(f, ids) || ids.size % 8) {
			snprintf(errbuf, errlen, "attribute %llu's ids lie outside the file",
				 (unsigned long long)i);
			return -EINVAL;
		}
		a->nr_ids = ids.size / 8;
		err = read_ids(f, ids, (uint32_t)i);
		if (err) {
			snprintf(errbuf, errlen, "%s", err == -ENOMEM ? "its event ids need more "
				 "memory than mmscope allows a capture" : err == -E2BIG ?
				 "it has more event ids than any capture has" :
				 "its event ids are cut short");
			return err;
		}
	}
	f->nr_attrs = (uint32_t)nr;
	if (f->nr_ids)
		qsort(f->ids, f->nr_ids, sizeof(*f->ids), cmp_id);
	return 0;
}

int pd_attr_of(const struct pd_file *f, uint64_t id)
{
	uint32_t lo = 0, hi = f->nr_ids;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (f->ids[mid].id == id)
			return (int)f->ids[mid].attr;
		if (f->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

int pd_open(struct pd_file *f, int fd, uint64_t size, uint64_t budget, char *errbuf,
	    size_t errlen)
{
	uint8_t h[PD_HDR_SIZE];
	uint64_t attr_size;
	struct sect attrs;
	int err;

	memset(f, 0, sizeof(*f));
	f->fd = fd;
	f->size = size;
	f->budget = budget;
	if (!read_at(f, 0, h, 16) || rd64(h) != PD_MAGIC) {
		snprintf(errbuf, errlen, "not a perf.data file (no PERFILE2 at its start)");
		return -EINVAL;
	}
	if (rd64(h + 8) == 16) {
		snprintf(errbuf, errlen, "a perf.data stream written to a pipe, which mmscope "
			 "does not read: record to a file (perf lock record -o FILE)");
		return -ENOTSUP;
	}
	if (rd64(h + 8) < PD_HDR_SIZE || !read_at(f, 0, h, PD_HDR_SIZE)) {
		snprintf(errbuf, errlen, "its header is cut short or damaged");
		return -EINVAL;
	}
	attr_size = rd64(h + 16);
	attrs.off = rd64(h + 24);
	attrs.size = rd64(h + 32);
	f->data_off = rd64(h + 40);
	f->data_size = rd64(h + 48);
	memcpy(f->feat, h + 72, sizeof(f->feat));
	if (attr_size < PD_ATTR_MIN + 16 || attr_size > PD_ATTR_MAX + 16 || attr_size % 8) {
		snprintf(errbuf, errlen, "its attributes claim %llu bytes each, which no perf writes",
			 (unsigned long long)attr_size);
		return -EINVAL;
	}
	if (!sect_ok(f, attrs)) {
		snprintf(errbuf, errlen, "its attribute section lies outside the file");
		return -EINVAL;
	}
	/* A capture perf did not finish has data size 0: the data then runs to the end. */
	if (f->data_off > size) {
		snprintf(errbuf, errlen, "its data section starts past the end of the file");
		return -EINVAL;
	}
	if (f->data_size > size - f->data_off || !f->data_size) {
		snprintf(f->damage, sizeof(f->damage), "the data section is cut short: the "
			 "capture was not finished or was truncated");
		f->data_size = size - f->data_off;
		memset(f->feat, 0, sizeof(f->feat));
	}
	err = read_attrs(f, attr_size, attrs, errbuf, errlen);
	if (!err)
		err = read_features(f, errbuf, errlen);
	if (err)
		return err;
	f->rbuf_cap = PD_RBUF;
	f->rbuf = pd_alloc(f, f->rbuf_cap);
	if (!f->rbuf) {
		snprintf(errbuf, errlen, "out of memory");
		return -ENOMEM;
	}
	f->rbuf_off = f->data_off;
	return 0;
}

void pd_close(struct pd_file *f)
{
	pd_free(f, f->ids, f->nr_ids * sizeof(*f->ids));
	f->ids = NULL;
	f->nr_ids = 0;
	for (uint32_t i = 0; i < f->nr_formats; i++)
		pd_free(f, f->formats[i].text, f->formats[i].cap);
	f->nr_formats = 0;
	pd_free(f, f->rbuf, f->rbuf_cap);
	f->rbuf = NULL;
}

uint64_t pd_pos(const struct pd_file *f)
{
	return f->rbuf_off + f->rbuf_pos - f->data_off;
}

/* At least n bytes from the read position in the window, unless the data ends. */
static size_t fill(struct pd_file *f, size_t n)
{
	uint64_t end = f->data_off + f->data_size, at;
	size_t want;

	if (f->rbuf_len - f->rbuf_pos >= n)
		return f->rbuf_len - f->rbuf_pos;
	memmove(f->rbuf, f->rbuf + f->rbuf_pos, f->rbuf_len - f->rbuf_pos);
	f->rbuf_off += f->rbuf_pos;
	f->rbuf_len -= f->rbuf_pos;
	f->rbuf_pos = 0;
	at = f->rbuf_off + f->rbuf_len;
	want = end - at < f->rbuf_cap - f->rbuf_len ? (size_t)(end - at) : f->rbuf_cap - f->rbuf_len;
	if (want && read_at(f, at, f->rbuf + f->rbuf_len, want))
		f->rbuf_len += want;
	return f->rbuf_len;
}

int pd_next(struct pd_file *f, const uint8_t **rec, uint32_t *type, uint32_t *size,
	    uint16_t *misc)
{
	struct perf_event_header h;
	size_t have = fill(f, sizeof(h));

	if (have < sizeof(h)) {
		if (have && !f->damage[0])
			snprintf(f->damage, sizeof(f->damage), "the last record at data byte %llu "
				 "is cut short", (unsigned long long)pd_pos(f));
		return 0;
	}
	memcpy(&h, f->rbuf + f->rbuf_pos, sizeof(h));
	if (h.size < sizeof(h) || h.size % 8) {
		snprintf(f->damage, sizeof(f->damage), "the record at data byte %llu has a "
			 "size of %u bytes, which no record has", (unsigned long long)pd_pos(f),
			 h.size);
		return 0;
	}
	if (fill(f, h.size) < h.size) {
		snprintf(f->damage, sizeof(f->damage), "the last record at data byte %llu is cut "
			 "short", (unsigned long long)pd_pos(f));
		return 0;
	}
	*rec = f->rbuf + f->rbuf_pos;
	*type = h.type;
	*size = h.size;
	*misc = h.misc;
	f->rbuf_pos += h.size;
	f->records++;
	return 1;
}

uint32_t pd_running_build_id(uint8_t id[20])
{
	uint8_t buf[4096];
	ssize_t n;
	size_t off = 0;
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	/* ELF notes: namesz, descsz, type, then name and desc, each padded to 4 */
	while (n > 0 && off + 12 <= (size_t)n) {
		uint32_t nsz = rd32(buf + off), dsz = rd32(buf + off + 4), type = rd32(buf + off + 8);
		size_t name = off + 12, desc = name + ((nsz + 3ULL) & ~3ULL);

		if (nsz > 4096 || dsz > 4096 || desc + dsz > (size_t)n)
			return 0;
		if (type == 3 && nsz == 4 && !memcmp(buf + name, "GNU", 4)) {
			uint32_t len = dsz < 20 ? dsz : 20;

			memcpy(id, buf + desc, len);
			return len;
		}
		off = desc + ((dsz + 3ULL) & ~3ULL);
	}
	return 0;
}
