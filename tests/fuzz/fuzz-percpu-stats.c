/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: percpu_stats_parse(), percpu_stats_summarize() and percpu_stats_check() on arbitrary text. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source-percpu-stats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *buf = malloc(size + 1);
        PercpuStats s;
        PercpuSummary sum;

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = 0;
        if (percpu_stats_parse(buf, size, &s) == 0) {
                percpu_stats_summarize(&s, &sum);
                char what[192];
                if (sum.chunks != (int64_t) s.n_chunks || sum.to_depopulate + sum.sidelined > sum.chunks)
                        abort();
                /* Inconsistent dumps (Global Stats against the sections) are reported, with what disagrees. */
                int r = percpu_stats_check(&s, what, sizeof what);
                if ((r == 0) != (what[0] == 0) || (r < 0 && r != -EBADMSG) || strlen(what) >= sizeof what)
                        abort();
                percpu_stats_done(&s);
        }
        free(buf);

        /* The same bytes without a terminating NUL: the parser must stay within len. */
        buf = malloc(size ? size : 1);
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        if (percpu_stats_parse(buf, size, &s) == 0)
                percpu_stats_done(&s);
        free(buf);
        return 0;
}
