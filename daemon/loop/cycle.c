/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cycle.h"

void cycle_done(Cycle *c) {
        if (!c)
                return;
        snapshot_free(c->snap);
        snapshot_free(c->after);
        decision_done(&c->decision);
        *c = (Cycle){ 0 };
}

void cycle_observe(Cycle *c, Snapshot *s) {
        snapshot_free(c->snap);
        c->snap = s;
        metrics_from_snapshot(s, &c->mv);
}

static void cycle_run_probes(Cycle *c) {
        kernel_probes_run(&(ProbeInput){ .root = c->root, .snap = c->snap, .kernel = c->snap->topo.kernel,
                                         .features = &c->features },
                          &c->probes);
        c->probed = true;
}

/* A learned answer replaces the declared or unknown one; FEATURE_UNKNOWN learns nothing. */
static void learn(FeatureState *f, FeatureState learned) {
        if (learned != FEATURE_UNKNOWN)
                *f = learned;
}

void cycle_probe(Cycle *c, const char *root, const KernelFeatures *declared, const ActLearned *learned) {
        c->root = root;
        c->declared = declared;
        kernel_features_from_snapshot(declared, c->snap, &c->features);
        if (learned) {
                learn(&c->features.fraction_floor, learned->fraction_floor);
                learn(&c->features.reclaim_swappiness, learned->reclaim_swappiness);
                learn(&c->features.reclaim_scope_dying, learned->reclaim_scope_dying);
        }
        cycle_run_probes(c);
}

int cycle_evaluate(Cycle *c, const PolicySet *set, EvalState *st, usec_t now) {
        int r;

        decision_done(&c->decision);
        c->evaluated = false;
        r = policy_eval(set, c->snap, &c->mv, st, now, &c->decision);
        if (r < 0)
                return r;
        decision_rule_on_kernel(&c->decision, c->probed ? &c->probes : NULL);
        c->evaluated = true;
        return 0;
}

void cycle_fold(Cycle *c, const ActReport *rep, EvalState *st, Snapshot *after) {
        KnobId pcp = c->snap->has_knob ? c->snap->pcp_knob : _KNOB_ID_INVALID;

        c->knob_before = snapshot_pcp_value(c->snap);
        for (size_t i = 0; i < rep->n_done; i++)
                eval_state_action_done(st, rep->done[i].policy, rep->done[i].rule, rep->done[i].at);
        snapshot_free(c->after);
        c->after = after;
        /* The report and STATUS= show what the knob holds now (the actuator read it back). */
        if (!c->after && pcp != _KNOB_ID_INVALID && rep->has_readback && rep->readback[pcp].present)
                c->snap->knobs[pcp].value = rep->readback[pcp].value;
        c->acted = c->after && c->after->has_knob && snapshot_pcp_value(c->after) != c->knob_before;
        /* The probes again: writing -1 may have just told whether the kernel takes it. */
        if (c->probed && rep->learned.fraction_floor != FEATURE_UNKNOWN &&
            c->features.fraction_floor != rep->learned.fraction_floor)
                cycle_probe(c, c->root, c->declared, &rep->learned);
}

const Snapshot *cycle_shown(const Cycle *c) {
        return c->after ?: c->snap;
}

void cycle_report_input(const Cycle *c, ReportInput *ret) {
        *ret = (ReportInput){ .snap = cycle_shown(c), .mv = &c->mv, .decision = c->evaluated ? &c->decision : NULL,
                              .features = c->probed ? &c->features : NULL, .probes = c->probed ? &c->probes : NULL,
                              .memcg_cost = c->has_cost ? &c->cost : NULL, .acted = c->acted,
                              .acted_from = c->knob_before };
}
