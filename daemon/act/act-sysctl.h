/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "journal.h"
#include "model-pcp.h"
#include "source-topology.h"

/*
 * Writing sysctls politely: save an intent in the restore journal before
 * every write (journal.h), read before writing, skip no-ops, confirm after
 * writing, and back off when an administrator changes a knob we manage
 * (the admin wins until `pcptunectl resume`).  Only knobs of the allowlist
 * (knob.h) are written, at the allowlist's path, within its range.
 */

typedef struct KnobState {
        const KnobDesc *desc;      /* the table row: name, path, range, hooks */
        bool present;              /* the last read found the knob (KnobState of the actuator and of status) */
        int64_t value;             /* what it held then */
        bool managed;              /* we changed it and hold its original in the journal */
        int64_t original;          /* valid if managed */
        int64_t written;           /* valid if managed */
        bool admin_override;       /* someone else changed it while we managed it */
        int64_t admin_value;
        int64_t last_would;        /* dry-run: last value reported, to log each change once */
        bool has_last_would;
        usec_t last_change_usec;   /* CLOCK_REALTIME of the last change logged (write, would-write, restore); 0: none */
        char last_change[384];     /* its log line after "<name>: ", "0 -> 4509 (policy p, rule r: ...)" */
} KnobState;

/* Why a value is wanted: written to the journal fields and the log line. */
typedef struct ChangeReason {
        const char *policy;        /* NULL when restoring */
        const char *rule;
        const char *text;          /* "minimum: high = 4 x batch on every zone" */
        bool probe;                /* a value the kernel may not know: EINVAL is logged at debug only */
} ChangeReason;

typedef enum KnobOutcome {
        KNOB_NOOP,                 /* already at the wanted value */
        KNOB_WRITTEN,
        KNOB_WOULD_WRITE,          /* dry-run */
        KNOB_RESTORED,             /* original written back */
        KNOB_ADMIN,                /* an administrator owns it now: left alone */
        _KNOB_OUTCOME_MAX,
} KnobOutcome;

/* Read a knob's current value below root.  0 or -errno. */
int knob_read(const char *root, const KnobDesc *k, int64_t *ret);

/* Write a value to a knob below root (write_file_at: never leaves root).  -ERANGE outside the knob's range. */
int knob_write(const char *root, const KnobDesc *k, int64_t v);

/*
 * Make the knob hold `wanted`: read the current value; if we manage it and it
 * is no longer what we wrote, the administrator wins (admin_override, journal
 * entry dropped, logged once); skip no-ops; in dry-run log "would set" once per
 * new value; otherwise save the intent {original, current, wanted}, write,
 * commit {original, wanted} and read back (crash points after-intent,
 * after-write, after-commit in fault-injection builds).  Logs the change at NOTICE with structured fields (KNOB, OLD, NEW,
 * POLICY, RULE, REASON).  j may be NULL in dry-run.
 * Returns the outcome (>= 0) or -errno (range check -ERANGE, write error,
 * journal error: nothing written then).
 */
int knob_apply(KnobState *k, const char *root, Journal *j, bool dry_run, int64_t wanted, const ChangeReason *why,
               int64_t *ret_old);

/*
 * Hand the knob back: if we manage it and it still holds what we wrote, write
 * the original; drop it from the journal either way.  Returns KNOB_RESTORED,
 * KNOB_NOOP (not managed), KNOB_ADMIN (changed by someone else: left alone) or -errno.
 */
int knob_release(KnobState *k, const char *root, Journal *j, bool dry_run, const char *why);

/*
 * Crash recovery: for each journal entry, write the original back if the knob
 * still holds a value we may have left (written, or an intent's next); log
 * what was done (names from the allowlist, paths from it too).  The journal is emptied
 * and saved (file removed) when every entry was handled.  Returns the number of
 * knobs restored or -errno.
 */
int journal_restore(Journal *j, const char *root, const char *context);

/*
 * Confirm that the kernel applied a pcp fraction: on layouts that print
 * high_min/high_max (6.13+) every CPU of every populated zone shows the model's
 * values; on FIXED kernels (5.14-6.6) the fixed `high` matches; on 6.7-6.12
 * only the sysctl can be checked (the printed high is dynamic).  Reads
 * zoneinfo and topology below root.  0 when confirmed, -EBADE on a mismatch
 * (described in ret_msg, malloc'd, may be NULL), -errno on read errors.
 */
int pcp_confirm(const char *root, int fraction, char **ret_msg);

/*
 * The value to try before d->value (the row's probe, knob.h), when the kernel
 * may reject it with EINVAL: true and *ret_value.  regime: of the sample the
 * decision was made on (PCP_REGIME_LEGACY kernels have no floor to probe).
 */
bool knob_probe_value(const KnobDesc *desc, const KnobDecision *d, PcpRegime regime, int64_t *ret_value);

/* The row's step after a write of value over old below root (KnobAfterWrite): logged, never fatal. */
void knob_after_write(const KnobDesc *desc, const char *root, int64_t old, int64_t value);

/* The row's confirmation that the kernel applied value (KnobConfirm): logged, never fatal. */
void knob_confirm(const KnobDesc *desc, const char *root, int64_t value);
