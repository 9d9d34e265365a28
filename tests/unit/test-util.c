/* SPDX-License-Identifier: GPL-2.0-or-later */
/* util.c, journal.c and act-sysctl.c's knob logic on temporary files. */
#include <fcntl.h>
#include <sys/stat.h>

#include "test-helpers.h"

#include "act-sysctl.h"
#include "journal.h"
#include "log.h"
#include "util.h"

static void test_path_join_root(void **state) {
        char *p;
        assert_int_equal(path_join_root("/", "/proc/zoneinfo", &p), 0);
        assert_string_equal(p, "/proc/zoneinfo");
        free(p);
        assert_int_equal(path_join_root(NULL, "/proc/x", &p), 0);
        assert_string_equal(p, "/proc/x");
        free(p);
        assert_int_equal(path_join_root("/tmp/r/", "/proc/x", &p), 0);
        assert_string_equal(p, "/tmp/r/proc/x");
        free(p);
        assert_int_equal(path_join_root("/tmp/r", "proc/x", &p), 0);
        assert_string_equal(p, "/tmp/r/proc/x");
        free(p);
}

static void test_parse_numbers(void **state) {
        int64_t i;
        uint64_t u;
        assert_int_equal(parse_int64("-12", &i), 0);
        assert_int_equal(i, -12);
        assert_int_equal(parse_int64("12\n", &i), 0);
        assert_int_equal(i, 12);
        assert_int_equal(parse_int64("12x", &i), -EINVAL);
        assert_int_equal(parse_int64("", &i), -EINVAL);
        assert_int_equal(parse_int64(" 1", &i), -EINVAL);
        assert_int_equal(parse_int64("99999999999999999999", &i), -ERANGE);
        assert_int_equal(parse_uint64("18446744073709551615", &u), 0);
        assert_true(u == UINT64_MAX);
        assert_int_equal(parse_uint64("-1", &u), -EINVAL);

        const char *s = "  42 rest", *e = s + strlen(s);
        assert_int_equal(scan_u64(&s, e, &u), 0);
        assert_int_equal(u, 42);
        assert_string_equal(s, " rest");
        s = "-7";
        assert_int_equal(scan_i64(&s, s + 2, &i), 0);
        assert_int_equal(i, -7);
        s = "x";
        assert_int_equal(scan_u64(&s, s + 1, &u), -EINVAL);
}

static void test_parse_size(void **state) {
        uint64_t b;
        assert_int_equal(parse_size("4096", &b), 0);
        assert_int_equal(b, 4096);
        assert_int_equal(parse_size("64KiB", &b), 0);
        assert_int_equal(b, 65536);
        assert_int_equal(parse_size("256MiB", &b), 0);
        assert_int_equal(b, 256ULL << 20);
        assert_int_equal(parse_size("1.5GiB", &b), 0);
        assert_int_equal(b, 3ULL << 29);
        assert_int_equal(parse_size("2TiB", &b), 0);
        assert_int_equal(b, 2ULL << 40);
        assert_int_equal(parse_size("2 MiB", &b), 0);
        assert_int_equal(b, 2ULL << 20);
        assert_int_equal(parse_size("12 parsecs", &b), -EINVAL);
        assert_int_equal(parse_size("-1MiB", &b), -EINVAL);
        assert_int_equal(parse_size("0.5B", &b), -EINVAL);
        assert_int_equal(parse_size("", &b), -EINVAL);
        assert_int_equal(parse_size("99999999TiB", &b), -ERANGE);
}

static void test_parse_duration(void **state) {
        usec_t u;
        assert_int_equal(parse_duration("10s", &u), 0);
        assert_int_equal(u, 10 * USEC_PER_SEC);
        assert_int_equal(parse_duration("500ms", &u), 0);
        assert_int_equal(u, 500 * USEC_PER_MSEC);
        assert_int_equal(parse_duration("2m", &u), 0);
        assert_int_equal(u, 120 * USEC_PER_SEC);
        assert_int_equal(parse_duration("1h", &u), 0);
        assert_int_equal(u, 3600 * USEC_PER_SEC);
        assert_int_equal(parse_duration("1m30s", &u), 0);
        assert_int_equal(u, 90 * USEC_PER_SEC);
        assert_int_equal(parse_duration("3", &u), 0);
        assert_int_equal(u, 3 * USEC_PER_SEC);
        assert_int_equal(parse_duration("3 fortnights", &u), -EINVAL);
        assert_int_equal(parse_duration("s", &u), -EINVAL);
        assert_int_equal(parse_duration("", &u), -EINVAL);
}

static void test_cpulist(void **state) {
        unsigned n;
        int max;
        assert_int_equal(parse_cpulist("0-7\n", &n, &max), 0);
        assert_int_equal(n, 8);
        assert_int_equal(max, 7);
        assert_int_equal(parse_cpulist("0-3,8,10-11", &n, &max), 0);
        assert_int_equal(n, 7);
        assert_int_equal(max, 11);
        assert_int_equal(parse_cpulist("\n", &n, &max), 0);
        assert_int_equal(n, 0);
        assert_int_equal(max, -1);
        assert_int_equal(parse_cpulist("3-1", &n, &max), -EINVAL);
        assert_int_equal(parse_cpulist("a", &n, &max), -EINVAL);
        assert_int_equal(parse_cpulist("1,,2", &n, &max), -EINVAL);
}

static void test_kernel_version(void **state) {
        KernelVersion v, w = { 6, 7, 0 };
        assert_int_equal(kernel_version_parse("6.12.117+deb12-amd64", &v), 0);
        assert_int_equal(v.major, 6);
        assert_int_equal(v.minor, 12);
        assert_int_equal(v.patch, 117);
        assert_true(kernel_version_cmp(&v, &w) > 0);
        assert_int_equal(kernel_version_parse("6.1.0-57-amd64", &v), 0);
        assert_int_equal(v.patch, 0);
        assert_true(kernel_version_cmp(&v, &w) < 0);
        assert_int_equal(kernel_version_parse("5.14", &v), 0);
        assert_int_equal(v.minor, 14);
        assert_int_equal(kernel_version_parse("6", &v), -EINVAL);
        assert_int_equal(kernel_version_parse("banana", &v), -EINVAL);
        assert_true(kernel_version_to_double(&(KernelVersion){ 6, 12, 117 }) > kernel_version_to_double(&(KernelVersion){ 6, 7, 0 }));
}

static void test_format_bytes(void **state) {
        char b[32];
        assert_string_equal(format_bytes(b, sizeof b, 100), "100 B");
        assert_string_equal(format_bytes(b, sizeof b, 1536), "1.5 KiB");
        assert_string_equal(format_bytes(b, sizeof b, 6ULL << 30), "6.0 GiB");
}

static char *mktmp(void) {
        char *d = strdup("/tmp/pcptune-test-util.XXXXXX");
        assert_non_null(mkdtemp(d));
        return d;
}

static void rm_rf(const char *d) {
        char *cmd;
        assert_true(asprintf(&cmd, "rm -rf '%s'", d) > 0);
        assert_int_equal(system(cmd), 0);
        free(cmd);
}

static void test_files(void **state) {
        char *d = mktmp(), *path, *buf;
        size_t len;
        int64_t v;

        assert_true(asprintf(&path, "%s/a/b/c", d) > 0);
        assert_int_equal(mkdir_p(path, 0755), 0);
        free(path);
        assert_true(asprintf(&path, "%s/a/f", d) > 0);
        assert_int_equal(write_file_atomic(path, "123\n", 4, 0644), 0);
        assert_int_equal(read_file_at(d, "/a/f", 100, &buf, &len), 0);
        assert_int_equal(len, 4);
        assert_string_equal(buf, "123\n");
        free(buf);
        assert_int_equal(read_int64_at(d, "/a/f", &v), 0);
        assert_int_equal(v, 123);
        /* A sysctl-style write replaces the content of a regular file. */
        assert_int_equal(write_file_at(d, "/a/f", "7\n"), 0);
        assert_int_equal(read_int64_at(d, "/a/f", &v), 0);
        assert_int_equal(v, 7);
        assert_int_equal(read_file_at(d, "/a/f", 1, &buf, &len), -EFBIG);
        assert_int_equal(read_file_at(d, "/missing", 100, &buf, &len), -ENOENT);
        assert_int_equal(write_file_at(d, "/missing", "1"), -ENOENT);
        free(path);
        rm_rf(d);
        free(d);
}

static void test_journal_roundtrip(void **state) {
        char *d = mktmp();
        Journal *j = journal_new(d, "/some/root"), *k = NULL;

        assert_non_null(j);
        assert_int_equal(journal_load(d, &k), -ENOENT);
        assert_int_equal(journal_set(j, "vm.a", "/proc/sys/vm/a", 0, 4509), 0);
        assert_int_equal(journal_set(j, "vm.b", "/proc/sys/vm/b", 5, 6), 0);
        assert_int_equal(journal_set(j, "vm.a", "/proc/sys/vm/a", 99, 100), 0); /* original kept */
        assert_int_equal(journal_save(j), 0);
        assert_int_equal(journal_load(d, &k), 0);
        assert_string_equal(k->root, "/some/root");
        assert_int_equal(k->n_entries, 2);
        const JournalEntry *e = journal_find(k, "vm.a");
        assert_non_null(e);
        assert_int_equal(e->original, 0);
        assert_int_equal(e->written, 100);
        assert_string_equal(e->path, "/proc/sys/vm/a");
        assert_true(journal_remove(k, "vm.a"));
        assert_false(journal_remove(k, "vm.a"));
        assert_true(journal_remove(k, "vm.b"));
        assert_int_equal(journal_save(k), 0); /* empty: the file goes away */
        Journal *z = NULL;
        assert_int_equal(journal_load(d, &z), -ENOENT);
        journal_free(k);

        /* A corrupt journal is reported, not guessed at. */
        char *f;
        assert_true(asprintf(&f, "%s/" JOURNAL_FILE, d) > 0);
        assert_int_equal(write_file_atomic(f, "{\"root\": 3}", 11, 0600), 0);
        assert_int_equal(journal_load(d, &z), -EINVAL);
        free(f);
        journal_free(j);
        rm_rf(d);
        free(d);
}

/* A fake root with one sysctl file. */
static char *fake_root(int64_t value) {
        char *d = mktmp(), *p, buf[32];
        assert_true(asprintf(&p, "%s/proc/sys/vm", d) > 0);
        assert_int_equal(mkdir_p(p, 0755), 0);
        free(p);
        assert_true(asprintf(&p, "%s/proc/sys/vm/knob", d) > 0);
        snprintf(buf, sizeof buf, "%lld\n", (long long) value);
        assert_int_equal(write_file_atomic(p, buf, strlen(buf), 0644), 0);
        free(p);
        return d;
}

static int64_t knob_value(const char *root) {
        int64_t v;
        assert_int_equal(read_int64_at(root, "/proc/sys/vm/knob", &v), 0);
        return v;
}

static void set_knob(const char *root, int64_t v) {
        char buf[32];
        snprintf(buf, sizeof buf, "%lld", (long long) v);
        assert_int_equal(write_file_at(root, "/proc/sys/vm/knob", buf), 0);
}

static void test_knob_apply_release(void **state) {
        char *root = fake_root(0), *sd = mktmp();
        Journal *j = journal_new(sd, root), *loaded = NULL;
        Knob k = { .name = "vm.knob", .path = "/proc/sys/vm/knob", .min_value = 0, .max_value = 100000 };
        ChangeReason why = { "p", "r", "test" };
        int64_t old;

        assert_int_equal(knob_apply(&k, root, j, false, 4509, &why, &old), KNOB_WRITTEN);
        assert_int_equal(old, 0);
        assert_int_equal(knob_value(root), 4509);
        assert_true(k.managed);
        assert_int_equal(k.original, 0);
        /* Journaled before writing: original 0, written 4509. */
        assert_int_equal(journal_load(sd, &loaded), 0);
        assert_int_equal(loaded->entries[0].original, 0);
        assert_int_equal(loaded->entries[0].written, 4509);
        journal_free(loaded);

        assert_int_equal(knob_apply(&k, root, j, false, 4509, &why, NULL), KNOB_NOOP);
        assert_int_equal(knob_apply(&k, root, j, false, 2000, &why, NULL), KNOB_WRITTEN);
        assert_int_equal(k.original, 0);
        assert_int_equal(knob_apply(&k, root, j, false, 200001, &why, NULL), -ERANGE);
        assert_int_equal(knob_value(root), 2000);

        assert_int_equal(knob_release(&k, root, j, false, "stop"), KNOB_RESTORED);
        assert_int_equal(knob_value(root), 0);
        assert_false(k.managed);
        assert_int_equal(journal_load(sd, &loaded), -ENOENT);

        /* The administrator wins: changed behind our back, we stop and do not restore. */
        assert_int_equal(knob_apply(&k, root, j, false, 300, &why, NULL), KNOB_WRITTEN);
        set_knob(root, 1000);
        assert_int_equal(knob_apply(&k, root, j, false, 300, &why, NULL), KNOB_ADMIN);
        assert_true(k.admin_override);
        assert_int_equal(knob_value(root), 1000);
        assert_int_equal(knob_apply(&k, root, j, false, 300, &why, NULL), KNOB_ADMIN);
        assert_int_equal(knob_release(&k, root, j, false, "stop"), KNOB_NOOP);
        assert_int_equal(knob_value(root), 1000);
        assert_int_equal(journal_load(sd, &loaded), -ENOENT);

        /* Dry-run never writes and never journals. */
        Knob d = { .name = "vm.knob", .path = "/proc/sys/vm/knob", .min_value = 0, .max_value = 100000 };
        assert_int_equal(knob_apply(&d, root, NULL, true, 5, &why, NULL), KNOB_WOULD_WRITE);
        assert_int_equal(knob_value(root), 1000);
        assert_false(d.managed);

        /* A failing write (missing file) leaves nothing in the journal. */
        Knob m = { .name = "vm.missing", .path = "/proc/sys/vm/missing", .min_value = 0, .max_value = 10 };
        assert_int_equal(knob_apply(&m, root, j, false, 5, &why, NULL), -ENOENT);
        assert_int_equal(journal_load(sd, &loaded), -ENOENT);

        journal_free(j);
        rm_rf(root);
        rm_rf(sd);
        free(root);
        free(sd);
}

static void test_journal_restore(void **state) {
        char *root = fake_root(0), *sd = mktmp();
        Journal *j = journal_new(sd, root);

        /* Still ours: restored.  Changed since: left alone. */
        set_knob(root, 4509);
        assert_int_equal(journal_set(j, "vm.knob", "/proc/sys/vm/knob", 0, 4509), 0);
        assert_int_equal(journal_save(j), 0);
        assert_int_equal(journal_restore(j, root, "test"), 1);
        assert_int_equal(knob_value(root), 0);
        assert_int_equal(j->n_entries, 0);

        set_knob(root, 777);
        assert_int_equal(journal_set(j, "vm.knob", "/proc/sys/vm/knob", 0, 4509), 0);
        assert_int_equal(journal_restore(j, root, "test"), 0);
        assert_int_equal(knob_value(root), 777);
        Journal *loaded = NULL;
        assert_int_equal(journal_load(sd, &loaded), -ENOENT);

        journal_free(j);
        rm_rf(root);
        rm_rf(sd);
        free(root);
        free(sd);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_path_join_root),   cmocka_unit_test(test_parse_numbers),
                cmocka_unit_test(test_parse_size),       cmocka_unit_test(test_parse_duration),
                cmocka_unit_test(test_cpulist),          cmocka_unit_test(test_kernel_version),
                cmocka_unit_test(test_format_bytes),     cmocka_unit_test(test_files),
                cmocka_unit_test(test_journal_roundtrip), cmocka_unit_test(test_knob_apply_release),
                cmocka_unit_test(test_journal_restore),
        };
        log_setup("test-util", LOG_TARGET_NULL, LOG_DEBUG);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
