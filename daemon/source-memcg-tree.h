/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "source-cgroup.h"

/*
 * Which memory-cgroup subtrees hold dying memcgs, read only where needed and
 * only when an action asks (never on every sample: walking memory.stat of
 * every cgroup on each tick cost a monitoring agent 40% of a CPU with ~15k
 * cgroups).
 *
 *  - v2: cgroup.stat per level (nr_dying_subsys_memory on 6.12+, else
 *    nr_dying_descendants), descending only into children whose count is
 *    non-zero; a cgroup directly holds its count minus its live children's.
 *    Exact.
 *  - v1: no per-cgroup dying counter exists.  A cgroup's hierarchical usage
 *    (memory.usage_in_bytes) minus its live children's minus its own pages
 *    (memory.stat cache + rss, read only for cgroups with such a surplus) is
 *    the memory still charged to children that were removed: an estimate of
 *    where dying memcgs are pinned, in bytes, not a count.
 */

typedef struct MemcgHolder {
        char *path;              /* below the hierarchy, e.g. "/pods/p1" */
        uint64_t dying;          /* v2: dying memcgs directly below; v1: 0 (unknown) */
        uint64_t dying_bytes;    /* v1: charge of removed children (estimate); v2: 0 */
        uint64_t usage_bytes;    /* hierarchical usage (v1 usage_in_bytes, v2 memory.current) */
        unsigned live_children;
} MemcgHolder;

typedef struct MemcgScan {
        CgroupMode mode;
        MemcgHolder *holders;    /* sorted: most dying (v2) or most dying bytes (v1) first */
        size_t n_holders;
        uint64_t dying_total;    /* v2: sum over holders; v1: 0 */
        size_t cgroups_visited;  /* cost of the scan */
        size_t files_read;
} MemcgScan;

/*
 * Scan the subtrees `roots` (paths below the hierarchy, NULL-terminated; NULL
 * or empty = every top-level cgroup) of the memory hierarchy mounted at
 * `mount` (below `root`).  The hierarchy's root cgroup is never a holder, and
 * nothing outside the roots is read.  min_bytes: v1 threshold for a holder
 * (surplus below it is noise).  A cgroup removed during the scan is skipped.
 * 0 or -errno (-ENOENT if a named root does not exist is not an error: it is
 * skipped).  Release with memcg_scan_done().
 */
int memcg_scan_holders(const char *root, const char *mount, CgroupMode mode, char *const *roots, uint64_t min_bytes,
                       MemcgScan *ret);

void memcg_scan_done(MemcgScan *s);
