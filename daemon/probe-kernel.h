/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "act-sysctl.h"

/*
 * The mechanisms of pcptune's contrib kernel patches (contrib/kernel), as
 * this kernel (or root tree) has them:
 *  0001 vm.percpu_pagelist_high_fraction = -1: found out by writing it (the
 *       daemon does, for pcp.high minimum); a root tree declares it in
 *       .pcptune/fraction-floor;
 *  0002 vm.pcp_batch_scale_max: the file;
 *  0003 /sys/kernel/mm/percpu: the counters and the depopulate trigger.
 */
typedef struct KernelFeatures {
        FeatureState fraction_floor;
        bool batch_scale_max;
        int64_t batch_scale_max_value;
        bool percpu_sysfs;
        bool percpu_depopulate;
} KernelFeatures;

/* Probe below root without writing anything.  fraction_floor stays UNKNOWN for "/". */
void kernel_features_probe(const char *root, KernelFeatures *ret);

const char *feature_state_to_string(FeatureState s);
