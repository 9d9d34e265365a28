/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "knob-lock.h"
#include "log.h"
#include "macro.h"
#include "util.h"

void knob_locks_init(KnobLocks *l) {
        for (size_t i = 0; i < ELEMENTSOF(l->fd); i++)
                l->fd[i] = -EBADF;
}

void knob_locks_release(KnobLocks *l) {
        for (size_t i = 0; i < ELEMENTSOF(l->fd); i++)
                if (l->fd[i] >= 0) {
                        close(l->fd[i]);
                        l->fd[i] = -EBADF;
                }
}

/* One whitespace-separated token: [*p, end) -> [ret, ret + *ret_len); false at the end of the line. */
static bool next_token(const char **p, const char *end, const char **ret, size_t *ret_len) {
        const char *s = *p;
        while (s < end && (*s == ' ' || *s == '\t'))
                s++;
        const char *e = s;
        while (e < end && *e != ' ' && *e != '\t')
                e++;
        *p = e;
        *ret = s;
        *ret_len = (size_t) (e - s);
        return e > s;
}

/* "MAJ:MIN:INO" (hex, hex, decimal) in [s, s + n), whole. */
static bool parse_dev_ino(const char *s, size_t n, unsigned *maj, unsigned *min, uint64_t *ino) {
        char buf[64], *e;
        if (n == 0 || n >= sizeof buf)
                return false;
        memcpy(buf, s, n);
        buf[n] = 0;
        for (size_t i = 0; i < n; i++)
                if (!(is_ascii_digit(buf[i]) || (buf[i] >= 'a' && buf[i] <= 'f') || buf[i] == ':'))
                        return false;
        errno = 0;
        unsigned long a = strtoul(buf, &e, 16);
        if (e == buf || *e != ':' || a > UINT32_MAX)
                return false;
        const char *b0 = e + 1;
        unsigned long b = strtoul(b0, &e, 16);
        if (e == b0 || *e != ':' || b > UINT32_MAX)
                return false;
        const char *c0 = e + 1;
        unsigned long long c = strtoull(c0, &e, 10);
        if (e == c0 || *e || errno)
                return false;
        *maj = (unsigned) a;
        *min = (unsigned) b;
        *ino = c;
        return true;
}

int locks_find_holder(const char *text, size_t len, unsigned dev_major, unsigned dev_minor, uint64_t ino,
                      pid_t skip) {
        const char *pos = text, *end = text + len, *line;
        size_t n;

        if (!text)
                return -EINVAL;
        while (next_line(&pos, end, &line, &n)) {
                const char *p = line, *le = line + n, *tok, *prev = NULL;
                size_t tl, prev_len = 0;
                bool waiter = false;
                while (next_token(&p, le, &tok, &tl)) {
                        unsigned maj, min;
                        uint64_t i;
                        if (tl == 2 && memcmp(tok, "->", 2) == 0)
                                waiter = true;
                        if (!waiter && prev && parse_dev_ino(tok, tl, &maj, &min, &i)) {
                                char pbuf[16];
                                int64_t pid;
                                if (maj == dev_major && min == dev_minor && i == ino && prev_len < sizeof pbuf) {
                                        memcpy(pbuf, prev, prev_len);
                                        pbuf[prev_len] = 0;
                                        if (parse_int64(pbuf, &pid) >= 0 && pid > 0 && pid <= INT32_MAX &&
                                            (pid_t) pid != skip)
                                                return (int) pid;
                                }
                                break;
                        }
                        prev = tok;
                        prev_len = tl;
                }
        }
        return 0;
}

int knob_lock_holder(int fd) {
        _cleanup_(freep) char *text = NULL;
        struct stat st;
        size_t len;
        int r;

        if (fstat(fd, &st) < 0)
                return negative_errno();
        /* The kernel's table of locks, never one below a fake root: the locks are this kernel's. */
        r = read_file_at("/", "/proc/locks", READ_FILE_MAX, &text, &len);
        if (r < 0)
                return r;
        return locks_find_holder(text, len, major(st.st_dev), minor(st.st_dev), (uint64_t) st.st_ino, getpid());
}

int knob_locks_take(KnobLocks *l, const char *root, const char *then) {
        for (KnobId k = 0; k < _KNOB_ID_MAX; k++) {
                const KnobDesc *d = knob_desc(k);
                _cleanup_(closep) int fd = -EBADF;
                _cleanup_(freep) char *path = NULL;
                struct stat st;

                if (!d || !d->writable || l->fd[k] >= 0)
                        continue;
                if (path_join_root(root, d->path, &path) < 0) {
                        knob_locks_release(l);
                        return log_oom();
                }
                fd = open_below_root(root, d->path, O_RDONLY);
                /* Missing (an older kernel, no contrib patch), a symlink or a socket: nothing writes it. */
                if (fd == -ENOENT || fd == -ENOTDIR || fd == -ELOOP || fd == -ENXIO || fd == -EXDEV)
                        continue;
                if (fd < 0) {
                        knob_locks_release(l);
                        return log_error_errno(fd, "Failed to open %s to lock it: %s", path, errno_str(fd));
                }
                if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                        continue;
                if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                        int e = errno;
                        knob_locks_release(l);
                        if (e != EWOULDBLOCK)
                                return log_error_errno(e, "Failed to lock %s: %s", path, errno_str(e));
                        int pid = knob_lock_holder(fd);
                        char who[96], comm_path[32];
                        _cleanup_(freep) char *comm = NULL;
                        snprintf(comm_path, sizeof comm_path, "/proc/%d/comm", pid);
                        if (pid > 0 && read_file_at("/", comm_path, 64, &comm, NULL) >= 0) {
                                char ecomm[64];
                                comm[strcspn(comm, "\n")] = 0;
                                snprintf(who, sizeof who, "pid %d (%s)", pid, str_escape(comm, ecomm, sizeof ecomm));
                        } else if (pid > 0)
                                snprintf(who, sizeof who, "pid %d", pid);
                        else
                                snprintf(who, sizeof who, "a process not found in /proc/locks%s%s",
                                         pid < 0 ? ": " : " (another pid namespace?)", pid < 0 ? errno_str(pid) : "");
                        return log_error_errno(EBUSY,
                                               "%s (%s) is locked by %s: another pcptuned or pcptunectl writes this "
                                               "kernel's knobs (from another root, a chroot or a mount namespace "
                                               "that shares its /proc); %s",
                                               d->name, path, who, then);
                }
                l->fd[k] = TAKE_FD(fd);
        }
        return 0;
}
