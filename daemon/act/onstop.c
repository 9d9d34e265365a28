/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-login.h>
#include <unistd.h>

#include "log.h"
#include "onstop.h"
#include "util.h"

static const char *const on_stop_names[_ON_STOP_MAX] = {
        [ON_STOP_RESTORE] = "restore",
        [ON_STOP_KEEP] = "keep",
        [ON_STOP_AUTO] = "auto",
};

OnStop on_stop_from_string(const char *s) {
        for (int i = 0; s && i < _ON_STOP_MAX; i++)
                if (streq(s, on_stop_names[i]))
                        return (OnStop) i;
        return _ON_STOP_INVALID;
}

const char *on_stop_to_string(OnStop o) {
        return o >= 0 && o < _ON_STOP_MAX ? on_stop_names[o] : NULL;
}

bool on_stop_job_type_keeps(const char *job_type) {
        return job_type && (streq(job_type, "restart") || streq(job_type, "try-restart") ||
                            streq(job_type, "reload-or-restart"));
}

/* systemd's own socket first (root, no dbus-daemon needed), then the system bus. */
static int bus_connect(sd_bus **ret) {
        _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
        int r;

        r = sd_bus_new(&bus);
        if (r < 0)
                return r;
        r = sd_bus_set_address(bus, "unix:path=/run/systemd/private");
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r < 0) {
                bus = sd_bus_unref(bus);
                r = sd_bus_open_system(&bus);
                if (r < 0)
                        return r;
        }
        (void) sd_bus_set_method_call_timeout(bus, 2 * USEC_PER_SEC);
        *ret = TAKE_PTR(bus);
        return 0;
}

int on_stop_unit_job_type(sd_bus *bus, const char *unit, char **ret, char *why, size_t why_size) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(freep) char *unit_path = NULL;
        const char *path, *job_path;
        uint32_t job_id;
        int r;

        r = sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                               "org.freedesktop.systemd1.Manager", "GetUnit", &error, &reply, "s", unit);
        if (r >= 0)
                r = sd_bus_message_read(reply, "o", &path);
        if (r < 0 || !(unit_path = strdup(path))) {
                snprintf(why, why_size, "GetUnit(%s) failed: %s", unit, error.message ?: errno_str(r));
                return r < 0 ? r : -ENOMEM;
        }
        reply = sd_bus_message_unref(reply);
        r = sd_bus_get_property(bus, "org.freedesktop.systemd1", unit_path, "org.freedesktop.systemd1.Unit", "Job",
                                &error, &reply, "(uo)");
        if (r >= 0)
                r = sd_bus_message_read(reply, "(uo)", &job_id, &job_path);
        if (r < 0) {
                snprintf(why, why_size, "reading %s's Job failed: %s", unit, error.message ?: errno_str(r));
                return r;
        }
        if (job_id == 0) {
                *ret = NULL;
                return 0;
        }
        r = sd_bus_get_property_string(bus, "org.freedesktop.systemd1", job_path, "org.freedesktop.systemd1.Job",
                                       "JobType", &error, ret);
        if (r < 0) {
                snprintf(why, why_size, "reading job %" PRIu32 "'s JobType failed: %s", job_id,
                         error.message ?: errno_str(r));
                return r;
        }
        return 1;
}

bool on_stop_resolve(OnStop mode, char *why, size_t why_size) {
        _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
        _cleanup_(freep) char *unit = NULL, *type = NULL;
        char buf[256] = "";
        int r;

        if (!why) {
                why = buf;
                why_size = sizeof buf;
        }
        if (mode == ON_STOP_KEEP) {
                snprintf(why, why_size, "--on-stop=keep");
                return true;
        }
        if (mode != ON_STOP_AUTO) {
                snprintf(why, why_size, "--on-stop=restore");
                return false;
        }
        r = sd_pid_get_unit(0, &unit);
        if (r < 0) {
                snprintf(why, why_size, "--on-stop=auto: not in a systemd unit (%s): restoring", errno_str(r));
                return false;
        }
        r = bus_connect(&bus);
        if (r < 0) {
                snprintf(why, why_size, "--on-stop=auto: cannot reach systemd over D-Bus (%s): restoring", errno_str(r));
                return false;
        }
        char err[200] = "";
        r = on_stop_unit_job_type(bus, unit, &type, err, sizeof err);
        if (r < 0) {
                snprintf(why, why_size, "--on-stop=auto: %s: restoring", err);
                return false;
        }
        bool keep = on_stop_job_type_keeps(type);
        snprintf(why, why_size, "--on-stop=auto: %s's pending job is %s: %s", unit, type ?: "none",
                 keep ? "keeping the values for the next start" : "restoring");
        return keep;
}

/* The journal file's identity ("inode:mtime in ns"): the mark names the journal it hands over, so that a
 * journal written after it (a crash of another writer) is never taken for the handed-over one. */
static int journal_identity(const char *state_dir, const char *root, char *buf, size_t size) {
        _cleanup_(freep) char *path = NULL;
        char name[JOURNAL_NAME_MAX];
        struct stat st;

        if (asprintf(&path, "%s/%s", state_dir, journal_file_name(root, name)) < 0)
                return -ENOMEM;
        if (lstat(path, &st) < 0)
                return -errno;
        snprintf(buf, size, "%" PRIu64 ":%" PRIu64, (uint64_t) st.st_ino,
                 (uint64_t) st.st_mtim.tv_sec * UINT64_C(1000000000) + (uint64_t) st.st_mtim.tv_nsec);
        return 0;
}

/* STATE_DIR's handover mark of root: allocated, NULL on ENOMEM. */
static char *handover_path(const char *state_dir, const char *root) {
        char name[sizeof(HANDOVER_FILE) + 20];
        char *path;

        if (!root_state_name(root, HANDOVER_FILE, name, sizeof name) || asprintf(&path, "%s/%s", state_dir, name) < 0)
                return NULL;
        return path;
}

int handover_mark(const char *state_dir, const char *root) {
        _cleanup_(freep) char *path = handover_path(state_dir, root);
        char text[160], id[64];
        int r;

        if (!path)
                return -ENOMEM;
        r = journal_identity(state_dir, root, id, sizeof id);
        if (r < 0)
                return r;
        int n = snprintf(text, sizeof text, "PCPTUNE_HANDOVER=1\nPID=%d\nSTOPPED=%" PRIu64 "\nJOURNAL=%s\n",
                         (int) getpid(), now_usec(CLOCK_REALTIME) / USEC_PER_SEC, id);
        return write_file_atomic(path, text, (size_t) n, 0644);
}

/* The mark, validated like the journal: a small regular file of root's (or ours), not writable by others,
 * starting with PCPTUNE_HANDOVER=1, naming the journal now in state_dir.  true when valid; *ret_pid its PID
 * (0: unreadable). */
static bool handover_read(const char *state_dir, const char *root, const char *path, int64_t *ret_pid) {
        _cleanup_(closep) int fd = -EBADF;
        _cleanup_(freep) char *text = NULL;
        struct stat st;
        size_t len;

        *ret_pid = 0;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
                return false;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid()) ||
            (st.st_mode & 0022) || st.st_size > 256)
                return false;
        if (read_fd_full(fd, 256, &text, &len) < 0 || len < 19 || memcmp(text, "PCPTUNE_HANDOVER=1\n", 19) != 0 ||
            memchr(text, 0, len))
                return false;
        char id[64], want[80];
        const char *jl = strstr(text, "\nJOURNAL=");
        if (!jl || journal_identity(state_dir, root, id, sizeof id) < 0)
                return false;
        snprintf(want, sizeof want, "\nJOURNAL=%s\n", id);
        if (strncmp(jl, want, strlen(want)) != 0)
                return false;
        const char *p = strstr(text, "\nPID=");
        if (p) {
                int64_t pid;
                char num[16];
                size_t n = strcspn(p + 5, "\n");
                if (n < sizeof num) {
                        memcpy(num, p + 5, n);
                        num[n] = 0;
                        if (parse_int64(num, &pid) >= 0 && pid > 0 && pid <= INT32_MAX)
                                *ret_pid = pid;
                }
        }
        return true;
}

bool handover_marked(const char *state_dir, const char *root) {
        _cleanup_(freep) char *path = handover_path(state_dir, root);
        int64_t pid;

        return path && handover_read(state_dir, root, path, &pid);
}

int handover_adopt(const char *state_dir, const char *root, KnobState knobs[], Journal **ret) {
        _cleanup_(journal_freep) Journal *j = NULL;
        _cleanup_(freep) char *path = handover_path(state_dir, root);
        char err[512];
        int64_t pid;
        int r;

        if (!path)
                return log_oom();
        if (access(path, F_OK) < 0)
                return 0;
        if (!handover_read(state_dir, root, path, &pid)) {
                log_warning("Ignoring %s: not a handover mark of the journal there (a journal there is restored as "
                            "after a crash)", path);
                if (unlink(path) < 0)
                        return log_error_errno(errno, "Failed to remove %s: %m; refusing to start over it", path);
                return 0;
        }
        r = journal_load(state_dir, root, &j, err, sizeof err);
        if (r < 0 || !streq(j->root, root)) {
                /* Nothing to adopt (-ENOENT), or a journal the crash path refuses with its message. */
                if (unlink(path) < 0)
                        return log_error_errno(errno, "Failed to remove %s: %m; refusing to start over it", path);
                return 0;
        }
        JournalEntry *e = j->entries;
        size_t kept = 0;
        for (size_t i = 0; i < j->n_entries; i++) {
                const KnobDesc *d = j->entries[i].knob;
                KnobState *k = &knobs[d->id];
                int64_t current;

                r = knob_read(root, d, &current);
                if (r < 0)
                        return log_error_errno(r, "Failed to read %s to adopt the restore journal in %s: %s; refusing "
                                                  "to start over it",
                                               d->name, state_dir, errno_str(r));
                if (current == j->entries[i].original || !journal_entry_holds(&j->entries[i], current)) {
                        if (current != j->entries[i].original)
                                log_notice("Handover: %s is %" PRId64 ", not a value the previous pcptuned left: "
                                           "changed since, leaving it",
                                           d->name, current);
                        continue;
                }
                e[kept] = j->entries[i];
                e[kept].written = current;
                e[kept].has_next = false;
                kept++;
                k->managed = true;
                k->original = j->entries[i].original;
                k->written = current;
                k->present = true;
                k->value = current;
        }
        j->n_entries = kept;
        r = journal_save(j);
        if (r < 0)
                return log_error_errno(r, "Failed to save the adopted restore journal %s: %s", j->file, errno_str(r));
        /* From here on a crash is a crash: the next start restores the journal. */
        if (unlink(path) < 0)
                return log_error_errno(errno, "Failed to remove %s: %m; refusing to start over it", path);
        log_notice("Adopted the restore journal of the previous pcptuned (pid %" PRId64 "): %zu knob%s held, their "
                   "originals kept; no write while the decision is the value in place",
                   pid, kept, kept == 1 ? "" : "s");
        *ret = TAKE_PTR(j);
        return 1;
}
