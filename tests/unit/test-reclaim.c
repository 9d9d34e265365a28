/* SPDX-License-Identifier: GPL-2.0-or-later */
/* source-memcg-tree.c and act-reclaim.c on fake cgroup trees, with writes recorded or failed on purpose. */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>

#include "test-helpers.h"

#include "act-reclaim.h"
#include "log.h"
#include "reclaim-watch.h"
#include "source-memcg-tree.h"

/* Write root/MOUNT/cg/file with text. */
static void put(const char *root, const char *cg, const char *file, const char *text) {
        char *dir, *path;
        assert_true(asprintf(&dir, "%s/cg%s", root, cg) > 0);
        assert_int_equal(mkdir_p(dir, 0755), 0);
        assert_true(asprintf(&path, "%s/%s", dir, file) > 0);
        assert_int_equal(write_file_atomic(path, text, strlen(text), 0644), 0);
        free(dir);
        free(path);
}

static void v2_cg(const char *root, const char *cg, unsigned dying) {
        char buf[128];
        snprintf(buf, sizeof buf, "nr_descendants 0\nnr_dying_descendants %u\n", dying);
        put(root, cg, "cgroup.stat", buf);
        put(root, cg, "memory.current", "268435456\n"); /* 256 MiB: more than one run reclaims */
        put(root, cg, "memory.reclaim", "");
        put(root, cg, "memory.stat",
            "anon 0\nfile 268435456\ninactive_anon 0\nactive_anon 0\ninactive_file 268435456\nactive_file 0\n"
            "workingset_refault_anon 3\nworkingset_refault_file 100\n");
}

/* A v2 tree: /a holds 3 dying directly and its child /a/x holds 2; /b holds none; /c holds 7. */
static char *v2_tree(void) {
        char *root = test_mkdtemp("reclaim");
        v2_cg(root, "/", 12);
        v2_cg(root, "/a", 5);
        v2_cg(root, "/a/x", 2);
        v2_cg(root, "/a/y", 0);
        v2_cg(root, "/b", 0);
        v2_cg(root, "/c", 7);
        return root;
}

static void v1_cg(const char *root, const char *cg, uint64_t usage, uint64_t local) {
        char buf[256];
        snprintf(buf, sizeof buf, "%" PRIu64 "\n", usage);
        put(root, cg, "memory.usage_in_bytes", buf);
        snprintf(buf, sizeof buf, "cache %" PRIu64 "\nrss 0\nrss_huge 0\nshmem 0\ntotal_cache %" PRIu64 "\n", local, usage);
        put(root, cg, "memory.stat", buf);
        put(root, cg, "memory.force_empty", "");
        put(root, cg, "cgroup.procs", "");
}

/* A v1 tree: /p1 (no live children) holds 8 MiB of removed children; /p2 has a live child with 2 MiB and
 * 1 MiB of its own, nothing of removed ones; /p3 holds 4 MiB of removed children and has a live child. */
static char *v1_tree(void) {
        char *root = test_mkdtemp("reclaim");
        v1_cg(root, "/", 100 << 20, 10 << 20);
        v1_cg(root, "/p1", 8 << 20, 0);
        v1_cg(root, "/p2", 3 << 20, 1 << 20);
        v1_cg(root, "/p2/live", 2 << 20, 2 << 20);
        v1_cg(root, "/p3", 5 << 20, 0);
        v1_cg(root, "/p3/live", 1 << 20, 1 << 20);
        return root;
}

/* A job reclaiming below root's "/cg", its writes going to write_fn(write_userdata); args: what memory.reclaim
 * is known to accept (RECLAIM_ARGS_UNKNOWN: the job probes it). */
static ReclaimJob *job_new(const char *root, CgroupMode mode, const ActionReclaimDying *cfg, bool dry_run,
                           ReclaimWriteFn write_fn, void *write_userdata, ReclaimArgs args) {
        ReclaimJob *j = reclaim_job_new(root, "/cg", mode, cfg, dry_run);

        assert_non_null(j);
        j->write_fn = write_fn;
        j->write_userdata = write_userdata;
        j->args = args;
        return j;
}

static void test_scan_v2(void **state) {
        char *root = v2_tree();
        MemcgScan s;

        assert_int_equal(memcg_scan_holders(root, "/cg", CGROUP_MEMORY_V2, NULL, 0, &s), 0);
        assert_int_equal(s.n_holders, 3);
        assert_string_equal(s.holders[0].path, "/c");
        assert_int_equal(s.holders[0].dying, 7);
        /* What the dying hold: usage minus the live children's (/c has none; /a's two use all of it). */
        assert_int_equal(s.holders[0].dying_bytes, 256 << 20);
        assert_int_equal(s.holders[1].dying_bytes, 0);
        assert_string_equal(s.holders[1].path, "/a");
        assert_int_equal(s.holders[1].dying, 3);
        assert_int_equal(s.holders[1].live_children, 2);
        assert_string_equal(s.holders[2].path, "/a/x");
        assert_int_equal(s.holders[2].dying, 2);
        assert_int_equal(s.dying_total, 12);
        memcg_scan_done(&s);

        /* Only inside the named roots; a missing root is skipped; the hierarchy root is never a holder. */
        char *roots[] = { (char *) "/a", (char *) "/gone", (char *) "/", NULL };
        assert_int_equal(memcg_scan_holders(root, "/cg", CGROUP_MEMORY_V2, roots, 0, &s), 0);
        assert_int_equal(s.n_holders, 2);
        assert_string_equal(s.holders[0].path, "/a");
        assert_string_equal(s.holders[1].path, "/a/x");
        memcg_scan_done(&s);
        test_rm_rf(root);
        free(root);
}

static void test_scan_v1(void **state) {
        char *root = v1_tree();
        MemcgScan s;

        assert_int_equal(memcg_scan_holders(root, "/cg", CGROUP_MEMORY_V1, NULL, 64 * 1024, &s), 0);
        assert_int_equal(s.n_holders, 2);
        assert_string_equal(s.holders[0].path, "/p1");
        assert_int_equal(s.holders[0].dying_bytes, 8 << 20);
        assert_int_equal(s.holders[0].live_children, 0);
        assert_string_equal(s.holders[1].path, "/p3");
        assert_int_equal(s.holders[1].dying_bytes, 4 << 20);
        assert_int_equal(s.holders[1].live_children, 1);
        memcg_scan_done(&s);
        test_rm_rf(root);
        free(root);
}

/*
 * v1, as the live kernel shows it: memory.usage_in_bytes of a parent exceeds its children's by the
 * percpu of its live children (charged to the parent, mem_cgroup_alloc()) and by its per-CPU charge
 * stock (64 pages per CPU), with no page of a removed child anywhere: not a holder.  Its LRU pages
 * (memory.stat total_*) decide.  /q2 does hold 2 MiB of removed children's page cache and anon.
 */
static void test_scan_v1_kernel_memory(void **state) {
        char *root = test_mkdtemp("reclaim");
        MemcgScan s;

        v1_cg(root, "/", 100 << 20, 10 << 20);
        /* /q1: 8 MiB of usage_in_bytes, but its 3 live children hold all its 3 MiB of LRU pages. */
        put(root, "/q1", "memory.usage_in_bytes", "8388608\n");
        put(root, "/q1", "memory.stat", "cache 0\nrss 0\ntotal_cache 2097152\ntotal_rss 1048576\n");
        for (int i = 0; i < 3; i++) {
                char cg[16];
                snprintf(cg, sizeof cg, "/q1/c%d", i);
                v1_cg(root, cg, 1 << 20, 1 << 20);
        }
        /* /q2: 1 MiB own, 2 MiB of a removed child (cache and rss), a live child with 1 MiB. */
        put(root, "/q2", "memory.usage_in_bytes", "5242880\n");
        put(root, "/q2", "memory.stat",
            "cache 1048576\nrss 0\nmapped_file 0\ntotal_cache 3145728\ntotal_rss 1048576\ntotal_mapped_file 0\n");
        v1_cg(root, "/q2/live", 1 << 20, 1 << 20);

        assert_int_equal(memcg_scan_holders(root, "/cg", CGROUP_MEMORY_V1, NULL, 64 * 1024, &s), 0);
        assert_int_equal(s.n_holders, 1);
        assert_string_equal(s.holders[0].path, "/q2");
        assert_int_equal(s.holders[0].dying_bytes, 2 << 20);
        assert_int_equal(s.holders[0].live_children, 1);
        assert_int_equal(s.cgroups_visited, 6);
        memcg_scan_done(&s);
        test_rm_rf(root);
        free(root);
}

/* Injected writes: record them, fail some on purpose. */
typedef struct Recorder {
        char log[8192];
        const char *fail_path;   /* substring */
        int fail_error;
        int eagain_after;        /* v2: EAGAIN after this many writes to one file (0: never) */
        unsigned writes;
        bool block;              /* block until a signal interrupts */
        const char *remove_dir;  /* removed before the write (a cgroup that vanishes meanwhile) */
        bool scope_dying;        /* a kernel with contrib/kernel 0004: memory.reclaim takes scope=dying */
        unsigned rejected;       /* scope= writes refused with EINVAL (not logged, not counted in writes) */
} Recorder;

static int record_write(const char *root, const char *path, const char *value, void *userdata) {
        Recorder *r = userdata;
        size_t l = strlen(r->log);
        if (!r->scope_dying && strstr(value, "scope=")) {
                r->rejected++;
                return -EINVAL; /* every kernel without the patch */
        }
        snprintf(r->log + l, sizeof r->log - l, "%s=%s\n", path, value);
        r->writes++;
        if (r->block) {
                pause(); /* SIGUSR2 from the worker's timeout ends it */
                return -EINTR;
        }
        if (r->remove_dir && strstr(path, r->remove_dir)) {
                char *d;
                assert_true(asprintf(&d, "%s/cg%s", root, r->remove_dir) > 0);
                test_rm_rf(d);
                free(d);
        }
        if (r->fail_path && strstr(path, r->fail_path))
                return r->fail_error;
        if (r->eagain_after && r->writes > (unsigned) r->eagain_after)
                return -EAGAIN;
        int q = write_file_at(root, path, value);
        if (q < 0)
                return q;
        /* Play the kernel: reclaim lowers the usage the job reads before and after. */
        const char *slash = strrchr(path, '/');
        char *dir = strndup(path, (size_t) (slash - path)), *usage = NULL, buf[32];
        int64_t cur = 0, want = 0;
        bool v2 = streq(slash + 1, "memory.reclaim");
        assert_true(asprintf(&usage, "%s/%s", dir, v2 ? "memory.current" : "memory.usage_in_bytes") > 0);
        if (read_int64_at(root, usage, &cur) >= 0 && (v2 || streq(slash + 1, "memory.force_empty"))) {
                if (v2) {
                        /* "<bytes>" or "<bytes> swappiness=0" */
                        const char *p = value;
                        uint64_t u = 0;
                        assert_int_equal(scan_u64(&p, value + strlen(value), &u), 0);
                        want = (int64_t) u;
                }
                snprintf(buf, sizeof buf, "%lld\n", (long long) (v2 ? MAX(cur - want, (int64_t) 0) : 0));
                assert_int_equal(write_file_at(root, usage, buf), 0);
        }
        free(dir);
        free(usage);
        return 0;
}

static ActionReclaimDying cfg_default(void) {
        return (ActionReclaimDying){ .cgroup = (char *) "auto", .max_bytes = 64 << 20, .step_bytes = 16 << 20,
                                     .timeout_usec = 10 * USEC_PER_SEC, .min_dying = 1 };
}

static void test_job_v2_budget(void **state) {
        char *root = v2_tree();
        ActionReclaimDying cfg = cfg_default();
        Recorder rec = { 0 };
        ReclaimJob *j = job_new(root, CGROUP_MEMORY_V2, &cfg, false, record_write, &rec, RECLAIM_ARGS_SWAPPINESS);
        assert_int_equal(reclaim_job_run(j, NULL), 0);
        assert_int_equal(j->n_results, 3);
        /* 64 MiB over 3 holders: at least one 16 MiB step each, never more than max in all. */
        assert_true(j->bytes_total <= 64 << 20);
        assert_int_equal(j->results[0].outcome, RECLAIM_DONE);
        assert_true(j->results[0].writes >= 1);
        assert_non_null(strstr(rec.log, "/cg/c/memory.reclaim=16777216 swappiness=0\n"));
        /* /a: its live children hold all of its LRU pages: nothing to ask, not its share of max. */
        assert_null(strstr(rec.log, "/cg/a/memory.reclaim="));
        assert_int_equal(j->results[1].lru_before, 0);
        assert_null(strstr(rec.log, "/cg/b/"));
        assert_null(strstr(rec.log, "force_empty"));
        reclaim_job_free(j);

        /* EAGAIN ends a subtree early; min-dying filters small holders. */
        cfg.min_dying = 3;
        Recorder r2 = { .eagain_after = 1 };
        j = job_new(root, CGROUP_MEMORY_V2, &cfg, false, record_write, &r2, RECLAIM_ARGS_SWAPPINESS);
        assert_int_equal(reclaim_job_run(j, NULL), 0);
        assert_int_equal(j->n_results, 2);
        assert_int_equal(j->results[0].writes, 1);
        assert_int_equal(j->results[1].writes, 0);
        /* Its first step got EAGAIN and its usage did not move: nothing reclaimable, not "reclaimed". */
        assert_int_equal(j->results[1].outcome, RECLAIM_NOTHING);
        assert_true(j->results[0].usage_before > j->results[0].usage_after);
        assert_true(j->freed_total > 0);
        reclaim_job_free(j);
        test_rm_rf(root);
        free(root);
}

static void test_job_errors(void **state) {
        char *root = v2_tree();
        ActionReclaimDying cfg = cfg_default();
        struct {
                const char *path;
                int error;
                ReclaimOutcome outcome;
        } cases[] = {
                { "/cg/c/", -ENOENT, RECLAIM_GONE },
                { "/cg/c/", -EBUSY, RECLAIM_BUSY },
                { "/cg/c/", -EINVAL, RECLAIM_FAILED },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                Recorder rec = { .fail_path = cases[i].path, .fail_error = cases[i].error };
                ReclaimJob *j = job_new(root, CGROUP_MEMORY_V2, &cfg, false, record_write, &rec, RECLAIM_ARGS_SWAPPINESS);
                assert_int_equal(reclaim_job_run(j, NULL), 0);
                assert_string_equal(j->results[0].path, "/c");
                assert_int_equal(j->results[0].outcome, cases[i].outcome);
                assert_int_equal(j->results[0].error, cases[i].error);
                /* The others still run (/a's removed children hold no LRU page: nothing to reclaim). */
                assert_int_equal(j->results[1].outcome, RECLAIM_NOTHING);
                assert_string_equal(j->results[2].path, "/a/x");
                assert_int_equal(j->results[2].outcome, RECLAIM_DONE);
                reclaim_job_free(j);
        }

        /* A cgroup removed while being reclaimed: the write finds it gone. */
        Recorder rec = { .remove_dir = "/c" };
        ReclaimJob *j = job_new(root, CGROUP_MEMORY_V2, &cfg, false, record_write, &rec, RECLAIM_ARGS_SWAPPINESS);
        assert_int_equal(reclaim_job_run(j, NULL), 0);
        assert_int_equal(j->results[0].outcome, RECLAIM_GONE);
        assert_int_equal(j->results[2].outcome, RECLAIM_DONE);
        reclaim_job_free(j);
        test_rm_rf(root);
        free(root);
}

static void test_job_v1_policy(void **state) {
        char *root = v1_tree();
        ActionReclaimDying cfg = cfg_default();
        ForceEmpty modes[] = { FORCE_EMPTY_NO, FORCE_EMPTY_CHILDLESS, FORCE_EMPTY_YES };
        const char *expect_p1[] = { NULL, "/cg/p1/memory.force_empty=0", "/cg/p1/memory.force_empty=0" };
        const char *expect_p3[] = { NULL, NULL, "/cg/p3/memory.force_empty=0" };

        for (size_t i = 0; i < ELEMENTSOF(modes); i++) {
                Recorder rec = { 0 };
                /* A fresh tree each time: a force_empty empties the fake usage. */
                test_rm_rf(root);
                free(root);
                root = v1_tree();
                cfg.force_empty = modes[i];
                ReclaimJob *j = job_new(root, CGROUP_MEMORY_V1, &cfg, false, record_write, &rec, RECLAIM_ARGS_SWAPPINESS);
                assert_int_equal(reclaim_job_run(j, NULL), 0);
                assert_int_equal(j->n_results, 2);
                if (expect_p1[i])
                        assert_non_null(strstr(rec.log, expect_p1[i]));
                else
                        assert_int_equal(j->results[0].outcome, RECLAIM_SKIPPED_POLICY);
                if (expect_p3[i])
                        assert_non_null(strstr(rec.log, expect_p3[i]));
                else
                        assert_int_equal(j->results[1].outcome, RECLAIM_SKIPPED_POLICY);
                /* Never the root cgroup, never a cgroup without removed children. */
                assert_null(strstr(rec.log, "/cg/memory.force_empty"));
                assert_null(strstr(rec.log, "/cg/p2/"));
                assert_null(strstr(rec.log, "drop_caches"));
                reclaim_job_free(j);
        }

        /* A live leaf that runs a task and has kernel memory beyond cache + rss looks like a holder to the
         * v1 estimate: childless never empties it (force_empty does not refuse a populated cgroup). */
        test_rm_rf(root);
        free(root);
        root = v1_tree();
        v1_cg(root, "/p1", 8 << 20, 0);
        put(root, "/p1", "cgroup.procs", "4242\n");
        Recorder live = { 0 };
        cfg.force_empty = FORCE_EMPTY_CHILDLESS;
        ReclaimJob *lj = job_new(root, CGROUP_MEMORY_V1, &cfg, false, record_write, &live, RECLAIM_ARGS_UNKNOWN);
        assert_int_equal(reclaim_job_run(lj, NULL), 0);
        assert_string_equal(lj->results[0].path, "/p1");
        assert_int_equal(lj->results[0].outcome, RECLAIM_SKIPPED_POLICY);
        assert_null(strstr(live.log, "force_empty"));
        reclaim_job_free(lj);

        /* drop_caches only when the policy allows it and something could not be reclaimed. */
        test_rm_rf(root);
        free(root);
        root = v1_tree();
        Recorder rec = { 0 };
        cfg.force_empty = FORCE_EMPTY_CHILDLESS;
        cfg.drop_caches = true;
        put(root, "/../proc/sys/vm", "drop_caches", "");
        ReclaimJob *j = job_new(root, CGROUP_MEMORY_V1, &cfg, false, record_write, &rec, RECLAIM_ARGS_SWAPPINESS);
        assert_int_equal(reclaim_job_run(j, NULL), 0);
        assert_non_null(strstr(rec.log, "/proc/sys/vm/drop_caches=1"));
        assert_true(j->dropped_caches);
        reclaim_job_free(j);

        /* Dry-run: the same scan, no write at all. */
        test_rm_rf(root);
        free(root);
        root = v1_tree();
        Recorder dry = { 0 };
        cfg.force_empty = FORCE_EMPTY_YES;
        j = job_new(root, CGROUP_MEMORY_V1, &cfg, true, record_write, &dry, RECLAIM_ARGS_SWAPPINESS);
        assert_int_equal(reclaim_job_run(j, NULL), 0);
        assert_int_equal(j->n_results, 2);
        assert_int_equal(dry.writes, 0);
        reclaim_job_free(j);
        test_rm_rf(root);
        free(root);
}

static void test_job_explicit_cgroup(void **state) {
        char *root = v1_tree();
        ActionReclaimDying cfg = cfg_default();
        Recorder rec = { 0 };
        cfg.cgroup = (char *) "/p3";
        cfg.force_empty = FORCE_EMPTY_CHILDLESS; /* /p3 has a live child: not allowed */
        ReclaimJob *j = job_new(root, CGROUP_MEMORY_V1, &cfg, false, record_write, &rec, RECLAIM_ARGS_SWAPPINESS);
        assert_int_equal(reclaim_job_run(j, NULL), 0);
        assert_int_equal(j->n_results, 1);
        assert_string_equal(j->results[0].path, "/p3");
        assert_int_equal(j->results[0].outcome, RECLAIM_SKIPPED_POLICY);
        reclaim_job_free(j);
        test_rm_rf(root);
        free(root);
}

/*
 * A stock v2 kernel as reclaim-dying meets it: /h holds removed children (3 dying) and maybe one live child,
 * /h/live.  memory.reclaim written to /h runs memory_reclaim()'s loop (mm/memcontrol.c 6.12): passes that
 * each ask a quarter of what is left, at least 32 pages; a pass scrapes removed children whole (`chunk` bytes
 * each, file pages first, their anon pages only without swappiness=0; at most `dying_per_write` bytes of them
 * per write: a walk that gives up early) and, when they do not meet its quota, walks on into the live child,
 * which loses 64 pages (lru_gen's MIN_LRU_BATCH); a pass that finds nothing ends the write with EAGAIN.
 * `stuck` bytes of the removed children's file pages cannot be reclaimed.  memory.current of /h also counts
 * `kernel` bytes that no reclaim frees.
 */
#define PG ((uint64_t) 4096)
typedef struct LruKernel {
        Recorder rec;
        const char *root;
        bool has_live;
        uint64_t dying_file, dying_anon, live, kernel, stuck, chunk; /* bytes */
        uint64_t dying_per_write;
        uint64_t taken_live;     /* what the writes took from the live child */
        unsigned sweeps;         /* writes that found nothing (EAGAIN) */
} LruKernel;

static void lru_kernel_publish(const LruKernel *k) {
        uint64_t file = k->dying_file + k->live;
        char buf[512];

        snprintf(buf, sizeof buf, "%" PRIu64 "\n", file + k->dying_anon + k->kernel);
        put(k->root, "/h", "memory.current", buf);
        /* Hierarchical, as v2 prints it; part of the removed children's pages on the active list. */
        snprintf(buf, sizeof buf,
                 "anon 0\nfile %" PRIu64 "\nkernel %" PRIu64 "\nshmem %" PRIu64 "\ninactive_anon %" PRIu64
                 "\nactive_anon 0\ninactive_file %" PRIu64 "\nactive_file %" PRIu64 "\nunevictable 4096\n"
                 "workingset_refault_file 7\n",
                 file + k->dying_anon, k->kernel, k->dying_anon, k->dying_anon, k->live + k->dying_file / 2,
                 k->dying_file - k->dying_file / 2);
        put(k->root, "/h", "memory.stat", buf);
        if (!k->has_live)
                return;
        snprintf(buf, sizeof buf, "%" PRIu64 "\n", k->live);
        put(k->root, "/h/live", "memory.current", buf);
        snprintf(buf, sizeof buf,
                 "anon 0\nfile %" PRIu64 "\ninactive_anon 0\nactive_anon 0\ninactive_file %" PRIu64
                 "\nactive_file 0\nunevictable 0\n",
                 k->live, k->live);
        put(k->root, "/h/live", "memory.stat", buf);
}

/* One pass of try_to_free_mem_cgroup_pages() on /h: bytes reclaimed. */
static uint64_t lru_kernel_pass(LruKernel *k, uint64_t quota, bool swap, uint64_t *dying_taken) {
        uint64_t got = 0;
        while (got < quota && *dying_taken < k->dying_per_write) {
                uint64_t c = MIN(MIN(k->chunk, k->dying_per_write - *dying_taken), k->dying_file - k->stuck);
                if (c == 0 && swap)
                        c = MIN(MIN(k->chunk, k->dying_per_write - *dying_taken), k->dying_anon);
                if (c == 0)
                        break;
                if (k->dying_file - k->stuck > 0)
                        k->dying_file -= c;
                else
                        k->dying_anon -= c;
                *dying_taken += c;
                got += c;
        }
        if (got < quota && k->has_live) {
                uint64_t l = MIN(64 * PG, k->live);
                k->live -= l;
                k->taken_live += l;
                got += l;
        }
        return got;
}

static int lru_kernel_write(const char *root, const char *path, const char *value, void *userdata) {
        LruKernel *k = userdata;
        int r = record_write(root, path, value, &k->rec);
        const char *p = value;
        uint64_t ask = 0, done = 0, dying_taken = 0;

        if (r < 0 || !strstr(path, "/cg/h/memory.reclaim"))
                return r;
        assert_int_equal(scan_u64(&p, value + strlen(value), &ask), 0);
        ask = ask / PG * PG;
        while (done < ask) {
                uint64_t got = lru_kernel_pass(k, MAX((ask - done) / PG / 4, (uint64_t) 32) * PG,
                                               !strstr(value, "swappiness=0"), &dying_taken);
                if (got == 0) {
                        k->sweeps++;
                        r = -EAGAIN;
                        break;
                }
                done += got;
        }
        lru_kernel_publish(k);
        return r;
}

static LruKernel *lru_kernel_new(uint64_t dying_file, uint64_t dying_anon, uint64_t live, uint64_t kernel) {
        LruKernel *k = calloc(1, sizeof(LruKernel));
        assert_non_null(k);
        k->root = test_mkdtemp("reclaim");
        k->has_live = live > 0;
        k->dying_file = dying_file;
        k->dying_anon = dying_anon;
        k->live = live;
        k->kernel = kernel;
        k->chunk = 16 * PG;
        k->dying_per_write = UINT64_MAX;
        v2_cg(k->root, "/", 3);
        v2_cg(k->root, "/h", 3);
        if (k->has_live)
                v2_cg(k->root, "/h/live", 0);
        lru_kernel_publish(k);
        return k;
}

static void lru_kernel_free(LruKernel *k) {
        test_rm_rf(k->root);
        free((char *) k->root);
        free(k);
}

static ReclaimJob *lru_job_run(LruKernel *k, const ActionReclaimDying *cfg, ReclaimArgs args) {
        ReclaimJob *j = job_new(k->root, CGROUP_MEMORY_V2, cfg, false, lru_kernel_write, k, args);
        j->scope_dying = FEATURE_ABSENT;
        j->page_size = PG;
        j->host_swap = 1;
        assert_int_equal(reclaim_job_run(j, NULL), 0);
        assert_int_equal(j->n_results, 1);
        assert_string_equal(j->results[0].path, "/h");
        return j;
}

/*
 * Without scope=dying the holder is asked for its removed children's LRU pages, not for memory.current
 * minus its live child's: 6 MiB of kernel memory in memory.current would be taken from the live child.
 * With a live child, 31 pages less: ten removed children of 64 KiB, asked exactly, would end with a pass
 * that asks 32 pages where 16 are left, and the live child would lose 64.
 */
static void test_job_v2_lru_ask(void **state) {
        ActionReclaimDying cfg = cfg_default();
        LruKernel *k = lru_kernel_new(640 << 10, 512 << 10, 16 << 20, 6 << 20);
        MemcgScan s;

        /* The scan's figure: every LRU list of /h (1.125 MiB of it the removed children's) minus /h/live's. */
        assert_int_equal(memcg_scan_holders(k->root, "/cg", CGROUP_MEMORY_V2, NULL, 0, &s), 0);
        assert_int_equal(s.n_holders, 1);
        assert_int_equal(s.holders[0].dying_bytes, (640 << 10) + (512 << 10));
        memcg_scan_done(&s);

        /* swappiness=0: only the file lists count (the 512 KiB of shmem on the anon list stay). */
        ReclaimJob *j = lru_job_run(k, &cfg, RECLAIM_ARGS_SWAPPINESS);
        assert_string_equal(k->rec.log, "/cg/h/memory.reclaim=528384 swappiness=0\n"); /* 640 KiB - 31 pages */
        assert_int_equal(k->taken_live, 0);
        assert_int_equal(k->dying_file, 0);
        assert_int_equal(j->results[0].outcome, RECLAIM_DONE);
        assert_int_equal(j->results[0].writes, 1);
        assert_int_equal(j->results[0].lru_before, 640 << 10);
        assert_int_equal(j->results[0].lru_after, 0);
        reclaim_job_free(j);
        lru_kernel_free(k);

        /* A plain byte count on a host with swap (allow-swap): the anon lists count too. */
        cfg.allow_swap = true;
        k = lru_kernel_new(640 << 10, 512 << 10, 16 << 20, 6 << 20);
        j = lru_job_run(k, &cfg, RECLAIM_ARGS_BYTES);
        assert_string_equal(k->rec.log, "/cg/h/memory.reclaim=1052672\n");
        assert_int_equal(k->taken_live, 0);
        assert_int_equal(k->dying_file + k->dying_anon, 0);
        reclaim_job_free(j);
        lru_kernel_free(k);

        /* Asked exactly (no live child to spare), then the sweep: one write the kernel cannot meet. */
        cfg.allow_swap = false;
        k = lru_kernel_new(640 << 10, 0, 0, 6 << 20);
        j = lru_job_run(k, &cfg, RECLAIM_ARGS_SWAPPINESS);
        assert_string_equal(k->rec.log, "/cg/h/memory.reclaim=655360 swappiness=0\n"
                                        "/cg/h/memory.reclaim=262144 swappiness=0\n");
        assert_int_equal(k->dying_file, 0);
        assert_int_equal(k->sweeps, 1);
        assert_int_equal(j->results[0].writes, 1); /* the sweep's EAGAIN is not a write that reclaimed */
        assert_int_equal(j->results[0].outcome, RECLAIM_DONE);
        reclaim_job_free(j);
        lru_kernel_free(k);
}

/* A write that meets its quota partly from the live child leaves pages in the removed children: the next
 * round asks for what is left, until 31 pages or fewer are; bounded by step, max and the number of rounds. */
static void test_job_v2_rounds(void **state) {
        ActionReclaimDying cfg = cfg_default();
        LruKernel *k = lru_kernel_new(3 << 20, 0, 16 << 20, 1 << 20);

        k->dying_per_write = 1 << 20;
        ReclaimJob *j = lru_job_run(k, &cfg, RECLAIM_ARGS_SWAPPINESS);
        assert_string_equal(k->rec.log, "/cg/h/memory.reclaim=3018752 swappiness=0\n"
                                        "/cg/h/memory.reclaim=1970176 swappiness=0\n"
                                        "/cg/h/memory.reclaim=921600 swappiness=0\n");
        /* The third write's passes scrape 896 KiB of the last 1 MiB: one removed child of 16 pages is left,
         * fewer than the 31 a write would take from the live child; the next run asks again. */
        assert_int_equal(k->dying_file, 64 << 10);
        assert_int_equal(j->results[0].writes, 3);
        assert_int_equal(j->results[0].lru_before, 3 << 20);
        assert_int_equal(j->results[0].lru_after, 64 << 10);
        reclaim_job_free(j);
        lru_kernel_free(k);

        /* Without a live child the rounds (here of one step each) go on until nothing is left, then the
         * sweep. */
        cfg.step_bytes = 1 << 20;
        k = lru_kernel_new(3 << 20, 0, 0, 1 << 20);
        j = lru_job_run(k, &cfg, RECLAIM_ARGS_SWAPPINESS);
        assert_string_equal(k->rec.log, "/cg/h/memory.reclaim=1048576 swappiness=0\n"
                                        "/cg/h/memory.reclaim=1048576 swappiness=0\n"
                                        "/cg/h/memory.reclaim=1048576 swappiness=0\n"
                                        "/cg/h/memory.reclaim=262144 swappiness=0\n");
        assert_int_equal(k->dying_file, 0);
        assert_int_equal(j->results[0].lru_after, 0);
        reclaim_job_free(j);
        lru_kernel_free(k);

        /* Each write at most step; max bounds the subtree's writes. */
        cfg = cfg_default();
        cfg.step_bytes = 512 << 10;
        cfg.max_bytes = 1 << 20;
        k = lru_kernel_new(3 << 20, 0, 16 << 20, 1 << 20);
        j = lru_job_run(k, &cfg, RECLAIM_ARGS_SWAPPINESS);
        assert_string_equal(k->rec.log, "/cg/h/memory.reclaim=524288 swappiness=0\n"
                                        "/cg/h/memory.reclaim=524288 swappiness=0\n");
        assert_int_equal(j->results[0].lru_after, 2 << 20);
        assert_int_equal(k->taken_live, 0);
        reclaim_job_free(j);
        lru_kernel_free(k);

        /* At most 8 rounds, however little each frees. */
        cfg = cfg_default();
        k = lru_kernel_new(3 << 20, 0, 64 << 20, 0);
        k->dying_per_write = 64 << 10;
        j = lru_job_run(k, &cfg, RECLAIM_ARGS_SWAPPINESS);
        assert_int_equal(k->rec.writes, 8);
        assert_int_equal(j->results[0].lru_after, (3 << 20) - 8 * (64 << 10));
        reclaim_job_free(j);
        lru_kernel_free(k);
}

/* A round that frees none of the removed children's pages ends the subtree: no progress, or EAGAIN. */
static void test_job_v2_no_progress(void **state) {
        ActionReclaimDying cfg = cfg_default();
        LruKernel *k = lru_kernel_new(2 << 20, 0, 8 << 20, 1 << 20);

        /* The walk never reaches the removed children's pages: the live child pays for one write only. */
        k->dying_per_write = 0;
        ReclaimJob *j = lru_job_run(k, &cfg, RECLAIM_ARGS_SWAPPINESS);
        assert_string_equal(k->rec.log, "/cg/h/memory.reclaim=1970176 swappiness=0\n");
        assert_int_equal(j->results[0].writes, 1);
        assert_int_equal(j->results[0].lru_after, 2 << 20);
        reclaim_job_free(j);
        lru_kernel_free(k);

        /* Pages that cannot be reclaimed (2 MiB of 3): the kernel says EAGAIN, the subtree ends; no sweep
         * after it (that write went down to the lowest priority already). */
        k = lru_kernel_new(3 << 20, 0, 0, 1 << 20);
        k->stuck = 2 << 20;
        j = lru_job_run(k, &cfg, RECLAIM_ARGS_SWAPPINESS);
        assert_string_equal(k->rec.log, "/cg/h/memory.reclaim=3145728 swappiness=0\n");
        assert_int_equal(k->sweeps, 1);
        assert_int_equal(j->results[0].writes, 0);
        assert_int_equal(j->results[0].lru_after, 2 << 20);
        assert_int_equal(j->results[0].outcome, RECLAIM_DONE);
        reclaim_job_free(j);
        lru_kernel_free(k);
}

static void on_done(ReclaimJob *j, void *userdata) {
        *(ReclaimJob **) userdata = j;
}

/* A write that blocks is interrupted by the worker's timeout (SIGUSR2, EINTR). */
static void test_refault_parse(void **state) {
        static const char v2[] = "anon 0\nfile 4096\nworkingset_refault_anon 7\nworkingset_refault_file 1234\n"
                                 "workingset_activate_file 5\n";
        static const char v1[] = "cache 4096\nworkingset_refault_file 3\ntotal_cache 8192\n"
                                 "total_workingset_refault_anon 9\ntotal_workingset_refault_file 42\n";
        static const char v1_old[] = "cache 4096\nworkingset_refault 3\ntotal_workingset_refault 17\n";
        static const char v2_old[] = "file 4096\nworkingset_refault 5\nworkingset_activate 2";
        MemcgRefaultKey key;
        uint64_t v;

        assert_int_equal(memcg_refault_parse(v2, strlen(v2), CGROUP_MEMORY_V2, &v, &key), 0);
        assert_int_equal(v, 1234);
        assert_int_equal(key, MEMCG_REFAULT_FILE);
        /* v1: the hierarchical total_ column, not the cgroup's own. */
        assert_int_equal(memcg_refault_parse(v1, strlen(v1), CGROUP_MEMORY_V1, &v, &key), 0);
        assert_int_equal(v, 42);
        assert_int_equal(memcg_refault_parse(v1_old, strlen(v1_old), CGROUP_MEMORY_V1, &v, &key), 0);
        assert_int_equal(v, 17);
        assert_int_equal(key, MEMCG_REFAULT_ALL);
        assert_string_equal(memcg_refault_key_name(key, CGROUP_MEMORY_V1), "total_workingset_refault");
        assert_int_equal(memcg_refault_parse(v2_old, strlen(v2_old), CGROUP_MEMORY_V2, &v, NULL), 0);
        assert_int_equal(v, 5);
        /* Only a prefix of the text: the key is cut off, nothing is read past len. */
        assert_int_equal(memcg_refault_parse(v2, 30, CGROUP_MEMORY_V2, &v, NULL), -ENOENT);
        assert_int_equal(memcg_refault_parse("x 1\n", 4, CGROUP_MEMORY_V2, &v, NULL), -ENOENT);
        assert_int_equal(memcg_refault_parse("workingset_refault_file 1\nworkingset_refault_file 2\n", 52,
                                             CGROUP_MEMORY_V2, &v, NULL), -EINVAL);
        assert_int_equal(memcg_refault_parse("workingset_refault_file -1\n", 27, CGROUP_MEMORY_V2, &v, NULL), -EINVAL);
        assert_int_equal(memcg_refault_parse("workingset_refault_file 1x\n", 27, CGROUP_MEMORY_V2, &v, NULL), -EINVAL);
        assert_int_equal(memcg_refault_parse(v2, strlen(v2), CGROUP_MEMORY_NONE, &v, NULL), -EINVAL);
}

/* A kernel that rejects "swappiness=" (5.19-6.11) or has no memory.reclaim. */
static int old_kernel_write(const char *root, const char *path, const char *value, void *userdata) {
        Recorder *r = userdata;
        if (strstr(value, "swappiness="))
                return -EINVAL;
        return record_write(root, path, value, r);
}

static void test_probe_args(void **state) {
        char *root = v2_tree();
        Recorder rec = { 0 };
        ReclaimArgs a = _RECLAIM_ARGS_INVALID;

        assert_int_equal(reclaim_probe_args(root, "/cg", CGROUP_MEMORY_V2, "/", record_write, &rec, &a), 0);
        assert_int_equal(a, RECLAIM_ARGS_SWAPPINESS);
        assert_string_equal(rec.log, "/cg/memory.reclaim=0 swappiness=0\n");
        assert_string_equal(reclaim_args_answer(a), "yes");

        Recorder old = { 0 };
        assert_int_equal(reclaim_probe_args(root, "/cg", CGROUP_MEMORY_V2, "/a", old_kernel_write, &old, &a), 0);
        assert_int_equal(a, RECLAIM_ARGS_BYTES);
        assert_string_equal(old.log, "/cg/a/memory.reclaim=0\n");
        assert_string_equal(reclaim_args_answer(a), "no");

        /* v1: nothing is written. */
        Recorder v1 = { 0 };
        assert_int_equal(reclaim_probe_args(root, "/cg", CGROUP_MEMORY_V1, "/", record_write, &v1, &a), 0);
        assert_int_equal(a, RECLAIM_ARGS_NONE);
        assert_int_equal(v1.writes, 0);

        /* No memory.reclaim file (before 5.19); another error is returned. */
        Recorder gone = { .fail_path = "memory.reclaim", .fail_error = -ENOENT };
        assert_int_equal(reclaim_probe_args(root, "/cg", CGROUP_MEMORY_V2, "/", record_write, &gone, &a), 0);
        assert_int_equal(a, RECLAIM_ARGS_NONE);
        Recorder ro = { .fail_path = "memory.reclaim", .fail_error = -EROFS };
        assert_int_equal(reclaim_probe_args(root, "/cg", CGROUP_MEMORY_V2, "/", record_write, &ro, &a), -EROFS);
        assert_int_equal(a, RECLAIM_ARGS_NONE);

        /* Without writing: the file exists, so only a probe can tell. */
        assert_int_equal(reclaim_args_guess(root, "/cg", CGROUP_MEMORY_V2), RECLAIM_ARGS_UNKNOWN);
        assert_int_equal(reclaim_args_guess(root, "/nonexistent", CGROUP_MEMORY_V2), RECLAIM_ARGS_NONE);
        assert_int_equal(reclaim_args_guess(root, "/cg", CGROUP_MEMORY_V1), RECLAIM_ARGS_NONE);
        test_rm_rf(root);
        free(root);
}

static void test_job_swappiness(void **state) {
        char *root = v2_tree();
        ActionReclaimDying cfg = cfg_default();
        Recorder rec = { 0 };
        ReclaimJob *j;

        /* Not probed yet: the job probes on its first subtree, then writes "<bytes> swappiness=0". */
        j = job_new(root, CGROUP_MEMORY_V2, &cfg, false, record_write, &rec, RECLAIM_ARGS_UNKNOWN);
        assert_int_equal(reclaim_job_run(j, NULL), 0);
        assert_int_equal(j->args, RECLAIM_ARGS_SWAPPINESS);
        assert_true(strncmp(rec.log, "/cg/c/memory.reclaim=0 swappiness=0\n/cg/c/memory.reclaim=16777216 swappiness=0\n",
                            78) == 0);
        assert_int_equal(j->results[0].outcome, RECLAIM_DONE);
        reclaim_job_free(j);

        /* A kernel without swappiness=: skipped, nothing reclaimed, unless allow-swap. */
        Recorder old = { 0 };
        j = job_new(root, CGROUP_MEMORY_V2, &cfg, false, old_kernel_write, &old, RECLAIM_ARGS_UNKNOWN);
        assert_int_equal(reclaim_job_run(j, NULL), 0);
        assert_int_equal(j->args, RECLAIM_ARGS_BYTES);
        for (size_t i = 0; i < j->n_results; i++) {
                assert_int_equal(j->results[i].outcome, RECLAIM_SKIPPED_SWAP);
                assert_int_equal(j->results[i].writes, 0);
        }
        assert_int_equal(j->bytes_total, 0);
        assert_string_equal(old.log, "/cg/c/memory.reclaim=0\n"); /* the probe's only write */
        reclaim_job_free(j);

        /* No swap active (/proc/swaps has only its header): a plain byte count cannot swap, no skip. */
        char *swaps;
        assert_true(asprintf(&swaps, "%s/proc/swaps", root) > 0);
        assert_int_equal(mkdir_p(strndupa(swaps, strlen(swaps) - 6), 0755), 0);
        const char *no_swap = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n";
        assert_int_equal(write_file_atomic(swaps, no_swap, strlen(no_swap), 0644), 0);
        assert_int_equal(reclaim_host_has_swap(root), 0);
        Recorder noswap = { 0 };
        j = job_new(root, CGROUP_MEMORY_V2, &cfg, false, old_kernel_write, &noswap, RECLAIM_ARGS_BYTES);
        assert_int_equal(reclaim_job_run(j, NULL), 0);
        assert_int_equal(j->host_swap, 0);
        assert_int_equal(j->results[0].outcome, RECLAIM_DONE);
        assert_non_null(strstr(noswap.log, "/cg/c/memory.reclaim=16777216\n"));
        reclaim_job_free(j);
        /* With a swap device: skipped again. */
        const char *with_swap = "Filename\tType\tSize\tUsed\tPriority\n/dev/ram1\tpartition\t524284\t0\t-2\n";
        assert_int_equal(write_file_atomic(swaps, with_swap, strlen(with_swap), 0644), 0);
        assert_int_equal(reclaim_host_has_swap(root), 1);
        Recorder swapon = { 0 };
        j = job_new(root, CGROUP_MEMORY_V2, &cfg, false, old_kernel_write, &swapon, RECLAIM_ARGS_BYTES);
        assert_int_equal(reclaim_job_run(j, NULL), 0);
        assert_int_equal(j->results[0].outcome, RECLAIM_SKIPPED_SWAP);
        assert_int_equal(swapon.writes, 0);
        reclaim_job_free(j);
        free(swaps);

        cfg.allow_swap = true;
        Recorder allowed = { 0 };
        j = job_new(root, CGROUP_MEMORY_V2, &cfg, false, old_kernel_write, &allowed, RECLAIM_ARGS_BYTES);
        assert_int_equal(reclaim_job_run(j, NULL), 0);
        assert_int_equal(j->results[0].outcome, RECLAIM_DONE);
        assert_non_null(strstr(allowed.log, "/cg/c/memory.reclaim=16777216\n"));
        assert_null(strstr(allowed.log, "swappiness"));
        reclaim_job_free(j);
        test_rm_rf(root);
        free(root);
}

/* contrib/kernel 0004: the probe, and what a job writes where memory.reclaim takes scope=dying. */
static void test_job_scope_dying(void **state) {
        char *root = v2_tree();
        ActionReclaimDying cfg = cfg_default();
        FeatureState st = FEATURE_UNKNOWN;
        ReclaimJob *j;

        Recorder patched = { .scope_dying = true };
        assert_int_equal(reclaim_probe_scope(root, "/cg", CGROUP_MEMORY_V2, "/", record_write, &patched, &st), 0);
        assert_int_equal(st, FEATURE_PRESENT);
        assert_string_equal(patched.log, "/cg/memory.reclaim=0 scope=dying\n");
        Recorder stock = { 0 };
        assert_int_equal(reclaim_probe_scope(root, "/cg", CGROUP_MEMORY_V2, "/a", record_write, &stock, &st), 0);
        assert_int_equal(st, FEATURE_ABSENT);
        assert_int_equal(stock.rejected, 1);
        Recorder v1 = { .scope_dying = true };
        assert_int_equal(reclaim_probe_scope(root, "/cg", CGROUP_MEMORY_V1, "/", record_write, &v1, &st), 0);
        assert_int_equal(st, FEATURE_ABSENT);
        assert_int_equal(v1.writes, 0);
        Recorder ro = { .scope_dying = true, .fail_path = "memory.reclaim", .fail_error = -EROFS };
        assert_int_equal(reclaim_probe_scope(root, "/cg", CGROUP_MEMORY_V2, "/", record_write, &ro, &st), -EROFS);

        /* Not probed: the job probes both keys on its first subtree, then every write carries scope=dying.
         * /a's live children hold all of its usage: with the key it is asked for its share, not the
         * smallest request, since the kernel scans none of its live cgroups. */
        Recorder rec = { .scope_dying = true };
        j = reclaim_job_new(root, "/cg", CGROUP_MEMORY_V2, &cfg, false);
        j->write_fn = record_write;
        j->write_userdata = &rec;
        assert_int_equal(reclaim_job_run(j, NULL), 0);
        assert_int_equal(j->args, RECLAIM_ARGS_SWAPPINESS);
        assert_int_equal(j->scope_dying, FEATURE_PRESENT);
        assert_true(strncmp(rec.log, "/cg/c/memory.reclaim=0 swappiness=0\n/cg/c/memory.reclaim=0 scope=dying\n"
                                     "/cg/c/memory.reclaim=16777216 scope=dying swappiness=0\n", 126) == 0);
        assert_non_null(strstr(rec.log, "/cg/a/memory.reclaim=16777216 scope=dying swappiness=0\n"));
        assert_null(strstr(rec.log, "=262144"));
        assert_int_equal(j->results[0].outcome, RECLAIM_DONE);
        reclaim_job_free(j);

        /* A kernel with the key but without swappiness= (6.1 with 0004), swap active (no /proc/swaps
         * here counts as swap): not skipped without allow-swap, no live cgroup is scanned. */
        Recorder old = { .scope_dying = true };
        j = reclaim_job_new(root, "/cg", CGROUP_MEMORY_V2, &cfg, false);
        j->write_fn = old_kernel_write;
        j->write_userdata = &old;
        assert_int_equal(reclaim_job_run(j, NULL), 0);
        assert_int_equal(j->args, RECLAIM_ARGS_BYTES);
        assert_int_equal(j->host_swap, 1);
        assert_int_equal(j->results[0].outcome, RECLAIM_DONE);
        assert_non_null(strstr(old.log, "/cg/c/memory.reclaim=16777216 scope=dying\n"));
        assert_null(strstr(old.log, "swappiness"));
        reclaim_job_free(j);

        /* The manager's probe said no: the writes are as before, capped at the dying estimate. */
        Recorder no = { .scope_dying = true };
        j = reclaim_job_new(root, "/cg", CGROUP_MEMORY_V2, &cfg, false);
        j->write_fn = record_write;
        j->write_userdata = &no;
        j->args = RECLAIM_ARGS_SWAPPINESS;
        j->scope_dying = FEATURE_ABSENT;
        assert_int_equal(reclaim_job_run(j, NULL), 0);
        assert_null(strstr(no.log, "scope="));
        assert_non_null(strstr(no.log, "/cg/c/memory.reclaim=16777216 swappiness=0\n"));
        assert_null(strstr(no.log, "/cg/a/memory.reclaim="));
        reclaim_job_free(j);
        test_rm_rf(root);
        free(root);
}

static void test_refault_watch(void **state) {
        char *root = v2_tree();
        ActionReclaimDying cfg = cfg_default();
        Recorder rec = { 0 };
        ReclaimWatch w = { 0 };
        char **skip = NULL;
        ReclaimJob *j;

        cfg.max_refault_rate = 10.0;
        cfg.refault_window_usec = 30 * USEC_PER_SEC;
        j = job_new(root, CGROUP_MEMORY_V2, &cfg, false, record_write, &rec, RECLAIM_ARGS_SWAPPINESS);
        assert_int_equal(reclaim_job_run(j, NULL), 0);
        assert_int_equal(j->n_results, 3);
        for (size_t i = 0; i < 3; i++) {
                assert_int_equal(j->results[i].refaults_before, 100);
                assert_true(j->results[i].refaults_before_at > 0);
        }
        assert_int_equal(reclaim_watch_open(&w, j, "p/r", 120 * USEC_PER_SEC), 0);
        assert_true(w.record.counting);
        assert_int_equal(w.record.n_subtrees, 3);

        /* 30 s later: /c (results[0]) refaulted 600 pages (20/s, above 10/s), /a 30 (1/s); /a/x is gone. */
        usec_t t0 = j->results[0].refaults_before_at, later = t0 + 30 * USEC_PER_SEC;
        put(root, "/c", "memory.stat", "workingset_refault_file 700\n");
        put(root, "/a", "memory.stat", "workingset_refault_file 130\n");
        char *gone;
        assert_true(asprintf(&gone, "%s/cg/a/x", root) > 0);
        test_rm_rf(gone);
        free(gone);
        assert_int_equal(reclaim_watch_close(&w, root, "/cg", CGROUP_MEMORY_V2, later), 1);
        assert_false(w.record.counting);
        const ReclaimSubtreeRefaults *c = &w.record.subtrees[0], *a = &w.record.subtrees[1], *x = &w.record.subtrees[2];
        assert_string_equal(c->path, "/c");
        assert_int_equal(c->refaults, 600);
        assert_true(c->rate > 19.9 && c->rate <= 20.0);
        assert_true(c->over_limit);
        assert_string_equal(a->path, "/a");
        assert_int_equal(a->refaults, 30);
        assert_false(a->over_limit);
        assert_int_equal(x->after, -1);
        assert_int_equal(w.record.refaults, 630);
        assert_int_equal(w.refaults_total, 630);
        /* Closing twice counts nothing twice. */
        assert_int_equal(reclaim_watch_close(&w, root, "/cg", CGROUP_MEMORY_V2, later + 1), 0);
        assert_int_equal(w.refaults_total, 630);

        /* /c is skipped by this rule for its cooldown, not by another rule, and not after it. */
        assert_int_equal(reclaim_watch_blocked(&w, "p/other", later + 1, &skip), 0);
        assert_null(skip);
        assert_int_equal(reclaim_watch_blocked(&w, "p/r", later + 1, &skip), 0);
        assert_non_null(skip);
        assert_string_equal(skip[0], "/c");
        assert_null(skip[1]);
        reclaim_job_free(j);

        /* The next run of the rule leaves /c alone. */
        Recorder r2 = { 0 };
        j = job_new(root, CGROUP_MEMORY_V2, &cfg, false, record_write, &r2, RECLAIM_ARGS_SWAPPINESS);
        j->skip = skip;
        assert_int_equal(reclaim_job_run(j, NULL), 0);
        assert_string_equal(j->results[0].path, "/c");
        assert_int_equal(j->results[0].outcome, RECLAIM_SKIPPED_REFAULTS);
        assert_null(strstr(r2.log, "/cg/c/"));
        /* /a is run, not skipped; its memory.stat above has no LRU lists: the one capped ask of old. */
        assert_non_null(strstr(r2.log, "/cg/a/memory.reclaim=262144 swappiness=0\n"));

        /* Status: the record and the skipped subtree, as JSON and as text. */
        json_object *o = reclaim_watch_to_json(&w, CGROUP_MEMORY_V2, later + 1);
        assert_non_null(o);
        const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        assert_non_null(strstr(text, "\"refaults\":630"));
        assert_non_null(strstr(text, "\"skipped_subtrees\":[{\"rule\":\"p/r\",\"path\":\"/c\""));
        char *out = NULL;
        size_t outlen = 0;
        FILE *f = open_memstream(&out, &outlen);
        reclaim_watch_print_json(f, o);
        fclose(f);
        assert_non_null(strstr(out, "630 refaults in the live cgroups of the reclaimed subtrees"));
        assert_non_null(strstr(out, "skipped by p/r: /c (its live cgroups refaulted 20.0/s"));
        free(out);
        json_object_put(o);
        reclaim_job_free(j);

        skip = NULL;
        assert_int_equal(reclaim_watch_blocked(&w, "p/r", later + 121 * USEC_PER_SEC, &skip), 0);
        assert_null(skip);
        assert_int_equal(w.n_blocks, 0);
        reclaim_watch_done(&w);
        test_rm_rf(root);
        free(root);
}

static void test_worker_timeout(void **state) {
        char *root = v2_tree();
        ActionReclaimDying cfg = cfg_default();
        Recorder rec = { .block = true };
        sd_event *e = NULL;
        ReclaimWorker *w = NULL;
        ReclaimJob *done = NULL;
        sigset_t ss;

        sigemptyset(&ss);
        sigaddset(&ss, SIGUSR2);
        cfg.timeout_usec = 300 * USEC_PER_MSEC;
        ReclaimJob *j = job_new(root, CGROUP_MEMORY_V2, &cfg, false, record_write, &rec, RECLAIM_ARGS_SWAPPINESS);
        assert_int_equal(sd_event_new(&e), 0);
        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        assert_int_equal(reclaim_worker_start(&w, e, j, on_done, &done), 0);
        assert_true(reclaim_worker_busy(w));
        assert_int_equal(reclaim_worker_start(&w, e, j, on_done, &done), -EBUSY);
        while (!done)
                assert_true(sd_event_run(e, 5 * USEC_PER_SEC) >= 0);
        usec_t took = now_usec(CLOCK_MONOTONIC) - t0;
        assert_true(took < 3 * USEC_PER_SEC);
        assert_true(done->timed_out);
        assert_int_equal(done->results[0].outcome, RECLAIM_TIMED_OUT);
        assert_int_equal(done->results[1].outcome, RECLAIM_NOT_RUN);
        reclaim_job_free(done);
        reclaim_worker_stop(w);
        sd_event_unref(e);
        test_rm_rf(root);
        free(root);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_scan_v2),          cmocka_unit_test(test_scan_v1),
                cmocka_unit_test(test_scan_v1_kernel_memory),
                cmocka_unit_test(test_job_v2_budget),    cmocka_unit_test(test_job_errors),
                cmocka_unit_test(test_job_v1_policy),    cmocka_unit_test(test_job_explicit_cgroup),
                cmocka_unit_test(test_worker_timeout),   cmocka_unit_test(test_refault_parse),
                cmocka_unit_test(test_probe_args),       cmocka_unit_test(test_job_swappiness),
                cmocka_unit_test(test_refault_watch),    cmocka_unit_test(test_job_scope_dying),
                cmocka_unit_test(test_job_v2_lru_ask),   cmocka_unit_test(test_job_v2_rounds),
                cmocka_unit_test(test_job_v2_no_progress),
        };
        log_setup("test-reclaim", LOG_TARGET_NULL, LOG_DEBUG);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
