/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * churn: the container-churn scenario (short-lived memcgs that leave dying memcgs) on the live kernel, once
 * without pcptuned and once with pcptuned running the dying-memcg policy.
 *
 * Under one cgroup pcptune-test-churn-<pid> at the top of the memory
 * hierarchy: --parents cgroups with --children memory cgroups each.  A process
 * in every child writes and reads a file of --cache bytes on a disk file
 * system and exits, the way a container leaves its page cache behind; then
 * the children are removed.  Their page cache keeps them dying, and a dying
 * memcg keeps ~98% of its per-cpu memory (mem_cgroup_alloc(), mem_cgroup_css_free(), mm/memcontrol.c).  Percpu
 * (meminfo), dying and live memcg counts and, when readable, percpu_stats are
 * printed at each mark: baseline, created, removed, then every 5 s.
 *
 *   cost per memcg = (Percpu after create - baseline) / memcgs created
 *   excess         = Percpu - (baseline + live test memcgs x cost)
 *
 * A live sibling, <tree>/p0/sibling, stays during the whole case: a process
 * that keeps a hot working set (a --sibling-file it reads in a loop, and
 * optionally --sibling-anon bytes of anonymous memory it touched once).  Its
 * parent p0 holds dying memcgs like the others, so pcptuned reclaims p0 on v2
 * (memory.reclaim) and skips it on v1 with force-empty: childless.  Its
 * refaults (memory.stat), read throughput, swap usage and the host's pswpout
 * over the window show what the reclaim cost a live container.
 *
 * The last line is
 *   churn: excess_percpu_kib without=<N> with=<N> ratio=<R>
 *          sibling_refaults_without=<N> sibling_refaults_with=<N>
 *          sibling_mib_s_without=<X> sibling_mib_s_with=<X> pswpout_without=<N> pswpout_with=<N>
 * (means over the runs, with the range over the runs after each sibling
 * figure; "with" floored at 1 kB; "-" for a case not run).
 *
 * Root only.  Every cgroup, file and process it creates is removed at the end
 * of each case and on exit, also on SIGINT/SIGTERM/SIGHUP/SIGPIPE: files first, then the
 * test tree is reclaimed (what the files leave charged: file-system metadata),
 * then its cgroups are removed.  Run from a build directory (for ./pcptuned).
 */
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>

#include "source-cgroup.h"
#include "source-memcg-tree.h"
#include "source-meminfo.h"
#include "source-percpu-stats.h"
#include "util.h"

#define CHURN_SAMPLE_SEC 5U           /* a table row every 5 s of the window */
#define CHURN_JOBS 4U                 /* charging processes running at once */
#define CHURN_SENTINEL_BYTES ((uint64_t) 16U << 20)
#define CHURN_SETTLE_SEC 30U          /* wait after cleanup for the dying count */
#define CHURN_DAEMON_STOP_SEC 10U
#define CHURN_IO_CHUNK ((size_t) 1U << 20)
#define TMPFS_MAGIC_ ((long) 0x01021994)
#define RAMFS_MAGIC_ ((long) 0x858458f6)
#define DEBUGFS_MAGIC_ ((long) 0x64626720)
#define DEBUGFS_DIR "/sys/kernel/debug"
#define DAMON_KDAMONDS "/sys/kernel/mm/damon/admin/kdamonds"
#define POLICY_ANCHOR "        cgroup: auto"
#define SIBLING_PAUSE_USEC (50 * USEC_PER_MSEC) /* between two reads of its working set */

/* The only mutable global: what a signal handler may touch. */
static volatile sig_atomic_t churn_interrupted;

static void churn_on_signal(int sig) {
        churn_interrupted = 1;
}

typedef enum CaseKind {
        CASE_WITHOUT,
        CASE_WITH,
        _CASE_MAX,
        _CASE_INVALID = -EINVAL,
} CaseKind;

static const char *const case_kind_names[_CASE_MAX] = { "without", "with" };

typedef struct Mark {
        char label[16];
        double t_s;                   /* seconds from the start of the case */
        uint64_t percpu_kib;
        uint64_t dying, live;
        int64_t usage_bytes;          /* memory of the test tree, -1 when unknown */
        bool has_stats;
        int64_t chunks, empty_pop_pages, free_bytes; /* percpu_stats: chunk count, pages and bytes per unit */
        double sentinel_pct;          /* sentinel pages resident, percent (-1 unknown) */
} Mark;

typedef struct CaseResult {
        CaseKind kind;
        unsigned run;
        bool complete;
        Mark baseline, created, removed, end;
        uint64_t created_memcgs;
        double cost_bytes;
        double excess_kib;
        double back_s;                /* removal -> dying back near the pre-run count; < 0: never */
        double settle_s;              /* cleanup -> dying back; < 0: not within CHURN_SETTLE_SEC */
        uint64_t settle_dying;
        double mkdir_s, charge_s, rmdir_s;
        double sentinel_before, sentinel_after, sentinel_min; /* percent resident, < 0 unknown */
        int64_t cleanup_usage_before, cleanup_usage_after; /* test tree after deleting the files, bytes */
        int cleanup_error;            /* of the write to memory.force_empty or memory.reclaim */
        /* the live sibling, over the window (removal to its end); -1 unknown */
        int64_t sib_refaults;         /* pages refaulted in its cgroup */
        double sib_mib_s;             /* read throughput while reading */
        int64_t sib_swap_bytes;       /* its swap usage at the end (v2 memory.swap.current) */
        int64_t pswpout;              /* host-wide pages swapped out during the window */
        double sib_cached_pct;        /* its file resident at the end */
} CaseResult;

/* Written by the sibling, read by churn: a MAP_SHARED page. */
typedef struct SiblingShared {
        volatile uint64_t bytes;      /* read so far */
        volatile uint64_t read_usec;  /* time spent reading */
        volatile uint64_t passes;
        volatile int ready;           /* file written, anon touched, first pass done */
        volatile int error;           /* the step that failed, 0 */
} SiblingShared;

typedef struct Churn {
        /* options */
        unsigned parents, children, runs;
        uint64_t cache_bytes;
        unsigned observe_sec;
        const char *pcptuned;
        char *policy;
        const char *keep_dir;
        int only;                     /* -1 both, else a CaseKind */
        bool want_percpu_stats;
        uint64_t sibling_file_bytes;  /* 0: no sibling */
        uint64_t sibling_anon_bytes;
        const char *prefix;           /* test cgroup name before -<pid> */

        /* environment */
        CgroupMode mode;
        char *mount;                  /* memory hierarchy */
        char *test_dir;               /* <mount>/pcptune-test-churn-<pid> */
        char *test_name;              /* /pcptune-test-churn-<pid>, as the daemon names it */
        char *data_dir;               /* <keep_dir>/pcptune-churn-<pid> */
        char *sentinel;
        unsigned units;               /* possible CPUs */
        long page_size;
        bool mounted_debugfs;
        bool stats_warned;
        int64_t fraction_before;

        /* per case */
        bool test_dir_made;
        pid_t workers[CHURN_JOBS];
        pid_t daemon_pid;
        char *daemon_tmp;             /* policy dir, state dir and log of the running daemon */
        Mark base;                    /* baseline of the current case, for the excess column */
        double cost_bytes;            /* of the current case, < 0 before "created" */
        uint64_t tol;                 /* "near the pre-run count": within this many */
        char *io_buf;
        pid_t sibling_pid;
        SiblingShared *sib;           /* MAP_SHARED */
        char *sibling_file;
} Churn;

static _printf_(1, 2) void say(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        fflush(stdout);
}

static _printf_(1, 2) int fail(const char *fmt, ...) {
        va_list ap;
        fflush(stdout);
        fputs("churn: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return -EIO;
}

static double secs_since(usec_t t0) {
        return (double) (now_usec(CLOCK_MONOTONIC) - t0) / (double) USEC_PER_SEC;
}

/* Sleep until an absolute CLOCK_MONOTONIC time in µs.  false when interrupted by SIGINT/SIGTERM. */
static bool sleep_until(usec_t when) {
        struct timespec ts = {
                .tv_sec = (time_t) (when / USEC_PER_SEC),
                .tv_nsec = (long) (when % USEC_PER_SEC) * 1000L,
        };
        while (!churn_interrupted) {
                int r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
                if (r == 0)
                        return true;
                if (r != EINTR)
                        return false;
        }
        return false;
}

static bool sleep_for(usec_t usec) {
        return sleep_until(now_usec(CLOCK_MONOTONIC) + usec);
}

/* ------------------------------------------------------------------------- */
/* paths */

static void child_cgroup(const Churn *c, unsigned i, unsigned j, char *buf, size_t size) {
        if (j == UINT_MAX)
                snprintf(buf, size, "%s/p%u", c->test_dir, i);
        else
                snprintf(buf, size, "%s/p%u/c%u", c->test_dir, i, j);
}

static void child_file(const Churn *c, unsigned i, unsigned j, char *buf, size_t size) {
        snprintf(buf, size, "%s/p%u-c%u", c->data_dir, i, j);
}

/* ------------------------------------------------------------------------- */
/* files */

static int write_all(int fd, const char *buf, uint64_t total) {
        while (total > 0) {
                size_t n = (size_t) MIN(total, (uint64_t) CHURN_IO_CHUNK);
                ssize_t k = write(fd, buf, n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                total -= (uint64_t) k;
        }
        return 0;
}

static int read_all(int fd, char *buf) {
        for (;;) {
                ssize_t k = read(fd, buf, CHURN_IO_CHUNK);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        return 0;
        }
}

/* The sentinel: page cache of the benchmark's own cgroup, outside the test tree.
 * Written back (fsync) so that it is clean: a global drop_caches would drop it. */
static int sentinel_create(Churn *c) {
        _cleanup_(closep) int fd = open(c->sentinel, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        int r;

        if (fd < 0)
                return fail("cannot create %s: %m", c->sentinel);
        r = write_all(fd, c->io_buf, CHURN_SENTINEL_BYTES);
        if (r < 0 || fsync(fd) < 0)
                return fail("cannot write %s: %s", c->sentinel, strerror(r < 0 ? -r : errno));
        return 0;
}

static int sentinel_touch(Churn *c) {
        _cleanup_(closep) int fd = open(c->sentinel, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || read_all(fd, c->io_buf) < 0)
                return fail("cannot read %s: %m", c->sentinel);
        return 0;
}

static void files_delete(const Churn *c) {
        char path[PATH_MAX];
        for (unsigned i = 0; i < c->parents; i++)
                for (unsigned j = 0; j < c->children; j++) {
                        child_file(c, i, j, path, sizeof(path));
                        (void) unlink(path);
                }
        if (c->sibling_file)
                (void) unlink(c->sibling_file);
}

/* Percent of the file's pages in the page cache (mincore), or -1. */
static double file_residency(const char *path) {
        _cleanup_(closep) int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;

        if (fd < 0 || fstat(fd, &st) < 0 || st.st_size <= 0)
                return -1;
        size_t len = (size_t) st.st_size;
        void *map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED)
                return -1;
        size_t pages = (len + (size_t) sysconf(_SC_PAGESIZE) - 1) / (size_t) sysconf(_SC_PAGESIZE);
        _cleanup_(freep) unsigned char *vec = malloc(pages);
        double pct = -1;
        if (vec && mincore(map, len, vec) == 0) {
                size_t in = 0;
                for (size_t k = 0; k < pages; k++)
                        in += vec[k] & 1;
                pct = 100.0 * (double) in / (double) pages;
        }
        munmap(map, len);
        return pct;
}

/* "inode N on M:m" of a file, with the device as the kernel's trace events print it (s_dev), so that
 * filemap:mm_filemap_delete_from_page_cache can be filtered to it (README, churn). */
static const char *file_identity(const char *path, char *buf, size_t size) {
        struct stat st;
        if (stat(path, &st) < 0)
                snprintf(buf, size, "inode unknown: %s", strerror(errno));
        else
                snprintf(buf, size, "inode %ju on %u:%u", (uintmax_t) st.st_ino, major(st.st_dev), minor(st.st_dev));
        return buf;
}

/* ------------------------------------------------------------------------- */
/* measurements */

static int counts_read(uint64_t *ret_dying, uint64_t *ret_live) {
        MemcgCounts mc = {};
        int r = memcg_counts_read("/", &mc);
        if (r < 0)
                return r;
        *ret_dying = mc.dying;
        *ret_live = mc.live;
        memcg_counts_done(&mc);
        return 0;
}

static int64_t tree_usage(const Churn *c) {
        char path[PATH_MAX];
        int64_t v;

        if (!c->test_dir_made)
                return -1;
        snprintf(path, sizeof(path), "%s/%s", c->test_dir,
                 c->mode == CGROUP_MEMORY_V1 ? "memory.usage_in_bytes" : "memory.current");
        if (read_int64_at(NULL, path, &v) < 0)
                return -1;
        return v;
}

static int mark_take(Churn *c, Mark *m, const char *label, usec_t t_zero) {
        Meminfo mi;
        int r;

        *m = (Mark) { .usage_bytes = -1 };
        snprintf(m->label, sizeof(m->label), "%s", label);
        m->t_s = ((double) now_usec(CLOCK_MONOTONIC) - (double) t_zero) / (double) USEC_PER_SEC;

        r = meminfo_read("/", &mi);
        if (r < 0)
                return fail("cannot read /proc/meminfo: %s", strerror(-r));
        if (!mi.has_percpu)
                return fail("/proc/meminfo has no Percpu line (kernel before 4.7?)");
        m->percpu_kib = mi.percpu_kib;

        r = counts_read(&m->dying, &m->live);
        if (r < 0)
                return fail("cannot count memory cgroups: %s", strerror(-r));
        m->usage_bytes = tree_usage(c);

        /* Then read it again: this host may page out cache idle for a minute
         * (a DAMON pageout scheme), and only a drop by someone else should show. */
        m->sentinel_pct = file_residency(c->sentinel);
        (void) sentinel_touch(c);

        PercpuStats st = {};
        r = percpu_stats_read("/", &st);
        if (r >= 0) {
                PercpuSummary sum;
                percpu_stats_summarize(&st, &sum);
                m->has_stats = true;
                m->chunks = st.nr_chunks;
                m->empty_pop_pages = sum.empty_pop_pages;
                m->free_bytes = sum.free_bytes;
                percpu_stats_done(&st);
        } else if (!c->stats_warned) {
                c->stats_warned = true;
                say("  (percpu_stats not readable: %s; its columns stay empty%s)\n", strerror(-r),
                    c->want_percpu_stats ? "" : "; --percpu-stats mounts debugfs");
        }
        return 0;
}

static double mark_excess_kib(const Churn *c, const Mark *m) {
        uint64_t live = m->live > c->base.live ? m->live - c->base.live : 0;
        return (double) m->percpu_kib - ((double) c->base.percpu_kib + (double) live * c->cost_bytes / 1024.0);
}

static void mark_header(void) {
        say("  %-9s %8s %11s %11s %7s %7s %10s %8s %7s %10s %10s\n", "mark", "t_s", "percpu_kib", "excess_kib",
            "dying", "live", "tree_mib", "sentinel", "chunks", "empty_pop", "free_kib");
}

static void mark_print(const Churn *c, const Mark *m) {
        char excess[32] = "-", usage[32] = "-", chunks[32] = "-", empty[32] = "-", free_kib[32] = "-",
             sentinel[32] = "-";

        if (c->cost_bytes >= 0)
                snprintf(excess, sizeof(excess), "%.0f", mark_excess_kib(c, m));
        if (m->usage_bytes >= 0)
                snprintf(usage, sizeof(usage), "%.1f", (double) m->usage_bytes / 1048576.0);
        if (m->sentinel_pct >= 0)
                snprintf(sentinel, sizeof(sentinel), "%.0f%%", m->sentinel_pct);
        if (m->has_stats) {
                snprintf(chunks, sizeof(chunks), "%" PRIi64, m->chunks);
                snprintf(empty, sizeof(empty), "%" PRIi64, m->empty_pop_pages);
                snprintf(free_kib, sizeof(free_kib), "%" PRIi64, m->free_bytes / 1024);
        }
        say("  %-9s %8.1f %11" PRIu64 " %11s %7" PRIu64 " %7" PRIu64 " %10s %8s %7s %10s %10s\n", m->label,
            m->t_s, m->percpu_kib, excess, m->dying, m->live, usage, sentinel, chunks, empty, free_kib);
}

static bool is_tmpfs(const char *dir, long *ret_type) {
        struct statfs sf;
        if (statfs(dir, &sf) < 0)
                return false;
        *ret_type = (long) sf.f_type;
        return (long) sf.f_type == TMPFS_MAGIC_ || (long) sf.f_type == RAMFS_MAGIC_;
}

/* ------------------------------------------------------------------------- */
/* cgroups */

/* rmdir, retrying while exited tasks leave the cgroup (EBUSY). */
static int cgroup_rmdir(const char *path) {
        for (unsigned tries = 0;; tries++) {
                if (rmdir(path) >= 0 || errno == ENOENT)
                        return 0;
                if (errno != EBUSY || tries >= 50)
                        return -errno;
                (void) usleep(20000);
        }
}

static int cgroup_enable_memory(const char *dir) {
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/cgroup.subtree_control", dir);
        int r = write_file_at(NULL, path, "+memory");
        if (r < 0)
                return fail("cannot enable +memory in %s: %s", path, strerror(-r));
        return 0;
}

static bool cgroup_has_memory(const char *dir) {
        char path[PATH_MAX];
        _cleanup_(freep) char *buf = NULL;
        snprintf(path, sizeof(path), "%s/cgroup.controllers", dir);
        if (read_file_at(NULL, path, 4096, &buf, NULL) < 0)
                return false;
        for (char *save = NULL, *w = strtok_r(buf, " \n", &save); w; w = strtok_r(NULL, " \n", &save))
                if (streq(w, "memory"))
                        return true;
        return false;
}

static int tree_create(Churn *c) {
        char path[PATH_MAX];

        if (mkdir(c->test_dir, 0755) < 0)
                return fail("cannot create %s: %m", c->test_dir);
        c->test_dir_made = true;
        if (c->mode == CGROUP_MEMORY_V2) {
                if (!cgroup_has_memory(c->test_dir))
                        return fail("%s has no memory controller: the root cgroup does not delegate it "
                                    "(+memory in %s/cgroup.subtree_control); not changing the root",
                                    c->test_dir, c->mount);
                if (cgroup_enable_memory(c->test_dir) < 0)
                        return -EIO;
        }
        for (unsigned i = 0; i < c->parents && !churn_interrupted; i++) {
                child_cgroup(c, i, UINT_MAX, path, sizeof(path));
                if (mkdir(path, 0755) < 0)
                        return fail("cannot create %s: %m", path);
                if (c->mode == CGROUP_MEMORY_V2 && cgroup_enable_memory(path) < 0)
                        return -EIO;
                for (unsigned j = 0; j < c->children; j++) {
                        child_cgroup(c, i, j, path, sizeof(path));
                        if (mkdir(path, 0755) < 0)
                                return fail("cannot create %s: %m", path);
                }
                if (i == 0 && c->sibling_file_bytes > 0) {
                        snprintf(path, sizeof(path), "%s/p0/sibling", c->test_dir);
                        if (mkdir(path, 0755) < 0)
                                return fail("cannot create %s: %m", path);
                }
        }
        return churn_interrupted ? -EINTR : 0;
}

/* Remove whatever exists of the tree, deepest first.  Returns the number of failures. */
static unsigned tree_remove(Churn *c) {
        char path[PATH_MAX];
        unsigned failed = 0;

        if (!c->test_dir_made)
                return 0;
        for (unsigned i = 0; i < c->parents; i++) {
                for (unsigned j = 0; j < c->children; j++) {
                        child_cgroup(c, i, j, path, sizeof(path));
                        if (cgroup_rmdir(path) < 0 && failed++ < 3)
                                fail("cannot remove %s: %m", path);
                }
                if (i == 0) {
                        snprintf(path, sizeof(path), "%s/p0/sibling", c->test_dir);
                        if (cgroup_rmdir(path) < 0 && failed++ < 3)
                                fail("cannot remove %s: %m", path);
                }
                child_cgroup(c, i, UINT_MAX, path, sizeof(path));
                if (cgroup_rmdir(path) < 0 && failed++ < 3)
                        fail("cannot remove %s: %m", path);
        }
        if (cgroup_rmdir(c->test_dir) < 0) {
                failed++;
                fail("cannot remove %s: %m", c->test_dir);
        } else
                c->test_dir_made = false;
        return failed;
}

/* ------------------------------------------------------------------------- */
/* charging: one short-lived process per child cgroup */

/* In the forked process: join the cgroup, write and read the file, exit.
 * Exit codes name the failing step for the parent. */
static _Noreturn void worker_run(const char *procs, const char *file, char *buf, uint64_t size) {
        char pid[32];
        int fd;

        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        snprintf(pid, sizeof(pid), "%d\n", (int) getpid());
        fd = open(procs, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, pid, strlen(pid)) < 0)
                _exit(10);
        close(fd);
        /* No fsync: the page cache must stay, charged to this memcg. */
        fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0)
                _exit(11);
        if (write_all(fd, buf, size) < 0)
                _exit(12);
        close(fd);
        fd = open(file, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || read_all(fd, buf) < 0)
                _exit(13);
        _exit(0);
}

static const char *worker_step(int code) {
        switch (code) {
        case 10: return "joining the cgroup (cgroup.procs)";
        case 11: return "creating its file";
        case 12: return "writing its file";
        case 13: return "reading its file back";
        default: return "an unknown step";
        }
}

/* Reap one worker (blocking).  Returns 0, or -EIO when it failed. */
static int workers_reap_one(Churn *c, unsigned *running) {
        int status;
        pid_t pid;

        do
                pid = waitpid(-1, &status, 0);
        while (pid < 0 && errno == EINTR && !churn_interrupted);
        if (pid < 0)
                return -errno;
        for (unsigned k = 0; k < CHURN_JOBS; k++)
                if (c->workers[k] == pid) {
                        c->workers[k] = 0;
                        (*running)--;
                }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return fail("a charging process failed at %s (status 0x%x)",
                            WIFEXITED(status) ? worker_step(WEXITSTATUS(status)) : "a signal", (unsigned) status);
        return 0;
}

static int tree_charge(Churn *c) {
        char procs[PATH_MAX], file[PATH_MAX];
        unsigned running = 0;
        int r = 0;

        for (unsigned i = 0; i < c->parents && r >= 0 && !churn_interrupted; i++)
                for (unsigned j = 0; j < c->children && r >= 0 && !churn_interrupted; j++) {
                        while (running >= CHURN_JOBS && r >= 0)
                                r = workers_reap_one(c, &running);
                        if (r < 0 || churn_interrupted)
                                break;
                        child_cgroup(c, i, j, procs, sizeof(procs));
                        strncat(procs, "/cgroup.procs", sizeof(procs) - strlen(procs) - 1);
                        child_file(c, i, j, file, sizeof(file));
                        pid_t pid = fork();
                        if (pid < 0)
                                return fail("cannot fork: %m");
                        if (pid == 0)
                                worker_run(procs, file, c->io_buf, c->cache_bytes);
                        for (unsigned k = 0; k < CHURN_JOBS; k++)
                                if (c->workers[k] == 0) {
                                        c->workers[k] = pid;
                                        break;
                                }
                        running++;
                }
        while (running > 0 && !churn_interrupted) {
                int q = workers_reap_one(c, &running);
                if (q < 0 && r >= 0)
                        r = q;
                if (q == -ECHILD)
                        break;
        }
        if (churn_interrupted)
                return -EINTR;
        return r;
}

static void workers_kill(Churn *c) {
        for (unsigned k = 0; k < CHURN_JOBS; k++) {
                if (c->workers[k] <= 0)
                        continue;
                (void) kill(c->workers[k], SIGKILL);
                while (waitpid(c->workers[k], NULL, 0) < 0 && errno == EINTR)
                        ;
                c->workers[k] = 0;
        }
}

/* ------------------------------------------------------------------------- */
/* the live sibling: <tree>/p0/sibling keeps a hot working set during the case */

static void sibling_cgroup(const Churn *c, char *buf, size_t size) {
        snprintf(buf, size, "%s/p0/sibling", c->test_dir);
}

/* In the forked process: join, write the file (clean: fsync), touch the anonymous memory once, then read
 * the file again and again.  Errors go to sib->error as the step number. */
static _Noreturn void sibling_run(Churn *c, const char *procs) {
        SiblingShared *sh = c->sib;
        char pid[32];
        int fd;

        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        snprintf(pid, sizeof(pid), "%d\n", (int) getpid());
        fd = open(procs, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, pid, strlen(pid)) < 0) {
                sh->error = 10;
                _exit(10);
        }
        close(fd);
        fd = open(c->sibling_file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || write_all(fd, c->io_buf, c->sibling_file_bytes) < 0 || fsync(fd) < 0) {
                sh->error = 11;
                _exit(11);
        }
        close(fd);
        if (c->sibling_anon_bytes > 0) {
                /* Anonymous memory touched once, then idle: what a reclaim that may swap takes first. */
                char *anon = mmap(NULL, c->sibling_anon_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                                  -1, 0);
                if (anon == MAP_FAILED) {
                        sh->error = 12;
                        _exit(12);
                }
                for (uint64_t k = 0; k < c->sibling_anon_bytes; k += (uint64_t) c->page_size)
                        anon[k] = (char) (1 + k / (uint64_t) c->page_size % 251);
        }
        for (;;) {
                usec_t t0 = now_usec(CLOCK_MONOTONIC);
                uint64_t n = 0;
                fd = open(c->sibling_file, O_RDONLY | O_CLOEXEC);
                if (fd < 0) {
                        sh->error = 13;
                        _exit(13);
                }
                for (;;) {
                        ssize_t k = read(fd, c->io_buf, CHURN_IO_CHUNK);
                        if (k < 0 && errno == EINTR)
                                continue;
                        if (k < 0) {
                                sh->error = 13;
                                _exit(13);
                        }
                        if (k == 0)
                                break;
                        n += (uint64_t) k;
                }
                close(fd);
                sh->read_usec += now_usec(CLOCK_MONOTONIC) - t0;
                sh->bytes += n;
                sh->passes++;
                sh->ready = 1;
                (void) usleep((useconds_t) SIBLING_PAUSE_USEC);
        }
}

static int sibling_start(Churn *c) {
        char path[PATH_MAX];

        if (c->sibling_file_bytes == 0)
                return 0;
        memset((void *) c->sib, 0, sizeof(SiblingShared));
        sibling_cgroup(c, path, sizeof(path));
        strncat(path, "/cgroup.procs", sizeof(path) - strlen(path) - 1);
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0)
                return fail("cannot fork: %m");
        if (pid == 0)
                sibling_run(c, path);
        c->sibling_pid = pid;
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + 120 * USEC_PER_SEC;
        while (!c->sib->ready && !c->sib->error && !churn_interrupted && now_usec(CLOCK_MONOTONIC) < deadline)
                (void) usleep(20000);
        if (c->sib->error)
                return fail("the sibling failed at step %d (10 join, 11 file, 12 anonymous memory, 13 read)",
                            c->sib->error);
        if (!c->sib->ready)
                return churn_interrupted ? -EINTR : fail("the sibling did not get ready within 120 s");
        say("  sibling: pid %d, file %s (%s)\n", (int) pid, c->sibling_file,
            file_identity(c->sibling_file, (char[96]) {}, 96));
        return 0;
}

static void sibling_stop(Churn *c) {
        if (c->sibling_pid <= 0)
                return;
        (void) kill(c->sibling_pid, SIGKILL);
        while (waitpid(c->sibling_pid, NULL, 0) < 0 && errno == EINTR)
                ;
        c->sibling_pid = 0;
}

/* What the sibling's numbers are at one instant. */
typedef struct SiblingMark {
        int64_t refaults, swap_bytes, pswpout;
        uint64_t bytes, read_usec;
} SiblingMark;

static int64_t host_pswpout(void) {
        _cleanup_(freep) char *buf = NULL;
        size_t len, l;
        const char *p, *line;
        if (read_file_at(NULL, "/proc/vmstat", READ_FILE_MAX, &buf, &len) < 0)
                return -1;
        p = buf;
        while (next_line(&p, buf + len, &line, &l))
                if (line_has_key(line, l, "pswpout", " ")) {
                        const char *v = line + 7;
                        uint64_t x;
                        return scan_u64(&v, line + l, &x) >= 0 ? (int64_t) x : -1;
                }
        return -1;
}

static void sibling_mark(const Churn *c, SiblingMark *m) {
        char cg[PATH_MAX], path[2 * PATH_MAX + 32];
        uint64_t v;

        *m = (SiblingMark){ .refaults = -1, .swap_bytes = -1, .pswpout = host_pswpout(), .bytes = c->sib->bytes,
                            .read_usec = c->sib->read_usec };
        snprintf(cg, sizeof(cg), "%s/p0/sibling", c->test_name);
        if (memcg_refault_read(NULL, c->mount, c->mode, cg, &v) >= 0)
                m->refaults = (int64_t) v;
        if (c->mode == CGROUP_MEMORY_V2) {
                snprintf(path, sizeof(path), "%s%s/memory.swap.current", c->mount, cg);
                if (read_int64_at(NULL, path, &m->swap_bytes) < 0)
                        m->swap_bytes = -1;
        }
}

static void sibling_result(const Churn *c, const SiblingMark *a, const SiblingMark *b, CaseResult *res) {
        res->sib_refaults = a->refaults >= 0 && b->refaults >= a->refaults ? b->refaults - a->refaults : -1;
        res->sib_mib_s = b->read_usec > a->read_usec
                ? (double) (b->bytes - a->bytes) / 1048576.0 / ((double) (b->read_usec - a->read_usec) / 1e6) : -1;
        res->sib_swap_bytes = b->swap_bytes;
        res->pswpout = a->pswpout >= 0 && b->pswpout >= a->pswpout ? b->pswpout - a->pswpout : -1;
        res->sib_cached_pct = file_residency(c->sibling_file);
}

/* ------------------------------------------------------------------------- */
/* the daemon */

static bool path_exists(const char *p) {
        return access(p, F_OK) >= 0;
}

/* $top_srcdir, else the first ancestor of the binary's directory (then of the
 * working directory) that holds daemon/sources/source-cgroup.h. */
static char *find_top_srcdir(void) {
        const char *env = getenv("top_srcdir");
        char start[2][PATH_MAX];
        char probe[2 * PATH_MAX + 32];

        if (env && *env)
                return strdup(env);
        ssize_t n = readlink("/proc/self/exe", start[0], sizeof(start[0]) - 1);
        start[0][n > 0 ? n : 0] = 0;
        if (!getcwd(start[1], sizeof(start[1])))
                start[1][0] = 0;
        for (unsigned s = 0; s < 2; s++) {
                char *d = start[s];
                while (d[0] == '/') {
                        snprintf(probe, sizeof(probe), "%s/daemon/sources/source-cgroup.h", streq(d, "/") ? "" : d);
                        if (path_exists(probe))
                                return strdup(d);
                        if (streq(d, "/"))
                                break;
                        char *slash = strrchr(d, '/');
                        if (slash == d)
                                d[1] = 0;
                        else
                                *slash = 0;
                }
        }
        return NULL;
}

/* Copy the policy with the roots line after the "cgroup: auto" line, so the
 * daemon only ever acts inside the benchmark's tree. */
static int policy_write(const Churn *c, const char *dir) {
        _cleanup_(freep) char *text = NULL, *out = NULL;
        size_t len, pos = 0;
        bool anchored = false;
        char roots[PATH_MAX + 64], dst[2 * PATH_MAX + 2];
        int r;

        r = read_file_at(NULL, c->policy, 1U << 20, &text, &len);
        if (r < 0)
                return fail("cannot read the policy %s: %s", c->policy, strerror(-r));
        snprintf(roots, sizeof(roots), "        roots: [ \"%s\" ]\n", c->test_name);
        out = malloc(len + strlen(roots) * 4 + 2);
        if (!out)
                return -ENOMEM;
        const char *p = text, *end = text + len, *line;
        size_t ll;
        while (next_line(&p, end, &line, &ll)) {
                memcpy(out + pos, line, ll);
                pos += ll;
                out[pos++] = '\n';
                size_t t = ll;
                while (t > 0 && (line[t - 1] == ' ' || line[t - 1] == '\r'))
                        t--;
                if (!anchored && t == strlen(POLICY_ANCHOR) && strneq(line, POLICY_ANCHOR, t)) {
                        memcpy(out + pos, roots, strlen(roots));
                        pos += strlen(roots);
                        anchored = true;
                }
        }
        if (!anchored)
                return fail("%s has no line \"%s\": cannot confine the daemon to %s", c->policy, POLICY_ANCHOR,
                            c->test_name);
        const char *base = strrchr(c->policy, '/');
        snprintf(dst, sizeof(dst), "%s/%s", dir, base ? base + 1 : c->policy);
        _cleanup_(closep) int fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 || fchmod(fd, 0644) < 0 || write_all(fd, out, pos) < 0)
                return fail("cannot write %s: %m", dst);
        return 0;
}

static void daemon_tmp_remove(Churn *c) {
        char path[PATH_MAX];
        if (!c->daemon_tmp)
                return;
        /* policies/<one file>, state/<journal files>, pcptuned.log */
        const char *subdirs[] = { "policies", "state" };
        for (size_t k = 0; k < ELEMENTSOF(subdirs); k++) {
                snprintf(path, sizeof(path), "%s/%s", c->daemon_tmp, subdirs[k]);
                DIR *d = opendir(path);
                if (d) {
                        struct dirent *de;
                        while ((de = readdir(d)))
                                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                                        (void) unlinkat(dirfd(d), de->d_name, 0);
                        closedir(d);
                }
                (void) rmdir(path);
        }
        snprintf(path, sizeof(path), "%s/pcptuned.log", c->daemon_tmp);
        (void) unlink(path);
        if (rmdir(c->daemon_tmp) < 0)
                fail("cannot remove %s: %m", c->daemon_tmp);
        free(c->daemon_tmp);
        c->daemon_tmp = NULL;
}

static int daemon_start(Churn *c) {
        char tmpl[] = "/tmp/pcptune-churn-XXXXXX";
        char pol[PATH_MAX], state[PATH_MAX], log[PATH_MAX];

        if (!mkdtemp(tmpl))
                return fail("cannot create a temporary directory: %m");
        c->daemon_tmp = strdup(tmpl);
        if (!c->daemon_tmp)
                return -ENOMEM;
        snprintf(pol, sizeof(pol), "%s/policies", tmpl);
        snprintf(state, sizeof(state), "%s/state", tmpl);
        snprintf(log, sizeof(log), "%s/pcptuned.log", tmpl);
        if (mkdir(pol, 0755) < 0 || chmod(pol, 0755) < 0 || mkdir(state, 0755) < 0)
                return fail("cannot create %s/*: %m", tmpl);
        if (policy_write(c, pol) < 0)
                return -EIO;

        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0)
                return fail("cannot fork: %m");
        if (pid == 0) {
                int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (fd < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
                        _exit(126);
                execl(c->pcptuned, c->pcptuned, "--policy-dir", pol, "--state-dir", state, (char *) NULL);
                _exit(127);
        }
        c->daemon_pid = pid;
        say("  pcptuned %d started: %s --policy-dir %s --state-dir %s (log %s)\n", (int) pid, c->pcptuned, pol, state,
            log);

        /* A daemon that rejects the policy exits at once: give it a moment. */
        (void) sleep_for(500 * USEC_PER_MSEC);
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
                c->daemon_pid = 0;
                return fail("pcptuned exited at start (status 0x%x): see its log above", (unsigned) status);
        }
        return 0;
}

/* SIGTERM, wait, SIGKILL after CHURN_DAEMON_STOP_SEC.  Prints how it ended. */
static void daemon_stop(Churn *c) {
        int status = 0;
        pid_t pid = c->daemon_pid;

        if (pid <= 0)
                return;
        (void) kill(pid, SIGTERM);
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + CHURN_DAEMON_STOP_SEC * USEC_PER_SEC;
        for (;;) {
                pid_t w = waitpid(pid, &status, WNOHANG);
                if (w == pid || (w < 0 && errno != EINTR))
                        break;
                if (now_usec(CLOCK_MONOTONIC) > deadline) {
                        fail("pcptuned %d did not stop within %u s: killing it", (int) pid, CHURN_DAEMON_STOP_SEC);
                        (void) kill(pid, SIGKILL);
                        (void) waitpid(pid, &status, 0);
                        break;
                }
                (void) usleep(20000);
        }
        c->daemon_pid = 0;
        if (WIFEXITED(status))
                say("  pcptuned %d stopped, exit status %d\n", (int) pid, WEXITSTATUS(status));
        else
                say("  pcptuned %d stopped by signal %d\n", (int) pid, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static bool daemon_alive(Churn *c) {
        int status;
        if (c->daemon_pid <= 0)
                return false;
        if (waitpid(c->daemon_pid, &status, WNOHANG) == c->daemon_pid) {
                say("  pcptuned %d exited during the window (status 0x%x)\n", (int) c->daemon_pid, (unsigned) status);
                c->daemon_pid = 0;
                return false;
        }
        return true;
}

/* The log lines that mention reclaim; all of the log's tail when there is none. */
static void daemon_log_print(const Churn *c, bool all) {
        char path[PATH_MAX];
        _cleanup_(freep) char *buf = NULL;
        size_t len, n = 0, lines = 0;

        if (!c->daemon_tmp)
                return;
        snprintf(path, sizeof(path), "%s/pcptuned.log", c->daemon_tmp);
        if (read_file_at(NULL, path, READ_FILE_MAX, &buf, &len) < 0) {
                say("  pcptuned log: unreadable\n");
                return;
        }
        const char *p = buf, *end = buf + len, *line;
        size_t ll;
        while (next_line(&p, end, &line, &ll))
                lines++;
        say("  pcptuned log (%zu lines), lines mentioning reclaim%s:\n", lines, all ? " and the last 20" : "");
        p = buf;
        size_t k = 0;
        while (next_line(&p, end, &line, &ll)) {
                bool hit = memmem(line, ll, "reclaim", 7) != NULL;
                if (hit || (all && k + 20 >= lines)) {
                        say("    %.*s\n", (int) ll, line);
                        n += hit;
                }
                k++;
        }
        if (n == 0)
                say("    (none)\n");
}

/* ------------------------------------------------------------------------- */
/* one case */

/* Reclaim everything still charged to the test tree (v1 memory.force_empty,
 * v2 memory.reclaim of its whole usage).  Usage before and after, -1 unknown. */
static int tree_reclaim(Churn *c, int64_t *ret_before, int64_t *ret_after) {
        char path[PATH_MAX], amount[32];
        int r = 0;

        *ret_before = *ret_after = tree_usage(c);
        if (*ret_before <= 0)
                return 0;
        if (c->mode == CGROUP_MEMORY_V1) {
                snprintf(path, sizeof(path), "%s/memory.force_empty", c->test_dir);
                r = write_file_at(NULL, path, "0");
        } else {
                snprintf(path, sizeof(path), "%s/memory.reclaim", c->test_dir);
                for (unsigned k = 0; k < 3; k++) {
                        int64_t cur = tree_usage(c);
                        if (cur <= 0)
                                break;
                        snprintf(amount, sizeof(amount), "%" PRIi64, cur);
                        /* -EAGAIN: not all of it could be reclaimed (kernel memory). */
                        r = write_file_at(NULL, path, amount);
                        if (r >= 0 || r == -EAGAIN)
                                break;
                }
        }
        *ret_after = tree_usage(c);
        return r;
}

static void case_cleanup(Churn *c, CaseResult *res) {
        int64_t before, after;

        workers_kill(c);
        sibling_stop(c);
        daemon_stop(c);
        /* Files first: nothing pins the memcgs once their page cache is gone... */
        files_delete(c);
        /* ... except the file system's metadata: the ext4 inode table, bitmap and
         * directory blocks the children's processes first touched are block-device
         * page cache charged to them, and stay after the files are deleted (about
         * one memcg in 16 stays dying).  Reclaim them while the tree exists: only
         * the test tree is reclaimed, nothing else on the host. */
        int r = tree_reclaim(c, &before, &after);
        if (res) {
                res->cleanup_usage_before = before;
                res->cleanup_usage_after = after;
                res->cleanup_error = r;
        }
        unsigned failed = tree_remove(c);
        if (failed)
                fail("%u cgroups could not be removed below %s", failed, c->test_dir);
}

static int case_run(Churn *c, CaseKind kind, unsigned run, CaseResult *res) {
        usec_t t_start = now_usec(CLOCK_MONOTONIC), t_zero, t;
        uint64_t memcgs = (uint64_t) c->parents * (c->children + 1U) + 1U + (c->sibling_file_bytes > 0);
        SiblingMark sib_a, sib_b;
        char path[PATH_MAX];
        unsigned failed = 0;
        Mark m;
        int r;

        *res = (CaseResult) { .kind = kind, .run = run, .back_s = -1, .settle_s = -1, .sentinel_before = -1,
                              .sentinel_after = -1, .sentinel_min = -1, .cleanup_usage_before = -1,
                              .cleanup_usage_after = -1, .sib_refaults = -1, .sib_mib_s = -1,
                              .sib_swap_bytes = -1, .pswpout = -1, .sib_cached_pct = -1 };
        c->cost_bytes = -1;
        say("\n== case %s (run %u of %u): %u parents x %u children, %s of page cache each, %u s window ==\n",
            case_kind_names[kind], run, c->runs, c->parents, c->children,
            format_bytes((char[32]) {}, 32, c->cache_bytes), c->observe_sec);

        if (sentinel_touch(c) < 0)
                return -EIO;

        /* t_s: seconds from the start of the case. */
        mark_header();
        if (mark_take(c, &res->baseline, "baseline", t_start) < 0)
                return -EIO;
        c->base = res->baseline;
        c->tol = MAX((uint64_t) 5, (uint64_t) c->parents * c->children / 100);
        mark_print(c, &res->baseline);
        res->sentinel_before = res->sentinel_min = res->baseline.sentinel_pct;

        t = now_usec(CLOCK_MONOTONIC);
        r = tree_create(c);
        res->mkdir_s = secs_since(t);
        if (r < 0)
                goto out;
        r = sibling_start(c);
        if (r < 0)
                goto out;
        t = now_usec(CLOCK_MONOTONIC);
        r = tree_charge(c);
        res->charge_s = secs_since(t);
        if (r < 0)
                goto out;
        r = mark_take(c, &res->created, "created", t_start);
        if (r < 0)
                goto out;
        res->created_memcgs = memcgs;
        res->cost_bytes = c->cost_bytes =
                ((double) res->created.percpu_kib - (double) res->baseline.percpu_kib) * 1024.0 / (double) memcgs;
        mark_print(c, &res->created);

        if (kind == CASE_WITH) {
                r = daemon_start(c);
                if (r < 0) {
                        daemon_log_print(c, true);
                        goto out;
                }
        }

        /* Remove the children; their files stay until the end of the window. */
        t = now_usec(CLOCK_MONOTONIC);
        for (unsigned i = 0; i < c->parents && !churn_interrupted; i++)
                for (unsigned j = 0; j < c->children; j++) {
                        child_cgroup(c, i, j, path, sizeof(path));
                        if (cgroup_rmdir(path) < 0 && failed++ < 3)
                                fail("cannot remove %s: %m", path);
                }
        t_zero = now_usec(CLOCK_MONOTONIC);
        if (c->sibling_file_bytes > 0)
                sibling_mark(c, &sib_a);
        res->rmdir_s = (double) (t_zero - t) / (double) USEC_PER_SEC;
        if (churn_interrupted || failed) {
                r = churn_interrupted ? -EINTR : -EIO;
                goto out;
        }
        r = mark_take(c, &res->removed, "removed", t_start);
        if (r < 0)
                goto out;
        mark_print(c, &res->removed);
        if (res->removed.dying <= res->baseline.dying + c->tol)
                res->back_s = 0;

        /* Rows every CHURN_SAMPLE_SEC; the dying count every second, for the time it takes to come back. */
        res->end = res->removed;
        for (unsigned k = 1; k <= c->observe_sec; k++) {
                if (!sleep_until(t_zero + (usec_t) k * USEC_PER_SEC)) {
                        r = -EINTR;
                        goto out;
                }
                if (k % CHURN_SAMPLE_SEC == 0 || k == c->observe_sec) {
                        char label[16];
                        snprintf(label, sizeof(label), "+%us", k);
                        r = mark_take(c, &m, label, t_start);
                        if (r < 0)
                                goto out;
                        mark_print(c, &m);
                        res->end = m;
                        res->sentinel_min = MIN(res->sentinel_min, m.sentinel_pct);
                } else {
                        r = counts_read(&m.dying, &m.live);
                        if (r < 0) {
                                fail("cannot count memory cgroups: %s", strerror(-r));
                                goto out;
                        }
                }
                if (res->back_s < 0 && m.dying <= res->baseline.dying + c->tol)
                        res->back_s = secs_since(t_zero);
                if (kind == CASE_WITH)
                        (void) daemon_alive(c);
        }
        res->excess_kib = mark_excess_kib(c, &res->end);
        if (c->sibling_file_bytes > 0) {
                sibling_mark(c, &sib_b);
                sibling_result(c, &sib_a, &sib_b, res);
        }
        res->sentinel_min = MIN(res->sentinel_min, MIN(res->created.sentinel_pct, res->removed.sentinel_pct));
        res->sentinel_after = res->end.sentinel_pct;
        res->complete = true;
        r = 0;
out:
        if (kind == CASE_WITH && c->daemon_pid > 0) {
                daemon_stop(c);
                daemon_log_print(c, false);
        }
        case_cleanup(c, res);
        daemon_tmp_remove(c);
        if (churn_interrupted)
                return -EINTR;

        /* Nothing pins the removed memcgs now: how long until they are freed? */
        t = now_usec(CLOCK_MONOTONIC);
        for (unsigned k = 0; k <= CHURN_SETTLE_SEC * 4; k++) {
                uint64_t dying, live;
                if (k > 0 && !sleep_until(t + (usec_t) k * 250 * USEC_PER_MSEC))
                        return -EINTR;
                if (counts_read(&dying, &live) < 0)
                        break;
                res->settle_dying = dying;
                if (dying <= res->baseline.dying + c->tol) {
                        res->settle_s = secs_since(t);
                        break;
                }
        }
        return r;
}

static void case_summary(const Churn *c, const CaseResult *res) {
        const char *name = case_kind_names[res->kind];

        say("  summary %s (run %u):\n", name, res->run);
        say("    Percpu kB: baseline %" PRIu64 ", after create %" PRIu64 ", after remove %" PRIu64
            ", end of window %" PRIu64 "\n",
            res->baseline.percpu_kib, res->created.percpu_kib, res->removed.percpu_kib, res->end.percpu_kib);
        say("    memcgs: %" PRIu64 " created; dying before %" PRIu64 ", after remove %" PRIu64
            ", end of window %" PRIu64 "; live test memcgs at the end %" PRIu64 "\n",
            res->created_memcgs, res->baseline.dying, res->removed.dying, res->end.dying,
            res->end.live > res->baseline.live ? res->end.live - res->baseline.live : 0);
        say("    cost per memcg: %.0f bytes (%.0f per possible CPU, %u CPUs)\n", res->cost_bytes,
            res->cost_bytes / c->units, c->units);
        double removed_kib = res->cost_bytes * (double) c->parents * c->children / 1024.0;
        if (removed_kib > 0)
                say("    excess at the end of the window: %.0f kB (%.0f%% of the %.0f kB the removed memcgs cost)\n",
                    res->excess_kib, 100.0 * res->excess_kib / removed_kib, removed_kib);
        else
                say("    excess at the end of the window: %.0f kB (creating the memcgs did not move Percpu: "
                    "too few for its empty pages)\n", res->excess_kib);
        if (res->back_s >= 0)
                say("    dying back to the pre-run count (+%" PRIu64 "): %.1f s after the removal\n", c->tol,
                    res->back_s);
        else
                say("    dying back to the pre-run count (+%" PRIu64 "): never within the window\n", c->tol);
        if (res->end.has_stats) {
                double empty_kib = (double) res->end.empty_pop_pages * c->units * (double) c->page_size / 1024.0;
                double base_empty_kib = res->baseline.has_stats
                        ? (double) res->baseline.empty_pop_pages * c->units * (double) c->page_size / 1024.0 : 0;
                say("    of the excess (percpu_stats, end of window): empty populated pages %.0f kB "
                    "(%" PRIi64 " pages x %u units x %ld B; %.0f kB at baseline), partly used pages %.0f kB; "
                    "%" PRIi64 " chunks\n",
                    empty_kib, res->end.empty_pop_pages, c->units, c->page_size, base_empty_kib,
                    res->excess_kib - empty_kib, res->end.chunks);
        } else
                say("    of the excess: no percpu_stats (no breakdown into empty and partly used pages)\n");
        say("    sentinel outside the test tree (16 MiB): %.0f%% cached before, %.0f%% after; lowest at any mark %.0f%%\n",
            res->sentinel_before, res->sentinel_after, res->sentinel_min);
        if (c->sibling_file_bytes > 0)
                say("    live sibling %s/p0/sibling (%s file read in a loop%s): %" PRIi64 " refaults in the window, "
                    "%.0f MiB/s while reading, its file %.0f%% cached at the end, swap %" PRIi64 " B; host pswpout %" PRIi64
                    " pages in the window\n",
                    c->test_name, format_bytes((char[32]) {}, 32, c->sibling_file_bytes),
                    c->sibling_anon_bytes ? ", anonymous memory touched once" : "", res->sib_refaults, res->sib_mib_s,
                    res->sib_cached_pct, res->sib_swap_bytes, res->pswpout);
        say("    timings: mkdir %.2f s, charging %.2f s (%u x %u processes, %u at once), rmdir %.2f s\n",
            res->mkdir_s, res->charge_s, c->parents, c->children, CHURN_JOBS, res->rmdir_s);
        if (res->cleanup_usage_before >= 0)
                say("    cleanup: files deleted; %.1f MiB still charged to the test tree, %.1f MiB after reclaiming it "
                    "(%s%s%s)\n", (double) res->cleanup_usage_before / 1048576.0,
                    (double) res->cleanup_usage_after / 1048576.0,
                    c->mode == CGROUP_MEMORY_V1 ? "memory.force_empty" : "memory.reclaim",
                    res->cleanup_error < 0 ? ": " : "", res->cleanup_error < 0 ? strerror(-res->cleanup_error) : "");
        if (res->settle_s >= 0)
                say("    after cleanup: dying back to %" PRIu64 " (pre-run %" PRIu64 " +%" PRIu64 ") in %.1f s\n",
                    res->settle_dying, res->baseline.dying, c->tol, res->settle_s);
        else
                say("    after cleanup: dying still %" PRIu64 " (pre-run %" PRIu64 ") after %u s\n",
                    res->settle_dying, res->baseline.dying, CHURN_SETTLE_SEC);
}

/* ------------------------------------------------------------------------- */
/* the host's own proactive reclaim */

/* The first line of a sysfs file of the DAMON tree below DAMON_KDAMONDS, or "?". */
static const char *damon_value(char *buf, size_t size, const char *fmt, ...) _printf_(3, 4);
static const char *damon_value(char *buf, size_t size, const char *fmt, ...) {
        char rel[PATH_MAX], path[PATH_MAX + 64];
        _cleanup_(freep) char *text = NULL;
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(rel, sizeof(rel), fmt, ap);
        va_end(ap);
        snprintf(path, sizeof(path), "%s/%s", DAMON_KDAMONDS, rel);
        if (read_file_at(NULL, path, 4096, &text, NULL) < 0)
                return snprintf(buf, size, "?"), buf;
        text[strcspn(text, "\n")] = 0;
        snprintf(buf, size, "%s", text);
        return buf;
}

/* Say which DAMON schemes page out physical memory on this host.  Such a scheme evicts page cache the
 * benchmark measures, whatever pcptuned does: mm/damon/paddr.c damon_pa_pageout() (6.18) pages out
 * every folio that overlaps a region whose sampled accesses fall in the scheme's range, the whole folio
 * when the region starts in its tail, and the "young" check it adds by default comes after the
 * scheme's own filters, so an "unmapped" allow filter lets a hot, read()-only folio through.  The
 * sibling's file is written in CHURN_IO_CHUNK writes, which ext4 on 6.18 caches as 1 MiB folios
 * (filemap:mm_filemap_add_to_page_cache order=8): 256 refaults per eviction.  Read only; nothing is
 * written to DAMON. */
static void host_damon_report(void) {
        DIR *d = opendir(DAMON_KDAMONDS);
        struct dirent *de;
        char v[8][64];
        int64_t n_ctx, n_schemes;
        char path[PATH_MAX];

        if (!d)
                return;
        while ((de = readdir(d))) {
                const char *k = de->d_name;
                if (k[strspn(k, "0123456789")] != 0 || !*k || !streq(damon_value(v[0], 64, "%s/state", k), "on"))
                        continue;
                snprintf(path, sizeof(path), "%s/%s/contexts/nr_contexts", DAMON_KDAMONDS, k);
                if (read_int64_at(NULL, path, &n_ctx) < 0)
                        continue;
                for (int64_t ci = 0; ci < n_ctx; ci++) {
                        if (!streq(damon_value(v[0], 64, "%s/contexts/%" PRIi64 "/operations", k, ci), "paddr"))
                                continue;
                        snprintf(path, sizeof(path), "%s/%s/contexts/%" PRIi64 "/schemes/nr_schemes", DAMON_KDAMONDS,
                                 k, ci);
                        if (read_int64_at(NULL, path, &n_schemes) < 0)
                                continue;
                        for (int64_t si = 0; si < n_schemes; si++) {
                                char base[PATH_MAX];
                                snprintf(base, sizeof(base), "%s/contexts/%" PRIi64 "/schemes/%" PRIi64, k, ci, si);
                                if (!streq(damon_value(v[0], 64, "%s/action", base), "pageout"))
                                        continue;
                                say("churn: host: DAMON kdamond %s (pid %s) pages out physical memory (scheme %" PRIi64
                                    "): regions sampled every %s us and aggregated every %s us, with at most %s "
                                    "sampled accesses per aggregation for at least %s aggregations; up to %s B per %s "
                                    "ms.  It evicts page cache outside pcptune's control, the sibling's and the "
                                    "sentinel's included: a refault in either case may be its (README, churn)\n",
                                    k, damon_value(v[1], 64, "%s/pid", k), si,
                                    damon_value(v[2], 64, "%s/contexts/%" PRIi64 "/monitoring_attrs/intervals/sample_us",
                                                k, ci),
                                    damon_value(v[3], 64, "%s/contexts/%" PRIi64 "/monitoring_attrs/intervals/aggr_us",
                                                k, ci),
                                    damon_value(v[4], 64, "%s/access_pattern/nr_accesses/max", base),
                                    damon_value(v[5], 64, "%s/access_pattern/age/min", base),
                                    damon_value(v[6], 64, "%s/quotas/bytes", base),
                                    damon_value(v[7], 64, "%s/quotas/reset_interval_ms", base));
                        }
                }
        }
        closedir(d);
}

/* ------------------------------------------------------------------------- */
/* setup and main */

static int debugfs_prepare(Churn *c) {
        struct statfs sf;
        if (statfs(DEBUGFS_DIR, &sf) >= 0 && (long) sf.f_type == DEBUGFS_MAGIC_)
                return 0;
        if (mount("debugfs", DEBUGFS_DIR, "debugfs", 0, NULL) < 0)
                return fail("cannot mount debugfs on %s: %m", DEBUGFS_DIR);
        c->mounted_debugfs = true;
        say("mounted debugfs on %s (unmounted at the end)\n", DEBUGFS_DIR);
        return 0;
}

static unsigned possible_cpus(void) {
        _cleanup_(freep) char *buf = NULL;
        unsigned n;
        if (read_file_at(NULL, "/sys/devices/system/cpu/possible", 4096, &buf, NULL) < 0 ||
            parse_cpulist(buf, &n, NULL) < 0 || n == 0)
                return (unsigned) MAX(sysconf(_SC_NPROCESSORS_CONF), 1L);
        return n;
}

static void usage(void) {
        printf("usage: churn [OPTIONS]   (as root, from a build directory)\n"
               "  --parents N           parent cgroups (1000)\n"
               "  --children M          memory cgroups per parent (10)\n"
               "  --cache SIZE          page cache written and read in each child (64KiB)\n"
               "  --observe SECONDS     window after the removal, a row every 5 s (60)\n"
               "  --runs K              pairs of cases, alternating without,with,with,without,... (1)\n"
               "  --only without|with   run one case only\n"
               "  --pcptuned PATH       daemon binary (./pcptuned)\n"
               "  --policy FILE         policy (\"$top_srcdir/policies/60-dying-memcg.yaml\")\n"
               "  --keep-files-dir DIR  disk file system for the data files (/var/tmp)\n"
               "  --percpu-stats        mount debugfs if needed to read percpu_stats\n"
               "  --sibling-file SIZE   working set of the live sibling in p0, read in a loop (16MiB; 0: none)\n"
               "  --sibling-anon SIZE   anonymous memory the sibling touches once and keeps (0)\n"
               "  --prefix NAME         the test cgroup is NAME-<pid> (pcptune-test-churn)\n");
}

static int parse_count(const char *opt, const char *s, unsigned lo, unsigned hi, unsigned *ret) {
        uint64_t v;
        if (parse_uint64(s, &v) < 0 || v < lo || v > hi)
                return fail("--%s: expected a number in %u..%u, found \"%s\"", opt, lo, hi, s);
        *ret = (unsigned) v;
        return 0;
}

static int parse_args(Churn *c, int argc, char **argv) {
        enum { OPT_PARENTS = 0x100, OPT_CHILDREN, OPT_CACHE, OPT_OBSERVE, OPT_RUNS, OPT_PCPTUNED, OPT_POLICY,
               OPT_ONLY, OPT_KEEP, OPT_STATS, OPT_SIB_FILE, OPT_SIB_ANON, OPT_PREFIX };
        static const struct option options[] = {
                { "parents", required_argument, NULL, OPT_PARENTS },
                { "children", required_argument, NULL, OPT_CHILDREN },
                { "cache", required_argument, NULL, OPT_CACHE },
                { "observe", required_argument, NULL, OPT_OBSERVE },
                { "runs", required_argument, NULL, OPT_RUNS },
                { "pcptuned", required_argument, NULL, OPT_PCPTUNED },
                { "policy", required_argument, NULL, OPT_POLICY },
                { "only", required_argument, NULL, OPT_ONLY },
                { "keep-files-dir", required_argument, NULL, OPT_KEEP },
                { "percpu-stats", no_argument, NULL, OPT_STATS },
                { "sibling-file", required_argument, NULL, OPT_SIB_FILE },
                { "sibling-anon", required_argument, NULL, OPT_SIB_ANON },
                { "prefix", required_argument, NULL, OPT_PREFIX },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        usec_t usec;
        int o;

        while ((o = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (o) {
                case OPT_PARENTS:
                        if (parse_count("parents", optarg, 1, 100000, &c->parents) < 0)
                                return -EINVAL;
                        break;
                case OPT_CHILDREN:
                        if (parse_count("children", optarg, 1, 10000, &c->children) < 0)
                                return -EINVAL;
                        break;
                case OPT_CACHE:
                        if (parse_size(optarg, &c->cache_bytes) < 0 || c->cache_bytes == 0 ||
                            c->cache_bytes > ((uint64_t) 1 << 30))
                                return fail("--cache: expected a size from 1 byte to 1GiB, found \"%s\"", optarg);
                        break;
                case OPT_OBSERVE:
                        if (parse_duration(optarg, &usec) < 0 || usec > 86400 * USEC_PER_SEC)
                                return fail("--observe: expected seconds, found \"%s\"", optarg);
                        c->observe_sec = (unsigned) ((usec + USEC_PER_SEC - 1) / USEC_PER_SEC);
                        break;
                case OPT_RUNS:
                        if (parse_count("runs", optarg, 1, 1000, &c->runs) < 0)
                                return -EINVAL;
                        break;
                case OPT_PCPTUNED:
                        c->pcptuned = optarg;
                        break;
                case OPT_POLICY:
                        free(c->policy);
                        c->policy = strdup(optarg);
                        break;
                case OPT_ONLY:
                        if (streq(optarg, "without"))
                                c->only = CASE_WITHOUT;
                        else if (streq(optarg, "with"))
                                c->only = CASE_WITH;
                        else
                                return fail("--only: expected \"without\" or \"with\", found \"%s\"", optarg);
                        break;
                case OPT_KEEP:
                        c->keep_dir = optarg;
                        break;
                case OPT_STATS:
                        c->want_percpu_stats = true;
                        break;
                case OPT_SIB_FILE:
                case OPT_SIB_ANON: {
                        uint64_t *dst = o == OPT_SIB_FILE ? &c->sibling_file_bytes : &c->sibling_anon_bytes;
                        if (parse_size(optarg, dst) < 0 || *dst > ((uint64_t) 8 << 30))
                                return fail("--%s: expected a size up to 8GiB, found \"%s\"",
                                            o == OPT_SIB_FILE ? "sibling-file" : "sibling-anon", optarg);
                        break;
                }
                case OPT_PREFIX:
                        if (!strneq(optarg, "pcptune-test-", 13) || strchr(optarg, '/') || strlen(optarg) > 64)
                                return fail("--prefix: expected a name starting with pcptune-test-, found \"%s\"", optarg);
                        c->prefix = optarg;
                        break;
                case 'h':
                        usage();
                        exit(0);
                default:
                        return -EINVAL;
                }
        if (optind < argc)
                return fail("unexpected argument \"%s\"", argv[optind]);
        return 0;
}

static int setup(Churn *c) {
        MemcgCounts mc = {};
        char buf[PATH_MAX];
        long fstype = 0;
        int r;

        if (geteuid() != 0)
                return fail("must run as root (it creates memory cgroups)");
        r = memcg_counts_read("/", &mc);
        if (r < 0)
                return fail("cannot find the memory cgroup hierarchy: %s", strerror(-r));
        if (mc.mode == CGROUP_MEMORY_NONE || !mc.mount) {
                memcg_counts_done(&mc);
                return fail("no memory cgroup controller on this host");
        }
        c->mode = mc.mode;
        c->mount = TAKE_PTR(mc.mount);
        memcg_counts_done(&mc);

        snprintf(buf, sizeof(buf), "/%s-%d", c->prefix, (int) getpid());
        c->test_name = strdup(buf);
        snprintf(buf, sizeof(buf), "%s/%s-%d", c->mount, c->prefix, (int) getpid());
        c->test_dir = strdup(buf);
        snprintf(buf, sizeof(buf), "%s/pcptune-churn-%d", c->keep_dir, (int) getpid());
        c->data_dir = strdup(buf);
        snprintf(buf, sizeof(buf), "%s/pcptune-churn-%d/sentinel", c->keep_dir, (int) getpid());
        c->sentinel = strdup(buf);
        snprintf(buf, sizeof(buf), "%s/pcptune-churn-%d/sibling", c->keep_dir, (int) getpid());
        c->sibling_file = strdup(buf);
        c->io_buf = malloc(CHURN_IO_CHUNK);
        c->sib = mmap(NULL, sizeof(SiblingShared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (c->sib == MAP_FAILED)
                c->sib = NULL;
        if (!c->test_name || !c->test_dir || !c->data_dir || !c->sentinel || !c->io_buf || !c->sibling_file || !c->sib)
                return -ENOMEM;
        for (size_t k = 0; k < CHURN_IO_CHUNK; k++)
                c->io_buf[k] = (char) ('a' + k % 26);
        if (path_exists(c->test_dir))
                return fail("%s exists already", c->test_dir);

        if (is_tmpfs(c->keep_dir, &fstype))
                return fail("%s is on tmpfs/ramfs (f_type 0x%lx): its pages cannot be reclaimed without swap; "
                            "use --keep-files-dir on a disk file system", c->keep_dir, (unsigned long) fstype);
        if (fstype == 0)
                return fail("cannot statfs %s: %m", c->keep_dir);

        if (c->only != CASE_WITHOUT) {
                if (access(c->pcptuned, X_OK) < 0)
                        return fail("%s: %m (run from the build directory or pass --pcptuned)", c->pcptuned);
                if (!c->policy) {
                        _cleanup_(freep) char *top = find_top_srcdir();
                        if (!top)
                                return fail("cannot find the source tree: set top_srcdir or pass --policy");
                        snprintf(buf, sizeof(buf), "%s/policies/60-dying-memcg.yaml", top);
                        c->policy = strdup(buf);
                        if (!c->policy)
                                return -ENOMEM;
                }
                if (access(c->policy, R_OK) < 0)
                        return fail("%s: %m", c->policy);
        }
        if (c->want_percpu_stats && debugfs_prepare(c) < 0)
                return -EIO;
        c->units = possible_cpus();
        c->page_size = sysconf(_SC_PAGESIZE);
        if (read_int64_at(NULL, "/proc/sys/vm/percpu_pagelist_high_fraction", &c->fraction_before) < 0)
                c->fraction_before = -1;

        if (mkdir(c->data_dir, 0700) < 0)
                return fail("cannot create %s: %m", c->data_dir);
        return sentinel_create(c);
}

static void teardown(Churn *c) {
        int64_t f;

        workers_kill(c);
        sibling_stop(c);
        daemon_stop(c);
        if (c->data_dir) {
                int64_t before, after;
                files_delete(c);
                (void) tree_reclaim(c, &before, &after);
                (void) tree_remove(c);
                (void) unlink(c->sentinel);
                if (rmdir(c->data_dir) < 0 && errno != ENOENT)
                        fail("cannot remove %s: %m", c->data_dir);
        }
        daemon_tmp_remove(c);
        if (c->mounted_debugfs && umount(DEBUGFS_DIR) < 0)
                fail("cannot unmount %s: %m", DEBUGFS_DIR);
        if (c->fraction_before >= 0 &&
            read_int64_at(NULL, "/proc/sys/vm/percpu_pagelist_high_fraction", &f) >= 0 && f != c->fraction_before)
                fail("vm.percpu_pagelist_high_fraction is %" PRIi64 ", was %" PRIi64 " before the benchmark", f,
                     c->fraction_before);
        free(c->mount);
        free(c->test_dir);
        free(c->test_name);
        free(c->data_dir);
        free(c->sentinel);
        free(c->sibling_file);
        free(c->policy);
        free(c->io_buf);
        if (c->sib)
                munmap(c->sib, sizeof(SiblingShared));
}

int main(int argc, char **argv) {
        Churn c = {
                .parents = 1000, .children = 10, .runs = 1, .cache_bytes = 64 * 1024, .observe_sec = 60,
                .pcptuned = "./pcptuned", .keep_dir = "/var/tmp", .only = -1,
                .sibling_file_bytes = (uint64_t) 16 << 20, .prefix = "pcptune-test-churn",
        };
        double sum[_CASE_MAX] = {}, ran[_CASE_MAX] = {};
        int r;

        struct sigaction sa = { .sa_handler = churn_on_signal };
        sigemptyset(&sa.sa_mask);
        (void) sigaction(SIGINT, &sa, NULL);
        (void) sigaction(SIGTERM, &sa, NULL);
        (void) sigaction(SIGHUP, &sa, NULL);
        /* A reader of stdout that goes away (churn | head) must not kill it before its cleanup:
         * the default action would leave the sentinel, or a whole case's cgroups and files. */
        (void) sigaction(SIGPIPE, &sa, NULL);

        if (parse_args(&c, argc, argv) < 0) {
                free(c.policy);
                return 2;
        }
        usec_t t_begin = now_usec(CLOCK_MONOTONIC);
        r = setup(&c);
        if (r < 0 || churn_interrupted) {
                teardown(&c);
                return churn_interrupted ? 130 : 1;
        }

        struct utsname un;
        if (uname(&un) < 0)
                snprintf(un.release, sizeof(un.release), "?");
        say("churn: kernel %s, %u possible CPUs, page %ld B; memory cgroup %s at %s; test tree %s; data %s\n",
            un.release, c.units, c.page_size, cgroup_mode_to_string(c.mode), c.mount, c.test_name, c.data_dir);
        if (c.only != CASE_WITHOUT)
                say("churn: pcptuned %s, policy %s\n", c.pcptuned, c.policy);
        say("churn: sentinel %s (%s)\n", c.sentinel, file_identity(c.sentinel, (char[96]) {}, 96));
        host_damon_report();

        CaseResult *results = calloc((size_t) c.runs * 2, sizeof(CaseResult));
        size_t n_results = 0;
        if (!results) {
                teardown(&c);
                return 1;
        }
        for (unsigned run = 1; run <= c.runs && !churn_interrupted; run++) {
                CaseKind order[2] = { CASE_WITHOUT, CASE_WITH };
                if (run % 2 == 0) {
                        order[0] = CASE_WITH;
                        order[1] = CASE_WITHOUT;
                }
                for (unsigned k = 0; k < 2 && !churn_interrupted; k++) {
                        if (c.only >= 0 && (int) order[k] != c.only)
                                continue;
                        CaseResult *res = &results[n_results];
                        r = case_run(&c, order[k], run, res);
                        if (churn_interrupted)
                                break;
                        n_results++;
                        if (r < 0 || !res->complete) {
                                fail("case %s of run %u failed", case_kind_names[order[k]], run);
                                continue;
                        }
                        case_summary(&c, res);
                        sum[order[k]] += res->excess_kib;
                        ran[order[k]] += 1;
                }
        }
        if (churn_interrupted) {
                fail("interrupted: cleaning up");
                teardown(&c);
                free(results);
                return 130;
        }
        teardown(&c);

        say("\n== results (%.0f s in all) ==\n", secs_since(t_begin));
        say("  %-8s %4s %12s %12s %10s %12s %13s %11s %10s %8s\n", "case", "run", "cost_B", "excess_kib", "dying_end",
            "back_s", "sib_refaults", "sib_mib_s", "sib_swap_B", "pswpout");
        for (size_t k = 0; k < n_results; k++) {
                const CaseResult *res = &results[k];
                char back[32] = "never";
                if (!res->complete) {
                        say("  %-8s %4u %12s\n", case_kind_names[res->kind], res->run, "failed");
                        continue;
                }
                if (res->back_s >= 0)
                        snprintf(back, sizeof(back), "%.1f", res->back_s);
                say("  %-8s %4u %12.0f %12.0f %10" PRIu64 " %12s %13" PRIi64 " %11.0f %10" PRIi64 " %8" PRIi64 "\n",
                    case_kind_names[res->kind], res->run, res->cost_bytes, res->excess_kib, res->end.dying, back,
                    res->sib_refaults, res->sib_mib_s, res->sib_swap_bytes, res->pswpout);
        }
        /* The sibling's figures per case: mean and range over the runs (the run-to-run spread). */
        char sib[_CASE_MAX][3][64];
        for (int kind = 0; kind < _CASE_MAX; kind++) {
                double lo[3] = { INFINITY, INFINITY, INFINITY }, hi[3] = { -INFINITY, -INFINITY, -INFINITY }, sm[3] = {};
                unsigned n[3] = {};
                for (size_t k = 0; k < n_results; k++) {
                        const CaseResult *res = &results[k];
                        double v[3] = { (double) res->sib_refaults, res->sib_mib_s, (double) res->pswpout };
                        if (!res->complete || (int) res->kind != kind)
                                continue;
                        for (int f = 0; f < 3; f++)
                                if (v[f] >= 0) {
                                        lo[f] = MIN(lo[f], v[f]);
                                        hi[f] = MAX(hi[f], v[f]);
                                        sm[f] += v[f];
                                        n[f]++;
                                }
                }
                for (int f = 0; f < 3; f++)
                        if (n[f] == 0)
                                snprintf(sib[kind][f], sizeof(sib[kind][f]), "-");
                        else
                                snprintf(sib[kind][f], sizeof(sib[kind][f]), "%.0f(%.0f-%.0f)", sm[f] / n[f], lo[f], hi[f]);
        }
        free(results);

        char without[32] = "-", with[32] = "-", ratio[32] = "-";
        if (ran[CASE_WITHOUT] > 0)
                snprintf(without, sizeof(without), "%.0f", sum[CASE_WITHOUT] / ran[CASE_WITHOUT]);
        if (ran[CASE_WITH] > 0)
                snprintf(with, sizeof(with), "%.0f", MAX(sum[CASE_WITH] / ran[CASE_WITH], 1.0));
        if (ran[CASE_WITHOUT] > 0 && ran[CASE_WITH] > 0) {
                say("  means over %.0f and %.0f runs\n", ran[CASE_WITHOUT], ran[CASE_WITH]);
                snprintf(ratio, sizeof(ratio), "%.2f",
                         (sum[CASE_WITHOUT] / ran[CASE_WITHOUT]) / MAX(sum[CASE_WITH] / ran[CASE_WITH], 1.0));
        }
        bool all_ok = (size_t) (ran[CASE_WITHOUT] + ran[CASE_WITH]) == n_results && n_results > 0;
        if (c.sibling_file_bytes > 0)
                say("churn: excess_percpu_kib without=%s with=%s ratio=%s sibling_refaults_without=%s "
                    "sibling_refaults_with=%s sibling_mib_s_without=%s sibling_mib_s_with=%s pswpout_without=%s "
                    "pswpout_with=%s\n",
                    without, with, ratio, sib[CASE_WITHOUT][0], sib[CASE_WITH][0], sib[CASE_WITHOUT][1],
                    sib[CASE_WITH][1], sib[CASE_WITHOUT][2], sib[CASE_WITH][2]);
        else
                say("churn: excess_percpu_kib without=%s with=%s ratio=%s\n", without, with, ratio);
        return all_ok ? 0 : 1;
}
