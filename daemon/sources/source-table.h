/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include "snapshot.h"

/*
 * The source table: one row per reader of kernel state, naming the files it
 * reads below the root.  snapshot_take*() runs the readers of a sample in
 * table order; `pcptunectl snapshot` (capture.c) copies every row's files
 * (and what a row's capture hook writes), so a snapshot holds what the
 * readers need.  A new source is its reader (source-*.c) plus one row here.
 */
#define SOURCE_FILES_MAX 16

typedef struct SourceFile {
        const char *path;      /* below the root; a segment may be a fnmatch(3) pattern ("node[0-9]*") */
        bool required;         /* `pcptunectl snapshot` fails without it */
} SourceFile;

typedef struct SourceDesc {
        const char *name;
        /* Fill the row's part of s.  prev non-NULL: copy it from there instead of reading (only rows
         * whose reuse flag the caller named).  A required row returns -errno and sets err->file (err is
         * never NULL); an optional row records its absence in s and returns 0.  NULL: the row's files
         * are read by others, outside a sample (read_by says who). */
        int (*read)(const char *root, const Snapshot *prev, Snapshot *s, SnapshotError *err);
        bool required;                 /* a sample fails without it */
        unsigned reuse;                /* SNAPSHOT_REUSE_* that copies it from the last sample; 0: never */
        const char *read_by;           /* for rows without read: the reader and why it is not in a sample */
        SourceFile files[SOURCE_FILES_MAX];
        bool knob_files;               /* it also reads the path of every row of the knob table (knob.h) */
        /* What the tree cannot carry (the page size, memcg counts): the text of record_file, a file
         * below the root that the reader takes instead where it exists.  -ENODATA: nothing to record
         * on this host; other -errno fail the capture.  NULL: nothing. */
        const char *record_file;
        int (*record)(const char *root, char **ret_text);
} SourceDesc;

/* The row of id; NULL out of range. */
const SourceDesc *source_desc(SourceId id);

/*
 * Call fn(f, userdata) for each file the row reads: its files[], then with
 * knob_files one (optional) file per row of the knob table, in KnobId order.
 * 0 or the first negative return of fn.
 */
int source_desc_foreach_file(const SourceDesc *d, int (*fn)(const SourceFile *f, void *userdata), void *userdata);

/*
 * Expand a row file's pattern below root and call fn(rel, userdata) for each
 * existing match (rel: the path below root, without root).  A path without
 * a pattern is passed as is, whether it exists or not.  0, the first
 * negative return of fn, or -ENOMEM.
 */
int source_file_expand(const char *root, const char *pattern, int (*fn)(const char *rel, void *userdata),
                       void *userdata);

/*
 * Read every source of the source table (source-table.h) below root.  0 or
 * -errno of a required source.  Release with snapshot_free().
 */
int snapshot_take(const char *root, Snapshot **ret);

/*
 * Read only some sources (a mask of SOURCE_BIT(SourceId)) into a snapshot
 * whose other parts stay zero, and without the derived fields (regime, pcp
 * zones): a fresh look at a few counters, e.g. dying memcgs and Percpu just
 * before and after a reclaim.  0, -errno of a required source in the mask.
 */
int snapshot_take_sources(const char *root, unsigned sources, Snapshot **ret);

/* Like snapshot_take(), reusing what flags name from prev (if prev is NULL, everything is read). */
int snapshot_take_reuse(const char *root, const Snapshot *prev, unsigned flags, Snapshot **ret);

/* snapshot_take_reuse() that fills err (may be NULL) when a required source fails. */
int snapshot_take_explain(const char *root, const Snapshot *prev, unsigned flags, Snapshot **ret, SnapshotError *err);

/*
 * "Failed to read ...: ROOT/proc/zoneinfo:12: Invalid argument"-style text for
 * a failed snapshot: the file below root, the line, the reason.  Returns buf.
 */
const char *snapshot_error_format(const char *root, const SnapshotError *err, int error, char *buf, size_t size);
