/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: vmstat_parse() and vmstat_lookup() on arbitrary text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source-vmstat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *buf = malloc(size + 1);
        Vmstat v;
        uint64_t x;

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = 0;
        if (vmstat_parse(buf, size, &v) == 0) {
                /* A successful parse has the counter, and lookup must agree with it. */
                if (!v.has_nr_free_pages || vmstat_lookup(buf, size, "nr_free_pages", &x) != 0 || x != v.nr_free_pages)
                        abort();
        }
        (void) vmstat_lookup(buf, size, "pgfree", &x);
        free(buf);

        /* The same bytes without a terminating NUL: the parser must stay within len. */
        buf = malloc(size ? size : 1);
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        (void) vmstat_parse(buf, size, &v);
        (void) vmstat_lookup(buf, size, "pgscan_kswapd", &x);
        free(buf);
        return 0;
}
