/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: parse_time_point(), the --since/--until parser of pcptunectl history. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const usec_t now = 1796000000 * USEC_PER_SEC; /* 2026-11-30T00:53:20Z */
        char *s, ts[64];
        usec_t t = 42, back = 0;

        if (size > 256)
                return 0;
        s = malloc(size + 1);
        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = 0;
        int r = parse_time_point(s, now, &t);
        if (r != 0 && r != -EINVAL && r != -ERANGE)
                abort();
        if (r < 0 && t != 42)
                abort(); /* *ret is written only on success */
        /* A time it returns is a real one at or after 1970 that prints and reads back to the same second. */
        if (r == 0) {
                format_timestamp_utc(ts, sizeof ts, t);
                if (parse_time_point(ts, now, &back) != 0 || back != t - t % USEC_PER_SEC)
                        abort();
        }
        free(s);
        return 0;
}
