/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>

#include "log.h"

static struct {
        const char *ident;
        LogTarget target;
        int max_level;
} log_state = { "pcptune", LOG_TARGET_STDERR, LOG_INFO };

/* $JOURNAL_STREAM is "device:inode" of the stream systemd connected to stderr. */
static bool stderr_is_journal(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
                return false;
        if (fstat(STDERR_FILENO, &st) < 0)
                return false;
        return (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino;
}

void log_setup(const char *ident, LogTarget target, int max_level) {
        log_state.ident = ident;
        log_state.max_level = max_level;
        if (target == LOG_TARGET_AUTO)
                target = stderr_is_journal() ? LOG_TARGET_JOURNAL : LOG_TARGET_STDERR;
        log_state.target = target;
}

int log_get_max_level(void) {
        return log_state.max_level;
}

void log_set_max_level(int level) {
        log_state.max_level = level;
}

bool log_to_journal(void) {
        return log_state.target == LOG_TARGET_JOURNAL;
}

const char *errno_str(int error) {
        if (error < 0)
                error = -error;
        /* util.c's readers and writers refuse anything but a regular file with EBADFD. */
        if (error == EBADFD)
                return "Not a regular file";
        return strerror(error);
}

int log_fields_internal(int level, int error, const char *const *fields, const char *fmt, ...) {
        int ret = error > 0 ? -error : error;
        char msg[2048];
        va_list ap;

        if (level > log_state.max_level || log_state.target == LOG_TARGET_NULL)
                return ret;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);

        if (log_state.target == LOG_TARGET_JOURNAL) {
                struct iovec iov[32];
                char mbuf[sizeof msg + 16], pbuf[32], ebuf[32], ibuf[64];
                size_t n = 0;

                snprintf(mbuf, sizeof mbuf, "MESSAGE=%s", msg);
                iov[n++] = (struct iovec){ mbuf, strlen(mbuf) };
                snprintf(pbuf, sizeof pbuf, "PRIORITY=%d", level);
                iov[n++] = (struct iovec){ pbuf, strlen(pbuf) };
                snprintf(ibuf, sizeof ibuf, "SYSLOG_IDENTIFIER=%s", log_state.ident);
                iov[n++] = (struct iovec){ ibuf, strlen(ibuf) };
                if (error != 0) {
                        snprintf(ebuf, sizeof ebuf, "ERRNO=%d", error < 0 ? -error : error);
                        iov[n++] = (struct iovec){ ebuf, strlen(ebuf) };
                }
                for (size_t i = 0; fields && fields[i] && n < ELEMENTSOF(iov); i++)
                        iov[n++] = (struct iovec){ (void *) fields[i], strlen(fields[i]) };
                if (sd_journal_sendv(iov, (int) n) >= 0)
                        return ret;
                /* journald gone: fall through to stderr */
        }

        fprintf(stderr, "%s%s\n",
                level <= LOG_ERR       ? "error: "
                : level <= LOG_WARNING ? "warning: "
                                       : "",
                msg);
        return ret;
}
