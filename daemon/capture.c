/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>

#include "capture.h"
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

int tar_extract(const char *file, const char *dir) {
        char *const argv[] = { (char *) "tar", (char *) "-xzf", (char *) file, (char *) "-C", (char *) dir,
                               (char *) "--no-same-owner", NULL };
        return run_tar(argv);
}
