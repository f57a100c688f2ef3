/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Recordings: the file format of docs/FORMAT.md, its writer (the recorder,
 * a session tap), its reader, and replay (one more source, so every view and
 * report works on a recording exactly as on live data).
 *
 *   record:  mms_recorder_create() once, mms_recorder_write() after every
 *            committed interval (mms_recorder_tap() does it for a session),
 *            mms_recorder_close() at the end.
 *   report:  mms_recording_load() (or _load_new()) puts a whole file in a store.
 *   replay:  mms_replay_open() makes a source; the TUI steps and seeks it.
 *   info:    mms_recording_open() + mms_recording_info().
 *
 * A recording holds everything needed to show it elsewhere: interned strings,
 * stacks with their symbol names, tasks and locks travel in the file.
 */
#ifndef MMSCOPE_RECORDING_H
#define MMSCOPE_RECORDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mmscope/options.h"
#include "mmscope/source.h"
#include "mmscope/store.h"

#define MMS_REC_MAJOR 1		/* readers refuse a newer major */
#define MMS_REC_MINOR 4		/* 1.4: lock rows with their owner (docs/FORMAT.md) */

/* Header flags. */
enum mms_rec_flags {
	MMS_REC_F_HIDE_ADDRS = 1U << 0,	/* kernel addresses are hashes (--hide-addrs) */
	MMS_REC_F_MMAP_HOLD = 1U << 1,	/* --mmap-hold was on */
	MMS_REC_F_COMMAND = 1U << 2,	/* the target was a command mmscope launched */
	MMS_REC_F_VMA_LOCK = 1U << 3,	/* --vma-lock was on (1.3) */
};

struct mms_rec_family {
	char source[32];	/* "lock-bpf" ..., "" when none worked */
	char backend[16];	/* "bpf", "perf" ... */
	char why[256];		/* when none: why not; else what it cannot measure, or "" */
	char failed[256];	/* why its source failed during the run (END), "" when it did not */
};

/*
 * One run of a series (`record --runs N`) and the benchmark's own score
 * (--score, --score-file): the RUN block of format 1.2, written just before
 * END.  present is false for a recording without one (older ones, plain
 * `record`).  Strings from a file are bounded and free of control characters.
 */
struct mms_rec_run {
	bool present;
	uint32_t index, count;	/* run index of count (1-based); 0 of 0: not part of a series */
	int32_t status;		/* the command's exit status (128 + signal), -1: unknown */
	bool interrupted;	/* stopped by a signal before the command ended */
	bool has_score;
	bool lower_better;	/* the score: lower is better (elapsed time); else higher */
	double score;
	uint32_t matches;	/* output lines the regex matched (the last one counts) */
	char text[32];		/* the score as the benchmark printed it */
	char name[64];		/* "Execl Throughput" */
	char unit[32];		/* "lps", "execs/s"; "" when unknown */
	char source[192];	/* "regex '...'", "file /path" */
	char error[256];	/* no score: why ("no line of the output matched ...") */
};

/* What the header says, plus what the reader found. */
struct mms_rec_info {
	uint32_t major, minor;	/* format version of the file */
	char imported[16];	/* a capture read as a recording: its format ("perf.data"), else "" */
	char tool[64];		/* "mmscope 0.1.0", "perf 6.1.192" */
	char host[72];
	char kernel[136];	/* uname release */
	char target[128];	/* "system", "pid 42 (stress-ng)", "cmd: make (pid 7)" */
	char cmdline[1024];	/* mmscope's own command line */
	char options[1536];	/* "key=value" lines */
	char knobs[256];	/* "MMSCOPE_X=v" lines of non-default knobs, "" when none */
	uint64_t start_ns;	/* CLOCK_REALTIME when recording started */
	uint32_t interval_ms;
	uint32_t flags;		/* enum mms_rec_flags */
	struct mms_rec_family fam[MMS_FAM_NR];

	/* Contents (reader). */
	uint32_t intervals;
	uint64_t first_ns;	/* start of the first interval (CLOCK_REALTIME) */
	uint64_t end_ns;	/* end of the last one */
	uint64_t lock_rows, metric_rows;
	uint64_t lost[MMS_LOST_NR];	/* summed over every interval */
	uint32_t target_exited;	/* intervals flagged MMS_IV_TARGET_EXITED */
	uint64_t defs[MMS_TAB_NR];	/* definitions (strings, stacks, tasks, locks) */
	uint64_t dangling;	/* references to ids never defined (fed as 0) */

	/* Recovery (reader). */
	uint64_t file_bytes;
	uint64_t good_bytes;	/* up to the end of the last good block */
	uint64_t raw_bytes;	/* payload bytes once decompressed */
	uint32_t blocks;	/* good blocks, header included */
	uint32_t unknown_blocks;	/* of types this mmscope does not know: skipped */
	bool closed;		/* the END block is there: the recorder finished */
	char end_reason[256];	/* from END: why recording stopped early, "" when not */
	bool damaged;		/* reading stopped at a bad or truncated block */
	uint64_t damaged_at;	/* file offset of that block */
	char damage[256];	/* what was wrong with it */

	struct mms_rec_run run;	/* the RUN block, if any (format 1.2) */
};

/* ---- Writing ---- */

struct mms_recorder;

/* What goes into the header.  NULL strings are written empty. */
struct mms_rec_meta {
	const char *host;
	const char *kernel;
	const char *target;
	uint64_t start_ns;		/* 0: now */
	char *const *argv;		/* mmscope's command line, NULL-terminated, or NULL */
	const struct mms_options *opts;	/* interval, flags and the options text; may be NULL */
	struct {
		const char *source, *backend, *why;
	} fam[MMS_FAM_NR];
	const char *knobs;		/* mms_knobs_describe() lines, or NULL */
};

enum mms_recorder_flags {
	MMS_RECORDER_FORCE = 1U << 0,	/* replace an existing file (never a symlink) */
};

/*
 * Creates path (mode 0600, O_EXCL, never through a symlink; chowned to
 * SUDO_UID/SUDO_GID when run as root under sudo) and writes the header.
 * FORCE: a new file beside it, renamed over an existing one (a regular file
 * with one link, ours or the sudo user's), never written into.  On failure
 * errbuf says what failed and what to do.
 */
int mms_recorder_create(const char *path, const struct mms_rec_meta *meta, unsigned int flags,
			struct mms_recorder **out, char *errbuf, size_t errlen);
/*
 * The checks create makes on path (exists without FORCE, symlink, not a
 * regular file), done early so a command can refuse before it starts
 * collecting.  create still checks, race-free.
 */
int mms_recorder_check_path(const char *path, unsigned int flags, char *errbuf, size_t errlen);
/*
 * The same onto an open file (a memfd: a capture of another format read
 * as a recording); the recorder owns fd from here on.  name is for messages.
 */
int mms_recorder_create_fd(int fd, const char *name, const struct mms_rec_meta *meta,
			   struct mms_recorder **out, char *errbuf, size_t errlen);
/*
 * Appends one committed interval of st (and the definitions it needs that
 * the file does not have yet) with a single write().  After a failure the
 * file is cut back to its last whole block, recording stops for good, and
 * every later call returns the same error; mms_recorder_error() says it.
 */
int mms_recorder_write(struct mms_recorder *r, struct mms_store *st,
		       const struct mms_interval *iv);
/*
 * Appends the RUN block (the run's place in its series and its score) in one
 * write(); call it once, just before close.  Errors as mms_recorder_write().
 */
int mms_recorder_put_run(struct mms_recorder *r, const struct mms_rec_run *run);
/* A family's source failed mid-run: the END block says why (the first reason kept). */
void mms_recorder_source_failed(struct mms_recorder *r, int family, const char *why);
/* Writes the END block (with reason, "" for a normal end), syncs, closes. */
int mms_recorder_close(struct mms_recorder *r, const char *reason);
void mms_recorder_destroy(struct mms_recorder *r);
/* "" while fine; else "recording stopped: PATH: No space left on device". */
const char *mms_recorder_error(const struct mms_recorder *r);
uint64_t mms_recorder_intervals(const struct mms_recorder *r);
uint64_t mms_recorder_bytes(const struct mms_recorder *r);
const char *mms_recorder_path(const struct mms_recorder *r);

/* ---- Reading ---- */

struct mms_recording;

/*
 * Opens and checks a recording: every block's CRC, every payload.  A
 * damaged or truncated tail is not an error: reading stops at the first bad
 * block and info->damaged says so.  Errors (-errno + errbuf): cannot open,
 * not a recording (-EINVAL), newer major version (-ENOTSUP), header damaged
 * (-EBADMSG).
 */
int mms_recording_open(const char *path, struct mms_recording **out, char *errbuf,
		       size_t errlen);
/*
 * Captures of other formats (perf.data), told apart by their first bytes
 * and turned into a recording in memory when opened.  Their readers live
 * above core/ (they need the collectors' pairing), so the program registers
 * one before opening files; without it such a file is refused with a
 * sentence saying what it is.
 */
struct mms_rec_import_res {
	uint8_t *buf;		/* the recording (malloc'd) */
	size_t len;
	char tool[64];		/* what wrote the capture: "perf 6.1.192" */
	char damage[256];	/* where and why reading the capture stopped early, or "" */
	uint64_t damaged_at;	/* its byte offset */
};

struct mms_rec_import {
	const char *format;		/* "perf.data" */
	bool (*match)(const uint8_t *head, size_t n);	/* the first up to 16 bytes */
	/*
	 * Reads fd (a regular file of size bytes, at most budget bytes of
	 * memory) into a recording in res.  0 or -errno with errbuf set.
	 */
	int (*convert)(int fd, uint64_t size, uint64_t budget, struct mms_rec_import_res *res,
		       char *errbuf, size_t errlen);
};
void mms_recording_set_import(const struct mms_rec_import *imp);

/* The same over memory (tests, fuzzing); buf must outlive the recording. */
int mms_recording_open_mem(const void *buf, size_t len, struct mms_recording **out,
			   char *errbuf, size_t errlen);
void mms_recording_close(struct mms_recording *rec);
const struct mms_rec_info *mms_recording_info(const struct mms_recording *rec);
uint32_t mms_recording_count(const struct mms_recording *rec);

/* Per-interval facts known without decoding rows. */
struct mms_rec_interval {
	uint64_t seq;
	uint64_t start_ns;
	uint64_t dur_ns;
	uint32_t flags;
	uint32_t n_locks, n_metrics;
};
const struct mms_rec_interval *mms_recording_interval(const struct mms_recording *rec,
						      uint32_t idx);
/* Index of the interval that covers realtime ns (first / last when outside). */
uint32_t mms_recording_find_time(const struct mms_recording *rec, uint64_t ns);
/*
 * Commits interval idx into st with its recorded start, duration and flags.
 * Any order works, at the same cost.  An interval the store is building is
 * abandoned first.
 */
int mms_recording_feed(struct mms_recording *rec, struct mms_store *st, uint32_t idx);
/*
 * The same, deferred (mms_store_commit_deferred()): the rows are decoded
 * when the interval is first read.  st keeps rec open until it needs it no
 * more, so either may be closed or destroyed first.  -EBUSY while st is
 * building an interval.
 */
int mms_recording_feed_deferred(struct mms_recording *rec, struct mms_store *st, uint32_t idx);

/*
 * Everything in one call, for `report FILE`: opens path, feeds every
 * interval into st (whose window should hold them: see _load_new), and
 * copies the header and recovery facts into info (may be NULL).
 */
int mms_recording_load(const char *path, struct mms_store *st, struct mms_rec_info *info,
		       char *errbuf, size_t errlen);
/* Same, into a new store big enough for the whole recording. */
int mms_recording_load_new(const char *path, struct mms_store **st, struct mms_rec_info *info,
			   char *errbuf, size_t errlen);

/* ---- Replay: a source over a recording ---- */

/*
 * The "replay" source (backend "replay", family MMS_FAM_LOCK, though it
 * replays every family).  Made by mms_replay_open(), not from a registry.
 * Its drain() commits every interval not fed yet, each with its recorded
 * times; the TUI paces playback with mms_replay_step() on its own timer
 * instead.  Give it to mms_session_open_source() without mms_session_start():
 * the session's own interval timer has nothing to add to a recording.
 */
extern const struct mms_source_ops mms_replay_ops;

/* opts may be NULL (the window then defaults to 600). */
int mms_replay_open(const char *path, const struct mms_options *opts, struct mms_source **out,
		    char *errbuf, size_t errlen);
struct mms_recording *mms_replay_recording(struct mms_source *src);
const struct mms_rec_info *mms_replay_info(struct mms_source *src);
uint32_t mms_replay_count(struct mms_source *src);
/* First interval's start, last interval's end (CLOCK_REALTIME ns); -ENODATA when empty. */
int mms_replay_time_range(struct mms_source *src, uint64_t *first_ns, uint64_t *end_ns);
/* Index of the next interval to feed (== how far playback got). */
uint32_t mms_replay_pos(struct mms_source *src);
/* Feeds up to n more intervals; returns how many (0: at the end) or -errno. */
int mms_replay_step(struct mms_source *src, struct mms_store *st, uint32_t n);
/*
 * Makes interval idx the newest in st, which then holds the window ending at
 * idx (or all before it): what st held of that window is kept, the rest is
 * committed deferred, decoded when a view first reads it.  idx >= count seeks
 * to the last.  Pointers from st are invalid afterwards.
 */
int mms_replay_seek(struct mms_source *src, struct mms_store *st, uint32_t idx);
/* The same for the interval covering realtime ns. */
int mms_replay_seek_time(struct mms_source *src, struct mms_store *st, uint64_t ns);

#endif
