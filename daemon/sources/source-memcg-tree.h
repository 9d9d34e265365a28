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
 *    Exact.  What they hold: the holder's LRU pages (memory.stat
 *    inactive/active file and anon) minus its live children's (read for
 *    holders only; kernel memory left out, as on v1).
 *  - v1: no per-cgroup dying counter exists.  A cgroup's subtree LRU pages
 *    (memory.stat total_cache + total_rss) minus its live children's minus
 *    its own (cache + rss) are the pages still charged to children that were
 *    removed: where dying memcgs are pinned, in bytes, not a count.  One
 *    memory.stat read per cgroup.  Kernel memory is left out on purpose: the
 *    percpu of live children is charged to their parent, and is not
 *    reclaimable anyway.
 */

typedef struct MemcgHolder {
        char *path;              /* below the hierarchy, e.g. "/pods/p1" */
        uint64_t dying;          /* v2: dying memcgs directly below; v1: 0 (unknown) */
        uint64_t dying_bytes;    /* the LRU pages (anon + page cache) charged to removed children, in bytes */
        uint64_t usage_bytes;    /* hierarchical: v1 LRU pages (total_cache + total_rss), v2 memory.current */
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

/*
 * v2: what the removed descendants of cgroup `cg` (a holder) still hold on
 * the LRU lists, in bytes, read now: cg's memory.stat inactive_file +
 * active_file (with `anon` also inactive_anon + active_anon; hierarchical)
 * minus the same of each live child.  That is what memory.reclaim written
 * to cg should take and no more: memory.current also counts kernel memory
 * no reclaim frees (the children's percpu charged to cg by
 * mem_cgroup_alloc(), reparented slab, the per-CPU charge stock), and
 * memory.reclaim takes what it cannot find in the dying memcgs from the
 * live ones.  Pages cg charged itself before it had children count as the
 * removed ones' (v2 has no non-hierarchical memory.stat).
 *
 * memory.stat is flushed from rstat on read only once more than 64
 * updates per online CPU are pending (memcg_vmstats_needs_flush(),
 * mm/memcontrol.c 6.12; a global threshold in 6.1), else it can be up to
 * 2 s old (FLUSH_TIME): right after a reclaim it would still count pages
 * just freed.  So cg's cpu.stat is read first: that flushes the rstat of
 * cg's subtree, memcg statistics included (cgroup_base_stat_cputime_show()
 * -> cgroup_rstat_flush_hold(), css_rstat_flush() of every css in the
 * rstat list, kernel/cgroup/rstat.c 6.1-6.12).
 *
 * root: "/" or a fake root; mount: the v2 hierarchy below it; cg: below the
 * hierarchy, never "/".  *ret_live (may be NULL): how many live children
 * there are.  0, -EINVAL (cg), -ENODATA (memory.stat prints no file LRU
 * list), or -errno of a read (-ENOENT: cg is gone).
 */
int memcg_dying_lru_read(const char *root, const char *mount, const char *cg, bool anon, uint64_t *ret_bytes,
                         unsigned *ret_live);

/*
 * Refaults of a memory-cgroup subtree: page-cache pages read back in after
 * they were reclaimed, counted in the memcg of the task that faults them in
 * (workingset_refault() in mm/workingset.c, 5.9-6.18).  The collateral
 * damage of reclaim-dying on the live cgroups of a reclaimed subtree.
 *
 * One hierarchical counter per subtree covers every live cgroup below it:
 * dying memcgs run no task, so their part of the total does not move, and
 * the difference between two reads is the refaults of the live ones.
 *  - v2: memory.stat `workingset_refault_file` (5.9+; `workingset_refault`
 *    before), hierarchical by itself;
 *  - v1: memory.stat `total_workingset_refault_file` (the hierarchical
 *    column; `total_workingset_refault` before 5.9).
 * memory.stat is flushed from rstat when read or every 2 s at most
 * (FLUSH_TIME, mm/memcontrol.c 6.1-6.18): a count is at most 2 s late.
 */
typedef enum MemcgRefaultKey {
        MEMCG_REFAULT_FILE,      /* workingset_refault_file (5.9+) */
        MEMCG_REFAULT_ALL,       /* workingset_refault (before 5.9: file pages only as well) */
        _MEMCG_REFAULT_KEY_MAX,
        _MEMCG_REFAULT_KEY_INVALID = -EINVAL,
} MemcgRefaultKey;

/* Pure parser of a memory.stat text: the subtree's refault count (pages).
 * Keys are matched whole at line start; the 5.9+ key wins when both are
 * printed.  0, -ENOENT (neither key) or -EINVAL (malformed or repeated). */
int memcg_refault_parse(const char *buf, size_t len, CgroupMode mode, uint64_t *ret_pages,
                        MemcgRefaultKey *ret_key);

/* Read <root><mount><cg>/memory.stat and parse it.  0 or -errno (-ENOENT when
 * the cgroup is gone). */
int memcg_refault_read(const char *root, const char *mount, CgroupMode mode, const char *cg, uint64_t *ret_pages);

/* "workingset_refault_file" etc. as printed for mode; NULL for an invalid key. */
const char *memcg_refault_key_name(MemcgRefaultKey k, CgroupMode mode);
