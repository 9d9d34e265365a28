/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "model-pcp.h"

/*
 * Host facts that status, plan, the metrics and the daemon all report: one
 * definition each, so the printers cannot disagree.  Pure functions over
 * what the snapshot (or a hypothetical shape) holds.  The per-memcg percpu
 * cost is the other such fact: percpu_memcg_cost() (model-percpu.h), reached
 * through snapshot_memcg_cost() and plan's plan_memcg_cost().
 */

/*
 * Nodes with CPUs or memory: the kernel's N_CPU | N_MEMORY
 * (include/linux/nodemask.h).  A node counts if node_cpus[id] > 0 or one of
 * zones[] (the populated zones: present pages, which is what sets N_MEMORY at
 * boot in free_area_init(), mm/mm_init.c 6.3+, mm/page_alloc.c 6.1) is on it.
 * node_cpus may be NULL (n_node_ids ignored then).  Node ids at or above
 * n_node_ids count through their zones only, each once.  Returns the count,
 * 0 if neither is known.
 */
unsigned host_count_nodes(const unsigned *node_cpus, unsigned n_node_ids, const PcpZone *zones, size_t n_zones);

/*
 * CPUs that have a pageset of the zone, each of which may hold up to high
 * pages of it: every online CPU, whatever its node, for every populated zone
 * (zone->per_cpu_pageset is one alloc_percpu() per zone, set up for each
 * possible CPU by setup_zone_pageset(), mm/page_alloc.c 5.14-6.18; an offline
 * CPU's lists are drained by page_alloc_cpu_dead(); zoneinfo_show_print(),
 * mm/vmstat.c, prints one pageset per online CPU).  This is not the divisor of
 * zone_highsize(), which splits over the node's CPUs only (all online CPUs
 * for a CPU-less node): on a host with several nodes each zone has more
 * pagesets than its high was split over.  Returns z->online_cpus.
 */
unsigned host_zone_pageset_cpus(const PcpZoneInput *z);

/*
 * Most bytes one zone's pcp lists may hold with the setting s: s->high_max
 * pages on each of host_zone_pageset_cpus() pagesets, page_size bytes each.
 * Saturates at UINT64_MAX.
 */
uint64_t host_zone_pcp_max_bytes(const PcpZoneInput *z, const PcpSetting *s, unsigned page_size);

/*
 * Most bytes the pcp lists of all zones may hold at a fraction:
 * host_zone_pcp_max_bytes() of pcp_model_zone() summed over zones[].
 * 0, or the first zone's negative errno from pcp_model_zone() (-EINVAL).
 */
int host_pcp_max_bytes(PcpRegime regime, const PcpZone *zones, size_t n_zones, unsigned page_size, int fraction,
                       uint64_t *ret);

/*
 * Transient bytes above high during a burst of frees: one bulk free takes
 * at most batch << CONFIG_PCP_BATCH_SCALE_MAX pages off a list (nr_pcp_free(),
 * mm/page_alloc.c 6.7-6.18; PCP_BATCH_SCALE_MAX_DEFAULT), counted on every
 * pageset (host_zone_pageset_cpus()) of every zone, in bytes, saturating.
 */
uint64_t host_pcp_burst_bytes(const PcpZone *zones, size_t n_zones, unsigned page_size, int scale_max);
