/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "policy.h"
#include "source-memcg-tree.h"
#include "util.h"

/*
 * reclaim-dying: release the page cache that pins dying memcgs, so the
 * kernel can free them and their per-cpu memory (kernel.md §5.3):
 *  - v2: memory.reclaim on each subtree that directly holds dying memcgs, in
 *    steps of `step` bytes, at most max / holders per subtree and `max` in
 *    all; a step the kernel cannot satisfy (EAGAIN) ends that subtree;
 *  - v1: memory.force_empty on the holder (no size: it reclaims the whole
 *    subtree), only where the policy accepts it (force-empty: true, or
 *    childless for holders without live children);
 *  - vm.drop_caches=1 only with drop-caches: true, as a last resort when a
 *    holder could not be reclaimed.
 * Bounded in time: the job checks its deadline between writes, and a write
 * that blocks is interrupted by a signal to the worker thread.
 */

typedef enum ReclaimOutcome {
        RECLAIM_DONE,            /* reclaimed (v1: force_empty returned; v2: until EAGAIN or its budget) */
        RECLAIM_SKIPPED_POLICY,  /* v1 without force-empty (or not childless) */
        RECLAIM_GONE,            /* removed meanwhile (ENOENT/ENODEV) */
        RECLAIM_BUSY,            /* EBUSY: v1 force_empty on a cgroup with tasks */
        RECLAIM_FAILED,          /* another error (EINVAL...) */
        RECLAIM_TIMED_OUT,
        RECLAIM_NOT_RUN,         /* the run ended (deadline, budget) before this holder */
        RECLAIM_NOTHING,         /* the kernel found nothing to reclaim (e.g. tmpfs/shmem without swap) */
        _RECLAIM_OUTCOME_MAX,
} ReclaimOutcome;

const char *reclaim_outcome_to_string(ReclaimOutcome o);

typedef struct ReclaimTargetResult {
        char *path;              /* below the hierarchy */
        uint64_t dying;          /* as scanned */
        uint64_t dying_bytes;
        ReclaimOutcome outcome;
        int error;               /* -errno for FAILED/BUSY */
        uint64_t bytes;          /* v2: requested in successful writes */
        unsigned writes;
        int64_t usage_before;    /* memory.current (v2) / memory.usage_in_bytes (v1), bytes; -1 unknown */
        int64_t usage_after;
} ReclaimTargetResult;

/* Writes go through a hook so tests can inject errors, delays and blocking. */
typedef int (*ReclaimWriteFn)(const char *root, const char *path, const char *value, void *userdata);

typedef struct ReclaimJob {
        /* input */
        char *root;
        char *mount;             /* the memory hierarchy below root */
        CgroupMode mode;
        char **roots;            /* NULL-terminated; NULL: every top-level cgroup */
        char *cgroup;            /* "auto" or one path */
        ActionReclaimDying cfg;  /* copied from the rule (roots/cgroup pointers not used) */
        bool dry_run;
        ReclaimWriteFn write_fn; /* default: write_file_at() */
        void *write_userdata;
        /* output */
        MemcgScan scan;
        ReclaimTargetResult *results;
        size_t n_results;
        uint64_t bytes_total;    /* v2: requested in successful writes */
        uint64_t freed_total;    /* the holders' usage before minus after, bytes */
        bool timed_out;
        bool dropped_caches;
        usec_t scan_usec;
        usec_t run_usec;
        int error;               /* a failure of the whole job (scan), -errno */
} ReclaimJob;

/* A job for rule r of policy p on the memory hierarchy `mount` below root.  NULL on ENOMEM. */
ReclaimJob *reclaim_job_new(const char *root, const char *mount, CgroupMode mode, const ActionReclaimDying *cfg,
                            bool dry_run);
ReclaimJob *reclaim_job_free(ReclaimJob *j);
DEFINE_TRIVIAL_CLEANUP_FUNC(ReclaimJob *, reclaim_job_free);

/*
 * Run synchronously (the worker thread calls this): scan, then reclaim until
 * done, the budget is spent, the deadline passes or *cancel is set.  Dry-run
 * only scans.  Returns 0 (see the results) or -errno of the scan.
 */
int reclaim_job_run(ReclaimJob *j, const volatile sig_atomic_t *cancel);

/* A worker thread bound to an sd-event loop; the callback runs on the loop when the job ends. */
typedef struct ReclaimWorker ReclaimWorker;
typedef void (*ReclaimDoneFn)(ReclaimJob *j, void *userdata);

/*
 * Start j in a thread (the worker takes ownership of j and hands it to done,
 * which frees it).  After the job's timeout plus a grace second the loop
 * sets the cancel flag and signals the thread (SIGUSR2 interrupts a blocked
 * write with EINTR).  0, -EBUSY (a job is running) or -errno.
 */
int reclaim_worker_start(ReclaimWorker **w, sd_event *e, ReclaimJob *j, ReclaimDoneFn done, void *userdata);
bool reclaim_worker_busy(const ReclaimWorker *w);
/* Cancel and join (at exit).  Frees the worker. */
ReclaimWorker *reclaim_worker_stop(ReclaimWorker *w);
