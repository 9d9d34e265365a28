/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * /proc/vmstat: "name value" lines, an open set that changes between
 * versions.  We keep the ones the daemon uses; values are raw (pages or
 * events as the kernel counts them).
 */
typedef struct Vmstat {
        uint64_t nr_free_pages;        /* pages */
        uint64_t pgfree;               /* events: pages freed */
        uint64_t pgalloc_normal;       /* events */
        uint64_t pgscan_kswapd;        /* events */
        uint64_t pgscan_direct;        /* events */
        uint64_t allocstall_normal;    /* events (allocstall on < 4.14 is absent) */
        uint64_t nr_lines;             /* number of lines parsed (diagnostics) */
        bool has_nr_free_pages;
        bool has_pgfree;
} Vmstat;

/* Pure parser: keys anchored at line start.  0 or -EINVAL (malformed line or no nr_free_pages). */
int vmstat_parse(const char *buf, size_t len, Vmstat *ret);

/* Look up one counter by exact name in a vmstat text (the first line whose whole
 * first word is name).  0, -ENOENT (absent) or -EINVAL (empty name, malformed line). */
int vmstat_lookup(const char *buf, size_t len, const char *name, uint64_t *ret);

/* Read <root>/proc/vmstat and parse it.  0, -errno of the read or -EINVAL. */
int vmstat_read(const char *root, Vmstat *ret);
