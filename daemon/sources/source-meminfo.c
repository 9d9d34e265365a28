/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /proc/meminfo reader.  The kernel prints "Key:<padding>value kB" with kB
 * meaning KiB (fs/proc/meminfo.c, show_val_kb()).  Keys are matched whole, at
 * line start: "Slab" must not match "SlabXXX", nor "Cached" "SwapCached".
 */
#include <stddef.h>

#include "source-meminfo.h"
#include "util.h"

enum {
        MEMINFO_MEM_TOTAL,
        MEMINFO_MEM_FREE,
        MEMINFO_MEM_AVAILABLE,
        MEMINFO_CACHED,
        MEMINFO_SLAB,
        MEMINFO_SRECLAIMABLE,
        MEMINFO_SUNRECLAIM,
        MEMINFO_PERCPU,
        MEMINFO_SWAP_TOTAL,
        MEMINFO_SWAP_FREE,
        _MEMINFO_KEY_MAX,
};

static const struct {
        const char *key;
        size_t value_offset;
        size_t has_offset;      /* SIZE_MAX: required key, no has_* flag */
} meminfo_keys[_MEMINFO_KEY_MAX] = {
        [MEMINFO_MEM_TOTAL]     = { "MemTotal", offsetof(Meminfo, mem_total_kib), SIZE_MAX },
        [MEMINFO_MEM_FREE]      = { "MemFree", offsetof(Meminfo, mem_free_kib), SIZE_MAX },
        [MEMINFO_MEM_AVAILABLE] = { "MemAvailable", offsetof(Meminfo, mem_available_kib), offsetof(Meminfo, has_mem_available) },
        [MEMINFO_CACHED]        = { "Cached", offsetof(Meminfo, cached_kib), offsetof(Meminfo, has_cached) },
        [MEMINFO_SLAB]          = { "Slab", offsetof(Meminfo, slab_kib), offsetof(Meminfo, has_slab) },
        [MEMINFO_SRECLAIMABLE]  = { "SReclaimable", offsetof(Meminfo, sreclaimable_kib), offsetof(Meminfo, has_sreclaimable) },
        [MEMINFO_SUNRECLAIM]    = { "SUnreclaim", offsetof(Meminfo, sunreclaim_kib), offsetof(Meminfo, has_sunreclaim) },
        [MEMINFO_PERCPU]        = { "Percpu", offsetof(Meminfo, percpu_kib), offsetof(Meminfo, has_percpu) },
        [MEMINFO_SWAP_TOTAL]    = { "SwapTotal", offsetof(Meminfo, swap_total_kib), offsetof(Meminfo, has_swap) },
        [MEMINFO_SWAP_FREE]     = { "SwapFree", offsetof(Meminfo, swap_free_kib), offsetof(Meminfo, has_swap_free) },
};

/* "  <digits> kB" up to the end of the line; trailing blanks allowed. */
static int meminfo_scan_kib(const char *p, const char *end, uint64_t *ret) {
        uint64_t v;
        int r;

        r = scan_u64(&p, end, &v);
        if (r < 0)
                return -EINVAL;
        p = skip_blanks(p, end);
        if (end - p < 2 || p[0] != 'k' || p[1] != 'B')
                return -EINVAL;
        p = skip_blanks(p + 2, end);
        if (p != end)
                return -EINVAL;
        *ret = v;
        return 0;
}

int meminfo_parse(const char *buf, size_t len, Meminfo *ret) {
        const char *pos, *end, *line;
        size_t line_len;
        unsigned seen = 0;
        Meminfo m = {};

        if (!buf || !ret)
                return -EINVAL;
        pos = buf;
        end = buf + len;

        while (next_line(&pos, end, &line, &line_len)) {
                const char *colon = memchr(line, ':', line_len);
                size_t key_len;

                if (!colon)
                        continue;       /* not a "Key: value" line; nothing we track */
                key_len = (size_t) (colon - line);

                for (unsigned i = 0; i < _MEMINFO_KEY_MAX; i++) {
                        const char *key = meminfo_keys[i].key;
                        uint64_t v;

                        if (strlen(key) != key_len || memcmp(line, key, key_len) != 0)
                                continue;
                        if (seen & (1U << i))
                                return -EINVAL;         /* duplicated: concatenated or corrupt input */
                        if (meminfo_scan_kib(colon + 1, line + line_len, &v) < 0)
                                return -EINVAL;
                        seen |= 1U << i;
                        *(uint64_t *) ((char *) &m + meminfo_keys[i].value_offset) = v;
                        if (meminfo_keys[i].has_offset != SIZE_MAX)
                                *(bool *) ((char *) &m + meminfo_keys[i].has_offset) = true;
                        break;
                }
        }

        if (!(seen & (1U << MEMINFO_MEM_TOTAL)) || !(seen & (1U << MEMINFO_MEM_FREE)))
                return -EINVAL;
        /* No MemFree <= MemTotal check: MemFree is the global NR_FREE_PAGES counter,
         * which lags the per-CPU deltas (vmstat thresholds), so it is not a guarantee. */

        *ret = m;
        return 0;
}

int meminfo_read(const char *root, Meminfo *ret) {
        _cleanup_(freep) char *buf = NULL;
        size_t len;
        int r;

        r = read_file_at(root, "/proc/meminfo", READ_FILE_MAX, &buf, &len);
        if (r < 0)
                return r;
        return meminfo_parse(buf, len, ret);
}
