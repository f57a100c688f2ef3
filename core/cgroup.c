// SPDX-License-Identifier: GPL-2.0
/*
 * cgroup v2 ids and paths (see include/mmscope/cgroup.h).
 *
 * A cgroup's id is its directory's kernfs id, which is also what
 * name_to_handle_at() gives as the directory's file handle: so path -> id is
 * one name_to_handle_at(), and id -> path is one open_by_handle_at() on the
 * mount plus a readlink of the descriptor, with no walk of the tree.  Where
 * that is refused (no CAP_DAC_READ_SEARCH), the tree is walked once per
 * unknown id, comparing inode numbers (kernfs ids are inode numbers on
 * 64-bit kernels).  Ids are never reused by the kernel, so an answer,
 * "gone" included, holds for good; the cache is bounded all the same.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "intern.h"
#include "mmscope/cgroup.h"
#include "mmscope/escape.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#define CG_FILEID_KERNFS 0xfe	/* FILEID_KERNFS: a kernfs node's u64 id */
#define CG_CACHE_MAX 4096	/* ids remembered before the cache starts over */
#define CG_WALK_MAX 65536	/* directories one walk may visit */
#define CG_WALK_DEPTH 32

bool mms_cgroups_in_kernel(void)
{
	return !access("/proc/self/cgroup", F_OK);
}

const char *mms_cgroup_root(void)
{
	static const char *const roots[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	struct statfs sf;

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (!statfs(roots[i], &sf) && sf.f_type == CGROUP2_SUPER_MAGIC)
			return roots[i];
	return NULL;
}

void mms_cgroup_normalize(char *dst, size_t cap, const char *path)
{
	size_t n = 0;

	if (!cap)
		return;
	for (const char *p = path; *p && n + 1 < cap; p++) {
		if (*p == '/' && n && dst[n - 1] == '/')
			continue;
		if (!n && *p != '/') {
			dst[n++] = '/';
			if (n + 1 >= cap)
				break;
		}
		dst[n++] = *p;
	}
	if (!n)
		dst[n++] = '/';
	while (n > 1 && dst[n - 1] == '/')
		n--;
	dst[n < cap ? n : cap - 1] = 0;
}

int mms_cgroup_id(const char *path, uint64_t *id)
{
	char rel[PATH_MAX], full[PATH_MAX + 64];
	const char *root = mms_cgroup_root();
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = { .fh.handle_bytes = sizeof(uint64_t) };
	struct stat sb;
	int mnt;

	if (!root)
		return -ENODEV;
	mms_cgroup_normalize(rel, sizeof(rel), path);
	if (strstr(rel, "/../") || !strcmp(rel, "/..") ||
	    (strlen(rel) >= 3 && !strcmp(rel + strlen(rel) - 3, "/..")))
		return -ENOENT;
	snprintf(full, sizeof(full), "%s%s", root, strcmp(rel, "/") ? rel : "");
	if (stat(full, &sb) || !S_ISDIR(sb.st_mode))
		return -ENOENT;
	if (!name_to_handle_at(AT_FDCWD, full, &h.fh, &mnt, 0) &&
	    h.fh.handle_bytes == sizeof(uint64_t)) {
		memcpy(id, h.fh.f_handle, sizeof(*id));
		return 0;
	}
	*id = (uint64_t)sb.st_ino;
	return 0;
}

struct mms_cgroups {
	struct mms_intern ids;	/* 8-byte cgroup ids; paths by the intern's id */
	char **paths;
	uint32_t nr_paths;
	int mnt_fd;		/* the cgroup2 mount, -1: none */
	const char *root;
	bool no_handles;	/* open_by_handle_at() refused: walk instead */
};

int mms_cgroups_create(struct mms_cgroups **out)
{
	struct mms_cgroups *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	mms_intern_init(&c->ids);
	c->root = mms_cgroup_root();
	c->mnt_fd = c->root ? open(c->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	*out = c;
	return 0;
}

static void cache_clear(struct mms_cgroups *c)
{
	for (uint32_t i = 0; i < c->nr_paths; i++)
		free(c->paths[i]);
	free(c->paths);
	c->paths = NULL;
	c->nr_paths = 0;
	mms_intern_finish(&c->ids);
	mms_intern_init(&c->ids);
}

void mms_cgroups_destroy(struct mms_cgroups *c)
{
	if (!c)
		return;
	cache_clear(c);
	mms_intern_finish(&c->ids);
	if (c->mnt_fd >= 0)
		close(c->mnt_fd);
	free(c);
}

/* The part of an absolute path under the mount, as "/a/b" ("/" for the mount). */
static void under_root(const struct mms_cgroups *c, const char *abs, char *out, size_t cap)
{
	size_t n = strlen(c->root);

	if (!strncmp(abs, c->root, n) && (abs[n] == '/' || !abs[n]))
		mms_cgroup_normalize(out, cap, abs + n);
	else
		out[0] = 0;
}

static bool by_handle(struct mms_cgroups *c, uint64_t id, char *out, size_t cap)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = { .fh.handle_bytes = sizeof(uint64_t), .fh.handle_type = CG_FILEID_KERNFS };
	char link[64], abs[PATH_MAX];
	ssize_t n;
	int fd;

	memcpy(h.fh.f_handle, &id, sizeof(id));
	fd = open_by_handle_at(c->mnt_fd, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == EPERM || errno == ENOSYS || errno == EOPNOTSUPP)
			c->no_handles = true;
		return false;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, abs, sizeof(abs) - 1);
	close(fd);
	if (n <= 0)
		return false;
	abs[n] = 0;
	under_root(c, abs, out, cap);
	return out[0] != 0;
}

/* Depth-first under dir (an absolute path in buf of len bytes) for inode id. */
static bool walk(const struct mms_cgroups *c, char *buf, size_t len, size_t cap, uint64_t id,
		 int depth, unsigned int *budget, char *out, size_t out_cap)
{
	struct dirent *de;
	bool found = false;
	DIR *d;

	if (depth > CG_WALK_DEPTH || !*budget)
		return false;
	--*budget;
	d = opendir(buf);
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (len + 1 + n + 1 > cap)
			continue;
		buf[len] = '/';
		memcpy(buf + len + 1, de->d_name, n + 1);
		if (de->d_ino == id) {
			under_root(c, buf, out, out_cap);
			found = true;
		} else {
			found = walk(c, buf, len + 1 + n, cap, id, depth + 1, budget, out, out_cap);
		}
		buf[len] = 0;
	}
	closedir(d);
	return found;
}

static void lookup(struct mms_cgroups *c, uint64_t id, char *out, size_t cap)
{
	char buf[PATH_MAX];
	unsigned int budget = CG_WALK_MAX;
	struct stat sb;

	out[0] = 0;
	if (!c->root || c->mnt_fd < 0 || !id)
		return;
	if (!c->no_handles && by_handle(c, id, out, cap))
		return;
	if (!c->no_handles)
		return;	/* the kernel said: no such cgroup (any more) */
	if (!fstat(c->mnt_fd, &sb) && (uint64_t)sb.st_ino == id) {
		snprintf(out, cap, "/");
		return;
	}
	snprintf(buf, sizeof(buf), "%s", c->root);
	walk(c, buf, strlen(buf), sizeof(buf), id, 0, &budget, out, cap);
}

const char *mms_cgroups_path(struct mms_cgroups *c, uint64_t id)
{
	char raw[MMS_CGROUP_PATH_MAX], clean[MMS_CGROUP_PATH_MAX];
	uint32_t k = mms_intern_find(&c->ids, &id, sizeof(id));

	if (k && k < c->nr_paths && c->paths[k])
		return c->paths[k];
	if (c->ids.live >= CG_CACHE_MAX)
		cache_clear(c);
	lookup(c, id, raw, sizeof(raw));
	/* Kept, so bounded and without control bytes; shown through the escapes. */
	mms_copy_clean(clean, sizeof(clean), raw, sizeof(raw));
	k = mms_intern_add(&c->ids, &id, sizeof(id), 0);
	if (!k)
		goto uncached;
	if (k >= c->nr_paths) {
		uint32_t nr = k + 1 > 2 * c->nr_paths ? k + 1 : 2 * c->nr_paths;
		char **p = realloc(c->paths, nr * sizeof(*p));

		if (!p)
			goto uncached;
		memset(p + c->nr_paths, 0, (nr - c->nr_paths) * sizeof(*p));
		c->paths = p;
		c->nr_paths = nr;
	}
	c->paths[k] = strdup(clean);
	if (c->paths[k])
		return c->paths[k];
uncached:
	{
		static char last[MMS_CGROUP_PATH_MAX];

		memcpy(last, clean, sizeof(last));
		return last;
	}
}
