/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "probe-kernel.h"
#include "source-percpu-sysfs.h"
#include "source-sysctl.h"
#include "util.h"

static bool exists_at(const char *root, const char *path) {
        _cleanup_(freep) char *p = NULL;
        return path_join_root(root, path, &p) >= 0 && access(p, F_OK) == 0;
}

void kernel_features_probe(const char *root, KernelFeatures *ret) {
        KernelFeatures f = { .fraction_floor = FEATURE_UNKNOWN };
        int64_t v;

        if (root && !streq(root, "/"))
                f.fraction_floor = read_int64_at(root, "/.pcptune/fraction-floor", &v) >= 0 && v == 1 ? FEATURE_PRESENT
                                                                                                     : FEATURE_ABSENT;
        f.batch_scale_max = read_int64_at(root, SYSCTL_PCP_BATCH_SCALE_MAX_PATH, &f.batch_scale_max_value) >= 0;
        f.percpu_sysfs = exists_at(root, PERCPU_SYSFS_DIR "/nr_populated_pages");
        f.percpu_depopulate = exists_at(root, PERCPU_SYSFS_DIR "/depopulate");
        *ret = f;
}

const char *feature_state_to_string(FeatureState s) {
        switch (s) {
        case FEATURE_PRESENT:
                return "yes";
        case FEATURE_ABSENT:
                return "no";
        default:
                return "not tried";
        }
}
