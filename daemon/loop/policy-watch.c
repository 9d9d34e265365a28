/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <sys/inotify.h>
#include <sys/stat.h>

#include "log.h"
#include "policy-watch.h"
#include "policy.h"

/* Changes come in bursts: one reload this long after the last. */
#define POLICY_WATCH_DEBOUNCE_USEC (300 * USEC_PER_MSEC)

struct PolicyWatch {
        sd_event *event;
        char *dir;
        void (*reload)(void *userdata);
        void *userdata;

        sd_event_source *dir_watch;       /* the policy directory (what it resolves to now) */
        dev_t dev;                        /* ... whose inode is this one */
        ino_t ino;
        sd_event_source *parent;          /* the directory that holds it: a symlink retargeted, a directory replaced */
        char *name;                       /* the last component of the policy directory's path */
        sd_event_source *debounce;
};

int policy_watch_new(sd_event *event, const char *dir, void (*reload)(void *userdata), void *userdata,
                     PolicyWatch **ret) {
        _cleanup_(policy_watch_freep) PolicyWatch *w = calloc(1, sizeof(PolicyWatch));

        if (!w)
                return -ENOMEM;
        *w = (PolicyWatch){ .event = sd_event_ref(event), .reload = reload, .userdata = userdata, .dir = strdup(dir) };
        if (!w->dir)
                return -ENOMEM;
        *ret = TAKE_PTR(w);
        return 0;
}

PolicyWatch *policy_watch_free(PolicyWatch *w) {
        if (!w)
                return NULL;
        sd_event_source_disable_unref(w->dir_watch);
        sd_event_source_disable_unref(w->parent);
        sd_event_source_disable_unref(w->debounce);
        sd_event_unref(w->event);
        free(w->name);
        free(w->dir);
        free(w);
        return NULL;
}

static int on_debounced(sd_event_source *s, uint64_t usec, void *userdata) {
        PolicyWatch *w = userdata;
        w->reload(w->userdata);
        return 0;
}

/* An editor writes, renames and deletes in bursts, and so does kubelet: reload once, 300 ms after the last change. */
static void policy_watch_schedule(PolicyWatch *w) {
        if (!w->debounce) {
                if (sd_event_add_time_relative(w->event, &w->debounce, CLOCK_MONOTONIC, POLICY_WATCH_DEBOUNCE_USEC, 0,
                                               on_debounced, w) < 0)
                        return;
        } else {
                (void) sd_event_source_set_time_relative(w->debounce, POLICY_WATCH_DEBOUNCE_USEC);
                (void) sd_event_source_set_enabled(w->debounce, SD_EVENT_ONESHOT);
        }
}

/*
 * Which changes in the policy directory are worth a reload: policy files, and
 * kubelet's "..data", which every ConfigMap update renames over (see
 * policy_set_load_dir()); events about the directory itself (no name: its mode
 * changed, it was removed or moved, the queue overflowed).  Not editors' hidden
 * swap files, kubelet's "..<timestamp>" directories and "..data_tmp", nor any
 * other file.
 */
static int on_policy_dir(sd_event_source *s, const struct inotify_event *ev, void *userdata) {
        PolicyWatch *w = userdata;

        if (ev->len > 0 && !streq(ev->name, "..data") && !policy_file_name_valid(ev->name))
                return 0;
        policy_watch_schedule(w);
        return 0;
}

/* In the directory holding the policy directory, only the policy directory's own name matters. */
static int on_policy_parent(sd_event_source *s, const struct inotify_event *ev, void *userdata) {
        PolicyWatch *w = userdata;

        if (ev->len > 0 && !streq(ev->name, w->name))
                return 0;
        if (ev->len == 0 && !(ev->mask & IN_Q_OVERFLOW))
                return 0;
        policy_watch_schedule(w);
        return 0;
}

/*
 * Watch the policy directory, and the directory that holds it.  inotify
 * watches an inode: a watch added through a symlink stays on the old target
 * when the link is retargeted (ln -sfn), and on the old directory when another
 * is renamed over it.  So the parent is watched for the directory's name, and
 * after every reload the directory is watched again if its path resolves to
 * another inode now.  (A symlink further up the path is only followed on
 * SIGHUP.)  Failures are logged and leave SIGHUP.
 */
void policy_watch_refresh(PolicyWatch *w) {
        const char *dir = w->dir;
        struct stat st;
        int r;

        if (!w->name) {
                _cleanup_(freep) char *parent = NULL;
                size_t len = strlen(dir), base;

                while (len > 1 && dir[len - 1] == '/')
                        len--;
                base = len;
                while (base > 0 && dir[base - 1] != '/')
                        base--;
                w->name = strndup(dir + base, len - base);
                parent = base == 0 ? strdup(".") : strndup(dir, base);
                if (!w->name || !parent) {
                        log_oom();
                        return;
                }
                if (w->name[0] && !streq(w->name, "/") && stat(parent, &st) >= 0 &&
                    S_ISDIR(st.st_mode)) {
                        r = sd_event_add_inotify(w->event, &w->parent, parent,
                                                 IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_ONLYDIR,
                                                 on_policy_parent, w);
                        if (r < 0)
                                log_warning_errno(r, "Failed to watch %s: %s; a retargeted %s needs SIGHUP", parent,
                                                  errno_str(r), dir);
                }
        }

        if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
                /* Gone, or never there (the embedded set): the parent's watch sees it come back. */
                w->dir_watch = sd_event_source_disable_unref(w->dir_watch);
                return;
        }
        if (w->dir_watch && st.st_dev == w->dev && st.st_ino == w->ino)
                return;
        if (w->dir_watch)
                log_info("%s now resolves to another directory: watching that one", dir);
        w->dir_watch = sd_event_source_disable_unref(w->dir_watch);
        r = sd_event_add_inotify(w->event, &w->dir_watch, dir,
                                 IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE | IN_ATTRIB |
                                         IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR,
                                 on_policy_dir, w);
        if (r < 0) {
                log_warning_errno(r, "Failed to watch %s: %s; reload with SIGHUP", dir, errno_str(r));
                return;
        }
        w->dev = st.st_dev;
        w->ino = st.st_ino;
}
