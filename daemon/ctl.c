/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcptunectl: inspect and steer pcptuned.
 *   status     what the kernel shows, what the policies decide, what the daemon manages
 *   validate   check policy files or directories
 *   restore    put back the values of a restore journal by hand
 *   resume     hand a knob the administrator took back to the daemon
 */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/file.h>

#include "act-sysctl.h"
#include "journal.h"
#include "log.h"
#include "metrics.h"
#include "policy-eval.h"
#include "policy.h"
#include "report.h"
#include "snapshot.h"

typedef struct CtlOptions {
        const char *root;
        const char *state_dir;
        const char *policy_dir;
        bool json;
        bool no_owner_check;
} CtlOptions;

static void help(void) {
        printf("Usage: pcptunectl [OPTIONS] COMMAND [ARGS]\n\n"
               "Commands:\n"
               "  status                 kernel state, policy decisions and what pcptuned manages\n"
               "  validate PATH...       check policy files or directories (exit 1 on any error)\n"
               "  restore                restore the values recorded in the restore journal\n"
               "  resume KNOB            manage KNOB again after an administrator changed it\n\n"
               "Options:\n"
               "  -r, --root DIR         kernel files below DIR (default /)\n"
               "  -s, --state-dir DIR    pcptuned's state directory (default %s)\n"
               "  -p, --policy-dir DIR   policies for status (default as pcptuned)\n"
               "      --json             JSON output (status)\n"
               "      --no-owner-check   validate: do not require root-owned, non-writable files\n"
               "  -h, --help             this help\n"
               "      --version          print the version\n",
               STATE_DIR_DEFAULT);
}

/* Is a daemon holding the state directory's lock?  Returns its pid, 0 if none, -errno. */
static int daemon_pid(const char *state_dir) {
        _cleanup_(freep) char *path = NULL;
        _cleanup_(closep) int fd = -EBADF;
        char buf[32];
        ssize_t k;

        if (asprintf(&path, "%s/pcptuned.lock", state_dir) < 0)
                return -ENOMEM;
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : negative_errno();
        if (flock(fd, LOCK_SH | LOCK_NB) >= 0)
                return 0;
        if (errno != EWOULDBLOCK)
                return negative_errno();
        k = pread(fd, buf, sizeof buf - 1, 0);
        buf[k > 0 ? k : 0] = 0;
        int64_t pid;
        buf[strcspn(buf, "\n")] = 0;
        if (parse_int64(buf, &pid) < 0 || pid <= 0)
                return -EBADMSG;
        return (int) pid;
}

static json_object *read_daemon_status(const char *state_dir) {
        _cleanup_(freep) char *path = NULL, *text = NULL;

        if (asprintf(&path, "%s/status.json", state_dir) < 0)
                return NULL;
        if (read_file_at("/", path, 16 * 1024 * 1024, &text, NULL) < 0)
                return NULL;
        return json_tokener_parse(text);
}

static int cmd_status(const CtlOptions *o) {
        _cleanup_(snapshot_freep) Snapshot *s = NULL;
        _cleanup_(policy_set_freep) PolicySet *set = NULL;
        _cleanup_(diagnostics_done) Diagnostics diag = { 0 };
        _cleanup_(eval_state_freep) EvalState *st = eval_state_new();
        _cleanup_(plan_done) Plan plan = { 0 };
        json_object *dstatus = NULL, *knob_o = NULL;
        MetricValues mv;
        Knob knob = { 0 };
        bool have_knob = false;
        int pid, r;

        r = snapshot_take(o->root, &s);
        if (r < 0)
                return log_error_errno(r, "Failed to read the kernel's memory state below %s: %s", o->root,
                                       errno_str(r)),
                       1;
        metrics_from_snapshot(s, &mv);
        r = policy_set_load_default(o->policy_dir, !o->no_owner_check, &set, &diag);
        for (size_t i = 0; i < diag.n_errors; i++)
                log_error("%s", diag.errors[i]);
        if (r >= 0 && st)
                (void) policy_eval(set, s, &mv, st, now_usec(CLOCK_MONOTONIC), &plan);

        pid = daemon_pid(o->state_dir);
        if (pid > 0)
                dstatus = read_daemon_status(o->state_dir);
        if (dstatus && json_object_object_get_ex(dstatus, "knob", &knob_o) && s->has_knob) {
                json_object *v;
                knob.name = s->knob.name;
                knob.path = s->knob.path;
                if (json_object_object_get_ex(knob_o, "managed", &v))
                        knob.managed = json_object_get_boolean(v);
                if (json_object_object_get_ex(knob_o, "original", &v))
                        knob.original = json_object_get_int64(v);
                if (json_object_object_get_ex(knob_o, "written", &v))
                        knob.written = json_object_get_int64(v);
                if (json_object_object_get_ex(knob_o, "admin_override", &v))
                        knob.admin_override = json_object_get_boolean(v);
                knob.admin_value = s->knob.value;
                have_knob = true;
        }

        ReportInput in = { .snap = s, .mv = &mv, .set = set, .plan = r >= 0 ? &plan : NULL,
                           .knob = have_knob ? &knob : NULL, .dry_run = true };
        if (o->json) {
                json_object *out = report_to_json(&in), *d = json_object_new_object();
                json_object_object_add(d, "running", json_object_new_boolean(pid > 0));
                if (pid > 0)
                        json_object_object_add(d, "pid", json_object_new_int(pid));
                if (dstatus) {
                        json_object *v;
                        if (json_object_object_get_ex(dstatus, "daemon", &v))
                                json_object_object_add(d, "status", json_object_get(v));
                        if (json_object_object_get_ex(dstatus, "rules", &v))
                                json_object_object_add(d, "rules", json_object_get(v));
                        if (json_object_object_get_ex(dstatus, "knob", &v))
                                json_object_object_add(d, "knob", json_object_get(v));
                }
                json_object_object_add(out, "daemon", d);
                printf("%s\n", json_object_to_json_string_ext(out, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED));
                json_object_put(out);
        } else {
                if (pid > 0) {
                        printf("pcptuned: running (pid %d), state in %s\n", pid, o->state_dir);
                        if (have_knob && knob.managed)
                                printf("  manages %s: original %" PRId64 ", written %" PRId64 "\n", knob.name,
                                       knob.original, knob.written);
                        else if (have_knob && knob.admin_override)
                                printf("  %s: changed by an administrator, not managed\n", knob.name);
                        else
                                printf("  manages nothing at the moment\n");
                        json_object *rules, *d;
                        if (dstatus && json_object_object_get_ex(dstatus, "rules", &rules))
                                for (size_t i = 0; i < json_object_array_length(rules); i++) {
                                        json_object *rr = json_object_array_get_idx(rules, i), *a, *b, *c;
                                        if (json_object_object_get_ex(rr, "policy", &a) &&
                                            json_object_object_get_ex(rr, "rule", &b) &&
                                            json_object_object_get_ex(rr, "state", &c))
                                                printf("  rule %s/%s: %s\n", json_object_get_string(a),
                                                       json_object_get_string(b), json_object_get_string(c));
                                }
                        if (dstatus && json_object_object_get_ex(dstatus, "daemon", &d)) {
                                json_object *v;
                                if (json_object_object_get_ex(d, "last_sample_cpu_usec", &v))
                                        printf("  last sample: %" PRId64 " us CPU\n", json_object_get_int64(v));
                        }
                } else
                        printf("pcptuned: not running (state directory %s)\n", o->state_dir);
                printf("\n");
                report_print(stdout, &in);
                if (pid > 0)
                        printf("(rule states above are a fresh evaluation: `for` durations start now; the "
                               "daemon's are listed at the top)\n");
        }
        json_object_put(dstatus);
        return r < 0 ? 1 : 0;
}

static int cmd_validate(const CtlOptions *o, char **paths) {
        _cleanup_(policy_set_freep) PolicySet *set = NULL;
        _cleanup_(diagnostics_done) Diagnostics diag = { 0 };
        int r;

        if (!paths[0]) {
                fprintf(stderr, "pcptunectl validate: needs at least one file or directory\n");
                return 2;
        }
        r = policy_set_load_paths(paths, !o->no_owner_check, &set, &diag);
        for (size_t i = 0; i < diag.n_errors; i++)
                printf("%s\n", diag.errors[i]);
        for (size_t i = 0; i < diag.n_warnings; i++)
                printf("%s\n", diag.warnings[i]);
        if (r < 0 || diag.n_errors > 0) {
                printf("%zu error(s), %zu warning(s)\n", diag.n_errors, diag.n_warnings);
                return 1;
        }
        size_t rules = 0;
        for (size_t i = 0; i < set->n_policies; i++)
                rules += set->policies[i]->n_rules;
        printf("%zu polic%s, %zu rule%s: OK (%zu warning(s))\n", set->n_policies, set->n_policies == 1 ? "y" : "ies",
               rules, rules == 1 ? "" : "s", diag.n_warnings);
        return 0;
}

static int cmd_restore(const CtlOptions *o) {
        _cleanup_(journal_freep) Journal *j = NULL;
        int pid, r;

        pid = daemon_pid(o->state_dir);
        if (pid > 0) {
                log_error("pcptuned (pid %d) is running with %s: stop it instead (it restores on stop)", pid,
                          o->state_dir);
                return 1;
        }
        r = journal_load(o->state_dir, &j);
        if (r == -ENOENT) {
                printf("No restore journal in %s: nothing to restore\n", o->state_dir);
                return 0;
        }
        if (r < 0)
                return log_error_errno(r, "Failed to read the restore journal in %s: %s", o->state_dir, errno_str(r)), 1;
        r = journal_restore(j, j->root, "pcptunectl restore");
        if (r < 0)
                return 1;
        printf("Restored %d knob%s\n", r, r == 1 ? "" : "s");
        return 0;
}

static int cmd_resume(const CtlOptions *o, char **args) {
        _cleanup_(freep) char *path = NULL;
        _cleanup_(closep) int fd = -EBADF;
        int pid;

        if (!args[0] || args[1]) {
                fprintf(stderr, "pcptunectl resume: needs exactly one knob, e.g. %s\n", SYSCTL_PCP_HIGH_FRACTION);
                return 2;
        }
        if (!streq(args[0], SYSCTL_PCP_HIGH_FRACTION)) {
                log_error("Unknown knob '%s': pcptuned manages %s", args[0], SYSCTL_PCP_HIGH_FRACTION);
                return 1;
        }
        pid = daemon_pid(o->state_dir);
        if (pid <= 0) {
                log_error("pcptuned is not running with state directory %s", o->state_dir);
                return 1;
        }
        if (asprintf(&path, "%s/resume-%s", o->state_dir, args[0]) < 0)
                return log_oom(), 1;
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return log_error_errno(errno, "Failed to create %s: %m", path), 1;
        if (kill(pid, SIGUSR1) < 0)
                return log_error_errno(errno, "Failed to signal pcptuned (pid %d): %m", pid), 1;
        printf("Asked pcptuned (pid %d) to manage %s again\n", pid, args[0]);
        return 0;
}

int main(int argc, char **argv) {
        enum { OPT_VERSION = 0x100, OPT_JSON, OPT_NO_OWNER };
        static const struct option options[] = {
                { "root", required_argument, NULL, 'r' },
                { "state-dir", required_argument, NULL, 's' },
                { "policy-dir", required_argument, NULL, 'p' },
                { "json", no_argument, NULL, OPT_JSON },
                { "no-owner-check", no_argument, NULL, OPT_NO_OWNER },
                { "version", no_argument, NULL, OPT_VERSION },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        CtlOptions o = { .root = "/", .state_dir = STATE_DIR_DEFAULT };
        int c;

        log_setup("pcptunectl", LOG_TARGET_STDERR, LOG_INFO);
        /* GNU getopt permutes: options may come before or after the command. */
        while ((c = getopt_long(argc, argv, "r:s:p:h", options, NULL)) >= 0) {
                switch (c) {
                case 'r':
                        o.root = optarg;
                        break;
                case 's':
                        o.state_dir = optarg;
                        break;
                case 'p':
                        o.policy_dir = optarg;
                        break;
                case OPT_JSON:
                        o.json = true;
                        break;
                case OPT_NO_OWNER:
                        o.no_owner_check = true;
                        break;
                case OPT_VERSION:
                        printf("pcptunectl %s\n", PACKAGE_VERSION);
                        return 0;
                case 'h':
                        help();
                        return 0;
                default:
                        return 2;
                }
        }
        if (optind >= argc) {
                help();
                return 2;
        }
        const char *cmd = argv[optind];
        char **args = argv + optind + 1;

        if (streq(cmd, "status"))
                return cmd_status(&o);
        if (streq(cmd, "validate"))
                return cmd_validate(&o, args);
        if (streq(cmd, "restore"))
                return cmd_restore(&o);
        if (streq(cmd, "resume"))
                return cmd_resume(&o, args);
        fprintf(stderr, "pcptunectl: unknown command '%s' (see --help)\n", cmd);
        return 2;
}
