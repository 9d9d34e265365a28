/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "util.h"

/*
 * Metrics usable in `when:`/`until:` conditions and `host:` matches
 * (pcptune.policy(5)).  Every metric has one unit; comparisons in policies must
 * use a literal of that unit (checked at parse time).
 */

typedef enum MetricUnit {
        METRIC_UNIT_BYTES,     /* literals: 123, 64KiB, 2GiB ... */
        METRIC_UNIT_PAGES,     /* literals: plain integers */
        METRIC_UNIT_COUNT,     /* literals: plain integers */
        METRIC_UNIT_PERCENT,   /* literals: 12.5% or 12.5 */
        METRIC_UNIT_RATE,      /* literals: 200/s, 12000/m, 1/h */
        METRIC_UNIT_VERSION,   /* literals: 5.14, 6.1.0 */
        METRIC_UNIT_SECONDS,   /* literals: 200us, 1.5ms, 2s (values in seconds) */
        _METRIC_UNIT_MAX,
        _METRIC_UNIT_INVALID = -EINVAL,
} MetricUnit;

typedef enum MetricId {
        METRIC_MEMINFO_PERCPU,          /* bytes: Percpu from /proc/meminfo */
        METRIC_MEMINFO_AVAILABLE,       /* bytes: MemAvailable */
        METRIC_MEMINFO_FREE,            /* bytes: MemFree */
        METRIC_PCP_HELD,                /* bytes: sum of pageset counts x page size */
        METRIC_PCP_HIGH_MAX,            /* pages: largest high the kernel may use, over populated zones */
        METRIC_MEMCG_LIVE,              /* count */
        METRIC_MEMCG_DYING,             /* count */
        METRIC_PSI_MEMORY_SOME_AVG10,   /* percent */
        METRIC_PSI_MEMORY_SOME_AVG60,
        METRIC_PSI_MEMORY_SOME_AVG300,
        METRIC_PSI_MEMORY_FULL_AVG10,
        METRIC_PSI_MEMORY_FULL_AVG60,
        METRIC_PSI_MEMORY_FULL_AVG300,
        METRIC_PROC_EXIT_RATE,          /* rate: process exits per second (proc connector) */
        METRIC_CPUS,                    /* count: online CPUs */
        METRIC_MEMORY,                  /* bytes: MemTotal */
        METRIC_KERNEL,                  /* version */
        METRIC_NODES,                   /* count: NUMA nodes with memory or CPUs */
        METRIC_PERCPU_EMPTY_POPULATED,  /* bytes: populated percpu pages with nothing allocated (contrib 0003) */
        METRIC_MEMCG_IDS_USED,          /* count: memcg IDs that may be taken (snapshot_memcg_ids() used_max) */
        METRIC_PCP_BULK_FREE_P99,       /* seconds: p99 pcp bulk-free hold (tracefs, source-bulkfree.h) */
        METRIC_PCP_BULK_FREE_PAGES_P99, /* pages: p99 pages per pcp bulk free */
        METRIC_PCP_BULK_FREE_SAMPLES,   /* count: bulk frees measured in the window */
        _METRIC_MAX,
        _METRIC_INVALID = -EINVAL,
} MetricId;

typedef struct MetricInfo {
        const char *name;
        MetricUnit unit;
        const char *description;   /* one line, for --help and the man page */
} MetricInfo;

const MetricInfo *metric_info(MetricId id);
/* Exact name lookup.  Returns the id or -ENOENT. */
int metric_from_name(const char *name);
const char *metric_unit_to_string(MetricUnit u);

/* Values of every metric for one evaluation; unavailable ones are flagged. */
typedef struct MetricValues {
        double value[_METRIC_MAX];
        bool available[_METRIC_MAX];
        const char *why_unavailable[_METRIC_MAX];   /* static strings, e.g. "no PSI (psi=0)" */
} MetricValues;

struct Snapshot;

/*
 * Fill values from a snapshot.  Metrics not derived from the snapshot
 * (proc.exit_rate) stay unavailable unless the caller sets them.
 */
void metrics_from_snapshot(const struct Snapshot *s, MetricValues *ret);

static inline void metric_set(MetricValues *mv, MetricId id, double v) {
        mv->value[id] = v;
        mv->available[id] = true;
        mv->why_unavailable[id] = NULL;
}

/* why: static text, or owned by the caller for as long as mv is used. */
static inline void metric_set_unavailable(MetricValues *mv, MetricId id, const char *why) {
        mv->available[id] = false;
        mv->why_unavailable[id] = why;
}

/*
 * A value of metric id with its unit, for reports: bytes "1.5 GiB", pages "512 pages", percent "12.50%",
 * rate "200/s", version "6.12", seconds "250 us"/"1.5 ms"/"3 s", count "127".  Returns buf.
 */
const char *metric_format_value(MetricId id, double v, char *buf, size_t size);

/* A duration for reports: "0 s", "3 s", "1.5 s", "2 min 30 s".  Returns buf. */
const char *format_seconds(char *buf, size_t size, usec_t t);
