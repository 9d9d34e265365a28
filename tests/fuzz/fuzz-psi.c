/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: psi_parse() on arbitrary text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source-psi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *buf = malloc(size + 1);
        Psi p;

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = 0;
        if (psi_parse(buf, size, &p) == 0 && (p.some.avg10 < 0 || p.some.avg60 < 0 || p.some.avg300 < 0))
                abort();        /* percentages are printed unsigned */
        free(buf);

        /* The same bytes without a terminating NUL: the parser must stay within len. */
        buf = malloc(size ? size : 1);
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        (void) psi_parse(buf, size, &p);
        free(buf);
        return 0;
}
