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
                "per-CPU byte stocks keep the objcg cached: kmem charging scales (cgroup v2 gained 49x in the seed)",
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
                "pcp high auto-tuning (high_min/high_max)", "6.7", { 6, 7, 0 },
                "high moves between high_min and high_max; a non-zero fraction pins both and disables "
                "auto-tuning, CONFIG_PCP_BATCH_SCALE_MAX bounds each bulk free",
                "high is fixed per zone: the fraction sets it directly",
                "src",
        },
        {
                "memory.reclaim (cgroup v2)", "5.19", { 5, 19, 0 },
                "reclaim-dying can reclaim a subtree in bounded steps (bytes) without limits or force_empty",
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
