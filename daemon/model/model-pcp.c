/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel's per-cpu page list (pcp) sizing, modelled exactly, and the solver
 * that turns a policy goal on pcp high into a value of
 * vm.percpu_pagelist_high_fraction.
 *
 * Written from zone_batchsize(), zone_highsize() and
 * zone_set_pageset_high_and_batch() (mm/page_alloc.c), read in the Debian 6.1
 * and 6.12 sources, checked against a live 6.18 kernel (tests/unit/test-model.c),
 * and read again in Debian's 7.2.13 source: there zone_highsize() and
 * zone_set_pageset_high_and_batch() are unchanged and zone_batchsize() is
 * written differently with the same result (see pcp_zone_batchsize()); plan is
 * exact on every populated zone of tests/fixtures/7.2.13+deb14-amd64-* (booted
 * under QEMU, tests/vm/capture-shapes).  No kernel code is copied.
 *
 * Integer semantics follow a 64-bit kernel: managed/low are unsigned long,
 * batch, high and the fraction are int.  Where the kernel stores an unsigned
 * long quotient into an int (zone_highsize(), the legacy high) we reproduce the
 * truncation, because the model must predict what the kernel really stores,
 * even on a hypothetical host big enough to overflow it.
 */

#include <math.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>

#include "macro.h"
#include "model-pcp.h"
#include "util.h"

/* Smallest non-zero value the sysctl accepts (MIN_PERCPU_PAGELIST_HIGH_FRACTION). */
#define PCP_FRACTION_MIN 8

static const char *const pcp_regime_table[_PCP_REGIME_MAX] = {
        [PCP_REGIME_LEGACY] = "legacy",
        [PCP_REGIME_FIXED] = "fixed",
        [PCP_REGIME_AUTOTUNE] = "autotune",
};

PcpRegime pcp_regime_from_version(const KernelVersion *v) {
        if (!v)
                return _PCP_REGIME_INVALID;

        /* 5.14: Mel Gorman's "Calculate pcp->high based on zone sizes and active CPUs". */
        KernelVersion fixed = KV(5, 14);
        /* 6.7: Huang Ying's pcp auto-tuning (high_min/high_max). */
        KernelVersion autotune = KV(6, 7);

        if (kernel_version_cmp(v, &fixed) < 0)
                return PCP_REGIME_LEGACY;
        if (kernel_version_cmp(v, &autotune) < 0)
                return PCP_REGIME_FIXED;
        return PCP_REGIME_AUTOTUNE;
}

const char *pcp_regime_to_string(PcpRegime r) {
        if (r < 0 || r >= _PCP_REGIME_MAX)
                return NULL;
        return pcp_regime_table[r];
}

static bool page_size_valid(unsigned page_size) {
        /* Powers of two only; the smallest page size Linux supports is 4 KiB. */
        return page_size >= 4096 && (page_size & (page_size - 1)) == 0;
}

static unsigned page_shift_of(unsigned page_size) {
        unsigned s = 0;

        while ((1U << s) < page_size)
                s++;
        return s;
}

/* Largest power of two <= x, for x >= 1. */
static uint64_t rounddown_pow2(uint64_t x) {
        uint64_t p = 1;

        while (p <= x / 2)
                p *= 2;
        return p;
}

/*
 * The kernel assigns an unsigned long to an int: on every architecture Linux
 * supports this keeps the low 32 bits, two's complement.  Done by hand so it is
 * not implementation-defined here.
 */
static int kernel_ulong_to_int(uint64_t v) {
        uint32_t low = (uint32_t) v;

        if (low <= (uint32_t) INT_MAX)
                return (int) low;
        return (int) ((int64_t) low - ((int64_t) 1 << 32));
}

int pcp_zone_batchsize(uint64_t managed_pages, unsigned page_size) {
        if (!page_size_valid(page_size))
                return -EINVAL;

        /*
         * Up to 6.18: ~0.1% of the zone capped at 1 MiB of pages, then a quarter of that.
         * Debian 7.2.13 computes min(managed >> 12, 256 KiB of pages) in one step (~0.025%):
         * floor(min(m >> 10, 2^20 / ps) / 4) == min(m >> 12, 2^18 / ps) for page sizes that
         * are powers of two >= 4 KiB, so both give the same batch.
         */
        uint64_t b = MIN(managed_pages >> 10, (uint64_t) (1024 * 1024) / page_size);

        /* A quarter of that, at least 1, then 2^n - 1 (avoids cache-colour aliasing). */
        b /= 4;
        if (b < 1)
                b = 1;
        b = rounddown_pow2(b + b / 2) - 1;

        /* zone_set_pageset_high_and_batch() (5.14+) and pageset_set_batch() (<= 5.13) clamp to >= 1. */
        return (int) MAX(b, (uint64_t) 1);
}

/* The divisor of zone_highsize(): the node's CPUs, or all online CPUs for a CPU-less node. */
static unsigned zone_split_cpus(const PcpZoneInput *z) {
        return z->node_cpus > 0 ? z->node_cpus : z->online_cpus;
}

static bool zone_input_valid(const PcpZoneInput *z) {
        return z && zone_split_cpus(z) > 0;
}

/*
 * zone_highsize() before the unsigned long -> int store: what the kernel meant
 * to compute.  Never above 2^63; the kernel's stored value is never above this
 * either (see pcp_zone_highsize()), which is what makes the solver sound.
 */
static uint64_t zone_highsize_wide(const PcpZoneInput *z, int batch, int fraction) {
        uint64_t total = fraction > 0 ? z->managed_pages / (uint64_t) fraction : z->low_pages;
        uint64_t high = total / zone_split_cpus(z);

        return MAX(high, (uint64_t) batch << 2);
}

int pcp_zone_highsize(const PcpZoneInput *z, int batch, int fraction) {
        if (!zone_input_valid(z) || batch < 1 || batch > INT_MAX / 4 || fraction < PCP_FRACTION_FLOOR)
                return -EINVAL;
        /* pcptune's contrib patch: -1 pins high at the floor on every zone. */
        if (fraction == PCP_FRACTION_FLOOR)
                return batch << 2;

        uint64_t total = fraction > 0 ? z->managed_pages / (uint64_t) fraction : z->low_pages;
        /* cpu_online = 0: the steady state; only the CPU-hotplug online callback passes 1. */
        int high = kernel_ulong_to_int(total / zone_split_cpus(z));

        return MAX(high, batch << 2);
}

static bool fraction_valid(int64_t fraction) {
        return fraction == 0 || fraction == PCP_FRACTION_FLOOR || (fraction >= PCP_FRACTION_MIN && fraction <= INT_MAX);
}

/*
 * pageset_set_high_and_batch() of 5.4 - 5.13 (vm.percpu_pagelist_fraction).
 * zone_highsize(), mm/page_alloc.c (5.14+): the fraction is per CPU (not split), and it also sets batch.
 */
static void model_zone_legacy(const PcpZoneInput *z, unsigned page_size, int batch0, int fraction,
                              PcpSetting *ret) {
        if (fraction == 0) {
                ret->batch = batch0;
                ret->high_min = ret->high_max = 6 * batch0;
                return;
        }

        uint64_t high = z->managed_pages / (uint64_t) fraction;
        uint64_t cap = (uint64_t) page_shift_of(page_size) * 8;
        uint64_t batch = MAX(high / 4, (uint64_t) 1);

        if (high / 4 > cap)
                batch = cap;
        ret->batch = (int) batch;
        ret->high_min = ret->high_max = kernel_ulong_to_int(high);
}

int pcp_model_zone(PcpRegime regime, const PcpZoneInput *z, unsigned page_size, int fraction, PcpSetting *ret) {
        if (!zone_input_valid(z) || !ret || !fraction_valid(fraction))
                return -EINVAL;
        /* -1 exists only with pcptune's contrib patch, for high_fraction (5.14+). */
        if (fraction == PCP_FRACTION_FLOOR && regime == PCP_REGIME_LEGACY)
                return -EINVAL;

        int batch = pcp_zone_batchsize(z->managed_pages, page_size);
        if (batch < 0)
                return batch;

        PcpSetting s = { .batch = batch };

        switch (regime) {
        case PCP_REGIME_LEGACY:
                model_zone_legacy(z, page_size, batch, fraction, &s);
                break;
        case PCP_REGIME_FIXED:
                s.high_min = s.high_max = pcp_zone_highsize(z, batch, fraction);
                break;
        case PCP_REGIME_AUTOTUNE:
                if (fraction == 0) {
                        s.high_min = pcp_zone_highsize(z, batch, 0);
                        s.high_max = pcp_zone_highsize(z, batch, PCP_FRACTION_MIN);
                } else
                        /* A set fraction disables auto-tuning: high_min == high_max. */
                        s.high_min = s.high_max = pcp_zone_highsize(z, batch, fraction);
                break;
        default:
                return -EINVAL;
        }

        *ret = s;
        return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Goal solver */

static uint64_t mul_sat(uint64_t a, uint64_t b) {
        uint64_t r;

        if (__builtin_mul_overflow(a, b, &r))
                return UINT64_MAX;
        return r;
}

static uint64_t add_sat(uint64_t a, uint64_t b) {
        uint64_t r;

        if (__builtin_add_overflow(a, b, &r))
                return UINT64_MAX;
        return r;
}

/*
 * The largest high the kernel may use in zone z at a fraction (the fixed high on
 * FIXED, high_max on AUTOTUNE), before the kernel's int truncation.
 */
static uint64_t zone_high_limit_wide(PcpRegime regime, const PcpZoneInput *z, int batch, int fraction) {
        if (regime == PCP_REGIME_AUTOTUNE && fraction == 0)
                fraction = PCP_FRACTION_MIN;
        return zone_highsize_wide(z, batch, fraction);
}

/* A per-zone cap on high in pages, for goals that bound each zone on its own. */
static uint64_t goal_zone_cap(const PcpGoal *g, int batch, unsigned page_size) {
        switch (g->kind) {
        case PCP_GOAL_BULK_FREE_P99: {
                /*
                 * pcp_bulk_free_max_pages(): pages(high) = max(batch, min(burst, high - batch)), or batch
                 * when batched.  <= P  <=>  batch <= P and (batched or burst <= P or high <= P + batch).
                 */
                double p = (double) g->value / g->ns_per_page;
                uint64_t pages = p >= 1e18 ? UINT64_MAX : (uint64_t) p;
                if ((uint64_t) batch > pages)
                        return 0; /* not even the floor */
                if (g->batched || ((uint64_t) batch << pcp_goal_scale_max(g)) <= pages)
                        return UINT64_MAX;
                return add_sat(pages, (uint64_t) batch);
        }
        case PCP_GOAL_MINIMUM:
                return (uint64_t) batch << 2;
        case PCP_GOAL_BATCH_MULTIPLE:
                return mul_sat(g->value, (uint64_t) batch);
        case PCP_GOAL_BYTES_PER_CPU:
                /* high * page_size <= bytes  <=>  high <= floor(bytes / page_size) */
                return g->value / page_size;
        default:
                return UINT64_MAX;
        }
}

/*
 * Does fraction meet the goal on every zone?  Monotone: false then true as the
 * fraction grows from 8, because every zone's limit is non-increasing in it.
 */
static bool goal_met(PcpRegime regime, const PcpZone *zones, size_t n, unsigned page_size, const PcpGoal *g,
                     int fraction) {
        if (g->kind != PCP_GOAL_BYTES_PER_NODE) {
                for (size_t i = 0; i < n; i++) {
                        int batch = pcp_zone_batchsize(zones[i].in.managed_pages, page_size);
                        if (zone_high_limit_wide(regime, &zones[i].in, batch, fraction) >
                            goal_zone_cap(g, batch, page_size))
                                return false;
                }
                return true;
        }

        /*
         * Per node: the zones' limits times the CPUs the kernel split each
         * zone's budget over.  A CPU-less node's zones are split over all online
         * CPUs, so they count with that many: its memory can sit on every CPU's
         * lists, and counting 0 would leave CXL/PMEM nodes unbounded.
         * Each node is summed when its first zone is met: O(n^2) for n <= ~40.
         */
        for (size_t i = 0; i < n; i++) {
                bool first = true;
                for (size_t j = 0; j < i && first; j++)
                        if (zones[j].node == zones[i].node)
                                first = false;
                if (!first)
                        continue;

                uint64_t sum = 0;
                for (size_t j = i; j < n; j++) {
                        if (zones[j].node != zones[i].node)
                                continue;
                        int batch = pcp_zone_batchsize(zones[j].in.managed_pages, page_size);
                        uint64_t high = zone_high_limit_wide(regime, &zones[j].in, batch, fraction);
                        uint64_t bytes = mul_sat(mul_sat(high, zone_split_cpus(&zones[j].in)), page_size);
                        sum = add_sat(sum, bytes);
                }
                if (sum > g->value)
                        return false;
        }
        return true;
}

static int check_zones(PcpRegime regime, const PcpZone *zones, size_t n, unsigned page_size) {
        if (!zones || n == 0 || !page_size_valid(page_size))
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (!zone_input_valid(&zones[i].in))
                        return -EINVAL;
        if (regime == PCP_REGIME_LEGACY)
                return -EOPNOTSUPP;
        if (regime != PCP_REGIME_FIXED && regime != PCP_REGIME_AUTOTUNE)
                return -EINVAL;
        return 0;
}

/* The closed form, as a 64-bit value (may exceed INT_MAX on absurd shapes). */
static uint64_t minimum_fraction_wide(const PcpZone *zones, size_t n, unsigned page_size) {
        uint64_t f = PCP_FRACTION_MIN;

        for (size_t i = 0; i < n; i++) {
                const PcpZoneInput *z = &zones[i].in;
                uint64_t batch = (uint64_t) pcp_zone_batchsize(z->managed_pages, page_size);

                /*
                 * floor(floor(managed / F) / split) == floor(managed / (F * split))
                 * <= 4 * batch  <=>  managed < F * split * (4 * batch + 1).
                 */
                uint64_t per_f = mul_sat(zone_split_cpus(z), 4 * batch + 1);
                f = MAX(f, z->managed_pages / per_f + 1);
        }
        return f;
}

int pcp_minimum_fraction(PcpRegime regime, const PcpZone *zones, size_t n, unsigned page_size) {
        int r = check_zones(regime, zones, n, page_size);
        if (r < 0)
                return r;

        uint64_t f = minimum_fraction_wide(zones, n, page_size);
        if (f > INT_MAX)
                return -ERANGE;
        return (int) f;
}

/*
 * The MINIMUM goal's answer: 0 if the default already sits on the floor
 * everywhere, else the closed form.  -ERANGE with *ret = INT_MAX (the closest
 * the sysctl can get) when the floor needs a fraction beyond INT_MAX.
 */
static int solve_minimum(PcpRegime regime, const PcpZone *zones, size_t n, unsigned page_size, int *ret) {
        static const PcpGoal minimum = { .kind = PCP_GOAL_MINIMUM };

        if (goal_met(regime, zones, n, page_size, &minimum, 0)) {
                *ret = 0;
                return 0;
        }

        uint64_t f = minimum_fraction_wide(zones, n, page_size);
        if (f > INT_MAX) {
                *ret = INT_MAX;
                return -ERANGE;
        }
        *ret = (int) f;
        return 0;
}

int pcp_solve_goal(PcpRegime regime, const PcpZone *zones, size_t n, unsigned page_size, const PcpGoal *goal,
                   int *ret_fraction) {
        if (!goal || !ret_fraction)
                return -EINVAL;
        int r = check_zones(regime, zones, n, page_size);
        if (r < 0)
                return r;

        switch (goal->kind) {
        case PCP_GOAL_DEFAULT:
                *ret_fraction = 0;
                return 0;

        case PCP_GOAL_FRACTION:
                if (goal->value > INT_MAX || !fraction_valid((int64_t) goal->value))
                        return -EINVAL;
                *ret_fraction = (int) goal->value;
                return 0;

        case PCP_GOAL_MINIMUM:
                return solve_minimum(regime, zones, n, page_size, ret_fraction);

        case PCP_GOAL_BATCH_MULTIPLE:
        case PCP_GOAL_BYTES_PER_CPU:
        case PCP_GOAL_BYTES_PER_NODE:
                break;

        case PCP_GOAL_BULK_FREE_P99:
                if (!(goal->ns_per_page > 0) || !isfinite(goal->ns_per_page))
                        return -ENODATA; /* no calibration */
                break;

        default:
                return -EINVAL;
        }

        /* The default wins when it already meets the cap: the largest lists allowed. */
        if (goal_met(regime, zones, n, page_size, goal, 0)) {
                *ret_fraction = 0;
                return 0;
        }

        /*
         * From this fraction on every zone is at its floor (managed / F == 0), so
         * nothing above it can do better.  The sysctl is an int.
         */
        uint64_t upper = 1;
        for (size_t i = 0; i < n; i++)
                upper = MAX(upper, add_sat(zones[i].in.managed_pages, 1));
        upper = CLAMP(upper, (uint64_t) PCP_FRACTION_MIN, (uint64_t) INT_MAX);

        if (!goal_met(regime, zones, n, page_size, goal, (int) upper)) {
                /* Even the floor is above the cap (or beyond INT_MAX): say how close we can get. */
                int m;
                (void) solve_minimum(regime, zones, n, page_size, &m);
                *ret_fraction = m;
                return -ERANGE;
        }

        /* Smallest F in [8, upper] that meets the goal: invariant lo fails (or is 8), hi meets. */
        uint64_t lo = PCP_FRACTION_MIN, hi = upper;
        if (goal_met(regime, zones, n, page_size, goal, (int) lo))
                hi = lo;
        while (hi - lo > 1) {
                uint64_t mid = lo + (hi - lo) / 2;
                if (goal_met(regime, zones, n, page_size, goal, (int) mid))
                        hi = mid;
                else
                        lo = mid;
        }

        *ret_fraction = (int) hi;
        return 0;
}

int pcp_batch_scale_max(bool present, int64_t value) {
        if (!present || value < 0 || value > 6)
                return PCP_BATCH_SCALE_MAX_DEFAULT;
        return (int) value;
}

int pcp_bulk_free_pages_host(PcpRegime regime, const PcpZone *zones, size_t n, unsigned page_size, int fraction,
                             bool batched, int scale_max, uint64_t *ret_pages) {
        uint64_t worst = 0;
        int r = check_zones(regime, zones, n, page_size);
        if (r < 0)
                return r;
        if (!fraction_valid(fraction))
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                /* What the kernel stores (an int): the setting, not the wide value. */
                PcpSetting st;
                r = pcp_model_zone(regime, &zones[i].in, page_size, fraction, &st);
                if (r < 0)
                        return r;
                worst = MAX(worst, (uint64_t) pcp_bulk_free_max_pages(&st, scale_max, batched));
        }
        *ret_pages = worst;
        return 0;
}

/* "2 MiB" when the value is a whole number of some unit below 1024 of it, else format_bytes(). */
static const char *goal_format_bytes(char *buf, size_t size, uint64_t bytes) {
        static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
        uint64_t v = bytes;
        size_t i = 0;

        while (v >= 1024 && v % 1024 == 0 && i + 1 < ELEMENTSOF(units)) {
                v /= 1024;
                i++;
        }
        if (v < 1024) {
                snprintf(buf, size, "%" PRIu64 " %s", v, units[i]);
                return buf;
        }
        return format_bytes(buf, size, bytes);
}

const char *pcp_goal_to_string(const PcpGoal *g, char *buf, size_t size) {
        char b[32];

        if (!buf || size == 0)
                return buf;
        if (!g) {
                snprintf(buf, size, "invalid");
                return buf;
        }

        switch (g->kind) {
        case PCP_GOAL_DEFAULT:
                snprintf(buf, size, "default");
                break;
        case PCP_GOAL_MINIMUM:
                snprintf(buf, size, "minimum");
                break;
        case PCP_GOAL_BATCH_MULTIPLE:
                snprintf(buf, size, "%" PRIu64 "x batch", g->value);
                break;
        case PCP_GOAL_FRACTION:
                snprintf(buf, size, "fraction %" PRIu64, g->value);
                break;
        case PCP_GOAL_BYTES_PER_CPU:
                snprintf(buf, size, "%s per cpu", goal_format_bytes(b, sizeof(b), g->value));
                break;
        case PCP_GOAL_BYTES_PER_NODE:
                snprintf(buf, size, "%s per node", goal_format_bytes(b, sizeof(b), g->value));
                break;
        case PCP_GOAL_BULK_FREE_P99:
                if (g->value % 1000 == 0)
                        snprintf(buf, size, "bulk_free_p99 %" PRIu64 "us", g->value / 1000);
                else
                        snprintf(buf, size, "bulk_free_p99 %" PRIu64 "ns", g->value);
                break;
        default:
                snprintf(buf, size, "invalid");
                break;
        }
        return buf;
}

int pcp_bulk_free_max_pages(const PcpSetting *s, int scale_max, bool batched) {
        int64_t batch = MAX(s->batch, 1), cap, above;

        if (batched)
                return (int) batch;
        cap = batch << CLAMP(scale_max, 0, 16);
        above = (int64_t) s->high_max - batch;
        /*
         * clamp(free_count, batch, high - batch): high - batch wins over the lower bound only when >= batch.
         * nr_pcp_free()'s free_high case (min(count, batch << scale_max)) is the same bound; 7.2 only
         * enters it later (free_count >= batch + high_min / 2, was >= batch in 6.12), which moves when,
         * not how much.
         */
        return (int) MAX(batch, MIN(cap, above));
}
