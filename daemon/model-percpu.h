/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

/*
 * Percpu memory per memory cgroup (kernel.md §5.1).  Every memcg allocates
 * per-cpu statistics (vmstats_percpu), one lruvec stats block per NUMA node,
 * refcounts and rstat state, sized per POSSIBLE CPU:
 *     bytes = possible_cpus x (A + nr_node_ids x B)
 * A and B were measured on Debian's own kernels under QEMU (500 memcgs
 * created; the Percpu growth divided by 500; tests/fixtures/SET/
 * memcg-churn.txt): 6.1.0-57: A 1376, B 688; 6.12.117: A 1450, B 492 (bytes).
 * 6.18 on the development VM (1 node): 2118 bytes per CPU, exact from
 * percpu_stats.  A removed memcg that page cache pins keeps ~98% of it.
 */

typedef struct PercpuCostModel {
        double per_cpu_bytes;      /* A + nodes x B */
        const char *basis;         /* which measurement the numbers come from */
        bool extrapolated;         /* the kernel is outside the measured versions */
} PercpuCostModel;

/* The model for a kernel version and node count.  Always succeeds. */
void percpu_memcg_cost_model(const KernelVersion *v, unsigned nodes, PercpuCostModel *ret);

/* Fraction of a memcg's percpu memory a dying (pinned) memcg keeps (kernel.md §5.1: 2081 of 2118 bytes). */
#define PERCPU_DYING_RETAINED 0.98

/* Kernel mechanisms from the seed threads: whether this kernel has them and what it means. */
typedef struct Advisory {
        const char *name;
        const char *since;         /* first mainline release, as text */
        KernelVersion version;
        const char *if_present;
        const char *if_absent;
        const char *confidence;    /* "src" (verified in the 6.1/6.12 sources), "list", "unverified" */
} Advisory;

/* The table (static), n entries. */
const Advisory *advisories(size_t *ret_n);

/* Does kernel v have the mechanism (version check; vendors may backport: said in the output)? */
bool advisory_present(const Advisory *a, const KernelVersion *v);
