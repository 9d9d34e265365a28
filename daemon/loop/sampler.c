/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <limits.h>

#include "probe-percpu.h"
#include "sampler.h"
#include "source-table.h"

struct Sampler {
        char *root;
        Snapshot *prev;                   /* the last sample kept: costly sources are reused from it */
        unsigned zoneinfo_skips, memcg_skips;

        /* Percpu per memcg measured from live counts: growth of Percpu over growth of memcgs. */
        uint64_t est_prev_total, est_prev_percpu_kib;
        bool est_prev_valid;
        double est_cost_bytes;            /* 0 until measured */
        MemcgCostMeasurement measured;    /* `pcptunectl plan --measure`, loaded at start and on reload */
        bool has_measured;

        KernelFeatures declared;          /* what a root tree declares (read once) */
};

int sampler_new(const char *root, Sampler **ret) {
        _cleanup_(sampler_freep) Sampler *sp = calloc(1, sizeof(Sampler));

        if (!sp)
                return -ENOMEM;
        sp->root = strdup(root);
        if (!sp->root)
                return -ENOMEM;
        /* What a root tree other than "/" (fixtures, snapshots, test trees) declares of its kernel. */
        kernel_features_declared(sp->root, &sp->declared);
        *ret = TAKE_PTR(sp);
        return 0;
}

Sampler *sampler_free(Sampler *sp) {
        if (!sp)
                return NULL;
        snapshot_free(sp->prev);
        free(sp->root);
        free(sp);
        return NULL;
}

/*
 * What to read again: zoneinfo and the v1 memcg directory walk cost more as
 * the host grows; when a read took more than ZONEINFO_COSTLY / MEMCG_COSTLY
 * of CPU, it is reused for up to that many multiples of samples (at most 5).
 * A cheap sample (exit storms, PSI events) reuses both.
 */
#define ZONEINFO_COSTLY (1 * USEC_PER_MSEC)
/* v1: the walk costs ~2.6 us per cgroup (11,000: 28 ms).  A rule on memcg.dying/live wants it
 * fresh (a stale count delays reclaim-dying by whole samples): reuse only above 100 ms then. */
#define MEMCG_COSTLY (20 * USEC_PER_MSEC)
#define MEMCG_COSTLY_WANTED (100 * USEC_PER_MSEC)

static unsigned sampler_reuse_flags(Sampler *sp, const PolicySet *set, bool cheap) {
        unsigned flags = 0;
        if (!sp->prev)
                return 0;
        if (cheap)
                return SNAPSHOT_REUSE_ZONEINFO | SNAPSHOT_REUSE_MEMCG;
        unsigned zk = (unsigned) MIN(sp->prev->zoneinfo_cost_usec / ZONEINFO_COSTLY, (usec_t) 5);
        bool wanted = policy_set_uses_metric(set, METRIC_MEMCG_DYING) ||
                      policy_set_uses_metric(set, METRIC_MEMCG_LIVE);
        unsigned mk = (unsigned) MIN(sp->prev->memcg_cost_usec / (wanted ? MEMCG_COSTLY_WANTED : MEMCG_COSTLY), (usec_t) 5);
        if (sp->zoneinfo_skips == UINT_MAX)
                sp->zoneinfo_skips = 0; /* a write just changed the pagesets: read them */
        else if (zk > 0 && sp->zoneinfo_skips < zk) {
                flags |= SNAPSHOT_REUSE_ZONEINFO;
                sp->zoneinfo_skips++;
        } else
                sp->zoneinfo_skips = 0;
        if (mk > 0 && sp->memcg_skips < mk) {
                flags |= SNAPSHOT_REUSE_MEMCG;
                sp->memcg_skips++;
        } else
                sp->memcg_skips = 0;
        return flags;
}

/* Percpu per memcg from live counts: a growth of at least 50 memcgs with Percpu growing too. */
static void sampler_estimate_memcg_cost(Sampler *sp, const Snapshot *s) {
        if (!s->meminfo.has_percpu || !s->has_memcg || s->memcg.mode == CGROUP_MEMORY_NONE)
                return;
        uint64_t total = s->memcg.live + s->memcg.dying;
        if (sp->est_prev_valid && total >= sp->est_prev_total + 50 && s->meminfo.percpu_kib >= sp->est_prev_percpu_kib) {
                double sample = (double) (s->meminfo.percpu_kib - sp->est_prev_percpu_kib) * 1024.0 /
                                (double) (total - sp->est_prev_total);
                sp->est_cost_bytes = sp->est_cost_bytes > 0 ? 0.5 * sp->est_cost_bytes + 0.5 * sample : sample;
        }
        if (!sp->est_prev_valid || total != sp->est_prev_total) {
                sp->est_prev_total = total;
                sp->est_prev_percpu_kib = s->meminfo.percpu_kib;
                sp->est_prev_valid = true;
        }
}

void sampler_memcg_cost(const Sampler *sp, const Snapshot *s, MemcgCost *ret) {
        snapshot_memcg_cost(s, sp->has_measured ? &sp->measured : NULL, sp->est_cost_bytes, ret);
}

int sampler_take(Sampler *sp, const PolicySet *set, bool cheap, Snapshot **ret, SnapshotError *err) {
        Snapshot *s = NULL;
        int r = snapshot_take_explain(sp->root, sp->prev, sampler_reuse_flags(sp, set, cheap), &s, err);

        if (r < 0)
                return r;
        sampler_estimate_memcg_cost(sp, s);
        *ret = s;
        return 0;
}

void sampler_keep(Sampler *sp, Snapshot *s) {
        snapshot_free(sp->prev);
        sp->prev = s;
}

void sampler_pagesets_changed(Sampler *sp) {
        sp->zoneinfo_skips = UINT_MAX;
}

void sampler_load_measured(Sampler *sp, const char *state_dir) {
        sp->has_measured = memcg_cost_measurement_load(state_dir, &sp->measured) >= 0;
}

const KernelFeatures *sampler_declared(const Sampler *sp) {
        return &sp->declared;
}
