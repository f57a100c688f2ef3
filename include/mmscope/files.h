/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Files mmscope writes for people and files it reads from them: who owns a
 * new file (the sudo user), what kind of file a path is, and when an
 * existing file may be replaced.  Used by the recorder, the reader and
 * `report -o`; docs/SECURITY.md says why each rule is there.
 */
#ifndef MMSCOPE_FILES_H
#define MMSCOPE_FILES_H

#include <stddef.h>
#include <sys/stat.h>

/* "a FIFO", "a directory", "a character device" ... for messages. */
const char *mms_file_kind(mode_t mode);
/* Under sudo (euid 0, SUDO_UID/SUDO_GID set), gives fd to the invoking user. */
void mms_file_chown_sudo(int fd);
/*
 * Whether the existing file sb (lstat of path) may be replaced by a new
 * one: a regular file with one link, owned by us or, under sudo, by the
 * invoking user.  0, or -errno with what to do in errbuf.
 */
int mms_file_may_replace(const char *path, const struct stat *sb, char *errbuf, size_t errlen);
/*
 * Opens an output file for writing, O_NONBLOCK (a FIFO must not hang it),
 * never through a symlink, refusing anything but a regular file; a file
 * it creates is 0600 and chowned like recordings, an existing one is
 * truncated and set to 0600.  fd or -errno with errbuf filled.
 */
int mms_file_open_out(const char *path, char *errbuf, size_t errlen);

#endif
