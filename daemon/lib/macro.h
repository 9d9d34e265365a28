/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Small helpers shared by every module: cleanup attributes, array sizes,
 * min/max.  Written for pcptune; systemd's internal macros are not a public API.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _pure_ __attribute__((pure))
#define _warn_unused_result_ __attribute__((warn_unused_result))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define CLAMP(x, lo, hi) ((x) < (lo) ? (lo) : ((x) > (hi) ? (hi) : (x)))

/* Return the pointer and leave NULL behind, so a cleanup attribute does not free it. */
#define TAKE_PTR(p)                        \
        ({                                 \
                __typeof__(p) _tp_ = (p);  \
                (p) = NULL;                \
                _tp_;                      \
        })

#define TAKE_FD(fd)                        \
        ({                                 \
                int _tf_ = (fd);           \
                (fd) = -EBADF;             \
                _tf_;                      \
        })

static inline void freep(void *p) {
        free(*(void **) p);
}

static inline void closep(int *fd) {
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
}

static inline void fclosep(FILE **f) {
        if (*f)
                fclose(*f);
}

static inline void strv_freep(char ***strv) {
        if (!*strv)
                return;
        for (char **s = *strv; *s; s++)
                free(*s);
        free(*strv);
}

/* Define a `name##p` cleanup helper for a type whose free function accepts NULL. */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)   \
        static inline void func##p(type *p) {     \
                if (*p)                           \
                        func(*p);                 \
        }

static inline const char *strna(const char *s) {
        return s ?: "n/a";
}

static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}

#define streq(a, b) (strcmp((a), (b)) == 0)
#define strneq(a, b, n) (strncmp((a), (b), (n)) == 0)
