/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * pcptunectl snapshot: copy the files of every row of the source table
 * (source-table.h) from a host (below root) into a directory laid out as a
 * root tree, usable with --root, with what a tree cannot carry recorded in
 * .pcptune/ (page size, memcg counts) and .pcptune/snapshot (who, when).
 * Missing optional files are skipped.  Returns the number of files written,
 * or -errno (zoneinfo, meminfo and osrelease are required).
 */
int capture_snapshot(const char *root, const char *dest_dir);

/* Pack a directory into a .tar.gz (tar -czf), or unpack one into a directory.  0 or -errno. */
int tar_create(const char *dir, const char *file);
int tar_extract(const char *file, const char *dir);
