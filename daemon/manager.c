/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "act-reclaim.h"
#include "act-sysctl.h"
#include "export-prom.h"
#include "calibration.h"
#include "model-percpu.h"
#include "journal.h"
#include "log.h"
#include "manager.h"
#include "messages.h"
#include "metrics.h"
#include "policy-eval.h"
#include "policy.h"
#include "probe-kernel.h"
#include "probe-percpu.h"
#include "reclaim-watch.h"
#include "repair.h"
#include "report.h"
#include "snapshot.h"
#include "source-table.h"
#include "source-bulkfree.h"
#include "source-percpu-stats.h"
#include "triggers.h"

#define STATUS_FILE "status.json"
#define RESUME_PREFIX "resume-"

/* Bulk-free tracing (see on_bulk_timer()). */
#define BULK_WINDOW_USEC (1 * USEC_PER_SEC)
#define BULK_PERIOD_DEFAULT_USEC (60 * USEC_PER_SEC)
#define BULK_PERIOD_MIN_USEC (5 * USEC_PER_SEC)      /* a storm restarts tracing at most this often */
#define BULK_KEEP_USEC (600 * USEC_PER_SEC)          /* the metrics' window */
#define BULK_WINDOW_CAPACITY 16384                   /* bulk frees kept (16 KiB x 12 B) */
/* Trace text per read: the kernel formats it inside read(), ~50 ms of CPU per MiB on the live host;
 * a storm is read every second, so a read is kept well under that. */
#define BULK_READ_MAX_BYTES ((size_t) 2 << 20)
#define BULK_BUFFER_TOTAL_KB 4096U
#define BULK_BUFFER_MIN_KB 128U
#define BULK_BUFFER_MAX_KB 1024U
#define BULK_COST_BUDGET 0.005                       /* reading: 0.5% of one CPU on average */
#define BULK_STORM_BUDGET 0.02                       /* 2% while tracing a storm continuously */

struct Manager {
        char *root;
        char *policy_dir;
        char *state_dir;
        usec_t interval_usec;
        bool dry_run;
        bool once;
        bool json;
        bool check_owner;
        FILE *report;
        char *metrics_dir;            /* NULL: no metrics */

        sd_event *event;
        sd_event_source *timer;
        sd_event_source *sig_term, *sig_int, *sig_hup, *sig_usr1;

        PolicySet *policies;
        EvalState *eval;
        Journal *journal;
        int lock_fd;

        Knob pcp_knob;
        bool knob_known;             /* the pcp knob exists and is writable (from the first snapshot) */
        Knob scale_knob;             /* vm.pcp_batch_scale_max (contrib patch 0002) */
        FeatureState floor_state;    /* does the kernel take -1 for the high fraction (contrib patch 0001)? */
        KernelFeatures declared;     /* what a root tree declares (read at start) */
        KernelFeatures features;     /* of the last sample */
        KernelProbes probes;         /* of the last sample (probe-kernel.h) */
        bool warned_readonly;
        bool warned_no_knob;
        unsigned act_failures;       /* writes that failed (--once exits 1 then) */

        char **warned_rules;         /* "policy/rule" already told about an unavailable metric */
        size_t n_warned_rules;

        /* What makes the daemon sample now instead of at its next tick (NULL without the loop). */
        Triggers *triggers;
        bool triggers_stale;              /* the policy set changed: update them at the next full sample */
        sd_event_source *inotify;         /* the policy directory (what it resolves to now) */
        dev_t inotify_dev;                /* ... whose inode is this one */
        ino_t inotify_ino;
        sd_event_source *inotify_parent;  /* the directory that holds it: a symlink retargeted, a directory replaced */
        char *policy_dir_name;            /* the last component of the policy directory's path */
        sd_event_source *reload_debounce;

        /* pcp bulk-free holds from a private trace instance (source-bulkfree.h), with a duty cycle. */
        BulkFreeSource *bulk;
        sd_event_source *bulk_timer;
        char bulk_why[256];               /* why pcp.bulk_free.* is unavailable */
        usec_t bulk_window_cost;          /* CPU spent reading in the current window */
        usec_t bulk_window_start;
        usec_t bulk_period_usec;          /* one BULK_WINDOW_USEC of tracing per period; 0: never */
        char *calibration_dir;
        bool calibration_dir_given;       /* --calibration-dir */
        bool cal_save_warned;
        Calibration cal;                  /* time per page, fitted from the measured bulk frees */
        bool cal_valid;                   /* cal holds a fit (loaded or made) */
        uint64_t cal_seen;                /* window records already added to cal */
        /* bulk_free_p99 goals: the time per page they are solved with, changed with hysteresis
         * (manager_goal_feedback()), and what the last sample decided. */
        double goal_ns;
        usec_t goal_ns_changed;
        usec_t goal_applied_at;           /* since when the knob holds the goal's fraction (0: not) */
        bool goal_active;
        PcpGoal goal;
        int goal_fraction;
        double goal_predicted_ns;
        Snapshot *prev;                   /* the last snapshot: costly sources are reused from it */
        unsigned zoneinfo_skips, memcg_skips;

        ReclaimWorker *reclaim;
        sd_event_source *followup;    /* one more look at dying/Percpu a few seconds after a reclaim */
        char *reclaim_label;          /* "policy/rule" of the running or last reclaim */
        uint64_t reclaim_dying_before, reclaim_percpu_before_kib;
        usec_t reclaim_started;
        usec_t reclaim_cooldown_usec;      /* of the rule of the running or last reclaim */
        ReclaimWatch watch;                /* refaults after each reclaim, the swappiness= probe */
        sd_event_source *refault_timer;    /* closes the refault window */
        char *watch_mount;                 /* the hierarchy the open window reads */
        CgroupMode watch_mode;
        bool args_probed;

        /* Percpu per memcg measured from live counts: growth of Percpu over growth of memcgs. */
        uint64_t est_prev_total, est_prev_percpu_kib;
        bool est_prev_valid;
        double est_cost_bytes;        /* 0 until measured */
        MemcgCostMeasurement measured; /* `pcptunectl plan --measure`, loaded at start and on reload */
        bool has_measured;

        /* percpu_stats holds pcpu_lock with IRQs off for the whole read (3 ms with 12k allocations):
         * read at most every PERCPU_STATS_MIN_INTERVAL, and stop when one read cost too much. */
        usec_t percpu_stats_last;
        usec_t percpu_stats_cost;

        bool ready_sent;
        usec_t last_sample_cpu_usec;
        char last_status[256];

        /* Prometheus metrics (export-prom.h): the textfile writer and what is counted across samples. */
        PromWriter *prom;
        int prom_error;               /* the last write error, logged once until a write succeeds */
        DaemonCounters counters;
        KnobCounters pcp_counts, scale_counts;
        bool has_pcp_target, has_scale_target; /* what the last sample's decision wanted the knobs to hold */
        int64_t pcp_target, scale_target;
};

static void manager_forget_warnings(Manager *m) {
        for (size_t i = 0; i < m->n_warned_rules; i++)
                free(m->warned_rules[i]);
        free(m->warned_rules);
        m->warned_rules = NULL;
        m->n_warned_rules = 0;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        reclaim_worker_stop(m->reclaim);
        triggers_free(m->triggers);
        sd_event_source_disable_unref(m->bulk_timer);
        bulk_free_source_free(m->bulk);
        sd_event_source_disable_unref(m->inotify);
        sd_event_source_disable_unref(m->inotify_parent);
        free(m->policy_dir_name);
        sd_event_source_disable_unref(m->reload_debounce);
        snapshot_free(m->prev);
        sd_event_source_disable_unref(m->followup);
        sd_event_source_disable_unref(m->refault_timer);
        reclaim_watch_done(&m->watch);
        free(m->watch_mount);
        free(m->reclaim_label);
        sd_event_source_unref(m->timer);
        sd_event_source_unref(m->sig_term);
        sd_event_source_unref(m->sig_int);
        sd_event_source_unref(m->sig_hup);
        sd_event_source_unref(m->sig_usr1);
        sd_event_unref(m->event);
        policy_set_free(m->policies);
        eval_state_free(m->eval);
        journal_free(m->journal);
        if (m->lock_fd >= 0)
                close(m->lock_fd);
        manager_forget_warnings(m);
        prom_writer_free(m->prom);
        free(m->metrics_dir);
        free(m->root);
        free(m->policy_dir);
        free(m->state_dir);
        free(m->calibration_dir);
        free(m);
        return NULL;
}

int manager_new(const ManagerConfig *cfg, Manager **ret) {
        _cleanup_(manager_freep) Manager *m = calloc(1, sizeof(Manager));

        if (!m)
                return -ENOMEM;
        m->lock_fd = -EBADF;
        if (path_normalize_root(cfg->root, &m->root) < 0)
                return -ENOMEM;
        m->state_dir = strdup(cfg->state_dir ?: STATE_DIR_DEFAULT);
        m->policy_dir = cfg->policy_dir ? strdup(cfg->policy_dir) : NULL;
        m->calibration_dir = strdup(cfg->calibration_dir ?: CALIBRATION_DIR_DEFAULT);
        m->calibration_dir_given = cfg->calibration_dir;
        m->eval = eval_state_new();
        if (!m->root || !m->state_dir || (cfg->policy_dir && !m->policy_dir) || !m->eval || !m->calibration_dir)
                return -ENOMEM;
        /* The default directory is the host's node_exporter's: only a daemon observing this host
         * (root "/") writes there; a fixture root writes only where --metrics-dir says. */
        if (!cfg->no_metrics && !cfg->once && (cfg->metrics_dir || streq(m->root, "/"))) {
                m->metrics_dir = strdup(cfg->metrics_dir ?: PROM_DIR_DEFAULT);
                if (!m->metrics_dir)
                        return -ENOMEM;
        }
        m->interval_usec = cfg->interval_usec ?: INTERVAL_DEFAULT_USEC;
        m->bulk_period_usec = cfg->bulk_free_period_usec == USEC_INFINITY ? 0
                              : cfg->bulk_free_period_usec ?: BULK_PERIOD_DEFAULT_USEC;
        m->dry_run = cfg->dry_run;
        m->once = cfg->once;
        m->json = cfg->json;
        m->check_owner = cfg->check_owner;
        m->report = cfg->report ?: stdout;
        snprintf(m->bulk_why, sizeof m->bulk_why, "%s",
                 cfg->once ? "measured by the running pcptuned only (not with --once)" : "not started");
        m->pcp_knob = (Knob){ .desc = knob_desc(KNOB_PCP_HIGH_FRACTION) };
        m->scale_knob = (Knob){ .desc = knob_desc(KNOB_PCP_BATCH_SCALE_MAX) };
        *ret = TAKE_PTR(m);
        return 0;
}

/* Log every diagnostic with CONFIG_FILE=/CONFIG_LINE= so `journalctl` can point at the file. */
static void log_diagnostics(const Diagnostics *d) {
        for (size_t pass = 0; pass < 2; pass++) {
                char **v = pass == 0 ? d->errors : d->warnings;
                size_t n = pass == 0 ? d->n_errors : d->n_warnings;
                for (size_t i = 0; i < n; i++) {
                        char ffile[PATH_MAX + 16] = "", fline[48] = "";
                        const char *fields[3] = { NULL, NULL, NULL };
                        const char *c1 = strchr(v[i], ':');
                        const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
                        if (c1 && c2) {
                                snprintf(ffile, sizeof ffile, "CONFIG_FILE=%.*s", (int) (c1 - v[i]), v[i]);
                                snprintf(fline, sizeof fline, "CONFIG_LINE=%.*s", (int) MIN(c2 - c1 - 1, 20L), c1 + 1);
                                fields[0] = ffile;
                                fields[1] = fline;
                        }
                        log_fields(pass == 0 ? LOG_ERR : LOG_WARNING, fields, "%s", v[i]);
                }
        }
}

/* Load the policy set; on success replace the running one.  Errors are logged. */
static int manager_load_policies(Manager *m, bool initial) {
        _cleanup_(policy_set_freep) PolicySet *set = NULL;
        _cleanup_(diagnostics_done) Diagnostics diag = { 0 };
        int r;

        /* A `plan --measure` result kept in the state directory, for status and the reclaim estimates. */
        m->has_measured = memcg_cost_measurement_load(m->state_dir, &m->measured) >= 0;

        r = policy_set_load_default(m->policy_dir, m->check_owner, &set, &diag);
        log_diagnostics(&diag);
        if (r < 0 && diag.n_errors == 0)
                log_error_errno(r, "Failed to load policies from %s: %s", m->policy_dir ?: POLICY_DIR_DEFAULT,
                                errno_str(r));
        if (r < 0 || diag.n_errors > 0) {
                if (r >= 0)
                        r = -EINVAL;
                if (initial)
                        return log_error_errno(r, "Failed to load policies from %s: %zu error(s)",
                                               m->policy_dir ?: POLICY_DIR_DEFAULT, diag.n_errors);
                size_t n = m->policies ? m->policies->n_policies : 0;
                return log_error_errno(r, "Failed to reload policies from %s: %zu error(s); keeping the %zu "
                                          "polic%s in use",
                                       m->policy_dir ?: POLICY_DIR_DEFAULT, diag.n_errors, n, n == 1 ? "y" : "ies");
        }

        char f_src[PATH_MAX + 16], f_n[48];
        snprintf(f_src, sizeof f_src, "POLICY_SOURCE=%s", strna(set->source));
        snprintf(f_n, sizeof f_n, "POLICIES=%zu", set->n_policies);
        const char *fields[] = { "MESSAGE_ID=" PCPTUNE_MESSAGE_RELOAD, f_src, f_n, NULL };
        /* Every load says "Loaded"; a reload also carries the history's MESSAGE_ID. */
        log_fields(m->once ? LOG_DEBUG : LOG_INFO, initial ? NULL : fields, "Loaded %zu polic%s from %s",
                   set->n_policies, set->n_policies == 1 ? "y" : "ies", strna(set->source));
        policy_set_free(m->policies);
        m->policies = TAKE_PTR(set);
        eval_state_prune(m->eval, m->policies);
        manager_forget_warnings(m);
        return 0;
}

int manager_lock_path(const char *root, char **ret) {
        return path_join_root(root, LOCK_PATH, ret);
}

int manager_lock_owner(const char *root) {
        _cleanup_(freep) char *path = NULL;
        _cleanup_(closep) int fd = -EBADF;
        char buf[32];
        int64_t pid;
        ssize_t k;

        if (manager_lock_path(root, &path) < 0)
                return -ENOMEM;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0)
                return errno == ENOENT ? 0 : negative_errno();
        if (flock(fd, LOCK_SH | LOCK_NB) >= 0)
                return 0;
        if (errno != EWOULDBLOCK)
                return negative_errno();
        k = pread(fd, buf, sizeof buf - 1, 0);
        buf[k > 0 ? k : 0] = 0;
        buf[strcspn(buf, "\n")] = 0;
        if (parse_int64(buf, &pid) < 0 || pid <= 0 || pid > INT_MAX)
                return -EBADMSG;
        return (int) pid;
}

static int manager_take_lock(Manager *m) {
        _cleanup_(freep) char *path = NULL;
        struct stat st;
        char buf[32];
        int fd, r;

        r = mkdir_p(m->state_dir, 0755);
        if (r < 0)
                return log_error_errno(r, "Failed to create the state directory %s: %s", m->state_dir, errno_str(r));
        /* The lock belongs to the root, not to the state directory: two daemons with different
         * --state-dir on one root would otherwise each take the other's value for the original. */
        if (manager_lock_path(m->root, &path) < 0)
                return log_oom();
        char *slash = strrchr(path, '/');
        *slash = 0;
        r = mkdir_p(path, 0755);
        *slash = '/';
        if (r < 0)
                return log_error_errno(r, "Failed to create the directory of %s: %s", path, errno_str(r));
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
        if (fd < 0)
                return log_error_errno(errno, "Failed to open the lock %s: %m", path);
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                close(fd);
                return log_error_errno(EBADFD, "Failed to use the lock %s: not a regular file", path);
        }
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                int e = errno;
                ssize_t k = pread(fd, buf, sizeof buf - 1, 0);
                buf[k > 0 ? k : 0] = 0;
                buf[strcspn(buf, "\n")] = 0;
                close(fd);
                if (e == EWOULDBLOCK)
                        return log_error_errno(EBUSY, "Another pcptuned (pid %s) is running on root %s (lock %s); "
                                                      "exiting",
                                               *buf ? buf : "unknown", m->root, path);
                return log_error_errno(e, "Failed to lock %s: %s", path, errno_str(e));
        }
        snprintf(buf, sizeof buf, "%d\n", (int) getpid());
        if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, strlen(buf), 0) < 0)
                log_warning_errno(errno, "Failed to write our pid to %s: %m, ignoring", path);
        m->lock_fd = fd;
        return 0;
}

/*
 * write_file_atomic() leaves "<name>.tmpXXXXXX" behind only when killed between
 * creating and renaming it.  Under the lock nobody else writes here: remove ours.
 */
static void manager_clean_state_dir(Manager *m) {
        static const char *const names[] = { STATUS_FILE, JOURNAL_FILE };
        _cleanup_(closep) int dfd = open(m->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d;
        struct dirent *de;

        if (dfd < 0)
                return;
        d = fdopendir(dfd);
        if (!d)
                return;
        dfd = -EBADF; /* owned by d now */
        while ((de = readdir(d))) {
                for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                        size_t n = strlen(names[i]);
                        struct stat st;
                        if (strncmp(de->d_name, names[i], n) != 0 || strncmp(de->d_name + n, ".tmp", 4) != 0 ||
                            strlen(de->d_name + n + 4) != 6)
                                continue;
                        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
                                continue;
                        if (unlinkat(dirfd(d), de->d_name, 0) >= 0)
                                log_info("Removed %s/%s, left by a run that was killed while saving it", m->state_dir,
                                         de->d_name);
                }
        }
        closedir(d);
}

/* A journal left by a run that did not stop cleanly: restore what is still ours. */
static int manager_restore_crash_journal(Manager *m) {
        _cleanup_(journal_freep) Journal *old = NULL;
        char err[512];
        int r;

        r = journal_load(m->state_dir, &old, err, sizeof err);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return log_error_errno(r, "Failed to read the restore journal in %s: %s; refusing to start over it "
                                          "(inspect it, then run `pcptunectl restore` or remove it)",
                                       m->state_dir, *err ? err : errno_str(r));
        if (!streq(old->root, m->root)) {
                char eroot[PATH_MAX];
                return log_error_errno(EXDEV, "The restore journal in %s belongs to root %s, not %s; refusing to start",
                                       m->state_dir, str_escape(old->root, eroot, sizeof eroot), m->root);
        }
        log_notice("Found a restore journal from a run that did not stop cleanly (%zu knob%s); restoring",
                   old->n_entries, old->n_entries == 1 ? "" : "s");
        r = journal_restore(old, m->root, "restore after an unclean stop");
        return r < 0 ? r : 0;
}

/* Metrics are an observer's extra: any failure here turns them off with one message, never stops us. */
static void manager_open_metrics(Manager *m) {
        int r;

        if (!m->metrics_dir)
                return;
        r = prom_writer_open(m->metrics_dir, &m->prom);
        if (r == -ENOENT || r == -ENOTDIR)
                log_notice("Metrics are off: %s does not exist (pcptuned never creates it: install "
                           "prometheus-node-exporter, or set --metrics-dir)", m->metrics_dir);
        else if (r == -EBUSY)
                log_notice("Metrics are off: another pcptuned writes %s/%s", m->metrics_dir, PROM_FILE);
        else if (r < 0)
                log_warning_errno(r, "Failed to open the metrics directory %s: %s; metrics are off", m->metrics_dir,
                                  errno_str(r));
        else
                log_info("Writing metrics to %s/%s after every sample", m->metrics_dir, PROM_FILE);
}

/* The calibration of earlier runs: a file read back by a root daemon, validated like any input. */
static void manager_load_calibration(Manager *m) {
        /* Another root (a snapshot, a test tree) is not this host: its calibration only when named. */
        int r = streq(m->root, "/") || m->calibration_dir_given ? calibration_load(m->calibration_dir, &m->cal) : -ENOENT;
        if (r >= 0) {
                m->cal_valid = true;
                m->goal_ns = calibration_p99_ns_per_page(&m->cal);
                eval_state_set_ns_per_page(m->eval, m->goal_ns);
                log_full_errno(m->once ? LOG_DEBUG : LOG_INFO, 0,
                               "Bulk-free calibration from %s: %.1f ns per page (%.0f bulk frees, kernel %s)",
                               m->calibration_dir, m->cal.ns_per_page, m->cal.n, m->cal.kernel);
                return;
        }
        m->cal = (Calibration){ 0 };
        if (r != -ENOENT)
                log_warning_errno(r, "Failed to read the calibration in %s: %s; starting a new one", m->calibration_dir,
                                  errno_str(r));
}

int manager_startup(Manager *m) {
        int r;

        /* Whether the kernel takes -1 for the high fraction is found out by writing it; a root tree
         * other than "/" (fixtures, snapshots, test trees) cannot say no, so it declares it. */
        kernel_features_declared(m->root, &m->declared);
        m->floor_state = m->declared.fraction_floor;

        r = manager_load_policies(m, true);
        if (r < 0)
                return r;
        manager_load_calibration(m);
        manager_open_metrics(m);
        if (m->dry_run)
                return 0;

        r = manager_take_lock(m);
        if (r < 0)
                return r;
        manager_clean_state_dir(m);
        r = manager_restore_crash_journal(m);
        if (r < 0)
                return r;
        m->journal = journal_new(m->state_dir, m->root);
        if (!m->journal)
                return log_oom();
        return 0;
}

/* The unavailable-metric message is said once per rule (until the next reload). */
static bool manager_warn_once(Manager *m, const char *policy, const char *rule) {
        _cleanup_(freep) char *key = NULL;
        char **n;

        if (asprintf(&key, "%s/%s", policy, rule) < 0)
                return false;
        for (size_t i = 0; i < m->n_warned_rules; i++)
                if (streq(m->warned_rules[i], key))
                        return false;
        n = realloc(m->warned_rules, (m->n_warned_rules + 1) * sizeof(char *));
        if (!n)
                return false;
        m->warned_rules = n;
        m->warned_rules[m->n_warned_rules++] = TAKE_PTR(key);
        return true;
}

static void manager_log_rules(Manager *m, const Decision *decision, const MetricValues *mv) {
        for (size_t i = 0; i < decision->n_rules; i++) {
                const RuleStatus *st = &decision->rules[i];
                if (st->newly_active)
                        log_info("Rule %s/%s is now active", st->policy->name, st->rule->name);
                else if (st->newly_inactive)
                        log_info("Rule %s/%s is no longer active (%s)", st->policy->name, st->rule->name,
                                 rule_verdict_to_string(st->verdict));
                if (st->verdict == RULE_UNAVAILABLE && st->unavailable_metric >= 0 &&
                    manager_warn_once(m, st->policy->name, st->rule->name))
                        log_warning("Rule %s/%s uses %s, which is unavailable here (%s): the rule stays inactive",
                                    st->policy->name, st->rule->name,
                                    metric_info((MetricId) st->unavailable_metric)->name,
                                    strna(mv->why_unavailable[st->unavailable_metric]));
        }
}

/* Count what a knob_apply()/knob_release() did, for the metrics.  Returns r. */
static int knob_count(KnobCounters *c, bool dry_run, int r) {
        if (r == KNOB_WRITTEN)
                c->writes++;
        else if (r == KNOB_RESTORED && !dry_run)
                c->restores++;
        else if (r < 0)
                c->refused++;
        return r;
}

/* Bind the knob to what the kernel has, once. */
static bool manager_bind_knob(Manager *m, const Snapshot *s) {
        if (!s->has_knob) {
                if (!m->warned_no_knob && s->knob_error == -ENOENT)
                        log_warning("This kernel has no pcp sysctl (%s): nothing to tune", SYSCTL_PCP_HIGH_FRACTION);
                else if (!m->warned_no_knob)
                        log_warning_errno(s->knob_error,
                                          "Failed to read the pcp sysctl below %s (%s, or %s before 5.14): %s; "
                                          "not tuning it",
                                          m->root, knob_desc(KNOB_PCP_HIGH_FRACTION)->path,
                                          knob_desc(KNOB_PCP_FRACTION)->path,
                                          s->knob_error == -EINVAL ? "it holds a value no kernel accepts"
                                                                   : errno_str(s->knob_error));
                m->warned_no_knob = true;
                return false;
        }
        if (!s->knob.writable) {
                if (!m->warned_readonly)
                        log_warning("%s = %" PRId64 " on kernel %s: kernels before 5.14 give it another meaning "
                                    "(each CPU gets managed/F pages); pcptune only reads it",
                                    s->knob.name, s->knob.value, s->topo.kernel_release);
                m->warned_readonly = true;
                return false;
        }
        if (!m->knob_known) {
                m->pcp_knob.desc = s->knob.desc;
                m->knob_known = true;
        }
        return true;
}

/* Apply the decision for the pcp knob: the winning goal, or hand the knob back when nothing wants it. */
static bool manager_apply_pcp(Manager *m, const Snapshot *s, const Decision *decision) {
        const PcpDecision *d = &decision->pcp_high;
        char gbuf[64], reason[320];
        int r;

        m->has_pcp_target = false;
        if (!manager_bind_knob(m, s))
                return false;

        if (!d->wanted) {
                if (m->pcp_knob.managed)
                        return knob_count(&m->pcp_counts, m->dry_run,
                                          knob_release(&m->pcp_knob, m->root, m->journal, m->dry_run,
                                                       "no active rule sets pcp.high any more")) == KNOB_RESTORED;
                return false;
        }
        if (d->solve_error == -ENODATA && d->goal.kind == PCP_GOAL_BULK_FREE_P99) {
                if (manager_warn_once(m, d->policy->name, d->rule->name))
                        log_warning("Rule %s/%s: pcp.high %s needs this host's bulk-free calibration, which pcptuned "
                                    "fits from traced bulk frees (%s): the knob is left alone until there is one",
                                    d->policy->name, d->rule->name, pcp_goal_to_string(&d->goal, gbuf, sizeof gbuf),
                                    m->bulk ? "tracing" : m->bulk_why);
                return false;
        }
        if (d->solve_error < 0 && d->solve_error != -ERANGE) {
                if (manager_warn_once(m, d->policy->name, d->rule->name))
                        log_warning_errno(d->solve_error, "Rule %s/%s: cannot solve pcp.high %s on this host: %s",
                                          d->policy->name, d->rule->name,
                                          pcp_goal_to_string(&d->goal, gbuf, sizeof gbuf), errno_str(d->solve_error));
                return false;
        }
        if (d->solve_error == -ERANGE && d->goal.kind == PCP_GOAL_BULK_FREE_P99 &&
            manager_warn_once(m, d->policy->name, d->rule->name))
                log_warning("Rule %s/%s: pcp.high %s: no fraction meets it (the minimum moves %" PRIu64 " pages per bulk "
                            "free, predicted %.0f us at %.1f ns per page); using the minimum",
                            d->policy->name, d->rule->name, pcp_goal_to_string(&d->goal, gbuf, sizeof gbuf), d->pages,
                            d->predicted_ns / 1000.0, d->ns_per_page);
        else if (d->solve_error == -ERANGE && manager_warn_once(m, d->policy->name, d->rule->name))
                log_warning("Rule %s/%s: pcp.high %s is below the kernel's floor of 4 x batch; using the minimum",
                            d->policy->name, d->rule->name, pcp_goal_to_string(&d->goal, gbuf, sizeof gbuf));

        if (d->goal.kind == PCP_GOAL_BULK_FREE_P99)
                /* The prediction and why: dry-run prints it in the "would set" line. */
                snprintf(reason, sizeof reason,
                         "pcp.high %s: predicted p99 %.0f us (%" PRIu64 " pages x %.1f ns per page); the default "
                         "would move %" PRIu64 " pages, %.0f us",
                         pcp_goal_to_string(&d->goal, gbuf, sizeof gbuf), d->predicted_ns / 1000.0, d->pages,
                         d->ns_per_page, d->default_pages, d->ns_per_page * (double) d->default_pages / 1000.0);
        else
                snprintf(reason, sizeof reason, "pcp.high %s", pcp_goal_to_string(&d->goal, gbuf, sizeof gbuf));
        /* minimum: -1 where the kernel has pcptune's contrib patch (no per-host fraction to re-solve);
         * found out by writing it once: a kernel without the patch rejects it with EINVAL. */
        int target = d->fraction;
        bool try_floor = d->goal.kind == PCP_GOAL_MINIMUM && s->regime != PCP_REGIME_LEGACY &&
                         m->floor_state != FEATURE_ABSENT && !m->dry_run;
        if (try_floor)
                target = PCP_FRACTION_FLOOR;
        int64_t old = 0;
        r = knob_count(&m->pcp_counts, m->dry_run,
                       knob_apply(&m->pcp_knob, m->root, m->journal, m->dry_run, target,
                                  &(ChangeReason){ .policy = d->policy->name, .rule = d->rule->name, .text = reason,
                                                   .probe = try_floor },
                                  &old));
        if (try_floor && r == -EINVAL) {
                m->floor_state = FEATURE_ABSENT;
                log_notice("This kernel rejects %s = -1 (no pcptune contrib patch): using the minimum computed for this "
                           "host, %d", m->pcp_knob.desc->name, d->fraction);
                target = d->fraction;
                r = knob_count(&m->pcp_counts, m->dry_run,
                               knob_apply(&m->pcp_knob, m->root, m->journal, m->dry_run, target,
                                          &(ChangeReason){ .policy = d->policy->name, .rule = d->rule->name,
                                                           .text = reason },
                                          &old));
        } else if (try_floor && (r == KNOB_WRITTEN || r == KNOB_NOOP))
                m->floor_state = FEATURE_PRESENT;
        m->has_pcp_target = true;
        m->pcp_target = target;
        if (r < 0)
                m->act_failures++;
        bool lowered = (target == PCP_FRACTION_FLOOR && old != PCP_FRACTION_FLOOR) ||
                       (target > 0 && (old == 0 || (old > 0 && target > old)));
        if (r == KNOB_WRITTEN && lowered) {
                /* Lower limits: busy CPUs clamp at their next allocation or free; idle ones only decay,
                 * 1/8 per vmstat tick.  vm.stat_refresh runs one decay step on every CPU now. */
                int q = write_file_at(m->root, "/proc/sys/vm/stat_refresh", "1");
                if (q < 0 && q != -ENOENT)
                        log_debug_errno(q, "Failed to write vm.stat_refresh: %s", errno_str(q));
        }
        if (r == KNOB_WRITTEN) {
                _cleanup_(freep) char *msg = NULL;
                int q = pcp_confirm(m->root, target, &msg);
                if (q == -EBADE)
                        log_warning("%s = %d is set but the pagesets do not show the model's values: %s",
                                    m->pcp_knob.desc->name, target, strna(msg));
                else if (q < 0)
                        log_warning_errno(q, "Failed to confirm %s = %d in zoneinfo: %s", m->pcp_knob.desc->name, target,
                                          errno_str(q));
                else
                        log_info("Confirmed %s = %d: pagesets match the model on every populated zone",
                                 m->pcp_knob.desc->name, target);
        }
        return r == KNOB_WRITTEN;
}

/* pcp.batch_scale_max: vm.pcp_batch_scale_max exists only with pcptune's contrib patch (0002). */
static void manager_apply_scale(Manager *m, const Decision *decision) {
        const ScaleDecision *d = &decision->batch_scale_max;
        _cleanup_(freep) char *path = NULL;
        char reason[64];

        m->has_scale_target = false;
        if (!d->wanted) {
                if (m->scale_knob.managed)
                        (void) knob_count(&m->scale_counts, m->dry_run,
                                          knob_release(&m->scale_knob, m->root, m->journal, m->dry_run,
                                                       "no active rule sets pcp.batch_scale_max any more"));
                return;
        }
        if (path_join_root(m->root, m->scale_knob.desc->path, &path) < 0 || access(path, F_OK) < 0) {
                if (manager_warn_once(m, d->policy->name, "batch_scale_max"))
                        log_warning("Rule %s/%s: pcp.batch_scale_max needs %s, from pcptune's kernel patch "
                                    "(contrib/kernel); this kernel does not have it",
                                    d->policy->name, d->rule->name, m->scale_knob.desc->name);
                return;
        }
        snprintf(reason, sizeof reason, "pcp.batch_scale_max %d", d->value);
        m->has_scale_target = true;
        m->scale_target = d->value;
        if (knob_count(&m->scale_counts, m->dry_run,
                          knob_apply(&m->scale_knob, m->root, m->journal, m->dry_run, d->value,
                                     &(ChangeReason){ .policy = d->policy->name, .rule = d->rule->name, .text = reason },
                                     NULL)) < 0)
                m->act_failures++;
}

/* A `repair: pagesets` rule: recompute pagesets that differ from the model (a CPU whose batch was left at
 * a value the kernel no longer computes). */
static void manager_repair_pagesets(Manager *m, const Snapshot *s, const DecidedAction *a, bool wrote_knob) {
        PagesetCheck c = { 0 };
        int r;

        if (wrote_knob || !s->has_knob)
                return; /* the write just recomputed them; check at the next sample */
        r = pageset_check(s, &c);
        if (r < 0) {
                log_warning_errno(r, "Failed to compare pagesets with the model: %s", errno_str(r));
                return;
        }
        if (c.n_mismatches == 0) {
                pageset_check_done(&c);
                return;
        }
        const PagesetMismatch *x = &c.mismatches[0];
        log_notice("Rule %s/%s: %zu of %zu pageset values differ from the model (e.g. node %d %s cpu %d: %s %" PRId64
                   ", expected %" PRId64 ")%s",
                   a->policy->name, a->rule->name, c.n_mismatches, c.compared, x->node, x->zone, x->cpu,
                   pageset_field_to_string(x->field), x->actual, x->expected,
                   m->dry_run ? "; would make the kernel recompute them" : "; making the kernel recompute them");
        pageset_check_done(&c);
        eval_state_action_done(m->eval, a->policy, a->rule, now_usec(CLOCK_MONOTONIC));
        if (m->dry_run)
                return;
        r = pageset_repair(m->root, m->journal, s->knob.value, NULL);
        if (r < 0 && r != -EBADE)
                m->act_failures++;
        if (r == -EBADE)
                log_warning("Rule %s/%s: the pagesets still differ after the repair; not retrying before the "
                            "rule's cooldown",
                            a->policy->name, a->rule->name);
        else if (r < 0)
                log_error_errno(r, "Failed to repair pagesets: %s", errno_str(r));
}

/* Percpu per memcg from live counts: a growth of at least 50 memcgs with Percpu growing too. */
static void manager_estimate_memcg_cost(Manager *m, const Snapshot *s) {
        if (!s->meminfo.has_percpu || !s->has_memcg || s->memcg.mode == CGROUP_MEMORY_NONE)
                return;
        uint64_t total = s->memcg.live + s->memcg.dying;
        if (m->est_prev_valid && total >= m->est_prev_total + 50 && s->meminfo.percpu_kib >= m->est_prev_percpu_kib) {
                double sample = (double) (s->meminfo.percpu_kib - m->est_prev_percpu_kib) * 1024.0 /
                                (double) (total - m->est_prev_total);
                m->est_cost_bytes = m->est_cost_bytes > 0 ? 0.5 * m->est_cost_bytes + 0.5 * sample : sample;
        }
        if (!m->est_prev_valid || total != m->est_prev_total) {
                m->est_prev_total = total;
                m->est_prev_percpu_kib = s->meminfo.percpu_kib;
                m->est_prev_valid = true;
        }
}

/* The per-memcg percpu cost (snapshot_memcg_cost(): `plan --measure`, else the running estimate, else the model). */
static void manager_memcg_cost(Manager *m, const Snapshot *s, MemcgCost *ret) {
        snapshot_memcg_cost(s, m->has_measured ? &m->measured : NULL, m->est_cost_bytes, ret);
}

/* Dying count and Percpu now, from the memcg and meminfo sources (/proc/cgroups + the hierarchy's directories, meminfo). */
static void manager_read_dying(Manager *m, uint64_t *ret_dying, uint64_t *ret_percpu_kib) {
        _cleanup_(snapshot_freep) Snapshot *s = NULL;
        bool ok = snapshot_take_sources(m->root, SOURCE_BIT(SOURCE_MEMCG) | SOURCE_BIT(SOURCE_MEMINFO), &s) >= 0;

        *ret_dying = ok && s->has_memcg ? s->memcg.dying : 0;
        *ret_percpu_kib = ok ? s->meminfo.percpu_kib : 0;
}

#define PERCPU_STATS_MIN_INTERVAL (5 * 60 * USEC_PER_SEC)
#define PERCPU_STATS_MAX_COST (5 * USEC_PER_MSEC)

/* After a reclaim: what is left in the percpu allocator, if percpu_stats is readable and cheap. */
static void manager_log_percpu_stats(Manager *m, const char *label) {
        usec_t now = now_usec(CLOCK_MONOTONIC), t0;
        PercpuStats st = { 0 };
        PercpuSummary sum;
        int r;

        if (m->percpu_stats_cost > PERCPU_STATS_MAX_COST ||
            (m->percpu_stats_last && now - m->percpu_stats_last < PERCPU_STATS_MIN_INTERVAL))
                return;
        t0 = now_usec(CLOCK_MONOTONIC);
        r = percpu_stats_read(m->root, &st);
        m->percpu_stats_last = now;
        m->percpu_stats_cost = now_usec(CLOCK_MONOTONIC) - t0;
        if (r < 0) {
                log_debug_errno(r, "percpu_stats not readable (%s): debugfs not mounted or CONFIG_PERCPU_STATS off",
                                errno_str(r));
                m->percpu_stats_cost = USEC_INFINITY; /* never again: we do not mount debugfs */
                return;
        }
        percpu_stats_summarize(&st, &sum);
        log_info("%s: percpu allocator: %" PRId64 " chunks (%" PRId64 " empty), %" PRId64
                 " empty populated pages per unit, %" PRId64 " KiB free per unit in all chunks "
                 "(read in %" PRIu64 " us)",
                 label, sum.chunks, sum.empty_chunks, sum.empty_pop_pages, sum.free_bytes / 1024, m->percpu_stats_cost);
        if (m->percpu_stats_cost > PERCPU_STATS_MAX_COST)
                log_info("Reading percpu_stats took %" PRIu64 " us with IRQs off: not reading it again",
                         m->percpu_stats_cost);
        percpu_stats_done(&st);
}

static int on_reclaim_followup(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        uint64_t dying, percpu;
        manager_read_dying(m, &dying, &percpu);
        log_info("%s: 5 s after the reclaim: %" PRIu64 " dying memcgs (%" PRIu64 " before it), Percpu %" PRIu64
                 " kB (%" PRIu64 " kB before it)",
                 strna(m->reclaim_label), dying, m->reclaim_dying_before, percpu, m->reclaim_percpu_before_kib);
        manager_log_percpu_stats(m, strna(m->reclaim_label));
        m->followup = sd_event_source_disable_unref(m->followup);
        return 0;
}

/* The refault window of the last reclaim ends: read the counters again, log, skip what refaulted too much. */
static void manager_close_refault_window(Manager *m) {
        const ReclaimRecord *r = &m->watch.record;
        char f_lbl[200], f_ref[48], f_win[48], f_n[48], f_over[48], f_max[64], f_cost[48], over[512] = "", b1[48];
        size_t n_over, measured = 0, imax = SIZE_MAX;

        if (!m->watch.has_record || !r->counting)
                return;
        n_over = reclaim_watch_close(&m->watch, m->root, strna(m->watch_mount), m->watch_mode, now_usec(CLOCK_MONOTONIC));
        m->counters.reclaim_refaults += r->refaults;
        m->counters.reclaim_refault_windows++;
        m->counters.has_last_refaults = true;
        m->counters.last_refaults = r->refaults;
        m->counters.last_refault_window_usec = r->window_usec;
        m->counters.last_refault_rate_max = 0;
        for (size_t i = 0; i < r->n_subtrees; i++)
                m->counters.last_refault_rate_max = MAX(m->counters.last_refault_rate_max, r->subtrees[i].rate);
        for (size_t i = 0; i < r->n_subtrees; i++) {
                const ReclaimSubtreeRefaults *t = &r->subtrees[i];
                if (t->after < 0 || t->before < 0)
                        continue;
                measured++;
                if (imax == SIZE_MAX || t->rate > r->subtrees[imax].rate)
                        imax = i;
                if (t->over_limit) {
                        size_t l = strlen(over);
                        snprintf(over + l, sizeof over - l, "%s%s (%.1f/s)", l ? ", " : "", t->path, t->rate);
                }
        }
        snprintf(f_lbl, sizeof f_lbl, "RULE=%s", strna(r->label));
        snprintf(f_ref, sizeof f_ref, "REFAULTS=%" PRIu64, r->refaults);
        snprintf(f_win, sizeof f_win, "REFAULT_WINDOW_USEC=%" PRIu64, r->window_usec);
        snprintf(f_n, sizeof f_n, "SUBTREES_MEASURED=%zu", measured);
        snprintf(f_over, sizeof f_over, "SUBTREES_OVER_LIMIT=%zu", n_over);
        snprintf(f_max, sizeof f_max, "REFAULT_RATE_MAX=%.3f", imax == SIZE_MAX ? 0.0 : r->subtrees[imax].rate);
        snprintf(f_cost, sizeof f_cost, "REFAULT_READ_USEC=%" PRIu64, r->read_usec);
        const char *fields[] = { "MESSAGE_ID=" PCPTUNE_MESSAGE_RECLAIM, "ACTION=reclaim-dying-refaults", f_lbl, f_ref, f_win, f_n, f_over, f_max, f_cost, NULL };
        if (imax == SIZE_MAX)
                snprintf(b1, sizeof b1, "none measured");
        else
                snprintf(b1, sizeof b1, "%.2f/s", r->subtrees[imax].rate);
        log_fields(n_over > 0 ? LOG_WARNING : LOG_NOTICE, fields,
                   "%s: %" PRIu64 " refaults in the live cgroups of %zu reclaimed subtree%s, from just before each "
                   "reclaim to %.0f s after the run (largest rate %s%s%s; %zu counter reads in %" PRIu64 " us)%s%s%s",
                   strna(r->label), r->refaults, measured, measured == 1 ? "" : "s", (double) r->window_usec / 1e6, b1,
                   imax == SIZE_MAX ? "" : " in ", imax == SIZE_MAX ? "" : r->subtrees[imax].path, r->n_reads,
                   r->read_usec, n_over > 0 ? "; above max-refault-rate, skipped for the rule's cooldown: " : "",
                   over, n_over > 0 && strlen(over) >= sizeof over - 1 ? "..." : "");
}

static int on_refault_window(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        manager_close_refault_window(m);
        m->refault_timer = sd_event_source_disable_unref(m->refault_timer);
        return 0;
}

/* After a real run: keep the counters read before each subtree's reclaim and close the window later. */
static void manager_open_refault_window(Manager *m, const ReclaimJob *j) {
        size_t n_swap = 0, n_refaults = 0;

        if (m->watch.args == RECLAIM_ARGS_UNKNOWN) {
                m->watch.args = j->args; /* the job probed on its first subtree */
                m->watch.scope_dying = j->scope_dying;
        }
        for (size_t i = 0; i < j->n_results; i++) {
                n_swap += j->results[i].outcome == RECLAIM_SKIPPED_SWAP;
                n_refaults += j->results[i].outcome == RECLAIM_SKIPPED_REFAULTS;
        }
        if (j->mode == CGROUP_MEMORY_V2 && j->args == RECLAIM_ARGS_BYTES && j->host_swap == 0 && !j->cfg.allow_swap &&
            manager_warn_once(m, strna(m->reclaim_label), "no-swap"))
                log_info("%s: memory.reclaim takes no swappiness= here, but no swap is active: plain byte counts "
                         "reclaim file pages only",
                         strna(m->reclaim_label));
        if (n_swap > 0 && manager_warn_once(m, strna(m->reclaim_label), "allow-swap"))
                log_warning("%s: %zu subtree%s not reclaimed: this kernel's memory.reclaim takes no swappiness= (%s), so "
                            "reclaim could swap the anonymous memory of live cgroups; allow it with allow-swap: true",
                            strna(m->reclaim_label), n_swap, n_swap == 1 ? "" : "s", reclaim_args_to_string(j->args));
        if (n_refaults > 0)
                log_info("%s: %zu subtree%s skipped: %s live cgroups refaulted above max-refault-rate after the last "
                         "reclaim (cooldown of the rule)",
                         strna(m->reclaim_label), n_refaults, n_refaults == 1 ? "" : "s", n_refaults == 1 ? "its" : "their");
        if (reclaim_watch_open(&m->watch, j, m->reclaim_label, m->reclaim_cooldown_usec) < 0) {
                log_oom();
                return;
        }
        free(m->watch_mount);
        m->watch_mount = strdup(j->mount);
        m->watch_mode = j->mode;
        if (m->event && !m->once) {
                m->refault_timer = sd_event_source_disable_unref(m->refault_timer);
                if (sd_event_add_time(m->event, &m->refault_timer, CLOCK_MONOTONIC, j->ended + j->cfg.refault_window_usec,
                                      USEC_PER_SEC / 10, on_refault_window, m) < 0)
                        manager_close_refault_window(m); /* no timer: measure what can be measured now */
        }
}

static void on_reclaim_done(ReclaimJob *j, void *userdata) {
        Manager *m = userdata;
        _cleanup_(reclaim_job_freep) _unused_ ReclaimJob *job = j; /* freed on every return */
        size_t count[_RECLAIM_OUTCOME_MAX] = { 0 };
        uint64_t dying, percpu;
        char f_dyb[48], f_dya[48], f_pb[48], f_pa[48], f_dur[48], f_lbl[200], b1[32];

        if (j->error < 0) {
                m->counters.reclaim_scan_failures++;
                log_error_errno(j->error, "%s: failed to find the subtrees holding dying memcgs: %s",
                                strna(m->reclaim_label), errno_str(j->error));
                return;
        }
        if (m->dry_run) {
                /* The topology and kernel of the last sample; a fresh one only before the first has been kept. */
                _cleanup_(snapshot_freep) Snapshot *own = NULL;
                const Snapshot *s = m->prev;
                MemcgCost mc = { .how = "unknown" };
                if (!s && snapshot_take(m->root, &own) >= 0)
                        s = own;
                if (s)
                        manager_memcg_cost(m, s, &mc);
                double cost = mc.bytes;
                const char *how = mc.how;
                uint64_t dying_in = 0, bytes_in = 0;
                for (size_t i = 0; i < j->n_results; i++) {
                        dying_in += j->results[i].dying;
                        bytes_in += j->results[i].dying_bytes;
                }
                if (j->n_results == 0) {
                        log_notice("%s: would reclaim nothing: no subtree within its roots holds dying memcgs "
                                   "(scan of %zu cgroups took %" PRIu64 " us)",
                                   strna(m->reclaim_label), j->scan.cgroups_visited, j->scan_usec);
                        return;
                }
                if (j->mode == CGROUP_MEMORY_V2)
                        log_notice("%s: would reclaim %zu subtree%s (first %s) holding %" PRIu64
                                   " dying memcgs, with memory.reclaim up to %s; expected gain about %s of percpu "
                                   "(%.0f B per memcg, %s)",
                                   strna(m->reclaim_label), j->n_results, j->n_results == 1 ? "" : "s", j->results[0].path,
                                   dying_in, format_bytes(b1, sizeof b1, j->cfg.max_bytes),
                                   format_bytes(f_dur, sizeof f_dur, (uint64_t) (cost * PERCPU_DYING_RETAINED * (double) dying_in)),
                                   cost, how);
                else
                        log_notice("%s: would reclaim %zu subtree%s (first %s) holding an estimated %s charged to "
                                   "removed cgroups, with memory.force_empty%s; expected gain up to about %s of "
                                   "percpu if all %" PRIu64 " dying memcgs are there (%.0f B per memcg, %s)",
                                   strna(m->reclaim_label), j->n_results, j->n_results == 1 ? "" : "s",
                                   j->results[0].path, format_bytes(b1, sizeof b1, bytes_in),
                                   j->cfg.force_empty == FORCE_EMPTY_NO ? " (not allowed by the policy: force-empty)"
                                   : j->cfg.force_empty == FORCE_EMPTY_CHILDLESS ? " where no live child is below"
                                                                                 : "",
                                   format_bytes(f_dur, sizeof f_dur,
                                                (uint64_t) (cost * PERCPU_DYING_RETAINED * (double) m->reclaim_dying_before)),
                                   m->reclaim_dying_before, cost, how);
                return;
        }

        for (size_t i = 0; i < j->n_results; i++) {
                count[j->results[i].outcome]++;
                m->counters.reclaim_outcomes[j->results[i].outcome]++;
        }
        m->counters.reclaim_runs++;
        m->counters.reclaim_freed_bytes += j->freed_total;
        m->counters.reclaim_usec += j->run_usec;
        manager_read_dying(m, &dying, &percpu);
        snprintf(f_lbl, sizeof f_lbl, "RULE=%s", strna(m->reclaim_label));
        snprintf(f_dyb, sizeof f_dyb, "DYING_BEFORE=%" PRIu64, m->reclaim_dying_before);
        snprintf(f_dya, sizeof f_dya, "DYING_AFTER=%" PRIu64, dying);
        snprintf(f_pb, sizeof f_pb, "PERCPU_BEFORE_KIB=%" PRIu64, m->reclaim_percpu_before_kib);
        snprintf(f_pa, sizeof f_pa, "PERCPU_AFTER_KIB=%" PRIu64, percpu);
        snprintf(f_dur, sizeof f_dur, "DURATION_USEC=%" PRIu64, now_usec(CLOCK_MONOTONIC) - m->reclaim_started);
        char f_freed[48];
        snprintf(f_freed, sizeof f_freed, "FREED_BYTES=%" PRIu64, j->freed_total);
        const char *fields[] = { "MESSAGE_ID=" PCPTUNE_MESSAGE_RECLAIM, "ACTION=reclaim-dying", f_lbl, f_dyb, f_dya, f_pb, f_pa, f_dur, f_freed, NULL };
        log_fields(LOG_NOTICE, fields,
                   "%s: reclaim-dying %s %zu subtree%s in %.2f s (scan %.2f s of %zu cgroups): %zu reclaimed, "
                   "%zu with nothing reclaimable, %zu gone, %zu busy, %zu skipped, %zu failed, %zu not reached; "
                   "%s freed in them; dying memcgs %" PRIu64 " -> %" PRIu64 ", Percpu %" PRIu64 " -> %" PRIu64 " kB",
                   strna(m->reclaim_label), j->timed_out ? "stopped at its timeout after" : "went through",
                   j->n_results, j->n_results == 1 ? "" : "s", (double) j->run_usec / 1e6, (double) j->scan_usec / 1e6,
                   j->scan.cgroups_visited, count[RECLAIM_DONE], count[RECLAIM_NOTHING], count[RECLAIM_GONE],
                   count[RECLAIM_BUSY],
                   count[RECLAIM_SKIPPED_POLICY] + count[RECLAIM_SKIPPED_SWAP] + count[RECLAIM_SKIPPED_REFAULTS],
                   count[RECLAIM_FAILED],
                   count[RECLAIM_NOT_RUN] + count[RECLAIM_TIMED_OUT], format_bytes(b1, sizeof b1, j->freed_total),
                   m->reclaim_dying_before, dying, m->reclaim_percpu_before_kib, percpu);
        manager_open_refault_window(m, j);
        if (j->dropped_caches)
                log_notice("%s: dropped clean page cache (vm.drop_caches=1) as the policy allows", strna(m->reclaim_label));
        for (size_t i = 0; i < j->n_results; i++)
                if (j->results[i].outcome == RECLAIM_FAILED || j->results[i].outcome == RECLAIM_BUSY)
                        log_warning("%s: %s: %s (%s)", strna(m->reclaim_label), j->results[i].path,
                                    reclaim_outcome_to_string(j->results[i].outcome), errno_str(j->results[i].error));
        if (count[RECLAIM_SKIPPED_POLICY] > 0 && manager_warn_once(m, strna(m->reclaim_label), "force-empty")) {
                if (j->cfg.force_empty == FORCE_EMPTY_CHILDLESS)
                        log_info("%s: %zu subtree%s with live cgroups below or tasks inside left alone (force-empty: childless; "
                                 "cgroup v1 has no bounded reclaim)",
                                 strna(m->reclaim_label), count[RECLAIM_SKIPPED_POLICY],
                                 count[RECLAIM_SKIPPED_POLICY] == 1 ? "" : "s");
                else
                        log_warning("%s: %zu subtree%s not reclaimed: cgroup v1 has no bounded reclaim; allow "
                                    "memory.force_empty with force-empty: childless (or true) in the rule",
                                    strna(m->reclaim_label), count[RECLAIM_SKIPPED_POLICY],
                                    count[RECLAIM_SKIPPED_POLICY] == 1 ? " was" : "s were");
        }
        /* The kernel frees released memcgs asynchronously (RCU, css release work): look again shortly. */
        if (m->event && !m->once) {
                m->followup = sd_event_source_disable_unref(m->followup);
                (void) sd_event_add_time_relative(m->event, &m->followup, CLOCK_MONOTONIC, 5 * USEC_PER_SEC, 0,
                                                  on_reclaim_followup, m);
        }
}

static void manager_start_reclaim(Manager *m, const Snapshot *s, const DecidedAction *a) {
        _cleanup_(reclaim_job_freep) ReclaimJob *j = NULL;
        int r;

        if (reclaim_worker_busy(m->reclaim)) {
                log_debug("%s/%s: a reclaim is still running, not starting another", a->policy->name, a->rule->name);
                return;
        }
        /* Each reclaim's refaults are measured alone: the next waits for the window to close. */
        if (m->watch.has_record && m->watch.record.counting) {
                log_debug("%s/%s: the refault window of the last reclaim is open, not starting another", a->policy->name,
                          a->rule->name);
                return;
        }
        if (!s->has_memcg || s->memcg.mode == CGROUP_MEMORY_NONE) {
                if (manager_warn_once(m, a->policy->name, a->rule->name))
                        log_warning("Rule %s/%s: no memory cgroup hierarchy here, nothing to reclaim", a->policy->name,
                                    a->rule->name);
                return;
        }
        const ProbeResult *rp = kernel_probes_find(&m->probes, PROBE_REPARENTING);
        if (rp && rp->answer == PROBE_YES) {
                /* Reclaim frees dying memcgs by uncharging the page cache that pins them; a kernel that
                 * reparents LRU folios at offline leaves none to uncharge. */
                if (manager_warn_once(m, a->policy->name, a->rule->name))
                        log_notice("Rule %s/%s: reclaim-dying stays inactive: this kernel reparents LRU folios when a "
                                   "memcg goes offline, so page cache does not pin removed memcgs (%s)",
                                   a->policy->name, a->rule->name, rp->evidence);
                return;
        }
        j = reclaim_job_new(m->root, s->memcg.mount, s->memcg.mode, &a->action->reclaim, m->dry_run);
        if (!j) {
                log_oom();
                return;
        }
        free(m->reclaim_label);
        if (asprintf(&m->reclaim_label, "%s/%s", a->policy->name, a->rule->name) < 0)
                m->reclaim_label = NULL;
        m->reclaim_cooldown_usec = a->rule->cooldown_usec;
        j->args = m->watch.args;
        j->scope_dying = m->watch.scope_dying;
        if (!m->dry_run && reclaim_watch_blocked(&m->watch, strna(m->reclaim_label), now_usec(CLOCK_MONOTONIC), &j->skip) < 0) {
                log_oom();
                return;
        }
        /* The sample may have reused a costly memcg count: read it now. */
        manager_read_dying(m, &m->reclaim_dying_before, &m->reclaim_percpu_before_kib);
        m->reclaim_started = now_usec(CLOCK_MONOTONIC);
        eval_state_action_done(m->eval, a->policy, a->rule, m->reclaim_started);
        log_info("%s: %s subtrees holding dying memcgs (%" PRIu64 " dying, Percpu %" PRIu64 " kB)",
                 strna(m->reclaim_label), m->dry_run ? "looking for" : "reclaiming", m->reclaim_dying_before,
                 m->reclaim_percpu_before_kib);

        if (m->once || !m->event) {
                /* No loop to come back to: a loop of our own for the one job, bounded the same way. */
                _cleanup_(sd_event_unrefp) sd_event *e = NULL;
                ReclaimWorker *w = NULL;
                if (sd_event_new(&e) < 0)
                        return;
                r = reclaim_worker_start(&w, e, TAKE_PTR(j), on_reclaim_done, m);
                if (r >= 0)
                        while (reclaim_worker_busy(w) && sd_event_run(e, UINT64_MAX) >= 0)
                                ;
                reclaim_worker_stop(w);
                if (r < 0)
                        log_error_errno(r, "Failed to start the reclaim: %s", errno_str(r));
                /* One run: wait out its refault window (the policy's refault-window bounds it). */
                if (m->watch.has_record && m->watch.record.counting) {
                        usec_t end = m->watch.record.ended + m->watch.record.window_usec, now;
                        while ((now = now_usec(CLOCK_MONOTONIC)) < end)
                                (void) usleep((useconds_t) MIN(end - now, (usec_t) USEC_PER_SEC));
                        manager_close_refault_window(m);
                }
                return;
        }
        r = reclaim_worker_start(&m->reclaim, m->event, TAKE_PTR(j), on_reclaim_done, m);
        if (r < 0)
                log_error_errno(r, "Failed to start the reclaim worker: %s", errno_str(r));
}

/* percpu-depopulate: the contrib patch's trigger unmaps empty populated pages and frees empty chunks now. */
static void manager_percpu_depopulate(Manager *m, const Snapshot *s, const DecidedAction *a) {
        const PercpuSysfs *b = &s->percpu_sysfs;
        PercpuSysfs after;
        Meminfo mi = { 0 };
        char b1[32], f_rule[200], f_pb[48], f_pa[48], f_eb[48], f_ea[48], f_dur[48];
        usec_t t0;
        int r;

        if (!s->has_percpu_sysfs || !b->has_depopulate) {
                if (manager_warn_once(m, a->policy->name, a->rule->name))
                        log_warning("Rule %s/%s: percpu-depopulate needs /sys/kernel/mm/percpu/depopulate, from "
                                    "pcptune's kernel patch (contrib/kernel); this kernel does not have it",
                                    a->policy->name, a->rule->name);
                return;
        }
        eval_state_action_done(m->eval, a->policy, a->rule, now_usec(CLOCK_MONOTONIC));
        uint64_t unit_bytes = b->nr_units * s->topo.page_size;
        uint64_t spare = b->nr_empty_pop_pages > b->empty_pop_pages_high ? b->nr_empty_pop_pages - b->empty_pop_pages_high : 0;
        if (m->dry_run) {
                log_notice("Rule %s/%s: would write %s/depopulate: %" PRIu64 " empty populated pages per unit, %" PRIu64
                           " beyond the %" PRIu64 " kept for atomic allocations: about %s back",
                           a->policy->name, a->rule->name, PERCPU_SYSFS_DIR, b->nr_empty_pop_pages, spare,
                           b->empty_pop_pages_high, format_bytes(b1, sizeof b1, spare * unit_bytes));
                return;
        }
        t0 = now_usec(CLOCK_MONOTONIC);
        r = percpu_sysfs_depopulate(m->root);
        if (r < 0) {
                log_error_errno(r, "Rule %s/%s: failed to write %s/depopulate: %s", a->policy->name, a->rule->name,
                                PERCPU_SYSFS_DIR, errno_str(r));
                return;
        }
        usec_t took = now_usec(CLOCK_MONOTONIC) - t0;
        if (percpu_sysfs_read(m->root, &after) < 0)
                after = *b;
        (void) meminfo_read(m->root, &mi);
        snprintf(f_rule, sizeof f_rule, "RULE=%s/%s", a->policy->name, a->rule->name);
        snprintf(f_pb, sizeof f_pb, "PERCPU_BEFORE_KIB=%" PRIu64, s->meminfo.percpu_kib);
        snprintf(f_pa, sizeof f_pa, "PERCPU_AFTER_KIB=%" PRIu64, mi.percpu_kib);
        snprintf(f_eb, sizeof f_eb, "EMPTY_POP_PAGES_BEFORE=%" PRIu64, b->nr_empty_pop_pages);
        snprintf(f_ea, sizeof f_ea, "EMPTY_POP_PAGES_AFTER=%" PRIu64, after.nr_empty_pop_pages);
        snprintf(f_dur, sizeof f_dur, "DURATION_USEC=%" PRIu64, took);
        const char *fields[] = { "MESSAGE_ID=" PCPTUNE_MESSAGE_RECLAIM, "ACTION=percpu-depopulate", f_rule, f_pb, f_pa, f_eb, f_ea, f_dur, NULL };
        log_fields(LOG_NOTICE, fields,
                   "%s/%s: percpu-depopulate in %" PRIu64 " us: empty populated pages %" PRIu64 " -> %" PRIu64
                   " per unit, chunks %" PRIu64 " -> %" PRIu64 ", Percpu %" PRIu64 " -> %" PRIu64 " kB",
                   a->policy->name, a->rule->name, took, b->nr_empty_pop_pages, after.nr_empty_pop_pages, b->nr_chunks,
                   after.nr_chunks, s->meminfo.percpu_kib, mi.percpu_kib);
}

static void manager_run_actions(Manager *m, const Snapshot *s, const Decision *decision, bool wrote_knob) {
        for (size_t i = 0; i < decision->n_actions; i++) {
                const DecidedAction *a = &decision->actions[i];
                if (a->repair_pagesets)
                        manager_repair_pagesets(m, s, a, wrote_knob);
                else if (a->action->kind == ACTION_RECLAIM_DYING)
                        manager_start_reclaim(m, s, a);
                else if (a->action->kind == ACTION_PERCPU_DEPOPULATE)
                        manager_percpu_depopulate(m, s, a);
        }
}

/* pcptune.prom after every sample (dry-run too: it observes).  Errors are said once until a write succeeds. */
static void manager_write_metrics(Manager *m, const ReportInput *in, const KernelFeatures *feat) {
        PromKnob knobs[2];
        size_t n = 0;
        int r;

        if (!m->prom)
                return;
        knobs[n++] = (PromKnob){ .name = in->snap->has_knob ? in->snap->knob.name : SYSCTL_PCP_HIGH_FRACTION, .knob = m->knob_known ? &m->pcp_knob : NULL,
                                 .present = in->snap->has_knob, .value = in->snap->knob.value,
                                 .has_target = m->has_pcp_target, .target = m->pcp_target,
                                 .counters = &m->pcp_counts };
        knobs[n++] = (PromKnob){ .name = m->scale_knob.desc->name, .knob = &m->scale_knob, .present = feat->batch_scale_max,
                                 .value = feat->batch_scale_max_value, .has_target = m->has_scale_target,
                                 .target = m->scale_target, .counters = &m->scale_counts };
        /* reclaim-dying's collateral: the refault windows and the swappiness= probe. */
        size_t blocked = 0;
        for (size_t i = 0; i < m->watch.n_blocks; i++)
                blocked += m->watch.blocks[i].until > now_usec(CLOCK_MONOTONIC);
        m->counters.refault_blocked = blocked;
        m->counters.reclaim_swappiness = in->snap->has_memcg && in->snap->memcg.mode == CGROUP_MEMORY_V2 &&
                                                         (m->watch.args == RECLAIM_ARGS_SWAPPINESS ||
                                                          m->watch.args == RECLAIM_ARGS_BYTES)
                                                 ? m->watch.args == RECLAIM_ARGS_SWAPPINESS
                                                 : -1;
        m->counters.has_exits = triggers_exit_count(m->triggers, &m->counters.exits);
        PromInput pin = { .report = in, .knobs = knobs, .n_knobs = n, .counters = &m->counters,
                          .version = PACKAGE_VERSION };
        r = prom_writer_write(m->prom, &pin);
        if (r < 0 && r != m->prom_error)
                log_warning_errno(r, "Failed to write %s/%s: %s, will retry at the next sample",
                                  prom_writer_dir(m->prom), PROM_FILE, errno_str(r));
        else if (r >= 0 && m->prom_error < 0)
                log_info("Wrote %s/%s again", prom_writer_dir(m->prom), PROM_FILE);
        m->prom_error = MIN(r, 0);
}

static void manager_write_status(Manager *m, const ReportInput *in) {
        _cleanup_(freep) char *path = NULL;
        json_object *o, *d;
        const char *text;

        if (m->dry_run || m->once)
                return;
        o = report_to_json(in);
        if (!o)
                return;
        d = json_object_new_object();
        json_object_object_add(d, "pid", json_object_new_int((int) getpid()));
        json_object_object_add(d, "interval_usec", json_object_new_int64((int64_t) m->interval_usec));
        json_object_object_add(d, "policy_source", json_object_new_string(strna(m->policies->source)));
        json_object_object_add(d, "samples", json_object_new_int64((int64_t) m->counters.samples));
        json_object_object_add(d, "sample_failures", json_object_new_int64((int64_t) m->counters.sample_failures));
        json_object_object_add(d, "last_sample_cpu_usec", json_object_new_int64((int64_t) m->last_sample_cpu_usec));
        json_object_object_add(o, "daemon", d);
        json_object *rw = reclaim_watch_to_json(&m->watch, in->snap->has_memcg ? in->snap->memcg.mode : CGROUP_MEMORY_NONE,
                                                now_usec(CLOCK_MONOTONIC));
        if (rw)
                json_object_object_add(o, "reclaim", rw);
        text = json_format(o, true);
        if (text && asprintf(&path, "%s/%s", m->state_dir, STATUS_FILE) >= 0) {
                int r = write_file_atomic(path, text, strlen(text), 0644);
                if (r < 0)
                        log_debug_errno(r, "Failed to write %s: %s", path, errno_str(r));
        }
        json_object_put(o);
}

/*
 * What to read again: zoneinfo and the v1 memcg directory walk cost more as
 * the host grows; when a read took more than ZONEINFO_COSTLY / MEMCG_COSTLY
 * of CPU, it is reused for up to that many multiples of samples (at most 5).
 * A cheap sample (exit storms, PSI events) reuses both.
 */
#define ZONEINFO_COSTLY (1 * USEC_PER_MSEC)
/* v1: the walk costs ~2.6 us per cgroup (11,000: 28 ms).  A rule on memcg.dying/live wants it
 * fresh (a stale count delays reclaim-dying by whole samples): reuse only above 100 ms then. */
#define MEMCG_COSTLY (20 * USEC_PER_MSEC)
#define MEMCG_COSTLY_WANTED (100 * USEC_PER_MSEC)

static unsigned manager_reuse_flags(Manager *m, bool cheap) {
        unsigned flags = 0;
        if (!m->prev)
                return 0;
        if (cheap)
                return SNAPSHOT_REUSE_ZONEINFO | SNAPSHOT_REUSE_MEMCG;
        unsigned zk = (unsigned) MIN(m->prev->zoneinfo_cost_usec / ZONEINFO_COSTLY, (usec_t) 5);
        bool wanted = policy_set_uses_metric(m->policies, METRIC_MEMCG_DYING) ||
                      policy_set_uses_metric(m->policies, METRIC_MEMCG_LIVE);
        unsigned mk = (unsigned) MIN(m->prev->memcg_cost_usec / (wanted ? MEMCG_COSTLY_WANTED : MEMCG_COSTLY), (usec_t) 5);
        if (m->zoneinfo_skips == UINT_MAX)
                m->zoneinfo_skips = 0; /* a write just changed the pagesets: read them */
        else if (zk > 0 && m->zoneinfo_skips < zk) {
                flags |= SNAPSHOT_REUSE_ZONEINFO;
                m->zoneinfo_skips++;
        } else
                m->zoneinfo_skips = 0;
        if (mk > 0 && m->memcg_skips < mk) {
                flags |= SNAPSHOT_REUSE_MEMCG;
                m->memcg_skips++;
        } else
                m->memcg_skips = 0;
        return flags;
}

/*
 * proc.exit_rate, from the triggers' proc connector.  After a (re)load the triggers are opened for the
 * new set first, with host: evaluated on this sample's metrics: no read of their own.
 */
static void manager_exit_metric(Manager *m, const Snapshot *s, MetricValues *mv, usec_t now, bool cheap) {
        if (m->triggers && m->triggers_stale && !cheap) {
                triggers_update(m->triggers, m->policies, mv, &s->topo.kernel);
                m->triggers_stale = false;
        }
        if (m->triggers) {
                triggers_exit_metric(m->triggers, mv, now);
                return;
        }
        mv->available[METRIC_PROC_EXIT_RATE] = false;
        mv->why_unavailable[METRIC_PROC_EXIT_RATE] = m->once ? "counted by a running pcptuned only: --once does not listen to exits"
                                                             : "the proc connector is not open";
}

/* Read what the trace buffer holds now (bounded), counting the CPU it took against the window's budget. */
static void manager_bulk_read(Manager *m) {
        BulkFreeCounters c;
        int r;

        if (!bulk_free_source_tracing(m->bulk))
                return;
        r = bulk_free_source_read(m->bulk, BULK_READ_MAX_BYTES);
        bulk_free_source_counters(m->bulk, &c);
        m->bulk_window_cost += c.last_cost_usec;
        if (r < 0)
                log_debug_errno(r, "Failed to read the trace instance: %s", errno_str(r));
}

static void manager_bulk_free_view(Manager *m, usec_t now, BulkFreeView *v) {
        *v = (BulkFreeView){ .why = m->bulk_why, .window_usec = BULK_KEEP_USEC };
        if (!m->bulk)
                return;
        /* The buffer is read at the bulk-free timer's ticks only: a sample (every second during an exit
         * storm) must not wait for the kernel to format trace text. */
        bulk_free_source_counters(m->bulk, &v->c);
        if (v->c.windows == 0 || (v->c.windows == 1 && bulk_free_source_tracing(m->bulk))) {
                v->why = "no tracing window has completed yet";
                return;
        }
        if (bulk_free_window_summarize(bulk_free_source_window(m->bulk), now > BULK_KEEP_USEC ? now - BULK_KEEP_USEC : 0,
                                       &v->sum) < 0) {
                v->why = "out of memory";
                return;
        }
        v->available = true;
}

static void manager_bulk_free_metrics(const BulkFreeView *v, MetricValues *mv) {
        if (!v->available) {
                for (MetricId i = METRIC_PCP_BULK_FREE_P99; i <= METRIC_PCP_BULK_FREE_SAMPLES; i++) {
                        mv->available[i] = false;
                        mv->why_unavailable[i] = v->why;
                }
                return;
        }
        /* No bulk free in the window: no hold to bound, so 0 (the window itself was traced). */
        metric_set(mv, METRIC_PCP_BULK_FREE_P99, v->sum.p99_seconds);
        metric_set(mv, METRIC_PCP_BULK_FREE_PAGES_P99, (double) v->sum.pages_p99);
        metric_set(mv, METRIC_PCP_BULK_FREE_SAMPLES, (double) v->sum.samples);
}

/* What the last sample decided for a bulk_free_p99 goal, and since when the knob holds it. */
static void manager_goal_track(Manager *m, const Decision *decision, usec_t now) {
        const PcpDecision *d = &decision->pcp_high;
        bool active = d->wanted && d->goal.kind == PCP_GOAL_BULK_FREE_P99 &&
                      (d->solve_error >= 0 || d->solve_error == -ERANGE);

        if (!active || d->fraction != m->goal_fraction || !m->goal_active)
                m->goal_applied_at = 0;
        m->goal_active = active;
        if (!active)
                return;
        m->goal = d->goal;
        m->goal_fraction = d->fraction;
        m->goal_predicted_ns = d->predicted_ns;
        int64_t v;
        if (m->goal_applied_at == 0 && !m->dry_run && m->knob_known && knob_read(m->root, m->pcp_knob.desc, &v) >= 0 &&
            v == d->fraction)
                m->goal_applied_at = now;
}

/*
 * What memory.reclaim accepts, once, when a reclaim-dying rule is loaded:
 * "0 swappiness=0" then "0" to the hierarchy's root memory.reclaim, and
 * "0 scope=dying" (contrib/kernel 0004), which reclaim nothing (see
 * reclaim_probe_args() and reclaim_probe_scope()).  Dry-run writes nothing
 * and reports only what it can see without writing.
 */
static void manager_probe_reclaim_args(Manager *m, const Snapshot *s) {
        int r;

        if (!s->has_memcg || s->memcg.mode == CGROUP_MEMORY_NONE)
                return;
        m->watch.dying_exact = s->memcg.dying_from_subsys;
        if (m->args_probed || !policy_set_has_action(m->policies, ACTION_RECLAIM_DYING))
                return;
        m->args_probed = true;
        if (m->dry_run) {
                m->watch.args = reclaim_args_guess(m->root, s->memcg.mount, s->memcg.mode);
                return;
        }
        free(m->watch.probe_file);
        if (asprintf(&m->watch.probe_file, "%s/memory.reclaim", s->memcg.mount) < 0)
                m->watch.probe_file = NULL;
        r = reclaim_probe_args(m->root, s->memcg.mount, s->memcg.mode, "/", NULL, NULL, &m->watch.args);
        if (r >= 0 && m->watch.args != RECLAIM_ARGS_NONE)
                r = reclaim_probe_scope(m->root, s->memcg.mount, s->memcg.mode, "/", NULL, NULL, &m->watch.scope_dying);
        if (r < 0) { /* the first reclaim probes both again */
                m->watch.args = RECLAIM_ARGS_UNKNOWN;
                m->watch.scope_dying = FEATURE_UNKNOWN;
        }
        m->watch.probe_error = r < 0 ? r : 0;
        if (r < 0)
                log_warning_errno(r, "Failed to probe the arguments %s accepts: %s, the first reclaim probes again",
                                  strna(m->watch.probe_file), errno_str(r));
        else
                log_info("memory.reclaim arguments: %s: %s; scope=dying (contrib/kernel 0004): %s",
                         reclaim_args_answer(m->watch.args), reclaim_args_to_string(m->watch.args),
                         m->watch.scope_dying == FEATURE_PRESENT ? "accepted, reclaim scans only dying memcgs"
                                                                 : "not accepted");
}

/* One sample: sources -> snapshot -> evaluation -> decision -> actuators.  cheap: reuse costly sources. */
static int manager_sample_full(Manager *m, bool cheap) {
        _cleanup_(snapshot_freep) Snapshot *s = NULL;
        _cleanup_(decision_done) Decision decision = { 0 };
        MetricValues mv;
        usec_t cpu0 = now_usec(CLOCK_THREAD_CPUTIME_ID), wall0 = now_usec(CLOCK_MONOTONIC), now;
        int r;

        SnapshotError serr = { 0 };
        r = snapshot_take_explain(m->root, m->prev, manager_reuse_flags(m, cheap), &s, &serr);
        if (r < 0) {
                char ebuf[768];
                m->counters.sample_failures++;
                return log_error_errno(r, "Failed to read the kernel's memory state below %s: %s%s", m->root,
                                       snapshot_error_format(m->root, &serr, r, ebuf, sizeof ebuf),
                                       m->once ? "" : ", will retry");
        }
        metrics_from_snapshot(s, &mv);
        now = now_usec(CLOCK_MONOTONIC);
        manager_exit_metric(m, s, &mv, now, cheap);
        manager_probe_reclaim_args(m, s);
        BulkFreeView bulk;
        manager_bulk_free_view(m, now, &bulk);
        manager_bulk_free_metrics(&bulk, &mv);
        manager_estimate_memcg_cost(m, s);

        kernel_features_from_snapshot(&m->declared, s, &m->features);
        if (m->floor_state != FEATURE_UNKNOWN)
                m->features.fraction_floor = m->floor_state;
        if (m->watch.args == RECLAIM_ARGS_SWAPPINESS || m->watch.args == RECLAIM_ARGS_BYTES)
                m->features.reclaim_swappiness = m->watch.args == RECLAIM_ARGS_SWAPPINESS ? FEATURE_PRESENT : FEATURE_ABSENT;
        if (m->watch.scope_dying != FEATURE_UNKNOWN)
                m->features.reclaim_scope_dying = m->watch.scope_dying;
        kernel_probes_run(&(ProbeInput){ .root = m->root, .snap = s, .kernel = s->topo.kernel, .features = &m->features },
                          &m->probes);

        r = policy_eval(m->policies, s, &mv, m->eval, now, &decision);
        if (r < 0)
                return log_error_errno(r, "Failed to evaluate policies: %s", errno_str(r));
        manager_log_rules(m, &decision, &mv);
        bool exit_rules_active = false;
        for (size_t i = 0; i < decision.n_rules; i++)
                exit_rules_active |= decision.rules[i].verdict == RULE_ACTIVE &&
                                     rule_uses_metric(decision.rules[i].rule, METRIC_PROC_EXIT_RATE);
        triggers_set_exit_rules_active(m->triggers, exit_rules_active);
        bool wrote = manager_apply_pcp(m, s, &decision);
        manager_goal_track(m, &decision, now);
        manager_apply_scale(m, &decision);
        if (wrote) { /* written or restored */
                /* The report and STATUS= show what the knob holds now, and the next sample reads
                 * zoneinfo again: the pagesets just changed. */
                int64_t v;
                if (m->knob_known && knob_read(m->root, m->pcp_knob.desc, &v) >= 0)
                        s->knob.value = v;
                m->zoneinfo_skips = UINT_MAX;
        }
        manager_run_actions(m, s, &decision, wrote);

        m->counters.samples++;
        m->last_sample_cpu_usec = now_usec(CLOCK_THREAD_CPUTIME_ID) - cpu0;
        m->counters.sample_cpu_usec += m->last_sample_cpu_usec;

        /* The probes again: writing -1 may have just told whether the kernel takes it. */
        if (m->floor_state != FEATURE_UNKNOWN && m->features.fraction_floor != m->floor_state) {
                m->features.fraction_floor = m->floor_state;
                kernel_probes_run(&(ProbeInput){ .root = m->root, .snap = s, .kernel = s->topo.kernel,
                                                 .features = &m->features },
                                  &m->probes);
        }
        MemcgCost cost;
        manager_memcg_cost(m, s, &cost);
        ReportInput in = { .snap = s, .mv = &mv, .set = m->policies, .decision = &decision,
                           .knob = m->knob_known ? &m->pcp_knob : NULL, .features = &m->features, .probes = &m->probes,
                           .memcg_cost = &cost, .bulk_free = &bulk,
                           .dry_run = m->dry_run };
        if (m->once) {
                if (m->json) {
                        json_object *o = report_to_json(&in);
                        if (!o)
                                return log_oom();
                        fprintf(m->report, "%s\n",
                                json_format(o, true));
                        json_object_put(o);
                } else
                        report_print(m->report, &in);
                fflush(m->report);
        } else {
                char status[256];
                report_status_line(&in, status, sizeof status);
                if (!streq(status, m->last_status)) {
                        (void) sd_notifyf(false, "STATUS=%s", status);
                        snprintf(m->last_status, sizeof m->last_status, "%s", status);
                }
                manager_write_status(m, &in);
        }
        m->counters.last_sample_usec = now_usec(CLOCK_MONOTONIC) - wall0;
        m->counters.last_sample_realtime_usec = now_usec(CLOCK_REALTIME);
        manager_write_metrics(m, &in, &m->features);
        log_debug("Sample %" PRIu64 " took %" PRIu64 " us of CPU%s%s%s", m->counters.samples, m->last_sample_cpu_usec,
                  cheap ? " (cheap)" : "", s->zoneinfo_reused ? ", zoneinfo reused" : "",
                  s->memcg_reused ? ", memcg counts reused" : "");
        snapshot_free(m->prev);
        m->prev = TAKE_PTR(s);
        return 0;
}

static int manager_sample(Manager *m) {
        return manager_sample_full(m, false);
}

/*
 * The duty cycle: tracing on for BULK_WINDOW_USEC every period, and on for as long as an exit storm
 * lasts (the proc connector's rate, when a rule opened it), read at each tick.  Tracing costs in
 * the kernel (an event per page freed, ~0.2 us inside the free path) and reading costs the daemon
 * CPU (the text is formatted by the kernel in read()): a window whose reads took more than
 * BULK_COST_BUDGET of the wall time pushes the next window out in proportion, and a storm stops
 * being traced continuously once one second of it costs more than BULK_STORM_BUDGET.
 */
/*
 * Add the bulk frees measured since the last call to the calibration and refit; the daemon (not
 * a dry run) keeps it in calibration.json.  The file is written at most once per window.
 */
static void manager_calibrate(Manager *m) {
        const BulkFreeWindow *w = bulk_free_source_window(m->bulk);
        _cleanup_(freep) BulkFreeRecord *recs = NULL;
        struct utsname u;
        int r;

        if (w->total <= m->cal_seen)
                return;
        size_t n = (size_t) MIN(w->total - m->cal_seen, (uint64_t) w->n);
        m->cal_seen = w->total;
        recs = malloc(MAX(n, (size_t) 1) * sizeof(BulkFreeRecord));
        if (!recs)
                return;
        n = bulk_free_window_newest(w, n, recs);
        bool had = m->cal_valid;
        r = calibration_add(&m->cal, recs, n);
        if (r < 0) {
                log_debug_errno(r, "No calibration from %.0f bulk frees yet: %s", m->cal.n, errno_str(r));
                return;
        }
        m->cal_valid = true;
        if (uname(&u) >= 0)
                snprintf(m->cal.kernel, sizeof m->cal.kernel, "%s", u.release);
        m->cal.updated = (int64_t) time(NULL);
        log_full_errno(had ? LOG_DEBUG : LOG_INFO, 0,
                       "Bulk-free calibration: %.1f ns per page (standard error %.1f ns, RMS residual %.1f us; p99 of "
                       "single bulk frees %.1f ns per page) from %.0f bulk frees of %" PRIu64 "-%" PRIu64 " pages",
                       m->cal.ns_per_page, m->cal.ns_per_page_stderr, m->cal.rms_residual_ns / 1000.0,
                       m->cal.ns_per_page_p99, m->cal.n,
                       m->cal.pages_min, m->cal.pages_max);
        if (m->dry_run)
                return;
        r = calibration_save(m->calibration_dir, &m->cal);
        if (r == -ENOENT && !m->cal_save_warned)
                log_info("%s does not exist (the unit's StateDirectory= makes it): the calibration is kept in "
                         "memory only", m->calibration_dir);
        else if (r < 0 && r != -ENOENT)
                log_warning_errno(r, "Failed to save the calibration in %s: %s, ignoring", m->calibration_dir,
                                  errno_str(r));
        m->cal_save_warned = m->cal_save_warned || r == -ENOENT;
}

/* A bulk_free_p99 goal, once applied, against what is measured: calibration_goal_feedback(). */
static void manager_goal_feedback(Manager *m, usec_t now) {
        BulkFreeSummary sum;
        char gbuf[64];

        if (!m->cal_valid)
                return;
        if (m->goal_ns <= 0) {
                /* The first calibration: goals can be solved from now on. */
                m->goal_ns = calibration_p99_ns_per_page(&m->cal);
                m->goal_ns_changed = now;
                eval_state_set_ns_per_page(m->eval, m->goal_ns);
                if (m->goal_active)
                        log_info("Bulk-free goals are solved with %.1f ns per page from now on", m->goal_ns);
                return;
        }
        if (!m->goal_active || m->goal_applied_at == 0 || !m->bulk)
                return;
        if (bulk_free_window_summarize(bulk_free_source_window(m->bulk), m->goal_applied_at, &sum) < 0 ||
            sum.samples < GOAL_MIN_SAMPLES)
                return;
        double measured = sum.p99_seconds * 1e9;
        GoalFeedback fb = calibration_goal_feedback(measured, sum.samples, (double) m->goal.value,
                                                    m->goal_predicted_ns, calibration_p99_ns_per_page(&m->cal), m->goal_ns,
                                                    now - m->goal_ns_changed);
        if (fb == GOAL_TOO_FEW || fb == GOAL_AGREES || fb < 0)
                return;
        if (fb == GOAL_KEEP) {
                log_debug("pcp.high %s: measured p99 %.0f us (%" PRIu64 " bulk frees) disagrees with the target or the "
                          "prediction %.0f us; calibration %.1f ns per page against %.1f in use, changed %.0f s ago: "
                          "keeping fraction %d",
                          pcp_goal_to_string(&m->goal, gbuf, sizeof gbuf), measured / 1000.0, sum.samples,
                          m->goal_predicted_ns / 1000.0, calibration_p99_ns_per_page(&m->cal), m->goal_ns,
                          (double) (now - m->goal_ns_changed) / 1e6, m->goal_fraction);
                return;
        }
        log_notice("pcp.high %s: measured p99 %.0f us over %" PRIu64 " bulk frees at fraction %d, predicted %.0f us; "
                   "the refitted calibration moved from %.1f to %.1f ns per page: solving the goal again",
                   pcp_goal_to_string(&m->goal, gbuf, sizeof gbuf), measured / 1000.0, sum.samples, m->goal_fraction,
                   m->goal_predicted_ns / 1000.0, m->goal_ns, calibration_p99_ns_per_page(&m->cal));
        m->goal_ns = calibration_p99_ns_per_page(&m->cal);
        m->goal_ns_changed = now;
        m->goal_applied_at = 0;
        eval_state_set_ns_per_page(m->eval, m->goal_ns);
}

static int on_bulk_timer(sd_event_source *es, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        usec_t now = now_usec(CLOCK_MONOTONIC), next;
        int r;

        if (!bulk_free_source_tracing(m->bulk)) {
                r = bulk_free_source_start(m->bulk);
                if (r < 0) {
                        log_warning_errno(r, "Failed to start tracing bulk frees: %s, retrying in %.0f s", errno_str(r),
                                          (double) m->bulk_period_usec / 1e6);
                        next = m->bulk_period_usec;
                } else {
                        m->bulk_window_cost = 0;
                        m->bulk_window_start = now;
                        next = BULK_WINDOW_USEC;
                }
        } else if (triggers_exits_busy(m->triggers, now) &&
                   (double) m->bulk_window_cost <= BULK_STORM_BUDGET * (double) (now - m->bulk_window_start)) {
                manager_bulk_read(m);
                next = BULK_WINDOW_USEC;
        } else {
                BulkFreeCounters c;
                r = bulk_free_source_stop(m->bulk);
                bulk_free_source_counters(m->bulk, &c);
                m->bulk_window_cost += c.last_cost_usec;
                if (r < 0)
                        log_debug_errno(r, "Failed to stop tracing bulk frees: %s", errno_str(r));
                manager_calibrate(m);
                manager_goal_feedback(m, now);
                usec_t on = now - m->bulk_window_start;
                next = m->bulk_period_usec > on ? m->bulk_period_usec - on : 0;
                usec_t stretch = (usec_t) ((double) m->bulk_window_cost / BULK_COST_BUDGET);
                if (stretch > on + next) {
                        log_info("Reading the trace buffer took %" PRIu64 " us of CPU in %.1f s of tracing: next "
                                 "window in %.0f s instead of %.0f s",
                                 m->bulk_window_cost, (double) on / 1e6, (double) (stretch - on) / 1e6,
                                 (double) next / 1e6);
                        next = stretch - on;
                }
        }
        r = sd_event_source_set_time(es, now_usec(CLOCK_MONOTONIC) + next);
        if (r >= 0)
                r = sd_event_source_set_enabled(es, SD_EVENT_ONESHOT);
        if (r < 0)
                return log_error_errno(r, "Failed to re-arm the bulk-free timer: %s", errno_str(r));
        return 0;
}

static void manager_setup_bulk_free(Manager *m) {
        _cleanup_(topology_done) Topology topo = { 0 };
        int r;

        if (m->bulk_period_usec == 0) {
                snprintf(m->bulk_why, sizeof m->bulk_why, "disabled (--bulk-free-period 0)");
                return;
        }
        /* A bounded buffer: BULK_BUFFER_TOTAL_KB over the CPUs, within [BULK_BUFFER_MIN_KB, BULK_BUFFER_MAX_KB]. */
        unsigned cpus = topology_read(m->root, &topo) >= 0 ? MAX(topo.possible_cpus, topo.online_cpus) : 1;
        unsigned kb = CLAMP(BULK_BUFFER_TOTAL_KB / MAX(cpus, 1U), BULK_BUFFER_MIN_KB, BULK_BUFFER_MAX_KB);
        /* mm_page_free is sampled by pfn, as sparsely as the smallest batch allows (bulk_free_free_shift()). */
        unsigned smallest = UINT_MAX;
        Zoneinfo zi = { 0 };
        if (zoneinfo_read(m->root, &zi) >= 0)
                for (size_t i = 0; i < zi.n_zones; i++)
                        for (size_t c = 0; zi.zones[i].populated && c < zi.zones[i].n_cpus; c++)
                                if (zi.zones[i].cpus[c].batch > 1)
                                        smallest = MIN(smallest, (unsigned) zi.zones[i].cpus[c].batch);
        zoneinfo_done(&zi);
        unsigned shift = bulk_free_free_shift(smallest == UINT_MAX ? 1 : smallest);
        r = bulk_free_source_new(m->root, kb, shift, BULK_WINDOW_CAPACITY, &m->bulk, m->bulk_why, sizeof m->bulk_why);
        if (r < 0) {
                log_info("pcp.bulk_free.* are unavailable: %s", m->bulk_why);
                return;
        }
        r = sd_event_add_time(m->event, &m->bulk_timer, CLOCK_MONOTONIC, now_usec(CLOCK_MONOTONIC) + BULK_WINDOW_USEC,
                              0, on_bulk_timer, m);
        if (r < 0) {
                snprintf(m->bulk_why, sizeof m->bulk_why, "no timer: %s", errno_str(r));
                m->bulk = bulk_free_source_free(m->bulk);
                return;
        }
        log_info("Measuring pcp bulk frees through tracefs: %.0f s of tracing every %.0f s and during exit storms, "
                 "%u KiB of buffer per CPU, page frees recorded for 1 pfn in %u",
                 (double) BULK_WINDOW_USEC / 1e6, (double) m->bulk_period_usec / 1e6, kb, 1U << shift);
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        int r;

        (void) manager_sample(m);
        if (!m->ready_sent) {
                (void) sd_notify(false, "READY=1");
                m->ready_sent = true;
        }
        /* Re-arm from now: a slow sample never causes a burst of catch-up samples. */
        r = sd_event_source_set_time(s, now_usec(CLOCK_MONOTONIC) + m->interval_usec);
        if (r >= 0)
                r = sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        if (r < 0)
                return log_error_errno(r, "Failed to re-arm the sampling timer: %s", errno_str(r));
        return 0;
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;
        log_info("Received %s, stopping", strsignal((int) si->ssi_signo));
        return sd_event_exit(m->event, 0);
}

static void manager_watch_policy_dir(Manager *m);

static void manager_reload(Manager *m, const char *why) {
        (void) sd_notifyf(false, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64 "\nSTATUS=Reloading policies (%s)",
                          now_usec(CLOCK_MONOTONIC), why);
        if (manager_load_policies(m, false) >= 0)
                m->triggers_stale = true;
        /* Whether or not the new set loaded: watch what the path names now, so a fix is seen. */
        manager_watch_policy_dir(m);
        (void) manager_sample(m);
        (void) sd_notify(false, "READY=1");
        m->last_status[0] = 0;
}

static int on_reload(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        manager_reload(userdata, "SIGHUP");
        return 0;
}

static int on_reload_debounced(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        log_info("The policy directory changed: reloading");
        manager_reload(m, "policy directory changed");
        return 0;
}

/* An editor writes, renames and deletes in bursts, and so does kubelet: reload once, 300 ms after the last change. */
static void manager_schedule_reload(Manager *m) {
        if (!m->reload_debounce) {
                if (sd_event_add_time_relative(m->event, &m->reload_debounce, CLOCK_MONOTONIC, 300 * USEC_PER_MSEC, 0,
                                               on_reload_debounced, m) < 0)
                        return;
        } else {
                (void) sd_event_source_set_time_relative(m->reload_debounce, 300 * USEC_PER_MSEC);
                (void) sd_event_source_set_enabled(m->reload_debounce, SD_EVENT_ONESHOT);
        }
}

/*
 * Which changes in the policy directory are worth a reload: policy files, and
 * kubelet's "..data", which every ConfigMap update renames over (see
 * policy_set_load_dir()); events about the directory itself (no name: its mode
 * changed, it was removed or moved, the queue overflowed).  Not editors' hidden
 * swap files, kubelet's "..<timestamp>" directories and "..data_tmp", nor any
 * other file.
 */
static int on_policy_dir(sd_event_source *s, const struct inotify_event *ev, void *userdata) {
        Manager *m = userdata;

        if (ev->len > 0 && !streq(ev->name, "..data") && !policy_file_name_valid(ev->name))
                return 0;
        manager_schedule_reload(m);
        return 0;
}

/* In the directory holding the policy directory, only the policy directory's own name matters. */
static int on_policy_parent(sd_event_source *s, const struct inotify_event *ev, void *userdata) {
        Manager *m = userdata;

        if (ev->len > 0 && !streq(ev->name, m->policy_dir_name))
                return 0;
        if (ev->len == 0 && !(ev->mask & IN_Q_OVERFLOW))
                return 0;
        manager_schedule_reload(m);
        return 0;
}

/*
 * Watch the policy directory, and the directory that holds it.  inotify
 * watches an inode: a watch added through a symlink stays on the old target
 * when the link is retargeted (ln -sfn), and on the old directory when another
 * is renamed over it.  So the parent is watched for the directory's name, and
 * after every reload the directory is watched again if its path resolves to
 * another inode now.  (A symlink further up the path is only followed on
 * SIGHUP.)  Called at start-up and after every reload; failures are logged
 * and leave SIGHUP.
 */
static void manager_watch_policy_dir(Manager *m) {
        const char *dir = m->policy_dir ?: POLICY_DIR_DEFAULT;
        struct stat st;
        int r;

        if (!m->event)
                return;
        if (!m->policy_dir_name) {
                _cleanup_(freep) char *parent = NULL;
                size_t len = strlen(dir), base;

                while (len > 1 && dir[len - 1] == '/')
                        len--;
                base = len;
                while (base > 0 && dir[base - 1] != '/')
                        base--;
                m->policy_dir_name = strndup(dir + base, len - base);
                parent = base == 0 ? strdup(".") : strndup(dir, base);
                if (!m->policy_dir_name || !parent) {
                        log_oom();
                        return;
                }
                if (m->policy_dir_name[0] && !streq(m->policy_dir_name, "/") && stat(parent, &st) >= 0 &&
                    S_ISDIR(st.st_mode)) {
                        r = sd_event_add_inotify(m->event, &m->inotify_parent, parent,
                                                 IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_ONLYDIR,
                                                 on_policy_parent, m);
                        if (r < 0)
                                log_warning_errno(r, "Failed to watch %s: %s; a retargeted %s needs SIGHUP", parent,
                                                  errno_str(r), dir);
                }
        }

        if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
                /* Gone, or never there (the embedded set): the parent's watch sees it come back. */
                m->inotify = sd_event_source_disable_unref(m->inotify);
                return;
        }
        if (m->inotify && st.st_dev == m->inotify_dev && st.st_ino == m->inotify_ino)
                return;
        if (m->inotify)
                log_info("%s now resolves to another directory: watching that one", dir);
        m->inotify = sd_event_source_disable_unref(m->inotify);
        r = sd_event_add_inotify(m->event, &m->inotify, dir,
                                 IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE | IN_ATTRIB |
                                         IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR,
                                 on_policy_dir, m);
        if (r < 0) {
                log_warning_errno(r, "Failed to watch %s: %s; reload with SIGHUP", dir, errno_str(r));
                return;
        }
        m->inotify_dev = st.st_dev;
        m->inotify_ino = st.st_ino;
}

/* `pcptunectl resume KNOB` leaves <state>/resume-KNOB and sends SIGUSR1. */
static void manager_resume_knob(Manager *m, Knob *k) {
        _cleanup_(freep) char *path = NULL;

        if (!k->desc || asprintf(&path, "%s/" RESUME_PREFIX "%s", m->state_dir, k->desc->name) < 0)
                return;
        if (unlink(path) < 0) {
                if (errno != ENOENT)
                        log_warning_errno(errno, "Failed to remove %s: %m", path);
                return;
        }
        if (k->admin_override) {
                k->admin_override = false;
                k->managed = false;
                k->has_last_would = false;
                log_notice("Managing %s again (its current value becomes the one restored at exit)", k->desc->name);
        }
}

static int on_resume(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        if (m->knob_known)
                manager_resume_knob(m, &m->pcp_knob);
        manager_resume_knob(m, &m->scale_knob);
        (void) manager_sample(m);
        return 0;
}

/* A trigger asks for a sample now. */
static void on_trigger_sample(void *userdata) {
        (void) manager_sample_full(userdata, true);
}

/* An exit storm is when bulk frees are long: trace it now instead of at the next window. */
static void on_exits_busy(void *userdata, usec_t now) {
        Manager *m = userdata;

        if (m->bulk && m->bulk_timer && !bulk_free_source_tracing(m->bulk) &&
            now >= m->bulk_window_start + BULK_PERIOD_MIN_USEC) {
                (void) sd_event_source_set_time(m->bulk_timer, now);
                (void) sd_event_source_set_enabled(m->bulk_timer, SD_EVENT_ONESHOT);
        }
}

/* The triggers open at the first sample, for the set loaded then (manager_exit_metric()). */
static int manager_setup_triggers(Manager *m) {
        int r = triggers_new(m->event, m->root,
                             &(TriggerHooks){ .sample_now = on_trigger_sample, .exits_busy = on_exits_busy, .userdata = m },
                             &m->triggers);
        if (r < 0)
                return log_oom();
        m->triggers_stale = true;
        return 0;
}

static int manager_setup_loop(Manager *m) {
        int r;

        r = sd_event_default(&m->event);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate the event loop: %s", errno_str(r));
        /* The signals were blocked in main() before any thread could exist. */
        if ((r = sd_event_add_signal(m->event, &m->sig_term, SIGTERM, on_exit_signal, m)) < 0 ||
            (r = sd_event_add_signal(m->event, &m->sig_int, SIGINT, on_exit_signal, m)) < 0 ||
            (r = sd_event_add_signal(m->event, &m->sig_hup, SIGHUP, on_reload, m)) < 0 ||
            (r = sd_event_add_signal(m->event, &m->sig_usr1, SIGUSR1, on_resume, m)) < 0)
                return log_error_errno(r, "Failed to watch signals: %s", errno_str(r));
        r = sd_event_add_time(m->event, &m->timer, CLOCK_MONOTONIC, 0, 0, on_timer, m);
        if (r < 0)
                return log_error_errno(r, "Failed to add the sampling timer: %s", errno_str(r));
        manager_watch_policy_dir(m);
        r = manager_setup_triggers(m);
        if (r < 0)
                return r;
        manager_setup_bulk_free(m);
        /* Pings WATCHDOG=1 at half of WatchdogSec when the unit sets it; no-op otherwise. */
        r = sd_event_set_watchdog(m->event, true);
        if (r < 0)
                log_warning_errno(r, "Failed to enable the watchdog: %s, ignoring", errno_str(r));
        return 0;
}

/* Put everything back: every managed knob that still holds what we wrote. */
static int manager_shutdown(Manager *m) {
        int r = 0;

        (void) sd_notify(false, "STOPPING=1\nSTATUS=Restoring original values");
        m->bulk_timer = sd_event_source_disable_unref(m->bulk_timer);
        m->bulk = bulk_free_source_free(m->bulk);
        /* A reclaim in flight is interrupted (its writes are bounded anyway) before restoring. */
        m->reclaim = reclaim_worker_stop(m->reclaim);
        if (m->knob_known && m->pcp_knob.managed && !m->dry_run) {
                int q = knob_release(&m->pcp_knob, m->root, m->journal, false, "pcptuned stopping");
                if (q < 0)
                        r = q;
        }
        if (m->scale_knob.managed && !m->dry_run) {
                int q = knob_release(&m->scale_knob, m->root, m->journal, false, "pcptuned stopping");
                if (q < 0)
                        r = q;
        }
        if (m->journal && m->journal->n_entries == 0 && r >= 0) {
                int q = journal_save(m->journal); /* removes the file */
                if (q < 0)
                        log_warning_errno(q, "Failed to remove the restore journal: %s", errno_str(q));
        }
        if (m->prom) {
                int q = prom_writer_remove(m->prom);
                if (q < 0)
                        log_warning_errno(q, "Failed to remove %s/%s: %s", prom_writer_dir(m->prom), PROM_FILE,
                                          errno_str(q));
        }
        if (!m->dry_run) {
                _cleanup_(freep) char *status = NULL;
                if (asprintf(&status, "%s/%s", m->state_dir, STATUS_FILE) >= 0)
                        (void) unlink(status);
        }
        return r;
}

int manager_run(Manager *m) {
        int r;

        if (m->once) {
                r = manager_sample(m);
                /* A write that failed is a failure of the one-shot, like `sysctl -w`'s. */
                if (r >= 0 && m->act_failures > 0)
                        r = -EIO;
                /* A one-shot leaves the values set (like `sysctl -w`) and no journal behind. */
                if (m->journal) {
                        journal_clear(m->journal);
                        int q = journal_save(m->journal);
                        if (q < 0)
                                log_warning_errno(q, "Failed to remove the restore journal: %s", errno_str(q));
                }
                return r < 0 ? 1 : 0;
        }

        r = manager_setup_loop(m);
        if (r < 0)
                return 1;
        log_info("pcptuned %s started: root %s, interval %.1f s%s", PACKAGE_VERSION, m->root,
                 (double) m->interval_usec / (double) USEC_PER_SEC, m->dry_run ? ", dry-run (never writes)" : "");
        r = sd_event_loop(m->event);
        if (r < 0)
                log_error_errno(r, "Event loop failed: %s", errno_str(r));
        int q = manager_shutdown(m);
        return r < 0 || q < 0 ? 1 : 0;
}
