/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stddef.h>

#include "source-percpu-sysfs.h"
#include "util.h"

static const struct {
        const char *file;
        size_t offset;
} percpu_sysfs_fields[] = {
        { "nr_chunks", offsetof(PercpuSysfs, nr_chunks) },
        { "nr_empty_chunks", offsetof(PercpuSysfs, nr_empty_chunks) },
        { "nr_to_depopulate", offsetof(PercpuSysfs, nr_to_depopulate) },
        { "nr_sidelined", offsetof(PercpuSysfs, nr_sidelined) },
        { "nr_populated_pages", offsetof(PercpuSysfs, nr_populated_pages) },
        { "nr_empty_pop_pages", offsetof(PercpuSysfs, nr_empty_pop_pages) },
        { "nr_used_pop_pages", offsetof(PercpuSysfs, nr_used_pop_pages) },
        { "frag_free_bytes", offsetof(PercpuSysfs, frag_free_bytes) },
        { "nr_units", offsetof(PercpuSysfs, nr_units) },
        { "unit_pages", offsetof(PercpuSysfs, unit_pages) },
        { "empty_pop_pages_high", offsetof(PercpuSysfs, empty_pop_pages_high) },
};

int percpu_sysfs_read(const char *root, PercpuSysfs *ret) {
        PercpuSysfs s = { 0 };
        char path[128];

        for (size_t i = 0; i < ELEMENTSOF(percpu_sysfs_fields); i++) {
                _cleanup_(freep) char *buf = NULL;
                uint64_t v;
                int r;

                snprintf(path, sizeof path, PERCPU_SYSFS_DIR "/%s", percpu_sysfs_fields[i].file);
                r = read_file_at(root, path, 64, &buf, NULL);
                if (r < 0)
                        return r;
                r = parse_uint64(buf, &v);
                if (r < 0)
                        return -EINVAL;
                *(uint64_t *) ((char *) &s + percpu_sysfs_fields[i].offset) = v;
        }
        _cleanup_(freep) char *trigger = NULL;
        if (path_join_root(root, PERCPU_SYSFS_DIR "/depopulate", &trigger) < 0)
                return -ENOMEM;
        s.has_depopulate = access(trigger, F_OK) == 0;
        *ret = s;
        return 0;
}

int percpu_sysfs_depopulate(const char *root) {
        return write_file_at(root, PERCPU_SYSFS_DIR "/depopulate", "1");
}
