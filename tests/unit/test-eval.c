/* SPDX-License-Identifier: GPL-2.0-or-later */
/* policy-eval.c: precedence, hysteresis, durations, cooldowns, goal solving, history across reloads. */
#include <math.h>
#include <sys/stat.h>

#include "test-helpers.h"

#include "log.h"
#include "metrics.h"
#include "policy-eval.h"
#include "policy.h"
#include "snapshot.h"
#include "source-table.h"

#define SEC(x) ((usec_t) (x) * USEC_PER_SEC)

/* Write files {name, text}... into a fresh directory and load it as a set. */
static PolicySet *load_set(const char *const *files) {
        char dir[] = "/tmp/pcptune-test-eval.XXXXXX", *path, *cmd;
        PolicySet *set = NULL;
        Diagnostics diag = { 0 };

        assert_non_null(mkdtemp(dir));
        for (size_t i = 0; files[i]; i += 2) {
                assert_true(asprintf(&path, "%s/%s", dir, files[i]) > 0);
                assert_int_equal(write_file_atomic(path, files[i + 1], strlen(files[i + 1]), 0644), 0);
                free(path);
        }
        int r = policy_set_load_dir(dir, false, &set, &diag);
        for (size_t i = 0; i < diag.n_errors; i++)
                print_error("diag: %s\n", diag.errors[i]);
        assert_int_equal(r, 0);
        assert_int_equal(diag.n_errors, 0);
        diagnostics_done(&diag);
        assert_true(asprintf(&cmd, "rm -rf '%s'", dir) > 0);
        assert_int_equal(system(cmd), 0);
        free(cmd);
        return set;
}

static Snapshot *live_fixture(void) {
        char *root = fixture_root("6.18.44-fc-live-smp2-24G", "root");
        Snapshot *s = NULL;
        assert_int_equal(snapshot_take(root, &s), 0);
        free(root);
        return s;
}

/* One evaluation case: the policy set of files, the live fixture's snapshot and its metrics, a new history. */
typedef struct EvalCase {
        PolicySet *set;
        Snapshot *s;
        EvalState *st;
        MetricValues mv;
} EvalCase;

static void eval_case_init(EvalCase *c, const char *const *files) {
        c->set = load_set(files);
        c->s = live_fixture();
        c->st = eval_state_new();
        assert_non_null(c->st);
        metrics_from_snapshot(c->s, &c->mv);
}

static void eval_case_done(EvalCase *c) {
        eval_state_free(c->st);
        snapshot_free(c->s);
        policy_set_free(c->set);
}

static void test_precedence(void **state) {
        static const char *const files[] = {
                "10-low.yaml",
                "version: 1\nname: low\npriority: 10\nrules:\n"
                "  - name: big\n    pcp: { high: { fraction: 100 } }\n",
                "20-high.yaml",
                "version: 1\nname: high\npriority: 90\nrules:\n"
                "  - name: base\n    pcp: { high: { fraction: 1000 } }\n"
                "  - name: storm\n    when: memcg.dying > 500\n    pcp: { high: { fraction: 2000 } }\n",
                NULL,
        };
        EvalCase c;
        Decision decision;

        eval_case_init(&c, files);
        metric_set(&c.mv, METRIC_MEMCG_DYING, 10);
        assert_int_equal(policy_eval(c.set, c.s, &c.mv, c.st, SEC(1), &decision), 0);
        assert_true(decision.knobs[KNOB_PCP_HIGH_FRACTION].wanted);
        assert_string_equal(decision.knobs[KNOB_PCP_HIGH_FRACTION].policy->name, "high");
        assert_string_equal(decision.knobs[KNOB_PCP_HIGH_FRACTION].rule->name, "base");
        assert_int_equal(decision.knobs[KNOB_PCP_HIGH_FRACTION].value, 1000);
        assert_int_equal(decision.n_rules, 3);
        decision_done(&decision);

        /* The later rule of the winning policy overrides while it holds. */
        metric_set(&c.mv, METRIC_MEMCG_DYING, 501);
        assert_int_equal(policy_eval(c.set, c.s, &c.mv, c.st, SEC(2), &decision), 0);
        assert_string_equal(decision.knobs[KNOB_PCP_HIGH_FRACTION].rule->name, "storm");
        assert_int_equal(decision.knobs[KNOB_PCP_HIGH_FRACTION].value, 2000);
        decision_done(&decision);

        /* Unavailable metric: the rule is inactive and says why. */
        c.mv.available[METRIC_MEMCG_DYING] = false;
        assert_int_equal(policy_eval(c.set, c.s, &c.mv, c.st, SEC(3), &decision), 0);
        assert_string_equal(decision.knobs[KNOB_PCP_HIGH_FRACTION].rule->name, "base");
        bool found = false;
        for (size_t i = 0; i < decision.n_rules; i++)
                if (streq(decision.rules[i].rule->name, "storm")) {
                        assert_int_equal(decision.rules[i].verdict, RULE_UNAVAILABLE);
                        assert_int_equal(decision.rules[i].unavailable_metric, METRIC_MEMCG_DYING);
                        assert_true(decision.rules[i].newly_inactive);
                        found = true;
                }
        assert_true(found);
        decision_done(&decision);

        eval_case_done(&c);
}

static void test_hysteresis(void **state) {
        static const char *const files[] = {
                "50-storm.yaml",
                "version: 1\nname: storm\nrules:\n"
                "  - name: exit-storm\n    when: memcg.dying > 200 for 3s\n    pcp: { high: minimum }\n"
                "    until: memcg.dying < 20 for 30s\n",
                NULL,
        };
        EvalCase c;
        Decision decision;
        struct {
                usec_t t;
                double dying;
                bool active;
        } steps[] = {
                { SEC(0), 300, false },   /* starts holding */
                { SEC(2), 300, false },   /* 2 s < 3 s */
                { SEC(3), 300, true },    /* held 3 s: active */
                { SEC(10), 100, true },   /* between thresholds: stays (hysteresis) */
                { SEC(11), 10, true },    /* until starts holding */
                { SEC(30), 250, true },   /* interrupted: until resets */
                { SEC(31), 10, true },
                { SEC(60), 10, true },    /* 29 s */
                { SEC(61), 10, false },   /* 30 s: inactive */
                { SEC(62), 250, false },  /* when must hold 3 s again */
                { SEC(63), 150, false },
                { SEC(66), 250, false },
                { SEC(69), 250, true },
        };

        eval_case_init(&c, files);
        for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
                metric_set(&c.mv, METRIC_MEMCG_DYING, steps[i].dying);
                assert_int_equal(policy_eval(c.set, c.s, &c.mv, c.st, steps[i].t, &decision), 0);
                if (decision.knobs[KNOB_PCP_HIGH_FRACTION].wanted != steps[i].active)
                        fail_msg("step %zu (t=%llu s, dying %.0f): wanted %d", i,
                                 (unsigned long long) (steps[i].t / USEC_PER_SEC), steps[i].dying, decision.knobs[KNOB_PCP_HIGH_FRACTION].wanted);
                decision_done(&decision);
        }
        eval_case_done(&c);
}

static void test_host_and_solve(void **state) {
        static const char *const files[] = {
                "50-a.yaml",
                "version: 1\nname: big-hosts\nhost:\n  cpus: \">= 64\"\nrules:\n"
                "  - name: cap\n    pcp: { high: minimum }\n",
                "60-b.yaml",
                "version: 1\nname: small-hosts\npriority: 10\nhost:\n  cpus: \"<= 8\"\n  kernel: \">= 6.7\"\nrules:\n"
                "  - name: eight\n    pcp: { high: \"8x batch\" }\n",
                NULL,
        };
        EvalCase c;
        Decision decision;

        eval_case_init(&c, files);
        assert_int_equal(policy_eval(c.set, c.s, &c.mv, c.st, SEC(1), &decision), 0);
        assert_true(decision.knobs[KNOB_PCP_HIGH_FRACTION].wanted);
        assert_string_equal(decision.knobs[KNOB_PCP_HIGH_FRACTION].policy->name, "small-hosts");
        assert_int_equal(decision.knobs[KNOB_PCP_HIGH_FRACTION].goal.kind, PCP_GOAL_BATCH_MULTIPLE);
        assert_int_equal(decision.knobs[KNOB_PCP_HIGH_FRACTION].solve_error, 0);
        /* The answer meets high <= 8 x batch on every zone, and one less does not. */
        int f = decision.knobs[KNOB_PCP_HIGH_FRACTION].value;
        assert_true(f >= 8);
        bool below = true, above_prev = false;
        for (size_t i = 0; i < c.s->n_pcp_zones; i++) {
                PcpSetting a, b;
                assert_int_equal(pcp_model_zone(c.s->regime, &c.s->pcp_zones[i].in, c.s->topo.page_size, f, &a), 0);
                below &= a.high_max <= 8 * a.batch;
                if (f > 8) {
                        assert_int_equal(pcp_model_zone(c.s->regime, &c.s->pcp_zones[i].in, c.s->topo.page_size, f - 1, &b), 0);
                        above_prev |= b.high_max > 8 * b.batch;
                }
        }
        assert_true(below);
        assert_true(above_prev);
        for (size_t i = 0; i < decision.n_rules; i++)
                if (streq(decision.rules[i].policy->name, "big-hosts"))
                        assert_int_equal(decision.rules[i].verdict, RULE_HOST_MISMATCH);
        decision_done(&decision);

        /* 64 CPUs: the priority-50 policy matches and beats priority 10. */
        metric_set(&c.mv, METRIC_CPUS, 64);
        assert_int_equal(policy_eval(c.set, c.s, &c.mv, c.st, SEC(2), &decision), 0);
        assert_string_equal(decision.knobs[KNOB_PCP_HIGH_FRACTION].policy->name, "big-hosts");
        assert_int_equal(decision.knobs[KNOB_PCP_HIGH_FRACTION].value, pcp_minimum_fraction(c.s->regime, c.s->pcp_zones, c.s->n_pcp_zones,
                                                                       c.s->topo.page_size));
        decision_done(&decision);

        eval_case_done(&c);
}

/* pcp: { high: { bulk_free_p99: 200us } } on the live host: solved only with a calibration. */
static void test_bulk_free_goal(void **state) {
        static const char *const files[] = {
                "50-latency.yaml",
                "version: 1\nname: latency\nrules:\n  - name: goal\n    pcp: { high: { bulk_free_p99: 200us } }\n",
                NULL,
        };
        EvalCase c;
        Decision decision;

        eval_case_init(&c, files);
        /* No calibration yet: wanted, not solvable. */
        assert_int_equal(policy_eval(c.set, c.s, &c.mv, c.st, SEC(1), &decision), 0);
        assert_true(decision.knobs[KNOB_PCP_HIGH_FRACTION].wanted);
        assert_int_equal(decision.knobs[KNOB_PCP_HIGH_FRACTION].goal.kind, PCP_GOAL_BULK_FREE_P99);
        assert_true(decision.knobs[KNOB_PCP_HIGH_FRACTION].goal.value == 200000);
        assert_int_equal(decision.knobs[KNOB_PCP_HIGH_FRACTION].solve_error, -ENODATA);
        decision_done(&decision);

        /* 300 ns per page: the largest lists whose worst zone moves at most 666 pages. */
        eval_state_set_ns_per_page(c.st, 300.0);
        assert_int_equal(policy_eval(c.set, c.s, &c.mv, c.st, SEC(2), &decision), 0);
        const KnobDecision *d = &decision.knobs[KNOB_PCP_HIGH_FRACTION];
        assert_int_equal(d->solve_error, 0);
        assert_true(d->value >= 8 && d->ns_per_page == 300.0);
        assert_true(d->pages <= 666 && d->predicted_ns <= 200000.0 && d->predicted_ns == 300.0 * (double) d->pages);
        assert_true(d->default_pages == 2016);
        uint64_t prev;
        assert_int_equal(pcp_bulk_free_pages_host(c.s->regime, c.s->pcp_zones, c.s->n_pcp_zones, c.s->topo.page_size,
                                                  d->value - 1, false, PCP_BATCH_SCALE_MAX_DEFAULT, &prev),
                         0);
        assert_true(prev > 666);
        int f300 = d->value;
        decision_done(&decision);

        /* A slower host (600 ns per page) needs shorter lists: a larger fraction. */
        eval_state_set_ns_per_page(c.st, 600.0);
        assert_int_equal(policy_eval(c.set, c.s, &c.mv, c.st, SEC(3), &decision), 0);
        assert_true(decision.knobs[KNOB_PCP_HIGH_FRACTION].value > f300 && decision.knobs[KNOB_PCP_HIGH_FRACTION].pages <= 333);
        decision_done(&decision);
        /* A fast one (90 ns per page): the default's 2016 pages take 181 us, so the default. */
        eval_state_set_ns_per_page(c.st, 90.0);
        assert_int_equal(policy_eval(c.set, c.s, &c.mv, c.st, SEC(4), &decision), 0);
        assert_int_equal(decision.knobs[KNOB_PCP_HIGH_FRACTION].value, 0);
        decision_done(&decision);

        eval_case_done(&c);
}

static void test_cooldown_and_reload(void **state) {
        static const char *const v1[] = {
                "50-r.yaml",
                "version: 1\nname: cleanup\nrules:\n"
                "  - name: dying\n    when: memcg.dying > 500 for 2m\n"
                "    action: { reclaim-dying: { cgroup: auto } }\n    cooldown: 10m\n",
                NULL,
        };
        static const char *const v2_same[] = {
                "50-r.yaml",
                "version: 1\nname: cleanup\ndescription: edited\nrules:\n"
                "  - name: dying\n    when: memcg.dying > 500 for 2m\n"
                "    action: { reclaim-dying: { cgroup: auto } }\n    cooldown: 10m\n",
                NULL,
        };
        static const char *const v3_changed[] = {
                "50-r.yaml",
                "version: 1\nname: cleanup\nrules:\n"
                "  - name: dying\n    when: memcg.dying > 400 for 2m\n"
                "    action: { reclaim-dying: { cgroup: auto } }\n    cooldown: 10m\n",
                NULL,
        };
        EvalCase c;
        Decision decision;

        eval_case_init(&c, v1);
        metric_set(&c.mv, METRIC_MEMCG_DYING, 600);
        assert_int_equal(policy_eval(c.set, c.s, &c.mv, c.st, SEC(0), &decision), 0);
        assert_int_equal(decision.n_actions, 0);
        decision_done(&decision);
        assert_int_equal(policy_eval(c.set, c.s, &c.mv, c.st, SEC(120), &decision), 0);
        assert_int_equal(decision.n_actions, 1);
        assert_int_equal(decision.actions[0].action->kind, ACTION_RECLAIM_DYING);
        eval_state_action_done(c.st, decision.actions[0].policy, decision.actions[0].rule, SEC(120));
        decision_done(&decision);
        /* Cooldown: not again before 10 minutes. */
        assert_int_equal(policy_eval(c.set, c.s, &c.mv, c.st, SEC(300), &decision), 0);
        assert_int_equal(decision.n_actions, 0);
        decision_done(&decision);
        assert_int_equal(policy_eval(c.set, c.s, &c.mv, c.st, SEC(720), &decision), 0);
        assert_int_equal(decision.n_actions, 1);
        decision_done(&decision);

        /* Reload with the same condition text keeps the `for` history ... */
        PolicySet *same = load_set(v2_same);
        eval_state_prune(c.st, same);
        assert_int_equal(policy_eval(same, c.s, &c.mv, c.st, SEC(721), &decision), 0);
        assert_int_equal(decision.rules[0].verdict, RULE_ACTIVE);
        decision_done(&decision);

        /* ... a changed condition starts over. */
        PolicySet *changed = load_set(v3_changed);
        eval_state_prune(c.st, changed);
        assert_int_equal(policy_eval(changed, c.s, &c.mv, c.st, SEC(722), &decision), 0);
        assert_int_equal(decision.rules[0].verdict, RULE_INACTIVE);
        decision_done(&decision);
        assert_int_equal(policy_eval(changed, c.s, &c.mv, c.st, SEC(842), &decision), 0);
        assert_int_equal(decision.rules[0].verdict, RULE_ACTIVE);
        decision_done(&decision);

        policy_set_free(same);
        policy_set_free(changed);
        eval_case_done(&c);
}

/* Why each rule is (in)active: values against thresholds with units, the `for` held, the cooldown left, the host. */
static void test_why(void **state) {
        static const char *const files[] = {
                "50-r.yaml",
                "version: 1\nname: cleanup\nrules:\n"
                "  - name: dying\n    when: memcg.dying > 200 for 10s and meminfo.free < 1GiB\n"
                "    action: { reclaim-dying: { cgroup: auto } }\n    cooldown: 5m\n",
                "60-big.yaml",
                "version: 1\nname: big\nhost:\n  cpus: \">= 64\"\nrules:\n"
                "  - name: exits\n    when: proc.exit_rate > 200/s for 3s\n    pcp: { high: minimum }\n",
                NULL,
        };
        EvalCase c;
        Decision decision;
        char buf[512];

        eval_case_init(&c, files);
        metric_set(&c.mv, METRIC_CPUS, 2);
        metric_set(&c.mv, METRIC_MEMCG_DYING, 127);
        metric_set(&c.mv, METRIC_MEMINFO_FREE, 512.0 * 1024 * 1024);
        assert_int_equal(policy_eval(c.set, c.s, &c.mv, c.st, SEC(100), &decision), 0);
        assert_int_equal(decision.n_rules, 2);
        const RuleStatus *d = &decision.rules[0], *x = &decision.rules[1];
        assert_int_equal(d->verdict, RULE_INACTIVE);
        assert_string_equal(d->condition, "when");
        assert_int_equal(d->n_terms, 2);
        assert_int_equal(d->terms[0].metric, METRIC_MEMCG_DYING);
        assert_true(d->terms[0].threshold == 200 && d->terms[0].value == 127 && !d->terms[0].holds);
        assert_int_equal(d->terms[0].for_usec, SEC(10));
        assert_true(d->terms[1].holds);
        assert_string_equal(rule_status_explain(d, &c.mv, buf, sizeof buf),
                            "memcg.dying 127, needs > 200 for 10 s; meminfo.free 512.0 MiB < 1.0 GiB: holds");
        /* The host clause's reason, not the metric's unavailability. */
        assert_int_equal(x->verdict, RULE_HOST_MISMATCH);
        assert_string_equal(x->host_why, "cpus 2, needs >= 64");
        assert_string_equal(rule_status_explain(x, &c.mv, buf, sizeof buf), "host: cpus 2, needs >= 64");
        decision_done(&decision);

        /* Holding: 3 s of 10 s. */
        metric_set(&c.mv, METRIC_MEMCG_DYING, 300);
        assert_int_equal(policy_eval(c.set, c.s, &c.mv, c.st, SEC(101), &decision), 0);
        decision_done(&decision);
        assert_int_equal(policy_eval(c.set, c.s, &c.mv, c.st, SEC(104), &decision), 0);
        assert_int_equal(decision.rules[0].terms[0].held_usec, SEC(3));
        assert_string_equal(rule_status_explain(&decision.rules[0], &c.mv, buf, sizeof buf),
                            "memcg.dying 300 > 200, held 3 s of 10 s; meminfo.free 512.0 MiB < 1.0 GiB: holds");
        decision_done(&decision);

        /* Active, acted at 111 s: 4 min 59 s of the 5 min cooldown left a second later. */
        assert_int_equal(policy_eval(c.set, c.s, &c.mv, c.st, SEC(111), &decision), 0);
        assert_int_equal(decision.rules[0].verdict, RULE_ACTIVE);
        assert_int_equal(decision.n_actions, 1);
        eval_state_action_done(c.st, decision.actions[0].policy, decision.actions[0].rule, SEC(111));
        decision_done(&decision);
        assert_int_equal(policy_eval(c.set, c.s, &c.mv, c.st, SEC(112), &decision), 0);
        assert_int_equal(decision.rules[0].cooldown_left_usec, SEC(299));
        assert_non_null(strstr(rule_status_explain(&decision.rules[0], &c.mv, buf, sizeof buf), "; cooldown 4 min 59 s left"));
        decision_done(&decision);

        /* On a host that matches, an unavailable metric says why it is unavailable. */
        metric_set(&c.mv, METRIC_CPUS, 64);
        c.mv.available[METRIC_PROC_EXIT_RATE] = false;
        c.mv.why_unavailable[METRIC_PROC_EXIT_RATE] = "the proc connector is not open";
        assert_int_equal(policy_eval(c.set, c.s, &c.mv, c.st, SEC(113), &decision), 0);
        assert_int_equal(decision.rules[1].verdict, RULE_UNAVAILABLE);
        assert_string_equal(rule_status_explain(&decision.rules[1], &c.mv, buf, sizeof buf),
                            "proc.exit_rate unavailable (the proc connector is not open), needs > 200/s");
        decision_done(&decision);

        eval_case_done(&c);
}

static void test_empty_set(void **state) {
        static const char *const none[] = { NULL };
        EvalCase c;
        Decision decision;

        eval_case_init(&c, none);
        assert_int_equal(policy_eval(c.set, c.s, &c.mv, c.st, SEC(1), &decision), 0);
        assert_false(decision.knobs[KNOB_PCP_HIGH_FRACTION].wanted);
        assert_int_equal(decision.n_rules, 0);
        assert_int_equal(decision.n_actions, 0);
        decision_done(&decision);
        eval_case_done(&c);
}

/* What a set needs (the daemon's triggers and costly reads follow it): from the expression trees. */
static void test_set_queries(void **state) {
        static const char *const files[] = {
                "10-any.yaml",
                "version: 1\nname: any\nrules:\n"
                "  - name: pressure\n    when: psi.memory.some.avg10 > 40 or (psi.memory.full.avg60 >= 25 and cpus > 1)\n"
                "    pcp: { high: minimum }\n    until: psi.memory.some.avg300 > 5 or psi.memory.full.avg10 < 1\n",
                "20-big.yaml",
                "version: 1\nname: big\nhost:\n  cpus: \">= 64\"\nrules:\n"
                "  - name: exit-storm\n    when: proc.exit_rate > 200/s and not proc.exit_rate >= 10/s\n"
                "    pcp: { high: minimum }\n    until: proc.exit_rate < 20/s or proc.exit_rate > 3/s\n"
                "  - name: clean\n    when: memcg.dying > 500\n"
                "    action: { reclaim-dying: { cgroup: auto } }\n",
                NULL,
        };
        PolicySet *set = load_set(files);
        MetricValues mv = { 0 };

        assert_true(policy_set_uses_metric(set, METRIC_PROC_EXIT_RATE));
        /* host: on the sample's metrics: UNKNOWN (no cpus) and FALSE do not count, TRUE does. */
        assert_false(policy_set_uses_metric_on_host(set, &mv, METRIC_PROC_EXIT_RATE));
        metric_set(&mv, METRIC_CPUS, 2);
        assert_false(policy_set_uses_metric_on_host(set, &mv, METRIC_PROC_EXIT_RATE));
        assert_false(policy_set_uses_metric_on_host(set, &mv, METRIC_MEMCG_DYING));
        assert_true(policy_set_uses_metric_on_host(set, &mv, METRIC_PSI_MEMORY_FULL_AVG60)); /* no host: */
        assert_false(policy_set_uses_metric_on_host(set, &mv, METRIC_PSI_MEMORY_SOME_AVG60));
        metric_set(&mv, METRIC_CPUS, 64);
        assert_true(policy_set_uses_metric_on_host(set, &mv, METRIC_PROC_EXIT_RATE));
        assert_true(policy_set_uses_metric_on_host(set, &mv, METRIC_MEMCG_DYING));

        /* Rising comparisons only (> and >=), under not as well, whatever the host. */
        assert_true(policy_set_lowest_threshold(set, METRIC_PROC_EXIT_RATE, METRIC_PROC_EXIT_RATE, false) == 10.0);
        assert_true(policy_set_lowest_threshold(set, METRIC_PROC_EXIT_RATE, METRIC_PROC_EXIT_RATE, true) == 3.0);
        assert_true(policy_set_lowest_threshold(set, METRIC_PSI_MEMORY_SOME_AVG10, METRIC_PSI_MEMORY_SOME_AVG300,
                                                false) == 40.0);
        assert_true(policy_set_lowest_threshold(set, METRIC_PSI_MEMORY_SOME_AVG10, METRIC_PSI_MEMORY_SOME_AVG300,
                                                true) == 5.0);
        assert_true(policy_set_lowest_threshold(set, METRIC_PSI_MEMORY_FULL_AVG10, METRIC_PSI_MEMORY_FULL_AVG300,
                                                true) == 25.0);
        assert_true(isinf(policy_set_lowest_threshold(set, METRIC_MEMCG_LIVE, METRIC_MEMCG_LIVE, true)));
        assert_true(isinf(policy_set_lowest_threshold(NULL, METRIC_PROC_EXIT_RATE, METRIC_PROC_EXIT_RATE, true)));

        assert_true(policy_set_has_action(set, ACTION_RECLAIM_DYING));
        assert_false(policy_set_has_action(set, ACTION_PERCPU_DEPOPULATE));
        assert_true(rule_uses_metric(&set->policies[1]->rules[0], METRIC_PROC_EXIT_RATE));
        assert_false(rule_uses_metric(&set->policies[1]->rules[1], METRIC_PROC_EXIT_RATE));
        policy_set_free(set);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_precedence),          cmocka_unit_test(test_hysteresis),
                cmocka_unit_test(test_host_and_solve),      cmocka_unit_test(test_cooldown_and_reload),
                cmocka_unit_test(test_empty_set),           cmocka_unit_test(test_why),
                cmocka_unit_test(test_bulk_free_goal),          cmocka_unit_test(test_set_queries),
        };
        log_setup("test-eval", LOG_TARGET_NULL, LOG_DEBUG);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
