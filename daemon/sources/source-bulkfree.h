/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/*
 * pcp bulk frees measured through tracefs (pcptuned(8), BULK FREE HOLDS).
 *
 * free_pcppages_bulk() (mm/page_alloc.c, 5.14 - 6.18) moves pages from a pcp
 * list to the buddy allocator with zone->lock held and IRQs off, emitting
 * kmem:mm_page_pcpu_drain once per page or higher-order block.  Every page
 * freed emits kmem:mm_page_free first (free_pages_prepare()), before it can
 * enter a pcp list.  On one CPU a bulk free is a maximal run of
 * mm_page_pcpu_drain events of one task; any mm_page_free event of that CPU
 * ends it (a bulk free only starts once a freed page went onto the list).
 * Its hold is the span from its first to its last event: a lower bound of
 * the zone->lock hold (the time before the first page and after the last is
 * not seen), inflated by the tracing itself (one event per page inside the
 * lock, ~0.2 us each on the live host of tests/bench/exitstorm).  Its pages
 * are the sum of 1 << order over its events.
 *
 * The kernel on which this was written (6.18, locked down) has no kprobes,
 * fprobes or hist triggers, so this reads the events as text from a private
 * trace instance (instances/pcptune-<pid>); the global buffer, tracer and
 * events are never touched, and nothing is ever mounted.
 */

/* ---- the pure part: trace text -> events -> bulk frees -> percentiles ---- */

typedef enum BulkFreeEventKind {
        BULK_FREE_EVENT_NONE,     /* a header, a comment or another event */
        BULK_FREE_EVENT_DRAIN,    /* kmem:mm_page_pcpu_drain */
        BULK_FREE_EVENT_FREE,     /* kmem:mm_page_free */
        BULK_FREE_EVENT_LOST,     /* "CPU:N [LOST M EVENTS]" */
        _BULK_FREE_EVENT_MAX,
        _BULK_FREE_EVENT_INVALID = -EINVAL,
} BulkFreeEventKind;

#define BULK_FREE_MAX_CPUS 8192U   /* the kernel's NR_CPUS limit on x86-64 */
#define BULK_FREE_MAX_ORDER 20U    /* orders above are rejected (MAX_PAGE_ORDER is 10 on x86-64) */

typedef struct BulkFreeEvent {
        BulkFreeEventKind kind;
        unsigned cpu;             /* < BULK_FREE_MAX_CPUS */
        int pid;                  /* DRAIN/FREE */
        uint64_t ts_ns;           /* trace clock ("mono": CLOCK_MONOTONIC) in ns; the text has µs */
        unsigned order;           /* DRAIN/FREE, <= BULK_FREE_MAX_ORDER */
        uint64_t lost;            /* LOST: events lost */
} BulkFreeEvent;

/*
 * Parse one line of a trace instance's trace or trace_pipe (without the
 * newline), as the kernel prints it with the default options
 * (trace_print_context(), kernel/trace/trace_output.c):
 *   "  <comm>-<pid>  [<cpu>] <flags>  <sec>.<usec>: mm_page_pcpu_drain: page=... pfn=0x... order=0 migratetype=1"
 * (the flags column may be absent: older kernels print 4 flags, irq-info off
 * none) and "CPU:<cpu> [LOST <n> EVENTS]".  Anchored on the event name,
 * which a 15-character comm cannot contain, then read backwards.
 * Returns the kind (>= 0; NONE for anything else, *ret untouched) or
 * -EINVAL for a line naming one of our events that does not parse.
 */
int bulk_free_parse_line(const char *line, size_t len, BulkFreeEvent *ret);

typedef struct BulkFreeSpan {
        unsigned cpu;
        uint64_t pages;
        uint64_t first_ns, last_ns;   /* span = last - first */
} BulkFreeSpan;

typedef struct BulkFreeCpuState {
        bool open;          /* a run of drain events is in progress */
        bool skip;          /* discard the next run that completes (it may have started before tracing) */
        int pid;
        uint64_t pages, first_ns, last_ns;
} BulkFreeCpuState;

/* Groups events into bulk frees, per CPU; the state carries over between reads. */
typedef struct BulkFreeGrouper {
        BulkFreeCpuState *cpus;
        size_t n_cpus;
        uint64_t events;        /* drain events seen */
        uint64_t discarded;     /* runs dropped: cut by a LOST mark, a stop, or skipped after a start */
        uint64_t lost;          /* from LOST marks */
        bool skip_new;          /* CPUs first seen after a break with skip_next start skipping too */
} BulkFreeGrouper;

void bulk_free_grouper_done(BulkFreeGrouper *g);

/*
 * Feed one event.  Returns 1 and *ret_span when it completed a bulk free, 0
 * when not, -ENOMEM.  A drain event of another pid than the open run's, or
 * stamped before its last event, ends the run too (it cannot be the same
 * call).  LOST discards the open run of that CPU.
 */
int bulk_free_grouper_feed(BulkFreeGrouper *g, const BulkFreeEvent *ev, BulkFreeSpan *ret_span);

/*
 * Tracing stopped or (re)started: every open run is discarded (it may be cut),
 * and with skip_next the next run on every CPU is discarded too (tracing_on
 * may have been set in the middle of a bulk free).
 */
void bulk_free_grouper_break(BulkFreeGrouper *g, bool skip_next);

/*
 * Feed a whole buffer of trace text (complete lines; a trailing partial line
 * is left: *ret_used says how many bytes were consumed).  Each completed bulk
 * free goes to on_span (may be NULL).  Returns the number of lines that did
 * not parse (>= 0) or -ENOMEM.
 */
int bulk_free_feed_text(BulkFreeGrouper *g, const char *buf, size_t len, size_t *ret_used,
                        void (*on_span)(const BulkFreeSpan *span, void *userdata), void *userdata);

/* The bulk frees of the last window_usec, at most capacity of them (the oldest go first). */
typedef struct BulkFreeRecord {
        usec_t when;             /* CLOCK_MONOTONIC µs of its last event */
        uint32_t span_ns;        /* saturated at UINT32_MAX */
        uint32_t pages;          /* saturated */
} BulkFreeRecord;

typedef struct BulkFreeWindow {
        BulkFreeRecord *ring;
        size_t capacity, head, n;    /* n records end at head (exclusive), oldest at head - n */
        uint64_t total;              /* ever added */
} BulkFreeWindow;

/* 0 or -ENOMEM (capacity >= 1). */
int bulk_free_window_init(BulkFreeWindow *w, size_t capacity);
void bulk_free_window_done(BulkFreeWindow *w);
void bulk_free_window_add(BulkFreeWindow *w, const BulkFreeSpan *span);

typedef struct BulkFreeSummary {
        uint64_t samples;          /* bulk frees in the window */
        double p99_seconds;        /* nearest-rank p99 of the holds (0 without samples) */
        double max_seconds;
        uint64_t pages_p99;        /* nearest-rank p99 of pages per bulk free */
        uint64_t pages_max;
} BulkFreeSummary;

/* Copies the newest min(n, w->n) records, oldest first, into out; returns how many. */
size_t bulk_free_window_newest(const BulkFreeWindow *w, size_t n, BulkFreeRecord *out);

/* Summary of the records with when >= since.  0 or -ENOMEM. */
int bulk_free_window_summarize(const BulkFreeWindow *w, usec_t since, BulkFreeSummary *ret);

/* ---- the tracefs instance ---- */

typedef struct BulkFreeSource BulkFreeSource;

/*
 * The holds' histogram buckets (upper bounds, seconds): 1, 2.5 and 5 x 10^k
 * from 1 us to 0.5 s (docs/health.md, pcptune_pcp_bulk_free_hold_seconds);
 * +Inf is the count.
 */
#define BULK_FREE_HIST_BUCKETS 18
extern const double bulk_free_hist_bounds[BULK_FREE_HIST_BUCKETS];

/* Every hold measured since the start, by bucket (cumulative when exported). */
typedef struct BulkFreeHistogram {
        uint64_t buckets[BULK_FREE_HIST_BUCKETS];  /* holds in (bound[i-1], bound[i]], not cumulative */
        uint64_t count;                            /* every hold, the +Inf bucket included */
        double sum_seconds;
} BulkFreeHistogram;

/* Count one hold of span_ns nanoseconds. */
void bulk_free_histogram_add(BulkFreeHistogram *h, uint64_t span_ns);

typedef struct BulkFreeCounters {
        uint64_t windows;          /* times tracing was switched on */
        usec_t traced_usec;        /* time with tracing on */
        uint64_t events;           /* drain events read */
        uint64_t bulk_frees;       /* bulk frees measured */
        uint64_t discarded;        /* runs not measured (cut at a start, stop or loss) */
        uint64_t lost;             /* events the kernel dropped (buffer full) or overwrote */
        uint64_t bytes;            /* trace text read */
        unsigned free_shift;       /* mm_page_free recorded for 1 pfn in 2^free_shift */
        usec_t cost_usec;          /* CPU time (user + system) of reading and parsing, all reads */
        usec_t last_cost_usec;     /* of the last read */
        unsigned buffer_kb;        /* per CPU */
        BulkFreeHistogram hist;    /* every bulk free measured, by hold */
} BulkFreeCounters;

/*
 * Make the instance <tracefs>/instances/pcptune-<pid> below root ("/" only:
 * a fake root has no kernel behind it) and configure it: tracing off, clock
 * mono, no overwrite (a full buffer drops new events, counted), buffer_kb per
 * CPU, both events enabled.  Instances of earlier pcptuned whose process is
 * gone are removed first.  The tracefs mount is looked for at
 * /sys/kernel/tracing, then /sys/kernel/debug/tracing; never mounted.
 * 0, or -errno with a reason in why (e.g. -ENOENT "tracefs is not mounted").
 */
int bulk_free_source_new(const char *root, unsigned buffer_kb, unsigned free_shift, size_t window_capacity,
                         BulkFreeSource **ret, char *why, size_t why_size);

/*
 * Every freed page is an mm_page_free event, and an exit at the default
 * fraction first refills the pcp list by up to high_max pages (hundreds of
 * MiB) before any bulk free: those events would fill the buffer first.  Only
 * the pages whose pfn is a multiple of 2^free_shift are recorded (the
 * filter "!(pfn & mask)"): a free event only has to fall between two runs of
 * one CPU, between which at least batch pages are freed, so two runs merge
 * with probability about (1 - 2^-shift)^batch.  The shift for the smallest
 * batch of the populated zones (those above 1): 2^shift <= batch / 4, at most
 * 3, e.g. batch 63 gives 3, one event in 8, (7/8)^63 = 2e-4.
 */
unsigned bulk_free_free_shift(unsigned smallest_batch);

/* Disables the events and removes the instance.  Accepts NULL. */
BulkFreeSource *bulk_free_source_free(BulkFreeSource *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(BulkFreeSource *, bulk_free_source_free);

/* tracing_on = 1 / 0 in the instance.  stop reads what is left first.  0 or -errno. */
int bulk_free_source_start(BulkFreeSource *s);
int bulk_free_source_stop(BulkFreeSource *s);
bool bulk_free_source_tracing(const BulkFreeSource *s);

/*
 * Read what the buffer holds (trace_pipe, non-blocking, consuming; at most
 * max_bytes of text, the rest stays for the next read) and the per-CPU loss
 * counters.  Returns the number of bulk frees added (>= 0) or -errno.
 */
int bulk_free_source_read(BulkFreeSource *s, size_t max_bytes);

void bulk_free_source_counters(const BulkFreeSource *s, BulkFreeCounters *ret);
const BulkFreeWindow *bulk_free_source_window(const BulkFreeSource *s);

/* What status, JSON and the metrics show (report.c). */
typedef struct BulkFreeView {
        bool available;
        const char *why;             /* why not available (static or owned by the caller) */
        BulkFreeSummary sum;
        usec_t window_usec;          /* the metrics' window: bulk frees that ended in the last window_usec */
        BulkFreeCounters c;
} BulkFreeView;

/* The method, for status: how holds are measured. */
#define BULK_FREE_METHOD "tracefs text, kmem:mm_page_pcpu_drain spans"
