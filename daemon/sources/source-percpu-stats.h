/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/*
 * /sys/kernel/debug/percpu_stats (CONFIG_PERCPU_STATS; mm/percpu-stats.c, 4.13+).
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

/*
 * Do Global Stats agree with the chunk sections?  mm/percpu-stats.c
 * (percpu_stats_show(), 6.1 and 6.12) prints both under pcpu_lock, so in a
 * real dump: nr_chunks = chunk sections other than the reserved chunk
 * (pcpu_stats_chunk_alloc() counts the first chunk and each created one);
 * nr_cur_alloc = the sum of the sections' nr_alloc; and, without a reserved
 * chunk, empty_pop_pages (pcpu_nr_empty_pop_pages) = the sum over chunks that
 * are not isolated (to_depopulate, sidelined: pcpu_isolate_chunk() takes
 * their pages out).  Kernels with the 5.12-era depopulation series counted
 * sidelined chunks they did not print.  Returns 0 when consistent, -EBADMSG
 * with what disagrees in `what` (one line) otherwise.
 */
int percpu_stats_check(const PercpuStats *s, char *what, size_t size);

/*
 * Fragmentation: free bytes per unit inside the populated pages that hold
 * allocations, in the first chunk and the dynamic ones (what contrib patch
 * 0003 counts as frag_free_bytes: neither the balance work nor depopulation
 * can return it).  percpu_stats does not print each chunk's populated pages,
 * but their sum follows from Percpu: pcpu_nr_pages() = pcpu_nr_populated x
 * units, and pcpu_nr_populated starts at PFN_DOWN(static + reserved + dyn)
 * for the first and reserved chunks (pcpu_setup_first_chunk(), mm/percpu.c,
 * 6.1 and 6.12) and grows by every dynamic chunk's populated pages.  So, per
 * unit:
 *   unpopulated = dynamic chunks x unit_size / page - (Percpu / units / page
 *                 - PFN_DOWN(static + reserved + dyn))
 *   frag        = free_bytes of the first and dynamic chunks - (unpopulated
 *                 + their empty_pop_pages) x page
 * percpu_bytes: Percpu read right after the dump; units: the allocator's
 * units (possible CPUs unless the contrib counters say).  0, -EINVAL (Allocation
 * Info missing), -ERANGE (Percpu is not whole pages per unit, or the counts do
 * not fit: the reads were apart while the allocator changed).
 */
int percpu_stats_frag_bytes(const PercpuStats *s, uint64_t percpu_bytes, unsigned units, unsigned page_size,
                            int64_t *ret_per_unit);

/*
 * What status and plan show of percpu_stats: read only where cheap.  Reading
 * holds pcpu_lock with IRQs off for the whole output; 6.1 and 6.12 make 6-8
 * percpu allocations per memcg (tests/fixtures/<6.x-vmtest>/memcg-*), and
 * 12k allocations cost 3 ms, so on the live host it is not read with more
 * than PERCPU_STATS_CHEAP_MEMCGS memcgs (about 5 ms).  A snapshot's copy is
 * always read.
 */
#define PERCPU_STATS_CHEAP_MEMCGS 2500

typedef struct PercpuStatsView {
        int error;                   /* 0: read; -errno: why not (-ENOENT: no debugfs or no CONFIG_PERCPU_STATS) */
        bool skipped;                /* not read: too costly (memcgs above the limit) */
        bool consistent;
        char inconsistency[192];
        PercpuSummary sum;
        int64_t frag_bytes;          /* per unit (percpu_stats_frag_bytes()), -1 when not known */
        int64_t unit_size;           /* bytes, -1 if not printed */
        usec_t read_usec;            /* the read's wall time (IRQs off for most of it); live reads only */
        bool live;
} PercpuStatsView;

/* Read, summarise and check <root>'s percpu_stats, and read meminfo right after it for the
 * fragmentation (units, page_size: see percpu_stats_frag_bytes()); live: root is the running host
 * (time it, skip when memcgs > PERCPU_STATS_CHEAP_MEMCGS).  Always fills ret. */
void percpu_stats_view_read(const char *root, bool live, uint64_t memcgs, unsigned units, unsigned page_size,
                            PercpuStatsView *ret);
