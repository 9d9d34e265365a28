/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <limits.h>
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
        },
        [KNOB_PCP_FRACTION] = {
                .id = KNOB_PCP_FRACTION,
                .name = SYSCTL_PCP_FRACTION,
                .path = "/proc/sys/vm/percpu_pagelist_fraction",
                .min_value = 0, .max_value = INT_MAX,
                .hole_min = 1, .hole_max = PCP_FRACTION_MIN - 1,
                .writable = false,
        },
        [KNOB_PCP_BATCH_SCALE_MAX] = {
                .id = KNOB_PCP_BATCH_SCALE_MAX,
                .name = SYSCTL_PCP_BATCH_SCALE_MAX,
                .path = "/proc/sys/vm/pcp_batch_scale_max",
                .min_value = 0, .max_value = 6,
                .hole_min = 1, .hole_max = 0,
                .writable = true,
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
