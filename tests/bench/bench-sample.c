/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-sample: the CPU cost of one pcptuned sample (every source read and
 * parsed, metrics, policy evaluation with the goal solver) next to the cost of
 * only reading the same files (open, read into a buffer, close; no parsing),
 * measured side by side in one run, alternating, over many iterations.
 * With --metrics-dir, also what rendering and atomically replacing
 * pcptune.prom costs after each sample (export-prom.c, as the daemon does:
 * metrics_cpu_us), and rendering alone into memory.
 * Prints figures; asserts nothing.
 *
 * usage: bench-sample [--root DIR] [--policy-dir DIR] [--iterations N] [--metrics-dir DIR]
 */
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <time.h>

#include "cycle.h"
#include "export-prom.h"
#include "log.h"
#include "metrics.h"
#include "policy-eval.h"
#include "policy.h"
#include "snapshot.h"
#include "source-table.h"
#include "util.h"

static uint64_t cpu_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

/* The files snapshot_take() reads (the memcg directory walk is measured with the sample). */
static int collect_files(const char *root, char ***ret, size_t *ret_n) {
        static const char *const fixed[] = {
                "/proc/meminfo", "/proc/zoneinfo", "/proc/vmstat", "/proc/pressure/memory",
                "/proc/sys/vm/percpu_pagelist_high_fraction", "/proc/sys/kernel/osrelease",
                "/sys/devices/system/cpu/online", "/sys/devices/system/cpu/possible", "/proc/cgroups",
                "/proc/self/mountinfo",
        };
        char **v = NULL, *dir;
        size_t n = 0;
        DIR *d;

        for (size_t i = 0; i < ELEMENTSOF(fixed); i++) {
                char *p;
                if (path_join_root(root, fixed[i], &p) < 0)
                        return -ENOMEM;
                if (access(p, R_OK) < 0) {
                        free(p);
                        continue;
                }
                v = realloc(v, (n + 1) * sizeof(char *));
                v[n++] = p;
        }
        if (path_join_root(root, "/sys/devices/system/node", &dir) < 0)
                return -ENOMEM;
        d = opendir(dir);
        for (struct dirent *de; d && (de = readdir(d));) {
                char *p;
                if (strncmp(de->d_name, "node", 4) != 0 || de->d_name[4] < '0' || de->d_name[4] > '9')
                        continue;
                if (asprintf(&p, "%s/%s/cpulist", dir, de->d_name) < 0)
                        return -ENOMEM;
                v = realloc(v, (n + 1) * sizeof(char *));
                v[n++] = p;
        }
        if (d)
                closedir(d);
        free(dir);
        *ret = v;
        *ret_n = n;
        return 0;
}

static size_t read_all(char **files, size_t n, char *buf, size_t size) {
        size_t total = 0;
        for (size_t i = 0; i < n; i++) {
                int fd = open(files[i], O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        continue;
                /* 4 KiB reads: a sysctl read allocates a kernel buffer of the read size. */
                for (ssize_t k; (k = read(fd, buf, MIN(size, (size_t) 4096))) > 0;)
                        total += (size_t) k;
                close(fd);
        }
        return total;
}

int main(int argc, char **argv) {
        static const struct option options[] = {
                { "root", required_argument, NULL, 'r' },
                { "policy-dir", required_argument, NULL, 'p' },
                { "iterations", required_argument, NULL, 'n' },
                { "metrics-dir", required_argument, NULL, 'm' },
                {},
        };
        const char *root = "/", *policy_dir = NULL, *metrics_dir = NULL;
        PromWriter *prom = NULL;
        uint64_t t_prom = 0, t_render = 0;
        size_t prom_bytes = 0;
        long iterations = 2000;
        PolicySet *set = NULL;
        Diagnostics diag = { 0 };
        char **files = NULL;
        size_t n_files = 0, bytes = 0;
        static char buf[1 << 20];
        uint64_t t_sample = 0, t_read = 0;
        int c;

        while ((c = getopt_long(argc, argv, "r:p:n:m:", options, NULL)) >= 0)
                switch (c) {
                case 'r':
                        root = optarg;
                        break;
                case 'p':
                        policy_dir = optarg;
                        break;
                case 'n':
                        iterations = atol(optarg);
                        break;
                case 'm':
                        metrics_dir = optarg;
                        break;
                default:
                        return 2;
                }
        log_setup("bench-sample", LOG_TARGET_NULL, LOG_ERR);
        if (policy_set_load_default(policy_dir, false, &set, &diag) < 0 || diag.n_errors) {
                fprintf(stderr, "bench-sample: cannot load policies\n");
                return 1;
        }
        if (collect_files(root, &files, &n_files) < 0)
                return 1;
        if (metrics_dir && prom_writer_open(metrics_dir, PROM_LOCK_DIR, &prom) < 0) {
                fprintf(stderr, "bench-sample: cannot open %s for metrics\n", metrics_dir);
                return 1;
        }

        EvalState *st = eval_state_new();
        for (long i = 0; i < iterations; i++) {
                uint64_t a = cpu_ns();
                Snapshot *s = NULL;
                Cycle cyc = { 0 };
                if (snapshot_take(root, &s) < 0) {
                        fprintf(stderr, "bench-sample: cannot read the kernel's state below %s\n", root);
                        return 1;
                }
                /* What the daemon's sample runs: observe and evaluate (cycle.h). */
                cycle_observe(&cyc, s);
                (void) cycle_evaluate(&cyc, set, st, now_usec(CLOCK_MONOTONIC));
                const MetricValues mv = cyc.mv;
                const Decision decision = cyc.decision;
                uint64_t p_start = cpu_ns(), p0 = p_start;
                if (prom) {
                        /* What the daemon writes: the report's view and its counters (all zero here). */
                        ReportInput in = { .snap = s, .mv = &mv, .set = set, .decision = &decision };
                        KnobCounters kc = { 0 };
                        DaemonCounters dc = { .samples = (uint64_t) i + 1 };
                        PromKnob k = { .name = snapshot_pcp_name(s), .present = s->has_knob, .value = snapshot_pcp_value(s),
                                       .counters = &kc };
                        PromInput pin = { .report = &in, .knobs = &k, .n_knobs = 1, .counters = &dc, .version = "bench" };
                        /* Rendering alone, to tell it from the file system's part. */
                        char *text = NULL;
                        size_t len = 0;
                        uint64_t r0 = cpu_ns();
                        FILE *f = open_memstream(&text, &len);
                        if (f) {
                                (void) prom_render(&pin, f);
                                fclose(f);
                        }
                        free(text);
                        t_render += cpu_ns() - r0;
                        p0 = cpu_ns();
                        if (prom_writer_write(prom, &pin) < 0) {
                                fprintf(stderr, "bench-sample: cannot write metrics to %s\n", metrics_dir);
                                return 1;
                        }
                }
                uint64_t p1 = cpu_ns();
                cycle_done(&cyc);
                uint64_t b = cpu_ns();
                bytes = read_all(files, n_files, buf, sizeof buf);
                uint64_t e = cpu_ns();
                t_sample += (b - a) - (p1 - p_start);
                t_prom += p1 - p0;
                t_read += e - b;
        }
        double us_sample = (double) t_sample / (double) iterations / 1000.0;
        double us_read = (double) t_read / (double) iterations / 1000.0;
        printf("bench-sample: root %s, %zu files, %zu bytes per read, %ld iterations\n", root, n_files, bytes,
               iterations);
        if (prom) {
                char *path = NULL, *text = NULL;
                if (asprintf(&path, "%s/%s", metrics_dir, PROM_FILE) >= 0 &&
                    read_file_at("/", path, 1 << 20, &text, &prom_bytes) < 0)
                        prom_bytes = 0;
                free(text);
                free(path);
                (void) prom_writer_remove(prom);
                prom_writer_free(prom);
                printf("bench-sample: metrics file %zu bytes; rendering it alone: %.1f us of CPU\n", prom_bytes,
                       (double) t_render / (double) iterations / 1000.0);
                printf("bench-sample: sample_cpu_us=%.1f read_only_us=%.1f ratio=%.2f cpu_ms_per_hour_at_10s=%.1f "
                       "metrics_cpu_us=%.1f\n",
                       us_sample, us_read, us_sample / us_read, us_sample * 360.0 / 1000.0,
                       (double) t_prom / (double) iterations / 1000.0);
        } else
                printf("bench-sample: sample_cpu_us=%.1f read_only_us=%.1f ratio=%.2f cpu_ms_per_hour_at_10s=%.1f\n",
                       us_sample, us_read, us_sample / us_read, us_sample * 360.0 / 1000.0);
        eval_state_free(st);
        policy_set_free(set);
        diagnostics_done(&diag);
        for (size_t i = 0; i < n_files; i++)
                free(files[i]);
        free(files);
        return 0;
}
