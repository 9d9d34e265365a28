/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Memory cgroups, live and dying (the memory row of /proc/cgroups, proc_cgroupstats_show() in
 * kernel/cgroup/cgroup-v1.c; nr_dying_descendants in cgroup.stat, kernel/cgroup/cgroup.c).
 *
 * v1: the memory row of /proc/cgroups gives num_cgroups, the hierarchy's
 * nr_cgrps: incremented at mkdir, decremented only when the cgroup is freed,
 * so it includes dying ones.  dying = num_cgroups - directories of the
 * hierarchy (root included).  Only directories are counted, no file is read
 * in each cgroup: a walk over 10k cgroups stays a readdir() per cgroup.
 *
 * v2: the root's cgroup.stat.  Since 6.12 it prints nr_subsys_<ss> and
 * nr_dying_subsys_<ss> per controller bound to v2.  nr_subsys_memory is the
 * number of live memory css in the subtree *including the cgroup's own*: the
 * captured 6.12 fixtures show "nr_descendants 0 ... nr_subsys_memory 1" on a
 * parent with no child and 501 with 500 children (memcg-churn.txt), so on the
 * root it already counts the root memcg and is used as is for `live`.  It is
 * also exact where nr_descendants is not: a cgroup whose parent does not
 * enable +memory has no memcg.  Before 6.12: live = nr_descendants + 1 and
 * dying = nr_dying_descendants, counting cgroups of every controller.
 */
#include <inttypes.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "log.h"
#include "source-cgroup.h"
#include "util.h"

#define CGROUP_WALK_MAX_DEPTH 512U
/* /proc/cgroups, cgroup.controllers, cgroup.stat: a few hundred bytes. */
#define SMALL_FILE_MAX ((size_t) 64 * 1024)

static bool root_is_live(const char *root) {
        return !root || !*root || streq(root, "/");
}

static bool word_is(const char *w, size_t wlen, const char *lit) {
        return strlen(lit) == wlen && memcmp(w, lit, wlen) == 0;
}

/* Next blank-separated field of [*p, end): false at the end. */
static bool next_field(const char **p, const char *end, const char **ret, size_t *ret_len) {
        const char *s = skip_blanks(*p, end), *e = s;

        if (s >= end)
                return false;
        while (e < end && *e != ' ' && *e != '\t')
                e++;
        *ret = s;
        *ret_len = (size_t) (e - s);
        *p = e;
        return true;
}

static int field_u64(const char *f, size_t flen, uint64_t *ret) {
        const char *p = f;

        if (scan_u64(&p, f + flen, ret) < 0 || p != f + flen)
                return -EINVAL;
        return 0;
}

int proc_cgroups_parse(const char *buf, size_t len, const char *controller, ProcCgroupsRow *ret) {
        const char *pos, *end, *line;
        size_t line_len;
        bool found = false;
        ProcCgroupsRow row = {};

        if (!buf || !controller || !*controller || !ret)
                return -EINVAL;
        pos = buf;
        end = buf + len;

        while (next_line(&pos, end, &line, &line_len)) {
                const char *p = line, *lend = line + line_len, *f[4];
                size_t fl[4], n = 0, extra_len;
                const char *extra;
                uint64_t hierarchy, num, enabled;

                if (line_len > 0 && line[0] == '#')
                        continue;   /* "#subsys_name hierarchy num_cgroups enabled" */
                if (!next_field(&p, lend, &f[0], &fl[0]) || !word_is(f[0], fl[0], controller))
                        continue;
                if (found)
                        return -EINVAL;     /* a controller appears once */
                for (n = 1; n < 4; n++)
                        if (!next_field(&p, lend, &f[n], &fl[n]))
                                return -EINVAL;
                if (next_field(&p, lend, &extra, &extra_len))
                        return -EINVAL;
                if (field_u64(f[1], fl[1], &hierarchy) < 0 || hierarchy > UINT_MAX ||
                    field_u64(f[2], fl[2], &num) < 0 ||
                    field_u64(f[3], fl[3], &enabled) < 0 || enabled > 1)
                        return -EINVAL;
                row = (ProcCgroupsRow) {
                        .hierarchy = (unsigned) hierarchy,
                        .num_cgroups = num,
                        .enabled = enabled == 1,
                };
                found = true;
        }
        if (!found)
                return -ENOENT;
        *ret = row;
        return 0;
}

int cgroup_stat_parse(const char *buf, size_t len, CgroupStat *ret) {
        const char *pos, *end, *line;
        size_t line_len;
        CgroupStat s = {
                .nr_descendants = -1,
                .nr_dying_descendants = -1,
                .nr_subsys_memory = -1,
                .nr_dying_subsys_memory = -1,
        };

        if (!buf || !ret)
                return -EINVAL;
        pos = buf;
        end = buf + len;

        while (next_line(&pos, end, &line, &line_len)) {
                const char *p = line, *lend = line + line_len, *key, *val, *extra;
                size_t key_len, val_len, extra_len;
                int64_t *dst, v;

                if (!next_field(&p, lend, &key, &key_len))
                        continue;       /* blank line */
                if (key != line)
                        return -EINVAL; /* keys start the line */
                if (word_is(key, key_len, "nr_descendants"))
                        dst = &s.nr_descendants;
                else if (word_is(key, key_len, "nr_dying_descendants"))
                        dst = &s.nr_dying_descendants;
                else if (word_is(key, key_len, "nr_subsys_memory"))
                        dst = &s.nr_subsys_memory;
                else if (word_is(key, key_len, "nr_dying_subsys_memory"))
                        dst = &s.nr_dying_subsys_memory;
                else
                        continue;       /* other controllers and later additions */

                if (*dst != -1)
                        return -EINVAL; /* repeated */
                if (!next_field(&p, lend, &val, &val_len) || next_field(&p, lend, &extra, &extra_len))
                        return -EINVAL;
                p = val;
                if (scan_i64(&p, val + val_len, &v) < 0 || p != val + val_len || v < 0)
                        return -EINVAL;
                *dst = v;
        }
        /* Both printed by every kernel that has cgroup.stat (4.14+). */
        if (s.nr_descendants < 0 || s.nr_dying_descendants < 0)
                return -EINVAL;
        *ret = s;
        return 0;
}

const char *cgroup_mode_to_string(CgroupMode m) {
        switch (m) {
        case CGROUP_MEMORY_NONE:
                return "none";
        case CGROUP_MEMORY_V1:
                return "v1";
        case CGROUP_MEMORY_V2:
                return "v2";
        default:
                return NULL;
        }
}

void memcg_counts_done(MemcgCounts *m) {
        if (!m)
                return;
        free(m->mount);
        *m = (MemcgCounts) {};
}

/* Does a cgroup.controllers file (below root) list "memory"?  false if unreadable. */
static bool controllers_have_memory(const char *root, const char *mount) {
        _cleanup_(freep) char *path = NULL, *buf = NULL;
        const char *p, *end;
        size_t len;

        if (asprintf(&path, "%s/cgroup.controllers", streq(mount, "/") ? "" : mount) < 0)
                return false;
        if (read_file_at(root, path, SMALL_FILE_MAX, &buf, &len) < 0)
                return false;
        p = buf;
        end = buf + len;
        while (p < end) {
                /* Words are separated by blanks; the file ends with a newline. */
                const char *w;

                while (p < end && (*p == '\n' || *p == ' ' || *p == '\t'))
                        p++;
                w = p;
                while (p < end && *p != '\n' && *p != ' ' && *p != '\t')
                        p++;
                if (word_is(w, (size_t) (p - w), "memory"))
                        return true;
        }
        return false;
}

static bool path_exists_at(const char *root, const char *path) {
        _cleanup_(freep) char *p = NULL;

        if (path_join_root(root, path, &p) < 0)
                return false;
        return access(p, F_OK) == 0;
}

static bool dir_exists_at(const char *root, const char *path) {
        _cleanup_(freep) char *p = NULL;
        struct stat st;

        if (path_join_root(root, path, &p) < 0)
                return false;
        return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Undo mountinfo's octal escapes (" " is "\040", "\\" is "\134") in place. */
static void mountinfo_unescape(char *s) {
        char *w = s;

        for (const char *r = s; *r;) {
                if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
                        *w++ = (char) (((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
                        r += 4;
                } else
                        *w++ = *r++;
        }
        *w = 0;
}

/* Does a comma-separated option list contain word? */
static bool options_have(const char *opts, size_t len, const char *word) {
        const char *p = opts, *end = opts + len;

        while (p < end) {
                const char *c = memchr(p, ',', (size_t) (end - p));
                const char *e = c ?: end;
                if (word_is(p, (size_t) (e - p), word))
                        return true;
                p = e + 1;
        }
        return false;
}

/*
 * mountinfo lines (fs/proc_namespace.c, show_mountinfo()):
 *   "id parent maj:min root mountpoint opts [optional...] - fstype source superopts".
 * A v1 memory mount wins over v2: the controller is bound to one hierarchy only.
 */
int memcg_find_mount(const char *root, const char *buf, size_t len, CgroupMode *ret_mode, char **ret_mount) {
        const char *pos, *end, *line;
        size_t line_len;
        _cleanup_(freep) char *v1 = NULL, *v2 = NULL;
        bool v1_at_root = false;

        if (!buf || !ret_mode || !ret_mount)
                return -EINVAL;
        pos = buf;
        end = buf + len;

        while (next_line(&pos, end, &line, &line_len)) {
                const char *p = line, *lend = line + line_len, *f, *mroot = NULL, *mpoint = NULL, *fstype = NULL, *super = NULL;
                size_t fl, mroot_len = 0, mpoint_len = 0, fstype_len = 0, super_len = 0;
                unsigned i = 0;
                bool after_sep = false;
                unsigned after = 0;

                while (next_field(&p, lend, &f, &fl)) {
                        if (!after_sep) {
                                if (i == 3)
                                        mroot = f, mroot_len = fl;
                                else if (i == 4)
                                        mpoint = f, mpoint_len = fl;
                                else if (i >= 6 && word_is(f, fl, "-"))
                                        after_sep = true;
                                i++;
                        } else {
                                if (after == 0)
                                        fstype = f, fstype_len = fl;
                                else if (after == 2)
                                        super = f, super_len = fl;
                                after++;
                        }
                }
                if (!mpoint || !fstype || !super)
                        continue;       /* not a mountinfo line we understand */

                if (word_is(fstype, fstype_len, "cgroup") && options_have(super, super_len, "memory")) {
                        bool at_root = mroot && word_is(mroot, mroot_len, "/");
                        if (v1 && (v1_at_root || !at_root))
                                continue;   /* keep the first, preferring a mount of the hierarchy's root */
                        free(v1);
                        v1 = strndup(mpoint, mpoint_len);
                        if (!v1)
                                return -ENOMEM;
                        mountinfo_unescape(v1);
                        v1_at_root = at_root;
                } else if (!v1 && !v2 && word_is(fstype, fstype_len, "cgroup2")) {
                        _cleanup_(freep) char *m = strndup(mpoint, mpoint_len);
                        if (!m)
                                return -ENOMEM;
                        mountinfo_unescape(m);
                        if (controllers_have_memory(root, m))
                                v2 = TAKE_PTR(m);
                }
        }
        if (v1) {
                /* Only a subtree of the hierarchy is mounted (a container without its own
                 * cgroup namespace): its directories cannot be compared with the
                 * hierarchy-wide num_cgroups. */
                if (!v1_at_root)
                        return -EOPNOTSUPP;
                *ret_mode = CGROUP_MEMORY_V1;
                *ret_mount = TAKE_PTR(v1);
                return 0;
        }
        if (v2) {
                *ret_mode = CGROUP_MEMORY_V2;
                *ret_mount = TAKE_PTR(v2);
                return 0;
        }
        *ret_mode = CGROUP_MEMORY_NONE;
        *ret_mount = NULL;
        return 0;
}

/* For trees without mountinfo (fixtures, snapshots): the conventional mount points. */
static int memcg_find_conventional(const char *root, CgroupMode *ret_mode, char **ret_mount) {
        static const char *const v2_mounts[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
        const char *v1 = "/sys/fs/cgroup/memory";
        char *m;

        if (dir_exists_at(root, v1)) {
                _cleanup_(freep) char *buf = NULL;
                ProcCgroupsRow row;
                size_t len;
                bool is_v1 = path_exists_at(root, "/sys/fs/cgroup/memory/memory.usage_in_bytes");

                /* A v2 child cgroup may be called "memory" too: /proc/cgroups tells them apart. */
                if (!is_v1 && read_file_at(root, "/proc/cgroups", SMALL_FILE_MAX, &buf, &len) >= 0 &&
                    proc_cgroups_parse(buf, len, "memory", &row) >= 0)
                        is_v1 = row.hierarchy != 0;
                if (is_v1) {
                        m = strdup(v1);
                        if (!m)
                                return -ENOMEM;
                        *ret_mode = CGROUP_MEMORY_V1;
                        *ret_mount = m;
                        return 0;
                }
        }
        for (size_t i = 0; i < ELEMENTSOF(v2_mounts); i++)
                if (controllers_have_memory(root, v2_mounts[i])) {
                        m = strdup(v2_mounts[i]);
                        if (!m)
                                return -ENOMEM;
                        *ret_mode = CGROUP_MEMORY_V2;
                        *ret_mount = m;
                        return 0;
                }
        *ret_mode = CGROUP_MEMORY_NONE;
        *ret_mount = NULL;
        return 0;
}

typedef struct DirStack {
        DIR **dirs;
        size_t n, cap;
} DirStack;

static void dir_stack_done(DirStack *s) {
        while (s->n > 0)
                closedir(s->dirs[--s->n]);
        free(s->dirs);
}

/* Push an open directory fd; takes the fd in all cases. */
static int dir_stack_push(DirStack *s, int fd) {
        DIR *d;

        if (s->n == s->cap) {
                size_t ncap = s->cap ? s->cap * 2 : 16;
                DIR **n = realloc(s->dirs, ncap * sizeof(DIR *));
                if (!n) {
                        close(fd);
                        return -ENOMEM;
                }
                s->dirs = n;
                s->cap = ncap;
        }
        d = fdopendir(fd);
        if (!d) {
                int r = negative_errno();
                close(fd);
                return r;
        }
        s->dirs[s->n++] = d;
        return 0;
}

/*
 * Count the directories of a tree, top included, without following symlinks
 * and without reading any file: an iterative depth-first walk holding one
 * DIR per level.  cgroupfs (kernfs) gives a directory 2 + its subdirectories
 * as link count, so a directory whose count is 2 is a leaf and is counted
 * without being opened: one fstatat() per cgroup instead of an open, a
 * readdir and a close (11,000 cgroups: ~110 ms -> a fraction, see the unit
 * test).  A directory removed during the walk (rmdir racing us) is skipped.
 * 0, -ELOOP deeper than CGROUP_WALK_MAX_DEPTH, -errno.
 */
static int count_directories(const char *path, uint64_t *ret) {
        _cleanup_(dir_stack_done) DirStack stack = {};
        uint64_t count = 1;
        int fd, r;

        /* The mount point itself may be reached through a symlink; nothing below it is. */
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        r = dir_stack_push(&stack, fd);
        if (r < 0)
                return r;

        while (stack.n > 0) {
                DIR *d = stack.dirs[stack.n - 1];
                struct dirent *de;
                struct stat st;

                errno = 0;
                de = readdir(d);
                if (!de) {
                        if (errno != 0)
                                return negative_errno();
                        closedir(d);
                        stack.n--;
                        continue;
                }
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
                        continue;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        if (errno == ENOENT)
                                continue; /* removed meanwhile */
                        return negative_errno();
                }
                if (!S_ISDIR(st.st_mode))
                        continue;
                count++;
                if (st.st_nlink == 2)
                        continue; /* no subdirectories: nothing to open */
                fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0) {
                        if (errno == ENOENT)
                                continue;   /* removed meanwhile */
                        return negative_errno();
                }
                if (stack.n >= CGROUP_WALK_MAX_DEPTH) {
                        close(fd);
                        return -ELOOP;
                }
                r = dir_stack_push(&stack, fd);
                if (r < 0)
                        return r;
        }
        *ret = count;
        return 0;
}

static int memcg_count_v1(const char *root, const char *mount, MemcgCounts *m) {
        _cleanup_(freep) char *buf = NULL, *path = NULL;
        ProcCgroupsRow row;
        uint64_t dirs = 0;
        size_t len;
        int r;

        r = read_file_at(root, "/proc/cgroups", SMALL_FILE_MAX, &buf, &len);
        if (r < 0)
                return r;
        r = proc_cgroups_parse(buf, len, "memory", &row);
        if (r < 0)
                return r;
        r = path_join_root(root, mount, &path);
        if (r < 0)
                return r;
        r = count_directories(path, &dirs);
        if (r < 0)
                return r;

        m->live = dirs;
        /* Racing mkdir between the two reads can make the difference negative. */
        m->dying = row.num_cgroups > dirs ? row.num_cgroups - dirs : 0;
        m->dying_from_subsys = false;
        return 0;
}

static int memcg_count_v2(const char *root, const char *mount, MemcgCounts *m) {
        _cleanup_(freep) char *path = NULL, *buf = NULL;
        CgroupStat st;
        size_t len;
        int r;

        if (asprintf(&path, "%s/cgroup.stat", streq(mount, "/") ? "" : mount) < 0)
                return -ENOMEM;
        r = read_file_at(root, path, SMALL_FILE_MAX, &buf, &len);
        if (r < 0)
                return r;
        r = cgroup_stat_parse(buf, len, &st);
        if (r < 0)
                return r;

        if (st.nr_subsys_memory >= 0 && st.nr_dying_subsys_memory >= 0) {
                m->live = (uint64_t) st.nr_subsys_memory;     /* root css included, see above */
                m->dying = (uint64_t) st.nr_dying_subsys_memory;
                m->dying_from_subsys = true;
        } else {
                m->live = (uint64_t) st.nr_descendants + 1;
                m->dying = (uint64_t) st.nr_dying_descendants;
                m->dying_from_subsys = false;
        }
        return 0;
}

/* The memcg counts `pcptunectl snapshot` records: directory trees are not copied. */
int memcg_snapshot_parse(const char *buf, size_t len, MemcgCounts *ret) {
        const char *pos = buf, *end = buf + len, *line;
        MemcgCounts m = { .mode = _CGROUP_MEMORY_INVALID };
        bool have_live = false, have_dying = false;
        size_t l;

        while (next_line(&pos, end, &line, &l)) {
                const char *v;
                if (line_has_key(line, l, "mode", " ")) {
                        v = line + 5;
                        size_t vl = l - 5;
                        for (int i = 0; i < _CGROUP_MEMORY_MAX; i++)
                                if (strlen(cgroup_mode_to_string((CgroupMode) i)) == vl &&
                                    memcmp(v, cgroup_mode_to_string((CgroupMode) i), vl) == 0)
                                        m.mode = (CgroupMode) i;
                } else if (line_has_key(line, l, "mount", " ")) {
                        free(m.mount);
                        m.mount = strndup(line + 6, l - 6);
                        if (!m.mount)
                                return -ENOMEM;
                } else if (line_has_key(line, l, "live", " ")) {
                        v = line + 4;
                        if (scan_u64(&v, line + l, &m.live) < 0) {
                                free(m.mount);
                                return -EINVAL;
                        }
                        have_live = true;
                } else if (line_has_key(line, l, "dying", " ")) {
                        v = line + 5;
                        if (scan_u64(&v, line + l, &m.dying) < 0) {
                                free(m.mount);
                                return -EINVAL;
                        }
                        have_dying = true;
                }
        }
        if (m.mode < 0 || (m.mode != CGROUP_MEMORY_NONE && (!have_live || !have_dying || !m.mount))) {
                free(m.mount);
                return -EINVAL;
        }
        *ret = m;
        return 0;
}

int memcg_snapshot_format(const MemcgCounts *m, char **ret) {
        if (asprintf(ret, "mode %s\nmount %s\nlive %" PRIu64 "\ndying %" PRIu64 "\n", cgroup_mode_to_string(m->mode),
                     m->mount ?: "-", m->live, m->dying) < 0)
                return -ENOMEM;
        return 0;
}

int memcg_counts_read(const char *root, MemcgCounts *ret) {
        _cleanup_(freep) char *mount = NULL;
        CgroupMode mode = CGROUP_MEMORY_NONE;
        MemcgCounts m = {};
        bool found = false;
        int r;

        if (!ret)
                return -EINVAL;

        if (!root_is_live(root)) {
                _cleanup_(freep) char *buf = NULL;
                size_t len;
                if (read_file_at(root, MEMCG_SNAPSHOT_FILE, 4096, &buf, &len) >= 0)
                        return memcg_snapshot_parse(buf, len, ret);
        }

        if (root_is_live(root)) {
                _cleanup_(freep) char *buf = NULL;
                size_t len;

                r = read_file_at(root, "/proc/self/mountinfo", READ_FILE_MAX, &buf, &len);
                if (r >= 0) {
                        r = memcg_find_mount(root, buf, len, &mode, &mount);
                        if (r < 0)
                                return r;
                        found = true;
                } else
                        log_debug("Cannot read /proc/self/mountinfo (%s), trying the usual cgroup mount points.",
                                  errno_str(r));
        }
        if (!found) {
                r = memcg_find_conventional(root, &mode, &mount);
                if (r < 0)
                        return r;
        }

        if (mode == CGROUP_MEMORY_V1)
                r = memcg_count_v1(root, mount, &m);
        else if (mode == CGROUP_MEMORY_V2)
                r = memcg_count_v2(root, mount, &m);
        else
                r = 0;
        if (r < 0)
                return r;

        m.mode = mode;
        m.mount = TAKE_PTR(mount);
        *ret = m;
        return 0;
}
