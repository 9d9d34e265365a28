/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>
#include <math.h>

#include "log.h"
#include "report.h"

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


void percpu_split_print(FILE *f, const char *indent, const PercpuSplit *s, bool with_cost) {
        char t[32], l[32], d[32], o[32], fr[32], line[320], prefix[32];
        int n;

        fprintf(f, "%spercpu: %s = live memcgs %s + dying memcgs %s + other %s", indent,
                format_bytes(t, sizeof t, s->total_bytes), format_bytes(l, sizeof l, s->live_memcgs_bytes),
                format_bytes(d, sizeof d, s->dying_memcgs_bytes), format_bytes(o, sizeof o, s->other_bytes));
        if (s->has_fragmentation)
                fprintf(f, " (fragmentation %s)", format_bytes(fr, sizeof fr, s->fragmentation_bytes));
        fputc('\n', f);
        n = snprintf(line, sizeof line, "total measured (meminfo); memcgs %s, %.0f B each%s; other estimated (the rest)",
                     percpu_basis_to_string(s->cost.basis), s->cost.bytes,
                     s->scaled ? ", scaled down to fit the total" : "");
        if (s->has_fragmentation && n > 0 && (size_t) n < sizeof line)
                snprintf(line + n, sizeof line - (size_t) n, "; fragmentation measured (%s)", s->fragmentation_source);
        snprintf(prefix, sizeof prefix, "%s  basis: ", indent);
        print_wrapped(f, prefix, strlen(prefix), line);
        if (with_cost) {
                snprintf(prefix, sizeof prefix, "%s  memcg cost: ", indent);
                print_wrapped(f, prefix, strlen(prefix), s->cost.how);
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
        json_object_object_add(b, "memcg_cost", json_object_new_string(s->cost.how));
        json_object_object_add(o, "basis", b);
        return o;
}

void percpu_stats_view_print(FILE *f, const char *indent, const PercpuStatsView *v) {
        char fb[32], prefix[32];

        if (v->skipped) {
                fprintf(f, "%spercpu_stats: not read: more than %d memcgs make it hold IRQs off too long\n", indent,
                        PERCPU_STATS_CHEAP_MEMCGS);
                return;
        }
        if (v->error == -ENOENT) {
                fprintf(f, "%spercpu_stats: unavailable: debugfs not mounted or no CONFIG_PERCPU_STATS\n", indent);
                return;
        }
        if (v->error < 0) {
                fprintf(f, "%spercpu_stats: unavailable (%s)\n", indent, errno_str(v->error));
                return;
        }
        if (!v->consistent) {
                snprintf(prefix, sizeof prefix, "%spercpu_stats: ", indent);
                fprintf(f, "%sinconsistent dump, not used:\n", prefix);
                snprintf(prefix, sizeof prefix, "%s  ", indent);
                print_wrapped(f, prefix, strlen(prefix), v->inconsistency);
                return;
        }
        fprintf(f, "%spercpu_stats: %" PRId64 " chunks (%" PRId64 " empty), %" PRId64 " empty populated pages, %s free "
                   "per unit\n",
                indent, v->sum.chunks, v->sum.empty_chunks, v->sum.empty_pop_pages,
                format_bytes(fb, sizeof fb, (uint64_t) MAX(v->sum.free_bytes, (int64_t) 0)));
        if (v->live)
                fprintf(f, "%s  read in %" PRIu64 " us, pcpu_lock held with IRQs off\n", indent, v->read_usec);
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

const char *report_knob_state(const ReportInput *in) {
        if (!in->snap->has_knob)
                return "absent";
        if (!in->snap->knob.writable)
                return "read-only";
        if (in->knob && in->knob->admin_override)
                return "changed by an administrator";
        if (in->knob && in->knob->managed)
                return "managed";
        return "not managed";
}

static bool decision_changes(const ReportInput *in, int64_t *ret_target) {
        const Snapshot *s = in->snap;
        const Plan *p = in->plan;

        if (!p || !s->has_knob || !s->knob.writable)
                return false;
        if (p->pcp_high.wanted && (p->pcp_high.solve_error >= 0 || p->pcp_high.solve_error == -ERANGE)) {
                *ret_target = p->pcp_high.fraction;
                return *ret_target != s->knob.value;
        }
        if (!p->pcp_high.wanted && in->knob && in->knob->managed) {
                *ret_target = in->knob->original;
                return *ret_target != s->knob.value;
        }
        return false;
}

/* The decision as one sentence (the text after "decision: "; JSON's decision.reason), in buf. */
static const char *decision_reason(const ReportInput *in, char *buf, size_t size) {
        const Snapshot *s = in->snap;
        const Plan *p = in->plan;
        const PcpDecision *d = p ? &p->pcp_high : NULL;
        char gbuf[64] = "";
        int64_t target;

        if (d && d->wanted)
                pcp_goal_to_string(&d->goal, gbuf, sizeof gbuf);
        if (!s->has_knob)
                snprintf(buf, size, "no pcp sysctl on this kernel: nothing to change");
        else if (!s->knob.writable)
                snprintf(buf, size, "%s = %" PRId64 " is read-only for pcptune on kernels before 5.14 "
                                    "(a small value gives every CPU managed/F pages)", s->knob.name, s->knob.value);
        else if (in->knob && in->knob->admin_override)
                snprintf(buf, size, "%s was changed by an administrator (%" PRId64 "): left alone until "
                                    "`pcptunectl resume %s`", s->knob.name, in->knob->admin_value, s->knob.name);
        else if ((!d || !d->wanted) && in->knob && in->knob->managed)
                snprintf(buf, size, "no active rule sets pcp.high: %s %s %" PRId64 " -> %" PRId64 " (original)",
                         in->dry_run ? "would restore" : "restore", s->knob.name, s->knob.value, in->knob->original);
        else if (!d || !d->wanted)
                snprintf(buf, size, "%s stays %" PRId64 ": no active rule sets pcp.high", s->knob.name, s->knob.value);
        else if (d->solve_error == -ENODATA && d->goal.kind == PCP_GOAL_BULK_FREE_P99)
                snprintf(buf, size, "rule %s/%s wants pcp.high %s: no bulk-free calibration on this host yet "
                                    "(pcptuned fits one from traced bulk frees): %s stays %" PRId64,
                         d->policy->name, d->rule->name, gbuf, s->knob.name, s->knob.value);
        else if (d->solve_error < 0 && d->solve_error != -ERANGE)
                snprintf(buf, size, "rule %s/%s wants pcp.high %s but it cannot be solved here: %s", d->policy->name,
                         d->rule->name, gbuf, errno_str(d->solve_error));
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

static void print_decision(FILE *f, const ReportInput *in) {
        const PcpDecision *d = in->plan ? &in->plan->pcp_high : NULL;
        char buf[512];
        fprintf(f, "decision: %s\n", decision_reason(in, buf, sizeof buf));
        if (d && d->wanted && d->goal.kind == PCP_GOAL_BULK_FREE_P99 && d->ns_per_page > 0 &&
            (d->solve_error >= 0 || d->solve_error == -ERANGE))
                fprintf(f, "  why: predicted p99 bulk-free hold %.0f us (%" PRIu64 " pages x %.1f ns per page) %s the "
                           "target %.0f us; the default would move %" PRIu64 " pages (%.0f us)%s\n",
                        d->predicted_ns / 1000.0, d->pages, d->ns_per_page,
                        d->predicted_ns <= (double) d->goal.value ? "meets" : "misses", (double) d->goal.value / 1000.0,
                        d->default_pages, d->ns_per_page * (double) d->default_pages / 1000.0,
                        d->fraction == 0 ? ": the default meets it"
                        : d->solve_error == -ERANGE ? ": no fraction meets it, the minimum is the closest"
                                                    : ": the largest lists that meet it");
}

/* What a rule does, for one report column: "pcp.high 8x batch, action reclaim-dying". */
static void rule_describe(const Rule *r, char *buf, size_t size) {
        char g[64];
        size_t l = 0;
        buf[0] = 0;
        if (r->has_pcp_high)
                l += (size_t) snprintf(buf + l, size - l, "pcp.high %s", pcp_goal_to_string(&r->pcp_high, g, sizeof g));
        if (l < size && r->has_batch_scale_max)
                l += (size_t) snprintf(buf + l, size - l, "%spcp.batch_scale_max %d", l ? ", " : "", r->batch_scale_max);
        if (l < size && r->action.kind == ACTION_RECLAIM_DYING)
                l += (size_t) snprintf(buf + l, size - l, "%saction reclaim-dying", l ? ", " : "");
        if (l < size && r->action.kind == ACTION_PERCPU_DEPOPULATE)
                l += (size_t) snprintf(buf + l, size - l, "%saction percpu-depopulate", l ? ", " : "");
        if (l < size && r->repair_pagesets)
                snprintf(buf + l, size - l, "%srepair pagesets", l ? ", " : "");
}

static void print_bulk_free(FILE *f, const BulkFreeView *v) {
        if (!v || !v->available) {
                fprintf(f, "pcp bulk frees: unavailable (%s)\n",
                        v ? strna(v->why) : "measured by the running pcptuned only");
                return;
        }
        fprintf(f, "pcp bulk frees (last %.0f s): %" PRIu64 " measured, hold p99 %.0f us (max %.0f us), "
                   "pages p99 %" PRIu64 " (max %" PRIu64 ")\n",
                (double) v->window_usec / 1e6, v->sum.samples, v->sum.p99_seconds * 1e6, v->sum.max_seconds * 1e6,
                v->sum.pages_p99, v->sum.pages_max);
        fprintf(f, "  traced %.1f s in %" PRIu64 " windows, %" PRIu64 " events lost, reading cost %.1f ms of CPU\n",
                (double) v->c.traced_usec / 1e6, v->c.windows, v->c.lost, (double) v->c.cost_usec / 1e3);
}

void report_print(FILE *f, const ReportInput *in) {
        const Snapshot *s = in->snap;
        const Meminfo *mi = &s->meminfo;
        char b1[32], b2[32], b3[32], b4[32], b5[32];
        int64_t target;

        fprintf(f, "kernel %s (pcp regime %s), %u CPUs online", s->topo.kernel_release,
                pcp_regime_to_string(s->regime), s->topo.online_cpus);
        if (s->topo.possible_cpus)
                fprintf(f, " (%u possible)", s->topo.possible_cpus);
        fprintf(f, ", %u node%s, %u KiB pages\n", snapshot_count_nodes(s), snapshot_count_nodes(s) == 1 ? "" : "s",
                s->topo.page_size / 1024);

        fprintf(f, "memory: total %s, free %s, available %s, slab %s, percpu %s\n",
                format_bytes(b1, sizeof b1, mi->mem_total_kib * 1024),
                format_bytes(b2, sizeof b2, mi->mem_free_kib * 1024),
                mi->has_mem_available ? format_bytes(b3, sizeof b3, mi->mem_available_kib * 1024) : "n/a",
                mi->has_slab ? format_bytes(b4, sizeof b4, mi->slab_kib * 1024) : "n/a",
                mi->has_percpu ? format_bytes(b5, sizeof b5, mi->percpu_kib * 1024) : "unavailable (kernel < 4.7)");

        if (s->has_memcg && s->memcg.mode != CGROUP_MEMORY_NONE)
                fprintf(f, "memcg: %s at %s: %" PRIu64 " live, %" PRIu64 " dying\n",
                        cgroup_mode_to_string(s->memcg.mode), strna(s->memcg.mount), s->memcg.live, s->memcg.dying);
        else
                fprintf(f, "memcg: no memory controller found\n");
        MemcgIdUsage ids;
        if (snapshot_memcg_ids(s, &ids) >= 0) {
                if (ids.exact)
                        fprintf(f, "memcg IDs: %" PRIu64 " of %" PRIu64 " used (%s)\n", ids.used, ids.limit,
                                kernel_version_cmp(&s->topo.kernel, &KV(4, 8)) < 0
                                        ? "live and dying memcgs: before 4.8 dying ones keep their IDs"
                                        : "live memcgs; no swap in use, so dying memcgs hold none");
                else
                        fprintf(f, "memcg IDs: %" PRIu64 "-%" PRIu64 " of %" PRIu64 " used (live memcgs, and dying ones "
                                   "whose swapped-out pages keep their IDs)\n",
                                ids.used, ids.used_max, ids.limit);
                if (ids.warn)
                        fprintf(f, "warning: memcg IDs %s%d%% used: creating a memory cgroup fails (ENOSPC on 6.1, "
                                   "EBUSY on 6.12) when none is left\n",
                                ids.exact ? "" : "up to ", (int) (ids.used_max * 100 / ids.limit));
        }
        PercpuSplit sp;
        if (report_split(in, &sp))
                percpu_split_print(f, "", &sp, true);
        if (in->pstats)
                percpu_stats_view_print(f, "", in->pstats);

        if (s->has_psi)
                fprintf(f, "psi memory: some avg10 %.2f%% avg60 %.2f%%, full avg10 %.2f%% avg60 %.2f%%\n",
                        s->psi.some.avg10, s->psi.some.avg60, s->psi.full.avg10, s->psi.full.avg60);
        else
                fprintf(f, "psi memory: unavailable\n");

        print_bulk_free(f, in->bulk_free);

        if (s->has_knob) {
                fprintf(f, "%s = %" PRId64 " (%s", s->knob.name, s->knob.value, report_knob_state(in));
                if (in->knob && in->knob->managed)
                        fprintf(f, " by pcptuned, original %" PRId64, in->knob->original);
                fprintf(f, ")\n");
                if (in->knob && in->knob->last_change_usec) {
                        char ts[32], line[480];
                        snprintf(line, sizeof line, "%s at %s", in->knob->last_change,
                                 format_timestamp_utc(ts, sizeof ts, in->knob->last_change_usec));
                        print_wrapped(f, "  last change: ", 15, line);
                }
        } else
                fprintf(f, "pcp sysctl: none on this kernel\n");
        if (in->probes)
                kernel_probes_print(f, in->probes);
        if (in->features) {
                if (s->has_percpu_sysfs) {
                        char b[32];
                        fprintf(f, "percpu: %" PRIu64 " chunks, %" PRIu64 " populated pages per unit, %" PRIu64
                                   " empty (%s), %" PRIu64 " kept for atomic allocations\n",
                                s->percpu_sysfs.nr_chunks, s->percpu_sysfs.nr_populated_pages,
                                s->percpu_sysfs.nr_empty_pop_pages,
                                format_bytes(b, sizeof b,
                                             s->percpu_sysfs.nr_empty_pop_pages * s->percpu_sysfs.nr_units *
                                                     s->topo.page_size),
                                s->percpu_sysfs.empty_pop_pages_high);
                }
        }

        /* Per zone: batch, high limits, current high and count (pages), memory on pcp lists now. */
        bool any_modelled = false, any_above = false;
        fprintf(f, "\n%-4s %-8s %10s %8s %4s %5s %9s %9s %11s %8s %10s\n", "node", "zone", "managed", "low", "cpus",
                "batch", "high_min", "high_max", "high now", "count", "on pcp");
        for (size_t i = 0; i < s->zoneinfo.n_zones; i++) {
                const Zone *z = &s->zoneinfo.zones[i];
                const PcpZone *pz = find_pcp_zone(s, z);
                char r1[24], r2[24], r3[24], r4[24];
                ZoneView v;

                if (!z->populated || !pz)
                        continue;
                zone_view(in, z, pz, &v);
                any_modelled |= v.modelled;
                any_above |= v.high.hi > v.high_max.hi && (s->zoneinfo.has_high_min_max || v.modelled);
                fprintf(f, "%-4d %-8s %10" PRIu64 " %8" PRIu64 " %4u %5s %8s%s %8s%s %11s %8" PRIu64 " %10s\n",
                        z->node, z->name, z->managed_pages, z->low_pages, pz->in.node_cpus,
                        range_fmt(r1, sizeof r1, v.batch), range_fmt(r2, sizeof r2, v.high_min), v.modelled ? "*" : " ",
                        range_fmt(r3, sizeof r3, v.high_max), v.modelled ? "*" : " ", range_fmt(r4, sizeof r4, v.high),
                        v.count, format_bytes(b1, sizeof b1, v.count * s->topo.page_size));
        }
        fprintf(f, "(pages; batch, high_min, high_max and high now: range over the node's CPUs; count: sum over them)\n");
        if (any_modelled)
                fprintf(f, "(*) computed: kernels 6.7-6.12 print only the dynamic high, not high_min/high_max\n");
        if (any_above)
                fprintf(f, "(!) a CPU's current high is above high_max: it is clamped at its next use of the zone "
                           "and decays by 1/8 per second while idle\n");
        if (s->has_knob && s->knob.writable)
                fprintf(f, "pcp lists: %s held now; at most %s at fraction %" PRId64
                           " (high_max x every online CPU's pageset, every zone)\n",
                        format_bytes(b1, sizeof b1, s->pcp_held_pages * s->topo.page_size),
                        format_bytes(b2, sizeof b2, pcp_max_bytes(s, (int) s->knob.value)), s->knob.value);
        else
                fprintf(f, "pcp lists: %s held now\n", format_bytes(b1, sizeof b1, s->pcp_held_pages * s->topo.page_size));

        /* Policies and rules. */
        if (in->set) {
                fprintf(f, "\npolicies (%s: %zu)%s\n", strna(in->set->source), in->set->n_policies,
                        in->set->n_policies == 0 ? ": none loaded, nothing will be changed" : "");
                size_t k = 0;
                for (size_t i = 0; i < in->set->n_policies; i++) {
                        const Policy *p = in->set->policies[i];
                        char why[128];
                        fprintf(f, "  %s (priority %d, %s)\n", p->name, p->priority, p->file);
                        if (host_match_explain(&p->host, in->mv, why, sizeof why))
                                fprintf(f, "    host does not match: %s\n", why);
                        for (size_t j = 0; j < p->n_rules; j++) {
                                const Rule *r = &p->rules[j];
                                const RuleStatus *st = in->plan && k < in->plan->n_rules ? &in->plan->rules[k] : NULL;
                                char what[160];
                                k++;
                                rule_describe(r, what, sizeof what);
                                fprintf(f, "    %-22s %-20s %s\n", r->name,
                                        st ? rule_verdict_to_string(st->verdict) : "", what);
                                /* Why, from the evaluation (the policy's line above says it for a host). */
                                if (st && st->verdict != RULE_HOST_MISMATCH) {
                                        char explain[512];
                                        print_wrapped(f, "      why: ", 11, rule_status_explain(st, in->mv, explain,
                                                                                                sizeof explain));
                                }
                        }
                }
        }

        fputc('\n', f);
        print_decision(f, in);

        if (decision_changes(in, &target)) {
                fprintf(f, "\n%-4s %-8s %5s %9s %9s %12s %12s\n", "node", "zone", "batch", "high_min", "high_max",
                        "pcp max now", "pcp max then");
                for (size_t i = 0; i < s->n_pcp_zones; i++) {
                        const PcpZone *z = &s->pcp_zones[i];
                        PcpSetting now, then;
                        if (pcp_model_zone(s->regime, &z->in, s->topo.page_size, (int) s->knob.value, &now) < 0 ||
                            pcp_model_zone(s->regime, &z->in, s->topo.page_size, (int) target, &then) < 0)
                                continue;
                        fprintf(f, "%-4d %-8s %5d %9d %9d %12s %12s\n", z->node, z->name, then.batch, then.high_min,
                                then.high_max,
                                format_bytes(b1, sizeof b1, host_zone_pcp_max_bytes(&z->in, &now, s->topo.page_size)),
                                format_bytes(b2, sizeof b2, host_zone_pcp_max_bytes(&z->in, &then, s->topo.page_size)));
                }
                fprintf(f, "pcp lists may hold at most %s -> %s\n",
                        format_bytes(b1, sizeof b1, pcp_max_bytes(s, (int) s->knob.value)),
                        format_bytes(b2, sizeof b2, pcp_max_bytes(s, (int) target)));
        }
}

static json_object *json_range(Range r) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "min", json_object_new_int64(r.lo));
        json_object_object_add(o, "max", json_object_new_int64(r.hi));
        return o;
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

json_object *report_to_json(const ReportInput *in) {
        const Snapshot *s = in->snap;
        json_object *o = json_object_new_object(), *zones = json_object_new_array(), *mem = json_object_new_object();
        json_object *memcg = json_object_new_object(), *pol = json_object_new_array(), *dec = json_object_new_object();
        int64_t target;

        if (!o || !zones || !mem || !memcg || !pol || !dec) {
                json_object_put(o);
                json_object_put(zones);
                json_object_put(mem);
                json_object_put(memcg);
                json_object_put(pol);
                json_object_put(dec);
                return NULL;
        }
        char ts[32];
        usec_t t = in->timestamp_usec ?: now_usec(CLOCK_REALTIME);
        json_add_schema_version(o);
        json_object_object_add(o, "timestamp", json_object_new_string(format_timestamp_utc(ts, sizeof ts, t)));
        json_object_object_add(o, "timestamp_usec", json_object_new_int64((int64_t) t));
        json_object_object_add(o, "kernel", json_object_new_string(s->topo.kernel_release));
        json_object_object_add(o, "regime", json_object_new_string(pcp_regime_to_string(s->regime)));
        json_object_object_add(o, "online_cpus", json_object_new_int((int) s->topo.online_cpus));
        json_object_object_add(o, "possible_cpus", json_object_new_int((int) s->topo.possible_cpus));
        json_object_object_add(o, "page_size", json_object_new_int((int) s->topo.page_size));

        json_object_object_add(mem, "total_bytes", json_object_new_int64((int64_t) s->meminfo.mem_total_kib * 1024));
        json_object_object_add(mem, "free_bytes", json_object_new_int64((int64_t) s->meminfo.mem_free_kib * 1024));
        if (s->meminfo.has_mem_available)
                json_object_object_add(mem, "available_bytes",
                                       json_object_new_int64((int64_t) s->meminfo.mem_available_kib * 1024));
        json_object_object_add(mem, "slab_bytes",
                               s->meminfo.has_slab ? json_object_new_int64((int64_t) s->meminfo.slab_kib * 1024) : NULL);
        json_object_object_add(mem, "percpu_bytes",
                               s->meminfo.has_percpu ? json_object_new_int64((int64_t) s->meminfo.percpu_kib * 1024)
                                                     : NULL);
        json_object_object_add(o, "memory", mem);

        json_object_object_add(memcg, "mode", json_object_new_string(
                                                      cgroup_mode_to_string(s->has_memcg ? s->memcg.mode
                                                                                         : CGROUP_MEMORY_NONE)));
        if (s->has_memcg && s->memcg.mode != CGROUP_MEMORY_NONE) {
                json_object_object_add(memcg, "mount", json_object_new_string(s->memcg.mount));
                json_object_object_add(memcg, "live", json_object_new_int64((int64_t) s->memcg.live));
                json_object_object_add(memcg, "dying", json_object_new_int64((int64_t) s->memcg.dying));
        }
        MemcgIdUsage ids;
        if (snapshot_memcg_ids(s, &ids) >= 0) {
                json_object *id = json_object_new_object();
                json_object_object_add(id, "used", json_object_new_int64((int64_t) ids.used));
                json_object_object_add(id, "used_max", json_object_new_int64((int64_t) ids.used_max));
                json_object_object_add(id, "limit", json_object_new_int64((int64_t) ids.limit));
                json_object_object_add(id, "exact", json_object_new_boolean(ids.exact));
                json_object_object_add(id, "warn", json_object_new_boolean(ids.warn));
                json_object_object_add(memcg, "ids", id);
        }
        json_object_object_add(o, "memcg", memcg);
        PercpuSplit sp;
        if (report_split(in, &sp))
                json_object_object_add(o, "percpu", percpu_split_to_json(&sp));
        if (in->pstats)
                json_object_object_add(o, "percpu_stats", percpu_stats_view_to_json(in->pstats));

        if (s->has_psi) {
                json_object *psi = json_object_new_object();
                json_object_object_add(psi, "some_avg10", json_object_new_double(s->psi.some.avg10));
                json_object_object_add(psi, "some_avg60", json_object_new_double(s->psi.some.avg60));
                json_object_object_add(psi, "full_avg10", json_object_new_double(s->psi.full.avg10));
                json_object_object_add(psi, "full_avg60", json_object_new_double(s->psi.full.avg60));
                json_object_object_add(o, "psi_memory", psi);
        }

        if (s->has_knob) {
                json_object *k = json_object_new_object();
                json_object_object_add(k, "name", json_object_new_string(s->knob.name));
                json_object_object_add(k, "value", json_object_new_int64(s->knob.value));
                json_object_object_add(k, "writable", json_object_new_boolean(s->knob.writable));
                if (in->knob) {
                        json_object_object_add(k, "managed", json_object_new_boolean(in->knob->managed));
                        if (in->knob->managed) {
                                json_object_object_add(k, "original", json_object_new_int64(in->knob->original));
                                json_object_object_add(k, "written", json_object_new_int64(in->knob->written));
                        }
                        json_object_object_add(k, "admin_override", json_object_new_boolean(in->knob->admin_override));
                }
                json_object_object_add(k, "state", json_object_new_string(report_knob_state(in)));
                if (in->knob && in->knob->last_change_usec) {
                        char lts[32];
                        json_object_object_add(k, "last_change", json_object_new_string(in->knob->last_change));
                        json_object_object_add(k, "last_change_time",
                                               json_object_new_string(format_timestamp_utc(lts, sizeof lts,
                                                                                           in->knob->last_change_usec)));
                        json_object_object_add(k, "last_change_usec",
                                               json_object_new_int64((int64_t) in->knob->last_change_usec));
                } else {
                        json_object_object_add(k, "last_change", NULL);
                        json_object_object_add(k, "last_change_time", NULL);
                }
                json_object_object_add(o, "knob", k);
        }

        if (in->features) {
                json_object *c = json_object_new_object();
                json_object_object_add(c, "fraction_floor",
                                       json_object_new_string(feature_state_to_string(in->features->fraction_floor)));
                json_object_object_add(c, "pcp_batch_scale_max",
                                       in->features->batch_scale_max
                                               ? json_object_new_int64(in->features->batch_scale_max_value)
                                               : NULL);
                json_object_object_add(c, "percpu_sysfs", json_object_new_boolean(in->features->percpu_sysfs));
                json_object_object_add(c, "percpu_depopulate", json_object_new_boolean(in->features->percpu_depopulate));
                if (s->has_percpu_sysfs) {
                        json_object_object_add(c, "percpu_chunks", json_object_new_int64((int64_t) s->percpu_sysfs.nr_chunks));
                        json_object_object_add(c, "percpu_empty_pop_pages",
                                               json_object_new_int64((int64_t) s->percpu_sysfs.nr_empty_pop_pages));
                        json_object_object_add(c, "percpu_populated_pages",
                                               json_object_new_int64((int64_t) s->percpu_sysfs.nr_populated_pages));
                }
                json_object_object_add(o, "contrib", c);
        }
        if (in->probes)
                json_object_object_add(o, "probes", kernel_probes_to_json(in->probes));

        for (size_t i = 0; i < s->zoneinfo.n_zones; i++) {
                const Zone *z = &s->zoneinfo.zones[i];
                const PcpZone *pz = find_pcp_zone(s, z);
                json_object *zo;
                ZoneView v;

                if (!z->populated || !pz)
                        continue;
                zone_view(in, z, pz, &v);
                zo = json_object_new_object();
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
                json_object_object_add(zo, "count_pages", json_object_new_int64((int64_t) v.count));
                json_object_object_add(zo, "held_bytes", json_object_new_int64((int64_t) (v.count * s->topo.page_size)));
                json_object_object_add(zo, "pagesets", json_object_new_int((int) host_zone_pageset_cpus(&pz->in)));
                if (s->has_knob && zone_pcp_max_bytes(s, pz, (int) s->knob.value) >= 0)
                        json_object_object_add(zo, "pcp_max_bytes",
                                               json_object_new_int64(zone_pcp_max_bytes(s, pz, (int) s->knob.value)));
                json_object_array_add(zones, zo);
        }
        json_object_object_add(o, "zones", zones);
        json_object_object_add(o, "pcp_held_bytes",
                               json_object_new_int64((int64_t) (s->pcp_held_pages * s->topo.page_size)));
        uint64_t max_bytes;
        if (s->has_knob && host_pcp_max_bytes(s->regime, s->pcp_zones, s->n_pcp_zones, s->topo.page_size,
                                              (int) s->knob.value, &max_bytes) >= 0)
                json_object_object_add(o, "pcp_max_bytes",
                                       json_object_new_int64((int64_t) MIN(max_bytes, (uint64_t) INT64_MAX)));

        for (size_t i = 0; in->plan && i < in->plan->n_rules; i++) {
                const RuleStatus *st = &in->plan->rules[i];
                json_object *r = json_object_new_object();
                json_object_object_add(r, "policy", json_object_new_string(st->policy->name));
                json_object_object_add(r, "rule", json_object_new_string(st->rule->name));
                json_object_object_add(r, "file", json_object_new_string(st->policy->file));
                json_object_object_add(r, "priority", json_object_new_int(st->policy->priority));
                json_object_object_add(r, "state", json_object_new_string(rule_verdict_to_string(st->verdict)));
                char what[160], explain[512];
                rule_describe(st->rule, what, sizeof what);
                json_object_object_add(r, "goal", json_object_new_string(what));
                json_object_object_add(r, "why", json_object_new_string(rule_status_explain(st, in->mv, explain,
                                                                                           sizeof explain)));
                json_object_object_add(r, "condition", st->condition ? json_object_new_string(st->condition) : NULL);
                json_object *terms = json_object_new_array();
                for (size_t ti = 0; terms && ti < st->n_terms; ti++) {
                        const RuleTerm *rt = &st->terms[ti];
                        const MetricInfo *mi = metric_info(rt->metric);
                        json_object *to = json_object_new_object();
                        json_object_object_add(to, "metric", json_object_new_string(mi->name));
                        json_object_object_add(to, "unit", json_object_new_string(metric_unit_to_string(mi->unit)));
                        json_object_object_add(to, "value", rt->available ? json_object_new_double(rt->value) : NULL);
                        json_object_object_add(to, "op", json_object_new_string(cmp_op_to_string(rt->op)));
                        json_object_object_add(to, "threshold", json_object_new_double(rt->threshold));
                        json_object_object_add(to, "holds", json_object_new_boolean(rt->holds));
                        json_object_object_add(to, "for_seconds",
                                               rt->for_usec ? json_object_new_double((double) rt->for_usec / 1e6) : NULL);
                        json_object_object_add(to, "held_seconds",
                                               rt->for_usec ? json_object_new_double((double) rt->held_usec / 1e6) : NULL);
                        json_object_array_add(terms, to);
                }
                json_object_object_add(r, "terms", terms);
                json_object_object_add(r, "cooldown_left_seconds",
                                       json_object_new_double((double) st->cooldown_left_usec / 1e6));
                json_object_object_add(r, "host_mismatch",
                                       st->verdict == RULE_HOST_MISMATCH ? json_object_new_string(st->host_why) : NULL);
                json_object_array_add(pol, r);
        }
        json_object_object_add(o, "rules", pol);

        if (in->plan && in->plan->pcp_high.wanted) {
                const PcpDecision *d = &in->plan->pcp_high;
                char gbuf[64];
                json_object_object_add(dec, "policy", json_object_new_string(d->policy->name));
                json_object_object_add(dec, "rule", json_object_new_string(d->rule->name));
                json_object_object_add(dec, "goal", json_object_new_string(pcp_goal_to_string(&d->goal, gbuf, sizeof gbuf)));
                if (d->solve_error >= 0 || d->solve_error == -ERANGE)
                        json_object_object_add(dec, "fraction", json_object_new_int(d->fraction));
                if (d->solve_error < 0)
                        json_object_object_add(dec, "error", json_object_new_string(errno_str(d->solve_error)));
                if (d->goal.kind == PCP_GOAL_BULK_FREE_P99 && d->ns_per_page > 0) {
                        json_object *pr = json_object_new_object();
                        json_object_object_add(pr, "target_seconds", json_object_new_double((double) d->goal.value / 1e9));
                        json_object_object_add(pr, "ns_per_page", json_object_new_double(d->ns_per_page));
                        json_object_object_add(pr, "pages", json_object_new_int64((int64_t) d->pages));
                        json_object_object_add(pr, "p99_seconds", json_object_new_double(d->predicted_ns / 1e9));
                        json_object_object_add(pr, "default_pages", json_object_new_int64((int64_t) d->default_pages));
                        json_object_object_add(pr, "default_p99_seconds",
                                               json_object_new_double(d->ns_per_page * (double) d->default_pages / 1e9));
                        json_object_object_add(dec, "prediction", pr);
                }
        }
        bool change = decision_changes(in, &target);
        json_object_object_add(dec, "change", json_object_new_boolean(change));
        if (change) {
                json_object_object_add(dec, "from", json_object_new_int64(s->knob.value));
                json_object_object_add(dec, "to", json_object_new_int64(target));
        }
        json_object_object_add(dec, "dry_run", json_object_new_boolean(in->dry_run));
        char reason[512];
        json_object_object_add(dec, "reason", json_object_new_string(decision_reason(in, reason, sizeof reason)));
        json_object_object_add(o, "decision", dec);
        json_object_object_add(o, "bulk_free", bulk_free_to_json(in->bulk_free));
        return o;
}

const char *report_status_line(const ReportInput *in, char *buf, size_t size) {
        const Snapshot *s = in->snap;
        char pb[32], hb[32];
        int64_t target;
        size_t active = 0;

        for (size_t i = 0; in->plan && i < in->plan->n_rules; i++)
                active += in->plan->rules[i].verdict == RULE_ACTIVE;

        snprintf(buf, size, "%s%s=%" PRId64 "%s; %zu active rule%s; percpu %s; pcp held %s; memcg dying %" PRIu64,
                 in->dry_run ? "dry-run: " : "", s->has_knob ? s->knob.name : "pcp sysctl",
                 s->has_knob ? s->knob.value : (int64_t) -1,
                 in->knob && in->knob->admin_override ? " (admin)" : in->knob && in->knob->managed ? " (managed)" : "",
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
