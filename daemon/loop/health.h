/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The node's health (docs/health.md): the health file pcptuned keeps in its
 * state directory after every sample, and the verdict `pcptunectl check`
 * gives from it and the restore journal, with node-problem-detector's exit
 * codes.  contrib/kubernetes/node-problem-detector/pcptune-check.sh applies
 * the same rules in POSIX sh for NPD's container; tests/scripts/npd-check.sh
 * compares the two.
 */

/* The file's name in the state directory: the only path the writer uses (with the state directory's). */
#define HEALTH_FILE "health"
/* The largest health file a reader accepts, bytes. */
#define HEALTH_FILE_MAX 4096
/* The longest REASON, characters. */
#define HEALTH_REASON_MAX 120

/* NPD's exit codes (node-problem-detector, custom plugin monitor: OK, NonOK, Unknown). */
typedef enum HealthVerdict {
        HEALTH_OK = 0,
        HEALTH_PROBLEM = 1,
        HEALTH_UNKNOWN = 2,
} HealthVerdict;

/* One health file's content. */
typedef struct HealthInfo {
        bool problem;                        /* VERDICT=problem (else ok) */
        char reason[HEALTH_REASON_MAX + 1];  /* REASON */
        int64_t updated;                     /* UPDATED: Unix seconds of the sample */
        int64_t interval;                    /* INTERVAL: seconds, >= 1 */
        bool has_held;
        uint64_t held;                       /* HELD: knobs whose originals the journal holds */
        int dry_run;                         /* DRY_RUN: 0, 1, or -1 when absent (reader) */
        int64_t pid;                         /* PID (0: absent) */
} HealthInfo;

/*
 * What pcptuned says of itself at a sample, the first that applies: a
 * failed last reload, a refused knob write (knob name, errno > 0), a crash
 * restore pending, else ok ("dry run" or "sampling").  Fills ret->problem and
 * ret->reason only.  refused_knob may be NULL (none).
 */
void health_self_verdict(bool reload_failed, const char *refused_knob, int refused_errno, bool crash_pending,
                         bool dry_run, HealthInfo *ret);

/* The file's text (KEY=VALUE lines, docs/health.md order) into buf; REASON is cut at 120 characters and
 * stripped of newlines and quotes.  Returns the length, or -ENOBUFS when size is too small. */
int health_format(const HealthInfo *h, char *buf, size_t size);

/* Write STATE_DIR/health atomically (a temporary file, then rename(2)), mode 0644.  0 or -errno. */
int health_write(const char *state_dir, const HealthInfo *h);

/* Remove STATE_DIR/health (a stop that handed every value back).  0 or -errno (-ENOENT is 0). */
int health_remove(const char *state_dir);

/*
 * Parse a health file's text (len bytes, any content: untrusted) with the
 * rules of docs/health.md: first line PCPTUNE_HEALTH=1, then KEY=VALUE lines
 * (no quote in a value), VERDICT ok|problem, UPDATED and INTERVAL (>= 1)
 * unsigned integers of at most 12 digits, HELD such a count if present,
 * DRY_RUN 0 or 1 if present; unknown keys are ignored.  0, or -EBADMSG with
 * the reason in why (as pcptune-check.sh says it).
 */
int health_parse(const char *text, size_t len, HealthInfo *ret, char *why, size_t why_size);

/*
 * The verdict of one state directory at now (Unix seconds): docs/health.md,
 * "The node's verdict".  msg gets the one line (without newline).  Sets
 * *ret_fresh_ok (may be NULL) when the answer is 0 from a fresh health file.
 */
HealthVerdict health_check_dir(const char *dir, int64_t now, char *msg, size_t size, bool *ret_fresh_ok);

/* The worst verdict over several directories (1, then 2, then 0; with several, each line is prefixed with
 * "DIR: ").  n >= 1. */
HealthVerdict health_check_dirs(char *const *dirs, size_t n, int64_t now, char *msg, size_t size);

struct DaemonCounters;
struct KnobCounters;
struct PolicySet;

/*
 * The health file of a running pcptuned: its own verdict (health_self_verdict())
 * from what it counted (c: the last load, the journal's state; kc: by KnobId,
 * the first managed knob whose last write failed), HELD c->journal_held, the
 * interval in seconds (rounded up), the time now and our pid; reason_ok
 * (may be NULL) replaces an ok reason ("stopped, values kept for the next
 * pcptuned").  Written as health_write().  0 or -errno.
 */
int health_write_daemon(const char *state_dir, const struct DaemonCounters *c, const struct KnobCounters *kc,
                        bool dry_run, uint64_t interval_usec, const char *reason_ok);

/*
 * pcptune_config_info's policy_hash: FNV-1a 64 over each policy file's name
 * (without its directory) and content, in the set's order, as 16 hex digits
 * in ret.  Files are read again (the embedded set from the binary); an
 * unreadable one counts by its name only.
 */
void policy_set_hash(const struct PolicySet *set, char ret[17]);

struct KnobState;


/* Managed knobs among knobs[] (_KNOB_ID_MAX rows, by KnobId): the values the journal holds. */
uint64_t health_held_knobs(const struct KnobState *knobs);

/*
 * pcptune_journal_crash_restore's state: a daemon that writes says done when
 * it restored a crashed run's journal at start (restored), else none; a dry
 * run, which restores nothing, says pending for root's journal in state_dir
 * that is neither handed over (onstop.h) nor a running pcptuned's (taken).
 */
int health_crash_restore_state(const char *state_dir, const char *root, bool dry_run, bool restored, bool taken);
