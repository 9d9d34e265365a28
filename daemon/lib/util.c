/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/openat2.h>
#include <math.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <json-c/json.h>
#include <sys/syscall.h>

#include "util.h"

int path_join_root(const char *root, const char *path, char **ret) {
        char *p;

        if (!root || !*root || streq(root, "/"))
                p = strdup(path);
        else {
                size_t rl = strlen(root);
                while (rl > 1 && root[rl - 1] == '/')
                        rl--;
                if (asprintf(&p, "%.*s%s%s", (int) rl, root, path[0] == '/' ? "" : "/", path) < 0)
                        p = NULL;
        }
        if (!p)
                return -ENOMEM;
        *ret = p;
        return 0;
}

int read_fd_full(int fd, size_t max, char **ret_buf, size_t *ret_len) {
        size_t size = 4096, len = 0;
        _cleanup_(freep) char *buf = malloc(size);

        if (!buf)
                return -ENOMEM;
        for (;;) {
                if (len + 1 >= size) {
                        char *n = realloc(buf, size * 2);
                        if (!n)
                                return -ENOMEM;
                        buf = n;
                        size *= 2;
                }
                ssize_t k = read(fd, buf + len, size - len - 1);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        break;
                len += (size_t) k;
                if (len > max)
                        return -EFBIG;
        }
        buf[len] = 0;
        *ret_buf = TAKE_PTR(buf);
        if (ret_len)
                *ret_len = len;
        return 0;
}

int read_file_at(const char *root, const char *path, size_t max, char **ret_buf, size_t *ret_len) {
        _cleanup_(freep) char *p = NULL;
        _cleanup_(closep) int fd = -EBADF;
        struct stat st;
        int r;

        r = path_join_root(root, path, &p);
        if (r < 0)
                return r;
        /* O_NONBLOCK: a FIFO where a kernel file should be (a fake root) must not block the loop. */
        fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        /* Kernel files (procfs, sysfs, cgroupfs) are all regular files. */
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        return read_fd_full(fd, max, ret_buf, ret_len);
}

static bool root_is_slash(const char *root) {
        return !root || !*root || streq(root, "/");
}

/*
 * Open path without ever leaving root: below a root other than
 * "/", openat2(RESOLVE_IN_ROOT) resolves every symlink (and "..") as if root
 * were "/"; where openat2 is missing (before 5.6, or filtered), O_NOFOLLOW at
 * least refuses a symlink as the last component.  Non-blocking: a FIFO never
 * hangs the loop.  Returns the fd or -errno.
 */
int open_below_root(const char *root, const char *path, int access_mode) {
        _cleanup_(freep) char *p = NULL;
        int flags = access_mode | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW;
        int r;

        if (!root_is_slash(root)) {
                _cleanup_(closep) int dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (dfd < 0)
                        return negative_errno();
                struct open_how how = {
                        .flags = (uint64_t) flags,
                        .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
                };
                long fd = syscall(SYS_openat2, dfd, path[0] == '/' ? path + 1 : path, &how, sizeof how);
                if (fd >= 0)
                        return (int) fd;
                if (errno != ENOSYS && errno != EPERM)
                        return negative_errno();
        }
        r = path_join_root(root, path, &p);
        if (r < 0)
                return r;
        int fd = open(p, flags);
        return fd < 0 ? negative_errno() : fd;
}

int write_file_at(const char *root, const char *path, const char *value) {
        _cleanup_(closep) int fd = -EBADF;
        size_t len = strlen(value);
        struct stat st;
        ssize_t k;

        fd = open_below_root(root, path, O_WRONLY);
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        do
                k = write(fd, value, len);
        while (k < 0 && errno == EINTR);
        if (k < 0)
                return negative_errno();
        if ((size_t) k != len)
                return -EIO;
        /* Below a fake root the file holds the value alone, like a sysctl: cut what was beyond it,
         * after the write (a failed write leaves the old content, never an empty file). */
        if (!root_is_slash(root) && st.st_size > (off_t) len && ftruncate(fd, (off_t) len) < 0)
                return negative_errno();
        return 0;
}

int read_int64_at(const char *root, const char *path, int64_t *ret) {
        _cleanup_(freep) char *buf = NULL;
        const char *p;
        int r;

        r = read_file_at(root, path, 4096, &buf, NULL);
        if (r < 0)
                return r;
        p = buf;
        return scan_i64(&p, buf + strlen(buf), ret);
}

int parse_int64(const char *s, int64_t *ret) {
        char *e;
        long long v;

        if (!s || !*s || isspace((unsigned char) *s))
                return -EINVAL;
        errno = 0;
        v = strtoll(s, &e, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (e == s)
                return -EINVAL;
        while (*e && isspace((unsigned char) *e))
                e++;
        if (*e)
                return -EINVAL;
        *ret = v;
        return 0;
}

int parse_uint64(const char *s, uint64_t *ret) {
        char *e;
        unsigned long long v;

        if (!s || !isdigit((unsigned char) *s))
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &e, 10);
        if (errno == ERANGE)
                return -ERANGE;
        while (*e && isspace((unsigned char) *e))
                e++;
        if (*e)
                return -EINVAL;
        *ret = v;
        return 0;
}

bool line_has_key(const char *line, size_t len, const char *key, const char *seps) {
        size_t kl = strlen(key);

        if (len < kl || memcmp(line, key, kl) != 0)
                return false;
        if (len == kl)
                return true;
        return strchr(seps, line[kl]) != NULL && line[kl] != 0;
}

int parse_cpulist(const char *s, unsigned *ret_count, int *ret_max) {
        const char *p = s, *end = s + strlen(s);
        unsigned count = 0;
        int max = -1;

        p = skip_blanks(p, end);
        while (p < end && *p != '\n') {
                uint64_t a, b;
                int r = scan_u64(&p, end, &a);
                if (r < 0)
                        return -EINVAL;
                b = a;
                if (p < end && *p == '-') {
                        p++;
                        r = scan_u64(&p, end, &b);
                        if (r < 0 || b < a)
                                return -EINVAL;
                }
                if (b > INT_MAX)
                        return -ERANGE;
                count += (unsigned) (b - a + 1);
                max = MAX(max, (int) b);
                if (p < end && *p == ',')
                        p++;
                else if (p < end && *p != '\n' && *p != ' ')
                        return -EINVAL;
                p = skip_blanks(p, end);
        }
        while (p < end && isspace((unsigned char) *p))
                p++;
        if (p != end)
                return -EINVAL;
        if (ret_count)
                *ret_count = count;
        if (ret_max)
                *ret_max = max;
        return 0;
}

static const struct {
        const char *suffix;
        uint64_t factor;
} size_units[] = {
        { "B", 1ULL },
        { "KiB", 1ULL << 10 }, { "K", 1ULL << 10 }, { "KB", 1ULL << 10 }, { "kB", 1ULL << 10 },
        { "MiB", 1ULL << 20 }, { "M", 1ULL << 20 }, { "MB", 1ULL << 20 },
        { "GiB", 1ULL << 30 }, { "G", 1ULL << 30 }, { "GB", 1ULL << 30 },
        { "TiB", 1ULL << 40 }, { "T", 1ULL << 40 }, { "TB", 1ULL << 40 },
};

int parse_size(const char *s, uint64_t *ret_bytes) {
        char *e;
        double v;
        uint64_t factor = 1;

        if (!s || !(isdigit((unsigned char) *s) || *s == '.'))
                return -EINVAL;
        errno = 0;
        v = strtod(s, &e);
        if (errno == ERANGE || e == s || !isfinite(v) || v < 0)
                return -EINVAL;
        while (*e == ' ')
                e++;
        if (*e) {
                size_t i;
                for (i = 0; i < ELEMENTSOF(size_units); i++)
                        if (streq(e, size_units[i].suffix))
                                break;
                if (i >= ELEMENTSOF(size_units))
                        return -EINVAL;
                factor = size_units[i].factor;
        }
        v *= (double) factor;
        if (v >= 18446744073709551616.0)
                return -ERANGE;
        /* A fraction of a byte is not a size. */
        if (v != floor(v))
                return -EINVAL;
        *ret_bytes = (uint64_t) v;
        return 0;
}

int parse_duration(const char *s, usec_t *ret_usec) {
        const char *p = s;
        usec_t total = 0;
        bool any = false;

        if (!s || !*s)
                return -EINVAL;
        while (*p) {
                char *e;
                double v;
                usec_t mult;

                if (!isdigit((unsigned char) *p) && *p != '.')
                        return -EINVAL;
                errno = 0;
                v = strtod(p, &e);
                if (errno == ERANGE || e == p || !isfinite(v) || v < 0)
                        return -EINVAL;
                p = e;
                if (strneq(p, "ms", 2)) {
                        mult = USEC_PER_MSEC;
                        p += 2;
                } else if (strneq(p, "us", 2)) {
                        mult = 1;
                        p += 2;
                } else if (*p == 's') {
                        mult = USEC_PER_SEC;
                        p++;
                } else if (strneq(p, "min", 3)) {
                        mult = 60 * USEC_PER_SEC;
                        p += 3;
                } else if (*p == 'm') {
                        mult = 60 * USEC_PER_SEC;
                        p++;
                } else if (*p == 'h') {
                        mult = 3600 * USEC_PER_SEC;
                        p++;
                } else if (*p == 'd') {
                        mult = 86400 * USEC_PER_SEC;
                        p++;
                } else if (*p == 0 && !any) {
                        mult = USEC_PER_SEC;
                } else
                        return -EINVAL;
                double add = v * (double) mult;
                if (add > 1e18 || (double) total + add > 1e18)
                        return -ERANGE;
                total += (usec_t) llround(add);
                any = true;
        }
        *ret_usec = total;
        return 0;
}

int kernel_version_parse(const char *s, KernelVersion *ret) {
        const char *p = s, *end;
        uint64_t v[3] = { 0, 0, 0 };
        int n = 0;

        if (!s)
                return -EINVAL;
        end = s + strlen(s);
        while (n < 3) {
                if (scan_u64(&p, end, &v[n]) < 0 || v[n] > UINT_MAX)
                        break;
                n++;
                if (p < end && *p == '.' && p + 1 < end && isdigit((unsigned char) p[1]))
                        p++;
                else
                        break;
        }
        if (n < 2)
                return -EINVAL;
        *ret = (KernelVersion){ (unsigned) v[0], (unsigned) v[1], (unsigned) v[2] };
        return 0;
}

int kernel_version_cmp(const KernelVersion *a, const KernelVersion *b) {
        if (a->major != b->major)
                return a->major < b->major ? -1 : 1;
        if (a->minor != b->minor)
                return a->minor < b->minor ? -1 : 1;
        if (a->patch != b->patch)
                return a->patch < b->patch ? -1 : 1;
        return 0;
}

double kernel_version_to_double(const KernelVersion *v) {
        return (double) v->major * 1e6 + (double) MIN(v->minor, 999U) * 1e3 + (double) MIN(v->patch, 999U);
}

usec_t now_usec(clockid_t clock) {
        struct timespec ts;

        if (clock_gettime(clock, &ts) < 0)
                return 0;
        return (usec_t) ts.tv_sec * USEC_PER_SEC + (usec_t) ts.tv_nsec / NSEC_PER_USEC;
}

const char *format_bytes(char *buf, size_t size, uint64_t bytes) {
        static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
        double v = (double) bytes;
        size_t i = 0;

        while (v >= 1024.0 && i + 1 < ELEMENTSOF(units)) {
                v /= 1024.0;
                i++;
        }
        if (i == 0)
                snprintf(buf, size, "%" PRIu64 " B", bytes);
        else
                snprintf(buf, size, "%.1f %s", v, units[i]);
        return buf;
}

int mkdir_p(const char *path, unsigned mode) {
        _cleanup_(freep) char *p = strdup(path);

        if (!p)
                return -ENOMEM;
        for (char *s = p + 1; *s; s++) {
                if (*s != '/')
                        continue;
                *s = 0;
                if (mkdir(p, 0755) < 0 && errno != EEXIST)
                        return negative_errno();
                *s = '/';
        }
        if (mkdir(p, (mode_t) mode) < 0 && errno != EEXIST)
                return negative_errno();
        return 0;
}

int write_file_atomic(const char *path, const char *data, size_t len, unsigned mode) {
        _cleanup_(freep) char *tmp = NULL;
        _cleanup_(closep) int fd = -EBADF;
        size_t done = 0;

        if (asprintf(&tmp, "%s.tmpXXXXXX", path) < 0)
                return -ENOMEM;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (fchmod(fd, (mode_t) mode) < 0)
                goto fail;
        while (done < len) {
                ssize_t k = write(fd, data + done, len - done);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        goto fail;
                }
                done += (size_t) k;
        }
        if (fsync(fd) < 0 || rename(tmp, path) < 0)
                goto fail;
        return 0;
fail:;
        int r = negative_errno();
        unlink(tmp);
        return r;
}

/* Print text after prefix, wrapped at 98 columns, continuation lines indented by cont spaces. */
void print_wrapped(FILE *f, const char *prefix, size_t cont, const char *text) {
        const size_t width = 98;
        size_t col = strlen(prefix);
        const char *p = text;
        bool first_word = true;

        fputs(prefix, f);
        while (*p) {
                while (*p == ' ')
                        p++;
                size_t wl = strcspn(p, " ");
                if (wl == 0)
                        break;
                if (!first_word && col + 1 + wl > width) {
                        fprintf(f, "\n%*s", (int) cont, "");
                        col = cont;
                } else if (!first_word) {
                        fputc(' ', f);
                        col++;
                }
                fprintf(f, "%.*s", (int) wl, p);
                col += wl;
                p += wl;
                first_word = false;
        }
        fputc('\n', f);
}

int json_add_schema_version(struct json_object *o) {
        json_object *v = json_object_new_int(PCPTUNE_JSON_SCHEMA_VERSION);
        if (!v || json_object_object_add(o, "schema_version", v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

int json_get_number(struct json_object *o, const char *key, double lo, double hi, double *ret) {
        json_object *v;
        if (!json_object_object_get_ex(o, key, &v) ||
            !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
                return -EINVAL;
        double d = json_object_get_double(v);
        if (!isfinite(d) || d < lo || d > hi)
                return -EINVAL;
        *ret = d;
        return 0;
}

const char *json_format(struct json_object *o, bool pretty) {
        int flags = JSON_C_TO_STRING_NOSLASHESCAPE;
        flags |= pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED : JSON_C_TO_STRING_PLAIN;
        return json_object_to_json_string_ext(o, flags);
}

const char *format_timestamp_utc(char *buf, size_t size, usec_t t) {
        time_t sec = (time_t) (t / USEC_PER_SEC);
        struct tm tm;
        if (!gmtime_r(&sec, &tm) || strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
                snprintf(buf, size, "n/a");
        return buf;
}

int parse_time_point(const char *s, usec_t now, usec_t *ret) {
        static const char *const formats[] = { "%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S",
                                               "%Y-%m-%d %H:%M", "%Y-%m-%d" };
        usec_t d;

        if (!s || !*s)
                return -EINVAL;
        if (streq(s, "now")) {
                *ret = now;
                return 0;
        }
        /* Dates start with a digit: strptime() would also skip leading blanks. */
        for (size_t i = 0; isdigit((unsigned char) s[0]) && i < ELEMENTSOF(formats); i++) {
                struct tm tm = { 0 }, back;
                const char *end = strptime(s, formats[i], &tm);
                if (!end || *end)
                        continue;
                struct tm want = tm;
                time_t t = timegm(&tm);
                /* timegm() normalises 2026-02-30 into March and 23:59:60 into the next minute: refuse
                 * what it had to move (the fields it returns differ from those parsed). */
                if (t < 0)
                        return -EINVAL;
                if (!gmtime_r(&t, &back) || back.tm_year != want.tm_year || back.tm_mon != want.tm_mon ||
                    back.tm_mday != want.tm_mday || back.tm_hour != want.tm_hour || back.tm_min != want.tm_min ||
                    back.tm_sec != want.tm_sec)
                        return -ERANGE;
                *ret = (usec_t) t * USEC_PER_SEC;
                return 0;
        }
        /* A time ago carries its unit: "2026" is neither a date nor 2026 seconds. */
        if (isdigit((unsigned char) s[strlen(s) - 1]) || parse_duration(s, &d) < 0 || d > now)
                return -EINVAL;
        *ret = now - d;
        return 0;
}

const char *str_escape(const char *s, char *buf, size_t size) {
        static const char hex[] = "0123456789abcdef";
        size_t n = 0;

        if (size == 0)
                return buf;
        for (const unsigned char *c = (const unsigned char *) (s ?: ""); *c; c++) {
                if (*c < 0x20 || *c == 0x7f || *c == '\\') {
                        if (n + 4 >= size)
                                break;
                        buf[n++] = '\\';
                        if (*c == '\\')
                                buf[n++] = '\\';
                        else {
                                buf[n++] = 'x';
                                buf[n++] = hex[*c >> 4];
                                buf[n++] = hex[*c & 15];
                        }
                } else {
                        if (n + 1 >= size)
                                break;
                        buf[n++] = (char) *c;
                }
        }
        buf[n] = 0;
        return buf;
}

/* Only root (or the user running us, for tests) may have written what a root process trusts. */
static bool trusted_owner(uid_t uid) {
        return uid == 0 || uid == geteuid();
}

_printf_(3, 4) static int trust_fail(char *err, size_t errlen, const char *fmt, ...) {
        if (err && errlen > 0) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(err, errlen, fmt, ap);
                va_end(ap);
        }
        return -EPERM;
}

int trusted_dir_check(const char *dir, const char *what, char *err, size_t errlen) {
        char edir[PATH_MAX], ewhat[PATH_MAX];
        struct stat st;

        if (err && errlen > 0)
                *err = 0;
        if (stat(dir, &st) < 0)
                return negative_errno();
        if (trusted_owner(st.st_uid) && (!(st.st_mode & (S_IWGRP | S_IWOTH)) || (st.st_mode & S_ISVTX)))
                return 0;
        str_escape(dir, edir, sizeof edir);
        str_escape(what, ewhat, sizeof ewhat);
        return trust_fail(err, errlen, "%s is in %s, which %s (uid %u, mode %04o): anyone could have put it there",
                          ewhat, edir,
                          trusted_owner(st.st_uid) ? "is writable by group or others" : "is not owned by root",
                          (unsigned) st.st_uid, (unsigned) (st.st_mode & 07777));
}

int trusted_file_read(const char *path, size_t max, char **ret_buf, size_t *ret_len, char *err, size_t errlen) {
        _cleanup_(freep) char *dir = strdup(path);
        _cleanup_(closep) int fd = -EBADF;
        char efile[PATH_MAX];
        struct stat st;
        char *slash;
        int r;

        if (err && errlen > 0)
                *err = 0;
        if (!dir)
                return -ENOMEM;
        str_escape(path, efile, sizeof efile);
        /* Never follow a symlink someone left in our place, never block on a FIFO. */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0) {
                if (errno == ELOOP)
                        return trust_fail(err, errlen, "%s is a symbolic link", efile);
                return negative_errno();
        }
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return trust_fail(err, errlen, "%s is not a regular file", efile);
        if (!trusted_owner(st.st_uid))
                return trust_fail(err, errlen, "%s is owned by uid %u, not root", efile, (unsigned) st.st_uid);
        if (st.st_mode & (S_IWGRP | S_IWOTH))
                return trust_fail(err, errlen, "%s is writable by group or others (mode %04o)", efile,
                                  (unsigned) (st.st_mode & 07777));
        slash = strrchr(dir, '/');
        if (slash)
                *(slash == dir ? slash + 1 : slash) = 0;
        else
                strcpy(dir, ".");
        r = trusted_dir_check(dir, path, err, errlen);
        if (r < 0)
                return r;
        return read_fd_full(fd, max, ret_buf, ret_len);
}

int path_normalize_root(const char *root, char **ret) {
        char *p;

        if (!root || !*root)
                root = "/";
        /* The same directory named two ways ("R", "R/", "R//.", a symlink to R) is one root. */
        p = realpath(root, NULL);
        if (!p) {
                size_t n = 0;
                p = malloc(strlen(root) + 1);
                if (!p)
                        return -ENOMEM;
                for (const char *c = root; *c; c++)
                        if (!(*c == '/' && n > 0 && p[n - 1] == '/'))
                                p[n++] = *c;
                while (n > 1 && p[n - 1] == '/')
                        n--;
                p[n] = 0;
        }
        *ret = p;
        return 0;
}

#if ENABLE_FAULT_INJECTION
void fault_inject(const char *point) {
        /* Test builds only: how many times each point was reached.  One process, one thread. */
        static unsigned hits, seed;
        const char *spec = getenv("PCPTUNED_FAULT"), *delay = getenv("PCPTUNED_FAULT_DELAY_MS"), *colon;
        uint64_t nth = 1, ms;
        size_t len;

        /* A random pause at every point widens the windows between intent, write and commit, so that a
         * test's SIGKILL at a random instant lands in them (tests/fault/kill-pass). */
        if (delay && parse_uint64(delay, &ms) >= 0 && ms > 0 && ms <= 10000) {
                if (seed == 0)
                        seed = (unsigned) getpid() ^ (unsigned) now_usec(CLOCK_MONOTONIC);
                uint64_t ns = (uint64_t) rand_r(&seed) % (ms * 1000 + 1) * 1000;
                struct timespec ts = { .tv_sec = (time_t) (ns / 1000000000), .tv_nsec = (long) (ns % 1000000000) };
                while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                        ;
        }
        if (!spec || !*spec)
                return;
        colon = strchr(spec, ':');
        len = colon ? (size_t) (colon - spec) : strlen(spec);
        if (len != strlen(point) || memcmp(spec, point, len) != 0)
                return;
        if (colon && (parse_uint64(colon + 1, &nth) < 0 || nth == 0))
                return;
        if (++hits == nth) {
                static const char msg[] = "pcptuned: fault injection: exiting at ";
                (void) !write(STDERR_FILENO, msg, sizeof msg - 1);
                (void) !write(STDERR_FILENO, point, strlen(point));
                (void) !write(STDERR_FILENO, "\n", 1);
                _exit(137);
        }
}
#endif

uint64_t fnv1a64(uint64_t h, const void *p, size_t n) {
        const unsigned char *b = p;
        for (size_t i = 0; i < n; i++) {
                h ^= b[i];
                h *= UINT64_C(0x100000001b3);
        }
        return h;
}

char *root_state_name(const char *root, const char *base, char *buf, size_t size) {
        /* A name, not a secret; a collision of two roots is caught by the root each file records inside. */
        const char *dot = strrchr(base, '.');
        size_t stem = dot ? (size_t) (dot - base) : strlen(base);
        int n;

        if (!root || !*root || streq(root, "/"))
                n = snprintf(buf, size, "%s", base);
        else
                n = snprintf(buf, size, "%.*s-%016" PRIx64 "%s", (int) stem, base,
                             fnv1a64(FNV1A64_INIT, root, strlen(root)), dot ? dot : "");
        return n < 0 || (size_t) n >= size ? NULL : buf;
}
