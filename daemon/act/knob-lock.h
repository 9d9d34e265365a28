/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "knob.h"

/*
 * One writer per kernel, not per path.  The lock file below the root's /run
 * (manager.h, LOCK_PATH) excludes a second pcptuned that sees the same /run;
 * a chroot or a mount namespace with its own /run and the host's /proc
 * bind-mounted sees another file.  It reaches the same knobs, though, and a
 * bind mount shows the same inode: so whatever writes knobs (the daemon, also
 * --once, and `pcptunectl repair` and `restore`) also takes an exclusive
 * flock() on the file of every writable row of the knob table, the file a
 * write would reach (open_below_root(): below a fake root, that root's files
 * only).  A procfs mounted separately (a container with its own /proc) has
 * other inodes: that arrangement is not excluded here (pcptuned(8)).
 */

typedef struct KnobLocks {
        int fd[_KNOB_ID_MAX];           /* -EBADF: not held (the file is missing, or not taken yet) */
} KnobLocks;

/* No lock held yet: a declaration's initialiser, or knob_locks_init(). */
#define KNOB_LOCKS_INIT { .fd = { [0 ... _KNOB_ID_MAX - 1] = -EBADF } }

void knob_locks_init(KnobLocks *l);

/*
 * Take an exclusive, non-blocking flock() on the file of every writable knob below root (a missing
 * file, or one that is not a regular file, which nothing writes either, is skipped).  On refusal
 * every lock taken so far is released and one error is logged, naming the knob, its file and the
 * holder's pid (from /proc/locks, or saying it was not found there); what follows in that message is
 * `then` (e.g. "exiting").  0, -EBUSY (another process holds one) or -errno of open()/flock() (logged).
 */
int knob_locks_take(KnobLocks *l, const char *root, const char *then);

/* Close every lock held (safe on an initialised, never-taken set). */
void knob_locks_release(KnobLocks *l);

/*
 * The pid holding a lock on an inode, from the text of /proc/locks (fs/locks.c, lock_get_status():
 * "ID: [-> ]CLASS MODE TYPE PID MAJ:MIN:INO START END", device numbers in hex, the inode in decimal;
 * the same since Linux 2.6).  Lines of waiters ("->") and of the pid skip (the caller's own) are
 * ignored.  Reads [text, text + len) only (no NUL needed).  The first holder's pid (> 0), 0 if no
 * line matches, -EINVAL if text is NULL.
 */
int locks_find_holder(const char *text, size_t len, unsigned dev_major, unsigned dev_minor, uint64_t ino,
                      pid_t skip);

/* The pid holding a lock on the file open as fd, from /proc/locks: > 0, 0 if not found, -errno. */
int knob_lock_holder(int fd);
