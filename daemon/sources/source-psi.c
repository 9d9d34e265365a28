/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /proc/pressure/memory reader (kernel/sched/psi.c, psi_show()):
 *   some avg10=%lu.%02lu avg60=%lu.%02lu avg300=%lu.%02lu total=%llu
 *   full ...
 * The averages are fixed-point percentages printed with two decimals; they
 * are parsed by hand (strtod() depends on the locale and needs a NUL).
 */
#include <fcntl.h>
#include <inttypes.h>

#include "source-psi.h"
#include "util.h"

/* "<digits>[.<digits>]" as a double. */
static int psi_scan_decimal(const char **pp, const char *end, double *ret) {
        const char *p = *pp;
        uint64_t ipart;
        double v, scale = 0.1;

        if (scan_u64(&p, end, &ipart) < 0)
                return -EINVAL;
        v = (double) ipart;
        if (p < end && *p == '.') {
                p++;
                if (p >= end || *p < '0' || *p > '9')
                        return -EINVAL;
                while (p < end && *p >= '0' && *p <= '9') {
                        v += (double) (*p - '0') * scale;
                        scale /= 10;
                        p++;
                }
        }
        *pp = p;
        *ret = v;
        return 0;
}

/* The fields after "some"/"full": avg10= avg60= avg300= total=, each once, any order. */
static int psi_parse_fields(const char *p, const char *end, PsiLine *ret) {
        static const char *const keys[] = { "avg10", "avg60", "avg300", "total" };
        PsiLine l = {};
        unsigned seen = 0;

        for (;;) {
                const char *k, *eq;
                unsigned i;

                p = skip_blanks(p, end);
                if (p == end)
                        break;
                k = p;
                eq = memchr(p, '=', (size_t) (end - p));
                if (!eq)
                        return -EINVAL;
                for (i = 0; i < ELEMENTSOF(keys); i++)
                        if (strlen(keys[i]) == (size_t) (eq - k) && memcmp(keys[i], k, (size_t) (eq - k)) == 0)
                                break;
                if (i >= ELEMENTSOF(keys) || (seen & (1U << i)))
                        return -EINVAL;
                seen |= 1U << i;
                p = eq + 1;
                if (p < end && (*p == ' ' || *p == '\t'))
                        return -EINVAL;     /* "key= 1": a value must follow the '=' */
                switch (i) {
                case 0:
                        if (psi_scan_decimal(&p, end, &l.avg10) < 0)
                                return -EINVAL;
                        break;
                case 1:
                        if (psi_scan_decimal(&p, end, &l.avg60) < 0)
                                return -EINVAL;
                        break;
                case 2:
                        if (psi_scan_decimal(&p, end, &l.avg300) < 0)
                                return -EINVAL;
                        break;
                default:
                        if (scan_u64(&p, end, &l.total_usec) < 0)
                                return -EINVAL;
                        break;
                }
                if (p < end && *p != ' ' && *p != '\t')
                        return -EINVAL;
        }
        if (seen != (1U << ELEMENTSOF(keys)) - 1)
                return -EINVAL;
        *ret = l;
        return 0;
}

int psi_parse(const char *buf, size_t len, Psi *ret) {
        const char *pos, *end, *line;
        size_t line_len;
        bool has_some = false;
        Psi psi = {};

        if (!buf || !ret)
                return -EINVAL;
        pos = buf;
        end = buf + len;

        while (next_line(&pos, end, &line, &line_len)) {
                const char *lend = line + line_len;

                if (line_has_key(line, line_len, "some", " \t")) {
                        if (has_some || psi_parse_fields(line + 4, lend, &psi.some) < 0)
                                return -EINVAL;
                        has_some = true;
                } else if (line_has_key(line, line_len, "full", " \t")) {
                        if (psi.has_full || psi_parse_fields(line + 4, lend, &psi.full) < 0)
                                return -EINVAL;
                        psi.has_full = true;
                } else if (skip_blanks(line, lend) != lend)
                        return -EINVAL;
        }
        if (!has_some)
                return -EINVAL;

        *ret = psi;
        return 0;
}

int psi_read(const char *root, Psi *ret) {
        _cleanup_(freep) char *buf = NULL;
        size_t len;
        int r;

        r = read_file_at(root, "/proc/pressure/memory", 4096, &buf, &len);
        if (r < 0)
                return r;
        return psi_parse(buf, len, ret);
}

int psi_trigger_open(const char *root, bool full, usec_t threshold_usec, usec_t window_usec, int *ret_fd) {
        _cleanup_(freep) char *path = NULL;
        _cleanup_(closep) int fd = -EBADF;
        char buf[64];
        int n, r;

        if (threshold_usec == 0 || threshold_usec > window_usec)
                return -EINVAL;
        r = path_join_root(root, "/proc/pressure/memory", &path);
        if (r < 0)
                return r;
        fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        n = snprintf(buf, sizeof buf, "%s %" PRIu64 " %" PRIu64, full ? "full" : "some", threshold_usec, window_usec);
        if (write(fd, buf, (size_t) n + 1) < 0)
                return negative_errno();
        *ret_fd = TAKE_FD(fd);
        return 0;
}
