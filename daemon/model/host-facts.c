/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdbool.h>

#include "host-facts.h"

static uint64_t mul_sat(uint64_t a, uint64_t b) {
        uint64_t r;
        return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t add_sat(uint64_t a, uint64_t b) {
        uint64_t r;
        return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

unsigned host_count_nodes(const unsigned *node_cpus, unsigned n_node_ids, const PcpZone *zones, size_t n_zones) {
        unsigned n = 0;

        if (!node_cpus)
                n_node_ids = 0;
        for (unsigned i = 0; i < n_node_ids; i++) {
                bool has = node_cpus[i] > 0;
                for (size_t z = 0; !has && z < n_zones; z++)
                        has = zones[z].node == (int) i;
                n += has;
        }
        /* Zones on node ids the topology does not list: count each id once. */
        for (size_t z = 0; z < n_zones; z++) {
                bool seen = zones[z].node < 0 || (unsigned) zones[z].node < n_node_ids;
                for (size_t y = 0; !seen && y < z; y++)
                        seen = zones[y].node == zones[z].node;
                n += !seen;
        }
        return n;
}

unsigned host_zone_pageset_cpus(const PcpZoneInput *z) {
        return z->online_cpus;
}

uint64_t host_zone_pcp_max_bytes(const PcpZoneInput *z, const PcpSetting *s, unsigned page_size) {
        return mul_sat(mul_sat((uint64_t) MAX(s->high_max, 0), host_zone_pageset_cpus(z)), page_size);
}

int host_pcp_max_bytes(PcpRegime regime, const PcpZone *zones, size_t n_zones, unsigned page_size, int fraction,
                       uint64_t *ret) {
        uint64_t total = 0;

        for (size_t i = 0; i < n_zones; i++) {
                PcpSetting s;
                int r = pcp_model_zone(regime, &zones[i].in, page_size, fraction, &s);
                if (r < 0)
                        return r;
                total = add_sat(total, host_zone_pcp_max_bytes(&zones[i].in, &s, page_size));
        }
        *ret = total;
        return 0;
}

uint64_t host_pcp_burst_bytes(const PcpZone *zones, size_t n_zones, unsigned page_size, int scale_max) {
        uint64_t total = 0;

        for (size_t i = 0; i < n_zones; i++) {
                int batch = pcp_zone_batchsize(zones[i].in.managed_pages, page_size);
                if (batch < 1)
                        continue;
                total = add_sat(total, mul_sat(mul_sat((uint64_t) batch << scale_max,
                                                       host_zone_pageset_cpus(&zones[i].in)),
                                               page_size));
        }
        return total;
}
