/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: zoneinfo_parse() on arbitrary text, checking what a success promises. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source-zoneinfo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const Zoneinfo *zi) {
        if (zi->n_zones == 0 || !zi->zones)
                abort();
        for (size_t i = 0; i < zi->n_zones; i++) {
                const Zone *z = &zi->zones[i];

                if (z->managed_pages > z->present_pages || z->present_pages > z->spanned_pages)
                        abort();
                if (z->populated != (z->n_cpus > 0) || z->populated != (z->present_pages != 0))
                        abort();
                if (strnlen(z->name, ZONE_NAME_MAX) >= ZONE_NAME_MAX || z->name[0] == 0)
                        abort();
                for (size_t c = 0; c < z->n_cpus; c++) {
                        if (c > 0 && z->cpus[c].cpu <= z->cpus[c - 1].cpu)
                                abort();
                        /* The ≤ 6.12 layout reports both as absent. */
                        if (!zi->has_high_min_max && (z->cpus[c].high_min != -1 || z->cpus[c].high_max != -1))
                                abort();
                }
        }
        (void) zoneinfo_pcp_count_pages(zi);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *buf = malloc(size + 1);
        Zoneinfo zi;

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = 0;
        if (zoneinfo_parse(buf, size, &zi) == 0) {
                check(&zi);
                zoneinfo_done(&zi);
        }
        free(buf);

        /* The same bytes without a terminating NUL: the parser must stay within len. */
        buf = malloc(size ? size : 1);
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        if (zoneinfo_parse(buf, size, &zi) == 0)
                zoneinfo_done(&zi);
        free(buf);
        return 0;
}
