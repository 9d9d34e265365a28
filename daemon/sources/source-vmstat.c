/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /proc/vmstat reader (mm/vmstat.c, vmstat_show(): "%s %lu\n" per item).
 * The item list is an open set that changes with every release; every line
 * must still have the "name value" shape.
 */
#include <stddef.h>

#include "source-vmstat.h"
#include "util.h"

static const struct {
        const char *name;
        size_t offset;
} vmstat_keys[] = {
        { "nr_free_pages",     offsetof(Vmstat, nr_free_pages) },
        { "pgfree",            offsetof(Vmstat, pgfree) },
        { "pgalloc_normal",    offsetof(Vmstat, pgalloc_normal) },
        { "pgscan_kswapd",     offsetof(Vmstat, pgscan_kswapd) },
        { "pgscan_direct",     offsetof(Vmstat, pgscan_direct) },
        { "allocstall_normal", offsetof(Vmstat, allocstall_normal) },
};

/* Split "name value" into its name and value; -EINVAL if the line has another shape. */
static int vmstat_split_line(const char *line, size_t len, const char **ret_name, size_t *ret_name_len, uint64_t *ret_value) {
        const char *end = line + len, *p = line;
        uint64_t v;

        while (p < end && *p != ' ' && *p != '\t')
                p++;
        if (p == line || p == end)
                return -EINVAL;
        *ret_name_len = (size_t) (p - line);
        if (scan_u64(&p, end, &v) < 0)
                return -EINVAL;
        if (skip_blanks(p, end) != end)
                return -EINVAL;
        *ret_name = line;
        *ret_value = v;
        return 0;
}

static bool vmstat_line_is_blank(const char *line, size_t len) {
        return skip_blanks(line, line + len) == line + len;
}

int vmstat_parse(const char *buf, size_t len, Vmstat *ret) {
        const char *pos, *end, *line;
        size_t line_len;
        unsigned seen = 0;
        Vmstat v = {};

        if (!buf || !ret)
                return -EINVAL;
        pos = buf;
        end = buf + len;

        while (next_line(&pos, end, &line, &line_len)) {
                const char *name;
                size_t name_len;
                uint64_t value;

                if (vmstat_line_is_blank(line, line_len))
                        continue;
                if (vmstat_split_line(line, line_len, &name, &name_len, &value) < 0)
                        return -EINVAL;
                v.nr_lines++;

                for (unsigned i = 0; i < ELEMENTSOF(vmstat_keys); i++) {
                        if (strlen(vmstat_keys[i].name) != name_len || memcmp(vmstat_keys[i].name, name, name_len) != 0)
                                continue;
                        if (seen & (1U << i))
                                return -EINVAL;         /* repeated: concatenated or corrupt input */
                        seen |= 1U << i;
                        *(uint64_t *) ((char *) &v + vmstat_keys[i].offset) = value;
                        break;
                }
        }

        v.has_nr_free_pages = seen & (1U << 0);
        v.has_pgfree = seen & (1U << 1);
        if (!v.has_nr_free_pages)
                return -EINVAL;

        *ret = v;
        return 0;
}

int vmstat_lookup(const char *buf, size_t len, const char *name, uint64_t *ret) {
        const char *pos, *end, *line;
        size_t line_len, want;

        if (!buf || !name || !ret)
                return -EINVAL;
        pos = buf;
        end = buf + len;
        want = strlen(name);
        if (want == 0)
                return -EINVAL;

        while (next_line(&pos, end, &line, &line_len)) {
                const char *n;
                size_t n_len;
                uint64_t value;

                if (line_len <= want || memcmp(line, name, want) != 0 || (line[want] != ' ' && line[want] != '\t'))
                        continue;
                if (vmstat_split_line(line, line_len, &n, &n_len, &value) < 0)
                        return -EINVAL;
                *ret = value;
                return 0;
        }
        return -ENOENT;
}

int vmstat_read(const char *root, Vmstat *ret) {
        _cleanup_(freep) char *buf = NULL;
        size_t len;
        int r;

        r = read_file_at(root, "/proc/vmstat", READ_FILE_MAX, &buf, &len);
        if (r < 0)
                return r;
        return vmstat_parse(buf, len, ret);
}
