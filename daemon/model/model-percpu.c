/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "model-percpu.h"

void percpu_memcg_cost_model(const KernelVersion *v, unsigned nodes, PercpuCostModel *ret) {
        unsigned n = MAX(nodes, 1U);

        if (kernel_version_cmp(v, &KV(6, 13)) >= 0) {
                /* One node measured exactly on 6.18; the per-node part is taken from 6.12. */
                *ret = (PercpuCostModel){ 2118.0 + (n - 1) * 492.0,
                                          "6.18: 2118 B/CPU measured with percpu_stats (1 node); +492 B/CPU per "
                                          "extra node as on 6.12",
                                          kernel_version_cmp(v, &(KernelVersion){ 6, 18, 999 }) > 0 };
        } else if (kernel_version_cmp(v, &KV(6, 10)) >= 0) {
                *ret = (PercpuCostModel){ 1450.0 + n * 492.0,
                                          "Debian 6.12.117 under QEMU: 1450 + 492 x nodes B/CPU", false };
        } else if (kernel_version_cmp(v, &KV(5, 13)) >= 0) {
                *ret = (PercpuCostModel){ 1376.0 + n * 688.0, "Debian 6.1.192 under QEMU: 1376 + 688 x nodes B/CPU",
                                          kernel_version_cmp(v, &KV(6, 2)) >= 0 };
        } else {
                /* Before the rstat conversion (5.13) memcgs carried more per-cpu state: a lower bound. */
                *ret = (PercpuCostModel){ 1376.0 + n * 688.0,
                                          "lower bound from 6.1 (kernels before 5.13 carry more per-cpu state)", true };
        }
}

static const Advisory advisory_table[] = {
        {
                "partial percpu chunk depopulation", "5.14", { 5, 14, 0 },
                "empty pages of fragmented percpu chunks are unmapped after frees, so Percpu can fall back once "
                "dying memcgs are released (make them die: reclaim-dying)",
                "only whole empty chunks are freed: Percpu stays high after memcg churn; prefer reusing cgroups "
                "and deleting them in batches",
                "src",
        },
        {
                "memcg obj stock refill fix (refill_obj_stock)", "5.14", { 5, 14, 0 },
                "per-CPU byte stocks keep the objcg cached: kernel memory charging scales with the CPU count",
                "slab charging contends on shared cache lines, worst on cgroup v1: prefer cgroup v2",
                "unverified",
        },
        {
                "per-memcg lru_lock", "5.11", { 5, 11, 0 },
                "LRU locking is per memcg and node: many containers do not share one lru_lock",
                "one lru_lock per node serializes reclaim and compaction across all memcgs: nothing to tune",
                "unverified",
        },
        {
                "pcp recalculation after deferred init", "5.4", { 5, 4, 0 },
                "batch/high are recomputed from final managed pages (setup_per_zone_wmarks() since 5.14)",
                "pagesets set before deferred struct-page init finished keep a tiny batch (7 instead of 63): "
                "check them with `pcptunectl plan` and use `repair: pagesets`",
                "list",
        },
        {
                "memory.reclaim (cgroup v2)", "5.19", { 5, 19, 0 },
                "on cgroup v2, reclaim-dying can reclaim a subtree in bounded steps (bytes) without limits or "
                "force_empty (cgroup v1 has no memory.reclaim: see the probes below)",
                "on v2 only lowering memory.high/max reclaims a subtree; on v1 memory.force_empty (whole subtree)",
                "src",
        },
};

const Advisory *advisories(size_t *ret_n) {
        *ret_n = ELEMENTSOF(advisory_table);
        return advisory_table;
}

bool advisory_present(const Advisory *a, const KernelVersion *v) {
        return kernel_version_cmp(v, &a->version) >= 0;
}

const char *percpu_basis_to_string(PercpuBasis b) {
        static const char *const names[_PERCPU_BASIS_MAX] = {
                [PERCPU_BASIS_MEASURED] = "measured",
                [PERCPU_BASIS_ESTIMATED] = "estimated",
                [PERCPU_BASIS_MODELLED] = "modelled",
        };
        return b >= 0 && b < _PERCPU_BASIS_MAX ? names[b] : "unknown";
}

void percpu_memcg_cost(const KernelVersion *v, const char *kernel_release, unsigned nodes, unsigned possible_cpus,
                       const MemcgCostMeasurement *measured, double estimate_bytes, MemcgCost *ret) {
        PercpuCostModel m;
        MemcgCost c = { 0 };
        unsigned n = MAX(nodes, 1U);

        if (measured && measured->bytes > 0 && kernel_release && streq(measured->kernel_release, kernel_release) &&
            measured->possible_cpus == possible_cpus && measured->nodes == n) {
                c.bytes = measured->bytes;
                c.basis = PERCPU_BASIS_MEASURED;
                snprintf(c.how, sizeof c.how, "%s", measured->how);
        } else if (estimate_bytes > 0) {
                c.bytes = estimate_bytes;
                c.basis = PERCPU_BASIS_ESTIMATED;
                snprintf(c.how, sizeof c.how, "estimated by pcptuned from Percpu growth over memcg growth");
        } else {
                percpu_memcg_cost_model(v, n, &m);
                c.bytes = m.per_cpu_bytes * MAX(possible_cpus, 1U);
                c.basis = PERCPU_BASIS_MODELLED;
                snprintf(c.how, sizeof c.how, "modelled: %.0f B per possible CPU x %u (%s)%s", m.per_cpu_bytes,
                         MAX(possible_cpus, 1U), m.basis, m.extrapolated ? ", extrapolated to this kernel" : "");
        }
        *ret = c;
}

static uint64_t double_to_bytes(double d) {
        if (!(d > 0))
                return 0;
        if (d >= 1.8e19)
                return UINT64_MAX;
        return (uint64_t) (d + 0.5);
}

int percpu_split_compute(bool has_total, uint64_t total_bytes, uint64_t live, uint64_t dying, const MemcgCost *cost,
                         PercpuSplit *ret) {
        PercpuSplit s = { .total_bytes = total_bytes, .cost = *cost };
        double l = (double) live * cost->bytes, d = (double) dying * cost->bytes * PERCPU_DYING_RETAINED;

        if (!has_total)
                return -EINVAL;
        if (l + d > (double) total_bytes) {
                /* The model (or an estimate taken while memcgs came and went) overshoots: keep the ratio. */
                double k = l + d > 0 ? (double) total_bytes / (l + d) : 0;
                l *= k;
                d *= k;
                s.scaled = true;
        }
        s.live_memcgs_bytes = MIN(double_to_bytes(l), total_bytes);
        s.dying_memcgs_bytes = MIN(double_to_bytes(d), total_bytes - s.live_memcgs_bytes);
        s.other_bytes = total_bytes - s.live_memcgs_bytes - s.dying_memcgs_bytes;
        *ret = s;
        return 0;
}

void percpu_split_set_fragmentation(PercpuSplit *s, uint64_t bytes, const char *source) {
        s->has_fragmentation = true;
        s->fragmentation_bytes = MIN(bytes, s->total_bytes);
        s->fragmentation_source = source;
}

const char *percpu_split_basis(const PercpuSplit *s, char *buf, size_t size) {
        snprintf(buf, size,
                 "total measured (meminfo); memcgs %s, %.0f B each, a dying one keeps %.0f%% of it%s; "
                 "other estimated (the rest)",
                 percpu_basis_to_string(s->cost.basis), s->cost.bytes, PERCPU_DYING_RETAINED * 100,
                 s->scaled ? ", scaled down to fit the total" : "");
        return buf;
}
