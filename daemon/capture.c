/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <inttypes.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>

#include "capture.h"
#include "log.h"
#include "source-cgroup.h"
#include "source-topology.h"
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

int capture_snapshot(const char *root, const char *dest) {
        static const char *const required[] = { "/proc/zoneinfo", "/proc/meminfo", "/proc/sys/kernel/osrelease" };
        static const char *const optional[] = {
                "/proc/vmstat",
                "/proc/cgroups",
                "/proc/version", /* Debian's stable release, for the kernel probes (probe-kernel.c) */
                "/proc/pressure/memory",
                "/proc/sys/vm/percpu_pagelist_high_fraction",
                "/proc/sys/vm/percpu_pagelist_fraction",
                "/proc/sys/vm/min_free_kbytes",
                "/proc/sys/vm/watermark_scale_factor",
                "/sys/devices/system/node/online",
                "/sys/devices/system/node/possible",
                "/sys/devices/system/cpu/online",
                "/sys/devices/system/cpu/possible",
                "/sys/kernel/mm/transparent_hugepage/enabled",
                /* pcptune's contrib kernel patches (0002, 0003). */
                "/proc/sys/vm/pcp_batch_scale_max",
                "/sys/kernel/mm/percpu/nr_chunks",
                "/sys/kernel/mm/percpu/nr_empty_chunks",
                "/sys/kernel/mm/percpu/nr_to_depopulate",
                "/sys/kernel/mm/percpu/nr_sidelined",
                "/sys/kernel/mm/percpu/nr_populated_pages",
                "/sys/kernel/mm/percpu/nr_empty_pop_pages",
                "/sys/kernel/mm/percpu/nr_used_pop_pages",
                "/sys/kernel/mm/percpu/frag_free_bytes",
                "/sys/kernel/mm/percpu/nr_units",
                "/sys/kernel/mm/percpu/unit_pages",
                "/sys/kernel/mm/percpu/empty_pop_pages_high",
                /* Reading it holds pcpu_lock with IRQs off for a few ms: once, on request. */
                "/sys/kernel/debug/percpu_stats",
        };
        _cleanup_(freep) char *nodedir = NULL;
        _cleanup_(topology_done) Topology topo = { 0 };
        MemcgCounts mc = { 0 };
        int n = 0, r;
        DIR *d;

        r = mkdir_p(dest, 0755);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(required); i++) {
                r = copy_file(root, dest, required[i]);
                if (r < 0)
                        return log_error_errno(r, "Failed to copy %s: %s", required[i], errno_str(r));
                n++;
        }
        for (size_t i = 0; i < ELEMENTSOF(optional); i++) {
                r = copy_file(root, dest, optional[i]);
                if (r >= 0)
                        n++;
                else if (!absent(r))
                        return log_error_errno(r, "Failed to copy %s: %s", optional[i], errno_str(r));
        }

        if (path_join_root(root, "/sys/devices/system/node", &nodedir) < 0)
                return -ENOMEM;
        d = opendir(nodedir);
        for (struct dirent *de; d && (de = readdir(d));) {
                _cleanup_(freep) char *rel = NULL, *rel2 = NULL;
                if (strncmp(de->d_name, "node", 4) != 0 || de->d_name[4] < '0' || de->d_name[4] > '9')
                        continue;
                if (asprintf(&rel, "/sys/devices/system/node/%s/cpulist", de->d_name) < 0 ||
                    asprintf(&rel2, "/sys/devices/system/node/%s/meminfo", de->d_name) < 0) {
                        closedir(d);
                        return -ENOMEM;
                }
                if (copy_file(root, dest, rel) >= 0)
                        n++;
                if (copy_file(root, dest, rel2) >= 0)
                        n++;
        }
        if (d)
                closedir(d);

        /* What the tree cannot carry: the page size and the memcg counts. */
        r = topology_read(root, &topo);
        if (r < 0)
                return log_error_errno(r, "Failed to read the topology: %s", errno_str(r));
        char buf[512];
        snprintf(buf, sizeof buf, "%u\n", topo.page_size);
        if ((r = put_file(dest, "/.pcptune/page_size", buf, strlen(buf))) < 0)
                return r;
        n++;
        if (memcg_counts_read(root, &mc) >= 0) {
                _cleanup_(freep) char *text = NULL;
                r = memcg_snapshot_format(&mc, &text);
                memcg_counts_done(&mc);
                if (r < 0 || (r = put_file(dest, MEMCG_SNAPSHOT_FILE, text, strlen(text))) < 0)
                        return r;
                n++;
        }
        struct utsname u;
        char host[128] = "unknown";
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
