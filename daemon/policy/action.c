/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdio.h>
#include <string.h>

#include "action.h"

static const ActionDesc action_table[_ACTION_KIND_MAX] = {
        [ACTION_RECLAIM_DYING] = { .kind = ACTION_RECLAIM_DYING, .name = "reclaim-dying" },
        [ACTION_PERCPU_DEPOPULATE] = { .kind = ACTION_PERCPU_DEPOPULATE, .name = "percpu-depopulate" },
};

const ActionDesc *action_desc(ActionKind kind) {
        return kind > ACTION_NONE && kind < _ACTION_KIND_MAX ? &action_table[kind] : NULL;
}

const ActionDesc *action_desc_by_name(const char *name) {
        for (ActionKind k = ACTION_NONE + 1; name && k < _ACTION_KIND_MAX; k++)
                if (strcmp(action_table[k].name, name) == 0)
                        return &action_table[k];
        return NULL;
}

const char *action_names(char *buf, size_t size) {
        size_t l = 0;

        if (size == 0)
                return buf;
        buf[0] = 0;
        for (ActionKind k = ACTION_NONE + 1; k < _ACTION_KIND_MAX && l < size; k++)
                l += (size_t) snprintf(buf + l, size - l, "%s%s",
                                       k == ACTION_NONE + 1 ? "" : k + 1 == _ACTION_KIND_MAX ? " or " : ", ",
                                       action_table[k].name);
        return buf;
}
