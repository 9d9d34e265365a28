/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The restore journal and the knob actuator (journal.c, act-sysctl.c, knob.c)
 * on temporary state directories and fake roots: the allowlist, validation of
 * crafted journals, ownership and mode, version-1 journals, intents, and
 * memory that stays equal to the file when a save fails (issue 9 items 1-3, 6).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sys/stat.h>

#include "test-helpers.h"

#include "act-sysctl.h"
#include "journal.h"
#include "knob.h"
#include "log.h"
#include "util.h"

#define FRACTION_PATH "/proc/sys/vm/percpu_pagelist_high_fraction"
#define SCALE_PATH "/proc/sys/vm/pcp_batch_scale_max"

static void put(const char *root, const char *path, const char *text) {
        test_put(root, path, text, 0600);
}

static void set_value(const char *root, const char *path, int64_t v) {
        char buf[32];
        snprintf(buf, sizeof buf, "%" PRId64 "\n", v);
        assert_int_equal(write_file_at(root, path, buf), 0);
}

/* A fake root with both writable knobs, and a file outside /proc/sys a bad journal would aim at. */
static char *fake_root(void) {
        char *d = test_mkdtemp("journal"), *p;
        assert_true(asprintf(&p, "%s/proc/sys/vm", d) > 0);
        assert_int_equal(mkdir_p(p, 0755), 0);
        free(p);
        assert_true(asprintf(&p, "%s/some", d) > 0);
        assert_int_equal(mkdir_p(p, 0755), 0);
        free(p);
        put(d, FRACTION_PATH, "0\n");
        put(d, SCALE_PATH, "5\n");
        put(d, "/some/file", "precious\n");
        return d;
}

static const KnobDesc *fraction(void) {
        return knob_desc(KNOB_PCP_HIGH_FRACTION);
}

static const KnobDesc *scale(void) {
        return knob_desc(KNOB_PCP_BATCH_SCALE_MAX);
}

static void test_allowlist(void **state) {
        assert_ptr_equal(knob_desc_by_name("vm.percpu_pagelist_high_fraction"), fraction());
        assert_string_equal(fraction()->path, FRACTION_PATH);
        assert_ptr_equal(knob_desc_by_name("vm.pcp_batch_scale_max"), scale());
        /* Read-only or unknown knobs are not in the writable allowlist. */
        assert_null(knob_desc_by_name("vm.percpu_pagelist_fraction"));
        assert_null(knob_desc_by_name("kernel.core_pattern"));
        assert_null(knob_desc_by_name(""));
        assert_null(knob_desc_by_name(NULL));
        /* Ranges: the handler's. */
        assert_true(knob_value_valid(fraction(), 0));
        assert_true(knob_value_valid(fraction(), -1));
        assert_true(knob_value_valid(fraction(), 8));
        assert_true(knob_value_valid(fraction(), INT_MAX));
        assert_false(knob_value_valid(fraction(), 7));
        assert_false(knob_value_valid(fraction(), 1));
        assert_false(knob_value_valid(fraction(), -999));
        assert_false(knob_value_valid(fraction(), INT64_MAX));
        assert_false(knob_value_valid(fraction(), (int64_t) INT_MAX + 1));
        assert_true(knob_value_valid(scale(), 0));
        assert_true(knob_value_valid(scale(), 6));
        assert_false(knob_value_valid(scale(), 7));
        assert_false(knob_value_valid(scale(), -1));
}

static void test_roundtrip(void **state) {
        char *d = test_mkdtemp("journal"), err[512];
        Journal *j = journal_new(d, "/some/root"), *k = NULL;

        assert_non_null(j);
        assert_int_equal(journal_load(d, "/some/root", &k, err, sizeof err), -ENOENT);
        assert_int_equal(journal_intent(j, fraction(), 0, 0, 4509), 0);
        assert_int_equal(journal_intent(j, scale(), 5, 5, 2), 0);
        assert_int_equal(journal_commit(j, scale(), 2), 0);
        assert_int_equal(journal_load(d, "/some/root", &k, err, sizeof err), 0);
        assert_string_equal(k->root, "/some/root");
        assert_int_equal(k->n_entries, 2);
        const JournalEntry *e = journal_find(k, fraction());
        assert_non_null(e);
        assert_int_equal(e->original, 0);
        assert_int_equal(e->written, 0);
        assert_true(e->has_next);
        assert_int_equal(e->next, 4509);
        assert_true(journal_entry_holds(e, 0));
        assert_true(journal_entry_holds(e, 4509));
        assert_false(journal_entry_holds(e, 100));
        e = journal_find(k, scale());
        assert_non_null(e);
        assert_int_equal(e->written, 2);
        assert_false(e->has_next);
        journal_free(k);

        /* Values outside a knob's range are never recorded. */
        assert_int_equal(journal_intent(j, fraction(), -999, 0, 10), -EINVAL);
        assert_int_equal(journal_intent(j, scale(), 5, 5, 7), -EINVAL);
        assert_int_equal(journal_commit(j, knob_desc(KNOB_PCP_FRACTION), 10), -EINVAL);

        assert_int_equal(journal_drop(j, fraction()), 0);
        assert_int_equal(journal_drop(j, fraction()), 0);
        assert_int_equal(journal_drop(j, scale()), 0);
        assert_int_equal(journal_load(d, "/some/root", &k, err, sizeof err), -ENOENT); /* empty: the file goes away */
        journal_free(j);
        test_rm_rf(d);
        free(d);
}

/* Journals crafted as in issue 9 item 1: every one refused, nothing written, and the reason says why. */
static void test_crafted(void **state) {
        static const struct {
                const char *text;
                int error;
                const char *reason;
        } cases[] = {
                { "{\"version\":1,\"root\":\"/\",\"entries\":[{\"name\":\"vm.percpu_pagelist_high_fraction\","
                  "\"path\":\"/../../../../some/file\",\"original\":5,\"written\":77}]}",
                  -EINVAL, "has path '/../../../../some/file', not /proc/sys/vm/percpu_pagelist_high_fraction" },
                { "{\"version\":1,\"root\":\"/\",\"entries\":[{\"name\":\"kernel.core_pattern\","
                  "\"path\":\"/proc/sys/kernel/core_pattern\",\"original\":0,\"written\":1}]}",
                  -EINVAL, "names 'kernel.core_pattern', which is not a knob pcptune manages" },
                { "{\"version\":2,\"root\":\"/\",\"entries\":[{\"name\":\"vm.percpu_pagelist_fraction\","
                  "\"original\":0,\"written\":100}]}",
                  -EINVAL, "not a knob pcptune manages" },
                { "{\"version\":2,\"root\":\"/\",\"entries\":[{\"name\":\"vm.percpu_pagelist_high_fraction\","
                  "\"original\":-999,\"written\":100}]}",
                  -EINVAL, "original -999 is not a value the kernel accepts" },
                { "{\"version\":2,\"root\":\"/\",\"entries\":[{\"name\":\"vm.percpu_pagelist_high_fraction\","
                  "\"original\":9223372036854775807,\"written\":100}]}",
                  -EINVAL, "original 9223372036854775807 is not a value" },
                { "{\"version\":2,\"root\":\"/\",\"entries\":[{\"name\":\"vm.percpu_pagelist_high_fraction\","
                  "\"original\":0,\"written\":100,\"next\":3}]}",
                  -EINVAL, "next 3 is not a value" },
                { "{\"version\":2,\"root\":\"/\",\"entries\":[{\"name\":\"vm.pcp_batch_scale_max\","
                  "\"original\":99,\"written\":2}]}",
                  -EINVAL, "original 99" },
                { "{\"version\":2,\"root\":\"/\",\"entries\":[{\"name\":\"vm.percpu_pagelist_high_fraction\","
                  "\"original\":0,\"written\":100},{\"name\":\"vm.percpu_pagelist_high_fraction\",\"original\":8,"
                  "\"written\":100}]}",
                  -EINVAL, "appears twice" },
                { "{\"version\":2,\"root\":\"/\",\"entries\":[{\"name\":\"vm.percpu_pagelist_high_fraction\","
                  "\"original\":\"0\",\"written\":100}]}",
                  -EINVAL, "lacks an integer original" },
                { "{\"version\":2,\"root\":\"/\",\"entries\":[{\"name\":\"vm.\\u001b[2Jx\",\"original\":0,\"written\":1}]}",
                  -EINVAL, "names 'vm.\\x1b[2Jx'" },
                { "{\"version\":2,\"root\":\"relative\",\"entries\":[]}", -EINVAL, "is not an absolute path" },
                { "{\"version\":2,\"root\":\"/a\\nb\",\"entries\":[]}", -EINVAL, "root '/a\\x0ab' holds control" },
                { "{\"version\":3,\"root\":\"/\",\"entries\":[]}", -EINVAL, "version missing or not 1..2" },
                { "{\"root\":\"/\",\"entries\":[]}", -EINVAL, "version missing" },
                { "{\"version\":2,\"root\":\"/\",\"entries\":{}}", -EINVAL, "has no entries array" },
                { "{\"version\":2,\"root\":\"/\",\"entries\":[1]}", -EINVAL, "entry 1 is not an object" },
                { "[]", -EINVAL, "is not a JSON object" },
                { "{\"version\":2,\"root\":\"/\",\"entries\":[]} {}", -EINVAL, "is not a JSON object" },
                { "{\"version\":2,", -EINVAL, "is not a JSON object" },
        };
        char *d = test_mkdtemp("journal"), *root = fake_root(), err[512];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                Journal *j = NULL;
                put(d, "/" JOURNAL_FILE, cases[i].text);
                int r = journal_load(d, "/", &j, err, sizeof err);
                if (r != cases[i].error || !strstr(err, cases[i].reason))
                        fail_msg("case %zu: r=%d err='%s', want %d '%s'", i, r, err, cases[i].error, cases[i].reason);
                assert_null(j);
        }
        /* A NUL inside, and a journal far larger than any we write. */
        char *f;
        assert_true(asprintf(&f, "%s/" JOURNAL_FILE, d) > 0);
        assert_int_equal(write_file_atomic(f, "{\"version\":2}\0{}", 16, 0600), 0);
        Journal *j = NULL;
        assert_int_equal(journal_load(d, "/", &j, err, sizeof err), -EINVAL);
        assert_non_null(strstr(err, "NUL"));
        size_t big = 1024 * 1024;
        char *text = malloc(big);
        memset(text, ' ', big);
        assert_int_equal(write_file_atomic(f, text, big, 0600), 0);
        free(text);
        assert_int_equal(journal_load(d, "/", &j, err, sizeof err), -EINVAL);
        assert_non_null(strstr(err, "larger than"));
        free(f);
        char *content = NULL;
        assert_int_equal(read_file_at(root, "/some/file", 100, &content, NULL), 0);
        assert_string_equal(content, "precious\n");
        free(content);
        test_rm_rf(d);
        test_rm_rf(root);
        free(d);
        free(root);
}

/* A version-1 journal (the previous release's) still loads and restores. */
static void test_version1(void **state) {
        char *d = test_mkdtemp("journal"), *root = fake_root(), err[512], *text;
        Journal *j = NULL;

        assert_true(asprintf(&text,
                             "{ \"entries\": [ { \"name\": \"vm.percpu_pagelist_high_fraction\", \"path\": "
                             "\"/proc/sys/vm/percpu_pagelist_high_fraction\", \"original\": 0, \"written\": 4509 }, "
                             "{ \"name\": \"vm.pcp_batch_scale_max\", \"path\": \"/proc/sys/vm/pcp_batch_scale_max\", "
                             "\"original\": 5, \"written\": 2 } ], \"version\": 1, \"pid\": 1234, \"root\": \"%s\" }",
                             root) > 0);
        put(d, "/" JOURNAL_FILE, text);
        free(text);
        assert_int_equal(journal_load(d, root, &j, err, sizeof err), 0);
        assert_int_equal(j->n_entries, 2);
        assert_string_equal(j->root, root);
        assert_false(j->entries[0].has_next);
        set_value(root, FRACTION_PATH, 4509);
        set_value(root, SCALE_PATH, 2);
        assert_int_equal(journal_restore(j, root, "test"), 2);
        assert_int_equal(test_value(root, FRACTION_PATH), 0);
        assert_int_equal(test_value(root, SCALE_PATH), 5);
        journal_free(j);
        assert_int_equal(journal_load(d, root, &j, err, sizeof err), -ENOENT);
        test_rm_rf(d);
        test_rm_rf(root);
        free(d);
        free(root);
}

/* Item 1: a journal someone else could have written is refused with a clear reason. */
static void test_trust(void **state) {
        char *d = test_mkdtemp("journal"), *f, err[512];
        const char *good = "{\"version\":2,\"root\":\"/\",\"entries\":[]}";
        Journal *j = NULL;

        assert_true(asprintf(&f, "%s/" JOURNAL_FILE, d) > 0);
        put(d, "/" JOURNAL_FILE, good);
        assert_int_equal(journal_load(d, "/", &j, err, sizeof err), 0);
        j = journal_free(j);

        assert_int_equal(chmod(f, 0666), 0);
        assert_int_equal(journal_load(d, "/", &j, err, sizeof err), -EPERM);
        assert_non_null(strstr(err, "is writable by group or others (mode 0666)"));
        assert_int_equal(chmod(f, 0620), 0);
        assert_int_equal(journal_load(d, "/", &j, err, sizeof err), -EPERM);
        assert_int_equal(chmod(f, 0644), 0);
        assert_int_equal(journal_load(d, "/", &j, err, sizeof err), 0);
        j = journal_free(j);

        if (geteuid() == 0) {
                assert_int_equal(chown(f, 65534, 65534), 0);
                assert_int_equal(journal_load(d, "/", &j, err, sizeof err), -EPERM);
                assert_non_null(strstr(err, "is owned by uid 65534, not root"));
                assert_int_equal(chown(f, 0, 0), 0);
        }

        /* A directory anyone can write to (not sticky): the file may have been swapped in. */
        assert_int_equal(chmod(d, 0777), 0);
        assert_int_equal(journal_load(d, "/", &j, err, sizeof err), -EPERM);
        assert_non_null(strstr(err, "which is writable by group or others"));
        assert_int_equal(chmod(d, 01777), 0);
        assert_int_equal(journal_load(d, "/", &j, err, sizeof err), 0);
        j = journal_free(j);
        assert_int_equal(chmod(d, 0700), 0);

        /* A symlink or a FIFO in its place. */
        assert_int_equal(unlink(f), 0);
        assert_int_equal(symlink("/etc/hostname", f), 0);
        assert_int_equal(journal_load(d, "/", &j, err, sizeof err), -EPERM);
        assert_non_null(strstr(err, "symbolic link"));
        assert_int_equal(unlink(f), 0);
        assert_int_equal(mkfifo(f, 0600), 0);
        assert_int_equal(journal_load(d, "/", &j, err, sizeof err), -EPERM);
        assert_non_null(strstr(err, "not a regular file"));
        free(f);
        test_rm_rf(d);
        free(d);
}

static void test_knob_apply_release(void **state) {
        char *root = fake_root(), *sd = test_mkdtemp("journal"), err[512];
        Journal *j = journal_new(sd, root), *loaded = NULL;
        KnobState k = { .desc = fraction() };
        ChangeReason why = { "p", "r", "test", false };
        int64_t old;

        assert_int_equal(knob_apply(&k, root, j, false, 4509, &why, &old), KNOB_WRITTEN);
        assert_int_equal(old, 0);
        assert_int_equal(test_value(root, FRACTION_PATH), 4509);
        assert_true(k.managed);
        assert_int_equal(k.original, 0);
        /* Committed after the write: original 0, written 4509, no intent left. */
        assert_int_equal(journal_load(sd, root, &loaded, err, sizeof err), 0);
        assert_int_equal(loaded->entries[0].original, 0);
        assert_int_equal(loaded->entries[0].written, 4509);
        assert_false(loaded->entries[0].has_next);
        journal_free(loaded);

        assert_int_equal(knob_apply(&k, root, j, false, 4509, &why, NULL), KNOB_NOOP);
        assert_int_equal(knob_apply(&k, root, j, false, 2000, &why, NULL), KNOB_WRITTEN);
        assert_int_equal(k.original, 0);
        /* Outside the allowlist's range, or a value the kernel rejects: refused before anything. */
        assert_int_equal(knob_apply(&k, root, j, false, (int64_t) INT_MAX + 1, &why, NULL), -ERANGE);
        assert_int_equal(knob_apply(&k, root, j, false, 5, &why, NULL), -ERANGE);
        assert_int_equal(test_value(root, FRACTION_PATH), 2000);

        assert_int_equal(knob_release(&k, root, j, false, "stop"), KNOB_RESTORED);
        assert_int_equal(test_value(root, FRACTION_PATH), 0);
        assert_false(k.managed);
        assert_int_equal(journal_load(sd, root, &loaded, err, sizeof err), -ENOENT);

        /* The administrator wins: changed behind our back, we stop and do not restore. */
        assert_int_equal(knob_apply(&k, root, j, false, 300, &why, NULL), KNOB_WRITTEN);
        set_value(root, FRACTION_PATH, 1000);
        assert_int_equal(knob_apply(&k, root, j, false, 300, &why, NULL), KNOB_ADMIN);
        assert_true(k.admin_override);
        assert_int_equal(test_value(root, FRACTION_PATH), 1000);
        assert_int_equal(knob_apply(&k, root, j, false, 300, &why, NULL), KNOB_ADMIN);
        assert_int_equal(knob_release(&k, root, j, false, "stop"), KNOB_NOOP);
        assert_int_equal(test_value(root, FRACTION_PATH), 1000);
        assert_int_equal(journal_load(sd, root, &loaded, err, sizeof err), -ENOENT);

        /* Dry-run never writes and never journals. */
        KnobState dr = { .desc = fraction() };
        assert_int_equal(knob_apply(&dr, root, NULL, true, 8, &why, NULL), KNOB_WOULD_WRITE);
        assert_int_equal(test_value(root, FRACTION_PATH), 1000);
        assert_false(dr.managed);

        /* A failing write (missing file) leaves nothing in the journal. */
        KnobState m = { .desc = scale() };
        char *p;
        assert_true(asprintf(&p, "%s" SCALE_PATH, root) > 0);
        assert_int_equal(unlink(p), 0);
        assert_int_equal(knob_apply(&m, root, j, false, 2, &why, NULL), -ENOENT);
        assert_int_equal(journal_load(sd, root, &loaded, err, sizeof err), -ENOENT);
        assert_int_equal(j->n_entries, 0);
        /* A write the kernel refuses (a FIFO here) after the intent: the intent is dropped again. */
        assert_int_equal(mkfifo(p, 0644), 0);
        assert_true(knob_apply(&m, root, j, false, 2, &why, NULL) < 0);
        assert_int_equal(journal_load(sd, root, &loaded, err, sizeof err), -ENOENT);
        free(p);

        /* A read-only knob of the allowlist is never written. */
        KnobState ro = { .desc = knob_desc(KNOB_PCP_FRACTION) };
        assert_int_equal(knob_apply(&ro, root, j, false, 100, &why, NULL), -EPERM);

        journal_free(j);
        test_rm_rf(root);
        test_rm_rf(sd);
        free(root);
        free(sd);
}

static void test_restore(void **state) {
        char *root = fake_root(), *sd = test_mkdtemp("journal"), err[512];
        Journal *j = journal_new(sd, root), *loaded = NULL;

        /* Still ours: restored.  Changed since: left alone. */
        set_value(root, FRACTION_PATH, 4509);
        assert_int_equal(journal_intent(j, fraction(), 0, 4509, 4509), 0);
        assert_int_equal(journal_commit(j, fraction(), 4509), 0);
        assert_int_equal(journal_restore(j, root, "test"), 1);
        assert_int_equal(test_value(root, FRACTION_PATH), 0);
        assert_int_equal(j->n_entries, 0);

        set_value(root, FRACTION_PATH, 777);
        assert_int_equal(journal_intent(j, fraction(), 0, 4509, 2000), 0);
        assert_int_equal(journal_restore(j, root, "test"), 0);
        assert_int_equal(test_value(root, FRACTION_PATH), 777);
        assert_int_equal(journal_load(sd, root, &loaded, err, sizeof err), -ENOENT);

        /* Item 2: an intent W1 -> W2, killed before the write (W1) or after it (W2): both restored. */
        for (int64_t at = 0; at < 2; at++) {
                set_value(root, FRACTION_PATH, at == 0 ? 1000 : 2000);
                assert_int_equal(journal_intent(j, fraction(), 0, 1000, 2000), 0);
                assert_int_equal(journal_load(sd, root, &loaded, err, sizeof err), 0);
                assert_int_equal(journal_restore(loaded, root, "test"), 1);
                assert_int_equal(test_value(root, FRACTION_PATH), 0);
                loaded = journal_free(loaded);
                journal_clear(j);
        }
        /* Nothing written yet when killed (original = written): nothing to do, the journal goes. */
        set_value(root, SCALE_PATH, 5);
        assert_int_equal(journal_intent(j, scale(), 5, 5, 2), 0);
        assert_int_equal(journal_load(sd, root, &loaded, err, sizeof err), 0);
        assert_int_equal(journal_restore(loaded, root, "test"), 0);
        assert_int_equal(test_value(root, SCALE_PATH), 5);
        assert_int_equal(loaded->n_entries, 0);
        loaded = journal_free(loaded);
        assert_int_equal(journal_load(sd, root, &loaded, err, sizeof err), -ENOENT);

        journal_free(j);
        test_rm_rf(root);
        test_rm_rf(sd);
        free(root);
        free(sd);
}

/*
 * Item 3: a save that fails (ENOSPC, a read-only or vanished state directory) leaves the journal in memory
 * equal to the file, so a later save for another knob cannot record a value that was never written.
 */
static void test_failed_save(void **state) {
        char *root = fake_root(), *sd = test_mkdtemp("journal"), *gone, err[512];
        Journal *j = journal_new(sd, root), *loaded = NULL;
        KnobState pcp = { .desc = fraction() }, sc = { .desc = scale() };
        ChangeReason why = { "p", "r", "test", false };

        assert_int_equal(knob_apply(&pcp, root, j, false, 1000, &why, NULL), KNOB_WRITTEN);
        /* The state directory goes away: every save fails. */
        assert_true(asprintf(&gone, "%s.away", sd) > 0);
        assert_int_equal(rename(sd, gone), 0);
        assert_true(knob_apply(&pcp, root, j, false, 2000, &why, NULL) < 0);
        assert_int_equal(test_value(root, FRACTION_PATH), 1000); /* no write without a saved intent */
        assert_int_equal(pcp.written, 1000);
        const JournalEntry *e = journal_find(j, fraction());
        assert_non_null(e);
        assert_int_equal(e->written, 1000);
        assert_false(e->has_next);
        assert_true(knob_apply(&sc, root, j, false, 2, &why, NULL) < 0);
        assert_null(journal_find(j, scale()));
        assert_int_equal(test_value(root, SCALE_PATH), 5);
        /* Space again: the other knob's save writes the first one's true value. */
        assert_int_equal(rename(gone, sd), 0);
        assert_int_equal(knob_apply(&sc, root, j, false, 2, &why, NULL), KNOB_WRITTEN);
        assert_int_equal(journal_load(sd, root, &loaded, err, sizeof err), 0);
        e = journal_find(loaded, fraction());
        assert_non_null(e);
        assert_int_equal(e->written, 1000);
        /* As after a SIGKILL now: the next start restores both originals. */
        assert_int_equal(journal_restore(loaded, root, "test"), 2);
        assert_int_equal(test_value(root, FRACTION_PATH), 0);
        assert_int_equal(test_value(root, SCALE_PATH), 5);
        journal_free(loaded);

        /* A commit that cannot be saved keeps the saved intent, which names both values. */
        Journal *j2 = journal_new(sd, root);
        KnobState p2 = { .desc = fraction() };
        assert_int_equal(journal_intent(j2, fraction(), 0, 0, 3000), 0);
        assert_int_equal(rename(sd, gone), 0);
        assert_true(journal_commit(j2, fraction(), 3000) < 0);
        e = journal_find(j2, fraction());
        assert_true(e->has_next);
        assert_int_equal(e->next, 3000);
        assert_int_equal(rename(gone, sd), 0);
        (void) p2;
        journal_free(j2);

        free(gone);
        journal_free(j);
        test_rm_rf(root);
        test_rm_rf(sd);
        free(root);
        free(sd);
}

/*
 * Issue 21 item 8: what json-c's tree hides.  A duplicate key (json-c keeps the last, so a crafted
 * "original":0,"original":500 would restore 500) and a NUL escaped inside a string (a name that is the
 * knob's up to the NUL) are refused, spelled any way; a ':' or a "\u0000" that is only text inside a
 * string is not one.
 */
static void test_duplicates_and_nul(void **state) {
#define ENTRY(x) "{\"version\":2,\"root\":\"/\",\"entries\":[{" x "}]}"
#define FRAC "\"name\":\"vm.percpu_pagelist_high_fraction\""
        static const struct {
                const char *text;
                const char *reason; /* NULL: accepted */
        } cases[] = {
                { ENTRY(FRAC ",\"original\":0,\"original\":500,\"written\":1000"), "has a key twice" },
                { ENTRY(FRAC ",\"original\":0,\"written\":1000,\"original\":500"), "has a key twice" },
                { ENTRY(FRAC ",\"orig\\u0069nal\":0,\"original\":500,\"written\":1000"), "has a key twice" },
                { ENTRY("\"name\":\"vm.pcp_batch_scale_max\"," FRAC ",\"original\":0,\"written\":1000"), "has a key twice" },
                { "{\"version\":2,\"root\":\"/elsewhere\",\"root\":\"/\",\"entries\":[]}", "has a key twice" },
                { "{\"version\":2,\"root\":\"/\",\"entries\":[{\"name\":\"x\",\"y\":{\"a\":1,\"a\":2}}],\"entries\":[]}",
                  "has a key twice" },
                { ENTRY(FRAC ",\"original\":0,\"written\":1000,\"x\":{\"a\":{\"b\":1,\"b\":2}}"), "has a key twice" },
                { ENTRY("\"name\":\"vm.percpu_pagelist_high_fraction\\u0000x\",\"original\":0,\"written\":1000"),
                  "escaped NUL" },
                { ENTRY("\"name\\u0000x\":\"vm.pcp_batch_scale_max\"," FRAC ",\"original\":0,\"written\":1000"),
                  "escaped NUL" },
                { "{\"version\":2,\"root\":\"/tmp\\u0000/x\",\"entries\":[]}", "escaped NUL" },
                { ENTRY(FRAC ",\"original\":0,\"written\":1000 /* ,\"original\":500 */"), "outside strings (0x2f)" },
                { "{'version':2,\"root\":\"/\",\"entries\":[]}", "outside strings (0x27)" },
                { "{\"version\":2,\"root\":\"/\",\"entries\":[]", "is not a JSON object" },
                { "{\"version\":2,\"root\":\"/\",\"entries\":[\"]}", "ends inside a string" },
                /* Accepted: colons, quotes and a literal backslash-u0000 inside strings are text. */
                { "{\"version\":2,\"root\":\"/a:b\\\":{\\\"c\",\"entries\":[]}", NULL },
                { "{\"version\":2,\"root\":\"/a\\\\u0000\",\"entries\":[]}", NULL },
                { "{\"version\":2,\"root\":\"/\",\"pid\":1,\"entries\":[{\"name\":\"vm.percpu_pagelist_high_fraction\","
                  "\"original\":0,\"written\":1000,\"next\":2000},{\"name\":\"vm.pcp_batch_scale_max\",\"original\":5,"
                  "\"written\":2}]}",
                  NULL },
        };
#undef ENTRY
#undef FRAC
        char err[512];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                Journal *j = NULL;
                int r = journal_parse("/state/" JOURNAL_FILE, cases[i].text, strlen(cases[i].text), &j, err, sizeof err);
                if (cases[i].reason ? r != -EINVAL || !strstr(err, cases[i].reason) || j : r != 0)
                        fail_msg("case %zu: r=%d err='%s', want %s", i, r, err, cases[i].reason ?: "accepted");
                journal_free(j);
        }
        /* The count itself: members of every object, none from inside strings. */
        assert_int_equal(journal_json_members("{}", 2, NULL, 0), 0);
        assert_int_equal(journal_json_members("{\"a\":{\"b\":[{\"c\":1},{\"d\":\":\"}]}}", 31, NULL, 0), 4);
        assert_int_equal(journal_json_members("\"a\\\":\"", 6, NULL, 0), 0);
        assert_int_equal(journal_json_members("{\"a\":1}\0", 8, err, sizeof err), -EINVAL);
}

/* Issue 21 item 2: a journal per root in one state directory, the root checked inside, the old name read. */
static void test_journal_per_root(void **state) {
        char *a = fake_root(), *b = fake_root(), *sd = test_mkdtemp("journal"), err[512];
        char na[JOURNAL_NAME_MAX], nb[JOURNAL_NAME_MAX], *fa, *fb, *legacy, *text;
        Journal *ja = journal_new(sd, a), *jb = journal_new(sd, b), *loaded = NULL;

        /* The host's keeps its name; the FNV-1a reference vector ("a": af63dc4c8601ec8c) names another. */
        assert_string_equal(journal_file_name("/", na), JOURNAL_FILE);
        assert_string_equal(journal_file_name(NULL, na), JOURNAL_FILE);
        assert_string_equal(journal_file_name("a", na), "restore-af63dc4c8601ec8c.json");
        journal_file_name(a, na);
        journal_file_name(b, nb);
        assert_string_not_equal(na, nb);
        assert_int_equal(strlen(na), strlen("restore-0123456789abcdef.json"));
        assert_true(asprintf(&fa, "%s/%s", sd, na) > 0);
        assert_true(asprintf(&fb, "%s/%s", sd, nb) > 0);
        assert_true(asprintf(&legacy, "%s/" JOURNAL_FILE, sd) > 0);
        assert_string_equal(ja->file, fa);

        /* Two daemons, one state directory: both originals kept, each in its root's file. */
        set_value(a, FRACTION_PATH, 1000);
        set_value(b, FRACTION_PATH, 1000);
        set_value(b, SCALE_PATH, 2);
        assert_int_equal(journal_intent(ja, fraction(), 0, 0, 1000), 0);
        assert_int_equal(journal_commit(ja, fraction(), 1000), 0);
        assert_int_equal(journal_intent(jb, fraction(), 8, 8, 1000), 0);
        assert_int_equal(journal_intent(jb, scale(), 5, 5, 2), 0);
        assert_int_equal(access(legacy, F_OK), -1);
        assert_int_equal(journal_load(sd, a, &loaded, err, sizeof err), 0);
        assert_int_equal(loaded->n_entries, 1);
        assert_int_equal(journal_find(loaded, fraction())->original, 0);
        assert_int_equal(journal_restore(loaded, a, "test"), 1);
        loaded = journal_free(loaded);
        assert_int_equal(journal_load(sd, "/", &loaded, err, sizeof err), -ENOENT);
        assert_int_equal(journal_load(sd, b, &loaded, err, sizeof err), 0);
        assert_int_equal(loaded->n_entries, 2);
        assert_int_equal(journal_restore(loaded, b, "test"), 2);
        loaded = journal_free(loaded);
        assert_int_equal(test_value(a, FRACTION_PATH), 0);
        assert_int_equal(test_value(b, FRACTION_PATH), 8);
        assert_int_equal(test_value(b, SCALE_PATH), 5);
        assert_int_equal(access(fa, F_OK), -1);
        assert_int_equal(access(fb, F_OK), -1);

        /* A file under one root's name recording another root: refused, never restored below either. */
        assert_int_equal(journal_intent(ja, fraction(), 0, 0, 1000), 0);
        assert_int_equal(rename(fa, fb), 0);
        assert_int_equal(journal_load(sd, b, &loaded, err, sizeof err), -EXDEV);
        assert_null(loaded);
        assert_non_null(strstr(err, "belongs to root"));
        assert_int_equal(journal_load(sd, a, &loaded, err, sizeof err), -ENOENT);

        /* An older release's restore.json of root a: a's (saves go back there); root / refuses it. */
        assert_int_equal(rename(fb, legacy), 0);
        assert_int_equal(journal_load(sd, "/", &loaded, err, sizeof err), -EXDEV);
        assert_non_null(strstr(err, "belongs to root"));
        assert_int_equal(journal_load(sd, b, &loaded, err, sizeof err), -ENOENT);
        assert_int_equal(journal_load(sd, a, &loaded, err, sizeof err), 0);
        assert_string_equal(loaded->file, legacy);
        assert_int_equal(journal_find(loaded, fraction())->original, 0);
        set_value(a, FRACTION_PATH, 1000);
        assert_int_equal(journal_restore(loaded, a, "test"), 1);
        assert_int_equal(test_value(a, FRACTION_PATH), 0);
        loaded = journal_free(loaded);
        assert_int_equal(access(legacy, F_OK), -1);
        /* Its own file wins over an old one. */
        assert_true(asprintf(&text, "{\"version\":2,\"root\":\"%s\",\"entries\":[{\"name\":\"vm.pcp_batch_scale_max\","
                                    "\"original\":6,\"written\":2}]}", a) > 0);
        put(sd, "/" JOURNAL_FILE, text);
        assert_int_equal(journal_intent(ja, fraction(), 0, 0, 1000), 0);
        assert_int_equal(journal_load(sd, a, &loaded, err, sizeof err), 0);
        assert_string_equal(loaded->file, fa);
        assert_null(journal_find(loaded, scale()));
        loaded = journal_free(loaded);

        free(text);
        free(fa);
        free(fb);
        free(legacy);
        journal_free(ja);
        journal_free(jb);
        test_rm_rf(a);
        test_rm_rf(b);
        test_rm_rf(sd);
        free(a);
        free(b);
        free(sd);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_allowlist),   cmocka_unit_test(test_roundtrip),
                cmocka_unit_test(test_crafted),     cmocka_unit_test(test_version1),
                cmocka_unit_test(test_trust),       cmocka_unit_test(test_knob_apply_release),
                cmocka_unit_test(test_restore),     cmocka_unit_test(test_failed_save),
                cmocka_unit_test(test_duplicates_and_nul), cmocka_unit_test(test_journal_per_root),
        };
        log_setup("test-journal", LOG_TARGET_NULL, LOG_DEBUG);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
