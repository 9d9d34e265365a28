/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Shared by the cmocka unit tests: where the captured fixtures live and how to read them. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "util.h"

/* $FIXTURES (set by the test harness) or the source tree's tests/fixtures. */
static inline const char *fixtures_dir(void) {
        const char *f = getenv("FIXTURES");
        return f && *f ? f : "tests/fixtures";
}

/* Read fixture file "SET/NAME" into a NUL-terminated buffer; fails the test if missing. */
__attribute__((noinline, unused)) static char *fixture_read(const char *set, const char *name, size_t *ret_len) {
        char *path = NULL, *buf = NULL;
        size_t len = 0;

        assert_true(asprintf(&path, "%s/%s/%s", fixtures_dir(), set, name) >= 0);
        int r = read_file_at("/", path, READ_FILE_MAX, &buf, &len);
        if (r < 0)
                fail_msg("cannot read fixture %s: %s", path, strerror(-r));
        free(path);
        if (ret_len)
                *ret_len = len;
        return buf;
}

/* "SET/root" path of a fixture root tree (caller frees). */
static inline char *fixture_root(const char *set, const char *tree) {
        char *path = NULL;
        assert_true(asprintf(&path, "%s/%s/%s", fixtures_dir(), set, tree) >= 0);
        return path;
}

/* Every fixture set name (NULL-terminated, static). */
static const char *const fixture_sets[] = {
        "6.1.0-57-amd64-smp16-numa2-8G",
        "6.1.0-57-amd64-smp2-1G",
        "6.1.0-57-amd64-smp8-4G",
        "6.1.192-vmtest-smp16-numa2-8G",
        "6.1.192-vmtest-smp2-1G",
        "6.1.192-vmtest-smp8-4G",
        "6.12.117+deb12-amd64-smp16-numa2-8G",
        "6.12.117+deb12-amd64-smp2-1G",
        "6.12.117+deb12-amd64-smp8-4G",
        "6.12.117-vmtest-smp16-numa2-8G",
        "6.12.117-vmtest-smp2-1G",
        "6.12.117-vmtest-smp8-4G",
        "6.18.44-fc-live-smp2-24G",
        NULL,
};

/* A new directory /tmp/pcptune-test-<name>.XXXXXX for one test (free() the string). */
__attribute__((unused)) static char *test_mkdtemp(const char *name) {
        char *d = NULL;
        assert_true(asprintf(&d, "/tmp/pcptune-test-%s.XXXXXX", name) > 0);
        assert_non_null(mkdtemp(d));
        return d;
}

/* A copy of fixture set's root tree in a new test_mkdtemp(name) directory, to change (test_rm_rf() and free() it). */
__attribute__((unused)) static char *test_root_copy(const char *set, const char *name) {
        char *src = fixture_root(set, "root"), *dir = test_mkdtemp(name), *cmd = NULL;

        assert_true(asprintf(&cmd, "cp -R '%s/.' '%s/'", src, dir) >= 0);
        assert_int_equal(system(cmd), 0);
        free(cmd);
        free(src);
        return dir;
}

/* Write text to root + path (path starts with '/'), atomically, with mode. */
__attribute__((unused)) static void test_put(const char *root, const char *path, const char *text, unsigned mode) {
        char *p;
        assert_true(asprintf(&p, "%s%s", root, path) > 0);
        assert_int_equal(write_file_atomic(p, text, strlen(text), mode), 0);
        free(p);
}

/* The integer in root + path (a sysctl of a fake root); fails the test when it cannot be read. */
__attribute__((unused)) static int64_t test_value(const char *root, const char *path) {
        int64_t v;
        assert_int_equal(read_int64_at(root, path, &v), 0);
        return v;
}

/* Remove a test's directory tree (rm -rf). */
__attribute__((unused)) static void test_rm_rf(const char *d) {
        char *cmd;
        assert_true(asprintf(&cmd, "rm -rf '%s'", d) > 0);
        assert_int_equal(system(cmd), 0);
        free(cmd);
}

/*
 * Every string of the array bad is refused: expr, evaluated with bad_s (the string) and bad_len (its length),
 * gives -EINVAL.  A failure names the case and its string.  For the "bad input gives -EINVAL" tables:
 *   assert_each_einval(bad, meminfo_parse(bad_s, bad_len, &m));
 */
#define assert_each_einval(bad, expr)                                                                          \
        for (size_t bad_i = 0; bad_i < ELEMENTSOF(bad); bad_i++) {                                             \
                const char *bad_s = (bad)[bad_i];                                                              \
                size_t bad_len = strlen(bad_s);                                                                \
                int bad_r = (expr);                                                                            \
                (void) bad_len;                                                                                \
                if (bad_r != -EINVAL)                                                                          \
                        fail_msg("case %zu (\"%s\"): expected -EINVAL, got %d", bad_i, bad_s, bad_r);          \
        }
