/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/*
 * The kernel's pcp batch/high formulas (zone_batchsize(), zone_highsize(),
 * zone_set_pageset_high_and_batch() in mm/page_alloc.c, 6.1-6.18), as pure functions.
 * All quantities are in pages unless named otherwise.
 */

typedef enum PcpRegime {
        PCP_REGIME_LEGACY,     /* <= 5.13: vm.percpu_pagelist_fraction, high = managed/F per CPU */
        PCP_REGIME_FIXED,      /* 5.14 - 6.6: fixed high = zone_highsize() */
        PCP_REGIME_AUTOTUNE,   /* >= 6.7: high_min/high_max, dynamic high in between */
        _PCP_REGIME_MAX,
        _PCP_REGIME_INVALID = -EINVAL,
} PcpRegime;

/*
 * Regime of a kernel version: < 5.14 LEGACY, 5.14 - 6.6 FIXED, >= 6.7
 * AUTOTUNE.  The fallback where nothing the kernel prints tells (vendors
 * backport): a snapshot's regime follows its zoneinfo (snapshot.h).
 * _PCP_REGIME_INVALID for NULL.
 */
PcpRegime pcp_regime_from_version(const KernelVersion *v);
/* "legacy", "fixed", "autotune"; NULL for anything else. */
const char *pcp_regime_to_string(PcpRegime r);

/*
 * vm.percpu_pagelist_high_fraction = -1 (pcptune's contrib kernel patch,
 * contrib/kernel/6.x/0001): high = batch << 2 on every zone, the same floor
 * `minimum` solves for, without a per-host fraction.  The model accepts it
 * for the 5.14+ regimes.
 */
#define PCP_FRACTION_FLOOR (-1)

/* What one zone of the model needs: read from the same zoneinfo snapshot. */
typedef struct PcpZoneInput {
        uint64_t managed_pages;
        uint64_t low_pages;           /* low_wmark_pages(): WMARK_LOW + boost, the zoneinfo "low" line */
        unsigned node_cpus;           /* online CPUs on the zone's node (0 for a CPU-less node) */
        unsigned online_cpus;         /* num_online_cpus(): the divisor for CPU-less nodes */
} PcpZoneInput;

/* What the kernel stores in every CPU's pageset of the zone. */
typedef struct PcpSetting {
        int batch;
        int high_min;    /* = high_max = the fixed high before 6.7 */
        int high_max;
} PcpSetting;

/*
 * zone_batchsize(), mm/page_alloc.c (unchanged 5.4 - 6.18, MMU): about 0.1%
 * of the zone capped at 1 MiB of pages, quartered, rounded to 2^n - 1, at
 * least 1 (the clamp of its callers).  page_size in bytes, a power of two
 * >= 4096.  Returns the batch in pages (>= 1), or -EINVAL for a bad page_size.
 */
int pcp_zone_batchsize(uint64_t managed_pages, unsigned page_size);

/*
 * zone_highsize(), mm/page_alloc.c (5.14 - 6.18): (fraction ? managed/fraction
 * : low) split over the node's online CPUs (all online CPUs for a CPU-less
 * node), at least batch << 2.  Steady state (cpu_online = 0).  Like the kernel
 * (64-bit), the unsigned long quotient is stored in an int: above INT_MAX it
 * wraps and the floor usually wins (only on absurd shapes, e.g. 2^40 pages
 * over 64 CPUs at fraction 8).  fraction >= 0 (the sysctl's 1..7 rule is
 * pcp_model_zone()'s).  Returns the high in pages (>= 4), or -EINVAL (batch
 * < 1, fraction < 0, no CPU to split over).
 */
int pcp_zone_highsize(const PcpZoneInput *z, int batch, int fraction);

/*
 * zone_set_pageset_high_and_batch(), mm/page_alloc.c, for one zone and a value
 * of the regime's sysctl:
 *  - LEGACY (<= 5.13, pageset_set_high_and_batch()): fraction 0: batch =
 *    zone_batchsize, high = 6 * batch; fraction F: high = managed / F,
 *    batch = max(1, high / 4) capped at PAGE_SHIFT * 8;
 *  - FIXED (5.14 - 6.6): high = zone_highsize(F);
 *  - AUTOTUNE (6.7+): F = 0: high_min = zone_highsize(0), high_max = zone_highsize(8);
 *    F >= 8: high_min = high_max = zone_highsize(F).
 * fraction must be 0 or >= 8.  0 or -EINVAL.
 */
int pcp_model_zone(PcpRegime regime, const PcpZoneInput *z, unsigned page_size, int fraction, PcpSetting *ret);

/* The largest high the kernel may use in that zone: high_max (6.7+) or the fixed high. */
static inline int pcp_setting_high_limit(const PcpSetting *s) {
        return s->high_max;
}

/*
 * A goal on pcp high (a policy's `pcp:` action, pcptune.policy(5)): a cap on the largest high that must hold on
 * every populated zone.
 */
typedef enum PcpGoalKind {
        PCP_GOAL_DEFAULT,          /* fraction 0 */
        PCP_GOAL_MINIMUM,          /* high = 4 x batch (the floor) on every zone */
        PCP_GOAL_BATCH_MULTIPLE,   /* high <= value x batch */
        PCP_GOAL_FRACTION,         /* the sysctl value itself (0 or >= 8) */
        PCP_GOAL_BYTES_PER_CPU,    /* high x page_size <= value bytes, per CPU and zone */
        PCP_GOAL_BYTES_PER_NODE,   /* sum over the node's zones of high x split CPUs x page_size <= value;
                                    * split CPUs = the node's CPUs, or all online CPUs for a CPU-less
                                    * node (the CPUs the kernel splits that zone's budget over) */
        PCP_GOAL_BULK_FREE_P99,    /* predicted p99 bulk-free hold <= value ns on every zone, with the
                                    * goal's ns_per_page (pcp_bulk_free_max_pages() x ns_per_page) */
        _PCP_GOAL_MAX,
        _PCP_GOAL_INVALID = -EINVAL,
} PcpGoalKind;

typedef struct PcpGoal {
        PcpGoalKind kind;
        uint64_t value;            /* multiple, fraction, bytes, or ns (BULK_FREE_P99) */
        double ns_per_page;        /* BULK_FREE_P99: this host's calibration (> 0), set before solving */
        bool batched;              /* BULK_FREE_P99: the kernel frees past high in steps of batch
                                    * (kernel_batched_free_path()), set before solving */
        bool has_scale_max;        /* BULK_FREE_P99: scale_max holds the host's pcp_batch_scale_max(), set */
        int scale_max;             /* before solving; without it, the build default */
} PcpGoal;

/* CONFIG_PCP_BATCH_SCALE_MAX of Debian's kernels and mainline's default (mm/Kconfig, 6.7+; 6.1.y backport). */
#define PCP_BATCH_SCALE_MAX_DEFAULT 5

/*
 * The effective batch scale: how far past batch one bulk free may go (batch <<
 * scale pages, nr_pcp_free() and free_pcppages_bulk() callers, mm/page_alloc.c
 * 6.7+).  The kernel takes CONFIG_PCP_BATCH_SCALE_MAX, which pcptune's contrib
 * patch 0002 turns into the sysctl vm.pcp_batch_scale_max (0..6) read at each
 * free: present (read below the root) and its value, else the build default
 * PCP_BATCH_SCALE_MAX_DEFAULT.  The one definition every figure uses
 * (snapshot_batch_scale_max() for a snapshot).
 */
int pcp_batch_scale_max(bool present, int64_t value);

/* The goal's batch scale: scale_max when set, else the build default. */
static inline int pcp_goal_scale_max(const PcpGoal *g) {
        return g->has_scale_max ? g->scale_max : PCP_BATCH_SCALE_MAX_DEFAULT;
}



/* A zone of the host as the solver sees it. */
typedef struct PcpZone {
        int node;
        const char *name;
        PcpZoneInput in;
} PcpZone;

/*
 * The largest pages per bulk free over the zones at a fraction
 * (pcp_bulk_free_max_pages() of each zone's setting, the default scale max;
 * the worst zone decides the host's p99).  0 or -EINVAL / -EOPNOTSUPP (LEGACY).
 */
int pcp_bulk_free_pages_host(PcpRegime regime, const PcpZone *zones, size_t n, unsigned page_size, int fraction,
                             bool batched, int scale_max, uint64_t *ret_pages);

/*
 * Solve a goal for a host (pcptune.policy(5), `pcp:`): if the default (0) meets the cap the
 * answer is 0, otherwise the smallest fraction >= 8 that meets it on every
 * zone (the largest lists the cap allows).  high is non-increasing in the
 * fraction, so the answer is exact (binary search over the model, checked
 * against the closed form in tests).
 *  - zones: the populated zones; n >= 1.
 *  - regime FIXED or AUTOTUNE; LEGACY returns -EOPNOTSUPP (a small legacy
 *    fraction would give each CPU managed/F pages).
 * Goals: DEFAULT -> 0; FRACTION -> its value (0 or 8..INT_MAX, else -EINVAL);
 * MINIMUM -> 0 if the default is already at the floor everywhere, else
 * pcp_minimum_fraction(); BATCH_MULTIPLE, BYTES_PER_CPU, BYTES_PER_NODE ->
 * binary search over [8, max managed + 1] (capped at INT_MAX).
 * The cap is checked on the kernel's value before its int store (which is
 * never larger), so a fraction is never chosen for an int wrap-around.
 * Returns 0 and *ret_fraction; -ERANGE if no fraction reaches the cap (cap below
 * the 4 x batch floor), then *ret_fraction is the MINIMUM goal's answer (INT_MAX
 * if even the floor is out of reach); -EOPNOTSUPP for LEGACY; -EINVAL.
 */
int pcp_solve_goal(PcpRegime regime, const PcpZone *zones, size_t n, unsigned page_size, const PcpGoal *goal,
                   int *ret_fraction);

/*
 * Smallest fraction >= 8 giving high = 4 x batch on every zone, in closed form:
 * max over zones of managed / (split x (4 x batch + 1)) + 1, at least 8.  It is
 * >= 8 even where the default already sits on the floor (the MINIMUM goal then
 * answers 0).  -EOPNOTSUPP for LEGACY, -ERANGE if it exceeds INT_MAX (the
 * sysctl is an int), -EINVAL.
 */
int pcp_minimum_fraction(PcpRegime regime, const PcpZone *zones, size_t n, unsigned page_size);

/*
 * "default", "minimum", "8x batch", "fraction 1000", "2 MiB per cpu",
 * "3 GiB per node" (a whole number of one IEC unit, else format_bytes()'s
 * rounded form), "invalid", into buf; returns buf.
 */
const char *pcp_goal_to_string(const PcpGoal *g, char *buf, size_t size);

/*
 * The largest number of pages one bulk free moves from a pcp list to the
 * buddy allocator under zone->lock when a page freed on that CPU takes the
 * list past high (the exit of a large process), for a zone whose pagesets
 * hold s: without batched callers, nr_pcp_free() of mm/page_alloc.c (6.7+:
 * clamp(free_count, batch, high - batch), free_count capped at
 * batch << CONFIG_PCP_BATCH_SCALE_MAX; 5.14-6.6: batch << free_factor, the
 * factor capped the same way, also bounded by high - batch) at its largest
 * high (high_max); with "mm/page_alloc: batch page freeing in
 * free_frozen_page_commit" (mainline 6.19) free_frozen_page_commit() frees
 * in steps of batch and drops zone->lock between them.  scale_max is the
 * cap (5 on Debian and mainline).  Pages, >= 1.
 */
int pcp_bulk_free_max_pages(const PcpSetting *s, int scale_max, bool batched);
