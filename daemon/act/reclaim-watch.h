/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-c/json.h>
#include <stdio.h>

#include "act-reclaim.h"

/*
 * What reclaim-dying costs the live cgroups of the subtrees it reclaims:
 * their refaults (source-memcg-tree.h) from just before each subtree's
 * first write until `refault-window` after the run, per reclaim, and the
 * subtrees a rule skips for its cooldown because their live cgroups
 * refaulted faster than its max-refault-rate.  Also what the kernel's
 * memory.reclaim accepts (the swappiness= and scope=dying probes).  The manager owns one
 * ReclaimWatch; status.json carries it as "reclaim" (reclaim_watch_to_json),
 * and `pcptunectl status` prints that object (reclaim_watch_print_json).
 *
 * Cost: one memory.stat read per reclaimed subtree before and one after,
 * whatever the number of live cgroups below it (the counter is
 * hierarchical); tests/bench/refault-cost measures it.
 */

typedef struct ReclaimSubtreeRefaults {
        char *path;              /* below the hierarchy */
        ReclaimOutcome outcome;
        int64_t before, after;   /* refault counter, pages; -1 unknown */
        usec_t before_at, after_at; /* CLOCK_MONOTONIC */
        uint64_t refaults;       /* after - before (0 if unknown) */
        double rate;             /* refaults per second over [before_at, after_at] */
        bool over_limit;
} ReclaimSubtreeRefaults;

typedef struct ReclaimRecord {
        char *label;             /* "policy/rule" */
        usec_t started, ended;   /* CLOCK_MONOTONIC of the run */
        usec_t window_usec;
        double max_rate;         /* 0: no bound */
        usec_t cooldown_usec;
        bool counting;           /* the window is still open */
        ReclaimSubtreeRefaults *subtrees;
        size_t n_subtrees;
        uint64_t refaults;       /* sum over the subtrees */
        size_t n_over;
        usec_t read_usec;        /* reading the counters: before (in the job) + after */
        size_t n_reads;
} ReclaimRecord;

typedef struct RefaultBlock {
        char *label;             /* the rule that skips it */
        char *path;
        usec_t until;            /* CLOCK_MONOTONIC */
        double rate;
} RefaultBlock;

typedef struct ReclaimWatch {
        ReclaimArgs args;
        FeatureState scope_dying; /* memory.reclaim takes scope=dying (contrib/kernel 0004) */
        int probe_error;         /* -errno of a failed probe, else 0 */
        char *probe_file;        /* the memory.reclaim written to, below root */
        bool dying_exact;        /* v2 cgroup.stat has nr_dying_subsys_memory */
        bool has_record;
        ReclaimRecord record;    /* the last reclaim */
        RefaultBlock *blocks;
        size_t n_blocks;
        uint64_t refaults_total; /* over every finished window since start */
        uint64_t reclaims_measured;
        uint64_t subtrees_skipped_total;
} ReclaimWatch;

void reclaim_watch_done(ReclaimWatch *w);

/*
 * Open a window for a finished job: keep each subtree's counter read before
 * its reclaim (every subtree with a result, so skipped ones show too).
 * Replaces the previous record.  0 or -ENOMEM.
 */
int reclaim_watch_open(ReclaimWatch *w, const ReclaimJob *j, const char *label, usec_t cooldown_usec);

/*
 * Close the window at `now`: read each written subtree's counter again
 * (below root/mount), compute refaults and rates, and skip the subtrees
 * above the record's max_rate for its cooldown (RefaultBlock).  Subtrees
 * gone meanwhile keep after = -1.  Returns the number of subtrees over the
 * limit.
 */
size_t reclaim_watch_close(ReclaimWatch *w, const char *root, const char *mount, CgroupMode mode, usec_t now);

/* The paths `label` must skip at `now` (expired blocks are dropped), as a
 * NULL-terminated list, or NULL when none.  0 or -ENOMEM. */
int reclaim_watch_blocked(ReclaimWatch *w, const char *label, usec_t now, char ***ret);

/*
 * Without writing: v1 -> NONE; v2 without <mount>/memory.reclaim -> NONE;
 * else UNKNOWN (only a write tells).  For `pcptunectl status` when no daemon
 * has probed.
 */
ReclaimArgs reclaim_args_guess(const char *root, const char *mount, CgroupMode mode);

/* The watch as JSON (caller owns it): "memory_reclaim_args" advisory
 * {label, answer, evidence}, "last" record, "skipped_subtrees". */
json_object *reclaim_watch_to_json(const ReclaimWatch *w, CgroupMode mode, usec_t now);

/* Text for `pcptunectl status` from that JSON (the daemon's status.json). */
void reclaim_watch_print_json(FILE *f, json_object *reclaim);

