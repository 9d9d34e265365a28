/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "act-sysctl.h"
#include "policy.h"
#include "source-memcg-tree.h"
#include "util.h"

/*
 * reclaim-dying: release the page cache that pins dying memcgs, so the
 * kernel can free them and their per-cpu memory (mem_cgroup_css_free() in mm/memcontrol.c runs only once the last charge is gone):
 *  - v2: memory.reclaim on each subtree that directly holds dying memcgs,
 *    asking for what its removed children hold on the LRU lists (memory.stat,
 *    memcg_dying_lru_read(): not memory.current, whose kernel memory no
 *    reclaim frees), less 31 pages where live children are below (the
 *    kernel's last pass asks 32 pages and would walk on into them), in
 *    rounds: after each write the figure is read again and the next write
 *    asks for what is left, until that much is left, a write frees none of
 *    it (EAGAIN or no fall), or 8 writes; then, only without live children
 *    and unless a write ended in EAGAIN, one 256 KiB write that goes on to
 *    the slab caches (the inodes that keep removed memcgs' writeback
 *    structures).  Each write at most `step`
 *    bytes, max / holders per subtree and `max` in all.  A holder named with
 *    cgroup: (not auto) is asked its share of max in steps.
 *    Each write is "<bytes> swappiness=0" where the kernel takes it (6.12
 *    here; memory_reclaim() in mm/memcontrol.c): cgroup reclaim with
 *    swappiness 0 scans file pages only (get_scan_count(), mm/vmscan.c), so
 *    no live container's anonymous memory is swapped.  Where it does not,
 *    plain "<bytes>" only with allow-swap: true, else the subtree is skipped.
 *    Where memory.reclaim takes "scope=dying" (contrib/kernel 0004), every
 *    write carries it: the kernel reclaims only the subtree's dying memcgs
 *    and scans none of its live cgroups, so the request is the subtree's
 *    share of max, not capped at what its dying memcgs are estimated to hold,
 *    and no subtree is skipped for allow-swap (no live cgroup is scanned);
 *  - v1: memory.force_empty on the holder (no size: it reclaims the whole
 *    subtree), only where the policy accepts it (force-empty: true, or
 *    childless for holders without live children that run no task);
 *  - vm.drop_caches=1 only with drop-caches: true, as a last resort when a
 *    holder could not be reclaimed.
 * Bounded in time: the job checks its deadline between writes, and a write
 * that blocks is interrupted by a signal to the worker thread.
 */

typedef enum ReclaimOutcome {
        RECLAIM_DONE,            /* reclaimed (v1: force_empty returned; v2: until EAGAIN or its budget) */
        RECLAIM_SKIPPED_POLICY,  /* v1 without force-empty (or not childless, or running tasks) */
        RECLAIM_GONE,            /* removed meanwhile (ENOENT/ENODEV) */
        RECLAIM_BUSY,            /* EBUSY: v1 force_empty on a cgroup with tasks */
        RECLAIM_FAILED,          /* another error (EINVAL...) */
        RECLAIM_TIMED_OUT,
        RECLAIM_NOT_RUN,         /* the run ended (deadline, budget) before this holder */
        RECLAIM_NOTHING,         /* the kernel found nothing to reclaim (e.g. tmpfs/shmem without swap) */
        RECLAIM_SKIPPED_SWAP,    /* v2 without swappiness= and allow-swap: false */
        RECLAIM_SKIPPED_REFAULTS,/* its live cgroups refaulted above max-refault-rate last time */
        _RECLAIM_OUTCOME_MAX,
} ReclaimOutcome;

const char *reclaim_outcome_to_string(ReclaimOutcome o);

/*
 * Is any swap device active (<root>/proc/swaps has a line past its header)?
 * 1, 0, or -errno (unreadable: callers assume swap).  Without swap, a plain
 * "<bytes>" cannot swap anonymous memory either (can_reclaim_anon_pages(),
 * mm/vmscan.c, needs free swap space), so allow-swap is not needed for it.
 */
int reclaim_host_has_swap(const char *root);

/* Did a write reach the subtree's memory (so that its refaults count)? */
bool reclaim_outcome_wrote(ReclaimOutcome o);

/* What memory.reclaim accepts after the byte count, probed by writing to it. */
typedef enum ReclaimArgs {
        RECLAIM_ARGS_UNKNOWN,    /* not probed (dry-run writes nothing), or the probe failed */
        RECLAIM_ARGS_NONE,       /* no memory.reclaim: cgroup v1, or v2 before 5.19 */
        RECLAIM_ARGS_BYTES,      /* "<bytes>" only: "0 swappiness=0" is EINVAL (5.19-6.11) */
        RECLAIM_ARGS_SWAPPINESS, /* "<bytes> swappiness=N" (6.12+; Debian 6.12 has it) */
        _RECLAIM_ARGS_MAX,
        _RECLAIM_ARGS_INVALID = -EINVAL,
} ReclaimArgs;

/* The advisory answer for an args value: "yes", "no" or "unknown". */
const char *reclaim_args_answer(ReclaimArgs a);
/* What it means, one phrase ("swappiness= accepted", ...). */
const char *reclaim_args_to_string(ReclaimArgs a);
ReclaimArgs reclaim_args_from_answer(const char *s);

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
        int64_t refaults_before; /* the subtree's refault counter just before its first write, pages; -1 unknown */
        int64_t lru_before;      /* v2 without scope=dying: the LRU bytes of its removed children before the first
                                  * write and after the last (memcg_dying_lru_read()); -1 unknown */
        int64_t lru_after;
        usec_t refaults_before_at; /* CLOCK_MONOTONIC of that read */
} ReclaimTargetResult;

/* Writes go through a hook so tests can inject errors, delays and blocking. */
typedef int (*ReclaimWriteFn)(const char *root, const char *path, const char *value, void *userdata);

/*
 * Probe whether memory.reclaim of cgroup `cg` takes "scope=dying" (pcptune's
 * contrib/kernel 0004: memory_reclaim() in mm/memcontrol.c then reclaims
 * only from the memcgs below cg that are not online) by writing
 * "0 scope=dying", which reclaims nothing.  *ret FEATURE_PRESENT (accepted)
 * or FEATURE_ABSENT (EINVAL: every kernel without the patch; v1 and a
 * missing memory.reclaim without a write).  0, or -errno of the write.
 */
int reclaim_probe_scope(const char *root, const char *mount, CgroupMode mode, const char *cg, ReclaimWriteFn write_fn,
                        void *userdata, FeatureState *ret);

/*
 * Probe by behaviour which arguments memory.reclaim of cgroup `cg` (below
 * the hierarchy `mount`) takes: write "0 swappiness=0", then, if that is
 * EINVAL, "0".  A count of 0 reclaims nothing: the kernel parses the
 * arguments and its loop runs no pass (memory_reclaim(), mm/memcontrol.c
 * 5.19-6.18; 6.1 parses the whole buffer as a size, so the key is EINVAL).
 * v1 writes nothing (RECLAIM_ARGS_NONE).  write_fn NULL: write_file_at().
 * 0 with *ret set, or -errno of the write (EACCES, EROFS...; ENOENT of the
 * file gives RECLAIM_ARGS_NONE, not an error).
 */
int reclaim_probe_args(const char *root, const char *mount, CgroupMode mode, const char *cg, ReclaimWriteFn write_fn,
                       void *userdata, ReclaimArgs *ret);

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
        ReclaimArgs args;        /* from the manager's probe; UNKNOWN: the job probes on its first v2 subtree */
        FeatureState scope_dying;/* memory.reclaim takes scope=dying (manager's probe); probed with args, else
                                  * UNKNOWN counts as absent */
        uint64_t page_size;      /* bytes (sysconf) */
        int host_swap;           /* swap devices active (/proc/swaps): 1, 0, or -1 not read yet (the job reads it) */
        char **skip;             /* NULL-terminated paths not to reclaim this time (refaulted too much), or NULL */
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
        usec_t ended;            /* CLOCK_MONOTONIC at the end of the run */
        usec_t refault_read_usec;/* time spent reading refault counters */
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
