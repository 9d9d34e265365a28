/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: journal_parse() on arbitrary bytes.  Whatever it accepts
 * must name allowlisted, writable knobs with values their handlers accept,
 * once each, below an absolute root: the promise restore relies on.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "journal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        Journal *j = NULL;
        char err[512];

        if (journal_parse("/nonexistent-state", (const char *) data, size, &j, err, sizeof err) < 0)
                return 0;
        if (j->root[0] != '/' || j->n_entries > _KNOB_ID_MAX)
                abort();
        for (size_t i = 0; i < j->n_entries; i++) {
                const JournalEntry *e = &j->entries[i];
                if (!e->knob || !e->knob->writable || knob_desc_by_name(e->knob->name) != e->knob ||
                    !knob_value_valid(e->knob, e->original) || !knob_value_valid(e->knob, e->written) ||
                    (e->has_next && !knob_value_valid(e->knob, e->next)))
                        abort();
                for (size_t k = 0; k < i; k++)
                        if (j->entries[k].knob == e->knob)
                                abort();
        }
        journal_free(j);
        return 0;
}
