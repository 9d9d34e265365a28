/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>
#include <math.h>

#include "log.h"
#include "report.h"
#include "view.h"

typedef struct Range {
        int64_t lo, hi;
} Range;

static void range_add(Range *r, int64_t v, bool first) {
        if (first || v < r->lo)
                r->lo = v;
        if (first || v > r->hi)
                r->hi = v;
}

static const char *range_fmt(char *buf, size_t size, Range r) {
        if (r.lo == r.hi)
                snprintf(buf, size, "%" PRId64, r.lo);
        else
                snprintf(buf, size, "%" PRId64 "-%" PRId64, r.lo, r.hi);
        return buf;
}

/* Per zone: what the kernel shows, with high_min/high_max from the model where not printed. */
typedef struct ZoneView {
        const Zone *zone;
        const PcpZone *pz;       /* model input */
        Range batch, high, high_min, high_max;
        uint64_t count;          /* pages on pcp lists now */
        bool modelled;           /* high_min/high_max computed, not printed */
} ZoneView;

static void zone_view(const ReportInput *in, const Zone *z, const PcpZone *pz, ZoneView *v) {
        const Snapshot *s = in->snap;

        *v = (ZoneView){ .zone = z, .pz = pz };
        for (size_t c = 0; c < z->n_cpus; c++) {
                const PcpCpu *p = &z->cpus[c];
                range_add(&v->batch, p->batch, c == 0);
                range_add(&v->high, p->high, c == 0);
                v->count += (uint64_t) MAX(p->count, (int64_t) 0);
                if (s->zoneinfo.has_high_min_max) {
                        range_add(&v->high_min, p->high_min, c == 0);
                        range_add(&v->high_max, p->high_max, c == 0);
                } else if (s->regime != PCP_REGIME_AUTOTUNE) {
                        range_add(&v->high_min, p->high, c == 0);
                        range_add(&v->high_max, p->high, c == 0);
                }
        }
        if (!s->zoneinfo.has_high_min_max && s->regime == PCP_REGIME_AUTOTUNE && s->has_knob) {
                PcpSetting set;
                if (pcp_model_zone(s->regime, &pz->in, s->topo.page_size, (int) s->knob.value, &set) >= 0) {
                        v->high_min = (Range){ set.high_min, set.high_min };
                        v->high_max = (Range){ set.high_max, set.high_max };
                        v->modelled = true;
                }
        }
}

static const PcpZone *find_pcp_zone(const Snapshot *s, const Zone *z) {
        for (size_t i = 0; i < s->n_pcp_zones; i++)
                if (s->pcp_zones[i].node == z->node && streq(s->pcp_zones[i].name, z->name))
                        return &s->pcp_zones[i];
        return NULL;
}

/* Most bytes pcp lists may hold at a fraction: host_pcp_max_bytes() (0 if the model refuses it). */
static uint64_t pcp_max_bytes(const Snapshot *s, int fraction) {
        uint64_t total;
        return host_pcp_max_bytes(s->regime, s->pcp_zones, s->n_pcp_zones, s->topo.page_size, fraction, &total) < 0
                       ? 0
                       : total;
}

/* Most bytes one zone's pcp lists may hold at a fraction: host_zone_pcp_max_bytes(); -1 if the model refuses it. */
static int64_t zone_pcp_max_bytes(const Snapshot *s, const PcpZone *z, int fraction) {
        PcpSetting set;
        if (pcp_model_zone(s->regime, &z->in, s->topo.page_size, fraction, &set) < 0)
                return -1;
        return (int64_t) MIN(host_zone_pcp_max_bytes(&z->in, &set, s->topo.page_size), (uint64_t) INT64_MAX);
}



void percpu_split_print(FILE *f, const char *indent, json_object *s, bool with_cost) {
        char t[32], l[32], d[32], o[32], fr[32], line[320], prefix[32];
        int n;

        fprintf(f, "%spercpu: %s = live memcgs %s + dying memcgs %s + other %s", indent,
                view_bytes(s, "total_bytes", t, sizeof t, "0 B"), view_bytes(s, "live_memcgs_bytes", l, sizeof l, "0 B"),
                view_bytes(s, "dying_memcgs_bytes", d, sizeof d, "0 B"), view_bytes(s, "other_bytes", o, sizeof o, "0 B"));
        if (view_has(s, "fragmentation_bytes"))
                fprintf(f, " (fragmentation %s)", view_bytes(s, "fragmentation_bytes", fr, sizeof fr, ""));
        fputc('\n', f);
        n = snprintf(line, sizeof line,
                     "total measured (meminfo); memcgs %s, %.0f B each, a dying one keeps %.0f%% of it%s; "
                     "other estimated (the rest)",
                     view_str(s, "basis.live_memcgs", ""), view_double(s, "basis.memcg_cost_bytes", 0),
                     view_double(s, "basis.dying_retained", 0) * 100,
                     view_bool(s, "basis.scaled") ? ", scaled down to fit the total" : "");
        if (view_has(s, "fragmentation_bytes") && n > 0 && (size_t) n < sizeof line)
                snprintf(line + n, sizeof line - (size_t) n, "; fragmentation measured (%s)",
                         view_str(s, "basis.fragmentation_source", ""));
        snprintf(prefix, sizeof prefix, "%s  basis: ", indent);
        print_wrapped(f, prefix, strlen(prefix), line);
        if (with_cost) {
                snprintf(prefix, sizeof prefix, "%s  memcg cost: ", indent);
                print_wrapped(f, prefix, strlen(prefix), view_str(s, "basis.memcg_cost", ""));
        }
}

json_object *percpu_split_to_json(const PercpuSplit *s) {
        json_object *o = json_object_new_object(), *b = json_object_new_object();
        const char *cb = percpu_basis_to_string(s->cost.basis);

        if (!o || !b) {
                json_object_put(o);
                json_object_put(b);
                return NULL;
        }
        json_object_object_add(o, "total_bytes", json_object_new_int64((int64_t) s->total_bytes));
        json_object_object_add(o, "live_memcgs_bytes", json_object_new_int64((int64_t) s->live_memcgs_bytes));
        json_object_object_add(o, "dying_memcgs_bytes", json_object_new_int64((int64_t) s->dying_memcgs_bytes));
        json_object_object_add(o, "other_bytes", json_object_new_int64((int64_t) s->other_bytes));
        json_object_object_add(o, "fragmentation_bytes",
                               s->has_fragmentation ? json_object_new_int64((int64_t) s->fragmentation_bytes) : NULL);
        json_object_object_add(b, "total", json_object_new_string("measured"));
        json_object_object_add(b, "live_memcgs", json_object_new_string(cb));
        json_object_object_add(b, "dying_memcgs", json_object_new_string(cb));
        json_object_object_add(b, "other", json_object_new_string("estimated"));
        json_object_object_add(b, "fragmentation", s->has_fragmentation ? json_object_new_string("measured") : NULL);
        if (s->has_fragmentation)
                json_object_object_add(b, "fragmentation_source", json_object_new_string(s->fragmentation_source));
        json_object_object_add(b, "scaled", json_object_new_boolean(s->scaled));
        json_object_object_add(b, "memcg_cost_bytes", json_object_new_double(s->cost.bytes));
        json_object_object_add(b, "dying_retained", json_object_new_double(PERCPU_DYING_RETAINED));
        json_object_object_add(b, "memcg_cost", json_object_new_string(s->cost.how));
        json_object_object_add(o, "basis", b);
        return o;
}

void percpu_stats_view_print(FILE *f, const char *indent, json_object *v) {
        const char *state = view_str(v, "state", "unavailable");
        char fb[32], prefix[32];

        if (streq(state, "skipped")) {
                fprintf(f, "%spercpu_stats: not read: more than %" PRId64 " memcgs make it hold IRQs off too long\n",
                        indent, view_i64(v, "memcg_limit", PERCPU_STATS_CHEAP_MEMCGS));
                return;
        }
        if (streq(state, "unavailable")) {
                const char *e = view_str(v, "error", "");
                if (streq(e, errno_str(-ENOENT)))
                        fprintf(f, "%spercpu_stats: unavailable: debugfs not mounted or no CONFIG_PERCPU_STATS\n", indent);
                else
                        fprintf(f, "%spercpu_stats: unavailable (%s)\n", indent, e);
                return;
        }
        if (streq(state, "inconsistent")) {
                snprintf(prefix, sizeof prefix, "%spercpu_stats: ", indent);
                fprintf(f, "%sinconsistent dump, not used:\n", prefix);
                snprintf(prefix, sizeof prefix, "%s  ", indent);
                print_wrapped(f, prefix, strlen(prefix), view_str(v, "inconsistency", ""));
                return;
        }
        fprintf(f, "%spercpu_stats: %" PRId64 " chunks (%" PRId64 " empty), %" PRId64 " empty populated pages, %s free "
                   "per unit\n",
                indent, view_i64(v, "chunks", 0), view_i64(v, "empty_chunks", 0), view_i64(v, "empty_pop_pages", 0),
                view_bytes(v, "free_bytes_per_unit", fb, sizeof fb, "0 B"));
        if (view_has(v, "read_usec"))
                fprintf(f, "%s  read in %" PRId64 " us, pcpu_lock held with IRQs off\n", indent,
                        view_i64(v, "read_usec", 0));
        else
                fprintf(f, "%s  as read when the snapshot was taken\n", indent);
}

json_object *percpu_stats_view_to_json(const PercpuStatsView *v) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_object_object_add(o, "state", json_object_new_string(v->skipped     ? "skipped"
                                                                  : v->error < 0 ? "unavailable"
                                                                  : !v->consistent ? "inconsistent"
                                                                                   : "read"));
        if (v->skipped)
                json_object_object_add(o, "memcg_limit", json_object_new_int(PERCPU_STATS_CHEAP_MEMCGS));
        else if (v->error < 0)
                json_object_object_add(o, "error", json_object_new_string(errno_str(v->error)));
        else {
                json_object_object_add(o, "consistent", json_object_new_boolean(v->consistent));
                if (!v->consistent)
                        json_object_object_add(o, "inconsistency", json_object_new_string(v->inconsistency));
                json_object_object_add(o, "chunks", json_object_new_int64(v->sum.chunks));
                json_object_object_add(o, "empty_chunks", json_object_new_int64(v->sum.empty_chunks));
                json_object_object_add(o, "empty_pop_pages", json_object_new_int64(v->sum.empty_pop_pages));
                json_object_object_add(o, "free_bytes_per_unit", json_object_new_int64(v->sum.free_bytes));
                json_object_object_add(o, "fragmentation_bytes_per_unit",
                                       v->frag_bytes >= 0 ? json_object_new_int64(v->frag_bytes) : NULL);
                json_object_object_add(o, "read_usec", v->live ? json_object_new_int64((int64_t) v->read_usec) : NULL);
        }
        return o;
}

bool report_split(const ReportInput *in, PercpuSplit *ret) {
        MemcgCost c;

        if (!in->memcg_cost)
                snapshot_memcg_cost(in->snap, NULL, 0, &c);
        return snapshot_percpu_split(in->snap, in->memcg_cost ?: &c, in->pstats, ret) >= 0;
}

/* The state of the pcp knob (the snapshot's), NULL when the caller has none. */
static const KnobState *pcp_state(const ReportInput *in) {
        return in->knobs ? &in->knobs[KNOB_PCP_HIGH_FRACTION] : NULL;
}

static const KnobDecision *pcp_decision(const Decision *d) {
        return &d->knobs[KNOB_PCP_HIGH_FRACTION];
}

const char *report_knob_state(const ReportInput *in) {
        if (!in->snap->has_knob)
                return "absent";
        if (!in->snap->knob.writable)
                return "read-only";
        if (pcp_state(in) && pcp_state(in)->admin_override)
                return "changed by an administrator";
        if (pcp_state(in) && pcp_state(in)->managed)
                return "managed";
        return "not managed";
}

static bool decision_changes(const ReportInput *in, int64_t *ret_target) {
        const Snapshot *s = in->snap;
        const Decision *p = in->decision;

        if (!p || !s->has_knob || !s->knob.writable)
                return false;
        if (pcp_decision(p)->wanted && (pcp_decision(p)->solve_error >= 0 || pcp_decision(p)->solve_error == -ERANGE)) {
                *ret_target = pcp_decision(p)->value;
                return *ret_target != s->knob.value;
        }
        if (!pcp_decision(p)->wanted && pcp_state(in) && pcp_state(in)->managed) {
                *ret_target = pcp_state(in)->original;
                return *ret_target != s->knob.value;
        }
        return false;
}

/* The decision as one sentence (the text after "decision: "; JSON's decision.reason), in buf. */
static const char *decision_reason(const ReportInput *in, char *buf, size_t size) {
        const Snapshot *s = in->snap;
        const Decision *p = in->decision;
        const KnobDecision *d = p ? pcp_decision(p) : NULL;
        char gbuf[64] = "";
        int64_t target;

        if (d && d->wanted)
                pcp_goal_to_string(&d->goal, gbuf, sizeof gbuf);
        if (!in->set && in->n_policy_errors > 0)
                snprintf(buf, size, "none: the policies have %zu error%s (above); pcptuned does not start with "
                                    "them, and a running one keeps its last good set",
                         in->n_policy_errors, in->n_policy_errors == 1 ? "" : "s");
        else if (!s->has_knob)
                snprintf(buf, size, "no pcp sysctl on this kernel: nothing to change");
        else if (!s->knob.writable)
                snprintf(buf, size, "%s = %" PRId64 " is read-only for pcptune on kernels before 5.14 "
                                    "(a small value gives every CPU managed/F pages)", s->knob.name, s->knob.value);
        else if (pcp_state(in) && pcp_state(in)->admin_override)
                snprintf(buf, size, "%s was changed by an administrator (%" PRId64 "): left alone until "
                                    "`pcptunectl resume %s`", s->knob.name, pcp_state(in)->admin_value, s->knob.name);
        else if ((!d || !d->wanted) && pcp_state(in) && pcp_state(in)->managed)
                snprintf(buf, size, "no active rule sets pcp.high: %s %s %" PRId64 " -> %" PRId64 " (original)",
                         in->dry_run ? "would restore" : "restore", s->knob.name, s->knob.value, pcp_state(in)->original);
        else if (!d || !d->wanted)
                snprintf(buf, size, "%s stays %" PRId64 ": no active rule sets pcp.high", s->knob.name, s->knob.value);
        else if (d->solve_error == -ENODATA && d->goal.kind == PCP_GOAL_BULK_FREE_P99)
                snprintf(buf, size, "rule %s/%s wants pcp.high %s: no bulk-free calibration on this host yet "
                                    "(pcptuned fits one from traced bulk frees): %s stays %" PRId64,
                         d->policy->name, d->rule->name, gbuf, s->knob.name, s->knob.value);
        else if (d->solve_error < 0 && d->solve_error != -ERANGE)
                snprintf(buf, size, "rule %s/%s wants pcp.high %s but it cannot be solved here: %s", d->policy->name,
                         d->rule->name, gbuf, errno_str(d->solve_error));
        else if (in->acted)
                snprintf(buf, size, "set %s %" PRId64 " -> %" PRId64 " (policy %s, rule %s: pcp.high %s%s)", s->knob.name,
                         in->acted_from, s->knob.value, d->policy->name, d->rule->name, gbuf,
                         d->solve_error == -ERANGE ? ", below the floor: minimum used" : "");
        else if (!decision_changes(in, &target))
                snprintf(buf, size, "%s stays %" PRId64 ": policy %s, rule %s wants pcp.high %s%s", s->knob.name,
                         s->knob.value, d->policy->name, d->rule->name, gbuf,
                         d->solve_error == -ERANGE ? " (below the 4 x batch floor: minimum used)" : "");
        else
                snprintf(buf, size, "%s %s %" PRId64 " -> %" PRId64 " (policy %s, rule %s: pcp.high %s%s)",
                         in->dry_run ? "would set" : "set", s->knob.name, s->knob.value, target, d->policy->name,
                         d->rule->name, gbuf, d->solve_error == -ERANGE ? ", below the floor: minimum used" : "");
        return buf;
}
static void rule_describe(const Rule *r, char *buf, size_t size) {
        char g[64];
        size_t l = 0;
        buf[0] = 0;
        for (KnobId id = 0; id < _KNOB_ID_MAX && l < size; id++) {
                const KnobDesc *d = knob_desc(id);
                if (!r->knobs[id].set)
                        continue;
                if (d->setting == KNOB_SETTING_PCP_GOAL)
                        pcp_goal_to_string(&r->knobs[id].goal, g, sizeof g);
                else
                        snprintf(g, sizeof g, "%" PRId64, r->knobs[id].value);
                l += (size_t) snprintf(buf + l, size - l, "%s%s %s", l ? ", " : "", d->policy_key, g);
        }
        if (l < size && r->action.kind == ACTION_RECLAIM_DYING)
                l += (size_t) snprintf(buf + l, size - l, "%saction reclaim-dying", l ? ", " : "");
        if (l < size && r->action.kind == ACTION_PERCPU_DEPOPULATE)
                l += (size_t) snprintf(buf + l, size - l, "%saction percpu-depopulate", l ? ", " : "");
        if (l < size && r->repair_pagesets)
                snprintf(buf + l, size - l, "%srepair pagesets", l ? ", " : "");
}


static json_object *bulk_free_to_json(const BulkFreeView *v) {
        json_object *b = json_object_new_object();
        if (!b)
                return NULL;
        if (!v || !v->available) {
                json_object_object_add(b, "unavailable", json_object_new_string(v ? strna(v->why)
                                                                                  : "measured by the running pcptuned only"));
                return b;
        }
        json_object_object_add(b, "p99_seconds", json_object_new_double(v->sum.p99_seconds));
        json_object_object_add(b, "max_seconds", json_object_new_double(v->sum.max_seconds));
        json_object_object_add(b, "pages_p99", json_object_new_int64((int64_t) v->sum.pages_p99));
        json_object_object_add(b, "pages_max", json_object_new_int64((int64_t) v->sum.pages_max));
        json_object_object_add(b, "samples", json_object_new_int64((int64_t) v->sum.samples));
        json_object_object_add(b, "window_seconds", json_object_new_double((double) v->window_usec / 1e6));
        json_object_object_add(b, "traced_seconds", json_object_new_double((double) v->c.traced_usec / 1e6));
        json_object_object_add(b, "windows", json_object_new_int64((int64_t) v->c.windows));
        json_object_object_add(b, "lost_events", json_object_new_int64((int64_t) v->c.lost));
        json_object_object_add(b, "discarded", json_object_new_int64((int64_t) v->c.discarded));
        json_object_object_add(b, "drain_events", json_object_new_int64((int64_t) v->c.events));
        json_object_object_add(b, "bytes_read", json_object_new_int64((int64_t) v->c.bytes));
        json_object_object_add(b, "read_cpu_usec", json_object_new_int64((int64_t) v->c.cost_usec));
        json_object_object_add(b, "buffer_kb_per_cpu", json_object_new_int64((int64_t) v->c.buffer_kb));
        json_object_object_add(b, "free_events_one_in", json_object_new_int64((int64_t) 1 << v->c.free_shift));
        json_object_object_add(b, "method", json_object_new_string(BULK_FREE_METHOD));
        return b;
}

int report_bulk_free_from_json(json_object *o, BulkFreeView *ret, char *why_buf, size_t why_size) {
        BulkFreeView v = { 0 };
        json_object *u;
        double p99, mx, pp, pm, n, w, t, win, lost, disc, cost, kb;

        if (!o || !json_object_is_type(o, json_type_object))
                return -EINVAL;
        if (json_object_object_get_ex(o, "unavailable", &u)) {
                if (!json_object_is_type(u, json_type_string))
                        return -EINVAL;
                snprintf(why_buf, why_size, "%s", json_object_get_string(u));
                *ret = (BulkFreeView){ .why = why_buf };
                return 0;
        }
        /* A hold above 10 s or a window above a day is not something pcptuned writes. */
        if (json_get_number(o, "p99_seconds", 0, 10, &p99) < 0 || json_get_number(o, "max_seconds", p99, 10, &mx) < 0 ||
            json_get_number(o, "pages_p99", 0, 1e9, &pp) < 0 || json_get_number(o, "pages_max", pp, 1e9, &pm) < 0 ||
            json_get_number(o, "samples", 0, 1e12, &n) < 0 || json_get_number(o, "window_seconds", 0, 86400, &w) < 0 ||
            json_get_number(o, "traced_seconds", 0, 1e12, &t) < 0 || json_get_number(o, "windows", 0, 1e12, &win) < 0 ||
            json_get_number(o, "lost_events", 0, 1e18, &lost) < 0 || json_get_number(o, "discarded", 0, 1e18, &disc) < 0 ||
            json_get_number(o, "read_cpu_usec", 0, 1e18, &cost) < 0 ||
            json_get_number(o, "buffer_kb_per_cpu", 0, 1e9, &kb) < 0)
                return -EINVAL;
        v.available = true;
        v.sum = (BulkFreeSummary){ .samples = (uint64_t) n, .p99_seconds = p99, .max_seconds = mx,
                                   .pages_p99 = (uint64_t) pp, .pages_max = (uint64_t) pm };
        v.window_usec = (usec_t) (w * 1e6);
        v.c = (BulkFreeCounters){ .traced_usec = (usec_t) (t * 1e6), .windows = (uint64_t) win, .lost = (uint64_t) lost,
                                  .discarded = (uint64_t) disc, .cost_usec = (usec_t) cost, .buffer_kb = (unsigned) kb };
        *ret = v;
        return 0;
}

static json_object *json_range(Range r) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "min", json_object_new_int64(r.lo));
        json_object_object_add(o, "max", json_object_new_int64(r.hi));
        return o;
}

static json_object *json_bytes_or_null(bool has, uint64_t kib) {
        return has ? json_object_new_int64((int64_t) kib * 1024) : NULL;
}

static json_object *report_json_memory(const Meminfo *mi) {
        json_object *mem = json_object_new_object();
        json_object_object_add(mem, "total_bytes", json_object_new_int64((int64_t) mi->mem_total_kib * 1024));
        json_object_object_add(mem, "free_bytes", json_object_new_int64((int64_t) mi->mem_free_kib * 1024));
        if (mi->has_mem_available)
                json_object_object_add(mem, "available_bytes", json_bytes_or_null(true, mi->mem_available_kib));
        json_object_object_add(mem, "slab_bytes", json_bytes_or_null(mi->has_slab, mi->slab_kib));
        json_object_object_add(mem, "percpu_bytes", json_bytes_or_null(mi->has_percpu, mi->percpu_kib));
        return mem;
}

static json_object *report_json_memcg(const Snapshot *s) {
        json_object *memcg = json_object_new_object();
        MemcgIdUsage ids;

        json_object_object_add(memcg, "mode", json_object_new_string(cgroup_mode_to_string(
                                                      s->has_memcg ? s->memcg.mode : CGROUP_MEMORY_NONE)));
        if (s->has_memcg && s->memcg.mode != CGROUP_MEMORY_NONE) {
                json_object_object_add(memcg, "mount", json_object_new_string(strna(s->memcg.mount)));
                json_object_object_add(memcg, "live", json_object_new_int64((int64_t) s->memcg.live));
                json_object_object_add(memcg, "dying", json_object_new_int64((int64_t) s->memcg.dying));
        }
        if (snapshot_memcg_ids(s, &ids) >= 0) {
                json_object *id = json_object_new_object();
                json_object_object_add(id, "used", json_object_new_int64((int64_t) ids.used));
                json_object_object_add(id, "used_max", json_object_new_int64((int64_t) ids.used_max));
                json_object_object_add(id, "limit", json_object_new_int64((int64_t) ids.limit));
                json_object_object_add(id, "exact", json_object_new_boolean(ids.exact));
                json_object_object_add(id, "warn", json_object_new_boolean(ids.warn));
                json_object_object_add(memcg, "ids", id);
        }
        return memcg;
}

static json_object *report_json_psi(const Psi *p) {
        json_object *psi = json_object_new_object();
        json_object_object_add(psi, "some_avg10", json_object_new_double(p->some.avg10));
        json_object_object_add(psi, "some_avg60", json_object_new_double(p->some.avg60));
        json_object_object_add(psi, "full_avg10", json_object_new_double(p->full.avg10));
        json_object_object_add(psi, "full_avg60", json_object_new_double(p->full.avg60));
        return psi;
}

/* One knob as status shows it: what it holds and who owns it. */
typedef struct KnobView {
        const char *name;
        int64_t value;
        bool present;
        bool writable;
        const char *state;        /* report_knob_state()'s words */
        const KnobState *st;      /* the daemon's state of it, may be NULL */
        bool once;                /* pcptuned --once: what it wrote has no restore journal */
} KnobView;

/* {"name", "value" (null: absent), "writable", "managed", "original", "written", "admin_override", "state",
 * "last_change", "last_change_time", "last_change_usec"}. */
static json_object *report_json_knob_view(const KnobView *v) {
        json_object *k = json_object_new_object();

        json_object_object_add(k, "name", json_object_new_string(v->name));
        json_object_object_add(k, "value", v->present ? json_object_new_int64(v->value) : NULL);
        json_object_object_add(k, "writable", json_object_new_boolean(v->writable));
        if (v->st) {
                json_object_object_add(k, "managed", json_object_new_boolean(v->st->managed));
                if (v->st->managed) {
                        json_object_object_add(k, "original", json_object_new_int64(v->st->original));
                        json_object_object_add(k, "written", json_object_new_int64(v->st->written));
                        json_object_object_add(k, "restore_journal", json_object_new_boolean(!v->once));
                }
                json_object_object_add(k, "admin_override", json_object_new_boolean(v->st->admin_override));
        }
        json_object_object_add(k, "state", json_object_new_string(v->state));
        if (v->st && v->st->last_change_usec) {
                char lts[32];
                json_object_object_add(k, "last_change", json_object_new_string(v->st->last_change));
                json_object_object_add(k, "last_change_time", json_object_new_string(format_timestamp_utc(
                                                                      lts, sizeof lts, v->st->last_change_usec)));
                json_object_object_add(k, "last_change_usec", json_object_new_int64((int64_t) v->st->last_change_usec));
        } else {
                json_object_object_add(k, "last_change", NULL);
                json_object_object_add(k, "last_change_time", NULL);
                json_object_object_add(k, "last_change_usec", NULL);
        }
        return k;
}

/* The snapshot's pcp knob (what the kernel has of it), with the daemon's state of it. */
static json_object *report_json_knob(const ReportInput *in) {
        const Snapshot *s = in->snap;
        return report_json_knob_view(&(KnobView){ .name = s->knob.name, .value = s->knob.value, .present = true,
                                                  .writable = s->knob.writable, .state = report_knob_state(in),
                                                  .st = pcp_state(in), .once = in->once });
}

/*
 * Every knob pcptuned manages: the pcp knob first (when the kernel has it), then each other managed row of
 * the knob table that the kernel has, or that the daemon manages or changed.
 */
static json_object *report_json_knobs(const ReportInput *in) {
        json_object *a = json_object_new_array();

        if (in->snap->has_knob)
                json_object_array_add(a, report_json_knob(in));
        for (KnobId id = 0; in->knobs && id < _KNOB_ID_MAX; id++) {
                const KnobState *st = &in->knobs[id];
                if (id == KNOB_PCP_HIGH_FRACTION || !knob_managed(st->desc) ||
                    !(st->present || st->managed || st->last_change_usec))
                        continue;
                json_object_array_add(a, report_json_knob_view(&(KnobView){
                                                 .name = st->desc->name, .value = st->value, .present = st->present,
                                                 .writable = true, .st = st, .once = in->once,
                                                 .state = !st->present         ? "absent"
                                                          : st->admin_override ? "changed by an administrator"
                                                          : st->managed        ? "managed"
                                                                               : "not managed" }));
        }
        return a;
}

static json_object *report_json_contrib(const ReportInput *in) {
        const Snapshot *s = in->snap;
        json_object *c = kernel_features_to_json(in->features, s);

        if (c && s->has_percpu_sysfs) {
                const PercpuSysfs *p = &s->percpu_sysfs;
                json_object_object_add(c, "percpu_chunks", json_object_new_int64((int64_t) p->nr_chunks));
                json_object_object_add(c, "percpu_empty_pop_pages", json_object_new_int64((int64_t) p->nr_empty_pop_pages));
                json_object_object_add(c, "percpu_populated_pages", json_object_new_int64((int64_t) p->nr_populated_pages));
                json_object_object_add(c, "percpu_empty_pop_bytes",
                                       json_object_new_int64((int64_t) (p->nr_empty_pop_pages * p->nr_units *
                                                                        s->topo.page_size)));
                json_object_object_add(c, "percpu_empty_pop_pages_high",
                                       json_object_new_int64((int64_t) p->empty_pop_pages_high));
        }
        return c;
}

/* One populated zone: what the kernel shows, the modelled limits where it prints none, the most it may hold. */
static json_object *report_json_zone(const ReportInput *in, const Zone *z, const PcpZone *pz) {
        const Snapshot *s = in->snap;
        json_object *zo = json_object_new_object();
        ZoneView v;

        zone_view(in, z, pz, &v);
        json_object_object_add(zo, "node", json_object_new_int(z->node));
        json_object_object_add(zo, "zone", json_object_new_string(z->name));
        json_object_object_add(zo, "managed_pages", json_object_new_int64((int64_t) z->managed_pages));
        json_object_object_add(zo, "low_pages", json_object_new_int64((int64_t) z->low_pages));
        json_object_object_add(zo, "cpus", json_object_new_int((int) pz->in.node_cpus));
        json_object_object_add(zo, "batch", json_range(v.batch));
        json_object_object_add(zo, "high_min", json_range(v.high_min));
        json_object_object_add(zo, "high_max", json_range(v.high_max));
        json_object_object_add(zo, "high_limits_modelled", json_object_new_boolean(v.modelled));
        json_object_object_add(zo, "high", json_range(v.high));
        /* A CPU's current high above high_max (where high_max is known): clamped at its next use of the zone. */
        json_object_object_add(zo, "high_above_high_max",
                               json_object_new_boolean(v.high.hi > v.high_max.hi &&
                                                       (s->zoneinfo.has_high_min_max || v.modelled)));
        json_object_object_add(zo, "count_pages", json_object_new_int64((int64_t) v.count));
        json_object_object_add(zo, "held_bytes", json_object_new_int64((int64_t) (v.count * s->topo.page_size)));
        json_object_object_add(zo, "pagesets", json_object_new_int((int) host_zone_pageset_cpus(&pz->in)));
        if (s->has_knob && zone_pcp_max_bytes(s, pz, (int) s->knob.value) >= 0)
                json_object_object_add(zo, "pcp_max_bytes",
                                       json_object_new_int64(zone_pcp_max_bytes(s, pz, (int) s->knob.value)));
        return zo;
}

static json_object *report_json_zones(const ReportInput *in) {
        const Snapshot *s = in->snap;
        json_object *zones = json_object_new_array();

        for (size_t i = 0; zones && i < s->zoneinfo.n_zones; i++) {
                const Zone *z = &s->zoneinfo.zones[i];
                const PcpZone *pz = find_pcp_zone(s, z);
                if (z->populated && pz)
                        json_object_array_add(zones, report_json_zone(in, z, pz));
        }
        return zones;
}

/* The policy set as loaded: {"source", "loaded": [{"name", "priority", "file", "host_mismatch", "rules"}]}. */
static json_object *report_json_policies(const ReportInput *in) {
        json_object *o = json_object_new_object(), *a = json_object_new_array();

        json_object_object_add(o, "source", json_object_new_string(strna(in->set->source)));
        for (size_t i = 0; a && i < in->set->n_policies; i++) {
                const Policy *p = in->set->policies[i];
                json_object *e = json_object_new_object();
                char why[128];
                json_object_object_add(e, "name", json_object_new_string(p->name));
                json_object_object_add(e, "priority", json_object_new_int(p->priority));
                json_object_object_add(e, "file", json_object_new_string(p->file));
                json_object_object_add(e, "host_mismatch", host_match_explain(&p->host, in->mv, why, sizeof why)
                                                                   ? json_object_new_string(why)
                                                                   : NULL);
                json_object_object_add(e, "rules", json_object_new_int64((int64_t) p->n_rules));
                json_object_array_add(a, e);
        }
        json_object_object_add(o, "loaded", a);
        return o;
}

static json_object *report_json_term(const RuleTerm *rt) {
        const MetricInfo *mi = metric_info(rt->metric);
        json_object *to = json_object_new_object();

        json_object_object_add(to, "metric", json_object_new_string(mi->name));
        json_object_object_add(to, "unit", json_object_new_string(metric_unit_to_string(mi->unit)));
        json_object_object_add(to, "value", rt->available ? json_object_new_double(rt->value) : NULL);
        json_object_object_add(to, "op", json_object_new_string(cmp_op_to_string(rt->op)));
        json_object_object_add(to, "threshold", json_object_new_double(rt->threshold));
        json_object_object_add(to, "holds", json_object_new_boolean(rt->holds));
        json_object_object_add(to, "for_seconds", rt->for_usec ? json_object_new_double((double) rt->for_usec / 1e6) : NULL);
        json_object_object_add(to, "held_seconds",
                               rt->for_usec ? json_object_new_double((double) rt->held_usec / 1e6) : NULL);
        return to;
}

static json_object *report_json_rule(const ReportInput *in, const RuleStatus *st) {
        json_object *r = json_object_new_object(), *terms = json_object_new_array();
        char what[160], explain[512];

        json_object_object_add(r, "policy", json_object_new_string(st->policy->name));
        json_object_object_add(r, "rule", json_object_new_string(st->rule->name));
        json_object_object_add(r, "file", json_object_new_string(st->policy->file));
        json_object_object_add(r, "priority", json_object_new_int(st->policy->priority));
        json_object_object_add(r, "state", json_object_new_string(rule_verdict_to_string(st->verdict)));
        rule_describe(st->rule, what, sizeof what);
        json_object_object_add(r, "goal", json_object_new_string(what));
        json_object_object_add(r, "why", json_object_new_string(rule_status_explain(st, in->mv, explain, sizeof explain)));
        json_object_object_add(r, "condition", st->condition ? json_object_new_string(st->condition) : NULL);
        for (size_t ti = 0; terms && ti < st->n_terms; ti++)
                json_object_array_add(terms, report_json_term(&st->terms[ti]));
        json_object_object_add(r, "terms", terms);
        json_object_object_add(r, "cooldown_left_seconds", json_object_new_double((double) st->cooldown_left_usec / 1e6));
        json_object_object_add(r, "host_mismatch",
                               st->verdict == RULE_HOST_MISMATCH ? json_object_new_string(st->host_why) : NULL);
        return r;
}

/* The p99 bulk-free hold the decision predicts against its target (bulk_free_p99 goals with a calibration). */
static json_object *report_json_prediction(const KnobDecision *d) {
        json_object *pr = json_object_new_object();
        json_object_object_add(pr, "target_seconds", json_object_new_double((double) d->goal.value / 1e9));
        json_object_object_add(pr, "ns_per_page", json_object_new_double(d->ns_per_page));
        json_object_object_add(pr, "pages", json_object_new_int64((int64_t) d->pages));
        json_object_object_add(pr, "p99_seconds", json_object_new_double(d->predicted_ns / 1e9));
        json_object_object_add(pr, "default_pages", json_object_new_int64((int64_t) d->default_pages));
        json_object_object_add(pr, "default_p99_seconds",
                               json_object_new_double(d->ns_per_page * (double) d->default_pages / 1e9));
        return pr;
}

/* Per zone, what a change from the current fraction to target does: the setting then, the most held now and then. */
static json_object *report_json_change_zones(const Snapshot *s, int64_t target) {
        json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < s->n_pcp_zones; i++) {
                const PcpZone *z = &s->pcp_zones[i];
                PcpSetting now, then;
                json_object *e;
                if (pcp_model_zone(s->regime, &z->in, s->topo.page_size, (int) s->knob.value, &now) < 0 ||
                    pcp_model_zone(s->regime, &z->in, s->topo.page_size, (int) target, &then) < 0)
                        continue;
                e = json_object_new_object();
                json_object_object_add(e, "node", json_object_new_int(z->node));
                json_object_object_add(e, "zone", json_object_new_string(z->name));
                json_object_object_add(e, "batch", json_object_new_int(then.batch));
                json_object_object_add(e, "high_min", json_object_new_int(then.high_min));
                json_object_object_add(e, "high_max", json_object_new_int(then.high_max));
                json_object_object_add(e, "pcp_max_bytes_from", json_object_new_int64((int64_t) MIN(
                                               host_zone_pcp_max_bytes(&z->in, &now, s->topo.page_size), (uint64_t) INT64_MAX)));
                json_object_object_add(e, "pcp_max_bytes_to", json_object_new_int64((int64_t) MIN(
                                               host_zone_pcp_max_bytes(&z->in, &then, s->topo.page_size), (uint64_t) INT64_MAX)));
                json_object_array_add(a, e);
        }
        return a;
}

static json_object *report_json_decision(const ReportInput *in) {
        const Snapshot *s = in->snap;
        json_object *dec = json_object_new_object();
        char reason[512];
        int64_t target;

        if (in->decision && pcp_decision(in->decision)->wanted) {
                const KnobDecision *d = pcp_decision(in->decision);
                char gbuf[64];
                json_object_object_add(dec, "policy", json_object_new_string(d->policy->name));
                json_object_object_add(dec, "rule", json_object_new_string(d->rule->name));
                json_object_object_add(dec, "goal", json_object_new_string(pcp_goal_to_string(&d->goal, gbuf, sizeof gbuf)));
                if (d->solve_error >= 0 || d->solve_error == -ERANGE)
                        json_object_object_add(dec, "fraction", json_object_new_int64(d->value));
                if (d->solve_error < 0)
                        json_object_object_add(dec, "error", json_object_new_string(errno_str(d->solve_error)));
                if (d->goal.kind == PCP_GOAL_BULK_FREE_P99 && d->ns_per_page > 0)
                        json_object_object_add(dec, "prediction", report_json_prediction(d));
        }
        bool change = decision_changes(in, &target);
        json_object_object_add(dec, "change", json_object_new_boolean(change));
        if (change) {
                json_object_object_add(dec, "from", json_object_new_int64(s->knob.value));
                json_object_object_add(dec, "to", json_object_new_int64(target));
        }
        json_object_object_add(dec, "dry_run", json_object_new_boolean(in->dry_run));
        json_object_object_add(dec, "reason", json_object_new_string(decision_reason(in, reason, sizeof reason)));
        if (change) {
                json_object_object_add(dec, "zones", report_json_change_zones(s, target));
                json_object_object_add(dec, "pcp_max_bytes_from",
                                       json_object_new_int64((int64_t) MIN(pcp_max_bytes(s, (int) s->knob.value), (uint64_t) INT64_MAX)));
                json_object_object_add(dec, "pcp_max_bytes_to",
                                       json_object_new_int64((int64_t) MIN(pcp_max_bytes(s, (int) target), (uint64_t) INT64_MAX)));
        }
        return dec;
}

/* The host: kernel, regime, CPUs, nodes, page size (after schema_version and the timestamp). */
static void report_json_host(json_object *o, const ReportInput *in) {
        const Snapshot *s = in->snap;
        usec_t t = in->timestamp_usec ?: now_usec(CLOCK_REALTIME);
        char ts[32];

        json_add_schema_version(o);
        json_object_object_add(o, "timestamp", json_object_new_string(format_timestamp_utc(ts, sizeof ts, t)));
        json_object_object_add(o, "timestamp_usec", json_object_new_int64((int64_t) t));
        json_object_object_add(o, "kernel", json_object_new_string(s->topo.kernel_release));
        json_object_object_add(o, "regime", json_object_new_string(pcp_regime_to_string(s->regime)));
        json_object_object_add(o, "online_cpus", json_object_new_int((int) s->topo.online_cpus));
        json_object_object_add(o, "possible_cpus", json_object_new_int((int) s->topo.possible_cpus));
        json_object_object_add(o, "nodes", json_object_new_int((int) snapshot_count_nodes(s)));
        json_object_object_add(o, "page_size", json_object_new_int((int) s->topo.page_size));
}

json_object *report_to_json(const ReportInput *in) {
        const Snapshot *s = in->snap;
        json_object *o = json_object_new_object(), *rules = json_object_new_array();
        PercpuSplit sp;
        uint64_t max_bytes;

        if (!o || !rules) {
                json_object_put(o);
                json_object_put(rules);
                return NULL;
        }
        report_json_host(o, in);
        json_object_object_add(o, "memory", report_json_memory(&s->meminfo));
        json_object_object_add(o, "memcg", report_json_memcg(s));
        if (report_split(in, &sp))
                json_object_object_add(o, "percpu", percpu_split_to_json(&sp));
        if (in->pstats)
                json_object_object_add(o, "percpu_stats", percpu_stats_view_to_json(in->pstats));
        if (s->has_psi)
                json_object_object_add(o, "psi_memory", report_json_psi(&s->psi));
        if (s->has_knob)
                json_object_object_add(o, "knob", report_json_knob(in));
        json_object_object_add(o, "knobs", report_json_knobs(in));
        if (in->features)
                json_object_object_add(o, "contrib", report_json_contrib(in));
        if (in->probes)
                json_object_object_add(o, "probes", kernel_probes_to_json(in->probes));
        json_object_object_add(o, "zones", report_json_zones(in));
        json_object_object_add(o, "pcp_held_bytes", json_object_new_int64((int64_t) (s->pcp_held_pages * s->topo.page_size)));
        if (s->has_knob && host_pcp_max_bytes(s->regime, s->pcp_zones, s->n_pcp_zones, s->topo.page_size,
                                              (int) s->knob.value, &max_bytes) >= 0)
                json_object_object_add(o, "pcp_max_bytes", json_object_new_int64((int64_t) MIN(max_bytes, (uint64_t) INT64_MAX)));
        if (in->set)
                json_object_object_add(o, "policies", report_json_policies(in));
        else if (in->n_policy_errors > 0) {
                /* They did not load: where from and how many errors (the errors themselves went to stderr). */
                json_object *pol = json_object_new_object();
                json_object_object_add(pol, "source", json_object_new_string(strna(in->policy_source)));
                json_object_object_add(pol, "errors", json_object_new_int64((int64_t) in->n_policy_errors));
                json_object_object_add(o, "policies", pol);
        }
        for (size_t i = 0; in->decision && i < in->decision->n_rules; i++)
                json_object_array_add(rules, report_json_rule(in, &in->decision->rules[i]));
        json_object_object_add(o, "rules", rules);
        json_object_object_add(o, "decision", report_json_decision(in));
        json_object_object_add(o, "bulk_free", bulk_free_to_json(in->bulk_free));
        return o;
}

/*
 * The text of `pcptunectl status`, rendered from report_to_json()'s model: each figure is computed once, in
 * the model, and the text only chooses words and columns for it.
 */

static void print_host(FILE *f, json_object *j) {
        char b1[32], b2[32], b3[32], b4[32], b5[32];
        int64_t nodes = view_i64(j, "nodes", 0);

        fprintf(f, "kernel %s (pcp regime %s), %" PRId64 " CPUs online", view_str(j, "kernel", ""),
                view_str(j, "regime", ""), view_i64(j, "online_cpus", 0));
        if (view_i64(j, "possible_cpus", 0))
                fprintf(f, " (%" PRId64 " possible)", view_i64(j, "possible_cpus", 0));
        fprintf(f, ", %" PRId64 " node%s, %" PRId64 " KiB pages\n", nodes, nodes == 1 ? "" : "s",
                view_i64(j, "page_size", 0) / 1024);
        fprintf(f, "memory: total %s, free %s, available %s, slab %s, percpu %s\n",
                view_bytes(j, "memory.total_bytes", b1, sizeof b1, "n/a"),
                view_bytes(j, "memory.free_bytes", b2, sizeof b2, "n/a"),
                view_bytes(j, "memory.available_bytes", b3, sizeof b3, "n/a"),
                view_bytes(j, "memory.slab_bytes", b4, sizeof b4, "n/a"),
                view_bytes(j, "memory.percpu_bytes", b5, sizeof b5, "unavailable (kernel < 4.7)"));
}

static void print_memcg(FILE *f, json_object *j) {
        json_object *ids = view_get(j, "memcg.ids");
        KernelVersion kv = { 0 };

        if (view_has(j, "memcg.live"))
                fprintf(f, "memcg: %s at %s: %" PRId64 " live, %" PRId64 " dying\n", view_str(j, "memcg.mode", ""),
                        view_str(j, "memcg.mount", "n/a"), view_i64(j, "memcg.live", 0), view_i64(j, "memcg.dying", 0));
        else
                fprintf(f, "memcg: no memory controller found\n");
        if (!ids)
                return;
        (void) kernel_version_parse(view_str(j, "kernel", ""), &kv);
        if (view_bool(ids, "exact"))
                fprintf(f, "memcg IDs: %" PRId64 " of %" PRId64 " used (%s)\n", view_i64(ids, "used", 0),
                        view_i64(ids, "limit", 0),
                        kernel_version_cmp(&kv, &KV(4, 8)) < 0 ? "live and dying memcgs: before 4.8 dying ones keep their IDs"
                                                               : "live memcgs; no swap in use, so dying memcgs hold none");
        else
                fprintf(f, "memcg IDs: %" PRId64 "-%" PRId64 " of %" PRId64 " used (live memcgs, and dying ones "
                           "whose swapped-out pages keep their IDs)\n",
                        view_i64(ids, "used", 0), view_i64(ids, "used_max", 0), view_i64(ids, "limit", 0));
        if (view_bool(ids, "warn"))
                fprintf(f, "warning: memcg IDs %s%d%% used: creating a memory cgroup fails (ENOSPC on 6.1, "
                           "EBUSY on 6.12) when none is left\n",
                        view_bool(ids, "exact") ? "" : "up to ",
                        (int) (view_i64(ids, "used_max", 0) * 100 / MAX(view_i64(ids, "limit", 1), (int64_t) 1)));
}

static void print_bulk_free(FILE *f, json_object *b) {
        if (view_has(b, "unavailable")) {
                fprintf(f, "pcp bulk frees: unavailable (%s)\n", view_str(b, "unavailable", ""));
                return;
        }
        fprintf(f, "pcp bulk frees (last %.0f s): %" PRId64 " measured, hold p99 %.0f us (max %.0f us), "
                   "pages p99 %" PRId64 " (max %" PRId64 ")\n",
                view_double(b, "window_seconds", 0), view_i64(b, "samples", 0), view_double(b, "p99_seconds", 0) * 1e6,
                view_double(b, "max_seconds", 0) * 1e6, view_i64(b, "pages_p99", 0), view_i64(b, "pages_max", 0));
        fprintf(f, "  traced %.1f s in %" PRId64 " windows, %" PRId64 " events lost, reading cost %.1f ms of CPU\n",
                view_double(b, "traced_seconds", 0), view_i64(b, "windows", 0), view_i64(b, "lost_events", 0),
                (double) view_i64(b, "read_cpu_usec", 0) / 1e3);
}

static void print_knob(FILE *f, json_object *k) {
        if (!k) {
                fprintf(f, "pcp sysctl: none on this kernel\n");
                return;
        }
        if (view_has(k, "value"))
                fprintf(f, "%s = %" PRId64 " (%s", view_str(k, "name", ""), view_i64(k, "value", 0),
                        view_str(k, "state", ""));
        else
                fprintf(f, "%s: absent (%s", view_str(k, "name", ""), view_bool(k, "managed") ? "managed" : "not managed");
        if (view_bool(k, "managed") && view_has(k, "restore_journal") && !view_bool(k, "restore_journal"))
                fprintf(f, " by this pcptuned --once, original %" PRId64 "; no restore journal: nothing puts it back",
                        view_i64(k, "original", 0));
        else if (view_bool(k, "managed"))
                fprintf(f, " by pcptuned, original %" PRId64, view_i64(k, "original", 0));
        fprintf(f, ")\n");
        if (view_has(k, "last_change")) {
                char line[480];
                snprintf(line, sizeof line, "%s at %s", view_str(k, "last_change", ""), view_str(k, "last_change_time", ""));
                print_wrapped(f, "  last change: ", 15, line);
        }
}

/* The pcp knob, then the other knobs of "knobs" (the first entry of which is the pcp knob, when there is one). */
static void print_knobs(FILE *f, json_object *j) {
        print_knob(f, view_get(j, "knob"));
        for (size_t i = view_has(j, "knob") ? 1 : 0; i < view_len(j, "knobs"); i++)
                print_knob(f, view_idx(j, "knobs", i));
}

static void print_contrib(FILE *f, json_object *c) {
        char b[32];

        if (!view_has(c, "percpu_chunks"))
                return;
        fprintf(f, "percpu: %" PRId64 " chunks, %" PRId64 " populated pages per unit, %" PRId64 " empty (%s), %" PRId64
                   " kept for atomic allocations\n",
                view_i64(c, "percpu_chunks", 0), view_i64(c, "percpu_populated_pages", 0),
                view_i64(c, "percpu_empty_pop_pages", 0), view_bytes(c, "percpu_empty_pop_bytes", b, sizeof b, "0 B"),
                view_i64(c, "percpu_empty_pop_pages_high", 0));
}

static const char *range_text(char *buf, size_t size, json_object *r) {
        return range_fmt(buf, size, (Range){ view_i64(r, "min", 0), view_i64(r, "max", 0) });
}

/* Per zone: batch, high limits, current high and count (pages), memory on pcp lists now. */
static void print_zones(FILE *f, json_object *j) {
        bool any_modelled = false, any_above = false;
        char b1[32], b2[32];

        fprintf(f, "\n%-4s %-8s %10s %8s %4s %5s %9s %9s %11s %8s %10s\n", "node", "zone", "managed", "low", "cpus",
                "batch", "high_min", "high_max", "high now", "count", "on pcp");
        for (size_t i = 0; i < view_len(j, "zones"); i++) {
                json_object *z = view_idx(j, "zones", i);
                bool modelled = view_bool(z, "high_limits_modelled");
                char r1[24], r2[24], r3[24], r4[24];

                any_modelled |= modelled;
                any_above |= view_bool(z, "high_above_high_max");
                fprintf(f, "%-4" PRId64 " %-8s %10" PRId64 " %8" PRId64 " %4" PRId64 " %5s %8s%s %8s%s %11s %8" PRId64
                           " %10s\n",
                        view_i64(z, "node", 0), view_str(z, "zone", ""), view_i64(z, "managed_pages", 0),
                        view_i64(z, "low_pages", 0), view_i64(z, "cpus", 0), range_text(r1, sizeof r1, view_get(z, "batch")),
                        range_text(r2, sizeof r2, view_get(z, "high_min")), modelled ? "*" : " ",
                        range_text(r3, sizeof r3, view_get(z, "high_max")), modelled ? "*" : " ",
                        range_text(r4, sizeof r4, view_get(z, "high")), view_i64(z, "count_pages", 0),
                        view_bytes(z, "held_bytes", b1, sizeof b1, "0 B"));
        }
        fprintf(f, "(pages; batch, high_min, high_max and high now: range over the node's CPUs; count: sum over them)\n");
        if (any_modelled)
                fprintf(f, "(*) computed: kernels 6.7-6.12 print only the dynamic high, not high_min/high_max\n");
        if (any_above)
                fprintf(f, "(!) a CPU's current high is above high_max: it is clamped at its next use of the zone "
                           "and decays by 1/8 per second while idle\n");
        if (view_bool(j, "knob.writable"))
                fprintf(f, "pcp lists: %s held now; at most %s at fraction %" PRId64
                           " (high_max x every online CPU's pageset, every zone)\n",
                        view_bytes(j, "pcp_held_bytes", b1, sizeof b1, "0 B"), view_bytes(j, "pcp_max_bytes", b2, sizeof b2, "0 B"),
                        view_i64(j, "knob.value", 0));
        else
                fprintf(f, "pcp lists: %s held now\n", view_bytes(j, "pcp_held_bytes", b1, sizeof b1, "0 B"));
}

/* Policies and their rules, in the order evaluated (the model's "rules" follow "policies.loaded"). */
static void print_policies(FILE *f, json_object *j) {
        json_object *pol = view_get(j, "policies");
        size_t n = view_len(pol, "loaded"), k = 0;

        if (!pol)
                return;
        if (view_has(pol, "errors")) {
                int64_t e = view_i64(pol, "errors", 0);
                fprintf(f, "\npolicies (%s): not loaded, %" PRId64 " error%s (above)\n", view_str(pol, "source", ""), e,
                        e == 1 ? "" : "s");
                return;
        }
        fprintf(f, "\npolicies (%s: %zu)%s\n", view_str(pol, "source", ""), n,
                n == 0 ? ": none loaded, nothing will be changed" : "");
        for (size_t i = 0; i < n; i++) {
                json_object *p = view_idx(pol, "loaded", i);
                fprintf(f, "  %s (priority %" PRId64 ", %s)\n", view_str(p, "name", ""), view_i64(p, "priority", 0),
                        view_str(p, "file", ""));
                if (view_has(p, "host_mismatch"))
                        fprintf(f, "    host does not match: %s\n", view_str(p, "host_mismatch", ""));
                for (int64_t r = 0; r < view_i64(p, "rules", 0); r++, k++) {
                        json_object *st = view_idx(j, "rules", k);
                        const char *state = view_str(st, "state", "");
                        if (!st)
                                continue;
                        fprintf(f, "    %-22s %-20s %s\n", view_str(st, "rule", ""), state, view_str(st, "goal", ""));
                        /* Why, from the evaluation (the policy's line above says it for a host). */
                        if (!streq(state, rule_verdict_to_string(RULE_HOST_MISMATCH)))
                                print_wrapped(f, "      why: ", 11, view_str(st, "why", ""));
                }
        }
}

static void print_decision(FILE *f, json_object *d) {
        json_object *pr = view_get(d, "prediction");

        fprintf(f, "decision: %s\n", view_str(d, "reason", ""));
        if (pr && view_has(d, "fraction")) {
                double p99 = view_double(pr, "p99_seconds", 0), target = view_double(pr, "target_seconds", 0);
                fprintf(f, "  why: predicted p99 bulk-free hold %.0f us (%" PRId64 " pages x %.1f ns per page) %s the "
                           "target %.0f us; the default would move %" PRId64 " pages (%.0f us)%s\n",
                        p99 * 1e6, view_i64(pr, "pages", 0), view_double(pr, "ns_per_page", 0),
                        p99 <= target ? "meets" : "misses", target * 1e6, view_i64(pr, "default_pages", 0),
                        view_double(pr, "default_p99_seconds", 0) * 1e6,
                        view_i64(d, "fraction", 0) == 0 ? ": the default meets it"
                        : view_has(d, "error")          ? ": no fraction meets it, the minimum is the closest"
                                                        : ": the largest lists that meet it");
        }
        if (!view_bool(d, "change"))
                return;
        char b1[32], b2[32];
        fprintf(f, "\n%-4s %-8s %5s %9s %9s %12s %12s\n", "node", "zone", "batch", "high_min", "high_max", "pcp max now",
                "pcp max then");
        for (size_t i = 0; i < view_len(d, "zones"); i++) {
                json_object *z = view_idx(d, "zones", i);
                fprintf(f, "%-4" PRId64 " %-8s %5" PRId64 " %9" PRId64 " %9" PRId64 " %12s %12s\n", view_i64(z, "node", 0),
                        view_str(z, "zone", ""), view_i64(z, "batch", 0), view_i64(z, "high_min", 0),
                        view_i64(z, "high_max", 0), view_bytes(z, "pcp_max_bytes_from", b1, sizeof b1, "0 B"),
                        view_bytes(z, "pcp_max_bytes_to", b2, sizeof b2, "0 B"));
        }
        fprintf(f, "pcp lists may hold at most %s -> %s\n", view_bytes(d, "pcp_max_bytes_from", b1, sizeof b1, "0 B"),
                view_bytes(d, "pcp_max_bytes_to", b2, sizeof b2, "0 B"));
}

void report_print_model(FILE *f, json_object *j) {
        print_host(f, j);
        print_memcg(f, j);
        if (view_has(j, "percpu"))
                percpu_split_print(f, "", view_get(j, "percpu"), true);
        if (view_has(j, "percpu_stats"))
                percpu_stats_view_print(f, "", view_get(j, "percpu_stats"));
        if (view_has(j, "psi_memory"))
                fprintf(f, "psi memory: some avg10 %.2f%% avg60 %.2f%%, full avg10 %.2f%% avg60 %.2f%%\n",
                        view_double(j, "psi_memory.some_avg10", 0), view_double(j, "psi_memory.some_avg60", 0),
                        view_double(j, "psi_memory.full_avg10", 0), view_double(j, "psi_memory.full_avg60", 0));
        else
                fprintf(f, "psi memory: unavailable\n");
        print_bulk_free(f, view_get(j, "bulk_free"));
        print_knobs(f, j);
        if (view_has(j, "probes"))
                kernel_probes_print_json(f, view_get(j, "probes"));
        print_contrib(f, view_get(j, "contrib"));
        print_zones(f, j);
        print_policies(f, j);
        fputc('\n', f);
        print_decision(f, view_get(j, "decision"));
}

int report_print(FILE *f, const ReportInput *in) {
        json_object *j = report_to_json(in);

        if (!j)
                return -ENOMEM;
        report_print_model(f, j);
        json_object_put(j);
        return 0;
}

const char *report_status_line(const ReportInput *in, char *buf, size_t size) {
        const Snapshot *s = in->snap;
        char pb[32], hb[32];
        int64_t target;
        size_t active = 0;

        for (size_t i = 0; in->decision && i < in->decision->n_rules; i++)
                active += in->decision->rules[i].verdict == RULE_ACTIVE;

        snprintf(buf, size, "%s%s=%" PRId64 "%s; %zu active rule%s; percpu %s; pcp held %s; memcg dying %" PRIu64,
                 in->dry_run ? "dry-run: " : "", s->has_knob ? s->knob.name : "pcp sysctl",
                 s->has_knob ? s->knob.value : (int64_t) -1,
                 pcp_state(in) && pcp_state(in)->admin_override ? " (admin)" : pcp_state(in) && pcp_state(in)->managed ? " (managed)" : "",
                 active, active == 1 ? "" : "s",
                 s->meminfo.has_percpu ? format_bytes(pb, sizeof pb, s->meminfo.percpu_kib * 1024) : "n/a",
                 format_bytes(hb, sizeof hb, s->pcp_held_pages * s->topo.page_size),
                 s->has_memcg ? s->memcg.dying : 0);
        if (in->dry_run && decision_changes(in, &target)) {
                size_t l = strlen(buf);
                snprintf(buf + l, size - l, "; would set %" PRId64, target);
        }
        return buf;
}
