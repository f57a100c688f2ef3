// SPDX-License-Identifier: GPL-2.0
/*
 * Reports: contention tables in perf lock contention's layout (text), JSON
 * and CSV, then the mm metrics and the lost events.  Called by `mmscope
 * report` for live runs and recordings alike.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mmscope/escape.h"
#include "mmscope/format.h"
#include "mmscope/hash.h"
#include "mmscope/mm_metrics.h"
#include "mmscope/report.h"
#include "mmscope/score.h"

static const char *const fam_key[MMS_FAM_NR] = {
	[MMS_FAM_LOCK] = "lock",
	[MMS_FAM_MMAP_LOCK] = "mmap_lock",
	[MMS_FAM_VMA] = "vma",
	[MMS_FAM_RMAP] = "rmap",
};

/* Metrics summed over the whole store per (metric, sub, process). */
struct metric_row {
	uint32_t metric_id;
	uint32_t sub;
	uint32_t tgid;
	uint32_t proc_id;
	struct mms_stat stat;
};

struct metric_rows {
	struct metric_row *rows;
	size_t nr, cap;
};

static uint64_t metric_key(uint32_t metric_id, uint32_t sub, uint32_t tgid)
{
	/* Metric ids and subs are small; tgids fit 22 bits (PID_MAX_LIMIT). */
	return (uint64_t)metric_id << 42 | (uint64_t)(sub & 0xfffff) << 22 | (tgid & 0x3fffff);
}

/* One pass over every interval, rows found through a hash: hour-long recordings stay fast. */
static int metric_rows_collect(const struct mms_store *st, struct metric_rows *out)
{
	struct mms_hash idx = { 0 };	/* metric_key() -> row index + 1 */
	uint32_t n = mms_store_count(st);
	int err = 0;

	for (uint32_t i = 0; i < n && !err; i++) {
		const struct mms_interval *iv = mms_store_at(st, i);

		for (uint32_t j = 0; j < iv->n_metrics; j++) {
			const struct mms_metric_sample *m = &iv->metrics[j];
			const struct mms_task *t = mms_store_get_task(st, m->proc_id);
			uint32_t tgid = t ? t->tgid : 0, h;
			uint64_t key = metric_key(m->metric_id, m->sub, tgid);
			int found = mms_hash_probe(&idx, key, &h);

			if (found < 0) {
				err = found;
				break;
			}
			if (!found) {
				if (out->nr == out->cap) {
					size_t cap = out->cap ? out->cap * 2 : 64;
					struct metric_row *p = realloc(out->rows, cap * sizeof(*p));

					if (!p) {
						err = -ENOMEM;
						break;
					}
					out->rows = p;
					out->cap = cap;
				}
				memset(&out->rows[out->nr], 0, sizeof(out->rows[0]));
				out->rows[out->nr].metric_id = m->metric_id;
				out->rows[out->nr].sub = m->sub;
				out->rows[out->nr].tgid = tgid;
				out->rows[out->nr].proc_id = m->proc_id;
				mms_hash_set(&idx, h, key, (uint32_t)out->nr++);
			}
			mms_stat_merge(&out->rows[idx.vals[h] - 1].stat, &m->stat);
		}
	}
	mms_hash_free(&idx);
	return err;
}

static const struct mms_store *sort_store;

static int cmp_metric(const void *a, const void *b)
{
	const struct metric_row *x = a, *y = b;
	int c = strcmp(mms_store_get_str(sort_store, x->metric_id),
		       mms_store_get_str(sort_store, y->metric_id));

	if (c)
		return c;
	if (x->sub != y->sub)
		return x->sub < y->sub ? -1 : 1;
	return x->tgid < y->tgid ? -1 : x->tgid > y->tgid;
}

static double store_seconds(const struct mms_store *st)
{
	uint64_t ns = 0;

	for (uint32_t i = 0; i < mms_store_count(st); i++)
		ns += mms_store_at(st, i)->dur_ns;
	return (double)ns / 1e9;
}

static void lost_totals(const struct mms_store *st, uint64_t lost[MMS_LOST_NR])
{
	memset(lost, 0, sizeof(uint64_t) * MMS_LOST_NR);
	for (uint32_t i = 0; i < mms_store_count(st); i++)
		for (int r = 0; r < MMS_LOST_NR; r++)
			lost[r] += mms_store_at(st, i)->lost[r];
}

static const char *proc_comm(const struct mms_store *st, uint32_t proc_id)
{
	const struct mms_task *t = mms_store_get_task(st, proc_id);

	return t ? mms_store_get_str(st, t->comm_id) : "";
}

/* A metric row's pid and comm columns: "-" and "<comm>" for short-lived processes. */
static void proc_cols(const struct mms_store *st, const struct metric_row *x, char *pid,
		      size_t pid_len, char *comm, size_t comm_len)
{
	if (mms_tgid_short(x->tgid)) {
		snprintf(pid, pid_len, "-");
		char e[64];

		mms_esc_text(e, sizeof(e), proc_comm(st, x->proc_id));
		snprintf(comm, comm_len, "<%s>", e);
		return;
	}
	snprintf(pid, pid_len, "%u", x->tgid);
	mms_esc_text(comm, comm_len, proc_comm(st, x->proc_id));
}

static const char *last_col_name(enum mms_group by)
{
	switch (by) {
	case MMS_BY_LOCK:
		return "lock";
	case MMS_BY_TASK:
	case MMS_BY_PROCESS:
		return "comm";
	case MMS_BY_TYPE:
		return "";
	case MMS_BY_STACK:
		return "caller (of the stack)";
	case MMS_BY_CGROUP:
		return "cgroup";
	case MMS_BY_OWNER:
		return "owner  (where it held the lock)";
	default:
		return "caller";
	}
}

static void print_stack(FILE *f, const struct mms_store *st, uint32_t stack_id)
{
	const struct mms_stack *s = mms_store_get_stack(st, stack_id);

	for (uint32_t i = 0; s && i < s->nr; i++) {
		fprintf(f, "\t\t\t%#llx  ", (unsigned long long)s->ips[i]);
		mms_esc_fputs(f, mms_store_get_str(st, s->sym_ids[i]));
		fputc('\n', f);
	}
}

/* A task row's pid (tid by task): "-" for short-lived processes shown together. */
static void row_pid(const struct mms_store *st, enum mms_group by, const struct mms_row *r,
		    char *buf, size_t len)
{
	const struct mms_task *t = mms_store_get_task(st, by == MMS_BY_OWNER ?
						      mms_owner_task(r->key) : r->first_task);

	if (by == MMS_BY_OWNER && (!t || !t->tid))
		snprintf(buf, len, "-");
	else if (t && mms_tgid_short(t->tgid))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%u", !t ? 0 : by == MMS_BY_PROCESS ? t->tgid : t->tid);
}

static const struct {
	const char *name;	/* -F, as perf lock contention */
	const char *text;	/* text header */
	const char *csv;	/* CSV header */
	bool time;
} field_tab[MMS_F_NR] = {
	[MMS_F_CONTENDED] = { "contended", "contended", "contended", false },
	[MMS_F_WAIT_TOTAL] = { "wait_total", "total wait", "wait_total_ns", true },
	[MMS_F_WAIT_MAX] = { "wait_max", "max wait", "wait_max_ns", true },
	[MMS_F_WAIT_MIN] = { "wait_min", "min wait", "wait_min_ns", true },
	[MMS_F_AVG_WAIT] = { "avg_wait", "avg wait", "avg_wait_ns", true },
	[MMS_F_P50] = { "p50", "p50 wait", "p50_ns", true },
	[MMS_F_P99] = { "p99", "p99 wait", "p99_ns", true },
};

int mms_report_fields_parse(const char *list, uint8_t out[MMS_F_NR], const char **bad,
			    size_t *bad_len)
{
	const char *p = list;
	int n = 0;

	for (;;) {
		size_t len = strcspn(p, ",");
		int f;

		for (f = 0; f < MMS_F_NR; f++)
			if (strlen(field_tab[f].name) == len && !strncmp(p, field_tab[f].name, len))
				break;
		for (int i = 0; f < MMS_F_NR && i < n; i++)
			if (out[i] == f)
				f = MMS_F_NR;	/* twice */
		if (f == MMS_F_NR) {
			if (bad) {
				*bad = p;
				*bad_len = len;
			}
			return -EINVAL;
		}
		out[n++] = (uint8_t)f;
		if (!p[len])
			return n;
		p += len + 1;
	}
}

static uint64_t field_value(const struct mms_stat *s, int f)
{
	switch (f) {
	case MMS_F_CONTENDED:
		return s->count;
	case MMS_F_WAIT_TOTAL:
		return s->total;
	case MMS_F_WAIT_MAX:
		return s->max;
	case MMS_F_WAIT_MIN:
		return s->min;
	case MMS_F_AVG_WAIT:
		return mms_stat_avg(s);
	case MMS_F_P50:
		return mms_stat_percentile(s, 50);
	default:
		return mms_stat_percentile(s, 99);
	}
}

/* The columns a table shows: -F's, or the default (perf's four, and p50/p99 when asked). */
static int fields_of(const struct mms_report_opts *o, uint8_t out[MMS_F_NR])
{
	static const uint8_t def[] = { MMS_F_CONTENDED, MMS_F_WAIT_TOTAL, MMS_F_WAIT_MAX,
				       MMS_F_AVG_WAIT, MMS_F_P50, MMS_F_P99 };
	int n = o->percentiles ? 6 : 4;

	if (o->nr_fields) {
		memcpy(out, o->fields, (size_t)o->nr_fields);
		return o->nr_fields;
	}
	memcpy(out, def, (size_t)n);
	return n;
}

/* An owners row of a real thread (not unknown, readers or none). */
static bool owner_is_thread(const struct mms_store *st, const struct mms_row *r)
{
	const struct mms_task *t = mms_store_get_task(st, mms_owner_task(r->key));

	return t && t->tid;
}

static void text_rows(FILE *f, const struct mms_store *st, const struct mms_report_opts *o,
		      const struct mms_rows *rows)
{
	bool owners = o->by == MMS_BY_OWNER;
	bool tasks = o->by == MMS_BY_TASK || o->by == MMS_BY_PROCESS || owners;
	bool mid = o->by != MMS_BY_CGROUP;	/* perf's cgroup table has no type column */
	uint8_t fl[MMS_F_NR];
	int nf = fields_of(o, fl);
	char b[32];

	for (int k = 0; k < nf; k++)
		fprintf(f, k ? "%12s " : "%10s ", field_tab[fl[k]].text);
	if (mid)
		fprintf(f, "  %10s", tasks ? "pid" : "type");
	fprintf(f, "   %s\n\n", last_col_name(o->by));
	for (size_t i = 0; i < rows->nr; i++) {
		const struct mms_row *r = &rows->rows[i];

		if (o->entries && (int)i >= o->entries)
			break;
		for (int k = 0; k < nf; k++) {
			uint64_t v = field_value(&r->wait, fl[k]);

			if (field_tab[fl[k]].time) {
				mms_fmt_time(b, sizeof(b), v, 12);
				fprintf(f, "%s ", b);
			} else {
				fprintf(f, k ? "%12llu " : "%10llu ", (unsigned long long)v);
			}
		}
		if (tasks)
			row_pid(st, o->by, r, b, sizeof(b));
		if (mid)
			fprintf(f, "  %10s", tasks ? b : mms_lock_type_name(r->flags));
		fputs("   ", f);
		mms_esc_fputs(f, r->label);
		if (owners && r->name_id) {
			fputs("  ", f);
			mms_esc_fputs(f, mms_store_get_str(st, r->name_id));
		} else if (owners && owner_is_thread(st, r)) {
			fputs("  (no stack: it was running)", f);
		}
		fputc('\n', f);
		if (o->stacks)
			print_stack(f, st, owners ? mms_owner_stack(r->key) : r->first_stack);
	}
}

/* What a metric's sub-key means, for people: "mprotect", "prev/existing", "order 9". */
static void sub_label(const char *metric, uint32_t sub, char *buf, size_t len)
{
	const char *sc;

	if (!strcmp(metric, MMS_M_VMA_INFERRED_SHORT)) {
		snprintf(buf, len, "processes");
	} else if (!strncmp(metric, "vma.inferred.", 13)) {
		sc = mms_vma_syscall_name(sub);
		if (sc)
			snprintf(buf, len, "%s", sc);
		else
			snprintf(buf, len, "syscall %u", sub);
	} else if (!strcmp(metric, MMS_M_VMA_MERGE)) {
		snprintf(buf, len, "%s/%s%s", mms_vma_merge_kind_name(mms_vma_sub_kind(sub)),
			 mms_vma_origin_name(mms_vma_sub_origin(sub)),
			 sub & MMS_VMA_FILE ? "/file" : "");
	} else if (!strcmp(metric, MMS_M_VMA_SPLIT)) {
		snprintf(buf, len, "%s", sub == MMS_VMA_SPLIT_NEW_BELOW ? "new below" : "new above");
	} else if (!strcmp(metric, MMS_M_VMA_LOCK_KERNEL) && mms_vma_lock_kernel_name(sub)) {
		snprintf(buf, len, "%s", mms_vma_lock_kernel_name(sub));
	} else if (!strncmp(metric, "rmap.batch", 10)) {
		snprintf(buf, len, "order %u", sub);
	} else {
		snprintf(buf, len, sub ? "%u" : "", sub);
	}
}

/* Waits and hold times are nanoseconds; everything else is a plain number. */
static bool metric_is_time(const char *metric)
{
	return strstr(metric, ".wait.") || strstr(metric, ".hold.");
}

/* name decides the units; label is what the line shows in the metric column. */
static void text_metric_line(FILE *f, const char *name, const char *label, const char *sub,
			     const char *pid, const char *comm, const struct mms_stat *stat,
			     double secs)
{
	char tot[32], avg[32], el[160], es[64];

	/* A recording's metric names and sub-keys are outside text too. */
	mms_esc_text(el, sizeof(el), label);
	mms_esc_text(es, sizeof(es), sub);
	label = el;
	sub = es;
	if (metric_is_time(name)) {
		mms_fmt_time(tot, sizeof(tot), stat->total, 12);
		mms_fmt_time(avg, sizeof(avg), mms_stat_avg(stat), 12);
	} else {
		snprintf(tot, sizeof(tot), "%12llu", (unsigned long long)stat->total);
		snprintf(avg, sizeof(avg), "%12.2f", stat->count ?
			 (double)stat->total / (double)stat->count : 0.0);
	}
	fprintf(f, "%-26s %-14s %8s %-15s %10llu %10.1f %s %s\n", label, sub, pid, comm,
		(unsigned long long)stat->count, secs > 0 ? (double)stat->count / secs : 0, tot,
		avg);
}

static int cmp_count_desc(const void *a, const void *b)
{
	const struct metric_row *const *x = a, *const *y = b;

	if ((*x)->stat.count != (*y)->stat.count)
		return (*x)->stat.count > (*y)->stat.count ? -1 : 1;
	return (*x)->tgid < (*y)->tgid ? -1 : (*x)->tgid > (*y)->tgid;
}

/*
 * Per metric and detail: the whole system, then the busiest processes
 * (-E of them, 5 by default); JSON has every process.
 */
static void text_metrics(FILE *f, const struct mms_store *st, const struct metric_rows *mr,
			 double secs, int entries)
{
	const struct metric_row **grp;
	int top = entries > 0 ? entries : 5;

	if (!mr->nr)
		return;
	grp = malloc(mr->nr * sizeof(*grp));
	if (!grp)
		return;
	fprintf(f, "\n%-26s %-14s %8s %-15s %10s %10s %12s %12s\n", "metric", "detail", "pid",
		"comm", "count", "count/s", "total", "avg");
	for (size_t i = 0; i < mr->nr;) {
		const char *name = mms_store_get_str(st, mr->rows[i].metric_id);
		struct mms_stat all = { 0 };
		size_t j = i, n = 0;
		char sub[32], pid[16], comm[72];

		/* Rows are sorted by metric, sub, tgid: one group at a time. */
		while (j < mr->nr && mr->rows[j].metric_id == mr->rows[i].metric_id &&
		       mr->rows[j].sub == mr->rows[i].sub) {
			mms_stat_merge(&all, &mr->rows[j].stat);
			grp[n++] = &mr->rows[j++];
		}
		sub_label(name, mr->rows[i].sub, sub, sizeof(sub));
		if (n == 1) {
			proc_cols(st, grp[0], pid, sizeof(pid), comm, sizeof(comm));
			text_metric_line(f, name, name, sub, grp[0]->tgid ? pid : "-",
					 grp[0]->tgid ? comm : "(system)", &grp[0]->stat, secs);
			i = j;
			continue;
		}
		text_metric_line(f, name, name, sub, "-", "(all)", &all, secs);
		qsort(grp, n, sizeof(*grp), cmp_count_desc);
		for (size_t k = 0; k < n && (int)k < top; k++) {
			proc_cols(st, grp[k], pid, sizeof(pid), comm, sizeof(comm));
			text_metric_line(f, name, "", "", pid, comm, &grp[k]->stat, secs);
		}
		if (n > (size_t)top)
			fprintf(f, "%-26s %-14s %8s %zu more processes (--json lists them)\n", "", "",
				"", n - (size_t)top);
		i = j;
	}
	free(grp);
}

static void text_footer(FILE *f, const struct mms_report_meta *m, const uint64_t lost[])
{
	bool any = false;

	for (int r = 0; r < MMS_LOST_NR; r++)
		if (lost[r]) {
			fprintf(f, "%s%s %llu", any ? ", " : "\nlost events (not in the table): ",
				mms_lost_reason_name(r), (unsigned long long)lost[r]);
			any = true;
		}
	if (any)
		fputc('\n', f);
	for (int fam = 0; m && fam < MMS_FAM_NR; fam++) {
		if (!m->fam_source[fam] && m->fam_why[fam] && fam != MMS_FAM_MMAP_LOCK) {
			fprintf(f, "%s: unavailable: ", mms_family_name(fam));
		} else if (m->fam_source[fam] && m->fam_why[fam]) {
			fprintf(f, "%s: ", mms_family_name(fam));
			mms_esc_fputs(f, m->fam_source[fam]);
			fputs(": ", f);
		} else {
			continue;
		}
		mms_esc_fputs(f, m->fam_why[fam]);
		fputc('\n', f);
	}
	for (int fam = 0; m && fam < MMS_FAM_NR; fam++) {
		if (!m->fam_failed[fam])
			continue;
		fprintf(f, "%s: FAILED during the run (its data stops there): ",
			mms_family_name(fam));
		mms_esc_fputs(f, m->fam_failed[fam]);
		fputc('\n', f);
	}
	if (m && m->evicted)
		fprintf(f, "note: the oldest %llu intervals fell out of the history window and are "
			"not in these totals\n", (unsigned long long)m->evicted);
	if (m && m->message) {
		mms_esc_fputs(f, m->message);
		fputc('\n', f);
	}
}

static void json_str(FILE *f, const char *s)
{
	mms_esc_fput_json(f, s);
}

void mms_report_run_json(FILE *f, const struct mms_rec_run *run)
{
	if (!run || !run->present) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"index\": %u, \"count\": %u, \"status\": %d, \"interrupted\": %s, "
		"\"score\": ", run->index, run->count, (int)run->status,
		run->interrupted ? "true" : "false");
	if (run->has_score)
		fprintf(f, "%.17g", run->score);
	else
		fputs("null", f);
	fputs(", \"text\": ", f);
	json_str(f, run->text);
	fputs(", \"name\": ", f);
	json_str(f, run->name);
	fputs(", \"unit\": ", f);
	json_str(f, run->unit);
	fprintf(f, ", \"lower_is_better\": %s, \"matches\": %u, \"source\": ",
		run->lower_better ? "true" : "false", run->matches);
	json_str(f, run->source);
	fputs(", \"error\": ", f);
	json_str(f, run->error);
	fputc('}', f);
}

static void json_stat(FILE *f, const struct mms_stat *s)
{
	fprintf(f, "\"contended\": %llu, \"wait_total_ns\": %llu, \"wait_max_ns\": %llu, "
		"\"wait_min_ns\": %llu, \"avg_wait_ns\": %llu, \"p50_ns\": %llu, \"p99_ns\": %llu",
		(unsigned long long)s->count, (unsigned long long)s->total,
		(unsigned long long)s->max, (unsigned long long)s->min,
		(unsigned long long)mms_stat_avg(s),
		(unsigned long long)mms_stat_percentile(s, 50),
		(unsigned long long)mms_stat_percentile(s, 99));
}

/* A stack's symbols as a JSON array. */
static void json_stack(FILE *f, const struct mms_store *st, const struct mms_stack *s)
{
	fputc('[', f);
	for (uint32_t i = 0; s && i < s->nr; i++) {
		fputs(i ? ", " : "", f);
		json_str(f, mms_store_get_str(st, s->sym_ids[i]));
	}
	fputc(']', f);
}

/* --lock-owner: the owner (nulls when unknown) and its stack ([] when not taken). */
static void json_owner(FILE *f, const struct mms_store *st, const struct mms_row *r)
{
	const struct mms_task *t = mms_store_get_task(st, mms_owner_task(r->key));

	if (t && t->tid)
		fprintf(f, ", \"owner_pid\": %u, \"owner_tid\": %u, \"owner_comm\": ", t->tgid,
			t->tid);
	else
		fputs(", \"owner_pid\": null, \"owner_tid\": null, \"owner_comm\": ", f);
	if (t)
		json_str(f, mms_store_get_str(st, t->comm_id));
	else
		fputs("null", f);
	fputs(", \"owner_stack\": ", f);
	json_stack(f, st, mms_store_get_stack(st, mms_owner_stack(r->key)));
}

static void json_row(FILE *f, const struct mms_store *st, const struct mms_report_opts *o,
		     const struct mms_row *r)
{
	const struct mms_lock_info *l = mms_store_get_lock(st, r->first_lock);
	const struct mms_task *t = mms_store_get_task(st, r->first_task);
	const struct mms_stack *s = mms_store_get_stack(st, r->first_stack);
	int last = MMS_HIST_SLOTS - 1;

	fputs("    {\"name\": ", f);
	json_str(f, r->label);
	fputs(", \"type\": ", f);
	json_str(f, mms_lock_type_name(r->flags));
	fputs(", ", f);
	json_stat(f, &r->wait);
	if (o->by == MMS_BY_LOCK && l) {
		fprintf(f, ", \"kind\": \"%s\", \"addr\": \"%#llx\", \"lock_name\": ",
			mms_lock_kind_name(l->kind), (unsigned long long)l->addr);
		json_str(f, mms_store_get_str(st, l->name_id));
		fputs(", \"detail\": ", f);
		json_str(f, mms_store_get_str(st, l->detail_id));
		fprintf(f, ", \"owner_pid\": %u", l->owner_tgid);
	}
	if ((o->by == MMS_BY_TASK || o->by == MMS_BY_PROCESS) && t) {
		bool group = mms_tgid_short(t->tgid);

		/* Short-lived processes shown together: no pid, the name they share. */
		fprintf(f, ", \"pid\": %u, \"tgid\": %u, \"short_lived\": %s, \"comm\": ",
			group ? 0 : o->by == MMS_BY_TASK ? t->tid : t->tgid, group ? 0 : t->tgid,
			group ? "true" : "false");
		json_str(f, mms_store_get_str(st, t->comm_id));
	}
	if (o->by == MMS_BY_OWNER)
		json_owner(f, st, r);
	if ((o->by == MMS_BY_TASK || o->by == MMS_BY_PROCESS || o->by == MMS_BY_CGROUP) && t) {
		/* The cgroup v2 path of the (first) task, null when not known. */
		fputs(", \"cgroup\": ", f);
		if (t->cgroup_id)
			json_str(f, mms_store_get_str(st, t->cgroup_id));
		else
			fputs("null", f);
	}
	while (last > 0 && !r->wait.hist[last])
		last--;
	fputs(", \"hist_log2_ns\": [", f);
	for (int i = 0; i <= last; i++)
		fprintf(f, "%s%u", i ? ", " : "", r->wait.hist[i]);
	fputs("]", f);
	if (o->stacks && s && o->by != MMS_BY_OWNER) {
		fputs(", \"stack\": ", f);
		json_stack(f, st, s);
	}
	fputs("}", f);
}

static void json_print(FILE *f, const struct mms_store *st, const struct mms_report_opts *o,
		       const struct mms_report_meta *m, const struct mms_rows *rows,
		       const struct metric_rows *mr, const uint64_t lost[], double secs)
{
	struct mms_stat tot = { 0 };
	size_t shown = rows->nr;
	char sub[32];

	if (o->entries && (size_t)o->entries < shown)
		shown = (size_t)o->entries;
	fprintf(f, "{\n  \"mmscope\": \"%s\",\n  \"host\": ", MMS_VERSION);
	json_str(f, m ? m->host : "");
	fputs(",\n  \"kernel\": ", f);
	json_str(f, m ? m->kernel : "");
	fputs(",\n  \"target\": ", f);
	json_str(f, m ? m->target : "");
	fprintf(f, ",\n  \"start_ns\": %llu,\n  \"duration_s\": %.3f,\n  \"intervals\": %u,\n",
		(unsigned long long)(m ? m->start_ns : 0), secs, mms_store_count(st));
	fprintf(f, "  \"by\": \"%s\",\n  \"sort\": \"%s\",\n  \"sources\": {",
		mms_group_name(o->by), mms_sort_name(o->sort));
	for (int fam = 0; fam < MMS_FAM_NR; fam++) {
		fprintf(f, "%s\n    \"%s\": {\"source\": ", fam ? "," : "", fam_key[fam]);
		if (m && m->fam_source[fam]) {
			json_str(f, m->fam_source[fam]);
			fputs(", \"backend\": ", f);
			json_str(f, m->fam_backend[fam]);
			if (m->fam_why[fam]) {
				/* What the source cannot measure on this kernel. */
				fputs(", \"note\": ", f);
				json_str(f, m->fam_why[fam]);
			}
		} else {
			fputs("null, \"why\": ", f);
			json_str(f, m && m->fam_why[fam] ? m->fam_why[fam] : "not recorded");
		}
		/* A source that stopped working mid-run: its data ends there. */
		fputs(", \"failed\": ", f);
		if (m && m->fam_failed[fam])
			json_str(f, m->fam_failed[fam]);
		else
			fputs("null", f);
		fputs("}", f);
	}
	fputs("\n  },\n  \"rows\": [\n", f);
	for (size_t i = 0; i < shown; i++) {
		json_row(f, st, o, &rows->rows[i]);
		fputs(i + 1 < shown ? ",\n" : "\n", f);
	}
	for (size_t i = 0; i < rows->nr; i++)
		mms_stat_merge(&tot, &rows->rows[i].wait);
	fputs("  ],\n  \"totals\": {", f);
	json_stat(f, &tot);
	fputs("},\n  \"lost\": {", f);
	for (int r = 0; r < MMS_LOST_NR; r++)
		fprintf(f, "%s\"%s\": %llu", r ? ", " : "", mms_lost_reason_name(r),
			(unsigned long long)lost[r]);
	fputs("},\n  \"metrics\": [", f);
	for (size_t i = 0; i < mr->nr; i++) {
		const struct metric_row *x = &mr->rows[i];

		fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
		json_str(f, mms_store_get_str(st, x->metric_id));
		sub_label(mms_store_get_str(st, x->metric_id), x->sub, sub, sizeof(sub));
		fprintf(f, ", \"sub\": %u, \"detail\": \"%s\", \"pid\": %u, \"short_lived\": %s, "
			"\"comm\": ", x->sub, sub, mms_tgid_short(x->tgid) ? 0 : x->tgid,
			mms_tgid_short(x->tgid) ? "true" : "false");
		json_str(f, x->tgid ? proc_comm(st, x->proc_id) : "");
		fprintf(f, ", \"count\": %llu, \"total\": %llu, \"min\": %llu, \"max\": %llu, "
			"\"per_sec\": %.3f}", (unsigned long long)x->stat.count,
			(unsigned long long)x->stat.total, (unsigned long long)x->stat.min,
			(unsigned long long)x->stat.max,
			secs > 0 ? (double)x->stat.count / secs : 0.0);
	}
	fprintf(f, "%s],\n  \"evicted_intervals\": %llu,\n  \"run\": ", mr->nr ? "\n  " : "",
		(unsigned long long)(m ? m->evicted : 0));
	mms_report_run_json(f, m ? m->run : NULL);
	fputs(",\n  \"message\": ", f);
	if (m && m->message)
		json_str(f, m->message);
	else
		fputs("null", f);
	fputs("\n}\n", f);
}

static void csv_print(FILE *f, const struct mms_report_opts *o, const struct mms_rows *rows)
{
	static const uint8_t all[] = { MMS_F_CONTENDED, MMS_F_WAIT_TOTAL, MMS_F_WAIT_MAX,
				       MMS_F_WAIT_MIN, MMS_F_AVG_WAIT, MMS_F_P50, MMS_F_P99 };
	const char *sep = o->sep ? o->sep : ",";
	/* Every statistic unless -F chose some. */
	const uint8_t *fl = o->nr_fields ? o->fields : all;
	int nf = o->nr_fields ? o->nr_fields : MMS_F_NR;

	for (int k = 0; k < nf; k++)
		fprintf(f, "%s%s", field_tab[fl[k]].csv, sep);
	fprintf(f, "type%sname\n", sep);
	for (size_t i = 0; i < rows->nr; i++) {
		const struct mms_stat *s = &rows->rows[i].wait;

		if (o->entries && (int)i >= o->entries)
			break;
		for (int k = 0; k < nf; k++)
			fprintf(f, "%llu%s", (unsigned long long)field_value(s, fl[k]), sep);
		mms_esc_fput_csv(f, mms_lock_type_name(rows->rows[i].flags), sep);
		fputs(sep, f);
		mms_esc_fput_csv(f, rows->rows[i].label, sep);
		fputc('\n', f);
	}
}

/*
 * One frame of a folded line, escaped as all text is (mms_esc_text).  ';' separates frames
 * and the last space the value, so ';' (which a process can put in its name, and so in a
 * lock's label) becomes ':'.  Spaces stay: the folded readers split the value off at the
 * last one.  strip drops the symbol's "+0x1f/0x40".
 */
static void folded_frame(FILE *f, const char *s, bool strip)
{
	char buf[4 * 512 + 1];

	mms_esc_text(buf, sizeof(buf), s);
	for (const char *p = buf; *p; p++) {
		if (strip && *p == '+')
			break;
		fputc(*p == ';' ? ':' : *p, f);
	}
}

struct folded_line {
	char *text;
	uint64_t value;
};

static int cmp_folded_text(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->text, ((const struct folded_line *)b)->text);
}

static int cmp_folded_value(const void *a, const void *b)
{
	const struct folded_line *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? 1 : -1;
	return strcmp(x->text, y->text);
}

/*
 * Stacks that differ only in offsets are one line once the offsets are dropped: the lines
 * are made, sorted by text and merged, then printed largest first (flamegraph.pl does not
 * mind the order; a person reading the file does).
 */
static int folded_print(FILE *f, const struct mms_store *st, const struct mms_report_opts *o,
			const struct mms_query *lq)
{
	struct mms_query q = *lq;
	struct mms_rows rows = { 0 };
	struct folded_line *lines = NULL;
	size_t nr = 0, w;
	char label[512];
	int err;

	q.by = MMS_BY_STACK;
	q.stack_per_lock = o->by == MMS_BY_LOCK;
	q.no_labels = true;
	q.no_sort = true;
	err = mms_query_locks(st, &q, &rows);
	if (err)
		return err;
	lines = calloc(rows.nr ? rows.nr : 1, sizeof(*lines));
	if (!lines) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < rows.nr; i++) {
		const struct mms_row *r = &rows.rows[i];
		const struct mms_stack *s = mms_store_get_stack(st, r->first_stack);
		uint64_t v = o->sort == MMS_SORT_CONTENDED ? r->wait.count : r->wait.total;
		size_t len = 0;
		FILE *m;

		if (!v)
			continue;
		m = open_memstream(&lines[nr].text, &len);
		if (!m) {
			err = -ENOMEM;
			goto out;
		}
		if (q.stack_per_lock) {
			mms_store_lock_label(st, r->first_lock, label, sizeof(label));
			folded_frame(m, label, false);
			fputc(';', m);
		}
		if (!s || !s->nr)
			fputs("[no stack]", m);
		for (uint32_t k = s ? s->nr : 0; k-- > 0;) {
			folded_frame(m, mms_store_get_str(st, s->sym_ids[k]), true);
			if (k)
				fputc(';', m);
		}
		if (fclose(m)) {
			err = -ENOMEM;
			goto out;
		}
		lines[nr++].value = v;
	}
	if (nr > 1)
		qsort(lines, nr, sizeof(*lines), cmp_folded_text);
	for (size_t i = w = 0; i < nr; i++) {
		if (w && !strcmp(lines[w - 1].text, lines[i].text)) {
			lines[w - 1].value += lines[i].value;
			free(lines[i].text);
			continue;
		}
		lines[w++] = lines[i];
	}
	nr = w;
	if (nr > 1)
		qsort(lines, nr, sizeof(*lines), cmp_folded_value);
	for (size_t i = 0; i < nr; i++)
		fprintf(f, "%s %llu\n", lines[i].text, (unsigned long long)lines[i].value);
out:
	for (size_t i = 0; lines && i < nr; i++)
		free(lines[i].text);
	free(lines);
	mms_rows_free(&rows);
	return err;
}

int mms_report_print(FILE *f, const struct mms_store *st, const struct mms_report_opts *o,
		     const struct mms_report_meta *m)
{
	struct mms_query q = { .by = o->by, .sort = o->sort, .from = 0, .filters = o->filters };
	struct metric_rows mr = { 0 };
	struct mms_rows rows = { 0 };
	uint64_t lost[MMS_LOST_NR];
	double secs = store_seconds(st);
	int err;

	if (!mms_store_count(st)) {
		q.to = 0;
		q.from = 1;
	} else {
		q.to = mms_store_count(st) - 1;
	}
	if (o->fmt == MMS_REPORT_FOLDED) {
		err = folded_print(f, st, o, &q);
		if (!err && (fflush(f) || ferror(f)))
			err = -EIO;
		return err;
	}
	err = mms_query_locks(st, &q, &rows);
	if (!err)
		err = metric_rows_collect(st, &mr);
	if (err)
		goto out;
	sort_store = st;
	if (mr.nr > 1)
		qsort(mr.rows, mr.nr, sizeof(*mr.rows), cmp_metric);
	lost_totals(st, lost);
	switch (o->fmt) {
	case MMS_REPORT_JSON:
		json_print(f, st, o, m, &rows, &mr, lost, secs);
		break;
	case MMS_REPORT_CSV:
		csv_print(f, o, &rows);
		break;
	default:
		if (m && m->run && m->run->present) {
			char score[512];

			/* The benchmark's own figure first, as a patch mail quotes it. */
			mms_score_describe(score, sizeof(score), m->run);
			fputs("score: ", f);
			mms_esc_fputs(f, score);	/* names and units come from the file */
			fputs("\n\n", f);
		}
		text_rows(f, st, o, &rows);
		text_metrics(f, st, &mr, secs, o->entries);
		text_footer(f, m, lost);
		break;
	}
	if (fflush(f) || ferror(f))
		err = -EIO;
out:
	mms_rows_free(&rows);
	free(mr.rows);
	return err;
}
