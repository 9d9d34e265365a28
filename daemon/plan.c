/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>
#include <limits.h>

#include "log.h"
#include "metrics.h"
#include "plan.h"
#include "report.h"

/* CONFIG_PCP_BATCH_SCALE_MAX of Debian's 6.1 and 6.12 and of the mainline default (mm/Kconfig, 6.7+; backported to 6.1.y). */


void plan_host_done(PlanHost *h) {
        if (!h)
                return;
        free(h->label);
        free(h->kernel_release);
        free(h->zones);
        free(h->zone_names);
        *h = (PlanHost){ 0 };
}

static int plan_host_alloc_zones(PlanHost *h, size_t n) {
        h->zones = calloc(MAX(n, (size_t) 1), sizeof(PcpZone));
        h->zone_names = calloc(MAX(n, (size_t) 1), sizeof(*h->zone_names));
        return h->zones && h->zone_names ? 0 : -ENOMEM;
}

static unsigned count_nodes(const PlanHost *h, const unsigned *node_cpus, unsigned n_node_ids) {
        return MAX(host_count_nodes(node_cpus, n_node_ids, h->zones, h->n_zones), 1U);
}

int plan_host_from_snapshot(const Snapshot *s, const char *label, PlanHost *ret) {
        PlanHost h = { .snap = s };

        h.label = strdup(label);
        h.kernel_release = strdup(s->topo.kernel_release);
        if (!h.label || !h.kernel_release || plan_host_alloc_zones(&h, s->n_pcp_zones) < 0) {
                plan_host_done(&h);
                return -ENOMEM;
        }
        h.kernel = s->topo.kernel;
        h.regime = s->regime;
        h.page_size = s->topo.page_size;
        h.online_cpus = s->topo.online_cpus;
        h.possible_cpus = s->topo.possible_cpus ?: s->topo.online_cpus;
        for (size_t i = 0; i < s->n_pcp_zones; i++) {
                h.zones[i] = s->pcp_zones[i];
                snprintf(h.zone_names[i], ZONE_NAME_MAX, "%s", s->pcp_zones[i].name);
                h.zones[i].name = h.zone_names[i];
        }
        h.n_zones = s->n_pcp_zones;
        h.nodes = count_nodes(&h, s->topo.node_cpus, s->topo.n_nodes);
        h.has_fraction = s->has_knob;
        h.legacy = s->has_knob && !s->knob.writable;
        h.fraction = s->has_knob ? (int) s->knob.value : 0;
        kernel_probes_run(&(ProbeInput){ .snap = s, .kernel = s->topo.kernel }, &h.probes);
        *ret = h;
        return 0;
}

int plan_host_from_shape(const HostShape *shape, PlanHost *ret) {
        _cleanup_(freep) WmarkZone *wz = NULL;
        PlanHost h = { .estimate = true };
        unsigned node_cpus[SHAPE_MAX_NODES] = { 0 };
        size_t n = 0;
        int r;

        r = host_shape_zones(shape, &wz, &n, &h.min_free_kbytes);
        if (r < 0)
                return r;
        for (unsigned i = 0; i < shape->nodes; i++)
                node_cpus[i] = shape->cpus / shape->nodes + (i < shape->cpus % shape->nodes ? 1 : 0);

        h.label = strdup("shape");
        if (asprintf(&h.kernel_release, "%u.%u (shape)", shape->kernel.major, shape->kernel.minor) < 0)
                h.kernel_release = NULL;
        if (!h.label || !h.kernel_release || plan_host_alloc_zones(&h, n) < 0) {
                plan_host_done(&h);
                return -ENOMEM;
        }
        h.kernel = shape->kernel;
        h.regime = pcp_regime_from_version(&shape->kernel);
        h.page_size = shape->page_size;
        h.online_cpus = shape->cpus;
        h.possible_cpus = shape->possible_cpus ?: shape->cpus;
        for (size_t i = 0; i < n; i++) {
                snprintf(h.zone_names[i], ZONE_NAME_MAX, "%s", zone_type_to_string(wz[i].type));
                h.zones[i] = (PcpZone){
                        .node = wz[i].node,
                        .name = h.zone_names[i],
                        .in = { .managed_pages = wz[i].managed_pages, .low_pages = wz[i].low_pages,
                                .node_cpus = node_cpus[wz[i].node], .online_cpus = shape->cpus },
                };
        }
        h.n_zones = n;
        h.nodes = count_nodes(&h, node_cpus, shape->nodes);
        h.has_fraction = true;
        h.legacy = h.regime == PCP_REGIME_LEGACY;
        h.fraction = 0;
        kernel_probes_run(&(ProbeInput){ .kernel = shape->kernel }, &h.probes);
        *ret = h;
        return 0;
}

size_t plan_fractions(const PlanHost *h, const PlanOptions *o, int *ret, size_t max) {
        size_t n = 0;

        if (max == 0)
                return 0;
        ret[n++] = h->fraction;
        for (size_t i = 0; o && i < o->n_fractions && n < max; i++) {
                bool dup = false;
                for (size_t j = 0; j < n; j++)
                        dup |= ret[j] == o->fractions[i];
                if (!dup)
                        ret[n++] = o->fractions[i];
        }
        return n;
}

/* Most bytes one zone's pcp lists may hold: host_zone_pcp_max_bytes(), as status reports it. */
static uint64_t zone_max_bytes(const PlanHost *h, const PcpZone *z, const PcpSetting *s) {
        return host_zone_pcp_max_bytes(&z->in, s, h->page_size);
}

int plan_host_total_max(const PlanHost *h, int fraction, uint64_t *ret) {
        return host_pcp_max_bytes(h->regime, h->zones, h->n_zones, h->page_size, fraction, ret);
}

/* Transient overshoot above high during burst frees: host_pcp_burst_bytes(). */
static uint64_t host_burst_bytes(const PlanHost *h) {
        return host_pcp_burst_bytes(h->zones, h->n_zones, h->page_size);
}

static void host_metrics(const PlanHost *h, MetricValues *mv) {
        *mv = (MetricValues){ 0 };
        if (h->snap) {
                metrics_from_snapshot(h->snap, mv);
                return;
        }
        for (int i = 0; i < _METRIC_MAX; i++)
                mv->why_unavailable[i] = "not known for a hypothetical shape";
        metric_set(mv, METRIC_CPUS, h->online_cpus);
        metric_set(mv, METRIC_NODES, h->nodes);
        metric_set(mv, METRIC_KERNEL, kernel_version_to_double(&h->kernel));
        uint64_t mem = 0;
        for (size_t i = 0; i < h->n_zones; i++)
                mem += h->zones[i].in.managed_pages * h->page_size;
        metric_set(mv, METRIC_MEMORY, (double) mem);
}

/* The per-memcg percpu cost: percpu_memcg_cost(), with `plan --measure`'s result when it fits the host. */
static void plan_memcg_cost(const PlanHost *h, const PlanOptions *o, MemcgCost *ret) {
        percpu_memcg_cost(&h->kernel, h->snap ? h->kernel_release : NULL, h->nodes, h->possible_cpus,
                          o ? o->measured : NULL, 0, ret);
}

static const char *regime_explained(PcpRegime r) {
        switch (r) {
        case PCP_REGIME_LEGACY:
                return "before 5.14: vm.percpu_pagelist_fraction gives each CPU managed/F pages";
        case PCP_REGIME_FIXED:
                return "5.14-6.6: a fixed high per zone, the low watermark split over the node's CPUs";
        case PCP_REGIME_AUTOTUNE:
                return "6.7+: high auto-tuned between high_min and high_max";
        default:
                return "unknown";
        }
}

/* The largest bulk free under zone->lock at exit over the host's zones, for a fraction (model-pcp.h). */
static int host_bulk_free_max(const PlanHost *h, int fraction) {
        int scale = h->has_features && h->features.batch_scale_max ? (int) h->features.batch_scale_max_value
                                                                    : PCP_BATCH_SCALE_MAX_DEFAULT;
        int most = 0;
        for (size_t i = 0; i < h->n_zones; i++) {
                PcpSetting s;
                if (pcp_model_zone(h->regime, &h->zones[i].in, h->page_size, fraction, &s) >= 0)
                        most = MAX(most, pcp_bulk_free_max_pages(&s, scale, kernel_batched_free_path(&h->kernel)));
        }
        return most;
}

static void plan_print_bulk_free(FILE *f, const PlanHost *h, const int *fr, size_t nf) {
        char line[512];
        size_t n;

        if (h->regime == PCP_REGIME_LEGACY)
                return;
        n = (size_t) snprintf(line, sizeof line, "zone->lock per bulk free at exit (%s):",
                              kernel_batched_free_path(&h->kernel) ? "batched: at most batch pages"
                                                                   : "not batched: min(batch << scale_max, high - batch)");
        for (size_t k = 0; k < nf && n < sizeof line; k++)
                n += (size_t) snprintf(line + n, sizeof line - n, "%s fraction %d: up to %d pages", k ? ";" : "", fr[k],
                                       host_bulk_free_max(h, fr[k]));
        print_wrapped(f, "  ", 4, line);
}

int plan_print(FILE *f, const PlanHost *h, const PlanOptions *o) {
        int fr[PLAN_MAX_FRACTIONS];
        size_t nf = plan_fractions(h, o, fr, ELEMENTSOF(fr));
        char b1[32], b3[32];
        int minimum = -1;
        int r;

        fprintf(f, "host %s: kernel %s (%s)\n", h->label, h->kernel_release, regime_explained(h->regime));
        fprintf(f, "  %u CPUs online, %u possible, %u node%s, %u KiB pages", h->online_cpus, h->possible_cpus, h->nodes,
                h->nodes == 1 ? "" : "s", h->page_size / 1024);
        if (h->has_fraction)
                fprintf(f, "; %s = %d\n", h->legacy ? SYSCTL_PCP_FRACTION : SYSCTL_PCP_HIGH_FRACTION, h->fraction);
        else
                fprintf(f, "; no pcp sysctl\n");
        if (h->estimate) {
                fprintf(f, "  estimate: min_free_kbytes %" PRIu64 " (modelled); exact with --managed NODE:ZONE=PAGES\n",
                        h->min_free_kbytes);
                print_wrapped(f, "  assumed: ", 11, host_shape_assumptions());
        }

        fprintf(f, "\npcp lists per zone (pages; cpus: the node's, which high is split over (0: all online CPUs);\n"
                   "  max = high_max x page size on every online CPU's pageset)\n");
        fprintf(f, "%-4s %-7s %11s %9s %5s %10s %6s %9s %9s %11s\n", "node", "zone", "managed", "low", "cpus",
                "fraction", "batch", "high_min", "high_max", "max");
        for (size_t i = 0; i < h->n_zones; i++) {
                const PcpZone *z = &h->zones[i];
                for (size_t k = 0; k < nf; k++) {
                        PcpSetting s;
                        r = pcp_model_zone(h->regime, &z->in, h->page_size, fr[k], &s);
                        if (r < 0)
                                return r;
                        if (k == 0)
                                fprintf(f, "%-4d %-7s %11" PRIu64 " %9" PRIu64 " %5u", z->node, z->name,
                                        z->in.managed_pages, z->in.low_pages, z->in.node_cpus);
                        else
                                fprintf(f, "%-4s %-7s %11s %9s %5s", "", "", "", "", "");
                        fprintf(f, " %10d %6d %9d %9d %11s\n", fr[k], s.batch, s.high_min, s.high_max,
                                format_bytes(b1, sizeof b1, zone_max_bytes(h, z, &s)));
                }
        }
        fprintf(f, "host total:");
        for (size_t k = 0; k < nf; k++) {
                uint64_t t = 0;
                (void) plan_host_total_max(h, fr[k], &t);
                fprintf(f, "%s fraction %d%s %s", k ? ";" : "", fr[k], k == 0 ? " (current)" : "",
                        format_bytes(b1, sizeof b1, t));
        }
        fprintf(f, "\n");
        {
                char line[256];
                snprintf(line, sizeof line,
                         "not counted above: while pages are freed in a burst (a process exit), a CPU's list may hold up to "
                         "batch << CONFIG_PCP_BATCH_SCALE_MAX (%d on Debian) pages more than high, per zone: up to %s "
                         "on this host, for a moment",
                         PCP_BATCH_SCALE_MAX_DEFAULT, format_bytes(b1, sizeof b1, host_burst_bytes(h)));
                print_wrapped(f, "  ", 4, line);
        }
        plan_print_bulk_free(f, h, fr, nf);

        /* Candidates: default, 8, minimum, and what each policy would choose. */
        if (h->regime != PCP_REGIME_LEGACY) {
                uint64_t t;
                minimum = pcp_minimum_fraction(h->regime, h->zones, h->n_zones, h->page_size);
                fprintf(f, "\ncandidates\n");
                plan_host_total_max(h, 0, &t);
                fprintf(f, "  %-58s max %s\n", "default (0): the kernel's own sizing", format_bytes(b1, sizeof b1, t));
                plan_host_total_max(h, 8, &t);
                fprintf(f, "  %-58s max %s\n", "8: the largest lists a fraction allows (managed/8)",
                        format_bytes(b1, sizeof b1, t));
                if (minimum >= 0) {
                        char lbl[96];
                        plan_host_total_max(h, minimum, &t);
                        snprintf(lbl, sizeof lbl, "minimum (%d): high = 4 x batch on every zone", minimum);
                        fprintf(f, "  %-58s max %s\n", lbl, format_bytes(b1, sizeof b1, t));
                }
                if (o && o->policies) {
                        MetricValues mv;
                        host_metrics(h, &mv);
                        for (size_t i = 0; i < o->policies->n_policies; i++) {
                                const Policy *p = o->policies->policies[i];
                                Truth host = host_match_eval(&p->host, &mv);
                                for (size_t j = 0; j < p->n_rules; j++) {
                                        const Rule *rl = &p->rules[j];
                                        char lbl[160], gbuf[64];
                                        int frac = -1;
                                        if (!rl->has_pcp_high)
                                                continue;
                                        PcpGoal goal = rl->pcp_high;
                                        goal.ns_per_page = o->ns_per_page;
                                        goal.batched = kernel_batched_free_path(&h->kernel);
                                        int q = pcp_solve_goal(h->regime, h->zones, h->n_zones, h->page_size, &goal,
                                                               &frac);
                                        snprintf(lbl, sizeof lbl, "policy %s/%s: %s -> %d%s%s", p->name, rl->name,
                                                 pcp_goal_to_string(&rl->pcp_high, gbuf, sizeof gbuf), frac,
                                                 q == -ERANGE ? " (floor)" : "",
                                                 host == TRUTH_TRUE ? "" : " (host: no match)");
                                        if (q < 0 && q != -ERANGE)
                                                fprintf(f, "  %-58s %s\n", lbl, errno_str(q));
                                        else {
                                                plan_host_total_max(h, frac, &t);
                                                fprintf(f, "  %-58s max %s\n", lbl, format_bytes(b1, sizeof b1, t));
                                        }
                                }
                        }
                }
                plan_print_holds(f, h, o);
        }

        /* Live pagesets against the model: a pageset the kernel did not recompute shows here. */
        if (h->snap && h->snap->has_knob) {
                PagesetCheck c;
                if (pageset_check(h->snap, &c) >= 0) {
                        fprintf(f, "\npagesets vs model at fraction %d: %zu of %zu values exact%s\n", c.fraction, c.exact,
                                c.compared,
                                c.batch_only ? " (batch only: 6.7-6.12 print only the auto-tuned high)" : "");
                        for (size_t i = 0; i < c.n_mismatches && i < 10; i++) {
                                const PagesetMismatch *m = &c.mismatches[i];
                                fprintf(f, "  MISMATCH node %d %s cpu %d: %s %" PRId64 ", model %" PRId64 "\n", m->node,
                                        m->zone, m->cpu, pageset_field_to_string(m->field), m->actual, m->expected);
                        }
                        if (c.n_mismatches > 10)
                                fprintf(f, "  ... %zu more\n", c.n_mismatches - 10);
                        if (c.n_mismatches > 0)
                                fprintf(f, "  a rule `repair: pagesets` (or `pcptunectl repair`) makes the kernel "
                                           "recompute them\n");
                        if (c.dynamic_high > 0)
                                fprintf(f, "  %zu CPU(s) show an auto-tuned high outside [high_min, high_max]: "
                                           "clamped at their next use of the zone\n",
                                        c.dynamic_high);
                        pageset_check_done(&c);
                }
        }

        /* Percpu. */
        {
                MemcgCost mc;
                PercpuSplit sp;
                plan_memcg_cost(h, o, &mc);
                double cost = mc.bytes;
                fprintf(f, "\npercpu\n");
                fprintf(f, "  per memcg: %s (%s, %u possible CPUs)\n", format_bytes(b1, sizeof b1, (uint64_t) cost),
                        percpu_basis_to_string(mc.basis), h->possible_cpus);
                print_wrapped(f, "    basis: ", 11, mc.how);
                if (h->snap && snapshot_percpu_split(h->snap, &mc, h->has_pstats ? &h->pstats : NULL, &sp) >= 0) {
                        json_object *spj = percpu_split_to_json(&sp);
                        percpu_split_print(f, "  ", spj, false);
                        json_object_put(spj);
                        fprintf(f, "  memcgs (%s): %" PRIu64 " live, %" PRIu64 " dying\n",
                                cgroup_mode_to_string(h->snap->memcg.mode), h->snap->memcg.live, h->snap->memcg.dying);
                } else if (h->snap && h->snap->meminfo.has_percpu)
                        fprintf(f, "  Percpu now %s\n", format_bytes(b1, sizeof b1, h->snap->meminfo.percpu_kib * 1024));
                else if (h->snap)
                        fprintf(f, "  Percpu: unavailable (kernel < 4.7)\n");
                if (h->has_pstats) {
                        json_object *pj = percpu_stats_view_to_json(&h->pstats);
                        percpu_stats_view_print(f, "  ", pj);
                        json_object_put(pj);
                }
                if (o && o->containers > 0) {
                        uint64_t n = o->containers * MAX(o->memcgs_per_container, (uint64_t) 1);
                        fprintf(f, "  %" PRIu64 " containers x %" PRIu64 " memcg%s = %" PRIu64 " memcgs: %s%s%s\n",
                                o->containers, MAX(o->memcgs_per_container, (uint64_t) 1),
                                o->memcgs_per_container > 1 ? "s" : "", n,
                                format_bytes(b1, sizeof b1, (uint64_t) (cost * (double) n)),
                                h->snap && h->snap->meminfo.has_percpu ? ", Percpu would reach about " : "",
                                h->snap && h->snap->meminfo.has_percpu
                                        ? format_bytes(b3, sizeof b3,
                                                       h->snap->meminfo.percpu_kib * 1024 + (uint64_t) (cost * (double) n))
                                        : "");
                        fprintf(f, "  if they are removed while page cache pins them, each dying one keeps ~%.0f%%\n",
                                PERCPU_DYING_RETAINED * 100);
                }
        }

        /* Kernel advisories. */
        {
                size_t na;
                const Advisory *a = advisories(&na);
                fprintf(f, "\nkernel advisories (by version; vendor kernels may have backports)\n");
                for (size_t i = 0; i < na; i++) {
                        bool present = advisory_present(&a[i], &h->kernel);
                        char text[640];
                        snprintf(text, sizeof text, "%s (%s%s): %s", a[i].name, a[i].since,
                                 streq(a[i].confidence, "unverified") ? ", version unverified" : "",
                                 present ? a[i].if_present : a[i].if_absent);
                        print_wrapped(f, present ? "  yes " : "  no  ", 6, text);
                }
        }
        if (h->probes.n > 0) {
                fprintf(f, "\n");
                kernel_probes_print(f, &h->probes);
        }
        return 0;
}

static json_object *plan_json_zone(const PlanHost *h, const PcpZone *z, const int *fr, size_t nf) {
        json_object *o = json_object_new_object(), *plans = json_object_new_array();

        json_object_object_add(o, "node", json_object_new_int(z->node));
        json_object_object_add(o, "zone", json_object_new_string(z->name));
        json_object_object_add(o, "managed_pages", json_object_new_int64((int64_t) z->in.managed_pages));
        json_object_object_add(o, "low_pages", json_object_new_int64((int64_t) z->in.low_pages));
        json_object_object_add(o, "cpus", json_object_new_int((int) z->in.node_cpus));
        for (size_t k = 0; k < nf; k++) {
                PcpSetting s;
                json_object *p;
                if (pcp_model_zone(h->regime, &z->in, h->page_size, fr[k], &s) < 0)
                        continue;
                p = json_object_new_object();
                json_object_object_add(p, "fraction", json_object_new_int(fr[k]));
                json_object_object_add(p, "batch", json_object_new_int(s.batch));
                json_object_object_add(p, "high_min", json_object_new_int(s.high_min));
                json_object_object_add(p, "high_max", json_object_new_int(s.high_max));
                json_object_object_add(p, "pcp_max_bytes", json_object_new_int64((int64_t) zone_max_bytes(h, z, &s)));
                json_object_object_add(p, "bulk_free_max_pages",
                                       json_object_new_int(pcp_bulk_free_max_pages(
                                               &s,
                                               h->has_features && h->features.batch_scale_max
                                                       ? (int) h->features.batch_scale_max_value
                                                       : PCP_BATCH_SCALE_MAX_DEFAULT,
                                               kernel_batched_free_path(&h->kernel))));
                json_object_array_add(plans, p);
        }
        json_object_object_add(o, "plans", plans);
        return o;
}

json_object *plan_to_json(const PlanHost *h, const PlanOptions *o) {
        int fr[PLAN_MAX_FRACTIONS];
        size_t nf = plan_fractions(h, o, fr, ELEMENTSOF(fr));
        json_object *root = json_object_new_object(), *fa = json_object_new_array(), *zones = json_object_new_array();
        json_object *host = json_object_new_object(), *totals = json_object_new_array();

        if (!root || !fa || !zones || !host || !totals) {
                json_object_put(root);
                json_object_put(fa);
                json_object_put(zones);
                json_object_put(host);
                json_object_put(totals);
                return NULL;
        }
        json_add_schema_version(root);
        json_object_object_add(root, "kernel", json_object_new_string(h->kernel_release));
        for (size_t k = 0; k < nf; k++)
                json_object_array_add(fa, json_object_new_int(fr[k]));
        json_object_object_add(root, "fractions", fa);
        for (size_t i = 0; i < h->n_zones; i++)
                json_object_array_add(zones, plan_json_zone(h, &h->zones[i], fr, nf));
        json_object_object_add(root, "zones", zones);

        json_object_object_add(host, "label", json_object_new_string(h->label));
        json_object_object_add(host, "regime", json_object_new_string(pcp_regime_to_string(h->regime)));
        json_object_object_add(host, "online_cpus", json_object_new_int((int) h->online_cpus));
        json_object_object_add(host, "possible_cpus", json_object_new_int((int) h->possible_cpus));
        json_object_object_add(host, "nodes", json_object_new_int((int) h->nodes));
        json_object_object_add(host, "page_size", json_object_new_int((int) h->page_size));
        json_object_object_add(host, "estimate", json_object_new_boolean(h->estimate));
        if (h->estimate) {
                json_object_object_add(host, "assumptions", json_object_new_string(host_shape_assumptions()));
                json_object_object_add(host, "min_free_kbytes", json_object_new_int64((int64_t) h->min_free_kbytes));
        }
        if (h->has_fraction)
                json_object_object_add(host, "knob",
                                       json_object_new_string(h->legacy ? SYSCTL_PCP_FRACTION : SYSCTL_PCP_HIGH_FRACTION));
        json_object_object_add(root, "host", host);

        for (size_t k = 0; k < nf; k++) {
                uint64_t t = 0;
                json_object *e = json_object_new_object();
                (void) plan_host_total_max(h, fr[k], &t);
                json_object_object_add(e, "fraction", json_object_new_int(fr[k]));
                json_object_object_add(e, "pcp_max_bytes", json_object_new_int64((int64_t) t));
                json_object_array_add(totals, e);
        }
        json_object_object_add(root, "totals", totals);
        json_object_object_add(root, "burst_overshoot_bytes", json_object_new_int64((int64_t) host_burst_bytes(h)));

        if (h->regime != PCP_REGIME_LEGACY) {
                int minimum = pcp_minimum_fraction(h->regime, h->zones, h->n_zones, h->page_size);
                if (minimum >= 0)
                        json_object_object_add(root, "minimum_fraction", json_object_new_int(minimum));
                json_object_object_add(root, "bulk_free", plan_holds_to_json(h, o));
        }

        if (o && o->policies && h->regime != PCP_REGIME_LEGACY) {
                json_object *pa = json_object_new_array();
                MetricValues mv;
                host_metrics(h, &mv);
                for (size_t i = 0; i < o->policies->n_policies; i++) {
                        const Policy *p = o->policies->policies[i];
                        Truth hm = host_match_eval(&p->host, &mv);
                        for (size_t j = 0; j < p->n_rules; j++) {
                                const Rule *rl = &p->rules[j];
                                char gbuf[64];
                                int frac = -1, q;
                                uint64_t t = 0;
                                json_object *e;
                                if (!rl->has_pcp_high)
                                        continue;
                                q = pcp_solve_goal(h->regime, h->zones, h->n_zones, h->page_size, &rl->pcp_high, &frac);
                                e = json_object_new_object();
                                json_object_object_add(e, "policy", json_object_new_string(p->name));
                                json_object_object_add(e, "rule", json_object_new_string(rl->name));
                                json_object_object_add(e, "goal", json_object_new_string(
                                                                          pcp_goal_to_string(&rl->pcp_high, gbuf, sizeof gbuf)));
                                json_object_object_add(e, "host_matches", json_object_new_boolean(hm == TRUTH_TRUE));
                                if (q >= 0 || q == -ERANGE) {
                                        (void) plan_host_total_max(h, frac, &t);
                                        json_object_object_add(e, "fraction", json_object_new_int(frac));
                                        json_object_object_add(e, "pcp_max_bytes", json_object_new_int64((int64_t) t));
                                        json_object_object_add(e, "below_floor", json_object_new_boolean(q == -ERANGE));
                                } else
                                        json_object_object_add(e, "error", json_object_new_string(errno_str(q)));
                                json_object_array_add(pa, e);
                        }
                }
                json_object_object_add(root, "policies", pa);
        }

        if (h->snap && h->snap->has_knob) {
                PagesetCheck c;
                if (pageset_check(h->snap, &c) >= 0) {
                        json_object *pc = json_object_new_object(), *mm = json_object_new_array();
                        json_object_object_add(pc, "fraction", json_object_new_int(c.fraction));
                        json_object_object_add(pc, "compared", json_object_new_int64((int64_t) c.compared));
                        json_object_object_add(pc, "exact", json_object_new_int64((int64_t) c.exact));
                        json_object_object_add(pc, "batch_only", json_object_new_boolean(c.batch_only));
                        json_object_object_add(pc, "dynamic_high", json_object_new_int64((int64_t) c.dynamic_high));
                        for (size_t i = 0; i < c.n_mismatches; i++) {
                                const PagesetMismatch *m = &c.mismatches[i];
                                json_object *e = json_object_new_object();
                                json_object_object_add(e, "node", json_object_new_int(m->node));
                                json_object_object_add(e, "zone", json_object_new_string(m->zone));
                                json_object_object_add(e, "cpu", json_object_new_int(m->cpu));
                                json_object_object_add(e, "field", json_object_new_string(pageset_field_to_string(m->field)));
                                json_object_object_add(e, "actual", json_object_new_int64(m->actual));
                                json_object_object_add(e, "expected", json_object_new_int64(m->expected));
                                json_object_array_add(mm, e);
                        }
                        json_object_object_add(pc, "mismatches", mm);
                        json_object_object_add(root, "pagesets", pc);
                        pageset_check_done(&c);
                }
        }

        {
                MemcgCost mc;
                PercpuSplit sp;
                plan_memcg_cost(h, o, &mc);
                double cost = mc.bytes;
                json_object *pc = NULL;
                if (h->snap && snapshot_percpu_split(h->snap, &mc, h->has_pstats ? &h->pstats : NULL, &sp) >= 0)
                        pc = percpu_split_to_json(&sp);
                if (!pc)
                        pc = json_object_new_object();
                if (h->snap && h->snap->meminfo.has_percpu)
                        json_object_object_add(pc, "percpu_bytes",
                                               json_object_new_int64((int64_t) h->snap->meminfo.percpu_kib * 1024));
                json_object_object_add(pc, "memcg_cost_bytes", json_object_new_int64((int64_t) cost));
                json_object_object_add(pc, "memcg_cost_measured", json_object_new_boolean(mc.basis == PERCPU_BASIS_MEASURED));
                json_object_object_add(pc, "memcg_cost_basis", json_object_new_string(mc.how));
                if (h->snap && h->snap->has_memcg && h->snap->memcg.mode != CGROUP_MEMORY_NONE) {
                        json_object_object_add(pc, "memcg_live", json_object_new_int64((int64_t) h->snap->memcg.live));
                        json_object_object_add(pc, "memcg_dying", json_object_new_int64((int64_t) h->snap->memcg.dying));
                }
                if (h->has_pstats)
                        json_object_object_add(pc, "percpu_stats", percpu_stats_view_to_json(&h->pstats));
                if (o && o->containers > 0) {
                        uint64_t n = o->containers * MAX(o->memcgs_per_container, (uint64_t) 1);
                        json_object_object_add(pc, "containers", json_object_new_int64((int64_t) o->containers));
                        json_object_object_add(pc, "memcgs", json_object_new_int64((int64_t) n));
                        json_object_object_add(pc, "projected_bytes", json_object_new_int64((int64_t) (cost * (double) n)));
                }
                json_object_object_add(root, "percpu", pc);
        }

        {
                size_t na;
                const Advisory *a = advisories(&na);
                json_object *aa = json_object_new_array();
                for (size_t i = 0; i < na; i++) {
                        bool present = advisory_present(&a[i], &h->kernel);
                        json_object *e = json_object_new_object();
                        json_object_object_add(e, "mechanism", json_object_new_string(a[i].name));
                        json_object_object_add(e, "since", json_object_new_string(a[i].since));
                        json_object_object_add(e, "present", json_object_new_boolean(present));
                        json_object_object_add(e, "meaning", json_object_new_string(present ? a[i].if_present
                                                                                            : a[i].if_absent));
                        json_object_object_add(e, "confidence", json_object_new_string(a[i].confidence));
                        json_object_array_add(aa, e);
                }
                if (h->has_features) {
                        const KernelFeatures *k = &h->features;
                        json_object *c = json_object_new_object();
                        json_object_object_add(c, "fraction_floor",
                                               json_object_new_string(feature_state_to_string(k->fraction_floor)));
                        json_object_object_add(c, "pcp_batch_scale_max",
                                               k->batch_scale_max ? json_object_new_int64(k->batch_scale_max_value) : NULL);
                        json_object_object_add(c, "percpu_sysfs", json_object_new_boolean(k->percpu_sysfs));
                        json_object_object_add(c, "percpu_depopulate", json_object_new_boolean(k->percpu_depopulate));
                        json_object_object_add(root, "contrib", c);
                }
                json_object_object_add(root, "advisories", aa);
                json_object_object_add(root, "probes", kernel_probes_to_json(&h->probes));
        }
        return root;
}

void plan_print_csv(FILE *f, const PlanHost *h, const PlanOptions *o, bool header) {
        int fr[PLAN_MAX_FRACTIONS];
        size_t nf = plan_fractions(h, o, fr, ELEMENTSOF(fr));

        if (header)
                fprintf(f, "host,kernel,node,zone,managed_pages,low_pages,cpus,fraction,batch,high_min,high_max,"
                           "pcp_max_bytes\n");
        for (size_t i = 0; i < h->n_zones; i++) {
                const PcpZone *z = &h->zones[i];
                for (size_t k = 0; k < nf; k++) {
                        PcpSetting s;
                        if (pcp_model_zone(h->regime, &z->in, h->page_size, fr[k], &s) < 0)
                                continue;
                        fprintf(f, "%s,%s,%d,%s,%" PRIu64 ",%" PRIu64 ",%u,%d,%d,%d,%d,%" PRIu64 "\n", h->label,
                                h->kernel_release, z->node, z->name, z->in.managed_pages, z->in.low_pages,
                                z->in.node_cpus, fr[k], s.batch, s.high_min, s.high_max, zone_max_bytes(h, z, &s));
                }
        }
}
