/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcptuned: observes the kernel's per-cpu memory caches, evaluates operator
 * policies and sets vm.percpu_pagelist_high_fraction accordingly; every change
 * is journaled and restored on stop or after a crash.  main() only parses the
 * command line, builds the manager and runs it.
 */
#include <getopt.h>
#include <signal.h>

#include "export-prom.h"
#include "log.h"
#include "manager.h"
#include "util.h"

static void help(void) {
        /* At most 80 columns a line; descriptions from column 26. */
        printf("Usage: pcptuned [OPTIONS]\n"
               "Tune the kernel's per-cpu page lists and percpu memory from YAML policies.\n\n"
               "  -p, --policy-dir DIR   policies to load (default: %s\n"
               "                         if it exists, else the shipped policies built into\n"
               "                         pcptuned)\n"
               "  -s, --state-dir DIR    restore journal and status (default: %s;\n"
               "                         the lock is ROOT/run/pcptune)\n"
               "  -r, --root DIR         read (and, unless --dry-run, write) kernel files\n"
               "                         below DIR\n"
               "  -i, --interval TIME    sampling interval (default: 10s; units: 500ms, 10s, 1m)\n"
               "  -n, --dry-run          evaluate and report what would change; write no\n"
               "                         kernel value (only its status, health and metrics\n"
               "                         files)\n"
               "  -1, --once             one evaluation, then exit (with --dry-run: print the\n"
               "                         report)\n"
               "      --json             with --once: print the report as JSON\n"
               "      --metrics-dir DIR  write Prometheus metrics to DIR/" PROM_FILE " after\n"
               "                         every sample (default, for root / if it exists:\n"
               "                         %s)\n"
               "      --metrics-file NAME\n"
               "                         the metrics file's name in that directory (default\n"
               "                         " PROM_FILE "; a file name ending in .prom, no '/')\n"
               "      --no-metrics       write no metrics file\n"
               "      --list-metrics     list the metrics (name, type, unit, labels, help) and\n"
               "                         exit\n"
               "      --bulk-free-period DURATION\n"
               "                         one second of bulk-free tracing per DURATION\n"
               "                         (5s .. 24h, default 60s, none in a dry run; 0 never\n"
               "                         traces)\n"
               "      --on-stop MODE     on SIGTERM: restore hands the values back\n"
               "                         (default), keep leaves them and the journal for\n"
               "                         the next pcptuned, auto keeps them if systemd is\n"
               "                         restarting us\n"
               "      --calibration-dir DIR\n"
               "                         where the bulk-free calibration is kept\n"
               "                         (default %s)\n"
               "  -v, --verbose          debug logging; with --once, each kernel probe's\n"
               "                         evidence in the report (one line each without)\n"
               "      --version          print the version\n"
               "  -h, --help             this help\n",
               POLICY_DIR_DEFAULT, STATE_DIR_DEFAULT, PROM_DIR_DEFAULT, CALIBRATION_DIR_DEFAULT);
}

static void list_metrics(void) {
        const PromMetric *t;
        size_t n = prom_metrics(&t);
        for (size_t i = 0; i < n; i++) {
                printf("%s\t%s\t%s\t", t[i].name, prom_type_to_string(t[i].type), *t[i].unit ? t[i].unit : "-");
                for (size_t l = 0; t[i].labels[l]; l++)
                        printf("%s%s", l ? "," : "", t[i].labels[l]);
                printf("%s\t%s\n", t[i].labels[0] ? "" : "-", t[i].help);
        }
}

/*
 * The command line into cfg and the log level.  Returns -1 to go on, or the exit status: 0 after --help,
 * --version or --list-metrics, 2 for a bad option (said on stderr).
 */
static int parse_args(int argc, char **argv, ManagerConfig *cfg, int *level) {
        enum { OPT_VERSION = 0x100, OPT_JSON, OPT_METRICS_DIR, OPT_NO_METRICS, OPT_LIST_METRICS, OPT_BULK_FREE_PERIOD,
               OPT_CALIBRATION_DIR, OPT_METRICS_FILE, OPT_ON_STOP };
        static const struct option options[] = {
                { "policy-dir", required_argument, NULL, 'p' },
                { "state-dir", required_argument, NULL, 's' },
                { "root", required_argument, NULL, 'r' },
                { "interval", required_argument, NULL, 'i' },
                { "dry-run", no_argument, NULL, 'n' },
                { "once", no_argument, NULL, '1' },
                { "json", no_argument, NULL, OPT_JSON },
                { "metrics-dir", required_argument, NULL, OPT_METRICS_DIR },
                { "no-metrics", no_argument, NULL, OPT_NO_METRICS },
                { "metrics-file", required_argument, NULL, OPT_METRICS_FILE },
                { "on-stop", required_argument, NULL, OPT_ON_STOP },
                { "list-metrics", no_argument, NULL, OPT_LIST_METRICS },
                { "bulk-free-period", required_argument, NULL, OPT_BULK_FREE_PERIOD },
                { "calibration-dir", required_argument, NULL, OPT_CALIBRATION_DIR },
                { "verbose", no_argument, NULL, 'v' },
                { "version", no_argument, NULL, OPT_VERSION },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        int c;

        while ((c = getopt_long(argc, argv, "p:s:r:i:n1vh", options, NULL)) >= 0) {
                switch (c) {
                case 'p':
                        cfg->policy_dir = optarg;
                        break;
                case 's':
                        cfg->state_dir = optarg;
                        break;
                case 'r':
                        cfg->root = optarg;
                        break;
                case 'i':
                        if (parse_duration(optarg, &cfg->interval_usec) < 0 || cfg->interval_usec < 100 * USEC_PER_MSEC ||
                            cfg->interval_usec > 24 * 3600 * USEC_PER_SEC) {
                                fprintf(stderr, "pcptuned: invalid --interval '%s' (100ms .. 24h)\n", optarg);
                                return 2;
                        }
                        break;
                case 'n':
                        cfg->dry_run = true;
                        break;
                case '1':
                        cfg->once = true;
                        break;
                case OPT_JSON:
                        cfg->json = true;
                        break;
                case OPT_METRICS_DIR:
                        if (optarg[0] != '/') {
                                fprintf(stderr, "pcptuned: --metrics-dir needs an absolute path, not '%s'\n", optarg);
                                return 2;
                        }
                        cfg->metrics_dir = optarg;
                        break;
                case OPT_METRICS_FILE:
                        if (!prom_file_name_valid(optarg)) {
                                fprintf(stderr, "pcptuned: invalid --metrics-file '%s' (a file name ending in .prom: "
                                                "letters, digits, '_', '-', '.', not starting with '.', no '/')\n",
                                        optarg);
                                return 2;
                        }
                        cfg->metrics_file = optarg;
                        break;
                case OPT_ON_STOP:
                        if (on_stop_from_string(optarg) < 0) {
                                fprintf(stderr, "pcptuned: invalid --on-stop '%s' (restore, keep or auto)\n", optarg);
                                return 2;
                        }
                        cfg->on_stop = on_stop_from_string(optarg);
                        break;
                case OPT_NO_METRICS:
                        cfg->no_metrics = true;
                        break;
                case OPT_LIST_METRICS:
                        list_metrics();
                        return 0;
                case OPT_CALIBRATION_DIR:
                        cfg->calibration_dir = optarg;
                        break;
                case OPT_BULK_FREE_PERIOD:
                        if (streq(optarg, "0"))
                                cfg->bulk_free_period_usec = USEC_INFINITY;
                        else if (parse_duration(optarg, &cfg->bulk_free_period_usec) < 0 ||
                                 cfg->bulk_free_period_usec < 5 * USEC_PER_SEC ||
                                 cfg->bulk_free_period_usec > 24 * 3600 * USEC_PER_SEC) {
                                fprintf(stderr, "pcptuned: invalid --bulk-free-period '%s' (0, or 5s .. 24h)\n", optarg);
                                return 2;
                        }
                        break;
                case 'v':
                        *level = LOG_DEBUG;
                        cfg->verbose = true;
                        break;
                case OPT_VERSION:
                        printf("pcptuned %s\n", PACKAGE_VERSION);
                        return 0;
                case 'h':
                        help();
                        return 0;
                default:
                        return 2;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "pcptuned: unexpected argument '%s'\n", argv[optind]);
                return 2;
        }
        if (cfg->json && !cfg->once) {
                fprintf(stderr, "pcptuned: --json needs --once\n");
                return 2;
        }
        return -1;
}

int main(int argc, char **argv) {
        ManagerConfig cfg = { .root = "/", .state_dir = STATE_DIR_DEFAULT, .check_owner = true };
        _cleanup_(manager_freep) Manager *m = NULL;
        int level = LOG_INFO, r;
        sigset_t mask;

        r = parse_args(argc, argv, &cfg, &level);
        if (r >= 0)
                return r;

        log_setup("pcptuned", LOG_TARGET_AUTO, level);

        /* A closed stderr (a pipe whose reader went away) must not kill us before we restore:
         * writes then fail with EPIPE instead. */
        signal(SIGPIPE, SIG_IGN);

        /* Signals are handled on the event loop (signalfd): block them first. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        sigaddset(&mask, SIGUSR1);
        sigprocmask(SIG_BLOCK, &mask, NULL);

        r = manager_new(&cfg, &m);
        if (r < 0)
                return log_oom(), 1;
        r = manager_startup(m);
        if (r < 0)
                return 1;
        return manager_run(m);
}
