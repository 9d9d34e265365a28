/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <syslog.h>

#include "macro.h"

/*
 * Logging to the journal (structured fields) when running under systemd with
 * journald, else to stderr.  The log target is process-wide state set once at
 * start-up (the one exception to "no mutable globals", as in every daemon).
 * Parsers and readers log at most at debug; the manager and the policy engine
 * decide and log "Failed to <verb> <object>: <reason>".
 */

typedef enum LogTarget {
        LOG_TARGET_AUTO,      /* journal if $JOURNAL_STREAM matches stderr or INVOCATION_ID is set, else stderr */
        LOG_TARGET_STDERR,
        LOG_TARGET_JOURNAL,
        LOG_TARGET_NULL,      /* tests */
} LogTarget;

void log_setup(const char *ident, LogTarget target, int max_level);
int log_get_max_level(void);
void log_set_max_level(int level);
bool log_to_journal(void);

/*
 * Log a message with optional extra journal fields ("KEY=value" strings,
 * NULL-terminated, may be NULL).  error is an errno (positive or negative) or 0;
 * it is appended as ": strerror" only if the format asks for it with %m-style
 * use by the caller.  Returns -abs(error) (or 0 when error is 0), so callers
 * can `return log_error_errno(r, ...)`.
 */
_printf_(4, 5) int log_fields_internal(int level, int error, const char *const *fields, const char *fmt, ...);

#define log_full_errno(level, error, ...) log_fields_internal((level), (error), NULL, __VA_ARGS__)
#define log_debug(...) log_full_errno(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...) log_full_errno(LOG_INFO, 0, __VA_ARGS__)
#define log_notice(...) log_full_errno(LOG_NOTICE, 0, __VA_ARGS__)
#define log_warning(...) log_full_errno(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...) log_full_errno(LOG_ERR, 0, __VA_ARGS__)
#define log_debug_errno(e, ...) log_full_errno(LOG_DEBUG, (e), __VA_ARGS__)
#define log_info_errno(e, ...) log_full_errno(LOG_INFO, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_WARNING, (e), __VA_ARGS__)
#define log_error_errno(e, ...) log_full_errno(LOG_ERR, (e), __VA_ARGS__)
#define log_fields(level, fields, ...) log_fields_internal((level), 0, (fields), __VA_ARGS__)

/* strerror() of a negative or positive errno, thread-safe (static table). */
const char *errno_str(int error);

#define log_oom() log_error_errno(ENOMEM, "Out of memory")
