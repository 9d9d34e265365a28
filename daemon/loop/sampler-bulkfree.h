/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <systemd/sd-event.h>

#include "knob.h"
#include "metrics.h"
#include "policy-eval.h"
#include "source-bulkfree.h"
#include "triggers.h"

/*
 * Bulk-free holds sampled from a private trace instance (source-bulkfree.h)
 * with a duty cycle, and what is learnt from them: the calibration (time per
 * page, calibration.h) kept in the calibration directory, and the time per
 * page that bulk_free_p99 goals are solved with (EvalState), changed with
 * hysteresis when what is measured under an applied goal disagrees
 * (calibration_goal_feedback()).  Runs on the manager's loop; the samples
 * only look at what the timer's ticks read.
 */
typedef struct BulkSampler BulkSampler;

typedef struct BulkSamplerConfig {
        const char *root;
        usec_t period_usec;             /* one window of tracing per period; 0: never traces */
        const char *calibration_dir;
        bool calibration_dir_given;     /* another root than "/" uses a calibration only when named */
        bool dry_run;                   /* the calibration is not saved */
        bool once;                      /* no tracing (--once): says so */
} BulkSamplerConfig;

/*
 * Load the calibration of earlier runs (validated like any input; a bad
 * file is logged and a new one started) and give eval its time per page.
 * Tracing starts with bulk_sampler_start().  0 or -ENOMEM.
 */
int bulk_sampler_new(const BulkSamplerConfig *cfg, EvalState *eval, BulkSampler **ret);
BulkSampler *bulk_sampler_free(BulkSampler *b);
DEFINE_TRIVIAL_CLEANUP_FUNC(BulkSampler *, bulk_sampler_free);

/*
 * Open the trace instance (a buffer of 4 MiB over the CPUs, page frees
 * sampled by pfn as sparsely as the smallest batch allows) and start the duty
 * cycle on the loop; triggers (may be NULL) say when an exit storm keeps
 * tracing on.  Reads the topology and zoneinfo sources once.  Failures are
 * logged: pcp.bulk_free.* are then unavailable, with why.
 */
void bulk_sampler_start(BulkSampler *b, sd_event *event, Triggers *triggers);

/* Stop tracing and close the instance (at shutdown). */
void bulk_sampler_stop(BulkSampler *b);

/* An exit storm may be forming (now: CLOCK_MONOTONIC µs): trace now rather than at the next window. */
void bulk_sampler_storm(BulkSampler *b, usec_t now);

/* What the windows measured (last 10 minutes, up to now), for status, JSON and the metrics pcp.bulk_free.*. */
void bulk_sampler_view(BulkSampler *b, usec_t now, BulkFreeView *ret, MetricValues *mv);

/*
 * After a sample has acted: what it decided for a bulk_free_p99 goal, and
 * since when vm.percpu_pagelist_high_fraction holds the goal's fraction (its
 * value in s, the sample as updated after the actuator's write).
 */
void bulk_sampler_goal_track(BulkSampler *b, const Decision *decision, const Snapshot *s, usec_t now);

/* "tracing", or why bulk frees are not traced (static or owned by b). */
const char *bulk_sampler_why(const BulkSampler *b);
