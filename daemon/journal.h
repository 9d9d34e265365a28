/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

/*
 * The restore journal: for every knob the daemon changed, the original
 * value and the value it wrote, saved atomically in the state directory
 * (default /run/pcptune/restore.json) BEFORE the first write.  On a clean
 * stop the originals are written back and the journal removed; after a
 * crash, the next start restores each knob whose current value is still the
 * one we wrote (anything else means someone changed it since: they win).
 */

#define JOURNAL_FILE "restore.json"

typedef struct JournalEntry {
        char *name;        /* "vm.percpu_pagelist_high_fraction" */
        char *path;        /* "/proc/sys/vm/percpu_pagelist_high_fraction", below root */
        int64_t original;
        int64_t written;
} JournalEntry;

typedef struct Journal {
        char *file;        /* <state_dir>/restore.json */
        char *root;        /* root prefix the values belong to */
        JournalEntry *entries;
        size_t n_entries;
} Journal;

/* An empty journal bound to state_dir (nothing is written yet).  NULL on ENOMEM. */
Journal *journal_new(const char *state_dir, const char *root);

/*
 * Load <state_dir>/restore.json.  0, -ENOENT (no journal), -EINVAL (corrupt:
 * the caller reports it and leaves the file for an operator) or -errno.
 */
int journal_load(const char *state_dir, Journal **ret);

/* Write the journal atomically (fsync + rename); an empty journal removes the file.  0 or -errno. */
int journal_save(const Journal *j);

/* Add or update an entry (original kept if the entry exists).  0 or -ENOMEM. */
int journal_set(Journal *j, const char *name, const char *path, int64_t original, int64_t written);

/* Remove an entry by name.  true if it was there. */
bool journal_remove(Journal *j, const char *name);

const JournalEntry *journal_find(const Journal *j, const char *name);

Journal *journal_free(Journal *j);
DEFINE_TRIVIAL_CLEANUP_FUNC(Journal *, journal_free);
