/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "knob.h"

/*
 * The pcp sysctl of the running kernel (percpu_pagelist_high_fraction_sysctl_handler(),
 * mm/page_alloc.c):
 *  - vm.percpu_pagelist_high_fraction (5.14+): 0 or >= 8, writable;
 *  - vm.percpu_pagelist_fraction (< 5.14): different meaning; pcptune only reads it.
 */

/* Names, paths and ranges of the knobs: the allowlist in knob.h. */

typedef struct PcpKnob {
        const KnobDesc *desc; /* the allowlist row (NULL if neither exists) */
        const char *name;     /* one of the two names above, or NULL if neither exists */
        const char *path;     /* relative to the root prefix */
        int64_t value;
        bool writable;        /* high_fraction only */
} PcpKnob;

/* Read whichever of the two knobs exists below root (high_fraction first; name and
 * path point to the allowlist row's strings).  0, -ENOENT (neither), -EINVAL (not a
 * number, or outside 0..INT32_MAX as no handler accepts it) or -errno of the read. */
int pcp_knob_read(const char *root, PcpKnob *ret);

/* Convert "vm.percpu_pagelist_high_fraction" to "/proc/sys/vm/percpu_pagelist_high_fraction".
 * As sysctl(8): '.' separates components and '/' stands for a '.' inside one
 * ("net.ipv4.conf.eth0/100.rp_filter").  0, -EINVAL (empty component, "." or "..",
 * blanks) or -ENOMEM.  The caller frees *ret. */
int sysctl_name_to_path(const char *name, char **ret);
