/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "host-facts.h"
#include "model-pcp.h"
#include "model-percpu.h"
#include "source-cgroup.h"
#include "source-meminfo.h"
#include "source-percpu-stats.h"
#include "source-percpu-sysfs.h"
#include "source-psi.h"
#include "source-sysctl.h"
#include "source-topology.h"
#include "source-vmstat.h"
#include "source-zoneinfo.h"
#include "util.h"

/* What the pcp regime of a snapshot rests on (snapshot_classify_regime()). */
typedef enum PcpRegimeBasis {
        PCP_REGIME_BY_VERSION,         /* nothing the kernel prints tells: its version */
        PCP_REGIME_BY_KNOB,            /* only vm.percpu_pagelist_fraction exists: before 5.14 */
        PCP_REGIME_BY_ZONEINFO,        /* zoneinfo prints high_min/high_max: auto-tuned (6.13+ or a backport) */
        PCP_REGIME_BY_PAGESETS,        /* CPUs' high differ from the fixed high: auto-tuned (a backport) */
        _PCP_REGIME_BASIS_MAX,
} PcpRegimeBasis;

/* The sources of a sample: the rows of the source table (source-table.c), read in this order. */
typedef enum SourceId {
        SOURCE_TOPOLOGY,
        SOURCE_MEMINFO,
        SOURCE_ZONEINFO,
        SOURCE_VMSTAT,
        SOURCE_KNOBS,
        SOURCE_MEMCG,
        SOURCE_PSI,
        SOURCE_PERCPU_SYSFS,
        SOURCE_PROC_VERSION,
        SOURCE_PERCPU_STATS,
        SOURCE_HOST_RECORD,
        _SOURCE_MAX,
        _SOURCE_INVALID = -EINVAL,
} SourceId;

#define SOURCE_BIT(id) (1u << (id))

/*
 * One sample of the kernel's state, read below a root prefix.  Required:
 * meminfo, zoneinfo, topology; the rest is optional and flagged (a missing
 * optional source is "unavailable", not zero).
 */
typedef struct Snapshot {
        usec_t timestamp;         /* CLOCK_MONOTONIC, µs */
        Topology topo;
        Meminfo meminfo;
        Zoneinfo zoneinfo;
        Vmstat vmstat;
        KnobValue knobs[_KNOB_ID_MAX];    /* every row of the knob table, by KnobId: snapshot_knob_value() */
        KnobId pcp_knob;          /* the pcp sysctl among them (pcp_knob_from_values()), valid when has_knob */
        MemcgCounts memcg;
        Psi psi;
        bool has_vmstat;
        bool has_knob;
        bool has_memcg;
        bool has_psi;
        PercpuSysfs percpu_sysfs;  /* contrib patch 0003: /sys/kernel/mm/percpu */
        bool has_percpu_sysfs;
        PcpRegime regime;
        PcpRegimeBasis regime_basis;
        unsigned regime_cpus_compared;    /* PCP_REGIME_BY_PAGESETS/VERSION: pagesets compared */
        unsigned regime_cpus_dynamic;     /* ... whose high is not the fixed high */

        /* Derived: populated zones for the model (pointers into zoneinfo names). */
        PcpZone *pcp_zones;
        size_t n_pcp_zones;
        uint64_t pcp_held_pages;  /* sum of pageset counts */
        int64_t pcp_high_max;     /* largest high limit over populated zones and CPUs (printed or modelled) */
        /* Per populated zone, parallel to pcp_zones[]: pages on its pcp lists now (all CPUs), and
         * the largest high its pagesets may use (printed high_max, the fixed high, or the model), -1 unknown. */
        uint64_t *pcp_zone_count_pages;
        int64_t *pcp_zone_high_limit;

        /* What reading cost (CPU µs of this thread), to adapt how often it is read. */
        usec_t zoneinfo_cost_usec;
        usec_t memcg_cost_usec;
        bool zoneinfo_reused;
        bool memcg_reused;
        int knob_error;            /* why has_knob is false: -ENOENT (no such sysctl), -EINVAL (garbage) ... */
} Snapshot;

/*
 * Sampling adapts to cost: zoneinfo grows with CPUs x zones (a 256-CPU host
 * prints ~100 KB, folding per-CPU counters in the kernel) and the v1 memcg
 * count walks every directory of the hierarchy.  These flags copy them from
 * prev instead of reading them again.
 */
typedef enum SnapshotReuse {
        SNAPSHOT_REUSE_ZONEINFO = 1 << 0,
        SNAPSHOT_REUSE_MEMCG = 1 << 1,
} SnapshotReuse;

/* Which required source failed, for messages that name the file (and the line of zoneinfo). */
typedef struct SnapshotError {
        const char *file;          /* below the root: "/proc/zoneinfo"; static */
        size_t line;               /* 0 if not known */
        bool incomplete;           /* zoneinfo ends in the middle of the zone at line */
} SnapshotError;

/* The pcp sysctl's row among knobs[] (whichever of the two exists); NULL when the snapshot has none. */
static inline const KnobDesc *snapshot_pcp_desc(const Snapshot *s) {
        return s->has_knob ? knob_desc(s->pcp_knob) : NULL;
}

/* The pcp sysctl's value (knobs[] of its row); 0 when the snapshot has none. */
static inline int64_t snapshot_pcp_value(const Snapshot *s) {
        return s->has_knob ? s->knobs[s->pcp_knob].value : 0;
}

/* Whether pcptune may write the pcp sysctl here (high_fraction, 5.14+): false when there is none. */
static inline bool snapshot_pcp_writable(const Snapshot *s) {
        return s->has_knob && knob_desc(s->pcp_knob)->writable;
}

/* The pcp sysctl's name ("vm.percpu_pagelist_high_fraction"); NULL when there is none. */
static inline const char *snapshot_pcp_name(const Snapshot *s) {
        return s->has_knob ? knob_desc(s->pcp_knob)->name : NULL;
}

/* The effective batch scale of the snapshot's kernel (pcp_batch_scale_max()): vm.pcp_batch_scale_max where the
 * snapshot read it, else the build default. */
static inline int snapshot_batch_scale_max(const Snapshot *s) {
        const KnobValue *v = &s->knobs[KNOB_PCP_BATCH_SCALE_MAX];
        return pcp_batch_scale_max(v->present, v->value);
}

Snapshot *snapshot_free(Snapshot *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Snapshot *, snapshot_free);

/*
 * A knob's value as the snapshot read it: the file at its knob table row's
 * path below the root (the "knobs" source, one read per sample).  0 and
 * *ret.  -ENODATA without a snapshot (s NULL: a hypothetical shape) or from
 * a snapshot_take_sources() that did not read the knobs; -EINVAL for an id
 * outside the table; else why the snapshot has no value (KnobValue.error):
 * -ENOENT (no such sysctl: a kernel without it, e.g. without the contrib
 * patch that adds it), -EINVAL (not a number), another -errno of the read.
 */
int snapshot_knob_value(const Snapshot *s, KnobId id, int64_t *ret);

/* Nodes that have CPUs or populated zones (at least 1): the node count of the percpu model. */
unsigned snapshot_count_nodes(const Snapshot *s);

/* The per-memcg percpu cost of the snapshot's host (percpu_memcg_cost(): measured may be NULL,
 * estimate_bytes 0 when the daemon has none). */
void snapshot_memcg_cost(const Snapshot *s, const MemcgCostMeasurement *measured, double estimate_bytes,
                         MemcgCost *ret);

/*
 * Percpu of the snapshot split into live memcgs, dying memcgs and other
 * (percpu_split_compute()), with fragmentation where measured: the contrib
 * counters (frag_free_bytes x nr_units) or else a consistent percpu_stats
 * read (pstats may be NULL; sum_frag of partly used chunks x possible CPUs).
 * 0, -ENODATA (no Percpu line or no memory controller).
 */
int snapshot_percpu_split(const Snapshot *s, const MemcgCost *cost, const PercpuStatsView *pstats, PercpuSplit *ret);

/*
 * memcg IDs.  Swap records and shadow entries keep a 16-bit memcg ID, and
 * every memcg takes one from css_alloc: IDs 1..MEM_CGROUP_ID_MAX (65535),
 * the root's included (6.1 mm/memcontrol.c:5151-5161 idr_alloc() up to
 * MEM_CGROUP_ID_MAX + 1 exclusive, -ENOSPC when none is left; 6.12
 * mm/memcontrol.c:3378 and :3519 xa_alloc() with XA_LIMIT(1, MEM_CGROUP_ID_MAX),
 * -EBUSY).  Going offline puts the ID's base reference (6.1 :5448, 6.12 :3697
 * mem_cgroup_id_put() in mem_cgroup_css_offline()), so a dying memcg gives its
 * ID back at rmdir unless swap entries charged to it while it was online still
 * hold references (6.1 :7395/:7460 mem_cgroup_swapout() and
 * __mem_cgroup_try_charge_swap(), put at :7504 when the swap entry is freed;
 * 6.12 :5025/:5081/:5122).  Page cache, slab and percpu allocations pin the
 * memcg but not its ID.  Since 4.8; before, dying memcgs kept their IDs.
 */
#define MEMCG_ID_LIMIT 65535
#define MEMCG_ID_WARN_PERCENT 90

typedef struct MemcgIdUsage {
        uint64_t used;       /* IDs certainly taken: live memcgs (root included) */
        uint64_t used_max;   /* plus dying memcgs when swap is in use (their swap entries may keep IDs) */
        uint64_t limit;      /* MEMCG_ID_LIMIT */
        bool exact;          /* used == used_max: no swap in use, or a kernel before 4.8 */
        bool warn;           /* used_max >= MEMCG_ID_WARN_PERCENT of the limit */
} MemcgIdUsage;

/* 0, -ENODATA (no memory controller). */
int snapshot_memcg_ids(const Snapshot *s, MemcgIdUsage *ret);
