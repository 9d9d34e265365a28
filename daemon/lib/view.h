/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Reading a view's model back.  Each view (`pcptunectl status`, `pcptunectl plan`, the probes, the percpu
 * split) builds one JSON object, its model; --json prints it and the text printer renders it, so a field is
 * computed once and text and JSON cannot disagree.  These getters take a dotted path ("memory.total_bytes")
 * below o; a missing member, a JSON null or a value of another type gives the default.
 */

/* The member at path, or NULL if it is missing or null. */
json_object *view_get(json_object *o, const char *path);
bool view_has(json_object *o, const char *path);
int64_t view_i64(json_object *o, const char *path, int64_t def);
double view_double(json_object *o, const char *path, double def);
bool view_bool(json_object *o, const char *path);
const char *view_str(json_object *o, const char *path, const char *def);
/* The number at path in bytes as format_bytes() writes it, in buf, or def. */
const char *view_bytes(json_object *o, const char *path, char *buf, size_t size, const char *def);
/* The length of the array at path (0 if it is not an array) and its element i (NULL past the end). */
size_t view_len(json_object *o, const char *path);
json_object *view_idx(json_object *o, const char *path, size_t i);
