/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/*
 * Percpu memory per memory cgroup (mem_cgroup_alloc() in mm/memcontrol.c, 6.1-6.18).  Every memcg allocates
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

/* Fraction of a memcg's percpu memory a dying (pinned) memcg keeps (struct sizes of 6.12 mm/memcontrol.c: 2081 of 2118 bytes per possible CPU). */
#define PERCPU_DYING_RETAINED 0.98

/* How a figure was obtained. */
typedef enum PercpuBasis {
        PERCPU_BASIS_MEASURED,     /* read from the kernel, or `plan --measure` on this kernel and shape */
        PERCPU_BASIS_ESTIMATED,    /* the daemon's estimate from Percpu growth over memcg growth */
        PERCPU_BASIS_MODELLED,     /* percpu_memcg_cost_model() */
        _PERCPU_BASIS_MAX,
        _PERCPU_BASIS_INVALID = -EINVAL,
} PercpuBasis;

const char *percpu_basis_to_string(PercpuBasis b);

/* What `pcptunectl plan --measure` found, kept in <state_dir>/memcg-cost.json for the same kernel. */
typedef struct MemcgCostMeasurement {
        char kernel_release[65];
        unsigned possible_cpus;
        unsigned nodes;
        double bytes;              /* per memcg, all units */
        char how[192];
} MemcgCostMeasurement;

typedef struct MemcgCost {
        double bytes;              /* percpu bytes one memcg costs on this host (all possible CPUs) */
        PercpuBasis basis;
        char how[224];             /* one line: where the number comes from */
} MemcgCost;

/*
 * The per-memcg percpu cost of a host: the one place status, plan, the
 * metrics and the daemon take it from.  In order of preference: a `plan
 * --measure` result for the same kernel release, CPU and node count
 * (measured may be NULL or not match), the daemon's running estimate
 * (estimate_bytes > 0), else the model for kernel v with `nodes` nodes
 * times possible_cpus.  Always succeeds.
 */
void percpu_memcg_cost(const KernelVersion *v, const char *kernel_release, unsigned nodes, unsigned possible_cpus,
                       const MemcgCostMeasurement *measured, double estimate_bytes, MemcgCost *ret);

/*
 * Percpu split into what live memcgs, dying memcgs and the rest hold:
 *   live  = live memcgs x cost            (the root memcg counted: it allocates the same)
 *   dying = dying memcgs x cost x PERCPU_DYING_RETAINED
 *   other = total - live - dying          (static and non-memcg percpu, and fragmentation)
 * When the model's live + dying exceed the total, both are scaled down to
 * fit and `scaled` says so (other is then 0).  Fragmentation (free bytes
 * inside populated pages of partly used chunks) is part of `other` and only
 * known where measured.
 */
typedef struct PercpuSplit {
        uint64_t total_bytes;
        uint64_t live_memcgs_bytes;
        uint64_t dying_memcgs_bytes;
        uint64_t other_bytes;
        bool has_fragmentation;
        uint64_t fragmentation_bytes;
        const char *fragmentation_source;   /* static text */
        bool scaled;
        MemcgCost cost;
} PercpuSplit;

/* 0, or -EINVAL when the total is unknown (has_total false). */
int percpu_split_compute(bool has_total, uint64_t total_bytes, uint64_t live, uint64_t dying, const MemcgCost *cost,
                         PercpuSplit *ret);

/* Record measured fragmentation (bytes, all units) in a split; clamped to other_bytes' total. */
void percpu_split_set_fragmentation(PercpuSplit *s, uint64_t bytes, const char *source);

/* The basis of a split's figures as one line, in the words status and plan print from the split's JSON
 * (report.c): how the total, the memcgs' share (the cost each, and PERCPU_DYING_RETAINED for dying ones)
 * and the rest were obtained.  Returns buf. */
const char *percpu_split_basis(const PercpuSplit *s, char *buf, size_t size);

/* Kernel changes that matter to pcp lists and percpu memory: whether this kernel has them and what it means. */
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
