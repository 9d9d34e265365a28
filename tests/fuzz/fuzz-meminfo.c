/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: meminfo_parse() on arbitrary text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source-meminfo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *buf = malloc(size + 1);
        Meminfo m;

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = 0;
        if (meminfo_parse(buf, size, &m) == 0 && !m.has_percpu && m.percpu_kib != 0)
                abort();        /* an absent field is never reported with a value */
        free(buf);

        /* The same bytes without a terminating NUL: the parser must stay within len. */
        buf = malloc(size ? size : 1);
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        (void) meminfo_parse(buf, size, &m);
        free(buf);
        return 0;
}
