/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "act-sysctl.h"
#include "journal.h"
#include "snapshot.h"

/*
 * Pagesets against the model (a batch of 7 where 63 is expected after
 * deferred memory init).  What can be compared depends on what zoneinfo
 * prints: batch always; high_min/high_max where printed (6.13+); the fixed
 * high before 6.7 (and with pcp_knob legacy, <= 5.13).  On 6.7-6.12 the
 * printed high is the auto-tuned current value: only a bound can be checked
 * (0 for a never-used pageset, else <= the largest high_max), and a value
 * outside it is reported as dynamic, not as a mismatch.
 */

typedef enum PagesetField {
        PAGESET_BATCH,
        PAGESET_HIGH,         /* fixed high (<= 6.6) */
        PAGESET_HIGH_MIN,
        PAGESET_HIGH_MAX,
        _PAGESET_FIELD_MAX,
} PagesetField;

const char *pageset_field_to_string(PagesetField f);

typedef struct PagesetMismatch {
        int node;
        char zone[ZONE_NAME_MAX];
        int cpu;
        PagesetField field;
        int64_t actual;
        int64_t expected;
} PagesetMismatch;

typedef struct PagesetCheck {
        int fraction;          /* the sysctl value the model used */
        size_t compared;       /* values compared */
        size_t exact;
        PagesetMismatch *mismatches;
        size_t n_mismatches;
        size_t dynamic_high;   /* 6.7-6.12: CPUs whose printed high is outside [high_min, high_max] (stale, not wrong) */
        bool batch_only;       /* only batch could be compared (6.7-6.12 layout) */
} PagesetCheck;

/* Compare every CPU of every populated zone with the model at the snapshot's fraction.  0 or -ENOMEM/-ENODATA. */
int pageset_check(const Snapshot *s, PagesetCheck *ret);
void pageset_check_done(PagesetCheck *c);

/*
 * Force the kernel to recompute every pageset: write a large fraction, then
 * the wanted value (the handler only recomputes when the value changes; a
 * large fraction only shrinks lists for a moment, while on <= 5.13 a small one
 * would give every CPU managed/F pages).  The original is journaled first and
 * the journal entry dropped once the knob holds `wanted` again (when wanted is
 * the original).  An entry j already holds for the knob (the daemon's, or a
 * crashed run's that the caller loaded) keeps its original while the knob
 * still holds a value the entry names; otherwise the value in place is the
 * original.  Then re-read and check.  Returns 0 when the pagesets match
 * afterwards, -EBADE if they still do not (described in the log), -errno.
 */
int pageset_repair(const char *root, Journal *j, int64_t wanted, PagesetCheck *ret_after);
