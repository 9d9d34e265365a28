/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <systemd/sd-event.h>

#include "act-reclaim.h"
#include "act-sysctl.h"
#include "act-counters.h"
#include "policy-eval.h"
#include "probe-kernel.h"
#include "reclaim-watch.h"
#include "snapshot.h"

/*
 * Acting on the kernel, from a decision (policy-eval.h) and the snapshot it
 * was made on: the managed knobs of the table (knob.h) with their restore
 * journal, the actions (reclaim-dying on its worker thread, percpu-depopulate,
 * the pageset repair), and the warnings about what cannot be done here (said
 * once per rule until the next reload).  The manager calls actuator_act() once
 * per sample; everything that writes to the kernel goes through here.
 */

typedef struct Actuator Actuator;

typedef struct ActuatorConfig {
        const char *root;
        const char *state_dir;          /* the restore journal, resume-<knob> files */
        bool dry_run;
        bool once;                      /* no loop to come back to: wait for a reclaim and its refault window */
        DaemonCounters *counters;       /* reclaim counters for the metrics (not owned) */
        /* A fresh look at a few sources (a mask of SOURCE_BIT(SourceId)) below root, for the counts just
         * before and after an action (dying memcgs, Percpu, the percpu sysfs): the observer's reader
         * (snapshot_take_sources()), so that reading stays with the sources.  0 or -errno. */
        int (*observe)(const char *root, unsigned sources, Snapshot **ret);
} ActuatorConfig;

/* The actuator (the config's pointers must outlive it).  0 or -ENOMEM. */
int actuator_new(const ActuatorConfig *cfg, Actuator **ret);
Actuator *actuator_free(Actuator *a);
DEFINE_TRIVIAL_CLEANUP_FUNC(Actuator *, actuator_free);

/* The event loop reclaims and their follow-ups run on (NULL: none, as with --once). */
void actuator_set_event(Actuator *a, sd_event *e);

/* The per-memcg percpu cost of the sample about to be acted on (the dry-run reclaim's expected gain). */
void actuator_set_memcg_cost(Actuator *a, const MemcgCost *c);

/* Why bulk-free goals cannot be solved yet (static or long-lived text), for the warning that says so. */
void actuator_set_calibration_note(Actuator *a, const char *note);

/*
 * Before the first write (not dry-run; the caller holds the daemon lock): a
 * journal left by a run that did not stop cleanly is restored, then a new one
 * is started.  0 or -errno (logged; the daemon must not start over it).
 */
int actuator_start(Actuator *a);

/* What actuator_act() did that the sampler must know. */
typedef enum ActResult {
        ACT_PAGESETS_CHANGED = 1 << 0,  /* a knob whose row changes the pagesets was written or restored */
} ActResult;

/* What acting found out that no source shows (FEATURE_UNKNOWN: not known yet). */
typedef struct ActLearned {
        FeatureState fraction_floor;       /* the high fraction takes -1 (contrib 0001): known once written */
        FeatureState reclaim_swappiness;   /* memory.reclaim takes swappiness= */
        FeatureState reclaim_scope_dying;  /* memory.reclaim takes scope=dying (contrib 0004) */
} ActLearned;

/* An action that ran: its rule's cooldown starts at `at` (CLOCK_MONOTONIC µs). */
typedef struct ActDone {
        const Policy *policy;
        const Rule *rule;
        usec_t at;
} ActDone;

/*
 * What one actuator_act() did, for the cycle to fold into the next sample
 * (cycle.h): the actuator writes nothing into the snapshot, the sampler or
 * the evaluation's history.
 */
typedef struct ActReport {
        unsigned flags;                    /* ActResult */
        bool has_readback;                 /* the knobs were read back after a write ... */
        KnobValue readback[_KNOB_ID_MAX];  /* ... and hold these now, by KnobId */
        ActLearned learned;                /* as of the end of the act */
        ActDone *done;                     /* actions that ran, in decision order */
        size_t n_done;
        unsigned failures;                 /* writes that failed in this act */
} ActReport;

void act_report_done(ActReport *rep);

/*
 * Act on one decision made on snapshot s: every managed knob of the table is
 * set to the decision's value (or handed back when no rule wants it any more),
 * then each decided action runs.  The knob states are those of s.  Fills *rep
 * (release with act_report_done()) and returns its ActResult flags (>= 0);
 * failures are logged and counted (actuator_failures()).
 */
int actuator_act(Actuator *a, const Snapshot *s, const Decision *d, ActReport *rep);

/* What acting has found out so far (the cycle folds it into each sample's kernel features). */
void actuator_learned(const Actuator *a, ActLearned *ret);

/* Every sample, before the evaluation: whether the dying count is exact; once, when a rule of the set
 * reclaims, what memory.reclaim accepts. */
void actuator_probe_reclaim_args(Actuator *a, const Snapshot *s, const PolicySet *set);

/* Say an unavailable thing once per policy/rule (until actuator_forget_warnings()): true the first time. */
bool actuator_warn_once(Actuator *a, const char *policy, const char *rule);
void actuator_forget_warnings(Actuator *a);

/* `pcptunectl resume KNOB` left <state>/resume-KNOB: manage each such knob again.  */
void actuator_resume(Actuator *a);

/*
 * Hand every managed knob back (pcptuned stopping), stopping a reclaim in
 * flight first; the journal file is removed when nothing is left in it.
 * 0 or the first -errno.
 */
int actuator_stop(Actuator *a);

/*
 * --on-stop keep: stop a reclaim in flight, leave every managed knob at its
 * value and the journal in place, and mark it handed over (onstop.h) for the
 * next pcptuned.  With nothing held (or in a dry run) it is actuator_stop().
 * Returns the number of knobs kept (> 0), or actuator_stop()'s result (0 or
 * -errno; a mark that cannot be written restores instead).
 */
int actuator_hand_over(Actuator *a);

/* Whether actuator_start() restored a crashed run's journal. */
bool actuator_crash_restored(const Actuator *a);

/* What was counted per knob (writes, restores, refusals, the last errno), by KnobId. */
const KnobCounters *actuator_counters(const Actuator *a);

/* A one-shot leaves the values set (like `sysctl -w`) and no journal behind. */
void actuator_forget_journal(Actuator *a);

/* The state of each row of the knob table, by KnobId (_KNOB_ID_MAX entries). */
const KnobState *actuator_knobs(const Actuator *a);

/* The knobs for the metrics, by KnobId: managed rows only.  Returns how many were written to ret. */
size_t actuator_prom_knobs(const Actuator *a, PromKnob ret[_KNOB_ID_MAX]);


/* Writes that failed since the start (--once exits 1 then). */
unsigned actuator_failures(const Actuator *a);

/* The reclaim watch: refault windows, the swappiness= probe. */
const ReclaimWatch *actuator_watch(const Actuator *a);
