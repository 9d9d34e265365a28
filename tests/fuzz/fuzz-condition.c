/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: condition_parse() on arbitrary text; a parsed condition
 * is evaluated over a few samples with metrics alternately available.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        Condition c = {};
        char *buf, *error = NULL;

        buf = malloc(size + 1);
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = 0;

        if (condition_parse(buf, 1, 1, &c, &error) >= 0) {
                ConditionState st = {};
                MetricValues mv = {};

                for (unsigned step = 0; step < 4; step++) {
                        for (int i = 0; i < _METRIC_MAX; i++) {
                                if ((i + step) % 3 == 0)
                                        mv.available[i] = false;
                                else
                                        metric_set(&mv, (MetricId) i, (double) (step * 1000 + (unsigned) i));
                        }
                        (void) condition_eval(&c, &mv, (usec_t) step * 60 * USEC_PER_SEC, &st, NULL);
                }
                for (int i = 0; i < _METRIC_MAX; i++)
                        (void) condition_uses_metric(&c, (MetricId) i);
                condition_state_done(&st);
                condition_done(&c);
        }
        free(error);
        free(buf);
        return 0;
}
