/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/*
 * The percpu allocator's counters outside debugfs, from pcptune's contrib
 * kernel patch 0003 (contrib/kernel/6.x/0003-*.patch): /sys/kernel/mm/percpu/,
 * one unsigned integer per file, and a write-only `depopulate` trigger.
 * Reading them takes pcpu_lock only briefly per file (unlike percpu_stats,
 * which holds it with IRQs off for its whole output).  Pages are per unit;
 * multiply by nr_units and the page size for bytes.
 */

#define PERCPU_SYSFS_DIR "/sys/kernel/mm/percpu"

typedef struct PercpuSysfs {
        uint64_t nr_chunks;
        uint64_t nr_empty_chunks;
        uint64_t nr_to_depopulate;     /* chunks queued for depopulation */
        uint64_t nr_sidelined;         /* chunks isolated and depopulated */
        uint64_t nr_populated_pages;   /* per unit: meminfo Percpu = this x nr_units x page size */
        uint64_t nr_empty_pop_pages;   /* per unit: populated, nothing allocated */
        uint64_t nr_used_pop_pages;    /* per unit: populated, partly or fully used */
        uint64_t frag_free_bytes;      /* per unit: free bytes inside used pages (fragmentation) */
        uint64_t nr_units;
        uint64_t unit_pages;
        uint64_t empty_pop_pages_high; /* empty pages the allocator keeps for atomic allocations */
        bool has_depopulate;           /* the trigger file exists */
} PercpuSysfs;

/* Read every counter below root.  0, -ENOENT (no patch), -EINVAL (a counter is not a number), -errno. */
int percpu_sysfs_read(const char *root, PercpuSysfs *ret);

/* Write the trigger: depopulate empty populated pages and free empty chunks now.  0 or -errno. */
int percpu_sysfs_depopulate(const char *root);
