/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/*
 * The knob allowlist: every sysctl pcptune reads as a knob or may write, once,
 * with its path below the root and the values its kernel handler accepts.
 * Everything that writes a knob or restores one from the journal goes through
 * a row of this table: a name read from a file (the restore journal, a
 * `pcptunectl resume` argument) is only ever looked up here, and the path is
 * the row's, never one built from input.
 */

#define SYSCTL_PCP_HIGH_FRACTION "vm.percpu_pagelist_high_fraction"
#define SYSCTL_PCP_FRACTION "vm.percpu_pagelist_fraction"
#define SYSCTL_PCP_BATCH_SCALE_MAX "vm.pcp_batch_scale_max"

/* Smallest non-zero value both fraction handlers accept (MIN_PERCPU_PAGELIST_HIGH_FRACTION, mm/page_alloc.c). */
#define PCP_FRACTION_MIN 8

typedef enum KnobId {
        KNOB_PCP_HIGH_FRACTION,   /* 5.14+ */
        KNOB_PCP_FRACTION,        /* < 5.14: another meaning; read, never written */
        KNOB_PCP_BATCH_SCALE_MAX, /* pcptune's contrib kernel patch 0002 */
        _KNOB_ID_MAX,
        _KNOB_ID_INVALID = -1,
} KnobId;

typedef struct KnobDesc {
        KnobId id;
        const char *name;         /* sysctl name, "vm.percpu_pagelist_high_fraction" */
        const char *path;         /* below the root, "/proc/sys/vm/percpu_pagelist_high_fraction" */
        int64_t min_value;        /* values the handler accepts, inclusive; also the only */
        int64_t max_value;        /* originals the journal may hand back */
        int64_t hole_min;         /* values inside [min, max] the handler still rejects */
        int64_t hole_max;         /* (hole_min > hole_max: none) */
        bool writable;            /* pcptune may write it */
} KnobDesc;

/* The row of a knob.  id must be valid. */
const KnobDesc *knob_desc(KnobId id);

/* The row of a writable knob by its sysctl name; NULL if the name is not in the allowlist. */
const KnobDesc *knob_desc_by_name(const char *name);

/* Whether the knob's handler accepts v (and so whether we may write or restore it). */
bool knob_value_valid(const KnobDesc *d, int64_t v);
