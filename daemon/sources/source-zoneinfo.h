/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * /proc/zoneinfo: one block per zone of every node (populated or not).
 * Layouts (zoneinfo_show_print(), mm/vmstat.c): per CPU "count/high/batch" up to 6.12, plus
 * "high_min/high_max" from 6.13 (and vendor backports).  The layout is
 * recorded (has_high_min_max), never used to infer the kernel version.
 */

#define ZONE_NAME_MAX 16

typedef struct PcpCpu {
        int cpu;            /* CPU id as printed after "cpu:" */
        int64_t count;      /* pages currently on this CPU's lists */
        int64_t high;       /* current high (dynamic since 6.7) */
        int64_t batch;
        int64_t high_min;   /* -1 when the layout does not print it */
        int64_t high_max;   /* -1 when the layout does not print it */
} PcpCpu;

typedef struct Zone {
        int node;
        char name[ZONE_NAME_MAX];  /* as printed: "DMA", "DMA32", "Normal", "Movable"... */
        bool populated;            /* the kernel printed pagesets (present_pages != 0) */
        uint64_t free_pages;
        uint64_t boost_pages;
        uint64_t min_pages;        /* WMARK_MIN */
        uint64_t low_pages;        /* WMARK_LOW (+ boost, as low_wmark_pages() and zoneinfo print it) */
        uint64_t high_pages;       /* WMARK_HIGH */
        uint64_t spanned_pages;
        uint64_t present_pages;
        uint64_t managed_pages;
        PcpCpu *cpus;              /* online CPUs, in file order; NULL if unpopulated */
        size_t n_cpus;
} Zone;

typedef struct Zoneinfo {
        Zone *zones;               /* file order: node 0's zones, then node 1's ... */
        size_t n_zones;
        bool has_high_min_max;     /* pagesets print high_min/high_max (6.13+ layout) */
} Zoneinfo;

/*
 * Pure parser of the text of /proc/zoneinfo (mm/vmstat.c, zoneinfo_show_print());
 * all values in pages.  Required per zone: the header, "pages free", min, low,
 * high, spanned, present, managed and protection; per CPU: count, high, batch
 * (high_min/high_max both or neither, the same layout in the whole file).  A
 * zone with present != 0 must print pagesets with at least one CPU and its
 * start_pfn trailer, one with present == 0 must not (this catches truncated
 * files).  Unknown stat lines are skipped (open sets).  Invariants checked only
 * where the kernel guarantees them: managed <= present <= spanned (NR_FREE_PAGES
 * may drift past managed by the per-CPU deltas); CPU ids strictly increasing.
 * One pass, no allocation per line: ~0.75 ms for a 512-CPU, 8-node file (0.9 MiB).
 * Returns 0, -EINVAL on malformed or incomplete input, -ENOMEM.
 * The result must be released with zoneinfo_done().
 */
int zoneinfo_parse(const char *buf, size_t len, Zoneinfo *ret);

/* Read <root>/proc/zoneinfo (root NULL or "/" for the live system) and parse it.
 * 0, -errno of the read (-ENOENT...), -EFBIG beyond READ_FILE_MAX, or as zoneinfo_parse(). */
int zoneinfo_read(const char *root, Zoneinfo *ret);

/* Where zoneinfo_parse_at() stopped: the line it rejected, or (incomplete) the
 * "Node" line of a zone the file ends before completing (a truncated file). */
typedef struct ZoneinfoError {
        size_t line;               /* 1-based; 0 if unknown */
        bool incomplete;
} ZoneinfoError;

/* zoneinfo_parse() and zoneinfo_read() that also say where a -EINVAL came from (ret_error may be NULL). */
int zoneinfo_parse_at(const char *buf, size_t len, Zoneinfo *ret, ZoneinfoError *ret_error);
int zoneinfo_read_at(const char *root, Zoneinfo *ret, ZoneinfoError *ret_error);

/* Free what zoneinfo_parse() allocated; the struct is zeroed.  Accepts NULL. */
void zoneinfo_done(Zoneinfo *z);

/* Sum of count over all CPUs of all populated zones, in pages (negative counts
 * ignored).  0 for NULL. */
uint64_t zoneinfo_pcp_count_pages(const Zoneinfo *z);
