/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>
#include <limits.h>
#include <sys/utsname.h>
#include <time.h>

#include "act-sysctl.h"
#include "calibration.h"
#include "log.h"
#include "sampler-bulkfree.h"
#include "snapshot.h"
#include "source-table.h"

/* The duty cycle (on_bulk_timer()). */
#define BULK_WINDOW_USEC (1 * USEC_PER_SEC)
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

struct BulkSampler {
        char *root;
        char *calibration_dir;
        bool calibration_dir_given;
        bool dry_run, once;
        EvalState *eval;                  /* not owned: goals are solved with goal_ns */
        sd_event *event;
        Triggers *triggers;               /* not owned; NULL: no exit storms */

        BulkFreeSource *src;
        sd_event_source *timer;
        char why[256];                    /* why pcp.bulk_free.* is unavailable */
        usec_t window_cost;               /* CPU spent reading in the current window */
        usec_t window_start;
        usec_t period_usec;               /* one BULK_WINDOW_USEC of tracing per period; 0: never */

        Calibration cal;                  /* time per page, fitted from the measured bulk frees */
        bool cal_valid;                   /* cal holds a fit (loaded or made) */
        bool cal_save_warned;
        uint64_t cal_seen;                /* window records already added to cal */
        /* bulk_free_p99 goals: the time per page they are solved with, changed with hysteresis
         * (bulk_sampler_goal_feedback()), and what the last sample decided. */
        double goal_ns;
        usec_t goal_ns_changed;
        usec_t goal_applied_at;           /* since when the knob holds the goal's fraction (0: not) */
        bool goal_active;
        PcpGoal goal;
        int goal_fraction;
        double goal_predicted_ns;
};

/* The calibration of earlier runs: a file read back by a root daemon, validated like any input. */
static void bulk_sampler_load_calibration(BulkSampler *b) {
        /* Another root (a snapshot, a test tree) is not this host: its calibration only when named. */
        int r = streq(b->root, "/") || b->calibration_dir_given ? calibration_load(b->calibration_dir, &b->cal) : -ENOENT;
        if (r >= 0) {
                b->cal_valid = true;
                b->goal_ns = calibration_p99_ns_per_page(&b->cal);
                eval_state_set_ns_per_page(b->eval, b->goal_ns);
                log_full_errno(b->once ? LOG_DEBUG : LOG_INFO, 0,
                               "Bulk-free calibration from %s: %.1f ns per page (%.0f bulk frees, kernel %s)",
                               b->calibration_dir, b->cal.ns_per_page, b->cal.n, b->cal.kernel);
                return;
        }
        b->cal = (Calibration){ 0 };
        if (r != -ENOENT)
                log_warning_errno(r, "Failed to read the calibration in %s: %s; starting a new one", b->calibration_dir,
                                  errno_str(r));
}

/* Read what the trace buffer holds now (bounded), counting the CPU it took against the window's budget. */
static void bulk_sampler_read(BulkSampler *b) {
        BulkFreeCounters c;
        int r;

        if (!bulk_free_source_tracing(b->src))
                return;
        r = bulk_free_source_read(b->src, BULK_READ_MAX_BYTES);
        bulk_free_source_counters(b->src, &c);
        b->window_cost += c.last_cost_usec;
        if (r < 0)
                log_debug_errno(r, "Failed to read the trace instance: %s", errno_str(r));
}

static void bulk_sampler_window_view(BulkSampler *b, usec_t now, BulkFreeView *v) {
        *v = (BulkFreeView){ .why = b->why, .window_usec = BULK_KEEP_USEC };
        if (!b->src)
                return;
        /* The buffer is read at the bulk-free timer's ticks only: a sample (every second during an exit
         * storm) must not wait for the kernel to format trace text. */
        bulk_free_source_counters(b->src, &v->c);
        if (v->c.windows == 0 || (v->c.windows == 1 && bulk_free_source_tracing(b->src))) {
                v->why = "no tracing window has completed yet";
                return;
        }
        if (bulk_free_window_summarize(bulk_free_source_window(b->src), now > BULK_KEEP_USEC ? now - BULK_KEEP_USEC : 0,
                                       &v->sum) < 0) {
                v->why = "out of memory";
                return;
        }
        v->available = true;
}

static void bulk_sampler_metrics(const BulkFreeView *v, MetricValues *mv) {
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

void bulk_sampler_goal_track(BulkSampler *b, const Decision *decision, const Snapshot *s, usec_t now) {
        const KnobDecision *d = &decision->knobs[KNOB_PCP_HIGH_FRACTION];
        bool active = d->wanted && d->goal.kind == PCP_GOAL_BULK_FREE_P99 &&
                      (d->solve_error >= 0 || d->solve_error == -ERANGE);

        if (!active || d->value != b->goal_fraction || !b->goal_active)
                b->goal_applied_at = 0;
        b->goal_active = active;
        if (!active)
                return;
        b->goal = d->goal;
        b->goal_fraction = (int) d->value;
        b->goal_predicted_ns = d->predicted_ns;
        int64_t v;
        if (b->goal_applied_at == 0 && !b->dry_run && snapshot_knob_value(s, KNOB_PCP_HIGH_FRACTION, &v) >= 0 &&
            v == d->value)
                b->goal_applied_at = now;
}

int bulk_sampler_new(const BulkSamplerConfig *cfg, EvalState *eval, BulkSampler **ret) {
        _cleanup_(bulk_sampler_freep) BulkSampler *b = calloc(1, sizeof(BulkSampler));

        if (!b)
                return -ENOMEM;
        b->root = strdup(cfg->root);
        b->calibration_dir = strdup(cfg->calibration_dir);
        if (!b->root || !b->calibration_dir)
                return -ENOMEM;
        b->calibration_dir_given = cfg->calibration_dir_given;
        b->dry_run = cfg->dry_run;
        b->once = cfg->once;
        b->period_usec = cfg->period_usec;
        b->eval = eval;
        snprintf(b->why, sizeof b->why, "%s",
                 cfg->once ? "measured by the running pcptuned only, not with --once" : "not started");
        bulk_sampler_load_calibration(b);
        *ret = TAKE_PTR(b);
        return 0;
}

void bulk_sampler_stop(BulkSampler *b) {
        if (!b)
                return;
        b->timer = sd_event_source_disable_unref(b->timer);
        b->src = bulk_free_source_free(b->src);
}

BulkSampler *bulk_sampler_free(BulkSampler *b) {
        if (!b)
                return NULL;
        bulk_sampler_stop(b);
        sd_event_unref(b->event);
        free(b->root);
        free(b->calibration_dir);
        free(b);
        return NULL;
}

const char *bulk_sampler_why(const BulkSampler *b) {
        return b->src ? "tracing" : b->why;
}

void bulk_sampler_view(BulkSampler *b, usec_t now, BulkFreeView *ret, MetricValues *mv) {
        bulk_sampler_window_view(b, now, ret);
        bulk_sampler_metrics(ret, mv);
}

void bulk_sampler_storm(BulkSampler *b, usec_t now) {
        if (b->src && b->timer && !bulk_free_source_tracing(b->src) && now >= b->window_start + BULK_PERIOD_MIN_USEC) {
                (void) sd_event_source_set_time(b->timer, now);
                (void) sd_event_source_set_enabled(b->timer, SD_EVENT_ONESHOT);
        }
}


/*
 * Add the bulk frees measured since the last call to the calibration and refit; the daemon (not
 * a dry run) keeps it in calibration.json.  The file is written at most once per window.
 */
static void bulk_sampler_calibrate(BulkSampler *b) {
        const BulkFreeWindow *w = bulk_free_source_window(b->src);
        _cleanup_(freep) BulkFreeRecord *recs = NULL;
        struct utsname u;
        int r;

        if (w->total <= b->cal_seen)
                return;
        size_t n = (size_t) MIN(w->total - b->cal_seen, (uint64_t) w->n);
        b->cal_seen = w->total;
        recs = malloc(MAX(n, (size_t) 1) * sizeof(BulkFreeRecord));
        if (!recs)
                return;
        n = bulk_free_window_newest(w, n, recs);
        bool had = b->cal_valid;
        r = calibration_add(&b->cal, recs, n);
        if (r < 0) {
                log_debug_errno(r, "No calibration from %.0f bulk frees yet: %s", b->cal.n, errno_str(r));
                return;
        }
        b->cal_valid = true;
        if (uname(&u) >= 0)
                snprintf(b->cal.kernel, sizeof b->cal.kernel, "%s", u.release);
        b->cal.updated = (int64_t) time(NULL);
        char p99[128];
        if (b->cal.ns_per_page_p99 > 0)
                snprintf(p99, sizeof p99, "%.1f ns per page, what goals predict with", b->cal.ns_per_page_p99);
        else
                snprintf(p99, sizeof p99, "none yet (no window with %u bulk frees of %u pages or more): goals "
                         "predict with the fit", (unsigned) CALIBRATION_MIN_SAMPLES, (unsigned) CALIBRATION_RATE_MIN_PAGES);
        log_full_errno(had ? LOG_DEBUG : LOG_INFO, 0,
                       "Bulk-free calibration: %.1f ns per page (least-squares fit; standard error %.1f ns, RMS residual "
                       "%.1f us); p99 of single bulk frees: %s; from %.0f bulk frees of %" PRIu64 "-%" PRIu64 " pages",
                       b->cal.ns_per_page, b->cal.ns_per_page_stderr, b->cal.rms_residual_ns / 1000.0, p99, b->cal.n,
                       b->cal.pages_min, b->cal.pages_max);
        if (b->dry_run)
                return;
        r = calibration_save(b->calibration_dir, &b->cal);
        if (r == -ENOENT && !b->cal_save_warned)
                log_info("%s does not exist (the unit's StateDirectory= makes it): the calibration is kept in "
                         "memory only", b->calibration_dir);
        else if (r < 0 && r != -ENOENT && r != -EPERM) /* -EPERM: calibration_save() said why */
                log_warning_errno(r, "Failed to save the calibration in %s: %s, ignoring", b->calibration_dir,
                                  errno_str(r));
        b->cal_save_warned = b->cal_save_warned || r == -ENOENT;
}

/* A bulk_free_p99 goal, once applied, against what is measured: calibration_goal_feedback(). */
static void bulk_sampler_goal_feedback(BulkSampler *b, usec_t now) {
        BulkFreeSummary sum;
        char gbuf[64];

        if (!b->cal_valid)
                return;
        if (b->goal_ns <= 0) {
                /* The first calibration: goals can be solved from now on. */
                b->goal_ns = calibration_p99_ns_per_page(&b->cal);
                b->goal_ns_changed = now;
                eval_state_set_ns_per_page(b->eval, b->goal_ns);
                if (b->goal_active)
                        log_info("Bulk-free goals are solved with %.1f ns per page from now on", b->goal_ns);
                return;
        }
        if (!b->goal_active || b->goal_applied_at == 0 || !b->src)
                return;
        if (bulk_free_window_summarize(bulk_free_source_window(b->src), b->goal_applied_at, &sum) < 0 ||
            sum.samples < GOAL_MIN_SAMPLES)
                return;
        double measured = sum.p99_seconds * 1e9, next;
        GoalFeedback fb = calibration_goal_feedback(measured, sum.samples, (double) b->goal.value,
                                                    b->goal_predicted_ns, calibration_p99_ns_per_page(&b->cal), b->goal_ns,
                                                    now - b->goal_ns_changed, &next);
        if (fb == GOAL_TOO_FEW || fb == GOAL_AGREES || fb < 0)
                return;
        if (fb == GOAL_KEEP) {
                log_debug("pcp.high %s: measured p99 %.0f us (%" PRIu64 " bulk frees) disagrees with the target or the "
                          "prediction %.0f us; calibration %.1f ns per page against %.1f in use, changed %.0f s ago: "
                          "keeping fraction %d",
                          pcp_goal_to_string(&b->goal, gbuf, sizeof gbuf), measured / 1000.0, sum.samples,
                          b->goal_predicted_ns / 1000.0, calibration_p99_ns_per_page(&b->cal), b->goal_ns,
                          (double) (now - b->goal_ns_changed) / 1e6, b->goal_fraction);
                return;
        }
        log_notice("pcp.high %s: measured p99 %.0f us over %" PRIu64 " bulk frees at fraction %d, predicted %.0f us "
                   "(calibration %.1f ns per page): solving the goal again with %.1f ns per page instead of %.1f",
                   pcp_goal_to_string(&b->goal, gbuf, sizeof gbuf), measured / 1000.0, sum.samples, b->goal_fraction,
                   b->goal_predicted_ns / 1000.0, calibration_p99_ns_per_page(&b->cal), next, b->goal_ns);
        b->goal_ns = next;
        b->goal_ns_changed = now;
        b->goal_applied_at = 0;
        eval_state_set_ns_per_page(b->eval, b->goal_ns);
}

/*
 * The duty cycle: tracing on for BULK_WINDOW_USEC every period, and on for as long as an exit storm
 * lasts (the proc connector's rate, when a rule opened it), read at each tick.  Tracing costs in
 * the kernel (an event per page freed, ~0.2 us inside the free path) and reading costs the daemon
 * CPU (the text is formatted by the kernel in read()): a window whose reads took more than
 * BULK_COST_BUDGET of the wall time pushes the next window out in proportion, and a storm stops
 * being traced continuously once one second of it costs more than BULK_STORM_BUDGET.
 */
static int on_bulk_timer(sd_event_source *es, uint64_t usec, void *userdata) {
        BulkSampler *b = userdata;
        usec_t now = now_usec(CLOCK_MONOTONIC), next;
        int r;

        if (!bulk_free_source_tracing(b->src)) {
                r = bulk_free_source_start(b->src);
                if (r < 0) {
                        log_warning_errno(r, "Failed to start tracing bulk frees: %s, retrying in %.0f s", errno_str(r),
                                          (double) b->period_usec / 1e6);
                        next = b->period_usec;
                } else {
                        b->window_cost = 0;
                        b->window_start = now;
                        next = BULK_WINDOW_USEC;
                }
        } else if (triggers_exits_busy(b->triggers, now) &&
                   (double) b->window_cost <= BULK_STORM_BUDGET * (double) (now - b->window_start)) {
                bulk_sampler_read(b);
                next = BULK_WINDOW_USEC;
        } else {
                BulkFreeCounters c;
                r = bulk_free_source_stop(b->src);
                bulk_free_source_counters(b->src, &c);
                b->window_cost += c.last_cost_usec;
                if (r < 0)
                        log_debug_errno(r, "Failed to stop tracing bulk frees: %s", errno_str(r));
                bulk_sampler_calibrate(b);
                bulk_sampler_goal_feedback(b, now);
                usec_t on = now - b->window_start;
                next = b->period_usec > on ? b->period_usec - on : 0;
                usec_t stretch = (usec_t) ((double) b->window_cost / BULK_COST_BUDGET);
                if (stretch > on + next) {
                        log_info("Reading the trace buffer took %" PRIu64 " us of CPU in %.1f s of tracing: next "
                                 "window in %.0f s instead of %.0f s",
                                 b->window_cost, (double) on / 1e6, (double) (stretch - on) / 1e6,
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

void bulk_sampler_start(BulkSampler *b, sd_event *event, Triggers *triggers) {
        _cleanup_(snapshot_freep) Snapshot *s = NULL;
        int r;

        if (b->period_usec == 0) {
                snprintf(b->why, sizeof b->why, "disabled (--bulk-free-period 0)");
                return;
        }
        b->event = sd_event_ref(event);
        b->triggers = triggers;
        if (snapshot_take_sources(b->root, SOURCE_BIT(SOURCE_TOPOLOGY), &s) < 0)
                s = NULL;
        /* A bounded buffer: BULK_BUFFER_TOTAL_KB over the CPUs, within [BULK_BUFFER_MIN_KB, BULK_BUFFER_MAX_KB]. */
        unsigned cpus = s ? MAX(s->topo.possible_cpus, s->topo.online_cpus) : 1;
        unsigned kb = CLAMP(BULK_BUFFER_TOTAL_KB / MAX(cpus, 1U), BULK_BUFFER_MIN_KB, BULK_BUFFER_MAX_KB);
        /* mm_page_free is sampled by pfn, as sparsely as the smallest batch allows (bulk_free_free_shift()). */
        unsigned smallest = UINT_MAX;
        s = snapshot_free(s);
        if (snapshot_take_sources(b->root, SOURCE_BIT(SOURCE_ZONEINFO), &s) >= 0)
                for (size_t i = 0; i < s->zoneinfo.n_zones; i++) {
                        const Zone *z = &s->zoneinfo.zones[i];
                        for (size_t c = 0; z->populated && c < z->n_cpus; c++)
                                if (z->cpus[c].batch > 1)
                                        smallest = MIN(smallest, (unsigned) z->cpus[c].batch);
                }
        unsigned shift = bulk_free_free_shift(smallest == UINT_MAX ? 1 : smallest);
        r = bulk_free_source_new(b->root, kb, shift, BULK_WINDOW_CAPACITY, &b->src, b->why, sizeof b->why);
        if (r < 0) {
                log_info("pcp.bulk_free.* are unavailable: %s", b->why);
                return;
        }
        r = sd_event_add_time(event, &b->timer, CLOCK_MONOTONIC, now_usec(CLOCK_MONOTONIC) + BULK_WINDOW_USEC,
                              0, on_bulk_timer, b);
        if (r < 0) {
                snprintf(b->why, sizeof b->why, "no timer: %s", errno_str(r));
                b->src = bulk_free_source_free(b->src);
                return;
        }
        log_info("Measuring pcp bulk frees through tracefs: %.0f s of tracing every %.0f s and during exit storms, "
                 "%u KiB of buffer per CPU, page frees recorded for 1 pfn in %u",
                 (double) BULK_WINDOW_USEC / 1e6, (double) b->period_usec / 1e6, kb, 1U << shift);
}
