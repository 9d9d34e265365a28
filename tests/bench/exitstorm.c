/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * exitstorm: the win and the cost of a small pcp high (many exits at once freeing to the pcp lists)
 * on the live kernel.  Several processes with a large RSS are SIGKILLed at
 * once while a co-located process keeps allocating and touching fresh pages;
 * each run is done with vm.percpu_pagelist_high_fraction = 0 (the default:
 * pcp high auto-tuned between high_min and high_max on 6.7+) or with the
 * minimum fraction (the smallest fraction that gives pcp high = 4 x batch on
 * every populated zone), alternating 0, min, min, 0, 0, min, ...
 * (documentation lives here; tests/bench/README points to it).
 *
 * usage: exitstorm [--runs N] [--exiters K] [--size MIB] [--minimum-fraction F]
 *                  [--goal-latency US|auto] [--ns-per-page N|auto] [--no-refit]
 *                  [--pcptunectl PATH] [--alloc-mode recycle|grow] [--grow-max-mib MIB]
 *                  [--baseline-ms MS] [--settle-ms MS] [--alloc-cpu CPU] [--nice N]
 *                  [--no-trace] [--max-samples N]
 *        exitstorm --self-test    (its statistics, checked; no root needed)
 * defaults: 6 runs, 4 exiters x 512 MiB, recycle, baseline 500 ms, settle 500 ms,
 * allocator on the first allowed CPU, nice -20 for the children, tracing on.
 *
 * One run:
 *   1. write the run's fraction (read back), write vm.stat_refresh so that
 *      idle CPUs' pcp high decays towards the new limits, wait --settle-ms;
 *      for the minimum, check in /proc/zoneinfo that high_max = 4 x batch on
 *      every populated zone (6.13+ prints high_max);
 *   2. K exiters, pinned to every allowed CPU but the allocator's, mmap
 *      --size MiB of anonymous memory each, MADV_NOHUGEPAGE (all of it order-0
 *      pages, which go through the pcp lists), touch every page and block on
 *      a pipe; then vm.stat_refresh and --settle-ms again;
 *   3. the allocator, pinned to --alloc-cpu, loops over 2 MiB chunks: mmap,
 *      MADV_NOHUGEPAGE, write one byte per 4 KiB page, each fault timed with
 *      two CLOCK_MONOTONIC vDSO reads into a preallocated shared array, then
 *        recycle (default): munmap the chunk.  Its pages go back to this
 *          CPU's pcp list, and to the buddy allocator (zone->lock) only when
 *          the list is above high: with the default high (thousands of pages)
 *          the allocator lives in its own pcp list and never takes zone->lock;
 *          with high = 4 x batch it takes it for every ~189 pages, both ways;
 *        grow: keep the chunk (up to --grow-max-mib, default 4096), so that
 *          every page comes from the buddy allocator through pcp refills under
 *          zone->lock, as for a container that is growing;
 *   4. after 100 ms of warm-up and --baseline-ms (the baseline window), all
 *      exiters get SIGKILL at t0; t1 is when the last one has been reaped
 *      (exit_mmap has freed its memory by then): exit time = t1 - t0, and the
 *      exit window is [t0, t1];
 *   5. p50/p99/max of the faults that started in the exit window (and in the
 *      baseline window).  Two CPUs are shared with whatever else runs here, so
 *      two measures of CPU competition are printed: runq_ms, the allocator's
 *      run-queue wait during the exit window (/proc/PID/schedstat), and
 *      prmpt, the number of its chunks during which it was involuntarily
 *      switched out (getrusage ru_nivcsw read around each chunk); the slowest
 *      fault of each such chunk is flagged, and maxnp_us is the max without
 *      the flagged faults.  pcp_t0/pcp_t1: pcp count/high (pages, all zones,
 *      the exiters' CPUs, from /proc/zoneinfo) just before t0 and after t1.
 *
 * Bulk frees (free_pcppages_bulk() calls) from tracefs: a private trace
 * instance (instances/exitstorm-<pid>; the global buffer, tracer and events
 * are not touched) records kmem:mm_page_pcpu_drain (one event per page or
 * higher-order block moved from a pcp list to the buddy allocator, inside
 * free_pcppages_bulk() under zone->lock) and kmem:mm_page_free (emitted by
 * free_pages_prepare() for every page freed, before it can enter a pcp
 * list), for the exiters' pids only (set_event_pid), on the exiters' CPUs
 * only (tracing_cpumask), between t0 and t1 only (tracing_on).  The events
 * are enabled with tracing_on = 0 before the allocator starts and disabled
 * after it has stopped, so that the text patching of enabling a tracepoint
 * does not land in a measured window.
 * Grouping: on one CPU, a bulk free is a maximal run of consecutive
 * mm_page_pcpu_drain events; any mm_page_free event ends it.  That is exact
 * for the exit path: a bulk free only happens once a freed page has been
 * added to the pcp list (pcp->count >= high), and each such page emits
 * mm_page_free first; free_unref_folios() emits all mm_page_free events of a
 * batch (<= 31 folios) before committing them, but a bulk free takes at
 * least batch (63) pages off the list, so one batch of order-0 folios cannot
 * trigger two.  Back-to-back calls without a free in between (decay_pcp_high()
 * and drain_pages_zone() free in chunks) would count as one.  The function
 * itself cannot be traced on this kernel: there is no kprobe_events, and
 * set_ftrace_filter and available_filter_functions give EPERM.
 * pages per bulk free = sum of 1 << order over its events.  span = time from
 * its first to its last event (microsecond timestamps, trace_clock mono): a
 * lower bound of the zone->lock hold time, inflated by the tracing itself
 * (an event per page inside the lock).  The per-page events also slow the
 * exit down: compare with --no-trace.
 *
 * The latency goal (--goal-latency US): a third fraction, the one pcptune's
 * goal `pcp: { high: { bulk_free_p99: US } }` chooses ("plan --json
 * --latency USus", key bulk_free.latency_fraction, with --ns-per-page N or
 * the host's calibration.json, or --ns-per-page auto: the time per page
 * pcptuned would fit from the bulk frees of the first two runs, at 0 and at
 * the minimum, with its own code: calibration_add() per run as per tracing
 * window, calibration_p99_ns_per_page()), and the rotation becomes 0, min,
 * goal, goal, min, 0, ...  Every traced run goes into that calibration, and
 * after each goal run the goal is held as pcptuned holds it (goal_check():
 * the run's span p99 against the target and the prediction,
 * calibration_goal_feedback(): above the target, solved again with the time
 * per page the goal run actually ran at (or the refit, if higher); far below
 * the prediction, with the refit only if it fell by more than 10%; the
 * following goal runs use the new fraction; --no-refit: the first choice
 * throughout).
 * Each check and re-solve is printed, and which runs used which choice.
 * The summary then compares the fractions: the bulk-free span p99 (the
 * quantity the goal predicts: the daemon measures and calibrates the same
 * spans) against the target, and the allocator's throughput (kpg/s: a
 * page_fault1-like loop of mmap, one write per page, munmap, co-located with
 * the exits) at the goal's choices against the minimum (and the default
 * against the minimum), with the spread (min..max over runs), the difference
 * of the means with a bootstrap 95% interval (10,000 resamples of the runs)
 * and Welch's t with its two-sided p, so that a difference inside the noise
 * is not called a win; all of it also per second on the allocator's CPU
 * (faults over its on-CPU time in the exit window, /proc/PID/schedstat: the
 * time other tasks of a shared host take from it is left out, a spin on
 * zone->lock stays in).  Why the throughput moves: the summary also gives,
 * per fraction, the pages the allocator's pcp list freed to and took from
 * the buddy allocator (both under zone->lock) per 2 MiB chunk, counted in its
 * 100 ms warm-up in two more trace instances (exitstorm-<pid>-free and
 * -refill: kmem:mm_page_pcpu_drain and kmem:mm_page_alloc_zone_locked with
 * percpu_refill, its pid on its CPU, from the buffers' counters), disabled
 * again before the baseline window.
 * --goal-latency auto sets the target after runs 1 and 2 too: the geometric
 * mean of their span p99s, a target between the two measured p99s wherever
 * the time per page is (a TCG guest is ten times slower than the host, so a
 * fixed target in microseconds would not fall between them on both).
 *
 * Output: a row per run, a summary per fraction (means over its runs; a run
 * during which someone else changed the fraction is flagged and left out),
 * and the last line
 *   exitstorm: fraction0_p99_us=<N> minimum_p99_us=<N> fraction0_exit_ms=<N>
 *              minimum_exit_ms=<N> pages_per_bulk_free_0=<N> pages_per_bulk_free_min=<N>
 * (one line; p99 and exit time are means over runs, pages per bulk free are
 * pooled over runs; "-" when not traced), and with a goal distinct from both
 *   exitstorm: goal_target_us=<N> goal_fraction=<F> goal_span_p99_us=<N> goal_kpages_s=<N>
 *              minimum_kpages_s=<N> fraction0_kpages_s=<N> goal_exit_ms=<N>
 *              goal_fractions=<F,...> goal_resolves=<N> goal_runs_met=<M>/<N>
 *              goal_last_span_p99_us=<N> kpages_goal_minus_min=<D> ci95=<LO>..<HI>
 *              welch_t=<T> welch_df=<DF> welch_p=<P> cpu_kpages_goal_minus_min=<D>
 *              cpu_ci95=<LO>..<HI> cpu_welch_p=<P>
 * (goal_fraction: the last choice; the goal_* figures over every goal run,
 * goal_last_span_p99_us over the last choice's).  The summary gives each
 * fraction's spread (min..max over its runs) of the allocator's throughput,
 * the exit time and the span p99 and max.
 *
 * The minimum fraction is pcptunectl's ("plan --json --no-owner-check
 * --policy-dir <empty dir>", key "minimum_fraction"; --pcptunectl PATH,
 * default the pcptunectl two directories above this program, else
 * ./pcptunectl) unless --minimum-fraction is given.
 *
 * Root only (exit 77 otherwise, or with fewer than 2 CPUs).  The original
 * fraction is recorded first, also in /run/pcptune-exitstorm.state, and
 * written back at the end, on error and on SIGINT/SIGTERM/SIGHUP, then read
 * back and checked; the children have PR_SET_PDEATHSIG SIGKILL and are
 * killed and reaped on every exit path; the trace instance is removed and the
 * global tracing state (tracing_on, buffer_size_kb, current_tracer, set_event
 * and both events' enable files) is compared with what it was at start.
 * After a SIGKILL of this program, the next run restores the fraction from
 * the state file and removes the stale instance.  Exit status: 0, 1 on
 * failure, 2 on bad arguments, 77 when it cannot run here, 130 when
 * interrupted.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "calibration.h"
#include "source-zoneinfo.h"
#include "util.h"

#define FRACTION_PATH "/proc/sys/vm/percpu_pagelist_high_fraction"
#define STAT_REFRESH_PATH "/proc/sys/vm/stat_refresh"
#define ZONEINFO_PATH "/proc/zoneinfo"
#define ES_STATE_PATH "/run/pcptune-exitstorm.state" /* "<pid> <original fraction>" while running */

#define ES_CHUNK_BYTES ((size_t) 2U << 20)   /* the allocator's mmap unit */
#define ES_MAX_EXITERS 256U
#define ES_WARMUP_MS 100U                    /* allocator running before the baseline window */
#define ES_READY_TIMEOUT_MS 120000U          /* exiters populating their memory */
#define ES_NSEC_PER_SEC 1000000000ULL
#define ES_EV_DRAIN "mm_page_pcpu_drain"
#define ES_EV_FREE "mm_page_free"
#define ES_PREEMPTED 0x80000000U                /* lat_ns flag: the chunk saw an involuntary switch */
#define ES_LAT_MASK 0x7fffffffU

/* The only mutable global: what the signal handler may touch. */
static volatile sig_atomic_t es_interrupted;

static void es_on_signal(int sig) {
        es_interrupted = 1;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        fflush(stdout);
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...) {
        va_list ap;
        fflush(stdout);
        fputs("exitstorm: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return -EINVAL;
}

static uint64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * ES_NSEC_PER_SEC + (uint64_t) ts.tv_nsec;
}

/* Sleeps ms milliseconds; -EINTR as soon as a termination signal was seen. */
static int sleep_ms(unsigned ms) {
        struct timespec ts = { .tv_sec = ms / 1000U, .tv_nsec = (long) (ms % 1000U) * 1000000L };
        while (nanosleep(&ts, &ts) < 0) {
                if (errno != EINTR)
                        return -errno;
                if (es_interrupted)
                        return -EINTR;
        }
        return es_interrupted ? -EINTR : 0;
}

/* ---------------------------------------------------------------------------
 * Small file helpers.  All return >= 0 or -errno.
 */

static int file_write(const char *path, const char *s, int extra_flags) {
        int fd = open(path, O_WRONLY | O_CLOEXEC | extra_flags);
        if (fd < 0)
                return -errno;
        size_t len = strlen(s);
        ssize_t k = write(fd, s, len);
        int r = k < 0 ? -errno : (size_t) k != len ? -EIO : 0;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        return r;
}

/* Reads at most size - 1 bytes; strips trailing newlines. */
static int file_read(const char *path, char *buf, size_t size) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        size_t n = 0;
        while (n + 1 < size) {
                ssize_t k = read(fd, buf + n, size - 1 - n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        int r = -errno;
                        close(fd);
                        return r;
                }
                if (k == 0)
                        break;
                n += (size_t) k;
        }
        close(fd);
        while (n > 0 && buf[n - 1] == '\n')
                n--;
        buf[n] = '\0';
        return (int) n;
}

/* A decimal in [min, max] (parse_int64() of the library, plus the range). 0 or -EINVAL. */
static int parse_long(const char *s, long min, long max, long *ret) {
        int64_t v;
        if (parse_int64(s, &v) < 0 || v < min || v > max)
                return -EINVAL;
        *ret = (long) v;
        return 0;
}

/* ---------------------------------------------------------------------------
 * The knob.
 */

static int fraction_read(long *ret) {
        int64_t v;
        int r = read_int64_at(NULL, FRACTION_PATH, &v);
        if (r < 0)
                return r;
        if (v < 0 || v > INT_MAX)
                return -EINVAL;
        *ret = (long) v;
        return 0;
}

/* Writes and reads back: -EIO when the value read differs. */
static int fraction_write(long v) {
        char buf[32];
        long back;
        snprintf(buf, sizeof(buf), "%ld\n", v);
        int r = file_write(FRACTION_PATH, buf, 0);
        if (r < 0)
                return r;
        r = fraction_read(&back);
        if (r < 0)
                return r;
        return back == v ? 0 : -EIO;
}

/* vm.stat_refresh: refresh_vm_stats() on every CPU, which includes
 * decay_pcp_high() (mm/page_alloc.c, 6.7+), so idle CPUs move towards new limits. */
static void stat_refresh(void) {
        (void) file_write(STAT_REFRESH_PATH, "1\n", 0);
}

/*
 * Checks in /proc/zoneinfo (6.13+ prints high_min/high_max) that every
 * populated zone's pagesets have high_min == high_max == 4 x batch.
 * Returns the number of zones checked, -ENOENT when high_max is not
 * printed, -EDOM on a mismatch (*bad names the first one).
 */
static int zoneinfo_check_minimum(char *bad, size_t bad_size) {
        Zoneinfo zi = { 0 };
        int r = zoneinfo_read(NULL, &zi);
        if (r < 0)
                return r;
        int zones = 0;
        r = zi.has_high_min_max ? 0 : -ENOENT;
        for (size_t i = 0; r == 0 && i < zi.n_zones; i++) {
                const Zone *z = &zi.zones[i];
                if (!z->populated)
                        continue;
                for (size_t c = 0; r == 0 && c < z->n_cpus; c++) {
                        const PcpCpu *p = &z->cpus[c];
                        if (p->high_min != 4 * p->batch || p->high_max != 4 * p->batch) {
                                snprintf(bad, bad_size, "node %d %s cpu %d: high_min %" PRId64 " high_max %" PRId64
                                         ", batch %" PRId64, z->node, z->name, p->cpu, p->high_min, p->high_max, p->batch);
                                r = -EDOM;
                        }
                }
                zones++;
        }
        zoneinfo_done(&zi);
        return r < 0 ? r : zones;
}

/* ---------------------------------------------------------------------------
 * The minimum fraction from pcptunectl.
 */

/* "pcptunectl plan --json --no-owner-check --policy-dir <empty dir> [extra...]": its JSON (caller puts). */
static int plan_json(const char *ctl, const char *const *extra, json_object **ret) {
        char dir[] = "/tmp/exitstorm-policies-XXXXXX";
        int pfd[2];
        if (!mkdtemp(dir))
                return -errno;
        if (pipe2(pfd, O_CLOEXEC) < 0) {
                int r = -errno;
                rmdir(dir);
                return r;
        }
        pid_t pid = fork();
        if (pid < 0) {
                int r = -errno;
                close(pfd[0]);
                close(pfd[1]);
                rmdir(dir);
                return r;
        }
        if (pid == 0) {
                const char *argv[16] = { ctl, "plan", "--json", "--no-owner-check", "--policy-dir", dir };
                size_t n = 6;
                for (size_t i = 0; extra && extra[i] && n < 15; i++)
                        argv[n++] = extra[i];
                argv[n] = NULL;
                if (dup2(pfd[1], STDOUT_FILENO) < 0)
                        _exit(127);
                execv(ctl, (char *const *) argv);
                _exit(127);
        }
        close(pfd[1]);
        char *out = NULL;
        int r = read_fd_full(pfd[0], READ_FILE_MAX, &out, NULL);
        close(pfd[0]);
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        rmdir(dir);
        if (r < 0)
                return r;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                free(out);
                return -ECHILD;
        }
        *ret = json_tokener_parse(out);
        free(out);
        return *ret ? 0 : -EINVAL;
}

/* One integer of plan's JSON: the top-level key, or key.sub.  >= min and <= INT_MAX. */
static int plan_query(const char *ctl, const char *const *extra, const char *key, const char *sub, long min,
                      long *ret) {
        json_object *o = NULL, *v = NULL;
        int r = plan_json(ctl, extra, &o);
        if (r < 0)
                return r;
        r = -ENOENT;
        if (json_object_object_get_ex(o, key, &v) && (!sub || json_object_object_get_ex(v, sub, &v))) {
                int64_t f = json_object_get_int64(v);
                r = -EINVAL;
                if (json_object_is_type(v, json_type_int) && f >= min && f <= INT_MAX) {
                        *ret = (long) f;
                        r = 0;
                }
        }
        json_object_put(o);
        return r;
}

static int minimum_fraction_query(const char *ctl, long *ret) {
        return plan_query(ctl, NULL, "minimum_fraction", NULL, 8, ret);
}

/*
 * The fraction the goal bulk_free_p99 <us> chooses, "latency_fraction" of plan's "bulk_free", the
 * p99 hold it predicts for it (latency_p99_seconds, in us) and the time per page it solved with
 * (ns_per_page); 0 when plan has none.
 */
static int goal_fraction_query(const char *ctl, unsigned us, const char *ns_per_page, long *ret,
                               double *ret_predicted_us, double *ret_ns_per_page) {
        char lat[32];
        json_object *o = NULL, *bf = NULL, *v = NULL;
        snprintf(lat, sizeof(lat), "%uus", us);
        const char *extra[] = { "--latency", lat, ns_per_page ? "--ns-per-page" : NULL, ns_per_page, NULL };
        int r = plan_json(ctl, extra, &o);
        if (r < 0)
                return r;
        r = -ENOENT;
        *ret_predicted_us = *ret_ns_per_page = 0;
        if (json_object_object_get_ex(o, "bulk_free", &bf) && json_object_object_get_ex(bf, "latency_fraction", &v)) {
                int64_t f = json_object_get_int64(v);
                r = -EINVAL;
                if (json_object_is_type(v, json_type_int) && f >= 0 && f <= INT_MAX) {
                        *ret = (long) f;
                        r = 0;
                }
                if (json_object_object_get_ex(bf, "latency_p99_seconds", &v) &&
                    (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
                        *ret_predicted_us = json_object_get_double(v) * 1e6;
                if (json_object_object_get_ex(bf, "ns_per_page", &v) &&
                    (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
                        *ret_ns_per_page = json_object_get_double(v);
        }
        json_object_put(o);
        return r;
}

/* ---------------------------------------------------------------------------
 * Tracing: a private instance.
 */

typedef struct TraceGlobal {
        char tracing_on[16], buffer_size_kb[64], current_tracer[64];
        char drain_enable[16], free_enable[16], set_event[4096];
} TraceGlobal;

typedef struct Trace {
        char root[64];               /* tracefs mount */
        char dir[128];               /* our instance */
        bool made;                   /* instance exists */
        bool armed;                  /* events enabled */
        TraceGlobal before;
} Trace;

static void trace_path(const Trace *t, const char *rel, char *buf, size_t size) {
        snprintf(buf, size, "%s/%s", t->dir, rel);
}

static int trace_write(const Trace *t, const char *rel, const char *s, int flags) {
        char p[PATH_MAX + 128];
        trace_path(t, rel, p, sizeof(p));
        return file_write(p, s, flags);
}

static void trace_global_read(const Trace *t, TraceGlobal *g) {
#define GLOBAL_FILE(rel, field) { rel, offsetof(TraceGlobal, field), sizeof(((TraceGlobal *) 0)->field) }
        static const struct {
                const char *rel;
                size_t off, size;
        } files[] = {
                GLOBAL_FILE("tracing_on", tracing_on),
                GLOBAL_FILE("buffer_size_kb", buffer_size_kb),
                GLOBAL_FILE("current_tracer", current_tracer),
                GLOBAL_FILE("events/kmem/" ES_EV_DRAIN "/enable", drain_enable),
                GLOBAL_FILE("events/kmem/" ES_EV_FREE "/enable", free_enable),
                GLOBAL_FILE("set_event", set_event),
        };
#undef GLOBAL_FILE
        memset(g, 0, sizeof(*g));
        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
                char p[PATH_MAX];
                char *dst = (char *) g + files[i].off;
                snprintf(p, sizeof(p), "%s/%s", t->root, files[i].rel);
                if (file_read(p, dst, files[i].size) < 0)
                        snprintf(dst, files[i].size, "?");
        }
}

/* Removes instances of earlier runs whose process is gone (a SIGKILLed run). */
static void trace_remove_stale(const Trace *t) {
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s/instances", t->root);
        DIR *d = opendir(p);
        if (!d)
                return;
        for (struct dirent *de; (de = readdir(d));) {
                long pid;
                char num[32];
                /* exitstorm-<pid>, or exitstorm-<pid>-<what> (the allocator's instances) */
                if (strncmp(de->d_name, "exitstorm-", 10) != 0)
                        continue;
                snprintf(num, sizeof(num), "%s", de->d_name + 10);
                num[strcspn(num, "-")] = '\0';
                if (parse_long(num, 1, INT_MAX, &pid) < 0)
                        continue;
                if (kill((pid_t) pid, 0) == 0 || errno != ESRCH)
                        continue;
                char q[PATH_MAX + 300];
                snprintf(q, sizeof(q), "%s/%s", p, de->d_name);
                if (rmdir(q) == 0)
                        say("exitstorm: removed the stale trace instance %s\n", q);
        }
        closedir(d);
}

/* cpumask in the kernel's bitmap format: 32-bit hex groups, comma-separated. */
static void cpumask_format(const cpu_set_t *set, char *buf, size_t size) {
        int top = -1;
        for (int c = 0; c < CPU_SETSIZE; c++)
                if (CPU_ISSET(c, set))
                        top = c;
        size_t n = 0;
        buf[0] = '\0';
        for (int g = top < 0 ? 0 : top / 32; g >= 0 && n + 10 < size; g--) {
                uint32_t w = 0;
                for (int b = 0; b < 32; b++)
                        if (g * 32 + b < CPU_SETSIZE && CPU_ISSET(g * 32 + b, set))
                                w |= 1U << b;
                n += (size_t) snprintf(buf + n, size - n, g == (top < 0 ? 0 : top / 32) ? "%x" : ",%08x", w);
        }
}

/*
 * Finds tracefs (not mounting anything), records the global state and makes
 * the instance: tracing off, buffer_kb per CPU, only the traced CPUs, clock
 * mono.  -ENOENT/-EPERM etc. when tracing is not usable; the reason is in why.
 */
static int trace_setup(Trace *t, const char *suffix, const cpu_set_t *cpus, unsigned long buffer_kb, char *why,
                       size_t why_size) {
        static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
        char p[PATH_MAX + 128], mask[512], val[32];
        int r;

        t->root[0] = '\0';
        for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
                snprintf(p, sizeof(p), "%s/instances", roots[i]);
                if (access(p, W_OK) == 0) {
                        snprintf(t->root, sizeof(t->root), "%s", roots[i]);
                        break;
                }
        }
        if (!t->root[0]) {
                snprintf(why, why_size, "no tracefs with instances at %s or %s", roots[0], roots[1]);
                return -ENOENT;
        }
        snprintf(p, sizeof(p), "%s/events/kmem/%s/enable", t->root, ES_EV_DRAIN);
        if (access(p, W_OK) < 0) {
                snprintf(why, why_size, "no kmem:%s event", ES_EV_DRAIN);
                return -ENOENT;
        }
        trace_global_read(t, &t->before);
        trace_remove_stale(t);

        snprintf(t->dir, sizeof(t->dir), "%s/instances/exitstorm-%d%s", t->root, (int) getpid(), suffix);
        if (mkdir(t->dir, 0700) < 0) {
                r = -errno;
                snprintf(why, why_size, "mkdir %s: %s", t->dir, strerror(-r));
                return r;
        }
        t->made = true;
        /* A new instance records from the start: stop it first. */
        r = trace_write(t, "tracing_on", "0\n", 0);
        if (r >= 0) {
                snprintf(val, sizeof(val), "%lu\n", buffer_kb);
                r = trace_write(t, "buffer_size_kb", val, 0);
        }
        if (r >= 0) {
                cpumask_format(cpus, mask, sizeof(mask) - 1);
                strcat(mask, "\n");
                r = trace_write(t, "tracing_cpumask", mask, 0);
        }
        if (r >= 0)
                r = trace_write(t, "trace_clock", "mono\n", 0);
        if (r < 0) {
                snprintf(why, why_size, "cannot configure the trace instance %s: %s", t->dir, strerror(-r));
                return r;
        }
        return 0;
}

/* Clears the buffer, filters on the exiters' pids, enables both events (tracing stays off). */
static int trace_arm(Trace *t, const pid_t *pids, unsigned n) {
        char buf[ES_MAX_EXITERS * 12 + 2];
        size_t len = 0;
        int r = trace_write(t, "trace", "", O_TRUNC);
        if (r < 0)
                return r;
        for (unsigned i = 0; i < n; i++)
                len += (size_t) snprintf(buf + len, sizeof(buf) - len, "%d ", (int) pids[i]);
        snprintf(buf + len, sizeof(buf) - len, "\n");
        r = trace_write(t, "set_event_pid", buf, O_TRUNC);
        if (r < 0)
                return r;
        t->armed = true;
        r = trace_write(t, "events/kmem/" ES_EV_DRAIN "/enable", "1\n", 0);
        if (r < 0)
                return r;
        return trace_write(t, "events/kmem/" ES_EV_FREE "/enable", "1\n", 0);
}

static void trace_disarm(Trace *t) {
        if (!t->made)
                return;
        (void) trace_write(t, "tracing_on", "0\n", 0);
        if (!t->armed)
                return;
        (void) trace_write(t, "events/kmem/" ES_EV_DRAIN "/enable", "0\n", 0);
        (void) trace_write(t, "events/kmem/" ES_EV_FREE "/enable", "0\n", 0);
        (void) trace_write(t, "set_event_pid", "", O_TRUNC);
        t->armed = false;
}

static void trace_teardown(Trace *t) {
        if (!t->made)
                return;
        trace_disarm(t);
        for (int i = 0; i < 50; i++) {
                if (rmdir(t->dir) == 0 || errno == ENOENT) {
                        t->made = false;
                        return;
                }
                if (errno != EBUSY)
                        break;
                struct timespec ts = { 0, 20 * 1000000L };
                nanosleep(&ts, NULL);
        }
        fail("cannot remove the trace instance %s: %m", t->dir);
}

/*
 * The allocator's traffic with the buddy allocator, both ways under zone->lock: pages its CPU's pcp
 * list gave back (kmem:mm_page_pcpu_drain, free_pcppages_bulk()) and pages it was refilled with
 * (kmem:mm_page_alloc_zone_locked with percpu_refill == 1, rmqueue_bulk()), for its pid on its CPU,
 * each in an instance of its own (exitstorm-<pid>-free, -refill) so that it is counted from the ring
 * buffer's statistics (entries + overrun) without reading text.  Counted during the allocator's
 * warm-up, before the baseline window: the events are disabled again before anything is measured.
 */
static const struct {
        const char *suffix, *event, *filter;
} lock_events[2] = {
        { "-free", ES_EV_DRAIN, NULL },
        { "-refill", "mm_page_alloc_zone_locked", "percpu_refill == 1\n" },
};

static int lock_arm(Trace *t, unsigned k, pid_t pid) {
        char buf[32], rel[128];
        int r = trace_write(t, "trace", "", O_TRUNC);
        snprintf(buf, sizeof(buf), "%d\n", (int) pid);
        if (r >= 0)
                r = trace_write(t, "set_event_pid", buf, O_TRUNC);
        if (r >= 0 && lock_events[k].filter) {
                snprintf(rel, sizeof(rel), "events/kmem/%s/filter", lock_events[k].event);
                r = trace_write(t, rel, lock_events[k].filter, 0);
        }
        if (r >= 0) {
                t->armed = true;
                snprintf(rel, sizeof(rel), "events/kmem/%s/enable", lock_events[k].event);
                r = trace_write(t, rel, "1\n", 0);
        }
        return r;
}

static void lock_disarm(Trace *t, unsigned k) {
        char rel[128];
        if (!t->made || !t->armed)
                return;
        (void) trace_write(t, "tracing_on", "0\n", 0);
        snprintf(rel, sizeof(rel), "events/kmem/%s/enable", lock_events[k].event);
        (void) trace_write(t, rel, "0\n", 0);
        (void) trace_write(t, "set_event_pid", "", O_TRUNC);
        t->armed = false;
}

static uint64_t stats_field(const char *stats, const char *key);

/* Events the instance recorded on cpu: kept (entries) and overwritten (overrun). */
static uint64_t lock_count(const Trace *t, int cpu) {
        char rel[64], p[PATH_MAX + 128], stats[1024];
        snprintf(rel, sizeof(rel), "per_cpu/cpu%d/stats", cpu);
        trace_path(t, rel, p, sizeof(p));
        if (file_read(p, stats, sizeof(stats)) < 0)
                return 0;
        return stats_field(stats, "entries: ") + stats_field(stats, "overrun: ");
}

/* Compares the global tracing state with the one recorded at start. */
static bool trace_global_unchanged(const Trace *t, char *diff, size_t size) {
        TraceGlobal now;
        trace_global_read(t, &now);
        diff[0] = '\0';
#define CMP(f)                                                                                   \
        if (strcmp(t->before.f, now.f) != 0)                                                     \
                (void) !snprintf(diff + strlen(diff), size - strlen(diff), " %s: '%s' -> '%s';", #f, \
                                 t->before.f, now.f)
        CMP(tracing_on);
        CMP(buffer_size_kb);
        CMP(current_tracer);
        CMP(drain_enable);
        CMP(free_enable);
#undef CMP
        if (strcmp(t->before.set_event, now.set_event) != 0)
                snprintf(diff + strlen(diff), size - strlen(diff), " set_event changed;");
        return diff[0] == '\0';
}

typedef struct BulkStats {
        uint64_t events;             /* mm_page_pcpu_drain events of the exiters */
        uint64_t event_pages;        /* their pages */
        uint64_t free_events;        /* mm_page_free events of the exiters */
        uint64_t foreign;            /* events of other pids (should be 0) */
        uint64_t lost;               /* overrun + dropped, every traced CPU */
        uint64_t entries;            /* events in the buffers */
        uint64_t bulk;               /* bulk frees */
        uint64_t bulk_max_pages;
        uint64_t outside;            /* drain events stamped outside [t0, t1] */
        double span_p99_us, span_max_us;
        BulkFreeRecord *recs;        /* each bulk free (span, pages), as pcptuned records them */
        size_t n_recs, cap_recs;
} BulkStats;

static int bulk_add(BulkStats *b, uint64_t pages, uint64_t first_ns, uint64_t last_ns) {
        if (b->n_recs == b->cap_recs) {
                size_t cap = b->cap_recs ? b->cap_recs * 2 : 4096;
                BulkFreeRecord *n = realloc(b->recs, cap * sizeof(BulkFreeRecord));
                if (!n)
                        return -ENOMEM;
                b->recs = n;
                b->cap_recs = cap;
        }
        uint64_t span = last_ns - first_ns;
        b->recs[b->n_recs++] = (BulkFreeRecord){ .when = last_ns / 1000U,
                                                 .span_ns = span > UINT32_MAX ? UINT32_MAX : (uint32_t) span,
                                                 .pages = pages > UINT32_MAX ? UINT32_MAX : (uint32_t) pages };
        b->bulk++;
        if (pages > b->bulk_max_pages)
                b->bulk_max_pages = pages;
        return 0;
}

static bool pid_in(pid_t pid, const pid_t *pids, unsigned n) {
        for (unsigned i = 0; i < n; i++)
                if (pids[i] == pid)
                        return true;
        return false;
}

/*
 * One line of per_cpu/cpuN/trace:
 *   "      es-exiter-1234    [001] d..2.  3302.123456: mm_page_pcpu_drain: page=... pfn=0x.. order=0 migratetype=1"
 * Returns 1 for a drain event, 2 for a free event, 0 for anything else.
 */
static int trace_parse_line(const char *line, pid_t *ret_pid, uint64_t *ret_ns, unsigned *ret_order) {
        const char *ev;
        int kind;
        if (line[0] == '#')
                return 0;
        if ((ev = strstr(line, ": " ES_EV_DRAIN ": ")))
                kind = 1;
        else if ((ev = strstr(line, ": " ES_EV_FREE ": ")))
                kind = 2;
        else
                return 0;
        /* timestamp: "<sec>.<usec>" right before ev */
        const char *ts = ev;
        while (ts > line && (isdigit((unsigned char) ts[-1]) || ts[-1] == '.'))
                ts--;
        char *end;
        unsigned long long sec = strtoull(ts, &end, 10), usec = 0;
        if (*end == '.')
                usec = strtoull(end + 1, &end, 10);
        *ret_ns = sec * ES_NSEC_PER_SEC + usec * 1000ULL;
        /* pid: the digits after the last '-' before " [NNN]" */
        const char *br = strchr(line, '[');
        while (br && !isdigit((unsigned char) br[1]))
                br = strchr(br + 1, '[');
        *ret_pid = -1;
        if (br) {
                const char *q = br;
                while (q > line && q[-1] == ' ')
                        q--;
                const char *e = q;
                while (q > line && isdigit((unsigned char) q[-1]))
                        q--;
                if (q < e && q > line && q[-1] == '-')
                        *ret_pid = (pid_t) strtol(q, NULL, 10);
        }
        const char *o = strstr(ev, " order=");
        *ret_order = o ? (unsigned) strtoul(o + 7, NULL, 10) : 0;
        return kind;
}

static uint64_t stats_field(const char *stats, const char *key) {
        const char *p = stats;
        size_t klen = strlen(key);
        while (p && *p) {
                if (strncmp(p, key, klen) == 0)
                        return strtoull(p + klen, NULL, 10);
                p = strchr(p, '\n');
                if (p)
                        p++;
        }
        return 0;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

static int cmp_u32(const void *a, const void *b) {
        uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
        return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of a sorted array. */
static uint32_t pct_sorted(const uint32_t *v, size_t n, double p) {
        if (n == 0)
                return 0;
        size_t k = (size_t) (p / 100.0 * (double) n + 0.999999);
        if (k < 1)
                k = 1;
        if (k > n)
                k = n;
        return v[k - 1];
}

/* Reads and groups the events of every traced CPU (see the header comment). */
static int trace_collect(const Trace *t, const cpu_set_t *cpus, const pid_t *pids, unsigned n_pids,
                         uint64_t t0, uint64_t t1, BulkStats *b) {
        for (int c = 0; c < CPU_SETSIZE; c++) {
                if (!CPU_ISSET(c, cpus))
                        continue;
                char rel[64], p[PATH_MAX + 128], stats[1024];
                snprintf(rel, sizeof(rel), "per_cpu/cpu%d/stats", c);
                trace_path(t, rel, p, sizeof(p));
                if (file_read(p, stats, sizeof(stats)) >= 0) {
                        b->lost += stats_field(stats, "overrun: ") + stats_field(stats, "dropped events: ");
                        b->entries += stats_field(stats, "entries: ");
                }
                snprintf(rel, sizeof(rel), "per_cpu/cpu%d/trace", c);
                trace_path(t, rel, p, sizeof(p));
                FILE *f = fopen(p, "re");
                if (!f)
                        return -errno;
                char *line = NULL;
                size_t cap = 0;
                bool in = false;
                uint64_t pages = 0, first = 0, last = 0;
                int r = 0;
                while (getline(&line, &cap, f) > 0) {
                        pid_t pid;
                        uint64_t ns;
                        unsigned order;
                        int kind = trace_parse_line(line, &pid, &ns, &order);
                        if (kind == 0)
                                continue;
                        bool ours = pid_in(pid, pids, n_pids);
                        if (!ours)
                                b->foreign++;
                        if (kind == 1 && ours) {
                                b->events++;
                                b->event_pages += 1ULL << (order > 20 ? 20 : order);
                                if (ns + 1000 < t0 || ns > t1 + 1000)
                                        b->outside++;
                                if (!in) {
                                        in = true;
                                        pages = 0;
                                        first = ns;
                                }
                                pages += 1ULL << (order > 20 ? 20 : order);
                                last = ns;
                                continue;
                        }
                        if (kind == 2 && ours)
                                b->free_events++;
                        if (in) {
                                r = bulk_add(b, pages, first, last);
                                in = false;
                                if (r < 0)
                                        break;
                        }
                }
                if (in && r == 0)
                        r = bulk_add(b, pages, first, last);
                free(line);
                fclose(f);
                if (r < 0)
                        return r;
        }
        if (b->n_recs > 0) {
                uint32_t *spans = malloc(b->n_recs * sizeof(uint32_t));
                if (!spans)
                        return -ENOMEM;
                for (size_t i = 0; i < b->n_recs; i++)
                        spans[i] = b->recs[i].span_ns;
                qsort(spans, b->n_recs, sizeof(uint32_t), cmp_u32);
                b->span_p99_us = pct_sorted(spans, b->n_recs, 99) / 1000.0;
                b->span_max_us = spans[b->n_recs - 1] / 1000.0;
                free(spans);
        }
        return 0;
}

/* ---------------------------------------------------------------------------
 * Children.
 */

/* What the parent and the allocator share (MAP_SHARED, made before fork). */
typedef struct Shared {
        int go;                      /* 0 wait, 1 run, 2 stop (parent writes) */
        int ready;                   /* allocator writes 1 once prefaulted */
        uint64_t epoch_ns;           /* CLOCK_MONOTONIC origin of t_100ns */
        uint64_t cap;                /* samples the arrays hold */
        uint64_t n;                  /* samples recorded */
        uint64_t pages;              /* pages touched, also once the arrays are full */
        int grow_full;               /* grow mode: the cap was reached */
} Shared;

typedef struct Samples {
        Shared *sh;
        uint32_t *t_100ns;           /* fault start - epoch, 100 ns units */
        uint32_t *lat_ns;            /* fault duration (ES_LAT_MASK), | ES_PREEMPTED */
        size_t map_bytes;
} Samples;

static int child_setup(const cpu_set_t *cpus, int nice_value, const char *name, pid_t parent) {
        struct sigaction sa = { .sa_handler = SIG_IGN };
        sigemptyset(&sa.sa_mask);
        /* The parent decides when children die; a terminal ^C goes to the whole group. */
        (void) sigaction(SIGINT, &sa, NULL);
        (void) sigaction(SIGTERM, &sa, NULL);
        (void) sigaction(SIGHUP, &sa, NULL);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                return -1;
        (void) prctl(PR_SET_NAME, name);
        if (sched_setaffinity(0, sizeof(*cpus), cpus) < 0)
                return -1;
        if (nice_value != 0)
                (void) setpriority(PRIO_PROCESS, 0, nice_value);
        return 0;
}

static void touch_pages(volatile char *p, size_t bytes, size_t page) {
        for (size_t off = 0; off < bytes; off += page)
                p[off] = 1;
}

static __attribute__((noreturn)) void exiter_main(size_t bytes, const cpu_set_t *cpus, int nice_value,
                                                  int ready_fd, int hold_fd, pid_t parent) {
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        if (child_setup(cpus, nice_value, "es-exiter", parent) < 0)
                _exit(2);
        char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
                _exit(3);
        (void) madvise(p, bytes, MADV_NOHUGEPAGE);
        touch_pages(p, bytes, page);
        if (write(ready_fd, "r", 1) != 1)
                _exit(4);
        for (;;) {
                char c;
                ssize_t k = read(hold_fd, &c, 1);
                if (k == 0 || (k < 0 && errno != EINTR))
                        _exit(0);         /* the parent is gone */
        }
}

static long nivcsw_self(void) {
        struct rusage ru;
        return getrusage(RUSAGE_THREAD, &ru) < 0 ? -1 : ru.ru_nivcsw;
}

/*
 * recycle: mmap 2 MiB, touch, munmap (the pages go back to this CPU's pcp
 * list and, when it is above high, to the buddy allocator); grow: keep every
 * chunk until grow_max_bytes (each page comes from the buddy allocator
 * through pcp refills).  A chunk during which the process was preempted
 * (ru_nivcsw moved) gets its slowest sample flagged ES_PREEMPTED.
 */
static __attribute__((noreturn)) void allocator_main(Samples *s, const cpu_set_t *cpus, int nice_value, bool grow,
                                                     size_t grow_max_bytes, pid_t parent) {
        size_t page = (size_t) sysconf(_SC_PAGESIZE), mapped = 0;
        Shared *sh = s->sh;
        if (child_setup(cpus, nice_value, "es-allocator", parent) < 0)
                _exit(2);
        /* Map the shared sample arrays now, not on first use in a window. */
        touch_pages((volatile char *) s->t_100ns, sh->cap * sizeof(uint32_t), page);
        touch_pages((volatile char *) s->lat_ns, sh->cap * sizeof(uint32_t), page);
        __atomic_store_n(&sh->ready, 1, __ATOMIC_RELEASE);
        while (__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE) == 0) {
                struct timespec ts = { 0, 200000 };
                nanosleep(&ts, NULL);
                if (getppid() != parent)
                        _exit(0);
        }
        uint64_t epoch = sh->epoch_ns, cap = sh->cap, n = 0, pages = 0;
        while (__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE) == 1) {
                if (grow && mapped + ES_CHUNK_BYTES > grow_max_bytes) {
                        struct timespec ts = { 0, 1000000 };
                        __atomic_store_n(&sh->grow_full, 1, __ATOMIC_RELEASE);
                        nanosleep(&ts, NULL);
                        continue;
                }
                volatile char *p = mmap(NULL, ES_CHUNK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                                        -1, 0);
                if (p == MAP_FAILED)
                        _exit(3);
                (void) madvise((void *) p, ES_CHUNK_BYTES, MADV_NOHUGEPAGE);
                uint64_t worst_i = UINT64_MAX;
                uint32_t worst = 0;
                long iv = nivcsw_self();
                for (size_t off = 0; off < ES_CHUNK_BYTES; off += page) {
                        uint64_t a = now_ns();
                        p[off] = 1;
                        uint64_t b = now_ns();
                        if (n < cap) {
                                uint32_t lat = b - a > ES_LAT_MASK ? ES_LAT_MASK : (uint32_t) (b - a);
                                s->t_100ns[n] = (uint32_t) ((a - epoch) / 100U);
                                s->lat_ns[n] = lat;
                                if (lat >= worst) {
                                        worst = lat;
                                        worst_i = n;
                                }
                                n++;
                        }
                        pages++;
                }
                if (worst_i != UINT64_MAX && nivcsw_self() != iv)
                        s->lat_ns[worst_i] |= ES_PREEMPTED;
                if (grow)
                        mapped += ES_CHUNK_BYTES;
                else
                        (void) munmap((void *) p, ES_CHUNK_BYTES);
                __atomic_store_n(&sh->n, n, __ATOMIC_RELEASE);
                __atomic_store_n(&sh->pages, pages, __ATOMIC_RELEASE);
        }
        _exit(0);
}

/* ---------------------------------------------------------------------------
 * The benchmark.
 */

typedef struct Options {
        unsigned runs, exiters;
        unsigned long size_mib;
        long minimum_fraction;       /* -1: ask pcptunectl */
        unsigned goal_us;            /* --goal-latency: 0 off (or auto, until runs 1-2 set it) */
        bool goal_auto;              /* --goal-latency auto: between runs 1 and 2's span p99 */
        const char *ns_per_page;     /* --ns-per-page, passed to pcptunectl plan */
        const char *pcptunectl;
        unsigned baseline_ms, settle_ms;
        int alloc_cpu;               /* -1: first allowed */
        int nice_value;
        bool trace;
        bool refit;                  /* the goal checked after each goal run and solved again (--no-refit: not) */
        bool grow;                   /* --alloc-mode grow */
        unsigned long grow_max_mib;
        unsigned long max_samples;
} Options;

/* One fraction the goal chose: after runs 1-2 (or at start), then at each re-solve. */
typedef struct GoalChoice {
        long fraction;
        double ns_per_page;          /* what plan solved it with */
        double predicted_us;         /* plan's p99 hold at that fraction */
        unsigned after_run;          /* solved after this run (0: before run 1) */
} GoalChoice;

#define ES_MAX_CHOICES 64

typedef struct WinStats {
        uint64_t n;                  /* samples that started in the window */
        uint64_t preempted;          /* of which flagged ES_PREEMPTED */
        double p50_us, p99_us, max_us;
        double max_np_us;            /* max over the samples not flagged */
} WinStats;

typedef struct PcpSum {
        uint64_t count, high;        /* pages, summed over zones and the exiters' CPUs */
} PcpSum;

typedef enum RunSlot {
        SLOT_DEFAULT,
        SLOT_MINIMUM,
        SLOT_GOAL,
} RunSlot;

typedef struct RunResult {
        long fraction;
        RunSlot slot;                /* which of the rotation's fractions the run was */
        unsigned choice;             /* SLOT_GOAL: index of the goal's choice it used (Bench.choice) */
        bool done, interfered, grow_full;
        double exit_ms;
        WinStats win, base;
        double kpages_s;             /* allocator faults per second / 1000 in the exit window */
        double kpages_cpu_s;         /* the same per second the allocator ran on its CPU (0: not known) */
        bool lock_counted;           /* the allocator's buddy traffic was counted in its warm-up */
        uint64_t lock_pages;         /* pages it touched meanwhile */
        uint64_t buddy_free, buddy_refill; /* pages its pcp list gave to, and took from, the buddy allocator */
        double runq_ms;              /* allocator run-queue delay in the exit window */
        PcpSum pcp_t0, pcp_t1;
        bool traced;
        BulkStats bulk;
} RunResult;

typedef struct Bench {
        Options o;
        cpu_set_t alloc_cpus, exiter_cpus;
        int alloc_cpu;
        size_t page;
        long original;               /* fraction at start */
        bool original_known;
        long last_written;           /* -1: none yet */
        long minimum;
        long goal;                   /* the goal's fraction in use (--goal-latency), -1: none */
        /* The goal's choices: the first, then one per re-solve (goal_check()). */
        GoalChoice choice[ES_MAX_CHOICES];
        unsigned n_choices;
        /* This host's time per page from every traced run so far, as pcptuned fits its windows. */
        Calibration cal;
        bool cal_ok;                 /* cal has a fit */
        Trace trace;
        bool trace_ok;
        Trace lock[2];               /* the allocator's buddy traffic (lock_events) */
        bool lock_ok;
        Samples s;
        pid_t exiters[ES_MAX_EXITERS];
        unsigned n_exiters;
        pid_t allocator;
        int hold_fd;                 /* write end the exiters block on */
        uint32_t *scratch;           /* sorting */
        bool state_written;          /* ES_STATE_PATH is ours */
        bool minimum_checked;
        long pcp_shown[ES_MAX_CHOICES + 2];  /* fractions whose allocator-CPU pcp limits were printed */
        unsigned n_pcp_shown;
} Bench;

static void kill_and_reap(pid_t *pid) {
        if (*pid <= 0)
                return;
        (void) kill(*pid, SIGKILL);
        while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
                ;
        *pid = 0;
}

static void children_cleanup(Bench *b) {
        for (unsigned i = 0; i < b->n_exiters; i++)
                kill_and_reap(&b->exiters[i]);
        b->n_exiters = 0;
        if (b->s.sh)
                __atomic_store_n(&b->s.sh->go, 2, __ATOMIC_RELEASE);
        kill_and_reap(&b->allocator);
        if (b->hold_fd >= 0) {
                close(b->hold_fd);
                b->hold_fd = -1;
        }
}

/* /proc/PID/schedstat: ns spent on the CPU, and runnable on a run queue, not running (0 0 unreadable). */
static void schedstat_read(pid_t pid, uint64_t *ret_run, uint64_t *ret_delay) {
        char p[64], buf[128];
        unsigned long long run = 0, delay = 0;
        snprintf(p, sizeof(p), "/proc/%d/schedstat", (int) pid);
        if (file_read(p, buf, sizeof(buf)) < 0 || sscanf(buf, "%llu %llu", &run, &delay) != 2)
                run = delay = 0;
        *ret_run = run;
        *ret_delay = delay;
}

/* pcp count and high of every zone, summed over the CPUs in set (/proc/zoneinfo pagesets). */
static void zoneinfo_pcp_sum(const cpu_set_t *set, PcpSum *ret) {
        Zoneinfo zi = { 0 };
        memset(ret, 0, sizeof(*ret));
        if (zoneinfo_read(NULL, &zi) < 0)
                return;
        for (size_t i = 0; i < zi.n_zones; i++)
                for (size_t c = 0; c < zi.zones[i].n_cpus; c++) {
                        const PcpCpu *p = &zi.zones[i].cpus[c];
                        if (p->cpu >= 0 && p->cpu < CPU_SETSIZE && CPU_ISSET(p->cpu, set)) {
                                ret->count += p->count > 0 ? (uint64_t) p->count : 0;
                                ret->high += p->high > 0 ? (uint64_t) p->high : 0;
                        }
                }
        zoneinfo_done(&zi);
}

/*
 * Once per fraction: the allocator's CPU's pcp limit per populated zone (high_max where zoneinfo
 * prints it, else high).  Its 2 MiB chunk is 512 pages: munmap puts them on that CPU's list and the
 * next chunk's faults take them back, so it recycles without zone->lock once the list may hold a
 * chunk on top of what a refill (>= batch) leaves: high >= 512 + batch in the zone it allocates from.
 */
static void alloc_pcp_show(Bench *b, long fraction) {
        Zoneinfo zi = { 0 };
        char buf[512];
        size_t k = 0;
        for (unsigned i = 0; i < b->n_pcp_shown; i++)
                if (b->pcp_shown[i] == fraction)
                        return;
        if (b->n_pcp_shown >= ES_MAX_CHOICES + 2 || zoneinfo_read(NULL, &zi) < 0)
                return;
        b->pcp_shown[b->n_pcp_shown++] = fraction;
        buf[0] = '\0';
        for (size_t i = 0; i < zi.n_zones; i++)
                for (size_t c = 0; c < zi.zones[i].n_cpus && k + 64 < sizeof(buf); c++) {
                        const PcpCpu *p = &zi.zones[i].cpus[c];
                        if (p->cpu != b->alloc_cpu)
                                continue;
                        k += (size_t) snprintf(buf + k, sizeof(buf) - k, "%s%s %" PRId64 " (batch %" PRId64 ")",
                                               k ? ", " : "", zi.zones[i].name, p->high_max >= 0 ? p->high_max : p->high,
                                               p->batch);
                }
        bool limits = zi.has_high_min_max;
        zoneinfo_done(&zi);
        say("exitstorm: fraction %ld: pcp %s of the allocator's CPU %d: %s; its chunk is %zu pages\n", fraction,
            limits ? "high_max" : "high", b->alloc_cpu, k ? buf : "none", ES_CHUNK_BYTES / b->page);
}

/* The samples starting in [from, to) (ns, CLOCK_MONOTONIC). */
static void window_stats(Bench *b, uint64_t n, uint64_t from, uint64_t to, WinStats *w) {
        uint64_t epoch = b->s.sh->epoch_ns, k = 0;
        uint64_t lo = from > epoch ? (from - epoch) / 100U : 0, hi = to > epoch ? (to - epoch) / 100U : 0;
        uint32_t max_np = 0;
        memset(w, 0, sizeof(*w));
        for (uint64_t i = 0; i < n; i++) {
                if (b->s.t_100ns[i] < lo || b->s.t_100ns[i] >= hi)
                        continue;
                uint32_t v = b->s.lat_ns[i];
                if (v & ES_PREEMPTED)
                        w->preempted++;
                else if (v > max_np)
                        max_np = v;
                b->scratch[k++] = v & ES_LAT_MASK;
        }
        qsort(b->scratch, k, sizeof(uint32_t), cmp_u32);
        w->n = k;
        w->p50_us = pct_sorted(b->scratch, k, 50) / 1000.0;
        w->p99_us = pct_sorted(b->scratch, k, 99) / 1000.0;
        w->max_us = k ? b->scratch[k - 1] / 1000.0 : 0;
        w->max_np_us = max_np / 1000.0;
}

/* Blocks until n bytes arrived on fd (poll, so that a signal is seen). */
static int wait_ready(int fd, unsigned n, unsigned timeout_ms) {
        uint64_t deadline = now_ns() + (uint64_t) timeout_ms * 1000000ULL;
        while (n > 0) {
                if (es_interrupted)
                        return -EINTR;
                if (now_ns() > deadline)
                        return -ETIMEDOUT;
                struct pollfd pfd = { .fd = fd, .events = POLLIN };
                int k = poll(&pfd, 1, 100);
                if (k < 0 && errno != EINTR)
                        return -errno;
                if (k <= 0)
                        continue;
                char buf[ES_MAX_EXITERS];
                ssize_t got = read(fd, buf, n < sizeof(buf) ? n : sizeof(buf));
                if (got <= 0)
                        return -EPIPE;    /* every exiter died */
                n -= (unsigned) got;
        }
        return 0;
}

static int run_one(Bench *b, unsigned idx, long fraction, RunResult *res) {
        int ready[2] = { -1, -1 }, hold[2] = { -1, -1 };
        pid_t self = getpid(), reaped[ES_MAX_EXITERS];
        unsigned n_reaped = 0;
        Shared *sh = b->s.sh;
        uint64_t base_from, t0, t1, delay0, delay1, run0, run1;
        long now_value;
        pid_t pid;
        int r;

        memset(res, 0, sizeof(*res));
        res->fraction = fraction;

        /* 1. the knob */
        r = fraction_read(&now_value);
        if (r < 0)
                return fail("cannot read %s: %s", FRACTION_PATH, strerror(-r));
        if (b->last_written >= 0 && now_value != b->last_written)
                say("exitstorm: warning: %s is %ld, %ld was written: someone else changes it\n", FRACTION_PATH,
                    now_value, b->last_written);
        r = fraction_write(fraction);
        if (r < 0)
                return fail("cannot write %ld to %s: %s", fraction, FRACTION_PATH, strerror(-r));
        b->last_written = fraction;
        stat_refresh();
        if ((r = sleep_ms(b->o.settle_ms)) < 0)
                return r;
        if (fraction == b->minimum && !b->minimum_checked) {
                char bad[128] = "";
                r = zoneinfo_check_minimum(bad, sizeof(bad));
                if (r == -EDOM)
                        say("exitstorm: warning: fraction %ld does not give high = 4 x batch: %s\n", fraction, bad);
                else if (r > 0)
                        say("exitstorm: fraction %ld: high_min = high_max = 4 x batch on all %d populated zones "
                            "(/proc/zoneinfo)\n", fraction, r);
                b->minimum_checked = true;
        }
        alloc_pcp_show(b, fraction);

        /* 2. the exiters */
        if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(hold, O_CLOEXEC) < 0) {
                r = -errno;
                goto out;
        }
        b->hold_fd = hold[1];
        hold[1] = -1;
        for (unsigned i = 0; i < b->o.exiters; i++) {
                pid = fork();
                if (pid < 0) {
                        r = fail("fork: %m");
                        goto out;
                }
                if (pid == 0) {
                        close(b->hold_fd);
                        close(ready[0]);
                        exiter_main((size_t) b->o.size_mib << 20, &b->exiter_cpus, b->o.nice_value, ready[1],
                                    hold[0], self);
                }
                b->exiters[b->n_exiters++] = pid;
        }
        close(ready[1]);
        ready[1] = -1;
        r = wait_ready(ready[0], b->o.exiters, ES_READY_TIMEOUT_MS);
        if (r < 0) {
                if (r != -EINTR)
                        fail("the exiters did not get ready: %s", strerror(-r));
                goto out;
        }
        stat_refresh();
        if ((r = sleep_ms(b->o.settle_ms)) < 0)
                goto out;

        /* 3. tracing armed (still off), then the allocator */
        if (b->trace_ok) {
                r = trace_arm(&b->trace, b->exiters, b->n_exiters);
                if (r < 0) {
                        fail("cannot arm the trace instance: %s", strerror(-r));
                        goto out;
                }
        }
        __atomic_store_n(&sh->go, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&sh->ready, 0, __ATOMIC_RELEASE);
        sh->n = sh->pages = 0;
        sh->grow_full = 0;
        sh->epoch_ns = now_ns();
        pid = fork();
        if (pid < 0) {
                r = fail("fork: %m");
                goto out;
        }
        if (pid == 0) {
                close(b->hold_fd);
                close(ready[0]);
                close(hold[0]);
                allocator_main(&b->s, &b->alloc_cpus, b->o.nice_value, b->o.grow,
                               (size_t) b->o.grow_max_mib << 20, self);
        }
        b->allocator = pid;
        for (unsigned waited = 0; !__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE); waited++) {
                if ((r = sleep_ms(1)) < 0)
                        goto out;
                if (waited > 60000) {
                        r = fail("the allocator did not get ready");
                        goto out;
                }
        }
        bool counting = b->lock_ok && lock_arm(&b->lock[0], 0, b->allocator) >= 0 &&
                        lock_arm(&b->lock[1], 1, b->allocator) >= 0;
        if (b->lock_ok && !counting)
                say("exitstorm: warning: run %u: cannot arm the allocator's trace instances\n", idx);
        __atomic_store_n(&sh->go, 1, __ATOMIC_RELEASE);
        uint64_t lock_p0 = 0;
        if (counting) {
                (void) trace_write(&b->lock[0], "tracing_on", "1\n", 0);
                (void) trace_write(&b->lock[1], "tracing_on", "1\n", 0);
                lock_p0 = __atomic_load_n(&sh->pages, __ATOMIC_ACQUIRE);
        }
        if ((r = sleep_ms(ES_WARMUP_MS)) < 0)
                goto out;
        if (counting) {
                (void) trace_write(&b->lock[0], "tracing_on", "0\n", 0);
                (void) trace_write(&b->lock[1], "tracing_on", "0\n", 0);
                res->lock_pages = __atomic_load_n(&sh->pages, __ATOMIC_ACQUIRE) - lock_p0;
                lock_disarm(&b->lock[0], 0);
                lock_disarm(&b->lock[1], 1);
                res->buddy_free = lock_count(&b->lock[0], b->alloc_cpu);
                res->buddy_refill = lock_count(&b->lock[1], b->alloc_cpu);
                res->lock_counted = res->lock_pages > 0;
        }
        base_from = now_ns();
        if ((r = sleep_ms(b->o.baseline_ms)) < 0)
                goto out;

        /* 4. the storm */
        zoneinfo_pcp_sum(&b->exiter_cpus, &res->pcp_t0);
        schedstat_read(b->allocator, &run0, &delay0);
        if (fraction_read(&now_value) < 0 || now_value != fraction)
                res->interfered = true;
        if (b->trace_ok && (r = trace_write(&b->trace, "tracing_on", "1\n", 0)) < 0) {
                fail("cannot start tracing: %s", strerror(-r));
                goto out;
        }
        n_reaped = b->n_exiters;
        memcpy(reaped, b->exiters, sizeof(reaped[0]) * n_reaped);
        t0 = now_ns();
        for (unsigned i = 0; i < b->n_exiters; i++)
                (void) kill(b->exiters[i], SIGKILL);
        for (unsigned i = 0; i < b->n_exiters; i++) {
                while (waitpid(b->exiters[i], NULL, 0) < 0 && errno == EINTR)
                        ;
                b->exiters[i] = 0;
        }
        t1 = now_ns();
        b->n_exiters = 0;
        if (b->trace_ok)
                (void) trace_write(&b->trace, "tracing_on", "0\n", 0);
        schedstat_read(b->allocator, &run1, &delay1);
        zoneinfo_pcp_sum(&b->exiter_cpus, &res->pcp_t1);

        /* 5. results */
        __atomic_store_n(&sh->go, 2, __ATOMIC_RELEASE);
        while (waitpid(b->allocator, NULL, 0) < 0 && errno == EINTR)
                ;
        b->allocator = 0;
        close(b->hold_fd);
        b->hold_fd = -1;
        r = fraction_read(&now_value);
        res->interfered = res->interfered || r < 0 || now_value != fraction;
        if (res->interfered)
                say("exitstorm: warning: run %u: the fraction changed under the run (%ld at the end, not %ld)\n", idx,
                    r < 0 ? -1L : now_value, fraction);

        uint64_t n = __atomic_load_n(&sh->n, __ATOMIC_ACQUIRE);
        if (n >= sh->cap)
                say("exitstorm: warning: run %u: the sample array is full (%" PRIu64 "): raise --max-samples\n",
                    idx, n);
        res->grow_full = __atomic_load_n(&sh->grow_full, __ATOMIC_ACQUIRE) != 0;
        if (res->grow_full)
                say("exitstorm: warning: run %u: the allocator reached --grow-max-mib and stopped allocating\n",
                    idx);
        res->exit_ms = (double) (t1 - t0) / 1e6;
        window_stats(b, n, t0, t1, &res->win);
        window_stats(b, n, base_from, t0, &res->base);
        res->kpages_s = (double) res->win.n / ((double) (t1 - t0) / 1e9) / 1000.0;
        res->runq_ms = delay1 >= delay0 ? (double) (delay1 - delay0) / 1e6 : 0;
        /* Faults per second on the CPU: what the other tasks on a shared host take from the allocator
         * (its run-queue wait) is left out; a spin on zone->lock is on the CPU and stays in. */
        res->kpages_cpu_s = run1 > run0 ? (double) res->win.n / ((double) (run1 - run0) / 1e9) / 1000.0 : 0;

        if (b->trace_ok) {
                trace_disarm(&b->trace);
                r = trace_collect(&b->trace, &b->exiter_cpus, reaped, n_reaped, t0, t1, &res->bulk);
                if (r < 0) {
                        fail("cannot read the trace: %s", strerror(-r));
                        goto out;
                }
                res->traced = true;
                uint64_t parsed = res->bulk.events + res->bulk.free_events + res->bulk.foreign;
                if (res->bulk.foreign || res->bulk.outside || parsed != res->bulk.entries)
                        say("exitstorm: note: run %u: %" PRIu64 " events of other pids, %" PRIu64
                            " drain events stamped outside the window, %" PRIu64 " events parsed of %" PRIu64
                            " in the buffer\n", idx, res->bulk.foreign, res->bulk.outside, parsed,
                            res->bulk.entries);
        }
        res->done = true;
        r = 0;
out:
        if (b->trace_ok)
                trace_disarm(&b->trace);
        lock_disarm(&b->lock[0], 0);
        lock_disarm(&b->lock[1], 1);
        children_cleanup(b);
        for (int i = 0; i < 2; i++) {
                if (ready[i] >= 0)
                        close(ready[i]);
                if (hold[i] >= 0)
                        close(hold[i]);
        }
        return r;
}

#define ROW_FMT "%-3s %8s %8s %6s %6s %8s %8s %5s %6s %6s %7s %6s %7s %13s %13s %6s %7s %5s %6s %6s %7s %4s\n"

static void print_header(void) {
        say(ROW_FMT, "run", "fraction", "exit_ms", "p50_us", "p99_us", "max_us", "maxnp_us", "prmpt", "b_p50",
            "b_p99", "b_max", "kpg/s", "runq_ms", "pcp_t0", "pcp_t1", "bulk", "pg/bulk", "pgmax", "sp99us",
            "spmxus", "events", "lost");
}

static void print_row(unsigned idx, const RunResult *r) {
        char c[22][40];
        int k = 0;
#define COL(...) snprintf(c[k++], sizeof(c[0]), __VA_ARGS__)
        COL("%u", idx);
        COL("%ld", r->fraction);
        COL("%.1f", r->exit_ms);
        COL("%.2f", r->win.p50_us);
        COL("%.2f", r->win.p99_us);
        COL("%.1f", r->win.max_us);
        COL("%.1f", r->win.max_np_us);
        COL("%" PRIu64, r->win.preempted);
        COL("%.2f", r->base.p50_us);
        COL("%.2f", r->base.p99_us);
        COL("%.1f", r->base.max_us);
        if (r->kpages_s < 100) /* a TCG guest: a few kpages/s */
                COL("%.1f", r->kpages_s);
        else
                COL("%.0f", r->kpages_s);
        COL("%.1f", r->runq_ms);
        COL("%" PRIu64 "/%" PRIu64, r->pcp_t0.count, r->pcp_t0.high);
        COL("%" PRIu64 "/%" PRIu64, r->pcp_t1.count, r->pcp_t1.high);
        if (r->traced) {
                COL("%" PRIu64, r->bulk.bulk);
                COL("%.1f", r->bulk.bulk ? (double) r->bulk.event_pages / (double) r->bulk.bulk : 0.0);
                COL("%" PRIu64, r->bulk.bulk_max_pages);
                COL("%.0f", r->bulk.span_p99_us);
                COL("%.0f", r->bulk.span_max_us);
                COL("%" PRIu64, r->bulk.events);
                COL("%" PRIu64, r->bulk.lost);
        } else
                while (k < 22)
                        COL("-");
#undef COL
        say(ROW_FMT, c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11], c[12], c[13], c[14],
            c[15], c[16], c[17], c[18], c[19], c[20], c[21]);
        if (r->interfered)
                say("    (run %u left out of the summary: the fraction was changed by someone else)\n", idx);
}

typedef struct Summary {
        unsigned n;
        double exit_ms, p50, p99, max, max_np, base_p50, base_p99, kpages_s, kpages_cpu_s, runq_ms, span99, spanmx;
        uint64_t bulk, pages, bulk_max, events, lost, traced, preempted;
        uint64_t lock_runs, lock_pages, buddy_free, buddy_refill;
} Summary;

static void summary_add(Summary *s, const RunResult *r) {
        s->n++;
        s->exit_ms += r->exit_ms;
        s->p50 += r->win.p50_us;
        s->p99 += r->win.p99_us;
        s->max += r->win.max_us;
        s->max_np += r->win.max_np_us;
        s->preempted += r->win.preempted;
        s->base_p50 += r->base.p50_us;
        s->base_p99 += r->base.p99_us;
        s->kpages_s += r->kpages_s;
        s->kpages_cpu_s += r->kpages_cpu_s;
        if (r->lock_counted) {
                s->lock_runs++;
                s->lock_pages += r->lock_pages;
                s->buddy_free += r->buddy_free;
                s->buddy_refill += r->buddy_refill;
        }
        s->runq_ms += r->runq_ms;
        if (r->traced) {
                s->traced++;
                s->bulk += r->bulk.bulk;
                s->pages += r->bulk.event_pages;
                s->events += r->bulk.events;
                s->lost += r->bulk.lost;
                s->span99 += r->bulk.span_p99_us;
                s->spanmx += r->bulk.span_max_us;
                if (r->bulk.bulk_max_pages > s->bulk_max)
                        s->bulk_max = r->bulk.bulk_max_pages;
        }
}

/* min..max of a run's value over the valid runs of one fraction. */
static void run_spread(const RunResult *res, unsigned n, long fraction, double (*get)(const RunResult *), double *lo,
                       double *hi) {
        *lo = 1e300;
        *hi = -1e300;
        for (unsigned i = 0; i < n; i++)
                if (!res[i].interfered && res[i].fraction == fraction) {
                        double v = get(&res[i]);
                        *lo = v < *lo ? v : *lo;
                        *hi = v > *hi ? v : *hi;
                }
        if (*lo > *hi)
                *lo = *hi = 0;
}

static double get_kpages(const RunResult *r) {
        return r->kpages_s;
}

static double get_kpages_cpu(const RunResult *r) {
        return r->kpages_cpu_s;
}

static double get_span99(const RunResult *r) {
        return r->traced ? r->bulk.span_p99_us : 0;
}

static double get_spanmax(const RunResult *r) {
        return r->traced ? r->bulk.span_max_us : 0;
}

static double get_exit_ms(const RunResult *r) {
        return r->exit_ms;
}

/* The summary of one fraction; res[0..n) gives the spread over its runs (min..max). */
static void summary_print(const char *label, long fraction, const Summary *s, const RunResult *res, unsigned n_res) {
        if (s->n == 0) {
                say("  %-7s (fraction %ld): no valid run\n", label, fraction);
                return;
        }
        double n = s->n, nt = s->traced ? (double) s->traced : 1;
        say("  %-7s (fraction %ld, %u runs): exit %.1f ms; allocator in the exit window p50 %.2f us, p99 %.2f us, "
            "max %.1f us (%.1f us without the %" PRIu64 " preempted chunks' worst); baseline p50 %.2f us, p99 %.2f "
            "us; %.1f kpages/s (%.1f per second on its CPU); run-queue wait %.1f ms\n",
            label, fraction, s->n, s->exit_ms / n, s->p50 / n, s->p99 / n, s->max / n, s->max_np / n, s->preempted,
            s->base_p50 / n, s->base_p99 / n, s->kpages_s / n, s->kpages_cpu_s / n, s->runq_ms / n);
        if (s->lock_runs) {
                double chunks = (double) s->lock_pages / (double) (ES_CHUNK_BYTES / (size_t) sysconf(_SC_PAGESIZE));
                say("  %-7s the allocator's zone->lock traffic in its %u ms warm-ups: %.0f pages freed to and %.0f "
                    "refilled from the buddy allocator per 2 MiB chunk (%.0f chunks, %" PRIu64 " runs)\n",
                    "", ES_WARMUP_MS, (double) s->buddy_free / chunks, (double) s->buddy_refill / chunks, chunks,
                    s->lock_runs);
        }
        if (s->traced)
                say("  %-7s bulk frees %.0f per run, %.1f pages each (max %" PRIu64 "), span p99 %.0f us, max %.0f us; "
                    "%.0f drain events per run; %" PRIu64 " lost\n",
                    "", (double) s->bulk / nt, s->bulk ? (double) s->pages / (double) s->bulk : 0.0, s->bulk_max,
                    s->span99 / nt, s->spanmx / nt, (double) s->events / nt, s->lost);
        double lo[5], hi[5];
        run_spread(res, n_res, fraction, get_kpages, &lo[0], &hi[0]);
        run_spread(res, n_res, fraction, get_kpages_cpu, &lo[4], &hi[4]);
        run_spread(res, n_res, fraction, get_exit_ms, &lo[1], &hi[1]);
        run_spread(res, n_res, fraction, get_span99, &lo[2], &hi[2]);
        run_spread(res, n_res, fraction, get_spanmax, &lo[3], &hi[3]);
        say("  %-7s spread over runs (min..max): allocator %.1f..%.1f kpages/s (%.1f..%.1f on its CPU), exit %.1f..%.1f "
            "ms", "", lo[0], hi[0], lo[4], hi[4], lo[1], hi[1]);
        if (s->traced)
                say(", span p99 %.0f..%.0f us, span max %.0f..%.0f us", lo[2], hi[2], lo[3], hi[3]);
        say("\n");
}

/*
 * The original value outlives a SIGKILL of this program in ES_STATE_PATH:
 * a later run finds it, restores that value and takes it as the original.
 * -EBUSY when another exitstorm is running.
 */
static int state_claim(Bench *b) {
        char buf[64];
        long pid, orig;
        if (file_read(ES_STATE_PATH, buf, sizeof(buf)) >= 0 && sscanf(buf, "%ld %ld", &pid, &orig) == 2) {
                if (pid != (long) getpid() && (kill((pid_t) pid, 0) == 0 || errno != ESRCH)) {
                        fail("another exitstorm (pid %ld, %s) is running", pid, ES_STATE_PATH);
                        return -EBUSY;
                }
                if (orig != b->original) {
                        int r = fraction_write(orig);
                        if (r < 0)
                                return fail("cannot restore %s to %ld left by killed run %ld: %s", FRACTION_PATH, orig,
                                            pid, strerror(-r));
                        say("exitstorm: a killed run (pid %ld) had left %s at %ld: restored to its original %ld\n",
                            pid, FRACTION_PATH, b->original, orig);
                        b->original = orig;
                }
        }
        int fd = open(ES_STATE_PATH, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return fail("cannot write %s: %m", ES_STATE_PATH);
        int n = snprintf(buf, sizeof(buf), "%d %ld\n", (int) getpid(), b->original);
        int r = write(fd, buf, (size_t) n) == n ? 0 : -EIO;
        if (close(fd) < 0 || r < 0) {
                unlink(ES_STATE_PATH);
                return fail("cannot write %s", ES_STATE_PATH);
        }
        b->state_written = true;
        return 0;
}

static int restore_fraction(Bench *b) {
        if (!b->original_known || b->last_written < 0)
                return 0;
        long v = -1;
        int r = fraction_write(b->original);
        if (r < 0 || fraction_read(&v) < 0 || v != b->original) {
                fail("cannot restore %s to %ld (%s): write it by hand", FRACTION_PATH, b->original,
                     r < 0 ? strerror(-r) : "read back differs");
                return -EIO;
        }
        stat_refresh();
        say("exitstorm: %s restored to %ld (read back: %ld)\n", FRACTION_PATH, b->original, v);
        b->last_written = -1;
        return 0;
}

/* ---------------------------------------------------------------------------
 * Is a difference of throughput beyond the run-to-run spread?
 */

/*
 * The regularized incomplete beta function I_x(a, b) (a, b > 0, 0 <= x <= 1), from its continued
 * fraction (terms d_2m = m (b - m) x / ((a + 2m - 1)(a + 2m)), d_2m+1 = -(a + m)(a + b + m) x /
 * ((a + 2m)(a + 2m + 1))) evaluated by the modified Lentz method, on the side of x where it converges
 * fast (I_x(a, b) = 1 - I_1-x(b, a) otherwise).  For the tail of Student's t.
 */
static double beta_cf(double a, double b, double x) {
        const double tiny = 1e-300;
        double c = 1, d = 1 - (a + b) * x / (a + 1), h;
        d = 1 / (fabs(d) < tiny ? tiny : d);
        h = d;
        for (int m = 1; m <= 500; m++) {
                double m2 = 2.0 * m, term[2] = { m * (b - m) * x / ((a + m2 - 1) * (a + m2)),
                                                 -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1)) };
                double step = 1;
                for (int k = 0; k < 2; k++) {
                        d = 1 + term[k] * d;
                        d = 1 / (fabs(d) < tiny ? tiny : d);
                        c = 1 + term[k] / c;
                        c = fabs(c) < tiny ? tiny : c;
                        step = d * c;
                        h *= step;
                }
                if (fabs(step - 1) < 1e-14)
                        break;
        }
        return h;
}

static double beta_reg(double a, double b, double x) {
        if (x <= 0)
                return 0;
        if (x >= 1)
                return 1;
        double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
        return x < (a + 1) / (a + b + 2) ? front * beta_cf(a, b, x) / a : 1 - front * beta_cf(b, a, 1 - x) / b;
}

/* Two-sided p-value of Student's t with df degrees of freedom: I_df/(df+t^2)(df/2, 1/2). */
static double t_two_sided_p(double t, double df) {
        if (!isfinite(t))
                return 0;
        return beta_reg(df / 2, 0.5, df / (df + t * t));
}

/* splitmix64: the bootstrap's resampling, seeded so that a run's figures can be recomputed. */
static uint64_t es_rand(uint64_t *state) {
        uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

#define ES_BOOTSTRAP 10000

/* a - b: the difference of the means, Welch's t on it and a percentile bootstrap interval. */
typedef struct MeanDiff {
        unsigned na, nb;
        double mean_a, mean_b, diff;
        double lo, hi;               /* bootstrap 95% interval of the difference (runs resampled within each set) */
        double t, df, p;             /* Welch: t, Welch-Satterthwaite degrees of freedom, two-sided p */
        bool ok;                     /* at least 2 runs in each set */
} MeanDiff;

static void mean_var(const double *v, unsigned n, double *mean, double *var) {
        double m = 0, q = 0;
        for (unsigned i = 0; i < n; i++)
                m += v[i];
        m /= n;
        for (unsigned i = 0; i < n; i++)
                q += (v[i] - m) * (v[i] - m);
        *mean = m;
        *var = n > 1 ? q / (n - 1) : 0;
}

static void mean_diff(const double *a, unsigned na, const double *b, unsigned nb, MeanDiff *d) {
        double va, vb;
        memset(d, 0, sizeof(*d));
        d->na = na;
        d->nb = nb;
        if (na < 2 || nb < 2)
                return;
        mean_var(a, na, &d->mean_a, &va);
        mean_var(b, nb, &d->mean_b, &vb);
        d->diff = d->mean_a - d->mean_b;
        double qa = va / na, qb = vb / nb, se = sqrt(qa + qb);
        if (se > 0) {
                d->t = d->diff / se;
                d->df = (qa + qb) * (qa + qb) / (qa * qa / (na - 1) + qb * qb / (nb - 1));
                d->p = t_two_sided_p(d->t, d->df);
        } else {
                d->t = d->diff == 0 ? 0 : d->diff > 0 ? INFINITY : -INFINITY;
                d->df = na + nb - 2;
                d->p = d->diff == 0 ? 1 : 0;
        }
        double *boot = malloc(ES_BOOTSTRAP * sizeof(double));
        if (!boot)
                return;
        uint64_t seed = 17;
        for (unsigned k = 0; k < ES_BOOTSTRAP; k++) {
                double sa = 0, sb = 0;
                for (unsigned i = 0; i < na; i++)
                        sa += a[es_rand(&seed) % na];
                for (unsigned i = 0; i < nb; i++)
                        sb += b[es_rand(&seed) % nb];
                boot[k] = sa / na - sb / nb;
        }
        qsort(boot, ES_BOOTSTRAP, sizeof(double), cmp_double);
        d->lo = boot[ES_BOOTSTRAP * 25 / 1000];
        d->hi = boot[ES_BOOTSTRAP * 975 / 1000 - 1];
        free(boot);
        d->ok = true;
}

/* get() of the valid runs that match (slot, or fraction when fraction >= 0); returns how many. */
static unsigned run_values(const RunResult *res, unsigned n, int slot, long fraction, double (*get)(const RunResult *),
                           double *out) {
        unsigned k = 0;
        for (unsigned i = 0; i < n; i++)
                if (!res[i].interfered && (slot < 0 || (int) res[i].slot == slot) &&
                    (fraction < 0 || res[i].fraction == fraction))
                        out[k++] = get(&res[i]);
        return k;
}

/*
 * "throughput A - B: ..." for the allocator's kpages/s of two sets of runs: means, spreads, the
 * difference with its bootstrap 95% interval and Welch's t, and whether it is beyond the spread (every
 * run of A above, or below, every run of B) and different at the 5% level (p < 0.05 and an interval
 * without 0).  Returns the comparison (ok false with fewer than 2 runs in a set).
 */
static MeanDiff throughput_compare(const char *what, const double *a, unsigned na, const double *b, unsigned nb) {
        MeanDiff d;
        double alo = 1e300, ahi = -1e300, blo = 1e300, bhi = -1e300;
        mean_diff(a, na, b, nb, &d);
        for (unsigned i = 0; i < na; i++) {
                alo = a[i] < alo ? a[i] : alo;
                ahi = a[i] > ahi ? a[i] : ahi;
        }
        for (unsigned i = 0; i < nb; i++) {
                blo = b[i] < blo ? b[i] : blo;
                bhi = b[i] > bhi ? b[i] : bhi;
        }
        if (!d.ok) {
                say("throughput %s: too few runs to compare (%u and %u)\n", what, na, nb);
                return d;
        }
        bool differs = d.p < 0.05 && (d.lo > 0 || d.hi < 0);
        say("throughput %s: %.1f [%.1f..%.1f] (%u runs) - %.1f [%.1f..%.1f] (%u runs) = %+.1f kpages/s, bootstrap "
            "95%% interval [%+.1f..%+.1f], Welch t = %.2f (df %.1f), p = %.3f: %s; %s\n",
            what, d.mean_a, alo, ahi, na, d.mean_b, blo, bhi, nb, d.diff, d.lo, d.hi, d.t, d.df, d.p,
            alo > bhi ? "beyond the run-to-run spread (every run higher)"
                      : ahi < blo ? "beyond the run-to-run spread (every run lower)" : "within the run-to-run spread",
            differs ? (d.diff > 0 ? "higher at the 5% level" : "lower at the 5% level")
                    : "no difference at the 5% level");
        return d;
}

/*
 * --self-test: the statistics against Student's t at its 5% critical values (two-sided), and the
 * difference of two sets of runs worked out by hand.  Needs no root; exit status 0 or 1.
 */
static int self_test(void) {
        static const struct {
                double t, df, p;
        } tv[] = {
                { 12.7062, 1, 0.05 }, { 2.776445, 4, 0.05 }, { 2.228139, 10, 0.05 }, { 1.959964, 1e6, 0.05 },
                { 1, 1, 0.5 },        { 0, 3, 1 },          { -2.776445, 4, 0.05 },
        };
        unsigned bad = 0, n = 0;
        for (size_t i = 0; i < sizeof(tv) / sizeof(tv[0]); i++, n++) {
                double p = t_two_sided_p(tv[i].t, tv[i].df);
                if (fabs(p - tv[i].p) > 1e-4) {
                        say("exitstorm: self-test: t %g, df %g: p %.6f, expected %.6f\n", tv[i].t, tv[i].df, p, tv[i].p);
                        bad++;
                }
        }
        /* 10..13 against 5..8: difference 5, variances 5/3, se sqrt(5/6), t 5.477, df 6 (p 0.0015). */
        static const double a[] = { 10, 11, 12, 13 }, b[] = { 5, 6, 7, 8 };
        MeanDiff d;
        mean_diff(a, 4, b, 4, &d);
        n++;
        if (!d.ok || fabs(d.diff - 5) > 1e-9 || fabs(d.t - 5 / sqrt(5.0 / 6)) > 1e-6 || fabs(d.df - 6) > 1e-6 ||
            !(d.p > 0.001 && d.p < 0.002) || !(d.lo > 2 && d.lo < 5 && d.hi > 5 && d.hi < 8)) {
                say("exitstorm: self-test: difference %.3f [%.3f..%.3f], t %.3f, df %.3f, p %.5f\n", d.diff, d.lo, d.hi,
                    d.t, d.df, d.p);
                bad++;
        }
        /* The same runs twice: no difference, an interval around 0. */
        mean_diff(a, 4, a, 4, &d);
        n++;
        if (!d.ok || d.diff != 0 || fabs(d.p - 1) > 1e-9 || !(d.lo < 0 && d.hi > 0)) {
                say("exitstorm: self-test: same runs: difference %.3f [%.3f..%.3f], p %.5f\n", d.diff, d.lo, d.hi, d.p);
                bad++;
        }
        /* One run is not a spread. */
        mean_diff(a, 1, b, 4, &d);
        n++;
        bad += d.ok;
        say("exitstorm: self-test: %u of %u checks passed\n", n - bad, n);
        return bad ? 1 : 0;
}

/* "3, 4, 9" */
static void run_list(const RunResult *res, unsigned n, int slot, long fraction, char *buf, size_t size) {
        size_t k = 0;
        buf[0] = '\0';
        for (unsigned i = 0; i < n && k + 12 < size; i++)
                if ((int) res[i].slot == slot && res[i].fraction == fraction)
                        k += (size_t) snprintf(buf + k, size - k, "%s%u%s", k ? ", " : "", i + 1,
                                               res[i].interfered ? " (left out)" : "");
        if (!buf[0])
                snprintf(buf, size, "none");
}

typedef struct GoalVerdict {
        unsigned runs, met;          /* valid traced goal runs; of which at or under the target */
        double span_all_us;          /* mean span p99 over them */
        double span_last_us;         /* over the runs of the last choice */
        bool held;                   /* the last choice's mean span p99 at or under the target */
        MeanDiff vs_min;             /* throughput: every goal run against every minimum run */
        MeanDiff vs_min_cpu;         /* the same per second on the allocator's CPU */
} GoalVerdict;

/*
 * The goal's targets: its measured span p99 at or under the target (each choice's runs, the last
 * choice's being what the loop holds), and the co-located throughput above the minimum's by more than
 * the run-to-run spread, with the statistic.
 */
static void goal_compare(const Bench *b, const RunResult *res, unsigned n, GoalVerdict *v) {
        char runs[512], line[2048];
        size_t k = 0;
        memset(v, 0, sizeof(*v));
        line[0] = '\0';
        for (unsigned c = 0; c < b->n_choices; c++) {
                const GoalChoice *ch = &b->choice[c];
                double sum = 0, lo = 1e300, hi = -1e300;
                unsigned m = 0;
                bool seen = false;
                for (unsigned j = 0; j < c; j++)
                        seen = seen || b->choice[j].fraction == ch->fraction;
                if (seen)
                        continue;
                for (unsigned i = 0; i < n; i++)
                        if (res[i].slot == SLOT_GOAL && res[i].fraction == ch->fraction && !res[i].interfered &&
                            res[i].traced) {
                                double sp = res[i].bulk.span_p99_us;
                                sum += sp;
                                lo = sp < lo ? sp : lo;
                                hi = sp > hi ? sp : hi;
                                m++;
                        }
                run_list(res, n, SLOT_GOAL, ch->fraction, runs, sizeof(runs));
                if (m == 0) {
                        k += (size_t) snprintf(line + k, sizeof(line) - k, "%sfraction %ld (runs: %s): not measured",
                                               k ? "; " : "", ch->fraction, runs);
                        continue;
                }
                k += (size_t) snprintf(line + k, sizeof(line) - k,
                                       "%sfraction %ld (runs %s): span p99 %.0f us [%.0f..%.0f] %s the target",
                                       k ? "; " : "", ch->fraction, runs, sum / m, lo, hi,
                                       sum / m <= b->o.goal_us ? "meets" : "misses");
                if (k >= sizeof(line))
                        k = sizeof(line) - 1;
        }
        for (unsigned i = 0; i < n; i++)
                if (res[i].slot == SLOT_GOAL && !res[i].interfered && res[i].traced) {
                        v->runs++;
                        v->met += res[i].bulk.span_p99_us <= b->o.goal_us;
                        v->span_all_us += res[i].bulk.span_p99_us;
                }
        if (v->runs == 0) {
                say("goal bulk_free_p99 %u us: no valid traced goal run\n", b->o.goal_us);
                return;
        }
        v->span_all_us /= v->runs;
        double sum = 0;
        unsigned m = 0;
        for (unsigned i = 0; i < n; i++)
                if (res[i].slot == SLOT_GOAL && !res[i].interfered && res[i].traced && res[i].fraction == b->goal) {
                        sum += res[i].bulk.span_p99_us;
                        m++;
                }
        v->span_last_us = m ? sum / m : -1;
        v->held = m > 0 && v->span_last_us <= b->o.goal_us;
        say("goal bulk_free_p99 %u us -> %s; %u of %u goal runs at or under the target; %s\n", b->o.goal_us, line,
            v->met, v->runs,
            b->n_choices > 1 ? (v->held ? "the last choice meets it" : "the last choice misses it")
                             : (v->held ? "the goal meets it" : "the goal misses it"));

        double *ga = calloc(n ? n : 1, sizeof(double)), *mi = calloc(n ? n : 1, sizeof(double)),
               *de = calloc(n ? n : 1, sizeof(double));
        /* kpages/s, then per second on the allocator's CPU (the host's other tasks left out). */
        for (int cpu = 0; ga && mi && de && cpu < 2; cpu++) {
                double (*get)(const RunResult *) = cpu ? get_kpages_cpu : get_kpages;
                unsigned ng = 0;
                for (unsigned i = 0; i < n; i++)
                        if (res[i].slot == SLOT_GOAL && !res[i].interfered && res[i].fraction != b->minimum &&
                            res[i].fraction != 0)
                                ga[ng++] = get(&res[i]);
                unsigned nm = run_values(res, n, SLOT_MINIMUM, -1, get, mi);
                unsigned nd = run_values(res, n, SLOT_DEFAULT, -1, get, de);
                MeanDiff d = throughput_compare(cpu ? "on its CPU, goal - minimum" : "goal - minimum", ga, ng, mi, nm);
                if (cpu)
                        v->vs_min_cpu = d;
                else
                        v->vs_min = d;
                if (b->n_choices > 1) {
                        unsigned nl = run_values(res, n, SLOT_GOAL, b->goal, get, ga);
                        (void) throughput_compare(cpu ? "on its CPU, last choice - minimum" : "last choice - minimum", ga,
                                                  nl, mi, nm);
                }
                (void) throughput_compare(cpu ? "on its CPU, default - minimum" : "default - minimum", de, nd, mi, nm);
        }
        free(ga);
        free(mi);
        free(de);
}

static void usage(void) {
        puts("usage: exitstorm [--runs N] [--exiters K] [--size MIB] [--minimum-fraction F] [--pcptunectl PATH]\n"
             "                 [--alloc-mode recycle|grow] [--grow-max-mib MIB] [--baseline-ms MS] [--settle-ms MS]\n"
             "                 [--alloc-cpu CPU] [--nice N] [--no-trace] [--max-samples N]\n"
             "                 [--goal-latency US|auto [--ns-per-page N|auto] [--no-refit]]\n"
             "       exitstorm --self-test\n"
             "Root only.  See the comment at the top of tests/bench/exitstorm.c.");
}

static int parse_args(Options *o, int argc, char **argv) {
        enum { OPT_RUNS = 0x100, OPT_EXITERS, OPT_SIZE, OPT_MIN, OPT_CTL, OPT_BASE, OPT_SETTLE, OPT_CPU, OPT_NICE,
               OPT_NOTRACE, OPT_SAMPLES, OPT_MODE, OPT_GROWMAX, OPT_GOAL, OPT_NSPP, OPT_NOREFIT, OPT_SELFTEST };
        static const struct option opts[] = {
                { "runs", required_argument, NULL, OPT_RUNS },
                { "exiters", required_argument, NULL, OPT_EXITERS },
                { "size", required_argument, NULL, OPT_SIZE },
                { "minimum-fraction", required_argument, NULL, OPT_MIN },
                { "pcptunectl", required_argument, NULL, OPT_CTL },
                { "baseline-ms", required_argument, NULL, OPT_BASE },
                { "settle-ms", required_argument, NULL, OPT_SETTLE },
                { "alloc-cpu", required_argument, NULL, OPT_CPU },
                { "alloc-mode", required_argument, NULL, OPT_MODE },
                { "grow-max-mib", required_argument, NULL, OPT_GROWMAX },
                { "nice", required_argument, NULL, OPT_NICE },
                { "no-trace", no_argument, NULL, OPT_NOTRACE },
                { "max-samples", required_argument, NULL, OPT_SAMPLES },
                { "goal-latency", required_argument, NULL, OPT_GOAL },
                { "ns-per-page", required_argument, NULL, OPT_NSPP },
                { "no-refit", no_argument, NULL, OPT_NOREFIT },
                { "self-test", no_argument, NULL, OPT_SELFTEST },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        long v;
        int c;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) >= 0) {
                switch (c) {
                case OPT_RUNS:
                        if (parse_long(optarg, 1, 1000, &v) < 0)
                                return fail("--runs: expected 1..1000, found \"%s\"", optarg);
                        o->runs = (unsigned) v;
                        break;
                case OPT_EXITERS:
                        if (parse_long(optarg, 1, ES_MAX_EXITERS, &v) < 0)
                                return fail("--exiters: expected 1..%u, found \"%s\"", ES_MAX_EXITERS, optarg);
                        o->exiters = (unsigned) v;
                        break;
                case OPT_SIZE:
                        if (parse_long(optarg, 1, 1L << 20, &v) < 0)
                                return fail("--size: expected MiB, found \"%s\"", optarg);
                        o->size_mib = (unsigned long) v;
                        break;
                case OPT_MIN:
                        if (parse_long(optarg, 8, INT_MAX, &v) < 0)
                                return fail("--minimum-fraction: expected >= 8, found \"%s\"", optarg);
                        o->minimum_fraction = v;
                        break;
                case OPT_CTL:
                        o->pcptunectl = optarg;
                        break;
                case OPT_BASE:
                        if (parse_long(optarg, 10, 60000, &v) < 0)
                                return fail("--baseline-ms: expected 10..60000, found \"%s\"", optarg);
                        o->baseline_ms = (unsigned) v;
                        break;
                case OPT_SETTLE:
                        if (parse_long(optarg, 0, 60000, &v) < 0)
                                return fail("--settle-ms: expected 0..60000, found \"%s\"", optarg);
                        o->settle_ms = (unsigned) v;
                        break;
                case OPT_CPU:
                        if (parse_long(optarg, 0, CPU_SETSIZE - 1, &v) < 0)
                                return fail("--alloc-cpu: expected a CPU number, found \"%s\"", optarg);
                        o->alloc_cpu = (int) v;
                        break;
                case OPT_MODE:
                        if (strcmp(optarg, "recycle") == 0)
                                o->grow = false;
                        else if (strcmp(optarg, "grow") == 0)
                                o->grow = true;
                        else
                                return fail("--alloc-mode: expected recycle or grow, found \"%s\"", optarg);
                        break;
                case OPT_GROWMAX:
                        if (parse_long(optarg, 2, 1L << 22, &v) < 0)
                                return fail("--grow-max-mib: expected MiB, found \"%s\"", optarg);
                        o->grow_max_mib = (unsigned long) v;
                        break;
                case OPT_NICE:
                        if (parse_long(optarg, -20, 19, &v) < 0)
                                return fail("--nice: expected -20..19, found \"%s\"", optarg);
                        o->nice_value = (int) v;
                        break;
                case OPT_NOTRACE:
                        o->trace = false;
                        break;
                case OPT_SAMPLES:
                        if (parse_long(optarg, 1000, 1L << 30, &v) < 0)
                                return fail("--max-samples: expected 1000..2^30, found \"%s\"", optarg);
                        o->max_samples = (unsigned long) v;
                        break;
                case OPT_GOAL:
                        if (strcmp(optarg, "auto") == 0) {
                                o->goal_auto = true;
                                o->goal_us = 0;
                                break;
                        }
                        if (parse_long(optarg, 1, 1000000, &v) < 0)
                                return fail("--goal-latency: expected microseconds, 1..1000000, or auto, found "
                                            "\"%s\"", optarg);
                        o->goal_us = (unsigned) v;
                        o->goal_auto = false;
                        break;
                case OPT_NSPP:
                        o->ns_per_page = optarg; /* checked by pcptunectl */
                        break;
                case OPT_NOREFIT:
                        o->refit = false;
                        break;
                case OPT_SELFTEST:
                        exit(self_test());
                case 'h':
                        usage();
                        exit(0);
                default:
                        usage();
                        return -EINVAL;
                }
        }
        if (optind < argc)
                return fail("unexpected argument \"%s\"", argv[optind]);
        if (o->goal_auto && !o->trace)
                return fail("--goal-latency auto needs the traced span p99 of runs 1 and 2: drop --no-trace");
        if (o->goal_auto && o->runs < 3)
                return fail("--goal-latency auto: the goal's runs start at run 3: give --runs 3 or more");
        return 0;
}

/* pcptunectl two directories above this program (build/gcc/tests/bench/exitstorm), else ./pcptunectl. */
static void default_pcptunectl(char *buf, size_t size) {
        char self[PATH_MAX];
        ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (k > 0) {
                self[k] = '\0';
                char *slash = strrchr(self, '/');
                if (slash) {
                        *slash = '\0';
                        int k2 = snprintf(buf, size, "%s/../../pcptunectl", self);
                        if (k2 > 0 && (size_t) k2 < size && access(buf, X_OK) == 0)
                                return;
                }
        }
        snprintf(buf, size, "./pcptunectl");
}

static void bench_pcptunectl(const Bench *b, char *buf, size_t size) {
        if (b->o.pcptunectl)
                snprintf(buf, size, "%s", b->o.pcptunectl);
        else
                default_pcptunectl(buf, size);
}

/*
 * The goal's fraction for ns_per_page (a number as text; NULL: the host's calibration.json) from
 * pcptunectl plan --latency, appended to b->choice and put in use.  -errno (message printed).
 */
static int goal_solve(Bench *b, const char *ns_per_page, unsigned after_run) {
        char ctl[PATH_MAX];
        long f;
        double predicted_us, ns;
        if (b->n_choices >= ES_MAX_CHOICES)
                return fail("more than %d goal choices", ES_MAX_CHOICES);
        bench_pcptunectl(b, ctl, sizeof(ctl));
        int r = goal_fraction_query(ctl, b->o.goal_us, ns_per_page, &f, &predicted_us, &ns);
        if (r < 0)
                return fail("cannot get the goal's fraction from %s plan --json --latency %uus%s%s: %s%s", ctl,
                            b->o.goal_us, ns_per_page ? " --ns-per-page " : "", ns_per_page ? ns_per_page : "",
                            strerror(-r), ns_per_page ? "" : " (no calibration? give --ns-per-page)");
        GoalChoice *c = &b->choice[b->n_choices++];
        *c = (GoalChoice){ .fraction = f, .ns_per_page = ns, .predicted_us = predicted_us, .after_run = after_run };
        b->goal = f;
        return 0;
}

/* "433.2 ns per page (fit 338.5 +- 2.7, RMS residual 36.6 us, 1250 bulk frees of 63-2016 pages)" */
static void calibration_text(const Calibration *c, char *buf, size_t size) {
        snprintf(buf, size,
                 "%.1f ns per page (p99 of hold / pages per run, moving average; least-squares fit %.1f +- %.1f ns per "
                 "page, RMS residual %.1f us; %.0f bulk frees of %" PRIu64 "-%" PRIu64 " pages)",
                 calibration_p99_ns_per_page(c), c->ns_per_page, c->ns_per_page_stderr, c->rms_residual_ns / 1000.0,
                 c->n, c->pages_min, c->pages_max);
}

/*
 * Every traced run goes into the calibration, as each of pcptuned's tracing windows does
 * (calibration_add(): the fit of hold against pages, and the p99 of hold / pages of the run's bulk
 * frees folded into a moving average).  Runs with too few bulk frees leave the fit as it was.
 */
static void calibrate_run(Bench *b, const RunResult *res) {
        if (!res->traced || res->bulk.n_recs == 0)
                return;
        if (calibration_add(&b->cal, res->bulk.recs, res->bulk.n_recs) >= 0)
                b->cal_ok = true;
}

/*
 * After runs 1 and 2 (at 0 and at the minimum): with --goal-latency auto, the target is the
 * geometric mean of their span p99s (rounded to 1 us), a target between the two measured p99s;
 * with --ns-per-page auto, this host's time per page as pcptuned calibrates it from the same
 * bulk frees (calibration.c, calibration_p99_ns_per_page()).  Then the goal's fraction from
 * pcptunectl plan --latency.  -EINVAL (message printed) when the runs do not give them.
 */
static int goal_after_two_runs(Bench *b, const RunResult *res) {
        char nspp[32], cal[512];
        if (b->o.goal_auto) {
                if (!res[0].traced || !res[1].traced || res[0].bulk.span_p99_us <= 0 || res[1].bulk.span_p99_us <= 0)
                        return fail("--goal-latency auto: runs 1 and 2 traced no bulk free");
                double t = sqrt(res[0].bulk.span_p99_us * res[1].bulk.span_p99_us);
                b->o.goal_us = t < 1 ? 1 : t > 1000000 ? 1000000 : (unsigned) (t + 0.5);
                say("exitstorm: runs 1-2: span p99 %.0f us at fraction %ld, %.0f us at %ld: goal bulk_free_p99 %u us "
                    "(their geometric mean)\n", res[0].bulk.span_p99_us, res[0].fraction, res[1].bulk.span_p99_us,
                    res[1].fraction, b->o.goal_us);
        }
        const char *arg = b->o.ns_per_page;
        if (arg && strcmp(arg, "auto") == 0) {
                if (!b->cal_ok)
                        return fail("--ns-per-page auto: runs 1 and 2 traced too few bulk frees for a calibration "
                                    "(%.0f; at least %d in a run)", b->cal.n, CALIBRATION_MIN_SAMPLES);
                snprintf(nspp, sizeof(nspp), "%.1f", calibration_p99_ns_per_page(&b->cal));
                calibration_text(&b->cal, cal, sizeof(cal));
                say("exitstorm: runs 1-2: %s ns per page traced: %s\n", nspp, cal);
                arg = nspp;
        }
        int r = goal_solve(b, arg, 2);
        if (r < 0)
                return r;
        say("exitstorm: goal bulk_free_p99 %u us: fraction %ld (plan --latency %uus%s%s; predicted %.0f us)\n",
            b->o.goal_us, b->goal, b->o.goal_us, arg ? " --ns-per-page " : "",
            arg ? arg : " with this host's calibration", b->choice[b->n_choices - 1].predicted_us);
        return 0;
}

/*
 * What pcptuned does once a goal is applied (bulk_sampler_goal_feedback()), after each goal run at
 * the fraction in use: the run's span p99 against the target and the prediction, and when they
 * disagree, the time per page to solve again with as the daemon takes it (calibration_goal_feedback():
 * above the target the rate the fraction in use ran at, or the refit from every traced run so far if
 * higher; far below the prediction the refit, only if more than 10% lower).  Its ten-minute cooldown is what gives pcptuned a measure at the fraction
 * in use before it changes it again; here that measure is the goal run just done (hundreds of bulk
 * frees, where a 1 s window of the daemon holds about 200), so the cooldown counts as passed.  On
 * GOAL_RESOLVE the goal is solved again and the following goal runs use the new fraction.
 */
static int goal_check(Bench *b, const RunResult *res, unsigned idx) {
        GoalChoice *c = &b->choice[b->n_choices - 1];
        char nspp[32], cal[512];
        if (!b->o.refit || res->slot != SLOT_GOAL || !res->traced || res->interfered || res->fraction != b->goal ||
            !b->cal_ok || !(c->ns_per_page > 0))
                return 0;
        double used = c->ns_per_page, refit = calibration_p99_ns_per_page(&b->cal), next;
        double measured = res->bulk.span_p99_us;
        GoalFeedback fb = calibration_goal_feedback(measured * 1000.0, res->bulk.bulk, b->o.goal_us * 1000.0,
                                                    c->predicted_us * 1000.0, refit, used, GOAL_COOLDOWN_USEC, &next);
        static const char *const what[_GOAL_FEEDBACK_MAX] = {
                [GOAL_AGREES] = "agrees",
                [GOAL_TOO_FEW] = "too few bulk frees to judge",
                [GOAL_KEEP] = ("disagrees; keep (above the target: no higher time per page to solve with; below the "
                               "prediction: the calibration has not fallen by more than 10%)"),
                [GOAL_RESOLVE] = "disagrees: solve again",
        };
        say("exitstorm: goal check after run %u (fraction %ld): span p99 %.0f us over %" PRIu64 " bulk frees, target "
            "%u us, predicted %.0f us; calibration %.1f ns per page, solved with %.1f (%+.1f%%): %s\n",
            idx, res->fraction, measured, res->bulk.bulk, b->o.goal_us, c->predicted_us, refit, used,
            (refit - used) / used * 100.0, fb >= 0 && fb < _GOAL_FEEDBACK_MAX ? what[fb] : "invalid");
        if (fb != GOAL_RESOLVE)
                return 0;
        long old = b->goal;
        snprintf(nspp, sizeof(nspp), "%.1f", next);
        int r = goal_solve(b, nspp, idx);
        if (r < 0)
                return r;
        calibration_text(&b->cal, cal, sizeof(cal));
        say("exitstorm: goal re-solved after run %u: fraction %ld -> %ld, %.1f -> %s ns per page (plan --latency "
            "%uus --ns-per-page %s; predicted %.0f us); the following goal runs use it; calibration %s\n",
            idx, old, b->goal, used, nspp, b->o.goal_us, nspp, b->choice[b->n_choices - 1].predicted_us, cal);
        return 0;
}

/* 0, 77 (cannot run here) or -errno. */
static int setup(Bench *b) {
        cpu_set_t allowed;
        char why[512] = "";
        int r;

        if (geteuid() != 0) {
                fail("must run as root (it writes %s and uses tracefs)", FRACTION_PATH);
                return 77;
        }
        if (access(FRACTION_PATH, W_OK) < 0) {
                fail("%s: %m (a kernel before 5.14?)", FRACTION_PATH);
                return 77;
        }
        b->page = (size_t) sysconf(_SC_PAGESIZE);
        if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0)
                return fail("sched_getaffinity: %m");
        if (CPU_COUNT(&allowed) < 2) {
                fail("needs at least 2 allowed CPUs (the allocator apart from the exiters), found %d",
                     CPU_COUNT(&allowed));
                return 77;
        }
        b->alloc_cpu = b->o.alloc_cpu;
        for (int c = 0; c < CPU_SETSIZE && b->alloc_cpu < 0; c++)
                if (CPU_ISSET(c, &allowed))
                        b->alloc_cpu = c;
        if (!CPU_ISSET(b->alloc_cpu, &allowed))
                return fail("--alloc-cpu %d is not an allowed CPU", b->alloc_cpu);
        CPU_ZERO(&b->alloc_cpus);
        CPU_SET(b->alloc_cpu, &b->alloc_cpus);
        b->exiter_cpus = allowed;
        CPU_CLR(b->alloc_cpu, &b->exiter_cpus);

        r = fraction_read(&b->original);
        if (r < 0)
                return fail("cannot read %s: %s", FRACTION_PATH, strerror(-r));
        b->original_known = true;
        r = state_claim(b);
        if (r < 0)
                return r;
        say("exitstorm: original %s = %ld (restored at the end; if this program is SIGKILLed, write it back by "
            "hand, or run exitstorm again: it is kept in %s)\n", FRACTION_PATH, b->original, ES_STATE_PATH);

        if (b->o.minimum_fraction > 0) {
                b->minimum = b->o.minimum_fraction;
                say("exitstorm: minimum fraction %ld (--minimum-fraction)\n", b->minimum);
        } else {
                char ctl[PATH_MAX];
                if (b->o.pcptunectl)
                        snprintf(ctl, sizeof(ctl), "%s", b->o.pcptunectl);
                else
                        default_pcptunectl(ctl, sizeof(ctl));
                r = minimum_fraction_query(ctl, &b->minimum);
                if (r < 0)
                        return fail("cannot get minimum_fraction from %s plan --json: %s (give --pcptunectl or "
                                    "--minimum-fraction)", ctl, strerror(-r));
                say("exitstorm: minimum fraction %ld (%s plan --json --no-owner-check --policy-dir <empty dir>)\n",
                    b->minimum, ctl);
        }

        b->goal = -1;
        if (b->o.goal_auto)
                say("exitstorm: goal bulk_free_p99: the target (between the span p99 of runs 1 and 2) and its "
                    "fraction come after the first two runs (--goal-latency auto)\n");
        else if (b->o.goal_us > 0 && b->o.ns_per_page && strcmp(b->o.ns_per_page, "auto") == 0)
                say("exitstorm: goal bulk_free_p99 %u us: the fraction comes after the first two runs (--ns-per-page "
                    "auto)\n", b->o.goal_us);
        else if (b->o.goal_us > 0) {
                char ctl[PATH_MAX];
                bench_pcptunectl(b, ctl, sizeof(ctl));
                r = goal_solve(b, b->o.ns_per_page, 0);
                if (r < 0)
                        return r;
                say("exitstorm: goal bulk_free_p99 %u us: fraction %ld (%s plan --latency %uus%s%s; %.1f ns per page, "
                    "predicted %.0f us)\n", b->o.goal_us, b->goal, ctl, b->o.goal_us,
                    b->o.ns_per_page ? " --ns-per-page " : "", b->o.ns_per_page ? b->o.ns_per_page : " with this host's calibration",
                    b->choice[0].ns_per_page, b->choice[0].predicted_us);
        }

        /* The samples: cap x (4 + 4) bytes, shared with the allocator. */
        size_t cap = b->o.max_samples;
        size_t hdr = (sizeof(Shared) + b->page - 1) / b->page * b->page;
        b->s.map_bytes = hdr + 2 * cap * sizeof(uint32_t);
        void *m = mmap(NULL, b->s.map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
                return fail("mmap %zu bytes: %m", b->s.map_bytes);
        memset(m, 0, b->s.map_bytes); /* allocate the shmem pages once, before any window */
        b->s.sh = m;
        b->s.sh->cap = cap;
        b->s.t_100ns = (uint32_t *) ((char *) m + hdr);
        b->s.lat_ns = b->s.t_100ns + cap;
        b->scratch = malloc(cap * sizeof(uint32_t));
        if (!b->scratch)
                return fail("out of memory");
        memset(b->scratch, 0, cap * sizeof(uint32_t));

        if (b->o.trace) {
                /* ~2 events per page of the exiters (drain + free), ~32 bytes each in the ring buffer, x 1.5 */
                unsigned long pages = (unsigned long) b->o.exiters * (b->o.size_mib << 20) / b->page;
                unsigned long per_cpu_kb = pages * 2UL * 48UL / 1024UL + 4096UL;
                r = trace_setup(&b->trace, "", &b->exiter_cpus, per_cpu_kb, why, sizeof(why));
                if (r < 0)
                        say("exitstorm: tracing off: %s\n", why);
                else {
                        b->trace_ok = true;
                        say("exitstorm: tracing kmem:%s + kmem:%s in %s (%lu KiB per CPU, the exiters' CPUs and "
                            "pids only)\n", ES_EV_DRAIN, ES_EV_FREE, b->trace.dir, per_cpu_kb);
                        r = 0;
                        for (unsigned k = 0; k < 2 && r >= 0; k++)
                                r = trace_setup(&b->lock[k], lock_events[k].suffix, &b->alloc_cpus, 8192, why,
                                                sizeof(why));
                        b->lock_ok = r >= 0;
                        if (b->lock_ok)
                                say("exitstorm: counting the allocator's pages to and from the buddy allocator in its "
                                    "%u ms warm-up: kmem:%s and kmem:%s (percpu_refill) in %s and %s\n", ES_WARMUP_MS,
                                    lock_events[0].event, lock_events[1].event, b->lock[0].dir, b->lock[1].dir);
                        else
                                say("exitstorm: the allocator's buddy traffic is not counted: %s\n", why);
                }
        } else
                say("exitstorm: tracing off (--no-trace)\n");

        /* The parent waits on the exiters' CPUs, away from the allocator. */
        (void) sched_setaffinity(0, sizeof(b->exiter_cpus), &b->exiter_cpus);
        return 0;
}

/* The first three fields of /proc/loadavg ("?" when unreadable): how busy the shared host was. */
static void loadavg(char *buf, size_t size) {
        char t[128];
        double a[3];
        if (file_read("/proc/loadavg", t, sizeof(t)) < 0 || sscanf(t, "%lf %lf %lf", &a[0], &a[1], &a[2]) != 3)
                snprintf(buf, size, "?");
        else
                snprintf(buf, size, "%.2f %.2f %.2f", a[0], a[1], a[2]);
}

/* Everything back as found; -EIO when something could not be. */
static int teardown(Bench *b) {
        int r = 0;
        children_cleanup(b);
        for (unsigned k = 0; k < 2; k++)
                if (b->lock[k].made) {
                        trace_teardown(&b->lock[k]);
                        if (b->lock[k].made)
                                r = -EIO;
                }
        if (b->trace.root[0]) {
                char diff[1024];
                trace_teardown(&b->trace);
                if (b->trace.made)
                        r = -EIO;
                else if (!trace_global_unchanged(&b->trace, diff, sizeof(diff))) {
                        fail("the global tracing state differs from the start:%s", diff);
                        r = -EIO;
                } else
                        say("exitstorm: trace instance removed; global tracing state as at start (tracing_on %s, "
                            "buffer_size_kb %s, current_tracer %s, %s enable %s, %s enable %s)\n",
                            b->trace.before.tracing_on, b->trace.before.buffer_size_kb,
                            b->trace.before.current_tracer, ES_EV_DRAIN, b->trace.before.drain_enable, ES_EV_FREE,
                            b->trace.before.free_enable);
        }
        if (restore_fraction(b) < 0)
                r = -EIO;
        else if (b->state_written) {
                (void) unlink(ES_STATE_PATH);
                b->state_written = false;
        }
        if (b->s.sh)
                munmap(b->s.sh, b->s.map_bytes);
        b->s.sh = NULL;
        free(b->scratch);
        b->scratch = NULL;
        return r;
}

int main(int argc, char **argv) {
        Bench b = {
                .o = { .runs = 6, .exiters = 4, .size_mib = 512, .minimum_fraction = -1, .baseline_ms = 500,
                       .settle_ms = 500, .alloc_cpu = -1, .nice_value = -20, .trace = true, .refit = true,
                       .grow_max_mib = 4096,
                       .max_samples = 8UL << 20 },
                .last_written = -1,
                .hold_fd = -1,
        };
        int r;

        struct sigaction sa = { .sa_handler = es_on_signal };
        sigemptyset(&sa.sa_mask);
        (void) sigaction(SIGINT, &sa, NULL);
        (void) sigaction(SIGTERM, &sa, NULL);
        (void) sigaction(SIGHUP, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);

        if (parse_args(&b.o, argc, argv) < 0)
                return 2;
        r = setup(&b);
        if (r != 0 || es_interrupted) {
                (void) teardown(&b);
                return es_interrupted ? 130 : r == 77 ? 77 : 1;
        }

        struct utsname un;
        if (uname(&un) < 0)
                snprintf(un.release, sizeof(un.release), "?");
        char mask[512], load[64];
        cpumask_format(&b.exiter_cpus, mask, sizeof(mask));
        loadavg(load, sizeof(load));
        say("exitstorm: kernel %s, %ld online CPUs, %ld MiB RAM; %u exiters x %lu MiB (MADV_NOHUGEPAGE) on CPU mask "
            "%s; allocator (%s) on CPU %d; nice %d; baseline %u ms, settle %u ms; %u runs; load average %s\n",
            un.release, sysconf(_SC_NPROCESSORS_ONLN), (long) ((uint64_t) sysconf(_SC_PHYS_PAGES) * b.page >> 20),
            b.o.exiters, b.o.size_mib, mask, b.o.grow ? "grow: 2 MiB chunks kept" : "recycle: 2 MiB chunks munmapped",
            b.alloc_cpu, b.o.nice_value, b.o.baseline_ms, b.o.settle_ms, b.o.runs, load);
        say("columns: exit_ms SIGKILL to the last waitpid; p50/p99/max_us the allocator's faults (one per 4 KiB page) "
            "that started in the exit window; maxnp_us the max without the worst fault of each chunk in which the "
            "allocator was preempted (prmpt such chunks); b_* the baseline window (%u ms before the kill); kpg/s "
            "allocator faults per second / 1000 in the exit window; runq_ms its run-queue wait in the exit window; "
            "pcp_t0/t1 count/high in pages of the exiters' CPUs, all zones, at kill and after the last reap; bulk "
            "bulk frees of the exiters, pg/bulk pages per bulk free (mean), pgmax (max), sp99us/spmxus their span "
            "(p99/max); events mm_page_pcpu_drain events; lost ring-buffer overruns + drops\n", b.o.baseline_ms);
        print_header();

        RunResult *res = calloc(b.o.runs, sizeof(RunResult));
        if (!res) {
                (void) teardown(&b);
                return 1;
        }
        unsigned done = 0;
        bool failed = false;
        for (unsigned i = 0; i < b.o.runs && !es_interrupted; i++) {
                if (i == 2 && (b.o.goal_us > 0 || b.o.goal_auto) && b.goal < 0 && goal_after_two_runs(&b, res) < 0) {
                        failed = true;
                        break;
                }
                /* 0, min, min, 0, 0, min, min, 0, ...; with a goal 0, min, goal, goal, min, 0, ... */
                RunSlot slot = (i % 4 == 0 || i % 4 == 3) ? SLOT_DEFAULT : SLOT_MINIMUM;
                if (b.goal >= 0) {
                        static const RunSlot order[6] = { SLOT_DEFAULT, SLOT_MINIMUM, SLOT_GOAL,
                                                          SLOT_GOAL,    SLOT_MINIMUM, SLOT_DEFAULT };
                        slot = order[i % 6];
                }
                long fraction = slot == SLOT_DEFAULT ? 0 : slot == SLOT_MINIMUM ? b.minimum : b.goal;
                r = run_one(&b, i + 1, fraction, &res[i]);
                res[i].slot = slot;
                res[i].choice = b.n_choices ? b.n_choices - 1 : 0;
                if (r < 0 || !res[i].done) {
                        if (!es_interrupted)
                                failed = true;
                        break;
                }
                print_row(i + 1, &res[i]);
                done++;
                calibrate_run(&b, &res[i]);
                if (slot == SLOT_GOAL && goal_check(&b, &res[i], i + 1) < 0) {
                        failed = true;
                        break;
                }
        }

        /* Per distinct goal fraction (in the order chosen): a goal equal to 0 or the minimum shares that
         * fraction's runs. */
        Summary s0 = {}, sm = {}, sg_all = {}, sg[ES_MAX_CHOICES] = {};
        long gf[ES_MAX_CHOICES];
        unsigned ngf = 0;
        for (unsigned c = 0; c < b.n_choices; c++) {
                long f = b.choice[c].fraction;
                bool seen = f == 0 || f == b.minimum;
                for (unsigned j = 0; j < ngf; j++)
                        seen = seen || gf[j] == f;
                if (!seen)
                        gf[ngf++] = f;
        }
        for (unsigned i = 0; i < done; i++) {
                if (res[i].interfered)
                        continue;
                unsigned j = 0;
                while (res[i].slot == SLOT_GOAL && j < ngf && gf[j] != res[i].fraction)
                        j++;
                if (res[i].slot == SLOT_GOAL && j < ngf) {
                        summary_add(&sg[j], &res[i]);
                        summary_add(&sg_all, &res[i]);
                } else
                        summary_add(res[i].fraction == 0 ? &s0 : &sm, &res[i]);
        }
        if (done > 0) {
                say("summary (means over the runs of each fraction):\n");
                summary_print("default", 0, &s0, res, done);
                summary_print("minimum", b.minimum, &sm, res, done);
                for (unsigned j = 0; j < ngf; j++)
                        summary_print("goal", gf[j], &sg[j], res, done);
        }
        GoalVerdict gv = {};
        if (b.n_choices > 0 && done > 0) {
                /* Which runs used which of the goal's choices. */
                for (unsigned c = 0; c < b.n_choices; c++) {
                        char runs[512] = "";
                        size_t k = 0;
                        for (unsigned i = 0; i < done && k + 12 < sizeof(runs); i++)
                                if (res[i].slot == SLOT_GOAL && res[i].choice == c)
                                        k += (size_t) snprintf(runs + k, sizeof(runs) - k, "%s%u", k ? ", " : "", i + 1);
                        say("goal choice %u: fraction %ld, solved %s%u with %.1f ns per page (predicted %.0f us): runs %s\n",
                            c + 1, b.choice[c].fraction, b.choice[c].after_run ? "after run " : "before run ",
                            b.choice[c].after_run ? b.choice[c].after_run : 1, b.choice[c].ns_per_page,
                            b.choice[c].predicted_us, k ? runs : "none");
                }
                if (b.cal_ok) {
                        char cal[512];
                        calibration_text(&b.cal, cal, sizeof(cal));
                        say("calibration over the %u runs: %s\n", done, cal);
                }
                goal_compare(&b, res, done, &gv);
        }
        char ppb0[32] = "-", ppbm[32] = "-", span_all[32] = "-", span_last[32] = "-", fracs[512] = "";
        if (s0.traced && s0.bulk)
                snprintf(ppb0, sizeof(ppb0), "%.1f", (double) s0.pages / (double) s0.bulk);
        if (sm.traced && sm.bulk)
                snprintf(ppbm, sizeof(ppbm), "%.1f", (double) sm.pages / (double) sm.bulk);
        if (gv.runs) {
                snprintf(span_all, sizeof(span_all), "%.0f", gv.span_all_us);
                if (gv.span_last_us >= 0)
                        snprintf(span_last, sizeof(span_last), "%.0f", gv.span_last_us);
        }
        for (unsigned j = 0, k = 0; j < ngf && k + 16 < sizeof(fracs); j++)
                k += (size_t) snprintf(fracs + k, sizeof(fracs) - k, "%s%ld", j ? "," : "", gf[j]);
        for (unsigned i = 0; i < b.o.runs; i++)
                free(res[i].bulk.recs);
        free(res);

        int t = teardown(&b);
        if (es_interrupted) {
                fail("interrupted");
                return 130;
        }
        loadavg(load, sizeof(load));
        say("exitstorm: load average at the end %s\n", load);
        if (s0.n && sm.n)
                say("exitstorm: fraction0_p99_us=%.2f minimum_p99_us=%.2f fraction0_exit_ms=%.1f minimum_exit_ms=%.1f "
                    "pages_per_bulk_free_0=%s pages_per_bulk_free_min=%s\n",
                    s0.p99 / s0.n, sm.p99 / sm.n, s0.exit_ms / s0.n, sm.exit_ms / sm.n, ppb0, ppbm);
        else
                say("exitstorm: fraction0_p99_us=- minimum_p99_us=- fraction0_exit_ms=- minimum_exit_ms=- "
                    "pages_per_bulk_free_0=- pages_per_bulk_free_min=-\n");
        if (ngf && sg_all.n) {
                char diff[320] = "kpages_goal_minus_min=- ci95=- welch_t=- welch_df=- welch_p=-";
                if (gv.vs_min.ok && gv.vs_min_cpu.ok)
                        snprintf(diff, sizeof(diff), "kpages_goal_minus_min=%+.1f ci95=%+.1f..%+.1f welch_t=%.2f welch_df=%.1f "
                                 "welch_p=%.3f cpu_kpages_goal_minus_min=%+.1f cpu_ci95=%+.1f..%+.1f cpu_welch_p=%.3f",
                                 gv.vs_min.diff, gv.vs_min.lo, gv.vs_min.hi, gv.vs_min.t, gv.vs_min.df, gv.vs_min.p,
                                 gv.vs_min_cpu.diff, gv.vs_min_cpu.lo, gv.vs_min_cpu.hi, gv.vs_min_cpu.p);
                say("exitstorm: goal_target_us=%u goal_fraction=%ld goal_span_p99_us=%s goal_kpages_s=%.1f "
                    "minimum_kpages_s=%.1f fraction0_kpages_s=%.1f goal_exit_ms=%.1f goal_fractions=%s goal_resolves=%u "
                    "goal_runs_met=%u/%u goal_last_span_p99_us=%s %s\n",
                    b.o.goal_us, b.goal, span_all, sg_all.kpages_s / sg_all.n, sm.n ? sm.kpages_s / sm.n : 0,
                    s0.n ? s0.kpages_s / s0.n : 0, sg_all.exit_ms / sg_all.n, fracs, b.n_choices - 1, gv.met, gv.runs,
                    span_last, diff);
        }
        return failed || t < 0 ? 1 : 0;
}
