/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: health_parse() on arbitrary bytes (the health file is read
 * back by pcptunectl check as untrusted input).  Whatever it accepts has a
 * verdict, UPDATED and INTERVAL (>= 1) of at most 12 digits, a DRY_RUN of -1,
 * 0 or 1 and a REASON within its bound; what it refuses says why; and what it
 * accepts formats again into text it accepts with the same values.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "health.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        HealthInfo h, back;
        char why[128] = "", buf[HEALTH_FILE_MAX];

        if (health_parse((const char *) data, size, &h, why, sizeof why) < 0) {
                if (!why[0])
                        abort();
                return 0;
        }
        if (h.updated < 0 || h.updated > INT64_C(999999999999) || h.interval < 1 ||
            h.interval > INT64_C(999999999999) || h.dry_run < -1 || h.dry_run > 1 ||
            strlen(h.reason) > HEALTH_REASON_MAX)
                abort();
        int n = health_format(&h, buf, sizeof buf);
        if (n < 0 || health_parse(buf, (size_t) n, &back, why, sizeof why) < 0 || back.problem != h.problem ||
            back.updated != h.updated || back.interval != h.interval)
                abort();
        return 0;
}
