/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "metrics.h"
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

/* Nothing is opened before triggers_update().  0 or -ENOMEM. */
int triggers_new(sd_event *event, const char *root, const TriggerHooks *hooks, Triggers **ret);
Triggers *triggers_free(Triggers *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(Triggers *, triggers_free);

/*
 * Open or close the triggers for a newly loaded set.  host: is evaluated on
 * mv, the metrics of the sample being taken (no read of its own); kernel is
 * that sample's kernel (the proc connector's filter depends on it).  Failures
 * are logged and leave sampling at the interval.
 */
void triggers_update(Triggers *t, const PolicySet *set, const MetricValues *mv, const KernelVersion *kernel);

/* proc.exit_rate into mv (exits per second), or why it is unavailable.  now: CLOCK_MONOTONIC µs. */
void triggers_exit_metric(Triggers *t, MetricValues *mv, usec_t now);

/* Whether a rule using proc.exit_rate is active after the last evaluation (fast ticks go on while it is). */
void triggers_set_exit_rules_active(Triggers *t, bool active);

/* Do exits flow at the fast-tick rate, or is an exit rule active?  false with t NULL. */
bool triggers_exits_busy(Triggers *t, usec_t now);

/* Exits counted since the proc connector was opened; false (and *ret untouched) when it is closed. */
bool triggers_exit_count(const Triggers *t, uint64_t *ret);
