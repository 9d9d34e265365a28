/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include "model-percpu.h"
#include "policy.h"
#include "probe-kernel.h"
#include "snapshot.h"

/*
 * The daemon's sampling stage: the snapshot of every source, with what costs
 * most reused from the last sample while it costs more than it is worth, and
 * the per-memcg percpu cost learnt across samples.
 */
typedef struct Sampler Sampler;

/* 0 or -ENOMEM. */
int sampler_new(const char *root, Sampler **ret);
Sampler *sampler_free(Sampler *sp);
DEFINE_TRIVIAL_CLEANUP_FUNC(Sampler *, sampler_free);

/*
 * Read a sample below the root.  zoneinfo and the v1 memcg directory walk
 * are copied from the last kept sample for up to 5 samples when a read cost
 * more than 1 ms (zoneinfo) or 20 ms (memcg; 100 ms when a rule of set uses
 * memcg.dying or memcg.live); cheap (a sample a trigger asked for) copies
 * both.  Updates the per-memcg percpu estimate.  0 or -errno of a required
 * source, with *err (may be NULL) naming it.
 */
int sampler_take(Sampler *sp, const PolicySet *set, bool cheap, Snapshot **ret, SnapshotError *err);

/* Keep s (owned from now on) as the last sample: costly sources are reused from it. */
void sampler_keep(Sampler *sp, Snapshot *s);

/* The pagesets were just written: the next sample reads zoneinfo again. */
void sampler_pagesets_changed(Sampler *sp);

/* The result of `pcptunectl plan --measure` kept in state_dir (at start and on reload); none is fine. */
void sampler_load_measured(Sampler *sp, const char *state_dir);

/* The per-memcg percpu cost (snapshot_memcg_cost(): `plan --measure`, else the running estimate, else the model). */
void sampler_memcg_cost(const Sampler *sp, const Snapshot *s, MemcgCost *ret);

/* What the root tree declares of its kernel (kernel_features_declared()), read once at sampler_new(). */
const KernelFeatures *sampler_declared(const Sampler *sp);
