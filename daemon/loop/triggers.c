/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <math.h>
#include <sys/epoll.h>

#include "log.h"
#include "policy-eval.h"
#include "source-procexit.h"
#include "source-psi.h"
#include "triggers.h"

/* A multiple of 2 s: allowed without CAP_SYS_RESOURCE on 6.5+ (psi_trigger_open()). */
#define PSI_WINDOW_USEC (2 * USEC_PER_SEC)

struct Triggers {
        sd_event *event;
        char *root;
        TriggerHooks hooks;

        int psi_fd;
        sd_event_source *psi_io;
        usec_t psi_last;                  /* the last sample a PSI event made */

        ProcExitSource *procexit;         /* open only while a rule of a matching policy uses proc.exit_rate */
        const char *exit_unavailable;     /* why proc.exit_rate is unavailable (static text or exit_error) */
        char exit_error[160];
        double exit_tick_rate;            /* exits/s from which fast ticks run (a quarter of the lowest threshold) */
        bool exit_rules_active;
        sd_event_source *fast_tick;
        bool stale;                       /* the set changed since the triggers were opened */       /* 1 s ticks while exits flow or an exit rule is active */
};

int triggers_new(sd_event *event, const char *root, const TriggerHooks *hooks, Triggers **ret) {
        _cleanup_(triggers_freep) Triggers *t = calloc(1, sizeof(Triggers));

        if (!t)
                return -ENOMEM;
        t->psi_fd = -EBADF;
        t->stale = true;
        t->event = sd_event_ref(event);
        t->hooks = *hooks;
        t->root = strdup(root);
        if (!t->root)
                return -ENOMEM;
        *ret = TAKE_PTR(t);
        return 0;
}

static void triggers_close_psi(Triggers *t) {
        t->psi_io = sd_event_source_disable_unref(t->psi_io);
        if (t->psi_fd >= 0)
                t->psi_fd = (close(t->psi_fd), -EBADF);
}

Triggers *triggers_free(Triggers *t) {
        if (!t)
                return NULL;
        triggers_close_psi(t);
        proc_exit_source_free(t->procexit);
        sd_event_source_disable_unref(t->fast_tick);
        sd_event_unref(t->event);
        free(t->root);
        free(t);
        return NULL;
}

/* ---- fast ticks ---------------------------------------------------------- */

bool triggers_exits_busy(Triggers *t, usec_t now) {
        return t && t->procexit && (t->exit_rules_active || proc_exit_rate(t->procexit, now) >= t->exit_tick_rate);
}

static int on_fast_tick(sd_event_source *es, uint64_t usec, void *userdata);

/* 1 s ticks while a storm may be forming or an exit rule is active; none otherwise: background
 * exits only wake the socket. */
static void triggers_arm_fast_tick(Triggers *t) {
        usec_t now = now_usec(CLOCK_MONOTONIC);
        bool want = triggers_exits_busy(t, now);
        int enabled = SD_EVENT_OFF;

        if (want && t->hooks.exits_busy)
                t->hooks.exits_busy(t->hooks.userdata, now);
        if (!want) {
                if (t->fast_tick)
                        (void) sd_event_source_set_enabled(t->fast_tick, SD_EVENT_OFF);
                return;
        }
        if (t->fast_tick && sd_event_source_get_enabled(t->fast_tick, &enabled) >= 0 && enabled != SD_EVENT_OFF)
                return;
        if (!t->fast_tick) {
                if (sd_event_add_time_relative(t->event, &t->fast_tick, CLOCK_MONOTONIC, USEC_PER_SEC, 0, on_fast_tick,
                                               t) < 0)
                        return;
        } else {
                (void) sd_event_source_set_time_relative(t->fast_tick, USEC_PER_SEC);
                (void) sd_event_source_set_enabled(t->fast_tick, SD_EVENT_ONESHOT);
        }
}

static int on_fast_tick(sd_event_source *es, uint64_t usec, void *userdata) {
        Triggers *t = userdata;

        t->hooks.sample_now(t->hooks.userdata);
        (void) sd_event_source_set_enabled(es, SD_EVENT_OFF);
        triggers_arm_fast_tick(t);
        return 0;
}

static void on_exits(void *userdata) {
        triggers_arm_fast_tick(userdata);
}

void triggers_set_decision(Triggers *t, const Decision *decision) {
        if (!t)
                return;
        t->exit_rules_active = false;
        for (size_t i = 0; i < decision->n_rules; i++)
                t->exit_rules_active |= decision->rules[i].verdict == RULE_ACTIVE &&
                                        rule_uses_metric(decision->rules[i].rule, METRIC_PROC_EXIT_RATE);
}

/* ---- PSI ----------------------------------------------------------------- */

static int on_psi(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        Triggers *t = userdata;
        usec_t now = now_usec(CLOCK_MONOTONIC);

        if (revents & EPOLLERR) {
                log_warning("The PSI trigger reported an error; sampling at the interval only");
                triggers_close_psi(t);
                return 0;
        }
        /* The kernel signals at most once per window; never sample more than once a second. */
        if (now - t->psi_last >= USEC_PER_SEC) {
                t->psi_last = now;
                log_debug("Memory pressure crossed the trigger: sampling now");
                t->hooks.sample_now(t->hooks.userdata);
        }
        return 0;
}

static bool uses_psi_on_host(const PolicySet *set, const MetricValues *mv) {
        for (MetricId id = METRIC_PSI_MEMORY_SOME_AVG10; id <= METRIC_PSI_MEMORY_FULL_AVG300; id++)
                if (policy_set_uses_metric_on_host(set, mv, id))
                        return true;
        return false;
}

/* One trigger: on "full" if a rule's lowest full threshold is below its lowest some threshold, else on "some". */
static void triggers_update_psi(Triggers *t, const PolicySet *set, const MetricValues *mv) {
        double some = policy_set_lowest_threshold(set, METRIC_PSI_MEMORY_SOME_AVG10, METRIC_PSI_MEMORY_SOME_AVG300, true);
        double full = policy_set_lowest_threshold(set, METRIC_PSI_MEMORY_FULL_AVG10, METRIC_PSI_MEMORY_FULL_AVG300, true);
        int r;

        triggers_close_psi(t);
        if (!uses_psi_on_host(set, mv))
                return;
        bool is_full = full < some;
        double pct = CLAMP(is_full ? full : (some <= 100 ? some : 10.0), 1.0, 100.0);
        usec_t threshold = (usec_t) ((double) PSI_WINDOW_USEC * pct / 100.0);
        r = psi_trigger_open(t->root, is_full, threshold, PSI_WINDOW_USEC, &t->psi_fd);
        if (r < 0) {
                log_info("PSI trigger refused (%s): memory pressure is read at each sample only", errno_str(r));
                return;
        }
        r = sd_event_add_io(t->event, &t->psi_io, t->psi_fd, EPOLLPRI, on_psi, t);
        if (r < 0) {
                t->psi_fd = (close(t->psi_fd), -EBADF);
                return;
        }
        log_info("PSI trigger: %s %.0f%% of %.0f s wakes a sample", is_full ? "full" : "some", pct,
                 (double) PSI_WINDOW_USEC / 1e6);
}

/* ---- the proc connector --------------------------------------------------- */

static int triggers_open_procexit(Triggers *t, const PolicySet *set, const KernelVersion *kernel) {
        int r;

        r = proc_exit_source_new(t->event, kernel, on_exits, t, &t->procexit);
        if (r < 0) {
                if (r == -EXDEV)
                        snprintf(t->exit_error, sizeof t->exit_error,
                                 "the proc connector serves only the initial user and pid namespaces");
                else
                        snprintf(t->exit_error, sizeof t->exit_error, "opening the proc connector failed: %s%s",
                                 errno_str(r), r == -EPERM ? " (6.1 needs CAP_NET_ADMIN)" : "");
                t->exit_unavailable = t->exit_error;
                log_warning("proc.exit_rate is unavailable: %s", t->exit_error);
                return r;
        }
        double low = policy_set_lowest_threshold(set, METRIC_PROC_EXIT_RATE, METRIC_PROC_EXIT_RATE, false);
        t->exit_tick_rate = isfinite(low) ? MAX(low / 4, 1.0) : 1.0;
        t->exit_unavailable = NULL;
        ProcExitCounters c;
        proc_exit_counters(t->procexit, &c);
        log_info("Listening to process exits on the proc connector (%s)",
                 c.filtered ? "exit events only: the kernel filters" : "all events: this kernel has no filter");
        return 0;
}

/* The proc connector is open only while a rule of a matching policy uses proc.exit_rate: every exit wakes us. */
static void triggers_update_procexit(Triggers *t, const PolicySet *set, const MetricValues *mv,
                                     const KernelVersion *kernel) {
        if (!policy_set_uses_metric_on_host(set, mv, METRIC_PROC_EXIT_RATE)) {
                if (t->procexit)
                        log_info("No rule uses proc.exit_rate any more: closing the proc connector");
                t->procexit = proc_exit_source_free(t->procexit);
                t->exit_unavailable = policy_set_uses_metric(set, METRIC_PROC_EXIT_RATE)
                                              ? "no policy using it matches this host"
                                              : NULL;
                return;
        }
        if (t->procexit)
                return;
        if (!streq(t->root, "/")) {
                t->exit_unavailable = "the proc connector serves the live host only (--root is set)";
                return;
        }
        (void) triggers_open_procexit(t, set, kernel);
}

void triggers_policies_changed(Triggers *t) {
        if (t)
                t->stale = true;
}

void triggers_sample(Triggers *t, const PolicySet *set, const KernelVersion *kernel, MetricValues *mv, usec_t now,
                     bool cheap) {
        if (t->stale && !cheap) {
                triggers_update_procexit(t, set, mv, kernel);
                triggers_update_psi(t, set, mv);
                t->stale = false;
        }
        if (t->procexit) {
                metric_set(mv, METRIC_PROC_EXIT_RATE, proc_exit_rate(t->procexit, now));
                return;
        }
        metric_set_unavailable(mv, METRIC_PROC_EXIT_RATE, t->exit_unavailable ?: "the proc connector is not open");
}

bool triggers_exit_count(const Triggers *t, uint64_t *ret) {
        ProcExitCounters c;

        if (!t || !t->procexit)
                return false;
        proc_exit_counters(t->procexit, &c);
        *ret = c.exits;
        return true;
}
