/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include "metrics.h"
#include "policy.h"
#include "snapshot.h"

/*
 * Policy evaluation: a pure function of (snapshot metrics, history, policy
 * set) -> decision.  The history (EvalState) holds what conditions need across
 * samples: since when each `for` operand has held, which rules are active
 * (for `until:` hysteresis) and when each rule last acted (cooldown).  Dry-run
 * and live mode run the same code; only the actuators differ.
 */

typedef struct EvalState EvalState;

EvalState *eval_state_new(void);
EvalState *eval_state_free(EvalState *s);

/*
 * The bulk-free time per page (ns, > 0; 0: none) that bulk_free_p99 goals are
 * solved with: the daemon's calibration, held with hysteresis (manager.c).
 */
void eval_state_set_ns_per_page(EvalState *s, double ns_per_page);
DEFINE_TRIVIAL_CLEANUP_FUNC(EvalState *, eval_state_free);

/* Why a rule is (in)active, for reports. */
typedef enum RuleVerdict {
        RULE_ACTIVE,
        RULE_INACTIVE,            /* when: false (or until: held) */
        RULE_HOST_MISMATCH,       /* the policy's host: does not match */
        RULE_UNAVAILABLE,         /* a metric the condition needs is unavailable */
        _RULE_VERDICT_MAX,
} RuleVerdict;

const char *rule_verdict_to_string(RuleVerdict v);

/* One comparison of the condition that decides a rule now, as evaluated (for reports). */
typedef struct RuleTerm {
        MetricId metric;
        CmpOp op;
        double threshold;         /* in the metric's unit */
        double value;             /* the metric now (valid if available) */
        bool available;
        bool holds;               /* the comparison holds now */
        usec_t for_usec;          /* the `for` on it or on the nearest enclosing node; 0: none */
        usec_t held_usec;         /* how long that `for` operand has held until now (0: not holding) */
} RuleTerm;

#define RULE_TERMS_MAX 8

typedef struct RuleStatus {
        const Policy *policy;
        const Rule *rule;
        RuleVerdict verdict;
        int unavailable_metric;   /* MetricId or -1 */
        bool newly_active;        /* became active at this evaluation */
        bool newly_inactive;
        /* Why: the condition that decides now ("when" while inactive, "until" while an active rule has one;
         * NULL: none), its comparisons in parse order (at most RULE_TERMS_MAX; more_terms counts the rest),
         * the cooldown left before its action may run again, and why the policy's host: does not match. */
        const char *condition;
        RuleTerm terms[RULE_TERMS_MAX];
        size_t n_terms;
        size_t more_terms;
        usec_t cooldown_left_usec;
        char host_why[96];
} RuleStatus;

/*
 * The first host: comparison that does not hold, as "cpus 2, needs >= 64" (or "cpus unknown"), in buf.
 * Returns false (buf empty) when every comparison holds.
 */
bool host_match_explain(const HostMatch *h, const MetricValues *mv, char *buf, size_t size);

/*
 * A rule's state in words, from its evaluation: "memcg.dying 127, needs > 200 for 10 s (held 0 s)",
 * "... ; cooldown 42 s left", "host: cpus 2, needs >= 64", or for an unavailable metric the metric and
 * why_unavailable.  Returns buf.
 */
const char *rule_status_explain(const RuleStatus *st, const MetricValues *mv, char *buf, size_t size);

/* An action a rule asks for now (rule active, cooldown elapsed). */
typedef struct DecidedAction {
        const Policy *policy;
        const Rule *rule;
        const Action *action;     /* NULL for a pageset repair */
        bool repair_pagesets;
        /* What the evaluation knows of this action on this kernel (decision_rule_on_kernel()): a note the
         * actuator logs once (points into the probes ruled on); NULL: nothing to say. */
        const char *kernel_note;
} DecidedAction;

/* Cooldowns when a rule gives none: a repair that did not help must not loop every sample. */
#define COOLDOWN_DEFAULT_ACTION_USEC (60 * USEC_PER_SEC)
#define COOLDOWN_DEFAULT_REPAIR_USEC (600 * USEC_PER_SEC)

/* What the evaluation decided: a value for each managed knob of the table (knob.h), the rules' states, the
 * actions to run now. */
typedef struct Decision {
        KnobDecision knobs[_KNOB_ID_MAX];  /* by the knob's row; wanted false for rows no rule sets */
        RuleStatus *rules;        /* one per rule of the set, in set order */
        size_t n_rules;
        DecidedAction *actions;
        size_t n_actions;
} Decision;

/*
 * Evaluate the set at time now (CLOCK_MONOTONIC µs).  The snapshot gives the
 * host's zones for the goal solver; mv the metric values.  Updates state.
 * Returns 0 or -ENOMEM.  Release the decision with decision_done().
 */
int policy_eval(const PolicySet *set, const Snapshot *snap, const MetricValues *mv, EvalState *state, usec_t now,
                Decision *ret);

void decision_done(Decision *p);

struct KernelProbes;

/*
 * The rulings that rest on what the kernel is (probe-kernel.h), after
 * policy_eval(): on a kernel that reparents LRU folios when a memcg goes
 * offline (PROBE_REPARENTING answers yes, 7.1+: memcg_reparent_objcgs() in
 * mm/memcontrol.c) a reclaim-dying action still runs, with a note: page
 * cache no longer pins removed memcgs, but files written through cgroup
 * writeback (ext4, xfs, btrfs) keep their memcgs dying until the cache is
 * reclaimed (Debian 7.2.13, ext4: 10 of 10 removed memcgs still dying 45 s
 * after sync, freed by reclaiming the parent; docs/kernels.md).  probes may
 * be NULL (no ruling).
 */
void decision_rule_on_kernel(Decision *d, const struct KernelProbes *probes);

/* Record that the rule's action ran at time now (starts its cooldown). */
void eval_state_action_done(EvalState *state, const Policy *p, const Rule *r, usec_t now);

/* Drop history of rules that no longer exist in set (after a reload). */
void eval_state_prune(EvalState *state, const PolicySet *set);

/*
 * Questions about what a policy set needs, answered from its expression trees
 * (the daemon opens event sources and reads costly files only for what is used).
 */

/* Does the rule's when: or until: use the metric? */
bool rule_uses_metric(const Rule *r, MetricId id);

/*
 * Does a rule of a policy whose host: holds on mv use the metric?  mv: the
 * metrics of the last sample (host: compares cpus, memory, kernel, nodes); a
 * host: that is UNKNOWN on mv does not count.
 */
bool policy_set_uses_metric_on_host(const PolicySet *s, const MetricValues *mv, MetricId id);

/*
 * The lowest value any rule of the set compares a metric in [first, last]
 * with > or >= (condition_lowest_threshold()), in when: and, with
 * with_until, in until: too; every policy, whatever its host:.  HUGE_VAL when
 * none does.
 */
double policy_set_lowest_threshold(const PolicySet *s, MetricId first, MetricId last, bool with_until);

/* Does a rule of the set take this action? */
bool policy_set_has_action(const PolicySet *s, ActionKind kind);
