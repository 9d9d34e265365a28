/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * /sys/kernel/debug/percpu_stats (CONFIG_PERCPU_STATS; kernel.md §4.2).
 * Reading it holds pcpu_lock with IRQs off for the whole output (3 ms with
 * 12k live allocations): callers read it rarely.
 */

typedef enum PercpuChunkKind {
        PERCPU_CHUNK_NORMAL,
        PERCPU_CHUNK_FIRST,
        PERCPU_CHUNK_RESERVED,
        PERCPU_CHUNK_TO_DEPOPULATE,
        PERCPU_CHUNK_SIDELINED,
        _PERCPU_CHUNK_MAX,
        _PERCPU_CHUNK_INVALID = -EINVAL,
} PercpuChunkKind;

typedef struct PercpuChunk {
        PercpuChunkKind kind;
        int64_t nr_alloc;
        int64_t max_alloc_size;     /* bytes */
        int64_t empty_pop_pages;    /* pages per unit */
        int64_t first_bit;
        int64_t free_bytes;         /* per unit */
        int64_t contig_bytes;       /* per unit */
        int64_t sum_frag;           /* bytes */
        int64_t max_frag;           /* bytes */
        int64_t cur_min_alloc;      /* bytes, sizes of the live allocations in this chunk */
        int64_t cur_med_alloc;      /* bytes */
        int64_t cur_max_alloc;      /* bytes */
} PercpuChunk;

typedef struct PercpuStats {
        /* Allocation Info (bytes) */
        int64_t unit_size, static_size, reserved_size, dyn_size, atom_size, alloc_size;
        /* Global Stats */
        int64_t nr_alloc, nr_dealloc, nr_cur_alloc, nr_max_alloc;
        int64_t nr_chunks, nr_max_chunks;
        int64_t min_alloc_size, max_alloc_size;
        int64_t empty_pop_pages;     /* pages per unit */
        PercpuChunk *chunks;
        size_t n_chunks;             /* chunk blocks found (may differ from nr_chunks: reported by the caller) */
} PercpuStats;

/*
 * Pure parser.  Required: the nine Global Stats values, and nr_alloc,
 * empty_pop_pages and free_bytes in each chunk; the Allocation Info values and
 * the other chunk values are -1 when absent.  Unknown keys and sections are
 * skipped; a "Chunk ..." header of an unknown state counts as NORMAL.
 * Returns 0, -EINVAL (malformed value, repeated key or section, value outside a
 * section, missing required key), -ENOMEM.  Release with percpu_stats_done().
 */
int percpu_stats_parse(const char *buf, size_t len, PercpuStats *ret);

/* Read <root>/sys/kernel/debug/percpu_stats and parse it.  0, -ENOENT (no debugfs or no
 * CONFIG_PERCPU_STATS), -EACCES/-EPERM (debugfs locked down), -EINVAL, -ENOMEM, -errno. */
int percpu_stats_read(const char *root, PercpuStats *ret);

/* Free the chunks; the struct is zeroed.  Accepts NULL. */
void percpu_stats_done(PercpuStats *s);

/* Summaries over chunks (per unit, bytes or pages). */
typedef struct PercpuSummary {
        int64_t chunks;
        int64_t empty_chunks;          /* nr_alloc == 0 */
        int64_t empty_pop_pages;       /* sum over chunks, pages per unit */
        int64_t free_bytes;            /* sum, per unit */
        int64_t to_depopulate;         /* chunk count */
        int64_t sidelined;             /* chunk count */
} PercpuSummary;

/* Sums over s->chunks (saturating); all zero for NULL. */
void percpu_stats_summarize(const PercpuStats *s, PercpuSummary *ret);
