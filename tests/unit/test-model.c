/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pcp model (daemon/model/model-pcp.c) against real kernels and against itself:
 *  - 6.1 fixtures (fixed high): batch and high exact on every zone and CPU, at
 *    the boot fraction and after writing 8, 1000 and 0;
 *  - 6.18 live fixture (tests/fixtures): batch, high_min, high_max;
 *  - 6.12 fixtures (auto-tuned high, high_min/high_max not printed): batch
 *    exact, high within its bounds; highs below high_min are reported;
 *  - the goal solver against a brute-force scan and its defining property.
 */

#include <math.h>
#include <unistd.h>
#include <sys/stat.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test-helpers.h"

#include "calibration.h"
#include "host-facts.h"
#include "model-pcp.h"
#include "model-percpu.h"
#include "probe-percpu.h"
#include "metrics.h"
#include "snapshot.h"
#include "source-zoneinfo.h"
#include "util.h"

#define PAGE_4K 4096U

/* The daemon's parser (daemon/sources/source-zoneinfo.c) reads the captured files; it is tested on its own. */
static void zi_load(const char *set, const char *file, Zoneinfo *ret) {
        size_t len;
        char *buf = fixture_read(set, file, &len);
        int r = zoneinfo_parse(buf, len, ret);
        if (r < 0)
                fail_msg("cannot parse %s/%s: %s", set, file, strerror(-r));
        free(buf);
}

/* ---------------------------------------------------------------------------------------- */
/* A fixture set: its kernel's regime and the online CPUs of each node. */

#define T_MAX_NODES 8

typedef struct THost {
        const char *set;
        PcpRegime regime;
        unsigned node_cpus[T_MAX_NODES];
        unsigned online_cpus;
} THost;

static void host_load(const char *set, THost *ret) {
        char *uname = fixture_read(set, "uname-r.txt", NULL);
        KernelVersion v;

        memset(ret, 0, sizeof(*ret));
        ret->set = set;
        assert_int_equal(kernel_version_parse(uname, &v), 0);
        free(uname);
        ret->regime = pcp_regime_from_version(&v);

        for (int node = 0; node < T_MAX_NODES; node++) {
                char name[64], *path = NULL, *list = NULL;
                unsigned count;

                snprintf(name, sizeof(name), "node%d-cpulist.txt", node);
                assert_true(asprintf(&path, "%s/%s/%s", fixtures_dir(), set, name) >= 0);
                if (read_file_at("/", path, READ_FILE_MAX, &list, NULL) < 0) {
                        free(path);
                        continue;
                }
                free(path);
                assert_int_equal(parse_cpulist(list, &count, NULL), 0);
                free(list);
                ret->node_cpus[node] = count;
                ret->online_cpus += count;
        }
        assert_true(ret->online_cpus > 0);
}

static PcpZoneInput host_zone_input(const THost *h, const Zone *z) {
        assert_true(z->node >= 0 && z->node < T_MAX_NODES);
        return (PcpZoneInput){
                .managed_pages = z->managed_pages,
                .low_pages = z->low_pages,
                .node_cpus = h->node_cpus[z->node],
                .online_cpus = h->online_cpus,
        };
}

static int fraction_of_file(const char *set, const char *file) {
        int f;

        if (sscanf(file, "zoneinfo-after-write-%d.txt", &f) == 1)
                return f;

        char *s = fixture_read(set, "percpu_pagelist_high_fraction.txt", NULL);
        int64_t v;
        assert_int_equal(parse_int64(s, &v), 0);
        free(s);
        return (int) v;
}

static const char *const zoneinfo_files[] = {
        "zoneinfo.txt",
        "zoneinfo-after-write-8.txt",
        "zoneinfo-after-write-1000.txt",
        "zoneinfo-after-write-0.txt",
};

static bool set_has_prefix(const char *set, const char *version) {
        size_t n = strlen(version);
        /* "6.1." must not match "6.12..." */
        return strncmp(set, version, n) == 0 && (set[n] == '.' || set[n] == '-' || set[n] == '+');
}

/* ---------------------------------------------------------------------------------------- */

static void test_regime(void **state) {
        (void) state;
        static const struct {
                KernelVersion v;
                PcpRegime r;
        } t[] = {
                { { 5, 4, 0 }, PCP_REGIME_LEGACY },     { { 5, 13, 19 }, PCP_REGIME_LEGACY },
                { { 5, 14, 0 }, PCP_REGIME_FIXED },     { { 6, 1, 192 }, PCP_REGIME_FIXED },
                { { 6, 6, 99 }, PCP_REGIME_FIXED },     { { 6, 7, 0 }, PCP_REGIME_AUTOTUNE },
                { { 6, 12, 117 }, PCP_REGIME_AUTOTUNE }, { { 6, 18, 44 }, PCP_REGIME_AUTOTUNE },
                { { 7, 0, 0 }, PCP_REGIME_AUTOTUNE },   { { 4, 19, 0 }, PCP_REGIME_LEGACY },
        };

        for (size_t i = 0; i < ELEMENTSOF(t); i++)
                assert_int_equal(pcp_regime_from_version(&t[i].v), t[i].r);
        assert_int_equal(pcp_regime_from_version(NULL), _PCP_REGIME_INVALID);
        assert_string_equal(pcp_regime_to_string(PCP_REGIME_LEGACY), "legacy");
        assert_string_equal(pcp_regime_to_string(PCP_REGIME_FIXED), "fixed");
        assert_string_equal(pcp_regime_to_string(PCP_REGIME_AUTOTUNE), "autotune");
        assert_null(pcp_regime_to_string(_PCP_REGIME_MAX));
        assert_null(pcp_regime_to_string(_PCP_REGIME_INVALID));
}

static void test_batchsize(void **state) {
        (void) state;

        /* 4 KiB pages: the cap is 256 pages, so 63 from 256 MiB of managed memory on. */
        assert_int_equal(pcp_zone_batchsize(0, PAGE_4K), 1);
        assert_int_equal(pcp_zone_batchsize(3840, PAGE_4K), 1);      /* DMA: 3 / 4 = 0 -> 1 -> rdp2(1) - 1 = 0 -> 1 */
        assert_int_equal(pcp_zone_batchsize(8191, PAGE_4K), 1);      /* b = 7 / 4 = 1 */
        assert_int_equal(pcp_zone_batchsize(8192, PAGE_4K), 1);      /* b = 2: rdp2(3) - 1 = 1 */
        assert_int_equal(pcp_zone_batchsize(12288, PAGE_4K), 3);     /* b = 3: rdp2(4) - 1 = 3 */
        assert_int_equal(pcp_zone_batchsize(24576, PAGE_4K), 7);     /* b = 6: rdp2(9) - 1 = 7 */
        assert_int_equal(pcp_zone_batchsize(49152, PAGE_4K), 15);    /* b = 12: rdp2(18) - 1 = 15 */
        assert_int_equal(pcp_zone_batchsize(98304, PAGE_4K), 31);    /* b = 24: rdp2(36) - 1 = 31 */
        assert_int_equal(pcp_zone_batchsize(163840, PAGE_4K), 31);   /* zone_batchsize(): b = 40: rdp2(60) - 1 */
        assert_int_equal(pcp_zone_batchsize(176127, PAGE_4K), 31);   /* b = 171 / 4 = 42: rdp2(63) - 1 */
        assert_int_equal(pcp_zone_batchsize(176128, PAGE_4K), 63);   /* b = 43: rdp2(64) - 1 */
        assert_int_equal(pcp_zone_batchsize(262144, PAGE_4K), 63);
        assert_int_equal(pcp_zone_batchsize(UINT64_C(1) << 40, PAGE_4K), 63);
        assert_int_equal(pcp_zone_batchsize(UINT64_MAX, PAGE_4K), 63);

        /* 16 KiB pages: cap 64 pages -> 16 -> rdp2(24) - 1 = 15. */
        assert_int_equal(pcp_zone_batchsize(UINT64_C(1) << 30, 16384), 15);
        assert_int_equal(pcp_zone_batchsize(32768, 16384), 7);       /* b = 32 / 4 = 8: rdp2(12) - 1 */
        /* 64 KiB pages: cap 16 pages -> 4 -> rdp2(6) - 1 = 3 (zone_batchsize(), mm/page_alloc.c). */
        assert_int_equal(pcp_zone_batchsize(UINT64_C(1) << 30, 65536), 3);
        assert_int_equal(pcp_zone_batchsize(4096, 65536), 1);

        assert_int_equal(pcp_zone_batchsize(1 << 20, 0), -EINVAL);
        assert_int_equal(pcp_zone_batchsize(1 << 20, 3000), -EINVAL);
        assert_int_equal(pcp_zone_batchsize(1 << 20, 2048), -EINVAL);
}

static void check_setting(PcpRegime regime, uint64_t managed, uint64_t low, unsigned node_cpus, unsigned online,
                          int fraction, int batch, int high_min, int high_max) {
        PcpZoneInput z = { managed, low, node_cpus, online };
        PcpSetting s;

        assert_int_equal(pcp_model_zone(regime, &z, PAGE_4K, fraction, &s), 0);
        if (s.batch != batch || s.high_min != high_min || s.high_max != high_max)
                fail_msg("managed %" PRIu64 " low %" PRIu64 " cpus %u fraction %d: got %d/%d/%d, want %d/%d/%d",
                         managed, low, node_cpus, fraction, s.batch, s.high_min, s.high_max, batch, high_min,
                         high_max);
}

/* Live 6.18 (tests/fixtures/6.18.44-fc-live-*), 2 CPUs, one node; every CPU matched in all 12 cases. */
static void test_table_6_18(void **state) {
        (void) state;
        static const struct {
                uint64_t managed, low;
                int fraction, batch, high_min, high_max;
        } t[] = {
                { 3840, 51, 0, 1, 25, 240 },          { 772918, 10442, 0, 63, 5221, 48307 },
                { 786432, 10625, 0, 63, 5312, 49152 }, { 3840, 51, 8, 1, 240, 240 },
                { 772918, 10442, 8, 63, 48307, 48307 }, { 786432, 10625, 8, 63, 49152, 49152 },
                { 3840, 51, 100, 1, 19, 19 },         { 772918, 10442, 100, 63, 3864, 3864 },
                { 786432, 10625, 100, 63, 3932, 3932 }, { 3840, 51, 1000, 1, 4, 4 },
                { 772918, 10442, 1000, 63, 386, 386 }, { 786432, 10625, 1000, 63, 393, 393 },
                /* §1.3, the earlier snapshot: Normal 163840/3678, DMA low 85. */
                { 163840, 3678, 0, 31, 1839, 10240 }, { 3840, 85, 0, 1, 42, 240 },
        };

        for (size_t i = 0; i < ELEMENTSOF(t); i++)
                check_setting(PCP_REGIME_AUTOTUNE, t[i].managed, t[i].low, 2, 2, t[i].fraction, t[i].batch,
                              t[i].high_min, t[i].high_max);

        /* The same zones before 6.7: one fixed high = high_min. */
        check_setting(PCP_REGIME_FIXED, 772918, 10442, 2, 2, 0, 63, 5221, 5221);
        check_setting(PCP_REGIME_FIXED, 772918, 10442, 2, 2, 1000, 63, 386, 386);
        check_setting(PCP_REGIME_FIXED, 3840, 51, 2, 2, 1000, 1, 4, 4);
}

/* 1. 6.1 fixtures: the printed high is the fixed high; batch and high exact everywhere. */
static void test_fixtures_6_1_fixed(void **state) {
        (void) state;
        size_t exact = 0, total = 0, files = 0;

        for (const char *const *set = fixture_sets; *set; set++) {
                if (!set_has_prefix(*set, "6.1"))
                        continue;

                THost h;
                host_load(*set, &h);
                assert_int_equal(h.regime, PCP_REGIME_FIXED);

                for (size_t f = 0; f < ELEMENTSOF(zoneinfo_files); f++) {
                        int fraction = fraction_of_file(*set, zoneinfo_files[f]);
                        _cleanup_(zoneinfo_done) Zoneinfo zi = { 0 };

                        zi_load(*set, zoneinfo_files[f], &zi);
                        files++;

                        for (size_t i = 0; i < zi.n_zones; i++) {
                                const Zone *z = &zi.zones[i];
                                PcpZoneInput in = host_zone_input(&h, z);
                                PcpSetting s;

                                if (!z->populated)
                                        continue;
                                assert_true(z->n_cpus > 0);
                                assert_int_equal(pcp_model_zone(h.regime, &in, PAGE_4K, fraction, &s), 0);
                                assert_int_equal(s.high_min, s.high_max);
                                for (size_t c = 0; c < z->n_cpus; c++) {
                                        const PcpCpu *cpu = &z->cpus[c];
                                        total++;
                                        if (cpu->batch == s.batch && cpu->high == s.high_max)
                                                exact++;
                                        else
                                                print_message("# MISMATCH %s %s node %d %s cpu %d fraction %d: "
                                                              "batch %" PRId64 " high %" PRId64
                                                              ", predicted %d/%d\n",
                                                              *set, zoneinfo_files[f], z->node, z->name, cpu->cpu,
                                                              fraction, cpu->batch, cpu->high, s.batch, s.high_max);
                                }
                        }
                }
        }

        print_message("# 6.1 fixed high: %zu/%zu CPU pagesets exact (batch and high) in %zu zoneinfo files\n", exact,
                      total, files);
        assert_int_equal(files, 24);
        assert_true(total > 0);
        assert_int_equal(exact, total);
}

/* 2. The live 6.18 fixture prints high_min/high_max: all exact. */
static void test_fixture_6_18_autotune(void **state) {
        (void) state;
        const char *set = "6.18.44-fc-live-smp2-24G";
        size_t exact = 0, total = 0, bounded = 0;
        THost h;
        _cleanup_(zoneinfo_done) Zoneinfo zi = { 0 };

        host_load(set, &h);
        assert_int_equal(h.regime, PCP_REGIME_AUTOTUNE);

        int fraction = fraction_of_file(set, "zoneinfo.txt");
        zi_load(set, "zoneinfo.txt", &zi);
        assert_int_equal(fraction, 0);
        assert_true(zi.has_high_min_max);

        for (size_t i = 0; i < zi.n_zones; i++) {
                const Zone *z = &zi.zones[i];
                PcpZoneInput in = host_zone_input(&h, z);
                PcpSetting s;

                if (!z->populated)
                        continue;
                assert_int_equal(pcp_model_zone(h.regime, &in, PAGE_4K, fraction, &s), 0);
                for (size_t c = 0; c < z->n_cpus; c++) {
                        const PcpCpu *cpu = &z->cpus[c];

                        assert_true(cpu->high_min >= 0 && cpu->high_max >= 0); /* 6.13+ layout */
                        total++;
                        if (cpu->batch == s.batch && cpu->high_min == s.high_min && cpu->high_max == s.high_max)
                                exact++;
                        else
                                print_message("# MISMATCH %s %s cpu %d: %" PRId64 "/%" PRId64 "/%" PRId64
                                              ", predicted %d/%d/%d\n",
                                              set, z->name, cpu->cpu, cpu->batch, cpu->high_min, cpu->high_max,
                                              s.batch, s.high_min, s.high_max);
                        /* The dynamic high: 0 (never used) or within [high_min, high_max]. */
                        if (cpu->high == 0 || (cpu->high >= s.high_min && cpu->high <= s.high_max))
                                bounded++;
                }
        }

        print_message("# 6.18 autotune: %zu/%zu CPU pagesets exact (batch, high_min, high_max); "
                      "%zu/%zu dynamic highs within bounds\n",
                      exact, total, bounded, total);
        assert_int_equal(total, 6);
        assert_int_equal(exact, total);
        assert_int_equal(bounded, total);
}

/*
 * 3. 6.12: only the dynamic high is printed.  batch is exact.  high is 0 for
 * a never-used pcp, else at most the largest high_max the zone has had since
 * boot: the files are taken in order (boot at 0, then 8, 1000, 0) and the kernel
 * does not lower high until the CPU touches the zone again (decay_pcp_high(), mm/page_alloc.c, 6.7+), so
 * the current high_max is not a bound after a lowering write.  Highs below the
 * current high_min are reported, not failed, each tagged "stale" when some
 * earlier fraction's high_min allows it (the CPU has not touched the zone since
 * the write) or "UNEXPLAINED" otherwise.
 */
#define TZ_MAX_ZONES 64

static void test_fixtures_6_12_autotune(void **state) {
        (void) state;
        size_t batch_exact = 0, total = 0, bounded = 0, stale_above = 0, below = 0, unexplained = 0, zero = 0;

        for (const char *const *set = fixture_sets; *set; set++) {
                if (!set_has_prefix(*set, "6.12"))
                        continue;

                THost h;
                host_load(*set, &h);
                assert_int_equal(h.regime, PCP_REGIME_AUTOTUNE);

                /* Largest high_max and smallest high_min seen so far, per zone index (file order is stable). */
                int history_max[TZ_MAX_ZONES] = { 0 };
                int history_min[TZ_MAX_ZONES];
                for (size_t i = 0; i < TZ_MAX_ZONES; i++)
                        history_min[i] = INT_MAX;

                for (size_t f = 0; f < ELEMENTSOF(zoneinfo_files); f++) {
                        int fraction = fraction_of_file(*set, zoneinfo_files[f]);
                        _cleanup_(zoneinfo_done) Zoneinfo zi = { 0 };

                        zi_load(*set, zoneinfo_files[f], &zi);

                        for (size_t i = 0; i < zi.n_zones; i++) {
                                const Zone *z = &zi.zones[i];
                                PcpZoneInput in = host_zone_input(&h, z);
                                PcpSetting s;

                                if (!z->populated)
                                        continue;
                                assert_true(i < TZ_MAX_ZONES);
                                assert_int_equal(pcp_model_zone(h.regime, &in, PAGE_4K, fraction, &s), 0);
                                history_max[i] = MAX(history_max[i], s.high_max);
                                history_min[i] = MIN(history_min[i], s.high_min);

                                for (size_t c = 0; c < z->n_cpus; c++) {
                                        const PcpCpu *cpu = &z->cpus[c];

                                        total++;
                                        if (cpu->batch == s.batch)
                                                batch_exact++;
                                        else
                                                print_message("# MISMATCH %s %s node %d %s cpu %d: batch %" PRId64
                                                              ", predicted %d\n",
                                                              *set, zoneinfo_files[f], z->node, z->name, cpu->cpu,
                                                              cpu->batch, s.batch);

                                        if (cpu->high == 0) {
                                                zero++;
                                                bounded++;
                                                continue;
                                        }
                                        if (cpu->high <= history_max[i])
                                                bounded++;
                                        else
                                                print_message("# OUT OF BOUNDS %s %s node %d %s cpu %d: high %" PRId64
                                                              " > %d\n",
                                                              *set, zoneinfo_files[f], z->node, z->name, cpu->cpu,
                                                              cpu->high, history_max[i]);
                                        if (cpu->high > s.high_max)
                                                stale_above++;
                                        if (cpu->high < s.high_min) {
                                                bool stale = cpu->high >= history_min[i];
                                                below++;
                                                unexplained += !stale;
                                                print_message("# high < high_min: %s %s (fraction %d) node %d %s "
                                                              "cpu %d: high %" PRId64 ", predicted high_min %d "
                                                              "high_max %d (managed %" PRIu64 " low %" PRIu64
                                                              " node cpus %u): %s\n",
                                                              *set, zoneinfo_files[f], fraction, z->node, z->name,
                                                              cpu->cpu, cpu->high, s.high_min, s.high_max, z->managed_pages,
                                                              z->low_pages, in.node_cpus,
                                                              stale ? "stale (an earlier fraction allows it)"
                                                                    : "UNEXPLAINED");
                                        }
                                }
                        }
                }
        }

        print_message("# 6.12 autotune: batch %zu/%zu exact; high bounded %zu/%zu (%zu never used, %zu above the "
                      "current high_max after a lowering write); %zu below the predicted high_min (reported above, "
                      "%zu unexplained)\n",
                      batch_exact, total, bounded, total, zero, stale_above, below, unexplained);
        assert_true(total > 0);
        assert_int_equal(batch_exact, total);
        assert_int_equal(bounded, total);
}

/* ---------------------------------------------------------------------------------------- */
/*
 * A second, deliberately naive model for the solver tests: 64-bit arithmetic
 * straight from zone_highsize()/zone_batchsize(), no int truncation (the solver reasons on these
 * values too; see model-pcp.c).
 */

static uint64_t ref_batch(uint64_t managed) {
        uint64_t b = managed / 1024;
        if (b > 256)
                b = 256;
        b /= 4;
        if (b == 0)
                b = 1;
        uint64_t x = b + b / 2, p = 1;
        while (p * 2 <= x)
                p *= 2;
        return p - 1 == 0 ? 1 : p - 1;
}

static unsigned ref_split(const PcpZoneInput *z) {
        return z->node_cpus ? z->node_cpus : z->online_cpus;
}

/* The largest high the kernel may use at this fraction. */
static uint64_t ref_limit(PcpRegime regime, const PcpZoneInput *z, int fraction) {
        if (regime == PCP_REGIME_AUTOTUNE && fraction == 0)
                fraction = 8;
        uint64_t total = fraction ? z->managed_pages / (uint64_t) fraction : z->low_pages;
        uint64_t high = total / ref_split(z), floor = 4 * ref_batch(z->managed_pages);
        return high > floor ? high : floor;
}

static bool ref_meets(PcpRegime regime, const PcpZone *zones, size_t n, const PcpGoal *g, int fraction) {
        for (size_t i = 0; i < n; i++) {
                uint64_t high = ref_limit(regime, &zones[i].in, fraction);
                uint64_t batch = ref_batch(zones[i].in.managed_pages);

                switch (g->kind) {
                case PCP_GOAL_MINIMUM:
                        if (high != 4 * batch)
                                return false;
                        break;
                case PCP_GOAL_BATCH_MULTIPLE:
                        if ((unsigned __int128) high > (unsigned __int128) g->value * batch)
                                return false;
                        break;
                case PCP_GOAL_BYTES_PER_CPU:
                        if ((unsigned __int128) high * PAGE_4K > g->value)
                                return false;
                        break;
                case PCP_GOAL_BYTES_PER_NODE: {
                        unsigned __int128 sum = 0;
                        for (size_t j = 0; j < n; j++)
                                if (zones[j].node == zones[i].node)
                                        sum += (unsigned __int128) ref_limit(regime, &zones[j].in, fraction) *
                                               ref_split(&zones[j].in) * PAGE_4K;
                        if (sum > g->value)
                                return false;
                        break;
                }
                case PCP_GOAL_BULK_FREE_P99: {
                        /* nr_pcp_free() in a burst: clamp(batch << 5, batch, high - batch); batched: batch */
                        uint64_t pages = g->batched ? batch : MAX(batch, MIN(batch << 5, high - batch));
                        if ((double) pages * g->ns_per_page > (double) g->value)
                                return false;
                        break;
                }
                default:
                        fail_msg("unexpected goal kind %d", g->kind);
                }
        }
        return true;
}

static uint64_t ref_upper(const PcpZone *zones, size_t n) {
        uint64_t m = 0;
        for (size_t i = 0; i < n; i++)
                m = MAX(m, zones[i].in.managed_pages);
        return MIN(MAX(m + 1, (uint64_t) 8), (uint64_t) INT_MAX);
}

/* splitmix64: a fixed-seed PRNG, so failures reproduce. */
static uint64_t rng_next(uint64_t *s) {
        uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
        z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
        return z ^ (z >> 31);
}

static uint64_t rng_range(uint64_t *s, uint64_t lo, uint64_t hi) {
        return lo + rng_next(s) % (hi - lo + 1);
}

/* Log-uniform in [1, 2^max_bits]. */
static uint64_t rng_log(uint64_t *s, unsigned max_bits) {
        unsigned bits = (unsigned) rng_range(s, 0, max_bits);
        return rng_range(s, 1, UINT64_C(1) << bits);
}

#define R_MAX_ZONES 16

static size_t random_host(uint64_t *s, unsigned managed_bits, PcpZone *zones) {
        static const char *const names[] = { "DMA", "DMA32", "Normal", "Movable" };
        unsigned nodes = (unsigned) rng_range(s, 1, 4), online = 0, cpus[4];
        size_t n = 0;

        for (unsigned node = 0; node < nodes; node++) {
                switch (rng_range(s, 0, 7)) {
                case 0:
                        cpus[node] = 0; /* CPU-less (CXL/PMEM) node */
                        break;
                case 1:
                case 2:
                case 3:
                        cpus[node] = (unsigned) rng_range(s, 1, 8);
                        break;
                default:
                        cpus[node] = (unsigned) rng_range(s, 1, 512);
                }
                online += cpus[node];
        }
        if (online == 0) {
                cpus[0] = 1;
                online = 1;
        }

        for (unsigned node = 0; node < nodes; node++) {
                unsigned nz = (unsigned) rng_range(s, 1, 4);
                for (unsigned k = 0; k < nz; k++) {
                        uint64_t managed = rng_log(s, managed_bits);
                        /* low: usually well below managed/8, sometimes above (high_min > high_max). */
                        uint64_t low = rng_range(s, 0, 7) == 0 ? rng_range(s, 0, managed / 2)
                                                              : rng_range(s, 0, managed / 50 + 1);
                        zones[n++] = (PcpZone){
                                .node = (int) node,
                                .name = names[k],
                                .in = { managed, low, cpus[node], online },
                        };
                }
        }
        return n;
}

static PcpGoal random_goal(uint64_t *s, PcpGoalKind kind) {
        PcpGoal g = { .kind = kind };

        switch (kind) {
        case PCP_GOAL_BATCH_MULTIPLE:
                g.value = rng_range(s, 0, 3) == 0 ? rng_range(s, 0, 5) : rng_range(s, 4, 200);
                break;
        case PCP_GOAL_BYTES_PER_CPU:
                g.value = rng_log(s, 34);
                break;
        case PCP_GOAL_BYTES_PER_NODE:
                g.value = rng_log(s, 46);
                break;
        case PCP_GOAL_FRACTION:
                g.value = rng_range(s, 0, 2000);
                break;
        case PCP_GOAL_BULK_FREE_P99:
                g.value = rng_log(s, 24); /* ns, up to 16 ms */
                g.ns_per_page = (double) rng_range(s, 5, 800) + 0.37;
                g.batched = rng_range(s, 0, 3) == 0;
                break;
        default:
                break;
        }
        return g;
}

/* What the MINIMUM goal must answer: 0 if the default is at the floor, else the first F >= 8 (by scan). */
static int ref_minimum_scan(PcpRegime regime, const PcpZone *zones, size_t n, int *ret_first_from_8) {
        static const PcpGoal minimum = { .kind = PCP_GOAL_MINIMUM };
        uint64_t upper = ref_upper(zones, n);
        int first = -1;

        for (uint64_t f = 8; f <= upper; f++)
                if (ref_meets(regime, zones, n, &minimum, (int) f)) {
                        first = (int) f;
                        break;
                }
        assert_true(first >= 8);
        *ret_first_from_8 = first;
        return ref_meets(regime, zones, n, &minimum, 0) ? 0 : first;
}

/* 4a. Small zones: the solver equals a linear scan over every fraction. */
static void test_solver_bruteforce(void **state) {
        (void) state;
        uint64_t seed = 20261129;
        size_t checked = 0, nonzero = 0, erange = 0;

        for (int iter = 0; iter < 120; iter++) {
                PcpZone zones[R_MAX_ZONES];
                size_t n = random_host(&seed, 14, zones);

                for (PcpRegime regime = PCP_REGIME_FIXED; regime <= PCP_REGIME_AUTOTUNE; regime++) {
                        int min_from_8, min_answer = ref_minimum_scan(regime, zones, n, &min_from_8);
                        assert_int_equal(pcp_minimum_fraction(regime, zones, n, PAGE_4K), min_from_8);

                        for (PcpGoalKind kind = 0; kind < _PCP_GOAL_MAX; kind++) {
                                PcpGoal g = random_goal(&seed, kind);
                                int got = -1, r = pcp_solve_goal(regime, zones, n, PAGE_4K, &g, &got);
                                int want = -1, want_r = 0;

                                switch (kind) {
                                case PCP_GOAL_DEFAULT:
                                        want = 0;
                                        break;
                                case PCP_GOAL_FRACTION:
                                        if (g.value == 0 || g.value >= 8)
                                                want = (int) g.value;
                                        else
                                                want_r = -EINVAL;
                                        break;
                                default:
                                        if (ref_meets(regime, zones, n, &g, 0)) {
                                                want = 0;
                                                break;
                                        }
                                        for (uint64_t f = 8; f <= ref_upper(zones, n); f++)
                                                if (ref_meets(regime, zones, n, &g, (int) f)) {
                                                        want = (int) f;
                                                        break;
                                                }
                                        if (want < 0) {
                                                want_r = -ERANGE;
                                                want = min_answer;
                                        }
                                }

                                if (r != want_r || (r != -EINVAL && got != want))
                                        fail_msg("iter %d regime %s goal %d value %" PRIu64 ": got r=%d F=%d, "
                                                 "want r=%d F=%d",
                                                 iter, pcp_regime_to_string(regime), kind, g.value, r, got, want_r,
                                                 want);
                                if (kind == PCP_GOAL_MINIMUM)
                                        assert_int_equal(got, min_answer);
                                checked++;
                                nonzero += got > 0;
                                erange += r == -ERANGE;
                        }
                }
        }
        print_message("# solver vs brute force: %zu goals checked (%zu non-zero answers, %zu -ERANGE)\n", checked,
                      nonzero, erange);
        /* The generator must exercise every branch. */
        assert_true(nonzero > checked / 10);
        assert_true(erange > 0);
}

/* 4b. Big zones (up to 2^36 pages): the answer has the defining property. */
static void test_solver_property(void **state) {
        (void) state;
        uint64_t seed = 42;
        size_t checked = 0, nonzero = 0, erange = 0;

        for (int iter = 0; iter < 3000; iter++) {
                PcpZone zones[R_MAX_ZONES];
                size_t n = random_host(&seed, 36, zones);
                PcpRegime regime = rng_range(&seed, 0, 1) ? PCP_REGIME_FIXED : PCP_REGIME_AUTOTUNE;
                static const PcpGoal minimum = { .kind = PCP_GOAL_MINIMUM };

                /* The closed form: gives the floor, and F - 1 does not (unless F is 8). */
                int fmin = pcp_minimum_fraction(regime, zones, n, PAGE_4K);
                assert_true(fmin >= 8);
                assert_true(ref_meets(regime, zones, n, &minimum, fmin));
                assert_true(fmin == 8 || !ref_meets(regime, zones, n, &minimum, fmin - 1));
                int min_answer = ref_meets(regime, zones, n, &minimum, 0) ? 0 : fmin;

                for (PcpGoalKind kind = PCP_GOAL_MINIMUM; kind < _PCP_GOAL_MAX; kind++) {
                        if (kind == PCP_GOAL_FRACTION)
                                continue;
                        PcpGoal g = random_goal(&seed, kind);
                        int got = -1, r = pcp_solve_goal(regime, zones, n, PAGE_4K, &g, &got);

                        if (r == -ERANGE) {
                                assert_false(ref_meets(regime, zones, n, &g, (int) ref_upper(zones, n)));
                                assert_int_equal(got, min_answer);
                                erange++;
                        } else {
                                assert_int_equal(r, 0);
                                assert_true(ref_meets(regime, zones, n, &g, got));
                                if (got > 0) {
                                        assert_true(got >= 8);
                                        assert_false(ref_meets(regime, zones, n, &g, 0));
                                        assert_true(got == 8 || !ref_meets(regime, zones, n, &g, got - 1));
                                        nonzero++;
                                }
                        }
                        if (kind == PCP_GOAL_MINIMUM) {
                                assert_int_equal(r, 0);
                                assert_int_equal(got, min_answer);
                        }
                        checked++;
                }

                /* The model agrees with the naive one wherever the kernel's int does not overflow. */
                for (size_t i = 0; i < n; i++)
                        for (int k = 0; k < 4; k++) {
                                static const int fr[] = { 0, 8, 100, 4500 };
                                PcpSetting st;
                                assert_int_equal(pcp_model_zone(regime, &zones[i].in, PAGE_4K, fr[k], &st), 0);
                                uint64_t want = ref_limit(regime, &zones[i].in, fr[k]);
                                assert_int_equal(st.batch, (int) ref_batch(zones[i].in.managed_pages));
                                if (want <= INT_MAX)
                                        assert_int_equal(st.high_max, (int) want);
                                else
                                        assert_true((uint64_t) st.high_max < want);
                        }
        }
        print_message("# solver property: %zu goals on big hosts (%zu non-zero answers, %zu -ERANGE)\n", checked,
                      nonzero, erange);
        assert_true(nonzero > checked / 10);
}

/*
 * A large host: 256 CPUs, 1 TB on one node, batch 63, default high 6392
 * (≈ 101 x batch).  The minimum (high = 4 x batch = 252) needs
 * managed / (256 x 253) + 1: with 1 TiB of managed memory or less that is at
 * most 4145; the brief's "about 4,500" is what an operator found by hand and
 * also gives 252 (any fraction above the minimum does); it is the minimum only
 * for ~1.1 TiB managed per 256 CPUs.
 */
static void test_brief_example(void **state) {
        (void) state;
        uint64_t managed = (UINT64_C(1) << 28) - (UINT64_C(1) << 18); /* 1 TiB minus 1 GiB, in pages */
        PcpZone z = { .node = 0, .name = "Normal", .in = { managed, 6392 * 256 + 100, 256, 256 } };
        PcpSetting s;
        int f;

        for (PcpRegime regime = PCP_REGIME_FIXED; regime <= PCP_REGIME_AUTOTUNE; regime++) {
                assert_int_equal(pcp_model_zone(regime, &z.in, PAGE_4K, 0, &s), 0);
                assert_int_equal(s.batch, 63);
                assert_int_equal(s.high_min, 6392);
                assert_int_equal(s.high_min / s.batch, 101);

                f = pcp_minimum_fraction(regime, &z, 1, PAGE_4K);
                assert_int_equal(f, (int) (managed / (256 * 253) + 1));
                assert_int_equal(f, 4141);
                assert_int_equal(pcp_model_zone(regime, &z.in, PAGE_4K, f, &s), 0);
                assert_int_equal(s.high_max, 252);
                assert_int_equal(s.high_min, 252);
                assert_int_equal(pcp_model_zone(regime, &z.in, PAGE_4K, f - 1, &s), 0);
                assert_int_equal(s.high_max, 253);
                assert_int_equal(pcp_model_zone(regime, &z.in, PAGE_4K, 4500, &s), 0);
                assert_int_equal(s.high_max, 252);

                PcpGoal g = { .kind = PCP_GOAL_MINIMUM };
                assert_int_equal(pcp_solve_goal(regime, &z, 1, PAGE_4K, &g, &f), 0);
                assert_int_equal(f, 4141);
                g = (PcpGoal){ .kind = PCP_GOAL_BATCH_MULTIPLE, .value = 4 };
                assert_int_equal(pcp_solve_goal(regime, &z, 1, PAGE_4K, &g, &f), 0);
                assert_int_equal(f, 4141);
        }

        /* The shape where "about 4,500" is the minimum: 4500 x 256 x 253 pages ≈ 1.09 TiB. */
        z.in.managed_pages = UINT64_C(4499) * 256 * 253;
        f = pcp_minimum_fraction(PCP_REGIME_AUTOTUNE, &z, 1, PAGE_4K);
        assert_int_equal(f, 4500);
        assert_true(f >= 4400 && f <= 4600);
        assert_int_equal(pcp_model_zone(PCP_REGIME_AUTOTUNE, &z.in, PAGE_4K, f, &s), 0);
        assert_int_equal(s.high_max, 252);
}

/* 5. Edge cases. */
static void test_edge_cases(void **state) {
        (void) state;
        PcpSetting s;
        int f;

        /* CPU-less node: split over all online CPUs (zone_highsize(), mm/page_alloc.c). */
        PcpZoneInput cxl = { .managed_pages = 1 << 24, .low_pages = 40000, .node_cpus = 0, .online_cpus = 16 };
        assert_int_equal(pcp_model_zone(PCP_REGIME_AUTOTUNE, &cxl, PAGE_4K, 0, &s), 0);
        assert_int_equal(s.high_min, 40000 / 16);
        assert_int_equal(s.high_max, (1 << 24) / 8 / 16);
        PcpZoneInput nocpu = { .managed_pages = 1 << 24, .low_pages = 40000, .node_cpus = 0, .online_cpus = 0 };
        assert_int_equal(pcp_model_zone(PCP_REGIME_AUTOTUNE, &nocpu, PAGE_4K, 0, &s), -EINVAL);
        assert_int_equal(pcp_zone_highsize(&nocpu, 63, 0), -EINVAL);

        /* Per node, a CPU-less node's zones count with the CPUs they are split over. */
        PcpZone two[] = {
                { .node = 0, .name = "Normal", .in = { 1 << 20, 1000, 4, 4 } },
                { .node = 1, .name = "Normal", .in = { 1 << 24, 1000, 0, 4 } },
        };
        PcpGoal per_node = { .kind = PCP_GOAL_BYTES_PER_NODE, .value = 64ULL << 20 };
        assert_int_equal(pcp_solve_goal(PCP_REGIME_AUTOTUNE, two, 2, PAGE_4K, &per_node, &f), 0);
        /*
         * Node 1 decides: (2^24 / F / 4) x 4 x 4096 <= 64 MiB  <=>  2^24 / (4F) < 4097
         * <=>  F >= 1024.  Counted with 0 CPUs it would not count and node 0 would give 64.
         */
        assert_int_equal(f, 1024);
        assert_int_equal(pcp_solve_goal(PCP_REGIME_AUTOTUNE, two, 1, PAGE_4K, &per_node, &f), 0);
        assert_int_equal(f, 64);
        /* FIXED at the default: 252 x 4 CPUs x 4 KiB per node, well under 64 MiB. */
        assert_int_equal(pcp_solve_goal(PCP_REGIME_FIXED, two, 2, PAGE_4K, &per_node, &f), 0);
        assert_int_equal(f, 0);

        /* Tiny zones: batch 1, high at the floor of 4. */
        PcpZoneInput tiny = { .managed_pages = 100, .low_pages = 3, .node_cpus = 1, .online_cpus = 1 };
        assert_int_equal(pcp_model_zone(PCP_REGIME_FIXED, &tiny, PAGE_4K, 0, &s), 0);
        assert_int_equal(s.batch, 1);
        assert_int_equal(s.high_max, 4);
        assert_int_equal(pcp_model_zone(PCP_REGIME_AUTOTUNE, &tiny, PAGE_4K, 0, &s), 0);
        assert_int_equal(s.high_min, 4);
        assert_int_equal(s.high_max, 12); /* 100 / 8 */
        PcpZone tz = { .node = 0, .name = "DMA", .in = tiny };
        PcpGoal g = { .kind = PCP_GOAL_MINIMUM };
        assert_int_equal(pcp_solve_goal(PCP_REGIME_FIXED, &tz, 1, PAGE_4K, &g, &f), 0);
        assert_int_equal(f, 0); /* the default is already at the floor */
        assert_int_equal(pcp_minimum_fraction(PCP_REGIME_FIXED, &tz, 1, PAGE_4K), 21); /* 100 / 5 + 1 */
        assert_int_equal(pcp_solve_goal(PCP_REGIME_AUTOTUNE, &tz, 1, PAGE_4K, &g, &f), 0);
        assert_int_equal(f, 21); /* high_max 12 at the default */

        /* Fraction validation: the sysctl's rules (percpu_pagelist_high_fraction_sysctl_handler()). */
        PcpZoneInput zin = { .managed_pages = 1 << 20, .low_pages = 5000, .node_cpus = 2, .online_cpus = 2 };
        PcpZone zz = { .node = 0, .name = "Normal", .in = zin };
        for (int bad = 1; bad < 8; bad++) {
                assert_int_equal(pcp_model_zone(PCP_REGIME_FIXED, &zin, PAGE_4K, bad, &s), -EINVAL);
                g = (PcpGoal){ .kind = PCP_GOAL_FRACTION, .value = (uint64_t) bad };
                assert_int_equal(pcp_solve_goal(PCP_REGIME_FIXED, &zz, 1, PAGE_4K, &g, &f), -EINVAL);
        }
        /* -1: pcptune's contrib patch pins high at the floor (5.14+ regimes only). */
        assert_int_equal(pcp_model_zone(PCP_REGIME_FIXED, &zin, PAGE_4K, -1, &s), 0);
        assert_int_equal(s.high_max, 4 * s.batch);
        assert_int_equal(pcp_model_zone(PCP_REGIME_AUTOTUNE, &zin, PAGE_4K, -1, &s), 0);
        assert_int_equal(s.high_min, 4 * s.batch);
        assert_int_equal(s.high_max, 4 * s.batch);
        assert_int_equal(pcp_model_zone(PCP_REGIME_LEGACY, &zin, PAGE_4K, -1, &s), -EINVAL);
        assert_int_equal(pcp_model_zone(PCP_REGIME_FIXED, &zin, PAGE_4K, -2, &s), -EINVAL);
        assert_int_equal(pcp_model_zone(PCP_REGIME_FIXED, &zin, PAGE_4K, INT_MIN, &s), -EINVAL);
        g = (PcpGoal){ .kind = PCP_GOAL_FRACTION, .value = (uint64_t) -1 };
        assert_int_equal(pcp_solve_goal(PCP_REGIME_FIXED, &zz, 1, PAGE_4K, &g, &f), -EINVAL);
        g.value = (uint64_t) INT_MAX + 1; /* 2147483648: EINVAL on live-6.18 */
        assert_int_equal(pcp_solve_goal(PCP_REGIME_FIXED, &zz, 1, PAGE_4K, &g, &f), -EINVAL);
        g.value = INT_MAX;
        assert_int_equal(pcp_solve_goal(PCP_REGIME_FIXED, &zz, 1, PAGE_4K, &g, &f), 0);
        assert_int_equal(f, INT_MAX);
        g.value = 8;
        assert_int_equal(pcp_solve_goal(PCP_REGIME_FIXED, &zz, 1, PAGE_4K, &g, &f), 0);
        assert_int_equal(f, 8);
        assert_int_equal(pcp_model_zone(PCP_REGIME_FIXED, &zin, PAGE_4K, INT_MAX, &s), 0);
        assert_int_equal(s.high_max, 4 * 63);

        /* Below-floor caps: -ERANGE with the minimum's answer. */
        g = (PcpGoal){ .kind = PCP_GOAL_BATCH_MULTIPLE, .value = 3 };
        f = -1;
        assert_int_equal(pcp_solve_goal(PCP_REGIME_FIXED, &zz, 1, PAGE_4K, &g, &f), -ERANGE);
        assert_int_equal(f, pcp_minimum_fraction(PCP_REGIME_FIXED, &zz, 1, PAGE_4K));
        assert_int_equal(f, (1 << 20) / (2 * 253) + 1);
        g = (PcpGoal){ .kind = PCP_GOAL_BYTES_PER_CPU, .value = 252 * 4096 - 1 };
        assert_int_equal(pcp_solve_goal(PCP_REGIME_FIXED, &zz, 1, PAGE_4K, &g, &f), -ERANGE);
        g.value = 252 * 4096;
        assert_int_equal(pcp_solve_goal(PCP_REGIME_FIXED, &zz, 1, PAGE_4K, &g, &f), 0);
        assert_int_equal(f, (1 << 20) / (2 * 253) + 1);
        g = (PcpGoal){ .kind = PCP_GOAL_BATCH_MULTIPLE, .value = 8 };
        assert_int_equal(pcp_solve_goal(PCP_REGIME_FIXED, &zz, 1, PAGE_4K, &g, &f), 0);
        /* 2^20 / F / 2 <= 504  <=>  F > 2^20 / 1010 */
        assert_int_equal(f, (1 << 20) / (2 * 505) + 1);
        g = (PcpGoal){ .kind = PCP_GOAL_BATCH_MULTIPLE, .value = 100 };
        assert_int_equal(pcp_solve_goal(PCP_REGIME_FIXED, &zz, 1, PAGE_4K, &g, &f), 0);
        assert_int_equal(f, 0); /* default 2500 <= 6300 */
        assert_int_equal(pcp_solve_goal(PCP_REGIME_AUTOTUNE, &zz, 1, PAGE_4K, &g, &f), 0);
        assert_int_equal(f, 84); /* high_max 65536 at 0; 2^20 / F / 2 <= 6300  <=>  F > 2^20 / 12602 */

        /* Legacy kernels: modelled, not solved. */
        assert_int_equal(pcp_solve_goal(PCP_REGIME_LEGACY, &zz, 1, PAGE_4K, &g, &f), -EOPNOTSUPP);
        assert_int_equal(pcp_minimum_fraction(PCP_REGIME_LEGACY, &zz, 1, PAGE_4K), -EOPNOTSUPP);
        assert_int_equal(pcp_model_zone(PCP_REGIME_LEGACY, &zin, PAGE_4K, 0, &s), 0);
        assert_int_equal(s.batch, 63);
        assert_int_equal(s.high_max, 378); /* 6 x 63 (zone_set_pageset_high_and_batch()) */
        assert_int_equal(pcp_model_zone(PCP_REGIME_LEGACY, &zin, PAGE_4K, 8, &s), 0);
        assert_int_equal(s.high_max, (1 << 20) / 8); /* per CPU, not split */
        assert_int_equal(s.batch, 96);               /* PAGE_SHIFT x 8 */
        assert_int_equal(pcp_model_zone(PCP_REGIME_LEGACY, &zin, PAGE_4K, 4096, &s), 0);
        assert_int_equal(s.high_max, 256);
        assert_int_equal(s.batch, 64);
        /* Around the PAGE_SHIFT x 8 cap: high / 4 of 95, 96, 100. */
        PcpZoneInput leg = { .managed_pages = 8 * 380, .low_pages = 0, .node_cpus = 1, .online_cpus = 1 };
        assert_int_equal(pcp_model_zone(PCP_REGIME_LEGACY, &leg, PAGE_4K, 8, &s), 0);
        assert_int_equal(s.high_max, 380);
        assert_int_equal(s.batch, 95);
        leg.managed_pages = 8 * 387;
        assert_int_equal(pcp_model_zone(PCP_REGIME_LEGACY, &leg, PAGE_4K, 8, &s), 0);
        assert_int_equal(s.batch, 96);
        leg.managed_pages = 8 * 400;
        assert_int_equal(pcp_model_zone(PCP_REGIME_LEGACY, &leg, PAGE_4K, 8, &s), 0);
        assert_int_equal(s.high_max, 400);
        assert_int_equal(s.batch, 96);
        assert_int_equal(pcp_model_zone(PCP_REGIME_LEGACY, &zin, 65536, 8, &s), 0);
        assert_int_equal(s.batch, 128); /* PAGE_SHIFT 16 */
        assert_int_equal(pcp_model_zone(PCP_REGIME_LEGACY, &tiny, PAGE_4K, 1000, &s), 0);
        assert_int_equal(s.high_max, 0);
        assert_int_equal(s.batch, 1);

        /* Page sizes for the whole model. */
        assert_int_equal(pcp_model_zone(PCP_REGIME_AUTOTUNE, &zin, 16384, 0, &s), 0);
        assert_int_equal(s.batch, 15);
        assert_int_equal(pcp_model_zone(PCP_REGIME_AUTOTUNE, &zin, 65536, 1000, &s), 0);
        assert_int_equal(s.batch, 3);
        assert_int_equal(s.high_max, 524); /* 2^20 / 1000 / 2 */
        assert_int_equal(pcp_model_zone(PCP_REGIME_AUTOTUNE, &zin, 1000, 0, &s), -EINVAL);

        /*
         * A hypothetical 4 PiB zone on a node of 64 CPUs: managed / 8 / 64 = 2^31
         * does not fit the kernel's int high; it wraps negative and the floor wins.
         * The model says so; the solver never counts on such a wrap.
         */
        PcpZoneInput huge = { .managed_pages = UINT64_C(1) << 40, .low_pages = 1 << 20, .node_cpus = 64,
                              .online_cpus = 64 };
        assert_int_equal(pcp_model_zone(PCP_REGIME_AUTOTUNE, &huge, PAGE_4K, 0, &s), 0);
        assert_int_equal(s.high_max, 252);
        assert_int_equal(pcp_model_zone(PCP_REGIME_AUTOTUNE, &huge, PAGE_4K, 9, &s), 0);
        assert_int_equal(s.high_max, (int) ((UINT64_C(1) << 40) / 9 / 64));
        PcpZone hz = { .node = 0, .name = "Normal", .in = huge };
        g = (PcpGoal){ .kind = PCP_GOAL_BATCH_MULTIPLE, .value = 100 };
        assert_int_equal(pcp_solve_goal(PCP_REGIME_AUTOTUNE, &hz, 1, PAGE_4K, &g, &f), 0);
        assert_int_equal(f, (int) ((UINT64_C(1) << 40) / (64 * 6301) + 1));
        /* One CPU: the floor needs a fraction beyond INT_MAX. */
        hz.in.node_cpus = hz.in.online_cpus = 1;
        assert_int_equal(pcp_minimum_fraction(PCP_REGIME_AUTOTUNE, &hz, 1, PAGE_4K), -ERANGE);
        g = (PcpGoal){ .kind = PCP_GOAL_MINIMUM };
        assert_int_equal(pcp_solve_goal(PCP_REGIME_AUTOTUNE, &hz, 1, PAGE_4K, &g, &f), -ERANGE);
        assert_int_equal(f, INT_MAX);

        /* Argument checks. */
        assert_int_equal(pcp_solve_goal(PCP_REGIME_FIXED, &zz, 0, PAGE_4K, &g, &f), -EINVAL);
        assert_int_equal(pcp_solve_goal(PCP_REGIME_FIXED, NULL, 1, PAGE_4K, &g, &f), -EINVAL);
        assert_int_equal(pcp_solve_goal(PCP_REGIME_FIXED, &zz, 1, PAGE_4K, NULL, &f), -EINVAL);
        assert_int_equal(pcp_solve_goal(_PCP_REGIME_INVALID, &zz, 1, PAGE_4K, &g, &f), -EINVAL);
        g.kind = _PCP_GOAL_MAX;
        assert_int_equal(pcp_solve_goal(PCP_REGIME_FIXED, &zz, 1, PAGE_4K, &g, &f), -EINVAL);
        assert_int_equal(pcp_zone_highsize(&zin, 0, 0), -EINVAL);
        assert_int_equal(pcp_zone_highsize(&zin, 63, -8), -EINVAL);
}

/* nr_pcp_free() in a burst of frees, and the latency goal on this repository's live host. */
static void test_bulk_free_pages(void **state) {
        (void) state;
        /* pcp_bulk_free_max_pages() (issue 13's model) is what the goal bounds: batch 63, high_max 100352
         * at the default gives batch << 5; the minimum 4 x 63 gives 189. */
#define PAGES(b, h, sc, bt) pcp_bulk_free_max_pages(&(PcpSetting){ (b), (h), (h) }, (sc), (bt))
        assert_int_equal(PAGES(63, 100352, 5, false), 2016);
        assert_int_equal(PAGES(63, 252, 5, false), 189);
        assert_int_equal(PAGES(63, 2079, 5, false), 2016);
        assert_int_equal(PAGES(63, 2078, 5, false), 2015);
        assert_int_equal(PAGES(1, 4, 5, false), 3);   /* DMA: batch 1, high 4 */
        assert_int_equal(PAGES(63, 100352, 5, true), 63);
#undef PAGES

        /* The live host of the fixtures (6.18, 2 CPUs, 24 GiB): Normal 1605632 managed, batch 63. */
        PcpZone z[2] = {
                { .node = 0, .name = "DMA32", .in = { 772807, 6851, 2, 2 } },
                { .node = 0, .name = "Normal", .in = { 1605632, 14233, 2, 2 } },
        };
        uint64_t pages;
        int f;
        assert_int_equal(pcp_bulk_free_pages_host(PCP_REGIME_AUTOTUNE, z, 2, PAGE_4K, 0, false, PCP_BATCH_SCALE_MAX_DEFAULT, &pages), 0);
        assert_true(pages == 2016);
        int fmin = pcp_minimum_fraction(PCP_REGIME_AUTOTUNE, z, 2, PAGE_4K);
        assert_int_equal(pcp_bulk_free_pages_host(PCP_REGIME_AUTOTUNE, z, 2, PAGE_4K, fmin, false, PCP_BATCH_SCALE_MAX_DEFAULT, &pages), 0);
        assert_true(pages == 189);
        /* 300 ns per page: 200 us allows 666 pages, high <= 729 on the worst zone. */
        PcpGoal g = { PCP_GOAL_BULK_FREE_P99, 200000, 300.0 };
        assert_int_equal(pcp_solve_goal(PCP_REGIME_AUTOTUNE, z, 2, PAGE_4K, &g, &f), 0);
        assert_true(f >= 8);
        assert_int_equal(pcp_bulk_free_pages_host(PCP_REGIME_AUTOTUNE, z, 2, PAGE_4K, f, false, PCP_BATCH_SCALE_MAX_DEFAULT, &pages), 0);
        assert_true(pages <= 666 && pages * 300.0 <= 200000);
        assert_int_equal(pcp_bulk_free_pages_host(PCP_REGIME_AUTOTUNE, z, 2, PAGE_4K, f - 1, false, PCP_BATCH_SCALE_MAX_DEFAULT, &pages), 0);
        assert_true(pages > 666);
        /* 700 us: the default's 2016 pages meet it. */
        g.value = 700000;
        assert_int_equal(pcp_solve_goal(PCP_REGIME_AUTOTUNE, z, 2, PAGE_4K, &g, &f), 0);
        assert_int_equal(f, 0);
        /* 20 us: even the minimum (189 pages, 56.7 us) misses it: the minimum, with -ERANGE. */
        g.value = 20000;
        assert_int_equal(pcp_solve_goal(PCP_REGIME_AUTOTUNE, z, 2, PAGE_4K, &g, &f), -ERANGE);
        assert_int_equal(f, fmin);
        /* A kernel that frees in steps of batch (6.19+): 63 pages x 300 ns meets 20 us at the default. */
        g.batched = true;
        assert_int_equal(pcp_solve_goal(PCP_REGIME_AUTOTUNE, z, 2, PAGE_4K, &g, &f), 0);
        assert_int_equal(f, 0);
        g.value = 10000; /* 33 pages: not even batch */
        assert_int_equal(pcp_solve_goal(PCP_REGIME_AUTOTUNE, z, 2, PAGE_4K, &g, &f), -ERANGE);
        g.batched = false;
        /* No calibration: no answer. */
        g.ns_per_page = 0;
        assert_int_equal(pcp_solve_goal(PCP_REGIME_AUTOTUNE, z, 2, PAGE_4K, &g, &f), -ENODATA);
}

/* The time per page: a least-squares fit through the origin, kept in a validated file. */
static void test_calibration(void **state) {
        (void) state;
        Calibration c = { 0 }, d;
        BulkFreeRecord r[20];

        /* 19 bulk frees are not enough. */
        for (int i = 0; i < 20; i++)
                r[i] = (BulkFreeRecord){ .span_ns = i % 2 ? 59000 : 31000, .pages = i % 2 ? 200 : 100 };
        assert_int_equal(calibration_add(&c, r, 19), -ENODATA);
        c = (Calibration){ 0 };
        /* 10 x (100 pages, 31 us) and 10 x (200 pages, 59 us): k = 14.9e6 / 5e4 = 298 ns; RSS = 1.8e7 ns^2. */
        assert_int_equal(calibration_add(&c, r, 20), 0);
        assert_true(fabs(c.ns_per_page - 298.0) < 1e-9);
        assert_true(fabs(c.ns_per_page_stderr - sqrt(1.8e7 / 19 / 5e5)) < 1e-6);
        assert_true(fabs(c.rms_residual_ns - sqrt(1.8e7 / 20)) < 1e-6);
        assert_true(c.pages_min == 100 && c.pages_max == 200);
        /* Time per page of single bulk frees: 310 (x10) and 295 (x10): p99 310, what goals predict with. */
        assert_true(fabs(c.ns_per_page_p99 - 310.0) < 1e-9);
        assert_true(fabs(calibration_p99_ns_per_page(&c) - 310.0) < 1e-9);
        assert_true(fabs(calibration_predict_ns(c.ns_per_page, 189) - 56322.0) < 1e-6);
        snprintf(c.kernel, sizeof c.kernel, "6.18.44-test");
        c.updated = 1764600000;

        /* Round trip through the file format, and through a directory. */
        char *t = calibration_format(&c);
        assert_non_null(t);
        assert_int_equal(calibration_parse(t, strlen(t), &d), 0);
        assert_true(fabs(d.ns_per_page - 298.0) < 1e-6 && d.n == 20 && streq(d.kernel, "6.18.44-test"));
        assert_true(fabs(d.ns_per_page_p99 - 310.0) < 1e-6);
        char dir[] = "/tmp/pcptune-test-calibration.XXXXXX";
        assert_non_null(mkdtemp(dir));
        char sub[64];
        snprintf(sub, sizeof sub, "%s/state", dir);
        assert_int_equal(calibration_load(sub, &d), -ENOENT);
        /* Never made by the daemon: StateDirectory= is. */
        assert_int_equal(calibration_save(sub, &c), -ENOENT);
        assert_int_equal(mkdir(sub, 0755), 0);
        assert_int_equal(calibration_save(sub, &c), 0);
        assert_int_equal(calibration_load(sub, &d), 0);
        assert_true(fabs(d.ns_per_page - 298.0) < 1e-6);

        /* Refused: a fit that is not the sums' fit, missing keys, bad types and ranges, garbage. */
        static const struct {
                const char *from, *to;
        } edits[] = {
                { "\"ns_per_page\": 298", "\"ns_per_page\": 29" },
                { "\"version\": 1", "\"version\": 2" },
                { "\"samples\": 20", "\"samples\": 2" },
                { "\"samples\": 20", "\"samples\": \"20\"" },
                { "\"kernel\": \"6.18.44-test\"", "\"kernel\": \"6.18\\n\"" },
                { "\"kernel\": \"6.18.44-test\"", "\"kernel\": 6" },
                { "\"pages_min\": 100", "\"pages_min\": 300" },
                { "\"updated\"", "\"updatedx\"" },
        };
        for (size_t i = 0; i < ELEMENTSOF(edits); i++) {
                const char *at = strstr(t, edits[i].from);
                if (!at)
                        fail_msg("edit %zu: '%s' not in\n%s", i, edits[i].from, t);
                _cleanup_(freep) char *bad = NULL;
                assert_true(asprintf(&bad, "%.*s%s%s", (int) (at - t), t, edits[i].to, at + strlen(edits[i].from)) > 0);
                if (calibration_parse(bad, strlen(bad), &d) != -EINVAL)
                        fail_msg("edit %zu accepted:\n%s", i, bad);
        }
        _cleanup_(freep) char *trail = NULL;
        assert_true(asprintf(&trail, "%s{", t) > 0);
        assert_int_equal(calibration_parse(trail, strlen(trail), &d), -EINVAL);
        assert_int_equal(calibration_parse("[]", 2, &d), -EINVAL);
        assert_int_equal(calibration_parse("", 0, &d), -EINVAL);
        /* A file that is not valid JSON, in the directory: refused, not half-read. */
        char path[128];
        snprintf(path, sizeof path, "%s/calibration.json", sub);
        assert_int_equal(write_file_atomic(path, "{\"version\": 1,", 15, 0644), 0);
        assert_int_equal(calibration_load(sub, &d), -EINVAL);
        unlink(path);

        /* It chooses the fraction a latency goal writes as root: the journal's checks.  A valid file that
         * someone else could have written is refused (-EPERM), where it was used before. */
        char other[128];
        snprintf(other, sizeof other, "%s/elsewhere.json", dir);
        assert_int_equal(write_file_atomic(other, t, strlen(t), 0644), 0);
        assert_int_equal(symlink(other, path), 0);
        assert_int_equal(calibration_load(sub, &d), -EPERM); /* a symlink, even to a good file */
        unlink(path);
        assert_int_equal(mkfifo(path, 0600), 0);
        assert_int_equal(calibration_load(sub, &d), -EPERM); /* not a regular file, and no hang */
        unlink(path);
        assert_int_equal(calibration_save(sub, &c), 0);
        assert_int_equal(calibration_load(sub, &d), 0);
        assert_int_equal(chmod(path, 0666), 0);
        assert_int_equal(calibration_load(sub, &d), -EPERM); /* writable by others */
        assert_int_equal(chmod(path, 0620), 0);
        assert_int_equal(calibration_load(sub, &d), -EPERM); /* writable by group */
        assert_int_equal(chmod(path, 0644), 0);
        if (geteuid() == 0) {
                assert_int_equal(chown(path, 65534, 65534), 0);
                assert_int_equal(calibration_load(sub, &d), -EPERM); /* owned by nobody */
                assert_int_equal(chown(path, 0, 0), 0);
                assert_int_equal(chown(sub, 65534, 65534), 0);
                assert_int_equal(calibration_load(sub, &d), -EPERM); /* in a directory nobody owns */
                assert_int_equal(calibration_save(sub, &c), -EPERM);
                assert_int_equal(chown(sub, 0, 0), 0);
        }
        assert_int_equal(calibration_load(sub, &d), 0);
        assert_int_equal(chmod(sub, 0777), 0);
        assert_int_equal(calibration_load(sub, &d), -EPERM); /* in a 0777 directory */
        assert_int_equal(calibration_save(sub, &c), -EPERM); /* nor written there */
        assert_int_equal(chmod(sub, 01777), 0);
        assert_int_equal(calibration_load(sub, &d), 0); /* sticky: others cannot replace root's file */
        assert_int_equal(chmod(sub, 0755), 0);
        unlink(other);
        unlink(path);
        rmdir(sub);
        rmdir(dir);
        free(t);
}

/* The goal's feedback (calibration_goal_feedback()), in one call: the verdict and the time per page to solve with. */
static GoalFeedback feedback(double measured, uint64_t samples, double refit, double used, usec_t since, double *next) {
        /* target 200 us, predicted 199.8 us */
        return calibration_goal_feedback(measured, samples, 200e3, 199.8e3, refit, used, since, next);
}

/* The goal's feedback: agree, too few, keep (cooldown, band below), solve again (above: at the rate measured). */
static void test_goal_feedback(void **state) {
        (void) state;
        const usec_t long_ago = 3600 * USEC_PER_SEC, just_now = 60 * USEC_PER_SEC;
        double next;

        /* predicted 199.8 us at 300 ns per page */
        assert_int_equal(feedback(190e3, 100, 340, 300, long_ago, &next), GOAL_AGREES);
        assert_true(next == 300);
        assert_int_equal(feedback(150e3, 100, 340, 300, long_ago, &next), GOAL_AGREES);
        assert_int_equal(feedback(400e3, 19, 400, 300, long_ago, &next), GOAL_TOO_FEW);
        /* Missed by far, the refit moved 33%: solve again with the refit (above the measured rate
         * 300 x 260 / 199.8 = 390.4); not within ten minutes of the last change. */
        assert_int_equal(feedback(260e3, 100, 400, 300, long_ago, &next), GOAL_RESOLVE);
        assert_true(fabs(next - 400) < 1e-9);
        assert_int_equal(feedback(260e3, 100, 400, 300, just_now, &next), GOAL_KEEP);
        assert_true(next == 300);
        /* Missed by 7% with a refit only 6.7% higher (what the 10% band used to keep for good, live:
         * 214 us against 200): solve again with the rate the fraction ran at, 300 x 214 / 199.8. */
        assert_int_equal(feedback(214e3, 100, 320, 300, long_ago, &next), GOAL_RESOLVE);
        assert_true(fabs(next - 300 * 214e3 / 199.8e3) < 1e-6 && next > 320);
        /* Above the target with a refit 13% lower (quieter windows elsewhere pulled the average down):
         * the lists still shrink, at the measured rate; never larger against what was measured. */
        assert_int_equal(feedback(260e3, 100, 260, 300, long_ago, &next), GOAL_RESOLVE);
        assert_true(next > 300);
        /* Far below the prediction (lists could be longer) with a calibration 20% lower: solve again. */
        assert_int_equal(feedback(100e3, 100, 240, 300, long_ago, &next), GOAL_RESOLVE);
        assert_true(fabs(next - 240) < 1e-9);
        /* ... but not on a refit only 5% lower (the band), nor on a higher one. */
        assert_int_equal(feedback(100e3, 100, 285, 300, long_ago, &next), GOAL_KEEP);
        assert_int_equal(feedback(100e3, 100, 360, 300, long_ago, &next), GOAL_KEEP);
        /* After solving again with 400 ns, a measure that agrees with the new prediction stays put. */
        assert_int_equal(calibration_goal_feedback(195e3, 100, 200e3, 199.6e3, 395, 400, long_ago, &next), GOAL_AGREES);
        assert_int_equal(calibration_goal_feedback(195e3, 100, 200e3, 199.6e3, 0, 400, long_ago, &next),
                         _GOAL_FEEDBACK_INVALID);
        /* Above the target at the minimum already (predicted above it): nothing smaller to solve for. */
        assert_int_equal(calibration_goal_feedback(260e3, 100, 200e3, 260e3, 300, 300, long_ago, &next), GOAL_KEEP);
}

/* One window of the goal loop: 50 bulk frees of pages each at 360..400 ns per page (p99: 400), into the
 * calibration; the p99 span measured. */
static double goal_window(Calibration *c, uint64_t pages, double fast, double slow) {
        BulkFreeRecord r[50];
        for (int i = 0; i < 50; i++)
                r[i] = (BulkFreeRecord){ .span_ns = (uint32_t) ((fast + (slow - fast) * i / 49.0) * (double) pages),
                                         .pages = (uint32_t) pages };
        assert_int_equal(calibration_add(c, r, 50), 0);
        return slow * (double) pages; /* nearest-rank p99 of 50: the largest */
}

/*
 * The daemon's goal loop (bulk_sampler_goal_feedback()) on the live host's zones: a goal solved with
 * 300 ns per page on a host that runs at up to 400 ns per page is above its target; once the cooldown
 * has passed, it is solved again with the rate it ran at to a smaller high (a larger fraction, fewer
 * pages per bulk free), once: the target then holds and it stays put.
 */
static void test_goal_refit_loop(void **state) {
        (void) state;
        PcpZone z[2] = {
                { .node = 0, .name = "DMA32", .in = { 772807, 6851, 2, 2 } },
                { .node = 0, .name = "Normal", .in = { 1605632, 14233, 2, 2 } },
        };
        const double target = 200e3;
        const usec_t window = 60 * USEC_PER_SEC;
        Calibration c = { 0 };
        uint64_t pages, first_pages;
        int f, first, changes = 0;
        usec_t since = 0;

        /* The first calibration: 300 ns per page. */
        goal_window(&c, 189, 280, 300);
        double used = calibration_p99_ns_per_page(&c);
        assert_true(fabs(used - 300) < 1e-9);
        PcpGoal g = { PCP_GOAL_BULK_FREE_P99, (uint64_t) target, used };
        assert_int_equal(pcp_solve_goal(PCP_REGIME_AUTOTUNE, z, 2, PAGE_4K, &g, &first), 0);
        assert_int_equal(pcp_bulk_free_pages_host(PCP_REGIME_AUTOTUNE, z, 2, PAGE_4K, first, false, PCP_BATCH_SCALE_MAX_DEFAULT, &first_pages), 0);
        f = first;
        pages = first_pages;
        for (int w = 0; w < 60; w++) {
                double measured = goal_window(&c, pages, 360, 400);
                since += window;
                double next;
                GoalFeedback fb = calibration_goal_feedback(measured, 50, target, used * (double) pages,
                                                            calibration_p99_ns_per_page(&c), used, since, &next);
                if (w == 0) /* 400 x 666 pages = 266 us: above the target, but in cooldown */
                        assert_true(measured > target && fb == GOAL_KEEP);
                if (fb != GOAL_RESOLVE)
                        continue;
                assert_true(measured > target && since >= GOAL_COOLDOWN_USEC);
                /* the rate the fraction ran at: 400 ns per page, above the refit's average */
                assert_true(fabs(next - 400) < 1e-6 && next > calibration_p99_ns_per_page(&c));
                used = next;
                g.ns_per_page = used;
                int nf;
                assert_int_equal(pcp_solve_goal(PCP_REGIME_AUTOTUNE, z, 2, PAGE_4K, &g, &nf), 0);
                assert_int_equal(pcp_bulk_free_pages_host(PCP_REGIME_AUTOTUNE, z, 2, PAGE_4K, nf, false, PCP_BATCH_SCALE_MAX_DEFAULT, &pages), 0);
                /* A smaller high: a larger fraction, fewer pages per bulk free, predicted within the target. */
                assert_true(nf > f && pages < first_pages && used * (double) pages <= target);
                f = nf;
                since = 0;
                changes++;
        }
        assert_int_equal(changes, 1);
        assert_true(f > first);
        /* What it holds now meets the target: solved with the 400 ns per page it runs at. */
        assert_true(400.0 * (double) pages <= target);
}

static void test_goal_to_string(void **state) {
        (void) state;
        char gb[64];
        assert_string_equal(pcp_goal_to_string(&(PcpGoal){ PCP_GOAL_BULK_FREE_P99, 200000, 0, false }, gb, sizeof gb),
                            "bulk_free_p99 200us");
        static const struct {
                PcpGoal g;
                const char *s;
        } t[] = {
                { { PCP_GOAL_DEFAULT, 0 }, "default" },
                { { PCP_GOAL_MINIMUM, 0 }, "minimum" },
                { { PCP_GOAL_BATCH_MULTIPLE, 8 }, "8x batch" },
                { { PCP_GOAL_FRACTION, 1000 }, "fraction 1000" },
                { { PCP_GOAL_BYTES_PER_CPU, 2 << 20 }, "2 MiB per cpu" },
                { { PCP_GOAL_BYTES_PER_NODE, 2 << 20 }, "2 MiB per node" },
                { { PCP_GOAL_BYTES_PER_NODE, UINT64_C(3) << 30 }, "3 GiB per node" },
                { { PCP_GOAL_BYTES_PER_CPU, 1000 }, "1000 B per cpu" },
                { { PCP_GOAL_BYTES_PER_CPU, 1536 << 10 }, "1.5 MiB per cpu" },
                { { _PCP_GOAL_MAX, 0 }, "invalid" },
        };
        char buf[64];

        for (size_t i = 0; i < ELEMENTSOF(t); i++)
                assert_string_equal(pcp_goal_to_string(&t[i].g, buf, sizeof(buf)), t[i].s);
}


/* One cost for status, plan, metrics and pcptuned: measured (same kernel and shape) > daemon estimate > model. */
static void test_memcg_cost(void **state) {
        KernelVersion v612 = { 6, 12, 117 }, v618 = { 6, 18, 44 };
        MemcgCostMeasurement m = { .kernel_release = "6.18.44-fc", .possible_cpus = 2, .nodes = 1, .bytes = 4100,
                                   .how = "measured here" };
        MemcgCost c;

        (void) state;
        percpu_memcg_cost(&v612, "6.12.117", 2, 16, NULL, 0, &c);
        assert_int_equal(c.basis, PERCPU_BASIS_MODELLED);
        assert_true(c.bytes == (1450.0 + 2 * 492.0) * 16);
        assert_non_null(strstr(c.how, "x 16"));

        percpu_memcg_cost(&v618, "6.18.44-fc", 1, 2, &m, 3000, &c);
        assert_int_equal(c.basis, PERCPU_BASIS_MEASURED);
        assert_true(c.bytes == 4100);
        assert_string_equal(c.how, "measured here");
        assert_string_equal(percpu_basis_to_string(c.basis), "measured");

        /* Another kernel, CPU count or node count: the measurement does not apply. */
        percpu_memcg_cost(&v618, "6.18.45-fc", 1, 2, &m, 3000, &c);
        assert_int_equal(c.basis, PERCPU_BASIS_ESTIMATED);
        assert_true(c.bytes == 3000);
        percpu_memcg_cost(&v618, "6.18.44-fc", 1, 4, &m, 0, &c);
        assert_int_equal(c.basis, PERCPU_BASIS_MODELLED);
        assert_true(c.bytes == 2118.0 * 4);
        percpu_memcg_cost(&v618, "6.18.44-fc", 2, 2, &m, 0, &c);
        assert_int_equal(c.basis, PERCPU_BASIS_MODELLED);
        percpu_memcg_cost(&v618, NULL, 1, 2, &m, 0, &c);
        assert_int_equal(c.basis, PERCPU_BASIS_MODELLED);
}

static void test_percpu_split(void **state) {
        MemcgCost c = { .bytes = 4000, .basis = PERCPU_BASIS_MODELLED };
        PercpuSplit s;
        char b[256];

        (void) state;
        assert_int_equal(percpu_split_compute(false, 0, 1, 1, &c, &s), -EINVAL);

        /* 10 MB: 100 live x 4000 + 1000 dying x 3920 (98%) = 4.32 MB, the rest other. */
        assert_int_equal(percpu_split_compute(true, 10000000, 100, 1000, &c, &s), 0);
        assert_int_equal(s.live_memcgs_bytes, 400000);
        assert_int_equal(s.dying_memcgs_bytes, 3920000);
        assert_int_equal(s.other_bytes, 10000000 - 400000 - 3920000);
        assert_false(s.scaled);
        assert_false(s.has_fragmentation);
        percpu_split_set_fragmentation(&s, 123456, "test");
        assert_true(s.has_fragmentation);
        assert_int_equal(s.fragmentation_bytes, 123456);
        percpu_split_basis(&s, b, sizeof b);
        assert_string_equal(b, "total measured (meminfo); memcgs modelled, 4000 B each, a dying one keeps 98% of it; "
                               "other estimated (the rest)");

        /* The model overshoots the total: both scaled in proportion, nothing negative. */
        assert_int_equal(percpu_split_compute(true, 1000000, 100, 400, &c, &s), 0);
        assert_true(s.scaled);
        assert_int_equal(s.live_memcgs_bytes + s.dying_memcgs_bytes + s.other_bytes, 1000000);
        assert_true(s.other_bytes <= 1);
        assert_int_equal(s.live_memcgs_bytes, 203252); /* 400000 / (400000 + 1568000) x 1e6 */

        /* Nothing at all. */
        assert_int_equal(percpu_split_compute(true, 0, 0, 0, &c, &s), 0);
        assert_int_equal(s.live_memcgs_bytes + s.dying_memcgs_bytes + s.other_bytes, 0);
}

static void test_memcg_cost_file(void **state) {
        static const char good[] = "{\"kernel_release\":\"6.18.44-fc\",\"possible_cpus\":2,\"nodes\":1,"
                                   "\"bytes\":4236.5,\"how\":\"measured here\"}\n";
        static const char *const bad[] = {
                "",
                "[]",
                "{\"kernel_release\":\"6.18\",\"possible_cpus\":2,\"nodes\":1,\"bytes\":4236}",
                "{\"kernel_release\":\"6.18\",\"possible_cpus\":0,\"nodes\":1,\"bytes\":4236,\"how\":\"x\"}",
                "{\"kernel_release\":\"6.18\",\"possible_cpus\":2,\"nodes\":1,\"bytes\":-1,\"how\":\"x\"}",
                "{\"kernel_release\":\"6.18\",\"possible_cpus\":2,\"nodes\":1,\"bytes\":1e300,\"how\":\"x\"}",
                "{\"kernel_release\":\"6.18\",\"possible_cpus\":2,\"nodes\":1,\"bytes\":\"4236\",\"how\":\"x\"}",
                "{\"kernel_release\":\"a\\nb\",\"possible_cpus\":2,\"nodes\":1,\"bytes\":4236,\"how\":\"x\"}",
                "{\"kernel_release\":\"6.18\",\"possible_cpus\":2,\"nodes\":2000,\"bytes\":4236,\"how\":\"x\"}",
                "{\"kernel_release\":\"6.18\",\"possible_cpus\":2,\"nodes\":1,\"bytes\":4236,\"how\":\"x\"} {}",
        };
        char dir[] = "/tmp/pcptune-test-cost.XXXXXX", path[64];
        MemcgCostMeasurement m, back;

        (void) state;
        assert_int_equal(memcg_cost_measurement_parse(good, strlen(good), &m), 0);
        assert_string_equal(m.kernel_release, "6.18.44-fc");
        assert_int_equal(m.possible_cpus, 2);
        assert_int_equal(m.nodes, 1);
        assert_true(m.bytes == 4236.5);
        assert_string_equal(m.how, "measured here");
        assert_each_einval(bad, memcg_cost_measurement_parse(bad_s, bad_len, &back));

        /* Saved and loaded back; a symlink in its place is refused. */
        assert_non_null(mkdtemp(dir));
        assert_int_equal(memcg_cost_measurement_load(dir, &back), -ENOENT);
        assert_int_equal(memcg_cost_measurement_save(dir, &m), 0);
        assert_int_equal(memcg_cost_measurement_load(dir, &back), 0);
        assert_string_equal(back.kernel_release, m.kernel_release);
        assert_true(back.bytes == m.bytes);
        snprintf(path, sizeof path, "%s/" MEMCG_COST_FILE, dir);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(symlink("/etc/passwd", path), 0);
        assert_int_equal(memcg_cost_measurement_load(dir, &back), -ELOOP);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(rmdir(dir), 0);
}


/* memcg IDs: live memcgs hold one each; dying ones only while swap entries may reference them. */
/* host-facts.h: the nodes and the pcp memory status, plan and the metrics share. */
static void test_host_facts(void **state) {
        /* numa2-memonly-smp4-4G at fraction 1000: node 0 CPUs 0-3, node 1 memory only. */
        unsigned node_cpus[] = { 4, 0 };
        PcpZone zones[] = {
                { 0, "DMA", { 3840, 107, 4, 4 } },
                { 0, "DMA32", { 500387, 14015, 4, 4 } },
                { 1, "DMA32", { 245728, 6902, 0, 4 } },
                { 1, "Normal", { 253700, 7133, 0, 4 } },
        };
        PcpSetting s;
        uint64_t total;
        (void) state;

        assert_int_equal(host_count_nodes(node_cpus, 2, zones, 4), 2);
        assert_int_equal(host_count_nodes(node_cpus, 2, zones, 2), 1);   /* node 1 without its zones */
        assert_int_equal(host_count_nodes(NULL, 0, zones, 4), 2);        /* no node lists: zones only */
        assert_int_equal(host_count_nodes(node_cpus, 1, zones, 4), 2);   /* node 1 beyond the list, once */
        assert_int_equal(host_count_nodes(NULL, 0, NULL, 0), 0);

        /* Node 1's zones: high split over all 4 online CPUs, held on all 4 pagesets. */
        assert_int_equal(host_zone_pageset_cpus(&zones[2].in), 4);
        assert_int_equal(pcp_model_zone(PCP_REGIME_FIXED, &zones[2].in, 4096, 0, &s), 0);
        assert_int_equal(s.high_max, 1725);                              /* 6902 / 4, zoneinfo prints it */
        assert_int_equal(host_zone_pcp_max_bytes(&zones[2].in, &s, 4096), (uint64_t) 1725 * 4 * 4096);
        assert_int_equal(host_pcp_max_bytes(PCP_REGIME_FIXED, zones, 4, 4096, 1000, &total), 0);
        assert_int_equal(total, (uint64_t) (4 + 3 * 252) * 4 * 4096);
        assert_int_equal(host_pcp_max_bytes(PCP_REGIME_FIXED, zones, 4, 4096, -7, &total), -EINVAL);

        /* numa2 with CPUs on both nodes: 8 CPUs split high, all 16 have a pageset. */
        PcpZone z16 = { 1, "Normal", { 1031443, 14287, 8, 16 } };
        assert_int_equal(pcp_model_zone(PCP_REGIME_FIXED, &z16.in, 4096, 1000, &s), 0);
        assert_int_equal(s.high_max, 252);
        assert_int_equal(host_zone_pcp_max_bytes(&z16.in, &s, 4096), (uint64_t) 252 * 16 * 4096);
        assert_int_equal(host_pcp_burst_bytes(&z16, 1, 4096, PCP_BATCH_SCALE_MAX_DEFAULT), (uint64_t) (63 << 5) * 16 * 4096);
        /* The effective batch scale: the contrib sysctl where read and in 0..6, else the build default; the
         * burst follows it. */
        assert_int_equal(pcp_batch_scale_max(false, 2), PCP_BATCH_SCALE_MAX_DEFAULT);
        assert_int_equal(pcp_batch_scale_max(true, 2), 2);
        assert_int_equal(pcp_batch_scale_max(true, 0), 0);
        assert_int_equal(pcp_batch_scale_max(true, 7), PCP_BATCH_SCALE_MAX_DEFAULT);
        assert_int_equal(pcp_batch_scale_max(true, -1), PCP_BATCH_SCALE_MAX_DEFAULT);
        assert_int_equal(host_pcp_burst_bytes(&z16, 1, 4096, pcp_batch_scale_max(true, 2)), (uint64_t) (63 << 2) * 16 * 4096);

        /* Saturates instead of wrapping. */
        s.high_max = INT_MAX;
        z16.in.online_cpus = UINT_MAX;
        assert_int_equal(host_zone_pcp_max_bytes(&z16.in, &s, 1u << 31), UINT64_MAX);
}

static void test_memcg_ids(void **state) {
        Snapshot s = { 0 };
        MemcgIdUsage u;

        (void) state;
        s.topo.kernel = (KernelVersion){ 6, 1, 0 };
        assert_int_equal(snapshot_memcg_ids(&s, &u), -ENODATA);
        s.has_memcg = true;
        s.memcg.mode = CGROUP_MEMORY_V2;
        s.memcg.live = 2;
        s.memcg.dying = 100;
        s.meminfo.has_swap = s.meminfo.has_swap_free = true;   /* SwapTotal 0: no swap entries */
        assert_int_equal(snapshot_memcg_ids(&s, &u), 0);
        assert_int_equal(u.used, 2);
        assert_int_equal(u.used_max, 2);
        assert_int_equal(u.limit, 65535);
        assert_true(u.exact);
        assert_false(u.warn);

        /* Swap in use: the dying ones may still hold IDs. */
        s.meminfo.swap_total_kib = 1024;
        s.meminfo.swap_free_kib = 1000;
        assert_int_equal(snapshot_memcg_ids(&s, &u), 0);
        assert_int_equal(u.used, 2);
        assert_int_equal(u.used_max, 102);
        assert_false(u.exact);
        /* All swap free again: exact. */
        s.meminfo.swap_free_kib = 1024;
        assert_int_equal(snapshot_memcg_ids(&s, &u), 0);
        assert_true(u.exact);

        /* The warning from 90% (58,982 of 65,535). */
        s.memcg.live = 58981;
        assert_int_equal(snapshot_memcg_ids(&s, &u), 0);
        assert_false(u.warn);
        s.memcg.live = 58982;
        assert_int_equal(snapshot_memcg_ids(&s, &u), 0);
        assert_true(u.warn);

        /* Before 4.8 dying memcgs kept their IDs. */
        s.topo.kernel = (KernelVersion){ 4, 4, 0 };
        s.memcg.live = 10;
        assert_int_equal(snapshot_memcg_ids(&s, &u), 0);
        assert_int_equal(u.used, 110);
        assert_true(u.exact);

        /* And the policy metric takes the upper count. */
        MetricValues mv;
        s.topo.kernel = (KernelVersion){ 6, 12, 0 };
        s.meminfo.swap_free_kib = 0;
        metrics_from_snapshot(&s, &mv);
        assert_true(mv.available[METRIC_MEMCG_IDS_USED]);
        assert_true(mv.value[METRIC_MEMCG_IDS_USED] == 110);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_regime),
                cmocka_unit_test(test_batchsize),
                cmocka_unit_test(test_table_6_18),
                cmocka_unit_test(test_fixtures_6_1_fixed),
                cmocka_unit_test(test_fixture_6_18_autotune),
                cmocka_unit_test(test_fixtures_6_12_autotune),
                cmocka_unit_test(test_solver_bruteforce),
                cmocka_unit_test(test_solver_property),
                cmocka_unit_test(test_brief_example),
                cmocka_unit_test(test_edge_cases),
                cmocka_unit_test(test_goal_to_string),
                cmocka_unit_test(test_memcg_cost),
                cmocka_unit_test(test_percpu_split),
                cmocka_unit_test(test_memcg_cost_file),
                cmocka_unit_test(test_host_facts),
                cmocka_unit_test(test_memcg_ids),
                cmocka_unit_test(test_bulk_free_pages),
                cmocka_unit_test(test_calibration),
                cmocka_unit_test(test_goal_feedback),
                cmocka_unit_test(test_goal_refit_loop),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
