// SPDX-License-Identifier: GPL-2.0
/*
 * The node_exporter textfile (include/mmscope/openmetrics.h): counters summed over every
 * committed interval, written in the Prometheus text exposition format that the textfile
 * collector parses (counters named *_total in their TYPE lines, as promtool wants them).
 *
 * Series are kept per family in insertion order and looked up by a hash of their label
 * text: at most MMS_OM_MAX_SERIES per family, so a linear scan of hashes is a few
 * hundred compares per row and the file stays small whatever the machine runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "intern.h"
#include "mmscope/escape.h"
#include "mmscope/mm_metrics.h"
#include "mmscope/openmetrics.h"
#include "mmscope/sample.h"

enum family { OM_LOCK, OM_MMAP, OM_VMA, OM_VMA_INFERRED, OM_RMAP, OM_RMAP_STOCK, OM_LOST, OM_NR };

/* Each family: up to two counters over the same labels, and the labels' names. */
static const struct family_desc {
	const char *name[2];
	const char *help[2];
	bool seconds[2];	/* the value is nanoseconds, written as seconds */
	const char *labels[3];
} families[OM_NR] = {
	[OM_LOCK] = { { "mmscope_lock_contentions_total", "mmscope_lock_wait_seconds_total" },
		     { "Contended waits for a kernel lock (lock:contention_begin/end).",
		       "Time spent waiting for a kernel lock." },
		     { false, true }, { "lock", "type", "process" } },
	[OM_MMAP] = { { "mmscope_mmap_lock_waits_total", "mmscope_mmap_lock_wait_seconds_total" },
		     { "Contended waits for a process's mmap_lock.",
		       "Time spent waiting for a process's mmap_lock." },
		     { false, true }, { "process", "mode" } },
	[OM_VMA] = { { "mmscope_vma_operations_total" },
		    { "VMA splits, merges, expands and shrinks the kernel performed "
		      "(patched tracepoints or fentry)." },
		    { false }, { "op" } },
	[OM_VMA_INFERRED] = { { "mmscope_vma_inferred_count_changes_total" },
			     { "Sum of mm->map_count increases (up) and decreases (down) across "
			       "VMA syscalls, where no VMA tracepoint or fentry works: not "
			       "splits or merges." },
			     { false }, { "direction" } },
	[OM_RMAP] = { { "mmscope_rmap_removals_total", "mmscope_rmap_pages_removed_total" },
		     { "rmap removals in try_to_unmap_one.",
		       "Pages those removals unmapped (a batch removes several at once)." },
		     { false, false }, { "folio" } },
	[OM_RMAP_STOCK] = { { "mmscope_rmap_reclaimed_pages_total" },
			   { "Pages reclaimed, from the stock vmscan tracepoints." },
			   { false }, { "path" } },
	[OM_LOST] = { { "mmscope_lost_events_total" },
		     { "Events mmscope could not count, by reason." },
		     { false }, { "reason" } },
};

struct series {
	uint64_t hash;
	char *labels;		/* '{a="x",b="y"}', escaped */
	uint64_t v[2];
};

struct fam {
	struct series *s;
	size_t nr, cap;
};

struct mms_openmetrics {
	int dir_fd;
	char dir[256];
	char host[128], kernel[160];
	struct fam fam[OM_NR];
	uint64_t intervals;
	uint64_t last_end_ns;
	unsigned long writes;
	char error[320];
};

/*
 * A label value as the text format wants it (\\, \" and \n escaped, the only escapes its
 * parsers accept), and safe for whoever cats the file: other control characters (C0, DEL,
 * C1) and invalid UTF-8 become '?'.  Values come from process names and file paths, which
 * anyone can choose.
 */
static void label_value(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		const unsigned char *start = p;
		int32_t cp = mms_utf8_next(&p);

		if (cp == '\\' || cp == '"')
			fprintf(f, "\\%c", (char)cp);
		else if (cp == '\n')
			fputs("\\n", f);
		else if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))	/* also invalid: -1 */
			fputc('?', f);
		else
			fwrite(start, 1, (size_t)(p - start), f);
	}
}

static char *labels_make(enum family fm, const char *const vals[])
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return NULL;
	fputc('{', m);
	for (int i = 0; i < 3 && families[fm].labels[i]; i++) {
		fprintf(m, "%s%s=\"", i ? "," : "", families[fm].labels[i]);
		label_value(m, vals[i] ? vals[i] : "");
		fputc('"', m);
	}
	fputc('}', m);
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The series of these label values; past the cap, the family's "other" series. */
static struct series *series_get(struct mms_openmetrics *om, enum family fm,
				 const char *const vals[])
{
	static const char *const other[3] = { "other", "other", "other" };
	struct fam *f = &om->fam[fm];
	char *labels = labels_make(fm, vals);
	uint64_t h;

	if (!labels)
		return NULL;
	for (int pass = 0; pass < 2; pass++) {
		h = mms_intern_hash(labels, strlen(labels));
		for (size_t i = 0; i < f->nr; i++)
			if (f->s[i].hash == h && !strcmp(f->s[i].labels, labels)) {
				free(labels);
				return &f->s[i];
			}
		if (f->nr < MMS_OM_MAX_SERIES || pass)
			break;
		free(labels);
		labels = labels_make(fm, other);
		if (!labels)
			return NULL;
	}
	if (f->nr == f->cap) {
		size_t nc = f->cap ? f->cap * 2 : 16;
		struct series *ns = realloc(f->s, nc * sizeof(*ns));

		if (!ns) {
			free(labels);
			return NULL;
		}
		f->s = ns;
		f->cap = nc;
	}
	f->s[f->nr] = (struct series){ .hash = h, .labels = labels };
	return &f->s[f->nr++];
}

static int add(struct mms_openmetrics *om, enum family fm, const char *const vals[],
	       uint64_t a, uint64_t b)
{
	struct series *s = series_get(om, fm, vals);

	if (!s)
		return -ENOMEM;
	s->v[0] += a;
	s->v[1] += b;
	return 0;
}

static const char *proc_name(const struct mms_store *st, uint32_t proc_id)
{
	const struct mms_task *t = mms_store_get_task(st, proc_id);

	return t ? mms_store_get_str(st, t->comm_id) : "system";
}

static int add_locks(struct mms_openmetrics *om, const struct mms_store *st,
		     const struct mms_interval *iv)
{
	for (uint32_t j = 0; j < iv->n_locks; j++) {
		const struct mms_lock_sample *s = &iv->locks[j];
		const struct mms_lock_info *l = mms_store_get_lock(st, s->lock_id);
		const char *vals[3] = { "unnamed", mms_lock_type_name(s->flags), "" };

		if (l && *mms_store_get_str(st, l->name_id))
			vals[0] = mms_store_get_str(st, l->name_id);
		if (l && l->owner_tgid)
			vals[2] = mms_store_get_str(st, l->owner_comm_id);
		if (add(om, OM_LOCK, vals, s->wait.count, s->wait.total))
			return -ENOMEM;
	}
	return 0;
}

static int add_metrics(struct mms_openmetrics *om, const struct mms_store *st,
		       const struct mms_interval *iv)
{
	static const struct {
		const char *metric;
		enum family fm;
		const char *label;
		bool total;	/* count the values' sum, not how many there were */
	} map[] = {
		{ MMS_M_VMA_SPLIT, OM_VMA, "split", false },
		{ MMS_M_VMA_SPLIT_FAILED, OM_VMA, "split_failed", false },
		{ MMS_M_VMA_MERGE, OM_VMA, "merge", false },
		{ MMS_M_VMA_EXPAND, OM_VMA, "expand", false },
		{ MMS_M_VMA_SHRINK, OM_VMA, "shrink", false },
		{ MMS_M_VMA_INFERRED_UP, OM_VMA_INFERRED, "up", true },
		{ MMS_M_VMA_INFERRED_DOWN, OM_VMA_INFERRED, "down", true },
		{ MMS_M_RMAP_STOCK_RECLAIM, OM_RMAP_STOCK, "reclaim_pages", true },
		{ MMS_M_RMAP_STOCK_SHRINK, OM_RMAP_STOCK, "shrink_inactive", true },
	};

	for (uint32_t j = 0; j < iv->n_metrics; j++) {
		const struct mms_metric_sample *m = &iv->metrics[j];
		const char *name = mms_store_get_str(st, m->metric_id);
		const char *vals[3] = { NULL };
		int e = 0;

		if (!strcmp(name, MMS_M_MMAP_WAIT_READ) || !strcmp(name, MMS_M_MMAP_WAIT_WRITE)) {
			vals[0] = proc_name(st, m->proc_id);
			vals[1] = !strcmp(name, MMS_M_MMAP_WAIT_READ) ? "read" : "write";
			e = add(om, OM_MMAP, vals, m->stat.count, m->stat.total);
		} else if (!strcmp(name, MMS_M_RMAP_BATCH_ANON) ||
			   !strcmp(name, MMS_M_RMAP_BATCH_FILE)) {
			vals[0] = !strcmp(name, MMS_M_RMAP_BATCH_ANON) ? "anon" : "file";
			e = add(om, OM_RMAP, vals, m->stat.count, m->stat.total);
		} else {
			for (size_t k = 0; k < sizeof(map) / sizeof(map[0]); k++) {
				if (strcmp(name, map[k].metric))
					continue;
				vals[0] = map[k].label;
				e = add(om, map[k].fm, vals,
					map[k].total ? m->stat.total : m->stat.count, 0);
				break;
			}
		}
		if (e)
			return e;
	}
	for (int r = 0; r < MMS_LOST_NR; r++) {
		const char *vals[3] = { mms_lost_reason_name(r) };

		if (iv->lost[r] && add(om, OM_LOST, vals, iv->lost[r], 0))
			return -ENOMEM;
	}
	return 0;
}

static void print_value(FILE *f, uint64_t v, bool seconds)
{
	if (seconds)
		fprintf(f, "%llu.%09llu\n", (unsigned long long)(v / 1000000000ULL),
			(unsigned long long)(v % 1000000000ULL));
	else
		fprintf(f, "%llu\n", (unsigned long long)v);
}

static void print_file(FILE *f, const struct mms_openmetrics *om)
{
	fputs("# HELP mmscope_info The mmscope that writes this file, and the kernel it "
	      "watches.\n# TYPE mmscope_info gauge\nmmscope_info{version=\"", f);
	label_value(f, MMS_VERSION);
	fputs("\",host=\"", f);
	label_value(f, om->host);
	fputs("\",kernel=\"", f);
	label_value(f, om->kernel);
	fputs("\"} 1\n", f);
	fprintf(f, "# HELP mmscope_intervals_total Intervals summed into this file.\n"
		   "# TYPE mmscope_intervals_total counter\nmmscope_intervals_total %llu\n",
		(unsigned long long)om->intervals);
	fprintf(f, "# HELP mmscope_last_interval_end_timestamp_seconds When the last interval "
		   "summed here ended.\n# TYPE mmscope_last_interval_end_timestamp_seconds "
		   "gauge\nmmscope_last_interval_end_timestamp_seconds ");
	print_value(f, om->last_end_ns, true);
	for (int fm = 0; fm < OM_NR; fm++) {
		const struct family_desc *d = &families[fm];

		for (int k = 0; k < 2 && d->name[k]; k++) {
			fprintf(f, "# HELP %s %s\n# TYPE %s counter\n", d->name[k], d->help[k],
				d->name[k]);
			for (size_t i = 0; i < om->fam[fm].nr; i++) {
				const struct series *s = &om->fam[fm].s[i];

				fprintf(f, "%s%s ", d->name[k], s->labels);
				print_value(f, s->v[k], d->seconds[k]);
			}
		}
	}
}

static void set_error(struct mms_openmetrics *om, const char *what, int e)
{
	if (!om->error[0])
		snprintf(om->error, sizeof(om->error), "--openmetrics %s: %s: %s", om->dir, what,
			 strerror(e));
}

int mms_openmetrics_create(const char *dir, const struct mms_om_meta *meta,
			   struct mms_openmetrics **out, char *errbuf, size_t errlen)
{
	struct mms_openmetrics *om;
	struct stat sb;
	int fd;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		snprintf(errbuf, errlen, "--openmetrics %s: %s%s", dir, strerror(e),
			 e == ELOOP ? " (a symbolic link: give the directory itself)" :
			 e == ENOTDIR ? " (give the directory node_exporter's "
					"--collector.textfile.directory reads)" : "");
		return -e;
	}
	if (fstat(fd, &sb) || faccessat(fd, ".", W_OK, AT_EACCESS)) {
		int e = errno;

		snprintf(errbuf, errlen, "--openmetrics %s: cannot write there: %s", dir,
			 strerror(e));
		close(fd);
		return -e;
	}
	om = calloc(1, sizeof(*om));
	if (!om) {
		close(fd);
		return -ENOMEM;
	}
	om->dir_fd = fd;
	snprintf(om->dir, sizeof(om->dir), "%s", dir);
	if (meta) {
		snprintf(om->host, sizeof(om->host), "%s", meta->host ? meta->host : "");
		snprintf(om->kernel, sizeof(om->kernel), "%s", meta->kernel ? meta->kernel : "");
	}
	*out = om;
	return 0;
}

int mms_openmetrics_write(struct mms_openmetrics *om, const struct mms_store *st,
			  const struct mms_interval *iv)
{
	static const char tmp[] = "." MMS_OM_FILE ".tmp";
	FILE *f;
	int fd, e;

	if (add_locks(om, st, iv) || add_metrics(om, st, iv)) {
		set_error(om, "out of memory", ENOMEM);
		return -ENOMEM;
	}
	om->intervals++;
	om->last_end_ns = iv->start_ns + iv->dur_ns;
	/* Readable by node_exporter, which runs as its own user. */
	unlinkat(om->dir_fd, tmp, 0);
	fd = openat(om->dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		e = errno;
		set_error(om, "cannot create " MMS_OM_FILE "'s temporary file", e);
		return -e;
	}
	f = fdopen(fd, "w");
	if (!f) {
		e = errno;
		close(fd);
		unlinkat(om->dir_fd, tmp, 0);
		set_error(om, "cannot write", e);
		return -e;
	}
	print_file(f, om);
	e = fflush(f) || ferror(f) ? errno ? errno : EIO : 0;
	if (fclose(f) && !e)
		e = errno ? errno : EIO;
	if (!e && renameat(om->dir_fd, tmp, om->dir_fd, MMS_OM_FILE))
		e = errno;
	if (e) {
		unlinkat(om->dir_fd, tmp, 0);
		set_error(om, "writing " MMS_OM_FILE " failed", e);
		return -e;
	}
	om->writes++;
	return 0;
}

const char *mms_openmetrics_error(const struct mms_openmetrics *om)
{
	return om ? om->error : "";
}

unsigned long mms_openmetrics_writes(const struct mms_openmetrics *om)
{
	return om ? om->writes : 0;
}

void mms_openmetrics_destroy(struct mms_openmetrics *om)
{
	if (!om)
		return;
	for (int fm = 0; fm < OM_NR; fm++) {
		for (size_t i = 0; i < om->fam[fm].nr; i++)
			free(om->fam[fm].s[i].labels);
		free(om->fam[fm].s);
	}
	close(om->dir_fd);
	free(om);
}
