/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * MESSAGE_ID of pcptuned's journal entries that make its history (pcptunectl history reads them back;
 * units/pcptune.catalog explains each to journalctl -x).  128-bit IDs made once; never change one: it is
 * what operators and `journalctl MESSAGE_ID=` filter on.  A table, so that a new kind is a row.
 */
#define PCPTUNE_MESSAGE_CHANGE       "7ab32eabdb964d3fbd92aa906b4da521" /* a knob written */
#define PCPTUNE_MESSAGE_WOULD_CHANGE "0b040beff0ba492da99bf9b121fc54c1" /* dry run: a knob that would be written */
#define PCPTUNE_MESSAGE_RESTORE      "159a8bc0d9774b36a2fd58a543f6e29d" /* a knob's original put back */
#define PCPTUNE_MESSAGE_BACK_OFF     "363d3bf23aed4274a8055138a87dcd82" /* an administrator changed a knob */
#define PCPTUNE_MESSAGE_RECLAIM      "9e5d10cece7d46219e6f1729e474a07d" /* reclaim-dying, its refaults, depopulate */
#define PCPTUNE_MESSAGE_RELOAD       "318511e32f524da6843527b85aad8f3a" /* a new policy set in use */

typedef struct PcptuneMessage {
        const char *id;
        const char *kind;          /* history's "type" column: change, would-change, restore, back-off, ... */
} PcptuneMessage;

static const PcptuneMessage pcptune_messages[] = {
        { PCPTUNE_MESSAGE_CHANGE, "change" },   { PCPTUNE_MESSAGE_WOULD_CHANGE, "would-change" },
        { PCPTUNE_MESSAGE_RESTORE, "restore" }, { PCPTUNE_MESSAGE_BACK_OFF, "back-off" },
        { PCPTUNE_MESSAGE_RECLAIM, "reclaim" }, { PCPTUNE_MESSAGE_RELOAD, "reload" },
};
