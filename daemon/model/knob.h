/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model-pcp.h"

struct Policy;
struct Rule;
struct Snapshot;

/*
 * The knob table: every sysctl pcptune reads as a knob or may write, once,
 * with its path below the root and the values its kernel handler accepts.
 * Everything that writes a knob or restores one from the journal goes through
 * a row of this table: a name read from a file (the restore journal, a
 * `pcptunectl resume` argument) is only ever looked up here, and the path is
 * the row's, never one built from input.
 *
 * A row with a policy key is a managed knob: policies set it (parsed by the
 * row's setting kind), the evaluation solves the winning rule's setting into
 * a value (by the row's setting kind), the actuator writes it (probe, after_write,
 * confirm),
 * and status, metrics, `pcptunectl resume` and the shadowed-rule check loop
 * over these rows.  A new managed sysctl is a row here (plus a solver for a new setting kind).
 *
 * The names, one per kind of knob object: KnobId (a row's index), KnobDesc
 * (the row), KnobSetting (what a rule sets), KnobDecision (what the
 * evaluation decided, policy-eval.h), KnobState (what the actuator knows of
 * it at run time, act-sysctl.h).
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

/* How a rule writes a managed knob's value in a policy. */
typedef enum KnobSettingKind {
        KNOB_SETTING_NONE,        /* not set by policies */
        KNOB_SETTING_PCP_GOAL,    /* a pcp high goal solved per host: minimum, 8x batch, 2MiB per cpu, ... */
        KNOB_SETTING_INT,         /* an integer within the row's [min_value, max_value] */
        _KNOB_SETTING_KIND_MAX,
} KnobSettingKind;

/* What one rule sets a managed knob to. */
typedef struct KnobSetting {
        bool set;
        PcpGoal goal;             /* KNOB_SETTING_PCP_GOAL */
        int64_t value;            /* KNOB_SETTING_INT */
} KnobSetting;

/* The winning rule's setting for one knob and the value it solves to on this host. */
typedef struct KnobDecision {
        bool wanted;              /* some active rule sets the knob */
        const struct Policy *policy;
        const struct Rule *rule;
        PcpGoal goal;             /* KNOB_SETTING_PCP_GOAL: the rule's goal (with ns_per_page/batched set) */
        int64_t value;            /* the value to write (valid when solve_error >= 0 or -ERANGE) */
        int solve_error;          /* 0, -ERANGE (goal below the floor: minimum used), -EOPNOTSUPP (legacy kernel),
                                   * -ENODATA (no pcp zones, or bulk_free_p99 without a calibration) */
        /* bulk_free_p99 goals: the prediction behind the choice (model-pcp.h, calibration.h). */
        double ns_per_page;       /* the calibration solved with (0: none) */
        uint64_t pages;           /* pages per bulk free at the chosen fraction, worst zone */
        double predicted_ns;      /* pages x ns_per_page */
        uint64_t default_pages;   /* the same at the default fraction */
        /* The evaluation's rulings on a wanted knob (policy-eval.c): whether the snapshot has the knob at
         * all, and whether the solve gives a value to write (solve_error 0 or -ERANGE, minimum used).
         * The actuator writes only a knob that is present and usable, and says why not otherwise. */
        bool absent;
        bool usable;
} KnobDecision;

/* What a solver may use besides the rule's setting. */
typedef struct KnobSolveInput {
        const struct Snapshot *snap;  /* may be NULL */
        double ns_per_page;           /* the bulk-free calibration in use (0: none) */
} KnobSolveInput;

/*
 * The table is data: what a row's kind of setting, probe, after-write step and
 * confirmation are is said here by name; the code for each lives with the layer
 * that runs it (the solvers with the evaluation, policy-eval.c; the rest with
 * the writes, act-sysctl.c), so the table includes nothing of theirs.
 */
typedef enum KnobProbe {
        KNOB_PROBE_NONE,
        KNOB_PROBE_PCP_MINIMUM,   /* a pcp goal solved to the minimum on a non-legacy kernel: try probe_value */
} KnobProbe;

typedef enum KnobAfterWrite {
        KNOB_AFTER_NONE,
        /* a fraction that lowers high (a larger one, or -1): write vm.stat_refresh so idle CPUs decay now */
        KNOB_AFTER_STAT_REFRESH_ON_LOWER,
} KnobAfterWrite;

typedef enum KnobConfirm {
        KNOB_CONFIRM_NONE,
        KNOB_CONFIRM_PAGESETS,    /* zoneinfo's pagesets hold the model's high and batch (pcp_confirm()) */
} KnobConfirm;

/* What probing a kernel feature found (a row's probe, the kernel features of probe-kernel.h). */
typedef enum FeatureState {
        FEATURE_UNKNOWN,           /* not probed yet ("unknown") */
        FEATURE_ABSENT,
        FEATURE_PRESENT,
        _FEATURE_STATE_MAX,
} FeatureState;

typedef struct KnobDesc KnobDesc;

struct KnobDesc {
        KnobId id;
        const char *name;         /* sysctl name, "vm.percpu_pagelist_high_fraction" */
        const char *path;         /* below the root, "/proc/sys/vm/percpu_pagelist_high_fraction" */
        int64_t min_value;        /* values the handler accepts, inclusive; also the only */
        int64_t max_value;        /* originals the journal may hand back */
        int64_t hole_min;         /* values inside [min, max] the handler still rejects */
        int64_t hole_max;         /* (hole_min > hole_max: none) */
        bool writable;            /* pcptune may write it */
        bool contrib;             /* added by a pcptune contrib kernel patch (contrib/kernel): status and plan give
                                   * its value under "contrib" (kernel_features_to_json()) */

        /* Managed knobs (policy_key != NULL). */
        const char *policy_key;   /* "pcp.high": the key rules set it with (section "pcp", field "high") */
        KnobSettingKind setting;
        const char *setting_what; /* KNOB_SETTING_INT: "an integer between 0 and 6 (...)" for parse errors */
        const char *needs;        /* where the knob comes from, said when it is absent and a rule wants it */
        const char *readonly_why; /* a row of the same knob pcptune only reads: why (said once) */
        /* A value to try before d->value that the kernel may reject with EINVAL (then d->value is written
         * and the row is not probed again): when (KnobProbe) and which (probe_value). */
        KnobProbe probe;
        int64_t probe_value;
        const char *probe_rejected;   /* what an EINVAL means: "no pcptune contrib patch" */
        /* A root other than "/" (fixtures, test trees) cannot reject a value: this file below it holding 1
         * declares that the probe's value is taken, anything else (or no file) that it is not. */
        const char *probe_declared;
        bool changes_pagesets;    /* a write makes the kernel recompute the pcp pagesets */
        KnobAfterWrite after_write; /* what follows a write (act-sysctl.c, knob_after_write()) */
        KnobConfirm confirm;      /* how the write is confirmed beyond knob_apply()'s read-back (knob_confirm()) */
};

/* The row of a knob.  id must be valid. */
const KnobDesc *knob_desc(KnobId id);

/* The row of a writable knob by its sysctl name; NULL if the name is not in the allowlist. */
const KnobDesc *knob_desc_by_name(const char *name);

/* Whether the row is a managed knob (set by policies). */
static inline bool knob_managed(const KnobDesc *d) {
        return d && d->policy_key;
}

/* "sysctl1 and sysctl2": the managed knobs' names for messages, in buf; returns buf. */
const char *knob_managed_names(char *buf, size_t size);

/* Whether the knob's handler accepts v (and so whether we may write or restore it). */
bool knob_value_valid(const KnobDesc *d, int64_t v);

/* The sysctl's name without its directory ("percpu_pagelist_high_fraction" for
 * "vm.percpu_pagelist_high_fraction"): the key JSON objects give the knob's value under.  Static, never NULL. */
const char *knob_leaf_name(const KnobDesc *d);

/*
 * A knob's current value as read below a root: the file at the row's path
 * (/proc/sys/..., the kernel's sysctl handler), one number.  The snapshot
 * reads every row of the table into one of these by KnobId (the "knobs"
 * source, sysctl_read_knobs()); ask it with snapshot_knob_value().
 */
typedef struct KnobValue {
        bool present;             /* the file was read and holds a number */
        int64_t value;            /* present: that number as the file holds it (not checked against the range) */
        int error;                /* not present: -ENOENT (no such sysctl on this kernel), -EINVAL (not a
                                   * number), or another -errno of the read; 0 when present */
} KnobValue;
