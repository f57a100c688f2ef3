// SPDX-License-Identifier: GPL-2.0
/*
 * Lock contention from the lock:contention_begin / contention_end
 * tracepoints through perf: the fallback when BPF is not allowed.  Opened
 * with libperf on every CPU (one ring per CPU), fields found by name with
 * libtraceevent from the tracefs format, waits paired and aggregated in user
 * space (lock_perf_agg.c), named and filtered through lock_common.
 *
 * Why system-wide rings even for -p / --tid / a command: per-thread events
 * only see threads that exist when they are opened (or their inherited
 * children, into ever more rings); per-CPU rings see every thread and
 * process the target creates later, at a memory cost that does not grow
 * with its thread count, and lock_common filters by tid/tgid (a launched
 * command's new processes are learnt from PERF_RECORD_FORK).  BPF filters
 * the same way, in the kernel.
 *
 * Called by the session through mms_lock_perf_ops.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <perf/core.h>
#include <perf/cpumap.h>
#include <perf/event.h>
#include <perf/evlist.h>
#include <perf/evsel.h>
#include <perf/mmap.h>
#include <perf/threadmap.h>
#include <traceevent/event-parse.h>

#include "lock_common.h"
#include "lock_perf.h"
#include "mmscope/collectors.h"
#include "mmscope/ksyms.h"

#define RING_PAGES 256		/* per CPU: 1 MiB with 4 KiB pages */
/*
 * A record is processed once its time is before the moment the pass started
 * reading the rings.  That is enough for pairing: a thread commits its
 * begin before it even takes the timestamp of its end, so an end older than
 * the pass start has its begin in some ring already, read in this pass.
 * The margin only absorbs the two clocks (vDSO and the kernel's fast
 * monotonic clock) disagreeing by a little.
 */
#define HORIZON_MARGIN_NS 1000ULL

struct lock_perf {
	struct mms_lock_common *lc;
	struct lp_engine *eng;

	struct tep_handle *tep;
	int begin_id, end_id;
	struct tep_format_field *f_type, *f_begin_addr, *f_flags, *f_end_addr;

	struct perf_cpu_map *cpus;
	struct perf_thread_map *threads;
	struct perf_evlist *evlist;
	bool opened, mapped, enabled;
	/*
	 * Records the rings dropped.  The kernel reports them in a
	 * PERF_RECORD_LOST, but only with the next record it can write to that
	 * ring, which on a quiet machine may never come; with PERF_FORMAT_LOST
	 * (6.0+) each event's count is read at every drain instead, and the
	 * LOST records, which count the same drops, are ignored.
	 */
	bool read_lost;
	bool sample_cgroup;	/* samples end with PERF_SAMPLE_CGROUP's id */
	uint64_t lost_read;	/* sum of the events' lost counts at the last drain */
	int epfd;
	uint64_t traceiter;	/* __traceiter_contention_begin, 0: unknown */
	uint32_t max_stack;
	uint64_t ips[MMS_MAX_STACK * 2 + MMS_LOCK_FRAMES];
};

static int libperf_silent(enum libperf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static uint64_t now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int lock_perf_create(struct mms_source *src, const struct mms_options *opts)
{
	struct lock_perf *lp = calloc(1, sizeof(*lp));

	if (!lp)
		return -ENOMEM;
	lp->epfd = -1;
	lp->max_stack = mms_lock_walk_frames(opts);
	if (lp->max_stack > sizeof(lp->ips) / sizeof(lp->ips[0]))
		lp->max_stack = sizeof(lp->ips) / sizeof(lp->ips[0]);
	/* No caller shown (a live report by lock, task ...): no stack walk either. */
	if (opts->no_stacks)
		lp->max_stack = 1;
	src->priv = lp;
	return 0;
}

/* Reads one tracepoint's format and hands it to libtraceevent. */
static int parse_format(struct mms_source *src, struct lock_perf *lp, const char *name,
			struct tep_event **out)
{
	char path[512], *buf = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/events/lock/%s/format", mms_tracefs_root(), name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		if (err == -ENOENT)
			return mms_source_fail(src, err, "lock-perf: this kernel has no lock:%s "
					       "tracepoint (%s missing; needs Linux 5.19+ with "
					       "CONFIG_TRACEPOINTS)", name, path);
		return mms_source_fail(src, err, "lock-perf: cannot read %s: %s: run as root",
				       path, strerror(-err));
	}
	do {
		if (len + 4096 > cap) {
			char *p = realloc(buf, cap += 16384);

			if (!p) {
				err = -ENOMEM;
				goto out;
			}
			buf = p;
		}
		n = read(fd, buf + len, cap - len);
		if (n > 0)
			len += (size_t)n;
	} while (n > 0);
	if (n < 0) {
		err = mms_source_fail(src, -errno, "lock-perf: reading %s: %s", path,
				      strerror(errno));
		goto out;
	}
	if (tep_parse_format(lp->tep, out, buf, len, "lock") != TEP_ERRNO__SUCCESS)
		err = mms_source_fail(src, -EINVAL, "lock-perf: cannot parse %s", path);
out:
	free(buf);
	close(fd);
	return err;
}

static int find_field(struct mms_source *src, struct tep_event *ev, const char *name,
		      struct tep_format_field **out)
{
	*out = tep_find_any_field(ev, name);
	if (!*out || (*out)->size < 1 || (*out)->size > 8)
		return mms_source_fail(src, -EINVAL, "lock-perf: lock:%s has no usable '%s' "
				       "field: this kernel's tracepoint is not what mmscope knows",
				       ev->name, name);
	return 0;
}

static int load_formats(struct mms_source *src, struct lock_perf *lp)
{
	struct tep_event *begin = NULL, *end = NULL;
	int err = mms_tracefs_ensure();

	if (err && access("/sys/kernel/tracing/events", R_OK) && errno == EACCES)
		return mms_source_fail(src, -EACCES, "lock-perf: cannot read the tracepoint "
				       "formats in /sys/kernel/tracing: permission denied: run as "
				       "root");
	if (err)
		return mms_source_fail(src, err, "lock-perf: tracefs is not mounted and mounting "
				       "it failed (%s): mount -t tracefs nodev /sys/kernel/tracing",
				       strerror(-err));
	tep_set_loglevel(TEP_LOG_NONE);
	lp->tep = tep_alloc();
	if (!lp->tep)
		return -ENOMEM;
	err = parse_format(src, lp, "contention_begin", &begin);
	if (!err)
		err = parse_format(src, lp, "contention_end", &end);
	if (!err)
		err = find_field(src, begin, "common_type", &lp->f_type);
	if (!err)
		err = find_field(src, begin, "lock_addr", &lp->f_begin_addr);
	if (!err)
		err = find_field(src, begin, "flags", &lp->f_flags);
	if (!err)
		err = find_field(src, end, "lock_addr", &lp->f_end_addr);
	if (err)
		return err;
	lp->begin_id = begin->id;
	lp->end_id = end->id;
	return 0;
}

static int add_evsel(struct lock_perf *lp, int id, bool begin)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.config = (uint64_t)id,
		.sample_period = 1,
		/* CGROUP (5.7+): the task's cgroup v2 id, for -G and --lock-cgroup. */
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			       PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_CGROUP,
		.disabled = 1,
		.exclude_callchain_user = 1,
		/* The end's stack is not used: one frame keeps the layout the same. */
		.sample_max_stack = (uint16_t)(begin ? lp->max_stack : 1),
		.watermark = 1,
		.wakeup_watermark = (uint32_t)(RING_PAGES * sysconf(_SC_PAGESIZE) / 4),
		.read_format = PERF_FORMAT_LOST,
		.sample_id_all = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		/* Side band for thread names and followed processes, once. */
		.task = begin,
		.comm = begin,
		.comm_exec = begin,
	};
	struct perf_evsel *evsel = perf_evsel__new(&attr);

	if (!evsel)
		return -ENOMEM;
	perf_evlist__add(lp->evlist, evsel);
	return 0;
}

static const char *paranoid(void)
{
	static char buf[16];
	int fd = open("/proc/sys/kernel/perf_event_paranoid", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return n > 0 ? buf : "?";
}

/* Is fd one of perf's?  (anon_inode:[perf_event]) */
static bool is_perf_fd(int fd)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = '\0';
	return !strcmp(link, "anon_inode:[perf_event]");
}

/* Highest-numbered descriptor open now, to bound the scan below. */
static int max_fd(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int max = -1;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (atoi(de->d_name) > max)
			max = atoi(de->d_name);
	closedir(d);
	return max;
}

/*
 * libperf 6.1 keeps its descriptors to itself (perf_evlist__poll only), but
 * the session polls one fd per source.  The evlist's descriptors are the
 * perf_event ones that appeared while it was opened (everything here runs
 * on one thread); they all go into one epoll set, which is the fd we give.
 */
static int collect_fds(struct mms_source *src, struct lock_perf *lp, const bool *before,
		       int before_max)
{
	int n = 0, top = max_fd();

	lp->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (lp->epfd < 0)
		return mms_source_fail(src, -errno, "lock-perf: epoll_create1: %s",
				       strerror(errno));
	for (int fd = 0; fd <= top; fd++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

		if ((fd <= before_max && before[fd]) || fd == lp->epfd || !is_perf_fd(fd))
			continue;
		if (epoll_ctl(lp->epfd, EPOLL_CTL_ADD, fd, &ev))
			return mms_source_fail(src, -errno, "lock-perf: epoll_ctl: %s",
					       strerror(errno));
		n++;
	}
	if (!n)
		return mms_source_fail(src, -ENODEV, "lock-perf: found no perf descriptors to "
				       "poll after opening the events");
	return 0;
}

/*
 * Open the events with what this kernel gives, best first: PERF_FORMAT_LOST
 * (6.0+; without it the LOST records alone count drops) and
 * PERF_SAMPLE_CGROUP (needs CONFIG_CGROUP_PERF; without it tasks have no
 * cgroup).  Either one missing makes the open fail with EINVAL.
 */
static int open_fallbacks(struct lock_perf *lp)
{
	int err = -EINVAL;

	for (int i = 0; i < 4 && err == -EINVAL; i++) {
		struct perf_evsel *evsel;

		lp->read_lost = !(i & 1);
		lp->sample_cgroup = !(i & 2);
		perf_evlist__for_each_evsel(lp->evlist, evsel) {
			struct perf_event_attr *a = perf_evsel__attr(evsel);

			a->read_format = lp->read_lost ? PERF_FORMAT_LOST : 0;
			a->sample_type = lp->sample_cgroup ? a->sample_type | PERF_SAMPLE_CGROUP :
				       a->sample_type & ~(uint64_t)PERF_SAMPLE_CGROUP;
		}
		err = perf_evlist__open(lp->evlist);
	}
	return err;
}

static int open_events(struct mms_source *src, struct lock_perf *lp)
{
	static bool libperf_ready;
	int err, before_max = max_fd();
	bool *before = calloc((size_t)(before_max > 0 ? before_max + 1 : 1), sizeof(*before));

	if (!before)
		return -ENOMEM;
	for (int fd = 0; fd <= before_max; fd++)
		before[fd] = fcntl(fd, F_GETFD) >= 0;
	if (!libperf_ready) {
		libperf_init(libperf_silent);	/* also sets libperf's page size */
		libperf_ready = true;
	}
	lp->cpus = perf_cpu_map__new(NULL);
	lp->threads = perf_thread_map__new_dummy();
	lp->evlist = perf_evlist__new();
	err = -ENOMEM;
	if (!lp->cpus || !lp->threads || !lp->evlist)
		goto out;
	err = add_evsel(lp, lp->begin_id, true);
	if (!err)
		err = add_evsel(lp, lp->end_id, false);
	if (err)
		goto out;
	perf_evlist__set_maps(lp->evlist, lp->cpus, lp->threads);
	err = open_fallbacks(lp);
	if (err) {
		err = err < 0 ? err : -EINVAL;
		if (err == -EACCES || err == -EPERM)
			mms_source_fail(src, err, "lock-perf: perf_event_open(lock:"
					"contention_begin) not permitted (perf_event_paranoid=%s): "
					"run as root or with CAP_PERFMON", paranoid());
		else
			mms_source_fail(src, err, "lock-perf: perf_event_open(lock:"
					"contention_begin) on all CPUs failed: %s", strerror(-err));
		goto out;
	}
	lp->opened = true;
	if (!lp->sample_cgroup && src->opts->nr_cgroups) {
		err = mms_source_fail(src, -EOPNOTSUPP, "lock-perf: this kernel's perf events "
				      "do not tell a task's cgroup (CONFIG_CGROUP_PERF is off), "
				      "so -G cannot filter: use the BPF lock source (--source bpf)");
		goto out;
	}
	if (perf_evlist__mmap(lp->evlist, RING_PAGES)) {
		err = -errno ? -errno : -ENOMEM;
		mms_source_fail(src, err, "lock-perf: cannot map the perf ring buffers (%ld KiB "
				"per CPU): %s: run as root or raise "
				"/proc/sys/kernel/perf_event_mlock_kb",
				RING_PAGES * sysconf(_SC_PAGESIZE) / 1024, strerror(-err));
		goto out;
	}
	lp->mapped = true;
	err = collect_fds(src, lp, before, before_max);
out:
	free(before);
	return err;
}

static int lock_perf_prepare(struct mms_source *src)
{
	struct lock_perf *lp = src->priv;
	uint32_t pool;
	int err;

	err = mms_lock_common_create(src->opts, mms_collectors_ksyms(), &lp->lc);
	if (err)
		return mms_source_fail(src, err, "lock-perf: %s", mms_lock_common_error());
	if (mms_collectors_ksyms())
		lp->traceiter = mms_ksyms_addr(mms_collectors_ksyms(),
					       "__traceiter_contention_begin");
	err = load_formats(src, lp);
	if (!err)
		err = open_events(src, lp);
	if (err)
		return err;
	/* Room for every record all rings can hold (64 bytes is the smallest), and more. */
	pool = (uint32_t)perf_cpu_map__nr(lp->cpus) *
	       (uint32_t)(RING_PAGES * sysconf(_SC_PAGESIZE) / 64) + LP_POOL_DEFAULT;
	return lp_engine_create(src->opts, lp->lc, pool, &lp->eng);
}

static int lock_perf_start(struct mms_source *src)
{
	struct lock_perf *lp = src->priv;

	lp_engine_seed_comms(lp->eng);
	perf_evlist__enable(lp->evlist);
	lp->enabled = true;
	return 0;
}

static int lock_perf_fd(struct mms_source *src)
{
	return ((struct lock_perf *)src->priv)->epfd;
}

/*
 * PERF_RECORD_SAMPLE, as add_evsel() asked: pid, tid; time; cpu, res;
 * callchain nr, ips; raw size, raw data (padded to 8 bytes with the size); cgroup
 * (when sample_cgroup).
 */
static void parse_sample(struct lock_perf *lp, const union perf_event *event)
{
	const uint64_t *p = (const uint64_t *)event->sample.array;
	const char *end = (const char *)event + event->header.size;
	struct lp_event *ev = lp_engine_slot(lp->eng);
	uint64_t nr, type, val;
	uint32_t raw_size, n;
	const char *raw;

	if ((const char *)(p + 4) > end)
		goto bad;
	ev->pid = (uint32_t)p[0];
	ev->tid = (uint32_t)(p[0] >> 32);
	ev->time = p[1];
	ev->cpu = (uint16_t)p[2];
	nr = p[3];
	if (nr > (uint64_t)(end - (const char *)(p + 4)) / 8)
		goto bad;
	raw = (const char *)(p + 4 + nr);
	if (raw + 4 > end)
		goto bad;
	memcpy(&raw_size, raw, 4);
	raw += 4;
	if (raw + raw_size + (lp->sample_cgroup ? sizeof(uint64_t) : 0) > end ||
	    !lp_field_u64(lp->f_type, raw, raw_size, &type))
		goto bad;
	ev->lock.cgroup = 0;
	if (lp->sample_cgroup)
		memcpy(&ev->lock.cgroup, raw + raw_size, sizeof(uint64_t));
	if (type == (uint64_t)lp->begin_id) {
		if (!lp_field_u64(lp->f_begin_addr, raw, raw_size, &ev->lock.addr) ||
		    !lp_field_u64(lp->f_flags, raw, raw_size, &val))
			goto bad;
		ev->kind = LP_BEGIN;
		ev->lock.flags = (uint32_t)val;
		n = lp_kernel_stack(lp->ips, lp->max_stack, p + 4, nr, mms_collectors_ksyms(),
				    lp->traceiter);
		ev->lock.stack = lp_engine_stack(lp->eng, lp->ips, n);
	} else if (type == (uint64_t)lp->end_id) {
		if (!lp_field_u64(lp->f_end_addr, raw, raw_size, &ev->lock.addr))
			goto bad;
		ev->kind = LP_END;
	} else {
		goto bad;
	}
	lp_engine_push(lp->eng);
	return;
bad:
	lp_engine_lost(lp->eng, MMS_LOST_PARSE, 1);
}

/* Side band: sample_id_all put pid, tid; time; cpu, res at the end of the record. */
static void parse_side(struct lock_perf *lp, const union perf_event *event)
{
	const size_t comm_off = offsetof(struct perf_record_comm, comm);
	struct lp_event *ev = lp_engine_slot(lp->eng);
	size_t size = event->header.size;
	uint64_t id[3];

	switch (event->header.type) {
	case PERF_RECORD_COMM:
		if (size < comm_off + sizeof(id))
			goto bad;
		ev->kind = LP_COMM;
		ev->pid = event->comm.pid;
		ev->tid = event->comm.tid;
		/* The name is NUL-padded to 8 bytes, not to 16. */
		memset(ev->comm, 0, LP_COMM_LEN);
		memcpy(ev->comm, event->comm.comm, size - comm_off - sizeof(id) < LP_COMM_LEN ?
		       size - comm_off - sizeof(id) : LP_COMM_LEN - 1);
		ev->comm[LP_COMM_LEN - 1] = '\0';
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (size < sizeof(event->fork) + sizeof(id))
			goto bad;
		ev->kind = event->header.type == PERF_RECORD_FORK ? LP_FORK : LP_EXIT;
		ev->pid = event->fork.pid;
		ev->tid = event->fork.tid;
		ev->fork.ppid = event->fork.ppid;
		ev->fork.ptid = event->fork.ptid;
		break;
	default:
		return;		/* throttling and the like: nothing to learn */
	}
	memcpy(id, (const char *)event + size - sizeof(id), sizeof(id));
	ev->time = id[1];
	ev->cpu = (uint16_t)id[2];
	lp_engine_push(lp->eng);
	return;
bad:
	lp_engine_lost(lp->eng, MMS_LOST_PARSE, 1);
}

/*
 * Reads every ring to its end into the pool, then processes what is older
 * than the horizon (the pass start; everything when final, after stop).
 * The pool holds more than all rings together plus a little, so it fills
 * up only when many records wait for the horizon: then what it holds is
 * processed at once to make room.
 */
static void consume(struct lock_perf *lp, bool final)
{
	uint64_t horizon = final ? UINT64_MAX : now_mono() - HORIZON_MARGIN_NS;
	struct perf_mmap *map;

	perf_evlist__for_each_mmap(lp->evlist, map, false) {
		union perf_event *event;

		if (perf_mmap__read_init(map) < 0)
			continue;
		for (;;) {
			if (!lp_engine_slot(lp->eng))
				lp_engine_process(lp->eng, UINT64_MAX);
			event = perf_mmap__read_event(map);
			if (!event)
				break;
			switch (event->header.type) {
			case PERF_RECORD_SAMPLE:
				parse_sample(lp, event);
				break;
			case PERF_RECORD_LOST:
				if (!lp->read_lost)
					lp_engine_lost(lp->eng, MMS_LOST_RING, event->lost.lost);
				break;
			case PERF_RECORD_LOST_SAMPLES:
				if (!lp->read_lost)
					lp_engine_lost(lp->eng, MMS_LOST_RING,
						       event->lost_samples.lost);
				break;
			default:
				parse_side(lp, event);
				break;
			}
		}
		/* No perf_mmap__read_done(): it would skip what arrived since. */
		perf_mmap__consume(map);
	}
	lp_engine_process(lp->eng, horizon);
}

static int lock_perf_poll_in(struct mms_source *src)
{
	struct lock_perf *lp = src->priv;
	struct epoll_event evs[16];

	/* Level-triggered readiness is reset by reading the perf fds' state. */
	while (epoll_wait(lp->epfd, evs, 16, 0) == 16)
		;
	consume(lp, false);
	return 0;
}

/*
 * What the rings dropped since the last drain, from the events' own counts:
 * known at once, not when the kernel next writes to the ring that dropped.
 * A count that cannot be read is left for the next drain.
 */
static void read_lost(struct lock_perf *lp)
{
	struct perf_evsel *evsel;
	uint64_t sum = 0;

	perf_evlist__for_each_evsel(lp->evlist, evsel) {
		for (int i = 0; i < perf_cpu_map__nr(lp->cpus); i++) {
			struct perf_counts_values v;

			if (perf_evsel__read(evsel, i, 0, &v))
				return;
			sum += v.lost;
		}
	}
	if (sum > lp->lost_read)
		lp_engine_lost(lp->eng, MMS_LOST_RING, sum - lp->lost_read);
	lp->lost_read = sum;
}

static int lock_perf_drain(struct mms_source *src, struct mms_store *st)
{
	struct lock_perf *lp = src->priv;

	if (!lp->eng)
		return -EAGAIN;
	if (lp->mapped)
		consume(lp, !lp->enabled);
	if (lp->opened && lp->read_lost)
		read_lost(lp);
	return lp_engine_flush(lp->eng, st);
}

static void lock_perf_stop(struct mms_source *src)
{
	struct lock_perf *lp = src->priv;

	if (lp->enabled)
		perf_evlist__disable(lp->evlist);
	lp->enabled = false;
}

static void lock_perf_destroy(struct mms_source *src)
{
	struct lock_perf *lp = src->priv;

	if (!lp)
		return;
	if (lp->epfd >= 0)
		close(lp->epfd);
	if (lp->mapped)
		perf_evlist__munmap(lp->evlist);
	if (lp->opened)
		perf_evlist__close(lp->evlist);
	if (lp->evlist) {
		struct perf_evsel *evsel;

		/* libperf 6.1's perf_evsel__delete() frees an evsel without putting its maps. */
		perf_evlist__for_each_evsel(lp->evlist, evsel) {
			perf_cpu_map__put(perf_evsel__cpus(evsel));
			perf_thread_map__put(perf_evsel__threads(evsel));
		}
		perf_evlist__delete(lp->evlist);	/* deletes the evsels too */
	}
	perf_cpu_map__put(lp->cpus);
	perf_thread_map__put(lp->threads);
	lp_engine_destroy(lp->eng);
	mms_lock_common_destroy(lp->lc);
	if (lp->tep)
		tep_free(lp->tep);
	free(lp);
	src->priv = NULL;
}

const struct mms_source_ops mms_lock_perf_ops = {
	.name = "lock-perf",
	.backend = "perf",
	.family = MMS_FAM_LOCK,
	.create = lock_perf_create,
	.prepare = lock_perf_prepare,
	.start = lock_perf_start,
	.fd = lock_perf_fd,
	.poll_in = lock_perf_poll_in,
	.drain = lock_perf_drain,
	.stop = lock_perf_stop,
	.destroy = lock_perf_destroy,
};
