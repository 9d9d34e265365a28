/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "knob.h"
#include "snapshot.h"

/*
 * The mechanisms of pcptune's contrib kernel patches (contrib/kernel), as
 * this kernel (or root tree) has them:
 *  0001 vm.percpu_pagelist_high_fraction = -1: found out by writing it (the
 *       daemon does, for pcp.high minimum); a root tree declares it in
 *       .pcptune/fraction-floor;
 *  0002 a sysctl of the knob table (knob.h, a row marked contrib): its file,
 *       which the snapshot reads with every knob (snapshot_knob_value());
 *  0003 /sys/kernel/mm/percpu: the counters and the depopulate trigger;
 *  0004 memory.reclaim "scope=dying" (reclaim only the dying memcgs of a
 *       subtree): found out by writing "0 scope=dying" (the daemon does when a
 *       reclaim-dying rule is loaded, see reclaim_probe_scope()); a root tree
 *       declares it in .pcptune/memory-reclaim-scope-dying (1 or 0).
 */
typedef struct KernelFeatures {
        FeatureState fraction_floor;
        /* memory.reclaim takes "<bytes> swappiness=N": only a write tells (the daemon writes
         * "0 swappiness=0", see reclaim_probe_args()); a root tree declares it in
         * .pcptune/memory-reclaim-swappiness (1 or 0). */
        FeatureState reclaim_swappiness;
        FeatureState reclaim_scope_dying;
        bool percpu_sysfs;
        bool percpu_depopulate;
} KernelFeatures;

/*
 * What a root tree other than "/" declares in <root>/.pcptune (fraction-floor,
 * memory-reclaim-swappiness): read once, at start.  For "/" both stay UNKNOWN
 * (only a write tells); the rest of *ret is zero.
 */
void kernel_features_declared(const char *root, KernelFeatures *ret);

/* declared plus what the snapshot read (/sys/kernel/mm/percpu): no read of its own. */
void kernel_features_from_snapshot(const KernelFeatures *declared, const Snapshot *s, KernelFeatures *ret);

/* Both, for a one-shot command: probe below root without writing anything. */
void kernel_features_probe(const char *root, const Snapshot *s, KernelFeatures *ret);

const char *feature_state_to_string(FeatureState s);

/*
 * Kernel probes: what this kernel does that changes what pcptune should do,
 * one row each, shown by `pcptunectl status`, `plan` and their JSON
 * ("probes": [{"label", "answer", "evidence", "effect"}]).  Each row has a
 * fixed label, an answer, the evidence it rests on (an interface, a
 * behaviour seen in what the kernel prints, or the version where nothing
 * else tells) and what pcptune does differently because of it.  A new probe
 * is a function and a row of probe_table[] (probe-kernel.c).
 */
typedef enum ProbeAnswer {
        PROBE_NO,
        PROBE_YES,
        PROBE_PARTIAL,
        PROBE_UNKNOWN,
        _PROBE_ANSWER_MAX,
        _PROBE_ANSWER_INVALID = -EINVAL,
} ProbeAnswer;

#define PROBE_TEXT_MAX 512
#define KERNEL_PROBES_MAX 16

typedef struct ProbeResult {
        const char *label;              /* fixed: "batched bulk frees", ... (static) */
        ProbeAnswer answer;
        char evidence[PROBE_TEXT_MAX];  /* what the answer rests on */
        char effect[PROBE_TEXT_MAX];    /* what pcptune does differently, or "" */
} ProbeResult;

/* What a probe may look at.  snap is NULL for a hypothetical shape (plan --shape). */
typedef struct ProbeInput {
        const char *root;               /* "/" or a root tree; NULL for a shape */
        const Snapshot *snap;
        KernelVersion kernel;
        const KernelFeatures *features; /* may be NULL */
        /* Filled by kernel_probes_run() (callers leave them 0): the stable release, from one read of
         * /proc/version where Debian's package version is in it, else kernel. */
        KernelVersion stable;
        bool stable_from_proc_version;
} ProbeInput;

typedef struct KernelProbes {
        ProbeResult rows[KERNEL_PROBES_MAX];
        size_t n;
} KernelProbes;

/* Run every probe of the table (reads only; never mounts or writes anything). */
void kernel_probes_run(const ProbeInput *in, KernelProbes *ret);

/* The row with this label, or NULL. */
const ProbeResult *kernel_probes_find(const KernelProbes *p, const char *label);

/* pcptune's contrib kernel mechanisms, the "contrib" object of status and plan --json: {"fraction_floor":
 * "yes"|"no"|"unknown", then for each contrib row of the knob table its knob_leaf_name(): the value s
 * read (snapshot_knob_value()) or null, then "percpu_sysfs", "percpu_depopulate", "reclaim_scope_dying":
 * "yes"|"no"|"unknown"}.  s: the snapshot k was probed from (NULL: every knob null).  NULL on ENOMEM. */
json_object *kernel_features_to_json(const KernelFeatures *k, const Snapshot *s);

/*
 * One line per row, under 80 columns ("  name answer reason": kernel_probe_name(), the answer,
 * kernel_probe_reason()); verbose: one wrapped paragraph per row ("  label: answer - evidence. pcptune:
 * effect"), under 100 columns.
 */
void kernel_probes_print(FILE *f, const KernelProbes *p, bool verbose);
/* The same, rendered from kernel_probes_to_json()'s array (a view's model holds it). */
void kernel_probes_print_json(FILE *f, json_object *a, bool verbose);

/* The short name of a row's label (the label itself if it has none); static. */
const char *kernel_probe_name(const char *label);
/* The short reason (at most 41 characters) for a row's label, answer and evidence, or NULL; static. */
const char *kernel_probe_reason(const char *label, const char *answer, const char *evidence);

/* [{"label", "answer", "evidence", "effect"}...]; NULL on ENOMEM. */
json_object *kernel_probes_to_json(const KernelProbes *p);

/* "no", "yes", "partial", "unknown"; NULL for anything else. */
const char *probe_answer_to_string(ProbeAnswer a);

/* Does kernel v free past high in steps of batch ("mm/page_alloc: batch page freeing in
 * free_frozen_page_commit", mainline 6.19, not in stable series)?  By version. */
bool kernel_batched_free_path(const KernelVersion *v);

/* Labels the daemon and plan act on. */
#define PROBE_BATCHED_FREES "batched bulk frees"
#define PROBE_REPARENTING "dying memcg reparenting"
#define PROBE_PCP_AUTOTUNE "pcp high auto-tuning"
#define PROBE_RECLAIM_ARGS "memory.reclaim arguments"
#define PROBE_RECLAIM_SCOPE "contrib 0004, memory.reclaim scope=dying"

