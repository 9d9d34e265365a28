/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <systemd/sd-event.h>

#include "util.h"

/*
 * inotify on the policy directory and on the directory that holds it, on the
 * manager's loop: a change worth a reload (a policy file, kubelet's "..data"
 * renamed over, the directory itself removed, replaced or retargeted) calls
 * reload(userdata) once, 300 ms after the last change of a burst.  Editors'
 * swap files, kubelet's "..<timestamp>" directories and other files are
 * ignored.
 */
typedef struct PolicyWatch PolicyWatch;

/* dir: the policy directory's path as given (a symlink is resolved at each refresh).  0 or -ENOMEM. */
int policy_watch_new(sd_event *event, const char *dir, void (*reload)(void *userdata), void *userdata,
                     PolicyWatch **ret);
PolicyWatch *policy_watch_free(PolicyWatch *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(PolicyWatch *, policy_watch_free);

/* Watch what the path names now: at start-up and after every reload, whether or not it loaded. */
void policy_watch_refresh(PolicyWatch *w);
