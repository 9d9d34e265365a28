/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "metrics.h"
#include "snapshot.h"

/*
 * The registry of metric names for `when:`, `until:` and `host:`.  The names
 * are the policy language's public API (pcptune.policy(5)): never rename one.
 */
static const MetricInfo metric_table[_METRIC_MAX] = {
        [METRIC_MEMINFO_PERCPU] = { "meminfo.percpu", METRIC_UNIT_BYTES,
                                    "memory used by the per-cpu allocator (Percpu in /proc/meminfo)" },
        [METRIC_MEMINFO_AVAILABLE] = { "meminfo.available", METRIC_UNIT_BYTES,
                                       "memory available for new work (MemAvailable in /proc/meminfo)" },
        [METRIC_MEMINFO_FREE] = { "meminfo.free", METRIC_UNIT_BYTES, "free memory (MemFree in /proc/meminfo)" },
        [METRIC_PCP_HELD] = { "pcp.held", METRIC_UNIT_BYTES,
                              "free pages held on per-cpu page lists, all zones and CPUs (/proc/zoneinfo count)" },
        [METRIC_PCP_HIGH_MAX] = { "pcp.high_max", METRIC_UNIT_PAGES,
                                  "largest pcp high the kernel may use, over populated zones and CPUs" },
        [METRIC_MEMCG_LIVE] = { "memcg.live", METRIC_UNIT_COUNT, "memory cgroups alive, host-wide (root included)" },
        [METRIC_MEMCG_DYING] = { "memcg.dying", METRIC_UNIT_COUNT,
                                 "memory cgroups removed but not yet freed, host-wide" },
        [METRIC_PSI_MEMORY_SOME_AVG10] = { "psi.memory.some.avg10", METRIC_UNIT_PERCENT,
                                           "share of time some task stalled on memory, last 10 s" },
        [METRIC_PSI_MEMORY_SOME_AVG60] = { "psi.memory.some.avg60", METRIC_UNIT_PERCENT,
                                           "share of time some task stalled on memory, last 60 s" },
        [METRIC_PSI_MEMORY_SOME_AVG300] = { "psi.memory.some.avg300", METRIC_UNIT_PERCENT,
                                            "share of time some task stalled on memory, last 300 s" },
        [METRIC_PSI_MEMORY_FULL_AVG10] = { "psi.memory.full.avg10", METRIC_UNIT_PERCENT,
                                           "share of time all non-idle tasks stalled on memory, last 10 s" },
        [METRIC_PSI_MEMORY_FULL_AVG60] = { "psi.memory.full.avg60", METRIC_UNIT_PERCENT,
                                           "share of time all non-idle tasks stalled on memory, last 60 s" },
        [METRIC_PSI_MEMORY_FULL_AVG300] = { "psi.memory.full.avg300", METRIC_UNIT_PERCENT,
                                            "share of time all non-idle tasks stalled on memory, last 300 s" },
        [METRIC_PROC_EXIT_RATE] = { "proc.exit_rate", METRIC_UNIT_RATE,
                                    "process exits per second (proc connector)" },
        [METRIC_CPUS] = { "cpus", METRIC_UNIT_COUNT, "online CPUs" },
        [METRIC_MEMORY] = { "memory", METRIC_UNIT_BYTES, "total memory (MemTotal in /proc/meminfo)" },
        [METRIC_KERNEL] = { "kernel", METRIC_UNIT_VERSION, "running kernel release (major.minor.patch)" },
        [METRIC_NODES] = { "nodes", METRIC_UNIT_COUNT, "NUMA nodes with CPUs or memory" },
        [METRIC_PERCPU_EMPTY_POPULATED] = { "percpu.empty_populated", METRIC_UNIT_BYTES,
                                            "populated percpu pages with nothing allocated in them "
                                            "(/sys/kernel/mm/percpu, pcptune's contrib kernel patch)" },
        [METRIC_MEMCG_IDS_USED] = { "memcg.ids_used", METRIC_UNIT_COUNT,
                                    "memcg IDs that may be taken, of 65535: live memcgs, plus dying ones while swap "
                                    "is in use" },
        [METRIC_PCP_BULK_FREE_P99] = { "pcp.bulk_free.p99", METRIC_UNIT_SECONDS,
                                       "99th percentile of pcp bulk-free zone->lock holds measured by tracing "
                                       "(pcptuned only; a lower bound, see pcptuned(8))" },
        [METRIC_PCP_BULK_FREE_PAGES_P99] = { "pcp.bulk_free.pages.p99", METRIC_UNIT_PAGES,
                                             "99th percentile of pages moved per pcp bulk free (pcptuned only)" },
        [METRIC_PCP_BULK_FREE_SAMPLES] = { "pcp.bulk_free.samples", METRIC_UNIT_COUNT,
                                           "pcp bulk frees measured in the metric's window (pcptuned only)" },
};

const MetricInfo *metric_info(MetricId id) {
        if (id < 0 || id >= _METRIC_MAX)
                return NULL;
        return &metric_table[id];
}

int metric_from_name(const char *name) {
        if (!name)
                return -ENOENT;
        for (int i = 0; i < _METRIC_MAX; i++)
                if (streq(metric_table[i].name, name))
                        return i;
        return -ENOENT;
}

const char *metric_unit_to_string(MetricUnit u) {
        static const char *const names[_METRIC_UNIT_MAX] = {
                [METRIC_UNIT_BYTES] = "bytes",
                [METRIC_UNIT_PAGES] = "pages",
                [METRIC_UNIT_COUNT] = "count",
                [METRIC_UNIT_PERCENT] = "percent",
                [METRIC_UNIT_RATE] = "per second",
                [METRIC_UNIT_VERSION] = "version",
                [METRIC_UNIT_SECONDS] = "seconds",
        };

        if (u < 0 || u >= _METRIC_UNIT_MAX)
                return NULL;
        return names[u];
}

static void metric_unavailable(MetricValues *mv, MetricId id, const char *why) {
        mv->value[id] = 0;
        mv->available[id] = false;
        mv->why_unavailable[id] = why;
}

void metrics_from_snapshot(const Snapshot *s, MetricValues *ret) {
        MetricValues mv;

        for (int i = 0; i < _METRIC_MAX; i++)
                metric_unavailable(&mv, (MetricId) i, "not measured");

        /* /proc/meminfo prints KiB ("kB" is 1024 bytes, fs/proc/meminfo.c show_val_kb()). */
        if (s->meminfo.has_percpu)
                metric_set(&mv, METRIC_MEMINFO_PERCPU, (double) s->meminfo.percpu_kib * 1024.0);
        else
                metric_unavailable(&mv, METRIC_MEMINFO_PERCPU, "no Percpu line in /proc/meminfo (kernel < 4.7)");
        if (s->meminfo.has_mem_available)
                metric_set(&mv, METRIC_MEMINFO_AVAILABLE, (double) s->meminfo.mem_available_kib * 1024.0);
        else
                metric_unavailable(&mv, METRIC_MEMINFO_AVAILABLE,
                                   "no MemAvailable line in /proc/meminfo (kernel < 3.14)");
        metric_set(&mv, METRIC_MEMINFO_FREE, (double) s->meminfo.mem_free_kib * 1024.0);
        metric_set(&mv, METRIC_MEMORY, (double) s->meminfo.mem_total_kib * 1024.0);

        metric_set(&mv, METRIC_PCP_HELD, (double) s->pcp_held_pages * (double) s->topo.page_size);
        if (s->pcp_high_max >= 0)
                metric_set(&mv, METRIC_PCP_HIGH_MAX, (double) s->pcp_high_max);
        else
                metric_unavailable(&mv, METRIC_PCP_HIGH_MAX, "no populated zone with pagesets");

        if (s->has_memcg && s->memcg.mode != CGROUP_MEMORY_NONE) {
                metric_set(&mv, METRIC_MEMCG_LIVE, (double) s->memcg.live);
                metric_set(&mv, METRIC_MEMCG_DYING, (double) s->memcg.dying);
        } else {
                const char *why = s->has_memcg ? "no memory cgroup controller" : "memory cgroups not read";
                metric_unavailable(&mv, METRIC_MEMCG_LIVE, why);
                metric_unavailable(&mv, METRIC_MEMCG_DYING, why);
                metric_unavailable(&mv, METRIC_MEMCG_IDS_USED, why);
        }
        MemcgIdUsage ids;
        if (snapshot_memcg_ids(s, &ids) >= 0)
                metric_set(&mv, METRIC_MEMCG_IDS_USED, (double) ids.used_max);

        if (s->has_psi) {
                metric_set(&mv, METRIC_PSI_MEMORY_SOME_AVG10, s->psi.some.avg10);
                metric_set(&mv, METRIC_PSI_MEMORY_SOME_AVG60, s->psi.some.avg60);
                metric_set(&mv, METRIC_PSI_MEMORY_SOME_AVG300, s->psi.some.avg300);
                if (s->psi.has_full) {
                        metric_set(&mv, METRIC_PSI_MEMORY_FULL_AVG10, s->psi.full.avg10);
                        metric_set(&mv, METRIC_PSI_MEMORY_FULL_AVG60, s->psi.full.avg60);
                        metric_set(&mv, METRIC_PSI_MEMORY_FULL_AVG300, s->psi.full.avg300);
                } else
                        for (MetricId i = METRIC_PSI_MEMORY_FULL_AVG10; i <= METRIC_PSI_MEMORY_FULL_AVG300; i++)
                                metric_unavailable(&mv, i, "no \"full\" line in /proc/pressure/memory");
        } else
                for (MetricId i = METRIC_PSI_MEMORY_SOME_AVG10; i <= METRIC_PSI_MEMORY_FULL_AVG300; i++)
                        metric_unavailable(&mv, i, "no PSI (CONFIG_PSI=n or psi=0)");

        /* Filled by the manager from the netlink proc connector when it runs. */
        metric_unavailable(&mv, METRIC_PROC_EXIT_RATE, "proc connector not running");

        metric_set(&mv, METRIC_CPUS, (double) s->topo.online_cpus);
        metric_set(&mv, METRIC_KERNEL, kernel_version_to_double(&s->topo.kernel));
        /* host_count_nodes(): the nodes status and plan count, 0 if none is known. */
        unsigned nodes = host_count_nodes(s->topo.node_cpus, s->topo.n_nodes, s->pcp_zones, s->n_pcp_zones);
        if (nodes > 0)
                metric_set(&mv, METRIC_NODES, (double) nodes);
        else
                metric_unavailable(&mv, METRIC_NODES, "no node with CPUs or managed memory");

        if (s->has_percpu_sysfs)
                metric_set(&mv, METRIC_PERCPU_EMPTY_POPULATED,
                           (double) s->percpu_sysfs.nr_empty_pop_pages * (double) s->percpu_sysfs.nr_units *
                                   (double) s->topo.page_size);
        else
                metric_unavailable(&mv, METRIC_PERCPU_EMPTY_POPULATED,
                                   "no /sys/kernel/mm/percpu (pcptune's contrib kernel patch 0003)");

        /* Filled by the manager from its trace instance (source-bulkfree.h) when it runs. */
        for (MetricId i = METRIC_PCP_BULK_FREE_P99; i <= METRIC_PCP_BULK_FREE_SAMPLES; i++)
                metric_unavailable(&mv, i, "measured by the running pcptuned only");

        *ret = mv;
}

const char *metric_format_value(MetricId id, double v, char *buf, size_t size) {
        const MetricInfo *mi = metric_info(id);

        switch (mi ? mi->unit : METRIC_UNIT_COUNT) {
        case METRIC_UNIT_BYTES:
                return format_bytes(buf, size, v > 0 ? (uint64_t) v : 0);
        case METRIC_UNIT_PAGES:
                snprintf(buf, size, "%.0f pages", v);
                break;
        case METRIC_UNIT_PERCENT:
                snprintf(buf, size, "%.2f%%", v);
                break;
        case METRIC_UNIT_RATE:
                snprintf(buf, size, "%.0f/s", v);
                break;
        case METRIC_UNIT_VERSION:
                snprintf(buf, size, "%d.%d", (int) (v / 1e6), (int) (v / 1e3) % 1000);
                break;
        case METRIC_UNIT_SECONDS:
                if (v < 1e-3)
                        snprintf(buf, size, "%.0f us", v * 1e6);
                else if (v < 1)
                        snprintf(buf, size, "%.1f ms", v * 1e3);
                else
                        snprintf(buf, size, "%.1f s", v);
                break;
        default:
                snprintf(buf, size, "%.0f", v);
        }
        return buf;
}

const char *format_seconds(char *buf, size_t size, usec_t t) {
        uint64_t s = t / USEC_PER_SEC;
        if (t % USEC_PER_SEC && s < 10)
                snprintf(buf, size, "%.1f s", (double) t / USEC_PER_SEC);
        else if (s < 120)
                snprintf(buf, size, "%" PRIu64 " s", s);
        else if (s < 7200 && s % 60 == 0)
                snprintf(buf, size, "%" PRIu64 " min", s / 60);
        else if (s < 7200)
                snprintf(buf, size, "%" PRIu64 " min %" PRIu64 " s", s / 60, s % 60);
        else
                snprintf(buf, size, "%" PRIu64 " h %" PRIu64 " min", s / 3600, s / 60 % 60);
        return buf;
}
