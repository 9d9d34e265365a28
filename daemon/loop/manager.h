/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "onstop.h"
#include "util.h"

/*
 * The Manager owns everything the daemon has: configuration, the sd-event
 * loop and its sources, the loaded policy set and its evaluation history,
 * the managed knobs and the restore journal.  One sample is:
 * sources -> snapshot -> policy evaluation -> plan -> actuators.
 */

#define INTERVAL_DEFAULT_USEC (10 * USEC_PER_SEC)

/*
 * One daemon per root and knob set, whatever its state directory: the lock is
 * this path below the root (/run/pcptune/pcptuned.lock on the live host, which
 * a container mounting the host's /run/pcptune shares), holding the pid on its
 * first line and the absolute path of the daemon's state directory on its second.
 */
#define LOCK_PATH "/run/pcptune/pcptuned.lock"

/*
 * The daemon's status file in its state directory: "status.json" for root "/", else
 * "status-<FNV-1a 64 of root, 16 hex>.json" (root_state_name(), util.h), so that daemons on two
 * roots sharing a state directory never show each other's state.  It is rewritten atomically
 * after every sample and removed at a clean stop.  buf holds STATUS_NAME_MAX bytes; returns buf.
 */
#define STATUS_FILE "status.json"
#define STATUS_NAME_MAX 40
char *manager_status_name(const char *root, char buf[static STATUS_NAME_MAX]);

/* The lock file of a root (root/run/pcptune/pcptuned.lock).  0 or -ENOMEM; the caller frees. */
int manager_lock_path(const char *root, char **ret);

/*
 * The pid of the pcptuned holding root's lock: > 0, 0 if none holds it, -errno (-EBADMSG: no pid in it).
 * ret_state_dir (may be NULL): the holder's state directory as the lock says it, read back like any input
 * (an absolute path of printable characters, else NULL); the caller frees.
 */
int manager_lock_owner(const char *root, char **ret_state_dir);

typedef struct ManagerConfig {
        const char *root;           /* root prefix of every kernel file ("/") */
        const char *policy_dir;     /* NULL: /etc/pcptune/policies.d, else the embedded set */
        const char *state_dir;      /* restore journal, lock, status (default /run/pcptune) */
        usec_t interval_usec;       /* sampling period */
        bool dry_run;               /* evaluate and report; never write */
        bool once;                  /* one evaluation, then exit */
        bool json;                  /* --once report as JSON */
        bool verbose;               /* --verbose: the --once report shows each kernel probe's evidence */
        bool check_owner;           /* refuse policy files not owned by root / writable by others */
        const char *metrics_dir;    /* pcptune.prom goes there; NULL: PROM_DIR_DEFAULT when root is "/" */
        bool no_metrics;            /* write no metrics file */
        FILE *report;               /* where --once prints its report (stdout) */
        const char *calibration_dir;  /* calibration.json (NULL: CALIBRATION_DIR_DEFAULT) */
        usec_t bulk_free_period_usec; /* one second of bulk-free tracing per period (0: 60 s, never in a dry run;
                                       * USEC_INFINITY: never) */
        const char *metrics_file;   /* the metrics file's name in metrics_dir (NULL: PROM_FILE) */
        OnStop on_stop;             /* what SIGTERM does with the values written (ON_STOP_RESTORE) */
} ManagerConfig;

typedef struct Manager Manager;

/* Allocate a manager for cfg (strings are copied).  0 or -ENOMEM. */
int manager_new(const ManagerConfig *cfg, Manager **ret);
Manager *manager_free(Manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);

/*
 * Start-up: load the policies (a bad set is fatal here, and only here), take
 * the root's lock (a second instance exits with a clear message), remove
 * temporary files a killed run left in the state directory,
 * and restore the journal of a run that did not stop cleanly.  Dry-run takes
 * no lock and touches no state.  0 or -errno (already logged).
 */
int manager_startup(Manager *m);

/*
 * Run: with once, one evaluation (and its report), then exit; otherwise the
 * event loop until SIGTERM/SIGINT, then restore every managed knob.
 * Returns the exit status for main() (0 success).
 */
int manager_run(Manager *m);
