/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /proc/zoneinfo reader (mm/vmstat.c, zoneinfo_show_print()).
 *
 * This runs on every sample and the file is ~1 MiB on a 512-CPU, 8-node
 * host, so the parser is a single pass over the buffer with a small state
 * machine per zone: no per-line allocation, no sscanf, the per-CPU arrays
 * grow geometrically and start at the size of the previous populated zone
 * (every populated zone prints the same online CPUs).
 *
 * A zone block, and what the parser does with each part:
 *
 *   Node N, zone NAME            new zone (the previous one is checked)
 *     per-node stats             skipped up to "pages free" (open set)
 *     pages free / boost / min / low / high / promo / spanned / present /
 *     managed / cma / protection: watermarks: the keys we use are required,
 *                                 unknown ones skipped, protection ends them
 *       <zone stats>             skipped up to "pagesets" (open set)
 *     pagesets                   only in populated zones
 *       cpu: N / count: / high: / batch: [/ high_min: / high_max:]
 *     vm stats threshold: ...    skipped
 *     node_unreclaimable:, start_pfn:, and later additions: the trailer
 *
 * Keys are the first word after the indentation, compared whole.
 */
#include <limits.h>

#include "source-zoneinfo.h"
#include "util.h"

typedef enum ZiState {
        ZI_START,        /* before the first "Node" line */
        ZI_HEADER,       /* after "Node N, zone X" */
        ZI_NODE_STATS,   /* after "per-node stats" */
        ZI_WMARKS,       /* after "pages free" */
        ZI_ZONE_STATS,   /* after "protection:" */
        ZI_PAGESETS,     /* after "pagesets" */
        ZI_TRAILER,      /* after the last CPU sub-block */
} ZiState;

/* Zone keys, as bits of ZiParser.zone_seen. */
enum {
        ZK_FREE       = 1U << 0,
        ZK_BOOST      = 1U << 1,
        ZK_MIN        = 1U << 2,
        ZK_LOW        = 1U << 3,
        ZK_HIGH       = 1U << 4,
        ZK_SPANNED    = 1U << 5,
        ZK_PRESENT    = 1U << 6,
        ZK_MANAGED    = 1U << 7,
        ZK_PROTECTION = 1U << 8,
        ZK_PAGESETS   = 1U << 9,
        ZK_START_PFN  = 1U << 10,
        ZK_REQUIRED   = ZK_FREE | ZK_MIN | ZK_LOW | ZK_HIGH | ZK_SPANNED | ZK_PRESENT | ZK_MANAGED | ZK_PROTECTION,
};

/* Per-CPU keys, as bits of ZiParser.cpu_seen. */
enum {
        CK_COUNT    = 1U << 0,
        CK_HIGH     = 1U << 1,
        CK_BATCH    = 1U << 2,
        CK_HIGH_MIN = 1U << 3,
        CK_HIGH_MAX = 1U << 4,
        CK_OPEN     = 1U << 5,      /* a "cpu:" sub-block is open */
        CK_REQUIRED = CK_COUNT | CK_HIGH | CK_BATCH,
};

typedef struct ZiParser {
        Zone *zones;
        size_t n_zones, cap_zones;
        size_t cap_cpus;        /* capacity of the current zone's cpus[] */
        size_t cpu_hint;        /* n_cpus of the last populated zone */
        ZiState state;
        unsigned zone_seen;
        unsigned cpu_seen;      /* 0: no CPU sub-block open, else CK_OPEN | keys seen */
        int layout;             /* -1 unknown, 0: count/high/batch, 1: + high_min/high_max */
        size_t line_no;         /* of the line being parsed (1-based) */
        size_t zone_line;       /* of the current zone's "Node" line */
} ZiParser;

#define TOKEN_IS(tok, tlen, lit) ((tlen) == sizeof(lit) - 1 && memcmp((tok), (lit), sizeof(lit) - 1) == 0)

static void zi_free_zones(Zone *zones, size_t n) {
        if (!zones)
                return;
        for (size_t i = 0; i < n; i++)
                free(zones[i].cpus);
        free(zones);
}

static void zi_parser_done(ZiParser *z) {
        zi_free_zones(z->zones, z->n_zones);
        z->zones = NULL;
        z->n_zones = 0;
}

/* The character ending a token, or 0 at the end of the line (the buffer may not be NUL-terminated). */
static char zi_delim(const char *tok_end, const char *end) {
        return tok_end < end ? *tok_end : 0;
}

/* The word at p: up to a blank, ':' or the end of the line. */
static const char *zi_token(const char *p, const char *end) {
        while (p < end && *p != ' ' && *p != ':' && *p != '\t')
                p++;
        return p;
}

/* The value after a key: blanks, an unsigned number, blanks, end of line. */
static int zi_value_u64(const char *p, const char *end, uint64_t *ret) {
        if (scan_u64(&p, end, ret) < 0)
                return -EINVAL;
        return skip_blanks(p, end) == end ? 0 : -EINVAL;
}

/* The value after "key:": ':', blanks, a signed number, blanks, end of line. */
static int zi_value_colon_i64(const char *p, const char *end, int64_t *ret) {
        if (p >= end || *p != ':')
                return -EINVAL;
        p++;
        if (scan_i64(&p, end, ret) < 0)
                return -EINVAL;
        return skip_blanks(p, end) == end ? 0 : -EINVAL;
}

/* Close the open CPU sub-block, if any: required keys and one layout for the whole file. */
static int zi_finish_cpu(ZiParser *z) {
        unsigned seen = z->cpu_seen;
        bool has_min, has_max;
        int layout;

        if (seen == 0)
                return 0;
        z->cpu_seen = 0;
        if ((seen & CK_REQUIRED) != CK_REQUIRED)
                return -EINVAL;
        has_min = seen & CK_HIGH_MIN;
        has_max = seen & CK_HIGH_MAX;
        if (has_min != has_max)
                return -EINVAL;
        layout = has_min ? 1 : 0;
        if (z->layout < 0)
                z->layout = layout;
        else if (z->layout != layout)
                return -EINVAL;
        return 0;
}

/* Check the zone just completed. */
static int zi_finish_zone(ZiParser *z) {
        Zone *zone;
        int r;

        if (z->n_zones == 0)
                return 0;
        zone = &z->zones[z->n_zones - 1];

        r = zi_finish_cpu(z);
        if (r < 0)
                return r;
        if ((z->zone_seen & ZK_REQUIRED) != ZK_REQUIRED)
                return -EINVAL;

        /* Guaranteed by the kernel (memblock/zone init); a violation means corrupt input. */
        if (zone->managed_pages > zone->present_pages || zone->present_pages > zone->spanned_pages)
                return -EINVAL;

        /* The kernel prints pagesets exactly for populated zones (present_pages != 0),
         * each with every online CPU and a trailer; anything else is truncated or corrupt. */
        zone->populated = z->zone_seen & ZK_PAGESETS;
        if (zone->populated != (zone->present_pages != 0))
                return -EINVAL;
        if (zone->populated) {
                if (zone->n_cpus == 0 || !(z->zone_seen & ZK_START_PFN))
                        return -EINVAL;
                z->cpu_hint = zone->n_cpus;
        }
        return 0;
}

/* "Node <nid>, zone <name>" */
static int zi_begin_zone(ZiParser *z, const char *p, const char *end) {
        const char *name, *name_end;
        uint64_t nid;
        Zone *zone;
        int r;

        r = zi_finish_zone(z);
        if (r < 0)
                return r;

        p += strlen("Node");
        if (p >= end || *p != ' ')
                return -EINVAL;
        if (scan_u64(&p, end, &nid) < 0 || nid > INT_MAX)
                return -EINVAL;
        if (end - p < 6 || memcmp(p, ", zone", 6) != 0)
                return -EINVAL;
        p += 6;
        name = skip_blanks(p, end);
        if (name == p)
                return -EINVAL;
        /* Zone names are printable ASCII words (zone_names[] in mm/page_alloc.c). */
        name_end = name;
        while (name_end < end && *name_end > ' ' && *name_end < 0x7f)
                name_end++;
        if (name_end == name || (size_t) (name_end - name) >= ZONE_NAME_MAX || skip_blanks(name_end, end) != end)
                return -EINVAL;

        if (z->n_zones == z->cap_zones) {
                size_t ncap = z->cap_zones ? z->cap_zones * 2 : 8;
                Zone *n = realloc(z->zones, ncap * sizeof(Zone));
                if (!n)
                        return -ENOMEM;
                z->zones = n;
                z->cap_zones = ncap;
        }
        zone = &z->zones[z->n_zones++];
        *zone = (Zone) { .node = (int) nid };
        memcpy(zone->name, name, (size_t) (name_end - name));
        zone->name[name_end - name] = 0;

        z->zone_seen = 0;
        z->cpu_seen = 0;
        z->cap_cpus = 0;
        z->state = ZI_HEADER;
        return 0;
}

/* "pages free <n>": tok_end is the end of "pages". */
static int zi_pages_free(ZiParser *z, const char *tok_end, const char *end) {
        Zone *zone = &z->zones[z->n_zones - 1];
        const char *w = skip_blanks(tok_end, end), *w_end = zi_token(w, end);

        if (!TOKEN_IS(w, (size_t) (w_end - w), "free"))
                return -EINVAL;
        if (zi_value_u64(w_end, end, &zone->free_pages) < 0)
                return -EINVAL;
        z->zone_seen |= ZK_FREE;
        z->state = ZI_WMARKS;
        return 0;
}

static int zi_wmark_line(ZiParser *z, const char *tok, size_t tlen, const char *tok_end, const char *end) {
        Zone *zone = &z->zones[z->n_zones - 1];
        uint64_t *dst;
        unsigned bit;

        if (zi_delim(tok_end, end) == ':') {
                if (TOKEN_IS(tok, tlen, "protection")) {
                        if (z->zone_seen & ZK_PROTECTION)
                                return -EINVAL;
                        z->zone_seen |= ZK_PROTECTION;
                        z->state = ZI_ZONE_STATS;
                }
                return 0;       /* unknown "key:" lines: an open set */
        }

        if (tlen == 0)
                return 0;
        switch (tok[0]) {
        case 'b':
                if (!TOKEN_IS(tok, tlen, "boost"))
                        return 0;
                dst = &zone->boost_pages, bit = ZK_BOOST;
                break;
        case 'm':
                if (TOKEN_IS(tok, tlen, "min"))
                        dst = &zone->min_pages, bit = ZK_MIN;
                else if (TOKEN_IS(tok, tlen, "managed"))
                        dst = &zone->managed_pages, bit = ZK_MANAGED;
                else
                        return 0;
                break;
        case 'l':
                if (!TOKEN_IS(tok, tlen, "low"))
                        return 0;
                dst = &zone->low_pages, bit = ZK_LOW;
                break;
        case 'h':
                if (!TOKEN_IS(tok, tlen, "high"))
                        return 0;
                dst = &zone->high_pages, bit = ZK_HIGH;
                break;
        case 's':
                if (!TOKEN_IS(tok, tlen, "spanned"))
                        return 0;
                dst = &zone->spanned_pages, bit = ZK_SPANNED;
                break;
        case 'p':
                if (!TOKEN_IS(tok, tlen, "present"))
                        return 0;
                dst = &zone->present_pages, bit = ZK_PRESENT;
                break;
        default:
                return 0;       /* promo (6.12+), cma (6.1+) and later additions */
        }
        if (z->zone_seen & bit)
                return -EINVAL;
        if (zi_value_u64(tok_end, end, dst) < 0)
                return -EINVAL;
        z->zone_seen |= bit;
        return 0;
}

static int zi_cpu_begin(ZiParser *z, const char *tok_end, const char *end) {
        Zone *zone = &z->zones[z->n_zones - 1];
        int64_t id;
        int r;

        r = zi_finish_cpu(z);
        if (r < 0)
                return r;
        if (zi_value_colon_i64(tok_end, end, &id) < 0 || id < 0 || id > INT_MAX)
                return -EINVAL;
        /* for_each_online_cpu() is ascending: a repeated or decreasing id is corrupt input. */
        if (zone->n_cpus > 0 && id <= zone->cpus[zone->n_cpus - 1].cpu)
                return -EINVAL;

        if (zone->n_cpus == z->cap_cpus) {
                size_t ncap = z->cap_cpus ? z->cap_cpus * 2 : MAX(z->cpu_hint, (size_t) 4);
                PcpCpu *n = realloc(zone->cpus, ncap * sizeof(PcpCpu));
                if (!n)
                        return -ENOMEM;
                zone->cpus = n;
                z->cap_cpus = ncap;
        }
        zone->cpus[zone->n_cpus++] = (PcpCpu) {
                .cpu = (int) id,
                .high_min = -1,
                .high_max = -1,
        };
        z->cpu_seen = CK_OPEN;
        return 0;
}

/* A line in the pagesets: 1 if consumed, 0 if it is not a CPU line (the trailer starts). */
static int zi_pageset_line(ZiParser *z, const char *tok, size_t tlen, const char *tok_end, const char *end) {
        Zone *zone = &z->zones[z->n_zones - 1];
        PcpCpu *cpu;
        int64_t *dst;
        unsigned bit;

        if (zi_delim(tok_end, end) != ':') {
                /* "vm stats threshold: N" follows every CPU sub-block (CONFIG_SMP). */
                return TOKEN_IS(tok, tlen, "vm") ? 1 : 0;
        }
        if (TOKEN_IS(tok, tlen, "cpu")) {
                int r = zi_cpu_begin(z, tok_end, end);
                return r < 0 ? r : 1;
        }

        if (TOKEN_IS(tok, tlen, "count"))
                bit = CK_COUNT;
        else if (TOKEN_IS(tok, tlen, "high"))
                bit = CK_HIGH;
        else if (TOKEN_IS(tok, tlen, "batch"))
                bit = CK_BATCH;
        else if (TOKEN_IS(tok, tlen, "high_min"))
                bit = CK_HIGH_MIN;
        else if (TOKEN_IS(tok, tlen, "high_max"))
                bit = CK_HIGH_MAX;
        else
                return 0;

        if (z->cpu_seen == 0 || (z->cpu_seen & bit))
                return -EINVAL;     /* a per-CPU value outside a "cpu:" block, or repeated */
        cpu = &zone->cpus[zone->n_cpus - 1];
        switch (bit) {
        case CK_COUNT:
                dst = &cpu->count;
                break;
        case CK_HIGH:
                dst = &cpu->high;
                break;
        case CK_BATCH:
                dst = &cpu->batch;
                break;
        case CK_HIGH_MIN:
                dst = &cpu->high_min;
                break;
        default:
                dst = &cpu->high_max;
                break;
        }
        if (zi_value_colon_i64(tok_end, end, dst) < 0)
                return -EINVAL;
        z->cpu_seen |= bit;
        return 1;
}

static int zi_trailer_line(ZiParser *z, const char *tok, size_t tlen, const char *tok_end, const char *end) {
        uint64_t v;

        if (zi_delim(tok_end, end) != ':')
                return 0;
        if (TOKEN_IS(tok, tlen, "cpu"))
                return -EINVAL;         /* CPU sub-blocks end before the trailer */
        if (TOKEN_IS(tok, tlen, "start_pfn")) {
                if (z->zone_seen & ZK_START_PFN)
                        return -EINVAL;
                if (zi_value_u64(tok_end + 1, end, &v) < 0)
                        return -EINVAL;
                z->zone_seen |= ZK_START_PFN;
        }
        return 0;                       /* node_unreclaimable and later additions */
}

static int zi_line(ZiParser *z, const char *line, size_t len) {
        const char *end = line + len, *p, *tok_end;
        size_t tlen;
        int r;

        if (len > 0 && line[0] == 'N') {
                if (len < 5 || memcmp(line, "Node ", 5) != 0)
                        return -EINVAL;
                return zi_begin_zone(z, line, end);
        }

        p = skip_blanks(line, end);
        if (p == end)
                return 0;               /* blank line */
        if (p == line || z->state == ZI_START)
                return -EINVAL;         /* only "Node" lines start at column 0 */

        tok_end = zi_token(p, end);
        tlen = (size_t) (tok_end - p);

        switch (z->state) {
        case ZI_HEADER:
                if (TOKEN_IS(p, tlen, "per-node")) {
                        z->state = ZI_NODE_STATS;
                        return 0;
                }
                if (TOKEN_IS(p, tlen, "pages"))
                        return zi_pages_free(z, tok_end, end);
                return -EINVAL;

        case ZI_NODE_STATS:
                if (TOKEN_IS(p, tlen, "pages"))
                        return zi_pages_free(z, tok_end, end);
                return 0;

        case ZI_WMARKS:
                return zi_wmark_line(z, p, tlen, tok_end, end);

        case ZI_ZONE_STATS:
                if (TOKEN_IS(p, tlen, "pagesets")) {
                        if (skip_blanks(tok_end, end) != end)
                                return -EINVAL;
                        z->zone_seen |= ZK_PAGESETS;
                        z->state = ZI_PAGESETS;
                }
                return 0;

        case ZI_PAGESETS:
                r = zi_pageset_line(z, p, tlen, tok_end, end);
                if (r != 0)
                        return r < 0 ? r : 0;
                r = zi_finish_cpu(z);
                if (r < 0)
                        return r;
                z->state = ZI_TRAILER;
                return zi_trailer_line(z, p, tlen, tok_end, end);

        case ZI_TRAILER:
                return zi_trailer_line(z, p, tlen, tok_end, end);

        case ZI_START:
        default:
                return -EINVAL;
        }
}

int zoneinfo_parse_at(const char *buf, size_t len, Zoneinfo *ret, ZoneinfoError *ret_error) {
        _cleanup_(zi_parser_done) ZiParser z = { .state = ZI_START, .layout = -1 };
        const char *pos, *end, *line;
        size_t line_len;
        int r;

        if (!buf || !ret)
                return -EINVAL;
        pos = buf;
        end = buf + len;

        while (next_line(&pos, end, &line, &line_len)) {
                z.line_no++;
                if (line_len > 0 && line[0] == 'N')
                        z.zone_line = z.line_no;
                r = zi_line(&z, line, line_len);
                if (r < 0) {
                        if (ret_error)
                                *ret_error = (ZoneinfoError){ .line = z.line_no };
                        return r;
                }
        }
        r = zi_finish_zone(&z);
        if (r < 0 || z.n_zones == 0) {
                /* The last zone lacks what every zone prints: a file cut short, most likely. */
                if (ret_error)
                        *ret_error = (ZoneinfoError){ .line = z.n_zones == 0 && r >= 0 ? z.line_no : z.zone_line,
                                                      .incomplete = true };
                return r < 0 ? r : -EINVAL;
        }

        *ret = (Zoneinfo) {
                .zones = z.zones,
                .n_zones = z.n_zones,
                .has_high_min_max = z.layout == 1,
        };
        z.zones = NULL;         /* now owned by *ret */
        return 0;
}

int zoneinfo_parse(const char *buf, size_t len, Zoneinfo *ret) {
        return zoneinfo_parse_at(buf, len, ret, NULL);
}

int zoneinfo_read_at(const char *root, Zoneinfo *ret, ZoneinfoError *ret_error) {
        _cleanup_(freep) char *buf = NULL;
        size_t len;
        int r;

        r = read_file_at(root, "/proc/zoneinfo", READ_FILE_MAX, &buf, &len);
        if (r < 0)
                return r;
        return zoneinfo_parse_at(buf, len, ret, ret_error);
}

int zoneinfo_read(const char *root, Zoneinfo *ret) {
        return zoneinfo_read_at(root, ret, NULL);
}

void zoneinfo_done(Zoneinfo *z) {
        if (!z)
                return;
        zi_free_zones(z->zones, z->n_zones);
        *z = (Zoneinfo) {};
}

uint64_t zoneinfo_pcp_count_pages(const Zoneinfo *z) {
        uint64_t sum = 0;

        if (!z)
                return 0;
        for (size_t i = 0; i < z->n_zones; i++)
                for (size_t j = 0; j < z->zones[i].n_cpus; j++)
                        if (z->zones[i].cpus[j].count > 0)
                                sum += (uint64_t) z->zones[i].cpus[j].count;
        return sum;
}
