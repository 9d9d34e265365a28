/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <archive.h>
#include <archive_entry.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>

#include "capture.h"
#include "knob.h"
#include "log.h"
#include "source-table.h"
#include "util.h"

extern char **environ;

static int put_file(const char *dest, const char *rel, const char *data, size_t len) {
        _cleanup_(freep) char *path = NULL, *dir = NULL;
        char *slash;
        int r;

        if (asprintf(&path, "%s%s", dest, rel) < 0)
                return -ENOMEM;
        dir = strdup(path);
        if (!dir)
                return -ENOMEM;
        slash = strrchr(dir, '/');
        if (slash)
                *slash = 0;
        r = mkdir_p(dir, 0755);
        if (r < 0)
                return r;
        return write_file_atomic(path, data, len, 0644);
}

/* Copy one file; -ENOENT/-EACCES/-EPERM/-EOPNOTSUPP mean "absent" to the caller. */
static int copy_file(const char *root, const char *dest, const char *rel) {
        _cleanup_(freep) char *buf = NULL;
        size_t len;
        int r;

        r = read_file_at(root, rel, READ_FILE_MAX, &buf, &len);
        if (r < 0)
                return r;
        return put_file(dest, rel, buf, len);
}

static bool absent(int r) {
        return r == -ENOENT || r == -EACCES || r == -EPERM || r == -EOPNOTSUPP || r == -ENODEV;
}

typedef struct CaptureFile {
        const char *root, *dest;
        bool required;
        int n;
} CaptureFile;

static int capture_one(const char *rel, void *userdata) {
        CaptureFile *c = userdata;
        int r = copy_file(c->root, c->dest, rel);

        if (r >= 0)
                c->n++;
        else if (c->required || !absent(r))
                return log_error_errno(r, "Failed to copy %s: %s", rel, errno_str(r));
        return 0;
}

/* One file of a row: each match of its pattern. */
static int capture_file(const SourceFile *f, void *userdata) {
        CaptureFile *c = userdata;

        c->required = f->required;
        return source_file_expand(c->root, f->path, capture_one, c);
}

/* One row of the source table: its files, then what the tree cannot carry.  Files written, or -errno. */
static int capture_source(const char *root, const char *dest, const SourceDesc *d) {
        CaptureFile c = { .root = root, .dest = dest };
        int r;

        r = source_desc_foreach_file(d, capture_file, &c);
        if (r < 0)
                return r;
        if (d->record) {
                _cleanup_(freep) char *text = NULL;
                r = d->record(root, &text);
                if (r == -ENODATA)
                        return c.n;
                if (r < 0 || (r = put_file(dest, d->record_file, text, strlen(text))) < 0)
                        return r;
                c.n++;
        }
        return c.n;
}

int capture_snapshot(const char *root, const char *dest) {
        char buf[512], host[128] = "unknown";
        struct utsname u;
        int n = 0, r;

        r = mkdir_p(dest, 0755);
        if (r < 0)
                return r;
        for (SourceId id = 0; id < _SOURCE_MAX; id++) {
                r = capture_source(root, dest, source_desc(id));
                if (r < 0)
                        return r;
                n += r;
        }
        if (uname(&u) == 0)
                snprintf(host, sizeof host, "%s", u.nodename);
        snprintf(buf, sizeof buf, "pcptune %s\nhost %s\nroot %s\ntime %lld\n", PACKAGE_VERSION, host, root,
                 (long long) time(NULL));
        if ((r = put_file(dest, "/.pcptune/snapshot", buf, strlen(buf))) < 0)
                return r;
        return n + 1;
}

static int run_tar(char *const argv[]) {
        pid_t pid;
        int status, r;

        r = posix_spawnp(&pid, "tar", NULL, NULL, argv, environ);
        if (r != 0)
                return -r;
        if (waitpid(pid, &status, 0) < 0)
                return negative_errno();
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

int tar_create(const char *dir, const char *file) {
        char *const argv[] = { (char *) "tar", (char *) "-czf", (char *) file, (char *) "-C", (char *) dir,
                               (char *) ".", NULL };
        return run_tar(argv);
}

/* ---- unpacking a snapshot archive ------------------------------------------- */

/*
 * libarchive is opened when an archive is unpacked, not linked: linked, it maps libxml2, ICU and
 * eight more libraries (pcptunectl --version needed 50 MB of address space instead of 8 MB) into
 * every pcptunectl and pcptuned run, for a command few runs use.
 */
#define LIBARCHIVE_SONAME "libarchive.so.13"
static struct {
        typeof(archive_read_new) *archive_read_new;
        typeof(archive_read_support_filter_gzip) *archive_read_support_filter_gzip;
        typeof(archive_read_support_format_tar) *archive_read_support_format_tar;
        typeof(archive_read_free) *archive_read_free;
        typeof(archive_read_open_filename) *archive_read_open_filename;
        typeof(archive_read_open_memory) *archive_read_open_memory;
        typeof(archive_read_next_header) *archive_read_next_header;
        typeof(archive_read_data) *archive_read_data;
        typeof(archive_error_string) *archive_error_string;
        typeof(archive_errno) *archive_errno;
        typeof(archive_entry_pathname) *archive_entry_pathname;
        typeof(archive_entry_hardlink) *archive_entry_hardlink;
        typeof(archive_entry_filetype) *archive_entry_filetype;
        typeof(archive_entry_size_is_set) *archive_entry_size_is_set;
        typeof(archive_entry_size) *archive_entry_size;
} la;

static int libarchive_load(char *err, size_t errlen) {
        static void *dl;
        void *h;

        if (dl)
                return 0;
        h = dlopen(LIBARCHIVE_SONAME, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
                snprintf(err, errlen, "cannot unpack snapshot archives without %s (Debian: libarchive13): %s",
                         LIBARCHIVE_SONAME, dlerror());
                return -EOPNOTSUPP;
        }
#define LOAD(f)                                                                                          \
        if (!(la.f = (typeof(la.f)) dlsym(h, #f))) {                                                      \
                snprintf(err, errlen, "%s lacks %s", LIBARCHIVE_SONAME, #f);                             \
                dlclose(h);                                                                              \
                return -EOPNOTSUPP;                                                                      \
        }
        LOAD(archive_read_new)
        LOAD(archive_read_support_filter_gzip)
        LOAD(archive_read_support_format_tar)
        LOAD(archive_read_free)
        LOAD(archive_read_open_filename)
        LOAD(archive_read_open_memory)
        LOAD(archive_read_next_header)
        LOAD(archive_read_data)
        LOAD(archive_error_string)
        LOAD(archive_errno)
        LOAD(archive_entry_pathname)
        LOAD(archive_entry_hardlink)
        LOAD(archive_entry_filetype)
        LOAD(archive_entry_size_is_set)
        LOAD(archive_entry_size)
#undef LOAD
        dl = h;
        return 0;
}

#define SNAPSHOT_FILE "/.pcptune/snapshot"

typedef struct WantedPath {
        const char *path;
        bool found;
} WantedPath;

static int wanted_file(const SourceFile *f, void *userdata) {
        WantedPath *w = userdata;

        /* FNM_PATHNAME: a pattern segment ("node[0-9]*") never matches across '/'. */
        if (fnmatch(f->path, w->path, FNM_PATHNAME | FNM_PERIOD) == 0) {
                w->found = true;
                return 1;
        }
        return 0;
}

bool snapshot_path_wanted(const char *path) {
        WantedPath w = { .path = path };

        if (streq(path, SNAPSHOT_FILE))
                return true;
        for (SourceId id = 0; id < _SOURCE_MAX && !w.found; id++) {
                const SourceDesc *d = source_desc(id);
                if (d->record_file && streq(d->record_file, path))
                        return true;
                (void) source_desc_foreach_file(d, wanted_file, &w);
        }
        return w.found;
}

int snapshot_member_path(const char *name, char *buf, size_t size) {
        size_t n = 0;

        if (!name || size < 2)
                return -EINVAL;
        if (name[0] == '/')
                return -EINVAL; /* absolute */
        /* tar -C DIR . writes "./proc/zoneinfo" and "./" itself. */
        while (name[0] == '.' && name[1] == '/')
                for (name += 2; name[0] == '/';)
                        name++;
        if (streq(name, "") || streq(name, "."))
                return 0;
        for (const char *seg = name; *seg;) {
                size_t len = strcspn(seg, "/");
                if (len == 0 || (len == 1 && seg[0] == '.') || (len == 2 && seg[0] == '.' && seg[1] == '.'))
                        return -EINVAL; /* "a//b", "a/./b", ".." */
                for (size_t i = 0; i < len; i++)
                        if ((unsigned char) seg[i] < 0x20 || seg[i] == 0x7f)
                                return -EINVAL;
                if (n + 1 + len + 1 > size)
                        return -ENAMETOOLONG;
                buf[n++] = '/';
                memcpy(buf + n, seg, len);
                n += len;
                seg += len;
                if (*seg == '/' && !seg[1])
                        break; /* a directory's trailing '/' */
                if (*seg == '/')
                        seg++;
        }
        buf[n] = 0;
        return 1;
}

/* Make the directories of rel (an absolute member path) below dirfd, never through a symlink; their fd or -errno. */
static int open_parent(int dirfd, const char *rel, const char **ret_base) {
        _cleanup_(freep) char *copy = strdup(rel + 1);
        _cleanup_(closep) int fd = -EBADF;
        char *seg, *slash;

        if (!copy)
                return -ENOMEM;
        fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return negative_errno();
        for (seg = copy; (slash = strchr(seg, '/')); seg = slash + 1) {
                *slash = 0;
                if (mkdirat(fd, seg, 0755) < 0 && errno != EEXIST)
                        return negative_errno();
                int next = openat(fd, seg, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0)
                        return negative_errno();
                close(fd);
                fd = next;
        }
        *ret_base = rel + 1 + (seg - copy);
        return TAKE_FD(fd);
}

/* Copy the current member's data to a new file rel below dirfd (O_EXCL: a path twice is refused), within *budget bytes. */
static int unpack_data(struct archive *a, int dirfd, const char *rel, uint64_t *budget) {
        _cleanup_(closep) int parent = -EBADF, fd = -EBADF;
        const char *base;
        char block[65536];

        parent = open_parent(dirfd, rel, &base);
        if (parent < 0)
                return parent;
        fd = openat(parent, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
                return negative_errno();
        for (;;) {
                la_ssize_t k = la.archive_read_data(a, block, sizeof block);
                if (k == 0)
                        return 0;
                if (k < 0)
                        return -EBADMSG;
                if ((uint64_t) k > *budget)
                        return -EFBIG;
                *budget -= (uint64_t) k;
                for (size_t done = 0; done < (size_t) k;) {
                        ssize_t w = write(fd, block + done, (size_t) k - done);
                        if (w < 0 && errno == EINTR)
                                continue;
                        if (w < 0)
                                return negative_errno();
                        done += (size_t) w;
                }
        }
}

static const char *entry_kind(struct archive_entry *e) {
        if (la.archive_entry_hardlink(e))
                return "a hard link";
        switch (la.archive_entry_filetype(e)) {
        case AE_IFLNK:
                return "a symlink";
        case AE_IFCHR:
        case AE_IFBLK:
                return "a device node";
        case AE_IFIFO:
                return "a FIFO";
        case AE_IFSOCK:
                return "a socket";
        case AE_IFDIR:
                return "a directory";
        case AE_IFREG:
                return "a regular file";
        default:
                return "an entry of unknown type";
        }
}

/* The members of a, checked and (dirfd >= 0) written.  what names the archive in messages. */
static int unpack_archive(struct archive *a, const char *what, int dirfd, char *err, size_t errlen) {
        uint64_t budget = SNAPSHOT_ARCHIVE_BYTES_MAX;
        unsigned members = 0, skipped = 0;
        char first_skipped[80] = "";
        struct archive_entry *e;
        int r;

#define FAIL(code, ...) (snprintf(err, errlen, __VA_ARGS__), (code))
        for (;;) {
                char path[PATH_MAX], shown[80];
                const char *name;

                r = la.archive_read_next_header(a, &e);
                if (r == ARCHIVE_EOF)
                        break;
                if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
                        return FAIL(-EBADMSG, "%s is not a snapshot archive (a gzip-compressed tar): %s", what,
                                    la.archive_error_string(a) ?: "unreadable");
                if (++members > SNAPSHOT_ARCHIVE_MEMBERS_MAX)
                        return FAIL(-E2BIG, "%s holds more than %u members; a snapshot has a few dozen", what,
                                    SNAPSHOT_ARCHIVE_MEMBERS_MAX);
                name = la.archive_entry_pathname(e);
                str_escape(name ?: "", shown, 64);
                if (strlen(name ?: "") > 63)
                        strcpy(shown + 60, "...");
                r = snapshot_member_path(name, path, sizeof path);
                if (r < 0)
                        return FAIL(-EINVAL, "%s: refusing member '%s': %s", what, shown,
                                    r == -ENAMETOOLONG ? "its path is too long"
                                                       : "not a relative path without '.', '..' or empty components");
                if (la.archive_entry_hardlink(e) ||
                    (la.archive_entry_filetype(e) != AE_IFREG && la.archive_entry_filetype(e) != AE_IFDIR))
                        return FAIL(-EINVAL, "%s: refusing member '%s': it is %s; a snapshot holds only regular files "
                                    "and directories", what, shown, entry_kind(e));
                /* Every member's size counts, also those skipped: their data is decompressed to pass them. */
                if (la.archive_entry_size_is_set(e) && la.archive_entry_size(e) > 0 &&
                    (uint64_t) la.archive_entry_size(e) > budget)
                        return FAIL(-EFBIG, "%s: refusing member '%s' of %" PRId64 " bytes: a snapshot unpacks to at "
                                    "most %u MiB", what, shown, (int64_t) la.archive_entry_size(e),
                                    (unsigned) (SNAPSHOT_ARCHIVE_BYTES_MAX >> 20));
                if (la.archive_entry_filetype(e) == AE_IFDIR || r == 0)
                        continue; /* made as needed for the files below them */
                bool wanted = snapshot_path_wanted(path);
                if (!wanted && skipped++ == 0)
                        snprintf(first_skipped, sizeof first_skipped, "%s", shown);
                if (!wanted || dirfd < 0) {
                        /* archive_read_next_header() passes its data. */
                        if (la.archive_entry_size(e) > 0)
                                budget -= (uint64_t) la.archive_entry_size(e);
                        continue;
                }
                r = unpack_data(a, dirfd, path, &budget);
                if (r == -EFBIG)
                        return FAIL(r, "%s: refusing member '%s': a snapshot unpacks to at most %u MiB", what, shown,
                                    (unsigned) (SNAPSHOT_ARCHIVE_BYTES_MAX >> 20));
                if (r == -EEXIST)
                        return FAIL(-EINVAL, "%s: refusing member '%s': it is there twice", what, shown);
                if (r == -EBADMSG)
                        return FAIL(r, "%s: member '%s' is cut short or corrupt: %s", what, shown,
                                    la.archive_error_string(a) ?: "unreadable");
                if (r < 0)
                        return FAIL(r, "%s: cannot write member '%s': %s", what, shown, strerror(-r));
        }
#undef FAIL
        if (skipped > 0)
                log_warning("%s: ignored %u member%s that no source reads (the first: '%s')", what, skipped,
                            skipped == 1 ? "" : "s", first_skipped);
        return 0;
}

static struct archive *archive_reader(void) {
        struct archive *a = la.archive_read_new();

        if (!a)
                return NULL;
        /* gzip and tar only: no other decompressor or format parses what a user hands us. */
        if (la.archive_read_support_filter_gzip(a) != ARCHIVE_OK || la.archive_read_support_format_tar(a) != ARCHIVE_OK) {
                la.archive_read_free(a);
                return NULL;
        }
        return a;
}

static int unpack_opened(struct archive *a, int r, const char *what, const char *dir, char *err, size_t errlen) {
        _cleanup_(closep) int dirfd = -EBADF;

        if (r != ARCHIVE_OK) {
                int e = la.archive_errno(a) > 0 ? la.archive_errno(a) : EBADMSG;
                snprintf(err, errlen, "cannot open %s: %s", what, la.archive_error_string(a) ?: strerror(e));
                return -e;
        }
        if (dir) {
                dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dirfd < 0) {
                        r = negative_errno();
                        snprintf(err, errlen, "cannot open %s: %s", dir, strerror(-r));
                        return r;
                }
        }
        return unpack_archive(a, what, dirfd, err, errlen);
}

/* Unpack the archive file, or (file NULL) the size bytes at buf. */
static int unpack(const char *file, const void *buf, size_t size, const char *dir, char *err, size_t errlen) {
        struct archive *a;
        int r;

        r = libarchive_load(err, errlen);
        if (r < 0)
                return r;
        a = archive_reader();
        if (!a)
                return -ENOMEM;
        r = file ? la.archive_read_open_filename(a, file, 65536) : la.archive_read_open_memory(a, buf, size);
        r = unpack_opened(a, r, file ?: "<buffer>", dir, err, errlen);
        la.archive_read_free(a);
        return r;
}

int snapshot_archive_unpack(const char *file, const char *dir, char *err, size_t errlen) {
        return unpack(file, NULL, 0, dir, err, errlen);
}

int snapshot_archive_unpack_buffer(const void *buf, size_t size, const char *dir, char *err, size_t errlen) {
        return unpack(NULL, buf, size, dir, err, errlen);
}

int tar_extract(const char *file, const char *dir) {
        char err[512] = "";
        int r = snapshot_archive_unpack(file, dir, err, sizeof err);

        if (r < 0 && err[0])
                log_error("%s", err);
        return r;
}
