/* SPDX-License-Identifier: GPL-2.0-or-later */
/* model-wmark.c (watermarks, shapes) and model-percpu.c (memcg percpu cost, advisories). */
#include "test-helpers.h"

#include "log.h"
#include "model-percpu.h"
#include "model-wmark.h"
#include "source-zoneinfo.h"

static void test_int_sqrt(void **state) {
        assert_int_equal(int_sqrt_u64(0), 0);
        assert_int_equal(int_sqrt_u64(1), 1);
        assert_int_equal(int_sqrt_u64(15), 3);
        assert_int_equal(int_sqrt_u64(16), 4);
        assert_true(int_sqrt_u64(UINT64_MAX) == 4294967295ULL);
        for (uint64_t x = 1; x < 2000000; x = x * 3 + 7) {
                uint64_t r = int_sqrt_u64(x);
                assert_true(r * r <= x && (r + 1) * (r + 1) > x);
        }
}

/* Live 6.18 check (__setup_per_zone_wmarks()): pages_min 16896 (min_free_kbytes 67584), lowmem 940598. */
static void test_setup_zones_live_numbers(void **state) {
        WmarkZone z[] = {
                { .type = ZONE_TYPE_DMA, .managed_pages = 3840 },
                { .type = ZONE_TYPE_DMA32, .managed_pages = 772918 },
                { .type = ZONE_TYPE_NORMAL, .managed_pages = 163840 },
                { .type = ZONE_TYPE_MOVABLE, .managed_pages = 0 },
        };
        wmark_setup_zones(z, ELEMENTSOF(z), 67584, 4096, 10);
        assert_int_equal(z[0].min_pages, 68);
        assert_int_equal(z[0].low_pages, 85);
        assert_int_equal(z[0].high_pages, 102);
        assert_int_equal(z[0].promo_pages, 119);
        assert_int_equal(z[1].min_pages, 13883);
        assert_int_equal(z[1].low_pages, 17353);
        assert_int_equal(z[1].high_pages, 20823);
        assert_int_equal(z[1].promo_pages, 24293);
        assert_int_equal(z[2].min_pages, 2943);
        assert_int_equal(z[2].low_pages, 3678);
        assert_int_equal(z[2].high_pages, 4413);
        assert_int_equal(z[2].promo_pages, 5148);
        /* Movable: clamp(managed / 1024, 32, 128), no gap. */
        assert_int_equal(z[3].min_pages, 32);
        assert_int_equal(z[3].low_pages, 32);
        assert_int_equal(z[3].high_pages, 32);
}

/* The scale factor wins the gap on big zones: managed x 10 / 10000. */
static void test_scale_factor_gap(void **state) {
        WmarkZone z[] = { { .type = ZONE_TYPE_NORMAL, .managed_pages = 100000000 } };
        wmark_setup_zones(z, 1, 262144, 4096, 10);
        assert_int_equal(z[0].min_pages, 65536);
        assert_int_equal(z[0].low_pages, 65536 + 100000);
        wmark_setup_zones(z, 1, 262144, 4096, 100);
        assert_int_equal(z[0].low_pages, 65536 + 1000000);
}

static void test_min_free_kbytes(void **state) {
        /* int_sqrt(lowmem_kbytes * 16), clamped to [128, 262144]. */
        WmarkZone small[] = { { .type = ZONE_TYPE_DMA32, .managed_pages = 1000 } };
        assert_int_equal(wmark_default_min_free_kbytes(small, 1, 4096), 252); /* floor(sqrt(64000)) */
        WmarkZone tiny[] = { { .type = ZONE_TYPE_DMA32, .managed_pages = 10 } };
        assert_int_equal(wmark_default_min_free_kbytes(tiny, 1, 4096), 128);
        WmarkZone huge[] = { { .type = ZONE_TYPE_NORMAL, .managed_pages = 1ULL << 32 } };
        assert_int_equal(wmark_default_min_free_kbytes(huge, 1, 4096), 262144);
        /* Movable does not count as lowmem. */
        WmarkZone mov[] = { { .type = ZONE_TYPE_DMA32, .managed_pages = 1000 },
                            { .type = ZONE_TYPE_MOVABLE, .managed_pages = 1ULL << 30 } };
        assert_int_equal(wmark_default_min_free_kbytes(mov, 2, 4096), 252);
}

/* khugepaged on the live 6.18 VM: 512 x 3 zones x (2 + 9) = 16896 pages = 67584 kB (set_recommended_min_free_kbytes(), mm/khugepaged.c). */
static void test_khugepaged(void **state) {
        WmarkZone z[] = {
                { .type = ZONE_TYPE_DMA, .managed_pages = 3840 },
                { .type = ZONE_TYPE_DMA32, .managed_pages = 772918 },
                { .type = ZONE_TYPE_NORMAL, .managed_pages = 163840 },
        };
        uint64_t d = wmark_default_min_free_kbytes(z, 3, 4096);
        assert_true(d < 67584);
        assert_int_equal(wmark_khugepaged_min_free_kbytes(z, 3, 4096, d, 10), 67584);
        /* Never lowers a larger value. */
        assert_int_equal(wmark_khugepaged_min_free_kbytes(z, 3, 4096, 100000, 10), 100000);
        /* Capped at 1/20 of the free buffer pages on a small machine. */
        WmarkZone s[] = { { .type = ZONE_TYPE_DMA32, .managed_pages = 100000 } };
        uint64_t v = wmark_khugepaged_min_free_kbytes(s, 1, 4096, wmark_default_min_free_kbytes(s, 1, 4096), 10);
        assert_true(v < 100000 * 4 / 20);
}

/* A QEMU 4 GiB host (the 6.12 smp8-4G fixture: managed DMA 3840, DMA32 765920, Normal 233875): the shape
 * estimate of node 0 is within 1% in total and a few % per zone (where exactly boot allocations land is not
 * modelled); with the managed pages given, the watermarks are the kernel's default plus khugepaged, within
 * what later boot-time frees moved. */
static void test_shape_estimate(void **state) {
        HostShape h;
        WmarkZone *z = NULL;
        size_t n = 0;
        uint64_t mfk;
        char *err = NULL;

        assert_int_equal(host_shape_parse("cpus=8,memory=4GiB,nodes=1,kernel=6.12", &h, &err), 0);
        assert_int_equal(host_shape_zones(&h, &z, &n, &mfk), 0);
        assert_int_equal(n, 3);
        assert_int_equal(z[0].type, ZONE_TYPE_DMA);
        assert_int_equal(z[0].managed_pages, 3840);
        uint64_t total = z[0].managed_pages + z[1].managed_pages + z[2].managed_pages;
        assert_true(llabs((long long) total - (3840 + 765920 + 233875)) < 1003635 / 100);
        assert_true(llabs((long long) z[1].managed_pages - 765920) < 765920 * 3 / 100);
        assert_true(llabs((long long) z[2].managed_pages - 233875) < 233875 * 6 / 100);
        assert_int_equal(mfk, 67584); /* khugepaged's recommendation, as on the real guest */
        free(z);

        assert_int_equal(host_shape_parse_managed(&h, "0:DMA32=765920", &err), 0);
        assert_int_equal(host_shape_parse_managed(&h, "0:Normal=233875", &err), 0);
        assert_int_equal(host_shape_zones(&h, &z, &n, &mfk), 0);
        assert_int_equal(z[1].managed_pages, 765920);
        assert_int_equal(z[2].managed_pages, 233875);
        /* The guest printed low 16143 (DMA32) and 4895 (Normal), computed before the initrd was freed. */
        assert_true(llabs((long long) z[1].low_pages - 16143) < 100);
        assert_true(llabs((long long) z[2].low_pages - 4895) < 50);
        free(z);

        /* NUMA: node 1 is all Normal; CPUs split. */
        assert_int_equal(host_shape_parse("cpus=16,memory=8GiB,nodes=2", &h, &err), 0);
        assert_int_equal(host_shape_zones(&h, &z, &n, &mfk), 0);
        assert_int_equal(n, 4);
        assert_int_equal(z[3].node, 1);
        assert_int_equal(z[3].type, ZONE_TYPE_NORMAL);
        assert_true(llabs((long long) z[3].managed_pages - 1031383) < 1031383 / 200); /* 0.5% off a 4 GiB node */
        free(z);
}

static void test_shape_parse_errors(void **state) {
        HostShape h;
        const char *bad[] = { "", "cpus=4", "memory=1GiB", "cpus=4,memory=1GiB,nodes=0", "cpus=4,memory=1GiB,nodes=65",
                              "cpus=4,memory=1GiB,kernel=banana", "cpus=4,memory=1GiB,thp=maybe", "cpus=4,memory=12MiB",
                              "cpus=4,memory=1GiB,page=8KiB", "cpus=4,memory=1GiB,possible=2", "cpus=4,memory=1GiB,x=1",
                              "cpus=4,memory" };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char *err = NULL;
                if (host_shape_parse(bad[i], &h, &err) != -EINVAL)
                        fail_msg("'%s' accepted", bad[i]);
                free(err);
        }
        char *err = NULL;
        assert_int_equal(host_shape_parse("cpus=4,memory=1GiB", &h, &err), 0);
        assert_int_equal(host_shape_parse_managed(&h, "0:HighMem=5", &err), -EINVAL);
        free(err);
        err = NULL;
        assert_int_equal(host_shape_parse_managed(&h, "Normal=5", &err), -EINVAL);
        free(err);
        err = NULL;
        assert_int_equal(host_shape_parse_managed(&h, "0:Normal=0", &err), -EINVAL);
        free(err);
}

static void test_percpu_model(void **state) {
        PercpuCostModel m;
        percpu_memcg_cost_model(&KV(6, 18), 1, &m);
        assert_true(m.per_cpu_bytes == 2118.0);
        percpu_memcg_cost_model(&(KernelVersion){ 6, 12, 117 }, 1, &m);
        assert_true(m.per_cpu_bytes == 1942.0);
        percpu_memcg_cost_model(&(KernelVersion){ 6, 12, 117 }, 2, &m);
        assert_true(m.per_cpu_bytes == 2434.0);
        percpu_memcg_cost_model(&(KernelVersion){ 6, 1, 0 }, 2, &m);
        assert_true(m.per_cpu_bytes == 2752.0);
        assert_false(m.extrapolated);
        percpu_memcg_cost_model(&(KernelVersion){ 5, 10, 0 }, 1, &m);
        assert_true(m.extrapolated);
        /* The Debian fixtures: Percpu growth / 500 memcgs / CPUs reproduces the model within one page per unit. */
        struct {
                const char *set;
                unsigned cpus, nodes;
                KernelVersion v;
        } sets[] = {
                { "6.1.0-57-amd64-smp8-4G", 8, 1, { 6, 1, 0 } },
                { "6.1.0-57-amd64-smp16-numa2-8G", 16, 2, { 6, 1, 0 } },
                { "6.12.117+deb12-amd64-smp8-4G", 8, 1, { 6, 12, 117 } },
                { "6.12.117+deb12-amd64-smp16-numa2-8G", 16, 2, { 6, 12, 117 } },
        };
        for (size_t i = 0; i < ELEMENTSOF(sets); i++) {
                char *churn = fixture_read(sets[i].set, "memcg-churn.txt", NULL);
                unsigned long before = 0, after = 0;
                const char *b = strstr(churn, "step=0-before"), *a = strstr(churn, "step=1-after-create");
                assert_non_null(b);
                assert_non_null(a);
                assert_int_equal(sscanf(strstr(b, "percpu_kB="), "percpu_kB=%lu", &before), 1);
                assert_int_equal(sscanf(strstr(a, "percpu_kB="), "percpu_kB=%lu", &after), 1);
                double per_cpu = (double) (after - before) * 1024.0 / 500.0 / sets[i].cpus;
                percpu_memcg_cost_model(&sets[i].v, sets[i].nodes, &m);
                if (per_cpu < m.per_cpu_bytes - 8.2 || per_cpu > m.per_cpu_bytes + 8.2)
                        fail_msg("%s: measured %.1f B/CPU, model %.1f", sets[i].set, per_cpu, m.per_cpu_bytes);
                free(churn);
        }
}

static void test_advisories(void **state) {
        size_t n;
        const Advisory *a = advisories(&n);
        assert_int_equal(n, 5); /* pcp high auto-tuning is a kernel probe (probe-kernel.c) */
        bool seen_depop = false;
        for (size_t i = 0; i < n; i++) {
                assert_non_null(a[i].if_present);
                assert_non_null(a[i].if_absent);
                if (strstr(a[i].name, "depopulation")) {
                        seen_depop = true;
                        assert_true(advisory_present(&a[i], &KV(5, 14)));
                        assert_false(advisory_present(&a[i], &KV(5, 13)));
                }
        }
        assert_true(seen_depop);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_int_sqrt),        cmocka_unit_test(test_setup_zones_live_numbers),
                cmocka_unit_test(test_scale_factor_gap), cmocka_unit_test(test_min_free_kbytes),
                cmocka_unit_test(test_khugepaged),      cmocka_unit_test(test_shape_estimate),
                cmocka_unit_test(test_shape_parse_errors), cmocka_unit_test(test_percpu_model),
                cmocka_unit_test(test_advisories),
        };
        log_setup("test-wmark", LOG_TARGET_NULL, LOG_DEBUG);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
