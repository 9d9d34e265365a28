/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "action.h"
#include "knob.h"
#include "metrics.h"
#include "model-pcp.h"
#include "util.h"

/*
 * Operator policies (pcptune.policy(5)).  A policy file is one YAML mapping:
 *
 *   version: 1                        required, must be 1
 *   name: large-host-latency          required, [A-Za-z0-9._-]+, unique in the set
 *   description: ...                  optional
 *   priority: 50                      optional (default 50), 0..1000; higher wins
 *   host:                             optional, all must hold
 *     cpus: ">= 64"                   count comparison ("64" means == 64)
 *     memory: ">= 256GiB"             size comparison
 *     kernel: ">= 5.14"               version comparison
 *     nodes: ">= 2"                   count comparison
 *     (each value may also be a list of comparisons, all of which must hold)
 *   rules:                            required, a sequence of rules
 *     - name: cap-pcp-high            required, unique in the policy
 *       description: ...
 *       when: <expr>                  optional; absent = always active
 *       until: <expr>                 optional, needs when: once active, the rule
 *                                     stays active until this holds (hysteresis)
 *       cooldown: 10m                 optional duration between two actions
 *       pcp: { high: <goal> }         goal: default | minimum | "<N>x batch" (N >= 4,
 *                                     also "N × batch") | "<size> per cpu" |
 *                                     "<size> per node" | { fraction: N } (0 or 8..INT_MAX)
 *       pcp: { <key>: <value> }       every managed knob of the table (knob.h) by its
 *                                     policy key after "pcp."; high is the one above
 *       action: { reclaim-dying: {...} }   see ActionReclaimDying; exactly one action
 *       action: { percpu-depopulate: {} }  (value {} or empty)
 *       repair: pagesets
 *     A rule must set pcp, action or repair.  Unknown and duplicate keys are
 *     errors; one YAML document per file; aliases are refused.
 *
 * Expressions: comparisons `metric OP literal` (OP: > >= < <= == !=),
 * `and`, `or`, `not`, parentheses, and `for <duration>` after a comparison or
 * a parenthesized group: it holds when its operand has held continuously for
 * the duration.  Literals carry the metric's unit (metrics.h).
 *
 *   expr    := and ("or" and)*
 *   and     := unary ("and" unary)*
 *   unary   := "not" unary | primary ["for" DURATION]
 *   primary := "(" expr ")" | METRIC OP LITERAL
 *
 * A literal or a duration may put one blank between number and unit ("5 MiB",
 * "200 /s", "3 s").  Keywords are lower case.  At most 64 nested not/(, 1000 nodes.
 */

typedef enum CmpOp {
        CMP_LT,
        CMP_LE,
        CMP_GT,
        CMP_GE,
        CMP_EQ,
        CMP_NE,
        _CMP_MAX,
        _CMP_INVALID = -EINVAL,
} CmpOp;

const char *cmp_op_to_string(CmpOp op);
/* "<", "<=", ">", ">=", "==", "!=" -> CmpOp, or -EINVAL. */
int cmp_op_from_string(const char *s);
/* a OP b. */
bool cmp_apply(CmpOp op, double a, double b);

typedef enum ExprKind {
        EXPR_CMP,
        EXPR_AND,
        EXPR_OR,
        EXPR_NOT,
        _EXPR_KIND_MAX,
        _EXPR_KIND_INVALID = -EINVAL,
} ExprKind;

typedef struct Expr Expr;
struct Expr {
        ExprKind kind;
        unsigned id;            /* index into ConditionState.true_since, 0..n_nodes-1 */
        usec_t for_usec;        /* 0: no duration */
        /* EXPR_CMP */
        MetricId metric;
        CmpOp op;
        double value;           /* in the metric's unit (bytes, pages, percent, per second, encoded version) */
        /* EXPR_AND/OR: a, b; EXPR_NOT: a */
        Expr *a, *b;
        /* 1-based position in the policy file of the node's token: the metric
         * of a comparison, the keyword of and/or/not (see condition_parse()). */
        unsigned line, column;
};

/* Parsed expression: tree plus node count (for state arrays) and source text. */
typedef struct Condition {
        Expr *root;
        unsigned n_nodes;
        char *text;
        unsigned line, column;
} Condition;

/* Tri-state result: a condition over an unavailable metric is UNKNOWN (treated as false). */
typedef enum Truth {
        TRUTH_FALSE,
        TRUTH_TRUE,
        TRUTH_UNKNOWN,
} Truth;

/* Per-condition history: since when each node has been true (USEC_INFINITY = not true). */
typedef struct ConditionState {
        usec_t *true_since;
        unsigned n;
} ConditionState;

/*
 * Parse an expression.  `line`/`column` locate text in the file for messages;
 * on error *ret_error is "LINE:COLUMN: message" relative to the file (caller
 * prefixes the file name).  0, -EINVAL (syntax, unknown metric, wrong unit) or -ENOMEM.
 * Positions: text starts at line:column; a '\n' in text starts the next line
 * at column 1 (policy_parse() passes the source text of multi-line scalars so
 * that positions are exact); columns count UTF-8 characters, like libyaml.
 * ret->text is the text with blank runs collapsed to one space; ret->line and
 * ret->column are the arguments (policy_parse() sets them to the scalar's start).
 * Node ids are assigned in parse order (children before their parent).
 */
int condition_parse(const char *text, unsigned line, unsigned column, Condition *ret, char **ret_error);
void condition_done(Condition *c);

/*
 * Parse a literal in the unit of metric id (shared by conditions and host:):
 * BYTES "4096", "64KiB", "2 GiB" (parse_size()); PAGES and COUNT a
 * non-negative integer; PERCENT "12.5" or "12.5%" (0..100); RATE "200/s",
 * "300/m", "10/h" stored per second; VERSION "X.Y[.Z]" encoded by
 * kernel_version_to_double().  0, -EINVAL with *ret_error (may be NULL) set to
 * "expected ..., found '...'" without a position, or -ENOMEM.
 */
int condition_parse_literal(MetricId id, const char *s, double *ret_value, char **ret_error);

/* Does the condition use this metric? */
bool condition_uses_metric(const Condition *c, MetricId id);

/*
 * The lowest value the condition compares a metric in [first, last] (MetricId
 * order) against with > or >=: the level from which the condition can turn
 * true.  In the metrics' units; HUGE_VAL when no such comparison exists.
 */
double condition_lowest_threshold(const Condition *c, MetricId first, MetricId last);

/*
 * Evaluate at time now (CLOCK_MONOTONIC µs), updating the state (allocated on
 * first use to c->n_nodes).  An unavailable metric makes its comparison UNKNOWN;
 * AND/OR/NOT use Kleene logic; `for` holds only if its operand was TRUE
 * continuously since now - for_usec.  Sets *ret_unavailable (may be NULL) to the
 * first unavailable metric or -1.  Returns the truth value.
 * Every node is evaluated on every call (no short circuit) so that all `for`
 * histories advance; a node whose operand is FALSE or UNKNOWN restarts its
 * history.  An empty condition (c->root NULL) is TRUE.  st may be NULL (or
 * its allocation fail): then `X for D` is TRUE only for D = 0.
 * condition_state_done() resets a state; it may be evaluated again after it.
 */
Truth condition_eval(const Condition *c, const MetricValues *mv, usec_t now, ConditionState *st,
                     int *ret_unavailable);
void condition_state_done(ConditionState *st);

typedef struct HostMatch {
        /* Each list is ANDed; n == 0 means no constraint. */
        struct HostCmp {
                MetricId metric;     /* METRIC_CPUS, METRIC_MEMORY, METRIC_KERNEL, METRIC_NODES */
                CmpOp op;
                double value;
                unsigned line, column;
        } *cmps;
        size_t n_cmps;
} HostMatch;

/*
 * reclaim-dying: reclaim the memory-cgroup subtrees that hold dying memcgs.
 *   cgroup: auto | <path below the memory hierarchy>   (required)
 *   roots: [paths]        auto picks among these subtrees (default: every top-level cgroup);
 *                         never the root cgroup, never outside them
 *   max: 256MiB           bytes reclaimed per run (v2 memory.reclaim total); default 256MiB
 *   step: 16MiB           bytes per memory.reclaim write; default 16MiB
 *   timeout: 10s          time bound of one run; default 10s
 *   min-dying: 1          act only on subtrees holding at least this many (estimated) dying memcgs
 *   force-empty: false    v1: allow memory.force_empty on the parent (reclaims the
 *                         whole subtree, live children included): true; or only on
 *                         cgroups without live children: childless
 *   drop-caches: false    allow vm.drop_caches=1 as a last resort (whole host)
 *   allow-swap: false     v2: where memory.reclaim takes no swappiness= (before 6.12
 *                         here), reclaim anyway, anonymous memory of live cgroups
 *                         included; false: such subtrees are skipped
 *   refault-window: 30s   refaults of the live cgroups in each reclaimed subtree are
 *                         counted from just before its reclaim until this long after
 *                         the run
 *   max-refault-rate: 100/s  a subtree whose live cgroups refaulted faster than this
 *                         over the window is skipped for the rule's cooldown; default: none
 */
typedef enum ForceEmpty {
        FORCE_EMPTY_NO,
        FORCE_EMPTY_CHILDLESS,   /* only where no live child would lose its page cache */
        FORCE_EMPTY_YES,
        _FORCE_EMPTY_MAX,
} ForceEmpty;

typedef struct ActionReclaimDying {
        char *cgroup;          /* "auto" or a path like "/pcptune-test-x" */
        char **roots;          /* NULL-terminated, or NULL */
        uint64_t max_bytes;
        uint64_t step_bytes;
        usec_t timeout_usec;
        uint64_t min_dying;
        ForceEmpty force_empty;
        bool drop_caches;
        bool allow_swap;
        usec_t refault_window_usec;
        double max_refault_rate;  /* refaulted pages per second; 0: no bound */
} ActionReclaimDying;

typedef struct Action {
        ActionKind kind;
        ActionReclaimDying reclaim;
        unsigned line, column;
} Action;

typedef struct Rule {
        char *name;
        char *description;
        Condition when;         /* when.root NULL: always active */
        Condition until;        /* until.root NULL: inactive as soon as when is false */
        usec_t cooldown_usec;
        KnobSetting knobs[_KNOB_ID_MAX]; /* what the rule sets each managed knob of the table to */
        Action action;
        bool repair_pagesets;
        unsigned line, column;  /* of the rule's mapping */
} Rule;

/* Whether the rule sets some managed knob. */
static inline bool rule_sets_knobs(const Rule *r) {
        for (KnobId k = 0; k < _KNOB_ID_MAX; k++)
                if (r->knobs[k].set)
                        return true;
        return false;
}

typedef struct Policy {
        char *file;             /* path as given (or "<embedded>/name.yaml") */
        char *name;
        char *description;
        int priority;
        HostMatch host;
        Rule *rules;
        size_t n_rules;
        unsigned line, column;
        unsigned name_line, name_column;   /* of the name: value (what a duplicate name is reported at) */
} Policy;

typedef struct PolicySet {
        Policy **policies;      /* sorted by ascending (priority, file name): the last wins */
        size_t n_policies;
        char *source;           /* directory, or "embedded" */
} PolicySet;

/* Diagnostics collected while loading: "file:line:column: message" strings. */
typedef struct Diagnostics {
        char **errors;
        size_t n_errors;
        char **warnings;
        size_t n_warnings;
} Diagnostics;

/* A rate literal as in conditions: "200/s", "300/m", "10/h" (a blank before '/' allowed), in 1/s.
 * 0 or -EINVAL. */
int policy_rate_parse(const char *s, double *ret);

void diagnostics_done(Diagnostics *d);

/*
 * Log every error (LOG_ERR) and warning (LOG_WARNING), with CONFIG_FILE= and
 * CONFIG_LINE= taken from its "file:line:column: " prefix so that journalctl
 * can point at the file.  For the daemon, which decides what a load means.
 */
void diagnostics_log(const Diagnostics *d);
_printf_(2, 3) void diagnostics_error(Diagnostics *d, const char *fmt, ...);
_printf_(2, 3) void diagnostics_warning(Diagnostics *d, const char *fmt, ...);

/*
 * Parse one policy file's text (buf need not be NUL-terminated; len bytes
 * are read).  filename is used in messages and stored in Policy.file.
 * Every problem is added to diag (may be NULL) as "filename:line:column: what
 * was expected, what was found" (1-based), sorted by position.  Parsing goes
 * on after a bad value to report every independent mistake, except after a
 * YAML syntax error, which is then the only error reported.  Only errors are
 * added, never warnings.  Returns 0 and *ret, or -EINVAL (see diag), -ENOMEM.
 */
int policy_parse(const char *filename, const char *buf, size_t len, Policy **ret, Diagnostics *diag);
Policy *policy_free(Policy *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Policy *, policy_free);

/*
 * Load "*.yaml"/"*.yml" files of a directory, in name order (byte order),
 * skipping hidden files.  Files must be regular (symlinks are followed and
 * the target checked), owned by root (uid 0) and not writable by group or
 * others, and so must the directory (check_owner=false skips that, for tests
 * as non-root); otherwise refused with an error naming the file, owner and
 * mode.  At most 1 MiB each.  A Kubernetes ConfigMap volume (a "..data"
 * symlink to a "..<timestamp>" directory beside it) is read from the directory
 * "..data" names when the load starts, so an update during the load is never
 * half seen; that directory is the one checked, and Policy.file is still
 * "dir/name".
 * An empty directory gives an empty set.  Every file is parsed, so diag gets
 * the errors of all of them; then policy_set_check().  Policy.file is
 * "dir/name".  diag may be NULL.
 * Returns 0 and *ret; -ENOENT (missing directory) or another -errno of
 * opendir()/readdir() with an error in diag and no set; -EINVAL if any file
 * or the set check failed; -ENOMEM.  *ret is only set on success.
 */
int policy_set_load_dir(const char *dir, bool check_owner, PolicySet **ret, Diagnostics *diag);

/* Is name a policy file's name: "*.yaml" or "*.yml", not hidden? */
bool policy_file_name_valid(const char *name);

/* Load the policies compiled into the binary (the shipped policies/); Policy.file is "<embedded>/NAME". */
int policy_set_load_embedded(PolicySet **ret, Diagnostics *diag);

/*
 * The default source: dir if given (used as it is); else POLICY_DIR_DEFAULT
 * (set by the build to $(sysconfdir)/pcptune/policies.d, else
 * /etc/pcptune/policies.d) unless it does not exist (ENOENT); else the
 * embedded set.  An existing empty directory is an empty set (no fallback).
 */
int policy_set_load_default(const char *dir, bool check_owner, PolicySet **ret, Diagnostics *diag);

/*
 * Load files and/or directories (pcptunectl validate); paths is NULL-terminated.
 * A file given explicitly needs no .yaml suffix.  PolicySet.source is the
 * paths joined by spaces.  0, or the first -errno/-EINVAL (diag has details).
 */
int policy_set_load_paths(char **paths, bool check_owner, PolicySet **ret, Diagnostics *diag);

/*
 * The shipped policies compiled into the binary: daemon/policies-embedded.c,
 * generated by build-aux/embed-policies from the files of policies/.  The array
 * ends with a { NULL, NULL } entry (so it is never empty).
 */
typedef struct EmbeddedPolicy {
        const char *name;      /* file name, e.g. "50-large-host-latency.yaml" */
        const char *text;      /* file content */
} EmbeddedPolicy;
extern const EmbeddedPolicy embedded_policies[];
extern const size_t n_embedded_policies;

PolicySet *policy_set_free(PolicySet *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(PolicySet *, policy_set_free);

/*
 * Host match against metric values (cpus, memory, kernel, nodes), Kleene AND:
 * FALSE if a comparison fails, else UNKNOWN if a metric is unavailable, else
 * TRUE (also with no comparison).
 */
Truth host_match_eval(const HostMatch *h, const MetricValues *mv);

/*
 * Semantic pass over a sorted set (the loaders call it):
 *  - errors: duplicate policy names, "file:line:col: expected unique policy names, ...";
 *  - warnings: a rule setting a managed knob (its policy key, knob.h) that can
 *    never win because a later rule of its policy without `when:` sets it, or
 *    a rule without `when:` of a later policy in the set order (higher
 *    priority, or equal priority and a later file name) without `host:`:
 *    "file:line:column: rule 'x' can never win: rule 'y' (file:line) always sets pcp.high".
 */
void policy_set_check(const PolicySet *s, Diagnostics *diag);

/* Does any rule in the set use this metric (when/until)? */
bool policy_set_uses_metric(const PolicySet *s, MetricId id);
