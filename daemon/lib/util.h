/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <errno.h>
#include <string.h>

#include "macro.h"

typedef uint64_t usec_t;
#define USEC_INFINITY ((usec_t) UINT64_MAX)
#define USEC_PER_SEC ((usec_t) 1000000ULL)
#define USEC_PER_MSEC ((usec_t) 1000ULL)
#define NSEC_PER_USEC ((uint64_t) 1000ULL)

/* Upper bound for one kernel text file we read (zoneinfo of a 512-CPU, 8-node host is ~1 MiB). */
#define READ_FILE_MAX ((size_t) 64U * 1024U * 1024U)

/*
 * Join a root prefix and an absolute path: ("/", "/proc/x") -> "/proc/x",
 * ("/tmp/r", "/proc/x") -> "/tmp/r/proc/x".  root NULL means "/".
 * Returns 0 or -ENOMEM.
 */
int path_join_root(const char *root, const char *path, char **ret);

/*
 * Read a whole file below root into a NUL-terminated buffer (kernel files
 * report size 0, so read until EOF).  *ret_len excludes the NUL.  ret_len may be NULL.
 * Opened non-blocking; anything but a regular file (a FIFO, a device or a
 * directory where a kernel file should be) is refused with -EBADFD.
 * Returns 0, -errno from open/read, -EBADFD, or -EFBIG beyond max bytes.
 */
int read_file_at(const char *root, const char *path, size_t max, char **ret_buf, size_t *ret_len);

/* The same on an open descriptor, from its current offset. */
int read_fd_full(int fd, size_t max, char **ret_buf, size_t *ret_len);

/*
 * Write a string to a file below root with one write() (sysctl and cgroup
 * files act on the whole write).  No O_CREAT: the file must exist.  The path
 * never leaves root: openat2(RESOLVE_IN_ROOT) below a root other than "/",
 * O_NOFOLLOW everywhere.  Only regular files (-EBADFD otherwise), opened
 * non-blocking.  Below a fake root the old content is cut after the write.
 * Returns 0 or -errno of open/write (e.g. -EINVAL from a sysctl handler).
 */
int write_file_at(const char *root, const char *path, const char *value);

/*
 * Open a file below root the way write_file_at() does (openat2(RESOLVE_IN_ROOT) below a root other than
 * "/", O_NOFOLLOW, non-blocking, close-on-exec), with access_mode O_RDONLY, O_WRONLY or O_RDWR: the file
 * a write would reach, never one outside root.  The fd or -errno; the caller checks the file type.
 */
int open_below_root(const char *root, const char *path, int access_mode);

/* Read the first integer of a file below root (sysctl style). 0, -errno or -EINVAL. */
int read_int64_at(const char *root, const char *path, int64_t *ret);

/* Strict decimal parsers: whole string (trailing whitespace allowed), no overflow. 0 or -EINVAL/-ERANGE. */
int parse_int64(const char *s, int64_t *ret);
int parse_uint64(const char *s, uint64_t *ret);

/*
 * Parse a kernel cpulist ("0-3,8,10-11\n"; empty means no CPUs).
 * Returns the number of CPUs in *ret_count and the largest id in *ret_max
 * (-1 if empty; may be NULL).  0 or -EINVAL.
 */
int parse_cpulist(const char *s, unsigned *ret_count, int *ret_max);

/*
 * Sizes with IEC units: "4096", "4096B", "64KiB", "256MiB", "1.5GiB", "2TiB".
 * Also K/M/G/T and KB/MB/GB/TB read as powers of 1024 (what operators mean in
 * memory sizes; the kernel's "kB" is 1024 too).  Result in bytes.
 * 0, -EINVAL (syntax or unknown unit) or -ERANGE.
 */
int parse_size(const char *s, uint64_t *ret_bytes);

/* Durations: "500ms", "10s", "2m", "1h", "1d", combined "1m30s"; a bare number is seconds. Result in µs. */
int parse_duration(const char *s, usec_t *ret_usec);

typedef struct KernelVersion {
        unsigned major;
        unsigned minor;
        unsigned patch;
} KernelVersion;

/* "6.12.117+deb12-amd64" -> {6,12,117}; "5.14" -> {5,14,0}. 0 or -EINVAL. */
int kernel_version_parse(const char *s, KernelVersion *ret);
/* <0, 0, >0 like strcmp. */
int kernel_version_cmp(const KernelVersion *a, const KernelVersion *b);
/* Encoded as major*1e6 + minor*1e3 + patch (patch capped at 999), for metric comparisons. */
double kernel_version_to_double(const KernelVersion *v);
/* A version literal usable as &KV(6, 7). */
#define KV(major, minor) ((KernelVersion){ (major), (minor), 0 })

usec_t now_usec(clockid_t clock);

/* Human sizes: "1.5 MiB".  buf of at least 32 bytes; returns buf. */
const char *format_bytes(char *buf, size_t size, uint64_t bytes);

/* Iterate lines of a buffer: returns false at the end.  The line excludes '\n'. */
static inline bool next_line(const char **pos, const char *end, const char **ret_line, size_t *ret_len) {
        const char *p = *pos;
        if (p >= end)
                return false;
        const char *nl = memchr(p, '\n', (size_t) (end - p));
        const char *e = nl ?: end;
        *ret_line = p;
        *ret_len = (size_t) (e - p);
        *pos = nl ? nl + 1 : end;
        return true;
}

/* Does the line [line, line+len) start with word followed by a separator in seps (or end)? */
bool line_has_key(const char *line, size_t len, const char *key, const char *seps);

static inline const char *skip_blanks(const char *p, const char *end) {
        while (p < end && (*p == ' ' || *p == '\t'))
                p++;
        return p;
}

/* ASCII digits only, without the locale lookup of isdigit(): parsers call this per character. */
static inline bool is_ascii_digit(char c) {
        return c >= '0' && c <= '9';
}

/*
 * Parse an unsigned decimal at *pp, skipping leading blanks; advances *pp.
 * 0 or -EINVAL (no digit) / -ERANGE (above UINT64_MAX).  Inline: the
 * zoneinfo parser calls it for every value of every CPU.
 */
static inline int scan_u64(const char **pp, const char *end, uint64_t *ret) {
        const char *p = skip_blanks(*pp, end);
        uint64_t v = 0;

        if (p >= end || !is_ascii_digit(*p))
                return -EINVAL;
        while (p < end && is_ascii_digit(*p)) {
                unsigned d = (unsigned) (*p - '0');
                if (v > (UINT64_MAX - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
                p++;
        }
        *pp = p;
        *ret = v;
        return 0;
}

/* The same for a signed value (an optional '-' or '+').  0, -EINVAL or -ERANGE. */
static inline int scan_i64(const char **pp, const char *end, int64_t *ret) {
        const char *p = skip_blanks(*pp, end);
        bool neg = false;
        uint64_t v;
        int r;

        if (p < end && (*p == '-' || *p == '+')) {
                neg = *p == '-';
                p++;
        }
        r = scan_u64(&p, end, &v);
        if (r < 0)
                return r;
        if (neg ? v > (uint64_t) INT64_MAX + 1 : v > (uint64_t) INT64_MAX)
                return -ERANGE;
        *pp = p;
        *ret = neg ? (int64_t) (0 - v) : (int64_t) v;
        return 0;
}

/* Create a directory and its parents (mode 0755 for parents). 0 or -errno. */
int mkdir_p(const char *path, unsigned mode);

/* Write data to path atomically (temporary file in the same directory, fsync, rename). 0 or -errno. */
int write_file_atomic(const char *path, const char *data, size_t len, unsigned mode);

/* Print text after prefix, wrapped at 98 columns at spaces, continuation lines indented by cont spaces. */
void print_wrapped(FILE *f, const char *prefix, size_t cont, const char *text);

/*
 * Every JSON document pcptune writes (pcptunectl --json, pcptuned --once --json, the daemon's status.json)
 * carries "schema_version": this number, raised when a documented key changes meaning or goes away (keys are
 * only ever added under one version).
 */
#define PCPTUNE_JSON_SCHEMA_VERSION 1

/* Adds "schema_version" to a document's top-level object (before keys added later).  0 or -ENOMEM. */
struct json_object;
int json_add_schema_version(struct json_object *o);

/*
 * The one serialisation of pcptune's JSON: pretty (pretty true) or one line, and "/" written as is, not "\/"
 * (paths are common values).  The string belongs to o.  NULL on ENOMEM.
 */
const char *json_format(struct json_object *o, bool pretty);

/*
 * Member key of o as a finite number (JSON integer or double) within [lo, hi], for files pcptune reads
 * back (calibration.json, memcg-cost.json, status.json).  0, or -EINVAL when missing, not a number or
 * out of range (*ret untouched then).
 */
int json_get_number(struct json_object *o, const char *key, double lo, double hi, double *ret);

/* A wall-clock time (CLOCK_REALTIME µs) as RFC 3339 UTC with seconds, "2026-12-01T15:56:32Z", in buf (>= 21). */
const char *format_timestamp_utc(char *buf, size_t size, usec_t t);

/*
 * A point in time as an operator writes it (pcptunectl history --since/--until): a UTC date and time,
 * "2026-12-01", "2026-12-01 15:04", "2026-12-01 15:04:05", "2026-12-01T15:04:05[Z]"; "now"; or a
 * duration (parse_duration(): "7d", "1h30m") meaning that long before now.  now and *ret are
 * CLOCK_REALTIME µs.  0; -ERANGE for a date or time that does not exist (2026-02-30, 23:59:60);
 * -EINVAL for anything else refused (before 1970, a duration without its unit, other words);
 * *ret is untouched on error.
 */
int parse_time_point(const char *s, usec_t now, usec_t *ret);

/*
 * Copy s into buf (size bytes, always NUL-terminated, cut if needed) with
 * control characters as \xNN and '\\' doubled: names read from files are
 * printed this way.  Returns buf.
 */
const char *str_escape(const char *s, char *buf, size_t size);

/*
 * State a root process wrote and reads back (the journal, calibration.json) is trusted only if
 * nobody else could have written it.  trusted_dir_check(): the directory dir, holding the file
 * what (for the message), is owned by root or the effective user (tests run as one) and not
 * writable by group or others unless sticky (then they cannot rename or remove root's files).
 * trusted_file_read(): open path without following a symlink (O_NOFOLLOW) or blocking on a FIFO,
 * require a regular file owned by root or the effective user, not writable by group or others,
 * in a directory that passes trusted_dir_check(), and read at most max bytes (read_fd_full()).
 * 0; -EPERM with the reason (path escaped) in err (errlen bytes, may be NULL/0); -ENOENT and other
 * -errno of open/stat; -EFBIG (larger than max); -ENOMEM.
 */
int trusted_dir_check(const char *dir, const char *what, char *err, size_t errlen);

/*
 * FNV-1a, 64 bits (the offset basis and prime of the FNV reference), over n bytes of p, continuing
 * from h (FNV1A64_INIT to start).  For names and fingerprints, not secrets.
 */
#define FNV1A64_INIT UINT64_C(0xcbf29ce484222325)
uint64_t fnv1a64(uint64_t h, const void *p, size_t n);

/*
 * The name of a per-root state file in a state directory that daemons on several roots may
 * share: base itself (e.g. "status.json") for root "/" (or NULL/""), else base with
 * "-%016x" of the FNV-1a 64-bit hash of root inserted before its extension
 * ("status-0123456789abcdef.json").  root as given (callers pass it normalised).  The name is
 * written to buf (size bytes; at least strlen(base) + 18) and returned; NULL if it does not fit.
 */
char *root_state_name(const char *root, const char *base, char *buf, size_t size);
int trusted_file_read(const char *path, size_t max, char **ret_buf, size_t *ret_len, char *err, size_t errlen);

/*
 * One name per root directory: the canonical path if it exists (realpath),
 * else the path with repeated and trailing '/' removed.  "" or NULL is "/".
 * 0 or -ENOMEM; the caller frees *ret.
 */
int path_normalize_root(const char *root, char **ret);

/*
 * Fault injection (configure --enable-fault-injection, tests only): when
 * PCPTUNED_FAULT is "<point>[:N]", the Nth time `point` is reached (default
 * the first) the process writes a line to stderr and _exit(137)s, as if
 * SIGKILLed there.  When PCPTUNED_FAULT_DELAY_MS is N (1..10000), every point
 * first sleeps a random 0..N ms (uniform, microsecond steps).  Points:
 * after-intent, after-write, after-commit (knob_apply(), pageset_repair()),
 * after-restore (knob_release(), journal_restore()).  A no-op in normal builds.
 */
#if ENABLE_FAULT_INJECTION
void fault_inject(const char *point);
#else
static inline void fault_inject(const char *point) {
        (void) point;
}
#endif
