/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "log.h"
#include "snapshot.h"
#include "source-table.h"

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

/* Fill the model's view of the populated zones and the pcp summaries. */
static int snapshot_derive(Snapshot *s) {
        size_t n = 0;

        s->pcp_zones = calloc(MAX(s->zoneinfo.n_zones, (size_t) 1), sizeof(PcpZone));
        s->pcp_zone_count_pages = calloc(MAX(s->zoneinfo.n_zones, (size_t) 1), sizeof(uint64_t));
        s->pcp_zone_high_limit = calloc(MAX(s->zoneinfo.n_zones, (size_t) 1), sizeof(int64_t));
        if (!s->pcp_zones || !s->pcp_zone_count_pages || !s->pcp_zone_high_limit)
                return -ENOMEM;
        s->pcp_held_pages = zoneinfo_pcp_count_pages(&s->zoneinfo);
        s->pcp_high_max = -1;

        for (size_t i = 0; i < s->zoneinfo.n_zones; i++) {
                const Zone *z = &s->zoneinfo.zones[i];
                if (!z->populated)
                        continue;
                s->pcp_zones[n] = (PcpZone){
                        .node = z->node,
                        .name = z->name,
                        .in = {
                                .managed_pages = z->managed_pages,
                                .low_pages = z->low_pages,
                                .node_cpus = topology_node_cpus(&s->topo, z->node),
                                .online_cpus = s->topo.online_cpus,
                        },
                };

                /* The largest high the kernel may use: printed where the layout has it
                 * (6.13+), the fixed high before 6.7, else the model at the current value. */
                int64_t limit = -1;
                if (s->zoneinfo.has_high_min_max || s->regime != PCP_REGIME_AUTOTUNE) {
                        for (size_t c = 0; c < z->n_cpus; c++) {
                                int64_t v = s->zoneinfo.has_high_min_max ? z->cpus[c].high_max : z->cpus[c].high;
                                limit = MAX(limit, v);
                        }
                } else if (s->has_knob && s->knob.writable) {
                        PcpSetting set;
                        if (pcp_model_zone(s->regime, &s->pcp_zones[n].in, s->topo.page_size,
                                           (int) s->knob.value, &set) >= 0)
                                limit = set.high_max;
                }
                s->pcp_high_max = MAX(s->pcp_high_max, limit);
                s->pcp_zone_high_limit[n] = limit;
                for (size_t c = 0; c < z->n_cpus; c++)
                        s->pcp_zone_count_pages[n] += (uint64_t) MAX(z->cpus[c].count, (int64_t) 0);
                n++;
        }
        s->n_pcp_zones = n;
        return 0;
}

/*
 * The pcp regime follows what the kernel prints, the version only where
 * nothing printed tells (vendors backport):
 *  - only vm.percpu_pagelist_fraction: LEGACY (it became high_fraction in 5.14);
 *  - zoneinfo prints high_min/high_max: AUTOTUNE (zoneinfo_show_print() prints
 *    them from 6.13; the fields exist only with auto-tuning, 6.7+);
 *  - 5.14+ without those lines: with a fixed high (5.14-6.6) every pageset
 *    holds zone_highsize() of the zone, the model's FIXED value, while an
 *    auto-tuned high moves between high_min and high_max per CPU (and is 0
 *    until the CPU first uses the zone).  A CPU whose batch is the model's
 *    and whose high is another value shows auto-tuning; pagesets that all
 *    hold the fixed value cannot tell the two apart (at a non-zero fraction
 *    high_min = high_max = that value in both), so the version decides.
 */
static void snapshot_classify_regime(Snapshot *s) {
        PcpRegime by_version = pcp_regime_from_version(&s->topo.kernel);

        s->regime = by_version;
        s->regime_basis = PCP_REGIME_BY_VERSION;
        if (s->has_knob && !s->knob.writable) {
                s->regime = PCP_REGIME_LEGACY;
                s->regime_basis = PCP_REGIME_BY_KNOB;
                return;
        }
        if (s->zoneinfo.has_high_min_max) {
                s->regime = PCP_REGIME_AUTOTUNE;
                s->regime_basis = PCP_REGIME_BY_ZONEINFO;
                return;
        }
        if (!s->has_knob)
                return;
        for (size_t i = 0; i < s->zoneinfo.n_zones; i++) {
                const Zone *z = &s->zoneinfo.zones[i];
                PcpSetting fixed;
                PcpZoneInput in;
                if (!z->populated)
                        continue;
                in = (PcpZoneInput){ .managed_pages = z->managed_pages, .low_pages = z->low_pages,
                                     .node_cpus = topology_node_cpus(&s->topo, z->node),
                                     .online_cpus = s->topo.online_cpus };
                if (pcp_model_zone(PCP_REGIME_FIXED, &in, s->topo.page_size, (int) s->knob.value, &fixed) < 0)
                        continue;
                for (size_t c = 0; c < z->n_cpus; c++) {
                        if (z->cpus[c].batch != fixed.batch)
                                continue; /* a pageset the kernel did not recompute: says nothing */
                        s->regime_cpus_compared++;
                        s->regime_cpus_dynamic += z->cpus[c].high != fixed.high_max;
                }
        }
        if (s->regime_cpus_dynamic > 0) {
                s->regime = PCP_REGIME_AUTOTUNE;
                s->regime_basis = PCP_REGIME_BY_PAGESETS;
        }
}

int snapshot_take(const char *root, Snapshot **ret) {
        return snapshot_take_reuse(root, NULL, 0, ret);
}

int snapshot_take_reuse(const char *root, const Snapshot *prev, unsigned flags, Snapshot **ret) {
        return snapshot_take_explain(root, prev, flags, ret, NULL);
}

const char *snapshot_error_format(const char *root, const SnapshotError *err, int error, char *buf, size_t size) {
        _cleanup_(freep) char *path = NULL;
        char epath[512];

        if (!err || !err->file) {
                snprintf(buf, size, "%s", errno_str(error));
                return buf;
        }
        if (path_join_root(root, err->file, &path) < 0)
                path = NULL;
        str_escape(path ?: err->file, epath, sizeof epath);
        if (err->line > 0 && err->incomplete)
                snprintf(buf, size, "%s:%zu: the zone that starts here is incomplete (a truncated file?)", epath,
                         err->line);
        else if (err->line > 0)
                snprintf(buf, size, "%s:%zu: %s", epath, err->line,
                         error == -EINVAL ? "unexpected line (malformed, or a layout this version does not know)"
                                          : errno_str(error));
        else
                snprintf(buf, size, "%s: %s", epath, errno_str(error));
        return buf;
}

/* The readers of the sources in mask, in table order (prev for those reuse names). */
static int snapshot_read_sources(const char *root, const Snapshot *prev, unsigned reuse, unsigned mask, Snapshot *s,
                                 SnapshotError *err) {
        for (SourceId id = 0; id < _SOURCE_MAX; id++) {
                const SourceDesc *d = source_desc(id);
                int r;

                if (!d->read || !(mask & SOURCE_BIT(id)))
                        continue;
                r = d->read(root, prev && (reuse & d->reuse) ? prev : NULL, s, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

int snapshot_take_explain(const char *root, const Snapshot *prev, unsigned flags, Snapshot **ret, SnapshotError *err) {
        _cleanup_(snapshot_freep) Snapshot *s = NULL;
        SnapshotError e = { 0 };
        int r;

        s = calloc(1, sizeof(Snapshot));
        if (!s)
                return -ENOMEM;
        s->timestamp = now_usec(CLOCK_MONOTONIC);
        r = snapshot_read_sources(root, prev, flags, ~0u, s, &e);
        if (r < 0) {
                if (err)
                        *err = e;
                return r;
        }
        snapshot_classify_regime(s);
        r = snapshot_derive(s);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(s);
        return 0;
}

int snapshot_take_sources(const char *root, unsigned sources, Snapshot **ret) {
        _cleanup_(snapshot_freep) Snapshot *s = calloc(1, sizeof(Snapshot));
        SnapshotError e = { 0 };
        int r;

        if (!s)
                return -ENOMEM;
        s->timestamp = now_usec(CLOCK_MONOTONIC);
        r = snapshot_read_sources(root, NULL, 0, sources, s, &e);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(s);
        return 0;
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
