/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "metrics.h"
#include "policy-eval.h"
#include "policy.h"
#include "util.h"

/*
 * Event triggers: what makes the daemon sample now instead of at its next
 * tick.  Opened only for what the policy set uses:
 *  - a PSI trigger on /proc/pressure/memory (psi_trigger_open()) while a rule
 *    of a matching policy compares a psi.memory.* metric: the kernel wakes us
 *    when the stall time in a 2 s window passes the lowest threshold a rule
 *    uses, and we sample at most once a second;
 *  - the proc connector (source-procexit.h) while a rule of a matching policy
 *    uses proc.exit_rate: every exit wakes the socket; 1 s "fast ticks"
 *    sample while exits flow at a quarter of the lowest threshold a when:
 *    compares the rate with, or while a rule on the rate is active (its
 *    until: must be seen to hold).
 * Everything runs on the manager's sd-event loop; the manager is told
 * through the hooks and never sees the sources.
 */
typedef struct Triggers Triggers;

typedef struct TriggerHooks {
        /* Sample now, cheaply (costly sources may be reused from the last sample). */
        void (*sample_now)(void *userdata);
        /* Exits flow at the fast-tick rate or an exit rule is active (now: CLOCK_MONOTONIC µs);
         * a storm may be forming.  May be NULL. */
        void (*exits_busy)(void *userdata, usec_t now);
        void *userdata;
} TriggerHooks;

/* Nothing is opened before the first sample (triggers_sample()).  0 or -ENOMEM. */
int triggers_new(sd_event *event, const char *root, const TriggerHooks *hooks, Triggers **ret);
Triggers *triggers_free(Triggers *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(Triggers *, triggers_free);

/* A new policy set was loaded: the triggers follow it at the next full sample. */
void triggers_policies_changed(Triggers *t);

/*
 * At each sample, on its metrics: after a (re)load and at the first sample
 * (not a cheap one: a trigger's own), open or close the triggers for set,
 * with host: evaluated on mv (no read of its own) and kernel the sample's
 * (the proc connector's filter depends on it); failures are logged and leave
 * sampling at the interval.  Then proc.exit_rate into mv (exits per second),
 * or why it is unavailable.  now: CLOCK_MONOTONIC µs.
 */
void triggers_sample(Triggers *t, const PolicySet *set, const KernelVersion *kernel, MetricValues *mv, usec_t now,
                     bool cheap);

/* After the evaluation: fast ticks go on while a rule using proc.exit_rate is active.  t may be NULL. */
void triggers_set_decision(Triggers *t, const Decision *decision);

/* Do exits flow at the fast-tick rate, or is an exit rule active?  false with t NULL. */
bool triggers_exits_busy(Triggers *t, usec_t now);

/* Exits counted since the proc connector was opened; false (and *ret untouched) when it is closed. */
bool triggers_exit_count(const Triggers *t, uint64_t *ret);
