/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "calibration.h"
#include "log.h"

int calibration_fit(Calibration *c) {
        if (c->n < CALIBRATION_MIN_SAMPLES || !(c->sum_pp > 0))
                return -ENODATA;
        double k = c->sum_sp / c->sum_pp;
        if (!isfinite(k) || k <= 0 || k > CALIBRATION_MAX_NS_PER_PAGE)
                return -EDOM;
        double rss = c->sum_ss - c->sum_sp * c->sum_sp / c->sum_pp;
        rss = MAX(rss, 0.0); /* rounding */
        c->ns_per_page = k;
        c->ns_per_page_stderr = sqrt(rss / (c->n - 1) / c->sum_pp);
        c->rms_residual_ns = sqrt(rss / c->n);
        return 0;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

double calibration_p99_ns_per_page(const Calibration *c) {
        return c->ns_per_page_p99 > 0 ? c->ns_per_page_p99 : c->ns_per_page;
}

/* The p99 of hold / pages over a batch of bulk frees, folded into the moving average. */
static void rate_add(Calibration *c, const BulkFreeRecord *records, size_t n) {
        _cleanup_(freep) double *rates = malloc(MAX(n, (size_t) 1) * sizeof(double));
        size_t k = 0;
        if (!rates)
                return;
        for (size_t i = 0; i < n; i++)
                if (records[i].pages >= CALIBRATION_RATE_MIN_PAGES)
                        rates[k++] = (double) records[i].span_ns / (double) records[i].pages;
        if (k < CALIBRATION_MIN_SAMPLES)
                return;
        qsort(rates, k, sizeof(double), cmp_double);
        double p99 = rates[(k * 99 + 99) / 100 - 1];
        if (!(p99 > 0) || p99 > CALIBRATION_MAX_NS_PER_PAGE)
                return;
        c->ns_per_page_p99 = c->ns_per_page_p99 > 0
                                     ? (1 - CALIBRATION_RATE_WEIGHT) * c->ns_per_page_p99 + CALIBRATION_RATE_WEIGHT * p99
                                     : p99;
}

int calibration_add(Calibration *c, const BulkFreeRecord *records, size_t n) {
        rate_add(c, records, n);
        for (size_t i = 0; i < n; i++) {
                double p = records[i].pages, s = records[i].span_ns;
                if (records[i].pages == 0)
                        continue;
                if (c->n >= CALIBRATION_MAX_WEIGHT) {
                        double f = (CALIBRATION_MAX_WEIGHT - 1) / c->n;
                        c->n *= f;
                        c->sum_pp *= f;
                        c->sum_sp *= f;
                        c->sum_ss *= f;
                }
                c->n += 1;
                c->sum_pp += p * p;
                c->sum_sp += s * p;
                c->sum_ss += s * s;
                if (c->pages_min == 0 || records[i].pages < c->pages_min)
                        c->pages_min = records[i].pages;
                c->pages_max = MAX(c->pages_max, (uint64_t) records[i].pages);
        }
        return calibration_fit(c);
}

double calibration_predict_ns(double ns_per_page, uint64_t pages) {
        return ns_per_page * (double) pages;
}

int calibration_parse(const char *text, size_t len, Calibration *ret) {
        Calibration c = { 0 };
        json_tokener *tok;
        json_object *o, *v;
        double version, k, se, rms, pmin, pmax, upd;
        int r = -EINVAL;

        if (!text || len > 65536)
                return -EINVAL;
        tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        o = json_tokener_parse_ex(tok, text, (int) len);
        bool complete = json_tokener_get_error(tok) == json_tokener_success &&
                        json_tokener_get_parse_end(tok) == len;
        json_tokener_free(tok);
        if (!o || !complete || !json_object_is_type(o, json_type_object))
                goto out;
        if (json_get_number(o, "version", 1, 1, &version) < 0 ||
            json_get_number(o, "ns_per_page", 1e-3, CALIBRATION_MAX_NS_PER_PAGE, &k) < 0 ||
            json_get_number(o, "ns_per_page_stderr", 0, CALIBRATION_MAX_NS_PER_PAGE, &se) < 0 ||
            json_get_number(o, "rms_residual_ns", 0, 1e12, &rms) < 0 ||
            json_get_number(o, "samples", CALIBRATION_MIN_SAMPLES, CALIBRATION_MAX_WEIGHT, &c.n) < 0 ||
            json_get_number(o, "sum_pages2", 1, 1e30, &c.sum_pp) < 0 ||
            json_get_number(o, "sum_span_pages", 0, 1e36, &c.sum_sp) < 0 ||
            json_get_number(o, "sum_span2", 0, 1e42, &c.sum_ss) < 0 ||
            json_get_number(o, "pages_min", 1, UINT32_MAX, &pmin) < 0 ||
            json_get_number(o, "pages_max", pmin, UINT32_MAX, &pmax) < 0 ||
            json_get_number(o, "updated", 0, 1e11, &upd) < 0)
                goto out;
        /* Files of the first version have no p99 rate: then the fit predicts. */
        if (json_object_object_get_ex(o, "ns_per_page_p99", &v) &&
            json_get_number(o, "ns_per_page_p99", 1e-3, CALIBRATION_MAX_NS_PER_PAGE, &c.ns_per_page_p99) < 0)
                goto out;
        if (!json_object_object_get_ex(o, "kernel", &v) || !json_object_is_type(v, json_type_string) ||
            json_object_get_string_len(v) >= (int) sizeof c.kernel)
                goto out;
        snprintf(c.kernel, sizeof c.kernel, "%s", json_object_get_string(v));
        for (const char *p = c.kernel; *p; p++)
                if ((unsigned char) *p < 0x20 || (unsigned char) *p >= 0x7f)
                        goto out;
        c.pages_min = (uint64_t) pmin;
        c.pages_max = (uint64_t) pmax;
        c.updated = (int64_t) upd;
        /* The stored fit must be the sums' fit: a file edited in one place only is refused. */
        if (calibration_fit(&c) < 0 || fabs(c.ns_per_page - k) > 1e-6 * k + 1e-9 ||
            fabs(c.ns_per_page_stderr - se) > 1e-6 * se + 1e-6 || fabs(c.rms_residual_ns - rms) > 1e-6 * rms + 1e-3)
                goto out;
        *ret = c;
        r = 0;
out:
        json_object_put(o);
        return r;
}

char *calibration_format(const Calibration *c) {
        json_object *o = json_object_new_object();
        char *s = NULL;

        if (!o)
                return NULL;
        json_object_object_add(o, "version", json_object_new_int(1));
        json_object_object_add(o, "ns_per_page", json_object_new_double(c->ns_per_page));
        json_object_object_add(o, "ns_per_page_stderr", json_object_new_double(c->ns_per_page_stderr));
        if (c->ns_per_page_p99 > 0)
                json_object_object_add(o, "ns_per_page_p99", json_object_new_double(c->ns_per_page_p99));
        json_object_object_add(o, "rms_residual_ns", json_object_new_double(c->rms_residual_ns));
        json_object_object_add(o, "samples", json_object_new_double(c->n));
        json_object_object_add(o, "sum_pages2", json_object_new_double(c->sum_pp));
        json_object_object_add(o, "sum_span_pages", json_object_new_double(c->sum_sp));
        json_object_object_add(o, "sum_span2", json_object_new_double(c->sum_ss));
        json_object_object_add(o, "pages_min", json_object_new_int64((int64_t) c->pages_min));
        json_object_object_add(o, "pages_max", json_object_new_int64((int64_t) c->pages_max));
        json_object_object_add(o, "kernel", json_object_new_string(c->kernel));
        json_object_object_add(o, "updated", json_object_new_int64(c->updated));
        const char *t = json_format(o, true);
        if (t && asprintf(&s, "%s\n", t) < 0)
                s = NULL;
        json_object_put(o);
        return s;
}

int calibration_load(const char *dir, Calibration *ret) {
        _cleanup_(freep) char *path = NULL, *text = NULL;
        size_t len;
        int r;

        char err[2 * PATH_MAX + 160];

        if (asprintf(&path, "%s/" CALIBRATION_FILE, dir) < 0)
                return -ENOMEM;
        /* It picks the fraction a latency goal writes: the journal's checks (trusted_file_read()). */
        r = trusted_file_read(path, 65536, &text, &len, err, sizeof err);
        if (r == -EPERM)
                log_warning("Refusing the bulk-free calibration: %s", err);
        if (r < 0)
                return r == -EFBIG ? -EINVAL : r;
        return calibration_parse(text, len, ret);
}

int calibration_save(const char *dir, const Calibration *c) {
        _cleanup_(freep) char *path = NULL, *text = NULL;

        /* The directory is the unit's StateDirectory=: never made here, so a pcptuned run by hand or by a
         * test on this host leaves no state behind unless it was pointed at a directory. */
        if (access(dir, W_OK) < 0)
                return -errno;
        text = calibration_format(c);
        if (!text || asprintf(&path, "%s/" CALIBRATION_FILE, dir) < 0)
                return -ENOMEM;
        /* Written where the next start trusts it only: not where anyone could replace it. */
        char err[2 * PATH_MAX + 160];
        int r = trusted_dir_check(dir, path, err, sizeof err);
        if (r == -EPERM)
                log_warning("Not saving the bulk-free calibration: %s", err);
        if (r < 0)
                return r;
        return write_file_atomic(path, text, strlen(text), 0644);
}

GoalFeedback calibration_goal_feedback(double measured_p99_ns, uint64_t samples, double target_ns,
                                       double predicted_ns, double refit_ns_per_page, double used_ns_per_page,
                                       usec_t since_last_change, double *ret_ns_per_page) {
        double next;

        *ret_ns_per_page = used_ns_per_page;
        if (!(used_ns_per_page > 0) || !(refit_ns_per_page > 0))
                return _GOAL_FEEDBACK_INVALID;
        if (samples < GOAL_MIN_SAMPLES)
                return GOAL_TOO_FEW;
        if (measured_p99_ns <= target_ns && measured_p99_ns >= predicted_ns * (1.0 - GOAL_SLACK))
                return GOAL_AGREES;
        if (measured_p99_ns > target_ns) {
                /* The fraction in use ran at measured / predicted times the rate it was solved with. */
                next = refit_ns_per_page;
                if (predicted_ns > 0)
                        next = MAX(next, used_ns_per_page * measured_p99_ns / predicted_ns);
                if (!(next > used_ns_per_page))
                        return GOAL_KEEP; /* the minimum already, predicted above the target */
        } else {
                /* Far below the prediction: larger lists only on a calibration clearly lower. */
                next = refit_ns_per_page;
                if (!(next < used_ns_per_page * (1.0 - GOAL_NS_BAND)))
                        return GOAL_KEEP;
        }
        if (since_last_change < GOAL_COOLDOWN_USEC)
                return GOAL_KEEP;
        *ret_ns_per_page = next;
        return GOAL_RESOLVE;
}
