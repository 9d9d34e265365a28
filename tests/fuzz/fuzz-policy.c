/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: policy_parse() on arbitrary bytes, then the set checks on
 * a set made of that policy twice (duplicate names, shadowing) when it parses.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        Diagnostics diag = {};
        Policy *p = NULL;
        char *buf;

        /* Policy files are read whole and NUL-terminated by the loader; do the same. */
        buf = malloc(size + 1);
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = 0;

        if (policy_parse("fuzz.yaml", buf, size, &p, &diag) >= 0) {
                Policy *set_policies[2] = { p, p };
                PolicySet set = { .policies = set_policies, .n_policies = 2 };
                MetricValues mv = {};

                policy_set_check(&set, &diag);
                (void) host_match_eval(&p->host, &mv);
                (void) policy_set_uses_metric(&set, METRIC_MEMCG_DYING);
                policy_free(p);
        }
        diagnostics_done(&diag);
        free(buf);
        return 0;
}
