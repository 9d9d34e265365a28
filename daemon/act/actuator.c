/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>
#include <limits.h>
#include <unistd.h>

#include "actuator.h"
#include "journal.h"
#include "log.h"
#include "messages.h"
#include "model-percpu.h"
#include "onstop.h"
#include "probe-percpu.h"
#include "repair.h"
#include "source-percpu-stats.h"
#include "source-table.h"

#define RESUME_PREFIX "resume-"

struct Actuator {
        char *root;
        char *state_dir;
        bool dry_run;
        bool once;
        DaemonCounters *counters;
        int (*observe)(const char *root, unsigned sources, Snapshot **ret);
        ActReport *report;                 /* of the actuator_act() running, NULL outside it */
        sd_event *event;
        const char *calibration_note;

        /* The knob table's rows at run time, by KnobId. */
        KnobState knobs[_KNOB_ID_MAX];
        KnobCounters counts[_KNOB_ID_MAX];
        bool has_target[_KNOB_ID_MAX];      /* what the last decision wanted the knob to hold */
        int64_t target[_KNOB_ID_MAX];
        FeatureState probe_state[_KNOB_ID_MAX]; /* does the kernel take the row's probe value? */
        Journal *journal;
        unsigned failures;                 /* writes that failed */
        bool warned_readonly;
        bool warned_no_knob;
        bool crash_restored;               /* a crashed run's journal was restored at the start */

        char **warned_rules;               /* "policy/rule" already told about something unavailable */
        size_t n_warned_rules;

        ReclaimWorker *reclaim;
        sd_event_source *followup;    /* one more look at dying/Percpu a few seconds after a reclaim */
        char *reclaim_label;          /* "policy/rule" of the running or last reclaim */
        uint64_t reclaim_dying_before, reclaim_percpu_before_kib;
        usec_t reclaim_started;
        usec_t reclaim_cooldown_usec;      /* of the rule of the running or last reclaim */
        ReclaimWatch watch;                /* refaults after each reclaim, the swappiness= probe */
        sd_event_source *refault_timer;    /* closes the refault window */
        char *watch_mount;                 /* the hierarchy the open window reads */
        CgroupMode watch_mode;
        bool args_probed;
        MemcgCost memcg_cost;              /* of the last sample (actuator_set_memcg_cost()) */
        MemcgCost reclaim_cost;            /* ... when the running or last reclaim started */

        /* percpu_stats holds pcpu_lock with IRQs off for the whole read (3 ms with 12k allocations):
         * read at most every PERCPU_STATS_MIN_INTERVAL, and stop when one read cost too much. */
        usec_t percpu_stats_last;
        usec_t percpu_stats_cost;
};

/*
 * A row's probe value is found out by writing it.  A root tree other than "/" (fixtures, snapshots, test
 * trees) cannot say no, so it declares it in the row's probe_declared file: 1 stands for a kernel that
 * takes the value (for the high fraction: one with the contrib patch).
 */
static FeatureState actuator_declared_probe(const Actuator *a, const KnobDesc *d) {
        int64_t v;
        if (d->probe == KNOB_PROBE_NONE || streq(a->root, "/"))
                return FEATURE_UNKNOWN;
        return d->probe_declared && read_int64_at(a->root, d->probe_declared, &v) >= 0 && v == 1 ? FEATURE_PRESENT
                                                                                                  : FEATURE_ABSENT;
}

int actuator_new(const ActuatorConfig *cfg, Actuator **ret) {
        _cleanup_(actuator_freep) Actuator *a = calloc(1, sizeof(Actuator));

        if (!a)
                return -ENOMEM;
        a->root = strdup(cfg->root);
        a->state_dir = strdup(cfg->state_dir);
        if (!a->root || !a->state_dir)
                return -ENOMEM;
        a->dry_run = cfg->dry_run;
        a->once = cfg->once;
        a->counters = cfg->counters;
        a->observe = cfg->observe;
        snprintf(a->memcg_cost.how, sizeof a->memcg_cost.how, "unknown");
        for (KnobId id = 0; id < _KNOB_ID_MAX; id++) {
                a->knobs[id] = (KnobState){ .desc = knob_desc(id) };
                a->probe_state[id] = actuator_declared_probe(a, knob_desc(id));
        }
        *ret = TAKE_PTR(a);
        return 0;
}

Actuator *actuator_free(Actuator *a) {
        if (!a)
                return NULL;
        reclaim_worker_stop(a->reclaim);
        sd_event_source_disable_unref(a->followup);
        sd_event_source_disable_unref(a->refault_timer);
        reclaim_watch_done(&a->watch);
        free(a->watch_mount);
        free(a->reclaim_label);
        journal_free(a->journal);
        actuator_forget_warnings(a);
        free(a->root);
        free(a->state_dir);
        free(a);
        return NULL;
}

void actuator_set_event(Actuator *a, sd_event *e) {
        a->event = e;
}

void actuator_set_memcg_cost(Actuator *a, const MemcgCost *c) {
        a->memcg_cost = *c;
}

void actuator_set_calibration_note(Actuator *a, const char *note) {
        a->calibration_note = note;
}

const KnobState *actuator_knobs(const Actuator *a) {
        return a->knobs;
}

unsigned actuator_failures(const Actuator *a) {
        return a->failures;
}

const ReclaimWatch *actuator_watch(const Actuator *a) {
        return &a->watch;
}

size_t actuator_prom_knobs(const Actuator *a, PromKnob ret[_KNOB_ID_MAX]) {
        size_t n = 0;
        for (KnobId id = 0; id < _KNOB_ID_MAX; id++) {
                const KnobState *k = &a->knobs[id];
                if (!knob_managed(k->desc))
                        continue;
                ret[n++] = (PromKnob){ .name = k->desc->name, .knob = k, .present = k->present, .value = k->value,
                                       .has_target = a->has_target[id], .target = a->target[id],
                                       .counters = &a->counts[id] };
        }
        return n;
}

void actuator_forget_warnings(Actuator *a) {
        for (size_t i = 0; i < a->n_warned_rules; i++)
                free(a->warned_rules[i]);
        free(a->warned_rules);
        a->warned_rules = NULL;
        a->n_warned_rules = 0;
}

/* A journal left by a run that did not stop cleanly: restore what is still ours. */
static int actuator_restore_crash_journal(Actuator *a) {
        _cleanup_(journal_freep) Journal *old = NULL;
        char err[512];
        int r;

        /* Root's own journal (journal.h): another root's, in a shared state directory, is not ours to touch. */
        r = journal_load(a->state_dir, a->root, &old, err, sizeof err);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return log_error_errno(r, "Failed to read the restore journal in %s: %s; refusing to start over it "
                                          "(inspect it, then run `pcptunectl restore` or remove it)",
                                       a->state_dir, *err ? err : errno_str(r));
        log_notice("Found a restore journal from a run that did not stop cleanly (%zu knob%s); restoring",
                   old->n_entries, old->n_entries == 1 ? "" : "s");
        a->crash_restored = true;
        r = journal_restore(old, a->root, "restore after an unclean stop");
        return r < 0 ? r : 0;
}

int actuator_start(Actuator *a) {
        int r;

        /* A journal handed over by a pcptuned stopped with --on-stop=keep is adopted, not restored (onstop.h). */
        r = handover_adopt(a->state_dir, a->root, a->knobs, &a->journal);
        if (r != 0)
                return MIN(r, 0);
        r = actuator_restore_crash_journal(a);
        if (r < 0)
                return r;
        a->journal = journal_new(a->state_dir, a->root);
        if (!a->journal)
                return log_oom();
        return 0;
}

/* The unavailable-metric message is said once per rule (until the next reload). */
bool actuator_warn_once(Actuator *a, const char *policy, const char *rule) {
        _cleanup_(freep) char *key = NULL;
        char **n;

        if (asprintf(&key, "%s/%s", policy, rule) < 0)
                return false;
        for (size_t i = 0; i < a->n_warned_rules; i++)
                if (streq(a->warned_rules[i], key))
                        return false;
        n = realloc(a->warned_rules, (a->n_warned_rules + 1) * sizeof(char *));
        if (!n)
                return false;
        a->warned_rules = n;
        a->warned_rules[a->n_warned_rules++] = TAKE_PTR(key);
        return true;
}

/* Count what a knob_apply()/knob_release() did, for the metrics.  Returns r. */
static int knob_count(KnobCounters *c, bool dry_run, int r) {
        if (r == KNOB_WRITTEN)
                c->writes++;
        else if (r == KNOB_RESTORED && !dry_run)
                c->restores++;
        else if (r < 0)
                c->refused++;
        /* The last errno clears when a write succeeds or the knob holds the value wanted (a probe value the
         * kernel rejected, then the fallback already in place, is no refusal that lasts). */
        if (r < 0)
                c->last_errno = -r;
        else if (r == KNOB_NOOP)
                c->last_errno = 0;
        else if (r == KNOB_WRITTEN || (r == KNOB_RESTORED && !dry_run)) {
                c->last_errno = 0;
                c->last_change_realtime_usec = now_usec(CLOCK_REALTIME);
        }
        return r;
}


void act_report_done(ActReport *rep) {
        if (!rep)
                return;
        free(rep->done);
        *rep = (ActReport){ 0 };
}

/* An action ran at `at`: the report tells the cycle, which starts the rule's cooldown. */
static void actuator_done(Actuator *a, const DecidedAction *act, usec_t at) {
        ActReport *rep = a->report;
        ActDone *n;

        if (!rep)
                return;
        n = realloc(rep->done, (rep->n_done + 1) * sizeof(ActDone));
        if (!n) {
                log_oom();
                return;
        }
        rep->done = n;
        rep->done[rep->n_done++] = (ActDone){ .policy = act->policy, .rule = act->rule, .at = at };
}

/*
 * The snapshot's pcp knob is whichever of its two rows exists (pcp_knob_from_values()): say once when
 * neither does or the one there is read-only here.
 */
static void actuator_check_snapshot_knob(Actuator *a, const Snapshot *s) {
        if (!s->has_knob) {
                if (!a->warned_no_knob && s->knob_error == -ENOENT)
                        log_warning("This kernel has no pcp sysctl (%s): nothing to tune", SYSCTL_PCP_HIGH_FRACTION);
                else if (!a->warned_no_knob)
                        log_warning_errno(s->knob_error,
                                          "Failed to read the pcp sysctl below %s (%s, or %s before 5.14): %s; "
                                          "not tuning it",
                                          a->root, knob_desc(KNOB_PCP_HIGH_FRACTION)->path,
                                          knob_desc(KNOB_PCP_FRACTION)->path,
                                          s->knob_error == -EINVAL ? "it holds a value no kernel accepts"
                                                                   : errno_str(s->knob_error));
                a->warned_no_knob = true;
        } else if (!knob_desc(s->pcp_knob)->writable && knob_desc(s->pcp_knob)->readonly_why) {
                const KnobDesc *d = knob_desc(s->pcp_knob);
                if (!a->warned_readonly)
                        log_warning("%s = %" PRId64 " on kernel %s: %s; pcptune only reads it", d->name,
                                    snapshot_pcp_value(s), s->topo.kernel_release, d->readonly_why);
                a->warned_readonly = true;
        }
}

/* Every managed knob's state as the sample read it (the snapshot's knobs row): no second read. */
static void actuator_knobs_from_snapshot(Actuator *a, const Snapshot *s) {
        for (KnobId id = 0; id < _KNOB_ID_MAX; id++) {
                KnobState *k = &a->knobs[id];
                if (knob_managed(k->desc))
                        k->present = snapshot_knob_value(s, id, &k->value) >= 0;
        }
}

/* Read every managed knob again, after a write: present and value of each state, and the read-back for the
 * report (the cycle shows them in the sample). */
static void actuator_read_knobs(Actuator *a, ActReport *rep) {
        for (KnobId id = 0; id < _KNOB_ID_MAX; id++) {
                KnobState *k = &a->knobs[id];
                if (knob_managed(k->desc)) {
                        k->present = knob_read(a->root, k->desc, &k->value) >= 0;
                        rep->readback[id] = (KnobValue){ .present = k->present, .value = k->value };
                }
        }
        rep->has_readback = true;
}

/* A goal that cannot be met as asked, once per rule: why the evaluation ruled the solve unusable (d->usable
 * false: the knob is left alone), or that the minimum is used. */
static void actuator_explain_solve(Actuator *a, const KnobDesc *desc, const KnobDecision *d) {
        const char *key = desc->policy_key;
        char gbuf[64];

        if (d->solve_error == -ENODATA && d->goal.kind == PCP_GOAL_BULK_FREE_P99) {
                if (actuator_warn_once(a, d->policy->name, d->rule->name))
                        log_warning("Rule %s/%s: %s %s needs this host's bulk-free calibration, which pcptuned "
                                    "fits from traced bulk frees (%s): the knob is left alone until there is one",
                                    d->policy->name, d->rule->name, key, pcp_goal_to_string(&d->goal, gbuf, sizeof gbuf),
                                    strna(a->calibration_note));
                return;
        }
        if (!d->usable) {
                if (actuator_warn_once(a, d->policy->name, d->rule->name))
                        log_warning_errno(d->solve_error, "Rule %s/%s: cannot solve %s %s on this host: %s",
                                          d->policy->name, d->rule->name, key,
                                          pcp_goal_to_string(&d->goal, gbuf, sizeof gbuf), errno_str(d->solve_error));
                return;
        }
        if (d->solve_error == -ERANGE && d->goal.kind == PCP_GOAL_BULK_FREE_P99 &&
            actuator_warn_once(a, d->policy->name, d->rule->name))
                log_warning("Rule %s/%s: %s %s: no fraction meets it (the minimum moves %" PRIu64 " pages per bulk "
                            "free, predicted %.0f us at %.1f ns per page); using the minimum",
                            d->policy->name, d->rule->name, key, pcp_goal_to_string(&d->goal, gbuf, sizeof gbuf),
                            d->pages, d->predicted_ns / 1000.0, d->ns_per_page);
        else if (d->solve_error == -ERANGE && actuator_warn_once(a, d->policy->name, d->rule->name))
                log_warning("Rule %s/%s: %s %s is below the kernel's floor of 4 x batch; using the minimum",
                            d->policy->name, d->rule->name, key, pcp_goal_to_string(&d->goal, gbuf, sizeof gbuf));
}

/* Why the value is wanted, for the journal and the log line: the setting as the rule wrote it, and for
 * a bulk_free_p99 goal the prediction (dry-run prints it in the "would set" line). */
static void actuator_reason(const KnobDesc *desc, const KnobDecision *d, char *buf, size_t size) {
        char gbuf[64];

        if (desc->setting != KNOB_SETTING_PCP_GOAL)
                snprintf(buf, size, "%s %" PRId64, desc->policy_key, d->value);
        else if (d->goal.kind == PCP_GOAL_BULK_FREE_P99)
                snprintf(buf, size,
                         "%s %s: predicted p99 %.0f us (%" PRIu64 " pages x %.1f ns per page); the default "
                         "would move %" PRIu64 " pages, %.0f us",
                         desc->policy_key, pcp_goal_to_string(&d->goal, gbuf, sizeof gbuf), d->predicted_ns / 1000.0,
                         d->pages, d->ns_per_page, d->default_pages,
                         d->ns_per_page * (double) d->default_pages / 1000.0);
        else
                snprintf(buf, size, "%s %s", desc->policy_key, pcp_goal_to_string(&d->goal, gbuf, sizeof gbuf));
}

/* Write the decided value, first the row's probe value if it has one the kernel may reject.  Returns the
 * knob_apply() outcome; *ret_target: the value written or wanted. */
static int actuator_write_knob(Actuator *a, const Snapshot *s, KnobId id, const KnobDecision *d, int64_t *ret_target) {
        KnobState *k = &a->knobs[id];
        const KnobDesc *desc = k->desc;
        char reason[320];
        int64_t target = d->value, old = 0;
        int r;

        actuator_reason(desc, d, reason, sizeof reason);
        bool probing = desc->probe != KNOB_PROBE_NONE && a->probe_state[id] != FEATURE_ABSENT && !a->dry_run &&
                       knob_probe_value(desc, d, s->regime, &target);
        if (!probing)
                target = d->value;
        r = knob_count(&a->counts[id], a->dry_run,
                       knob_apply(k, a->root, a->journal, a->dry_run, target,
                                  &(ChangeReason){ .policy = d->policy->name, .rule = d->rule->name, .text = reason,
                                                   .probe = probing },
                                  &old));
        if (probing && r == -EINVAL) {
                a->probe_state[id] = FEATURE_ABSENT;
                log_notice("This kernel rejects %s = %" PRId64 " (%s): using the value computed for this host, %" PRId64,
                           desc->name, target, strna(desc->probe_rejected), d->value);
                target = d->value;
                r = knob_count(&a->counts[id], a->dry_run,
                               knob_apply(k, a->root, a->journal, a->dry_run, target,
                                          &(ChangeReason){ .policy = d->policy->name, .rule = d->rule->name,
                                                           .text = reason },
                                          &old));
        } else if (probing && (r == KNOB_WRITTEN || r == KNOB_NOOP))
                a->probe_state[id] = FEATURE_PRESENT;
        if (r == KNOB_WRITTEN) {
                knob_after_write(desc, a->root, old, target);
                knob_confirm(desc, a->root, target);
        }
        *ret_target = target;
        return r;
}

/* One managed knob from the decision: its value, or hand it back when no active rule sets it.  true: the
 * knob was written or restored. */
static bool actuator_apply_knob(Actuator *a, const Snapshot *s, KnobId id, const KnobDecision *d) {
        KnobState *k = &a->knobs[id];
        const KnobDesc *desc = k->desc;
        char why[128];
        int r;

        a->has_target[id] = false;
        if (!d->wanted) {
                if (!k->managed)
                        return false;
                snprintf(why, sizeof why, "no active rule sets %s any more", desc->policy_key);
                return knob_count(&a->counts[id], a->dry_run, knob_release(k, a->root, a->journal, a->dry_run, why)) ==
                       KNOB_RESTORED;
        }
        if (d->absent) {
                if (actuator_warn_once(a, d->policy->name, desc->policy_key))
                        log_warning("Rule %s/%s: %s needs %s, from %s; this kernel does not have it", d->policy->name,
                                    d->rule->name, desc->policy_key, desc->name, strna(desc->needs));
                return false;
        }
        actuator_explain_solve(a, desc, d);
        if (!d->usable)
                return false;
        r = actuator_write_knob(a, s, id, d, &a->target[id]);
        a->has_target[id] = true;
        if (r < 0) {
                a->failures++;
                a->report->failures++;
        }
        return r == KNOB_WRITTEN;
}
/* A `repair: pagesets` rule: recompute pagesets that differ from the model (a CPU whose batch was left at
 * a value the kernel no longer computes). */
static void actuator_repair_pagesets(Actuator *a, const Snapshot *s, const DecidedAction *act, bool wrote_knob) {
        PagesetCheck c = { 0 };
        int r;

        if (wrote_knob || !s->has_knob)
                return; /* the write just recomputed them; check at the next sample */
        r = pageset_check(s, &c);
        if (r < 0) {
                log_warning_errno(r, "Failed to compare pagesets with the model: %s", errno_str(r));
                return;
        }
        if (c.n_mismatches == 0) {
                pageset_check_done(&c);
                return;
        }
        const PagesetMismatch *x = &c.mismatches[0];
        log_notice("Rule %s/%s: %zu of %zu pageset values differ from the model (e.g. node %d %s cpu %d: %s %" PRId64
                   ", expected %" PRId64 ")%s",
                   act->policy->name, act->rule->name, c.n_mismatches, c.compared, x->node, x->zone, x->cpu,
                   pageset_field_to_string(x->field), x->actual, x->expected,
                   a->dry_run ? "; would make the kernel recompute them" : "; making the kernel recompute them");
        pageset_check_done(&c);
        actuator_done(a, act, now_usec(CLOCK_MONOTONIC));
        if (a->dry_run)
                return;
        r = pageset_repair(a->root, a->journal, snapshot_pcp_value(s), NULL);
        if (r < 0 && r != -EBADE) {
                a->failures++;
                a->report->failures++;
        }
        if (r == -EBADE)
                log_warning("Rule %s/%s: the pagesets still differ after the repair; not retrying before the "
                            "rule's cooldown",
                            act->policy->name, act->rule->name);
        else if (r < 0)
                log_error_errno(r, "Failed to repair pagesets: %s", errno_str(r));
}

/* Dying count and Percpu now, from the memcg and meminfo sources (the observer's fresh look) (/proc/cgroups + the hierarchy's directories, meminfo). */
static void actuator_read_dying(Actuator *a, uint64_t *ret_dying, uint64_t *ret_percpu_kib) {
        _cleanup_(snapshot_freep) Snapshot *s = NULL;
        bool ok = a->observe && a->observe(a->root, SOURCE_BIT(SOURCE_MEMCG) | SOURCE_BIT(SOURCE_MEMINFO), &s) >= 0;

        *ret_dying = ok && s->has_memcg ? s->memcg.dying : 0;
        *ret_percpu_kib = ok ? s->meminfo.percpu_kib : 0;
}

#define PERCPU_STATS_MIN_INTERVAL (5 * 60 * USEC_PER_SEC)
#define PERCPU_STATS_MAX_COST (5 * USEC_PER_MSEC)

/* After a reclaim: what is left in the percpu allocator, if percpu_stats is readable and cheap. */
static void actuator_log_percpu_stats(Actuator *a, const char *label) {
        usec_t now = now_usec(CLOCK_MONOTONIC), t0;
        PercpuStats st = { 0 };
        PercpuSummary sum;
        int r;

        if (a->percpu_stats_cost > PERCPU_STATS_MAX_COST ||
            (a->percpu_stats_last && now - a->percpu_stats_last < PERCPU_STATS_MIN_INTERVAL))
                return;
        t0 = now_usec(CLOCK_MONOTONIC);
        r = percpu_stats_read(a->root, &st);
        a->percpu_stats_last = now;
        a->percpu_stats_cost = now_usec(CLOCK_MONOTONIC) - t0;
        if (r < 0) {
                log_debug_errno(r, "percpu_stats not readable (%s): debugfs not mounted or CONFIG_PERCPU_STATS off",
                                errno_str(r));
                a->percpu_stats_cost = USEC_INFINITY; /* never again: we do not mount debugfs */
                return;
        }
        percpu_stats_summarize(&st, &sum);
        log_info("%s: percpu allocator: %" PRId64 " chunks (%" PRId64 " empty), %" PRId64
                 " empty populated pages per unit, %" PRId64 " KiB free per unit in all chunks "
                 "(read in %" PRIu64 " us)",
                 label, sum.chunks, sum.empty_chunks, sum.empty_pop_pages, sum.free_bytes / 1024, a->percpu_stats_cost);
        if (a->percpu_stats_cost > PERCPU_STATS_MAX_COST)
                log_info("Reading percpu_stats took %" PRIu64 " us with IRQs off: not reading it again",
                         a->percpu_stats_cost);
        percpu_stats_done(&st);
}

static int on_reclaim_followup(sd_event_source *s, uint64_t usec, void *userdata) {
        Actuator *a = userdata;
        uint64_t dying, percpu;
        actuator_read_dying(a, &dying, &percpu);
        log_info("%s: 5 s after the reclaim: %" PRIu64 " dying memcgs (%" PRIu64 " before it), Percpu %" PRIu64
                 " kB (%" PRIu64 " kB before it)",
                 strna(a->reclaim_label), dying, a->reclaim_dying_before, percpu, a->reclaim_percpu_before_kib);
        actuator_log_percpu_stats(a, strna(a->reclaim_label));
        a->followup = sd_event_source_disable_unref(a->followup);
        return 0;
}

/* The refault window of the last reclaim ends: read the counters again, log, skip what refaulted too much. */
static void actuator_close_refault_window(Actuator *a) {
        const ReclaimRecord *r = &a->watch.record;
        char f_lbl[200], f_ref[48], f_win[48], f_n[48], f_over[48], f_max[64], f_cost[48], over[512] = "", b1[48];
        size_t n_over, measured = 0, imax = SIZE_MAX;

        if (!a->watch.has_record || !r->counting)
                return;
        n_over = reclaim_watch_close(&a->watch, a->root, strna(a->watch_mount), a->watch_mode, now_usec(CLOCK_MONOTONIC));
        a->counters->reclaim_refaults += r->refaults;
        a->counters->reclaim_refault_windows++;
        a->counters->has_last_refaults = true;
        a->counters->last_refaults = r->refaults;
        a->counters->last_refault_window_usec = r->window_usec;
        a->counters->last_refault_rate_max = 0;
        for (size_t i = 0; i < r->n_subtrees; i++)
                a->counters->last_refault_rate_max = MAX(a->counters->last_refault_rate_max, r->subtrees[i].rate);
        for (size_t i = 0; i < r->n_subtrees; i++) {
                const ReclaimSubtreeRefaults *t = &r->subtrees[i];
                if (t->after < 0 || t->before < 0)
                        continue;
                measured++;
                if (imax == SIZE_MAX || t->rate > r->subtrees[imax].rate)
                        imax = i;
                if (t->over_limit) {
                        size_t l = strlen(over);
                        snprintf(over + l, sizeof over - l, "%s%s (%.1f/s)", l ? ", " : "", t->path, t->rate);
                }
        }
        snprintf(f_lbl, sizeof f_lbl, "RULE=%s", strna(r->label));
        snprintf(f_ref, sizeof f_ref, "REFAULTS=%" PRIu64, r->refaults);
        snprintf(f_win, sizeof f_win, "REFAULT_WINDOW_USEC=%" PRIu64, r->window_usec);
        snprintf(f_n, sizeof f_n, "SUBTREES_MEASURED=%zu", measured);
        snprintf(f_over, sizeof f_over, "SUBTREES_OVER_LIMIT=%zu", n_over);
        snprintf(f_max, sizeof f_max, "REFAULT_RATE_MAX=%.3f", imax == SIZE_MAX ? 0.0 : r->subtrees[imax].rate);
        snprintf(f_cost, sizeof f_cost, "REFAULT_READ_USEC=%" PRIu64, r->read_usec);
        const char *fields[] = { "MESSAGE_ID=" PCPTUNE_MESSAGE_RECLAIM, "ACTION=reclaim-dying-refaults", f_lbl, f_ref, f_win, f_n, f_over, f_max, f_cost, NULL };
        if (imax == SIZE_MAX)
                snprintf(b1, sizeof b1, "none measured");
        else
                snprintf(b1, sizeof b1, "%.2f/s", r->subtrees[imax].rate);
        log_fields(n_over > 0 ? LOG_WARNING : LOG_NOTICE, fields,
                   "%s: %" PRIu64 " refaults in the live cgroups of %zu reclaimed subtree%s, from just before each "
                   "reclaim to %.0f s after the run (largest rate %s%s%s; %zu counter reads in %" PRIu64 " us)%s%s%s",
                   strna(r->label), r->refaults, measured, measured == 1 ? "" : "s", (double) r->window_usec / 1e6, b1,
                   imax == SIZE_MAX ? "" : " in ", imax == SIZE_MAX ? "" : r->subtrees[imax].path, r->n_reads,
                   r->read_usec, n_over > 0 ? "; above max-refault-rate, skipped for the rule's cooldown: " : "",
                   over, n_over > 0 && strlen(over) >= sizeof over - 1 ? "..." : "");
}

static int on_refault_window(sd_event_source *s, uint64_t usec, void *userdata) {
        Actuator *a = userdata;
        actuator_close_refault_window(a);
        a->refault_timer = sd_event_source_disable_unref(a->refault_timer);
        return 0;
}

/* After a real run: keep the counters read before each subtree's reclaim and close the window later. */
static void actuator_open_refault_window(Actuator *a, const ReclaimJob *j) {
        size_t n_swap = 0, n_refaults = 0;

        if (a->watch.args == RECLAIM_ARGS_UNKNOWN) {
                a->watch.args = j->args; /* the job probed on its first subtree */
                a->watch.scope_dying = j->scope_dying;
        }
        for (size_t i = 0; i < j->n_results; i++) {
                n_swap += j->results[i].outcome == RECLAIM_SKIPPED_SWAP;
                n_refaults += j->results[i].outcome == RECLAIM_SKIPPED_REFAULTS;
        }
        if (j->mode == CGROUP_MEMORY_V2 && j->args == RECLAIM_ARGS_BYTES && j->host_swap == 0 && !j->cfg.allow_swap &&
            actuator_warn_once(a, strna(a->reclaim_label), "no-swap"))
                log_info("%s: memory.reclaim takes no swappiness= here, but no swap is active: plain byte counts "
                         "reclaim file pages only",
                         strna(a->reclaim_label));
        if (n_swap > 0 && actuator_warn_once(a, strna(a->reclaim_label), "allow-swap"))
                log_warning("%s: %zu subtree%s not reclaimed: this kernel's memory.reclaim takes no swappiness= (%s), so "
                            "reclaim could swap the anonymous memory of live cgroups; allow it with allow-swap: true",
                            strna(a->reclaim_label), n_swap, n_swap == 1 ? "" : "s", reclaim_args_to_string(j->args));
        if (n_refaults > 0)
                log_info("%s: %zu subtree%s skipped: %s live cgroups refaulted above max-refault-rate after the last "
                         "reclaim (cooldown of the rule)",
                         strna(a->reclaim_label), n_refaults, n_refaults == 1 ? "" : "s", n_refaults == 1 ? "its" : "their");
        if (reclaim_watch_open(&a->watch, j, a->reclaim_label, a->reclaim_cooldown_usec) < 0) {
                log_oom();
                return;
        }
        free(a->watch_mount);
        a->watch_mount = strdup(j->mount);
        a->watch_mode = j->mode;
        if (a->event && !a->once) {
                a->refault_timer = sd_event_source_disable_unref(a->refault_timer);
                if (sd_event_add_time(a->event, &a->refault_timer, CLOCK_MONOTONIC, j->ended + j->cfg.refault_window_usec,
                                      USEC_PER_SEC / 10, on_refault_window, a) < 0)
                        actuator_close_refault_window(a); /* no timer: measure what can be measured now */
        }
}

/* v2 without scope=dying: what the removed cgroups held on the LRU lists before and after the writes, over the
 * subtrees where it was read (act-reclaim.c's rounds), and the writes that reclaimed. */
static void actuator_log_lru(const Actuator *a, const ReclaimJob *j) {
        uint64_t before = 0, after = 0;
        size_t n = 0, left = 0;
        unsigned writes = 0;
        char b1[32], b2[32], b3[32];

        for (size_t i = 0; i < j->n_results; i++) {
                const ReclaimTargetResult *t = &j->results[i];
                if (t->lru_before < 0)
                        continue;
                log_debug("%s: %s: LRU pages of removed cgroups %s -> %s, %u write%s of %s in all, %s",
                          strna(a->reclaim_label), t->path, format_bytes(b1, sizeof b1, (uint64_t) t->lru_before),
                          format_bytes(b2, sizeof b2, (uint64_t) MAX(t->lru_after, (int64_t) 0)), t->writes,
                          t->writes == 1 ? "" : "s", format_bytes(b3, sizeof b3, t->bytes),
                          reclaim_outcome_to_string(t->outcome));
                n++;
                before += (uint64_t) t->lru_before;
                after += (uint64_t) MAX(t->lru_after, (int64_t) 0);
                left += t->lru_after > 0;
                writes += t->writes;
        }
        if (n > 0)
                log_info("%s: LRU pages of removed cgroups in %zu subtree%s: %s -> %s in %u memory.reclaim write%s "
                         "(%zu subtree%s with some left)",
                         strna(a->reclaim_label), n, n == 1 ? "" : "s", format_bytes(b1, sizeof b1, before),
                         format_bytes(b2, sizeof b2, after), writes, writes == 1 ? "" : "s", left,
                         left == 1 ? "" : "s");
}

static void on_reclaim_done(ReclaimJob *j, void *userdata) {
        Actuator *a = userdata;
        _cleanup_(reclaim_job_freep) _unused_ ReclaimJob *job = j; /* freed on every return */
        size_t count[_RECLAIM_OUTCOME_MAX] = { 0 };
        uint64_t dying, percpu;
        char f_dyb[48], f_dya[48], f_pb[48], f_pa[48], f_dur[48], f_lbl[200], b1[32];

        if (j->error < 0) {
                a->counters->reclaim_scan_failures++;
                log_error_errno(j->error, "%s: failed to find the subtrees holding dying memcgs: %s",
                                strna(a->reclaim_label), errno_str(j->error));
                return;
        }
        if (a->dry_run) {
                /* The per-memcg cost of the sample the reclaim started from. */
                const MemcgCost mc = a->reclaim_cost;
                double cost = mc.bytes;
                const char *how = mc.how;
                uint64_t dying_in = 0, bytes_in = 0;
                for (size_t i = 0; i < j->n_results; i++) {
                        dying_in += j->results[i].dying;
                        bytes_in += j->results[i].dying_bytes;
                }
                if (j->n_results == 0) {
                        log_notice("%s: would reclaim nothing: no subtree within its roots holds dying memcgs "
                                   "(scan of %zu cgroups took %" PRIu64 " us)",
                                   strna(a->reclaim_label), j->scan.cgroups_visited, j->scan_usec);
                        return;
                }
                if (j->mode == CGROUP_MEMORY_V2)
                        log_notice("%s: would reclaim %zu subtree%s (first %s) holding %" PRIu64
                                   " dying memcgs, with memory.reclaim up to %s; expected gain about %s of percpu "
                                   "(%.0f B per memcg, %s)",
                                   strna(a->reclaim_label), j->n_results, j->n_results == 1 ? "" : "s", j->results[0].path,
                                   dying_in, format_bytes(b1, sizeof b1, j->cfg.max_bytes),
                                   format_bytes(f_dur, sizeof f_dur, (uint64_t) (cost * PERCPU_DYING_RETAINED * (double) dying_in)),
                                   cost, how);
                else
                        log_notice("%s: would reclaim %zu subtree%s (first %s) holding an estimated %s charged to "
                                   "removed cgroups, with memory.force_empty%s; expected gain up to about %s of "
                                   "percpu if all %" PRIu64 " dying memcgs are there (%.0f B per memcg, %s)",
                                   strna(a->reclaim_label), j->n_results, j->n_results == 1 ? "" : "s",
                                   j->results[0].path, format_bytes(b1, sizeof b1, bytes_in),
                                   j->cfg.force_empty == FORCE_EMPTY_NO ? " (not allowed by the policy: force-empty)"
                                   : j->cfg.force_empty == FORCE_EMPTY_CHILDLESS ? " where no live child is below"
                                                                                 : "",
                                   format_bytes(f_dur, sizeof f_dur,
                                                (uint64_t) (cost * PERCPU_DYING_RETAINED * (double) a->reclaim_dying_before)),
                                   a->reclaim_dying_before, cost, how);
                return;
        }

        for (size_t i = 0; i < j->n_results; i++) {
                count[j->results[i].outcome]++;
                a->counters->reclaim_outcomes[j->results[i].outcome]++;
        }
        a->counters->reclaim_runs++;
        a->counters->reclaim_freed_bytes += j->freed_total;
        a->counters->reclaim_usec += j->run_usec;
        actuator_read_dying(a, &dying, &percpu);
        snprintf(f_lbl, sizeof f_lbl, "RULE=%s", strna(a->reclaim_label));
        snprintf(f_dyb, sizeof f_dyb, "DYING_BEFORE=%" PRIu64, a->reclaim_dying_before);
        snprintf(f_dya, sizeof f_dya, "DYING_AFTER=%" PRIu64, dying);
        snprintf(f_pb, sizeof f_pb, "PERCPU_BEFORE_KIB=%" PRIu64, a->reclaim_percpu_before_kib);
        snprintf(f_pa, sizeof f_pa, "PERCPU_AFTER_KIB=%" PRIu64, percpu);
        snprintf(f_dur, sizeof f_dur, "DURATION_USEC=%" PRIu64, now_usec(CLOCK_MONOTONIC) - a->reclaim_started);
        char f_freed[48];
        snprintf(f_freed, sizeof f_freed, "FREED_BYTES=%" PRIu64, j->freed_total);
        const char *fields[] = { "MESSAGE_ID=" PCPTUNE_MESSAGE_RECLAIM, "ACTION=reclaim-dying", f_lbl, f_dyb, f_dya, f_pb, f_pa, f_dur, f_freed, NULL };
        log_fields(LOG_NOTICE, fields,
                   "%s: reclaim-dying %s %zu subtree%s in %.2f s (scan %.2f s of %zu cgroups): %zu reclaimed, "
                   "%zu with nothing reclaimable, %zu gone, %zu busy, %zu skipped, %zu failed, %zu not reached; "
                   "%s freed in them; dying memcgs %" PRIu64 " -> %" PRIu64 ", Percpu %" PRIu64 " -> %" PRIu64 " kB",
                   strna(a->reclaim_label), j->timed_out ? "stopped at its timeout after" : "went through",
                   j->n_results, j->n_results == 1 ? "" : "s", (double) j->run_usec / 1e6, (double) j->scan_usec / 1e6,
                   j->scan.cgroups_visited, count[RECLAIM_DONE], count[RECLAIM_NOTHING], count[RECLAIM_GONE],
                   count[RECLAIM_BUSY],
                   count[RECLAIM_SKIPPED_POLICY] + count[RECLAIM_SKIPPED_SWAP] + count[RECLAIM_SKIPPED_REFAULTS],
                   count[RECLAIM_FAILED],
                   count[RECLAIM_NOT_RUN] + count[RECLAIM_TIMED_OUT], format_bytes(b1, sizeof b1, j->freed_total),
                   a->reclaim_dying_before, dying, a->reclaim_percpu_before_kib, percpu);
        actuator_log_lru(a, j);
        actuator_open_refault_window(a, j);
        if (j->dropped_caches)
                log_notice("%s: dropped clean page cache (vm.drop_caches=1) as the policy allows", strna(a->reclaim_label));
        for (size_t i = 0; i < j->n_results; i++)
                if (j->results[i].outcome == RECLAIM_FAILED || j->results[i].outcome == RECLAIM_BUSY)
                        log_warning("%s: %s: %s (%s)", strna(a->reclaim_label), j->results[i].path,
                                    reclaim_outcome_to_string(j->results[i].outcome), errno_str(j->results[i].error));
        if (count[RECLAIM_SKIPPED_POLICY] > 0 && actuator_warn_once(a, strna(a->reclaim_label), "force-empty")) {
                if (j->cfg.force_empty == FORCE_EMPTY_CHILDLESS)
                        log_info("%s: %zu subtree%s with live cgroups below or tasks inside left alone (force-empty: childless; "
                                 "cgroup v1 has no bounded reclaim)",
                                 strna(a->reclaim_label), count[RECLAIM_SKIPPED_POLICY],
                                 count[RECLAIM_SKIPPED_POLICY] == 1 ? "" : "s");
                else
                        log_warning("%s: %zu subtree%s not reclaimed: cgroup v1 has no bounded reclaim; allow "
                                    "memory.force_empty with force-empty: childless (or true) in the rule",
                                    strna(a->reclaim_label), count[RECLAIM_SKIPPED_POLICY],
                                    count[RECLAIM_SKIPPED_POLICY] == 1 ? " was" : "s were");
        }
        /* The kernel frees released memcgs asynchronously (RCU, css release work): look again shortly. */
        if (a->event && !a->once) {
                a->followup = sd_event_source_disable_unref(a->followup);
                (void) sd_event_add_time_relative(a->event, &a->followup, CLOCK_MONOTONIC, 5 * USEC_PER_SEC, 0,
                                                  on_reclaim_followup, a);
        }
}

static void actuator_start_reclaim(Actuator *a, const Snapshot *s, const DecidedAction *act) {
        _cleanup_(reclaim_job_freep) ReclaimJob *j = NULL;
        int r;

        if (reclaim_worker_busy(a->reclaim)) {
                log_debug("%s/%s: a reclaim is still running, not starting another", act->policy->name, act->rule->name);
                return;
        }
        /* Each reclaim's refaults are measured alone: the next waits for the window to close. */
        if (a->watch.has_record && a->watch.record.counting) {
                log_debug("%s/%s: the refault window of the last reclaim is open, not starting another", act->policy->name,
                          act->rule->name);
                return;
        }
        if (!s->has_memcg || s->memcg.mode == CGROUP_MEMORY_NONE) {
                if (actuator_warn_once(a, act->policy->name, act->rule->name))
                        log_warning("Rule %s/%s: no memory cgroup hierarchy here, nothing to reclaim", act->policy->name,
                                    act->rule->name);
                return;
        }
        if (act->kernel_note && actuator_warn_once(a, act->policy->name, act->rule->name))
                /* The evaluation's note for this kernel (decision_rule_on_kernel()): reparenting frees memcgs
                 * whose only pin was their LRU folios; an inode written through cgroup writeback keeps its
                 * memcg's wb, and so the memcg, until it is switched or evicted. */
                log_notice("Rule %s/%s: this kernel reparents LRU folios when a memcg goes offline; reclaim-dying "
                           "still frees the dying memcgs that files written through cgroup writeback (ext4, xfs, "
                           "btrfs) keep",
                           act->policy->name, act->rule->name);
        j = reclaim_job_new(a->root, s->memcg.mount, s->memcg.mode, &act->action->reclaim, a->dry_run);
        if (!j) {
                log_oom();
                return;
        }
        free(a->reclaim_label);
        if (asprintf(&a->reclaim_label, "%s/%s", act->policy->name, act->rule->name) < 0)
                a->reclaim_label = NULL;
        a->reclaim_cooldown_usec = act->rule->cooldown_usec;
        a->reclaim_cost = a->memcg_cost;
        j->args = a->watch.args;
        j->scope_dying = a->watch.scope_dying;
        if (!a->dry_run && reclaim_watch_blocked(&a->watch, strna(a->reclaim_label), now_usec(CLOCK_MONOTONIC), &j->skip) < 0) {
                log_oom();
                return;
        }
        /* The sample may have reused a costly memcg count: read it now. */
        actuator_read_dying(a, &a->reclaim_dying_before, &a->reclaim_percpu_before_kib);
        a->reclaim_started = now_usec(CLOCK_MONOTONIC);
        actuator_done(a, act, a->reclaim_started);
        log_info("%s: %s subtrees holding dying memcgs (%" PRIu64 " dying, Percpu %" PRIu64 " kB)",
                 strna(a->reclaim_label), a->dry_run ? "looking for" : "reclaiming", a->reclaim_dying_before,
                 a->reclaim_percpu_before_kib);

        if (a->once || !a->event) {
                /* No loop to come back to: a loop of our own for the one job, bounded the same way. */
                _cleanup_(sd_event_unrefp) sd_event *e = NULL;
                ReclaimWorker *w = NULL;
                if (sd_event_new(&e) < 0)
                        return;
                r = reclaim_worker_start(&w, e, TAKE_PTR(j), on_reclaim_done, a);
                if (r >= 0)
                        while (reclaim_worker_busy(w) && sd_event_run(e, UINT64_MAX) >= 0)
                                ;
                reclaim_worker_stop(w);
                if (r < 0)
                        log_error_errno(r, "Failed to start the reclaim: %s", errno_str(r));
                /* One run: wait out its refault window (the policy's refault-window bounds it). */
                if (a->watch.has_record && a->watch.record.counting) {
                        usec_t end = a->watch.record.ended + a->watch.record.window_usec, now;
                        while ((now = now_usec(CLOCK_MONOTONIC)) < end)
                                (void) usleep((useconds_t) MIN(end - now, (usec_t) USEC_PER_SEC));
                        actuator_close_refault_window(a);
                }
                return;
        }
        r = reclaim_worker_start(&a->reclaim, a->event, TAKE_PTR(j), on_reclaim_done, a);
        if (r < 0)
                log_error_errno(r, "Failed to start the reclaim worker: %s", errno_str(r));
}

/* percpu-depopulate: the contrib patch's trigger unmaps empty populated pages and frees empty chunks now. */
static void actuator_percpu_depopulate(Actuator *a, const Snapshot *s, const DecidedAction *act) {
        const PercpuSysfs *b = &s->percpu_sysfs;
        PercpuSysfs after;
        Meminfo mi = { 0 };
        char b1[32], f_rule[200], f_pb[48], f_pa[48], f_eb[48], f_ea[48], f_dur[48];
        usec_t t0;
        int r;

        if (!s->has_percpu_sysfs || !b->has_depopulate) {
                if (actuator_warn_once(a, act->policy->name, act->rule->name))
                        log_warning("Rule %s/%s: percpu-depopulate needs /sys/kernel/mm/percpu/depopulate, from "
                                    "pcptune's kernel patch (contrib/kernel); this kernel does not have it",
                                    act->policy->name, act->rule->name);
                return;
        }
        actuator_done(a, act, now_usec(CLOCK_MONOTONIC));
        uint64_t unit_bytes = b->nr_units * s->topo.page_size;
        uint64_t spare = b->nr_empty_pop_pages > b->empty_pop_pages_high ? b->nr_empty_pop_pages - b->empty_pop_pages_high : 0;
        if (a->dry_run) {
                log_notice("Rule %s/%s: would write %s/depopulate: %" PRIu64 " empty populated pages per unit, %" PRIu64
                           " beyond the %" PRIu64 " kept for atomic allocations: about %s back",
                           act->policy->name, act->rule->name, PERCPU_SYSFS_DIR, b->nr_empty_pop_pages, spare,
                           b->empty_pop_pages_high, format_bytes(b1, sizeof b1, spare * unit_bytes));
                return;
        }
        t0 = now_usec(CLOCK_MONOTONIC);
        r = percpu_sysfs_depopulate(a->root);
        if (r < 0) {
                log_error_errno(r, "Rule %s/%s: failed to write %s/depopulate: %s", act->policy->name, act->rule->name,
                                PERCPU_SYSFS_DIR, errno_str(r));
                return;
        }
        usec_t took = now_usec(CLOCK_MONOTONIC) - t0;
        /* What the write left, from the observer's fresh look at the percpu sysfs and meminfo. */
        _cleanup_(snapshot_freep) Snapshot *now = NULL;
        after = *b;
        if (a->observe && a->observe(a->root, SOURCE_BIT(SOURCE_PERCPU_SYSFS), &now) >= 0 && now->has_percpu_sysfs)
                after = now->percpu_sysfs;
        now = snapshot_free(now);
        if (a->observe && a->observe(a->root, SOURCE_BIT(SOURCE_MEMINFO), &now) >= 0)
                mi = now->meminfo;
        snprintf(f_rule, sizeof f_rule, "RULE=%s/%s", act->policy->name, act->rule->name);
        snprintf(f_pb, sizeof f_pb, "PERCPU_BEFORE_KIB=%" PRIu64, s->meminfo.percpu_kib);
        snprintf(f_pa, sizeof f_pa, "PERCPU_AFTER_KIB=%" PRIu64, mi.percpu_kib);
        snprintf(f_eb, sizeof f_eb, "EMPTY_POP_PAGES_BEFORE=%" PRIu64, b->nr_empty_pop_pages);
        snprintf(f_ea, sizeof f_ea, "EMPTY_POP_PAGES_AFTER=%" PRIu64, after.nr_empty_pop_pages);
        snprintf(f_dur, sizeof f_dur, "DURATION_USEC=%" PRIu64, took);
        const char *fields[] = { "MESSAGE_ID=" PCPTUNE_MESSAGE_RECLAIM, "ACTION=percpu-depopulate", f_rule, f_pb, f_pa, f_eb, f_ea, f_dur, NULL };
        log_fields(LOG_NOTICE, fields,
                   "%s/%s: percpu-depopulate in %" PRIu64 " us: empty populated pages %" PRIu64 " -> %" PRIu64
                   " per unit, chunks %" PRIu64 " -> %" PRIu64 ", Percpu %" PRIu64 " -> %" PRIu64 " kB",
                   act->policy->name, act->rule->name, took, b->nr_empty_pop_pages, after.nr_empty_pop_pages, b->nr_chunks,
                   after.nr_chunks, s->meminfo.percpu_kib, mi.percpu_kib);
}

/* The runner of each row of the action table (action.h). */
static void (*const action_runners[_ACTION_KIND_MAX])(Actuator *a, const Snapshot *s, const DecidedAction *act) = {
        [ACTION_RECLAIM_DYING] = actuator_start_reclaim,
        [ACTION_PERCPU_DEPOPULATE] = actuator_percpu_depopulate,
};

static void actuator_run_actions(Actuator *a, const Snapshot *s, const Decision *decision, bool wrote_knob) {
        for (size_t i = 0; i < decision->n_actions; i++) {
                const DecidedAction *act = &decision->actions[i];
                if (act->repair_pagesets)
                        actuator_repair_pagesets(a, s, act, wrote_knob);
                else if (action_desc(act->action->kind) && action_runners[act->action->kind])
                        action_runners[act->action->kind](a, s, act);
        }
}

int actuator_act(Actuator *a, const Snapshot *s, const Decision *d, ActReport *rep) {
        bool pagesets = false;

        *rep = (ActReport){ 0 };
        a->report = rep;
        actuator_check_snapshot_knob(a, s);
        actuator_knobs_from_snapshot(a, s);
        for (KnobId id = 0; id < _KNOB_ID_MAX; id++)
                if (knob_managed(a->knobs[id].desc) && actuator_apply_knob(a, s, id, &d->knobs[id]) &&
                    a->knobs[id].desc->changes_pagesets)
                        pagesets = true;
        if (pagesets)
                actuator_read_knobs(a, rep); /* status shows what the knobs hold now */
        actuator_run_actions(a, s, d, pagesets);
        rep->flags = pagesets ? ACT_PAGESETS_CHANGED : 0;
        actuator_learned(a, &rep->learned);
        a->report = NULL;
        return (int) rep->flags;
}

void actuator_learned(const Actuator *a, ActLearned *ret) {
        const ReclaimWatch *w = &a->watch;

        *ret = (ActLearned){ .fraction_floor = a->probe_state[KNOB_PCP_HIGH_FRACTION],
                             .reclaim_swappiness = FEATURE_UNKNOWN,
                             .reclaim_scope_dying = w->scope_dying };
        if (w->args == RECLAIM_ARGS_SWAPPINESS || w->args == RECLAIM_ARGS_BYTES)
                ret->reclaim_swappiness = w->args == RECLAIM_ARGS_SWAPPINESS ? FEATURE_PRESENT : FEATURE_ABSENT;
}

/*
 * What memory.reclaim accepts, once, when a reclaim-dying rule is loaded:
 * "0 swappiness=0" then "0" to the hierarchy's root memory.reclaim, and
 * "0 scope=dying" (contrib/kernel 0004), which reclaim nothing (see
 * reclaim_probe_args() and reclaim_probe_scope()).  Dry-run writes nothing
 * and reports only what it can see without writing.
 */
void actuator_probe_reclaim_args(Actuator *a, const Snapshot *s, const PolicySet *set) {
        int r;

        if (!s->has_memcg || s->memcg.mode == CGROUP_MEMORY_NONE)
                return;
        a->watch.dying_exact = s->memcg.dying_from_subsys;
        if (a->args_probed || !policy_set_has_action(set, ACTION_RECLAIM_DYING))
                return;
        a->args_probed = true;
        if (a->dry_run) {
                a->watch.args = reclaim_args_guess(a->root, s->memcg.mount, s->memcg.mode);
                return;
        }
        free(a->watch.probe_file);
        if (asprintf(&a->watch.probe_file, "%s/memory.reclaim", s->memcg.mount) < 0)
                a->watch.probe_file = NULL;
        r = reclaim_probe_args(a->root, s->memcg.mount, s->memcg.mode, "/", NULL, NULL, &a->watch.args);
        if (r >= 0 && a->watch.args != RECLAIM_ARGS_NONE)
                r = reclaim_probe_scope(a->root, s->memcg.mount, s->memcg.mode, "/", NULL, NULL, &a->watch.scope_dying);
        if (r < 0) { /* the first reclaim probes both again */
                a->watch.args = RECLAIM_ARGS_UNKNOWN;
                a->watch.scope_dying = FEATURE_UNKNOWN;
        }
        a->watch.probe_error = r < 0 ? r : 0;
        if (r < 0)
                log_warning_errno(r, "Failed to probe the arguments %s accepts: %s, the first reclaim probes again",
                                  strna(a->watch.probe_file), errno_str(r));
        else
                log_info("memory.reclaim arguments: %s: %s; scope=dying (contrib/kernel 0004): %s",
                         reclaim_args_answer(a->watch.args), reclaim_args_to_string(a->watch.args),
                         a->watch.scope_dying == FEATURE_PRESENT ? "accepted, reclaim scans only dying memcgs"
                                                                 : "not accepted");
}

/* `pcptunectl resume KNOB` leaves <state>/resume-KNOB and sends SIGUSR1. */
void actuator_resume(Actuator *a) {
        for (KnobId id = 0; id < _KNOB_ID_MAX; id++) {
                KnobState *k = &a->knobs[id];
                _cleanup_(freep) char *path = NULL;

                if (!knob_managed(k->desc) || asprintf(&path, "%s/" RESUME_PREFIX "%s", a->state_dir, k->desc->name) < 0)
                        continue;
                if (unlink(path) < 0) {
                        if (errno != ENOENT)
                                log_warning_errno(errno, "Failed to remove %s: %m", path);
                        continue;
                }
                if (k->admin_override) {
                        k->admin_override = false;
                        k->managed = false;
                        k->has_last_would = false;
                        log_notice("Managing %s again (its current value becomes the one restored at exit)",
                                   k->desc->name);
                }
        }
}

int actuator_stop(Actuator *a) {
        int r = 0;

        /* A reclaim in flight is interrupted (its writes are bounded anyway) before restoring. */
        a->reclaim = reclaim_worker_stop(a->reclaim);
        for (KnobId id = 0; id < _KNOB_ID_MAX && !a->dry_run; id++) {
                if (!a->knobs[id].managed)
                        continue;
                int q = knob_release(&a->knobs[id], a->root, a->journal, false, "pcptuned stopping");
                if (q < 0 && r >= 0)
                        r = q;
        }
        if (a->journal && a->journal->n_entries == 0 && r >= 0) {
                int q = journal_save(a->journal); /* removes the file */
                if (q < 0)
                        log_warning_errno(q, "Failed to remove the restore journal: %s", errno_str(q));
        }
        return r;
}

bool actuator_crash_restored(const Actuator *a) {
        return a->crash_restored;
}

const KnobCounters *actuator_counters(const Actuator *a) {
        return a->counts;
}

int actuator_hand_over(Actuator *a) {
        unsigned held = 0;
        int r;

        a->reclaim = reclaim_worker_stop(a->reclaim);
        for (KnobId id = 0; id < _KNOB_ID_MAX; id++)
                held += a->knobs[id].managed;
        if (held == 0 || a->dry_run || !a->journal)
                return actuator_stop(a);
        r = handover_mark(a->state_dir, a->root);
        if (r < 0) {
                log_error_errno(r, "Failed to mark the restore journal in %s as handed over: %s; restoring instead",
                                a->state_dir, errno_str(r));
                return actuator_stop(a);
        }
        log_notice("Keeping %u value%s for the next pcptuned: the restore journal %s holds the original%s",
                   held, held == 1 ? "" : "s", a->journal->file, held == 1 ? "" : "s");
        return (int) held;
}

void actuator_forget_journal(Actuator *a) {
        if (!a->journal)
                return;
        journal_clear(a->journal);
        int q = journal_save(a->journal);
        if (q < 0)
                log_warning_errno(q, "Failed to remove the restore journal: %s", errno_str(q));
}
