/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <string.h>

#include "util.h"
#include "view.h"

json_object *view_get(json_object *o, const char *path) {
        char key[128];

        while (o && path && *path) {
                const char *dot = strchr(path, '.');
                size_t n = dot ? (size_t) (dot - path) : strlen(path);
                if (n >= sizeof key || !json_object_is_type(o, json_type_object))
                        return NULL;
                memcpy(key, path, n);
                key[n] = 0;
                if (!json_object_object_get_ex(o, key, &o))
                        return NULL;
                path = dot ? dot + 1 : NULL;
        }
        return o;
}

bool view_has(json_object *o, const char *path) {
        return view_get(o, path) != NULL;
}

int64_t view_i64(json_object *o, const char *path, int64_t def) {
        json_object *v = view_get(o, path);
        return v && (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double))
                       ? json_object_get_int64(v)
                       : def;
}

double view_double(json_object *o, const char *path, double def) {
        json_object *v = view_get(o, path);
        return v && (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double))
                       ? json_object_get_double(v)
                       : def;
}

bool view_bool(json_object *o, const char *path) {
        json_object *v = view_get(o, path);
        return v && json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

const char *view_str(json_object *o, const char *path, const char *def) {
        json_object *v = view_get(o, path);
        return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : def;
}

const char *view_bytes(json_object *o, const char *path, char *buf, size_t size, const char *def) {
        json_object *v = view_get(o, path);
        if (!v || !json_object_is_type(v, json_type_int))
                return def;
        return format_bytes(buf, size, (uint64_t) MAX(json_object_get_int64(v), (int64_t) 0));
}

size_t view_len(json_object *o, const char *path) {
        json_object *v = view_get(o, path);
        return v && json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 0;
}

json_object *view_idx(json_object *o, const char *path, size_t i) {
        return i < view_len(o, path) ? json_object_array_get_idx(view_get(o, path), i) : NULL;
}
