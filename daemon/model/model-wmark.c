/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <ctype.h>
#include <stdarg.h>

#include "model-wmark.h"

static const char *const zone_type_table[_ZONE_TYPE_MAX] = {
        [ZONE_TYPE_DMA] = "DMA",
        [ZONE_TYPE_DMA32] = "DMA32",
        [ZONE_TYPE_NORMAL] = "Normal",
        [ZONE_TYPE_MOVABLE] = "Movable",
        [ZONE_TYPE_DEVICE] = "Device",
};

const char *zone_type_to_string(ZoneType t) {
        return t >= 0 && t < _ZONE_TYPE_MAX ? zone_type_table[t] : NULL;
}

int zone_type_from_string(const char *s) {
        for (int i = 0; i < _ZONE_TYPE_MAX; i++)
                if (s && streq(s, zone_type_table[i]))
                        return i;
        return -EINVAL;
}

uint64_t int_sqrt_u64(uint64_t x) {
        uint64_t r = 0, bit = 1ULL << 62;

        /* Digit-by-digit square root: exact for every 64-bit value. */
        while (bit > x)
                bit >>= 2;
        while (bit) {
                if (x >= r + bit) {
                        x -= r + bit;
                        r = (r >> 1) + bit;
                } else
                        r >>= 1;
                bit >>= 2;
        }
        return r;
}

static bool zone_is_lowmem(ZoneType t) {
        /* is_highmem() is false on 64-bit; ZONE_MOVABLE and ZONE_DEVICE are excluded. */
        return t == ZONE_TYPE_DMA || t == ZONE_TYPE_DMA32 || t == ZONE_TYPE_NORMAL;
}

/* nr_free_buffer_pages(): managed minus the high watermark of every zone up to ZONE_NORMAL. */
static uint64_t free_buffer_pages(const WmarkZone *zones, size_t n) {
        uint64_t sum = 0;
        for (size_t i = 0; i < n; i++)
                if (zone_is_lowmem(zones[i].type) && zones[i].managed_pages > zones[i].high_pages)
                        sum += zones[i].managed_pages - zones[i].high_pages;
        return sum;
}

uint64_t wmark_default_min_free_kbytes(const WmarkZone *zones, size_t n, unsigned page_size) {
        uint64_t lowmem_kbytes = 0, v;

        /* First call: watermarks are 0, so this is the managed pages of the lowmem zones. */
        for (size_t i = 0; i < n; i++)
                if (zone_is_lowmem(zones[i].type))
                        lowmem_kbytes += zones[i].managed_pages * (page_size / 1024);
        v = int_sqrt_u64(lowmem_kbytes * 16);
        return CLAMP(v, (uint64_t) 128, (uint64_t) 262144);
}

static uint64_t mult_frac_u64(uint64_t x, uint64_t n, uint64_t d) {
        return (x / d) * n + ((x % d) * n) / d;
}

void wmark_setup_zones(WmarkZone *zones, size_t n, uint64_t min_free_kbytes, unsigned page_size,
                       unsigned watermark_scale_factor) {
        uint64_t pages_min = min_free_kbytes / (page_size / 1024), lowmem = 0;

        for (size_t i = 0; i < n; i++)
                if (zone_is_lowmem(zones[i].type))
                        lowmem += zones[i].managed_pages;

        for (size_t i = 0; i < n; i++) {
                WmarkZone *z = &zones[i];
                uint64_t tmp = lowmem ? pages_min * z->managed_pages / lowmem : 0, gap;

                if (zone_is_lowmem(z->type))
                        z->min_pages = tmp;
                else
                        z->min_pages = CLAMP(z->managed_pages / 1024, (uint64_t) 32, (uint64_t) 128);
                gap = MAX(tmp >> 2, mult_frac_u64(z->managed_pages, watermark_scale_factor, 10000));
                z->low_pages = z->min_pages + gap;
                z->high_pages = z->low_pages + gap;
                z->promo_pages = z->high_pages + gap;
        }
}

uint64_t wmark_khugepaged_min_free_kbytes(const WmarkZone *zones, size_t n, unsigned page_size,
                                          uint64_t current_kib, unsigned watermark_scale_factor) {
        const uint64_t pageblock = (2ULL << 20) / page_size, pcptypes = 3; /* MIGRATE_PCPTYPES */
        _cleanup_(freep) WmarkZone *copy = NULL;
        uint64_t nr_zones = 0, rec;

        for (size_t i = 0; i < n; i++)
                nr_zones += zone_is_lowmem(zones[i].type) && zones[i].managed_pages > 0;
        rec = pageblock * nr_zones * 2 + pageblock * nr_zones * pcptypes * pcptypes;

        /* The 5% cap uses the watermarks in force when khugepaged starts. */
        copy = malloc(MAX(n, (size_t) 1) * sizeof(WmarkZone));
        if (!copy)
                return current_kib;
        memcpy(copy, zones, n * sizeof(WmarkZone));
        wmark_setup_zones(copy, n, current_kib, page_size, watermark_scale_factor);
        rec = MIN(rec, free_buffer_pages(copy, n) / 20);
        rec *= page_size / 1024;
        return rec > current_kib ? rec : current_kib;
}

static const char *shape_assumptions =
        "x86_64; node 0 holds DMA (16 MiB, 3840 managed pages) and DMA32 (RAM below 4 GiB: all of node 0 up to "
        "3 GiB, i.e. a 1 GiB PCI hole); the rest of each node is Normal; struct pages (64 B per 4 KiB page) come "
        "from each node's highest zone; 96 MiB reserved on node 0 for the kernel, initramfs and boot allocations "
        "(managed pages of node 0 within ~1% in total, a few % per zone, on QEMU guests); "
        "crashkernel off; CPUs split evenly over nodes";

const char *host_shape_assumptions(void) {
        return shape_assumptions;
}

_printf_(2, 3) static int shape_error(char **ret_error, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        if (ret_error && vasprintf(ret_error, fmt, ap) < 0)
                *ret_error = NULL;
        va_end(ap);
        return -EINVAL;
}

int host_shape_parse(const char *s, HostShape *ret, char **ret_error) {
        _cleanup_(freep) char *copy = strdup(s ?: "");
        HostShape h = { .kernel = { 6, 12, 0 }, .thp = true, .page_size = 4096, .watermark_scale_factor = 10,
                        .nodes = 1 };
        char *save = NULL;

        if (!copy)
                return -ENOMEM;
        for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
                char *eq = strchr(kv, '=');
                uint64_t u;
                if (!eq)
                        return shape_error(ret_error, "expected key=value in the shape, found '%s'", kv);
                *eq = 0;
                const char *v = eq + 1;
                if (streq(kv, "min_free_kbytes")) {
                        if (parse_uint64(v, &u) < 0 || u < 128 || u > (1ULL << 32))
                                return shape_error(ret_error, "expected min_free_kbytes in KiB (>= 128), found '%s'", v);
                        h.min_free_kbytes = u;
                } else if (streq(kv, "cpus") || streq(kv, "nodes") || streq(kv, "possible") || streq(kv, "wsf")) {
                        if (parse_uint64(v, &u) < 0 || u == 0 || u > 65536)
                                return shape_error(ret_error, "expected a positive count, found '%s'", v);
                        if (streq(kv, "cpus"))
                                h.cpus = (unsigned) u;
                        else if (streq(kv, "nodes")) {
                                if (u > SHAPE_MAX_NODES)
                                        return shape_error(ret_error, "at most 64 nodes, found '%s'", v);
                                h.nodes = (unsigned) u;
                        } else if (streq(kv, "possible"))
                                h.possible_cpus = (unsigned) u;
                        else {
                                if (u > 3000)
                                        return shape_error(ret_error, "watermark_scale_factor is 1..3000, found '%s'", v);
                                h.watermark_scale_factor = (unsigned) u;
                        }
                } else if (streq(kv, "memory")) {
                        if (parse_size(v, &u) < 0 || u < (64ULL << 20))
                                return shape_error(ret_error, "expected a memory size of at least 64MiB, found '%s'", v);
                        h.memory_bytes = u;
                } else if (streq(kv, "kernel")) {
                        if (kernel_version_parse(v, &h.kernel) < 0)
                                return shape_error(ret_error, "expected a kernel version like 6.12, found '%s'", v);
                } else if (streq(kv, "thp")) {
                        if (!streq(v, "on") && !streq(v, "off"))
                                return shape_error(ret_error, "expected thp=on or thp=off, found '%s'", v);
                        h.thp = streq(v, "on");
                } else if (streq(kv, "page")) {
                        if (parse_size(v, &u) < 0 || (u != 4096 && u != 16384 && u != 65536))
                                return shape_error(ret_error, "expected a page size of 4KiB, 16KiB or 64KiB, found '%s'", v);
                        h.page_size = (unsigned) u;
                } else
                        return shape_error(ret_error,
                                           "unknown shape key '%s' (cpus, memory, nodes, kernel, possible, thp, page, wsf, min_free_kbytes)",
                                           kv);
        }
        if (h.cpus == 0 || h.memory_bytes == 0)
                return shape_error(ret_error, "a shape needs cpus= and memory=");
        if (h.possible_cpus == 0)
                h.possible_cpus = h.cpus;
        if (h.possible_cpus < h.cpus)
                return shape_error(ret_error, "possible CPUs cannot be fewer than online CPUs");
        *ret = h;
        return 0;
}

int host_shape_parse_managed(HostShape *shape, const char *s, char **ret_error) {
        _cleanup_(freep) char *copy = strdup(s);
        char *colon, *eq;
        uint64_t node, pages;
        int t;

        if (!copy)
                return -ENOMEM;
        colon = strchr(copy, ':');
        eq = colon ? strchr(colon, '=') : NULL;
        if (!colon || !eq)
                return shape_error(ret_error, "expected NODE:ZONE=PAGES (e.g. 0:Normal=262144), found '%s'", s);
        *colon = *eq = 0;
        if (parse_uint64(copy, &node) < 0 || node >= SHAPE_MAX_NODES)
                return shape_error(ret_error, "expected a node number, found '%s'", copy);
        t = zone_type_from_string(colon + 1);
        if (t < 0 || t > ZONE_TYPE_NORMAL)
                return shape_error(ret_error, "expected DMA, DMA32 or Normal, found '%s'", colon + 1);
        if (parse_uint64(eq + 1, &pages) < 0 || pages == 0)
                return shape_error(ret_error, "expected a positive number of pages, found '%s'", eq + 1);
        shape->given_managed[node][t] = pages;
        return 0;
}

int host_shape_zones(const HostShape *h, WmarkZone **ret_zones, size_t *ret_n, uint64_t *ret_min_free_kbytes) {
        const uint64_t page = h->page_size, dma_pages = (16ULL << 20) / page;
        _cleanup_(freep) WmarkZone *zones = NULL;
        uint64_t per_node, mfk;
        size_t n = 0;

        if (h->nodes == 0 || h->nodes > SHAPE_MAX_NODES || h->page_size < 4096)
                return -EINVAL;
        zones = calloc((size_t) h->nodes * 3, sizeof(WmarkZone));
        if (!zones)
                return -ENOMEM;
        per_node = h->memory_bytes / h->nodes / page;

        for (unsigned node = 0; node < h->nodes; node++) {
                uint64_t present[3] = { 0, 0, 0 }, managed[3], top;
                if (node == 0) {
                        uint64_t low = MIN(per_node, (3ULL << 30) / page);
                        /* pfn 0 and the 640 KiB - 1 MiB hole are never RAM: 3998 pages with 4 KiB pages. */
                        present[ZONE_TYPE_DMA] = MIN(low, dma_pages) - 1 - MIN(low, dma_pages) * 97 / 4096;
                        present[ZONE_TYPE_DMA32] = low > dma_pages ? low - dma_pages : 0;
                        present[ZONE_TYPE_NORMAL] = per_node - low;
                } else
                        present[ZONE_TYPE_NORMAL] = per_node;

                for (int t = 0; t < 3; t++)
                        managed[t] = present[t];
                /* Firmware and BIOS areas in the first 16 MiB. */
                managed[ZONE_TYPE_DMA] = present[ZONE_TYPE_DMA] > 158 ? present[ZONE_TYPE_DMA] - 158 : 0;
                if (h->page_size != 4096)
                        managed[ZONE_TYPE_DMA] = present[ZONE_TYPE_DMA];
                /* The node's struct pages and (node 0) the kernel image come from its highest zone. */
                top = present[ZONE_TYPE_NORMAL] ? ZONE_TYPE_NORMAL : ZONE_TYPE_DMA32;
                uint64_t reserve = per_node * 64 / page + (node == 0 ? (96ULL << 20) / page : 0);
                managed[top] = managed[top] > reserve ? managed[top] - reserve : 0;

                for (int t = 0; t < 3; t++) {
                        if (h->given_managed[node][t])
                                managed[t] = h->given_managed[node][t];
                        if (managed[t] == 0)
                                continue;
                        zones[n++] = (WmarkZone){ .node = (int) node, .type = (ZoneType) t, .managed_pages = managed[t] };
                }
        }

        mfk = wmark_default_min_free_kbytes(zones, n, h->page_size);
        if (h->min_free_kbytes)
                mfk = h->min_free_kbytes; /* set by the administrator: khugepaged still raises it */
        wmark_setup_zones(zones, n, mfk, h->page_size, h->watermark_scale_factor);
        if (h->thp) {
                mfk = wmark_khugepaged_min_free_kbytes(zones, n, h->page_size, mfk, h->watermark_scale_factor);
                wmark_setup_zones(zones, n, mfk, h->page_size, h->watermark_scale_factor);
        }
        *ret_zones = TAKE_PTR(zones);
        *ret_n = n;
        if (ret_min_free_kbytes)
                *ret_min_free_kbytes = mfk;
        return 0;
}
