/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "knob.h"

/*
 * The sysctls of the knob table as the running kernel has them: every row
 * read once per sample (sysctl_read_knobs()), and among them the pcp sysctl
 * (percpu_pagelist_high_fraction_sysctl_handler(), mm/page_alloc.c):
 *  - vm.percpu_pagelist_high_fraction (5.14+): 0 or >= 8, writable;
 *  - vm.percpu_pagelist_fraction (< 5.14): different meaning; pcptune only reads it.
 */

/* Names, paths and ranges of the knobs: the allowlist in knob.h. */

/*
 * Read every row of the knob table (knob.h) below root into values[id]: the
 * number in the file at the row's path, or why there is none (KnobValue).
 * One read per row; nothing is checked against the rows' ranges here.
 */
void sysctl_read_knobs(const char *root, KnobValue values[static _KNOB_ID_MAX]);

/* The pcp sysctl among values (sysctl_read_knobs()): the row of whichever of the two exists, high_fraction
 * first (its value is values[*ret]).  0, -ENOENT (neither), -EINVAL (not a number, or a value no handler
 * accepts: outside the row's range, knob_value_valid()) or the -errno of its read.  *ret is written only on
 * success. */
int pcp_knob_from_values(const KnobValue values[static _KNOB_ID_MAX], KnobId *ret);

/* Convert "vm.percpu_pagelist_high_fraction" to "/proc/sys/vm/percpu_pagelist_high_fraction".
 * As sysctl(8): '.' separates components and '/' stands for a '.' inside one
 * ("net.ipv4.conf.eth0/100.rp_filter").  0, -EINVAL (empty component, "." or "..",
 * blanks) or -ENOMEM.  The caller frees *ret. */
int sysctl_name_to_path(const char *name, char **ret);
