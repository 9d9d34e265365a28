/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * pcptunectl snapshot: copy everything `plan` needs from a host (below
 * root) into a directory laid out as a root tree, usable with --root:
 * proc/{zoneinfo,meminfo,vmstat,cgroups,pressure/memory}, the pcp and
 * watermark sysctls, the kernel release, node and CPU lists, THP mode,
 * percpu_stats when readable, and .pcptune/{page_size,memcg,snapshot}
 * (page size, memcg counts, and who/when).  Missing optional files are
 * skipped.  Returns the number of files written, or -errno (zoneinfo,
 * meminfo and osrelease are required).
 */
int capture_snapshot(const char *root, const char *dest_dir);

/* Pack a directory into a .tar.gz (tar -czf), or unpack one into a directory.  0 or -errno. */
int tar_create(const char *dir, const char *file);
int tar_extract(const char *file, const char *dir);
