/* SPDX-License-Identifier: GPL-2.0-or-later */
/* util.c on temporary files (the journal and the knobs: test-journal.c). */
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "test-helpers.h"

#include "knob-lock.h"
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

static void test_parse_time_point(void **state) {
        const usec_t now = 1796000000 * USEC_PER_SEC; /* 2026-11-30T00:53:20Z */
        usec_t u;
        (void) state;
        assert_int_equal(parse_time_point("now", now, &u), 0);
        assert_int_equal(u, now);
        assert_int_equal(parse_time_point("2026-11-30", now, &u), 0);
        assert_int_equal(u, 1795996800 * USEC_PER_SEC);
        assert_int_equal(parse_time_point("2026-11-30 00:53", now, &u), 0);
        assert_int_equal(u, 1795999980 * USEC_PER_SEC);
        assert_int_equal(parse_time_point("2026-11-30 00:53:20", now, &u), 0);
        assert_int_equal(u, now);
        assert_int_equal(parse_time_point("2026-11-30T00:53:20Z", now, &u), 0);
        assert_int_equal(u, now);
        assert_int_equal(parse_time_point("2026-11-30T00:53:20", now, &u), 0);
        assert_int_equal(u, now);
        assert_int_equal(parse_time_point("7d", now, &u), 0);
        assert_int_equal(u, now - 7 * 86400 * USEC_PER_SEC);
        assert_int_equal(parse_time_point("1h30m", now, &u), 0);
        assert_int_equal(u, now - 5400 * USEC_PER_SEC);
        u = 42;
        /* Dates that do not exist, before 1970, blanks, other words, longer ago than the epoch. */
        assert_int_equal(parse_time_point("2026-02-30", now, &u), -ERANGE);
        assert_int_equal(parse_time_point("2026-11-30 24:00", now, &u), -EINVAL);
        assert_int_equal(parse_time_point("2026-11-30 23:59:60", now, &u), -ERANGE);
        assert_int_equal(parse_time_point("2026", now, &u), -EINVAL);
        assert_int_equal(parse_time_point("7", now, &u), -EINVAL);
        assert_int_equal(parse_time_point("1969-12-31", now, &u), -EINVAL);
        assert_int_equal(parse_time_point(" 2026-11-30", now, &u), -EINVAL);
        assert_int_equal(parse_time_point("2026-11-30 ", now, &u), -EINVAL);
        assert_int_equal(parse_time_point("yesterday", now, &u), -EINVAL);
        assert_int_equal(parse_time_point("", now, &u), -EINVAL);
        assert_int_equal(parse_time_point("100000d", now, &u), -EINVAL);
        assert_int_equal(parse_time_point(NULL, now, &u), -EINVAL);
        assert_int_equal(u, 42);
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

static void test_files(void **state) {
        char *d = test_mkdtemp("util"), *path, *buf;
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
        test_rm_rf(d);
        free(d);
}

/* Issue 9 item 7: a FIFO where a kernel file should be is refused at once, never waited on. */
static void test_fifo_and_devices(void **state) {
        char *d = test_mkdtemp("util"), *p;
        char *buf = NULL;
        int64_t v;

        assert_true(asprintf(&p, "%s/proc/sys/vm", d) > 0);
        assert_int_equal(mkdir_p(p, 0755), 0);
        free(p);
        assert_true(asprintf(&p, "%s/proc/sys/vm/percpu_pagelist_high_fraction", d) > 0);
        assert_int_equal(mkfifo(p, 0644), 0);
        /* Without O_NONBLOCK each of these would block for good (no writer, no reader). */
        assert_int_equal(read_int64_at(d, "/proc/sys/vm/percpu_pagelist_high_fraction", &v), -EBADFD);
        assert_int_equal(read_file_at(d, "/proc/sys/vm/percpu_pagelist_high_fraction", 100, &buf, NULL), -EBADFD);
        int r = write_file_at(d, "/proc/sys/vm/percpu_pagelist_high_fraction", "8\n");
        assert_true(r == -ENXIO || r == -EBADFD);
        /* A directory or a device is not a kernel file either. */
        assert_int_equal(read_file_at(d, "/proc/sys", 100, &buf, NULL), -EBADFD);
        assert_int_equal(read_file_at("/", "/dev/null", 100, &buf, NULL), -EBADFD);
        assert_int_equal(write_file_at("/", "/dev/null", "1"), -EBADFD);
        assert_null(buf);
        free(p);
        test_rm_rf(d);
        free(d);
}

/* Issue 9 item 11: writes below a fake root never follow a symlink out of it, never empty a file. */
static void test_write_stays_below_root(void **state) {
        char *d = test_mkdtemp("util"), *outside = test_mkdtemp("util"), *p, *target, *buf = NULL;
        int64_t v;

        assert_true(asprintf(&p, "%s/proc/sys/vm", d) > 0);
        assert_int_equal(mkdir_p(p, 0755), 0);
        free(p);
        assert_true(asprintf(&target, "%s/victim", outside) > 0);
        assert_int_equal(write_file_atomic(target, "original\n", 9, 0644), 0);
        /* A symlink as the last component, and a symlinked directory on the way. */
        assert_true(asprintf(&p, "%s/proc/sys/vm/percpu_pagelist_high_fraction", d) > 0);
        assert_int_equal(symlink(target, p), 0);
        free(p);
        assert_int_equal(write_file_at(d, "/proc/sys/vm/percpu_pagelist_high_fraction", "77\n") < 0, 1);
        assert_true(asprintf(&p, "%s/sys", d) > 0);
        assert_int_equal(symlink(outside, p), 0);
        free(p);
        assert_true(write_file_at(d, "/sys/victim", "77\n") < 0);
        assert_true(asprintf(&p, "%s/proc/sys/vm/up", d) > 0);
        assert_int_equal(symlink("../../../../../../../..", p), 0);
        free(p);
        char rel[PATH_MAX];
        snprintf(rel, sizeof rel, "/proc/sys/vm/up%s", target);
        assert_true(write_file_at(d, rel, "77\n") < 0);
        assert_int_equal(read_file_at("/", target, 100, &buf, NULL), 0);
        assert_string_equal(buf, "original\n");
        free(buf);

        /* The value replaces the content, and only after it was written: a failed write keeps it. */
        assert_true(asprintf(&p, "%s/proc/sys/vm/knob", d) > 0);
        assert_int_equal(write_file_atomic(p, "123456\n", 7, 0644), 0);
        assert_int_equal(write_file_at(d, "/proc/sys/vm/knob", "8\n"), 0);
        assert_int_equal(read_int64_at(d, "/proc/sys/vm/knob", &v), 0);
        assert_int_equal(v, 8);
        assert_int_equal(read_file_at(d, "/proc/sys/vm/knob", 100, &buf, NULL), 0);
        assert_string_equal(buf, "8\n");
        free(buf);
        free(p);
        free(target);
        test_rm_rf(d);
        test_rm_rf(outside);
        free(d);
        free(outside);
}

/* Issue 9 item 12: names from files are printed escaped; one root has one name. */
static void test_escape_and_roots(void **state) {
        char b[64], *p, *d = test_mkdtemp("util"), *with_slash;

        assert_string_equal(str_escape("vm.a\x1b[31mred\n", b, sizeof b), "vm.a\\x1b[31mred\\x0a");
        assert_string_equal(str_escape("a\\b", b, sizeof b), "a\\\\b");
        assert_string_equal(str_escape("\x01\x01\x01\x01", b, 9), "\\x01\\x01");
        assert_string_equal(str_escape(NULL, b, sizeof b), "");

        assert_int_equal(path_normalize_root(d, &p), 0);
        assert_true(asprintf(&with_slash, "%s//", d) > 0);
        char *q;
        assert_int_equal(path_normalize_root(with_slash, &q), 0);
        assert_string_equal(p, q);
        free(q);
        free(p);
        free(with_slash);
        assert_int_equal(path_normalize_root("/", &p), 0);
        assert_string_equal(p, "/");
        free(p);
        assert_int_equal(path_normalize_root(NULL, &p), 0);
        assert_string_equal(p, "/");
        free(p);
        assert_int_equal(path_normalize_root("/nonexistent//pcptune/root//", &p), 0);
        assert_string_equal(p, "/nonexistent/pcptune/root");
        free(p);
        test_rm_rf(d);
        free(d);
}

/* knob-lock.c: the holder from /proc/locks text, and the locks on a fake root's files (never the host's). */
static void test_knob_locks(void **state) {
        const char *locks = "1: FLOCK  ADVISORY  WRITE 650 00:15:19310 0 EOF\n"
                            "2: -> FLOCK  ADVISORY  WRITE 700 00:15:19311 0 EOF\n"
                            "3: POSIX  ADVISORY  WRITE 621 fe:00:10963769 0 EOF\n"
                            "4: OFDLCK ADVISORY  READ  -1 fe:01:42 0 EOF\n"
                            "5: FLOCK  ADVISORY  WRITE 777 00:15:19311 0 EOF\n";
        size_t n = strlen(locks);

        assert_int_equal(locks_find_holder(locks, n, 0, 0x15, 19310, 0), 650);
        assert_int_equal(locks_find_holder(locks, n, 0xfe, 0, 10963769, 0), 621);
        /* A waiter ("->") does not hold it; the holder is line 5. */
        assert_int_equal(locks_find_holder(locks, n, 0, 0x15, 19311, 0), 777);
        /* Our own lock is skipped; another device, a prefix of the inode, an OFD lock (pid -1): none. */
        assert_int_equal(locks_find_holder(locks, n, 0, 0x15, 19310, 650), 0);
        assert_int_equal(locks_find_holder(locks, n, 0, 0x16, 19310, 0), 0);
        assert_int_equal(locks_find_holder(locks, n, 0, 0x15, 1931, 0), 0);
        assert_int_equal(locks_find_holder(locks, n, 0xfe, 1, 42, 0), 0);
        /* Within len: the first line cut before its inode's last digit matches nothing. */
        assert_int_equal(locks_find_holder(locks, strlen("1: FLOCK  ADVISORY  WRITE 650 00:15:1931"), 0, 0x15, 19310, 0), 0);
        assert_int_equal(locks_find_holder("", 0, 0, 0, 0, 0), 0);
        assert_int_equal(locks_find_holder(NULL, 0, 0, 0, 0, 0), -EINVAL);

        char *d = test_mkdtemp("locks"), *d2 = test_mkdtemp("locks"), *p;
        KnobLocks a = KNOB_LOCKS_INIT, b = KNOB_LOCKS_INIT;
        assert_true(asprintf(&p, "%s/proc/sys/vm", d) > 0);
        assert_int_equal(mkdir_p(p, 0755), 0);
        free(p);
        assert_true(asprintf(&p, "%s/proc/sys/vm/percpu_pagelist_high_fraction", d) > 0);
        assert_int_equal(write_file_atomic(p, "0\n", 2, 0644), 0);
        free(p);
        /* The fraction's file is locked; pcp_batch_scale_max is missing (no contrib patch): skipped. */
        assert_int_equal(knob_locks_take(&a, d, "test"), 0);
        assert_true(a.fd[KNOB_PCP_HIGH_FRACTION] >= 0);
        assert_true(a.fd[KNOB_PCP_BATCH_SCALE_MAX] < 0);
        /* A second taker (another open file: flock() is per open file) is refused and holds nothing. */
        assert_int_equal(knob_locks_take(&b, d, "test"), -EBUSY);
        for (size_t i = 0; i < _KNOB_ID_MAX; i++)
                assert_true(b.fd[i] < 0);
        knob_locks_release(&a);
        assert_true(a.fd[KNOB_PCP_HIGH_FRACTION] < 0);
        assert_int_equal(knob_locks_take(&b, d, "test"), 0);
        knob_locks_release(&b);
        /* A root whose proc is a symlink to the host's /proc: resolved in the root (a loop), never the host's knob. */
        assert_true(asprintf(&p, "%s/proc", d2) > 0);
        assert_int_equal(symlink("/proc", p), 0);
        free(p);
        assert_int_equal(knob_locks_take(&a, d2, "test"), 0);
        for (size_t i = 0; i < _KNOB_ID_MAX; i++)
                assert_true(a.fd[i] < 0);
        test_rm_rf(d);
        test_rm_rf(d2);
        free(d);
        free(d2);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_path_join_root),   cmocka_unit_test(test_parse_numbers),
                cmocka_unit_test(test_parse_size),       cmocka_unit_test(test_parse_duration),
                cmocka_unit_test(test_parse_time_point),
                cmocka_unit_test(test_cpulist),          cmocka_unit_test(test_kernel_version),
                cmocka_unit_test(test_format_bytes),     cmocka_unit_test(test_files),
                cmocka_unit_test(test_fifo_and_devices), cmocka_unit_test(test_write_stays_below_root),
                cmocka_unit_test(test_escape_and_roots), cmocka_unit_test(test_knob_locks),
        };
        log_setup("test-util", LOG_TARGET_NULL, LOG_DEBUG);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
