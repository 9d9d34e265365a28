/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "source-bulkfree.h"
#include "util.h"

/*
 * This host's time per page of a pcp bulk free, calibrated from measured
 * holds (source-bulkfree.h): a least-squares fit through the origin of the
 * hold (ns) against the pages moved, k = sum(s p) / sum(p^2), with its
 * standard error sqrt(RSS / (n - 1) / sum(p^2)) and the RMS residual.  A
 * hold of N pages spans N - 1 events, so the origin is where a one-page bulk
 * free sits to within one event; holds are traced, so k includes the
 * tracing's own cost per page (pcptuned(8)).  Kept across reboots in
 * <dir>/calibration.json (the unit's StateDirectory=), read back and
 * validated like any input: the daemon runs as root.
 */

#define CALIBRATION_FILE "calibration.json"
#define CALIBRATION_MIN_SAMPLES 20           /* fewer: no fit */
#define CALIBRATION_MAX_WEIGHT 100000.0      /* the sums are scaled down beyond this many bulk frees */
#define CALIBRATION_MAX_NS_PER_PAGE 1e6      /* 1 ms per page is no pcp bulk free */

typedef struct Calibration {
        /* The fit. */
        double ns_per_page;
        double ns_per_page_stderr;
        double rms_residual_ns;
        /* What it is made of (weighted sums: older windows weigh less once past the cap). */
        double n, sum_pp, sum_sp, sum_ss;
        uint64_t pages_min, pages_max;
        /*
         * What a p99 goal is predicted with: the 99th percentile of the time per page of single bulk
         * frees (hold / pages, those of at least CALIBRATION_RATE_MIN_PAGES), a moving average over
         * batches of at least CALIBRATION_MIN_SAMPLES (the newest weighs CALIBRATION_RATE_WEIGHT).
         * Under CPU contention it is well above the mean fit: 0.39 against 0.31 us per page on the
         * 2-CPU live host of tests/bench/exitstorm.  0: none yet (calibration_p99_ns_per_page()
         * falls back on the fit).
         */
        double ns_per_page_p99;
        char kernel[65];              /* uname -r when last fitted */
        int64_t updated;              /* CLOCK_REALTIME seconds */
} Calibration;

/*
 * Add bulk frees (span_ns, pages) to the sums; beyond CALIBRATION_MAX_WEIGHT
 * the older sums are scaled down so the fit follows the host.  Records of
 * 0 pages are skipped.  Then refit: 0, or -ENODATA (fewer than
 * CALIBRATION_MIN_SAMPLES, or no spread to fit), -EDOM (the slope is out of
 * (0, CALIBRATION_MAX_NS_PER_PAGE]).
 */
int calibration_add(Calibration *c, const BulkFreeRecord *records, size_t n);

/* Recompute ns_per_page and its errors from the sums.  0, -ENODATA or -EDOM as above. */
int calibration_fit(Calibration *c);

#define CALIBRATION_RATE_MIN_PAGES 32
#define CALIBRATION_RATE_WEIGHT 0.3

/* The time per page p99 goals and predictions use: ns_per_page_p99, else the fit's ns_per_page. */
double calibration_p99_ns_per_page(const Calibration *c);

/* Predicted hold of a bulk free of pages, in ns (ns_per_page x pages). */
double calibration_predict_ns(double ns_per_page, uint64_t pages);

/*
 * Parse the JSON of a calibration file: every key present, numbers finite
 * and in range, sums consistent with the fit (refitted and compared).  Pure.
 * 0 or -EINVAL (-ENOMEM).
 */
int calibration_parse(const char *text, size_t len, Calibration *ret);

/* The JSON text (caller frees).  NULL on ENOMEM. */
char *calibration_format(const Calibration *c);

/*
 * <dir>/calibration.json, with the journal's checks (trusted_file_read(): not a symlink, a regular
 * file owned by root, not writable by group or others, in a directory owned by root that group and
 * others cannot write unless sticky): 0, -ENOENT, -EPERM (untrusted, the reason logged as a warning),
 * -EINVAL (invalid content), -errno.
 */
int calibration_load(const char *dir, Calibration *ret);
/*
 * Atomic replace, mode 0644.  dir must exist (StateDirectory=): -ENOENT otherwise; -EPERM (logged)
 * if dir fails trusted_dir_check() (a later load would refuse the file).  0 or -errno.
 */
int calibration_save(const char *dir, const Calibration *c);

/*
 * A bulk_free_p99 goal, once applied, is checked against what is measured.
 * It disagrees when the measured p99 is above the target, or more than
 * GOAL_SLACK below the prediction (the lists could be longer).  The two are
 * not treated alike, so that the target holds and the fraction never flaps:
 *  - above the target the lists shrink: the goal is solved again with the
 *    time per page at which the fraction in use actually ran (used x
 *    measured / predicted), or the refitted calibration if that is higher;
 *    no band, since a move towards smaller lists cannot oscillate;
 *  - far below the prediction they may grow, but only when the refitted
 *    calibration is more than GOAL_NS_BAND lower than the one in use.
 * Either way only once GOAL_COOLDOWN_USEC has passed since the last change.
 * Times in ns, ns per page; since_last_change in µs.  On GOAL_RESOLVE
 * *ret_ns_per_page is the time per page to solve with (else the one in use).
 * Pure; _GOAL_FEEDBACK_INVALID without a positive time per page.
 */
#define GOAL_MIN_SAMPLES 20
#define GOAL_SLACK 0.25
#define GOAL_NS_BAND 0.10
#define GOAL_COOLDOWN_USEC (600 * USEC_PER_SEC)

typedef enum GoalFeedback {
        GOAL_AGREES,              /* measured within [prediction x (1 - slack), target] */
        GOAL_TOO_FEW,             /* fewer than GOAL_MIN_SAMPLES bulk frees since it was applied */
        GOAL_KEEP,                /* disagrees, but in cooldown, or (below) the calibration within the band */
        GOAL_RESOLVE,             /* disagrees: solve again with *ret_ns_per_page */
        _GOAL_FEEDBACK_MAX,
        _GOAL_FEEDBACK_INVALID = -EINVAL,
} GoalFeedback;

GoalFeedback calibration_goal_feedback(double measured_p99_ns, uint64_t samples, double target_ns,
                                       double predicted_ns, double refit_ns_per_page, double used_ns_per_page,
                                       usec_t since_last_change, double *ret_ns_per_page);
