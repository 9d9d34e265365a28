/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "act-reclaim.h"
#include "act-sysctl.h"
#include "util.h"

/*
 * What acting counts across samples, for the metrics (export-prom.h reads
 * them; the actuator and the manager fill them).  Kept with the act layer so
 * that the actuator needs nothing of the metrics exporter above it.
 */

/* What the daemon counted for one knob since it started. */
typedef struct KnobCounters {
        uint64_t writes;           /* values written (knob_apply: KNOB_WRITTEN) */
        uint64_t restores;         /* originals written back by knob_release() (not dry-run) */
        uint64_t refused;          /* knob_apply() errors: out of range, unreadable, the kernel said no
                                    * (EINVAL...), or the journal could not record the original */
        int last_errno;            /* errno (> 0) of the last write or restore that failed; 0 after one that
                                    * succeeded, or none yet */
        usec_t last_change_realtime_usec; /* CLOCK_REALTIME of the last write or restore (not dry-run); 0: none */
} KnobCounters;

/* One knob pcptuned may manage, as the manager knows it at the end of a sample. */
typedef struct PromKnob {
        const char *name;          /* "vm.percpu_pagelist_high_fraction" */
        const KnobState *knob;          /* managed, original, admin_override; may be NULL (never bound) */
        bool present;              /* the kernel has the file */
        int64_t value;             /* what it holds now, if present */
        bool has_target;           /* an active rule wants a value (dry-run: the value it would write) */
        int64_t target;
        const KnobCounters *counters;
} PromKnob;

/* Counted by the manager across samples (since start). */
typedef struct DaemonCounters {
        uint64_t samples;
        uint64_t sample_failures;
        usec_t sample_cpu_usec;            /* CPU time of every sample, this thread */
        usec_t last_sample_usec;           /* wall-clock duration of the last sample */
        usec_t last_sample_realtime_usec;  /* CLOCK_REALTIME at the end of the last sample */
        uint64_t reclaim_runs;             /* reclaim-dying jobs that finished (not dry-run) */
        uint64_t reclaim_scan_failures;    /* jobs that could not find the holders (scan error) */
        uint64_t reclaim_freed_bytes;      /* holders' usage before minus after, summed */
        usec_t reclaim_usec;               /* wall-clock time of the jobs (scan and writes) */
        uint64_t reclaim_outcomes[_RECLAIM_OUTCOME_MAX]; /* per subtree handled */
        uint64_t reclaim_refaults;         /* pages refaulted in the live cgroups of reclaimed subtrees, per closed window */
        uint64_t reclaim_refault_windows;  /* refault windows closed (reclaims measured) */
        bool has_last_refaults;            /* a window closed since start */
        uint64_t last_refaults;            /* of the last closed window */
        double last_refault_rate_max;      /* pages/s, the largest subtree of the last window */
        usec_t last_refault_window_usec;
        uint64_t refault_blocked;          /* subtrees skipped now for refaulting above max-refault-rate */
        int reclaim_swappiness;            /* memory.reclaim takes swappiness=: 1, 0, -1 unknown/not v2 */
        bool has_exits;                    /* the proc connector is open */
        uint64_t exits;                    /* process exits it counted */
        /* The policy set (docs/health.md): the last load, its time, the set's hash. */
        bool config_reload_ok;             /* the last load (start, SIGHUP, directory change) succeeded */
        usec_t config_reload_success_realtime_usec; /* CLOCK_REALTIME of the last successful load */
        char policy_hash[17];              /* policy_set_hash() of the set in use, "" unknown */
        uint64_t journal_held;             /* knobs whose originals the journal holds (0 in a dry run) */
        int crash_restore;                 /* a crashed predecessor's journal: CRASH_RESTORE_* */
} DaemonCounters;

/* pcptune_journal_crash_restore's states. */
enum {
        CRASH_RESTORE_NONE,                /* no crashed predecessor's journal */
        CRASH_RESTORE_PENDING,             /* one is there, not restored (a dry run does not restore) */
        CRASH_RESTORE_DONE,                /* restored at this start */
};
