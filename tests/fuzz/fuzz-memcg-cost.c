/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: memcg_cost_measurement_parse(), the reader of `plan --measure`'s kept result. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "probe-percpu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        MemcgCostMeasurement m;
        char *buf = malloc(size ? size : 1);

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        /* No terminating NUL: the parser must stay within size. */
        if (memcg_cost_measurement_parse(buf, size, &m) == 0) {
                /* What it accepts is within the documented ranges and terminated. */
                if (m.possible_cpus < 1 || m.possible_cpus > 8192 || m.nodes < 1 || m.nodes > 1024 || !(m.bytes >= 1) ||
                    m.bytes > 65536.0 * m.possible_cpus || strnlen(m.kernel_release, sizeof m.kernel_release) ==
                                                                   sizeof m.kernel_release ||
                    strnlen(m.how, sizeof m.how) == sizeof m.how)
                        abort();
        }
        free(buf);
        return 0;
}
