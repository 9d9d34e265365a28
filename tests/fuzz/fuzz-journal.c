/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: journal_parse() on arbitrary bytes.  Whatever it accepts
 * must name allowlisted, writable knobs with values their handlers accept,
 * once each, below an absolute root: the promise restore relies on.
 * And the member count that finds duplicate keys (journal_json_members())
 * never counts fewer members than json-c's tree holds for the same text: an
 * undercount could let a duplicate through.
 */
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "journal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static long tree_members(json_object *o) {
        long n = 0;
        if (json_object_is_type(o, json_type_object)) {
                json_object_object_foreach(o, key, v) {
                        (void) key;
                        n += 1 + tree_members(v);
                }
        } else if (json_object_is_type(o, json_type_array))
                for (size_t i = 0; i < json_object_array_length(o); i++)
                        n += tree_members(json_object_array_get_idx(o, i));
        return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        Journal *j = NULL;
        char err[512];
        long members;

        members = journal_json_members((const char *) data, size, NULL, 0);
        if (members >= 0 && size < 65536 && !memchr(data, 0, size)) {
                json_tokener *tok = json_tokener_new();
                json_object *o;
                if (!tok)
                        abort();
                json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
                o = json_tokener_parse_ex(tok, (const char *) data, (int) size);
                if (o && tree_members(o) > members)
                        abort();
                json_object_put(o);
                json_tokener_free(tok);
        }

        if (journal_parse("/nonexistent-state/" JOURNAL_FILE, (const char *) data, size, &j, err, sizeof err) < 0)
                return 0;
        if (j->root[0] != '/' || j->n_entries > _KNOB_ID_MAX || strlen(j->root) >= 4096 || members < 0)
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
