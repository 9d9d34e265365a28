/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "knob.h"
#include "macro.h"

/*
 * The restore journal: for every knob the daemon changed, the original value
 * and every value it may have left, saved atomically in the state directory
 * (default /run/pcptune/restore.json) BEFORE each write.  On a clean stop the
 * originals are written back and the journal removed; after a crash, the next
 * start restores each knob whose current value is one we may have left
 * (anything else means someone changed it since: they win).
 *
 * Each write goes intent -> write -> commit: the intent records {original,
 * written (what the knob holds now), next (what we are about to write)} and
 * is saved before the write, so a crash at any instant leaves the knob at a
 * value the journal names.  Entries name a knob of the allowlist (knob.h);
 * the path restored is the allowlist's, never one read from the file.
 *
 * Version 2 adds "next" and drops "path"; version-1 journals (the previous
 * release's: name, path, original, written) still load, their path checked
 * against the allowlist.
 */

#define JOURNAL_FILE "restore.json"
#define JOURNAL_VERSION 2

typedef struct JournalEntry {
        const KnobDesc *knob;      /* the allowlist row */
        int64_t original;          /* the value before pcptune first wrote the knob */
        int64_t written;           /* the value the last completed write left */
        bool has_next;             /* a write of `next` is in flight (intent saved, not committed) */
        int64_t next;
} JournalEntry;

typedef struct Journal {
        char *file;                /* <state_dir>/restore.json */
        char *root;                /* root prefix the values belong to (normalised) */
        JournalEntry entries[_KNOB_ID_MAX];
        size_t n_entries;
} Journal;

/* An empty journal bound to state_dir (nothing is written yet).  NULL on ENOMEM. */
Journal *journal_new(const char *state_dir, const char *root);

/*
 * Load <state_dir>/restore.json and validate it like any input: the file must
 * be a regular file owned by root (or by us) and not writable by group or
 * others, in a directory not writable by group or others (unless sticky);
 * every entry must name a writable knob of the allowlist once, with values
 * its handler accepts; version 1 or 2.
 * Returns 0, -ENOENT (no journal), -EPERM (ownership or mode), -EINVAL (content),
 * or -errno of the read.  On -EPERM/-EINVAL, err (may be NULL) holds a
 * one-line reason naming the file, control characters escaped.
 */
int journal_load(const char *state_dir, Journal **ret, char *err, size_t errlen);

/* The validation of journal_load() on text already read (len bytes, any content).  Same returns but -EPERM. */
int journal_parse(const char *state_dir, const char *text, size_t len, Journal **ret, char *err, size_t errlen);

/* Write the journal atomically (fsync + rename); an empty journal removes the file.  0 or -errno. */
int journal_save(const Journal *j);

/*
 * Record an intent and save: the knob holds `written`, `next` is about to be
 * written, `original` is what to restore.  Creates the entry if needed.  On a
 * failed save the journal in memory is left exactly as before (it matches the
 * file again).  0 or -errno (nothing must be written then).
 */
int journal_intent(Journal *j, const KnobDesc *k, int64_t original, int64_t written, int64_t next);

/*
 * The knob now holds `written` (after a write, or `next` was not written after
 * all): clear the intent and save.  On a failed save the memory keeps the
 * saved intent, which still names both values.  0, -ENOENT (no entry) or -errno.
 */
int journal_commit(Journal *j, const KnobDesc *k, int64_t written);

/* Remove a knob's entry and save; on a failed save the entry stays.  0 (also when absent) or -errno. */
int journal_drop(Journal *j, const KnobDesc *k);

/* Forget every entry (memory only; journal_save then removes the file). */
void journal_clear(Journal *j);

const JournalEntry *journal_find(const Journal *j, const KnobDesc *k);

/* Does the knob's current value belong to us: what we wrote, or the intent's next? */
bool journal_entry_holds(const JournalEntry *e, int64_t current);

Journal *journal_free(Journal *j);
DEFINE_TRIVIAL_CLEANUP_FUNC(Journal *, journal_free);
