/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgroup v2 ids and paths.  The kernel names a task's cgroup by a 64-bit id
 * (bpf_get_current_cgroup_id(), PERF_SAMPLE_CGROUP: the cgroup directory's
 * kernfs id); people name it by its path under the cgroup2 mount
 * ("/system.slice/cron.service", "/" for the root), as perf lock contention
 * --lock-cgroup and -G do.  The lock sources turn ids into paths through a
 * cache; the command line turns -G paths into ids.  Paths are kept as the
 * kernel has them (a directory name may hold any byte but '/'): escape them
 * when they are shown.
 */
#ifndef MMSCOPE_CGROUP_H
#define MMSCOPE_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest path kept (a longer one is cut: the row still counts). */
#define MMS_CGROUP_PATH_MAX 256

/*
 * Does the kernel have cgroups at all (CONFIG_CGROUPS: /proc/self/cgroup)?
 * Without them tasks have no cgroup id, and BPF may not ask for one.
 */
bool mms_cgroups_in_kernel(void);

/* The cgroup2 mount ("/sys/fs/cgroup" or "/sys/fs/cgroup/unified"), or NULL when none. */
const char *mms_cgroup_root(void);

/*
 * The id of the cgroup at path ("/a/b", "a/b" or "/": relative to the cgroup2
 * mount); 0 or -errno (-ENOENT: no such cgroup, -ENODEV: no cgroup2 mount).
 */
int mms_cgroup_id(const char *path, uint64_t *id);

/* "/a/b" for "a/b", "/a/b/" and "/a/b"; "/" for "" and "/". */
void mms_cgroup_normalize(char *dst, size_t cap, const char *path);

/* id -> path, remembered; single-threaded, like everything on the event loop. */
struct mms_cgroups;

int mms_cgroups_create(struct mms_cgroups **out);
void mms_cgroups_destroy(struct mms_cgroups *c);	/* NULL: no-op */
/*
 * The path of cgroup id, or "" when it cannot be told (the cgroup is gone,
 * no cgroup2 mount, id 0).  Valid until the next call.
 */
const char *mms_cgroups_path(struct mms_cgroups *c, uint64_t id);

#endif
