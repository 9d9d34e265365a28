/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: the cgroup text parsers (/proc/cgroups, cgroup.stat, memory.stat refaults, mountinfo) and
 * cpulists. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source-cgroup.h"
#include "source-memcg-tree.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *buf = malloc(size + 1);
        ProcCgroupsRow row;
        CgroupStat st;
        CgroupMode mode;
        char *mount;
        unsigned count;
        int max;
        uint64_t refaults;
        MemcgRefaultKey key;

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = 0;
        (void) proc_cgroups_parse(buf, size, "memory", &row);
        if (cgroup_stat_parse(buf, size, &st) == 0 && (st.nr_descendants < 0 || st.nr_dying_descendants < 0))
                abort();        /* required keys are present on success */
        for (CgroupMode m = CGROUP_MEMORY_V1; m <= CGROUP_MEMORY_V2; m++)
                if (memcg_refault_parse(buf, size, m, &refaults, &key) == 0 && !memcg_refault_key_name(key, m))
                        abort();
        if (parse_cpulist(buf, &count, &max) == 0 && (count == 0) != (max == -1))
                abort();
        /* As a mountinfo text; cgroup2 lines look for cgroup.controllers below a root that does not exist. */
        if (memcg_find_mount("/nonexistent-pcptune-fuzz", buf, size, &mode, &mount) == 0) {
                if ((mode == CGROUP_MEMORY_NONE) != (mount == NULL))
                        abort();
                free(mount);
        }
        free(buf);

        /* The same bytes without a terminating NUL: the parsers must stay within len. */
        buf = malloc(size ? size : 1);
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        (void) proc_cgroups_parse(buf, size, "memory", &row);
        (void) cgroup_stat_parse(buf, size, &st);
        (void) memcg_refault_parse(buf, size, CGROUP_MEMORY_V2, &refaults, NULL);
        (void) memcg_refault_parse(buf, size, CGROUP_MEMORY_V1, &refaults, NULL);
        if (memcg_find_mount("/nonexistent-pcptune-fuzz", buf, size, &mode, &mount) == 0)
                free(mount);
        free(buf);
        return 0;
}
