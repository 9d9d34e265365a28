/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One model per view (view.h): the getters that read a model back, and the text of `pcptunectl status`
 * and `pcptunectl plan` rendered from their JSON model -- a figure changed in the model is what the
 * text shows, so text and JSON cannot disagree.
 */
#include "test-helpers.h"

#include "log.h"
#include "metrics.h"
#include "plan.h"
#include "report.h"
#include "snapshot.h"
#include "source-table.h"
#include "view.h"

static void test_getters(void **state) {
        json_object *o = json_tokener_parse("{\"a\": {\"b\": 3, \"n\": null, \"s\": \"x\", \"d\": 1.5, \"t\": true,"
                                            " \"bytes\": 1536, \"l\": [{\"k\": 1}, {\"k\": 2}]}}");
        char buf[32];

        (void) state;
        assert_non_null(o);
        assert_non_null(view_get(o, "a.b"));
        assert_null(view_get(o, "a.n"));          /* null is absent */
        assert_null(view_get(o, "a.missing"));
        assert_null(view_get(o, "a.b.c"));        /* below a number */
        assert_true(view_has(o, "a.s"));
        assert_false(view_has(o, "a.n"));
        assert_int_equal(view_i64(o, "a.b", -1), 3);
        assert_int_equal(view_i64(o, "a.s", -1), -1); /* a string is not a number */
        assert_int_equal(view_i64(o, "a.n", -7), -7);
        assert_true(view_double(o, "a.d", 0) == 1.5);
        assert_true(view_double(o, "a.b", 0) == 3.0);
        assert_true(view_bool(o, "a.t"));
        assert_false(view_bool(o, "a.b"));       /* only a JSON true is true */
        assert_string_equal(view_str(o, "a.s", "def"), "x");
        assert_string_equal(view_str(o, "a.b", "def"), "def");
        assert_string_equal(view_bytes(o, "a.bytes", buf, sizeof buf, "none"), "1.5 KiB");
        assert_string_equal(view_bytes(o, "a.n", buf, sizeof buf, "none"), "none");
        assert_int_equal(view_len(o, "a.l"), 2);
        assert_int_equal(view_len(o, "a.b"), 0);
        assert_int_equal(view_i64(view_idx(o, "a.l", 1), "k", 0), 2);
        assert_null(view_idx(o, "a.l", 2));
        assert_true(view_get(o, NULL) == o);
        json_object_put(o);
}

/* The text print renders of a model (report_print_model(), plan_print_model()); free() it. */
static char *render(void (*print)(FILE *, json_object *), json_object *model) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        assert_non_null(f);
        print(f, model);
        fclose(f);
        return buf;
}

/* On every captured tree: the text is report_print_model() of report_to_json(), and shows the model's figures. */
static void test_status_text_from_model(void **state) {
        (void) state;
        for (size_t i = 0; fixture_sets[i]; i++) {
                char *root = fixture_root(fixture_sets[i], "root"), *text, *direct = NULL, want[128];
                Snapshot *s = NULL;
                MetricValues mv;
                size_t len = 0;

                assert_int_equal(snapshot_take(root, &s), 0);
                metrics_from_snapshot(s, &mv);
                ReportInput in = { .snap = s, .mv = &mv, .dry_run = true, .timestamp_usec = 1 };
                json_object *m = report_to_json(&in);
                assert_non_null(m);

                /* report_print() is the same rendering of the same model. */
                FILE *f = open_memstream(&direct, &len);
                assert_non_null(f);
                assert_int_equal(report_print(f, &in, false), 0);
                fclose(f);
                text = render(report_print_model, m);
                assert_string_equal(text, direct);
                free(text);

                /* Figures changed in the model are the text's figures. */
                json_object_object_add(m, "nodes", json_object_new_int(7));
                json_object_object_add(m, "pcp_held_bytes", json_object_new_int64(INT64_C(12345) << 20));
                json_object_object_add(view_idx(m, "zones", 0), "count_pages", json_object_new_int64(987654));
                text = render(report_print_model, m);
                assert_non_null(strstr(text, ", 7 nodes, "));
                assert_non_null(strstr(text, "pcp lists: 12.1 GiB held now"));
                snprintf(want, sizeof want, " %8d ", 987654);
                assert_non_null(strstr(text, want));
                free(text);

                json_object_put(m);
                free(direct);
                snapshot_free(s);
                free(root);
        }
}

/* plan: the text is plan_print_model() of plan_to_json(), and shows the model's totals and zones. */
static void test_plan_text_from_model(void **state) {
        (void) state;
        for (size_t i = 0; fixture_sets[i]; i++) {
                char *root = fixture_root(fixture_sets[i], "root"), *text, *direct = NULL;
                PlanOptions o = { .fractions = { 8 }, .n_fractions = 1, .memcgs_per_container = 1 };
                size_t len = 0;
                Snapshot *s = NULL;
                PlanHost h;

                assert_int_equal(snapshot_take(root, &s), 0);
                assert_int_equal(plan_host_from_snapshot(s, "fixture", &h), 0);
                FILE *f = open_memstream(&direct, &len);
                assert_non_null(f);
                assert_int_equal(plan_print(f, &h, &o), 0);
                fclose(f);

                json_object *m = plan_to_json(&h, &o);
                assert_non_null(m);
                text = render(plan_print_model, m);
                assert_string_equal(text, direct);
                free(text);

                json_object_object_add(view_idx(m, "totals", 0), "pcp_max_bytes", json_object_new_int64(INT64_C(3) << 30));
                json_object_object_add(view_idx(m, "zones", 0), "managed_pages", json_object_new_int64(123456789));
                text = render(plan_print_model, m);
                assert_non_null(strstr(text, "(current) 3.0 GiB"));
                assert_non_null(strstr(text, " 123456789 "));
                free(text);

                json_object_put(m);
                free(direct);
                plan_host_done(&h);
                snapshot_free(s);
                free(root);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_getters),
                cmocka_unit_test(test_status_text_from_model),
                cmocka_unit_test(test_plan_text_from_model),
        };
        log_setup("test-view", LOG_TARGET_NULL, LOG_DEBUG);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
