/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <math.h>

#include "policy-eval.h"
#include "probe-kernel.h"

/* History of one rule, keyed by policy and rule name so that it survives a reload. */
typedef struct RuleHistory {
        char *policy;
        char *rule;
        char *when_text;          /* the history is kept only while the condition text is unchanged */
        char *until_text;
        ConditionState when;
        ConditionState until;
        bool active;
        bool seen;                /* mark for eval_state_prune() */
        usec_t last_action;       /* USEC_INFINITY: never */
} RuleHistory;

struct EvalState {
        RuleHistory *rules;
        size_t n_rules;
        double ns_per_page;
};

void eval_state_set_ns_per_page(EvalState *s, double ns_per_page) {
        if (s)
                s->ns_per_page = ns_per_page > 0 && isfinite(ns_per_page) ? ns_per_page : 0;
}

static const char *const rule_verdict_table[_RULE_VERDICT_MAX] = {
        [RULE_ACTIVE] = "active",
        [RULE_INACTIVE] = "inactive",
        [RULE_HOST_MISMATCH] = "host does not match",
        [RULE_UNAVAILABLE] = "metric unavailable",
};

const char *rule_verdict_to_string(RuleVerdict v) {
        return v >= 0 && v < _RULE_VERDICT_MAX ? rule_verdict_table[v] : NULL;
}

EvalState *eval_state_new(void) {
        return calloc(1, sizeof(EvalState));
}

static void rule_history_done(RuleHistory *h) {
        free(h->policy);
        free(h->rule);
        free(h->when_text);
        free(h->until_text);
        condition_state_done(&h->when);
        condition_state_done(&h->until);
}

EvalState *eval_state_free(EvalState *s) {
        if (!s)
                return NULL;
        for (size_t i = 0; i < s->n_rules; i++)
                rule_history_done(&s->rules[i]);
        free(s->rules);
        free(s);
        return NULL;
}

static bool str_eq_null(const char *a, const char *b) {
        return (!a && !b) || (a && b && streq(a, b));
}

static char *strdup_null(const char *s) {
        return s ? strdup(s) : NULL;
}

/* (Re)initialize a history entry for a rule: no `for` history, inactive, never acted. */
static int rule_history_init(RuleHistory *h, const Policy *p, const Rule *r) {
        *h = (RuleHistory){
                .policy = strdup(p->name),
                .rule = strdup(r->name),
                .when_text = strdup_null(r->when.text),
                .until_text = strdup_null(r->until.text),
                .last_action = USEC_INFINITY,
        };
        if (!h->policy || !h->rule || (r->when.text && !h->when_text) || (r->until.text && !h->until_text))
                return -ENOMEM;
        return 0;
}

/* Find or create the history of (policy, rule); reset it if its conditions changed. */
static RuleHistory *eval_state_get(EvalState *s, const Policy *p, const Rule *r) {
        for (size_t i = 0; i < s->n_rules; i++) {
                RuleHistory *h = &s->rules[i];
                if (!streq(h->policy, p->name) || !streq(h->rule, r->name))
                        continue;
                if (str_eq_null(h->when_text, r->when.text) && str_eq_null(h->until_text, r->until.text))
                        return h;
                rule_history_done(h);
                return rule_history_init(h, p, r) < 0 ? NULL : h;
        }

        RuleHistory *n = realloc(s->rules, (s->n_rules + 1) * sizeof(RuleHistory));
        if (!n)
                return NULL;
        s->rules = n;
        RuleHistory *h = &s->rules[s->n_rules++];
        return rule_history_init(h, p, r) < 0 ? NULL : h;
}

void eval_state_prune(EvalState *s, const PolicySet *set) {
        size_t j = 0;

        for (size_t i = 0; i < s->n_rules; i++)
                s->rules[i].seen = false;
        for (size_t i = 0; set && i < set->n_policies; i++)
                for (size_t k = 0; k < set->policies[i]->n_rules; k++)
                        for (size_t m = 0; m < s->n_rules; m++)
                                if (streq(s->rules[m].policy, set->policies[i]->name) &&
                                    streq(s->rules[m].rule, set->policies[i]->rules[k].name))
                                        s->rules[m].seen = true;
        for (size_t i = 0; i < s->n_rules; i++) {
                if (s->rules[i].seen)
                        s->rules[j++] = s->rules[i];
                else
                        rule_history_done(&s->rules[i]);
        }
        s->n_rules = j;
}

void eval_state_action_done(EvalState *s, const Policy *p, const Rule *r, usec_t now) {
        RuleHistory *h = eval_state_get(s, p, r);
        if (h)
                h->last_action = now;
}

void decision_done(Decision *p) {
        if (!p)
                return;
        free(p->rules);
        free(p->actions);
        *p = (Decision){ 0 };
}

/*
 * Activation with hysteresis: without until:, active iff when: holds; with
 * until:, a rule becomes active when when: holds and stays active until
 * until: holds (its `for` history starts at activation).
 */
static RuleVerdict rule_update(const Rule *r, RuleHistory *h, const MetricValues *mv, usec_t now, int *ret_unavail) {
        Truth w, u;

        *ret_unavail = -1;
        if (!r->when.root) {
                h->active = true;
                return RULE_ACTIVE;
        }

        w = condition_eval(&r->when, mv, now, &h->when, ret_unavail);
        if (!r->until.root) {
                h->active = w == TRUTH_TRUE;
                return h->active ? RULE_ACTIVE : w == TRUTH_UNKNOWN ? RULE_UNAVAILABLE : RULE_INACTIVE;
        }

        if (!h->active) {
                if (w == TRUTH_TRUE) {
                        h->active = true;
                        condition_state_done(&h->until);
                } else
                        return w == TRUTH_UNKNOWN ? RULE_UNAVAILABLE : RULE_INACTIVE;
        }
        u = condition_eval(&r->until, mv, now, &h->until, ret_unavail);
        if (u == TRUTH_TRUE) {
                h->active = false;
                condition_state_done(&h->until);
                return RULE_INACTIVE;
        }
        /* until: unknown keeps the rule active: leaving a protective setting needs evidence. */
        return RULE_ACTIVE;
}

/* The first host: comparison that does not hold, as "cpus 2, needs >= 64".  false if all hold. */
bool host_match_explain(const HostMatch *h, const MetricValues *mv, char *buf, size_t size) {
        buf[0] = 0;
        for (size_t i = 0; h && mv && i < h->n_cmps; i++) {
                const struct HostCmp *c = &h->cmps[i];
                const MetricInfo *mi = metric_info(c->metric);
                char have[48], want[48];
                if (!mv->available[c->metric]) {
                        snprintf(buf, size, "%s unknown", mi->name);
                        return true;
                }
                if (cmp_apply(c->op, mv->value[c->metric], c->value))
                        continue;
                if (mi->unit == METRIC_UNIT_BYTES) {
                        format_bytes(have, sizeof have, (uint64_t) mv->value[c->metric]);
                        format_bytes(want, sizeof want, (uint64_t) c->value);
                } else if (mi->unit == METRIC_UNIT_VERSION) {
                        double hv = mv->value[c->metric], wv = c->value;
                        snprintf(have, sizeof have, "%d.%d", (int) (hv / 1e6), (int) (hv / 1e3) % 1000);
                        snprintf(want, sizeof want, "%d.%d", (int) (wv / 1e6), (int) (wv / 1e3) % 1000);
                } else {
                        snprintf(have, sizeof have, "%.0f", mv->value[c->metric]);
                        snprintf(want, sizeof want, "%.0f", c->value);
                }
                snprintf(buf, size, "%s %s, needs %s %s", mi->name, have, cmp_op_to_string(c->op), want);
                return true;
        }
        return false;
}

/* KNOB_SETTING_PCP_GOAL: the fraction that meets the goal on this host's zones (pcp_solve_goal()); bulk_free_p99 goals also get
 * the prediction behind the choice. */
static void pcp_high_solve(const KnobSolveInput *in, const KnobSetting *setting, KnobDecision *d) {
        const Snapshot *snap = in->snap;
        int f = 0;

        d->goal = setting->goal;
        if (!snap || snap->n_pcp_zones == 0) {
                d->solve_error = -ENODATA;
                return;
        }
        bool batched = kernel_batched_free_path(&snap->topo.kernel);
        if (d->goal.kind == PCP_GOAL_BULK_FREE_P99) {
                d->goal.ns_per_page = in->ns_per_page;
                d->goal.batched = batched;
                d->goal.has_scale_max = true;
                d->goal.scale_max = snapshot_batch_scale_max(snap);
                d->ns_per_page = d->goal.ns_per_page;
        }
        d->solve_error = pcp_solve_goal(snap->regime, snap->pcp_zones, snap->n_pcp_zones, snap->topo.page_size,
                                        &d->goal, &f);
        if (d->solve_error >= 0 || d->solve_error == -ERANGE)
                d->value = f;
        if (d->goal.kind == PCP_GOAL_BULK_FREE_P99 && d->ns_per_page > 0 &&
            (d->solve_error >= 0 || d->solve_error == -ERANGE) &&
            pcp_bulk_free_pages_host(snap->regime, snap->pcp_zones, snap->n_pcp_zones, snap->topo.page_size, f,
                                     batched, d->goal.scale_max, &d->pages) >= 0 &&
            pcp_bulk_free_pages_host(snap->regime, snap->pcp_zones, snap->n_pcp_zones, snap->topo.page_size, 0,
                                     batched, d->goal.scale_max, &d->default_pages) >= 0)
                d->predicted_ns = d->ns_per_page * (double) d->pages;
}

/* KNOB_SETTING_INT: the value as the rule gives it. */
static void knob_value_solve(const KnobSolveInput *in, const KnobSetting *setting, KnobDecision *d) {
        d->value = setting->value;
        d->solve_error = 0;
}


/* The solver of a row's setting kind (knob.h): d->value from d->goal or the rule's setting, and d->solve_error. */
static void knob_solve(const KnobDesc *desc, const KnobSolveInput *in, const KnobSetting *setting, KnobDecision *d) {
        switch (desc->setting) {
        case KNOB_SETTING_PCP_GOAL:
                pcp_high_solve(in, setting, d);
                break;
        case KNOB_SETTING_INT:
                knob_value_solve(in, setting, d);
                break;
        default:
                d->solve_error = -EOPNOTSUPP;
                break;
        }
}

/* Collect the comparisons below e with the `for` that governs each (its own or the nearest enclosing one). */
static void terms_collect(const Expr *e, const Expr *for_node, const MetricValues *mv, usec_t now,
                          const ConditionState *cs, RuleStatus *st) {
        if (!e)
                return;
        if (e->for_usec > 0)
                for_node = e;
        if (e->kind != EXPR_CMP) {
                terms_collect(e->a, for_node, mv, now, cs, st);
                terms_collect(e->b, for_node, mv, now, cs, st);
                return;
        }
        if (st->n_terms >= RULE_TERMS_MAX) {
                st->more_terms++;
                return;
        }
        RuleTerm *t = &st->terms[st->n_terms++];
        *t = (RuleTerm){ .metric = e->metric, .op = e->op, .threshold = e->value,
                         .available = mv->available[e->metric], .value = mv->value[e->metric] };
        t->holds = t->available && cmp_apply(e->op, t->value, e->value);
        if (for_node) {
                t->for_usec = for_node->for_usec;
                if (cs && cs->true_since && for_node->id < cs->n && cs->true_since[for_node->id] != USEC_INFINITY &&
                    now >= cs->true_since[for_node->id])
                        t->held_usec = now - cs->true_since[for_node->id];
        }
}

const char *rule_status_explain(const RuleStatus *st, const MetricValues *mv, char *buf, size_t size) {
        size_t l = 0;

        buf[0] = 0;
        if (st->verdict == RULE_HOST_MISMATCH) {
                snprintf(buf, size, "host: %s", st->host_why[0] ? st->host_why : "does not match");
                return buf;
        }
        if (!st->condition) {
                snprintf(buf, size, "no condition: always active");
                l = strlen(buf);
        } else
                for (size_t i = 0; i < st->n_terms && l < size; i++) {
                        const RuleTerm *t = &st->terms[i];
                        const char *name = metric_info(t->metric)->name;
                        char v[48], th[48], f[32], h[32];
                        metric_format_value(t->metric, t->threshold, th, sizeof th);
                        const char *sep = i ? "; " : "";
                        format_seconds(f, sizeof f, t->for_usec);
                        format_seconds(h, sizeof h, MIN(t->held_usec, t->for_usec));
                        if (!t->available)
                                l += (size_t) snprintf(buf + l, size - l, "%s%s unavailable (%s), needs %s %s", sep, name,
                                                       mv ? strna(mv->why_unavailable[t->metric]) : "n/a",
                                                       cmp_op_to_string(t->op), th);
                        else if (!t->holds)
                                l += (size_t) snprintf(buf + l, size - l, "%s%s %s, needs %s %s%s%s", sep, name,
                                                       metric_format_value(t->metric, t->value, v, sizeof v),
                                                       cmp_op_to_string(t->op), th, t->for_usec ? " for " : "",
                                                       t->for_usec ? f : "");
                        else if (t->for_usec)
                                l += (size_t) snprintf(buf + l, size - l, "%s%s %s %s %s, held %s of %s", sep, name,
                                                       metric_format_value(t->metric, t->value, v, sizeof v),
                                                       cmp_op_to_string(t->op), th, h, f);
                        else
                                l += (size_t) snprintf(buf + l, size - l, "%s%s %s %s %s: holds", sep, name,
                                                       metric_format_value(t->metric, t->value, v, sizeof v),
                                                       cmp_op_to_string(t->op), th);
                }
        if (l < size && st->more_terms)
                l += (size_t) snprintf(buf + l, size - l, "; %zu more comparison%s", st->more_terms,
                                       st->more_terms == 1 ? "" : "s");
        if (l < size && st->condition && streq(st->condition, "until"))
                l += (size_t) snprintf(buf + l, size - l, " (until: ends the rule)");
        if (l < size && st->cooldown_left_usec > 0) {
                char c[32];
                snprintf(buf + l, size - l, "; cooldown %s left", format_seconds(c, sizeof c, st->cooldown_left_usec));
        }
        return buf;
}

int policy_eval(const PolicySet *set, const Snapshot *snap, const MetricValues *mv, EvalState *state, usec_t now,
                Decision *ret) {
        Decision decision = { 0 };
        size_t total = 0;

        for (size_t i = 0; set && i < set->n_policies; i++)
                total += set->policies[i]->n_rules;
        decision.rules = calloc(MAX(total, (size_t) 1), sizeof(RuleStatus));
        decision.actions = calloc(MAX(2 * total, (size_t) 1), sizeof(DecidedAction));
        if (!decision.rules || !decision.actions) {
                decision_done(&decision);
                return -ENOMEM;
        }

        /* Policies are sorted by ascending priority (then file name) and rules are in file
         * order, so the last active rule that sets a knob is the one that wins. */
        for (size_t i = 0; set && i < set->n_policies; i++) {
                const Policy *p = set->policies[i];
                Truth host = host_match_eval(&p->host, mv);

                for (size_t k = 0; k < p->n_rules; k++) {
                        const Rule *r = &p->rules[k];
                        RuleStatus *st = &decision.rules[decision.n_rules++];
                        RuleHistory *h = eval_state_get(state, p, r);
                        bool was_active;

                        if (!h) {
                                decision_done(&decision);
                                return -ENOMEM;
                        }
                        was_active = h->active;
                        st->policy = p;
                        st->rule = r;
                        st->unavailable_metric = -1;

                        if (host != TRUTH_TRUE) {
                                h->active = false;
                                condition_state_done(&h->when);
                                condition_state_done(&h->until);
                                st->verdict = RULE_HOST_MISMATCH;
                                host_match_explain(&p->host, mv, st->host_why, sizeof st->host_why);
                        } else
                                st->verdict = rule_update(r, h, mv, now, &st->unavailable_metric);

                        /* The condition that decides now: until: while an active rule has one, else when:. */
                        bool by_until = st->verdict == RULE_ACTIVE && r->until.root;
                        const Condition *c = by_until ? &r->until : &r->when;
                        if (c->root) {
                                st->condition = by_until ? "until" : "when";
                                terms_collect(c->root, NULL, mv, now, by_until ? &h->until : &h->when, st);
                        }
                        if (r->action.kind != ACTION_NONE || r->repair_pagesets) {
                                usec_t cd = r->cooldown_usec ?: r->action.kind != ACTION_NONE ? COOLDOWN_DEFAULT_ACTION_USEC
                                                                                               : COOLDOWN_DEFAULT_REPAIR_USEC;
                                if (h->last_action != USEC_INFINITY && now >= h->last_action && now - h->last_action < cd)
                                        st->cooldown_left_usec = cd - (now - h->last_action);
                        }

                        st->newly_active = !was_active && st->verdict == RULE_ACTIVE;
                        st->newly_inactive = was_active && st->verdict != RULE_ACTIVE;
                        if (st->verdict != RULE_ACTIVE)
                                continue;

                        for (KnobId id = 0; id < _KNOB_ID_MAX; id++)
                                if (r->knobs[id].set)
                                        decision.knobs[id] = (KnobDecision){ .wanted = true, .policy = p, .rule = r };
                        if (r->action.kind == ACTION_NONE && !r->repair_pagesets)
                                continue;
                        usec_t cooldown = r->cooldown_usec ?: r->action.kind != ACTION_NONE
                                                                       ? COOLDOWN_DEFAULT_ACTION_USEC
                                                                       : COOLDOWN_DEFAULT_REPAIR_USEC;
                        if (h->last_action != USEC_INFINITY && now - h->last_action < cooldown)
                                continue;
                        if (r->action.kind != ACTION_NONE)
                                decision.actions[decision.n_actions++] = (DecidedAction){ p, r, &r->action, false };
                        if (r->repair_pagesets)
                                decision.actions[decision.n_actions++] = (DecidedAction){ p, r, NULL, true };
                }
        }

        /* Each winning setting solved into the value to write, by the knob's row. */
        KnobSolveInput in = { .snap = snap, .ns_per_page = state ? state->ns_per_page : 0 };
        for (KnobId id = 0; id < _KNOB_ID_MAX; id++) {
                KnobDecision *d = &decision.knobs[id];
                int64_t v;
                if (!d->wanted)
                        continue;
                knob_solve(knob_desc(id), &in, &d->rule->knobs[id], d);
                d->absent = !snap || snapshot_knob_value(snap, id, &v) < 0;
                d->usable = d->solve_error >= 0 || d->solve_error == -ERANGE;
        }

        *ret = decision;
        return 0;
}

bool rule_uses_metric(const Rule *r, MetricId id) {
        return condition_uses_metric(&r->when, id) || condition_uses_metric(&r->until, id);
}

bool policy_set_uses_metric_on_host(const PolicySet *s, const MetricValues *mv, MetricId id) {
        for (size_t i = 0; s && i < s->n_policies; i++) {
                const Policy *p = s->policies[i];
                if (host_match_eval(&p->host, mv) != TRUTH_TRUE)
                        continue;
                for (size_t k = 0; k < p->n_rules; k++)
                        if (rule_uses_metric(&p->rules[k], id))
                                return true;
        }
        return false;
}

double policy_set_lowest_threshold(const PolicySet *s, MetricId first, MetricId last, bool with_until) {
        double low = HUGE_VAL;

        for (size_t i = 0; s && i < s->n_policies; i++)
                for (size_t k = 0; k < s->policies[i]->n_rules; k++) {
                        const Rule *r = &s->policies[i]->rules[k];
                        low = MIN(low, condition_lowest_threshold(&r->when, first, last));
                        if (with_until)
                                low = MIN(low, condition_lowest_threshold(&r->until, first, last));
                }
        return low;
}

bool policy_set_has_action(const PolicySet *s, ActionKind kind) {
        for (size_t i = 0; s && i < s->n_policies; i++)
                for (size_t k = 0; k < s->policies[i]->n_rules; k++)
                        if (s->policies[i]->rules[k].action.kind == kind)
                                return true;
        return false;
}

void decision_rule_on_kernel(Decision *d, const KernelProbes *probes) {
        const ProbeResult *rp = probes ? kernel_probes_find(probes, PROBE_REPARENTING) : NULL;

        if (!rp || rp->answer != PROBE_YES)
                return;
        for (size_t i = 0; i < d->n_actions; i++)
                if (d->actions[i].action && d->actions[i].action->kind == ACTION_RECLAIM_DYING)
                        d->actions[i].kernel_note = rp->evidence;
}
