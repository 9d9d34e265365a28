/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

/*
 * Host shape: online CPUs per NUMA node (the divisor of zone_highsize(),
 * mm/page_alloc.c, is the number of online CPUs on the zone's node),
 * online and possible CPUs, page size and kernel release.
 */

#define TOPOLOGY_MAX_NODES 1024

typedef struct Topology {
        unsigned n_nodes;           /* entries in node_cpus[] = highest node id + 1 */
        unsigned *node_cpus;        /* online CPUs per node id (0 for a CPU-less or absent node) */
        unsigned online_cpus;       /* /sys/devices/system/cpu/online, or the sum over nodes */
        unsigned possible_cpus;     /* /sys/devices/system/cpu/possible; 0 if unknown */
        unsigned page_size;         /* bytes */
        char *kernel_release;       /* /proc/sys/kernel/osrelease, trimmed */
        KernelVersion kernel;
} Topology;

/*
 * Read the topology below root:
 *  - /sys/devices/system/node/node<N>/cpulist for each node (no node directory,
 *    e.g. CONFIG_NUMA=n: every online CPU on node 0);
 *  - /sys/devices/system/cpu/online and possible (optional);
 *  - /proc/sys/kernel/osrelease (required);
 *  - page size: sysconf() when root is "/", else <root>/.pcptune/page_size
 *    written by `pcptunectl snapshot`, else 4096.
 * Only directory names matching node[0-9]+ are nodes; an empty cpulist is a
 * CPU-less node.  online_cpus is cpu/online when present, else the sum over nodes.
 * Returns 0 or -errno: -ENOENT if osrelease is missing, or if there is neither a
 * node directory nor cpu/online, or a node lacks its cpulist; -EINVAL if a file
 * is malformed, a page size is not a power of two >= 4096, or a node id is
 * >= TOPOLOGY_MAX_NODES.  Release with topology_done().
 */
int topology_read(const char *root, Topology *ret);

/* Free what topology_read() allocated; the struct is zeroed.  Accepts NULL. */
void topology_done(Topology *t);

/* Online CPUs on node, or 0 if the node is out of range. */
unsigned topology_node_cpus(const Topology *t, int node);
