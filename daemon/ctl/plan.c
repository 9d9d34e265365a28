/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>
#include <limits.h>

#include "log.h"
#include "metrics.h"
#include "plan.h"
#include "report.h"
#include "view.h"

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
        h.legacy = s->has_knob && !snapshot_pcp_writable(s);
        h.fraction = s->has_knob ? (int) snapshot_pcp_value(s) : 0;
        h.batch_scale_max = snapshot_batch_scale_max(s);
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
        h.batch_scale_max = pcp_batch_scale_max(false, 0);
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
        return host_pcp_burst_bytes(h->zones, h->n_zones, h->page_size, h->batch_scale_max);
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

/* The text's words for a regime (plan_to_json()'s host.regime, pcp_regime_to_string()). */
static const char *regime_explained(const char *regime) {
        if (streq(regime, pcp_regime_to_string(PCP_REGIME_LEGACY)))
                return "before 5.14: vm.percpu_pagelist_fraction gives each CPU managed/F pages";
        if (streq(regime, pcp_regime_to_string(PCP_REGIME_FIXED)))
                return "5.14-6.6: a fixed high per zone, the low watermark split over the node's CPUs";
        if (streq(regime, pcp_regime_to_string(PCP_REGIME_AUTOTUNE)))
                return "6.7+: high auto-tuned between high_min and high_max";
        return "unknown";
}

/* CONFIG_PCP_BATCH_SCALE_MAX as the kernel has it: the contrib sysctl's value as the snapshot read it (by its
 * knob table row), else the build default (a shape, a kernel without the sysctl). */
static int host_batch_scale_max(const PlanHost *h) {
        return h->batch_scale_max;
}

/* ---- The model: plan_to_json() builds it, one function per section. ---- */

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
                                       json_object_new_int(pcp_bulk_free_max_pages(&s, host_batch_scale_max(h),
                                                                                   kernel_batched_free_path(&h->kernel))));
                json_object_array_add(plans, p);
        }
        json_object_object_add(o, "plans", plans);
        return o;
}

static json_object *plan_json_host(const PlanHost *h) {
        json_object *host = json_object_new_object();

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
        if (h->has_fraction) {
                json_object_object_add(host, "knob",
                                       json_object_new_string(h->legacy ? SYSCTL_PCP_FRACTION : SYSCTL_PCP_HIGH_FRACTION));
                json_object_object_add(host, "fraction", json_object_new_int(h->fraction));
        }
        return host;
}

static json_object *plan_json_total(const PlanHost *h, int fraction) {
        json_object *e = json_object_new_object();
        uint64_t t = 0;

        (void) plan_host_total_max(h, fraction, &t);
        json_object_object_add(e, "fraction", json_object_new_int(fraction));
        json_object_object_add(e, "pcp_max_bytes", json_object_new_int64((int64_t) t));
        return e;
}

/* The fractions worth comparing: the default (0), the largest lists (8) and the minimum. */
static json_object *plan_json_candidate_totals(const PlanHost *h, int minimum) {
        json_object *a = json_object_new_array();

        json_object_array_add(a, plan_json_total(h, 0));
        json_object_array_add(a, plan_json_total(h, 8));
        if (minimum >= 0)
                json_object_array_add(a, plan_json_total(h, minimum));
        return a;
}

/* What each policy's pcp.high rule would choose on this host, solved as the daemon solves it. */
static json_object *plan_json_policies(const PlanHost *h, const PlanOptions *o) {
        json_object *pa = json_object_new_array();
        MetricValues mv;

        host_metrics(h, &mv);
        for (size_t i = 0; pa && i < o->policies->n_policies; i++) {
                const Policy *p = o->policies->policies[i];
                Truth hm = host_match_eval(&p->host, &mv);
                for (size_t j = 0; j < p->n_rules; j++) {
                        const Rule *rl = &p->rules[j];
                        PcpGoal goal = rl->knobs[KNOB_PCP_HIGH_FRACTION].goal;
                        char gbuf[64];
                        int frac = -1, q;
                        json_object *e;
                        if (!rl->knobs[KNOB_PCP_HIGH_FRACTION].set)
                                continue;
                        goal.ns_per_page = o->ns_per_page;
                        goal.batched = kernel_batched_free_path(&h->kernel);
                        goal.has_scale_max = true;
                        goal.scale_max = h->batch_scale_max;
                        q = pcp_solve_goal(h->regime, h->zones, h->n_zones, h->page_size, &goal, &frac);
                        e = json_object_new_object();
                        json_object_object_add(e, "policy", json_object_new_string(p->name));
                        json_object_object_add(e, "rule", json_object_new_string(rl->name));
                        json_object_object_add(e, "goal", json_object_new_string(
                                                                  pcp_goal_to_string(&rl->knobs[KNOB_PCP_HIGH_FRACTION].goal, gbuf, sizeof gbuf)));
                        json_object_object_add(e, "host_matches", json_object_new_boolean(hm == TRUTH_TRUE));
                        if (q >= 0 || q == -ERANGE) {
                                uint64_t t = 0;
                                (void) plan_host_total_max(h, frac, &t);
                                json_object_object_add(e, "fraction", json_object_new_int(frac));
                                json_object_object_add(e, "pcp_max_bytes", json_object_new_int64((int64_t) t));
                                json_object_object_add(e, "below_floor", json_object_new_boolean(q == -ERANGE));
                        } else
                                json_object_object_add(e, "error", json_object_new_string(errno_str(q)));
                        json_object_array_add(pa, e);
                }
        }
        return pa;
}

static json_object *plan_json_pagesets(const PagesetCheck *c) {
        json_object *pc = json_object_new_object(), *mm = json_object_new_array();

        json_object_object_add(pc, "fraction", json_object_new_int(c->fraction));
        json_object_object_add(pc, "compared", json_object_new_int64((int64_t) c->compared));
        json_object_object_add(pc, "exact", json_object_new_int64((int64_t) c->exact));
        json_object_object_add(pc, "batch_only", json_object_new_boolean(c->batch_only));
        json_object_object_add(pc, "dynamic_high", json_object_new_int64((int64_t) c->dynamic_high));
        for (size_t i = 0; mm && i < c->n_mismatches; i++) {
                const PagesetMismatch *m = &c->mismatches[i];
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
        return pc;
}

/* Percpu: the split of a snapshot (percpu_split_to_json()) and the per-memcg cost, the projection for --containers. */
static json_object *plan_json_percpu(const PlanHost *h, const PlanOptions *o) {
        const Snapshot *s = h->snap;
        json_object *pc = NULL;
        PercpuSplit sp;
        MemcgCost mc;

        plan_memcg_cost(h, o, &mc);
        if (s && snapshot_percpu_split(s, &mc, h->has_pstats ? &h->pstats : NULL, &sp) >= 0)
                pc = percpu_split_to_json(&sp);
        if (!pc)
                pc = json_object_new_object();
        if (!pc)
                return NULL;
        if (s && s->meminfo.has_percpu)
                json_object_object_add(pc, "percpu_bytes", json_object_new_int64((int64_t) s->meminfo.percpu_kib * 1024));
        json_object_object_add(pc, "memcg_cost_bytes", json_object_new_int64((int64_t) mc.bytes));
        json_object_object_add(pc, "memcg_cost_measured", json_object_new_boolean(mc.basis == PERCPU_BASIS_MEASURED));
        json_object_object_add(pc, "memcg_cost_basis", json_object_new_string(mc.how));
        json_object_object_add(pc, "memcg_cost_method", json_object_new_string(percpu_basis_to_string(mc.basis)));
        if (s)
                json_object_object_add(pc, "memcg_mode", json_object_new_string(cgroup_mode_to_string(
                                                                 s->has_memcg ? s->memcg.mode : CGROUP_MEMORY_NONE)));
        if (s && s->has_memcg && s->memcg.mode != CGROUP_MEMORY_NONE) {
                json_object_object_add(pc, "memcg_live", json_object_new_int64((int64_t) s->memcg.live));
                json_object_object_add(pc, "memcg_dying", json_object_new_int64((int64_t) s->memcg.dying));
        }
        if (h->has_pstats)
                json_object_object_add(pc, "percpu_stats", percpu_stats_view_to_json(&h->pstats));
        if (o && o->containers > 0) {
                uint64_t per = MAX(o->memcgs_per_container, (uint64_t) 1), n = o->containers * per;
                json_object_object_add(pc, "containers", json_object_new_int64((int64_t) o->containers));
                json_object_object_add(pc, "memcgs_per_container", json_object_new_int64((int64_t) per));
                json_object_object_add(pc, "memcgs", json_object_new_int64((int64_t) n));
                json_object_object_add(pc, "projected_bytes", json_object_new_int64((int64_t) (mc.bytes * (double) n)));
        }
        return pc;
}

static json_object *plan_json_advisories(const PlanHost *h) {
        json_object *aa = json_object_new_array();
        size_t na;
        const Advisory *a = advisories(&na);

        for (size_t i = 0; aa && i < na; i++) {
                bool present = advisory_present(&a[i], &h->kernel);
                json_object *e = json_object_new_object();
                json_object_object_add(e, "mechanism", json_object_new_string(a[i].name));
                json_object_object_add(e, "since", json_object_new_string(a[i].since));
                json_object_object_add(e, "present", json_object_new_boolean(present));
                json_object_object_add(e, "meaning", json_object_new_string(present ? a[i].if_present : a[i].if_absent));
                json_object_object_add(e, "confidence", json_object_new_string(a[i].confidence));
                json_object_array_add(aa, e);
        }
        return aa;
}

json_object *plan_to_json(const PlanHost *h, const PlanOptions *o) {
        int fr[PLAN_MAX_FRACTIONS];
        size_t nf = plan_fractions(h, o, fr, ELEMENTSOF(fr));
        json_object *root = json_object_new_object(), *fa = json_object_new_array(), *zones = json_object_new_array();
        json_object *totals = json_object_new_array();
        PagesetCheck c;

        if (!root || !fa || !zones || !totals) {
                json_object_put(root);
                json_object_put(fa);
                json_object_put(zones);
                json_object_put(totals);
                return NULL;
        }
        json_add_schema_version(root);
        json_object_object_add(root, "kernel", json_object_new_string(h->kernel_release));
        for (size_t k = 0; k < nf; k++) {
                json_object_array_add(fa, json_object_new_int(fr[k]));
                json_object_array_add(totals, plan_json_total(h, fr[k]));
        }
        json_object_object_add(root, "fractions", fa);
        for (size_t i = 0; i < h->n_zones; i++)
                json_object_array_add(zones, plan_json_zone(h, &h->zones[i], fr, nf));
        json_object_object_add(root, "zones", zones);
        json_object_object_add(root, "host", plan_json_host(h));
        json_object_object_add(root, "totals", totals);
        json_object_object_add(root, "burst_overshoot_bytes", json_object_new_int64((int64_t) host_burst_bytes(h)));
        if (h->regime != PCP_REGIME_LEGACY) {
                int minimum = pcp_minimum_fraction(h->regime, h->zones, h->n_zones, h->page_size);
                if (minimum >= 0)
                        json_object_object_add(root, "minimum_fraction", json_object_new_int(minimum));
                json_object_object_add(root, "candidate_totals", plan_json_candidate_totals(h, minimum));
                json_object_object_add(root, "bulk_free", plan_holds_to_json(h, o));
                if (o && o->policies)
                        json_object_object_add(root, "policies", plan_json_policies(h, o));
        }
        if (h->snap && h->snap->has_knob && pageset_check(h->snap, &c) >= 0) {
                json_object_object_add(root, "pagesets", plan_json_pagesets(&c));
                pageset_check_done(&c);
        }
        json_object_object_add(root, "percpu", plan_json_percpu(h, o));
        if (h->has_features)
                json_object_object_add(root, "contrib", kernel_features_to_json(&h->features, h->snap));
        json_object_object_add(root, "advisories", plan_json_advisories(h));
        json_object_object_add(root, "probes", kernel_probes_to_json(&h->probes));
        return root;
}

/* ---- The text, rendered from the model. ---- */

static void plan_print_host(FILE *f, json_object *j) {
        json_object *host = view_get(j, "host");
        int64_t nodes = view_i64(host, "nodes", 0);

        fprintf(f, "host %s: kernel %s (%s)\n", view_str(host, "label", ""), view_str(j, "kernel", ""),
                regime_explained(view_str(host, "regime", "")));
        fprintf(f, "  %" PRId64 " CPUs online, %" PRId64 " possible, %" PRId64 " node%s, %" PRId64 " KiB pages",
                view_i64(host, "online_cpus", 0), view_i64(host, "possible_cpus", 0), nodes, nodes == 1 ? "" : "s",
                view_i64(host, "page_size", 0) / 1024);
        if (view_has(host, "knob"))
                fprintf(f, "; %s = %" PRId64 "\n", view_str(host, "knob", ""), view_i64(host, "fraction", 0));
        else
                fprintf(f, "; no pcp sysctl\n");
        if (view_bool(host, "estimate")) {
                fprintf(f, "  estimate: min_free_kbytes %" PRId64 " (modelled); exact with --managed NODE:ZONE=PAGES\n",
                        view_i64(host, "min_free_kbytes", 0));
                print_wrapped(f, "  assumed: ", 11, view_str(host, "assumptions", ""));
        }
}

/* The largest bulk-free max over the zones at fraction index k. */
static int64_t plan_bulk_free_max(json_object *j, size_t k) {
        int64_t most = 0;
        for (size_t i = 0; i < view_len(j, "zones"); i++)
                most = MAX(most, view_i64(view_idx(view_idx(j, "zones", i), "plans", k), "bulk_free_max_pages", 0));
        return most;
}

static void plan_print_zones(FILE *f, json_object *j) {
        size_t nf = view_len(j, "fractions");
        char b1[32], line[512];
        size_t n;

        fprintf(f, "\npcp lists per zone (pages; cpus: the node's, which high is split over (0: all online CPUs);\n"
                   "  max = high_max x page size on every online CPU's pageset)\n");
        fprintf(f, "%-4s %-7s %11s %9s %5s %10s %6s %9s %9s %11s\n", "node", "zone", "managed", "low", "cpus",
                "fraction", "batch", "high_min", "high_max", "max");
        for (size_t i = 0; i < view_len(j, "zones"); i++) {
                json_object *z = view_idx(j, "zones", i);
                for (size_t k = 0; k < view_len(z, "plans"); k++) {
                        json_object *p = view_idx(z, "plans", k);
                        if (k == 0)
                                fprintf(f, "%-4" PRId64 " %-7s %11" PRId64 " %9" PRId64 " %5" PRId64, view_i64(z, "node", 0),
                                        view_str(z, "zone", ""), view_i64(z, "managed_pages", 0),
                                        view_i64(z, "low_pages", 0), view_i64(z, "cpus", 0));
                        else
                                fprintf(f, "%-4s %-7s %11s %9s %5s", "", "", "", "", "");
                        fprintf(f, " %10" PRId64 " %6" PRId64 " %9" PRId64 " %9" PRId64 " %11s\n", view_i64(p, "fraction", 0),
                                view_i64(p, "batch", 0), view_i64(p, "high_min", 0), view_i64(p, "high_max", 0),
                                view_bytes(p, "pcp_max_bytes", b1, sizeof b1, "0 B"));
                }
        }
        fprintf(f, "host total:");
        for (size_t k = 0; k < view_len(j, "totals"); k++) {
                json_object *t = view_idx(j, "totals", k);
                fprintf(f, "%s fraction %" PRId64 "%s %s", k ? ";" : "", view_i64(t, "fraction", 0),
                        k == 0 ? " (current)" : "", view_bytes(t, "pcp_max_bytes", b1, sizeof b1, "0 B"));
        }
        fprintf(f, "\n");
        snprintf(line, sizeof line,
                 "not counted above: while pages are freed in a burst (a process exit), a CPU's list may hold up to "
                 "batch << CONFIG_PCP_BATCH_SCALE_MAX (%d on Debian) pages more than high, per zone: up to %s "
                 "on this host, for a moment",
                 PCP_BATCH_SCALE_MAX_DEFAULT, view_bytes(j, "burst_overshoot_bytes", b1, sizeof b1, "0 B"));
        print_wrapped(f, "  ", 4, line);
        if (!view_has(j, "bulk_free"))
                return;
        n = (size_t) snprintf(line, sizeof line, "zone->lock per bulk free at exit (%s):",
                              view_bool(j, "bulk_free.batched") ? "batched: at most batch pages"
                                                                : "not batched: min(batch << scale_max, high - batch)");
        for (size_t k = 0; k < nf && n < sizeof line; k++)
                n += (size_t) snprintf(line + n, sizeof line - n, "%s fraction %" PRId64 ": up to %" PRId64 " pages",
                                       k ? ";" : "", json_object_get_int64(view_idx(j, "fractions", k)),
                                       plan_bulk_free_max(j, k));
        print_wrapped(f, "  ", 4, line);
}

/* Candidates: default, 8, minimum, and what each policy would choose. */
static void plan_print_candidates(FILE *f, json_object *j) {
        static const char *const what[] = { "default (0): the kernel's own sizing",
                                            "8: the largest lists a fraction allows (managed/8)" };
        char b1[32], lbl[160];

        fprintf(f, "\ncandidates\n");
        for (size_t i = 0; i < view_len(j, "candidate_totals"); i++) {
                json_object *c = view_idx(j, "candidate_totals", i);
                if (i < ELEMENTSOF(what))
                        snprintf(lbl, sizeof lbl, "%s", what[i]);
                else
                        snprintf(lbl, sizeof lbl, "minimum (%" PRId64 "): high = 4 x batch on every zone",
                                 view_i64(c, "fraction", 0));
                fprintf(f, "  %-58s max %s\n", lbl, view_bytes(c, "pcp_max_bytes", b1, sizeof b1, "0 B"));
        }
        for (size_t i = 0; i < view_len(j, "policies"); i++) {
                json_object *e = view_idx(j, "policies", i);
                snprintf(lbl, sizeof lbl, "policy %s/%s: %s -> %" PRId64 "%s%s", view_str(e, "policy", ""),
                         view_str(e, "rule", ""), view_str(e, "goal", ""), view_i64(e, "fraction", -1),
                         view_bool(e, "below_floor") ? " (floor)" : "", view_bool(e, "host_matches") ? "" : " (host: no match)");
                if (view_has(e, "error"))
                        fprintf(f, "  %-58s %s\n", lbl, view_str(e, "error", ""));
                else
                        fprintf(f, "  %-58s max %s\n", lbl, view_bytes(e, "pcp_max_bytes", b1, sizeof b1, "0 B"));
        }
}

/* Live pagesets against the model: a pageset the kernel did not recompute shows here. */
static void plan_print_pagesets(FILE *f, json_object *c) {
        size_t n = view_len(c, "mismatches");

        fprintf(f, "\npagesets vs model at fraction %" PRId64 ": %" PRId64 " of %" PRId64 " values exact%s\n",
                view_i64(c, "fraction", 0), view_i64(c, "exact", 0), view_i64(c, "compared", 0),
                view_bool(c, "batch_only") ? " (batch only: 6.7-6.12 print only the auto-tuned high)" : "");
        for (size_t i = 0; i < n && i < 10; i++) {
                json_object *m = view_idx(c, "mismatches", i);
                fprintf(f, "  MISMATCH node %" PRId64 " %s cpu %" PRId64 ": %s %" PRId64 ", model %" PRId64 "\n",
                        view_i64(m, "node", 0), view_str(m, "zone", ""), view_i64(m, "cpu", 0), view_str(m, "field", ""),
                        view_i64(m, "actual", 0), view_i64(m, "expected", 0));
        }
        if (n > 10)
                fprintf(f, "  ... %zu more\n", n - 10);
        if (n > 0)
                fprintf(f, "  a rule `repair: pagesets` (or `pcptunectl repair`) makes the kernel recompute them\n");
        if (view_i64(c, "dynamic_high", 0) > 0)
                fprintf(f, "  %" PRId64 " CPU(s) show an auto-tuned high outside [high_min, high_max]: "
                           "clamped at their next use of the zone\n",
                        view_i64(c, "dynamic_high", 0));
}

static void plan_print_percpu(FILE *f, json_object *j) {
        json_object *pc = view_get(j, "percpu");
        bool snap = !view_bool(j, "host.estimate");
        char b1[32], b3[32];

        fprintf(f, "\npercpu\n");
        fprintf(f, "  per memcg: %s (%s, %" PRId64 " possible CPUs)\n", view_bytes(pc, "memcg_cost_bytes", b1, sizeof b1, "0 B"),
                view_str(pc, "memcg_cost_method", ""), view_i64(j, "host.possible_cpus", 0));
        print_wrapped(f, "    basis: ", 11, view_str(pc, "memcg_cost_basis", ""));
        if (view_has(pc, "total_bytes")) {
                percpu_split_print(f, "  ", pc, false);
                fprintf(f, "  memcgs (%s): %" PRId64 " live, %" PRId64 " dying\n", view_str(pc, "memcg_mode", ""),
                        view_i64(pc, "memcg_live", 0), view_i64(pc, "memcg_dying", 0));
        } else if (view_has(pc, "percpu_bytes"))
                fprintf(f, "  Percpu now %s\n", view_bytes(pc, "percpu_bytes", b1, sizeof b1, ""));
        else if (snap)
                fprintf(f, "  Percpu: unavailable (kernel < 4.7)\n");
        if (view_has(pc, "percpu_stats"))
                percpu_stats_view_print(f, "  ", view_get(pc, "percpu_stats"));
        if (!view_has(pc, "containers"))
                return;
        int64_t per = view_i64(pc, "memcgs_per_container", 1), grown = 0;
        if (view_has(pc, "percpu_bytes"))
                grown = view_i64(pc, "percpu_bytes", 0) + view_i64(pc, "projected_bytes", 0);
        fprintf(f, "  %" PRId64 " containers x %" PRId64 " memcg%s = %" PRId64 " memcgs: %s%s%s\n",
                view_i64(pc, "containers", 0), per, per > 1 ? "s" : "", view_i64(pc, "memcgs", 0),
                view_bytes(pc, "projected_bytes", b1, sizeof b1, "0 B"),
                view_has(pc, "percpu_bytes") ? ", Percpu would reach about " : "",
                view_has(pc, "percpu_bytes") ? format_bytes(b3, sizeof b3, (uint64_t) grown) : "");
        fprintf(f, "  if they are removed while page cache pins them, each dying one keeps ~%.0f%%\n",
                PERCPU_DYING_RETAINED * 100);
}

static void plan_print_advisories(FILE *f, json_object *j, bool verbose) {
        fprintf(f, "\nkernel advisories (from the kernel version alone; vendor kernels may have backports)\n");
        for (size_t i = 0; i < view_len(j, "advisories"); i++) {
                json_object *a = view_idx(j, "advisories", i);
                char text[640];
                snprintf(text, sizeof text, "%s (%s%s): %s", view_str(a, "mechanism", ""), view_str(a, "since", ""),
                         streq(view_str(a, "confidence", ""), "unverified") ? ", as changelogs date it" : "",
                         view_str(a, "meaning", ""));
                print_wrapped(f, view_bool(a, "present") ? "  has   " : "  lacks ", 8, text);
        }
        if (view_len(j, "probes") > 0) {
                fprintf(f, "\n");
                kernel_probes_print_json(f, view_get(j, "probes"), verbose);
        }
}

void plan_print_model(FILE *f, json_object *j) {
        plan_print_view(f, j, false);
}

void plan_print_view(FILE *f, json_object *j, bool verbose) {
        plan_print_host(f, j);
        plan_print_zones(f, j);
        if (view_has(j, "candidate_totals")) {
                plan_print_candidates(f, j);
                plan_print_holds_model(f, view_get(j, "bulk_free"));
        }
        if (view_has(j, "pagesets"))
                plan_print_pagesets(f, view_get(j, "pagesets"));
        plan_print_percpu(f, j);
        plan_print_advisories(f, j, verbose);
}

int plan_print(FILE *f, const PlanHost *h, const PlanOptions *o) {
        int fr[PLAN_MAX_FRACTIONS];
        size_t nf = plan_fractions(h, o, fr, ELEMENTSOF(fr));
        json_object *j;
        int r;

        /* A fraction the model refuses on a zone prints nothing rather than a table with a gap. */
        for (size_t i = 0; i < h->n_zones; i++)
                for (size_t k = 0; k < nf; k++) {
                        PcpSetting s;
                        r = pcp_model_zone(h->regime, &h->zones[i].in, h->page_size, fr[k], &s);
                        if (r < 0)
                                return r;
                }
        j = plan_to_json(h, o);
        if (!j)
                return -ENOMEM;
        plan_print_view(f, j, o->verbose);
        json_object_put(j);
        return 0;
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
