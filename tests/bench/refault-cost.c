/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * refault-cost: what reading the refault counters of reclaimed subtrees costs
 * pcptuned, next to walking every live cgroup.
 *
 * Under <mount>/<prefix>-<pid>: --parents cgroups with --children each
 * (parents x (children + 1) + 1 memory cgroups).  Each pass reads, in the
 * same run and alternately:
 *   subtrees: memcg_refault_read() of every parent, as pcptuned does before
 *             and after a reclaim that went through every parent (one
 *             hierarchical memory.stat per reclaimed subtree);
 *   walk:     memory.stat of every cgroup of the tree (every live cgroup in
 *             the subtrees), parsed the same way: what reading "the live
 *             cgroups" one by one would cost.
 * With --charge, a process in every child first writes and reads --cache of
 * page cache (and exits), so the counters have something to flush.
 *
 * Prints the median CPU time of the passes for each side, per read, and
 *   refault-cost: cgroups=<N> subtrees=<P> subtrees_cpu_ms=<X> per_read_us=<X>
 *                 walk_cpu_ms=<Y> walk_per_read_us=<Y> ratio=<walk/subtrees>
 * Root only; everything is removed at the end and on SIGINT/SIGTERM.
 */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "source-cgroup.h"
#include "source-memcg-tree.h"
#include "util.h"

#define COST_PASSES_MAX 1000U

static volatile sig_atomic_t cost_interrupted;

static void cost_on_signal(int sig) {
        cost_interrupted = 1;
}

typedef struct Cost {
        unsigned parents, children, passes;
        uint64_t cache_bytes;        /* 0: no charging */
        const char *prefix;
        const char *data_dir;
        CgroupMode mode;
        char *mount;
        char name[128];              /* /<prefix>-<pid> */
        bool made;
} Cost;

static usec_t cpu_now(void) {
        return now_usec(CLOCK_PROCESS_CPUTIME_ID);
}

static int cmp_usec(const void *a, const void *b) {
        usec_t x = *(const usec_t *) a, y = *(const usec_t *) b;
        return x < y ? -1 : x > y;
}

static void cg_path(const Cost *c, unsigned i, unsigned j, char *buf, size_t size) {
        if (i == UINT_MAX)
                snprintf(buf, size, "%s", c->name);
        else if (j == UINT_MAX)
                snprintf(buf, size, "%s/p%u", c->name, i);
        else
                snprintf(buf, size, "%s/p%u/c%u", c->name, i, j);
}

static int cg_mkdir(const Cost *c, const char *cg, bool enable) {
        char path[PATH_MAX * 2];
        snprintf(path, sizeof(path), "%s%s", c->mount, cg);
        if (mkdir(path, 0755) < 0)
                return -errno;
        if (enable && c->mode == CGROUP_MEMORY_V2) {
                strncat(path, "/cgroup.subtree_control", sizeof(path) - strlen(path) - 1);
                return write_file_at(NULL, path, "+memory");
        }
        return 0;
}

static void cg_rmdir(const Cost *c, const char *cg) {
        char path[PATH_MAX * 2];
        snprintf(path, sizeof(path), "%s%s", c->mount, cg);
        for (unsigned tries = 0; rmdir(path) < 0 && errno == EBUSY && tries < 50; tries++)
                (void) usleep(20000);
}

static void tree_remove(Cost *c) {
        char cg[PATH_MAX];
        if (!c->made)
                return;
        for (unsigned i = 0; i < c->parents; i++) {
                for (unsigned j = 0; j < c->children; j++) {
                        cg_path(c, i, j, cg, sizeof(cg));
                        cg_rmdir(c, cg);
                }
                cg_path(c, i, UINT_MAX, cg, sizeof(cg));
                cg_rmdir(c, cg);
        }
        cg_rmdir(c, c->name);
        c->made = false;
}

static int tree_create(Cost *c) {
        char cg[PATH_MAX];
        int r = cg_mkdir(c, c->name, true);
        if (r < 0) {
                fprintf(stderr, "refault-cost: cannot create %s%s: %s\n", c->mount, c->name, strerror(-r));
                return r;
        }
        c->made = true;
        for (unsigned i = 0; i < c->parents && !cost_interrupted; i++) {
                cg_path(c, i, UINT_MAX, cg, sizeof(cg));
                if ((r = cg_mkdir(c, cg, true)) < 0)
                        return r;
                for (unsigned j = 0; j < c->children; j++) {
                        cg_path(c, i, j, cg, sizeof(cg));
                        if ((r = cg_mkdir(c, cg, false)) < 0)
                                return r;
                }
        }
        return cost_interrupted ? -EINTR : 0;
}

/* One process per child: join, write and read a file of cache_bytes (then deleted: the counters stay). */
static int tree_charge(const Cost *c) {
        char cg[PATH_MAX], procs[PATH_MAX * 2], file[PATH_MAX];
        static char buf[1 << 16];
        memset(buf, 'x', sizeof(buf));
        for (unsigned i = 0; i < c->parents && !cost_interrupted; i++)
                for (unsigned j = 0; j < c->children; j++) {
                        cg_path(c, i, j, cg, sizeof(cg));
                        snprintf(procs, sizeof(procs), "%s%s/cgroup.procs", c->mount, cg);
                        snprintf(file, sizeof(file), "%s/pcptune-refault-cost-%d-%u-%u", c->data_dir, (int) getpid(), i, j);
                        pid_t pid = fork();
                        if (pid < 0)
                                return -errno;
                        if (pid == 0) {
                                char me[32];
                                int fd = open(procs, O_WRONLY | O_CLOEXEC);
                                snprintf(me, sizeof(me), "%d\n", (int) getpid());
                                if (fd < 0 || write(fd, me, strlen(me)) < 0)
                                        _exit(10);
                                close(fd);
                                fd = open(file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
                                if (fd < 0)
                                        _exit(11);
                                for (uint64_t n = 0; n < c->cache_bytes; n += sizeof(buf))
                                        if (write(fd, buf, (size_t) MIN((uint64_t) sizeof(buf), c->cache_bytes - n)) < 0)
                                                _exit(12);
                                if (pread(fd, buf, sizeof(buf), 0) < 0)
                                        _exit(13);
                                close(fd);
                                _exit(0);
                        }
                        int status;
                        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                                ;
                        (void) unlink(file);
                        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                                return -EIO;
                }
        return cost_interrupted ? -EINTR : 0;
}

/* pcptuned's way: one hierarchical counter per reclaimed subtree.  Returns the number read. */
static unsigned pass_subtrees(const Cost *c, uint64_t *sum) {
        char cg[PATH_MAX];
        unsigned n = 0;
        for (unsigned i = 0; i < c->parents; i++) {
                uint64_t v;
                cg_path(c, i, UINT_MAX, cg, sizeof(cg));
                if (memcg_refault_read(NULL, c->mount, c->mode, cg, &v) >= 0) {
                        *sum += v;
                        n++;
                }
        }
        return n;
}

/* Every cgroup of the subtrees, one by one. */
static unsigned pass_walk(const Cost *c, uint64_t *sum) {
        char cg[PATH_MAX];
        unsigned n = 0;
        for (unsigned i = 0; i < c->parents; i++)
                for (unsigned j = UINT_MAX;; j++) {
                        uint64_t v;
                        cg_path(c, i, j, cg, sizeof(cg));
                        if (memcg_refault_read(NULL, c->mount, c->mode, cg, &v) >= 0) {
                                *sum += v;
                                n++;
                        }
                        if (j + 1 == c->children)
                                break;
                }
        return n;
}

static int parse_u(const char *opt, const char *s, unsigned lo, unsigned hi, unsigned *ret) {
        uint64_t v;
        if (parse_uint64(s, &v) < 0 || v < lo || v > hi) {
                fprintf(stderr, "refault-cost: --%s: expected %u..%u, found \"%s\"\n", opt, lo, hi, s);
                return -EINVAL;
        }
        *ret = (unsigned) v;
        return 0;
}

int main(int argc, char **argv) {
        static const struct option options[] = {
                { "parents", required_argument, NULL, 'p' }, { "children", required_argument, NULL, 'c' },
                { "passes", required_argument, NULL, 'n' },  { "charge", required_argument, NULL, 'C' },
                { "prefix", required_argument, NULL, 'P' },  { "data-dir", required_argument, NULL, 'd' },
                { "help", no_argument, NULL, 'h' },          {}
        };
        Cost c = { .parents = 91, .children = 10, .passes = 20, .prefix = "pcptune-test-refault-cost",
                   .data_dir = "/var/tmp" };
        MemcgCounts mc = { 0 };
        int o, r;

        while ((o = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (o) {
                case 'p':
                        if (parse_u("parents", optarg, 1, 100000, &c.parents) < 0)
                                return 2;
                        break;
                case 'c':
                        if (parse_u("children", optarg, 0, 1000, &c.children) < 0)
                                return 2;
                        break;
                case 'n':
                        if (parse_u("passes", optarg, 1, COST_PASSES_MAX, &c.passes) < 0)
                                return 2;
                        break;
                case 'C':
                        if (parse_size(optarg, &c.cache_bytes) < 0 || c.cache_bytes > ((uint64_t) 64 << 20)) {
                                fprintf(stderr, "refault-cost: --charge: expected a size up to 64MiB\n");
                                return 2;
                        }
                        break;
                case 'P':
                        if (!strneq(optarg, "pcptune-test-", 13) || strchr(optarg, '/') || strlen(optarg) > 64) {
                                fprintf(stderr, "refault-cost: --prefix must start with pcptune-test-\n");
                                return 2;
                        }
                        c.prefix = optarg;
                        break;
                case 'd':
                        c.data_dir = optarg;
                        break;
                case 'h':
                        printf("usage: refault-cost [--parents 91] [--children 10] [--passes 20] [--charge SIZE]\n"
                               "                    [--prefix pcptune-test-refault-cost] [--data-dir /var/tmp]\n");
                        return 0;
                default:
                        return 2;
                }
        if (geteuid() != 0) {
                fprintf(stderr, "refault-cost: must run as root (it creates memory cgroups)\n");
                return 1;
        }
        r = memcg_counts_read("/", &mc);
        if (r < 0 || mc.mode == CGROUP_MEMORY_NONE) {
                fprintf(stderr, "refault-cost: no memory cgroup hierarchy: %s\n", r < 0 ? strerror(-r) : "none");
                return 1;
        }
        c.mode = mc.mode;
        c.mount = TAKE_PTR(mc.mount);
        memcg_counts_done(&mc);
        snprintf(c.name, sizeof(c.name), "/%s-%d", c.prefix, (int) getpid());

        struct sigaction sa = { .sa_handler = cost_on_signal };
        sigemptyset(&sa.sa_mask);
        (void) sigaction(SIGINT, &sa, NULL);
        (void) sigaction(SIGTERM, &sa, NULL);

        unsigned cgroups = c.parents * (c.children + 1) + 1;
        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        r = tree_create(&c);
        if (r >= 0 && c.cache_bytes > 0)
                r = tree_charge(&c);
        if (r < 0) {
                fprintf(stderr, "refault-cost: setup failed: %s\n", strerror(-r));
                tree_remove(&c);
                free(c.mount);
                return 1;
        }
        printf("refault-cost: cgroup %s at %s%s: %u parents x %u children, %u memory cgroups (made in %.1f s%s)\n",
               cgroup_mode_to_string(c.mode), c.mount, c.name, c.parents, c.children, cgroups,
               (double) (now_usec(CLOCK_MONOTONIC) - t0) / 1e6, c.cache_bytes ? ", each child charged" : "");

        usec_t *sub = calloc(c.passes, sizeof(usec_t)), *walk = calloc(c.passes, sizeof(usec_t));
        usec_t sub_wall = 0, walk_wall = 0;
        unsigned n_sub = 0, n_walk = 0;
        uint64_t sum = 0;
        if (!sub || !walk) {
                tree_remove(&c);
                return 1;
        }
        /* Alternate the two sides so that both see the same host. */
        for (unsigned k = 0; k < c.passes && !cost_interrupted; k++) {
                usec_t a = cpu_now(), w = now_usec(CLOCK_MONOTONIC);
                n_sub = pass_subtrees(&c, &sum);
                sub[k] = cpu_now() - a;
                sub_wall += now_usec(CLOCK_MONOTONIC) - w;
                a = cpu_now();
                w = now_usec(CLOCK_MONOTONIC);
                n_walk = pass_walk(&c, &sum);
                walk[k] = cpu_now() - a;
                walk_wall += now_usec(CLOCK_MONOTONIC) - w;
        }
        tree_remove(&c);
        if (cost_interrupted) {
                fprintf(stderr, "refault-cost: interrupted\n");
                free(sub);
                free(walk);
                free(c.mount);
                return 130;
        }
        qsort(sub, c.passes, sizeof(usec_t), cmp_usec);
        qsort(walk, c.passes, sizeof(usec_t), cmp_usec);
        double sub_ms = (double) sub[c.passes / 2] / 1000.0, walk_ms = (double) walk[c.passes / 2] / 1000.0;
        printf("  %u passes, median CPU (min-max), wall mean:\n", c.passes);
        printf("  subtrees: %u memory.stat reads: %.2f ms (%.2f-%.2f), wall %.2f ms\n", n_sub, sub_ms,
               (double) sub[0] / 1000.0, (double) sub[c.passes - 1] / 1000.0, (double) sub_wall / c.passes / 1000.0);
        printf("  walk:     %u memory.stat reads: %.2f ms (%.2f-%.2f), wall %.2f ms\n", n_walk, walk_ms,
               (double) walk[0] / 1000.0, (double) walk[c.passes - 1] / 1000.0, (double) walk_wall / c.passes / 1000.0);
        printf("refault-cost: cgroups=%u subtrees=%u subtrees_cpu_ms=%.2f per_read_us=%.1f walk_cpu_ms=%.2f "
               "walk_per_read_us=%.1f ratio=%.1f\n",
               cgroups, n_sub, sub_ms, n_sub ? sub_ms * 1000.0 / n_sub : 0, walk_ms,
               n_walk ? walk_ms * 1000.0 / n_walk : 0, sub_ms > 0 ? walk_ms / sub_ms : 0);
        free(sub);
        free(walk);
        free(c.mount);
        return n_sub == c.parents ? 0 : 1;
}
