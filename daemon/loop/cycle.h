/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include "actuator.h"
#include "metrics.h"
#include "policy-eval.h"
#include "probe-kernel.h"
#include "report.h"
#include "snapshot.h"

/*
 * One pass of the pipeline, observe -> evaluate -> decide, owned by one
 * struct: the snapshot, its metrics, the kernel features and probes, the
 * decision, the per-memcg cost.  pcptuned's loop (manager.c) and `pcptunectl
 * status` (ctl.c) run the same steps:
 *
 *   cycle_observe()   the snapshot (taken by the caller: the daemon's sampler
 *                     reuses costly sources, status reads once) and its metrics;
 *   cycle_probe()     the kernel features (what the root declares, what the
 *                     snapshot shows, what acting learned) and the probes on them;
 *   cycle_evaluate()  the policies on them (the evaluation, policy-eval.h,
 *                     run from here only) and the rulings that rest on the probes;
 *   cycle_fold()      (pcptuned) what the actuator did, ActReport, folded in:
 *                     cooldowns start, the knobs show their read-back, the
 *                     probes run again when acting learned something;
 *   cycle_report_input()  what the report renders.
 *
 * The actuator never writes into the cycle: the cycle reads its ActReport.
 */
typedef struct Cycle {
        Snapshot *snap;               /* owned */
        Snapshot *after;              /* owned, may be NULL: re-read after a write (cycle_fold()) */
        MetricValues mv;
        KernelFeatures features;
        KernelProbes probes;
        bool probed;
        Decision decision;
        bool evaluated;               /* decision holds the evaluation's result */
        MemcgCost cost;
        bool has_cost;
        /* For the probes again after a fold (not owned). */
        const char *root;
        const KernelFeatures *declared;
        /* The pcp knob before the act, and whether the re-read shows another value. */
        int64_t knob_before;
        bool acted;
} Cycle;

/* Release what the cycle owns; *c is zeroed (a cycle may be reused after it). */
void cycle_done(Cycle *c);

/* The snapshot s (owned from now on, never NULL) and its metrics (metrics_from_snapshot()). */
void cycle_observe(Cycle *c, Snapshot *s);

/*
 * The kernel features of the snapshot: declared (what the root tree declares,
 * kernel_features_declared(); never NULL, must outlive the cycle), what the
 * snapshot shows, and what acting learned (learned may be NULL; a field that
 * is FEATURE_UNKNOWN learns nothing), then the kernel probes on them
 * (kernel_probes_run(), below root, which must outlive the cycle).
 */
void cycle_probe(Cycle *c, const char *root, const KernelFeatures *declared, const ActLearned *learned);

/*
 * Evaluate set on the cycle's snapshot and metrics at now (CLOCK_MONOTONIC
 * µs), updating st (policy-eval.h), then the rulings on this kernel's probes
 * (decision_rule_on_kernel(); after cycle_probe()).  0 or -ENOMEM.
 */
int cycle_evaluate(Cycle *c, const PolicySet *set, EvalState *st, usec_t now);

/*
 * What the actuator did (rep, actuator_act()) folded into the cycle and the
 * next: each action that ran starts its rule's cooldown in st; after a write
 * the snapshot shows the knobs' read-back, unless after (owned from now on,
 * may be NULL: a fresh snapshot taken after the write, --once) replaces it
 * in the report; what acting learned reaches the features, and the probes run
 * again when that changes what is known.
 */
void cycle_fold(Cycle *c, const ActReport *rep, EvalState *st, Snapshot *after);

/* The snapshot the report shows: the re-read after a write, else the sample. */
const Snapshot *cycle_shown(const Cycle *c);

/*
 * The report input of the cycle: snapshot, metrics, decision (NULL when not
 * evaluated), features, probes, memcg cost (NULL when not set), whether the
 * pcp knob was just written.  The caller adds what only it knows (the knob
 * states, bulk-free holds, dry_run, ...).
 */
void cycle_report_input(const Cycle *c, ReportInput *ret);
