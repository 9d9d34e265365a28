/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "act-sysctl.h"
#include "knob.h"
#include "log.h"
#include "macro.h"
#include "probe-kernel.h"
#include "snapshot.h"

/* ---- vm.percpu_pagelist_high_fraction: solved from a pcp high goal ---- */

/* The fraction that meets the goal on this host's zones (pcp_solve_goal()); bulk_free_p99 goals also get
 * the prediction behind the choice. */
static void pcp_high_solve(const KnobSolveInput *in, const KnobSetting *setting, KnobDecision *d) {
        const Snapshot *snap = in->snap;
        int f = 0;

        d->goal = setting->goal;
        if (!snap || snap->n_pcp_zones == 0) {
                d->solve_error = -ENODATA;
                return;
        }
        bool batched = kernel_batched_free_path(&snap->topo.kernel);
        if (d->goal.kind == PCP_GOAL_BULK_FREE_P99) {
                d->goal.ns_per_page = in->ns_per_page;
                d->goal.batched = batched;
                d->ns_per_page = d->goal.ns_per_page;
        }
        d->solve_error = pcp_solve_goal(snap->regime, snap->pcp_zones, snap->n_pcp_zones, snap->topo.page_size,
                                        &d->goal, &f);
        if (d->solve_error >= 0 || d->solve_error == -ERANGE)
                d->value = f;
        if (d->goal.kind == PCP_GOAL_BULK_FREE_P99 && d->ns_per_page > 0 &&
            (d->solve_error >= 0 || d->solve_error == -ERANGE) &&
            pcp_bulk_free_pages_host(snap->regime, snap->pcp_zones, snap->n_pcp_zones, snap->topo.page_size, f,
                                     batched, &d->pages) >= 0 &&
            pcp_bulk_free_pages_host(snap->regime, snap->pcp_zones, snap->n_pcp_zones, snap->topo.page_size, 0,
                                     batched, &d->default_pages) >= 0)
                d->predicted_ns = d->ns_per_page * (double) d->pages;
}

/* minimum: -1 where the kernel has pcptune's contrib patch 0001 (the floor without a per-host fraction to
 * solve again); a kernel without it rejects -1 with EINVAL (percpu_pagelist_high_fraction_sysctl_handler(),
 * mm/page_alloc.c). */
static bool pcp_high_probe(const KnobDecision *d, const Snapshot *s, int64_t *ret_value) {
        if (d->goal.kind != PCP_GOAL_MINIMUM || !s || s->regime == PCP_REGIME_LEGACY)
                return false;
        *ret_value = PCP_FRACTION_FLOOR;
        return true;
}

/* Lower limits: busy CPUs clamp at their next allocation or free; idle ones only decay, 1/8 per vmstat
 * tick (decay_pcp_high(), mm/page_alloc.c 6.7+).  A write to vm.stat_refresh runs one decay step on every
 * CPU now (vmstat_refresh(), mm/vmstat.c). */
static void pcp_high_after_write(const char *root, int64_t old, int64_t value) {
        bool lowered = (value == PCP_FRACTION_FLOOR && old != PCP_FRACTION_FLOOR) ||
                       (value > 0 && (old == 0 || (old > 0 && value > old)));
        if (!lowered)
                return;
        int q = write_file_at(root, "/proc/sys/vm/stat_refresh", "1");
        if (q < 0 && q != -ENOENT)
                log_debug_errno(q, "Failed to write vm.stat_refresh: %s", errno_str(q));
}

static void pcp_high_confirm(const char *root, const KnobDesc *d, int64_t value) {
        _cleanup_(freep) char *msg = NULL;
        int q = pcp_confirm(root, (int) value, &msg);
        if (q == -EBADE)
                log_warning("%s = %" PRId64 " is set but the pagesets do not show the model's values: %s", d->name,
                            value, strna(msg));
        else if (q < 0)
                log_warning_errno(q, "Failed to confirm %s = %" PRId64 " in zoneinfo: %s", d->name, value,
                                  errno_str(q));
        else
                log_info("Confirmed %s = %" PRId64 ": pagesets match the model on every populated zone", d->name,
                         value);
}

/* ---- knobs set to a value a rule gives as it is ---- */

static void knob_value_solve(const KnobSolveInput *in, const KnobSetting *setting, KnobDecision *d) {
        d->value = setting->value;
        d->solve_error = 0;
}

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
                .solve = pcp_high_solve,
                .probe = pcp_high_probe,
                .probe_rejected = "no pcptune contrib patch",
                .probe_declared = "/.pcptune/fraction-floor",
                .changes_pagesets = true,
                .after_write = pcp_high_after_write,
                .confirm = pcp_high_confirm,
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
                .solve = knob_value_solve,
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
