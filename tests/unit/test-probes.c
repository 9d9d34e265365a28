/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe-kernel.c (kernel probes), the pcp regime of snapshot.c and pcp_bulk_free_max_pages() of model-pcp.c. */
#include <sys/stat.h>

#include "test-helpers.h"

#include "log.h"

#include "plan.h"
#include "probe-kernel.h"
#include "snapshot.h"
#include "source-table.h"
#include "view.h"

/* A writable copy of a fixture root, osrelease replaced when release is not NULL (caller removes and frees). */
static char *root_copy(const char *set, const char *release, const char *proc_version) {
        char *dir = test_root_copy(set, "probes");
        FILE *f;

        if (release) {
                _cleanup_(freep) char *p = NULL;
                assert_true(asprintf(&p, "%s/proc/sys/kernel/osrelease", dir) >= 0);
                assert_non_null(f = fopen(p, "we"));
                fprintf(f, "%s\n", release);
                fclose(f);
        }
        if (proc_version) {
                _cleanup_(freep) char *p = NULL;
                assert_true(asprintf(&p, "%s/proc/version", dir) >= 0);
                assert_non_null(f = fopen(p, "we"));
                fprintf(f, "%s\n", proc_version);
                fclose(f);
        }
        return dir;
}

/* A copy of the live 6.18 tree whose .pcptune/<name> declares value (what a test root tells of its kernel). */
static char *root_declaring(const char *name, int value) {
        char *root = root_copy("6.18.44-fc-live-smp2-24G", NULL, NULL);
        _cleanup_(freep) char *d = NULL, *path = NULL;
        FILE *f;
        assert_true(asprintf(&d, "%s/.pcptune", root) >= 0);
        assert_int_equal(mkdir(d, 0755), 0);
        assert_true(asprintf(&path, "%s/%s", d, name) >= 0);
        assert_non_null(f = fopen(path, "we"));
        fprintf(f, "%d\n", value);
        fclose(f);
        return root;
}

static void root_remove(char *dir) {
        _cleanup_(freep) char *cmd = NULL;
        assert_true(asprintf(&cmd, "rm -rf '%s'", dir) >= 0);
        assert_int_equal(system(cmd), 0);
        free(dir);
}

static void run_probes(const char *root, Snapshot **ret_snap, KernelProbes *ret) {
        static KernelFeatures feat;
        assert_int_equal(snapshot_take(root, ret_snap), 0);
        kernel_features_probe(root, *ret_snap, &feat);
        kernel_probes_run(&(ProbeInput){ .root = root, .snap = *ret_snap, .kernel = (*ret_snap)->topo.kernel,
                                         .features = &feat },
                          ret);
}

static ProbeAnswer answer_of(const KernelProbes *p, const char *label) {
        const ProbeResult *r = kernel_probes_find(p, label);
        assert_non_null(r);
        assert_true(r->evidence[0] != '\0');
        return r->answer;
}

/* Every captured kernel: the regime and what it rests on. */
static void test_regime_fixtures(void **state) {
        (void) state;
        for (const char *const *set = fixture_sets; *set; set++) {
                _cleanup_(freep) char *root = fixture_root(*set, "root");
                _cleanup_(snapshot_freep) Snapshot *s = NULL;
                KernelProbes p;

                run_probes(root, &s, &p);
                if (strncmp(*set, "6.1.", 4) == 0) {
                        /* Fixed high: every pageset holds zone_highsize(); nothing contradicts the version. */
                        assert_int_equal(s->regime, PCP_REGIME_FIXED);
                        assert_int_equal(s->regime_basis, PCP_REGIME_BY_VERSION);
                        assert_true(s->regime_cpus_compared > 0);
                        assert_int_equal(s->regime_cpus_dynamic, 0);
                        assert_int_equal(answer_of(&p, PROBE_PCP_AUTOTUNE), PROBE_NO);
                } else if (strncmp(*set, "6.12.", 5) == 0) {
                        assert_int_equal(s->regime, PCP_REGIME_AUTOTUNE);
                        assert_true(s->regime_basis == PCP_REGIME_BY_PAGESETS);
                        assert_int_equal(answer_of(&p, PROBE_PCP_AUTOTUNE), PROBE_YES);
                } else {
                        assert_int_equal(s->regime, PCP_REGIME_AUTOTUNE);
                        assert_int_equal(s->regime_basis, PCP_REGIME_BY_ZONEINFO);
                }
        }
}

/* A vendor kernel is classified by what it prints, not by its version. */
static void test_regime_backports(void **state) {
        (void) state;
        struct {
                const char *set, *release;
                PcpRegime regime;
                PcpRegimeBasis basis;
        } cases[] = {
                /* auto-tuning backported to a 6.6 kernel: the pagesets show it */
                { "6.12.117+deb12-amd64-smp8-4G", "6.6.30-vendor", PCP_REGIME_AUTOTUNE, PCP_REGIME_BY_PAGESETS },
                /* ... and with the zoneinfo lines too */
                { "6.18.44-fc-live-smp2-24G", "6.6.30-vendor", PCP_REGIME_AUTOTUNE, PCP_REGIME_BY_ZONEINFO },
                /* fixed pagesets under a 6.12 version: both regimes give these values, the version decides */
                { "6.1.0-57-amd64-smp8-4G", "6.12.0-vendor", PCP_REGIME_AUTOTUNE, PCP_REGIME_BY_VERSION },
                { "6.1.0-57-amd64-smp8-4G", "6.1.0-57-amd64", PCP_REGIME_FIXED, PCP_REGIME_BY_VERSION },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *root = root_copy(cases[i].set, cases[i].release, NULL);
                _cleanup_(snapshot_freep) Snapshot *s = NULL;
                assert_int_equal(snapshot_take(root, &s), 0);
                assert_int_equal(s->regime, cases[i].regime);
                assert_int_equal(s->regime_basis, cases[i].basis);
                root_remove(root);
        }
}

/* Which drain paths are batched, by version (the sources and stable releases in probe-kernel.c). */
static void test_batched_frees(void **state) {
        (void) state;
        struct {
                const char *release;
                ProbeAnswer want;
                const char *in_evidence;
        } cases[] = {
                { "6.1.0-57-amd64", PROBE_NO, "draining a CPU's lists frees whole lists in one hold" },  /* 6.1.0 without /proc/version */
                { "6.1.192-vmtest", PROBE_NO, "draining a CPU's lists frees batch << scale_max pages per hold" },
                { "6.6.20", PROBE_NO, "whole lists" },
                { "6.12.66", PROBE_NO, "idle lists shrink by up to batch << scale_max pages per hold" },
                { "6.12.67", PROBE_PARTIAL, "idle lists shrink by batch pages per hold" },
                { "6.12.117+deb12-amd64", PROBE_PARTIAL, "a process exit frees up to batch << scale_max pages per zone->lock hold" },
                { "6.18.6", PROBE_NO, NULL },
                { "6.18.44-fc-v857", PROBE_PARTIAL, NULL },
                { "6.19.0", PROBE_YES, "a process exit frees at most batch pages" },
                { "7.1.3", PROBE_YES, NULL },
                /* Debian 7.2.13: free_frozen_page_commit() and decay_pcp_high() free in steps of batch */
                { "7.2.13+deb14-amd64", PROBE_YES, "idle lists shrink by batch pages per hold" },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                KernelProbes p;
                KernelVersion v;
                assert_int_equal(kernel_version_parse(cases[i].release, &v), 0);
                kernel_probes_run(&(ProbeInput){ .kernel = v }, &p);
                const ProbeResult *r = kernel_probes_find(&p, PROBE_BATCHED_FREES);
                assert_non_null(r);
                if (r->answer != cases[i].want || (cases[i].in_evidence && !strstr(r->evidence, cases[i].in_evidence)))
                        fail_msg("%s: %s, %s", cases[i].release, probe_answer_to_string(r->answer), r->evidence);
        }
        /* Debian names the ABI in the release: /proc/version has the stable version. */
        char *root = root_copy("6.1.0-57-amd64-smp2-1G", NULL,
                               "Linux version 6.1.0-57-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian "
                               "12.2.0-14+deb12u1) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP "
                               "PREEMPT_DYNAMIC Debian 6.1.192-3 (2026-11-26)");
        _cleanup_(snapshot_freep) Snapshot *s = NULL;
        KernelProbes p;
        run_probes(root, &s, &p);
        const ProbeResult *r = kernel_probes_find(&p, PROBE_BATCHED_FREES);
        assert_int_equal(r->answer, PROBE_NO);
        assert_non_null(strstr(r->evidence, "6.1.192 (/proc/version)"));
        assert_non_null(strstr(r->evidence, "draining a CPU's lists frees batch << scale_max pages per hold"));
        root_remove(root);
}

static void test_reparenting(void **state) {
        (void) state;
        KernelProbes p;
        KernelVersion v;

        assert_int_equal(kernel_version_parse("6.18.44", &v), 0);
        kernel_probes_run(&(ProbeInput){ .kernel = v }, &p);
        assert_int_equal(answer_of(&p, PROBE_REPARENTING), PROBE_NO);
        assert_int_equal(kernel_version_parse("6.1.0-57-amd64", &v), 0);
        kernel_probes_run(&(ProbeInput){ .kernel = v }, &p);
        assert_int_equal(answer_of(&p, PROBE_REPARENTING), PROBE_NO);
        /* LRU folios are reparented at offline from 7.1 on ("Eliminate Dying Memory Cgroup"). */
        struct {
                const char *release;
                ProbeAnswer want;
        } by_version[] = {
                { "6.19.2", PROBE_NO }, { "7.0.9", PROBE_NO }, { "7.1.0", PROBE_YES }, { "7.2.13+deb14-amd64", PROBE_YES },
        };
        for (size_t i = 0; i < ELEMENTSOF(by_version); i++) {
                assert_int_equal(kernel_version_parse(by_version[i].release, &v), 0);
                kernel_probes_run(&(ProbeInput){ .kernel = v }, &p);
                if (answer_of(&p, PROBE_REPARENTING) != by_version[i].want)
                        fail_msg("%s: %s", by_version[i].release, kernel_probes_find(&p, PROBE_REPARENTING)->evidence);
        }
        assert_non_null(strstr(kernel_probes_find(&p, PROBE_REPARENTING)->evidence, "from 7.1 on"));
        /* The version is unknown: so is the answer. */
        kernel_probes_run(&(ProbeInput){ .kernel = { 0, 0, 0 } }, &p);
        assert_int_equal(answer_of(&p, PROBE_REPARENTING), PROBE_UNKNOWN);

        /* A 7.2 root tree captured under QEMU, without any .pcptune declaration: yes for both. */
        {
                _cleanup_(snapshot_freep) Snapshot *s72 = NULL;
                _cleanup_(freep) char *root72 = NULL;
                root72 = fixture_root("7.2.13+deb14-amd64-smp2-1G", "root");
                run_probes(root72, &s72, &p);
                assert_int_equal(answer_of(&p, PROBE_REPARENTING), PROBE_YES);
                assert_int_equal(answer_of(&p, PROBE_BATCHED_FREES), PROBE_YES);
        }

        /* A root tree declares what tests/live/live-reparent.sh observed. */
        for (int declared = 0; declared <= 2; declared++) {
                char *root = root_declaring("dying-memcg-reparenting", declared);
                _cleanup_(snapshot_freep) Snapshot *s = NULL;
                run_probes(root, &s, &p);
                /* 2 is not an answer: the version decides */
                assert_int_equal(answer_of(&p, PROBE_REPARENTING), declared == 1 ? PROBE_YES : PROBE_NO);
                if (declared == 1)
                        assert_non_null(strstr(kernel_probes_find(&p, PROBE_REPARENTING)->effect,
                                               "reclaim-dying still frees those"));
                root_remove(root);
        }
}

/* contrib 0004: memory.reclaim scope=dying, as the daemon's write (or a root tree) told. */
static void test_reclaim_scope(void **state) {
        (void) state;
        KernelProbes p;
        KernelVersion v;
        KernelFeatures feat = { 0 };
        const ProbeResult *r;

        assert_int_equal(kernel_version_parse("6.12.117", &v), 0);
        struct {
                FeatureState st;
                ProbeAnswer answer;
                const char *evidence, *effect;
        } cases[] = {
                { FEATURE_PRESENT, PROBE_YES, "'0 scope=dying' written to memory.reclaim was accepted",
                  "only the dying memcgs of a subtree" },
                { FEATURE_ABSENT, PROBE_NO, "EINVAL", "scans its live cgroups too" },
                { FEATURE_UNKNOWN, PROBE_UNKNOWN, "a hypothetical shape", "scans its live cgroups too" },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                feat.reclaim_scope_dying = cases[i].st;
                kernel_probes_run(&(ProbeInput){ .kernel = v, .features = &feat }, &p);
                assert_non_null(r = kernel_probes_find(&p, PROBE_RECLAIM_SCOPE));
                assert_int_equal(r->answer, cases[i].answer);
                assert_non_null(strstr(r->evidence, cases[i].evidence));
                assert_non_null(strstr(r->effect, cases[i].effect));
        }

        /* A root tree declares it (1 or 0; anything else leaves it unknown); cgroup v1 says no. */
        for (int declared = 0; declared <= 2; declared++) {
                char *root = root_declaring("memory-reclaim-scope-dying", declared);
                _cleanup_(snapshot_freep) Snapshot *s = NULL;
                kernel_features_declared(root, &feat);
                assert_int_equal(feat.reclaim_scope_dying,
                                 declared == 1 ? FEATURE_PRESENT : declared == 0 ? FEATURE_ABSENT : FEATURE_UNKNOWN);
                run_probes(root, &s, &p);
                if (s->has_memcg && s->memcg.mode == CGROUP_MEMORY_V1)
                        assert_int_equal(answer_of(&p, PROBE_RECLAIM_SCOPE), PROBE_NO);
                root_remove(root);
        }
}

/*
 * contrib 0002: the sysctl as the snapshot read it, by KnobId: the probe
 * rows, the "contrib" JSON (under the knob table's name) and plan's pages
 * per bulk free take its value; without it the build's scale_max (5).
 */
static void test_contrib_scale(void **state) {
        const KnobDesc *d = knob_desc(KNOB_PCP_BATCH_SCALE_MAX);
        const char *label = "contrib 0002, vm.pcp_batch_scale_max";
        KernelProbes p;
        (void) state;

        for (int with = 0; with <= 1; with++) {
                char *root = root_copy("6.18.44-fc-live-smp2-24G", NULL, NULL);
                _cleanup_(snapshot_freep) Snapshot *s = NULL;
                KernelFeatures feat;
                PlanHost h;
                json_object *j, *v;

                if (with)
                        test_put(root, d->path, "0\n", 0644);
                run_probes(root, &s, &p);
                assert_int_equal(answer_of(&p, label), with ? PROBE_YES : PROBE_NO);
                assert_non_null(strstr(kernel_probes_find(&p, label)->evidence,
                                       with ? "/proc/sys/vm/pcp_batch_scale_max = 0" : "no /proc/sys/vm/pcp_batch_scale_max"));
                assert_non_null(strstr(kernel_probes_find(&p, PROBE_BATCHED_FREES)->evidence,
                                       with ? "(scale_max 0: vm.pcp_batch_scale_max)"
                                            : "(scale_max 5: CONFIG_PCP_BATCH_SCALE_MAX)"));

                kernel_features_probe(root, s, &feat);
                assert_non_null(j = kernel_features_to_json(&feat, s));
                assert_true(json_object_object_get_ex(j, "pcp_batch_scale_max", &v));
                if (with)
                        assert_int_equal(json_object_get_int64(v), 0);
                else
                        assert_null(v);
                json_object_put(j);

                /* 6.18: a free past high moves min(batch << scale_max, high - batch) pages, at least batch. */
                assert_int_equal(plan_host_from_snapshot(s, "fixture", &h), 0);
                assert_non_null(j = plan_to_json(&h, NULL));
                v = view_idx(view_idx(j, "zones", 0), "plans", 0);
                assert_non_null(v);
                if (with)
                        assert_int_equal(view_i64(v, "bulk_free_max_pages", -1), view_i64(v, "batch", -2));
                else
                        assert_true(view_i64(v, "bulk_free_max_pages", -1) > view_i64(v, "batch", -2));
                json_object_put(j);
                plan_host_done(&h);
                root_remove(root);
        }

        /* A shape has no snapshot: unknown, nothing under contrib. */
        KernelVersion kv;
        assert_int_equal(kernel_version_parse("6.12.117", &kv), 0);
        kernel_probes_run(&(ProbeInput){ .kernel = kv }, &p);
        assert_int_equal(answer_of(&p, label), PROBE_UNKNOWN);
}

static void test_probe_rows(void **state) {
        (void) state;
        KernelProbes p;
        KernelVersion v;
        json_object *j;

        assert_int_equal(kernel_version_parse("6.12.117", &v), 0);
        kernel_probes_run(&(ProbeInput){ .kernel = v }, &p);
        assert_true(p.n >= 6);
        for (size_t i = 0; i < p.n; i++) {
                assert_non_null(probe_answer_to_string(p.rows[i].answer));
                assert_true(p.rows[i].evidence[0] && p.rows[i].effect[0]);
                for (size_t k = 0; k < i; k++)
                        assert_string_not_equal(p.rows[i].label, p.rows[k].label);
        }
        assert_null(probe_answer_to_string(_PROBE_ANSWER_MAX));
        assert_null(kernel_probes_find(&p, "no such probe"));
        j = kernel_probes_to_json(&p);
        assert_non_null(j);
        assert_int_equal(json_object_array_length(j), p.n);
        json_object *row = json_object_array_get_idx(j, 1), *v_label, *v_answer;
        assert_true(json_object_object_get_ex(row, "label", &v_label));
        assert_true(json_object_object_get_ex(row, "answer", &v_answer));
        assert_string_equal(json_object_get_string(v_label), PROBE_BATCHED_FREES);
        assert_string_equal(json_object_get_string(v_answer), "partial");
        json_object_put(j);

        /* Verbose text: one paragraph per row, under 100 columns. */
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        assert_non_null(f);
        kernel_probes_print(f, &p, true);
        fclose(f);
        assert_non_null(strstr(buf, "  batched bulk frees: partial - by kernel version 6.12.117"));
        for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
                assert_true(strlen(line) < 100);
        free(buf);
}

/*
 * The short text (status, plan and the dry-run report without --verbose): a header and one line per row,
 * at most 80 columns, each with the row's short name, its answer and a reason of the table (not a cut
 * of the evidence), naming no test script and no patch number.  rows: the rows of the probes printed.
 */
static void assert_short_lines(const KernelProbes *p) {
        char *buf = NULL, *save = NULL;
        size_t len = 0, n = 0;
        FILE *f = open_memstream(&buf, &len);

        assert_non_null(f);
        kernel_probes_print(f, p, false);
        fclose(f);
        for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++) {
                assert_true(strlen(line) <= 80);
                assert_null(strstr(line, "tests/"));
                assert_null(strstr(line, "contrib 0"));
                if (n == 0)
                        continue;
                const ProbeResult *r = &p->rows[n - 1];
                const char *reason = kernel_probe_reason(r->label, probe_answer_to_string(r->answer), r->evidence);
                if (!reason)
                        fail_msg("no short reason for '%s: %s - %s'", r->label, probe_answer_to_string(r->answer),
                                 r->evidence);
                assert_non_null(strstr(line, kernel_probe_name(r->label)));
                assert_non_null(strstr(line, probe_answer_to_string(r->answer)));
                assert_non_null(strstr(line, reason));
        }
        assert_int_equal(n, p->n + 1);
        free(buf);
}

/* Every captured tree, with every state of the features a write tells, a declared reparenting kernel and
 * shapes of several kernels: every row has its short line. */
static void test_short_lines(void **state) {
        (void) state;
        for (size_t i = 0; fixture_sets[i]; i++) {
                _cleanup_(freep) char *root = fixture_root(fixture_sets[i], "root");
                Snapshot *s = NULL;
                KernelProbes p;

                run_probes(root, &s, &p);
                assert_short_lines(&p);
                for (FeatureState st = 0; st < _FEATURE_STATE_MAX; st++)
                        for (int sys = 0; sys < 2; sys++) {
                                KernelFeatures feat = { .fraction_floor = st, .reclaim_swappiness = st,
                                                        .reclaim_scope_dying = st, .percpu_sysfs = sys,
                                                        .percpu_depopulate = sys && st == FEATURE_PRESENT };
                                kernel_probes_run(&(ProbeInput){ .root = root, .snap = s, .kernel = s->topo.kernel,
                                                                 .features = &feat },
                                                  &p);
                                assert_short_lines(&p);
                        }
                snapshot_free(s);
        }
        for (int declared = 0; declared < 2; declared++) {
                char *root = root_declaring("dying-memcg-reparenting", declared);
                Snapshot *s = NULL;
                KernelProbes p;
                run_probes(root, &s, &p);
                assert_short_lines(&p);
                snapshot_free(s);
                root_remove(root);
        }
        const char *versions[] = { "5.10.0", "6.1.0", "6.12.117", "6.18.44", "6.19.0", "7.2.0" };
        for (size_t i = 0; i < ELEMENTSOF(versions); i++) {
                KernelVersion kv;
                KernelProbes p;
                assert_int_equal(kernel_version_parse(versions[i], &kv), 0);
                kernel_probes_run(&(ProbeInput){ .kernel = kv }, &p);
                assert_short_lines(&p);
        }
        KernelProbes p;
        kernel_probes_run(&(ProbeInput){ .kernel = { 0 } }, &p);
        assert_short_lines(&p);
}

/* nr_pcp_free() at its largest, and the batched free_frozen_page_commit(). */
static void test_bulk_free_model(void **state) {
        (void) state;
        /* exitstorm on the live 6.18.44: 2006 pages per bulk free at the default, 189 at the minimum */
        assert_int_equal(pcp_bulk_free_max_pages(&(PcpSetting){ 63, 1839, 10240 }, 5, false), 2016);
        assert_int_equal(pcp_bulk_free_max_pages(&(PcpSetting){ 63, 252, 252 }, 5, false), 189);
        assert_int_equal(pcp_bulk_free_max_pages(&(PcpSetting){ 63, 1839, 10240 }, 2, false), 252);
        assert_int_equal(pcp_bulk_free_max_pages(&(PcpSetting){ 63, 1839, 10240 }, 5, true), 63);
        assert_int_equal(pcp_bulk_free_max_pages(&(PcpSetting){ 1, 4, 4 }, 5, false), 3);
        assert_int_equal(pcp_bulk_free_max_pages(&(PcpSetting){ 0, 0, 0 }, 5, false), 1);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_regime_fixtures), cmocka_unit_test(test_regime_backports),
                cmocka_unit_test(test_batched_frees),   cmocka_unit_test(test_reparenting),
                cmocka_unit_test(test_probe_rows),      cmocka_unit_test(test_bulk_free_model),
                cmocka_unit_test(test_reclaim_scope),   cmocka_unit_test(test_contrib_scale),
                cmocka_unit_test(test_short_lines),
        };
        log_setup("test-probes", LOG_TARGET_NULL, LOG_DEBUG);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
