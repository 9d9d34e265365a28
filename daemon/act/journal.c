/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "journal.h"
#include "util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);
#define json_putp json_object_putp

/* A journal holds at most one entry per knob: a few hundred bytes.  Anything bigger is not ours. */
#define JOURNAL_SIZE_MAX ((size_t) 64 * 1024)

Journal *journal_free(Journal *j) {
        if (!j)
                return NULL;
        free(j->file);
        free(j->root);
        free(j);
        return NULL;
}

char *journal_file_name(const char *root, char buf[static JOURNAL_NAME_MAX]) {
        return root_state_name(root, JOURNAL_FILE, buf, JOURNAL_NAME_MAX);
}

static Journal *journal_new_file(const char *file, const char *root) {
        _cleanup_(journal_freep) Journal *j = calloc(1, sizeof(Journal));

        if (!j)
                return NULL;
        j->file = strdup(file);
        j->root = strdup(root && *root ? root : "/");
        if (!j->file || !j->root)
                return NULL;
        return TAKE_PTR(j);
}

Journal *journal_new(const char *state_dir, const char *root) {
        _cleanup_(freep) char *file = NULL;
        char name[JOURNAL_NAME_MAX];

        if (asprintf(&file, "%s/%s", state_dir, journal_file_name(root, name)) < 0)
                return NULL;
        return journal_new_file(file, root);
}

static JournalEntry *journal_entry(Journal *j, const KnobDesc *k) {
        for (size_t i = 0; i < j->n_entries; i++)
                if (j->entries[i].knob == k)
                        return &j->entries[i];
        return NULL;
}

const JournalEntry *journal_find(const Journal *j, const KnobDesc *k) {
        return journal_entry((Journal *) j, k);
}

bool journal_entry_holds(const JournalEntry *e, int64_t current) {
        return current == e->written || (e->has_next && current == e->next);
}

void journal_clear(Journal *j) {
        j->n_entries = 0;
}

/*
 * Every change goes through here: apply it to a copy of the entries, save the
 * copy, and only then make it the journal in memory.  A failed save (ENOSPC, a
 * read-only state directory) leaves memory as it was, which is what the file holds.
 */
static int journal_save_change(Journal *j, const JournalEntry *entries, size_t n) {
        Journal next = *j;
        int r;

        memcpy(next.entries, entries, n * sizeof(JournalEntry));
        next.n_entries = n;
        r = journal_save(&next);
        if (r < 0)
                return r;
        memcpy(j->entries, entries, n * sizeof(JournalEntry));
        j->n_entries = n;
        return 0;
}

int journal_intent(Journal *j, const KnobDesc *k, int64_t original, int64_t written, int64_t next) {
        JournalEntry copy[_KNOB_ID_MAX];
        size_t n = j->n_entries, i;

        if (!k || !k->writable || !knob_value_valid(k, original) || !knob_value_valid(k, written) ||
            !knob_value_valid(k, next))
                return -EINVAL;
        memcpy(copy, j->entries, n * sizeof(JournalEntry));
        for (i = 0; i < n; i++)
                if (copy[i].knob == k)
                        break;
        if (i == n) {
                if (n >= ELEMENTSOF(copy))
                        return -ENOSPC;
                n++;
        }
        copy[i] = (JournalEntry){ .knob = k, .original = original, .written = written, .has_next = true, .next = next };
        return journal_save_change(j, copy, n);
}

int journal_commit(Journal *j, const KnobDesc *k, int64_t written) {
        JournalEntry copy[_KNOB_ID_MAX];
        size_t n = j->n_entries;

        if (!k || !k->writable || !knob_value_valid(k, written))
                return -EINVAL;
        memcpy(copy, j->entries, n * sizeof(JournalEntry));
        for (size_t i = 0; i < n; i++)
                if (copy[i].knob == k) {
                        copy[i].written = written;
                        copy[i].has_next = false;
                        copy[i].next = 0;
                        return journal_save_change(j, copy, n);
                }
        return -ENOENT;
}

int journal_drop(Journal *j, const KnobDesc *k) {
        JournalEntry copy[_KNOB_ID_MAX];
        size_t n = 0;

        for (size_t i = 0; i < j->n_entries; i++)
                if (j->entries[i].knob != k)
                        copy[n++] = j->entries[i];
        if (n == j->n_entries)
                return 0;
        return journal_save_change(j, copy, n);
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
        json_object_object_add(root, "version", json_object_new_int(JOURNAL_VERSION));
        json_object_object_add(root, "pid", json_object_new_int((int) getpid()));
        json_object_object_add(root, "root", json_object_new_string(j->root));
        json_object_object_add(root, "entries", arr);
        for (size_t i = 0; i < j->n_entries; i++) {
                const JournalEntry *e = &j->entries[i];
                json_object *o = json_object_new_object();
                if (!o)
                        return -ENOMEM;
                json_object_object_add(o, "name", json_object_new_string(e->knob->name));
                json_object_object_add(o, "original", json_object_new_int64(e->original));
                json_object_object_add(o, "written", json_object_new_int64(e->written));
                if (e->has_next)
                        json_object_object_add(o, "next", json_object_new_int64(e->next));
                json_object_array_add(arr, o);
        }
        text = json_format(root, true);
        if (!text)
                return -ENOMEM;
        return write_file_atomic(j->file, text, strlen(text), 0600);
}

_printf_(3, 4) static int journal_fail(char *err, size_t errlen, const char *fmt, ...) {
        if (err && errlen > 0) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(err, errlen, fmt, ap);
                va_end(ap);
        }
        return -EINVAL;
}

/* A string member: -EINVAL if missing or not a string, -EBADMSG if it holds a NUL (C would read it cut short). */
static int json_get_string(json_object *o, const char *key, const char **ret) {
        json_object *v;
        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return -EINVAL;
        *ret = json_object_get_string(v);
        if (strlen(*ret) != (size_t) json_object_get_string_len(v))
                return -EBADMSG;
        return 0;
}

long journal_json_members(const char *text, size_t len, char *err, size_t errlen) {
        long members = 0;
        bool in_string = false;

        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char) text[i];

                if (in_string) {
                        if (c == '"')
                                in_string = false;
                        else if (c == '\\') {
                                if (++i >= len)
                                        break;
                                if (text[i] == 'u' && len - i > 4 && memcmp(text + i + 1, "0000", 4) == 0)
                                        return journal_fail(err, errlen, "holds an escaped NUL character (\\u0000)");
                        }
                        continue;
                }
                if (c == '"')
                        in_string = true;
                else if (c == ':')
                        members++;
                else if (c == 0 || !strchr("{}[], \t\r\n-+.0123456789eEtruefalsn", c))
                        return journal_fail(err, errlen, "holds a character JSON does not allow outside strings (0x%02x)", c);
        }
        if (in_string)
                return journal_fail(err, errlen, "ends inside a string");
        return members;
}

/* Members of every object in a parsed tree (json-c's default depth limit bounds the recursion). */
static long json_tree_members(json_object *o) {
        long n = 0;

        if (json_object_is_type(o, json_type_object)) {
                json_object_object_foreach(o, key, v) {
                        (void) key;
                        n += 1 + json_tree_members(v);
                }
        } else if (json_object_is_type(o, json_type_array))
                for (size_t i = 0; i < json_object_array_length(o); i++)
                        n += json_tree_members(json_object_array_get_idx(o, i));
        return n;
}

static int json_get_int64(json_object *o, const char *key, int64_t *ret) {
        json_object *v;
        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
                return -EINVAL;
        /* json-c clamps what does not fit to INT64_MIN/MAX: no knob accepts those anyway. */
        *ret = json_object_get_int64(v);
        return 0;
}

/* Validate one entry against the allowlist; the knob's path comes from there, never from the file. */
static int journal_parse_entry(json_object *o, int version, size_t idx, const Journal *j, JournalEntry *ret, char *err,
                               size_t errlen) {
        const char *name = NULL, *path = NULL;
        char ename[96], epath[128];
        const KnobDesc *k;
        JournalEntry e = { 0 };
        int r;

        if (!json_object_is_type(o, json_type_object))
                return journal_fail(err, errlen, "%s: entry %zu is not an object", j->file, idx + 1);
        r = json_get_string(o, "name", &name);
        if (r == -EBADMSG)
                return journal_fail(err, errlen, "%s: entry %zu has a name holding a NUL character", j->file, idx + 1);
        if (r < 0)
                return journal_fail(err, errlen, "%s: entry %zu has no name", j->file, idx + 1);
        str_escape(name, ename, sizeof ename);
        k = knob_desc_by_name(name);
        if (!k)
                return journal_fail(err, errlen, "%s: entry %zu names '%s', which is not a knob pcptune manages",
                                    j->file, idx + 1, ename);
        if (version == 1) {
                /* The previous release wrote the path too: it must be the allowlist's. */
                if (json_get_string(o, "path", &path) < 0 || !streq(path, k->path)) {
                        str_escape(path ?: "", epath, sizeof epath);
                        return journal_fail(err, errlen, "%s: entry %zu (%s) has path '%s', not %s", j->file, idx + 1,
                                            k->name, epath, k->path);
                }
        }
        if (json_get_int64(o, "original", &e.original) < 0 || json_get_int64(o, "written", &e.written) < 0)
                return journal_fail(err, errlen, "%s: entry %zu (%s) lacks an integer original or written", j->file,
                                    idx + 1, k->name);
        json_object *next;
        if (version >= 2 && json_object_object_get_ex(o, "next", &next)) {
                if (json_get_int64(o, "next", &e.next) < 0)
                        return journal_fail(err, errlen, "%s: entry %zu (%s): next is not an integer", j->file, idx + 1,
                                            k->name);
                e.has_next = true;
        }
        const struct {
                const char *what;
                int64_t v;
                bool present;
        } values[] = { { "original", e.original, true }, { "written", e.written, true }, { "next", e.next, e.has_next } };
        for (size_t i = 0; i < ELEMENTSOF(values); i++)
                if (values[i].present && !knob_value_valid(k, values[i].v))
                        return journal_fail(err, errlen,
                                            "%s: entry %zu (%s): %s %" PRId64 " is not a value the kernel accepts "
                                            "(%" PRId64 "..%" PRId64 ")",
                                            j->file, idx + 1, k->name, values[i].what, values[i].v, k->min_value,
                                            k->max_value);
        if (journal_find(j, k))
                return journal_fail(err, errlen, "%s: entry %zu: %s appears twice", j->file, idx + 1, k->name);
        e.knob = k;
        *ret = e;
        return 0;
}

int journal_parse(const char *file, const char *text, size_t len, Journal **ret, char *err, size_t errlen) {
        _cleanup_(journal_freep) Journal *j = NULL;
        _cleanup_(json_putp) json_object *root = NULL;
        json_tokener *tok;
        json_object *arr;
        const char *s = NULL;
        char eroot[PATH_MAX], why[128];
        int64_t version;
        long members;
        int r;

        if (err && errlen > 0)
                *err = 0;
        j = journal_new_file(file, "/");
        if (!j)
                return -ENOMEM;
        if (len > JOURNAL_SIZE_MAX)
                return journal_fail(err, errlen, "%s is larger than %zu bytes", j->file, JOURNAL_SIZE_MAX);
        if (memchr(text, 0, len))
                return journal_fail(err, errlen, "%s holds a NUL byte", j->file);
        /* What json-c's tree would hide: duplicate keys (it keeps the last), escaped NULs. */
        members = journal_json_members(text, len, why, sizeof why);
        if (members < 0)
                return journal_fail(err, errlen, "%s %s", j->file, why);
        tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        root = json_tokener_parse_ex(tok, text, (int) len);
        /* Exactly one JSON value, and nothing after it but blanks. */
        if (root && json_tokener_get_error(tok) == json_tokener_success) {
                size_t used = json_tokener_get_parse_end(tok);
                while (used < len && (text[used] == ' ' || text[used] == '\n' || text[used] == '\t' || text[used] == '\r'))
                        used++;
                if (used != len) {
                        json_object_put(root);
                        root = NULL;
                }
        } else if (root) {
                json_object_put(root);
                root = NULL;
        }
        json_tokener_free(tok);
        if (!root || !json_object_is_type(root, json_type_object))
                return journal_fail(err, errlen, "%s is not a JSON object", j->file);
        if (json_tree_members(root) != members)
                return journal_fail(err, errlen, "%s has a key twice in one object", j->file);
        if (json_get_int64(root, "version", &version) < 0 || version < 1 || version > JOURNAL_VERSION)
                return journal_fail(err, errlen, "%s: version missing or not 1..%d", j->file, JOURNAL_VERSION);
        r = json_get_string(root, "root", &s);
        if (r == -EBADMSG)
                return journal_fail(err, errlen, "%s: root holds a NUL character", j->file);
        if (r < 0 || s[0] != '/' || strlen(s) >= PATH_MAX) {
                str_escape(s ?: "", eroot, sizeof eroot);
                return journal_fail(err, errlen, "%s: root '%s' is not an absolute path", j->file, eroot);
        }
        for (const char *c = s; *c; c++)
                if ((unsigned char) *c < 0x20 || *c == 0x7f) {
                        str_escape(s, eroot, sizeof eroot);
                        return journal_fail(err, errlen, "%s: root '%s' holds control characters", j->file, eroot);
                }
        free(j->root);
        j->root = strdup(s);
        if (!j->root)
                return -ENOMEM;
        if (!json_object_object_get_ex(root, "entries", &arr) || !json_object_is_type(arr, json_type_array))
                return journal_fail(err, errlen, "%s has no entries array", j->file);
        if (json_object_array_length(arr) > _KNOB_ID_MAX)
                return journal_fail(err, errlen, "%s has %zu entries, more than the %d knobs pcptune manages", j->file,
                                    json_object_array_length(arr), (int) _KNOB_ID_MAX);
        for (size_t i = 0; i < json_object_array_length(arr); i++) {
                JournalEntry e;
                r = journal_parse_entry(json_object_array_get_idx(arr, i), (int) version, i, j, &e, err, errlen);
                if (r < 0)
                        return r;
                j->entries[j->n_entries++] = e;
        }
        *ret = TAKE_PTR(j);
        return 0;
}

int journal_load_path(const char *file, Journal **ret, char *err, size_t errlen) {
        _cleanup_(freep) char *text = NULL;
        size_t len;
        int r;

        /* Never follows a symlink someone left in our place, never blocks on a FIFO, and checks the
         * owner and mode of the file and of its directory (trusted_file_read(), util.c). */
        r = trusted_file_read(file, JOURNAL_SIZE_MAX, &text, &len, err, errlen);
        if (r == -EFBIG)
                return journal_fail(err, errlen, "%s is larger than %zu bytes", file, JOURNAL_SIZE_MAX);
        if (r < 0)
                return r;
        return journal_parse(file, text, len, ret, err, errlen);
}

int journal_load(const char *state_dir, const char *root, Journal **ret, char *err, size_t errlen) {
        _cleanup_(journal_freep) Journal *j = NULL;
        _cleanup_(freep) char *file = NULL;
        char name[JOURNAL_NAME_MAX], eroot[PATH_MAX], efile[PATH_MAX];
        int r;

        if (err && errlen > 0)
                *err = 0;
        root = root && *root ? root : "/";
        if (asprintf(&file, "%s/%s", state_dir, journal_file_name(root, name)) < 0)
                return -ENOMEM;
        r = journal_load_path(file, &j, err, errlen);
        if (r == -ENOENT && !streq(root, "/")) {
                /* Before journals had a file per root, every root's was restore.json: take it if it is ours.
                 * Anything else there is root "/"'s to judge. */
                free(file);
                if (asprintf(&file, "%s/%s", state_dir, JOURNAL_FILE) < 0)
                        return -ENOMEM;
                if (journal_load_path(file, &j, NULL, 0) >= 0 && streq(j->root, root)) {
                        *ret = TAKE_PTR(j);
                        return 0;
                }
                return -ENOENT;
        }
        if (r < 0)
                return r;
        if (!streq(j->root, root))
                return journal_fail(err, errlen, "%s belongs to root %s, not %s", str_escape(file, efile, sizeof efile),
                                    str_escape(j->root, eroot, sizeof eroot), root),
                       -EXDEV;
        *ret = TAKE_PTR(j);
        return 0;
}
