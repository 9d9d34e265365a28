/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: the calibration file parser (read back by the root daemon). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "calibration.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        Calibration c;
        char *buf = malloc(size + 1);
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = 0;
        if (calibration_parse(buf, size, &c) == 0) {
                /* Whatever is accepted is a usable fit, and formats back to an accepted file. */
                if (!(c.ns_per_page > 0) || c.ns_per_page > CALIBRATION_MAX_NS_PER_PAGE || !isfinite(c.ns_per_page_stderr))
                        abort();
                char *t = calibration_format(&c);
                Calibration d;
                if (t && calibration_parse(t, strlen(t), &d) != 0)
                        abort();
                free(t);
        }
        free(buf);
        return 0;
}
