/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one way a BPF source loads: libbpf's messages routed (stderr under
 * MMSCOPE_DEBUG only), watched while a source opens, loads or attaches for
 * what a failure should say (libbpf's first complaint, the program that
 * failed, the verifier's reason), and failures turned into src->why with
 * what to do.  Used by every BPF source (the mm ones through mm_bpfsrc.c).
 */
#ifndef MMSCOPE_BPF_LOAD_H
#define MMSCOPE_BPF_LOAD_H

struct bpf_map;
struct bpf_object_skeleton;
struct mms_knobs;
struct mms_source;

/* Routes libbpf's messages to stderr under MMSCOPE_DEBUG (1: warnings, 2: debug too). */
void mms_bpf_load_init(const struct mms_knobs *k);

/*
 * Around an open, load or attach done by hand: libbpf's messages are
 * watched (and still printed under MMSCOPE_DEBUG) for the next
 * mms_bpf_load_fail() or mms_bpf_load_log_first(), in the calling thread
 * only (sources may load in threads of their own).  begin forgets what an
 * earlier step left; pairs do not nest.
 */
void mms_bpf_load_log_begin(void);
void mms_bpf_load_log_end(void);
/* libbpf's first complaint since log_begin, trailing blanks cut ("" when none). */
const char *mms_bpf_load_log_first(void);

/*
 * Fills src->why for a failed BPF step ("loading", "attaching ...") with
 * the reason (the verifier's, when it rejected a program) and what to do;
 * returns err.
 */
int mms_bpf_load_fail(struct mms_source *src, int err, const char *what);

/* Loads a skeleton; on failure src->why says why (mms_bpf_load_fail). 0 or -errno. */
int mms_bpf_load(struct mms_source *src, struct bpf_object_skeleton *skel, const char *what);
/* Attaches a loaded skeleton; on failure it is detached again and src->why says why. */
int mms_bpf_load_attach(struct mms_source *src, struct bpf_object_skeleton *skel,
			const char *what);
/*
 * Loads an fentry/fexit skeleton and attaches and detaches it once: only
 * an attach tells whether this kernel allows fentry (many refuse it with
 * EPERM), and `check` must know at prepare.  what: the functions hooked
 * ("the VMA functions"), for the messages.  0 or -errno with src->why set.
 */
/*
 * Whether this kernel lets fentry attach, asked with a program of two
 * instructions on func (a function in BTF): -EPERM as root with src->why
 * set as mms_bpf_load_fentry_try() sets it (what: the functions the
 * source hooks), else 0: any other answer is left to the full load, which
 * explains it better.
 */
int mms_bpf_fentry_probe(struct mms_source *src, const char *func, const char *what);
int mms_bpf_load_fentry_try(struct mms_source *src, struct bpf_object_skeleton *skel,
			    const char *what);

/*
 * A map more than one object has (mm_holders): the first object to ask
 * creates it from its definition, the others reuse it, so that once loaded
 * they all read and write one map.  Call between open and load; each
 * object's definition must have the same type, key and value sizes.  The
 * map lives as long as the process.  0 or -errno.
 */
int mms_bpf_share_map(struct bpf_map *map);

#endif
