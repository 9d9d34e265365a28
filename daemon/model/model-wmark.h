/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model-pcp.h"
#include "util.h"

/*
 * Watermarks (__setup_per_zone_wmarks(), mm/page_alloc.c) and hypothetical host shapes, for planning
 * hosts we cannot read.  Units: pages unless named _kib/_bytes.
 */

/* The zones of x86_64, in kernel order (zone_idx). */
typedef enum ZoneType {
        ZONE_TYPE_DMA,
        ZONE_TYPE_DMA32,
        ZONE_TYPE_NORMAL,
        ZONE_TYPE_MOVABLE,
        ZONE_TYPE_DEVICE,
        _ZONE_TYPE_MAX,
        _ZONE_TYPE_INVALID = -EINVAL,
} ZoneType;

const char *zone_type_to_string(ZoneType t);
/* "DMA", "DMA32", "Normal", "Movable", "Device" -> type, or -EINVAL (HighMem is 32-bit only). */
int zone_type_from_string(const char *s);

/* Input and output of the watermark computation for one zone. */
typedef struct WmarkZone {
        int node;
        ZoneType type;
        uint64_t managed_pages;
        /* results */
        uint64_t min_pages;
        uint64_t low_pages;
        uint64_t high_pages;
        uint64_t promo_pages;
} WmarkZone;

/*
 * int_sqrt(), lib/math/int_sqrt.c: the largest r with r*r <= x.
 */
uint64_t int_sqrt_u64(uint64_t x);

/*
 * The boot-time default of vm.min_free_kbytes: calculate_min_free_kbytes(),
 * mm/page_alloc.c (5.7 - 6.18): int_sqrt(lowmem_kbytes * 16) clamped to
 * [128, 262144], where lowmem_kbytes = nr_free_buffer_pages() x page size in
 * KiB.  At the first call (init_per_zone_wmark_min(), a postcore initcall)
 * every watermark is still 0, so nr_free_buffer_pages() is the managed pages of
 * every zone up to ZONE_NORMAL on every node.  Returns KiB.
 */
uint64_t wmark_default_min_free_kbytes(const WmarkZone *zones, size_t n, unsigned page_size);

/*
 * khugepaged's set_recommended_min_free_kbytes(), mm/khugepaged.c (5.x - 6.18),
 * run when THP is enabled ("always" or "madvise"): pageblock_nr_pages x
 * populated zones up to ZONE_NORMAL x (2 + MIGRATE_PCPTYPES^2), at most 1/20 of
 * nr_free_buffer_pages() (managed minus the high watermark, watermarks as
 * computed from the current min_free_kbytes), applied only when above the
 * current value.  pageblock_nr_pages = 2 MiB / page size on x86_64.
 * Returns the resulting min_free_kbytes in KiB.
 */
uint64_t wmark_khugepaged_min_free_kbytes(const WmarkZone *zones, size_t n, unsigned page_size,
                                          uint64_t current_kib, unsigned watermark_scale_factor);

/*
 * __setup_per_zone_wmarks(), mm/page_alloc.c (5.x - 6.18): pages_min split in
 * proportion to managed pages over the lowmem zones (all but Movable/HighMem);
 * Movable gets clamp(managed / 1024, 32, 128); the gap is
 * max(proportional min / 4, managed x watermark_scale_factor / 10000);
 * low = min + gap, high = low + gap, promo = high + gap; boost reset to 0.
 * Fills min/low/high/promo of every zone.
 */
void wmark_setup_zones(WmarkZone *zones, size_t n, uint64_t min_free_kbytes, unsigned page_size,
                       unsigned watermark_scale_factor);

#define SHAPE_MAX_NODES 64

/* A hypothetical host (pcptunectl plan --shape). */
typedef struct HostShape {
        unsigned cpus;             /* online CPUs, split as evenly as possible, lower nodes first */
        unsigned possible_cpus;    /* 0: = cpus */
        uint64_t memory_bytes;     /* RAM, split evenly over nodes */
        unsigned nodes;            /* >= 1 */
        KernelVersion kernel;      /* default 6.12 */
        bool thp;                  /* khugepaged raises min_free_kbytes (default true, as Debian) */
        unsigned page_size;        /* default 4096 */
        unsigned watermark_scale_factor; /* default 10 */
        uint64_t min_free_kbytes;  /* 0: the kernel's default formula; else set by the administrator */
        /* Managed pages given by the operator (exact input), per node and zone type; 0 = estimate. */
        uint64_t given_managed[SHAPE_MAX_NODES][_ZONE_TYPE_MAX];
} HostShape;

/* Parse "cpus=256,memory=1TiB,nodes=2[,kernel=6.12][,possible=N][,thp=on|off][,page=4KiB][,wsf=10]
 * [,min_free_kbytes=K]".  0 or -EINVAL with *ret_error (malloc'd). */
int host_shape_parse(const char *s, HostShape *ret, char **ret_error);

/* Parse "NODE:ZONE=PAGES" (e.g. "0:Normal=262144") into the shape.  0 or -EINVAL. */
int host_shape_parse_managed(HostShape *shape, const char *s, char **ret_error);

/*
 * Estimate the zones of a shape on x86_64: node 0 holds DMA (first 16 MiB) and
 * DMA32 (below 4 GiB, assuming a 1 GiB PCI hole when memory >= 4 GiB); every
 * node's remaining memory is Normal.  Managed pages are present pages minus the
 * struct page array (64 bytes per page) and a fixed reserve (DMA: 158 pages of
 * firmware/BIOS areas; node 0's highest zone: 96 MiB for the kernel, initramfs
 * and boot allocations); crashkernel is assumed off.  Pages given in the shape
 * replace the estimate.  Then min_free_kbytes (default formula, khugepaged when
 * thp) and the watermarks.  *ret_zones has every node's DMA/DMA32/Normal
 * that has memory; free with free().  0 or -EINVAL/-ENOMEM.
 */
int host_shape_zones(const HostShape *shape, WmarkZone **ret_zones, size_t *ret_n, uint64_t *ret_min_free_kbytes);

/* A one-line statement of the assumptions behind host_shape_zones(). */
const char *host_shape_assumptions(void);
