/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>

#include "model-percpu.h"
#include "model-wmark.h"
#include "policy.h"
#include "probe-kernel.h"
#include "repair.h"
#include "snapshot.h"

/*
 * pcptunectl plan: what pcp lists and percpu memory cost on a host (the
 * live one, a snapshot, or a hypothetical shape) for the current fraction
 * and candidates, exactly as the kernel computes them (model-pcp.h).
 */

#define PLAN_MAX_FRACTIONS 32

typedef struct PlanHost {
        char *label;                /* "live", the snapshot's directory name, or "shape" */
        const Snapshot *snap;       /* NULL for a shape */
        char *kernel_release;
        KernelVersion kernel;
        PcpRegime regime;
        unsigned page_size;
        unsigned online_cpus;
        unsigned possible_cpus;
        unsigned nodes;             /* nodes with CPUs or populated zones */
        bool estimate;              /* a shape: managed pages and watermarks are estimated */
        uint64_t min_free_kbytes;   /* shapes: the modelled value */
        PcpZone *zones;             /* populated zones */
        char (*zone_names)[ZONE_NAME_MAX];
        size_t n_zones;
        bool has_fraction;          /* the host has a pcp sysctl */
        bool legacy;                /* vm.percpu_pagelist_fraction (< 5.14) */
        int fraction;               /* its current value (0 for a shape) */
        int batch_scale_max;        /* snapshot_batch_scale_max(); a shape: the build default */
        KernelFeatures features;    /* pcptune's contrib kernel mechanisms (snapshots: probed) */
        bool has_features;
        PercpuStatsView pstats;     /* percpu_stats of a snapshot or, where cheap, the live host */
        bool has_pstats;
        KernelProbes probes;        /* kernel probes (snapshots: run on the tree; shapes: by version) */
} PlanHost;

/* From a snapshot (live or a captured tree).  label is copied.  0 or -ENOMEM. */
int plan_host_from_snapshot(const Snapshot *s, const char *label, PlanHost *ret);
/* From a hypothetical shape (estimated zones, see host_shape_zones()).  0 or -errno. */
int plan_host_from_shape(const HostShape *shape, PlanHost *ret);
void plan_host_done(PlanHost *h);

typedef struct PlanOptions {
        int fractions[PLAN_MAX_FRACTIONS];   /* --fraction values (validated: 0 or >= 8) */
        size_t n_fractions;
        const PolicySet *policies;           /* may be NULL */
        uint64_t containers;                 /* --containers (0: no projection) */
        uint64_t memcgs_per_container;       /* default 1 */
        const MemcgCostMeasurement *measured; /* `plan --measure` now or kept from before; used if it fits */
        double ns_per_page;                  /* > 0: bulk-free calibration (--ns-per-page or calibration.json) */
        const char *calibration_how;         /* where it comes from, or why there is none */
        uint64_t latency_ns;                 /* --latency: the p99 bulk-free hold to meet (0: none) */
        bool verbose;                        /* --verbose: the text shows each kernel probe's evidence */
} PlanOptions;

/* The fractions plan evaluates for a host: the current one, then each --fraction (duplicates dropped). */
size_t plan_fractions(const PlanHost *h, const PlanOptions *o, int *ret, size_t max);

/* Human report, tables under 100 columns: plan_to_json() rendered by plan_print_model().  0, -EINVAL if the
 * model refuses a fraction on a zone (nothing printed), -ENOMEM. */
int plan_print(FILE *f, const PlanHost *h, const PlanOptions *o);
/* The text of a plan_to_json() model; verbose: each kernel probe's evidence, else one line per probe. */
void plan_print_view(FILE *f, json_object *model, bool verbose);
/* plan_print_view(f, model, false). */
void plan_print_model(FILE *f, json_object *model);

/*
 * The JSON contract (tests pin it): {"kernel", "fractions": [int...], "zones": [{"node", "zone",
 * "managed_pages", "low_pages", "cpus", "plans": [{"fraction", "batch", "high_min", "high_max",
 * "pcp_max_bytes"}]}]} plus further keys (host, totals, minimum_fraction, candidate_totals, bulk_free,
 * policies, pagesets, percpu, contrib, advisories, probes).  It is the view's model: plan_print() renders its
 * text from it.  NULL on ENOMEM.
 */
json_object *plan_to_json(const PlanHost *h, const PlanOptions *o);

/*
 * Bulk-free holds per candidate fraction (plan-hold.c): pages per bulk free
 * on the worst zone (pcp_bulk_free_pages_host()), the predicted p99 hold
 * with the calibration, the memory pcp lists may hold; and with
 * o->latency_ns the fraction that meets it (pcp_solve_goal(),
 * PCP_GOAL_BULK_FREE_P99).  Without a calibration the pages are shown and
 * it says there is none.
 */
json_object *plan_holds_to_json(const PlanHost *h, const PlanOptions *o);
/* The text of a plan_holds_to_json() object. */
void plan_print_holds_model(FILE *f, json_object *holds);


/* The most pcp lists may hold at a fraction, in bytes: host_pcp_max_bytes() over the host's zones.  0 or -errno. */
int plan_host_total_max(const PlanHost *h, int fraction, uint64_t *ret);

/* Fleet table: one CSV row per host, zone and fraction (header printed when header is true). */
void plan_print_csv(FILE *f, const PlanHost *h, const PlanOptions *o, bool header);
