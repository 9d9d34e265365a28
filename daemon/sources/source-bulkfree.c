/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "source-bulkfree.h"

#define EV_DRAIN "mm_page_pcpu_drain"
#define EV_FREE "mm_page_free"
#define INSTANCE_PREFIX "pcptune-"
#define READ_CHUNK ((size_t) 64 * 1024)

/* ---- parsing ---------------------------------------------------------- */

static const char *find_mem(const char *hay, size_t len, const char *needle) {
        size_t n = strlen(needle);
        if (n == 0 || len < n)
                return NULL;
        for (const char *p = hay; (p = memchr(p, needle[0], (size_t) (hay + len - p) - n + 1)); p++) {
                if (memcmp(p, needle, n) == 0)
                        return p;
                if (p + n >= hay + len)
                        break;
        }
        return NULL;
}

/* "CPU:<cpu> [LOST <n> EVENTS]" (print_trace_line() in kernel/trace/trace.c). */
static int parse_lost(const char *line, size_t len, BulkFreeEvent *ret) {
        const char *p = line + 4, *end = line + len;
        uint64_t cpu, n;

        if (scan_u64(&p, end, &cpu) < 0 || cpu >= BULK_FREE_MAX_CPUS)
                return -EINVAL;
        if ((size_t) (end - p) < 7 || memcmp(p, " [LOST ", 7) != 0)
                return -EINVAL;
        p += 7;
        if (scan_u64(&p, end, &n) < 0 || (size_t) (end - p) != 8 || memcmp(p, " EVENTS]", 8) != 0)
                return -EINVAL;
        *ret = (BulkFreeEvent){ .kind = BULK_FREE_EVENT_LOST, .cpu = (unsigned) cpu, .lost = n, .pid = -1 };
        return BULK_FREE_EVENT_LOST;
}

/* Digits ending right before *pp (exclusive), going backwards: 0 and the value, or -EINVAL. */
static int scan_back_u64(const char *start, const char **pp, uint64_t *ret) {
        const char *e = *pp, *p = e;
        while (p > start && is_ascii_digit(p[-1]))
                p--;
        if (p == e || e - p > 19)
                return -EINVAL;
        const char *q = p;
        if (scan_u64(&q, e, ret) < 0 || q != e)
                return -EINVAL;
        *pp = p;
        return 0;
}

int bulk_free_parse_line(const char *line, size_t len, BulkFreeEvent *ret) {
        static const struct {
                const char *marker;
                BulkFreeEventKind kind;
        } events[] = {
                { ": " EV_DRAIN ": ", BULK_FREE_EVENT_DRAIN },
                { ": " EV_FREE ": ", BULK_FREE_EVENT_FREE },
        };
        const char *m = NULL, *end = line + len, *p;
        BulkFreeEventKind kind = BULK_FREE_EVENT_NONE;
        BulkFreeEvent ev = { .pid = -1 };
        uint64_t v, sec, frac;

        if (!line)
                return -EINVAL;
        if (len >= 4 && memcmp(line, "CPU:", 4) == 0)
                return parse_lost(line, len, ret);
        for (size_t i = 0; i < ELEMENTSOF(events) && !m; i++)
                if ((m = find_mem(line, len, events[i].marker)))
                        kind = events[i].kind;
        if (!m)
                return BULK_FREE_EVENT_NONE;
        ev.kind = kind;

        /* Backwards from the marker: "<sec>.<frac>" */
        p = m;
        if (scan_back_u64(line, &p, &frac) < 0)
                return -EINVAL;
        size_t frac_digits = (size_t) (m - p);
        if (frac_digits > 9 || p == line || p[-1] != '.')
                return -EINVAL;
        p--;
        if (scan_back_u64(line, &p, &sec) < 0 || sec > UINT64_MAX / 1000000000ULL - 1)
                return -EINVAL;
        for (size_t i = frac_digits; i < 9; i++)
                frac *= 10;
        ev.ts_ns = sec * 1000000000ULL + frac;
        /* blanks, then optionally the flags column ("d..3." / "d..3"), blanks, then "[<cpu>]" */
        while (p > line && p[-1] == ' ')
                p--;
        if (p > line && p[-1] != ']') {
                const char *f = p;
                while (p > line && p[-1] != ' ' && p[-1] != ']')
                        p--;
                if (f - p > 8)
                        return -EINVAL;
                while (p > line && p[-1] == ' ')
                        p--;
        }
        if (p == line || p[-1] != ']')
                return -EINVAL;
        p--;
        if (scan_back_u64(line, &p, &v) < 0 || v >= BULK_FREE_MAX_CPUS || p == line || p[-1] != '[')
                return -EINVAL;
        ev.cpu = (unsigned) v;
        p--;
        while (p > line && p[-1] == ' ')
                p--;
        /* "<comm>-<pid>" */
        if (scan_back_u64(line, &p, &v) < 0 || v > INT_MAX || p == line || p[-1] != '-')
                return -EINVAL;
        ev.pid = (int) v;

        /* Forwards from the marker: " order=<n>" */
        const char *o = find_mem(m, (size_t) (end - m), " order=");
        if (!o)
                return -EINVAL;
        o += 7;
        if (scan_u64(&o, end, &v) < 0 || v > BULK_FREE_MAX_ORDER || (o < end && *o != ' '))
                return -EINVAL;
        ev.order = (unsigned) v;
        *ret = ev;
        return kind;
}

/* ---- grouping --------------------------------------------------------- */

void bulk_free_grouper_done(BulkFreeGrouper *g) {
        if (!g)
                return;
        free(g->cpus);
        *g = (BulkFreeGrouper){ 0 };
}

static BulkFreeCpuState *grouper_cpu(BulkFreeGrouper *g, unsigned cpu) {
        if (cpu >= BULK_FREE_MAX_CPUS)
                return NULL;
        if (cpu >= g->n_cpus) {
                size_t n = MAX((size_t) cpu + 1, g->n_cpus * 2);
                n = MIN(n, (size_t) BULK_FREE_MAX_CPUS);
                BulkFreeCpuState *c = realloc(g->cpus, n * sizeof(*c));
                if (!c)
                        return NULL;
                for (size_t i = g->n_cpus; i < n; i++)
                        c[i] = (BulkFreeCpuState){ .skip = g->skip_new };
                g->cpus = c;
                g->n_cpus = n;
        }
        return &g->cpus[cpu];
}

/* Ends the open run of c; 1 and *ret when it counts. */
static int grouper_close(BulkFreeGrouper *g, BulkFreeCpuState *c, unsigned cpu, BulkFreeSpan *ret) {
        if (!c->open)
                return 0;
        c->open = false;
        if (c->skip) {
                c->skip = false;
                g->discarded++;
                return 0;
        }
        *ret = (BulkFreeSpan){ .cpu = cpu, .pages = c->pages, .first_ns = c->first_ns, .last_ns = c->last_ns };
        return 1;
}

int bulk_free_grouper_feed(BulkFreeGrouper *g, const BulkFreeEvent *ev, BulkFreeSpan *ret_span) {
        BulkFreeCpuState *c;
        BulkFreeSpan span;
        int r = 0;

        if (!g || !ev || ev->kind <= BULK_FREE_EVENT_NONE || ev->kind >= _BULK_FREE_EVENT_MAX)
                return 0;
        c = grouper_cpu(g, ev->cpu);
        if (!c)
                return ev->cpu >= BULK_FREE_MAX_CPUS ? 0 : -ENOMEM;
        switch (ev->kind) {
        case BULK_FREE_EVENT_LOST:
                g->lost += ev->lost;
                if (c->open)
                        g->discarded++;
                c->open = false;
                c->skip = false;
                return 0;
        case BULK_FREE_EVENT_FREE:
                r = grouper_close(g, c, ev->cpu, &span);
                break;
        case BULK_FREE_EVENT_DRAIN:
                g->events++;
                if (c->open && (c->pid != ev->pid || ev->ts_ns < c->last_ns))
                        r = grouper_close(g, c, ev->cpu, &span);
                if (!c->open) {
                        *c = (BulkFreeCpuState){ .open = true, .skip = c->skip, .pid = ev->pid, .first_ns = ev->ts_ns };
                }
                c->pages += 1ULL << MIN(ev->order, BULK_FREE_MAX_ORDER);
                c->last_ns = ev->ts_ns;
                break;
        default:
                return 0;
        }
        if (r > 0)
                *ret_span = span;
        return r;
}

void bulk_free_grouper_break(BulkFreeGrouper *g, bool skip_next) {
        if (g)
                g->skip_new = skip_next;
        for (size_t i = 0; g && i < g->n_cpus; i++) {
                if (g->cpus[i].open)
                        g->discarded++;
                g->cpus[i].open = false;
                g->cpus[i].skip = skip_next;
        }
}

int bulk_free_feed_text(BulkFreeGrouper *g, const char *buf, size_t len, size_t *ret_used,
                        void (*on_span)(const BulkFreeSpan *span, void *userdata), void *userdata) {
        const char *p = buf, *end = buf + len;
        int bad = 0;

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                if (!nl)
                        break;
                BulkFreeEvent ev;
                BulkFreeSpan span;
                int k = bulk_free_parse_line(p, (size_t) (nl - p), &ev);
                p = nl + 1;
                if (k < 0) {
                        bad++;
                        continue;
                }
                if (k == BULK_FREE_EVENT_NONE)
                        continue;
                int r = bulk_free_grouper_feed(g, &ev, &span);
                if (r < 0)
                        return r;
                if (r > 0 && on_span)
                        on_span(&span, userdata);
        }
        if (ret_used)
                *ret_used = (size_t) (p - buf);
        return bad;
}

/* ---- the window ------------------------------------------------------- */

int bulk_free_window_init(BulkFreeWindow *w, size_t capacity) {
        *w = (BulkFreeWindow){ 0 };
        if (capacity < 1)
                return -EINVAL;
        w->ring = calloc(capacity, sizeof(BulkFreeRecord));
        if (!w->ring)
                return -ENOMEM;
        w->capacity = capacity;
        return 0;
}

void bulk_free_window_done(BulkFreeWindow *w) {
        if (!w)
                return;
        free(w->ring);
        *w = (BulkFreeWindow){ 0 };
}

void bulk_free_window_add(BulkFreeWindow *w, const BulkFreeSpan *span) {
        if (!w || !w->ring)
                return;
        uint64_t d = span->last_ns >= span->first_ns ? span->last_ns - span->first_ns : 0;
        w->ring[w->head] = (BulkFreeRecord){
                .when = span->last_ns / NSEC_PER_USEC,
                .span_ns = (uint32_t) MIN(d, (uint64_t) UINT32_MAX),
                .pages = (uint32_t) MIN(span->pages, (uint64_t) UINT32_MAX),
        };
        w->head = (w->head + 1) % w->capacity;
        w->n = MIN(w->n + 1, w->capacity);
        w->total++;
}

size_t bulk_free_window_newest(const BulkFreeWindow *w, size_t n, BulkFreeRecord *out) {
        if (!w || !w->ring)
                return 0;
        n = MIN(n, w->n);
        for (size_t i = 0; i < n; i++)
                out[i] = w->ring[(w->head + w->capacity - n + i) % w->capacity];
        return n;
}

static int cmp_u32(const void *a, const void *b) {
        uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
        return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest value with at least p% of the samples at or below it. */
static uint32_t rank_sorted(const uint32_t *v, size_t n, unsigned pct) {
        size_t k = (n * pct + 99) / 100;
        return v[CLAMP(k, (size_t) 1, n) - 1];
}

int bulk_free_window_summarize(const BulkFreeWindow *w, usec_t since, BulkFreeSummary *ret) {
        _cleanup_(freep) uint32_t *spans = NULL, *pages = NULL;
        size_t n = 0;

        *ret = (BulkFreeSummary){ 0 };
        if (!w || w->n == 0)
                return 0;
        spans = malloc(w->n * sizeof(uint32_t));
        pages = malloc(w->n * sizeof(uint32_t));
        if (!spans || !pages)
                return -ENOMEM;
        for (size_t i = 0; i < w->n; i++) {
                const BulkFreeRecord *r = &w->ring[(w->head + w->capacity - w->n + i) % w->capacity];
                if (r->when < since)
                        continue;
                spans[n] = r->span_ns;
                pages[n] = r->pages;
                n++;
        }
        if (n == 0)
                return 0;
        qsort(spans, n, sizeof(uint32_t), cmp_u32);
        qsort(pages, n, sizeof(uint32_t), cmp_u32);
        *ret = (BulkFreeSummary){
                .samples = n,
                .p99_seconds = (double) rank_sorted(spans, n, 99) / 1e9,
                .max_seconds = (double) spans[n - 1] / 1e9,
                .pages_p99 = rank_sorted(pages, n, 99),
                .pages_max = pages[n - 1],
        };
        return 0;
}

/* ---- the instance ----------------------------------------------------- */

typedef struct CpuLoss {
        unsigned cpu;
        uint64_t seen;       /* overrun + dropped events at the last read */
} CpuLoss;

struct BulkFreeSource {
        char *dir;                   /* the instance */
        int pipe_fd;                 /* its trace_pipe, O_NONBLOCK */
        bool tracing;
        usec_t started;
        BulkFreeGrouper grouper;
        BulkFreeWindow window;
        CpuLoss *cpus;
        size_t n_cpus;
        char *partial;               /* an incomplete last line of the previous read */
        size_t n_partial;
        BulkFreeCounters c;
};

static int instance_write(const BulkFreeSource *s, const char *rel, const char *value) {
        _cleanup_(freep) char *p = NULL;
        if (asprintf(&p, "%s/%s", s->dir, rel) < 0)
                return -ENOMEM;
        return write_file_at("/", p, value);
}

/* Instances of earlier pcptuned processes that are gone (a SIGKILL, a crash). */
static void remove_stale_instances(const char *tracefs) {
        _cleanup_(freep) char *dir = NULL;
        DIR *d;

        if (asprintf(&dir, "%s/instances", tracefs) < 0 || !(d = opendir(dir)))
                return;
        for (struct dirent *de; (de = readdir(d));) {
                int64_t pid;
                if (!strneq(de->d_name, INSTANCE_PREFIX, strlen(INSTANCE_PREFIX)) ||
                    parse_int64(de->d_name + strlen(INSTANCE_PREFIX), &pid) < 0 || pid <= 0 || pid > INT_MAX ||
                    pid == getpid())
                        continue;
                if (kill((pid_t) pid, 0) == 0 || errno != ESRCH)
                        continue;
                _cleanup_(freep) char *p = NULL;
                if (asprintf(&p, "%s/%s", dir, de->d_name) >= 0)
                        (void) rmdir(p);
        }
        closedir(d);
}

static int list_cpus(BulkFreeSource *s) {
        _cleanup_(freep) char *dir = NULL;
        DIR *d;

        if (asprintf(&dir, "%s/per_cpu", s->dir) < 0)
                return -ENOMEM;
        d = opendir(dir);
        if (!d)
                return -errno;
        for (struct dirent *de; (de = readdir(d));) {
                int64_t cpu;
                if (!strneq(de->d_name, "cpu", 3) || parse_int64(de->d_name + 3, &cpu) < 0 || cpu < 0 ||
                    cpu >= BULK_FREE_MAX_CPUS)
                        continue;
                CpuLoss *n = realloc(s->cpus, (s->n_cpus + 1) * sizeof(CpuLoss));
                if (!n) {
                        closedir(d);
                        return -ENOMEM;
                }
                s->cpus = n;
                s->cpus[s->n_cpus++] = (CpuLoss){ .cpu = (unsigned) cpu };
        }
        closedir(d);
        return s->n_cpus > 0 ? 0 : -ENOENT;
}

/* "overrun: N" + "dropped events: N" of per_cpu/cpuN/stats (tracing_stats_read(), kernel/trace/trace.c). */
static uint64_t cpu_loss_read(const BulkFreeSource *s, unsigned cpu) {
        _cleanup_(freep) char *p = NULL, *text = NULL;
        size_t len;
        uint64_t total = 0;

        if (asprintf(&p, "%s/per_cpu/cpu%u/stats", s->dir, cpu) < 0 || read_file_at("/", p, 4096, &text, &len) < 0)
                return 0;
        const char *pos = text, *end = text + len, *line;
        size_t n;
        while (next_line(&pos, end, &line, &n)) {
                const char *v = NULL;
                if (line_has_key(line, n, "overrun:", " "))
                        v = line + 8;
                else if (line_has_key(line, n, "dropped", " ") && n > 15 && memcmp(line, "dropped events:", 15) == 0)
                        v = line + 15;
                uint64_t x;
                if (v && scan_u64(&v, line + n, &x) >= 0)
                        total += x;
        }
        return total;
}

BulkFreeSource *bulk_free_source_free(BulkFreeSource *s) {
        if (!s)
                return NULL;
        if (s->pipe_fd >= 0)
                close(s->pipe_fd);
        if (s->dir) {
                (void) instance_write(s, "tracing_on", "0");
                (void) instance_write(s, "events/kmem/" EV_DRAIN "/enable", "0");
                (void) instance_write(s, "events/kmem/" EV_FREE "/enable", "0");
                /* rmdir gives EBUSY while a reader still holds a file of the instance open. */
                for (int i = 0; i < 50 && rmdir(s->dir) < 0 && errno == EBUSY; i++)
                        (void) nanosleep(&(struct timespec){ 0, 20 * 1000 * 1000 }, NULL);
        }
        bulk_free_grouper_done(&s->grouper);
        bulk_free_window_done(&s->window);
        free(s->cpus);
        free(s->partial);
        free(s->dir);
        free(s);
        return NULL;
}

unsigned bulk_free_free_shift(unsigned smallest_batch) {
        unsigned shift = 0;
        while (shift < 3 && (2U << shift) <= smallest_batch / 4)
                shift++;
        return shift;
}

int bulk_free_source_new(const char *root, unsigned buffer_kb, unsigned free_shift, size_t window_capacity,
                         BulkFreeSource **ret, char *why, size_t why_size) {
        static const char *const mounts[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
        _cleanup_(bulk_free_source_freep) BulkFreeSource *s = NULL;
        const char *tracefs = NULL;
        char val[32], filter[48];
        int r;

        if (root && !streq(root, "/")) {
                snprintf(why, why_size, "measured on the live host only (--root is set)");
                return -EOPNOTSUPP;
        }
        for (size_t i = 0; i < ELEMENTSOF(mounts) && !tracefs; i++) {
                _cleanup_(freep) char *p = NULL;
                if (asprintf(&p, "%s/instances", mounts[i]) < 0)
                        return -ENOMEM;
                if (access(p, F_OK) == 0)
                        tracefs = mounts[i];
        }
        if (!tracefs) {
                snprintf(why, why_size, "tracefs is not mounted at %s (pcptuned never mounts it)", mounts[0]);
                return -ENOENT;
        }
        {
                _cleanup_(freep) char *p = NULL;
                if (asprintf(&p, "%s/events/kmem/%s/enable", tracefs, EV_DRAIN) < 0)
                        return -ENOMEM;
                if (access(p, F_OK) < 0) {
                        snprintf(why, why_size, "no kmem:%s event in %s", EV_DRAIN, tracefs);
                        return -ENOENT;
                }
        }
        remove_stale_instances(tracefs);

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->pipe_fd = -EBADF;
        r = bulk_free_window_init(&s->window, window_capacity);
        if (r < 0)
                return r;
        if (asprintf(&s->dir, "%s/instances/" INSTANCE_PREFIX "%d", tracefs, (int) getpid()) < 0) {
                s->dir = NULL;
                return -ENOMEM;
        }
        if (mkdir(s->dir, 0700) < 0) {
                r = -errno;
                snprintf(why, why_size, "cannot make the trace instance %s: %s", s->dir, errno_str(r));
                free(s->dir);
                s->dir = NULL;
                return r;
        }
        /* A new instance records from the start: stop it before anything else. */
        snprintf(val, sizeof val, "%u", buffer_kb);
        if ((r = instance_write(s, "tracing_on", "0")) < 0 || (r = instance_write(s, "trace_clock", "mono")) < 0 ||
            (r = instance_write(s, "options/overwrite", "0")) < 0 ||
            (r = instance_write(s, "buffer_size_kb", val)) < 0 ||
            (free_shift > 0 &&
             (snprintf(filter, sizeof filter, "!(pfn & %u)", (1U << MIN(free_shift, 8U)) - 1),
              (r = instance_write(s, "events/kmem/" EV_FREE "/filter", filter)) < 0)) ||
            (r = instance_write(s, "events/kmem/" EV_DRAIN "/enable", "1")) < 0 ||
            (r = instance_write(s, "events/kmem/" EV_FREE "/enable", "1")) < 0) {
                snprintf(why, why_size, "cannot configure the trace instance %s: %s", s->dir, errno_str(r));
                return r;
        }
        r = list_cpus(s);
        if (r < 0) {
                snprintf(why, why_size, "no per_cpu directory in the trace instance %s: %s", s->dir, errno_str(r));
                return r;
        }
        for (size_t i = 0; i < s->n_cpus; i++)
                s->cpus[i].seen = cpu_loss_read(s, s->cpus[i].cpu);
        {
                _cleanup_(freep) char *p = NULL;
                if (asprintf(&p, "%s/trace_pipe", s->dir) < 0)
                        return -ENOMEM;
                s->pipe_fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
                if (s->pipe_fd < 0) {
                        r = -errno;
                        snprintf(why, why_size, "cannot open %s: %s", p, errno_str(r));
                        return r;
                }
        }
        s->c.buffer_kb = buffer_kb;
        s->c.free_shift = free_shift;
        *ret = TAKE_PTR(s);
        return 0;
}

bool bulk_free_source_tracing(const BulkFreeSource *s) {
        return s && s->tracing;
}

int bulk_free_source_start(BulkFreeSource *s) {
        if (s->tracing)
                return 0;
        int r = instance_write(s, "tracing_on", "1");
        if (r < 0)
                return r;
        bulk_free_grouper_break(&s->grouper, true);
        s->tracing = true;
        s->started = now_usec(CLOCK_MONOTONIC);
        s->c.windows++;
        return 0;
}

int bulk_free_source_stop(BulkFreeSource *s) {
        if (!s->tracing)
                return 0;
        int r = instance_write(s, "tracing_on", "0");
        s->tracing = false;
        s->c.traced_usec += now_usec(CLOCK_MONOTONIC) - s->started;
        int q = bulk_free_source_read(s, SIZE_MAX);
        bulk_free_grouper_break(&s->grouper, false);
        return r < 0 ? r : q < 0 ? q : 0;
}

const double bulk_free_hist_bounds[BULK_FREE_HIST_BUCKETS] = {
        1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 0.5,
};

void bulk_free_histogram_add(BulkFreeHistogram *h, uint64_t span_ns) {
        /* Compared in ns: the bounds are whole nanoseconds, so no rounding puts a hold in the wrong bucket. */
        static const uint64_t bounds_ns[BULK_FREE_HIST_BUCKETS] = {
                1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2500000, 5000000,
                10000000, 25000000, 50000000, 100000000, 250000000, 500000000,
        };
        for (size_t i = 0; i < BULK_FREE_HIST_BUCKETS; i++)
                if (span_ns <= bounds_ns[i]) {
                        h->buckets[i]++;
                        break;
                }
        h->count++;
        h->sum_seconds += (double) span_ns / 1e9;
}

static void on_span(const BulkFreeSpan *span, void *userdata) {
        BulkFreeSource *s = userdata;
        bulk_free_window_add(&s->window, span);
        s->c.bulk_frees++;
        bulk_free_histogram_add(&s->c.hist, span->last_ns >= span->first_ns ? span->last_ns - span->first_ns : 0);
}

int bulk_free_source_read(BulkFreeSource *s, size_t max_bytes) {
        usec_t cpu0 = now_usec(CLOCK_THREAD_CPUTIME_ID);
        uint64_t before = s->c.bulk_frees, discarded0 = s->grouper.discarded, events0 = s->grouper.events;
        size_t total = 0;
        int r = 0;

        _cleanup_(freep) char *buf = malloc(READ_CHUNK + s->n_partial);
        if (!buf)
                return -ENOMEM;
        while (total < max_bytes) {
                size_t have = s->n_partial;
                if (have)
                        memcpy(buf, s->partial, have);
                ssize_t k = read(s->pipe_fd, buf + have, READ_CHUNK);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno != EAGAIN)
                                r = -errno;
                        break;
                }
                if (k == 0)
                        break;
                total += (size_t) k;
                size_t used = 0;
                int q = bulk_free_feed_text(&s->grouper, buf, have + (size_t) k, &used, on_span, s);
                if (q < 0) {
                        r = q;
                        break;
                }
                s->n_partial = have + (size_t) k - used;
                if (s->n_partial > READ_CHUNK) /* a line longer than 64 KiB is not a trace line: drop it */
                        s->n_partial = 0;
                char *np = realloc(s->partial, MAX(s->n_partial, (size_t) 1));
                if (!np) {
                        r = -ENOMEM;
                        break;
                }
                s->partial = np;
                memcpy(s->partial, buf + used, s->n_partial);
                char *nb = realloc(buf, READ_CHUNK + s->n_partial);
                if (!nb) {
                        r = -ENOMEM;
                        break;
                }
                buf = nb;
        }
        /* Loss: where a CPU's buffer filled, its open run is cut and the next may start mid-way. */
        for (size_t i = 0; i < s->n_cpus; i++) {
                uint64_t now = cpu_loss_read(s, s->cpus[i].cpu);
                if (now > s->cpus[i].seen) {
                        s->c.lost += now - s->cpus[i].seen;
                        BulkFreeEvent ev = { .kind = BULK_FREE_EVENT_LOST, .cpu = s->cpus[i].cpu };
                        BulkFreeSpan unused;
                        (void) bulk_free_grouper_feed(&s->grouper, &ev, &unused);
                        if (s->cpus[i].cpu < s->grouper.n_cpus)
                                s->grouper.cpus[s->cpus[i].cpu].skip = true;
                }
                s->cpus[i].seen = now;
        }
        /* LOST marks (overwrite mode, not ours) only cut runs: the stats files are what counts. */
        s->grouper.lost = 0;
        s->c.events += s->grouper.events - events0;
        s->c.discarded += s->grouper.discarded - discarded0;
        s->c.bytes += total;
        s->c.last_cost_usec = now_usec(CLOCK_THREAD_CPUTIME_ID) - cpu0;
        s->c.cost_usec += s->c.last_cost_usec;
        return r < 0 ? r : (int) MIN(s->c.bulk_frees - before, (uint64_t) INT_MAX);
}

void bulk_free_source_counters(const BulkFreeSource *s, BulkFreeCounters *ret) {
        *ret = s->c;
        if (s->tracing)
                ret->traced_usec += now_usec(CLOCK_MONOTONIC) - s->started;
}

const BulkFreeWindow *bulk_free_source_window(const BulkFreeSource *s) {
        return &s->window;
}
