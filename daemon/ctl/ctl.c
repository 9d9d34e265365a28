/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcptunectl: inspect and steer pcptuned.
 *   status     what the kernel shows, what the policies decide, what the daemon manages
 *   validate   check policy files or directories
 *   restore    put back the values of a restore journal by hand
 *   resume     hand a knob the administrator took back to the daemon
 *   liveness   is the daemon still sampling (a container's liveness probe)
 *   check      the node's verdict for node-problem-detector (health.h)
 */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <systemd/sd-journal.h>
#include <time.h>

#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>

#include "act-sysctl.h"
#include "capture.h"
#include "cycle.h"
#include "calibration.h"
#include "health.h"
#include "journal.h"
#include "knob-lock.h"
#include "messages.h"
#include "model-wmark.h"
#include "plan.h"
#include "probe-kernel.h"
#include "probe-percpu.h"
#include "reclaim-watch.h"
#include "repair.h"
#include "log.h"
#include "manager.h"
#include "metrics.h"
#include "policy-eval.h"
#include "policy.h"
#include "report.h"
#include "snapshot.h"
#include "source-table.h"
#include "view.h"

typedef struct CtlOptions {
        const char *root;
        const char *state_dir;
        const char *policy_dir;
        bool json;
        bool verbose;                /* status, plan: each kernel probe's evidence */
        bool csv;
        bool no_owner_check;
        bool force;
        const char *output;
        PlanOptions plan;
        const char *shape;
        char *managed[64];
        size_t n_managed;
        unsigned measure;            /* --measure[=N]: memcgs to create */
        usec_t max_age_usec;         /* liveness --max-age (0: from the daemon's interval) */
        const char *calibration_dir; /* where pcptuned keeps calibration.json */
        bool calibration_dir_given;  /* --calibration-dir: use it for a snapshot or a shape too */
        const char *since, *until;   /* history */
        const char *directory;       /* history: journal files here (journalctl -D) */
        const char *archive;         /* status: the snapshot .tar.gz that root is unpacked from */
} CtlOptions;

/* The commands, as --help lists them: name, usage after the name, description lines (indented 25). */
static const struct CtlCommandHelp {
        const char *name;
        const char *args;
        const char *text;
} ctl_commands[] = {
        { "status", "", "kernel state, policy decisions and what pcptuned\n"
                        "manages; why each rule is or is not acting, each\n"
                        "knob's last change" },
        { "validate", " PATH...", "check policy files or directories (exit 1 on any\n"
                                  "error)" },
        { "restore", "", "restore the values recorded in the restore journal" },
        { "resume", " KNOB", "manage KNOB again after an administrator changed it" },
        { "plan", "", "pcp lists and percpu memory for this host, a\n"
                      "snapshot, a fleet of snapshots or a hypothetical\n"
                      "shape, exactly as the kernel computes" },
        { "snapshot", " -o DIR|F.tar.gz", "capture what plan needs from this host (or --root)" },
        { "repair", "", "compare pagesets with the model; if they differ,\n"
                        "recompute them (writes the pcp sysctl)" },
        { "liveness", "", "exit 0 if pcptuned sampled within --max-age (a\n"
                          "liveness probe)" },
        { "history", "", "what pcptuned changed, restored, backed off from,\n"
                         "reclaimed and reloaded, from the journal" },
        { "check", "", "the node's verdict in one line: exit 0 OK, 1\n"
                       "problem, 2 unknown (node-problem-detector's\n"
                       "codes; docs/health.md)" },
};

/*
 * The options, as --help lists them (the lines as printed, at most 80 columns: descriptions from column 26;
 * "%s" takes the default), and the commands that use each (space-separated; NULL: every command).
 * `pcptunectl COMMAND --help` lists that command's.
 */
static const struct CtlOptionHelp {
        const char *commands;
        const char *text;
} ctl_options[] = {
        { "status restore plan snapshot repair",
          "  -r, --root DIR         kernel files below DIR (default /); for plan and\n"
          "                         status also a snapshot .tar.gz, for plan a\n"
          "                         directory of snapshots (one table for the fleet)" },
        { "status restore resume plan repair liveness check",
          "  -s, --state-dir DIR    pcptuned's state directory (default " STATE_DIR_DEFAULT ";\n"
          "                         plan keeps a measured memcg cost there)" },
        { "status plan", "  -p, --policy-dir DIR   policies (status, plan; default as pcptuned)" },
        { "status plan history", "      --json             JSON output (status, plan, history)" },
        { "status plan", "  -v, --verbose          status, plan: each kernel probe's evidence and what\n"
                         "                         pcptune does differently (one line each without)" },
        { "plan", "      --csv              plan: one CSV table (the default for a fleet)" },
        { "plan", "  -f, --fraction F       plan: also evaluate this fraction (repeatable)" },
        { "plan", "      --shape SPEC       plan: cpus=N,memory=SIZE[,nodes=K][,kernel=X.Y]\n"
                  "                         [,possible=N][,thp=on|off][,page=4KiB][,wsf=10]\n"
                  "                         [,min_free_kbytes=K]: a hypothetical host (nodes 1\n"
                  "                         and kernel 6.12 unless given)" },
        { "plan", "      --managed N:ZONE=PAGES\n"
                  "                         plan --shape: managed pages of a zone (exact input)" },
        { "plan", "      --containers N     plan: percpu projection for N containers" },
        { "plan", "      --memcgs-per-container M\n"
                  "                         plan: memcgs per container (default 1)" },
        { "plan", "      --measure[=N]      plan: measure the percpu cost of a memcg here by\n"
                  "                         creating and removing N (default 200) empty memcgs\n"
                  "                         (root only)" },
        { "snapshot", "  -o, --output PATH      snapshot: directory or .tar.gz to write" },
        { "repair", "      --force            repair: recompute even when the pagesets match" },
        { "liveness", "      --max-age DURATION liveness: the oldest last sample that counts as\n"
                      "                         alive (default: 3 of the daemon's sampling\n"
                      "                         intervals, at least 30s)" },
        { "plan", "      --latency TIME     plan: the fraction whose predicted p99 bulk-free\n"
                  "                         hold meets TIME" },
        { "plan", "      --ns-per-page N    plan: bulk-free time per page (a calibration by hand)" },
        { "plan", "      --calibration-dir DIR\n"
                  "                         where pcptuned keeps calibration.json\n"
                  "                         (default " CALIBRATION_DIR_DEFAULT ")" },
        { "history", "      --since TIME       history: from TIME (2026-12-01, 2026-12-01\n"
                     "                         15:04:05 UTC, now, or a time ago: 7d, 1h)" },
        { "history", "      --until TIME       history: up to TIME (same forms)" },
        { "history", "  -D, --directory DIR    history: read the journal files in DIR (as\n"
                     "                         journalctl -D)" },
        { "status validate plan", "      --no-owner-check   do not require root-owned, non-writable policy files" },
        { NULL, "  -h, --help             this help (after a command: that command's options)" },
        { "", "      --version          print the version" },
};

static bool help_uses(const char *commands, const char *cmd) {
        size_t n = strlen(cmd);
        if (!commands)
                return true;
        for (const char *p = commands; (p = strstr(p, cmd)); p += n)
                if ((p == commands || p[-1] == ' ') && (p[n] == 0 || p[n] == ' '))
                        return true;
        return false;
}

/* `pcptunectl --help` (cmd NULL), or one command's usage and options.  Returns false for an unknown cmd. */
static bool help(const char *cmd) {
        const struct CtlCommandHelp *c = NULL;

        for (size_t i = 0; cmd && i < ELEMENTSOF(ctl_commands); i++)
                if (streq(ctl_commands[i].name, cmd))
                        c = &ctl_commands[i];
        if (cmd && !c)
                return false;
        if (c)
                printf("Usage: pcptunectl [OPTIONS] %s%s\n\n", c->name, c->args);
        else
                printf("Usage: pcptunectl [OPTIONS] COMMAND [ARGS]\n\n");
        printf("Commands:\n");
        for (size_t i = 0; i < ELEMENTSOF(ctl_commands); i++)
                if (!c || c == &ctl_commands[i]) {
                        /* continuation lines of the description start at column 25 */
                        char head[64];
                        const char *t = ctl_commands[i].text, *nl;
                        snprintf(head, sizeof head, "  %s%s", ctl_commands[i].name, ctl_commands[i].args);
                        /* a head that reaches column 25 gets a line of its own */
                        if (strlen(head) < 24)
                                printf("%-24s ", head);
                        else
                                printf("%s\n%25s", head, "");
                        while ((nl = strchr(t, '\n'))) {
                                printf("%.*s\n%25s", (int) (nl - t), t, "");
                                t = nl + 1;
                        }
                        printf("%s\n", t);
                }
        printf("\nOptions:\n");
        for (size_t i = 0; i < ELEMENTSOF(ctl_options); i++)
                if (!c || help_uses(ctl_options[i].commands, c->name))
                        printf("%s\n", ctl_options[i].text);
        if (c)
                printf("\n(pcptunectl --help lists every command; pcptunectl(8) says more)\n");
        return true;
}

/* Is a daemon holding the root's lock?  Returns its pid, 0 if none, -errno. */
static int daemon_pid(const CtlOptions *o) {
        return manager_lock_owner(o->root, NULL);
}

/*
 * The running daemon's status file for root (manager_status_name()), read back like any input:
 * root's or our own, not writable by others, not a symlink or a FIFO (trusted_file_read()), and
 * a JSON object.  NULL otherwise (the reason logged at debug level).
 */
static json_object *read_daemon_status(const char *state_dir, const char *root) {
        _cleanup_(freep) char *path = NULL, *text = NULL;
        char name[STATUS_NAME_MAX], err[512] = "";
        json_object *o;
        size_t len;
        int r;

        if (asprintf(&path, "%s/%s", state_dir, manager_status_name(root, name)) < 0)
                return NULL;
        r = trusted_file_read(path, 16 * 1024 * 1024, &text, &len, err, sizeof err);
        if (r < 0) {
                log_debug_errno(r, "Not reading %s: %s", path, *err ? err : errno_str(r));
                return NULL;
        }
        o = json_tokener_parse(text);
        if (o && !json_object_is_type(o, json_type_object)) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

/* One knob's state from the daemon's status file, read back like any input. */
static void status_knob_from_json(json_object *o, KnobState *k) {
        json_object *v, *lc, *lt;

        if (json_object_object_get_ex(o, "managed", &v) && json_object_is_type(v, json_type_boolean))
                k->managed = json_object_get_boolean(v);
        if (json_object_object_get_ex(o, "original", &v) && json_object_is_type(v, json_type_int) &&
            knob_value_valid(k->desc, json_object_get_int64(v)))
                k->original = json_object_get_int64(v);
        if (json_object_object_get_ex(o, "written", &v) && json_object_is_type(v, json_type_int) &&
            knob_value_valid(k->desc, json_object_get_int64(v)))
                k->written = json_object_get_int64(v);
        if (json_object_object_get_ex(o, "admin_override", &v) && json_object_is_type(v, json_type_boolean))
                k->admin_override = json_object_get_boolean(v);
        /* The daemon's last change of the knob. */
        if (json_object_object_get_ex(o, "last_change", &lc) && json_object_is_type(lc, json_type_string) &&
            json_object_object_get_ex(o, "last_change_usec", &lt) && json_object_is_type(lt, json_type_int) &&
            json_object_get_int64(lt) > 0) {
                snprintf(k->last_change, sizeof k->last_change, "%s", json_object_get_string(lc));
                k->last_change_usec = (usec_t) json_object_get_int64(lt);
        }
}

/*
 * Every row of the knob table as status shows it: what each managed knob holds in the snapshot s (the
 * knobs source row read them with the rest of the sample), and from
 * the daemon's status file (NULL: none) who manages it and its last change.  Names in the file are only
 * looked up in the table ("knobs"; "knob", the pcp knob, from a daemon that wrote no "knobs").
 */
static void status_knobs(const Snapshot *s, json_object *dstatus, KnobState ret[_KNOB_ID_MAX]) {
        json_object *arr, *one, *name;

        for (KnobId id = 0; id < _KNOB_ID_MAX; id++) {
                ret[id] = (KnobState){ .desc = knob_desc(id) };
                if (knob_managed(ret[id].desc))
                        ret[id].present = snapshot_knob_value(s, id, &ret[id].value) >= 0;
                ret[id].admin_value = ret[id].value;
        }
        if (!dstatus)
                return;
        if (json_object_object_get_ex(dstatus, "knobs", &arr) && json_object_is_type(arr, json_type_array)) {
                for (size_t i = 0; i < json_object_array_length(arr); i++) {
                        one = json_object_array_get_idx(arr, i);
                        const KnobDesc *d = json_object_object_get_ex(one, "name", &name)
                                                    ? knob_desc_by_name(json_object_get_string(name))
                                                    : NULL;
                        if (knob_managed(d))
                                status_knob_from_json(one, &ret[d->id]);
                }
        } else if (json_object_object_get_ex(dstatus, "knob", &one))
                status_knob_from_json(one, &ret[KNOB_PCP_HIGH_FRACTION]);
}

/* What only the daemon knows of the kernel's features, from its status file: fraction -1, memory.reclaim's arguments. */
static void status_daemon_features(json_object *dstatus, ActLearned *feat) {
        json_object *contrib_o, *ff, *reclaim_o, *ra, *ans;

        if (!dstatus)
                return;
        if (json_object_object_get_ex(dstatus, "contrib", &contrib_o) &&
            json_object_object_get_ex(contrib_o, "fraction_floor", &ff)) {
                /* Only the daemon knows, from having written -1. */
                const char *v = json_object_get_string(ff);
                if (streq(v, "yes") || streq(v, "no"))
                        feat->fraction_floor = streq(v, "yes") ? FEATURE_PRESENT : FEATURE_ABSENT;
        }
        /* reclaim-dying: what the daemon's write told of memory.reclaim. */
        if (json_object_object_get_ex(dstatus, "reclaim", &reclaim_o) &&
            json_object_object_get_ex(reclaim_o, "memory_reclaim_args", &ra) &&
            json_object_object_get_ex(ra, "accepts", &ans) && json_object_get_string(ans)) {
                const char *v = json_object_get_string(ans);
                if (streq(v, "swappiness") || streq(v, "bytes"))
                        feat->reclaim_swappiness = streq(v, "swappiness") ? FEATURE_PRESENT : FEATURE_ABSENT;
        }
        /* contrib 0004: whether the daemon's "0 scope=dying" was taken. */
        if (json_object_object_get_ex(dstatus, "reclaim", &reclaim_o) &&
            json_object_object_get_ex(reclaim_o, "memory_reclaim_args", &ra) &&
            json_object_object_get_ex(ra, "scope_dying", &ans) && json_object_get_string(ans)) {
                const char *v = json_object_get_string(ans);
                if (streq(v, "yes") || streq(v, "no"))
                        feat->reclaim_scope_dying = streq(v, "yes") ? FEATURE_PRESENT : FEATURE_ABSENT;
        }
}

/*
 * The "daemon" object of `status --json`: {"running", "pid", "state_dir", "status", "rules", "knob", "knobs"} from its
 * status file while it runs; else "restore_journal" (what a run that did not stop cleanly left) or
 * "restore_journal_error".
 */
static json_object *status_daemon_json(const CtlOptions *o, int pid, json_object *dstatus, const char *elsewhere) {
        json_object *d = json_object_new_object(), *v;

        if (!d)
                return NULL;
        json_object_object_add(d, "running", json_object_new_boolean(pid > 0));
        if (pid > 0)
                json_object_object_add(d, "pid", json_object_new_int(pid));
        json_object_object_add(d, "state_dir", json_object_new_string(o->state_dir));
        if (elsewhere)
                json_object_object_add(d, "daemon_state_dir", json_object_new_string(elsewhere));
        if (dstatus) {
                if (json_object_object_get_ex(dstatus, "daemon", &v))
                        json_object_object_add(d, "status", json_object_get(v));
                if (json_object_object_get_ex(dstatus, "rules", &v))
                        json_object_object_add(d, "rules", json_object_get(v));
                if (json_object_object_get_ex(dstatus, "knob", &v))
                        json_object_object_add(d, "knob", json_object_get(v));
                if (json_object_object_get_ex(dstatus, "knobs", &v))
                        json_object_object_add(d, "knobs", json_object_get(v));
        }
        if (pid <= 0) {
                _cleanup_(journal_freep) Journal *j = NULL;
                char err[512];
                int q = journal_load(o->state_dir, o->root, &j, err, sizeof err);
                if (q >= 0) {
                        json_object *a = json_object_new_array();
                        for (size_t i = 0; a && i < j->n_entries; i++) {
                                json_object *e = json_object_new_object();
                                json_object_object_add(e, "knob", json_object_new_string(j->entries[i].knob->name));
                                json_object_object_add(e, "original", json_object_new_int64(j->entries[i].original));
                                json_object_object_add(e, "written", json_object_new_int64(j->entries[i].written));
                                json_object_array_add(a, e);
                        }
                        json_object_object_add(d, "restore_journal", a);
                } else if (q != -ENOENT)
                        json_object_object_add(d, "restore_journal_error",
                                               json_object_new_string(*err ? err : errno_str(q)));
        }
        return d;
}

/* The text of the model's "daemon" object: running or not, what it manages, its rules' states and why. */
static void status_print_daemon(FILE *f, json_object *d) {
        if (!view_bool(d, "running")) {
                fprintf(f, "pcptuned: not running (state directory %s)\n", view_str(d, "state_dir", ""));
                for (size_t i = 0; i < view_len(d, "restore_journal"); i++) {
                        json_object *e = view_idx(d, "restore_journal", i);
                        fprintf(f, "  a restore journal from a run that did not stop cleanly holds %s: original %" PRId64
                                   ", written %" PRId64 "\n"
                                   "  (the next start restores it; `pcptunectl restore` does it now)\n",
                                view_str(e, "knob", ""), view_i64(e, "original", 0), view_i64(e, "written", 0));
                }
                if (view_has(d, "restore_journal_error"))
                        fprintf(f, "  the restore journal in %s is refused: %s\n", view_str(d, "state_dir", ""),
                                view_str(d, "restore_journal_error", ""));
                return;
        }
        if (view_has(d, "daemon_state_dir")) {
                fprintf(f, "pcptuned: running (pid %" PRId64 ") with its state in %s, not in %s: what it manages and its "
                           "rules are there (pass --state-dir %s)\n",
                        view_i64(d, "pid", 0), view_str(d, "daemon_state_dir", ""), view_str(d, "state_dir", ""),
                        view_str(d, "daemon_state_dir", ""));
                return;
        }
        fprintf(f, "pcptuned: running (pid %" PRId64 "), state in %s\n", view_i64(d, "pid", 0), view_str(d, "state_dir", ""));
        bool any = false;
        for (size_t i = 0; i < view_len(d, "knobs"); i++) {
                json_object *k = view_idx(d, "knobs", i);
                if (view_bool(k, "managed"))
                        fprintf(f, "  manages %s: original %" PRId64 ", written %" PRId64 "\n", view_str(k, "name", ""),
                                view_i64(k, "original", 0), view_i64(k, "written", 0));
                else if (view_bool(k, "admin_override"))
                        fprintf(f, "  %s: changed by an administrator, not managed\n", view_str(k, "name", ""));
                any = any || view_bool(k, "managed") || view_bool(k, "admin_override");
        }
        if (!any)
                fprintf(f, "  manages nothing at the moment\n");
        for (size_t i = 0; i < view_len(d, "rules"); i++) {
                json_object *rr = view_idx(d, "rules", i);
                if (!view_has(rr, "policy") || !view_has(rr, "rule") || !view_has(rr, "state"))
                        continue;
                fprintf(f, "  rule %s/%s: %s\n", view_str(rr, "policy", ""), view_str(rr, "rule", ""),
                        view_str(rr, "state", ""));
                /* Why, as the daemon evaluated it (its `for` histories and cooldowns). */
                if (view_str(rr, "why", NULL))
                        print_wrapped(f, "    why: ", 9, view_str(rr, "why", ""));
        }
        if (view_has(d, "status.last_sample_cpu_usec"))
                fprintf(f, "  last sample: %" PRId64 " us CPU\n", view_i64(d, "status.last_sample_cpu_usec", 0));
}

/* `pcptunectl status`: the model (one cycle, cycle.h, as pcptuned runs it), then --json prints it or the text
 * renders it. */
static int cmd_status(const CtlOptions *o) {
        _cleanup_(cycle_done) Cycle c = { 0 };
        _cleanup_(policy_set_freep) PolicySet *set = NULL;
        _cleanup_(diagnostics_done) Diagnostics diag = { 0 };
        _cleanup_(eval_state_freep) EvalState *st = eval_state_new();
        Snapshot *s = NULL;
        json_object *dstatus = NULL, *out, *v;
        int pid, r;

        SnapshotError serr = { 0 };
        char ebuf[768];
        r = snapshot_take_explain(o->root, NULL, 0, &s, &serr);
        if (r < 0)
                return log_error_errno(r, "Failed to read the kernel's memory state below %s: %s", o->root,
                                       snapshot_error_format(o->root, &serr, r, ebuf, sizeof ebuf)),
                       1;
        cycle_observe(&c, s);

        /* Evaluate the policies the running daemon uses, unless told otherwise. */
        /* A daemon started with another --state-dir: its status file is not ours to read. */
        _cleanup_(freep) char *their_dir = NULL, *our_dir = NULL;
        pid = manager_lock_owner(o->root, &their_dir);
        if (pid > 0 && their_dir && (our_dir = realpath(o->state_dir, NULL)) && streq(our_dir, their_dir)) {
                free(their_dir);
                their_dir = NULL;
        }
        if (pid > 0 && !their_dir)
                dstatus = read_daemon_status(o->state_dir, o->root);
        const char *policy_dir = o->policy_dir, *src = view_str(dstatus, "daemon.policy_source", NULL);
        if (!policy_dir && src && src[0] == '/')
                policy_dir = src;
        r = policy_set_load_default(policy_dir, !o->no_owner_check, &set, &diag);
        for (size_t i = 0; i < diag.n_errors; i++)
                log_error("%s", diag.errors[i]);
        /* What the daemon learned by acting (its status file), over what the root declares. */
        KernelFeatures declared;
        ActLearned learned = { FEATURE_UNKNOWN, FEATURE_UNKNOWN, FEATURE_UNKNOWN };
        kernel_features_declared(o->root, &declared);
        status_daemon_features(dstatus, &learned);
        cycle_probe(&c, o->root, &declared, &learned);
        /* bulk_free_p99 goals are solved with this host's calibration (a snapshot is not this host). */
        Calibration cal;
        if (st && streq(o->root, "/") && calibration_load(o->calibration_dir, &cal) >= 0)
                eval_state_set_ns_per_page(st, calibration_p99_ns_per_page(&cal));
        if (r >= 0 && st)
                (void) cycle_evaluate(&c, set, st, now_usec(CLOCK_MONOTONIC));
        KnobState knobs[_KNOB_ID_MAX];
        status_knobs(c.snap, dstatus, knobs);

        /* Bulk-free holds: only the daemon traces them; its status file is read back like any input. */
        BulkFreeView bulk = { .why = pid > 0 ? "pcptuned's status has no valid bulk_free" : "pcptuned is not running" };
        char bulk_why[256];
        json_object *bulk_o;
        if (dstatus && json_object_object_get_ex(dstatus, "bulk_free", &bulk_o) &&
            report_bulk_free_from_json(bulk_o, &bulk, bulk_why, sizeof bulk_why) < 0)
                bulk = (BulkFreeView){ .why = "pcptuned's status has an invalid bulk_free" };
        /* The per-memcg cost as pcptuned would take it (its running estimate aside). */
        MemcgCostMeasurement measured;
        PercpuStatsView pstats;
        s = c.snap;
        snapshot_memcg_cost(s, memcg_cost_measurement_load(o->state_dir, &measured) >= 0 ? &measured : NULL, 0, &c.cost);
        c.has_cost = true;
        percpu_stats_view_read(o->root, streq(o->root, "/"), s->has_memcg ? s->memcg.live + s->memcg.dying : 0,
                               s->topo.possible_cpus ?: s->topo.online_cpus, s->topo.page_size, &pstats);
        ReportInput in;
        cycle_report_input(&c, &in);
        in.set = set;
        in.decision = r >= 0 && c.evaluated ? &c.decision : NULL;
        in.knobs = knobs;
        in.pstats = &pstats;
        in.dry_run = true;
        in.bulk_free = &bulk;
        in.n_policy_errors = r < 0 ? MAX(diag.n_errors, (size_t) 1) : 0;
        in.policy_source = policy_dir ?: POLICY_DIR_DEFAULT;
        out = report_to_json(&in);
        if (!out) {
                json_object_put(dstatus);
                return log_oom(), 1;
        }
        json_object_object_add(out, "daemon", status_daemon_json(o, pid, dstatus, their_dir));
        if (o->archive) {
                /* What the figures are of: the archive, as of when it was written. */
                json_object *snap = json_object_new_object();
                struct stat ast;
                char ts[32];
                json_object_object_add(snap, "path", json_object_new_string(o->archive));
                json_object_object_add(snap, "written_time",
                                       stat(o->archive, &ast) >= 0
                                               ? json_object_new_string(format_timestamp_utc(
                                                         ts, sizeof ts, (usec_t) ast.st_mtime * USEC_PER_SEC))
                                               : NULL);
                json_object_object_add(out, "snapshot", snap);
        }
        /* reclaim-dying: the daemon's refault record. */
        if (dstatus && json_object_object_get_ex(dstatus, "reclaim", &v))
                json_object_object_add(out, "reclaim", json_object_get(v));
        json_object_put(dstatus);
        if (o->json)
                printf("%s\n", json_format(out, true));
        else {
                if (view_has(out, "snapshot"))
                        printf("snapshot %s (written %s): no pcptuned runs on an archive\n",
                               view_str(out, "snapshot.path", ""), view_str(out, "snapshot.written_time", "?"));
                else
                        status_print_daemon(stdout, view_get(out, "daemon"));
                printf("\n");
                report_print_view(stdout, out, o->verbose);
                reclaim_watch_print_json(stdout, view_get(out, "reclaim"));
                if (pid > 0 && set && view_len(view_get(out, "daemon"), "rules") > 0)
                        printf("(the rule states under policies are a fresh evaluation: `for` durations start now "
                               "and no cooldown runs; the daemon's are listed at the top)\n");
        }
        json_object_put(out);
        return r < 0 ? 1 : 0;
}

/* The pcptune fields of an entry (KNOB=, OLD=, POLICY=, RULE=, ...: upper-case names, no trusted "_" ones). */
static json_object *history_fields(sd_journal *j) {
        json_object *o = json_object_new_object();
        const void *data;
        size_t len;

        if (!o)
                return NULL;
        SD_JOURNAL_FOREACH_DATA(j, data, len) {
                const char *d = data, *eq = memchr(d, '=', len);
                char key[64];
                size_t kl;
                if (!eq || (kl = (size_t) (eq - d)) == 0 || kl >= sizeof key || d[0] == '_')
                        continue;
                memcpy(key, d, kl);
                key[kl] = 0;
                if (strspn(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != kl || streq(key, "MESSAGE") ||
                    streq(key, "MESSAGE_ID") || streq(key, "PRIORITY") || streq(key, "SYSLOG_IDENTIFIER") ||
                    strncmp(key, "CODE_", 5) == 0 || strncmp(key, "SYSLOG_", 7) == 0)
                        continue;
                json_object_object_add(o, key, json_object_new_string_len(eq + 1, (int) MIN(len - kl - 1, 4096UL)));
        }
        return o;
}

/* One field's value (the bytes after "NAME="), bounded, in buf; "" if absent. */
static const char *history_field(sd_journal *j, const char *name, char *buf, size_t size) {
        const void *data;
        size_t len, nl = strlen(name);
        buf[0] = 0;
        if (sd_journal_get_data(j, name, &data, &len) >= 0 && len > nl + 1)
                snprintf(buf, size, "%.*s", (int) MIN(len - nl - 1, (size_t) INT_MAX), (const char *) data + nl + 1);
        return buf;
}

/*
 * history: pcptuned's changes, restores, back-offs, reclaims and reloads, from the journal (sd-journal):
 * the local journal, or journal files in --directory, entries whose MESSAGE_ID is one of messages.h's, in
 * time order, between --since and --until.  Text: one line per entry; --json: a list of objects.
 */
static int cmd_history(const CtlOptions *o) {
        _cleanup_(sd_journal_closep) sd_journal *j = NULL;
        usec_t now = now_usec(CLOCK_REALTIME), since = 0, until = USEC_INFINITY;
        json_object *list = NULL;
        int r;

        static const char *const names[2] = { "--since", "--until" };
        const char *args[2] = { o->since, o->until };
        usec_t *points[2] = { &since, &until };
        for (size_t i = 0; i < 2; i++) {
                if (!args[i])
                        continue;
                r = parse_time_point(args[i], now, points[i]);
                if (r == -ERANGE) {
                        log_error("Invalid %s '%s': no such date or time (UTC)", names[i], args[i]);
                        return 2;
                }
                if (r < 0) {
                        log_error("Invalid %s '%s': a date (2026-12-01, 2026-12-01 15:04:05, UTC), now, or a time "
                                  "ago with its unit (7d, 12h)", names[i], args[i]);
                        return 2;
                }
        }
        if (since > until) {
                log_error("--since %s is later than --until %s: nothing can match", o->since, o->until);
                return 2;
        }
        r = o->directory ? sd_journal_open_directory(&j, o->directory, 0) : sd_journal_open(&j, SD_JOURNAL_LOCAL_ONLY);
        if (r < 0)
                return log_error_errno(r, "Failed to open the journal%s%s: %s", o->directory ? " in " : "",
                                       o->directory ?: "", errno_str(r)),
                       1;
        for (size_t i = 0; i < ELEMENTSOF(pcptune_messages); i++) {
                char m[64];
                snprintf(m, sizeof m, "MESSAGE_ID=%s", pcptune_messages[i].id);
                r = sd_journal_add_match(j, m, 0);
                if (r < 0)
                        return log_error_errno(r, "Failed to filter the journal: %s", errno_str(r)), 1;
        }
        r = since > 0 ? sd_journal_seek_realtime_usec(j, since) : sd_journal_seek_head(j);
        if (r < 0)
                return log_error_errno(r, "Failed to seek in the journal: %s", errno_str(r)), 1;
        if (o->json && !(list = json_object_new_array()))
                return log_oom(), 1;

        while ((r = sd_journal_next(j)) > 0) {
                uint64_t t;
                char id[64], msg[2048], ts[32];
                const char *kind = NULL;

                if (sd_journal_get_realtime_usec(j, &t) < 0 || t < since)
                        continue;
                if (t > until)
                        break;
                history_field(j, "MESSAGE_ID", id, sizeof id);
                for (size_t i = 0; i < ELEMENTSOF(pcptune_messages); i++)
                        if (streq(id, pcptune_messages[i].id))
                                kind = pcptune_messages[i].kind;
                if (!kind)
                        continue;
                history_field(j, "MESSAGE", msg, sizeof msg);
                format_timestamp_utc(ts, sizeof ts, t);
                if (list) {
                        json_object *e = json_object_new_object();
                        if (!e)
                                break;
                        json_add_schema_version(e);
                        json_object_object_add(e, "time", json_object_new_string(ts));
                        json_object_object_add(e, "time_usec", json_object_new_int64((int64_t) t));
                        json_object_object_add(e, "type", json_object_new_string(kind));
                        json_object_object_add(e, "message_id", json_object_new_string(id));
                        json_object_object_add(e, "message", json_object_new_string(msg));
                        json_object_object_add(e, "fields", history_fields(j));
                        json_object_array_add(list, e);
                } else
                        printf("%s  %-12s %s\n", ts, kind, msg);
        }
        if (r < 0)
                log_warning_errno(r, "Failed to read the journal: %s; the list stops here", errno_str(r));
        /* No journal file at all is not "no entries": say where pcptuned's history would be (stderr; the
         * output stays empty, or [], for scripts). */
        uint64_t bytes = 0;
        if (r >= 0 && sd_journal_get_usage(j, &bytes) >= 0 && bytes == 0) {
                if (o->directory)
                        log_warning("No journal files in %s: nothing to read", o->directory);
                else
                        log_warning("No journal files to read (/var/log/journal, /run/log/journal): journald "
                                    "does not run on this host, or this user may not read them (root, or the "
                                    "systemd-journal or adm group); a pcptuned run in the foreground logs to its "
                                    "stderr instead");
        }
        if (list) {
                printf("%s\n", json_object_array_length(list) == 0 ? "[]" : json_format(list, true));
                json_object_put(list);
        }
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
        /* On this host (or --root): a reclaim-dying rule that cgroup v1 leaves nothing to reclaim with. */
        MemcgCounts mc = { 0 };
        if (r >= 0 && set && memcg_counts_read(o->root, &mc) >= 0 && mc.mode == CGROUP_MEMORY_V1)
                for (size_t i = 0; i < set->n_policies; i++)
                        for (size_t k = 0; k < set->policies[i]->n_rules; k++) {
                                const Policy *p = set->policies[i];
                                const Rule *rl = &p->rules[k];
                                if (rl->action.kind != ACTION_RECLAIM_DYING ||
                                    rl->action.reclaim.force_empty != FORCE_EMPTY_NO ||
                                    rl->action.reclaim.drop_caches)
                                        continue;
                                diagnostics_warning(&diag,
                                                    "%s:%u:%u: rule '%s' can reclaim nothing on this host: its memory "
                                                    "controller is cgroup v1, which has no memory.reclaim; allow "
                                                    "force-empty: childless (or true), or drop-caches: true",
                                                    p->file, rl->line, rl->column, rl->name);
                        }
        memcg_counts_done(&mc);
        for (size_t i = 0; i < diag.n_errors; i++)
                printf("%s\n", diag.errors[i]);
        for (size_t i = 0; i < diag.n_warnings; i++)
                printf("%s\n", diag.warnings[i]);
        /* Out of memory (a small ulimit -v) reports nothing in diag: say it rather than "0 error(s)". */
        if (r < 0 && diag.n_errors == 0)
                return log_error_errno(r, "Failed to validate the policies: %s", errno_str(r)), 1;
        if (r < 0 || diag.n_errors > 0) {
                printf("%zu error(s), %zu warning(s)\n", diag.n_errors, diag.n_warnings);
                return 1;
        }
        size_t rules = 0, warnings = diag.n_warnings;
        if (set->n_policies == 0) { /* counted with the others, so the summary agrees with what was printed */
                printf("warning: no policies: a pcptuned using only these would change nothing\n");
                warnings++;
        }
        for (size_t i = 0; i < set->n_policies; i++)
                rules += set->policies[i]->n_rules;
        printf("%zu polic%s, %zu rule%s: OK (%zu warning(s))\n", set->n_policies, set->n_policies == 1 ? "y" : "ies",
               rules, rules == 1 ? "" : "s", warnings);
        return 0;
}

/*
 * Liveness: pcptuned rewrites <state>/status.json (status-<hash>.json for a --root other than /:
 * manager_status_name()) (atomically: a rename) after
 * every successful sample, so the file's age is the time since the last
 * sample.  A daemon that stopped sampling (its loop stuck, every read
 * failing) or is gone leaves an ageing file or none; --once writes none
 * (a dry run writes it too).  The limit is --max-age, else 3 of the sampling intervals the
 * file records (100 ms .. 24 h, checked), at least 30 s.  Exit 0 alive, 1 not.
 */
static int cmd_liveness(const CtlOptions *o) {
        _cleanup_(freep) char *path = NULL;
        json_object *status, *d, *v;
        usec_t interval = 0, limit, age = 0, now, mtime;
        char name[STATUS_NAME_MAX];
        struct stat st;

        if (asprintf(&path, "%s/%s", o->state_dir, manager_status_name(o->root, name)) < 0)
                return log_oom(), 1;
        if (stat(path, &st) < 0) {
                if (errno == ENOENT)
                        printf("pcptuned is not sampling: no %s (not started, or stopped)\n", path);
                else
                        printf("pcptuned is not sampling: cannot stat %s: %m\n", path);
                return 1;
        }
        status = read_daemon_status(o->state_dir, o->root);
        if (status && json_object_object_get_ex(status, "daemon", &d) &&
            json_object_object_get_ex(d, "interval_usec", &v) && json_object_is_type(v, json_type_int)) {
                int64_t i = json_object_get_int64(v);
                if (i >= (int64_t) (100 * USEC_PER_MSEC) && i <= (int64_t) (24 * 3600 * USEC_PER_SEC))
                        interval = (usec_t) i;
        }
        json_object_put(status);
        if (interval == 0 && o->max_age_usec == 0) {
                printf("pcptuned is not sampling: %s holds no valid sampling interval\n", path);
                return 1;
        }
        limit = o->max_age_usec ?: MAX(3 * interval, 30 * USEC_PER_SEC);
        now = now_usec(CLOCK_REALTIME);
        mtime = (usec_t) st.st_mtim.tv_sec * USEC_PER_SEC + (usec_t) st.st_mtim.tv_nsec / 1000;
        if (now > mtime) /* a clock stepped back makes the file look new, never old */
                age = now - mtime;
        if (age > limit) {
                printf("pcptuned is not sampling: its last sample was %.1f s ago (limit %.1f s)\n",
                       (double) age / USEC_PER_SEC, (double) limit / USEC_PER_SEC);
                return 1;
        }
        printf("pcptuned is sampling: last sample %.1f s ago (limit %.1f s)\n", (double) age / USEC_PER_SEC,
               (double) limit / USEC_PER_SEC);
        return 0;
}

/*
 * Take the root's daemon lock (manager_lock_path()) for a command that writes a knob, so that no
 * pcptuned starts on the root (and takes our value for its original) while we write.  Returns the
 * fd (>= 0) or -errno, logged.
 */
static int ctl_lock_root(const CtlOptions *o) {
        _cleanup_(freep) char *lockpath = NULL;
        _cleanup_(closep) int lock = -EBADF;
        int r;

        r = manager_lock_path(o->root, &lockpath);
        if (r >= 0) {
                char *slash = strrchr(lockpath, '/');
                *slash = 0;
                r = mkdir_p(lockpath, 0755);
                *slash = '/';
        }
        if (r >= 0 && (lock = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644)) < 0)
                r = negative_errno();
        if (r >= 0 && flock(lock, LOCK_EX | LOCK_NB) < 0)
                r = negative_errno();
        if (r == -EWOULDBLOCK)
                return log_error_errno(r, "pcptuned is running on root %s (lock %s): stop it instead (it restores on "
                                          "stop)",
                                       o->root, lockpath);
        if (r < 0)
                return log_error_errno(r, "Failed to lock %s: %s", strna(lockpath), errno_str(r));
        return TAKE_FD(lock);
}

/* The roots of the other journals in the state directory (restore-*.json, or a restore.json of another root). */
static void restore_hint_other_roots(const CtlOptions *o) {
        DIR *d = opendir(o->state_dir);
        char mine[JOURNAL_NAME_MAX], eroot[PATH_MAX];
        struct dirent *de;

        if (!d)
                return;
        journal_file_name(o->root, mine);
        while ((de = readdir(d))) {
                _cleanup_(freep) char *file = NULL;
                _cleanup_(journal_freep) Journal *j = NULL;
                size_t n = strlen(de->d_name);

                if (streq(de->d_name, mine) ||
                    (!streq(de->d_name, JOURNAL_FILE) &&
                     (strncmp(de->d_name, "restore-", 8) != 0 || n < 13 || !streq(de->d_name + n - 5, ".json"))))
                        continue;
                if (asprintf(&file, "%s/%s", o->state_dir, de->d_name) < 0 ||
                    journal_load_path(file, &j, NULL, 0) < 0 || streq(j->root, o->root))
                        continue;
                printf("  %s holds the journal of root %s (pass --root %s to restore it)\n", file,
                       str_escape(j->root, eroot, sizeof eroot), eroot);
        }
        closedir(d);
}

/* The node's verdict from the health file and the journal of the state directory (health_check_dir()). */
static int cmd_check(const CtlOptions *o) {
        char *dirs[] = { (char *) o->state_dir }, msg[640];
        HealthVerdict v = health_check_dirs(dirs, 1, (int64_t) (now_usec(CLOCK_REALTIME) / USEC_PER_SEC), msg,
                                            sizeof msg);
        printf("%s\n", msg);
        return (int) v;
}

static int cmd_restore(const CtlOptions *o) {
        _cleanup_(journal_freep) Journal *j = NULL;
        _cleanup_(closep) int lock = -EBADF;
        _cleanup_(knob_locks_release) KnobLocks knob_locks = KNOB_LOCKS_INIT;
        char err[512];
        int pid, r;

        /* The journal first: with none, a daemon running on this root has nothing to do with it (and the
         * answer does not depend on it).  Only this root's journal: the values are restored below --root
         * (default /), never below a root named by the file. */
        r = journal_load(o->state_dir, o->root, &j, err, sizeof err);
        if (r == -ENOENT) {
                printf("No restore journal for root %s in %s: nothing to restore\n", o->root, o->state_dir);
                restore_hint_other_roots(o);
                return 0;
        }
        if (r < 0)
                return log_error_errno(r, "Failed to read the restore journal in %s: %s", o->state_dir,
                                       *err ? err : errno_str(r)),
                       1;
        pid = daemon_pid(o);
        if (pid > 0) {
                log_error("pcptuned (pid %d) is running on root %s: stop it instead (it restores on stop)", pid,
                          o->root);
                return 1;
        }
        /* Hold the root's lock while writing: a daemon starting now would take our value for its original.
         * Read the journal again under it: a daemon that stopped meanwhile changed or removed it. */
        lock = ctl_lock_root(o);
        if (lock < 0)
                return 1;
        j = journal_free(j);
        r = journal_load(o->state_dir, o->root, &j, err, sizeof err);
        if (r == -ENOENT) {
                printf("No restore journal for root %s in %s: nothing to restore\n", o->root, o->state_dir);
                return 0;
        }
        if (r < 0)
                return log_error_errno(r, "Failed to read the restore journal in %s: %s", o->state_dir,
                                       *err ? err : errno_str(r)),
                       1;
        /* A daemon or a repair on this kernel from another root or mount namespace (knob-lock.h). */
        if (knob_locks_take(&knob_locks, o->root, "not restoring") < 0)
                return 1;
        r = journal_restore(j, o->root, "pcptunectl restore");
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
        const KnobDesc *k = knob_desc_by_name(args[0]);
        if (!knob_managed(k)) {
                char ename[128], names[256];
                log_error("Unknown knob '%s': pcptuned manages %s", str_escape(args[0], ename, sizeof ename),
                          knob_managed_names(names, sizeof names));
                return 1;
        }
        pid = daemon_pid(o);
        if (pid <= 0) {
                log_error("pcptuned is not running on root %s", o->root);
                return 1;
        }
        if (asprintf(&path, "%s/resume-%s", o->state_dir, k->name) < 0)
                return log_oom(), 1;
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
        if (fd < 0)
                return log_error_errno(errno, "Failed to create %s: %m", path), 1;
        if (kill(pid, SIGUSR1) < 0)
                return log_error_errno(errno, "Failed to signal pcptuned (pid %d): %m", pid), 1;
        printf("Asked pcptuned (pid %d) to manage %s again\n", pid, k->name);
        return 0;
}

static bool has_zoneinfo(const char *dir) {
        _cleanup_(freep) char *p = NULL;
        if (asprintf(&p, "%s/proc/zoneinfo", dir) < 0)
                return false;
        return access(p, R_OK) == 0;
}

static bool ends_with(const char *s, const char *suffix) {
        size_t a = strlen(s), b = strlen(suffix);
        return a >= b && streq(s + a - b, suffix);
}

static int rm_rf(const char *path) {
        char *const argv[] = { (char *) "rm", (char *) "-rf", (char *) path, NULL };
        pid_t pid = fork();
        int status;
        if (pid < 0)
                return negative_errno();
        if (pid == 0) {
                execvp("rm", argv);
                _exit(127);
        }
        if (waitpid(pid, &status, 0) < 0)
                return negative_errno();
        return 0;
}

/*
 * Model every zone at every fraction before printing anything, so a table is
 * printed whole or not at all, and say why a host cannot be modelled (a
 * fraction the kernel rejects, a zone without online CPUs).  0 or -EINVAL (logged).
 */
static int plan_check_model(const PlanHost *h, const PlanOptions *po) {
        int fr[PLAN_MAX_FRACTIONS];
        size_t nf = plan_fractions(h, po, fr, ELEMENTSOF(fr));

        for (size_t i = 0; i < h->n_zones; i++)
                for (size_t k = 0; k < nf; k++) {
                        const PcpZone *z = &h->zones[i];
                        PcpSetting set;
                        if (pcp_model_zone(h->regime, &z->in, h->page_size, fr[k], &set) >= 0)
                                continue;
                        return log_error_errno(EINVAL, "Cannot model %s: node %d zone %s at fraction %d: %s", h->label,
                                               z->node, z->name, fr[k],
                                               z->in.node_cpus == 0 && z->in.online_cpus == 0
                                                       ? "no online CPU on the host"
                                               : fr[k] > 0 && fr[k] < PCP_FRACTION_MIN
                                                       ? "the kernel rejects fractions 1-7 (the sysctl holds a value "
                                                         "no kernel accepts)"
                                                       : "inconsistent input (managed pages, low watermark or CPUs)");
                }
        return 0;
}

/* Plan one host read from a root tree; output according to the options. */
static int plan_one_root(const CtlOptions *o, const char *root, const char *label, bool csv_header,
                         json_object *fleet) {
        _cleanup_(snapshot_freep) Snapshot *s = NULL;
        PlanHost h;
        int r;

        SnapshotError serr = { 0 };
        char ebuf[768];
        r = snapshot_take_explain(root, NULL, 0, &s, &serr);
        if (r < 0)
                return log_error_errno(r, "Failed to read the kernel's state below %s: %s", root,
                                       snapshot_error_format(root, &serr, r, ebuf, sizeof ebuf));
        if (!s->has_knob && s->knob_error != -ENOENT)
                log_warning_errno(s->knob_error, "%s: the pcp sysctl (%s or %s) cannot be read: %s; planning without it",
                                  label, knob_desc(KNOB_PCP_HIGH_FRACTION)->path, knob_desc(KNOB_PCP_FRACTION)->path,
                                  s->knob_error == -EINVAL ? "it holds a value no kernel accepts"
                                                           : errno_str(s->knob_error));
        r = plan_host_from_snapshot(s, label, &h);
        if (r < 0)
                return log_oom();
        kernel_features_probe(root, s, &h.features);
        h.has_features = true;
        percpu_stats_view_read(root, streq(root, "/"), s->has_memcg ? s->memcg.live + s->memcg.dying : 0,
                               s->topo.possible_cpus ?: s->topo.online_cpus, s->topo.page_size, &h.pstats);
        h.has_pstats = true;
        kernel_probes_run(&(ProbeInput){ .root = root, .snap = s, .kernel = s->topo.kernel, .features = &h.features },
                          &h.probes);
        r = plan_check_model(&h, &o->plan);
        if (r < 0) {
                plan_host_done(&h);
                return r;
        }
        if (fleet)
                json_object_array_add(fleet, plan_to_json(&h, &o->plan));
        else if (o->csv)
                plan_print_csv(stdout, &h, &o->plan, csv_header);
        else if (o->json) {
                json_object *j = plan_to_json(&h, &o->plan);
                printf("%s\n", json_format(j, true));
                json_object_put(j);
        } else
                r = plan_print(stdout, &h, &o->plan);
        plan_host_done(&h);
        return r;
}

/* A directory of snapshots (subdirectories with proc/zoneinfo, or .tar.gz files): one table. */
static int plan_fleet(CtlOptions *o, const char *dir) {
        struct dirent **list = NULL;
        json_object *fleet = NULL;
        int n, hosts = 0, failed = 0;

        /* An exit status, never a negative errno (a missing --root exited 254). */
        n = scandir(dir, &list, NULL, alphasort);
        if (n < 0)
                return log_error_errno(errno, "Failed to read %s: %m (--root takes a root tree, a directory of "
                                              "snapshots or a .tar.gz)",
                                       dir),
                       1;
        fleet = o->json ? json_object_new_array() : NULL;
        o->csv = !o->json;
        for (int i = 0; i < n; i++) {
                const char *name = list[i]->d_name;
                _cleanup_(freep) char *path = NULL, *tmp = NULL;
                if (name[0] == '.' || asprintf(&path, "%s/%s", dir, name) < 0)
                        continue;
                if (ends_with(name, ".tar.gz")) {
                        tmp = strdup("/tmp/pcptune-plan.XXXXXX");
                        if (!tmp || !mkdtemp(tmp)) {
                                failed++;
                                continue;
                        }
                        if (tar_extract(path, tmp) < 0) {
                                log_error("Failed to unpack %s", path);
                                failed++;
                        } else {
                                char label[256];
                                snprintf(label, sizeof label, "%.*s", (int) (strlen(name) - 7), name);
                                if (plan_one_root(o, tmp, label, hosts == 0, fleet) < 0)
                                        failed++;
                                else
                                        hosts++;
                        }
                        rm_rf(tmp);
                } else if (has_zoneinfo(path)) {
                        if (plan_one_root(o, path, name, hosts == 0, fleet) < 0)
                                failed++;
                        else
                                hosts++;
                }
        }
        for (int i = 0; i < n; i++)
                free(list[i]);
        free(list);
        if (fleet) {
                /* {"schema_version", "hosts": [one plan object per snapshot, in name order]} */
                json_object *doc = json_object_new_object();
                if (!doc || json_add_schema_version(doc) < 0)
                        return json_object_put(doc), json_object_put(fleet), log_oom(), 1;
                json_object_object_add(doc, "hosts", fleet);
                printf("%s\n", json_format(doc, true));
                json_object_put(doc);
        }
        if (hosts == 0 && failed == 0) {
                log_error("%s holds no snapshot (directories with proc/zoneinfo, or .tar.gz files)", dir);
                return 1;
        }
        return failed > 0 ? 1 : 0;
}

/* The bulk-free calibration pcptuned keeps, read back like any input, into o->plan; how it was obtained (or why
 * there is none) in how. */
static void plan_load_calibration(CtlOptions *o, char *how, size_t size) {
        Calibration cal;
        int r = calibration_load(o->calibration_dir, &cal);

        if (r >= 0) {
                snprintf(how, size,
                         "%s/" CALIBRATION_FILE ": %s; fit %.1f +-%.1f ns (standard error), %.0f bulk frees "
                         "of %" PRIu64 "-%" PRIu64 " pages, kernel %s",
                         o->calibration_dir,
                         cal.ns_per_page_p99 > 0 ? "p99 of single bulk frees" : "the fit (no p99 rate yet)",
                         cal.ns_per_page, cal.ns_per_page_stderr, cal.n, cal.pages_min, cal.pages_max, cal.kernel);
                o->plan.ns_per_page = calibration_p99_ns_per_page(&cal);
        } else if (r == -ENOENT)
                snprintf(how, size,
                         "no %s/" CALIBRATION_FILE " (pcptuned writes it once it has measured bulk frees); "
                         "--ns-per-page N supplies one",
                         o->calibration_dir);
        else
                snprintf(how, size, "%s/" CALIBRATION_FILE " is unusable (%s), ignored", o->calibration_dir,
                         errno_str(r));
        o->plan.calibration_how = how;
}

/* plan --shape: a hypothetical host (--managed: exact managed pages of a zone).  An exit status. */
static int plan_shape(const CtlOptions *o) {
        _cleanup_(freep) char *err = NULL;
        HostShape shape;
        PlanHost h;
        int r;

        if (!streq(o->root, "/")) {
                log_error("--shape and --root exclude each other");
                return 2;
        }
        if (host_shape_parse(o->shape, &shape, &err) < 0) {
                log_error("Invalid --shape: %s", strna(err));
                return 2;
        }
        for (size_t i = 0; i < o->n_managed; i++) {
                free(err);
                err = NULL;
                if (host_shape_parse_managed(&shape, o->managed[i], &err) < 0) {
                        log_error("Invalid --managed: %s", strna(err));
                        return 2;
                }
        }
        r = plan_host_from_shape(&shape, &h);
        if (r < 0)
                return log_error_errno(r, "Failed to model the shape: %s", errno_str(r)), 1;
        if (o->json) {
                json_object *j = plan_to_json(&h, &o->plan);
                printf("%s\n", json_format(j, true));
                json_object_put(j);
        } else if (o->csv)
                plan_print_csv(stdout, &h, &o->plan, true);
        else
                plan_print(stdout, &h, &o->plan);
        plan_host_done(&h);
        return 0;
}

static int cmd_plan(CtlOptions *o) {
        _cleanup_(policy_set_freep) PolicySet *set = NULL;
        _cleanup_(diagnostics_done) Diagnostics diag = { 0 };
        _cleanup_(freep) char *how = NULL;
        MemcgCostMeasurement measured;
        int r;

        r = policy_set_load_default(o->policy_dir, !o->no_owner_check, &set, &diag);
        for (size_t i = 0; i < diag.n_errors; i++)
                log_error("%s", diag.errors[i]);
        if (r < 0 || diag.n_errors > 0)
                return 1;
        o->plan.policies = set;

        /* The host's calibration, unless one was given by hand.  It was measured on this host's CPUs and
         * kernel, so a snapshot or a shape gets it only when --calibration-dir names one on purpose. */
        char cal_how[512];
        if (!(o->plan.ns_per_page > 0) && !o->calibration_dir_given && (!streq(o->root, "/") || o->shape)) {
                snprintf(cal_how, sizeof cal_how,
                         "this host's calibration is not used for %s; --ns-per-page N or --calibration-dir DIR "
                         "supplies one",
                         o->shape ? "a shape" : "a snapshot");
                o->plan.calibration_how = cal_how;
        } else if (!(o->plan.ns_per_page > 0))
                plan_load_calibration(o, cal_how, sizeof cal_how);

        if (o->measure > 0) {
                _cleanup_(snapshot_freep) Snapshot *s = NULL;
                double bytes;
                if (!streq(o->root, "/") || o->shape) {
                        log_error("--measure works on the live host only");
                        return 2;
                }
                r = percpu_measure_memcg_cost(o->measure, &bytes, &how);
                if (r < 0)
                        return log_error_errno(r, "Failed to measure the percpu cost of a memcg: %s", errno_str(r)), 1;
                r = snapshot_take("/", &s);
                if (r < 0)
                        return log_error_errno(r, "Failed to read the kernel's state: %s", errno_str(r)), 1;
                measured = (MemcgCostMeasurement){ .possible_cpus = s->topo.possible_cpus ?: s->topo.online_cpus,
                                                   .nodes = snapshot_count_nodes(s), .bytes = bytes };
                snprintf(measured.kernel_release, sizeof measured.kernel_release, "%s", s->topo.kernel_release);
                snprintf(measured.how, sizeof measured.how, "%s", strna(how));
                /* status, plan and pcptuned use it from now on, for this kernel. */
                r = memcg_cost_measurement_save(o->state_dir, &measured);
                if (r < 0)
                        log_warning_errno(r, "Failed to keep the measurement in %s/" MEMCG_COST_FILE ": %s, ignoring",
                                          o->state_dir, errno_str(r));
                o->plan.measured = &measured;
        } else if (memcg_cost_measurement_load(o->state_dir, &measured) >= 0)
                o->plan.measured = &measured;

        if (o->shape)
                return plan_shape(o);
        if (o->n_managed > 0) {
                log_error("--managed needs --shape");
                return 2;
        }

        if (ends_with(o->root, ".tar.gz")) {
                _cleanup_(freep) char *tmp = strdup("/tmp/pcptune-plan.XXXXXX");
                if (!tmp || !mkdtemp(tmp))
                        return log_oom(), 1;
                r = tar_extract(o->root, tmp);
                if (r >= 0)
                        r = plan_one_root(o, tmp, o->root, true, NULL);
                else
                        log_error("Failed to unpack %s", o->root);
                rm_rf(tmp);
                return r < 0 ? 1 : 0;
        }
        if (!streq(o->root, "/") && !has_zoneinfo(o->root))
                return plan_fleet(o, o->root);
        return plan_one_root(o, o->root, streq(o->root, "/") ? "live" : o->root, true, NULL) < 0 ? 1 : 0;
}

static int cmd_snapshot(const CtlOptions *o) {
        _cleanup_(freep) char *tmp = NULL;
        const char *dest;
        int n;

        if (!o->output) {
                log_error("snapshot needs -o DIR or -o FILE.tar.gz");
                return 2;
        }
        if (ends_with(o->output, ".tar.gz")) {
                tmp = strdup("/tmp/pcptune-snapshot.XXXXXX");
                if (!tmp || !mkdtemp(tmp))
                        return log_oom(), 1;
                dest = tmp;
        } else
                dest = o->output;
        n = capture_snapshot(o->root, dest);
        if (n >= 0 && tmp) {
                int r = tar_create(tmp, o->output);
                if (r < 0) {
                        log_error_errno(r, "Failed to write %s: %s", o->output, errno_str(r));
                        n = r;
                }
        }
        if (tmp)
                rm_rf(tmp);
        if (n < 0)
                return 1;
        printf("Captured %d files into %s (use it with pcptunectl plan --root %s)\n", n, o->output, o->output);
        return 0;
}

static int cmd_repair(const CtlOptions *o) {
        _cleanup_(snapshot_freep) Snapshot *s = NULL;
        _cleanup_(journal_freep) Journal *j = NULL;
        _cleanup_(closep) int lock = -EBADF;
        _cleanup_(knob_locks_release) KnobLocks knob_locks = KNOB_LOCKS_INIT;
        PagesetCheck c = { 0 }, after = { 0 };
        char err[512];
        int pid, r;

        SnapshotError serr = { 0 };
        char ebuf[768];
        r = snapshot_take_explain(o->root, NULL, 0, &s, &serr);
        if (r < 0)
                return log_error_errno(r, "Failed to read the kernel's state below %s: %s", o->root,
                                       snapshot_error_format(o->root, &serr, r, ebuf, sizeof ebuf)),
                       1;
        r = pageset_check(s, &c);
        if (r < 0)
                return log_error_errno(r, "Failed to compare the pagesets: %s", errno_str(r)), 1;
        printf("pagesets vs model at fraction %d: %zu of %zu values exact%s\n", c.fraction, c.exact, c.compared,
               c.batch_only ? " (batch only on 6.7-6.12)" : "");
        for (size_t i = 0; i < c.n_mismatches; i++)
                printf("  node %d %s cpu %d: %s %" PRId64 ", model %" PRId64 "\n", c.mismatches[i].node,
                       c.mismatches[i].zone, c.mismatches[i].cpu, pageset_field_to_string(c.mismatches[i].field),
                       c.mismatches[i].actual, c.mismatches[i].expected);
        bool needed = c.n_mismatches > 0;
        int64_t wanted = snapshot_pcp_value(s);
        pageset_check_done(&c);
        if (!needed && !o->force) {
                printf("Nothing to repair.\n");
                return 0;
        }

        /* The daemon owns the knob while it runs; take its lock so neither races the other. */
        pid = daemon_pid(o);
        if (pid > 0) {
                log_error("pcptuned (pid %d) manages the knob: give it a `repair: pagesets` rule instead", pid);
                return 1;
        }
        r = mkdir_p(o->state_dir, 0755);
        if (r < 0)
                return log_error_errno(r, "Failed to create the state directory %s: %s", o->state_dir, errno_str(r)), 1;
        lock = ctl_lock_root(o);
        if (lock < 0)
                return 1;
        if (knob_locks_take(&knob_locks, o->root, "not repairing") < 0)
                return 1;
        /* Extend the journal a run that did not stop cleanly left (its originals stay the ones restored),
         * never start an empty one over it; refuse one we cannot read. */
        r = journal_load(o->state_dir, o->root, &j, err, sizeof err);
        if (r == -ENOENT) {
                j = journal_new(o->state_dir, o->root);
                if (!j)
                        return log_oom(), 1;
        } else if (r < 0)
                return log_error_errno(r, "Failed to read the restore journal in %s: %s; refusing to repair over it "
                                          "(inspect it, then run `pcptunectl restore` or remove it)",
                                       o->state_dir, *err ? err : errno_str(r)),
                       1;
        else if (j->n_entries > 0)
                printf("the restore journal %s holds the originals of a run that did not stop cleanly: kept\n", j->file);
        r = pageset_repair(o->root, j, wanted, &after);
        if (r >= 0 || r == -EBADE)
                printf("after the repair: %zu of %zu values exact\n", after.exact, after.compared);
        pageset_check_done(&after);
        return r < 0 ? 1 : 0;
}

enum {
        OPT_VERSION = 0x100, OPT_JSON, OPT_NO_OWNER, OPT_CSV, OPT_SHAPE, OPT_MANAGED, OPT_CONTAINERS, OPT_MEMCGS,
        OPT_MEASURE, OPT_FORCE, OPT_MAX_AGE, OPT_LATENCY, OPT_NS_PER_PAGE, OPT_CALIBRATION_DIR, OPT_SINCE,
        OPT_UNTIL, OPT_DIRECTORY,
};

static const struct option ctl_long_options[] = {
        { "root", required_argument, NULL, 'r' },
        { "state-dir", required_argument, NULL, 's' },
        { "policy-dir", required_argument, NULL, 'p' },
        { "json", no_argument, NULL, OPT_JSON },
        { "verbose", no_argument, NULL, 'v' },
        { "csv", no_argument, NULL, OPT_CSV },
        { "fraction", required_argument, NULL, 'f' },
        { "shape", required_argument, NULL, OPT_SHAPE },
        { "managed", required_argument, NULL, OPT_MANAGED },
        { "containers", required_argument, NULL, OPT_CONTAINERS },
        { "memcgs-per-container", required_argument, NULL, OPT_MEMCGS },
        { "measure", optional_argument, NULL, OPT_MEASURE },
        { "output", required_argument, NULL, 'o' },
        { "force", no_argument, NULL, OPT_FORCE },
        { "max-age", required_argument, NULL, OPT_MAX_AGE },
        { "latency", required_argument, NULL, OPT_LATENCY },
        { "ns-per-page", required_argument, NULL, OPT_NS_PER_PAGE },
        { "calibration-dir", required_argument, NULL, OPT_CALIBRATION_DIR },
        { "since", required_argument, NULL, OPT_SINCE },
        { "until", required_argument, NULL, OPT_UNTIL },
        { "directory", required_argument, NULL, 'D' },
        { "no-owner-check", no_argument, NULL, OPT_NO_OWNER },
        { "version", no_argument, NULL, OPT_VERSION },
        { "help", no_argument, NULL, 'h' },
        {},
};

/* The options of `pcptunectl plan` (--fraction, --shape, --managed, counts, --measure, --latency, --ns-per-page).
 * 0, 1 if c is not one of them, 2 (the exit status) after logging an invalid value. */
static int parse_plan_option(CtlOptions *o, int c, char *arg) {
        uint64_t u;
        int64_t v;
        usec_t us;
        char *end;
        double d;

        switch (c) {
        case 'f':
                if (parse_int64(arg, &v) < 0 || v < 0 || (v > 0 && v < 8) || v > INT_MAX)
                        return log_error("Invalid --fraction '%s': 0 or 8..2147483647 (the kernel rejects 1-7)", arg), 2;
                if (o->plan.n_fractions >= PLAN_MAX_FRACTIONS - 1)
                        return log_error("Too many --fraction options"), 2;
                o->plan.fractions[o->plan.n_fractions++] = (int) v;
                return 0;
        case OPT_SHAPE:
                o->shape = arg;
                return 0;
        case OPT_MANAGED:
                if (o->n_managed >= ELEMENTSOF(o->managed))
                        return log_error("Too many --managed options"), 2;
                o->managed[o->n_managed++] = arg;
                return 0;
        case OPT_CONTAINERS:
        case OPT_MEMCGS:
                if (parse_uint64(arg, &u) < 0 || u == 0 || u > 100000000)
                        return log_error("Invalid count '%s'", arg), 2;
                if (c == OPT_CONTAINERS)
                        o->plan.containers = u;
                else
                        o->plan.memcgs_per_container = u;
                return 0;
        case OPT_MEASURE:
                o->measure = 200;
                if (arg && (parse_uint64(arg, &u) < 0 || u < 10 || u > 10000))
                        return log_error("Invalid --measure '%s': 10..10000 memcgs", arg), 2;
                if (arg)
                        o->measure = (unsigned) u;
                return 0;
        case OPT_LATENCY:
                if (parse_duration(arg, &us) < 0 || us == 0 || us > USEC_PER_SEC)
                        return log_error("Invalid --latency '%s': a time like 200us, up to 1s", arg), 2;
                o->plan.latency_ns = us * NSEC_PER_USEC;
                return 0;
        case OPT_NS_PER_PAGE:
                errno = 0;
                d = strtod(arg, &end);
                if (errno || end == arg || *end || !(d > 0) || d > CALIBRATION_MAX_NS_PER_PAGE)
                        return log_error("Invalid --ns-per-page '%s': a time per page in ns, above 0", arg), 2;
                o->plan.ns_per_page = d;
                o->plan.calibration_how = "given with --ns-per-page";
                return 0;
        case OPT_CALIBRATION_DIR:
                o->calibration_dir = arg;
                o->calibration_dir_given = true;
                return 0;
        default:
                return 1;
        }
}

/* One option of getopt_long(): 0, or the exit status (2 for an invalid one). */
static int parse_option(CtlOptions *o, int c, char *arg) {
        int r = parse_plan_option(o, c, arg);

        if (r != 1)
                return r;
        switch (c) {
        case 'r':
                o->root = arg;
                return 0;
        case 's':
                o->state_dir = arg;
                return 0;
        case 'p':
                o->policy_dir = arg;
                return 0;
        case OPT_JSON:
                o->json = true;
                return 0;
        case 'v':
                o->verbose = o->plan.verbose = true;
                return 0;
        case OPT_NO_OWNER:
                o->no_owner_check = true;
                return 0;
        case OPT_CSV:
                o->csv = true;
                return 0;
        case 'o':
                o->output = arg;
                return 0;
        case OPT_FORCE:
                o->force = true;
                return 0;
        case OPT_MAX_AGE:
                if (parse_duration(arg, &o->max_age_usec) < 0 || o->max_age_usec < USEC_PER_SEC ||
                    o->max_age_usec > 7 * 24 * 3600 * USEC_PER_SEC)
                        return log_error("Invalid --max-age '%s': 1s .. 7d (30s, 5m, 1h30m)", arg), 2;
                return 0;
        case OPT_SINCE:
                o->since = arg;
                return 0;
        case OPT_UNTIL:
                o->until = arg;
                return 0;
        case 'D':
                o->directory = arg;
                return 0;
        default:
                return 2;
        }
}

/* The commands that take no argument after their name. */
static int no_arguments(const char *cmd, char **args) {
        if (!args[0])
                return 0;
        fprintf(stderr, "pcptunectl %s: unexpected argument '%s'\n", cmd, args[0]);
        return 2;
}

static int run_command(CtlOptions *o, const char *cmd, char **args) {
        /* A snapshot archive: status reads it unpacked, as plan does (cmd_plan()); the commands that write
         * below the root or capture from it take a directory. */
        if (ends_with(o->root, ".tar.gz") && streq(cmd, "status")) {
                _cleanup_(freep) char *tmp = strdup("/tmp/pcptune-status.XXXXXX");
                const char *archive = o->root;
                if (!tmp || !mkdtemp(tmp))
                        return log_oom(), 1;
                int r = tar_extract(archive, tmp);
                if (r < 0) {
                        log_error("Failed to unpack %s: %s", archive, errno_str(r));
                        rm_rf(tmp);
                        return 1;
                }
                o->root = tmp;
                o->archive = archive;
                r = cmd_status(o);
                o->root = archive;
                o->archive = NULL;
                rm_rf(tmp);
                return r;
        }
        if (ends_with(o->root, ".tar.gz") && !streq(cmd, "plan") && !streq(cmd, "validate") &&
            !streq(cmd, "history")) {
                fprintf(stderr, "pcptunectl %s: --root %s is a snapshot archive, which only plan and status read; "
                                "%s needs a directory\n",
                        cmd, o->root, cmd);
                return 2;
        }
        if (streq(cmd, "status"))
                return cmd_status(o);
        if (streq(cmd, "validate"))
                return cmd_validate(o, args);
        if (streq(cmd, "history"))
                return no_arguments(cmd, args) ?: cmd_history(o);
        if (streq(cmd, "restore"))
                return cmd_restore(o);
        if (streq(cmd, "resume"))
                return cmd_resume(o, args);
        if (streq(cmd, "plan"))
                return no_arguments(cmd, args) ?: cmd_plan(o);
        if (streq(cmd, "snapshot"))
                return cmd_snapshot(o);
        if (streq(cmd, "repair"))
                return cmd_repair(o);
        if (streq(cmd, "liveness"))
                return no_arguments(cmd, args) ?: cmd_liveness(o);
        if (streq(cmd, "check"))
                return no_arguments(cmd, args) ?: cmd_check(o);
        fprintf(stderr, "pcptunectl: unknown command '%s' (see --help)\n", cmd);
        return 2;
}

int main(int argc, char **argv) {
        _cleanup_(freep) char *root = NULL;
        CtlOptions o = { .root = "/", .state_dir = STATE_DIR_DEFAULT, .calibration_dir = CALIBRATION_DIR_DEFAULT,
                         .plan = { .memcgs_per_container = 1 } };
        bool want_help = false;
        int c, r;

        log_setup("pcptunectl", LOG_TARGET_STDERR, LOG_INFO);
        /* GNU getopt permutes: options may come before or after the command. */
        while ((c = getopt_long(argc, argv, "r:s:p:f:o:D:vh", ctl_long_options, NULL)) >= 0) {
                if (c == OPT_VERSION) {
                        printf("pcptunectl %s\n", PACKAGE_VERSION);
                        return 0;
                }
                if (c == 'h') {
                        want_help = true;
                        continue;
                }
                r = parse_option(&o, c, optarg);
                if (r != 0)
                        return r;
        }
        if (want_help) {
                /* GNU getopt moved the command after the options: `plan --help` is plan's help. */
                if (optind < argc && !help(argv[optind])) {
                        fprintf(stderr, "pcptunectl: unknown command '%s' (see --help)\n", argv[optind]);
                        return 2;
                }
                if (optind >= argc)
                        help(NULL);
                return 0;
        }
        if (optind >= argc) {
                help(NULL);
                return 2;
        }
        /* "--root R" and "--root R/" are one root (the journal and the lock compare it). */
        if (path_normalize_root(o.root, &root) < 0)
                return log_oom(), 1;
        o.root = root;
        return run_command(&o, argv[optind], argv + optind + 1);
}
