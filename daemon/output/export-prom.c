/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "export-prom.h"
#include "log.h"
#include "util.h"

struct PromEmit {
        FILE *f;
        const PromMetric *metric;
        size_t n_samples;
        bool bad_value;
};

struct PromWriter {
        char *dir;
        int dir_fd;
        char *name;                     /* PROM_FILE unless given */
        char *tmp;                      /* ".NAME.tmp" */
        char *lock_dir;
        char *lock_path;                /* lock_dir/metrics-DEV-INO.lock (another name: -NAME before .lock) */
        int lock_fd;                    /* >= 0 while we hold the lock */
};

const char *prom_type_to_string(PromType t) {
        static const char *const names[_PROM_TYPE_MAX] = {
                [PROM_GAUGE] = "gauge",
                [PROM_COUNTER] = "counter",
                [PROM_HISTOGRAM] = "histogram",
        };
        return t >= 0 && t < _PROM_TYPE_MAX ? names[t] : NULL;
}

/* ---- the text format ------------------------------------------------------ */

/* HELP text escapes backslash and newline; label values also the double quote. */
static void put_escaped(FILE *f, const char *s, bool quote) {
        while (*s) {
                size_t n = strcspn(s, quote ? "\\\n\"" : "\\\n");
                fwrite(s, 1, n, f);
                s += n;
                if (*s == '\\')
                        fputs("\\\\", f);
                else if (*s == '\n')
                        fputs("\\n", f);
                else if (*s == '"')
                        fputs("\\\"", f);
                else
                        break;
                s++;
        }
}

/* Integers print exactly (byte counts go past 2^32); other values with 15 significant digits. */
static void put_value(FILE *f, double v) {
        if (isnan(v))
                fputs("NaN", f);
        else if (isinf(v))
                fputs(v > 0 ? "+Inf" : "-Inf", f);
        else if (v == floor(v) && fabs(v) < 9.0e15)
                fprintf(f, "%" PRId64, (int64_t) v);
        else
                fprintf(f, "%.15g", v);
}

void prom_emit(PromEmit *e, double value, ...) {
        const PromMetric *m = e->metric;
        va_list ap;

        if (m->type == PROM_COUNTER && (!isfinite(value) || value < 0)) {
                e->bad_value = true;
                return;
        }
        if (e->n_samples++ == 0) {
                fprintf(e->f, "# HELP %s ", m->name);
                put_escaped(e->f, m->help, false);
                fprintf(e->f, "\n# TYPE %s %s\n", m->name, prom_type_to_string(m->type));
        }
        fputs(m->name, e->f);
        va_start(ap, value);
        for (size_t i = 0; m->labels[i]; i++) {
                const char *v = va_arg(ap, const char *);
                fprintf(e->f, "%s%s=\"", i == 0 ? "{" : ",", m->labels[i]);
                put_escaped(e->f, strna(v), true);
                fputc('"', e->f);
                if (!m->labels[i + 1])
                        fputc('}', e->f);
        }
        va_end(ap);
        fputc(' ', e->f);
        put_value(e->f, value);
        fputc('\n', e->f);
}

void prom_emit_histogram(PromEmit *e, const double *bounds, const uint64_t *cumulative, size_t n, double sum,
                         uint64_t count) {
        const PromMetric *m = e->metric;
        char le[32];

        if (m->type != PROM_HISTOGRAM || !isfinite(sum) || sum < 0) {
                e->bad_value = true;
                return;
        }
        if (e->n_samples++ == 0) {
                fprintf(e->f, "# HELP %s ", m->name);
                put_escaped(e->f, m->help, false);
                fprintf(e->f, "\n# TYPE %s histogram\n", m->name);
        }
        for (size_t i = 0; i < n; i++) {
                snprintf(le, sizeof le, "%.15g", bounds[i]);
                fprintf(e->f, "%s_bucket{le=\"%s\"} ", m->name, le);
                put_value(e->f, (double) cumulative[i]);
                fputc('\n', e->f);
        }
        fprintf(e->f, "%s_bucket{le=\"+Inf\"} ", m->name);
        put_value(e->f, (double) count);
        fprintf(e->f, "\n%s_sum ", m->name);
        put_value(e->f, sum);
        fprintf(e->f, "\n%s_count ", m->name);
        put_value(e->f, (double) count);
        fputc('\n', e->f);
}

/* ---- getters: each reads what the status report reads ---------------------- */

static const Snapshot *snap(const PromInput *in) {
        return in->report->snap;
}

static void get_info(const PromInput *in, PromEmit *e) {
        const Snapshot *s = snap(in);
        prom_emit(e, 1, strna(s->topo.kernel_release), strna(pcp_regime_to_string(s->regime)));
}

static void get_build_info(const PromInput *in, PromEmit *e) {
        prom_emit(e, 1, strna(in->version));
}

static void get_reload_ok(const PromInput *in, PromEmit *e) {
        prom_emit(e, in->counters->config_reload_ok ? 1 : 0);
}

static void get_reload_success_time(const PromInput *in, PromEmit *e) {
        if (in->counters->config_reload_success_realtime_usec > 0)
                prom_emit(e, (double) (in->counters->config_reload_success_realtime_usec / USEC_PER_SEC));
}

static void get_config_info(const PromInput *in, PromEmit *e) {
        if (*in->counters->policy_hash)
                prom_emit(e, 1, in->counters->policy_hash);
}

static void get_knob_last_change(const PromInput *in, PromEmit *e) {
        for (size_t i = 0; i < in->n_knobs; i++)
                if (in->knobs[i].present || in->knobs[i].counters->last_change_realtime_usec > 0)
                        prom_emit(e, (double) (in->knobs[i].counters->last_change_realtime_usec / USEC_PER_SEC),
                                  in->knobs[i].name);
}

static void get_knob_last_errno(const PromInput *in, PromEmit *e) {
        for (size_t i = 0; i < in->n_knobs; i++)
                if (in->knobs[i].present || in->knobs[i].counters->last_errno > 0)
                        prom_emit(e, (double) in->knobs[i].counters->last_errno, in->knobs[i].name);
}

static void get_journal_held(const PromInput *in, PromEmit *e) {
        prom_emit(e, (double) in->counters->journal_held);
}

static void get_crash_restore(const PromInput *in, PromEmit *e) {
        int c = in->counters->crash_restore;
        prom_emit(e, c == CRASH_RESTORE_NONE ? 1 : 0, "none");
        prom_emit(e, c == CRASH_RESTORE_PENDING ? 1 : 0, "pending");
        prom_emit(e, c == CRASH_RESTORE_DONE ? 1 : 0, "done");
}

static void get_dry_run(const PromInput *in, PromEmit *e) {
        prom_emit(e, in->report->dry_run ? 1 : 0);
}

static void get_knob_value(const PromInput *in, PromEmit *e) {
        for (size_t i = 0; i < in->n_knobs; i++)
                if (in->knobs[i].present)
                        prom_emit(e, (double) in->knobs[i].value, in->knobs[i].name);
}

static void get_knob_target(const PromInput *in, PromEmit *e) {
        for (size_t i = 0; i < in->n_knobs; i++)
                if (in->knobs[i].present && in->knobs[i].has_target)
                        prom_emit(e, (double) in->knobs[i].target, in->knobs[i].name);
}

/* What a stop would leave: the journaled original while managed, else what the knob holds. */
static void get_knob_original(const PromInput *in, PromEmit *e) {
        for (size_t i = 0; i < in->n_knobs; i++) {
                const PromKnob *k = &in->knobs[i];
                if (!k->present)
                        continue;
                bool managed = k->knob && k->knob->managed && !k->knob->admin_override;
                prom_emit(e, (double) (managed ? k->knob->original : k->value), k->name);
        }
}

static void get_knob_state(const PromInput *in, PromEmit *e) {
        static const char *const states[] = { "managed", "admin_changed", "not_managed" };
        for (size_t i = 0; i < in->n_knobs; i++) {
                const PromKnob *k = &in->knobs[i];
                if (!k->present)
                        continue;
                size_t now = k->knob && k->knob->admin_override ? 1 : k->knob && k->knob->managed ? 0 : 2;
                for (size_t st = 0; st < ELEMENTSOF(states); st++)
                        prom_emit(e, st == now ? 1 : 0, k->name, states[st]);
        }
}

static void get_knob_writes(const PromInput *in, PromEmit *e) {
        for (size_t i = 0; i < in->n_knobs; i++)
                if (in->knobs[i].present || in->knobs[i].counters->writes > 0)
                        prom_emit(e, (double) in->knobs[i].counters->writes, in->knobs[i].name);
}

static void get_knob_restores(const PromInput *in, PromEmit *e) {
        for (size_t i = 0; i < in->n_knobs; i++)
                if (in->knobs[i].present || in->knobs[i].counters->restores > 0)
                        prom_emit(e, (double) in->knobs[i].counters->restores, in->knobs[i].name);
}

static void get_knob_refused(const PromInput *in, PromEmit *e) {
        for (size_t i = 0; i < in->n_knobs; i++)
                if (in->knobs[i].present || in->knobs[i].counters->refused > 0)
                        prom_emit(e, (double) in->knobs[i].counters->refused, in->knobs[i].name);
}

static void get_rule_state(const PromInput *in, PromEmit *e) {
        static const char *const states[_RULE_VERDICT_MAX] = {
                [RULE_ACTIVE] = "active",
                [RULE_INACTIVE] = "inactive",
                [RULE_HOST_MISMATCH] = "host_mismatch",
                [RULE_UNAVAILABLE] = "unavailable",
        };
        const Decision *p = in->report->decision;
        for (size_t i = 0; p && i < p->n_rules; i++)
                for (int v = 0; v < _RULE_VERDICT_MAX; v++)
                        prom_emit(e, (int) p->rules[i].verdict == v ? 1 : 0, p->rules[i].policy->name,
                                  p->rules[i].rule->name, states[v]);
}

static void get_memcgs(const PromInput *in, PromEmit *e) {
        const Snapshot *s = snap(in);
        if (!s->has_memcg || s->memcg.mode == CGROUP_MEMORY_NONE)
                return;
        prom_emit(e, (double) s->memcg.live, "live");
        prom_emit(e, (double) s->memcg.dying, "dying");
}

static void get_percpu_split(const PromInput *in, PromEmit *e) {
        const char *b;
        PercpuSplit sp;
        if (!report_split(in->report, &sp))
                return;
        b = percpu_basis_to_string(sp.cost.basis);
        prom_emit(e, (double) sp.live_memcgs_bytes, "live_memcgs", b);
        prom_emit(e, (double) sp.dying_memcgs_bytes, "dying_memcgs", b);
        prom_emit(e, (double) sp.other_bytes, "other", "estimated");
        if (sp.has_fragmentation)
                prom_emit(e, (double) sp.fragmentation_bytes, "fragmentation", "measured");
}

static void get_memcg_cost(const PromInput *in, PromEmit *e) {
        PercpuSplit sp;
        if (report_split(in->report, &sp))
                prom_emit(e, sp.cost.bytes, percpu_basis_to_string(sp.cost.basis));
}

static void get_memcg_ids(const PromInput *in, PromEmit *e) {
        MemcgIdUsage u;
        if (snapshot_memcg_ids(snap(in), &u) < 0)
                return;
        prom_emit(e, (double) u.used, "lower");
        prom_emit(e, (double) u.used_max, "upper");
}

static void get_memcg_ids_limit(const PromInput *in, PromEmit *e) {
        MemcgIdUsage u;
        if (snapshot_memcg_ids(snap(in), &u) >= 0)
                prom_emit(e, (double) u.limit);
}

static void get_pcp_list_bytes(const PromInput *in, PromEmit *e) {
        const Snapshot *s = snap(in);
        char node[16];
        for (size_t i = 0; i < s->n_pcp_zones; i++) {
                snprintf(node, sizeof node, "%d", s->pcp_zones[i].node);
                prom_emit(e, (double) s->pcp_zone_count_pages[i] * s->topo.page_size, node, s->pcp_zones[i].name);
        }
}

static void get_pcp_high_limit(const PromInput *in, PromEmit *e) {
        const Snapshot *s = snap(in);
        char node[16];
        for (size_t i = 0; i < s->n_pcp_zones; i++) {
                if (s->pcp_zone_high_limit[i] < 0)
                        continue;
                snprintf(node, sizeof node, "%d", s->pcp_zones[i].node);
                prom_emit(e, (double) s->pcp_zone_high_limit[i], node, s->pcp_zones[i].name);
        }
}

/* pcp high and batch now: the largest over the zone's CPUs (node_exporter's zoneinfo collector prints per
 * CPU; these are per zone, the bounded set). */
static void get_pcp_now(const PromInput *in, PromEmit *e, bool batch) {
        const Zoneinfo *zi = &snap(in)->zoneinfo;
        char node[16];
        for (size_t i = 0; i < zi->n_zones; i++) {
                const Zone *z = &zi->zones[i];
                int64_t v = -1;
                if (!z->populated || z->n_cpus == 0)
                        continue;
                for (size_t c = 0; c < z->n_cpus; c++)
                        v = MAX(v, batch ? z->cpus[c].batch : z->cpus[c].high);
                snprintf(node, sizeof node, "%d", z->node);
                prom_emit(e, (double) v, node, z->name);
        }
}

static void get_pcp_high(const PromInput *in, PromEmit *e) {
        get_pcp_now(in, e, false);
}

static void get_pcp_batch(const PromInput *in, PromEmit *e) {
        get_pcp_now(in, e, true);
}

static void get_reclaim_runs(const PromInput *in, PromEmit *e) {
        prom_emit(e, (double) in->counters->reclaim_runs);
}

static void get_reclaim_scan_failures(const PromInput *in, PromEmit *e) {
        prom_emit(e, (double) in->counters->reclaim_scan_failures);
}

static void get_reclaim_freed(const PromInput *in, PromEmit *e) {
        prom_emit(e, (double) in->counters->reclaim_freed_bytes);
}

static void get_reclaim_seconds(const PromInput *in, PromEmit *e) {
        prom_emit(e, (double) in->counters->reclaim_usec / 1e6);
}

/* Every outcome, zeros included: a rate() over a series that appears late misses its first step. */
static void get_reclaim_outcomes(const PromInput *in, PromEmit *e) {
        /* Label values are identifiers (reclaim_outcome_to_string() is prose for the log). */
        static const char *const outcomes[_RECLAIM_OUTCOME_MAX] = {
                [RECLAIM_DONE] = "reclaimed",
                [RECLAIM_SKIPPED_POLICY] = "skipped_policy",
                [RECLAIM_GONE] = "gone",
                [RECLAIM_BUSY] = "busy",
                [RECLAIM_FAILED] = "failed",
                [RECLAIM_TIMED_OUT] = "timed_out",
                [RECLAIM_NOT_RUN] = "not_reached",
                [RECLAIM_NOTHING] = "nothing_reclaimable",
                [RECLAIM_SKIPPED_SWAP] = "skipped_swap",
                [RECLAIM_SKIPPED_REFAULTS] = "skipped_refaults",
        };
        for (int o = 0; o < _RECLAIM_OUTCOME_MAX; o++)
                if (outcomes[o])
                        prom_emit(e, (double) in->counters->reclaim_outcomes[o], outcomes[o]);
}

static void get_reclaim_refaults(const PromInput *in, PromEmit *e) {
        prom_emit(e, (double) in->counters->reclaim_refaults);
}

static void get_reclaim_refault_windows(const PromInput *in, PromEmit *e) {
        prom_emit(e, (double) in->counters->reclaim_refault_windows);
}

/* The last measured run: 0 before the first (every metric is served from the first sample on). */
static void get_last_refaults(const PromInput *in, PromEmit *e) {
        prom_emit(e, in->counters->has_last_refaults ? (double) in->counters->last_refaults : 0);
}

static void get_last_refault_rate(const PromInput *in, PromEmit *e) {
        prom_emit(e, in->counters->has_last_refaults ? in->counters->last_refault_rate_max : 0);
}

static void get_last_refault_window(const PromInput *in, PromEmit *e) {
        prom_emit(e, in->counters->has_last_refaults ? (double) in->counters->last_refault_window_usec / 1e6 : 0);
}

static void get_refault_blocked(const PromInput *in, PromEmit *e) {
        prom_emit(e, (double) in->counters->refault_blocked);
}

/* A state set: 1 for the current answer, 0 for the others. */
static void get_reclaim_swappiness(const PromInput *in, PromEmit *e) {
        int v = in->counters->reclaim_swappiness;
        prom_emit(e, v == 1 ? 1.0 : 0.0, "yes");
        prom_emit(e, v == 0 ? 1.0 : 0.0, "no");
        prom_emit(e, v < 0 ? 1.0 : 0.0, "unknown");
}

/* Bulk-free holds traced by the daemon (source-bulkfree.h): present only while measured. */
static const BulkFreeView *bulk_free(const PromInput *in) {
        const BulkFreeView *v = in->report->bulk_free;
        return v && v->available ? v : NULL;
}

static void get_bulk_free_hold(const PromInput *in, PromEmit *e) {
        const BulkFreeView *v = bulk_free(in);
        uint64_t cumulative[BULK_FREE_HIST_BUCKETS], n = 0;
        if (!v)
                return;
        for (size_t i = 0; i < BULK_FREE_HIST_BUCKETS; i++)
                cumulative[i] = n += v->c.hist.buckets[i];
        prom_emit_histogram(e, bulk_free_hist_bounds, cumulative, BULK_FREE_HIST_BUCKETS, v->c.hist.sum_seconds,
                            v->c.hist.count);
}

/* The bulk_free_p99 goal of the rule deciding the high fraction now. */
static void get_bulk_free_goal(const PromInput *in, PromEmit *e) {
        const Decision *d = in->report->decision;
        if (!d)
                return;
        const KnobDecision *k = &d->knobs[KNOB_PCP_HIGH_FRACTION];
        if (k->wanted && k->goal.kind == PCP_GOAL_BULK_FREE_P99)
                prom_emit(e, (double) k->goal.value / 1e9);
}

static void get_bulk_free_pages(const PromInput *in, PromEmit *e) {
        const BulkFreeView *v = bulk_free(in);
        if (!v || v->sum.samples == 0)
                return;
        prom_emit(e, (double) v->sum.pages_p99, "p99");
        prom_emit(e, (double) v->sum.pages_max, "max");
}

static void get_bulk_free_samples(const PromInput *in, PromEmit *e) {
        const BulkFreeView *v = bulk_free(in);
        if (v)
                prom_emit(e, (double) v->sum.samples);
}

static void get_bulk_free_traced(const PromInput *in, PromEmit *e) {
        const BulkFreeView *v = bulk_free(in);
        if (v)
                prom_emit(e, (double) v->c.traced_usec / 1e6);
}

static void get_bulk_free_lost(const PromInput *in, PromEmit *e) {
        const BulkFreeView *v = bulk_free(in);
        if (v)
                prom_emit(e, (double) v->c.lost);
}

static void get_bulk_free_cpu(const PromInput *in, PromEmit *e) {
        const BulkFreeView *v = bulk_free(in);
        if (v)
                prom_emit(e, (double) v->c.cost_usec / 1e6);
}

static void get_exit_rate(const PromInput *in, PromEmit *e) {
        const MetricValues *mv = in->report->mv;
        if (mv->available[METRIC_PROC_EXIT_RATE])
                prom_emit(e, mv->value[METRIC_PROC_EXIT_RATE]);
}

static void get_exits(const PromInput *in, PromEmit *e) {
        if (in->counters->has_exits)
                prom_emit(e, (double) in->counters->exits);
}

static void get_samples(const PromInput *in, PromEmit *e) {
        prom_emit(e, (double) in->counters->samples);
}

static void get_sample_failures(const PromInput *in, PromEmit *e) {
        prom_emit(e, (double) in->counters->sample_failures);
}

static void get_sample_duration(const PromInput *in, PromEmit *e) {
        prom_emit(e, (double) in->counters->last_sample_usec / 1e6);
}

static void get_sample_cpu(const PromInput *in, PromEmit *e) {
        prom_emit(e, (double) in->counters->sample_cpu_usec / 1e6);
}

static void get_last_sample(const PromInput *in, PromEmit *e) {
        prom_emit(e, (double) in->counters->last_sample_realtime_usec / 1e6);
}

/*
 * The exported metrics: names are an API (dashboards and alerts use them), so
 * never rename one; pcptuned(8) lists every row (a test compares).
 */
static const PromMetric prom_table[] = {
        { "pcptune_build_info", PROM_GAUGE, "", { "version", NULL }, "pcptune's version; always 1", get_build_info },
        { "pcptune_info", PROM_GAUGE, "", { "kernel", "regime", NULL },
          "kernel release and pcp regime (legacy, fixed, autotune); always 1", get_info },
        { "pcptune_config_last_reload_successful", PROM_GAUGE, "", { NULL },
          "1 if the last policy load (start, SIGHUP or a change of the policy directory) succeeded, else 0",
          get_reload_ok },
        { "pcptune_config_last_reload_success_timestamp_seconds", PROM_GAUGE, "seconds", { NULL },
          "when the last successful policy load happened (Unix time)", get_reload_success_time },
        { "pcptune_config_info", PROM_GAUGE, "", { "policy_hash", NULL },
          "the policy set in use: policy_hash is a hash of its files' names and contents; always 1", get_config_info },
        { "pcptune_journal_held_values", PROM_GAUGE, "", { NULL },
          "knobs whose original values the restore journal holds (0 in a dry run)", get_journal_held },
        { "pcptune_journal_crash_restore", PROM_GAUGE, "", { "state", NULL },
          "1 for the state of a crashed predecessor's restore journal (none, pending, done at this start), 0 for the "
          "others", get_crash_restore },
        { "pcptune_dry_run", PROM_GAUGE, "", { NULL },
          "1 when pcptuned runs with --dry-run (observes, never writes), else 0", get_dry_run },
        { "pcptune_knob_value", PROM_GAUGE, "", { "knob", NULL }, "value the knob holds now", get_knob_value },
        { "pcptune_knob_target_value", PROM_GAUGE, "", { "knob", NULL },
          "value the winning active rule wants the knob to hold (dry-run: would write); absent when none wants one",
          get_knob_target },
        { "pcptune_knob_original_value", PROM_GAUGE, "", { "knob", NULL },
          "value a stop leaves: the recorded original while pcptuned manages the knob, else the current value",
          get_knob_original },
        { "pcptune_knob_state", PROM_GAUGE, "", { "knob", "state", NULL },
          "1 for the knob's state (managed, admin_changed, not_managed), 0 for the others", get_knob_state },
        { "pcptune_knob_writes_total", PROM_COUNTER, "", { "knob", NULL }, "values pcptuned wrote to the knob",
          get_knob_writes },
        { "pcptune_knob_restores_total", PROM_COUNTER, "", { "knob", NULL },
          "original values pcptuned wrote back to the knob", get_knob_restores },
        { "pcptune_knob_refused_writes_total", PROM_COUNTER, "", { "knob", NULL },
          "writes refused or failed: out of range, unreadable, refused by the kernel, or not journaled",
          get_knob_refused },
        { "pcptune_knob_last_change_timestamp_seconds", PROM_GAUGE, "seconds", { "knob", NULL },
          "when pcptuned last wrote or restored the knob (Unix time; 0: never)", get_knob_last_change },
        { "pcptune_knob_last_write_errno", PROM_GAUGE, "", { "knob", NULL },
          "errno of the last write or restore of the knob that failed; 0 when the last one succeeded, or none yet",
          get_knob_last_errno },
        { "pcptune_rule_state", PROM_GAUGE, "", { "policy", "rule", "state", NULL },
          "1 for the rule's state at the last sample (active, inactive, host_mismatch, unavailable), 0 for the others",
          get_rule_state },
        { "pcptune_memcgs", PROM_GAUGE, "", { "state", NULL },
          "memory cgroups, host-wide: live (root included) and dying (removed, not yet freed)", get_memcgs },
        { "pcptune_percpu_split_bytes", PROM_GAUGE, "bytes", { "part", "basis", NULL },
          "Percpu by holder: live_memcgs and dying_memcgs (count x per-memcg cost), other (the rest), fragmentation "
          "(measured, part of other); basis measured, estimated or modelled",
          get_percpu_split },
        { "pcptune_memcg_percpu_cost_bytes", PROM_GAUGE, "bytes", { "basis", NULL },
          "percpu memory one memcg costs here, all possible CPUs (measured by plan --measure, estimated, or modelled)",
          get_memcg_cost },
        { "pcptune_memcg_ids", PROM_GAUGE, "", { "bound", NULL },
          "memcg IDs taken: lower (live memcgs) and upper (plus dying ones while swap is in use)", get_memcg_ids },
        { "pcptune_memcg_ids_limit", PROM_GAUGE, "", { NULL },
          "memcg IDs the kernel has (16 bits): creating a memcg fails when all are taken", get_memcg_ids_limit },
        { "pcptune_pcp_list_bytes", PROM_GAUGE, "bytes", { "node", "zone", NULL },
          "free pages on the zone's per-cpu page lists, all CPUs", get_pcp_list_bytes },
        { "pcptune_pcp_high_max_pages", PROM_GAUGE, "pages", { "node", "zone", NULL },
          "largest pcp high of the zone: printed high_max (6.13+), the fixed high (5.14-6.6), else the model's",
          get_pcp_high_limit },
        { "pcptune_pcp_high_pages", PROM_GAUGE, "pages", { "node", "zone", NULL },
          "pcp high now: the largest over the zone's CPUs (dynamic since 6.7)", get_pcp_high },
        { "pcptune_pcp_batch_pages", PROM_GAUGE, "pages", { "node", "zone", NULL },
          "pcp batch now: the largest over the zone's CPUs", get_pcp_batch },
        { "pcptune_reclaim_runs_total", PROM_COUNTER, "", { NULL }, "reclaim-dying runs finished (dry-run: none)",
          get_reclaim_runs },
        { "pcptune_reclaim_scan_failures_total", PROM_COUNTER, "", { NULL },
          "reclaim-dying runs that failed to find the subtrees holding dying memcgs", get_reclaim_scan_failures },
        { "pcptune_reclaim_freed_bytes_total", PROM_COUNTER, "bytes", { NULL },
          "memory usage of the reclaimed subtrees before minus after, summed over runs", get_reclaim_freed },
        { "pcptune_reclaim_seconds_total", PROM_COUNTER, "seconds", { NULL },
          "wall-clock time reclaim-dying runs took (scan and writes)", get_reclaim_seconds },
        { "pcptune_reclaim_subtrees_total", PROM_COUNTER, "", { "outcome", NULL },
          "subtrees holding dying memcgs handled by reclaim-dying runs, by outcome", get_reclaim_outcomes },
        { "pcptune_reclaim_refaulted_pages_total", PROM_COUNTER, "pages", { NULL },
          "pages refaulted in the live cgroups of reclaimed subtrees, from just before each reclaim to the end of its "
          "refault window", get_reclaim_refaults },
        { "pcptune_reclaim_refault_windows_total", PROM_COUNTER, "", { NULL },
          "reclaim-dying runs whose refault window closed (measured)", get_reclaim_refault_windows },
        { "pcptune_reclaim_last_refaulted_pages", PROM_GAUGE, "pages", { NULL },
          "pages refaulted in the live cgroups of the subtrees of the last measured reclaim (0 before the first)",
          get_last_refaults },
        { "pcptune_reclaim_last_refault_max_pages_per_second", PROM_GAUGE, "", { NULL },
          "pages per second refaulted by the live cgroups of the worst subtree of the last measured reclaim",
          get_last_refault_rate },
        { "pcptune_reclaim_last_refault_window_seconds", PROM_GAUGE, "seconds", { NULL },
          "refault window of the last measured reclaim (counted until this long after the run)",
          get_last_refault_window },
        { "pcptune_reclaim_refault_skipped_subtrees", PROM_GAUGE, "", { NULL },
          "subtrees skipped now for their rule's cooldown: their live cgroups refaulted above max-refault-rate",
          get_refault_blocked },
        { "pcptune_reclaim_swappiness", PROM_GAUGE, "", { "answer", NULL },
          "1 for whether memory.reclaim takes swappiness= (yes: reclaim writes '<bytes> swappiness=0'; unknown: "
          "cgroup v1 or not probed)", get_reclaim_swappiness },
        { "pcptune_pcp_bulk_free_hold_seconds", PROM_HISTOGRAM, "seconds", { NULL },
          "pcp bulk-free zone->lock holds traced since the start (lower bounds of the hold)", get_bulk_free_hold },
        { "pcptune_pcp_bulk_free_goal_seconds", PROM_GAUGE, "seconds", { NULL },
          "bulk_free_p99 target of the rule that decides vm.percpu_pagelist_high_fraction now (absent when none)",
          get_bulk_free_goal },
        { "pcptune_pcp_bulk_free_pages", PROM_GAUGE, "pages", { "stat", NULL },
          "pages moved per pcp bulk free over the last 10 minutes (stat p99 and max)", get_bulk_free_pages },
        { "pcptune_pcp_bulk_free_samples", PROM_GAUGE, "", { NULL },
          "pcp bulk frees measured in the last 10 minutes", get_bulk_free_samples },
        { "pcptune_pcp_bulk_free_traced_seconds_total", PROM_COUNTER, "seconds", { NULL },
          "time the trace instance recorded bulk frees", get_bulk_free_traced },
        { "pcptune_pcp_bulk_free_lost_events_total", PROM_COUNTER, "", { NULL },
          "trace events the kernel dropped because the instance's buffer was full", get_bulk_free_lost },
        { "pcptune_pcp_bulk_free_read_cpu_seconds_total", PROM_COUNTER, "seconds", { NULL },
          "CPU time pcptuned spent reading and parsing the trace buffer", get_bulk_free_cpu },
        { "pcptune_process_exits_per_second", PROM_GAUGE, "", { NULL },
          "process exit rate the policies see (proc.exit_rate; only while a rule uses it)", get_exit_rate },
        { "pcptune_process_exits_total", PROM_COUNTER, "", { NULL },
          "process exits counted on the proc connector (only while a rule uses proc.exit_rate)", get_exits },
        { "pcptune_samples_total", PROM_COUNTER, "", { NULL }, "samples taken", get_samples },
        { "pcptune_sample_failures_total", PROM_COUNTER, "", { NULL },
          "samples that failed to read the kernel's state", get_sample_failures },
        { "pcptune_sample_duration_seconds", PROM_GAUGE, "seconds", { NULL },
          "wall-clock time of the last sample (read, evaluate, act)", get_sample_duration },
        { "pcptune_sample_cpu_seconds_total", PROM_COUNTER, "seconds", { NULL }, "CPU time spent in samples",
          get_sample_cpu },
        { "pcptune_last_sample_timestamp_seconds", PROM_GAUGE, "seconds", { NULL },
          "when the last sample ended (Unix time)", get_last_sample },
};

size_t prom_metrics(const PromMetric **ret) {
        *ret = prom_table;
        return ELEMENTSOF(prom_table);
}

int prom_render(const PromInput *in, FILE *f) {
        for (size_t i = 0; i < ELEMENTSOF(prom_table); i++) {
                PromEmit e = { .f = f, .metric = &prom_table[i] };
                prom_table[i].get(in, &e);
                if (e.bad_value)
                        return -EINVAL;
        }
        fflush(f);
        return ferror(f) ? -EIO : 0;
}

/* ---- the textfile writer -------------------------------------------------- */

bool prom_file_name_valid(const char *name) {
        size_t n = name ? strlen(name) : 0;
        if (n <= strlen(".prom") || n >= 128 || name[0] == '.' || !streq(name + n - strlen(".prom"), ".prom"))
                return false;
        for (const char *c = name; *c; c++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
                      *c == '-' || *c == '.'))
                        return false;
        return true;
}

int prom_writer_open_name(const char *dir, const char *name, const char *lock_dir, PromWriter **ret) {
        _cleanup_(prom_writer_freep) PromWriter *w = NULL;
        struct stat st;

        if (!prom_file_name_valid(name))
                return -EINVAL;
        w = calloc(1, sizeof(PromWriter));
        if (!w)
                return -ENOMEM;
        w->dir_fd = w->lock_fd = -EBADF;
        w->dir = strdup(dir);
        w->name = strdup(name);
        w->lock_dir = strdup(lock_dir);
        if (!w->dir || !w->name || !w->lock_dir || asprintf(&w->tmp, ".%s.tmp", name) < 0)
                return -ENOMEM;
        w->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (w->dir_fd < 0)
                return -errno;
        if (fstat(w->dir_fd, &st) < 0)
                return -errno;
        /* One lock per file: the service's default file and a canary's own name never wait on each other. */
        if (asprintf(&w->lock_path, "%s/metrics-%ju-%ju%s%s.lock", lock_dir, (uintmax_t) st.st_dev,
                     (uintmax_t) st.st_ino, streq(name, PROM_FILE) ? "" : "-", streq(name, PROM_FILE) ? "" : name) < 0) {
                w->lock_path = NULL;
                return -ENOMEM;
        }
        *ret = TAKE_PTR(w);
        return 0;
}

int prom_writer_lock(PromWriter *w) {
        _cleanup_(closep) int fd = -EBADF;
        struct stat st, now;
        int r;

        if (w->lock_fd >= 0)
                return 0;
        r = mkdir_p(w->lock_dir, 0755);
        if (r < 0)
                return r;
        /* 0600 and no symlink: only root opens it, so only root can hold it. */
        fd = open(w->lock_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0600);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
                return -EPERM;
        if ((st.st_mode & 07777) != 0600 && fchmod(fd, 0600) < 0)
                return -errno;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0)
                return errno == EWOULDBLOCK ? -EBUSY : -errno;
        /* The holder before us unlinked it on its stop after we opened it: that lock is on no name. */
        if (lstat(w->lock_path, &now) < 0 || now.st_dev != st.st_dev || now.st_ino != st.st_ino)
                return -EBUSY;
        w->lock_fd = TAKE_FD(fd);
        return 0;
}

const char *prom_writer_lock_path(const PromWriter *w) {
        return w ? w->lock_path : NULL;
}

int prom_writer_open(const char *dir, const char *lock_dir, PromWriter **ret) {
        return prom_writer_open_name(dir, PROM_FILE, lock_dir, ret);
}

const char *prom_writer_name(const PromWriter *w) {
        return w ? w->name : PROM_FILE;
}

static int write_all(int fd, const char *p, size_t n) {
        while (n > 0) {
                ssize_t k = write(fd, p, n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

int prom_writer_write(PromWriter *w, const PromInput *in) {
        _cleanup_(freep) char *buf = NULL;
        _cleanup_(closep) int fd = -EBADF;
        size_t len = 0;
        FILE *f;
        int r;

        r = prom_writer_lock(w);
        if (r < 0)
                return r;
        f = open_memstream(&buf, &len);
        if (!f)
                return -ENOMEM;
        r = prom_render(in, f);
        if (fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0)
                return r;

        /* O_EXCL: never open through whatever has the name.  A temporary left by a crash is ours
         * (we hold the lock): remove it and create it again. */
        fd = openat(w->dir_fd, w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0 && errno == EEXIST) {
                if (unlinkat(w->dir_fd, w->tmp, 0) < 0 && errno != ENOENT)
                        return -errno;
                fd = openat(w->dir_fd, w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        }
        if (fd < 0)
                return -errno;
        /* 0644 whatever the umask: node_exporter runs as its own user. */
        r = fchmod(fd, 0644) < 0 ? -errno : write_all(fd, buf, len);
        if (r >= 0 && close(TAKE_FD(fd)) < 0)
                r = -errno;
        if (r >= 0 && renameat(w->dir_fd, w->tmp, w->dir_fd, w->name) < 0)
                r = -errno;
        if (r < 0) {
                (void) unlinkat(w->dir_fd, w->tmp, 0);
                return r;
        }
        return 0;
}

int prom_writer_remove(PromWriter *w) {
        if (!w || w->lock_fd < 0)
                return 0;
        (void) unlinkat(w->dir_fd, w->tmp, 0);
        int r = unlinkat(w->dir_fd, w->name, 0) < 0 && errno != ENOENT ? -errno : 0;
        /* Unlinked while held: a writer waiting on it sees another inode at the name and tries again. */
        (void) unlink(w->lock_path);
        close(w->lock_fd);
        w->lock_fd = -EBADF;
        return r;
}

const char *prom_writer_dir(const PromWriter *w) {
        return w ? w->dir : NULL;
}

PromWriter *prom_writer_free(PromWriter *w) {
        if (!w)
                return NULL;
        if (w->dir_fd >= 0)
                close(w->dir_fd);
        if (w->lock_fd >= 0)
                close(w->lock_fd);
        free(w->dir);
        free(w->name);
        free(w->tmp);
        free(w->lock_dir);
        free(w->lock_path);
        free(w);
        return NULL;
}
