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
/* The file's fixed name; the collector reads *.prom files only, so the temporary name is ignored. */
#define PROM_FILE "pcptune.prom"
#define PROM_FILE_TMP ".pcptune.prom.tmp"

#define PROM_LABELS_MAX 3

typedef enum PromType {
        PROM_GAUGE,
        PROM_COUNTER,
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

/* Render in and replace the file atomically.  0 or -errno (nothing replaced then). */
int prom_writer_write(PromWriter *w, const PromInput *in);

/* Remove pcptune.prom (so node_exporter serves no stale values).  0 or -errno (-ENOENT ignored). */
int prom_writer_remove(PromWriter *w);

const char *prom_writer_dir(const PromWriter *w);

/* Close the directory (the file stays: call prom_writer_remove() first on a clean stop).  NULL-safe. */
PromWriter *prom_writer_free(PromWriter *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(PromWriter *, prom_writer_free);
