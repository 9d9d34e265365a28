/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "log.h"
#include "snapshot.h"

Snapshot *snapshot_free(Snapshot *s) {
        if (!s)
                return NULL;
        topology_done(&s->topo);
        zoneinfo_done(&s->zoneinfo);
        memcg_counts_done(&s->memcg);
        free(s->pcp_zones);
        free(s->pcp_zone_count_pages);
        free(s->pcp_zone_high_limit);
        free(s);
        return NULL;
}

int snapshot_knob_value(const Snapshot *s, KnobId id, int64_t *ret) {
        if (!s)
                return -ENODATA;
        if (id < 0 || id >= _KNOB_ID_MAX)
                return -EINVAL;
        if (!s->knobs[id].present)
                return s->knobs[id].error < 0 ? s->knobs[id].error : -ENODATA;
        *ret = s->knobs[id].value;
        return 0;
}

unsigned snapshot_count_nodes(const Snapshot *s) {
        return MAX(host_count_nodes(s->topo.node_cpus, s->topo.n_nodes, s->pcp_zones, s->n_pcp_zones), 1U);
}

void snapshot_memcg_cost(const Snapshot *s, const MemcgCostMeasurement *measured, double estimate_bytes,
                         MemcgCost *ret) {
        percpu_memcg_cost(&s->topo.kernel, s->topo.kernel_release, snapshot_count_nodes(s),
                          s->topo.possible_cpus ?: s->topo.online_cpus, measured, estimate_bytes, ret);
}

/* Per-unit bytes x units, saturating: the factors come from text files. */
static uint64_t mul_sat(uint64_t a, uint64_t b) {
        uint64_t r;
        return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

int snapshot_percpu_split(const Snapshot *s, const MemcgCost *cost, const PercpuStatsView *pstats, PercpuSplit *ret) {
        PercpuSplit sp;
        int r;

        if (!s->meminfo.has_percpu || !s->has_memcg || s->memcg.mode == CGROUP_MEMORY_NONE)
                return -ENODATA;
        r = percpu_split_compute(true, s->meminfo.percpu_kib * 1024, s->memcg.live, s->memcg.dying, cost, &sp);
        if (r < 0)
                return r;
        if (s->has_percpu_sysfs)
                percpu_split_set_fragmentation(&sp, mul_sat(s->percpu_sysfs.frag_free_bytes, s->percpu_sysfs.nr_units),
                                               "contrib /sys/kernel/mm/percpu/frag_free_bytes");
        else if (pstats && pstats->error == 0 && !pstats->skipped && pstats->consistent && pstats->frag_bytes >= 0)
                percpu_split_set_fragmentation(&sp,
                                               mul_sat((uint64_t) pstats->frag_bytes,
                                                       s->topo.possible_cpus ?: s->topo.online_cpus),
                                               "percpu_stats free bytes in used pages, with Percpu");
        *ret = sp;
        return 0;
}

int snapshot_memcg_ids(const Snapshot *s, MemcgIdUsage *ret) {
        MemcgIdUsage u = { .limit = MEMCG_ID_LIMIT };
        bool swap_used;

        if (!s->has_memcg || s->memcg.mode == CGROUP_MEMORY_NONE)
                return -ENODATA;
        /* Without SwapTotal/SwapFree, assume swap entries may exist. */
        swap_used = !s->meminfo.has_swap || !s->meminfo.has_swap_free ||
                    s->meminfo.swap_free_kib < s->meminfo.swap_total_kib;
        u.used = s->memcg.live;
        if (kernel_version_cmp(&s->topo.kernel, &KV(4, 8)) < 0)
                u.used += s->memcg.dying;
        u.used_max = u.used;
        if (swap_used && kernel_version_cmp(&s->topo.kernel, &KV(4, 8)) >= 0)
                u.used_max += s->memcg.dying;
        u.exact = u.used == u.used_max;
        u.warn = u.used_max * 100 >= (uint64_t) MEMCG_ID_WARN_PERCENT * u.limit;
        *ret = u;
        return 0;
}
