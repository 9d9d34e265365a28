/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The actuator (actuator.c) through its one entry point, actuator_act(), on a
 * copy of a captured root tree: every managed knob of the table is set from a
 * decision and handed back when no rule wants it, the row's probe value is
 * written where the tree declares the kernel takes it and the solved value
 * where it does not, the journal holds what was changed, and a knob the
 * kernel lacks is left alone without counting as a failure.
 */
#include <inttypes.h>
#include <sys/stat.h>

#include "test-helpers.h"

#include "actuator.h"
#include "knob.h"
#include "log.h"
#include "onstop.h"
#include "cycle.h"
#include "policy-eval.h"
#include "policy.h"
#include "snapshot.h"
#include "source-table.h"
#include "util.h"

#define FRACTION_PATH "/proc/sys/vm/percpu_pagelist_high_fraction"
#define SCALE_PATH "/proc/sys/vm/pcp_batch_scale_max"

static void put(const char *root, const char *path, const char *text) {
        test_put(root, path, text, 0644);
}

static bool exists(const char *dir, const char *name) {
        char *p;
        assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
        bool r = access(p, F_OK) == 0;
        free(p);
        return r;
}

/* A writable copy of the live host's captured tree, the fraction at 0 and vm.pcp_batch_scale_max at 5. */
static char *copy_root(void) {
        char *d = test_mkdtemp("actuator"), *src = fixture_root("6.18.44-fc-live-smp2-24G", "root"), *cmd;
        assert_true(asprintf(&cmd, "cp -r '%s/.' '%s/' && chmod -R u+w '%s' && mkdir -p '%s/.pcptune'", src, d, d, d) > 0);
        assert_int_equal(system(cmd), 0);
        free(cmd);
        free(src);
        put(d, FRACTION_PATH, "0\n");
        put(d, SCALE_PATH, "5\n");
        return d;
}

/* Evaluate one policy text on a fresh snapshot of root and act on the decision.  Returns actuator_act()'s. */
static int act_on(Actuator *a, EvalState *st, const char *root, const char *policy) {
        Diagnostics d = { 0 };
        Policy *p = NULL;
        Snapshot *s = NULL;
        Cycle c = { 0 };
        ActReport rep;

        assert_int_equal(policy_parse("t.yaml", policy, strlen(policy), &p, &d), 0);
        PolicySet set = { .policies = &p, .n_policies = 1 };
        assert_int_equal(snapshot_take(root, &s), 0);
        cycle_observe(&c, s);
        assert_int_equal(cycle_evaluate(&c, &set, st, 0), 0);
        int r = actuator_act(a, c.snap, &c.decision, &rep);
        assert_int_equal(r, (int) rep.flags);
        /* What the actuator did is in its report only: the snapshot is the cycle's to change. */
        int64_t before = c.snap->knobs[KNOB_PCP_HIGH_FRACTION].value;
        assert_int_equal(rep.has_readback, (r & ACT_PAGESETS_CHANGED) != 0);
        cycle_fold(&c, &rep, st, NULL);
        if (rep.has_readback && rep.readback[KNOB_PCP_HIGH_FRACTION].present)
                assert_int_equal(c.snap->knobs[KNOB_PCP_HIGH_FRACTION].value,
                                 rep.readback[KNOB_PCP_HIGH_FRACTION].value);
        else
                assert_int_equal(c.snap->knobs[KNOB_PCP_HIGH_FRACTION].value, before);
        act_report_done(&rep);
        cycle_done(&c);
        policy_free(p);
        diagnostics_done(&d);
        return r;
}

static FeatureState learned_floor(const Actuator *a) {
        ActLearned l;
        actuator_learned(a, &l);
        return l.fraction_floor;
}

#define BOTH "version: 1\nname: t\nrules:\n  - name: r\n    pcp: { high: minimum, batch_scale_max: 2 }\n"
#define NONE "version: 1\nname: t\nrules:\n  - name: r\n    repair: pagesets\n    when: memcg.dying < 0\n"

static Actuator *new_actuator(const char *root, const char *state_dir, EvalState *st, DaemonCounters *c) {
        Actuator *a = NULL;
        assert_int_equal(actuator_new(&(ActuatorConfig){ .root = root, .state_dir = state_dir, .once = true,
                                                         .counters = c, .observe = snapshot_take_sources },
                                      &a),
                         0);
        assert_int_equal(actuator_start(a), 0);
        return a;
}

static void teardown(Actuator *a, EvalState *st, char *root, char *sd) {
        actuator_free(a);
        eval_state_free(st);
        test_rm_rf(root);
        test_rm_rf(sd);
        free(root);
        free(sd);
}

/* A kernel with the contrib patches (declared by the tree): -1 and the batch scale; then both handed back. */
static void test_act_and_release(void **state) {
        char *root = copy_root(), *sd = test_mkdtemp("actuator-state");
        EvalState *st = eval_state_new();
        DaemonCounters c = { 0 };
        PromKnob pk[_KNOB_ID_MAX];

        put(root, "/.pcptune/fraction-floor", "1\n");
        Actuator *a = new_actuator(root, sd, st, &c);
        assert_int_equal(learned_floor(a), FEATURE_PRESENT);

        assert_true(act_on(a, st, root, BOTH) & ACT_PAGESETS_CHANGED);
        assert_int_equal(test_value(root, FRACTION_PATH), -1);
        assert_int_equal(test_value(root, SCALE_PATH), 2);
        const KnobState *k = actuator_knobs(a);
        assert_true(k[KNOB_PCP_HIGH_FRACTION].managed && k[KNOB_PCP_HIGH_FRACTION].original == 0);
        assert_true(k[KNOB_PCP_BATCH_SCALE_MAX].managed && k[KNOB_PCP_BATCH_SCALE_MAX].original == 5);
        assert_true(k[KNOB_PCP_BATCH_SCALE_MAX].present && k[KNOB_PCP_BATCH_SCALE_MAX].value == 2);
        assert_non_null(strstr(k[KNOB_PCP_BATCH_SCALE_MAX].last_change, "5 -> 2 (policy t, rule r: pcp.batch_scale_max 2)"));
        char jname[JOURNAL_NAME_MAX];
        assert_true(exists(sd, journal_file_name(root, jname))); /* the fake root's own journal */
        assert_false(exists(sd, "restore.json"));
        assert_int_equal(actuator_prom_knobs(a, pk), 2);
        for (size_t i = 0; i < 2; i++)
                assert_true(pk[i].has_target && pk[i].counters->writes == 1 && pk[i].present);
        assert_int_equal(pk[0].target, -1);
        assert_int_equal(pk[1].target, 2);

        /* The same decision again: nothing to write. */
        assert_int_equal(act_on(a, st, root, BOTH), 0);
        assert_int_equal(actuator_prom_knobs(a, pk), 2);
        assert_int_equal(pk[0].counters->writes, 1);

        /* No rule sets them any more: both originals back, the journal empty. */
        assert_true(act_on(a, st, root, NONE) & ACT_PAGESETS_CHANGED);
        assert_int_equal(test_value(root, FRACTION_PATH), 0);
        assert_int_equal(test_value(root, SCALE_PATH), 5);
        assert_false(k[KNOB_PCP_HIGH_FRACTION].managed || k[KNOB_PCP_BATCH_SCALE_MAX].managed);
        assert_int_equal(actuator_stop(a), 0);
        assert_false(exists(sd, jname));
        assert_int_equal(actuator_failures(a), 0);

        teardown(a, st, root, sd);
}

/* A stock kernel: the tree says -1 is refused (the solved minimum is written), and has no batch scale. */
static void test_stock_kernel(void **state) {
        char *root = copy_root(), *sd = test_mkdtemp("actuator-state"), *p;
        EvalState *st = eval_state_new();
        DaemonCounters c = { 0 };

        assert_true(asprintf(&p, "%s" SCALE_PATH, root) > 0);
        assert_int_equal(unlink(p), 0);
        free(p);
        Actuator *a = new_actuator(root, sd, st, &c);
        assert_int_equal(learned_floor(a), FEATURE_ABSENT);

        assert_true(act_on(a, st, root, BOTH) & ACT_PAGESETS_CHANGED);
        int64_t f = test_value(root, FRACTION_PATH);
        assert_true(f >= 8);
        const KnobState *k = actuator_knobs(a);
        assert_false(k[KNOB_PCP_BATCH_SCALE_MAX].present || k[KNOB_PCP_BATCH_SCALE_MAX].managed);
        assert_false(exists(root, "proc/sys/vm/pcp_batch_scale_max"));
        assert_int_equal(actuator_failures(a), 0);

        /* Stop hands the fraction back. */
        assert_int_equal(actuator_stop(a), 0);
        assert_int_equal(test_value(root, FRACTION_PATH), 0);

        teardown(a, st, root, sd);
}

/*
 * --on-stop=keep: the values stay, the journal is marked handed over; the next actuator adopts it (the
 * originals kept), writes nothing for the same decision, and an emptied set still hands both back.  The
 * per-knob last errno and last change time as the metrics and the health file read them.
 */
static void test_hand_over(void **state) {
        char *root = copy_root(), *sd = test_mkdtemp("actuator-state");
        EvalState *st = eval_state_new();
        DaemonCounters c = { 0 };
        char mark[64], journal[JOURNAL_NAME_MAX];

        /* This fake root's files: handover-HASH and restore-HASH.json (root_state_name()). */
        assert_non_null(root_state_name(root, HANDOVER_FILE, mark, sizeof mark));
        journal_file_name(root, journal);

        put(root, "/.pcptune/fraction-floor", "1\n");
        Actuator *a = new_actuator(root, sd, st, &c);
        assert_true(act_on(a, st, root, BOTH) & ACT_PAGESETS_CHANGED);
        const KnobCounters *kc = actuator_counters(a);
        assert_int_equal(kc[KNOB_PCP_HIGH_FRACTION].writes, 1);
        assert_int_equal(kc[KNOB_PCP_HIGH_FRACTION].last_errno, 0);
        assert_true(kc[KNOB_PCP_HIGH_FRACTION].last_change_realtime_usec > 0);
        assert_false(actuator_crash_restored(a));
        assert_int_equal(actuator_hand_over(a), 2);
        assert_true(exists(sd, mark));
        assert_true(exists(sd, journal));
        assert_int_equal(test_value(root, FRACTION_PATH), -1);
        assert_int_equal(test_value(root, SCALE_PATH), 2);
        actuator_free(a);

        /* The next one adopts: the originals of the first, no write for the same decision. */
        a = new_actuator(root, sd, st, &c);
        assert_false(exists(sd, mark));
        assert_false(actuator_crash_restored(a));
        const KnobState *k = actuator_knobs(a);
        assert_true(k[KNOB_PCP_HIGH_FRACTION].managed && k[KNOB_PCP_HIGH_FRACTION].original == 0);
        assert_true(k[KNOB_PCP_BATCH_SCALE_MAX].managed && k[KNOB_PCP_BATCH_SCALE_MAX].original == 5);
        assert_int_equal(act_on(a, st, root, BOTH), 0);
        kc = actuator_counters(a);
        assert_int_equal(kc[KNOB_PCP_HIGH_FRACTION].writes, 0);
        assert_int_equal(kc[KNOB_PCP_BATCH_SCALE_MAX].writes, 0);
        assert_int_equal(kc[KNOB_PCP_HIGH_FRACTION].last_change_realtime_usec, 0);
        /* A new decision after the adoption is written, the first pcptuned's original still the one restored. */
        act_on(a, st, root, "version: 1\nname: t\nrules:\n  - name: r\n    pcp: { high: { fraction: 1000 }, "
                            "batch_scale_max: 2 }\n");
        assert_int_equal(test_value(root, FRACTION_PATH), 1000);
        assert_int_equal(kc[KNOB_PCP_HIGH_FRACTION].writes, 1);
        assert_true(k[KNOB_PCP_HIGH_FRACTION].managed && k[KNOB_PCP_HIGH_FRACTION].original == 0);

        /* An emptied set hands both back; a stop that keeps then has nothing to keep. */
        assert_true(act_on(a, st, root, NONE) & ACT_PAGESETS_CHANGED);
        assert_int_equal(test_value(root, FRACTION_PATH), 0);
        assert_int_equal(test_value(root, SCALE_PATH), 5);
        assert_true(kc[KNOB_PCP_HIGH_FRACTION].last_change_realtime_usec > 0);
        assert_int_equal(kc[KNOB_PCP_HIGH_FRACTION].restores, 1);
        assert_int_equal(actuator_hand_over(a), 0);
        assert_false(exists(sd, mark));
        assert_false(exists(sd, journal));
        teardown(a, st, root, sd);
}

/* A refused write keeps its errno for the metrics and the health file until a write succeeds. */
static void test_last_errno(void **state) {
        char *root = copy_root(), *sd = test_mkdtemp("actuator-state");
        EvalState *st = eval_state_new();
        DaemonCounters c = { 0 };

        /* 3: a value the handler rejects (below 8), so not one pcptune could hand back: refused (ERANGE). */
        put(root, FRACTION_PATH, "3\n");
        Actuator *a = new_actuator(root, sd, st, &c);
        act_on(a, st, root, BOTH);
        const KnobCounters *kc = actuator_counters(a);
        assert_int_equal(kc[KNOB_PCP_HIGH_FRACTION].last_errno, ERANGE);
        assert_int_equal(kc[KNOB_PCP_HIGH_FRACTION].refused, 1);
        assert_int_equal(kc[KNOB_PCP_HIGH_FRACTION].last_change_realtime_usec, 0);
        assert_int_equal(test_value(root, FRACTION_PATH), 3);
        put(root, FRACTION_PATH, "0\n");
        act_on(a, st, root, BOTH);
        assert_int_equal(kc[KNOB_PCP_HIGH_FRACTION].last_errno, 0);
        assert_true(kc[KNOB_PCP_HIGH_FRACTION].last_change_realtime_usec > 0);
        assert_true(test_value(root, FRACTION_PATH) >= 8);
        assert_int_equal(actuator_stop(a), 0);
        teardown(a, st, root, sd);
}

/* A journal without the handover mark is a crash's: restored at the start. */
static void test_crash_restore(void **state) {
        char *root = copy_root(), *sd = test_mkdtemp("actuator-state");
        EvalState *st = eval_state_new();
        DaemonCounters c = { 0 };

        put(root, "/.pcptune/fraction-floor", "1\n");
        Actuator *a = new_actuator(root, sd, st, &c);
        act_on(a, st, root, BOTH);
        actuator_free(a); /* as a kill: no stop */
        assert_int_equal(test_value(root, FRACTION_PATH), -1);
        a = new_actuator(root, sd, st, &c);
        assert_true(actuator_crash_restored(a));
        assert_int_equal(test_value(root, FRACTION_PATH), 0);
        assert_int_equal(test_value(root, SCALE_PATH), 5);
        assert_false(exists(sd, journal_file_name(root, (char[JOURNAL_NAME_MAX]){ 0 })));
        teardown(a, st, root, sd);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_act_and_release),
                cmocka_unit_test(test_stock_kernel),
                cmocka_unit_test(test_hand_over),
                cmocka_unit_test(test_crash_restore),
                cmocka_unit_test(test_last_errno),
        };
        log_setup("test-actuator", LOG_TARGET_NULL, LOG_DEBUG);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
