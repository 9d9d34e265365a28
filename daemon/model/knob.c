/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "knob.h"
#include "macro.h"

/*
 * Ranges, from the handlers:
 *  - percpu_pagelist_high_fraction (mm/page_alloc.c, percpu_pagelist_high_fraction_sysctl_handler,
 *    5.14+): proc_dointvec_minmax with extra1 = SYSCTL_ZERO, then -EINVAL for 1..7
 *    (MIN_PERCPU_PAGELIST_HIGH_FRACTION); pcptune's contrib patch 0001 adds -1;
 *  - percpu_pagelist_fraction (mm/page_alloc.c, <= 5.13): the same 0, 8..INT_MAX, never written;
 *  - pcp_batch_scale_max (contrib patch 0002, mirroring CONFIG_PCP_BATCH_SCALE_MAX): 0..6.
 */
static const KnobDesc knob_table[_KNOB_ID_MAX] = {
        [KNOB_PCP_HIGH_FRACTION] = {
                .id = KNOB_PCP_HIGH_FRACTION,
                .name = SYSCTL_PCP_HIGH_FRACTION,
                .path = "/proc/sys/vm/percpu_pagelist_high_fraction",
                .min_value = -1, .max_value = INT_MAX,
                .hole_min = 1, .hole_max = PCP_FRACTION_MIN - 1,
                .writable = true,
                .policy_key = "pcp.high",
                .setting = KNOB_SETTING_PCP_GOAL,
                .needs = "Linux 5.14 or later",
                .probe = KNOB_PROBE_PCP_MINIMUM,
                .probe_value = PCP_FRACTION_FLOOR,
                .probe_rejected = "no pcptune contrib patch",
                .probe_declared = "/.pcptune/fraction-floor",
                .changes_pagesets = true,
                .after_write = KNOB_AFTER_STAT_REFRESH_ON_LOWER,
                .confirm = KNOB_CONFIRM_PAGESETS,
        },
        [KNOB_PCP_FRACTION] = {
                .id = KNOB_PCP_FRACTION,
                .name = SYSCTL_PCP_FRACTION,
                .path = "/proc/sys/vm/percpu_pagelist_fraction",
                .min_value = 0, .max_value = INT_MAX,
                .hole_min = 1, .hole_max = PCP_FRACTION_MIN - 1,
                .writable = false,
                .readonly_why = "kernels before 5.14 give it another meaning (each CPU gets managed/F pages)",
        },
        [KNOB_PCP_BATCH_SCALE_MAX] = {
                .id = KNOB_PCP_BATCH_SCALE_MAX,
                .name = SYSCTL_PCP_BATCH_SCALE_MAX,
                .path = "/proc/sys/vm/pcp_batch_scale_max",
                .min_value = 0, .max_value = 6,
                .hole_min = 1, .hole_max = 0,
                .writable = true,
                .contrib = true,
                .policy_key = "pcp.batch_scale_max",
                .setting = KNOB_SETTING_INT,
                .setting_what = "an integer between 0 and 6 (the range of CONFIG_PCP_BATCH_SCALE_MAX)",
                .needs = "pcptune's kernel patch (contrib/kernel)",
        },
};

const KnobDesc *knob_desc(KnobId id) {
        return id >= 0 && id < _KNOB_ID_MAX ? &knob_table[id] : NULL;
}

const KnobDesc *knob_desc_by_name(const char *name) {
        if (!name)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(knob_table); i++)
                if (knob_table[i].writable && strcmp(knob_table[i].name, name) == 0)
                        return &knob_table[i];
        return NULL;
}

bool knob_value_valid(const KnobDesc *d, int64_t v) {
        return d && v >= d->min_value && v <= d->max_value && !(v >= d->hole_min && v <= d->hole_max);
}

const char *knob_leaf_name(const KnobDesc *d) {
        const char *dot = strrchr(d->name, '.');
        return dot ? dot + 1 : d->name;
}

const char *knob_managed_names(char *buf, size_t size) {
        size_t n = 0, total = 0, l = 0;

        for (KnobId k = 0; k < _KNOB_ID_MAX; k++)
                total += knob_managed(knob_desc(k));
        buf[0] = 0;
        for (KnobId k = 0; k < _KNOB_ID_MAX && l < size; k++) {
                if (!knob_managed(knob_desc(k)))
                        continue;
                n++;
                l += (size_t) snprintf(buf + l, size - l, "%s%s", n == 1 ? "" : n == total ? " and " : ", ",
                                       knob_desc(k)->name);
        }
        return buf;
}
