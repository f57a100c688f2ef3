// SPDX-License-Identifier: GPL-2.0
/*
 * Tracepoint reader: perf rings + libtraceevent, fields by name.  See
 * tp_reader.h for why the rings are opened without libperf.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <event-parse.h>

#include "mmscope/collectors.h"
#include "mmscope/hash.h"
#include "mmscope/options.h"
#include "tp_reader.h"

#define MAX_EVENTS 8
#define COMM_CACHE 64

struct mms_tp_event {
	struct mms_tp_reader *r;
	struct tep_event *tep_ev;
	char name[96];		/* "sys:name" */
	uint32_t id;
	mms_tp_handler fn;
	void *ctx;
};

struct ring {
	int fd;			/* the CPU's first event: owns the ring */
	void *base;
	size_t len;
	uint32_t cpu;
};

struct mms_tp_reader {
	struct tep_handle *tep;
	struct tep_format_field *type_field;	/* common_type, from the first event */
	struct mms_tp_event ev[MAX_EVENTS];
	int nr_ev;
	struct mms_tp_event *fork_ev;		/* internal: follows children */
	struct tep_format_field *fork_child;

	enum { F_ALL, F_TGID, F_TID } filter;
	struct mms_hash ids;	/* the pids or tids followed (0 never is) */

	int *fds;		/* every event on every CPU */
	int nr_fds;
	struct ring *rings;
	int nr_rings;
	int epfd;
	char *scratch;		/* a record that wraps around the ring end */

	uint64_t lost, parse_errors;
	/*
	 * Drops are counted from each event's own count (PERF_FORMAT_LOST,
	 * 6.0+), read when asked: a PERF_RECORD_LOST comes only with the
	 * ring's next record, which may never come once a burst is over.  The
	 * LOST records, counting the same drops, are the fallback.
	 */
	bool read_lost;
	uint64_t lost_read;	/* the events' counts summed, at the last take */
	struct {
		uint32_t pid;
		char comm[16];
	} comms[COMM_CACHE];
	unsigned int comm_next;
	char comm_buf[17];
};

int mms_tp_reader_create(struct mms_tp_reader **out)
{
	struct mms_tp_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->epfd = -1;
	r->tep = tep_alloc();
	r->scratch = malloc(65536);
	if (!r->tep || !r->scratch) {
		mms_tp_reader_destroy(r);
		return -ENOMEM;
	}
	tep_set_long_size(r->tep, (int)sizeof(long));
	tep_set_page_size(r->tep, (int)sysconf(_SC_PAGESIZE));
	*out = r;
	return 0;
}

void mms_tp_reader_destroy(struct mms_tp_reader *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->nr_rings; i++)
		if (r->rings[i].base)
			munmap(r->rings[i].base, r->rings[i].len);
	for (int i = 0; i < r->nr_fds; i++)
		close(r->fds[i]);
	if (r->epfd >= 0)
		close(r->epfd);
	free(r->rings);
	free(r->fds);
	mms_hash_free(&r->ids);
	free(r->scratch);
	if (r->tep)
		tep_free(r->tep);
	free(r);
}

int mms_tp_reader_add_format(struct mms_tp_reader *r, const char *sys, const char *text,
			     size_t len, mms_tp_handler fn, void *ctx, struct mms_tp_event **out)
{
	struct mms_tp_event *e;
	struct tep_event *tev = NULL;

	if (r->nr_ev == MAX_EVENTS)
		return -E2BIG;
	if (tep_parse_format(r->tep, &tev, text, len, sys) || !tev)
		return -EINVAL;
	if (!r->type_field) {
		r->type_field = tep_find_common_field(tev, "common_type");
		if (!r->type_field)
			return -EINVAL;
	}
	e = &r->ev[r->nr_ev++];
	e->r = r;
	e->tep_ev = tev;
	e->id = (uint32_t)tev->id;
	e->fn = fn;
	e->ctx = ctx;
	snprintf(e->name, sizeof(e->name), "%s:%s", sys, tev->name);
	if (out)
		*out = e;
	return 0;
}

static int read_file(const char *path, char **buf, size_t *len)
{
	size_t cap = 8192, n = 0;
	char *b = malloc(cap);
	ssize_t got;
	int fd, err;

	if (!b)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(b);
		return err;
	}
	while ((got = read(fd, b + n, cap - n)) > 0) {
		n += (size_t)got;
		if (n == cap) {
			char *nb = realloc(b, cap *= 2);

			if (!nb) {
				free(b);
				close(fd);
				return -ENOMEM;
			}
			b = nb;
		}
	}
	err = got < 0 ? -errno : 0;
	close(fd);
	if (err) {
		free(b);
		return err;
	}
	*buf = b;
	*len = n;
	return 0;
}

int mms_tp_reader_add(struct mms_tp_reader *r, const char *sys, const char *name,
		      mms_tp_handler fn, void *ctx, struct mms_tp_event **out)
{
	char path[512], *text = NULL;
	size_t len = 0;
	int err;

	snprintf(path, sizeof(path), "%s/events/%s/%s/format", mms_tracefs_root(), sys, name);
	err = read_file(path, &text, &len);
	if (err)
		return err;
	err = mms_tp_reader_add_format(r, sys, text, len, fn, ctx, out);
	free(text);
	return err;
}

const char *mms_tp_event_name(const struct mms_tp_event *ev)
{
	return ev->name;
}

uint32_t mms_tp_event_id(const struct mms_tp_event *ev)
{
	return ev->id;
}

struct tep_format_field *mms_tp_field(const struct mms_tp_event *ev, const char *name)
{
	return tep_find_field(ev->tep_ev, name);
}

int mms_tp_read(const struct mms_tp_record *rec, const struct tep_format_field *f,
		uint64_t *val)
{
	unsigned long long v;
	unsigned int bits;

	if (!f)
		return -ENOENT;
	if (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_STRING | TEP_FIELD_IS_DYNAMIC) ||
	    (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8))
		return -EINVAL;
	if ((uint32_t)f->offset + (uint32_t)f->size > rec->size)
		return -EINVAL;
	v = tep_read_number(f->event->tep, (const char *)rec->data + f->offset, f->size);
	bits = (unsigned int)f->size * 8;
	if ((f->flags & TEP_FIELD_IS_SIGNED) && bits < 64 && (v >> (bits - 1)) & 1)
		v |= ~0ULL << bits;
	*val = v;
	return 0;
}

uint64_t mms_tp_get(const struct mms_tp_record *rec, const struct tep_format_field *f,
		    uint64_t dflt)
{
	uint64_t v;
	int err = mms_tp_read(rec, f, &v);

	if (err == -EINVAL)
		rec->ev->r->parse_errors++;
	return err ? dflt : v;
}

/* ---- process filter ---- */

static bool ids_has(const struct mms_hash *s, uint32_t id)
{
	return id && mms_hash_find(s, id);
}

static int ids_add(struct mms_hash *s, uint32_t id)
{
	uint32_t i;
	int found;

	if (!id)
		return 0;
	found = mms_hash_probe(s, id, &i);
	if (found < 0)
		return found;
	if (!found)
		mms_hash_set(s, i, id, 0);
	return 0;
}

static int fork_seen(void *ctx, const struct mms_tp_record *rec)
{
	struct mms_tp_reader *r = ctx;
	uint64_t child;

	if (r->filter != F_TGID || !ids_has(&r->ids, rec->pid))
		return 0;
	if (mms_tp_read(rec, r->fork_child, &child))
		return 0;
	return ids_add(&r->ids, (uint32_t)child);
}

int mms_tp_reader_filter(struct mms_tp_reader *r, const struct mms_options *o)
{
	int err = 0;

	if (o->nr_tids) {
		r->filter = F_TID;
		for (int i = 0; !err && i < o->nr_tids; i++)
			err = ids_add(&r->ids, (uint32_t)o->tids[i]);
		return err;
	}
	if (!o->pid)
		return 0;
	r->filter = F_TGID;
	err = ids_add(&r->ids, (uint32_t)o->pid);
	if (err || !o->cmd || o->no_inherit)
		return err;
	/* A new process's pid is its tgid: sched_process_fork's child_pid. */
	err = mms_tp_reader_add(r, "sched", "sched_process_fork", fork_seen, r, &r->fork_ev);
	if (err)
		return err;
	r->fork_child = mms_tp_field(r->fork_ev, "child_pid");
	return r->fork_child ? 0 : -EINVAL;
}

bool mms_tp_reader_wanted(const struct mms_tp_reader *r, uint32_t pid, uint32_t tid)
{
	switch (r->filter) {
	case F_TGID:
		return ids_has(&r->ids, pid);
	case F_TID:
		return ids_has(&r->ids, tid);
	default:
		return true;
	}
}

static struct mms_tp_event *event_of(struct mms_tp_reader *r, const void *raw, uint32_t size)
{
	unsigned long long type;

	if (!r->type_field || (uint32_t)r->type_field->offset + 2 > size ||
	    tep_read_number_field(r->type_field, raw, &type))
		return NULL;
	for (int i = 0; i < r->nr_ev; i++)
		if (r->ev[i].id == type)
			return &r->ev[i];
	return NULL;
}

int mms_tp_reader_dispatch(struct mms_tp_reader *r, const void *raw, uint32_t size,
			   uint32_t pid, uint32_t tid, uint32_t cpu, uint64_t time)
{
	struct mms_tp_record rec = {
		.data = raw, .size = size, .pid = pid, .tid = tid, .cpu = cpu, .time = time,
	};

	if (size < 8)
		return -EINVAL;
	rec.ev = event_of(r, raw, size);
	if (!rec.ev)
		return -ENOENT;
	if (rec.ev != r->fork_ev && !mms_tp_reader_wanted(r, pid, tid))
		return 0;
	return rec.ev->fn(rec.ev->ctx, &rec);
}

/* ---- perf rings ---- */

static int perf_open(struct mms_tp_reader *r, struct mms_tp_event *e, int cpu, bool comm,
		     unsigned int watermark)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_TRACEPOINT,
		.config = e->id,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			       PERF_SAMPLE_RAW,
		.disabled = 1,
		.comm = comm,
		.watermark = 1,
		.wakeup_watermark = watermark,
		.read_format = r->read_lost ? PERF_FORMAT_LOST : 0,
	};
	int fd = (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int mms_tp_reader_open(struct mms_tp_reader *r, unsigned int pages)
{
	long psz = sysconf(_SC_PAGESIZE), ncpu = sysconf(_SC_NPROCESSORS_CONF);
	size_t len = ((size_t)pages + 1) * (size_t)psz;
	int err = 0, fd;

	if (!r->nr_ev || pages & (pages - 1))
		return -EINVAL;
	r->fds = calloc((size_t)(ncpu * r->nr_ev), sizeof(*r->fds));
	r->rings = calloc((size_t)ncpu, sizeof(*r->rings));
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!r->fds || !r->rings || r->epfd < 0)
		return r->epfd < 0 ? -errno : -ENOMEM;
	r->read_lost = true;
	for (int cpu = 0; cpu < ncpu; cpu++) {
		struct ring *ring = &r->rings[r->nr_rings];
		struct epoll_event ee = { .events = EPOLLIN };

		fd = perf_open(r, &r->ev[0], cpu, true, (unsigned int)(pages * psz / 4));
		if (fd == -EINVAL && r->read_lost && !r->nr_fds) {
			/* Before 6.0: no PERF_FORMAT_LOST; the LOST records alone then. */
			r->read_lost = false;
			fd = perf_open(r, &r->ev[0], cpu, true, (unsigned int)(pages * psz / 4));
		}
		if (fd == -ENODEV)
			continue;	/* offline CPU */
		if (fd < 0)
			return fd;
		r->fds[r->nr_fds++] = fd;
		ring->fd = fd;
		ring->cpu = (uint32_t)cpu;
		ring->len = len;
		ring->base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (ring->base == MAP_FAILED) {
			ring->base = NULL;
			return -errno;
		}
		r->nr_rings++;
		ee.data.u32 = (uint32_t)(r->nr_rings - 1);
		if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, fd, &ee))
			return -errno;
		for (int i = 1; i < r->nr_ev; i++) {
			int efd = perf_open(r, &r->ev[i], cpu, false, 0);

			if (efd < 0)
				return efd;
			r->fds[r->nr_fds++] = efd;
			if (ioctl(efd, PERF_EVENT_IOC_SET_OUTPUT, fd))
				return -errno;
		}
	}
	return r->nr_rings ? err : -ENODEV;
}

static int ioctl_all(struct mms_tp_reader *r, unsigned long req)
{
	for (int i = 0; i < r->nr_fds; i++)
		if (ioctl(r->fds[i], req, 0))
			return -errno;
	return 0;
}

int mms_tp_reader_enable(struct mms_tp_reader *r)
{
	return ioctl_all(r, PERF_EVENT_IOC_ENABLE);
}

int mms_tp_reader_disable(struct mms_tp_reader *r)
{
	return ioctl_all(r, PERF_EVENT_IOC_DISABLE);
}

int mms_tp_reader_fd(const struct mms_tp_reader *r)
{
	return r->epfd;
}

struct sample {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
	uint32_t raw_size;
	char raw[];
};

static void comm_set(struct mms_tp_reader *r, uint32_t pid, const char *comm)
{
	unsigned int i;

	for (i = 0; i < COMM_CACHE && r->comms[i].pid != pid; i++)
		;
	if (i == COMM_CACHE) {
		i = r->comm_next++ % COMM_CACHE;
		r->comms[i].pid = pid;
	}
	snprintf(r->comms[i].comm, sizeof(r->comms[i].comm), "%.*s",
		 (int)sizeof(r->comms[i].comm) - 1, comm);
}

/* One record: pass 0 handles only forks (so children are known), pass 1 the rest. */
static int handle(struct mms_tp_reader *r, const struct perf_event_header *h, int pass)
{
	const struct sample *s = (const void *)h;
	int err;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		if (h->size < offsetof(struct sample, raw) ||
		    offsetof(struct sample, raw) + s->raw_size > h->size) {
			r->parse_errors += pass;
			return 0;
		}
		if ((event_of(r, s->raw, s->raw_size) == r->fork_ev) != (pass == 0))
			return 0;
		err = mms_tp_reader_dispatch(r, s->raw, s->raw_size, s->pid, s->tid, s->cpu,
					     s->time);
		if (err == -EINVAL || err == -ENOENT)
			r->parse_errors++;
		return err > 0 || err == -ENOMEM ? err : 0;
	case PERF_RECORD_LOST:
		if (pass && !r->read_lost)
			r->lost += ((const uint64_t *)(h + 1))[1];
		return 0;
	case PERF_RECORD_COMM: {
		const uint32_t *p = (const void *)(h + 1);

		/* The main thread's name is the process's: exec or prctl(PR_SET_NAME). */
		if (pass && p[0] == p[1])
			comm_set(r, p[0], (const char *)(p + 2));
		return 0;
	}
	default:
		return 0;
	}
}

static int read_ring(struct mms_tp_reader *r, struct ring *ring, int pass, int *nr)
{
	struct perf_event_mmap_page *pg = ring->base;
	const char *data = (const char *)ring->base + pg->data_offset;
	uint64_t size = pg->data_size, head, tail;
	int err = 0;

	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	tail = pg->data_tail;
	while (tail < head && !err) {
		const struct perf_event_header *h = (const void *)(data + tail % size);
		uint64_t off = tail % size;

		if (off + sizeof(*h) > size || off + h->size > size) {
			/* Wraps around the end: copy it out in two parts. */
			uint64_t first = size - off, hsize;

			memcpy(r->scratch, data + off, first < sizeof(*h) ? first : sizeof(*h));
			if (first < sizeof(*h))
				memcpy(r->scratch + first, data, sizeof(*h) - first);
			hsize = ((const struct perf_event_header *)r->scratch)->size;
			memcpy(r->scratch, data + off, first);
			memcpy(r->scratch + first, data, hsize - first);
			h = (const void *)r->scratch;
		}
		if (!h->size)
			break;
		err = handle(r, h, pass);
		tail += h->size;
		*nr += pass;
	}
	if (pass)
		__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	return err < 0 ? err : 0;
}

int mms_tp_reader_read(struct mms_tp_reader *r)
{
	struct epoll_event ev[8];
	int nr = 0, err = 0;

	/* Clear readiness; the rings themselves say what is there. */
	while (epoll_wait(r->epfd, ev, 8, 0) == 8)
		;
	for (int pass = r->fork_ev ? 0 : 1; pass < 2; pass++)
		for (int i = 0; !err && i < r->nr_rings; i++)
			err = read_ring(r, &r->rings[i], pass, &nr);
	return err ? err : nr;
}

/* The events' drop counts summed; false when one cannot be read now. */
static bool sum_lost(const struct mms_tp_reader *r, uint64_t *sum)
{
	*sum = 0;
	for (int i = 0; i < r->nr_fds; i++) {
		uint64_t v[2];	/* read_format PERF_FORMAT_LOST: value, lost */

		if (read(r->fds[i], v, sizeof(v)) != (ssize_t)sizeof(v))
			return false;
		*sum += v[1];
	}
	return true;
}

uint64_t mms_tp_reader_take_lost(struct mms_tp_reader *r)
{
	uint64_t n = r->lost, sum;

	r->lost = 0;
	if (r->read_lost && sum_lost(r, &sum) && sum > r->lost_read) {
		n += sum - r->lost_read;
		r->lost_read = sum;
	}
	return n;
}

uint64_t mms_tp_reader_take_parse_errors(struct mms_tp_reader *r)
{
	uint64_t n = r->parse_errors;

	r->parse_errors = 0;
	return n;
}

const char *mms_tp_reader_comm(struct mms_tp_reader *r, uint32_t pid)
{
	char path[64];
	ssize_t n = 0;
	int fd;

	for (int i = 0; i < COMM_CACHE; i++)
		if (r->comms[i].pid == pid && r->comms[i].comm[0])
			return r->comms[i].comm;
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, r->comm_buf, sizeof(r->comm_buf) - 1);
		close(fd);
	}
	if (n <= 0)
		return "?";
	r->comm_buf[n] = 0;
	if (r->comm_buf[n - 1] == '\n')
		r->comm_buf[n - 1] = 0;
	comm_set(r, pid, r->comm_buf);
	return r->comm_buf;
}
