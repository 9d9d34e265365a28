/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /sys/kernel/debug/percpu_stats reader (mm/percpu-stats.c, percpu_stats_show(), 4.13+).
 * Values print as "  %-20s: %12lld" in three sections (Allocation Info,
 * Global Stats, Per Chunk Stats), chunks separated by blank lines and
 * introduced by a "Chunk..." header that tells the chunk's state.  Unknown
 * keys and unknown sections are accepted (open sets); a key line outside
 * any section, a malformed value, a repeated key or a missing required key
 * is -EINVAL.
 */
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>

#include "source-meminfo.h"
#include "source-percpu-stats.h"
#include "util.h"

typedef enum PsSection {
        PS_NONE,
        PS_ALLOC,
        PS_GLOBAL,
        PS_CHUNKS,      /* "Per Chunk Stats:" before the first chunk header */
        PS_CHUNK,
        PS_UNKNOWN,     /* a section this parser does not know: keys skipped */
} PsSection;

typedef struct PsKey {
        const char *name;
        size_t offset;
        bool required;
} PsKey;

#define ALLOC_KEY(n) { #n, offsetof(PercpuStats, n), false }
#define GLOBAL_KEY(n) { #n, offsetof(PercpuStats, n), true }
#define CHUNK_KEY(n, req) { #n, offsetof(PercpuChunk, n), req }

static const PsKey alloc_keys[] = {
        ALLOC_KEY(unit_size), ALLOC_KEY(static_size), ALLOC_KEY(reserved_size),
        ALLOC_KEY(dyn_size), ALLOC_KEY(atom_size), ALLOC_KEY(alloc_size),
};

static const PsKey global_keys[] = {
        GLOBAL_KEY(nr_alloc), GLOBAL_KEY(nr_dealloc), GLOBAL_KEY(nr_cur_alloc),
        GLOBAL_KEY(nr_max_alloc), GLOBAL_KEY(nr_chunks), GLOBAL_KEY(nr_max_chunks),
        GLOBAL_KEY(min_alloc_size), GLOBAL_KEY(max_alloc_size), GLOBAL_KEY(empty_pop_pages),
};

/* What percpu_stats_summarize() needs is required; the rest is -1 when absent. */
static const PsKey chunk_keys[] = {
        CHUNK_KEY(nr_alloc, true), CHUNK_KEY(max_alloc_size, false), CHUNK_KEY(empty_pop_pages, true),
        CHUNK_KEY(first_bit, false), CHUNK_KEY(free_bytes, true), CHUNK_KEY(contig_bytes, false),
        CHUNK_KEY(sum_frag, false), CHUNK_KEY(max_frag, false), CHUNK_KEY(cur_min_alloc, false),
        CHUNK_KEY(cur_med_alloc, false), CHUNK_KEY(cur_max_alloc, false),
};

typedef struct PsParser {
        PercpuStats s;
        size_t cap_chunks;
        PsSection section;
        unsigned sections_seen;   /* bit per PsSection */
        unsigned seen;            /* keys seen in the current block (alloc, global or chunk) */
        unsigned global_seen;
} PsParser;

static void ps_parser_done(PsParser *p) {
        free(p->s.chunks);
        p->s.chunks = NULL;
}

static bool ps_required_seen(const PsKey *keys, size_t n, unsigned seen) {
        for (size_t i = 0; i < n; i++)
                if (keys[i].required && !(seen & (1U << i)))
                        return false;
        return true;
}

/* Leave the current block: check what it requires. */
static int ps_close_block(PsParser *p) {
        switch (p->section) {
        case PS_GLOBAL:
                p->global_seen = p->seen;
                if (!ps_required_seen(global_keys, ELEMENTSOF(global_keys), p->seen))
                        return -EINVAL;
                break;
        case PS_CHUNK:
                if (!ps_required_seen(chunk_keys, ELEMENTSOF(chunk_keys), p->seen))
                        return -EINVAL;
                break;
        default:
                break;
        }
        p->seen = 0;
        return 0;
}

static int ps_enter_section(PsParser *p, PsSection section) {
        int r = ps_close_block(p);

        if (r < 0)
                return r;
        if (section != PS_UNKNOWN) {
                if (p->sections_seen & (1U << section))
                        return -EINVAL;     /* a section printed twice: concatenated dumps */
                p->sections_seen |= 1U << section;
        }
        p->section = section;
        return 0;
}

/* "Chunk: <- First Chunk", "Chunk (to_depopulate)", ...: the text after "Chunk". */
static int ps_chunk_kind(const char *p, const char *end, PercpuChunkKind *ret) {
        static const struct {
                const char *tail;
                PercpuChunkKind kind;
        } kinds[] = {
                { ":", PERCPU_CHUNK_NORMAL },
                { ": <- First Chunk", PERCPU_CHUNK_FIRST },
                { ": <- Reserved Chunk", PERCPU_CHUNK_RESERVED },
                { " (to_depopulate)", PERCPU_CHUNK_TO_DEPOPULATE },
                { " (to_depopulate):", PERCPU_CHUNK_TO_DEPOPULATE },
                { " (sidelined)", PERCPU_CHUNK_SIDELINED },
                { " (sidelined):", PERCPU_CHUNK_SIDELINED },
        };

        while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
                end--;
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++)
                if (strlen(kinds[i].tail) == (size_t) (end - p) && memcmp(kinds[i].tail, p, (size_t) (end - p)) == 0) {
                        *ret = kinds[i].kind;
                        return 0;
                }
        /* A state added by a later kernel: still a chunk, counted as a normal one. */
        if (p < end && (*p == ':' || *p == ' ' || *p == '(')) {
                *ret = PERCPU_CHUNK_NORMAL;
                return 0;
        }
        return -EINVAL;
}

static int ps_begin_chunk(PsParser *p, PercpuChunkKind kind) {
        PercpuChunk *c;
        int r;

        if (p->section != PS_CHUNKS && p->section != PS_CHUNK)
                return -EINVAL;     /* a chunk outside "Per Chunk Stats" */
        r = ps_close_block(p);
        if (r < 0)
                return r;

        if (p->s.n_chunks == p->cap_chunks) {
                size_t ncap = p->cap_chunks ? p->cap_chunks * 2 : 4;
                PercpuChunk *n = realloc(p->s.chunks, ncap * sizeof(PercpuChunk));
                if (!n)
                        return -ENOMEM;
                p->s.chunks = n;
                p->cap_chunks = ncap;
        }
        c = &p->s.chunks[p->s.n_chunks++];
        *c = (PercpuChunk) { .kind = kind };
        for (size_t i = 0; i < ELEMENTSOF(chunk_keys); i++)
                *(int64_t *) ((char *) c + chunk_keys[i].offset) = -1;
        p->section = PS_CHUNK;
        return 0;
}

/* "  key   :   value" */
static int ps_key_line(PsParser *p, const char *line, const char *end) {
        const char *k = skip_blanks(line, end), *k_end = k, *v;
        const PsKey *keys;
        size_t n_keys, klen;
        char *base;
        int64_t value;

        while (k_end < end && *k_end != ' ' && *k_end != '\t' && *k_end != ':')
                k_end++;
        klen = (size_t) (k_end - k);
        v = skip_blanks(k_end, end);
        if (klen == 0 || v >= end || *v != ':')
                return -EINVAL;
        v++;
        if (scan_i64(&v, end, &value) < 0 || skip_blanks(v, end) != end)
                return -EINVAL;

        switch (p->section) {
        case PS_ALLOC:
                keys = alloc_keys, n_keys = ELEMENTSOF(alloc_keys), base = (char *) &p->s;
                break;
        case PS_GLOBAL:
                keys = global_keys, n_keys = ELEMENTSOF(global_keys), base = (char *) &p->s;
                break;
        case PS_CHUNK:
                keys = chunk_keys, n_keys = ELEMENTSOF(chunk_keys), base = (char *) &p->s.chunks[p->s.n_chunks - 1];
                break;
        case PS_UNKNOWN:
                return 0;
        default:
                return -EINVAL;     /* a value outside any section or before the first chunk */
        }

        for (size_t i = 0; i < n_keys; i++) {
                if (strlen(keys[i].name) != klen || memcmp(keys[i].name, k, klen) != 0)
                        continue;
                if (p->seen & (1U << i))
                        return -EINVAL;
                p->seen |= 1U << i;
                *(int64_t *) (base + keys[i].offset) = value;
                return 0;
        }
        return 0;                   /* unknown key: an open set */
}

static bool ps_is_rule(const char *p, const char *end) {
        if (p == end)
                return false;
        for (; p < end; p++)
                if (*p != '-')
                        return false;
        return true;
}

static int ps_line(PsParser *p, const char *line, size_t len) {
        const char *end = line + len;

        while (end > line && (end[-1] == ' ' || end[-1] == '\t'))
                end--;
        len = (size_t) (end - line);

        if (len == 0 || ps_is_rule(line, end))
                return 0;
        if (line[0] == ' ' || line[0] == '\t')
                return ps_key_line(p, line, end);

        if (len >= 5 && memcmp(line, "Chunk", 5) == 0) {
                PercpuChunkKind kind;
                if (ps_chunk_kind(line + 5, end, &kind) < 0)
                        return -EINVAL;
                return ps_begin_chunk(p, kind);
        }
        if (line_has_key(line, len, "Percpu Memory Statistics", ""))
                return 0;
        if (line_has_key(line, len, "Allocation Info:", ""))
                return ps_enter_section(p, PS_ALLOC);
        if (line_has_key(line, len, "Global Stats:", ""))
                return ps_enter_section(p, PS_GLOBAL);
        if (line_has_key(line, len, "Per Chunk Stats:", ""))
                return ps_enter_section(p, PS_CHUNKS);
        if (line[len - 1] == ':')
                return ps_enter_section(p, PS_UNKNOWN);
        return -EINVAL;
}

int percpu_stats_parse(const char *buf, size_t len, PercpuStats *ret) {
        _cleanup_(ps_parser_done) PsParser p = {};
        const char *pos, *end, *line;
        size_t line_len;
        int r;

        if (!buf || !ret)
                return -EINVAL;
        pos = buf;
        end = buf + len;

        for (size_t i = 0; i < ELEMENTSOF(alloc_keys); i++)
                *(int64_t *) ((char *) &p.s + alloc_keys[i].offset) = -1;

        while (next_line(&pos, end, &line, &line_len)) {
                r = ps_line(&p, line, line_len);
                if (r < 0)
                        return r;
        }
        r = ps_close_block(&p);
        if (r < 0)
                return r;
        if (!ps_required_seen(global_keys, ELEMENTSOF(global_keys), p.global_seen))
                return -EINVAL;

        *ret = p.s;
        p.s.chunks = NULL;
        return 0;
}

int percpu_stats_read(const char *root, PercpuStats *ret) {
        _cleanup_(freep) char *buf = NULL;
        size_t len;
        int r;

        r = read_file_at(root, "/sys/kernel/debug/percpu_stats", READ_FILE_MAX, &buf, &len);
        if (r < 0)
                return r;
        return percpu_stats_parse(buf, len, ret);
}

void percpu_stats_done(PercpuStats *s) {
        if (!s)
                return;
        free(s->chunks);
        *s = (PercpuStats) {};
}

/* Sums saturate: the values come from a text file, not from a trusted kernel. */
static int64_t add_sat(int64_t a, int64_t b) {
        int64_t r;

        if (__builtin_add_overflow(a, b, &r))
                return b > 0 ? INT64_MAX : INT64_MIN;
        return r;
}

void percpu_stats_summarize(const PercpuStats *s, PercpuSummary *ret) {
        PercpuSummary sum = {};

        if (!ret)
                return;
        if (s)
                for (size_t i = 0; i < s->n_chunks; i++) {
                        const PercpuChunk *c = &s->chunks[i];

                        sum.chunks++;
                        if (c->nr_alloc == 0)
                                sum.empty_chunks++;
                        sum.empty_pop_pages = add_sat(sum.empty_pop_pages, c->empty_pop_pages);
                        sum.free_bytes = add_sat(sum.free_bytes, c->free_bytes);
                        if (c->kind == PERCPU_CHUNK_TO_DEPOPULATE)
                                sum.to_depopulate++;
                        else if (c->kind == PERCPU_CHUNK_SIDELINED)
                                sum.sidelined++;
                }
        *ret = sum;
}

int percpu_stats_check(const PercpuStats *s, char *what, size_t size) {
        int64_t sections = 0, reserved = 0, cur = 0, empty = 0;
        size_t l = 0;

        what[0] = 0;
        for (size_t i = 0; i < s->n_chunks; i++) {
                const PercpuChunk *c = &s->chunks[i];
                sections++;
                reserved += c->kind == PERCPU_CHUNK_RESERVED;
                cur = add_sat(cur, c->nr_alloc);
                if (c->kind != PERCPU_CHUNK_TO_DEPOPULATE && c->kind != PERCPU_CHUNK_SIDELINED)
                        empty = add_sat(empty, c->empty_pop_pages);
        }
        if (s->nr_chunks != sections - reserved)
                l += (size_t) snprintf(what + l, size - l, "Global Stats nr_chunks %" PRId64 ", chunk sections %" PRId64,
                                       s->nr_chunks, sections - reserved);
        if (l < size && s->nr_cur_alloc != cur)
                l += (size_t) snprintf(what + l, size - l, "%snr_cur_alloc %" PRId64 ", chunks' nr_alloc sum %" PRId64,
                                       l ? "; " : "", s->nr_cur_alloc, cur);
        if (l < size && reserved == 0 && s->empty_pop_pages != empty)
                snprintf(what + l, size - l, "%sempty_pop_pages %" PRId64 ", chunks' sum %" PRId64, l ? "; " : "",
                         s->empty_pop_pages, empty);
        return what[0] ? -EBADMSG : 0;
}

int percpu_stats_frag_bytes(const PercpuStats *s, uint64_t percpu_bytes, unsigned units, unsigned page_size,
                            int64_t *ret_per_unit) {
        int64_t page = page_size, first_pages, pop, dyn_pages = 0, unpop, free = 0, empty = 0, frag;
        uint64_t per_unit;

        if (s->static_size < 0 || s->reserved_size < 0 || s->dyn_size < 0 || s->unit_size <= 0 || units == 0 ||
            page_size == 0 || s->unit_size % page != 0 || s->static_size > INT64_MAX / 4 ||
            s->reserved_size > INT64_MAX / 4 || s->dyn_size > INT64_MAX / 4)
                return -EINVAL;
        if (percpu_bytes % ((uint64_t) units * page_size) != 0)
                return -ERANGE;
        per_unit = percpu_bytes / units / page_size;
        first_pages = (s->static_size + s->reserved_size + s->dyn_size) / page;
        if (per_unit > INT64_MAX / 2 || (int64_t) per_unit < first_pages)
                return -ERANGE;
        pop = (int64_t) per_unit - first_pages;              /* populated pages of the dynamic chunks */
        for (size_t i = 0; i < s->n_chunks; i++) {
                const PercpuChunk *c = &s->chunks[i];
                if (c->kind == PERCPU_CHUNK_RESERVED)
                        continue;
                if (c->free_bytes < 0 || c->empty_pop_pages < 0 || c->free_bytes > s->unit_size ||
                    c->empty_pop_pages > s->unit_size / page)
                        return -ERANGE;
                free += c->free_bytes;
                empty += c->empty_pop_pages;
                if (c->kind != PERCPU_CHUNK_FIRST)
                        dyn_pages += s->unit_size / page;
        }
        unpop = dyn_pages - pop;
        if (unpop < 0)
                return -ERANGE;
        frag = free - (unpop + empty) * page;
        if (frag < 0)
                return -ERANGE;
        *ret_per_unit = frag;
        return 0;
}

void percpu_stats_view_read(const char *root, bool live, uint64_t memcgs, unsigned units, unsigned page_size,
                            PercpuStatsView *ret) {
        PercpuStatsView v = { .live = live, .unit_size = -1, .frag_bytes = -1 };
        PercpuStats st = { 0 };
        Meminfo mi;
        usec_t t0;

        if (live && memcgs > PERCPU_STATS_CHEAP_MEMCGS) {
                v.skipped = true;
                *ret = v;
                return;
        }
        t0 = now_usec(CLOCK_MONOTONIC);
        v.error = percpu_stats_read(root, &st);
        if (live)
                v.read_usec = now_usec(CLOCK_MONOTONIC) - t0;
        if (v.error >= 0) {
                v.error = 0;
                percpu_stats_summarize(&st, &v.sum);
                v.consistent = percpu_stats_check(&st, v.inconsistency, sizeof v.inconsistency) >= 0;
                v.unit_size = st.unit_size;
                if (v.consistent && meminfo_read(root, &mi) >= 0 && mi.has_percpu &&
                    percpu_stats_frag_bytes(&st, mi.percpu_kib * 1024, units, page_size, &v.frag_bytes) < 0)
                        v.frag_bytes = -1;
        }
        percpu_stats_done(&st);
        *ret = v;
}
