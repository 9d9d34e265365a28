/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "act-counters.h"
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
 * Only one writer per directory, so that two pcptuned (a dry-run beside the
 * service, daemons on two roots) do not overwrite and remove each other's file:
 * the writer holds a flock() on LOCK_DIR/metrics-DEV-INO.lock (the directory's
 * st_dev and st_ino in decimal: a name from numbers, never from input), a file
 * created 0600 by root, which another user cannot open, hence cannot hold.
 * When another pcptuned holds it, every write tries again (nothing is written
 * or removed meanwhile); the holder unlinks it on a clean stop, and a lock
 * taken on a file that was unlinked meanwhile is dropped and tried again.
 */
typedef struct PromWriter PromWriter;

/* Where the metrics locks live: the host's runtime directory of pcptune, whatever --root and --state-dir
 * (the metrics directory is a host path; the systemd unit's RuntimeDirectory). */
#define PROM_LOCK_DIR "/run/pcptune"

/*
 * prom_writer_open() for another file name (--metrics-file: a plain file name
 * ending in ".prom", no '/', not hidden: prom_file_name_valid()).  Its lock is
 * lock_dir/metrics-DEV-INO-NAME.lock, so one pcptuned writes each name (a
 * canary's own file beside the service's).  -EINVAL for a bad name, else as
 * prom_writer_open().
 */
int prom_writer_open_name(const char *dir, const char *name, const char *lock_dir, PromWriter **ret);

/* Is name a metrics file's name: [A-Za-z0-9_.-], not starting with '.', ending in ".prom", < 128 bytes. */
bool prom_file_name_valid(const char *name);

/* The file's name (PROM_FILE unless given). */
const char *prom_writer_name(const PromWriter *w);

/* 0; -ENOENT/-ENOTDIR when dir does not exist (never created); other -errno from open().  The lock
 * is not taken here but at each write, in lock_dir (created 0755 if missing; PROM_LOCK_DIR in the
 * daemon, a test's directory in tests). */
int prom_writer_open(const char *dir, const char *lock_dir, PromWriter **ret);

/* Take the lock if not held yet: 0, -EBUSY (another process holds it), -EPERM (the lock file is not a
 * regular file of ours), other -errno of mkdir/open/flock. */
int prom_writer_lock(PromWriter *w);

/* The lock file's path (for messages). */
const char *prom_writer_lock_path(const PromWriter *w);

/* Take the lock (prom_writer_lock()), render in and replace the file atomically.  0 or -errno (nothing
 * replaced then; -EBUSY: another pcptuned writes the directory). */
int prom_writer_write(PromWriter *w, const PromInput *in);

/* Remove pcptune.prom (so node_exporter serves no stale values) and the lock file, if we hold the lock
 * (else nothing: the file is another pcptuned's).  0 or -errno (-ENOENT ignored). */
int prom_writer_remove(PromWriter *w);

const char *prom_writer_dir(const PromWriter *w);

/* Close the directory (the file stays: call prom_writer_remove() first on a clean stop).  NULL-safe. */
PromWriter *prom_writer_free(PromWriter *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(PromWriter *, prom_writer_free);
