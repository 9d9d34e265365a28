/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "act-reclaim.h"
#include "act-sysctl.h"
#include "report.h"
#include "util.h"

/*
 * Prometheus metrics, written after every sample as a file in the directory
 * node_exporter's textfile collector reads (Prometheus text exposition format
 * 0.0.4; node_exporter serves it, nothing of ours listens on a socket).
 *
 * What is exported is a table of PromMetric rows (export-prom.c): name, type,
 * base unit, label names, help, and a getter that reads the same data the
 * status report uses (ReportInput: snapshot, policy metric values, policy set,
 * plan, knob, kernel features) plus what the daemon counts across samples
 * (DaemonCounters, PromKnob).  A new metric is one row (and, when it needs a
 * number nothing holds yet, one field where that number is computed).
 * Label sets are bounded: knobs, policy rules, zones, outcomes, never a cgroup
 * or a CPU.
 */

/* The directory Debian's prometheus-node-exporter reads (its default --collector.textfile.directory). */
#define PROM_DIR_DEFAULT "/var/lib/prometheus/node-exporter"
/* The file's default name (--metrics-file NAME changes it); the collector reads *.prom files only, so the
 * temporary name (".NAME.tmp") is ignored. */
#define PROM_FILE "pcptune.prom"
#define PROM_FILE_TMP ".pcptune.prom.tmp"

#define PROM_LABELS_MAX 3

typedef enum PromType {
        PROM_GAUGE,
        PROM_COUNTER,
        PROM_HISTOGRAM,            /* <name>_bucket{le}, <name>_sum, <name>_count: prom_emit_histogram() */
        _PROM_TYPE_MAX,
        _PROM_TYPE_INVALID = -EINVAL,
} PromType;

const char *prom_type_to_string(PromType t);

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

typedef struct PromInput {
        const ReportInput *report;         /* required: report->snap, report->mv; set/plan may be NULL */
        const PromKnob *knobs;
        size_t n_knobs;
        const DaemonCounters *counters;    /* required */
        const char *version;               /* PACKAGE_VERSION */
} PromInput;

typedef struct PromEmit PromEmit;

typedef struct PromMetric {
        const char *name;                  /* pcptune_<what>[_<base unit>][_total] */
        PromType type;
        const char *unit;                  /* base unit for pcptuned(8): "bytes", "seconds", "pages", "ratio", "" */
        const char *labels[PROM_LABELS_MAX + 1]; /* label names, NULL-terminated */
        const char *help;                  /* one line */
        /* Emit this metric's samples: prom_emit() once per label combination, none when unavailable. */
        void (*get)(const PromInput *in, PromEmit *e);
} PromMetric;

/* The table, for tests and `pcptuned --list-metrics`.  Returns the number of rows. */
size_t prom_metrics(const PromMetric **ret);

/*
 * One sample of the metric being rendered: value, then one label value (const
 * char *, any bytes; escaped here) per label name of the row, in order.  The
 * first sample of a metric writes its # HELP and # TYPE lines.
 */
void prom_emit(PromEmit *e, double value, ...);

/*
 * A histogram without labels but le: n upper bounds (seconds, ascending, +Inf
 * added here) with the number of observations at most each (cumulative),
 * their sum and count.
 */
void prom_emit_histogram(PromEmit *e, const double *bounds, const uint64_t *cumulative, size_t n, double sum,
                         uint64_t count);

/*
 * Render every metric of the table in the text format to f.  Metrics without
 * samples (unavailable here) are left out entirely.  0, or -EIO when writing
 * to f failed, -EINVAL when a row emitted a non-finite counter.
 */
int prom_render(const PromInput *in, FILE *f);

/*
 * The textfile writer.  The directory is the operator's (--metrics-dir), opened
 * once; everything after is relative to that descriptor: the temporary file is
 * created with O_EXCL|O_NOFOLLOW and mode 0644, written, then renamed over
 * pcptune.prom (rename replaces a symlink of that name, never follows it).
 * The directory is flock()ed so that two pcptuned (a dry-run beside the
 * service) do not overwrite and remove each other's file.
 */
typedef struct PromWriter PromWriter;

/* 0; -ENOENT/-ENOTDIR when dir does not exist (never created); -EBUSY when another
 * process holds the lock; other -errno from open(). */
int prom_writer_open(const char *dir, PromWriter **ret);

/*
 * The same for the file name (--metrics-file: a plain file name ending in
 * ".prom", no '/', not hidden: prom_file_name_valid()).  The default name locks
 * the directory as above; another name writes without that lock (one
 * pcptuned per name: a canary beside the service).  -EINVAL for a bad name.
 */
int prom_writer_open_name(const char *dir, const char *name, PromWriter **ret);

/* Is name a metrics file's name: [A-Za-z0-9_.-], not starting with '.', ending in ".prom", < 128 bytes. */
bool prom_file_name_valid(const char *name);

/* The file's name (PROM_FILE unless given). */
const char *prom_writer_name(const PromWriter *w);

/* Render in and replace the file atomically.  0 or -errno (nothing replaced then). */
int prom_writer_write(PromWriter *w, const PromInput *in);

/* Remove pcptune.prom (so node_exporter serves no stale values).  0 or -errno (-ENOENT ignored). */
int prom_writer_remove(PromWriter *w);

const char *prom_writer_dir(const PromWriter *w);

/* Close the directory (the file stays: call prom_writer_remove() first on a clean stop).  NULL-safe. */
PromWriter *prom_writer_free(PromWriter *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(PromWriter *, prom_writer_free);
