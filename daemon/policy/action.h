/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <errno.h>
#include <stddef.h>

/*
 * The action table: every action a rule may ask for (`action: {NAME:
 * {OPTIONS}}`), once, by ActionKind.  Like the knob table (knob.h) it is data
 * and includes nothing of the layers that use it; each layer keeps its part
 * of a row in a table of its own indexed by ActionKind:
 *
 *   name, report label      here (action.c): the policy word, and what status
 *                           and the rule summaries print;
 *   parse options           policy-parse.c, action_parsers[] (the options
 *                           into Action, policy.h);
 *   run                     actuator.c, action_runners[] (with the warnings
 *                           when the kernel lacks what it needs);
 *   report                  report.c reads the row's name: nothing to add.
 *
 * A new action is a row here, its options parser and its runner: three
 * tables, no switch to extend.
 */
typedef enum ActionKind {
        ACTION_NONE,
        ACTION_RECLAIM_DYING,
        ACTION_PERCPU_DEPOPULATE,
        _ACTION_KIND_MAX,
        _ACTION_KIND_INVALID = -EINVAL,
} ActionKind;

typedef struct ActionDesc {
        ActionKind kind;
        const char *name;         /* as policies write it: "reclaim-dying" */
} ActionDesc;

/* The row of kind; NULL for ACTION_NONE and out of range. */
const ActionDesc *action_desc(ActionKind kind);

/* The row whose name is name; NULL if none (name may be NULL). */
const ActionDesc *action_desc_by_name(const char *name);

/* "reclaim-dying or percpu-depopulate": every action's name for messages, in buf; returns buf. */
const char *action_names(char *buf, size_t size);
