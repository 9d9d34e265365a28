/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * health.c and onstop.c: the health file's writer (format, atomic 0644
 * write) and reader (the verdict rules of docs/health.md), pcptuned's own
 * verdict, the --on-stop decision from systemd's job type and its fallback,
 * and the handover: a marked journal adopted with its originals, the mark
 * removed, an administrator's value left alone.
 */
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "test-helpers.h"

#include "export-prom.h"
#include "health.h"
#include "journal.h"
#include "log.h"
#include "onstop.h"

#define FRACTION_PATH "/proc/sys/vm/percpu_pagelist_high_fraction"

static void test_on_stop_decision(void **state) {
        static const char *const keep[] = { "restart", "try-restart", "reload-or-restart" };
        static const char *const restore[] = { "stop", "start", "reload", "verify-active", "try-reload",
                                               "reload-or-start", "", "Restart", "restart ", "restarts" };

        for (size_t i = 0; i < ELEMENTSOF(keep); i++)
                assert_true(on_stop_job_type_keeps(keep[i]));
        for (size_t i = 0; i < ELEMENTSOF(restore); i++)
                assert_false(on_stop_job_type_keeps(restore[i]));
        assert_false(on_stop_job_type_keeps(NULL));

        for (OnStop o = 0; o < _ON_STOP_MAX; o++)
                assert_int_equal(on_stop_from_string(on_stop_to_string(o)), o);
        assert_int_equal(on_stop_from_string("Keep"), -EINVAL);
        assert_int_equal(on_stop_from_string(""), -EINVAL);
        assert_int_equal(on_stop_from_string(NULL), -EINVAL);
        assert_null(on_stop_to_string(_ON_STOP_MAX));

        char why[256];
        assert_true(on_stop_resolve(ON_STOP_KEEP, why, sizeof why));
        assert_false(on_stop_resolve(ON_STOP_RESTORE, why, sizeof why));
        /* The test runs in no systemd unit with a restart job pending: auto falls back to restore, saying why. */
        assert_false(on_stop_resolve(ON_STOP_AUTO, why, sizeof why));
        assert_non_null(strstr(why, "--on-stop=auto: "));
        assert_non_null(strstr(why, "restoring"));
        assert_false(on_stop_resolve(ON_STOP_AUTO, NULL, 0));
}

/*
 * A stand-in for systemd's bus objects, served over a socketpair as systemd serves /run/systemd/private:
 * Manager.GetUnit, the unit's Job property and the job's JobType, for the job type in fake_job_type
 * (NULL: no job pending).
 */
static const char *fake_job_type;

static int fake_get_unit(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *name;
        int r = sd_bus_message_read(m, "s", &name);
        if (r < 0)
                return r;
        if (strcmp(name, "pcptuned.service") != 0)
                return sd_bus_error_setf(error, "org.freedesktop.systemd1.NoSuchUnit", "Unit %s not loaded.", name);
        return sd_bus_reply_method_return(m, "o", "/org/freedesktop/systemd1/unit/pcptuned_2eservice");
}

static int fake_unit_job(sd_bus *bus, const char *path, const char *interface, const char *property,
                         sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return fake_job_type ? sd_bus_message_append(reply, "(uo)", 42u, "/org/freedesktop/systemd1/job/42")
                             : sd_bus_message_append(reply, "(uo)", 0u, "/");
}

static int fake_job_type_get(sd_bus *bus, const char *path, const char *interface, const char *property,
                             sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", fake_job_type);
}

static const sd_bus_vtable fake_manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("GetUnit", "s", "o", fake_get_unit, 0),
        SD_BUS_VTABLE_END,
};
static const sd_bus_vtable fake_unit_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Job", "(uo)", fake_unit_job, 0, 0),
        SD_BUS_VTABLE_END,
};
static const sd_bus_vtable fake_job_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("JobType", "s", fake_job_type_get, 0, 0),
        SD_BUS_VTABLE_END,
};

/* The job type pcptuned reads over a connection to the stand-in, and whether that keeps. */
static int ask_fake_systemd(const char *job_type, const char *unit, char **ret) {
        int sv[2], r;
        char why[256] = "";
        sd_bus *bus = NULL;
        pid_t pid;

        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        fake_job_type = job_type;
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                sd_bus *srv = NULL;
                sd_id128_t id;
                close(sv[0]);
                if (sd_id128_randomize(&id) < 0 || sd_bus_new(&srv) < 0 || sd_bus_set_fd(srv, sv[1], sv[1]) < 0 ||
                    sd_bus_set_server(srv, 1, id) < 0 || sd_bus_set_anonymous(srv, 1) < 0 ||
                    sd_bus_add_object_vtable(srv, NULL, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
                                             fake_manager_vtable, NULL) < 0 ||
                    sd_bus_add_object_vtable(srv, NULL, "/org/freedesktop/systemd1/unit/pcptuned_2eservice",
                                             "org.freedesktop.systemd1.Unit", fake_unit_vtable, NULL) < 0 ||
                    sd_bus_add_object_vtable(srv, NULL, "/org/freedesktop/systemd1/job/42",
                                             "org.freedesktop.systemd1.Job", fake_job_vtable, NULL) < 0 ||
                    sd_bus_start(srv) < 0)
                        _exit(1);
                for (;;) {
                        int k = sd_bus_process(srv, NULL);
                        if (k < 0)
                                _exit(0); /* the client hung up */
                        if (k == 0 && sd_bus_wait(srv, 5 * USEC_PER_SEC) <= 0)
                                _exit(0);
                }
        }
        close(sv[1]);
        assert_true(sd_bus_new(&bus) >= 0);
        assert_true(sd_bus_set_fd(bus, sv[0], sv[0]) >= 0);
        assert_true(sd_bus_set_anonymous(bus, 1) >= 0);
        assert_true(sd_bus_start(bus) >= 0);
        r = on_stop_unit_job_type(bus, unit, ret, why, sizeof why);
        if (r < 0)
                assert_true(why[0] != 0);
        sd_bus_flush_close_unref(bus);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        return r;
}

static void test_on_stop_systemd(void **state) {
        static const char *const types[] = { "restart", "try-restart", "reload-or-restart", "stop", "start", "reload" };
        char *type = NULL;

        for (size_t i = 0; i < ELEMENTSOF(types); i++) {
                assert_int_equal(ask_fake_systemd(types[i], "pcptuned.service", &type), 1);
                assert_string_equal(type, types[i]);
                assert_int_equal(on_stop_job_type_keeps(type), i < 3);
                free(type);
                type = NULL;
        }
        /* No job pending (a signal sent by hand): 0, restore. */
        assert_int_equal(ask_fake_systemd(NULL, "pcptuned.service", &type), 0);
        assert_null(type);
        assert_false(on_stop_job_type_keeps(type));
        /* systemd does not know the unit: an error, restore. */
        assert_true(ask_fake_systemd("restart", "other.service", &type) < 0);
}

static void test_self_verdict(void **state) {
        HealthInfo h;

        /* The first of: reload failed, a refused write, a crash restore pending. */
        health_self_verdict(true, "vm.percpu_pagelist_high_fraction", EINVAL, true, false, &h);
        assert_true(h.problem);
        assert_string_equal(h.reason, "last policy reload failed");
        health_self_verdict(false, "vm.percpu_pagelist_high_fraction", EINVAL, true, false, &h);
        assert_string_equal(h.reason, "a knob write was refused: vm.percpu_pagelist_high_fraction (errno EINVAL)");
        health_self_verdict(false, "vm.percpu_pagelist_high_fraction", EROFS, false, false, &h);
        assert_string_equal(h.reason, "a knob write was refused: vm.percpu_pagelist_high_fraction (errno EROFS)");
        health_self_verdict(false, "vm.x", 0, true, true, &h);
        assert_true(h.problem);
        assert_string_equal(h.reason, "crash restore pending");
        health_self_verdict(false, NULL, EINVAL, false, true, &h);
        assert_false(h.problem);
        assert_string_equal(h.reason, "dry run");
        health_self_verdict(false, NULL, 0, false, false, &h);
        assert_false(h.problem);
        assert_string_equal(h.reason, "sampling");
}

static void test_format_parse(void **state) {
        HealthInfo h = { .problem = false, .updated = 1796176800, .interval = 10, .has_held = true, .held = 1,
                         .dry_run = 0, .pid = 4242 }, back;
        char buf[HEALTH_FILE_MAX], why[128];
        int n;

        /* docs/health.md's example, byte for byte. */
        snprintf(h.reason, sizeof h.reason, "sampling");
        n = health_format(&h, buf, sizeof buf);
        assert_string_equal(buf, "PCPTUNE_HEALTH=1\nVERDICT=ok\nREASON=sampling\nUPDATED=1796176800\nINTERVAL=10\n"
                                 "HELD=1\nDRY_RUN=0\nPID=4242\n");
        assert_int_equal(n, strlen(buf));
        assert_int_equal(health_parse(buf, (size_t) n, &back, why, sizeof why), 0);
        assert_false(back.problem);
        assert_string_equal(back.reason, "sampling");
        assert_int_equal(back.updated, 1796176800);
        assert_int_equal(back.interval, 10);
        assert_true(back.has_held);
        assert_int_equal(back.held, 1);
        assert_int_equal(back.dry_run, 0);
        assert_int_equal(back.pid, 4242);

        /* A reason never breaks a line or carries a quote, never starts with '=', and is cut at 120. */
        h.problem = true;
        snprintf(h.reason, sizeof h.reason, "=a\nb\"c'd");
        n = health_format(&h, buf, sizeof buf);
        assert_non_null(strstr(buf, "\nVERDICT=problem\nREASON=_a_b_c_d\n"));
        assert_int_equal(health_parse(buf, (size_t) n, &back, why, sizeof why), 0);
        assert_true(back.problem);
        memset(h.reason, 'x', HEALTH_REASON_MAX);
        h.reason[HEALTH_REASON_MAX] = 0;
        n = health_format(&h, buf, sizeof buf);
        assert_int_equal(health_parse(buf, (size_t) n, &back, why, sizeof why), 0);
        assert_int_equal(strlen(back.reason), HEALTH_REASON_MAX);
        assert_int_equal(health_format(&h, buf, 20), -ENOBUFS);
}

static void test_parse_rejects(void **state) {
        static const struct {
                const char *text, *why;
        } bad[] = {
                { "", "it is empty" },
                { "\n", "its first line is not PCPTUNE_HEALTH=1" },
                { "PCPTUNE_HEALTH=2\nVERDICT=ok\nUPDATED=1\nINTERVAL=1\n", "its first line is not PCPTUNE_HEALTH=1" },
                { "PCPTUNE_HEALTH=1\nVERDICT=fine\nUPDATED=1\nINTERVAL=1\n", "VERDICT is not ok or problem" },
                { "PCPTUNE_HEALTH=1\nUPDATED=1\nINTERVAL=1\n", "VERDICT is not ok or problem" },
                { "PCPTUNE_HEALTH=1\nVERDICT=ok\nINTERVAL=1\n", "UPDATED is not Unix seconds" },
                { "PCPTUNE_HEALTH=1\nVERDICT=ok\nUPDATED=-1\nINTERVAL=1\n", "UPDATED is not Unix seconds" },
                { "PCPTUNE_HEALTH=1\nVERDICT=ok\nUPDATED=1234567890123\nINTERVAL=1\n", "UPDATED is not Unix seconds" },
                { "PCPTUNE_HEALTH=1\nVERDICT=ok\nUPDATED=1\nINTERVAL=0\n", "INTERVAL is not a positive integer" },
                { "PCPTUNE_HEALTH=1\nVERDICT=ok\nUPDATED=1\nINTERVAL= 5\n", "INTERVAL is not a positive integer" },
                { "PCPTUNE_HEALTH=1\nVERDICT=ok\nUPDATED=1\nINTERVAL=1\nHELD=x\n", "HELD is not a count" },
                { "PCPTUNE_HEALTH=1\nVERDICT=ok\nUPDATED=1\nINTERVAL=1\nDRY_RUN=2\n", "DRY_RUN is not 0 or 1" },
                { "PCPTUNE_HEALTH=1\nVERDICT=\"ok\"\nUPDATED=1\nINTERVAL=1\n", "a quoted value" },
                { "PCPTUNE_HEALTH=1\nVERDICT=ok\nUPDATED=1\nINTERVAL=1\nhello\n", "a line without KEY=VALUE" },
                { "PCPTUNE_HEALTH=1\nVERDICT=ok\nUPDATED=1\nINTERVAL=1\n\n", "a line without KEY=VALUE" },
        };
        HealthInfo h;
        char why[128];

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                why[0] = 0;
                if (health_parse(bad[i].text, strlen(bad[i].text), &h, why, sizeof why) != -EBADMSG)
                        fail_msg("accepted: %s", bad[i].text);
                assert_string_equal(why, bad[i].why);
        }
        /* Unknown keys are ignored, a missing final newline is read, HELD and DRY_RUN are optional. */
        const char *ok = "PCPTUNE_HEALTH=1\nVERDICT=problem\nNEW=x\nUPDATED=5\nINTERVAL=3";
        assert_int_equal(health_parse(ok, strlen(ok), &h, why, sizeof why), 0);
        assert_true(h.problem);
        assert_false(h.has_held);
        assert_int_equal(h.dry_run, -1);
        assert_int_equal(h.updated, 5);
        assert_int_equal(h.interval, 3);
}

static HealthVerdict check(const char *dir, int64_t now, char *msg) {
        return health_check_dir(dir, now, msg, 512, NULL);
}

static void test_check_dir(void **state) {
        char *d = test_mkdtemp("health"), *missing, *h, *j, msg[512];
        HealthInfo info = { .updated = 1000, .interval = 10, .has_held = true, .held = 2, .dry_run = 0, .pid = 1 };

        assert_true(asprintf(&missing, "%s/none", d) > 0);
        assert_true(asprintf(&h, "%s/" HEALTH_FILE, d) > 0);
        assert_true(asprintf(&j, "%s/" JOURNAL_FILE, d) > 0);
        assert_int_equal(check(missing, 1000, msg), HEALTH_OK);
        assert_string_equal(msg, "pcptune not installed");
        assert_int_equal(check(d, 1000, msg), HEALTH_OK);
        assert_string_equal(msg, "pcptuned not running, no values held");
        test_put(d, "/" JOURNAL_FILE, "{}", 0644);
        assert_int_equal(check(d, 1000, msg), HEALTH_PROBLEM);
        assert_string_equal(msg, "values held in restore.json with no pcptuned running");

        snprintf(info.reason, sizeof info.reason, "sampling");
        assert_int_equal(health_write(d, &info), 0);
        /* Fresh up to 3 x 10 + 60 = 90 s, at either side. */
        assert_int_equal(check(d, 1090, msg), HEALTH_OK);
        assert_string_equal(msg, "ok: sampling, 2 value(s) held");
        assert_int_equal(check(d, 1091, msg), HEALTH_PROBLEM);
        assert_string_equal(msg, "values held in restore.json; pcptuned not sampling: health 91 s old (limit 90 s)");
        assert_int_equal(unlink(j), 0);
        assert_int_equal(check(d, 1091, msg), HEALTH_PROBLEM);
        assert_string_equal(msg, "pcptuned not sampling: health 91 s old (limit 90 s)");
        assert_int_equal(check(d, 910, msg), HEALTH_OK);
        assert_int_equal(check(d, 909, msg), HEALTH_UNKNOWN);
        assert_string_equal(msg, "unknown: the health file is dated 91 s in the future");

        info.problem = true;
        snprintf(info.reason, sizeof info.reason, "crash restore pending");
        assert_int_equal(health_write(d, &info), 0);
        assert_int_equal(check(d, 1000, msg), HEALTH_PROBLEM);
        assert_string_equal(msg, "crash restore pending");
        info.problem = false;
        info.dry_run = 1;
        snprintf(info.reason, sizeof info.reason, "dry run");
        info.held = 0;
        assert_int_equal(health_write(d, &info), 0);
        bool fresh;
        assert_int_equal(health_check_dir(d, 1000, msg, sizeof msg, &fresh), HEALTH_OK);
        assert_true(fresh);
        assert_string_equal(msg, "ok: dry run, 0 value(s) held (dry run)");

        /* Not a regular file, too large, garbled: unknown. */
        assert_int_equal(unlink(h), 0);
        assert_int_equal(symlink("/etc/hostname", h), 0);
        assert_int_equal(check(d, 1000, msg), HEALTH_UNKNOWN);
        assert_string_equal(msg, "unknown: the health file is not a readable regular file");
        assert_int_equal(unlink(h), 0);
        char big[HEALTH_FILE_MAX + 2];
        memset(big, 'x', sizeof big - 1);
        big[sizeof big - 1] = 0;
        test_put(d, "/" HEALTH_FILE, big, 0644);
        assert_int_equal(check(d, 1000, msg), HEALTH_UNKNOWN);
        assert_string_equal(msg, "unknown: the health file is larger than 4 KiB or unreadable");
        test_put(d, "/" HEALTH_FILE, "PCPTUNE_HEALTH=1\nVERDICT=ok\n", 0644);
        assert_int_equal(check(d, 1000, msg), HEALTH_UNKNOWN);
        assert_string_equal(msg, "unknown: garbled health file (UPDATED is not Unix seconds)");

        /* Several directories: a problem before unknown before ok; each line names its directory. */
        char *two[] = { missing, d };
        assert_int_equal(health_check_dirs(two, 2, 1000, msg, sizeof msg), HEALTH_UNKNOWN);
        assert_true(strncmp(msg, d, strlen(d)) == 0);
        free(missing);
        free(h);
        free(j);
        test_rm_rf(d);
        free(d);
}

static void test_write(void **state) {
        char *d = test_mkdtemp("health-write"), *h;
        HealthInfo info = { .updated = 1, .interval = 1, .pid = 7 };
        struct stat st, st2;

        assert_true(asprintf(&h, "%s/" HEALTH_FILE, d) > 0);
        mode_t old = umask(077);
        assert_int_equal(health_write(d, &info), 0);
        umask(old);
        assert_int_equal(lstat(h, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(st.st_mode & 07777, 0644);
        /* Replaced by a rename: a new inode, and no temporary left beside it. */
        assert_int_equal(health_write(d, &info), 0);
        assert_int_equal(lstat(h, &st2), 0);
        assert_true(st.st_ino != st2.st_ino);
        char *cmd;
        assert_true(asprintf(&cmd, "test $(ls -A '%s' | wc -l) = 1", d) > 0);
        assert_int_equal(system(cmd), 0);
        free(cmd);
        /* A symlink at the name is replaced, not followed. */
        char *victim;
        assert_true(asprintf(&victim, "%s/victim", d) > 0);
        test_put(d, "/victim", "keep\n", 0600);
        assert_int_equal(unlink(h), 0);
        assert_int_equal(symlink(victim, h), 0);
        assert_int_equal(health_write(d, &info), 0);
        assert_int_equal(lstat(h, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        char *buf;
        size_t len;
        assert_int_equal(read_file_at("/", victim, 64, &buf, &len), 0);
        assert_string_equal(buf, "keep\n");
        free(buf);
        assert_int_equal(health_remove(d), 0);
        assert_true(lstat(h, &st) < 0 && errno == ENOENT);
        assert_int_equal(health_remove(d), 0);

        /* The daemon's file: its first managed knob whose last write failed makes it a problem. */
        DaemonCounters c = { .config_reload_ok = true, .journal_held = 1 };
        KnobCounters kc[_KNOB_ID_MAX] = { 0 };
        kc[KNOB_PCP_HIGH_FRACTION].last_errno = EACCES;
        assert_int_equal(health_write_daemon(d, &c, kc, false, 1500 * USEC_PER_MSEC, NULL), 0);
        assert_int_equal(read_file_at("/", h, HEALTH_FILE_MAX, &buf, &len), 0);
        assert_non_null(strstr(buf, "\nVERDICT=problem\nREASON=a knob write was refused: "
                                    "vm.percpu_pagelist_high_fraction (errno EACCES)\n"));
        assert_non_null(strstr(buf, "\nINTERVAL=2\nHELD=1\nDRY_RUN=0\n"));
        free(buf);
        kc[KNOB_PCP_HIGH_FRACTION].last_errno = 0;
        assert_int_equal(health_write_daemon(d, &c, kc, true, 10 * USEC_PER_SEC, "stopped"), 0);
        assert_int_equal(read_file_at("/", h, HEALTH_FILE_MAX, &buf, &len), 0);
        /* A dry run holds nothing, whatever the counters say. */
        assert_non_null(strstr(buf, "\nVERDICT=ok\nREASON=stopped\n"));
        assert_non_null(strstr(buf, "\nHELD=0\nDRY_RUN=1\n"));
        free(buf);
        free(victim);
        free(h);
        test_rm_rf(d);
        free(d);
}

/* A journal of one knob in state, original 0, written `written`, the knob at `now`. */
static void make_journal(const char *root, const char *state, int64_t written, int64_t now) {
        Journal *j = journal_new(state, root);
        const KnobDesc *k = knob_desc(KNOB_PCP_HIGH_FRACTION);
        char text[32];

        assert_non_null(j);
        assert_int_equal(journal_intent(j, k, 0, 0, written), 0);
        assert_int_equal(journal_commit(j, k, written), 0);
        journal_free(j);
        snprintf(text, sizeof text, "%" PRId64 "\n", now);
        test_put(root, FRACTION_PATH, text, 0644);
}

static void test_handover(void **state) {
        char *root = test_root_copy("6.18.44-fc-live-smp2-24G", "handover"), *sd, *mark, *jpath;
        KnobState knobs[_KNOB_ID_MAX];
        Journal *j = NULL;
        struct stat st;

        assert_true(asprintf(&sd, "%s/state", root) > 0);
        assert_int_equal(mkdir(sd, 0755), 0);
        char mname[64], jname[JOURNAL_NAME_MAX];
        /* Per root, like the journal: handover-HASH and restore-HASH.json for this fake root. */
        assert_non_null(root_state_name(root, HANDOVER_FILE, mname, sizeof mname));
        assert_true(strncmp(mname, HANDOVER_FILE "-", sizeof(HANDOVER_FILE)) == 0);
        assert_true(asprintf(&mark, "%s/%s", sd, mname) > 0);
        assert_true(asprintf(&jpath, "%s/%s", sd, journal_file_name(root, jname)) > 0);
        for (KnobId id = 0; id < _KNOB_ID_MAX; id++)
                knobs[id] = (KnobState){ .desc = knob_desc(id) };

        /* No mark: nothing adopted (a journal there is a crash's). */
        make_journal(root, sd, 1528, 1528);
        assert_false(handover_marked(sd, root));
        assert_int_equal(handover_adopt(sd, root, knobs, &j), 0);
        assert_null(j);
        assert_false(knobs[KNOB_PCP_HIGH_FRACTION].managed);

        /* Marked: adopted with its original, the value in place taken as written, the mark gone. */
        assert_int_equal(handover_mark(sd, root), 0);
        assert_int_equal(stat(mark, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0644);
        assert_true(handover_marked(sd, root));
        assert_int_equal(handover_adopt(sd, root, knobs, &j), 1);
        assert_non_null(j);
        const KnobState *k = &knobs[KNOB_PCP_HIGH_FRACTION];
        assert_true(k->managed);
        assert_int_equal(k->original, 0);
        assert_int_equal(k->written, 1528);
        assert_true(stat(mark, &st) < 0 && errno == ENOENT);
        assert_int_equal(stat(jpath, &st), 0);
        assert_int_equal(j->n_entries, 1);
        assert_int_equal(test_value(root, FRACTION_PATH), 1528);
        journal_free(j);
        j = NULL;

        /* An administrator changed the knob in between: the entry is dropped, the value left alone. */
        for (KnobId id = 0; id < _KNOB_ID_MAX; id++)
                knobs[id] = (KnobState){ .desc = knob_desc(id) };
        make_journal(root, sd, 1528, 77);
        assert_int_equal(handover_mark(sd, root), 0);
        assert_int_equal(handover_adopt(sd, root, knobs, &j), 1);
        assert_int_equal(j->n_entries, 0);
        assert_false(knobs[KNOB_PCP_HIGH_FRACTION].managed);
        assert_true(stat(jpath, &st) < 0 && errno == ENOENT);
        assert_int_equal(test_value(root, FRACTION_PATH), 77);
        journal_free(j);
        j = NULL;

        /* A mark that others may write is not trusted: removed, the journal left to the crash path. */
        make_journal(root, sd, 1528, 1528);
        assert_int_equal(handover_mark(sd, root), 0);
        assert_int_equal(chmod(mark, 0666), 0);
        assert_false(handover_marked(sd, root));
        assert_int_equal(handover_adopt(sd, root, knobs, &j), 0);
        assert_null(j);
        assert_true(stat(mark, &st) < 0 && errno == ENOENT);
        assert_int_equal(stat(jpath, &st), 0);
        /* A journal written after the mark (another writer that crashed) is not the one handed over. */
        assert_int_equal(handover_mark(sd, root), 0);
        assert_true(handover_marked(sd, root));
        make_journal(root, sd, 1000, 1000);
        assert_false(handover_marked(sd, root));
        assert_int_equal(handover_adopt(sd, root, knobs, &j), 0);
        assert_true(stat(mark, &st) < 0 && errno == ENOENT);
        assert_int_equal(stat(jpath, &st), 0);
        /* A mark whose journal is gone (`pcptunectl restore`): nothing to adopt, the mark removed. */
        assert_int_equal(handover_mark(sd, root), 0);
        assert_int_equal(unlink(jpath), 0);
        assert_int_equal(handover_adopt(sd, root, knobs, &j), 0);
        assert_true(stat(mark, &st) < 0 && errno == ENOENT);
        /* No journal: no mark. */
        assert_int_equal(handover_mark(sd, root), -ENOENT);

        /* The crash-restore state: a writing daemon says what it did; a dry run sees a crash's journal. */
        assert_int_equal(health_crash_restore_state(sd, root, false, true, false), CRASH_RESTORE_DONE);
        assert_int_equal(health_crash_restore_state(sd, root, false, false, false), CRASH_RESTORE_NONE);
        assert_int_equal(health_crash_restore_state(sd, root, true, false, false), CRASH_RESTORE_NONE); /* no journal */
        make_journal(root, sd, 1528, 1528);
        assert_int_equal(health_crash_restore_state(sd, root, true, false, false), CRASH_RESTORE_PENDING);
        assert_int_equal(health_crash_restore_state(sd, root, true, false, true), CRASH_RESTORE_NONE); /* a daemon's */
        assert_int_equal(handover_mark(sd, root), 0);
        assert_int_equal(health_crash_restore_state(sd, root, true, false, false), CRASH_RESTORE_NONE); /* handed over */
        for (KnobId id = 0; id < _KNOB_ID_MAX; id++)
                knobs[id] = (KnobState){ .desc = knob_desc(id), .managed = id != KNOB_PCP_FRACTION };
        assert_int_equal(health_held_knobs(knobs), _KNOB_ID_MAX - 1);

        free(sd);
        free(mark);
        free(jpath);
        test_rm_rf(root);
        free(root);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_on_stop_decision), cmocka_unit_test(test_on_stop_systemd),
                cmocka_unit_test(test_self_verdict),
                cmocka_unit_test(test_format_parse),     cmocka_unit_test(test_parse_rejects),
                cmocka_unit_test(test_check_dir),        cmocka_unit_test(test_write),
                cmocka_unit_test(test_handover),
        };
        log_setup("test-health", LOG_TARGET_NULL, LOG_DEBUG);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
