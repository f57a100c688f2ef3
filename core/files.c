// SPDX-License-Identifier: GPL-2.0
/* Ownership and kind checks of the files mmscope writes and reads (see include/mmscope/files.h). */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mmscope/files.h"

const char *mms_file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return "a regular file";
	case S_IFDIR:
		return "a directory";
	case S_IFIFO:
		return "a FIFO";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFSOCK:
		return "a socket";
	case S_IFLNK:
		return "a symbolic link";
	default:
		return "not a regular file";
	}
}

/* A numeric id from the environment, or -1. */
static long env_id(const char *name)
{
	const char *v = getenv(name);
	char *end;
	long id;

	if (!v || !*v)
		return -1;
	errno = 0;
	id = strtol(v, &end, 10);
	return errno || *end || id < 0 || id > 0x7fffffffL ? -1 : id;
}

void mms_file_chown_sudo(int fd)
{
	long uid = env_id("SUDO_UID"), gid = env_id("SUDO_GID");

	if (geteuid() != 0 || uid <= 0 || gid < 0)
		return;
	if (fchown(fd, (uid_t)uid, (gid_t)gid)) {
		/* a file system without owners: it stays root's */
	}
}

int mms_file_may_replace(const char *path, const struct stat *sb, char *errbuf, size_t errlen)
{
	long sudo = geteuid() == 0 ? env_id("SUDO_UID") : -1;

	if (!S_ISREG(sb->st_mode)) {
		snprintf(errbuf, errlen, "%s is %s: record into a regular file", path,
			 mms_file_kind(sb->st_mode));
		return -EINVAL;
	}
	if (sb->st_nlink > 1) {
		snprintf(errbuf, errlen, "%s has %ju hard links: --force would leave the other "
			 "names with the old recording; remove it or choose another name", path,
			 (uintmax_t)sb->st_nlink);
		return -EMLINK;
	}
	if (sb->st_uid != geteuid() && (sudo < 0 || sb->st_uid != (uid_t)sudo)) {
		struct passwd *pw = getpwuid(sb->st_uid);

		snprintf(errbuf, errlen, "%s belongs to %s (uid %u): --force replaces only your "
			 "own files; choose another name", path, pw ? pw->pw_name : "another user",
			 (unsigned)sb->st_uid);
		return -EPERM;
	}
	return 0;
}

int mms_file_open_out(const char *path, char *errbuf, size_t errlen)
{
	int flags = O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
	bool created = true;
	struct stat sb;
	int fd;

	fd = open(path, flags | O_CREAT | O_EXCL, 0600);
	if (fd < 0 && errno == EEXIST) {
		created = false;
		fd = open(path, flags);
	}
	if (fd < 0) {
		int e = errno;

		if ((e == ELOOP || e == EEXIST) && !lstat(path, &sb) && S_ISLNK(sb.st_mode))
			snprintf(errbuf, errlen, "%s is a symbolic link: mmscope does not write "
				 "through one; give the real file name", path);
		else if ((e == ENXIO || e == EISDIR) && !lstat(path, &sb) && !S_ISREG(sb.st_mode))
			snprintf(errbuf, errlen, "%s is %s: write the report to a regular file "
				 "(or to stdout, without -o)", path, mms_file_kind(sb.st_mode));
		else
			snprintf(errbuf, errlen, "cannot write to %s: %s", path, strerror(e));
		return -e;
	}
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		snprintf(errbuf, errlen, "%s is %s: write the report to a regular file (or to "
			 "stdout, without -o)", path, mms_file_kind(sb.st_mode));
		close(fd);
		return -EINVAL;
	}
	if (!created && (ftruncate(fd, 0) || fchmod(fd, 0600))) {
		int e = errno;

		snprintf(errbuf, errlen, "cannot write to %s: %s", path, strerror(e));
		close(fd);
		return -e;
	}
	fcntl(fd, F_SETFL, 0);
	if (created)
		mms_file_chown_sudo(fd);
	return fd;
}
