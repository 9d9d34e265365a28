/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Memory cgroups, live and dying (offline, not yet freed), host-wide
 * (proc_cgroupstats_show(), kernel/cgroup/cgroup-v1.c; cgroup_stat_show(), kernel/cgroup/cgroup.c):
 *  - v1: memory row of /proc/cgroups, num_cgroups (counts dying ones too)
 *    minus the directories of the memory hierarchy (root included);
 *  - v2: <mount>/cgroup.stat: nr_subsys_memory / nr_dying_subsys_memory
 *    (6.12+) or nr_descendants / nr_dying_descendants (+1 for the root).
 */

typedef enum CgroupMode {
        CGROUP_MEMORY_NONE,    /* no memory controller */
        CGROUP_MEMORY_V1,      /* memory controller on a v1 hierarchy */
        CGROUP_MEMORY_V2,      /* memory controller on the unified hierarchy */
        _CGROUP_MEMORY_MAX,
        _CGROUP_MEMORY_INVALID = -EINVAL,
} CgroupMode;

typedef struct MemcgCounts {
        CgroupMode mode;
        char *mount;           /* mount point of the memory hierarchy below root, e.g. "/sys/fs/cgroup/memory" */
        uint64_t live;         /* memcgs with a directory, root included */
        uint64_t dying;        /* removed but not freed */
        bool dying_from_subsys;/* v2: from nr_dying_subsys_memory (exact memory css count) */
} MemcgCounts;

/* Row of /proc/cgroups. */
typedef struct ProcCgroupsRow {
        unsigned hierarchy;    /* 0 = unified (v2) or unbound */
        uint64_t num_cgroups;
        bool enabled;
} ProcCgroupsRow;

/* Pure parser: find controller's row in /proc/cgroups text (the "#" header is skipped,
 * names are compared whole).  0, -ENOENT (no such row) or -EINVAL (malformed or repeated row). */
int proc_cgroups_parse(const char *buf, size_t len, const char *controller, ProcCgroupsRow *ret);

/* cgroup.stat fields (-1 when absent). */
typedef struct CgroupStat {
        int64_t nr_descendants;
        int64_t nr_dying_descendants;
        int64_t nr_subsys_memory;
        int64_t nr_dying_subsys_memory;
} CgroupStat;

/* Pure parser of a cgroup.stat text.  nr_descendants and nr_dying_descendants are
 * required (printed since 4.14), the nr_*subsys_memory pair is optional (6.12+);
 * other keys are skipped.  0 or -EINVAL (missing, repeated, negative or malformed value). */
int cgroup_stat_parse(const char *buf, size_t len, CgroupStat *ret);

/*
 * Find the memory hierarchy in a mountinfo text: a v1 "cgroup" mount with "memory"
 * in its super options, else the first "cgroup2" mount whose cgroup.controllers
 * (read below root) lists memory.  *ret_mount is the mount point (unescaped) or
 * NULL with mode NONE.  0, -EINVAL (NULL argument), -EOPNOTSUPP (only a
 * subdirectory of the v1 hierarchy is mounted: its directories cannot be
 * compared with num_cgroups) or -ENOMEM.
 */
int memcg_find_mount(const char *root, const char *mountinfo, size_t len, CgroupMode *ret_mode, char **ret_mount);

/*
 * Find the memory hierarchy below root: from /proc/self/mountinfo when root is "/"
 * (or NULL) and it is readable, else the conventional paths /sys/fs/cgroup/memory
 * (v1 if it has memory.usage_in_bytes or /proc/cgroups gives memory a hierarchy),
 * /sys/fs/cgroup and /sys/fs/cgroup/unified (v2 with "memory" in cgroup.controllers).
 * Counts live and dying memcgs (counts, not bytes):
 *  - v1: live = directories of the hierarchy (walked without following symlinks,
 *    no file read), dying = num_cgroups - live, clamped at 0;
 *  - v2: nr_subsys_memory / nr_dying_subsys_memory when printed (6.12+; the root
 *    css is included in nr_subsys_memory: a cgroup's own css counts, as the
 *    fixtures show with "nr_descendants 0 ... nr_subsys_memory 1"), else
 *    nr_descendants + 1 / nr_dying_descendants.
 * Returns 0 (mode NONE when there is no memory controller), -ENOENT (/proc/cgroups
 * or cgroup.stat missing), -EINVAL (malformed), -EOPNOTSUPP, -ELOOP (v1 tree deeper
 * than 512 levels) or another -errno.  Release with memcg_counts_done().
 */
int memcg_counts_read(const char *root, MemcgCounts *ret);

/* Free what memcg_counts_read() allocated; the struct is zeroed.  Accepts NULL. */
void memcg_counts_done(MemcgCounts *m);

/*
 * A snapshot tree (pcptunectl snapshot) has no cgroup directories to count:
 * it records the counts in <root>/.pcptune/memcg ("mode v1|v2|none", "mount
 * PATH", "live N", "dying N", one per line), which memcg_counts_read() uses
 * for any root other than "/".
 */
#define MEMCG_SNAPSHOT_FILE "/.pcptune/memcg"
int memcg_snapshot_parse(const char *buf, size_t len, MemcgCounts *ret);
int memcg_snapshot_format(const MemcgCounts *m, char **ret);

/* "none", "v1", "v2"; NULL for any other value. */
const char *cgroup_mode_to_string(CgroupMode m);
