/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Policy parsing, the condition language, loading and set checks, and the
 * metric registry.
 *
 * Paths: the tests chdir to $top_srcdir/tests/policies ("." = the source
 * tree's top directory when unset) and name every file relative to it, so
 * messages and golden files read "bad/NAME.yaml:LINE:COLUMN: ...".
 * Golden files: bad/NAME.err holds the errors of bad/NAME.yaml, one per line;
 * sets/NAME.err those of loading the directory sets/NAME/, warnings prefixed
 * with "warning: ".  PCPTUNE_UPDATE_GOLDEN=1 rewrites them (review the diff!).
 */
#include <inttypes.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test-helpers.h"

#include "metrics.h"
#include "policy.h"
#include "snapshot.h"

/* The build defines it ($(sysconfdir)/pcptune/policies.d); policy-load.c falls back to the same. */
#ifndef POLICY_DIR_DEFAULT
#define POLICY_DIR_DEFAULT "/etc/pcptune/policies.d"
#endif

static char *read_text(const char *path, size_t *ret_len) {
        char *buf = NULL;
        size_t len = 0;
        int r = read_file_at("/", path, READ_FILE_MAX, &buf, &len);
        if (r < 0)
                fail_msg("cannot read %s: %s", path, strerror(-r));
        if (ret_len)
                *ret_len = len;
        return buf;
}

static Policy *parse_file_ok(const char *path) {
        _cleanup_(diagnostics_done) Diagnostics d = {};
        _cleanup_(freep) char *buf = NULL;
        Policy *p = NULL;
        size_t len;

        buf = read_text(path, &len);
        int r = policy_parse(path, buf, len, &p, &d);
        for (size_t i = 0; i < d.n_errors; i++)
                print_error("unexpected: %s\n", d.errors[i]);
        assert_int_equal(r, 0);
        assert_int_equal(d.n_errors, 0);
        assert_non_null(p);
        return p;
}

static const Rule *find_rule(const Policy *p, const char *name) {
        for (size_t i = 0; i < p->n_rules; i++)
                if (streq(p->rules[i].name, name))
                        return &p->rules[i];
        fail_msg("no rule %s", name);
        return NULL;
}

/* ------------------------------------------------------------------------ */
/* Good files */

static void test_brief_example(void **state) {
        (void) state;
        Policy *p = parse_file_ok("good/50-large-host.yaml");

        assert_string_equal(p->file, "good/50-large-host.yaml");
        assert_string_equal(p->name, "large-host-latency");
        assert_string_equal(p->description,
                            "Keep pcp lists small on many-CPU hosts so container exits hold zone->lock briefly.");
        assert_int_equal(p->priority, 50);
        assert_int_equal(p->line, 2);
        assert_int_equal(p->column, 1);

        assert_int_equal(p->host.n_cmps, 2);
        assert_int_equal(p->host.cmps[0].metric, METRIC_CPUS);
        assert_int_equal(p->host.cmps[0].op, CMP_GE);
        assert_true(p->host.cmps[0].value == 64);
        assert_int_equal(p->host.cmps[0].line, 7);
        assert_int_equal(p->host.cmps[0].column, 13);
        assert_int_equal(p->host.cmps[1].metric, METRIC_KERNEL);
        assert_int_equal(p->host.cmps[1].op, CMP_GE);
        assert_true(p->host.cmps[1].value == 5014000);

        assert_int_equal(p->n_rules, 3);
        const Rule *cap = &p->rules[0], *dying = &p->rules[1], *storm = &p->rules[2];

        assert_string_equal(cap->name, "cap-pcp-high");
        assert_int_equal(cap->line, 10);
        assert_int_equal(cap->column, 5);
        assert_null(cap->when.root);
        assert_null(cap->until.root);
        assert_true(cap->knobs[KNOB_PCP_HIGH_FRACTION].set);
        assert_int_equal(cap->knobs[KNOB_PCP_HIGH_FRACTION].goal.kind, PCP_GOAL_BATCH_MULTIPLE);
        assert_int_equal(cap->knobs[KNOB_PCP_HIGH_FRACTION].goal.value, 8);
        assert_false(cap->knobs[KNOB_PCP_BATCH_SCALE_MAX].set);
        assert_int_equal(cap->action.kind, ACTION_NONE);
        assert_false(cap->repair_pagesets);

        assert_string_equal(dying->name, "dying-memcg-cleanup");
        assert_non_null(dying->when.root);
        assert_string_equal(dying->when.text, "memcg.dying > 500 for 2m");
        assert_int_equal(dying->when.line, 13);
        assert_int_equal(dying->when.column, 11);
        assert_int_equal(dying->when.n_nodes, 1);
        assert_int_equal(dying->when.root->kind, EXPR_CMP);
        assert_int_equal(dying->when.root->metric, METRIC_MEMCG_DYING);
        assert_int_equal(dying->when.root->op, CMP_GT);
        assert_true(dying->when.root->value == 500);
        assert_int_equal(dying->when.root->for_usec, 120 * USEC_PER_SEC);
        assert_false(dying->knobs[KNOB_PCP_HIGH_FRACTION].set);
        assert_int_equal(dying->cooldown_usec, 600 * USEC_PER_SEC);
        assert_int_equal(dying->action.kind, ACTION_RECLAIM_DYING);
        assert_int_equal(dying->action.line, 14);
        assert_int_equal(dying->action.column, 13);
        assert_string_equal(dying->action.reclaim.cgroup, "auto");
        assert_null(dying->action.reclaim.roots);
        assert_int_equal(dying->action.reclaim.max_bytes, 256ULL << 20);
        assert_int_equal(dying->action.reclaim.step_bytes, 16ULL << 20);
        assert_int_equal(dying->action.reclaim.timeout_usec, 10 * USEC_PER_SEC);
        assert_int_equal(dying->action.reclaim.min_dying, 1);
        assert_false(dying->action.reclaim.force_empty);
        assert_false(dying->action.reclaim.drop_caches);
        assert_false(dying->action.reclaim.allow_swap);
        assert_int_equal(dying->action.reclaim.refault_window_usec, 30 * USEC_PER_SEC);
        assert_true(dying->action.reclaim.max_refault_rate == 0);

        assert_string_equal(storm->name, "exit-storm");
        assert_int_equal(storm->when.root->metric, METRIC_PROC_EXIT_RATE);
        assert_true(storm->when.root->value == 200);
        assert_int_equal(storm->when.root->for_usec, 3 * USEC_PER_SEC);
        assert_int_equal(storm->knobs[KNOB_PCP_HIGH_FRACTION].goal.kind, PCP_GOAL_MINIMUM);
        assert_int_equal(storm->until.root->metric, METRIC_PROC_EXIT_RATE);
        assert_int_equal(storm->until.root->op, CMP_LT);
        assert_true(storm->until.root->value == 20);
        assert_int_equal(storm->until.root->for_usec, 30 * USEC_PER_SEC);
        assert_int_equal(storm->cooldown_usec, 0);

        policy_free(p);
}

static void test_everything(void **state) {
        (void) state;
        Policy *p = parse_file_ok("good/90-everything.yaml");
        const Rule *r;
        const Expr *e;

        assert_string_equal(p->name, "everything");
        assert_string_equal(p->description, "Exercises every key.\n");
        assert_int_equal(p->priority, 900);

        /* cpus: [">= 2", "<= 4096"], memory: ">= 1GiB", kernel: "!= 6.1.0", nodes: 1 */
        assert_int_equal(p->host.n_cmps, 5);
        assert_int_equal(p->host.cmps[0].op, CMP_GE);
        assert_true(p->host.cmps[0].value == 2);
        assert_int_equal(p->host.cmps[1].op, CMP_LE);
        assert_true(p->host.cmps[1].value == 4096);
        assert_int_equal(p->host.cmps[1].line, 8);
        assert_int_equal(p->host.cmps[1].column, 22);
        assert_int_equal(p->host.cmps[2].metric, METRIC_MEMORY);
        assert_true(p->host.cmps[2].value == 1073741824.0);
        assert_int_equal(p->host.cmps[3].metric, METRIC_KERNEL);
        assert_int_equal(p->host.cmps[3].op, CMP_NE);
        assert_true(p->host.cmps[3].value == 6001000);
        assert_int_equal(p->host.cmps[4].metric, METRIC_NODES);
        assert_int_equal(p->host.cmps[4].op, CMP_EQ);
        assert_true(p->host.cmps[4].value == 1);

        r = find_rule(p, "fraction");
        assert_int_equal(r->knobs[KNOB_PCP_HIGH_FRACTION].goal.kind, PCP_GOAL_FRACTION);
        assert_int_equal(r->knobs[KNOB_PCP_HIGH_FRACTION].goal.value, 1000);

        r = find_rule(p, "per-cpu");
        assert_int_equal(r->knobs[KNOB_PCP_HIGH_FRACTION].goal.kind, PCP_GOAL_BYTES_PER_CPU);
        assert_int_equal(r->knobs[KNOB_PCP_HIGH_FRACTION].goal.value, 2ULL << 20);
        assert_true(r->knobs[KNOB_PCP_BATCH_SCALE_MAX].set);
        assert_int_equal(r->knobs[KNOB_PCP_BATCH_SCALE_MAX].value, 0);
        e = r->when.root;
        assert_int_equal(e->kind, EXPR_AND);
        assert_int_equal(e->a->metric, METRIC_MEMINFO_PERCPU);
        assert_int_equal(e->a->op, CMP_GE);
        assert_true(e->a->value == 512.0 * 1024 * 1024);
        assert_int_equal(e->b->kind, EXPR_NOT);
        assert_int_equal(e->b->a->metric, METRIC_PSI_MEMORY_SOME_AVG10);
        assert_true(e->b->a->value == 12.5);
        assert_int_equal(r->when.n_nodes, 4);
        /* ids in parse order: the left comparison, the inner comparison, not, and */
        assert_int_equal(e->a->id, 0);
        assert_int_equal(e->b->a->id, 1);
        assert_int_equal(e->b->id, 2);
        assert_int_equal(e->id, 3);

        r = find_rule(p, "per-node");
        assert_int_equal(r->knobs[KNOB_PCP_HIGH_FRACTION].goal.kind, PCP_GOAL_BYTES_PER_NODE);
        assert_int_equal(r->knobs[KNOB_PCP_HIGH_FRACTION].goal.value, 1ULL << 30);
        e = r->when.root;
        assert_int_equal(e->kind, EXPR_OR);
        assert_int_equal(e->for_usec, 90 * USEC_PER_SEC);
        assert_int_equal(e->line, 21);
        assert_int_equal(e->column, 30);
        assert_int_equal(e->a->line, 21);
        assert_int_equal(e->a->column, 12);

        r = find_rule(p, "times-batch");
        assert_int_equal(r->knobs[KNOB_PCP_HIGH_FRACTION].goal.kind, PCP_GOAL_BATCH_MULTIPLE);
        assert_int_equal(r->knobs[KNOB_PCP_HIGH_FRACTION].goal.value, 6);
        e = r->when.root;
        assert_true(e->a->value == 5.0);    /* 300/m */
        assert_true(e->b->value == 10.0);   /* 36000/h */

        r = find_rule(p, "default-goal");
        assert_int_equal(r->knobs[KNOB_PCP_HIGH_FRACTION].goal.kind, PCP_GOAL_DEFAULT);
        assert_true(condition_uses_metric(&r->when, METRIC_KERNEL));
        assert_true(condition_uses_metric(&r->when, METRIC_MEMORY));
        assert_false(condition_uses_metric(&r->when, METRIC_MEMCG_DYING));

        r = find_rule(p, "reclaim");
        assert_string_equal(r->when.text, "memcg.dying > 500 for 2m and meminfo.free < 10 GiB");
        /* A literal block: tokens keep their real lines and columns. */
        assert_int_equal(r->when.root->kind, EXPR_AND);
        assert_int_equal(r->when.line, 31);
        assert_int_equal(r->when.column, 11);
        assert_int_equal(r->when.root->a->line, 32);
        assert_int_equal(r->when.root->a->column, 7);
        assert_int_equal(r->when.root->line, 33);
        assert_int_equal(r->when.root->column, 9);
        assert_int_equal(r->when.root->b->line, 33);
        assert_int_equal(r->when.root->b->column, 13);
        assert_true(r->when.root->b->value == 10.0 * 1024 * 1024 * 1024);
        assert_int_equal(r->until.root->metric, METRIC_MEMCG_DYING);
        assert_int_equal(r->cooldown_usec, 3600 * USEC_PER_SEC);
        assert_int_equal(r->action.kind, ACTION_RECLAIM_DYING);
        const ActionReclaimDying *rd = &r->action.reclaim;
        assert_string_equal(rd->cgroup, "/kubepods.slice");
        assert_non_null(rd->roots);
        assert_string_equal(rd->roots[0], "/kubepods.slice");
        assert_string_equal(rd->roots[1], "/system.slice/ci.service");
        assert_null(rd->roots[2]);
        assert_int_equal(rd->max_bytes, 1ULL << 30);
        assert_int_equal(rd->step_bytes, 32ULL << 20);
        assert_int_equal(rd->timeout_usec, 30 * USEC_PER_SEC);
        assert_int_equal(rd->min_dying, 20);
        assert_true(rd->force_empty);
        assert_false(rd->drop_caches);
        assert_true(rd->allow_swap);
        assert_int_equal(rd->refault_window_usec, 45 * USEC_PER_SEC);
        assert_true(rd->max_refault_rate == 10.0);

        r = find_rule(p, "depopulate");
        assert_int_equal(r->action.kind, ACTION_PERCPU_DEPOPULATE);
        assert_int_equal(r->cooldown_usec, 1800 * USEC_PER_SEC);
        r = find_rule(p, "depopulate-null");
        assert_int_equal(r->action.kind, ACTION_PERCPU_DEPOPULATE);
        assert_int_equal(r->when.root->a->metric, METRIC_PCP_HELD);
        assert_int_equal(r->when.root->b->metric, METRIC_PCP_HIGH_MAX);
        assert_int_equal(r->when.root->b->op, CMP_NE);
        /* A quoted scalar: columns count from after the quote. */
        assert_int_equal(r->when.root->a->column, 12);

        r = find_rule(p, "repair");
        assert_true(r->repair_pagesets);
        assert_false(r->knobs[KNOB_PCP_HIGH_FRACTION].set);

        policy_free(p);
}

static void test_parse_odd_inputs(void **state) {
        (void) state;
        static const char with_bom_crlf[] = "\xEF\xBB\xBF# caf\xC3\xA9\r\nversion: 1\r\nname: crlf\r\nrules:\r\n"
                                            "  - name: a\r\n    when: cpus > 4\r\n    pcp: { high: minimum }\r\n";
        _cleanup_(diagnostics_done) Diagnostics d = {};
        Policy *p = NULL;

        assert_int_equal(policy_parse("crlf.yaml", with_bom_crlf, strlen(with_bom_crlf), &p, &d), 0);
        assert_int_equal(d.n_errors, 0);
        assert_int_equal(p->rules[0].when.root->line, 6);
        assert_int_equal(p->rules[0].when.root->column, 11);
        policy_free(p);

        /* A multi-line condition after a BOM, a non-ASCII comment and CRLF line ends: libyaml's
         * character index maps back to the source, so positions stay exact. */
        static const char multi[] = "\xEF\xBB\xBF# caf\xC3\xA9 \xE2\x86\x92 zone\r\nversion: 1\r\nname: m\r\n"
                                    "rules:\r\n  - name: a\r\n    when: cpus > 4 and\r\n      nodes > x\r\n"
                                    "    pcp: { high: minimum }\r\n";
        assert_int_equal(policy_parse("multi.yaml", multi, strlen(multi), &p, &d), -EINVAL);
        assert_int_equal(d.n_errors, 1);
        assert_string_equal(d.errors[0],
                            "multi.yaml:7:15: expected a count (a non-negative integer) for nodes, found 'x'");
        diagnostics_done(&d);

        /* Not NUL-terminated: only len bytes are read. */
        static const char truncated[] = "version: 1\nname: t\nrules: [{name: a, repair: pagesets}]\nGARBAGE";
        p = NULL;
        assert_int_equal(policy_parse("t.yaml", truncated, strlen(truncated) - strlen("GARBAGE"), &p, &d), 0);
        assert_int_equal(p->n_rules, 1);
        policy_free(p);

        /* Explicit document markers are fine. */
        static const char markers[] = "---\nversion: 1\nname: m\nrules: [{name: a, repair: pagesets}]\n...\n";
        p = NULL;
        assert_int_equal(policy_parse("m.yaml", markers, strlen(markers), &p, &d), 0);
        policy_free(p);

        /* NUL inside the text. */
        static const char nul[] = "version: 1\nname: \"a\\0b\"\nrules: [{name: a, repair: pagesets}]\n";
        p = NULL;
        assert_int_equal(policy_parse("nul.yaml", nul, strlen(nul), &p, &d), -EINVAL);
        assert_null(p);
        assert_int_equal(d.n_errors, 1);
        assert_string_equal(d.errors[0], "nul.yaml:2:7: expected a name, found text with a NUL character");

        /* Invalid UTF-8: a reader error has no mark, its byte offset gives the position. */
        static const char utf8[] = "version: 1\nname: \xff\n";
        diagnostics_done(&d);
        assert_int_equal(policy_parse("utf8.yaml", utf8, strlen(utf8), &p, &d), -EINVAL);
        assert_int_equal(d.n_errors, 1);
        assert_string_equal(d.errors[0], "utf8.yaml:2:7: expected UTF-8 text, found invalid leading UTF-8 octet (byte 0xff)");

        policy_free(NULL);
}

/* Issue 9 item 4: nesting is bounded at the first level too deep, with its position. */
static void test_parse_deep_nesting(void **state) {
        (void) state;
        _cleanup_(diagnostics_done) Diagnostics d = {};
        size_t n = 120 * 1024;
        _cleanup_(freep) char *flow = malloc(n + 1), *block = NULL;
        Policy *p = NULL;

        /* 120 KB of '[' stalled the event loop ~25 s in libyaml (quadratic in depth). */
        memset(flow, '[', n);
        flow[n] = 0;
        memcpy(flow, "version: 1\nname: x\nrules: ", 26);
        assert_int_equal(policy_parse("deep.yaml", flow, n, &p, &d), -EINVAL);
        assert_null(p);
        assert_int_equal(d.n_errors, 2);
        assert_string_equal(d.errors[1],
                            "deep.yaml:3:39: expected at most 32 nested sequences and mappings, found deeper nesting");
        diagnostics_done(&d);
        memset(flow, '[', n);
        assert_int_equal(policy_parse("deep.yaml", flow, n, &p, &d), -EINVAL);
        assert_int_equal(d.n_errors, 1);
        diagnostics_done(&d);

        /* The same with block mappings, one level per line; 32 levels still parse (and then fail as a policy). */
        size_t size = 64 * 1024, used = 0;
        block = malloc(size);
        for (int level = 0; level < 40; level++)
                used += (size_t) snprintf(block + used, size - used, "%*sk%d:\n", level, "", level);
        assert_int_equal(policy_parse("block.yaml", block, used, &p, &d), -EINVAL);
        assert_true(d.n_errors >= 1);
        if (!strstr(d.errors[d.n_errors - 1], "block.yaml:33:33: expected at most 32 nested"))
                fail_msg("%s", d.errors[d.n_errors - 1]);
        diagnostics_done(&d);
        used = 0;
        for (int level = 0; level < 31; level++)
                used += (size_t) snprintf(block + used, size - used, "%*sk%d:\n", level, "", level);
        assert_int_equal(policy_parse("ok-depth.yaml", block, used, &p, &d), -EINVAL);
        for (size_t i = 0; i < d.n_errors; i++)
                assert_null(strstr(d.errors[i], "nested"));
}

/* Issue 9 item 9: duplicate rule names by sorting; every duplicate names the first, in file order. */
static void test_duplicate_rules_many(void **state) {
        (void) state;
        _cleanup_(diagnostics_done) Diagnostics d = {};
        size_t n = 30000, size = n * 48 + 256, used = 0;
        _cleanup_(freep) char *text = malloc(size);
        Policy *p = NULL;

        used += (size_t) snprintf(text + used, size - used, "version: 1\nname: many\nrules:\n");
        for (size_t i = 0; i < n; i++)
                used += (size_t) snprintf(text + used, size - used, "  - { name: r%zu, repair: pagesets }\n",
                                          i == 20000 ? (size_t) 7 : i == 29999 || i == 25000 ? (size_t) 7 : i);
        assert_int_equal(policy_parse("many.yaml", text, used, &p, &d), -EINVAL);
        assert_int_equal(d.n_errors, 3);
        assert_string_equal(d.errors[0], "many.yaml:20004:5: expected unique rule names, found 'r7' again (first at 11:5)");
        assert_string_equal(d.errors[1], "many.yaml:25004:5: expected unique rule names, found 'r7' again (first at 11:5)");
        assert_string_equal(d.errors[2], "many.yaml:30003:5: expected unique rule names, found 'r7' again (first at 11:5)");
        diagnostics_done(&d);

        used = 0;
        used += (size_t) snprintf(text + used, size - used, "version: 1\nname: many\nrules:\n");
        for (size_t i = 0; i < n; i++)
                used += (size_t) snprintf(text + used, size - used, "  - { name: r%zu, repair: pagesets }\n", i);
        assert_int_equal(policy_parse("many.yaml", text, used, &p, &d), 0);
        assert_int_equal(p->n_rules, n);
        policy_free(p);
}


/* Every managed knob of the table is a policy key: it parses into the rule's setting for its row, a rule
 * always setting it shadows an earlier one with a warning naming the key, and its name is what resume takes. */
static void test_knob_table(void **state) {
        (void) state;
        size_t managed = 0;

        for (KnobId id = 0; id < _KNOB_ID_MAX; id++) {
                const KnobDesc *k = knob_desc(id);
                _cleanup_(diagnostics_done) Diagnostics d = {};
                char text[512], value[32], want[256];
                Policy *p = NULL;

                assert_int_equal(k->id, id);
                if (!knob_managed(k)) {
                        assert_null(knob_desc_by_name(k->name)); /* read, never written */
                        continue;
                }
                managed++;
                assert_ptr_equal(knob_desc_by_name(k->name), k);
                assert_true(strneq(k->policy_key, "pcp.", 4));
                assert_true(k->setting == KNOB_SETTING_PCP_GOAL || k->setting == KNOB_SETTING_INT);
                if (k->setting == KNOB_SETTING_PCP_GOAL)
                        snprintf(value, sizeof value, "minimum");
                else
                        snprintf(value, sizeof value, "%" PRId64, k->max_value);
                snprintf(text, sizeof text,
                         "version: 1\nname: t\nrules:\n"
                         "  - name: first\n    pcp: { %s: %s }\n"
                         "  - name: second\n    pcp: { %s: %s }\n",
                         k->policy_key + 4, value, k->policy_key + 4, value);
                assert_int_equal(policy_parse("t.yaml", text, strlen(text), &p, &d), 0);
                for (KnobId other = 0; other < _KNOB_ID_MAX; other++)
                        assert_true(p->rules[0].knobs[other].set == (other == id));
                if (k->setting == KNOB_SETTING_PCP_GOAL)
                        assert_int_equal(p->rules[0].knobs[id].goal.kind, PCP_GOAL_MINIMUM);
                else
                        assert_int_equal(p->rules[0].knobs[id].value, k->max_value);

                PolicySet set = { .policies = &p, .n_policies = 1 };
                policy_set_check(&set, &d);
                assert_int_equal(d.n_warnings, 1);
                snprintf(want, sizeof want, "t.yaml:4:5: rule 'first' can never win: rule 'second' (t.yaml:6) always sets %s",
                         k->policy_key);
                assert_string_equal(d.warnings[0], want);
                policy_free(p);
        }
        assert_true(managed >= 2);
}

/* ------------------------------------------------------------------------ */
/* Conditions */

static Condition parse_ok(const char *text) {
        Condition c = {};
        char *err = NULL;
        int r = condition_parse(text, 1, 1, &c, &err);
        if (r < 0)
                fail_msg("condition_parse(\"%s\"): %d %s", text, r, strna(err));
        assert_null(err);
        return c;
}

static void test_condition_literals(void **state) {
        (void) state;
        static const struct {
                const char *text;
                MetricId metric;
                CmpOp op;
                double value;
        } cases[] = {
                { "meminfo.percpu > 4096", METRIC_MEMINFO_PERCPU, CMP_GT, 4096 },
                { "meminfo.percpu>64KiB", METRIC_MEMINFO_PERCPU, CMP_GT, 65536 },
                { "meminfo.available <= 1.5GiB", METRIC_MEMINFO_AVAILABLE, CMP_LE, 1610612736.0 },
                { "meminfo.free < 2 TiB", METRIC_MEMINFO_FREE, CMP_LT, 2199023255552.0 },
                { "pcp.held >= 100B", METRIC_PCP_HELD, CMP_GE, 100 },
                { "pcp.held >= 12 MB", METRIC_PCP_HELD, CMP_GE, 12582912 }, /* MB is read as MiB */
                { "pcp.high_max == 252", METRIC_PCP_HIGH_MAX, CMP_EQ, 252 },
                { "memcg.live != 0", METRIC_MEMCG_LIVE, CMP_NE, 0 },
                { "psi.memory.some.avg60 > 0.5", METRIC_PSI_MEMORY_SOME_AVG60, CMP_GT, 0.5 },
                { "psi.memory.some.avg300 > 100%", METRIC_PSI_MEMORY_SOME_AVG300, CMP_GT, 100 },
                { "psi.memory.full.avg10 > 7 %", METRIC_PSI_MEMORY_FULL_AVG10, CMP_GT, 7 },
                { "psi.memory.full.avg300 > .5%", METRIC_PSI_MEMORY_FULL_AVG300, CMP_GT, 0.5 },
                { "psi.memory.full.avg300 > .5 %", METRIC_PSI_MEMORY_FULL_AVG300, CMP_GT, 0.5 },
                { "proc.exit_rate > 200/s", METRIC_PROC_EXIT_RATE, CMP_GT, 200 },
                { "proc.exit_rate > 120 /m", METRIC_PROC_EXIT_RATE, CMP_GT, 2 },
                { "proc.exit_rate > 7200/h", METRIC_PROC_EXIT_RATE, CMP_GT, 2 },
                { "proc.exit_rate > 1.5/s", METRIC_PROC_EXIT_RATE, CMP_GT, 1.5 },
                { "cpus >= 64", METRIC_CPUS, CMP_GE, 64 },
                { "memory >= 256GiB", METRIC_MEMORY, CMP_GE, 274877906944.0 },
                { "kernel >= 5.14", METRIC_KERNEL, CMP_GE, 5014000 },
                { "kernel < 6.12.117", METRIC_KERNEL, CMP_LT, 6012117 },
                { "nodes > 1", METRIC_NODES, CMP_GT, 1 },
                { "pcp.bulk_free.p99 > 500us", METRIC_PCP_BULK_FREE_P99, CMP_GT, 500e-6 },
                { "pcp.bulk_free.p99 <= 1.5ms", METRIC_PCP_BULK_FREE_P99, CMP_LE, 1.5e-3 },
                { "pcp.bulk_free.p99 > 200 us", METRIC_PCP_BULK_FREE_P99, CMP_GT, 200e-6 },
                { "pcp.bulk_free.p99 < 1s", METRIC_PCP_BULK_FREE_P99, CMP_LT, 1 },
                { "pcp.bulk_free.pages.p99 > 1000", METRIC_PCP_BULK_FREE_PAGES_P99, CMP_GT, 1000 },
                { "pcp.bulk_free.samples >= 20", METRIC_PCP_BULK_FREE_SAMPLES, CMP_GE, 20 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                Condition c = parse_ok(cases[i].text);
                assert_int_equal(c.n_nodes, 1);
                assert_int_equal(c.root->kind, EXPR_CMP);
                assert_int_equal(c.root->metric, cases[i].metric);
                assert_int_equal(c.root->op, cases[i].op);
                if (fabs(c.root->value - cases[i].value) > 1e-9)
                        fail_msg("%s: value %g, expected %g", cases[i].text, c.root->value, cases[i].value);
                condition_done(&c);
        }
}

static void test_condition_structure(void **state) {
        (void) state;
        Condition c;

        /* and binds tighter than or; not binds tighter than and; for binds to its comparison. */
        c = parse_ok("cpus > 1 or cpus > 2 and not cpus > 3 for 5s");
        assert_int_equal(c.root->kind, EXPR_OR);
        assert_int_equal(c.root->a->kind, EXPR_CMP);
        assert_int_equal(c.root->b->kind, EXPR_AND);
        assert_int_equal(c.root->b->b->kind, EXPR_NOT);
        assert_int_equal(c.root->b->b->for_usec, 0);
        assert_int_equal(c.root->b->b->a->for_usec, 5 * USEC_PER_SEC);
        assert_int_equal(c.n_nodes, 6);
        assert_string_equal(c.text, "cpus > 1 or cpus > 2 and not cpus > 3 for 5s");
        condition_done(&c);

        /* for on a group, a combined duration, positions and normalized text. */
        c = parse_ok("  (cpus > 1\n   or  nodes > 1) for 1m30s  ");
        assert_int_equal(c.root->kind, EXPR_OR);
        assert_int_equal(c.root->for_usec, 90 * USEC_PER_SEC);
        assert_int_equal(c.root->line, 2);
        assert_int_equal(c.root->column, 4);
        assert_int_equal(c.root->b->line, 2);
        assert_int_equal(c.root->b->column, 8);
        assert_string_equal(c.text, "(cpus > 1 or nodes > 1) for 1m30s");
        condition_done(&c);

        /* Left associative chains. */
        c = parse_ok("cpus > 1 and cpus > 2 and cpus > 3");
        assert_int_equal(c.root->kind, EXPR_AND);
        assert_int_equal(c.root->a->kind, EXPR_AND);
        assert_true(c.root->b->value == 3);
        condition_done(&c);

        /* Nested not, nested groups, "3 s" with a blank. */
        c = parse_ok("not not ((cpus > 1)) for 3 s");
        assert_int_equal(c.root->kind, EXPR_NOT);
        assert_int_equal(c.root->a->kind, EXPR_NOT);
        assert_int_equal(c.root->a->a->for_usec, 3 * USEC_PER_SEC);
        condition_done(&c);

        condition_done(&c);
        condition_done(NULL);
}

static void test_condition_errors(void **state) {
        (void) state;
        static const struct {
                const char *text;
                const char *error;
        } cases[] = {
                { "", "5:10: expected a metric comparison, 'not' or '(', found the end of the condition" },
                { "memcg.dyin > 5", "5:10: expected a metric name, found unknown metric 'memcg.dyin' (did you mean 'memcg.dying'?)" },
                { "cpu > 5", "5:10: expected a metric name, found unknown metric 'cpu' (did you mean 'cpus'?)" },
                { "psi.memory.some.avg5 > 5", "5:10: expected a metric name, found unknown metric 'psi.memory.some.avg5' (did you mean 'psi.memory.some.avg10'?)" },
                { "load > 5", "5:10: expected a metric name, found unknown metric 'load' (see pcptune.policy(5) for the list)" },
                { "loadavg > 5", "5:10: expected a metric name, found unknown metric 'loadavg' (see pcptune.policy(5) for the list)" },
                { "cpus 5", "5:15: expected a comparison operator (<, <=, >, >=, ==, !=) after 'cpus', found '5'" },
                { "cpus = 5", "5:15: expected a comparison operator (<, <=, >, >=, ==, !=) after 'cpus', found '=' (write '==')" },
                { "cpus >", "5:16: expected a value in count after 'cpus >', found the end of the condition" },
                { "cpus > and", "5:17: expected a value in count after 'cpus >', found 'and'" },
                { "cpus > -1", "5:17: expected a count (a non-negative integer) for cpus, found '-1'" },
                { "cpus > 1.5", "5:17: expected a count (a non-negative integer) for cpus, found '1.5'" },
                { "memcg.dying > 5MiB", "5:24: expected a count (a non-negative integer) for memcg.dying, found '5MiB'" },
                { "pcp.high_max > 1KiB", "5:25: expected a number of pages (a non-negative integer) for pcp.high_max, found '1KiB'" },
                { "proc.exit_rate > 200", "5:27: expected a rate like 200/s, 300/m or 10/h for proc.exit_rate, found '200'" },
                { "proc.exit_rate > 200/d", "5:27: expected a rate like 200/s, 300/m or 10/h for proc.exit_rate, found '200/d'" },
                { "psi.memory.some.avg10 > 101%", "5:34: expected a percentage between 0 and 100 like 12.5% for psi.memory.some.avg10, found '101%'" },
                { "psi.memory.some.avg10 > 1e2", "5:34: expected a percentage between 0 and 100 like 12.5% for psi.memory.some.avg10, found '1e2'" },
                { "meminfo.percpu > 1 parsec", "5:27: expected a size like 4096, 64KiB or 2GiB for meminfo.percpu, found '1 parsec'" },
                { "meminfo.percpu > -5", "5:27: expected a size like 4096, 64KiB or 2GiB for meminfo.percpu, found '-5'" },
                { "kernel > 6", "5:19: expected a kernel version like 5.14 or 6.1.0 for kernel, found '6'" },
                { "kernel > 6.1000", "5:19: expected a kernel version like 5.14 or 6.1.0 for kernel, found '6.1000'" },
                { "kernel > 6.1-rc1", "5:19: expected a kernel version like 5.14 or 6.1.0 for kernel, found '6.1-rc1'" },
                { "cpus > 4 for", "5:22: expected a duration like 30s, 5m or 1h after 'for', found the end of the condition" },
                { "cpus > 4 for 3 fortnights", "5:23: expected a duration like 30s, 5m or 1h after 'for', found '3 fortnights'" },
                { "cpus > 4 for 10", "5:23: expected a duration like 30s, 5m or 1h after 'for', found '10': a duration needs its unit (10s)" },
                { "cpus > 4 for 1m30", "5:23: expected a duration like 30s, 5m or 1h after 'for', found '1m30': a duration needs its unit (1m30s)" },
                { "cpus > 4 for 3s for 4s", "5:26: expected 'and', 'or' or the end of the condition, found 'for'" },
                { "(cpus > 4 for 3s) for 4s", "5:28: expected one 'for' per comparison or group, found a second one" },
                { "(cpus > 4", "5:19: expected ')' to close the '(' at 5:10, found the end of the condition" },
                { "cpus > 4)", "5:18: expected 'and', 'or' or the end of the condition, found ')' without a matching '('" },
                { "cpus > 4 nodes > 1", "5:19: expected 'and', 'or' or the end of the condition, found 'nodes'" },
                { "cpus > 4 and", "5:22: expected a metric comparison, 'not' or '(', found the end of the condition" },
                { "cpus > 4 and or nodes > 1", "5:23: expected a metric name, 'not' or '(', found 'or'" },
                { "4 < cpus", "5:10: expected a metric name (comparisons are written 'metric OP value'), found '4'" },
                { "not", "5:13: expected a metric comparison, 'not' or '(', found the end of the condition" },
                { "()", "5:11: expected a metric comparison, 'not' or '(', found ')'" },
                { "cpus ! 4", "5:15: expected a comparison operator (<, <=, >, >=, ==, !=) after 'cpus', found '!'" },
                { "cpus >= 4 and\n  kernel > x", "6:12: expected a kernel version like 5.14 or 6.1.0 for kernel, found 'x'" },
                { "caf\xC3\xA9s > 1 and cpus >< 2", "5:10: expected a metric name, found unknown metric 'caf\xC3\xA9s' (see pcptune.policy(5) for the list)" },
                { "cpus > 1 and \xC3\xA9 > 1", "5:23: expected a metric name, found unknown metric '\xC3\xA9' (see pcptune.policy(5) for the list)" },
                { "cpus >< 2", "5:16: expected a value in count after 'cpus >', found '<'" },
                { "pcp.bulk_free.p99 > 500", "5:30: expected a time like 200us, 1.5ms or 2s for pcp.bulk_free.p99, found '500'" },
                { "pcp.bulk_free.p99 > 5 parsecs", "5:30: expected a time like 200us, 1.5ms or 2s for pcp.bulk_free.p99, found '5 parsecs'" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                Condition c = {};
                char *err = NULL;
                int r = condition_parse(cases[i].text, 5, 10, &c, &err);
                if (r != -EINVAL || !err || !streq(err, cases[i].error))
                        fail_msg("condition_parse(\"%s\") = %d\n got: %s\n expected: %s", cases[i].text, r, strna(err),
                                 cases[i].error);
                assert_null(c.root);
                free(err);
        }
}

static void test_condition_limits(void **state) {
        (void) state;
        char buf[16384];
        Condition c = {};
        char *err = NULL;

        /* Deep nesting is refused, not a stack overflow. */
        memset(buf, '(', 200);
        strcpy(buf + 200, "cpus > 1");
        assert_int_equal(condition_parse(buf, 1, 1, &c, &err), -EINVAL);
        assert_string_equal(err, "1:65: expected at most 64 nested 'not' or parentheses, found more");
        free(err);
        err = NULL;

        /* So are huge conditions. */
        buf[0] = 0;
        for (int i = 0; i < 1100; i++)
                strcat(buf, i ? " or cpus>1" : "cpus>1");
        assert_int_equal(condition_parse(buf, 1, 1, &c, &err), -EINVAL);
        assert_non_null(strstr(err, "expected a condition of at most 1000 terms"));
        free(err);
        err = NULL;

        /* 500 terms are fine. */
        buf[0] = 0;
        for (int i = 0; i < 250; i++)
                strcat(buf, i ? " or cpus>1" : "cpus>1");
        assert_int_equal(condition_parse(buf, 1, 1, &c, &err), 0);
        assert_int_equal(c.n_nodes, 499);
        condition_done(&c);
}

static MetricValues values_all(void) {
        MetricValues mv = {};
        for (int i = 0; i < _METRIC_MAX; i++)
                metric_set(&mv, (MetricId) i, 0);
        return mv;
}

#define SEC(x) ((usec_t) (x) * USEC_PER_SEC)

static void test_condition_eval_for(void **state) {
        (void) state;
        Condition c = parse_ok("memcg.dying > 500 for 2m");
        ConditionState st = {};
        MetricValues mv = values_all();
        int unavailable = 42;
        usec_t t0 = SEC(1000);

        metric_set(&mv, METRIC_MEMCG_DYING, 501);
        assert_int_equal(condition_eval(&c, &mv, t0, &st, &unavailable), TRUTH_FALSE);
        assert_int_equal(unavailable, -1);
        assert_int_equal(st.n, 1);
        assert_int_equal(st.true_since[0], t0);
        assert_int_equal(condition_eval(&c, &mv, t0 + SEC(119), &st, NULL), TRUTH_FALSE);
        assert_int_equal(condition_eval(&c, &mv, t0 + SEC(120), &st, NULL), TRUTH_TRUE);
        assert_int_equal(condition_eval(&c, &mv, t0 + SEC(500), &st, NULL), TRUTH_TRUE);

        /* One sample below: the history restarts. */
        metric_set(&mv, METRIC_MEMCG_DYING, 500);
        assert_int_equal(condition_eval(&c, &mv, t0 + SEC(501), &st, NULL), TRUTH_FALSE);
        assert_int_equal(st.true_since[0], USEC_INFINITY);
        metric_set(&mv, METRIC_MEMCG_DYING, 9000);
        assert_int_equal(condition_eval(&c, &mv, t0 + SEC(502), &st, NULL), TRUTH_FALSE);
        assert_int_equal(condition_eval(&c, &mv, t0 + SEC(621), &st, NULL), TRUTH_FALSE);
        assert_int_equal(condition_eval(&c, &mv, t0 + SEC(622), &st, NULL), TRUTH_TRUE);

        /* Unavailable: UNKNOWN, and the history restarts too. */
        mv.available[METRIC_MEMCG_DYING] = false;
        assert_int_equal(condition_eval(&c, &mv, t0 + SEC(623), &st, &unavailable), TRUTH_UNKNOWN);
        assert_int_equal(unavailable, METRIC_MEMCG_DYING);
        metric_set(&mv, METRIC_MEMCG_DYING, 9000);
        assert_int_equal(condition_eval(&c, &mv, t0 + SEC(624), &st, &unavailable), TRUTH_FALSE);
        assert_int_equal(unavailable, -1);
        assert_int_equal(condition_eval(&c, &mv, t0 + SEC(744), &st, NULL), TRUTH_TRUE);

        /* A reset state starts over (what policy-eval does on activation). */
        condition_state_done(&st);
        assert_null(st.true_since);
        assert_int_equal(condition_eval(&c, &mv, t0 + SEC(745), &st, NULL), TRUTH_FALSE);
        assert_int_equal(condition_eval(&c, &mv, t0 + SEC(865), &st, NULL), TRUTH_TRUE);

        /* Without a state, `for` cannot be proven. */
        assert_int_equal(condition_eval(&c, &mv, t0 + SEC(866), NULL, NULL), TRUTH_FALSE);

        /* A clock going backwards does not count as elapsed time. */
        assert_int_equal(condition_eval(&c, &mv, t0, &st, NULL), TRUTH_FALSE);

        condition_state_done(&st);
        condition_state_done(NULL);
        condition_done(&c);
}

static void test_condition_eval_nested_for(void **state) {
        (void) state;
        /* A group held for 10 s, with a comparison inside that must hold 5 s. */
        Condition c = parse_ok("(cpus > 4 for 5s or nodes > 1) for 10s");
        ConditionState st = {};
        MetricValues mv = values_all();

        metric_set(&mv, METRIC_CPUS, 8);
        assert_int_equal(condition_eval(&c, &mv, SEC(0), &st, NULL), TRUTH_FALSE);
        assert_int_equal(condition_eval(&c, &mv, SEC(5), &st, NULL), TRUTH_FALSE);   /* group true since 5 */
        assert_int_equal(condition_eval(&c, &mv, SEC(14), &st, NULL), TRUTH_FALSE);
        assert_int_equal(condition_eval(&c, &mv, SEC(15), &st, NULL), TRUTH_TRUE);

        /* Switch the reason: nodes > 1 holds while cpus drops; the group never stopped holding. */
        metric_set(&mv, METRIC_NODES, 2);
        metric_set(&mv, METRIC_CPUS, 1);
        assert_int_equal(condition_eval(&c, &mv, SEC(16), &st, NULL), TRUTH_TRUE);

        /* cpus comes back but its own 5 s start again; the group is still true via nodes. */
        metric_set(&mv, METRIC_CPUS, 8);
        metric_set(&mv, METRIC_NODES, 1);
        assert_int_equal(condition_eval(&c, &mv, SEC(17), &st, NULL), TRUTH_FALSE);
        assert_int_equal(condition_eval(&c, &mv, SEC(22), &st, NULL), TRUTH_FALSE);
        assert_int_equal(condition_eval(&c, &mv, SEC(32), &st, NULL), TRUTH_TRUE);

        condition_state_done(&st);
        condition_done(&c);
}

static void test_condition_kleene(void **state) {
        (void) state;
        MetricValues mv = values_all();
        int unavailable;

        metric_set(&mv, METRIC_CPUS, 8);
        mv.available[METRIC_PROC_EXIT_RATE] = false;
        mv.available[METRIC_MEMCG_DYING] = false;

        static const struct {
                const char *text;
                Truth expected;
                int unavailable;
        } cases[] = {
                { "proc.exit_rate > 1/s", TRUTH_UNKNOWN, METRIC_PROC_EXIT_RATE },
                { "not proc.exit_rate > 1/s", TRUTH_UNKNOWN, METRIC_PROC_EXIT_RATE },
                { "proc.exit_rate > 1/s and cpus > 4", TRUTH_UNKNOWN, METRIC_PROC_EXIT_RATE },
                { "proc.exit_rate > 1/s and cpus > 16", TRUTH_FALSE, METRIC_PROC_EXIT_RATE },
                { "cpus > 16 and proc.exit_rate > 1/s", TRUTH_FALSE, METRIC_PROC_EXIT_RATE },
                { "proc.exit_rate > 1/s or cpus > 4", TRUTH_TRUE, METRIC_PROC_EXIT_RATE },
                { "proc.exit_rate > 1/s or cpus > 16", TRUTH_UNKNOWN, METRIC_PROC_EXIT_RATE },
                { "memcg.dying > 1 or proc.exit_rate > 1/s", TRUTH_UNKNOWN, METRIC_MEMCG_DYING },
                { "not (proc.exit_rate > 1/s and cpus > 16)", TRUTH_TRUE, METRIC_PROC_EXIT_RATE },
                { "cpus > 4 and cpus < 16", TRUTH_TRUE, -1 },
                { "cpus == 8 and not cpus != 8", TRUTH_TRUE, -1 },
                { "cpus >= 9 or cpus <= 7", TRUTH_FALSE, -1 },
                { "proc.exit_rate > 1/s for 1s or cpus > 4", TRUTH_TRUE, METRIC_PROC_EXIT_RATE },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                Condition c = parse_ok(cases[i].text);
                ConditionState st = {};
                Truth t = condition_eval(&c, &mv, SEC(10), &st, &unavailable);
                if (t != cases[i].expected || unavailable != cases[i].unavailable)
                        fail_msg("%s: %d (unavailable %d), expected %d (%d)", cases[i].text, t, unavailable,
                                 cases[i].expected, cases[i].unavailable);
                condition_state_done(&st);
                condition_done(&c);
        }

        /* An empty condition is always true. */
        Condition empty = {};
        assert_int_equal(condition_eval(&empty, &mv, 0, NULL, &unavailable), TRUTH_TRUE);
        assert_int_equal(unavailable, -1);
}

/* Hysteresis as policy-eval drives it: when starts, until ends, each with its own history. */
static void test_condition_hysteresis(void **state) {
        (void) state;
        Policy *p = parse_file_ok("good/50-large-host.yaml");
        const Rule *r = find_rule(p, "exit-storm");
        ConditionState when = {}, until = {};
        MetricValues mv = values_all();
        bool active = false;
        usec_t t;

        for (t = 0; t <= SEC(60); t += SEC(1)) {
                double rate = t < SEC(10) ? 0 : t < SEC(20) ? 500 : 10;
                metric_set(&mv, METRIC_PROC_EXIT_RATE, rate);
                Truth w = condition_eval(&r->when, &mv, t, &when, NULL);
                if (!active && w == TRUTH_TRUE) {
                        active = true;
                        condition_state_done(&until);
                        assert_int_equal(t, SEC(13)); /* 500/s since 10 s, held 3 s */
                }
                if (active && condition_eval(&r->until, &mv, t, &until, NULL) == TRUTH_TRUE) {
                        active = false;
                        assert_int_equal(t, SEC(50)); /* below 20/s since 20 s, held 30 s */
                }
                assert_int_equal(active, t >= SEC(13) && t < SEC(50));
        }
        condition_state_done(&when);
        condition_state_done(&until);
        policy_free(p);
}

static void test_cmp(void **state) {
        (void) state;
        assert_string_equal(cmp_op_to_string(CMP_LE), "<=");
        assert_string_equal(cmp_op_to_string(CMP_NE), "!=");
        assert_null(cmp_op_to_string(_CMP_MAX));
        assert_null(cmp_op_to_string(_CMP_INVALID));
        for (int i = 0; i < _CMP_MAX; i++)
                assert_int_equal(cmp_op_from_string(cmp_op_to_string((CmpOp) i)), i);
        assert_int_equal(cmp_op_from_string("="), -EINVAL);
        assert_true(cmp_apply(CMP_LT, 1, 2));
        assert_false(cmp_apply(CMP_LT, 2, 2));
        assert_true(cmp_apply(CMP_LE, 2, 2));
        assert_true(cmp_apply(CMP_GT, 3, 2));
        assert_true(cmp_apply(CMP_GE, 2, 2));
        assert_true(cmp_apply(CMP_EQ, 2, 2));
        assert_true(cmp_apply(CMP_NE, 1, 2));
        assert_false(cmp_apply(_CMP_MAX, 1, 2));
}

static void test_host_match(void **state) {
        (void) state;
        Policy *p = parse_file_ok("good/50-large-host.yaml");
        MetricValues mv = values_all();
        KernelVersion k = { 6, 1, 0 };

        metric_set(&mv, METRIC_CPUS, 64);
        metric_set(&mv, METRIC_KERNEL, kernel_version_to_double(&k));
        assert_int_equal(host_match_eval(&p->host, &mv), TRUTH_TRUE);
        metric_set(&mv, METRIC_CPUS, 63);
        assert_int_equal(host_match_eval(&p->host, &mv), TRUTH_FALSE);
        k = (KernelVersion){ 5, 13, 19 };
        metric_set(&mv, METRIC_CPUS, 256);
        metric_set(&mv, METRIC_KERNEL, kernel_version_to_double(&k));
        assert_int_equal(host_match_eval(&p->host, &mv), TRUTH_FALSE);
        mv.available[METRIC_KERNEL] = false;
        assert_int_equal(host_match_eval(&p->host, &mv), TRUTH_UNKNOWN);
        metric_set(&mv, METRIC_CPUS, 2);
        assert_int_equal(host_match_eval(&p->host, &mv), TRUTH_FALSE); /* FALSE beats UNKNOWN */

        HostMatch none = {};
        assert_int_equal(host_match_eval(&none, &mv), TRUTH_TRUE);
        policy_free(p);
}

/* ------------------------------------------------------------------------ */
/* Golden files */

static bool update_golden(void) {
        const char *e = getenv("PCPTUNE_UPDATE_GOLDEN");
        return e && streq(e, "1");
}

static char *diagnostics_join(const Diagnostics *d) {
        char *s = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&s, &size);

        assert_non_null(f);
        for (size_t i = 0; i < d->n_errors; i++)
                fprintf(f, "%s\n", d->errors[i]);
        for (size_t i = 0; i < d->n_warnings; i++)
                fprintf(f, "warning: %s\n", d->warnings[i]);
        assert_int_equal(fclose(f), 0);
        return s;
}

static void check_golden(const char *golden, const char *got) {
        if (update_golden()) {
                FILE *f = fopen(golden, "we");
                assert_non_null(f);
                fputs(got, f);
                assert_int_equal(fclose(f), 0);
                return;
        }
        _cleanup_(freep) char *want = read_text(golden, NULL);
        if (!streq(want, got))
                fail_msg("%s differs.\n--- expected\n%s--- got\n%s", golden, want, got);
}

/* Sorted names of files in dir ending in suffix (NULL-terminated). */
static char **list_files(const char *dir, const char *suffix) {
        DIR *d = opendir(dir);
        char **names = NULL;
        size_t n = 0;

        assert_non_null(d);
        for (struct dirent *de; (de = readdir(d));) {
                size_t l = strlen(de->d_name), ls = strlen(suffix);
                if (de->d_name[0] == '.' || l <= ls || !streq(de->d_name + l - ls, suffix))
                        continue;
                names = realloc(names, (n + 2) * sizeof(char *));
                assert_non_null(names);
                names[n++] = strndup(de->d_name, l - ls);
                names[n] = NULL;
        }
        closedir(d);
        assert_non_null(names);
        for (size_t i = 0; i + 1 < n; i++)
                for (size_t j = i + 1; j < n; j++)
                        if (strcmp(names[i], names[j]) > 0) {
                                char *t = names[i];
                                names[i] = names[j];
                                names[j] = t;
                        }
        return names;
}

static void test_bad_files(void **state) {
        (void) state;
        _cleanup_(strv_freep) char **names = list_files("bad", ".yaml");
        size_t n = 0;

        for (char **name = names; *name; name++, n++) {
                _cleanup_(diagnostics_done) Diagnostics d = {};
                _cleanup_(freep) char *path = NULL, *golden = NULL, *buf = NULL, *got = NULL;
                Policy *p = NULL;
                size_t len;

                assert_true(asprintf(&path, "bad/%s.yaml", *name) > 0);
                assert_true(asprintf(&golden, "bad/%s.err", *name) > 0);
                buf = read_text(path, &len);
                int r = policy_parse(path, buf, len, &p, &d);
                if (r != -EINVAL || p || d.n_errors == 0)
                        fail_msg("%s: policy_parse() = %d with %zu errors", path, r, d.n_errors);
                assert_int_equal(d.n_warnings, 0);
                got = diagnostics_join(&d);
                check_golden(golden, got);

                /* Every message is "file:line:column: ..." with 1-based positions. */
                for (size_t i = 0; i < d.n_errors; i++) {
                        unsigned line = 0, column = 0;
                        int k = 0;
                        assert_true(strneq(d.errors[i], path, strlen(path)));
                        assert_int_equal(sscanf(d.errors[i] + strlen(path), ":%u:%u: %n", &line, &column, &k), 2);
                        assert_true(line >= 1 && column >= 1 && k > 0);
                }
        }
        assert_true(n >= 30);
}

static void test_set_goldens(void **state) {
        (void) state;
        _cleanup_(strv_freep) char **names = list_files("sets", ".err");

        for (char **name = names; *name; name++) {
                _cleanup_(diagnostics_done) Diagnostics d = {};
                _cleanup_(freep) char *dir = NULL, *golden = NULL, *got = NULL;
                PolicySet *s = NULL;

                assert_true(asprintf(&dir, "sets/%s", *name) > 0);
                assert_true(asprintf(&golden, "sets/%s.err", *name) > 0);
                int r = policy_set_load_dir(dir, false, &s, &d);
                assert_true(r == 0 ? d.n_errors == 0 : d.n_errors > 0);
                got = diagnostics_join(&d);
                check_golden(golden, got);
                policy_set_free(s);
        }
}

/* ------------------------------------------------------------------------ */
/* Loading */

static void test_shipped_policies(void **state) {
        (void) state;
        _cleanup_(diagnostics_done) Diagnostics d = {};
        PolicySet *s = NULL;

        assert_int_equal(policy_set_load_dir("../../policies", false, &s, &d), 0);
        for (size_t i = 0; i < d.n_errors; i++)
                print_error("%s\n", d.errors[i]);
        for (size_t i = 0; i < d.n_warnings; i++)
                print_error("warning: %s\n", d.warnings[i]);
        assert_int_equal(d.n_errors, 0);
        assert_int_equal(d.n_warnings, 0);
        assert_true(s->n_policies >= 1);
        assert_string_equal(s->source, "../../policies");

        /* The large-host policy: the values its comments promise. */
        bool found = false;
        for (size_t i = 0; i < s->n_policies; i++) {
                const Policy *p = s->policies[i];
                if (!streq(p->name, "large-host-latency"))
                        continue;
                found = true;
                assert_string_equal(p->file, "../../policies/50-large-host-latency.yaml");
                assert_int_equal(p->priority, 50);
                assert_int_equal(p->host.n_cmps, 2);
                const Rule *cap = find_rule(p, "cap-pcp-high"), *storm = find_rule(p, "exit-storm");
                assert_int_equal(cap->knobs[KNOB_PCP_HIGH_FRACTION].goal.kind, PCP_GOAL_BATCH_MULTIPLE);
                assert_int_equal(cap->knobs[KNOB_PCP_HIGH_FRACTION].goal.value, 8);
                assert_int_equal(storm->knobs[KNOB_PCP_HIGH_FRACTION].goal.kind, PCP_GOAL_MINIMUM);
                assert_true(storm->when.root->value == 200);
                assert_int_equal(storm->when.root->for_usec, SEC(3));
                assert_true(storm->until.root->value == 20);
                assert_int_equal(storm->until.root->for_usec, SEC(30));
                assert_true(cap < storm);
        }
        assert_true(found);

        /* The dying-memcg policy: safe by default (bounded, v1 only where nothing live is below). */
        found = false;
        for (size_t i = 0; i < s->n_policies; i++) {
                const Policy *p = s->policies[i];
                if (!streq(p->name, "dying-memcg-cleanup"))
                        continue;
                found = true;
                const Rule *r = find_rule(p, "reclaim-dying");
                assert_int_equal(r->action.kind, ACTION_RECLAIM_DYING);
                assert_string_equal(r->action.reclaim.cgroup, "auto");
                assert_null(r->action.reclaim.roots);
                assert_int_equal(r->action.reclaim.max_bytes, 256ULL << 20);
                assert_int_equal(r->action.reclaim.step_bytes, 16ULL << 20);
                assert_int_equal(r->action.reclaim.timeout_usec, SEC(30));
                assert_int_equal(r->action.reclaim.force_empty, FORCE_EMPTY_CHILDLESS);
                assert_false(r->action.reclaim.drop_caches);
                assert_false(r->action.reclaim.allow_swap);
                assert_int_equal(r->action.reclaim.refault_window_usec, SEC(30));
                assert_true(r->action.reclaim.max_refault_rate == 100.0);
                assert_int_equal(r->cooldown_usec, SEC(120));
                assert_true(r->when.root->value == 200);
        }
        assert_true(found);
        assert_true(policy_set_uses_metric(s, METRIC_PROC_EXIT_RATE));
        assert_false(policy_set_uses_metric(s, METRIC_PSI_MEMORY_FULL_AVG300));
        policy_set_free(s);
}

static void test_embedded(void **state) {
        (void) state;
        _cleanup_(diagnostics_done) Diagnostics d = {};
        _cleanup_(strv_freep) char **shipped = list_files("../../policies", ".yaml");
        PolicySet *s = NULL;
        size_t n = 0;

        for (char **f = shipped; *f; f++)
                n++;
        assert_int_equal(n_embedded_policies, n);
        assert_null(embedded_policies[n].name);
        assert_null(embedded_policies[n].text);

        assert_int_equal(policy_set_load_embedded(&s, &d), 0);
        assert_int_equal(d.n_errors, 0);
        assert_int_equal(d.n_warnings, 0);
        assert_int_equal(s->n_policies, n);
        assert_string_equal(s->source, "embedded");

        /* Byte for byte the shipped files. */
        for (size_t i = 0; i < n_embedded_policies; i++) {
                _cleanup_(freep) char *path = NULL, *text = NULL;
                assert_true(asprintf(&path, "../../policies/%s", embedded_policies[i].name) > 0);
                text = read_text(path, NULL);
                assert_string_equal(text, embedded_policies[i].text);
        }
        for (size_t i = 0; i < s->n_policies; i++)
                assert_true(strneq(s->policies[i]->file, "<embedded>/", strlen("<embedded>/")));
        policy_set_free(s);

        /* Without a directory argument and with no /etc directory, the default is the embedded set
         * (only checked where the default directory does not exist). */
        struct stat st;
        if (stat(POLICY_DIR_DEFAULT, &st) < 0 && errno == ENOENT) {
                assert_int_equal(policy_set_load_default(NULL, true, &s, NULL), 0);
                assert_string_equal(s->source, "embedded");
                policy_set_free(s);
        }
        /* A directory given: exactly that directory. */
        s = NULL;
        assert_int_equal(policy_set_load_default("good", false, &s, NULL), 0);
        assert_string_equal(s->source, "good");
        assert_int_equal(s->n_policies, 2);
        assert_string_equal(s->policies[0]->name, "large-host-latency");
        assert_string_equal(s->policies[1]->name, "everything");
        policy_set_free(s);
}

static void write_file(const char *path, const char *text, mode_t mode) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        assert_int_equal(fchmod(fd, mode), 0);
        assert_int_equal(close(fd), 0);
}

static const char small_policy[] = "version: 1\nname: %s\npriority: %d\nrules:\n  - name: r\n    pcp: { high: minimum }\n";

static void write_policy(const char *dir, const char *file, const char *name, int priority, mode_t mode) {
        _cleanup_(freep) char *path = NULL, *text = NULL;
        assert_true(asprintf(&path, "%s/%s", dir, file) > 0);
        assert_true(asprintf(&text, small_policy, name, priority) > 0);
        write_file(path, text, mode);
}

static void rm_rf(const char *dir) {
        DIR *d = opendir(dir);
        if (!d)
                return;
        for (struct dirent *de; (de = readdir(d));) {
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                _cleanup_(freep) char *p = NULL;
                assert_true(asprintf(&p, "%s/%s", dir, de->d_name) > 0);
                struct stat st;
                if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
                        rm_rf(p);
                else
                        unlink(p);
        }
        closedir(d);
        rmdir(dir);
}

static void test_load_dir(void **state) {
        (void) state;
        char tmp[] = "/tmp/test-policy-XXXXXX";
        _cleanup_(diagnostics_done) Diagnostics d = {};
        _cleanup_(freep) char *path = NULL, *sub = NULL, *link = NULL, *fifo = NULL;
        PolicySet *s = NULL;

        assert_non_null(mkdtemp(tmp));

        /* Empty directory: an empty set. */
        assert_int_equal(policy_set_load_dir(tmp, true, &s, &d), 0);
        assert_int_equal(s->n_policies, 0);
        assert_int_equal(d.n_errors, 0);
        policy_set_free(s);
        s = NULL;

        /* Sorted by (priority, file name); hidden and other files skipped. */
        write_policy(tmp, "30-c.yaml", "c", 50, 0644);
        write_policy(tmp, "10-a.yml", "a", 50, 0644);
        write_policy(tmp, "20-b.yaml", "b", 10, 0644);
        write_policy(tmp, "99-z.yaml", "z", 0, 0644);
        write_policy(tmp, ".hidden.yaml", "hidden", 50, 0644);
        write_policy(tmp, "notes.txt", "txt", 50, 0644);
        write_policy(tmp, "backup.yaml~", "tilde", 50, 0644);
        assert_int_equal(policy_set_load_dir(tmp, false, &s, &d), 0);
        assert_int_equal(d.n_errors, 0);
        assert_int_equal(s->n_policies, 4);
        assert_string_equal(s->policies[0]->name, "z");
        assert_string_equal(s->policies[1]->name, "b");
        assert_string_equal(s->policies[2]->name, "a");
        assert_string_equal(s->policies[3]->name, "c");
        /* Same priority, always-on rules: the earlier files' rules can never win. */
        assert_int_equal(d.n_warnings, 3);
        policy_set_free(s);
        s = NULL;
        diagnostics_done(&d);

        /* A symlink to a good file is followed; a subdirectory named *.yaml is refused. */
        assert_true(asprintf(&link, "%s/40-link.yaml", tmp) > 0);
        assert_int_equal(symlink("30-c.yaml", link), 0);
        assert_true(asprintf(&sub, "%s/50-dir.yaml", tmp) > 0);
        assert_int_equal(mkdir(sub, 0755), 0);
        assert_int_equal(policy_set_load_dir(tmp, false, &s, &d), -EINVAL);
        assert_null(s);
        assert_int_equal(d.n_errors, 2);
        _cleanup_(freep) char *e1 = NULL, *e2 = NULL;
        assert_true(asprintf(&e1, "%s/50-dir.yaml: expected a regular file, found a directory", tmp) > 0);
        assert_true(asprintf(&e2, "%s/40-link.yaml:2:7: expected unique policy names, found 'c' again (also in %s/30-c.yaml:2)",
                             tmp, tmp) > 0);
        assert_string_equal(d.errors[0], e1);
        assert_string_equal(d.errors[1], e2);
        diagnostics_done(&d);
        assert_int_equal(rmdir(sub), 0);
        assert_int_equal(unlink(link), 0);

        /* A FIFO does not hang the loader. */
        assert_true(asprintf(&fifo, "%s/60-fifo.yaml", tmp) > 0);
        assert_int_equal(mkfifo(fifo, 0644), 0);
        assert_int_equal(policy_set_load_dir(tmp, false, &s, &d), -EINVAL);
        assert_int_equal(d.n_errors, 1);
        assert_non_null(strstr(d.errors[0], "expected a regular file, found a FIFO"));
        diagnostics_done(&d);
        assert_int_equal(unlink(fifo), 0);

        /* Group- or world-writable: refused when checking owners. */
        assert_true(asprintf(&path, "%s/30-c.yaml", tmp) > 0);
        assert_int_equal(chmod(path, 0666), 0);
        assert_int_equal(policy_set_load_dir(tmp, true, &s, &d), -EINVAL);
        assert_null(s);
        assert_int_equal(d.n_errors, 1);
        assert_true(strneq(d.errors[0], path, strlen(path)));
        assert_non_null(strstr(d.errors[0], "writable by group or others"));
        assert_non_null(strstr(d.errors[0], "mode 0666"));
        assert_non_null(strstr(d.errors[0], "policies drive root writes"));
        if (geteuid() == 0) {
                _cleanup_(freep) char *want = NULL;
                assert_true(asprintf(&want,
                                     "%s: refusing policy file writable by group or others (owner uid 0, mode 0666): "
                                     "policies drive root writes, so a policy file must be owned by root and not "
                                     "writable by group or others",
                                     path) > 0);
                assert_string_equal(d.errors[0], want);
        }
        diagnostics_done(&d);
        /* Not checking owners (tests, pcptunectl validate as a user): accepted. */
        assert_int_equal(policy_set_load_dir(tmp, false, &s, &d), 0);
        policy_set_free(s);
        s = NULL;
        diagnostics_done(&d);
        assert_int_equal(chmod(path, 0620), 0);
        assert_int_equal(policy_set_load_dir(tmp, true, &s, &d), -EINVAL);
        assert_int_equal(d.n_errors, 1);
        assert_non_null(strstr(d.errors[0], "mode 0620"));
        diagnostics_done(&d);
        assert_int_equal(chmod(path, 0644), 0);

        if (geteuid() == 0) {
                /* Root-owned and 0644: accepted. */
                assert_int_equal(policy_set_load_dir(tmp, true, &s, &d), 0);
                assert_int_equal(s->n_policies, 4);
                policy_set_free(s);
                s = NULL;
                diagnostics_done(&d);

                /* Owned by another user: refused. */
                assert_int_equal(chown(path, 65534, 65534), 0);
                assert_int_equal(policy_set_load_dir(tmp, true, &s, &d), -EINVAL);
                assert_null(s);
                assert_int_equal(d.n_errors, 1);
                _cleanup_(freep) char *want = NULL;
                assert_true(asprintf(&want,
                                     "%s: refusing policy file not owned by root (owner uid 65534, mode 0644): "
                                     "policies drive root writes, so a policy file must be owned by root and not "
                                     "writable by group or others",
                                     path) > 0);
                assert_string_equal(d.errors[0], want);
                diagnostics_done(&d);
        } else
                print_message("[ SKIPPED  ] owner checks need root\n");

        rm_rf(tmp);

        /* A missing directory. */
        assert_int_equal(policy_set_load_dir(tmp, true, &s, &d), -ENOENT);
        assert_null(s);
        assert_int_equal(d.n_errors, 1);
        _cleanup_(freep) char *want = NULL;
        assert_true(asprintf(&want, "%s: policy directory does not exist", tmp) > 0);
        assert_string_equal(d.errors[0], want);
}

/*
 * Issue 21 item 4: a policy directory writable by others is refused even when sticky; a symlink in it
 * is followed only if the directory's owner made it (fs.protected_symlinks, off on some hosts), the
 * ConfigMap's ..data too; a file that is not a policy (a symlink to /etc/shadow, a key) gets one
 * message that quotes none of its text.
 */
static void test_load_dir_links_and_secrets(void **state) {
        (void) state;
        char tmp[] = "/tmp/test-policy-links-XXXXXX";
        _cleanup_(diagnostics_done) Diagnostics d = {};
        _cleanup_(freep) char *dir = NULL, *other = NULL, *link = NULL, *secret = NULL, *want = NULL;
        PolicySet *s = NULL;

        if (geteuid() != 0) {
                print_message("[ SKIPPED  ] owner checks need root\n");
                return;
        }
        assert_non_null(mkdtemp(tmp));
        assert_true(asprintf(&dir, "%s/policies.d", tmp) > 0);
        assert_true(asprintf(&other, "%s/elsewhere", tmp) > 0);
        assert_int_equal(mkdir(dir, 0755), 0);
        assert_int_equal(mkdir(other, 0755), 0);
        write_policy(other, "target.yaml", "target", 50, 0644);
        write_policy(dir, "10-a.yaml", "a", 50, 0644);

        /* A symlink root made: followed. */
        assert_true(asprintf(&link, "%s/20-link.yaml", dir) > 0);
        assert_true(asprintf(&secret, "%s/target.yaml", other) > 0);
        assert_int_equal(symlink(secret, link), 0);
        assert_int_equal(policy_set_load_dir(dir, true, &s, &d), 0);
        assert_int_equal(s->n_policies, 2);
        s = policy_set_free(s);
        diagnostics_done(&d);

        /* The same symlink owned by another user: refused, whatever it points to (a root-owned policy here). */
        assert_int_equal(lchown(link, 65534, 65534), 0);
        assert_int_equal(policy_set_load_dir(dir, true, &s, &d), -EINVAL);
        assert_null(s);
        assert_int_equal(d.n_errors, 1);
        assert_true(asprintf(&want,
                             "%s: refusing a symlink owned by uid 65534 in a directory owned by uid 0: only the "
                             "directory's owner may link a policy there (the rule of fs.protected_symlinks)",
                             link) > 0);
        assert_string_equal(d.errors[0], want);
        diagnostics_done(&d);
        /* Not checking owners: followed. */
        assert_int_equal(policy_set_load_dir(dir, false, &s, &d), 0);
        s = policy_set_free(s);
        diagnostics_done(&d);
        unlink(link);

        /* A sticky world-writable directory is refused like a writable file (others could plant links). */
        assert_int_equal(chmod(dir, 01777), 0);
        assert_int_equal(policy_set_load_dir(dir, true, &s, &d), -EPERM);
        assert_null(s);
        assert_int_equal(d.n_errors, 1);
        free(want);
        assert_true(asprintf(&want,
                             "%s: refusing policy directory (owner uid 0, mode 1777): it must be owned by root and not "
                             "writable by group or others, who could add, rename or remove policies",
                             dir) > 0);
        assert_string_equal(d.errors[0], want);
        diagnostics_done(&d);
        assert_int_equal(chmod(dir, 01775), 0);
        assert_int_equal(policy_set_load_dir(dir, true, &s, &d), -EPERM);
        diagnostics_done(&d);
        assert_int_equal(chmod(dir, 0755), 0);

        /* A ConfigMap layout whose ..data symlink someone else made: refused. */
        _cleanup_(freep) char *vol = NULL, *data = NULL, *datalink = NULL;
        assert_true(asprintf(&vol, "%s/configmap", tmp) > 0);
        assert_true(asprintf(&data, "%s/..2026_12_02_00_00_00.1", vol) > 0);
        assert_true(asprintf(&datalink, "%s/..data", vol) > 0);
        assert_int_equal(mkdir(vol, 0777), 0);
        assert_int_equal(chmod(vol, 0777), 0);
        assert_int_equal(mkdir(data, 0755), 0);
        write_policy(data, "50-cm.yaml", "cm", 50, 0644);
        assert_int_equal(symlink("..2026_12_02_00_00_00.1", datalink), 0);
        assert_int_equal(policy_set_load_dir(vol, true, &s, &d), 0);
        assert_int_equal(s->n_policies, 1);
        s = policy_set_free(s);
        diagnostics_done(&d);
        assert_int_equal(lchown(datalink, 65534, 65534), 0);
        assert_int_equal(policy_set_load_dir(vol, true, &s, &d), -EPERM);
        assert_null(s);
        assert_int_equal(d.n_errors, 1);
        assert_non_null(strstr(d.errors[0], "..data: refusing a symlink owned by uid 65534"));
        diagnostics_done(&d);

        /* A root-owned file that is not a policy, linked by root: refused without quoting it. */
        static const struct {
                const char *text, *found, *secret;
        } not_policies[] = {
                { "root:$6$saltsalt$hashhashhashhashhashhash:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n",
                  "a mapping without any of its keys (version, name, description, priority, host, rules)", "$6$" },
                { "SECRET_TOKEN=hunter2\n", "text", "hunter2" },
                { "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n"
                  "-----END PRIVATE KEY-----\n", "text", "MIIEvQ" },
                { "password: hunter2\nrulez: [a]\n",
                  "a mapping without any of its keys (version, name, description, priority, host, rules)", "hunter2" },
                { "&anchor x\n", "text", "anchor" },
        };
        for (size_t i = 0; i < ELEMENTSOF(not_policies); i++) {
                Policy *p = NULL;
                _cleanup_(freep) char *expect = NULL;
                const char *text = not_policies[i].text;
                assert_int_equal(policy_parse("f", text, strlen(text), &p, &d), -EINVAL);
                assert_null(p);
                if (d.n_errors != 1)
                        fail_msg("case %zu: %zu errors, first: %s", i, d.n_errors, d.n_errors ? d.errors[0] : "");
                assert_true(asprintf(&expect,
                                     "f:1:1: expected a policy (a mapping with version, name and rules), found %s: "
                                     "not a policy file, so none of its text is shown",
                                     not_policies[i].found) > 0);
                assert_string_equal(d.errors[0], expect);
                assert_null(strstr(d.errors[0], not_policies[i].secret));
                diagnostics_done(&d);
        }
        /* Through a directory: a root-made symlink to a root-owned secret quotes nothing of it. */
        _cleanup_(freep) char *shadow = NULL;
        assert_true(asprintf(&shadow, "%s/shadow", other) > 0);
        write_file(shadow, not_policies[0].text, 0640);
        assert_int_equal(symlink(shadow, link), 0);
        assert_int_equal(policy_set_load_dir(dir, true, &s, &d), -EINVAL);
        assert_int_equal(d.n_errors, 1);
        assert_null(strstr(d.errors[0], "$6$"));
        assert_null(strstr(d.errors[0], "root:"));
        diagnostics_done(&d);
        /* One policy key makes it a policy: its typos are quoted as before. */
        static const char typo[] = "version: 1\nnmae: x\nrules: [{name: a, repair: pagesets}]\n";
        Policy *p = NULL;
        assert_int_equal(policy_parse("t", typo, strlen(typo), &p, &d), -EINVAL);
        assert_int_equal(d.n_errors, 2);
        assert_string_equal(d.errors[1], "t:2:1: expected a key of the policy (version, name, description, priority, "
                                         "host, rules), found unknown key 'nmae'; did you mean 'name'?");
        diagnostics_done(&d);

        rm_rf(tmp);
}

static void test_load_paths(void **state) {
        (void) state;
        _cleanup_(diagnostics_done) Diagnostics d = {};
        char *paths[] = { (char *) "good/90-everything.yaml", (char *) "../../policies", NULL };
        PolicySet *s = NULL;

        assert_int_equal(policy_set_load_paths(paths, false, &s, &d), 0);
        assert_int_equal(d.n_errors, 0);
        assert_true(s->n_policies >= 2);
        /* everything has priority 900: last. */
        assert_string_equal(s->policies[s->n_policies - 1]->name, "everything");
        assert_string_equal(s->source, "good/90-everything.yaml ../../policies");
        policy_set_free(s);
        s = NULL;

        /* Errors from several files are all reported. */
        char *bad[] = { (char *) "bad/version-2.yaml", (char *) "bad/batch-3x.yaml", (char *) "missing.yaml", NULL };
        assert_true(policy_set_load_paths(bad, false, &s, &d) < 0);
        assert_null(s);
        assert_int_equal(d.n_errors, 3);
        assert_true(strneq(d.errors[0], "bad/version-2.yaml:1:10: ", 25));
        assert_true(strneq(d.errors[1], "bad/batch-3x.yaml:5:18: ", 24));
        assert_string_equal(d.errors[2], "missing.yaml: cannot access policy path: No such file or directory");
}

/* ------------------------------------------------------------------------ */
/* Metrics */

static void test_metric_registry(void **state) {
        (void) state;
        static const char *const names[_METRIC_MAX] = {
                "meminfo.percpu", "meminfo.available", "meminfo.free", "pcp.held", "pcp.high_max",
                "memcg.live", "memcg.dying", "psi.memory.some.avg10", "psi.memory.some.avg60",
                "psi.memory.some.avg300", "psi.memory.full.avg10", "psi.memory.full.avg60",
                "psi.memory.full.avg300", "proc.exit_rate", "cpus", "memory", "kernel", "nodes",
                "percpu.empty_populated", "memcg.ids_used", "pcp.bulk_free.p99", "pcp.bulk_free.pages.p99",
                "pcp.bulk_free.samples",
        };

        for (int i = 0; i < _METRIC_MAX; i++) {
                const MetricInfo *mi = metric_info((MetricId) i);
                assert_non_null(mi);
                assert_string_equal(mi->name, names[i]);
                assert_non_null(mi->description);
                assert_non_null(metric_unit_to_string(mi->unit));
                assert_int_equal(metric_from_name(names[i]), i);
        }
        assert_int_equal(metric_info(METRIC_PCP_HIGH_MAX)->unit, METRIC_UNIT_PAGES);
        assert_int_equal(metric_info(METRIC_PROC_EXIT_RATE)->unit, METRIC_UNIT_RATE);
        assert_int_equal(metric_info(METRIC_KERNEL)->unit, METRIC_UNIT_VERSION);
        assert_int_equal(metric_info(METRIC_PSI_MEMORY_FULL_AVG60)->unit, METRIC_UNIT_PERCENT);
        assert_int_equal(metric_info(METRIC_MEMORY)->unit, METRIC_UNIT_BYTES);
        assert_int_equal(metric_info(METRIC_NODES)->unit, METRIC_UNIT_COUNT);
        assert_int_equal(metric_info(METRIC_PCP_BULK_FREE_P99)->unit, METRIC_UNIT_SECONDS);
        assert_string_equal(metric_unit_to_string(METRIC_UNIT_SECONDS), "seconds");
        assert_null(metric_info(_METRIC_MAX));
        assert_null(metric_info(_METRIC_INVALID));
        assert_int_equal(metric_from_name("memcg"), -ENOENT);
        assert_int_equal(metric_from_name("CPUS"), -ENOENT);
        assert_int_equal(metric_from_name(NULL), -ENOENT);
        assert_string_equal(metric_unit_to_string(METRIC_UNIT_RATE), "per second");
        assert_null(metric_unit_to_string(_METRIC_UNIT_MAX));
}

static void test_metrics_from_snapshot(void **state) {
        (void) state;
        unsigned node_cpus[3] = { 4, 0, 4 };
        PcpCpu cpus[1] = { { .cpu = 0, .count = 10, .high = 100, .batch = 63 } };
        Zone zones[4] = {
                { .node = 0, .name = "DMA32", .populated = true, .managed_pages = 1000, .cpus = cpus, .n_cpus = 1 },
                { .node = 1, .name = "Normal", .populated = true, .managed_pages = 2000, .cpus = cpus, .n_cpus = 1 },
                { .node = 2, .name = "Normal", .populated = false, .managed_pages = 0 },
                { .node = 3, .name = "Normal", .populated = false, .managed_pages = 0 },
        };
        /* What snapshot_derive() makes of the populated zones: the nodes are counted on them. */
        PcpZone pcp_zones[2] = {
                { .node = 0, .name = "DMA32", .in = { .managed_pages = 1000, .node_cpus = 4, .online_cpus = 8 } },
                { .node = 1, .name = "Normal", .in = { .managed_pages = 2000, .node_cpus = 0, .online_cpus = 8 } },
        };
        Snapshot s = {
                .topo = { .n_nodes = 3, .node_cpus = node_cpus, .online_cpus = 8, .page_size = 4096,
                          .kernel = { 6, 12, 117 } },
                .meminfo = { .mem_total_kib = 8 * 1024 * 1024, .mem_free_kib = 1024, .mem_available_kib = 2048,
                             .percpu_kib = 512, .has_mem_available = true, .has_percpu = true },
                .zoneinfo = { .zones = zones, .n_zones = 4 },
                .pcp_zones = pcp_zones,
                .n_pcp_zones = 2,
                .memcg = { .mode = CGROUP_MEMORY_V2, .live = 40, .dying = 7 },
                .psi = { .some = { 1.5, 2.5, 3.5, 0 }, .full = { 0.5, 0.25, 0.125, 0 }, .has_full = true },
                .has_memcg = true,
                .has_psi = true,
                .pcp_held_pages = 300,
                .pcp_high_max = 6392,
        };
        MetricValues mv;

        metrics_from_snapshot(&s, &mv);
        /* Everything but the exit rate (the connector), the contrib patch's percpu counters and the
         * bulk-free holds (the daemon's trace instance). */
        for (int i = 0; i < _METRIC_MAX; i++)
                assert_true(mv.available[i] == (i != METRIC_PROC_EXIT_RATE && i != METRIC_PERCPU_EMPTY_POPULATED &&
                                                (i < METRIC_PCP_BULK_FREE_P99 || i > METRIC_PCP_BULK_FREE_SAMPLES)));
        assert_string_equal(mv.why_unavailable[METRIC_PCP_BULK_FREE_P99], "measured by the running pcptuned only");
        assert_true(mv.value[METRIC_MEMINFO_PERCPU] == 512.0 * 1024);
        assert_true(mv.value[METRIC_MEMINFO_AVAILABLE] == 2048.0 * 1024);
        assert_true(mv.value[METRIC_MEMINFO_FREE] == 1024.0 * 1024);
        assert_true(mv.value[METRIC_MEMORY] == 8.0 * 1024 * 1024 * 1024);
        assert_true(mv.value[METRIC_PCP_HELD] == 300.0 * 4096);
        assert_true(mv.value[METRIC_PCP_HIGH_MAX] == 6392);
        assert_true(mv.value[METRIC_MEMCG_LIVE] == 40);
        assert_true(mv.value[METRIC_MEMCG_DYING] == 7);
        assert_true(mv.value[METRIC_PSI_MEMORY_SOME_AVG10] == 1.5);
        assert_true(mv.value[METRIC_PSI_MEMORY_SOME_AVG300] == 3.5);
        assert_true(mv.value[METRIC_PSI_MEMORY_FULL_AVG60] == 0.25);
        assert_true(mv.value[METRIC_CPUS] == 8);
        assert_true(mv.value[METRIC_KERNEL] == 6012117);
        /* node 0 (CPUs and memory), 1 (memory only), 2 (CPUs only); node 3 has neither. */
        assert_true(mv.value[METRIC_NODES] == 3);
        assert_string_equal(mv.why_unavailable[METRIC_PROC_EXIT_RATE], "proc connector not running");

        /* Missing optional sources. */
        s.meminfo.has_percpu = false;
        s.meminfo.has_mem_available = false;
        s.pcp_high_max = -1;
        s.memcg.mode = CGROUP_MEMORY_NONE;
        s.psi.has_full = false;
        metrics_from_snapshot(&s, &mv);
        assert_false(mv.available[METRIC_MEMINFO_PERCPU]);
        assert_non_null(mv.why_unavailable[METRIC_MEMINFO_PERCPU]);
        assert_false(mv.available[METRIC_MEMINFO_AVAILABLE]);
        assert_false(mv.available[METRIC_PCP_HIGH_MAX]);
        assert_false(mv.available[METRIC_MEMCG_LIVE]);
        assert_false(mv.available[METRIC_MEMCG_DYING]);
        assert_string_equal(mv.why_unavailable[METRIC_MEMCG_DYING], "no memory cgroup controller");
        assert_true(mv.available[METRIC_PSI_MEMORY_SOME_AVG10]);
        assert_false(mv.available[METRIC_PSI_MEMORY_FULL_AVG10]);
        s.has_psi = false;
        s.has_memcg = false;
        metrics_from_snapshot(&s, &mv);
        assert_false(mv.available[METRIC_PSI_MEMORY_SOME_AVG10]);
        assert_false(mv.available[METRIC_MEMCG_LIVE]);
        assert_true(mv.available[METRIC_MEMINFO_FREE]);
        assert_true(mv.available[METRIC_NODES]);
}

static int setup_dir(void **state) {
        (void) state;
        const char *top = getenv("top_srcdir");
        _cleanup_(freep) char *dir = NULL;

        if (asprintf(&dir, "%s/tests/policies", top && *top ? top : ".") < 0)
                return -1;
        if (chdir(dir) < 0) {
                print_error("cannot chdir to %s: %m\n", dir);
                return -1;
        }
        return 0;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_brief_example),
                cmocka_unit_test(test_everything),
                cmocka_unit_test(test_parse_odd_inputs),
                cmocka_unit_test(test_parse_deep_nesting),
                cmocka_unit_test(test_duplicate_rules_many),
                cmocka_unit_test(test_knob_table),
                cmocka_unit_test(test_condition_literals),
                cmocka_unit_test(test_condition_structure),
                cmocka_unit_test(test_condition_errors),
                cmocka_unit_test(test_condition_limits),
                cmocka_unit_test(test_condition_eval_for),
                cmocka_unit_test(test_condition_eval_nested_for),
                cmocka_unit_test(test_condition_kleene),
                cmocka_unit_test(test_condition_hysteresis),
                cmocka_unit_test(test_cmp),
                cmocka_unit_test(test_host_match),
                cmocka_unit_test(test_bad_files),
                cmocka_unit_test(test_set_goldens),
                cmocka_unit_test(test_shipped_policies),
                cmocka_unit_test(test_embedded),
                cmocka_unit_test(test_load_dir),
                cmocka_unit_test(test_load_dir_links_and_secrets),
                cmocka_unit_test(test_load_paths),
                cmocka_unit_test(test_metric_registry),
                cmocka_unit_test(test_metrics_from_snapshot),
        };

        return cmocka_run_group_tests(tests, setup_dir, NULL);
}
