/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * export-prom.c: the metric table follows Prometheus' naming rules, the text
 * format escapes and formats as the exposition format says, every fixture
 * renders, and the textfile writer is atomic, 0644, follows no symlink and
 * locks its directory.  (promtool and node_exporter check the output in
 * tests/scripts/metrics.sh and tests/live/live-node-exporter.sh.)
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "test-helpers.h"

#include "export-prom.h"
#include "log.h"
#include "snapshot.h"
#include "source-table.h"

static bool valid_name(const char *s, bool label) {
        if (!*s || is_ascii_digit(*s))
                return false;
        for (; *s; s++)
                if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || is_ascii_digit(*s) ||
                      (!label && *s == ':')))
                        return false;
        return true;
}

static bool ends_with(const char *s, const char *suffix) {
        size_t a = strlen(s), b = strlen(suffix);
        return a >= b && streq(s + a - b, suffix);
}

static void test_table(void **state) {
        const PromMetric *t;
        size_t n = prom_metrics(&t);

        assert_true(n >= 20);
        for (size_t i = 0; i < n; i++) {
                const char *name = t[i].name;
                assert_true(valid_name(name, false));
                assert_true(strncmp(name, "pcptune_", 8) == 0);
                /* Counters end in _total; nothing else does, nor in the histogram/summary suffixes. */
                assert_int_equal(t[i].type == PROM_COUNTER, ends_with(name, "_total"));
                assert_false(ends_with(name, "_count") || ends_with(name, "_sum") || ends_with(name, "_bucket"));
                /* The base unit is in the name, before _total. */
                if (*t[i].unit) {
                        char want[64];
                        snprintf(want, sizeof want, "_%s%s", t[i].unit, t[i].type == PROM_COUNTER ? "_total" : "");
                        if (!ends_with(name, want))
                                fail_msg("%s: unit %s not at the end of the name", name, t[i].unit);
                }
                assert_non_null(t[i].help);
                assert_true(strlen(t[i].help) > 10);
                assert_non_null(t[i].get);
                for (size_t l = 0; t[i].labels[l]; l++) {
                        assert_true(l < PROM_LABELS_MAX);
                        assert_true(valid_name(t[i].labels[l], true));
                        assert_false(strncmp(t[i].labels[l], "__", 2) == 0);
                        /* Reserved for summaries and histograms: promtool refuses them on gauges and counters. */
                        assert_false(streq(t[i].labels[l], "quantile") || streq(t[i].labels[l], "le"));
                        /* No unbounded label: never a cgroup, a CPU or a path. */
                        assert_false(streq(t[i].labels[l], "cgroup") || streq(t[i].labels[l], "cpu") ||
                                     streq(t[i].labels[l], "path"));
                }
                for (size_t k = 0; k < i; k++)
                        assert_string_not_equal(t[k].name, name);
        }
}

typedef struct Fake {
        Snapshot *snap;
        MetricValues mv;
        Policy policy;
        Rule rule;
        RuleStatus status;
        Decision decision;
        ReportInput report;
        KnobState knob;
        KnobCounters kc;
        PromKnob pk;
        DaemonCounters dc;
        PromInput in;
} Fake;

static void fake_init(Fake *f, const char *set) {
        char *root = fixture_root(set, "root");

        *f = (Fake){ 0 };
        assert_int_equal(snapshot_take(root, &f->snap), 0);
        free(root);
        metrics_from_snapshot(f->snap, &f->mv);
        f->policy.name = (char *) "pol";
        f->rule.name = (char *) "rule";
        f->status = (RuleStatus){ .policy = &f->policy, .rule = &f->rule, .verdict = RULE_HOST_MISMATCH };
        f->decision = (Decision){ .rules = &f->status, .n_rules = 1 };
        f->report = (ReportInput){ .snap = f->snap, .mv = &f->mv, .decision = &f->decision, .dry_run = true };
        f->knob = (KnobState){ .desc = knob_desc(KNOB_PCP_HIGH_FRACTION), .managed = true, .original = 0, .written = 1528 };
        f->kc = (KnobCounters){ .writes = 3, .restores = 2, .refused = 1, .last_errno = EINVAL,
                                .last_change_realtime_usec = 1700000000654321 };
        f->pk = (PromKnob){ .name = f->knob.desc->name, .knob = &f->knob, .present = f->snap->has_knob,
                            .value = snapshot_pcp_value(f->snap), .has_target = true, .target = 1528, .counters = &f->kc };
        f->dc = (DaemonCounters){ .samples = 7, .last_sample_usec = 1500, .last_sample_realtime_usec = 1700000000123456,
                                  .reclaim_freed_bytes = UINT64_C(5000000000000), .journal_held = 1 };
        for (int o = 0; o < _RECLAIM_OUTCOME_MAX; o++)
                f->dc.reclaim_outcomes[o] = (uint64_t) o + 1;
        f->in = (PromInput){ .report = &f->report, .knobs = &f->pk, .n_knobs = 1, .counters = &f->dc, .version = "1.2.3" };
}

static char *render(const PromInput *in) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        assert_non_null(f);
        assert_int_equal(prom_render(in, f), 0);
        assert_int_equal(fclose(f), 0);
        return buf;
}

static size_t count_lines_with(const char *text, const char *prefix) {
        size_t n = 0, l = strlen(prefix);
        for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
                n += strncmp(p, prefix, l) == 0;
        return n;
}

static void test_render(void **state) {
        Fake f;
        char *out;

        fake_init(&f, "6.18.44-fc-live-smp2-24G");
        out = render(&f.in);
        /* The version apart from the kernel and its regime (docs/health.md). */
        assert_non_null(strstr(out, "# TYPE pcptune_build_info gauge\npcptune_build_info{version=\"1.2.3\"} 1\n"));
        assert_non_null(strstr(out, "# TYPE pcptune_info gauge\n"
                                    "pcptune_info{kernel=\"6.18.44-fc-v769\",regime=\"autotune\"} 1\n"));
        assert_non_null(strstr(out, "\npcptune_dry_run 1\n"));
        assert_non_null(strstr(out, "\npcptune_knob_original_value{knob=\"vm.percpu_pagelist_high_fraction\"} 0\n"));
        assert_non_null(strstr(out, "\npcptune_knob_target_value{knob=\"vm.percpu_pagelist_high_fraction\"} 1528\n"));
        assert_non_null(
                strstr(out, "\npcptune_knob_state{knob=\"vm.percpu_pagelist_high_fraction\",state=\"managed\"} 1\n"));
        assert_non_null(
                strstr(out, "\npcptune_knob_state{knob=\"vm.percpu_pagelist_high_fraction\",state=\"not_managed\"} 0\n"));
        assert_non_null(strstr(out, "# TYPE pcptune_knob_writes_total counter\n"
                                    "pcptune_knob_writes_total{knob=\"vm.percpu_pagelist_high_fraction\"} 3\n"));
        assert_non_null(strstr(out, "\npcptune_knob_refused_writes_total{knob=\"vm.percpu_pagelist_high_fraction\"} 1\n"));
        assert_non_null(strstr(out, "\npcptune_rule_state{policy=\"pol\",rule=\"rule\",state=\"host_mismatch\"} 1\n"));
        assert_non_null(strstr(out, "\npcptune_rule_state{policy=\"pol\",rule=\"rule\",state=\"active\"} 0\n"));
        /* node_exporter's copies are gone (node_memory_Percpu_bytes, node_pressure_*). */
        assert_null(strstr(out, "pcptune_percpu_bytes"));
        assert_null(strstr(out, "pcptune_psi_"));
        /* The node's state: a load that failed, none succeeded yet, no hash; the journal holds 1, no crash. */
        assert_non_null(strstr(out, "\npcptune_config_last_reload_successful 0\n"));
        assert_null(strstr(out, "pcptune_config_last_reload_success_timestamp_seconds"));
        assert_null(strstr(out, "pcptune_config_info"));
        assert_non_null(strstr(out, "\npcptune_journal_held_values 1\n"));
        assert_non_null(strstr(out, "\npcptune_journal_crash_restore{state=\"none\"} 1\n"));
        assert_non_null(strstr(out, "\npcptune_journal_crash_restore{state=\"pending\"} 0\n"));
        assert_non_null(strstr(out, "\npcptune_knob_last_write_errno{knob=\"vm.percpu_pagelist_high_fraction\"} 22\n"));
        assert_non_null(strstr(out, "\npcptune_knob_last_change_timestamp_seconds{knob=\"vm.percpu_pagelist_high_fraction\"} "
                                    "1700000000\n"));
        /* No bulk_free_p99 goal decides the fraction. */
        assert_null(strstr(out, "pcptune_pcp_bulk_free_goal_seconds"));
        /* No memory controller in the fixture: no split, no memcg IDs. */
        assert_null(strstr(out, "pcptune_percpu_split_bytes"));
        assert_null(strstr(out, "pcptune_memcg_ids"));
        /* Integers stay exact past 2^32; seconds keep microseconds. */
        assert_non_null(strstr(out, "\npcptune_reclaim_freed_bytes_total 5000000000000\n"));
        assert_non_null(strstr(out, "\npcptune_sample_duration_seconds 0.0015\n"));
        assert_non_null(strstr(out, "\npcptune_last_sample_timestamp_seconds 1700000000.12346\n"));
        /* Every reclaim outcome has a label value: as many samples as outcomes, each its own count. */
        assert_int_equal(count_lines_with(out, "pcptune_reclaim_subtrees_total{"), _RECLAIM_OUTCOME_MAX);
        assert_non_null(strstr(out, "pcptune_reclaim_subtrees_total{outcome=\"reclaimed\"} 1\n"));
        /* One series per populated zone, never per CPU. */
        assert_int_equal(count_lines_with(out, "pcptune_pcp_list_bytes{"), f.snap->n_pcp_zones);
        assert_int_equal(count_lines_with(out, "pcptune_pcp_high_max_pages{"), f.snap->n_pcp_zones);
        assert_int_equal(count_lines_with(out, "pcptune_pcp_high_pages{"), f.snap->n_pcp_zones);
        assert_int_equal(count_lines_with(out, "pcptune_pcp_batch_pages{"), f.snap->n_pcp_zones);
        /* The largest over the zone's CPUs, as zoneinfo prints them now. */
        for (size_t z = 0; z < f.snap->zoneinfo.n_zones; z++) {
                const Zone *zone = &f.snap->zoneinfo.zones[z];
                int64_t high = 0, batch = 0;
                char want[160];
                if (!zone->populated)
                        continue;
                for (size_t c = 0; c < zone->n_cpus; c++) {
                        high = MAX(high, zone->cpus[c].high);
                        batch = MAX(batch, zone->cpus[c].batch);
                }
                snprintf(want, sizeof want, "\npcptune_pcp_high_pages{node=\"%d\",zone=\"%s\"} %" PRId64 "\n", zone->node,
                         zone->name, high);
                assert_non_null(strstr(out, want));
                snprintf(want, sizeof want, "\npcptune_pcp_batch_pages{node=\"%d\",zone=\"%s\"} %" PRId64 "\n", zone->node,
                         zone->name, batch);
                assert_non_null(strstr(out, want));
        }
        /* Unavailable: no proc connector, so neither exit metric, not even its HELP. */
        assert_null(strstr(out, "pcptune_process_exits"));
        /* HELP and TYPE once per metric. */
        assert_int_equal(count_lines_with(out, "# TYPE pcptune_knob_state "), 1);
        assert_int_equal(count_lines_with(out, "# HELP pcptune_knob_state "), 1);
        free(out);

        /* The exit rate appears once it is available. */
        metric_set(&f.mv, METRIC_PROC_EXIT_RATE, 12.5);
        f.dc.has_exits = true;
        f.dc.exits = 99;
        out = render(&f.in);
        assert_non_null(strstr(out, "\npcptune_process_exits_per_second 12.5\n"));
        assert_non_null(strstr(out, "\npcptune_process_exits_total 99\n"));
        /* Bulk-free holds: absent while unavailable, a histogram once measured. */
        assert_null(strstr(out, "pcptune_pcp_bulk_free"));
        free(out);
        BulkFreeView bv = { .available = true, .window_usec = 600 * USEC_PER_SEC,
                            .sum = { .samples = 187, .p99_seconds = 70e-6, .max_seconds = 90e-6, .pages_p99 = 189,
                                     .pages_max = 191 },
                            .c = { .traced_usec = 1250000, .lost = 360846, .cost_usec = 114058 } };
        /* Holds of 1 us (the first bound, inclusive), 1.001 us, 70 us, 0.5 s and 2 s (+Inf only). */
        static const uint64_t holds_ns[] = { 1000, 1001, 70000, 500000000, 2000000000 };
        for (size_t i = 0; i < ELEMENTSOF(holds_ns); i++)
                bulk_free_histogram_add(&bv.c.hist, holds_ns[i]);
        f.report.bulk_free = &bv;
        out = render(&f.in);
        assert_non_null(strstr(out, "# TYPE pcptune_pcp_bulk_free_hold_seconds histogram\n"
                                    "pcptune_pcp_bulk_free_hold_seconds_bucket{le=\"1e-06\"} 1\n"
                                    "pcptune_pcp_bulk_free_hold_seconds_bucket{le=\"2.5e-06\"} 2\n"));
        assert_non_null(strstr(out, "\npcptune_pcp_bulk_free_hold_seconds_bucket{le=\"5e-05\"} 2\n"
                                    "pcptune_pcp_bulk_free_hold_seconds_bucket{le=\"0.0001\"} 3\n"));
        assert_non_null(strstr(out, "\npcptune_pcp_bulk_free_hold_seconds_bucket{le=\"0.25\"} 3\n"
                                    "pcptune_pcp_bulk_free_hold_seconds_bucket{le=\"0.5\"} 4\n"
                                    "pcptune_pcp_bulk_free_hold_seconds_bucket{le=\"+Inf\"} 5\n"
                                    "pcptune_pcp_bulk_free_hold_seconds_sum 2.500072001\n"
                                    "pcptune_pcp_bulk_free_hold_seconds_count 5\n"));
        assert_int_equal(count_lines_with(out, "pcptune_pcp_bulk_free_hold_seconds_bucket{"), 19);
        assert_non_null(strstr(out, "\npcptune_pcp_bulk_free_pages{stat=\"p99\"} 189\n"));
        assert_non_null(strstr(out, "\npcptune_pcp_bulk_free_samples 187\n"));
        assert_non_null(strstr(out, "\npcptune_pcp_bulk_free_lost_events_total 360846\n"));
        assert_non_null(strstr(out, "\npcptune_pcp_bulk_free_traced_seconds_total 1.25\n"));
        assert_non_null(strstr(out, "\npcptune_pcp_bulk_free_read_cpu_seconds_total 0.114058\n"));
        free(out);

        /* A load that succeeded, its time and hash; a crash restored at the start; a goal deciding. */
        f.dc.config_reload_ok = true;
        f.dc.config_reload_success_realtime_usec = 1700000100999999;
        snprintf(f.dc.policy_hash, sizeof f.dc.policy_hash, "0123456789abcdef");
        f.dc.crash_restore = CRASH_RESTORE_DONE;
        f.decision.knobs[KNOB_PCP_HIGH_FRACTION] = (KnobDecision){
                .wanted = true, .goal = { .kind = PCP_GOAL_BULK_FREE_P99, .value = 50000 } };
        out = render(&f.in);
        assert_non_null(strstr(out, "\npcptune_config_last_reload_successful 1\n"));
        assert_non_null(strstr(out, "\npcptune_config_last_reload_success_timestamp_seconds 1700000100\n"));
        assert_non_null(strstr(out, "\npcptune_config_info{policy_hash=\"0123456789abcdef\"} 1\n"));
        assert_non_null(strstr(out, "\npcptune_journal_crash_restore{state=\"none\"} 0\n"));
        assert_non_null(strstr(out, "\npcptune_journal_crash_restore{state=\"done\"} 1\n"));
        assert_non_null(strstr(out, "\npcptune_pcp_bulk_free_goal_seconds 5e-05\n"));
        free(out);
        snapshot_free(f.snap);
}

/* Label values are any bytes the operator wrote in a policy name: escaped, never breaking a line. */
static void test_escaping(void **state) {
        Fake f;
        char *out;

        fake_init(&f, "6.18.44-fc-live-smp2-24G");
        f.policy.name = (char *) "a\"b\\c\nd";
        out = render(&f.in);
        assert_non_null(strstr(out, "\npcptune_rule_state{policy=\"a\\\"b\\\\c\\nd\",rule=\"rule\",state=\"active\"} 0\n"));
        free(out);
        snapshot_free(f.snap);
}

/* Every captured kernel renders, and only with known metric names. */
static void test_every_fixture(void **state) {
        const PromMetric *t;
        size_t n = prom_metrics(&t);

        for (size_t i = 0; fixture_sets[i]; i++) {
                Fake f;
                fake_init(&f, fixture_sets[i]);
                char *out = render(&f.in);
                for (const char *p = out; *p; p = strchr(p, '\n') + 1) {
                        size_t len = strcspn(p, "{ \n");
                        bool known = false;
                        if (*p == '#')
                                known = true;
                        for (size_t k = 0; !known && k < n; k++) {
                                size_t tl = strlen(t[k].name);
                                known = tl == len && strncmp(t[k].name, p, len) == 0;
                                /* A histogram's series: <name>_bucket, _sum, _count. */
                                if (!known && t[k].type == PROM_HISTOGRAM && len > tl && strncmp(t[k].name, p, tl) == 0)
                                        known = (len - tl == 7 && strncmp(p + tl, "_bucket", 7) == 0) ||
                                                (len - tl == 4 && strncmp(p + tl, "_sum", 4) == 0) ||
                                                (len - tl == 6 && strncmp(p + tl, "_count", 6) == 0);
                        }
                        if (!known)
                                fail_msg("%s: unknown line %.*s", fixture_sets[i], (int) strcspn(p, "\n"), p);
                }
                assert_non_null(strstr(out, "\npcptune_build_info{"));
                assert_non_null(strstr(out, "\npcptune_pcp_high_max_pages{node=\"0\""));
                assert_non_null(strstr(out, "\npcptune_pcp_high_pages{node=\"0\""));
                assert_non_null(strstr(out, "\npcptune_pcp_batch_pages{node=\"0\""));
                free(out);
                snapshot_free(f.snap);
        }
}

static void test_writer(void **state) {
        char dir[] = "/tmp/pcptune-test-prom.XXXXXX", *path, *victim, *cmd, *missing;
        PromWriter *w = NULL, *w2 = NULL;
        struct stat st;
        Fake f;
        char *buf = NULL;
        size_t len;

        assert_non_null(mkdtemp(dir));
        assert_true(asprintf(&path, "%s/%s", dir, PROM_FILE) > 0);
        assert_true(asprintf(&victim, "%s/victim", dir) > 0);
        assert_true(asprintf(&missing, "%s/missing", dir) > 0);
        fake_init(&f, "6.18.44-fc-live-smp2-24G");

        /* A directory that does not exist is not created. */
        char *lockdir;
        assert_true(asprintf(&lockdir, "%s/run-pcptune", dir) > 0);
        assert_int_equal(prom_writer_open(missing, lockdir, &w), -ENOENT);
        assert_true(stat(missing, &st) < 0 && errno == ENOENT);

        /* pcptune.prom and the temporary name are symlinks to a file: neither is followed. */
        assert_int_equal(write_file_atomic(victim, "keep\n", 5, 0600), 0);
        assert_int_equal(symlink(victim, path), 0);
        char *tmp;
        assert_true(asprintf(&tmp, "%s/%s", dir, PROM_FILE_TMP) > 0);
        assert_int_equal(symlink(victim, tmp), 0);

        assert_int_equal(prom_writer_open(dir, lockdir, &w), 0);
        assert_int_equal(prom_writer_open(dir, lockdir, &w2), 0);

        mode_t old = umask(077);
        assert_int_equal(prom_writer_write(w, &f.in), 0);
        umask(old);
        /* The lock: lockdir/metrics-DEV-INO.lock, 0600, ours; the directory's own mode does not matter. */
        struct stat dst;
        char *lockfile;
        assert_int_equal(stat(dir, &dst), 0);
        assert_true(asprintf(&lockfile, "%s/metrics-%ju-%ju.lock", lockdir, (uintmax_t) dst.st_dev,
                             (uintmax_t) dst.st_ino) > 0);
        assert_string_equal(prom_writer_lock_path(w), lockfile);
        assert_int_equal(lstat(lockfile, &st), 0);
        assert_true(S_ISREG(st.st_mode) && st.st_uid == geteuid());
        assert_int_equal(st.st_mode & 07777, 0600);
        /* A second writer on the same directory waits (a dry-run beside the service): it writes nothing
         * and removes nothing, and tries again at its next write. */
        assert_int_equal(prom_writer_write(w2, &f.in), -EBUSY);
        assert_int_equal(prom_writer_remove(w2), 0);
        assert_int_equal(lstat(path, &st), 0);
        /* A flock() on the metrics directory itself (what any user could take) stops nobody. */
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(dfd >= 0);
        assert_int_equal(flock(dfd, LOCK_EX | LOCK_NB), 0);
        assert_int_equal(prom_writer_write(w, &f.in), 0);
        close(dfd);
        assert_int_equal(lstat(path, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(st.st_mode & 07777, 0644);
        assert_true(lstat(tmp, &st) < 0 && errno == ENOENT);
        assert_int_equal(read_file_at("/", victim, 64, &buf, &len), 0);
        assert_string_equal(buf, "keep\n");
        free(buf);
        assert_int_equal(read_file_at("/", path, 1 << 20, &buf, &len), 0);
        assert_true(strncmp(buf, "# HELP pcptune_build_info ", 26) == 0);
        assert_true(len > 0 && buf[len - 1] == '\n');
        free(buf);

        /* A second write replaces the file (a new inode: readers see the old or the new one whole). */
        ino_t ino = st.st_ino;
        f.dc.samples = 8;
        assert_int_equal(prom_writer_write(w, &f.in), 0);
        assert_int_equal(stat(path, &st), 0);
        assert_true(st.st_ino != ino);
        assert_int_equal(read_file_at("/", path, 1 << 20, &buf, &len), 0);
        assert_non_null(strstr(buf, "\npcptune_samples_total 8\n"));
        free(buf);

        /* Stop: the file and the lock file go; the directory and the victim stay. */
        assert_int_equal(prom_writer_remove(w), 0);
        assert_true(lstat(path, &st) < 0 && errno == ENOENT);
        assert_true(lstat(lockfile, &st) < 0 && errno == ENOENT);
        assert_int_equal(prom_writer_remove(w), 0);
        assert_int_equal(stat(victim, &st), 0);
        prom_writer_free(w);
        /* The waiting writer gets the lock at its next write. */
        assert_int_equal(prom_writer_write(w2, &f.in), 0);
        assert_int_equal(lstat(path, &st), 0);
        prom_writer_free(w2);
        /* The lock goes with the writer (without remove: a crash leaves the lock file, not the lock). */
        assert_int_equal(prom_writer_open(dir, lockdir, &w2), 0);
        assert_int_equal(prom_writer_write(w2, &f.in), 0);
        assert_int_equal(prom_writer_remove(w2), 0);
        prom_writer_free(w2);
        /* A lock file that is not ours (another user's, or a symlink) is refused. */
        if (geteuid() == 0) {
                assert_int_equal(write_file_atomic(lockfile, "", 0, 0600), 0);
                assert_int_equal(chown(lockfile, 65534, 65534), 0);
                assert_int_equal(prom_writer_open(dir, lockdir, &w2), 0);
                assert_int_equal(prom_writer_write(w2, &f.in), -EPERM);
                prom_writer_free(w2);
                assert_int_equal(unlink(lockfile), 0);
        }
        assert_int_equal(symlink(victim, lockfile), 0);
        assert_int_equal(prom_writer_open(dir, lockdir, &w2), 0);
        assert_true(prom_writer_write(w2, &f.in) < 0);
        prom_writer_free(w2);
        assert_int_equal(unlink(lockfile), 0);
        prom_writer_free(NULL);
        free(lockfile);

        /* --metrics-file: a plain name ending in .prom, written beside the default one under a lock of its own. */
        static const char *const bad_names[] = { "", ".prom", "../x.prom", "a/b.prom", ".hidden.prom", "x.txt",
                                                 "sp ace.prom", "x.prom/", "pcptune.prom.tmp" };
        for (size_t i = 0; i < ELEMENTSOF(bad_names); i++) {
                assert_false(prom_file_name_valid(bad_names[i]));
                assert_int_equal(prom_writer_open_name(dir, bad_names[i], lockdir, &w), -EINVAL);
        }
        assert_false(prom_file_name_valid(NULL));
        assert_true(prom_file_name_valid("pcptune-canary.prom"));
        assert_int_equal(prom_writer_open(dir, lockdir, &w), 0);
        assert_int_equal(prom_writer_open_name(dir, "pcptune-canary.prom", lockdir, &w2), 0);
        assert_string_equal(prom_writer_name(w2), "pcptune-canary.prom");
        assert_int_equal(prom_writer_write(w, &f.in), 0); /* the service's file and lock ... */
        assert_int_equal(prom_writer_write(w2, &f.in), 0); /* ... do not stop the canary's */
        assert_non_null(strstr(prom_writer_lock_path(w2), "-pcptune-canary.prom.lock"));
        assert_int_equal(prom_writer_remove(w), 0);
        char *canary;
        assert_true(asprintf(&canary, "%s/pcptune-canary.prom", dir) > 0);
        assert_int_equal(lstat(canary, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0644);
        assert_true(lstat(path, &st) < 0 && errno == ENOENT);
        assert_int_equal(prom_writer_remove(w2), 0);
        assert_true(lstat(canary, &st) < 0 && errno == ENOENT);
        prom_writer_free(w2);
        prom_writer_free(w);
        free(canary);
        free(lockdir);

        snapshot_free(f.snap);
        assert_true(asprintf(&cmd, "rm -rf '%s'", dir) > 0);
        assert_int_equal(system(cmd), 0);
        free(cmd);
        free(tmp);
        free(path);
        free(victim);
        free(missing);
}


/* The Percpu split and memcg IDs: 11 live, 51 dying memcgs on 2 possible CPUs of 6.18 (4236 B modelled each). */
static void test_render_percpu_split(void **state) {
        Fake f;
        char *out;

        (void) state;
        fake_init(&f, "6.18.44-fc-live-smp2-24G");
        f.snap->has_memcg = true;
        f.snap->memcg.mode = CGROUP_MEMORY_V1;
        f.snap->memcg.live = 11;
        f.snap->memcg.dying = 51;
        out = render(&f.in);
        /* 11 x 4236 = 46596; 51 x 4236 x 0.98 = 211715.3; 729088 - both = 470777. */
        assert_non_null(strstr(out, "\npcptune_percpu_split_bytes{part=\"live_memcgs\",basis=\"modelled\"} 46596\n"));
        assert_non_null(strstr(out, "\npcptune_percpu_split_bytes{part=\"dying_memcgs\",basis=\"modelled\"} 211715\n"));
        assert_non_null(strstr(out, "\npcptune_percpu_split_bytes{part=\"other\",basis=\"estimated\"} 470777\n"));
        assert_null(strstr(out, "part=\"fragmentation\""));
        assert_non_null(strstr(out, "\npcptune_memcg_percpu_cost_bytes{basis=\"modelled\"} 4236\n"));
        /* The fixture's meminfo has SwapTotal 0: dying memcgs hold no ID. */
        assert_non_null(strstr(out, "\npcptune_memcg_ids{bound=\"lower\"} 11\n"));
        assert_non_null(strstr(out, "\npcptune_memcg_ids{bound=\"upper\"} 11\n"));
        assert_non_null(strstr(out, "\npcptune_memcg_ids_limit 65535\n"));
        free(out);
        snapshot_free(f.snap);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_table),         cmocka_unit_test(test_render), cmocka_unit_test(test_escaping),
                cmocka_unit_test(test_render_percpu_split),
                cmocka_unit_test(test_every_fixture), cmocka_unit_test(test_writer),
        };
        log_setup("test-prom", LOG_TARGET_NULL, LOG_DEBUG);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
