/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pcptunectl plan: predicted bulk-free holds per candidate fraction (plan.h). */
#include <inttypes.h>
#include <stdlib.h>

#include "calibration.h"
#include "log.h"
#include "plan.h"
#include "probe-kernel.h"
#include "view.h"

#define HOLD_MAX_ROWS (PLAN_MAX_FRACTIONS + 8)

typedef struct HoldRow {
        int fraction;
        const char *label;       /* "default", "minimum", "current", "--latency", NULL */
        uint64_t pages;          /* per bulk free, worst zone */
        uint64_t max_bytes;      /* what pcp lists may hold */
} HoldRow;

typedef struct HoldPlan {
        HoldRow rows[HOLD_MAX_ROWS];
        size_t n;
        int latency_fraction;    /* -1: no --latency or no calibration */
        int latency_error;       /* 0, -ERANGE (even the minimum misses it) */
} HoldPlan;

static void hold_add(const PlanHost *h, HoldPlan *p, int fraction, const char *label) {
        uint64_t pages, bytes;
        for (size_t i = 0; i < p->n; i++)
                if (p->rows[i].fraction == fraction) {
                        if (label && !p->rows[i].label)
                                p->rows[i].label = label;
                        return;
                }
        if (p->n >= HOLD_MAX_ROWS ||
            pcp_bulk_free_pages_host(h->regime, h->zones, h->n_zones, h->page_size, fraction,
                                     kernel_batched_free_path(&h->kernel), h->batch_scale_max, &pages) < 0 ||
            plan_host_total_max(h, fraction, &bytes) < 0)
                return;
        p->rows[p->n++] = (HoldRow){ .fraction = fraction, .label = label, .pages = pages, .max_bytes = bytes };
}

static int row_cmp(const void *a, const void *b) {
        const HoldRow *x = a, *y = b;
        /* 0 (the default, the largest lists) first, then growing fractions: shrinking lists. */
        int64_t fx = x->fraction == 0 ? -1 : x->fraction, fy = y->fraction == 0 ? -1 : y->fraction;
        return fx < fy ? -1 : fx > fy;
}

/*
 * The candidates: the default, high capped at 33, 17, 9 and 6 x batch (pages per bulk free
 * batch << 5, 16, 8 and 5 x batch), the minimum, the current fraction, each --fraction and the
 * --latency answer.
 */
static void hold_plan(const PlanHost *h, const PlanOptions *o, HoldPlan *p) {
        static const unsigned multiples[] = { 33, 17, 9, 6 };
        int f;

        *p = (HoldPlan){ .latency_fraction = -1 };
        hold_add(h, p, 0, "default");
        for (size_t i = 0; i < ELEMENTSOF(multiples); i++)
                if (pcp_solve_goal(h->regime, h->zones, h->n_zones, h->page_size,
                                   &(PcpGoal){ PCP_GOAL_BATCH_MULTIPLE, multiples[i], 0 }, &f) >= 0)
                        hold_add(h, p, f, NULL);
        if (pcp_solve_goal(h->regime, h->zones, h->n_zones, h->page_size, &(PcpGoal){ PCP_GOAL_MINIMUM, 0, 0 }, &f) >= 0)
                hold_add(h, p, f, "minimum");
        if (h->has_fraction && !h->legacy && h->fraction >= 0)
                hold_add(h, p, h->fraction, "current");
        for (size_t i = 0; o && i < o->n_fractions; i++)
                hold_add(h, p, o->fractions[i], NULL);
        if (o && o->latency_ns > 0 && o->ns_per_page > 0) {
                PcpGoal g = { PCP_GOAL_BULK_FREE_P99, o->latency_ns, o->ns_per_page,
                              kernel_batched_free_path(&h->kernel), true, h->batch_scale_max };
                p->latency_error = pcp_solve_goal(h->regime, h->zones, h->n_zones, h->page_size, &g, &f);
                if (p->latency_error >= 0 || p->latency_error == -ERANGE) {
                        p->latency_fraction = f;
                        hold_add(h, p, f, "--latency");
                }
        }
        qsort(p->rows, p->n, sizeof(HoldRow), row_cmp);
}

void plan_print_holds_model(FILE *f, json_object *b) {
        double k = view_double(b, "ns_per_page", 0), latency_us = view_double(b, "latency_seconds", 0) * 1e6;
        char b1[32], line[768];

        fprintf(f, "\nbulk-free holds per fraction (pages: one bulk free in an exit storm, worst zone%s)\n",
                view_bool(b, "batched") ? "; this kernel frees in steps of batch" : "");
        if (k > 0)
                snprintf(line, sizeof line, "calibration: %.1f ns per page (%s)", k, view_str(b, "calibration", "n/a"));
        else
                snprintf(line, sizeof line, "no calibration: %s; pages only", view_str(b, "calibration", "none"));
        print_wrapped(f, "  ", 4, line);
        fprintf(f, "  %-12s %-10s %8s %14s %14s\n", "fraction", "", "pages", "p99 hold", "pcp max");
        for (size_t i = 0; i < view_len(b, "candidates"); i++) {
                json_object *r = view_idx(b, "candidates", i);
                char hold[32] = "-";
                if (view_has(r, "p99_seconds"))
                        snprintf(hold, sizeof hold, "%.0f us", view_double(r, "p99_seconds", 0) * 1e6);
                fprintf(f, "  %-12" PRId64 " %-10s %8" PRId64 " %14s %14s\n", view_i64(r, "fraction", 0),
                        view_str(r, "label", ""), view_i64(r, "pages", 0), hold,
                        view_bytes(r, "pcp_max_bytes", b1, sizeof b1, "0 B"));
        }
        if (view_bool(b, "batched"))
                print_wrapped(f, "  ", 4,
                              "the fraction does not change a hold here (the kernel drops zone->lock after every "
                              "batch): a latency goal (bulk_free_p99) gains nothing on this kernel, only memory "
                              "goals do (docs/kernels.md)");
        if (!view_has(b, "latency_seconds"))
                return;
        if (k <= 0)
                fprintf(f, "  --latency %.0f us: no calibration to predict with (--ns-per-page N supplies one)\n", latency_us);
        else if (view_has(b, "latency_error") && view_has(b, "latency_fraction"))
                fprintf(f, "  --latency %.0f us: no fraction meets it; the minimum, %" PRId64 ", is the closest (predicted "
                           "%.0f us)\n",
                        latency_us, view_i64(b, "latency_fraction", 0), view_double(b, "latency_p99_seconds", 0) * 1e6);
        else if (view_has(b, "latency_error"))
                fprintf(f, "  --latency: %s\n", view_str(b, "latency_error", ""));
        else {
                snprintf(line, sizeof line,
                         "--latency %.0f us: fraction %" PRId64 "%s, the largest pcp lists whose predicted p99 meets it on "
                         "every zone",
                         latency_us, view_i64(b, "latency_fraction", 0),
                         view_i64(b, "latency_fraction", 0) == 0 ? " (the default meets it)" : "");
                print_wrapped(f, "  ", 4, line);
        }
}

json_object *plan_holds_to_json(const PlanHost *h, const PlanOptions *o) {
        json_object *b = json_object_new_object(), *rows = json_object_new_array();
        double k = o ? o->ns_per_page : 0;
        HoldPlan p;

        if (!b || !rows) {
                json_object_put(b);
                json_object_put(rows);
                return NULL;
        }
        hold_plan(h, o, &p);
        if (k > 0)
                json_object_object_add(b, "ns_per_page", json_object_new_double(k));
        else
                json_object_object_add(b, "ns_per_page", NULL);
        json_object_object_add(b, "calibration", o && o->calibration_how ? json_object_new_string(o->calibration_how)
                                                                         : NULL);
        for (size_t i = 0; i < p.n; i++) {
                json_object *e = json_object_new_object();
                json_object_object_add(e, "fraction", json_object_new_int(p.rows[i].fraction));
                if (p.rows[i].label)
                        json_object_object_add(e, "label", json_object_new_string(p.rows[i].label));
                json_object_object_add(e, "pages", json_object_new_int64((int64_t) p.rows[i].pages));
                json_object_object_add(e, "p99_seconds",
                                       k > 0 ? json_object_new_double(calibration_predict_ns(k, p.rows[i].pages) / 1e9)
                                             : NULL);
                json_object_object_add(e, "pcp_max_bytes", json_object_new_int64((int64_t) p.rows[i].max_bytes));
                json_object_array_add(rows, e);
        }
        json_object_object_add(b, "candidates", rows);
        json_object_object_add(b, "batched", json_object_new_boolean(kernel_batched_free_path(&h->kernel)));
        if (o && o->latency_ns > 0) {
                json_object_object_add(b, "latency_seconds", json_object_new_double((double) o->latency_ns / 1e9));
                json_object_object_add(b, "latency_fraction",
                                       p.latency_fraction >= 0 ? json_object_new_int(p.latency_fraction) : NULL);
                json_object_object_add(b, "latency_met", json_object_new_boolean(p.latency_fraction >= 0 &&
                                                                                 p.latency_error == 0));
                json_object_object_add(b, "latency_error",
                                       k > 0 && p.latency_error < 0 ? json_object_new_string(errno_str(p.latency_error))
                                                                    : NULL);
                if (k > 0 && p.latency_fraction >= 0) {
                        uint64_t pg = 0;
                        (void) pcp_bulk_free_pages_host(h->regime, h->zones, h->n_zones, h->page_size,
                                                        p.latency_fraction, kernel_batched_free_path(&h->kernel),
                                                        h->batch_scale_max, &pg);
                        json_object_object_add(b, "latency_p99_seconds",
                                               json_object_new_double(calibration_predict_ns(k, pg) / 1e9));
                }
        }
        return b;
}
