/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * pcptunectl snapshot: copy the files of every row of the source table
 * (source-table.h) from a host (below root) into a directory laid out as a
 * root tree, usable with --root, with what a tree cannot carry recorded in
 * .pcptune/ (page size, memcg counts) and .pcptune/snapshot (who, when).
 * Missing optional files are skipped.  Returns the number of files written,
 * or -errno (zoneinfo, meminfo and osrelease are required).
 */
int capture_snapshot(const char *root, const char *dest_dir);

/* Pack a directory into a .tar.gz (tar -czf).  0 or -errno. */
int tar_create(const char *dir, const char *file);

/*
 * Unpacking a snapshot archive (pcptunectl status/plan --root F.tar.gz), which anyone may hand us:
 * with libarchive (dlopen()ed here: -EOPNOTSUPP without it), gzip and tar only, no tar process.  At most SNAPSHOT_ARCHIVE_MEMBERS_MAX members
 * and SNAPSHOT_ARCHIVE_BYTES_MAX bytes of member data in all (every member's size counts, the skipped
 * ones too: their data is decompressed to pass them; a 1 MB gzip holding 1 GiB of zeros is refused at
 * its header).  Member paths must be relative, without '.', '..' or empty components ("./" prefixes,
 * as tar -C DIR . writes, are fine); only regular files and directories are accepted: a symlink, a
 * hard link, a device node, a FIFO or a socket refuses the whole archive.  Only the regular files a
 * source reads (snapshot_path_wanted()) are written, mode 0644, below dir through directories made
 * 0755 without following symlinks, each path once; others are skipped with one warning.
 * 0, or -errno with the reason in err (errlen bytes): -EBADMSG (not gzip+tar, corrupt), -E2BIG (too
 * many members), -EFBIG (too large), -EINVAL (a refused member, a path twice), -ENOMEM, or the errno
 * of open/write.  dir NULL: check only, write nothing (the fuzz target).
 */
#define SNAPSHOT_ARCHIVE_MEMBERS_MAX 8192U
#define SNAPSHOT_ARCHIVE_BYTES_MAX ((uint64_t) 64 << 20)
int snapshot_archive_unpack(const char *file, const char *dir, char *err, size_t errlen);
int snapshot_archive_unpack_buffer(const void *buf, size_t size, const char *dir, char *err, size_t errlen);
/* snapshot_archive_unpack(), the reason logged as an error.  0 or -errno. */
int tar_extract(const char *file, const char *dir);

/*
 * Is path (absolute below the root, "/proc/zoneinfo") a file some source reads: a file (pattern) of a
 * row of the source table or the knob table, a row's record file, or .pcptune/snapshot?
 */
bool snapshot_path_wanted(const char *path);

/*
 * A member name as an absolute path below the root in buf (size bytes): "./proc/zoneinfo",
 * "proc/zoneinfo" -> "/proc/zoneinfo"; a directory's trailing '/' dropped.  1; 0 for the top
 * directory itself ("./", "."); -EINVAL for an absolute name or one with '.', '..' or empty
 * components or control characters; -ENAMETOOLONG.
 */
int snapshot_member_path(const char *name, char *buf, size_t size);
