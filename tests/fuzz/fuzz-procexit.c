/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: the proc connector message parser. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source-procexit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        /* The kernel's payload is 4-byte aligned; copy so the parser sees an aligned buffer of exactly size bytes. */
        void *buf = malloc(size ? size : 1);
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        int r = proc_exit_parse(buf, size);
        if (r < -EINVAL || r > 3)
                abort();
        free(buf);
        return 0;
}
