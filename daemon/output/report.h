/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-c/json.h>
#include <stdio.h>

#include "act-sysctl.h"
#include "metrics.h"
#include "policy-eval.h"
#include "policy.h"
#include "probe-kernel.h"
#include "snapshot.h"
#include "source-bulkfree.h"

/*
 * The view shared by `pcptuned --dry-run --once`, `pcptunectl status` and
 * the daemon's status file: what the kernel shows (Percpu, per-zone pcp
 * batch/high/count and memory on pcp lists, memcg live/dying, the fraction)
 * and what the policies decide.
 */
typedef struct ReportInput {
        const Snapshot *snap;
        const MetricValues *mv;
        const PolicySet *set;        /* may be NULL */
        const Decision *decision;        /* may be NULL */
        const KnobState *knobs;      /* every row of the knob table by KnobId (actuator_knobs()), may be NULL */
        const KernelFeatures *features; /* pcptune's contrib kernel mechanisms, may be NULL */
        const MemcgCost *memcg_cost;    /* per-memcg percpu cost; NULL: snapshot_memcg_cost() modelled */
        const PercpuStatsView *pstats;  /* percpu_stats as read for status, may be NULL */
        const KernelProbes *probes;     /* kernel probes (probe-kernel.h), may be NULL */
        const BulkFreeView *bulk_free;  /* measured bulk-free holds (pcptuned), may be NULL */
        bool dry_run;
        bool once;                      /* pcptuned --once: a knob it writes has no restore journal */
        bool acted;                     /* the pcp knob was just written from acted_from: snap is re-read after */
        int64_t acted_from;
        usec_t timestamp_usec;          /* CLOCK_REALTIME of the snapshot; 0: now */
        size_t n_policy_errors;         /* the policies did not load (set and plan NULL): errors printed before */
        const char *policy_source;      /* ... from where (a directory) */
} ReportInput;

/* The pcp knob's state: "managed", "not managed", "changed by an administrator", "read-only", "absent". */
const char *report_knob_state(const ReportInput *in);

/*
 * The report's model: one JSON object (caller owns the reference), what `status --json`, `pcptuned --once
 * --json` and the daemon's status file print and what the text is rendered from.  Its keys are pcptunectl(8)'s
 * JSON OUTPUT, "status --json".  NULL on ENOMEM.
 */
json_object *report_to_json(const ReportInput *in);

/* The text of a report_to_json() model: aligned tables under 100 columns; verbose: each kernel probe's
 * evidence and effect (kernel_probes_print_json()), else one line per probe. */
void report_print_view(FILE *f, json_object *model, bool verbose);
/* report_print_view(f, model, false). */
void report_print_model(FILE *f, json_object *model);

/* report_to_json() rendered as text by report_print_view().  0 or -ENOMEM. */
int report_print(FILE *f, const ReportInput *in, bool verbose);

/*
 * The "bulk_free" object of a status file written by pcptuned (JSON of
 * report_to_json()), validated like any input: types, ranges, finite
 * values.  why_buf holds an "unavailable" reason.  0 or -EINVAL.
 */
int report_bulk_free_from_json(json_object *o, BulkFreeView *ret, char *why_buf, size_t why_size);

/* One line for sd_notify STATUS= (buf of at least 128 bytes); returns buf. */
const char *report_status_line(const ReportInput *in, char *buf, size_t size);

/* "percpu: <total> = live memcgs <a> + dying memcgs <b> + other <c>" and its basis, from a
 * percpu_split_to_json() object; with_cost: a third line, how the per-memcg cost was obtained. */
void percpu_split_print(FILE *f, const char *indent, json_object *split, bool with_cost);
/* {"total_bytes", "live_memcgs_bytes", "dying_memcgs_bytes", "other_bytes", "fragmentation_bytes" (null when not
 * measured), "basis": {"total", "live_memcgs", "dying_memcgs", "other", "fragmentation", "memcg_cost_bytes",
 * "memcg_cost"}}.  NULL on ENOMEM. */
json_object *percpu_split_to_json(const PercpuSplit *s);

/* The percpu_stats summary of a percpu_stats_view_to_json() object, two lines (or "inconsistent dump" and
 * what disagrees), lines after indent. */
void percpu_stats_view_print(FILE *f, const char *indent, json_object *v);
/* {"state": "read"|"inconsistent"|"skipped"|"unavailable", ...}.  NULL on ENOMEM. */
json_object *percpu_stats_view_to_json(const PercpuStatsView *v);

/* The Percpu split the report shows (its memcg_cost, or the snapshot's modelled one; its pstats), for the
 * exporter too.  false without Percpu or a memory controller. */
bool report_split(const ReportInput *in, PercpuSplit *ret);
