/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <json-c/json.h>

#include "journal.h"
#include "util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);
#define json_putp json_object_putp

static void journal_entry_done(JournalEntry *e) {
        free(e->name);
        free(e->path);
}

Journal *journal_free(Journal *j) {
        if (!j)
                return NULL;
        for (size_t i = 0; i < j->n_entries; i++)
                journal_entry_done(&j->entries[i]);
        free(j->entries);
        free(j->file);
        free(j->root);
        free(j);
        return NULL;
}

Journal *journal_new(const char *state_dir, const char *root) {
        _cleanup_(journal_freep) Journal *j = calloc(1, sizeof(Journal));

        if (!j)
                return NULL;
        if (asprintf(&j->file, "%s/%s", state_dir, JOURNAL_FILE) < 0) {
                j->file = NULL;
                return NULL;
        }
        j->root = strdup(root ?: "/");
        if (!j->root)
                return NULL;
        return TAKE_PTR(j);
}

const JournalEntry *journal_find(const Journal *j, const char *name) {
        for (size_t i = 0; i < j->n_entries; i++)
                if (streq(j->entries[i].name, name))
                        return &j->entries[i];
        return NULL;
}

int journal_set(Journal *j, const char *name, const char *path, int64_t original, int64_t written) {
        for (size_t i = 0; i < j->n_entries; i++)
                if (streq(j->entries[i].name, name)) {
                        j->entries[i].written = written;
                        return 0;
                }

        JournalEntry *n = realloc(j->entries, (j->n_entries + 1) * sizeof(JournalEntry));
        if (!n)
                return -ENOMEM;
        j->entries = n;
        JournalEntry e = { strdup(name), strdup(path), original, written };
        if (!e.name || !e.path) {
                journal_entry_done(&e);
                return -ENOMEM;
        }
        j->entries[j->n_entries++] = e;
        return 0;
}

bool journal_remove(Journal *j, const char *name) {
        for (size_t i = 0; i < j->n_entries; i++)
                if (streq(j->entries[i].name, name)) {
                        journal_entry_done(&j->entries[i]);
                        memmove(&j->entries[i], &j->entries[i + 1], (j->n_entries - i - 1) * sizeof(JournalEntry));
                        j->n_entries--;
                        return true;
                }
        return false;
}

int journal_save(const Journal *j) {
        _cleanup_(json_putp) json_object *root = NULL;
        json_object *arr;
        const char *text;

        if (j->n_entries == 0) {
                if (unlink(j->file) < 0 && errno != ENOENT)
                        return negative_errno();
                return 0;
        }

        root = json_object_new_object();
        if (!root)
                return -ENOMEM;
        arr = json_object_new_array();
        if (!arr)
                return -ENOMEM;
        json_object_object_add(root, "entries", arr);
        json_object_object_add(root, "version", json_object_new_int(1));
        json_object_object_add(root, "pid", json_object_new_int((int) getpid()));
        json_object_object_add(root, "root", json_object_new_string(j->root));
        for (size_t i = 0; i < j->n_entries; i++) {
                json_object *e = json_object_new_object();
                json_object_object_add(e, "name", json_object_new_string(j->entries[i].name));
                json_object_object_add(e, "path", json_object_new_string(j->entries[i].path));
                json_object_object_add(e, "original", json_object_new_int64(j->entries[i].original));
                json_object_object_add(e, "written", json_object_new_int64(j->entries[i].written));
                json_object_array_add(arr, e);
        }
        text = json_format(root, true);
        if (!text)
                return -ENOMEM;
        return write_file_atomic(j->file, text, strlen(text), 0600);
}

static int json_get_string(json_object *o, const char *key, const char **ret) {
        json_object *v;
        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return -EINVAL;
        *ret = json_object_get_string(v);
        return 0;
}

static int json_get_int64(json_object *o, const char *key, int64_t *ret) {
        json_object *v;
        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
                return -EINVAL;
        *ret = json_object_get_int64(v);
        return 0;
}

int journal_load(const char *state_dir, Journal **ret) {
        _cleanup_(journal_freep) Journal *j = NULL;
        _cleanup_(freep) char *text = NULL;
        _cleanup_(json_putp) json_object *root = NULL;
        json_object *arr;
        const char *s;
        int r;

        j = journal_new(state_dir, "/");
        if (!j)
                return -ENOMEM;
        r = read_file_at("/", j->file, 1024 * 1024, &text, NULL);
        if (r < 0)
                return r;
        root = json_tokener_parse(text);
        if (!root || json_get_string(root, "root", &s) < 0)
                return -EINVAL;
        free(j->root);
        j->root = strdup(s);
        if (!j->root)
                return -ENOMEM;
        if (!json_object_object_get_ex(root, "entries", &arr) || !json_object_is_type(arr, json_type_array))
                return -EINVAL;
        for (size_t i = 0; i < json_object_array_length(arr); i++) {
                json_object *e = json_object_array_get_idx(arr, i);
                const char *name, *path;
                int64_t orig, written;
                if (json_get_string(e, "name", &name) < 0 || json_get_string(e, "path", &path) < 0 ||
                    json_get_int64(e, "original", &orig) < 0 || json_get_int64(e, "written", &written) < 0)
                        return -EINVAL;
                r = journal_set(j, name, path, orig, written);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(j);
        return 0;
}
