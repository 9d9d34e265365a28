/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <systemd/sd-bus.h>

#include "act-sysctl.h"
#include "journal.h"

/*
 * What a stop does with the values pcptuned wrote (--on-stop): restore the
 * originals (the default), or keep them and hand the restore journal over to
 * the next pcptuned (a rollout, a restart), which adopts it without writing
 * when its decision is the value in place.  auto asks systemd why we stop:
 * the pending job of our unit is a restart (keep) or anything else (restore).
 *
 * The handover mark is STATE_DIR/handover, written after the journal when a
 * stop keeps values; the next start that finds it with the journal adopts
 * the journal and removes the mark before anything else, so a crash after
 * that is a crash again (the journal is restored at the following start).
 * A journal without the mark is a crashed run's, restored as before.
 */

#define HANDOVER_FILE "handover"

typedef enum OnStop {
        ON_STOP_RESTORE,
        ON_STOP_KEEP,
        ON_STOP_AUTO,
        _ON_STOP_MAX,
        _ON_STOP_INVALID = -EINVAL,
} OnStop;

/* "restore", "keep", "auto" and back.  -EINVAL for anything else / NULL. */
OnStop on_stop_from_string(const char *s);
const char *on_stop_to_string(OnStop o);

/*
 * The decision of auto from systemd's JobType of our unit's pending job
 * (org.freedesktop.systemd1.Job, JobType: job_type_to_string() in systemd's
 * src/core/job.c, 252): "restart", "try-restart" and "reload-or-restart"
 * keep; anything else ("stop", none: NULL or "") restores.
 */
bool on_stop_job_type_keeps(const char *job_type);

/*
 * Whether this stop keeps the values: mode keep -> true, restore -> false;
 * auto asks systemd over D-Bus (its private socket /run/systemd/private, then
 * the system bus) for the JobType of the pending job of the unit our process
 * runs in (sd_pid_get_unit()).  Anything that fails (not under systemd, no
 * bus, no job) restores.  why (may be NULL) says which and why, for the log.
 */
bool on_stop_resolve(OnStop mode, char *why, size_t why_size);

/*
 * The JobType of unit's pending job, asked on bus (a connection to systemd):
 * org.freedesktop.systemd1.Manager.GetUnit(unit), the unit's
 * org.freedesktop.systemd1.Unit.Job property (uo) and, when its id is not 0,
 * the job's org.freedesktop.systemd1.Job.JobType.  1 and *ret (malloc'd), 0
 * when no job is pending (*ret NULL), or -errno with why filled.
 */
int on_stop_unit_job_type(sd_bus *bus, const char *unit, char **ret, char *why, size_t why_size);

/*
 * Write root's handover mark in STATE_DIR (atomically, 0644): "handover" for
 * root /, "handover-HASH" for another root (root_state_name(), util.h, like
 * the journal's name): our pid, the time, and the identity (inode, mtime) of
 * root's journal it hands over; a mark naming another journal than the one
 * there is not trusted.  0, -ENOENT (no journal), -errno.
 */
int handover_mark(const char *state_dir, const char *root);

/*
 * At start, before the first write, holding the daemon lock: if STATE_DIR/handover
 * marks the journal as handed over by a stopped pcptuned of the same root,
 * adopt it: each entry whose knob still holds a value it names becomes a
 * managed knob of knobs[] (by KnobId) with the recorded original, its value
 * in place taken as written (an intent in flight is committed to it); an
 * entry whose knob holds its original or a value it does not name is dropped
 * (the administrator's, as after a crash).  The mark is removed.  Returns 1
 * with *ret the journal now in use, 0 when there is nothing to adopt (no
 * mark; the caller then restores a journal as after a crash), or -errno
 * (the mark could not be removed: do not start).
 */
int handover_adopt(const char *state_dir, const char *root, KnobState knobs[], Journal **ret);

/* Is root's handover mark in STATE_DIR there and valid?  For the dry run's crash-restore state. */
bool handover_marked(const char *state_dir, const char *root);
