/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Host shape below a root prefix: /sys/devices/system/node/node<N>/cpulist,
 * /sys/devices/system/cpu/{online,possible}, /proc/sys/kernel/osrelease.
 */
#include <dirent.h>
#include <limits.h>

#include "source-topology.h"
#include "util.h"

#define NODE_DIR "/sys/devices/system/node"
#define CPU_ONLINE_PATH "/sys/devices/system/cpu/online"
#define CPU_POSSIBLE_PATH "/sys/devices/system/cpu/possible"
#define OSRELEASE_PATH "/proc/sys/kernel/osrelease"
#define PAGE_SIZE_PATH "/.pcptune/page_size"
/* A cpulist of 8192 CPUs in the worst layout ("0,2,4,...,8190") is ~20 KiB. */
#define SMALL_FILE_MAX ((size_t) 64 * 1024)

static bool root_is_live(const char *root) {
        return !root || !*root || streq(root, "/");
}

static void closedirp(DIR **d) {
        if (*d)
                closedir(*d);
}

/* Number of CPUs in a cpulist file below root.  0, -errno of the read, or -EINVAL. */
static int read_cpulist_count(const char *root, const char *path, unsigned *ret) {
        _cleanup_(freep) char *buf = NULL;
        unsigned count;
        int r;

        r = read_file_at(root, path, SMALL_FILE_MAX, &buf, NULL);
        if (r < 0)
                return r;
        r = parse_cpulist(buf, &count, NULL);
        if (r < 0)
                return -EINVAL;
        *ret = count;
        return 0;
}

/* "node<digits>" -> node id; -1 for any other name. */
static int node_dir_id(const char *name) {
        const char *p = name + 4;
        long id = 0;

        if (strncmp(name, "node", 4) != 0 || !*p)
                return -1;
        for (; *p; p++) {
                if (*p < '0' || *p > '9')
                        return -1;
                id = id * 10 + (*p - '0');
                if (id > INT_MAX / 16)
                        return INT_MAX;     /* out of range; rejected by the caller */
        }
        return (int) id;
}

/*
 * Online CPUs per node from node<N>/cpulist.  *ret_node_cpus is NULL and
 * *ret_n 0 when there is no node<N> directory (CONFIG_NUMA=n or a tree
 * without it).  0, -EINVAL (bad cpulist or node id >= TOPOLOGY_MAX_NODES), -errno.
 */
static int topology_read_nodes(const char *root, unsigned **ret_node_cpus, unsigned *ret_n) {
        _cleanup_(freep) char *dir_path = NULL;
        _cleanup_(closedirp) DIR *d = NULL;
        _cleanup_(freep) unsigned *cpus = NULL;
        unsigned n = 0;
        int r;

        r = path_join_root(root, NODE_DIR, &dir_path);
        if (r < 0)
                return r;
        d = opendir(dir_path);
        if (!d) {
                if (errno == ENOENT || errno == ENOTDIR) {
                        *ret_node_cpus = NULL;
                        *ret_n = 0;
                        return 0;
                }
                return negative_errno();
        }

        cpus = calloc(TOPOLOGY_MAX_NODES, sizeof(unsigned));
        if (!cpus)
                return -ENOMEM;

        for (;;) {
                _cleanup_(freep) char *cpulist_path = NULL;
                struct dirent *de;
                unsigned count;
                int id;

                errno = 0;
                de = readdir(d);
                if (!de) {
                        if (errno != 0)
                                return negative_errno();
                        break;
                }
                id = node_dir_id(de->d_name);
                if (id < 0)
                        continue;       /* "online", "possible", "has_cpu", "power"... */
                if (id >= TOPOLOGY_MAX_NODES)
                        return -EINVAL;
                if (asprintf(&cpulist_path, NODE_DIR "/%s/cpulist", de->d_name) < 0)
                        return -ENOMEM;
                r = read_cpulist_count(root, cpulist_path, &count);
                if (r < 0)
                        return r;
                cpus[id] = count;
                n = MAX(n, (unsigned) id + 1);
        }

        if (n == 0) {
                *ret_node_cpus = NULL;
                *ret_n = 0;
                return 0;
        }
        /* Shrink to the nodes present; realloc to a smaller size cannot fail in practice,
         * but keep the larger buffer if it does. */
        unsigned *shrunk = realloc(cpus, n * sizeof(unsigned));
        if (shrunk)
                cpus = shrunk;
        *ret_node_cpus = TAKE_PTR(cpus);
        *ret_n = n;
        return 0;
}

/* Page size: sysconf() on the live system, else what `pcptunectl snapshot` recorded, else 4096. */
static int topology_page_size(const char *root, unsigned *ret) {
        int64_t v;
        int r;

        if (root_is_live(root)) {
                long ps = sysconf(_SC_PAGESIZE);
                if (ps <= 0 || ps > UINT_MAX)
                        return -EINVAL;
                *ret = (unsigned) ps;
                return 0;
        }
        r = read_int64_at(root, PAGE_SIZE_PATH, &v);
        if (r == -ENOENT) {
                *ret = 4096;
                return 0;
        }
        if (r < 0)
                return r;
        /* A page size is a power of two of at least 4 KiB (x86, arm64 4K/16K/64K, ppc64 64K). */
        if (v < 4096 || v > (int64_t) 1 << 30 || (v & (v - 1)) != 0)
                return -EINVAL;
        *ret = (unsigned) v;
        return 0;
}

static int topology_kernel_release(const char *root, char **ret_release, KernelVersion *ret_kernel) {
        _cleanup_(freep) char *buf = NULL;
        KernelVersion kv;
        size_t len;
        int r;

        r = read_file_at(root, OSRELEASE_PATH, 4096, &buf, &len);
        if (r < 0)
                return r;
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ' || buf[len - 1] == '\t'))
                buf[--len] = 0;
        if (len == 0 || strlen(buf) != len || strpbrk(buf, "\n \t"))
                return -EINVAL;         /* empty, embedded NUL or more than one word */
        r = kernel_version_parse(buf, &kv);
        if (r < 0)
                return -EINVAL;
        *ret_release = TAKE_PTR(buf);
        *ret_kernel = kv;
        return 0;
}

int topology_read(const char *root, Topology *ret) {
        _cleanup_(freep) unsigned *node_cpus = NULL;
        _cleanup_(freep) char *release = NULL;
        unsigned n_nodes = 0, online = 0, possible = 0, page_size;
        bool has_online;
        KernelVersion kv;
        int r;

        if (!ret)
                return -EINVAL;

        r = topology_kernel_release(root, &release, &kv);
        if (r < 0)
                return r;

        r = topology_read_nodes(root, &node_cpus, &n_nodes);
        if (r < 0)
                return r;

        r = read_cpulist_count(root, CPU_ONLINE_PATH, &online);
        if (r < 0 && r != -ENOENT)
                return r;
        has_online = r >= 0;

        r = read_cpulist_count(root, CPU_POSSIBLE_PATH, &possible);
        if (r == -ENOENT)
                possible = 0;
        else if (r < 0)
                return r;

        if (n_nodes == 0) {
                /* No node directory (CONFIG_NUMA=n): every online CPU is on node 0. */
                if (!has_online)
                        return -ENOENT;
                node_cpus = calloc(1, sizeof(unsigned));
                if (!node_cpus)
                        return -ENOMEM;
                node_cpus[0] = online;
                n_nodes = 1;
        } else if (!has_online) {
                for (unsigned i = 0; i < n_nodes; i++)
                        online += node_cpus[i];
        }

        r = topology_page_size(root, &page_size);
        if (r < 0)
                return r;

        *ret = (Topology) {
                .n_nodes = n_nodes,
                .node_cpus = TAKE_PTR(node_cpus),
                .online_cpus = online,
                .possible_cpus = possible,
                .page_size = page_size,
                .kernel_release = TAKE_PTR(release),
                .kernel = kv,
        };
        return 0;
}

void topology_done(Topology *t) {
        if (!t)
                return;
        free(t->node_cpus);
        free(t->kernel_release);
        *t = (Topology) {};
}

unsigned topology_node_cpus(const Topology *t, int node) {
        if (!t || node < 0 || (unsigned) node >= t->n_nodes || !t->node_cpus)
                return 0;
        return t->node_cpus[node];
}
