/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "actuator.h"
#include "cycle.h"
#include "export-prom.h"
#include "health.h"
#include "knob-lock.h"
#include "model-percpu.h"
#include "log.h"
#include "manager.h"
#include "messages.h"
#include "metrics.h"
#include "onstop.h"
#include "policy-eval.h"
#include "policy.h"
#include "policy-watch.h"
#include "probe-kernel.h"
#include "probe-percpu.h"
#include "reclaim-watch.h"
#include "report.h"
#include "sampler.h"
#include "snapshot.h"
#include "source-table.h"
#include "sampler-bulkfree.h"
#include "triggers.h"


#define BULK_PERIOD_DEFAULT_USEC (60 * USEC_PER_SEC)  /* one second of bulk-free tracing per period */

struct Manager {
        char *root;
        char *policy_dir;
        char *state_dir;
        usec_t interval_usec;
        bool dry_run;
        bool once;
        bool json;
        bool verbose;                 /* the --once report shows each kernel probe's evidence */
        bool check_owner;
        FILE *report;
        char *metrics_dir;            /* NULL: no metrics */
        char *metrics_file;           /* --metrics-file (PROM_FILE) */
        OnStop on_stop;               /* --on-stop */

        sd_event *event;
        sd_event_source *timer;
        sd_event_source *sig_term, *sig_int, *sig_hup, *sig_usr1;

        PolicySet *policies;
        EvalState *eval;
        Journal *journal;
        int lock_fd;
        KnobLocks knob_locks;         /* flock() on each knob's file: one writer per kernel (knob-lock.h) */

        Actuator *act;                /* the knobs, their journal, the actions (actuator.h) */

        /* What makes the daemon sample now instead of at its next tick (NULL without the loop). */
        Triggers *triggers;
        PolicyWatch *policy_watch;        /* inotify on the policy directory (NULL without the loop) */

        /* pcp bulk-free holds, sampled with a duty cycle, and the calibration fitted from them. */
        BulkSampler *bulk;
        usec_t bulk_period_usec;          /* --bulk-free-period; 0: never */
        char *calibration_dir;
        bool calibration_dir_given;       /* --calibration-dir */
        Sampler *sampler;                 /* the snapshot of each sample, the last one kept */

        bool ready_sent;
        usec_t last_sample_cpu_usec;
        char last_status[256];

        /* Prometheus metrics (export-prom.h): the textfile writer and what is counted across samples. */
        PromWriter *prom;
        int prom_error;               /* the last write error, logged once until a write succeeds */
        DaemonCounters counters;
};

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        actuator_free(m->act);
        triggers_free(m->triggers);
        bulk_sampler_free(m->bulk);
        policy_watch_free(m->policy_watch);
        sampler_free(m->sampler);
        sd_event_source_unref(m->timer);
        sd_event_source_unref(m->sig_term);
        sd_event_source_unref(m->sig_int);
        sd_event_source_unref(m->sig_hup);
        sd_event_source_unref(m->sig_usr1);
        sd_event_unref(m->event);
        policy_set_free(m->policies);
        eval_state_free(m->eval);
        if (m->lock_fd >= 0)
                close(m->lock_fd);
        knob_locks_release(&m->knob_locks);
        prom_writer_free(m->prom);
        free(m->metrics_dir);
        free(m->metrics_file);
        free(m->root);
        free(m->policy_dir);
        free(m->state_dir);
        free(m->calibration_dir);
        free(m);
        return NULL;
}

int manager_new(const ManagerConfig *cfg, Manager **ret) {
        _cleanup_(manager_freep) Manager *m = calloc(1, sizeof(Manager));
        int r;

        if (!m)
                return -ENOMEM;
        m->lock_fd = -EBADF;
        knob_locks_init(&m->knob_locks);
        if (path_normalize_root(cfg->root, &m->root) < 0)
                return -ENOMEM;
        m->state_dir = strdup(cfg->state_dir ?: STATE_DIR_DEFAULT);
        m->policy_dir = cfg->policy_dir ? strdup(cfg->policy_dir) : NULL;
        m->calibration_dir = strdup(cfg->calibration_dir ?: CALIBRATION_DIR_DEFAULT);
        m->calibration_dir_given = cfg->calibration_dir;
        m->eval = eval_state_new();
        if (!m->root || !m->state_dir || (cfg->policy_dir && !m->policy_dir) || !m->eval || !m->calibration_dir ||
            sampler_new(m->root, &m->sampler) < 0)
                return -ENOMEM;
        /* The default directory is the host's node_exporter's: only a daemon observing this host
         * (root "/") writes there; a fixture root writes only where --metrics-dir says. */
        if (!cfg->no_metrics && !cfg->once && (cfg->metrics_dir || streq(m->root, "/"))) {
                m->metrics_dir = strdup(cfg->metrics_dir ?: PROM_DIR_DEFAULT);
                if (!m->metrics_dir)
                        return -ENOMEM;
        }
        m->interval_usec = cfg->interval_usec ?: INTERVAL_DEFAULT_USEC;
        /* A dry run changes no kernel state unless asked: it traces only with --bulk-free-period. */
        m->bulk_period_usec = cfg->bulk_free_period_usec == USEC_INFINITY ? 0
                              : cfg->bulk_free_period_usec ?: cfg->dry_run ? 0 : BULK_PERIOD_DEFAULT_USEC;
        m->metrics_file = strdup(cfg->metrics_file ?: PROM_FILE);
        m->on_stop = cfg->on_stop;
        if (!m->metrics_file)
                return -ENOMEM;
        m->dry_run = cfg->dry_run;
        m->once = cfg->once;
        m->json = cfg->json;
        m->verbose = cfg->verbose;
        m->check_owner = cfg->check_owner;
        m->report = cfg->report ?: stdout;
        r = actuator_new(&(ActuatorConfig){ .root = m->root, .state_dir = m->state_dir, .dry_run = m->dry_run,
                                            .once = m->once, .counters = &m->counters,
                                            .observe = snapshot_take_sources },
                         &m->act);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

/* Load the policy set; on success replace the running one.  Errors are logged. */
static int manager_load_policies(Manager *m, bool initial) {
        _cleanup_(policy_set_freep) PolicySet *set = NULL;
        _cleanup_(diagnostics_done) Diagnostics diag = { 0 };
        int r;

        /* A `plan --measure` result kept in the state directory, for status and the reclaim estimates. */
        sampler_load_measured(m->sampler, m->state_dir);

        r = policy_set_load_default(m->policy_dir, m->check_owner, &set, &diag);
        diagnostics_log(&diag);
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
        actuator_forget_warnings(m->act);
        return 0;
}

char *manager_status_name(const char *root, char buf[static STATUS_NAME_MAX]) {
        return root_state_name(root, STATUS_FILE, buf, STATUS_NAME_MAX);
}

int manager_lock_path(const char *root, char **ret) {
        return path_join_root(root, LOCK_PATH, ret);
}

int manager_lock_owner(const char *root, char **ret_state_dir) {
        _cleanup_(freep) char *path = NULL;
        _cleanup_(closep) int fd = -EBADF;
        char buf[PATH_MAX + 32];
        int64_t pid;
        ssize_t k;

        if (ret_state_dir)
                *ret_state_dir = NULL;

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
        char *second = buf + strcspn(buf, "\n");
        if (*second)
                *second++ = 0;
        if (parse_int64(buf, &pid) < 0 || pid <= 0 || pid > INT_MAX)
                return -EBADMSG;
        second[strcspn(second, "\n")] = 0;
        bool printable = second[0] == '/' && strlen(second) < PATH_MAX;
        for (const char *c = second; printable && *c; c++)
                printable = (unsigned char) *c >= 0x20 && *c != 0x7f;
        if (ret_state_dir && printable)
                *ret_state_dir = strdup(second);
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
        /* The pid, and where our state is: `pcptunectl status` with another --state-dir says so. */
        _cleanup_(freep) char *abs = realpath(m->state_dir, NULL), *text = NULL;
        if (asprintf(&text, "%d\n%s\n", (int) getpid(), abs ?: "") < 0)
                text = NULL;
        if (!text || ftruncate(fd, 0) < 0 || pwrite(fd, text, strlen(text), 0) < 0)
                log_warning_errno(errno, "Failed to write our pid to %s: %m, ignoring", path);
        m->lock_fd = fd;
        /* The root's lock is per path; the knobs' files are the kernel's (knob-lock.h). */
        return knob_locks_take(&m->knob_locks, m->root, "exiting");
}

/*
 * write_file_atomic() leaves "<name>.tmpXXXXXX" behind only when killed between
 * creating and renaming it.  Under the lock nobody else writes here: remove ours.
 */
static void manager_clean_state_dir(Manager *m) {
        char journal[JOURNAL_NAME_MAX], status[STATUS_NAME_MAX];
        /* Our root's files only: another root's daemon may share the state directory and be saving its own. */
        const char *const names[] = { manager_status_name(m->root, status), journal_file_name(m->root, journal) };
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

/* Metrics are an observer's extra: any failure here turns them off with one message, never stops us. */
static void manager_open_metrics(Manager *m) {
        int r;

        if (!m->metrics_dir)
                return;
        r = prom_writer_open_name(m->metrics_dir, m->metrics_file, PROM_LOCK_DIR, &m->prom);
        if (r == -ENOENT || r == -ENOTDIR)
                log_notice("Metrics are off: %s does not exist (pcptuned never creates it: install "
                           "prometheus-node-exporter, or set --metrics-dir)", m->metrics_dir);
        else if (r < 0)
                log_warning_errno(r, "Failed to open the metrics directory %s: %s; metrics are off", m->metrics_dir,
                                  errno_str(r));
        else
                log_info("Writing metrics to %s/%s after every sample", m->metrics_dir, m->metrics_file);
}

static void manager_note_load(Manager *m, bool ok);

int manager_startup(Manager *m) {
        int r;

        r = manager_load_policies(m, true);
        if (r < 0)
                return r;
        manager_note_load(m, true);
        r = bulk_sampler_new(&(BulkSamplerConfig){ .root = m->root, .period_usec = m->bulk_period_usec,
                                                   .calibration_dir = m->calibration_dir,
                                                   .calibration_dir_given = m->calibration_dir_given,
                                                   .dry_run = m->dry_run, .once = m->once },
                             m->eval, &m->bulk);
        if (r < 0)
                return log_oom();
        manager_open_metrics(m);
        if (m->dry_run) {
                /* Its status and health file go there (the canary's own directory). */
                if (!m->once && (r = mkdir_p(m->state_dir, 0755)) < 0)
                        log_warning_errno(r, "Failed to create the state directory %s: %s", m->state_dir, errno_str(r));
                return 0;
        }

        r = manager_take_lock(m);
        if (r < 0)
                return r;
        manager_clean_state_dir(m);
        return actuator_start(m->act);
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
                    actuator_warn_once(m->act, st->policy->name, st->rule->name))
                        log_warning("Rule %s/%s uses %s, which is unavailable here (%s): the rule stays inactive",
                                    st->policy->name, st->rule->name,
                                    metric_info((MetricId) st->unavailable_metric)->name,
                                    strna(mv->why_unavailable[st->unavailable_metric]));
        }
}

/* pcptune.prom after every sample (dry-run too: it observes).  Errors are said once until a write succeeds. */
static void manager_write_metrics(Manager *m, const ReportInput *in) {
        const ReclaimWatch *watch = actuator_watch(m->act);
        PromKnob knobs[_KNOB_ID_MAX];
        size_t n;
        int r;

        if (!m->prom)
                return;
        n = actuator_prom_knobs(m->act, knobs);
        /* reclaim-dying's collateral: the refault windows and the swappiness= probe. */
        size_t blocked = 0;
        for (size_t i = 0; i < watch->n_blocks; i++)
                blocked += watch->blocks[i].until > now_usec(CLOCK_MONOTONIC);
        m->counters.refault_blocked = blocked;
        m->counters.reclaim_swappiness = in->snap->has_memcg && in->snap->memcg.mode == CGROUP_MEMORY_V2 &&
                                                         (watch->args == RECLAIM_ARGS_SWAPPINESS ||
                                                          watch->args == RECLAIM_ARGS_BYTES)
                                                 ? watch->args == RECLAIM_ARGS_SWAPPINESS
                                                 : -1;
        m->counters.has_exits = triggers_exit_count(m->triggers, &m->counters.exits);
        PromInput pin = { .report = in, .knobs = knobs, .n_knobs = n, .counters = &m->counters,
                          .version = PACKAGE_VERSION };
        r = prom_writer_write(m->prom, &pin);
        if (r == -EBUSY && r != m->prom_error)
                log_notice("Not writing metrics: another pcptuned writes %s/%s (it holds %s); trying again at "
                           "every sample",
                           prom_writer_dir(m->prom), prom_writer_name(m->prom), prom_writer_lock_path(m->prom));
        else if (r < 0 && r != m->prom_error)
                log_warning_errno(r, "Failed to write %s/%s: %s, will retry at the next sample",
                                  prom_writer_dir(m->prom), prom_writer_name(m->prom), errno_str(r));
        else if (r >= 0 && m->prom_error < 0)
                log_info("Wrote %s/%s again", prom_writer_dir(m->prom), prom_writer_name(m->prom));
        m->prom_error = MIN(r, 0);
}

/*
 * Whether a running pcptuned (holding the lock of root, or of the host "/" for a fake root) has
 * state_dir as its state directory (its lock says so).
 */
static bool state_dir_taken(const char *root, const char *state_dir) {
        _cleanup_(freep) char *ours = realpath(state_dir, NULL);
        if (!ours)
                return false;
        for (int i = 0; i < 2; i++) {
                _cleanup_(freep) char *theirs = NULL;
                if (manager_lock_owner(i == 0 ? root : "/", &theirs) > 0 && theirs && streq(ours, theirs))
                        return true;
        }
        return false;
}

/* A dry run leaves the files of a running pcptuned with the same state directory alone: no status or health. */
static bool manager_state_taken(Manager *m) {
        return m->dry_run && state_dir_taken(m->root, m->state_dir);
}

/* The journal's state for the metrics and the health file (docs/health.md). */
static void manager_node_state(Manager *m) {
        m->counters.journal_held = m->dry_run ? 0 : health_held_knobs(actuator_knobs(m->act));
        m->counters.crash_restore = health_crash_restore_state(m->state_dir, m->root, m->dry_run,
                                                               actuator_crash_restored(m->act), manager_state_taken(m));
}

static void manager_write_health(Manager *m, const char *reason_ok) {
        if (m->once || manager_state_taken(m))
                return;
        int r = health_write_daemon(m->state_dir, &m->counters, actuator_counters(m->act), m->dry_run,
                                    m->interval_usec, reason_ok);
        if (r < 0)
                log_debug_errno(r, "Failed to write %s/" HEALTH_FILE ": %s", m->state_dir, errno_str(r));
}

/* The outcome of a policy load, for pcptune_config_* and the health file. */
static void manager_note_load(Manager *m, bool ok) {
        m->counters.config_reload_ok = ok;
        if (!ok)
                return;
        m->counters.config_reload_success_realtime_usec = now_usec(CLOCK_REALTIME);
        policy_set_hash(m->policies, m->counters.policy_hash);
}

static void manager_write_status(Manager *m, const ReportInput *in) {
        _cleanup_(freep) char *path = NULL;
        json_object *o, *d;
        const char *text;

        if (m->once || manager_state_taken(m))
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
        json_object *rw = reclaim_watch_to_json(actuator_watch(m->act), in->snap->has_memcg ? in->snap->memcg.mode : CGROUP_MEMORY_NONE,
                                                now_usec(CLOCK_MONOTONIC));
        if (rw)
                json_object_object_add(o, "reclaim", rw);
        text = json_format(o, true);
        char name[STATUS_NAME_MAX];
        if (text && asprintf(&path, "%s/%s", m->state_dir, manager_status_name(m->root, name)) >= 0) {
                int r = write_file_atomic(path, text, strlen(text), 0644);
                if (r < 0)
                        log_debug_errno(r, "Failed to write %s: %s", path, errno_str(r));
        }
        json_object_put(o);
}

static int manager_report(Manager *m, const ReportInput *in);

/* One sample: sources -> snapshot -> evaluation -> decision -> actuators, one cycle (cycle.h).  cheap: reuse
 * costly sources. */
static int manager_sample_full(Manager *m, bool cheap) {
        _cleanup_(cycle_done) Cycle c = { 0 };
        _cleanup_(act_report_done) ActReport rep = { 0 };
        _cleanup_(snapshot_freep) Snapshot *s = NULL;
        usec_t cpu0 = now_usec(CLOCK_THREAD_CPUTIME_ID), wall0 = now_usec(CLOCK_MONOTONIC), now;
        int r;

        SnapshotError serr = { 0 };
        r = sampler_take(m->sampler, m->policies, cheap, &s, &serr);
        if (r < 0) {
                char ebuf[768];
                m->counters.sample_failures++;
                return log_error_errno(r, "Failed to read the kernel's memory state below %s: %s%s", m->root,
                                       snapshot_error_format(m->root, &serr, r, ebuf, sizeof ebuf),
                                       m->once ? "" : ", will retry");
        }
        cycle_observe(&c, TAKE_PTR(s));
        now = now_usec(CLOCK_MONOTONIC);
        if (m->triggers)
                triggers_sample(m->triggers, m->policies, &c.snap->topo.kernel, &c.mv, now, cheap);
        else
                metric_set_unavailable(&c.mv, METRIC_PROC_EXIT_RATE,
                                       "counted by a running pcptuned only: --once does not listen to exits");
        actuator_probe_reclaim_args(m->act, c.snap, m->policies);
        BulkFreeView bulk;
        bulk_sampler_view(m->bulk, now, &bulk, &c.mv);

        ActLearned learned;
        actuator_learned(m->act, &learned);
        cycle_probe(&c, m->root, sampler_declared(m->sampler), &learned);
        r = cycle_evaluate(&c, m->policies, m->eval, now);
        if (r < 0)
                return log_error_errno(r, "Failed to evaluate policies: %s", errno_str(r));
        manager_log_rules(m, &c.decision, &c.mv);
        triggers_set_decision(m->triggers, &c.decision);
        sampler_memcg_cost(m->sampler, c.snap, &c.cost);
        c.has_cost = true;
        actuator_set_memcg_cost(m->act, &c.cost);
        actuator_set_calibration_note(m->act, bulk_sampler_why(m->bulk));
        Snapshot *after = NULL;
        if (actuator_act(m->act, c.snap, &c.decision, &rep) & ACT_PAGESETS_CHANGED) {
                /* The next sample reads zoneinfo again: the pagesets just changed.  --once prints its one
                 * report from a fresh read, so that its pagesets are those after the write. */
                if (m->once && snapshot_take(m->root, &after) < 0)
                        after = NULL;
                sampler_pagesets_changed(m->sampler);
        }
        cycle_fold(&c, &rep, m->eval, after);
        bulk_sampler_goal_track(m->bulk, &c.decision, cycle_shown(&c), now);

        m->counters.samples++;
        m->last_sample_cpu_usec = now_usec(CLOCK_THREAD_CPUTIME_ID) - cpu0;
        m->counters.sample_cpu_usec += m->last_sample_cpu_usec;

        ReportInput in;
        cycle_report_input(&c, &in);
        in.set = m->policies;
        in.knobs = actuator_knobs(m->act);
        in.bulk_free = &bulk;
        in.dry_run = m->dry_run;
        in.once = m->once;
        r = manager_report(m, &in);
        if (r < 0)
                return r;
        m->counters.last_sample_usec = now_usec(CLOCK_MONOTONIC) - wall0;
        m->counters.last_sample_realtime_usec = now_usec(CLOCK_REALTIME);
        manager_node_state(m);
        manager_write_metrics(m, &in);
        manager_write_health(m, NULL);
        log_debug("Sample %" PRIu64 " took %" PRIu64 " us of CPU%s%s%s", m->counters.samples, m->last_sample_cpu_usec,
                  cheap ? " (cheap)" : "", c.snap->zoneinfo_reused ? ", zoneinfo reused" : "",
                  c.snap->memcg_reused ? ", memcg counts reused" : "");
        sampler_keep(m->sampler, TAKE_PTR(c.snap));
        return 0;
}

/* What a sample shows: --once prints the report; the daemon updates STATUS= and its status file. */
static int manager_report(Manager *m, const ReportInput *in) {
        if (m->once) {
                if (m->json) {
                        json_object *o = report_to_json(in);
                        if (!o)
                                return log_oom();
                        fprintf(m->report, "%s\n",
                                json_format(o, true));
                        json_object_put(o);
                } else
                        report_print(m->report, in, m->verbose);
                fflush(m->report);
        } else {
                char status[256];
                report_status_line(in, status, sizeof status);
                if (!streq(status, m->last_status)) {
                        (void) sd_notifyf(false, "STATUS=%s", status);
                        snprintf(m->last_status, sizeof m->last_status, "%s", status);
                }
                manager_write_status(m, in);
        }
        return 0;
}

static int manager_sample(Manager *m) {
        return manager_sample_full(m, false);
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

static void manager_reload(Manager *m, const char *why) {
        (void) sd_notifyf(false, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64 "\nSTATUS=Reloading policies (%s)",
                          now_usec(CLOCK_MONOTONIC), why);
        bool loaded = manager_load_policies(m, false) >= 0;
        manager_note_load(m, loaded);
        if (loaded)
                triggers_policies_changed(m->triggers);
        /* Whether or not the new set loaded: watch what the path names now, so a fix is seen. */
        if (m->policy_watch)
                policy_watch_refresh(m->policy_watch);
        (void) manager_sample(m);
        (void) sd_notify(false, "READY=1");
        m->last_status[0] = 0;
}

static int on_reload(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        manager_reload(userdata, "SIGHUP");
        return 0;
}

static void on_policy_dir_changed(void *userdata) {
        log_info("The policy directory changed: reloading");
        manager_reload(userdata, "policy directory changed");
}

static int on_resume(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        actuator_resume(m->act);
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

        bulk_sampler_storm(m->bulk, now);
}

/* The triggers open at the first sample, for the set loaded then (manager_exit_metric()). */
static int manager_setup_triggers(Manager *m) {
        int r = triggers_new(m->event, m->root,
                             &(TriggerHooks){ .sample_now = on_trigger_sample, .exits_busy = on_exits_busy, .userdata = m },
                             &m->triggers);
        if (r < 0)
                return log_oom();
        return 0;
}

static int manager_setup_loop(Manager *m) {
        int r;

        r = sd_event_default(&m->event);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate the event loop: %s", errno_str(r));
        actuator_set_event(m->act, m->event);
        /* The signals were blocked in main() before any thread could exist. */
        if ((r = sd_event_add_signal(m->event, &m->sig_term, SIGTERM, on_exit_signal, m)) < 0 ||
            (r = sd_event_add_signal(m->event, &m->sig_int, SIGINT, on_exit_signal, m)) < 0 ||
            (r = sd_event_add_signal(m->event, &m->sig_hup, SIGHUP, on_reload, m)) < 0 ||
            (r = sd_event_add_signal(m->event, &m->sig_usr1, SIGUSR1, on_resume, m)) < 0)
                return log_error_errno(r, "Failed to watch signals: %s", errno_str(r));
        r = sd_event_add_time(m->event, &m->timer, CLOCK_MONOTONIC, 0, 0, on_timer, m);
        if (r < 0)
                return log_error_errno(r, "Failed to add the sampling timer: %s", errno_str(r));
        r = policy_watch_new(m->event, m->policy_dir ?: POLICY_DIR_DEFAULT, on_policy_dir_changed, m, &m->policy_watch);
        if (r < 0)
                return log_oom();
        policy_watch_refresh(m->policy_watch);
        r = manager_setup_triggers(m);
        if (r < 0)
                return r;
        bulk_sampler_start(m->bulk, m->event, m->triggers);
        /* Pings WATCHDOG=1 at half of WatchdogSec when the unit sets it; no-op otherwise. */
        r = sd_event_set_watchdog(m->event, true);
        if (r < 0)
                log_warning_errno(r, "Failed to enable the watchdog: %s, ignoring", errno_str(r));
        return 0;
}

/* Put everything back: every managed knob that still holds what we wrote. */
static int manager_shutdown(Manager *m) {
        char why[384];
        int r;

        (void) sd_notify(false, "STOPPING=1\nSTATUS=Stopping: restoring or handing over the original values");
        bulk_sampler_stop(m->bulk);
        /* --on-stop: keep the values for the next pcptuned (onstop.h), or hand them back. */
        bool keep = !m->dry_run && on_stop_resolve(m->on_stop, why, sizeof why);
        if (!m->dry_run && m->on_stop != ON_STOP_RESTORE)
                log_info("Stopping: %s", why);
        r = keep ? actuator_hand_over(m->act) : actuator_stop(m->act);
        if (m->prom) {
                int q = prom_writer_remove(m->prom);
                if (q < 0)
                        log_warning_errno(q, "Failed to remove %s/%s: %s", prom_writer_dir(m->prom), prom_writer_name(m->prom),
                                          errno_str(q));
        }
        if (!manager_state_taken(m)) {
                _cleanup_(freep) char *status = NULL;
                char name[STATUS_NAME_MAX];
                if (asprintf(&status, "%s/%s", m->state_dir, manager_status_name(m->root, name)) >= 0)
                        (void) unlink(status);
                /* Values kept: a last health file says so (it ages into a problem if no pcptuned follows). */
                m->counters.journal_held = r > 0 ? (uint64_t) r : 0;
                if (r > 0)
                        manager_write_health(m, "stopped, values kept for the next pcptuned");
                else
                        (void) health_remove(m->state_dir);
        }
        return MIN(r, 0);
}

int manager_run(Manager *m) {
        int r;

        if (m->once) {
                r = manager_sample(m);
                /* A write that failed is a failure of the one-shot, like `sysctl -w`'s. */
                if (r >= 0 && actuator_failures(m->act) > 0)
                        r = -EIO;
                actuator_forget_journal(m->act);
                return r < 0 ? 1 : 0;
        }

        r = manager_setup_loop(m);
        if (r < 0)
                return 1;
        char tracing[64] = "bulk-free tracing off";
        if (m->bulk_period_usec > 0)
                snprintf(tracing, sizeof tracing, "bulk-free tracing 1 s per %.0f s",
                         (double) m->bulk_period_usec / (double) USEC_PER_SEC);
        log_info("pcptuned %s started: root %s, interval %.1f s, %s%s%s", PACKAGE_VERSION, m->root,
                 (double) m->interval_usec / (double) USEC_PER_SEC, tracing,
                 m->dry_run ? ", dry-run (writes no kernel value)" : ", on stop: ",
                 m->dry_run ? "" : on_stop_to_string(m->on_stop));
        r = sd_event_loop(m->event);
        if (r < 0)
                log_error_errno(r, "Event loop failed: %s", errno_str(r));
        int q = manager_shutdown(m);
        return r < 0 || q < 0 ? 1 : 0;
}
