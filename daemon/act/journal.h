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
 *
 * One journal per root: two daemons on two roots may share a state directory
 * (the lock is the root's), so each root has its own file there, and the
 * root recorded inside is checked on load.  The host's (root "/") is
 * restore.json, where the unit, the package scripts and the documentation
 * look; any other root's is restore-<16 hex digits>.json, the digits the
 * FNV-1a 64-bit hash of the normalised root path (path_normalize_root()).  A
 * restore.json of another root (written before journals had one file per
 * root) is still loaded for that root, and refused for root "/".
 */

#define JOURNAL_FILE "restore.json"
#define JOURNAL_VERSION 2
/* "restore-" + 16 hex digits + ".json" + NUL */
#define JOURNAL_NAME_MAX 32

typedef struct JournalEntry {
        const KnobDesc *knob;      /* the allowlist row */
        int64_t original;          /* the value before pcptune first wrote the knob */
        int64_t written;           /* the value the last completed write left */
        bool has_next;             /* a write of `next` is in flight (intent saved, not committed) */
        int64_t next;
} JournalEntry;

typedef struct Journal {
        char *file;                /* <state_dir>/<journal_file_name(root)> */
        char *root;                /* root prefix the values belong to (normalised) */
        JournalEntry entries[_KNOB_ID_MAX];
        size_t n_entries;
} Journal;

/*
 * The name of root's journal in a state directory: JOURNAL_FILE for "/" (or NULL/""), else
 * "restore-%016x.json" of the FNV-1a 64-bit hash of root (root as given: callers pass it normalised).
 * buf holds at least JOURNAL_NAME_MAX bytes.  Returns buf.
 */
char *journal_file_name(const char *root, char buf[static JOURNAL_NAME_MAX]);

/* An empty journal of root bound to state_dir (nothing is written yet).  NULL on ENOMEM. */
Journal *journal_new(const char *state_dir, const char *root);

/*
 * Load root's journal from state_dir (journal_file_name()) and validate it
 * like any input: the file must be a regular file owned by root (or by us)
 * and not writable by group or others, in a directory not writable by group
 * or others (unless sticky); it must be one JSON object without duplicate
 * keys or NUL characters (escaped ones included); every entry must name a
 * writable knob of the allowlist once, with values its handler accepts;
 * version 1 or 2; the root recorded inside must be root.  For a root other
 * than "/" without a file of its own, a restore.json recording that root
 * (an older release's) is loaded instead (j->file names it: saves go there).
 * Returns 0, -ENOENT (no journal), -EPERM (ownership or mode), -EINVAL
 * (content), -EXDEV (the file records another root), or -errno of the read.
 * On -EPERM/-EINVAL/-EXDEV, err (may be NULL) holds a one-line reason naming
 * the file, control characters escaped.
 */
int journal_load(const char *state_dir, const char *root, Journal **ret, char *err, size_t errlen);

/* journal_load() of one file, whichever root it records (j->root): same checks and returns but -EXDEV. */
int journal_load_path(const char *file, Journal **ret, char *err, size_t errlen);

/*
 * The validation of journal_load() on text already read from file (len bytes, any content; file is
 * used in the messages and becomes j->file).  The root is the file's, unchecked.  Same returns but
 * -EPERM and -EXDEV.
 */
int journal_parse(const char *file, const char *text, size_t len, Journal **ret, char *err, size_t errlen);

/*
 * Check JSON text (len bytes) before json-c parses it, for what json-c's tree cannot show: count the
 * members of all objects (a ':' outside strings) so that a duplicate key, which json-c silently
 * replaces, shows as a tree with fewer members; refuse an escaped NUL ("\u0000": json-c keeps it in
 * values but cuts keys there) and any byte outside strings that standard JSON does not allow there
 * (comments, single quotes: json-c's extensions, which would hide a ':' from the count).
 * Returns the member count (>= 0) or -EINVAL (reason in err, may be NULL).  Exposed for the tests
 * and the fuzz target.
 */
long journal_json_members(const char *text, size_t len, char *err, size_t errlen);

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
