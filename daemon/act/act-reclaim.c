/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>
#include <pthread.h>
#include <sys/eventfd.h>

#include "act-reclaim.h"
#include "log.h"

static const char *const reclaim_outcome_table[_RECLAIM_OUTCOME_MAX] = {
        [RECLAIM_DONE] = "reclaimed",
        [RECLAIM_SKIPPED_POLICY] = "skipped (v1 needs force-empty)",
        [RECLAIM_GONE] = "gone",
        [RECLAIM_BUSY] = "busy (tasks inside)",
        [RECLAIM_FAILED] = "failed",
        [RECLAIM_TIMED_OUT] = "interrupted at the timeout",
        [RECLAIM_NOT_RUN] = "not reached",
        [RECLAIM_NOTHING] = "nothing reclaimable",
        [RECLAIM_SKIPPED_SWAP] = "skipped (memory.reclaim takes no swappiness= here; allow-swap: false)",
        [RECLAIM_SKIPPED_REFAULTS] = "skipped (its live cgroups refaulted above max-refault-rate)",
};

const char *reclaim_outcome_to_string(ReclaimOutcome o) {
        return o < _RECLAIM_OUTCOME_MAX ? reclaim_outcome_table[o] : NULL;
}

bool reclaim_outcome_wrote(ReclaimOutcome o) {
        return o == RECLAIM_DONE || o == RECLAIM_NOTHING || o == RECLAIM_TIMED_OUT || o == RECLAIM_BUSY;
}

static const char *const reclaim_args_answers[_RECLAIM_ARGS_MAX] = {
        [RECLAIM_ARGS_UNKNOWN] = "unknown",
        [RECLAIM_ARGS_NONE] = "no",
        [RECLAIM_ARGS_BYTES] = "no",
        [RECLAIM_ARGS_SWAPPINESS] = "yes",
};

static const char *const reclaim_args_table[_RECLAIM_ARGS_MAX] = {
        [RECLAIM_ARGS_UNKNOWN] = "not probed",
        [RECLAIM_ARGS_NONE] = "no memory.reclaim",
        [RECLAIM_ARGS_BYTES] = "a byte count only ('0 swappiness=0' is EINVAL, '0' accepted)",
        [RECLAIM_ARGS_SWAPPINESS] = "swappiness= accepted ('0 swappiness=0' written)",
};

const char *reclaim_args_answer(ReclaimArgs a) {
        return a >= 0 && a < _RECLAIM_ARGS_MAX ? reclaim_args_answers[a] : NULL;
}

const char *reclaim_args_to_string(ReclaimArgs a) {
        return a >= 0 && a < _RECLAIM_ARGS_MAX ? reclaim_args_table[a] : NULL;
}

int reclaim_host_has_swap(const char *root) {
        _cleanup_(freep) char *buf = NULL;
        const char *pos, *line;
        size_t len, l, n = 0;
        int r = read_file_at(root ?: "/", "/proc/swaps", 1024 * 1024, &buf, &len);
        if (r < 0)
                return r;
        pos = buf;
        while (next_line(&pos, buf + len, &line, &l))
                n += l > 0;
        return n > 1;
}

int reclaim_probe_args(const char *root, const char *mount, CgroupMode mode, const char *cg, ReclaimWriteFn write_fn,
                       void *userdata, ReclaimArgs *ret) {
        _cleanup_(freep) char *path = NULL;
        int r;

        if (mode != CGROUP_MEMORY_V2) {
                *ret = RECLAIM_ARGS_NONE;
                return 0;
        }
        if (asprintf(&path, "%s%s/memory.reclaim", mount, streq(cg, "/") ? "" : cg) < 0)
                return -ENOMEM;
        r = write_fn ? write_fn(root, path, "0 swappiness=0", userdata) : write_file_at(root, path, "0 swappiness=0");
        if (r >= 0) {
                *ret = RECLAIM_ARGS_SWAPPINESS;
                return 0;
        }
        if (r == -ENOENT) {
                *ret = RECLAIM_ARGS_NONE;
                return 0;
        }
        if (r != -EINVAL)
                return r;
        r = write_fn ? write_fn(root, path, "0", userdata) : write_file_at(root, path, "0");
        if (r < 0)
                return r;
        *ret = RECLAIM_ARGS_BYTES;
        return 0;
}

int reclaim_probe_scope(const char *root, const char *mount, CgroupMode mode, const char *cg, ReclaimWriteFn write_fn,
                        void *userdata, FeatureState *ret) {
        _cleanup_(freep) char *path = NULL;
        int r;

        *ret = FEATURE_ABSENT;
        if (mode != CGROUP_MEMORY_V2)
                return 0;
        if (asprintf(&path, "%s%s/memory.reclaim", mount, streq(cg, "/") ? "" : cg) < 0)
                return -ENOMEM;
        r = write_fn ? write_fn(root, path, "0 scope=dying", userdata) : write_file_at(root, path, "0 scope=dying");
        if (r >= 0)
                *ret = FEATURE_PRESENT;
        return r >= 0 || r == -EINVAL || r == -ENOENT ? 0 : r;
}

/* v2: the sweep of a subtree without live children; without an LRU figure (fallback), the smallest request
 * per subtree and its granule. */
#define RECLAIM_DYING_SLACK ((uint64_t) 256 << 10)
/* v2, sized by the LRU figure: at most this many writes per subtree and run (besides the sweep). */
#define RECLAIM_DYING_ROUNDS 8u
/* The kernel's smallest quota of one reclaim pass, pages (SWAP_CLUSTER_MAX, include/linux/swap.h 6.1-6.18). */
#define RECLAIM_SWAP_CLUSTER_MAX 32u
#define ALIGN_UP_U64(x, a) (((x) + (a) - 1) / (a) * (a))

static bool strv_contains(char *const *v, const char *s) {
        for (; v && *v; v++)
                if (streq(*v, s))
                        return true;
        return false;
}

static int default_write(const char *root, const char *path, const char *value, void *userdata) {
        return write_file_at(root, path, value);
}

ReclaimJob *reclaim_job_free(ReclaimJob *j) {
        if (!j)
                return NULL;
        free(j->root);
        free(j->mount);
        free(j->cgroup);
        strv_freep(&j->roots);
        strv_freep(&j->skip);
        memcg_scan_done(&j->scan);
        for (size_t i = 0; i < j->n_results; i++)
                free(j->results[i].path);
        free(j->results);
        free(j);
        return NULL;
}

ReclaimJob *reclaim_job_new(const char *root, const char *mount, CgroupMode mode, const ActionReclaimDying *cfg,
                            bool dry_run) {
        _cleanup_(reclaim_job_freep) ReclaimJob *j = calloc(1, sizeof(ReclaimJob));
        size_t n = 0;

        if (!j)
                return NULL;
        j->root = strdup(root ?: "/");
        j->mount = strdup(mount);
        j->cgroup = strdup(cfg->cgroup ?: "auto");
        if (!j->root || !j->mount || !j->cgroup)
                return NULL;
        j->mode = mode;
        j->cfg = *cfg;
        j->cfg.roots = NULL;
        j->cfg.cgroup = NULL;
        j->dry_run = dry_run;
        j->write_fn = default_write;
        j->host_swap = -1;
        long ps = sysconf(_SC_PAGESIZE);
        j->page_size = ps > 0 ? (uint64_t) ps : 4096;
        while (cfg->roots && cfg->roots[n])
                n++;
        if (n > 0) {
                j->roots = calloc(n + 1, sizeof(char *));
                if (!j->roots)
                        return NULL;
                for (size_t i = 0; i < n; i++)
                        if (!(j->roots[i] = strdup(cfg->roots[i])))
                                return NULL;
        }
        return TAKE_PTR(j);
}

static int add_result(ReclaimJob *j, const char *path, uint64_t dying, uint64_t dying_bytes) {
        ReclaimTargetResult *n = realloc(j->results, (j->n_results + 1) * sizeof(ReclaimTargetResult));
        if (!n)
                return -ENOMEM;
        j->results = n;
        j->results[j->n_results] = (ReclaimTargetResult){ .path = strdup(path), .dying = dying,
                                                          .dying_bytes = dying_bytes, .outcome = RECLAIM_NOT_RUN,
                                                          .usage_before = -1, .usage_after = -1,
                                                          .refaults_before = -1, .lru_before = -1,
                                                          .lru_after = -1 };
        if (!j->results[j->n_results].path)
                return -ENOMEM;
        j->n_results++;
        return 0;
}

static ReclaimOutcome outcome_of(int r) {
        switch (r) {
        case -EINTR:
                return RECLAIM_TIMED_OUT;
        case -ENOENT:
        case -ENODEV:
                return RECLAIM_GONE;
        case -EBUSY:
                return RECLAIM_BUSY;
        default:
                return RECLAIM_FAILED;
        }
}

static int cg_file(const ReclaimJob *j, const char *cg, const char *file, char **ret) {
        return asprintf(ret, "%s%s/%s", j->mount, cg, file) < 0 ? -ENOMEM : 0;
}

/* What the holder is charged now (hierarchical), bytes, or -1. */
static int64_t cg_usage(const ReclaimJob *j, const char *cg) {
        _cleanup_(freep) char *path = NULL;
        int64_t v;
        if (cg_file(j, cg, j->mode == CGROUP_MEMORY_V2 ? "memory.current" : "memory.usage_in_bytes", &path) < 0 ||
            read_int64_at(j->root, path, &v) < 0)
                return -1;
        return v;
}

/* The subtree's refault counter before anything is written to it (one memory.stat read). */
static void read_refaults(ReclaimJob *j, ReclaimTargetResult *t) {
        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        uint64_t v;
        if (memcg_refault_read(j->root, j->mount, j->mode, t->path, &v) >= 0) {
                t->refaults_before = (int64_t) MIN(v, (uint64_t) INT64_MAX);
                t->refaults_before_at = t0;
        }
        j->refault_read_usec += now_usec(CLOCK_MONOTONIC) - t0;
}

/* One write "<amount>[ scope=dying][ swappiness=0]" to t's memory.reclaim (path).  0, or -errno of the write
 * (-EAGAIN: the kernel could not reclaim all of it); what was asked is counted only on success. */
static int reclaim_write(ReclaimJob *j, ReclaimTargetResult *t, const char *path, uint64_t amount, bool scoped) {
        char v[48];
        int r;

        snprintf(v, sizeof v, "%" PRIu64 "%s%s", amount, scoped ? " scope=dying" : "",
                 j->args == RECLAIM_ARGS_SWAPPINESS ? " swappiness=0" : "");
        r = j->write_fn(j->root, path, v, j->write_userdata);
        if (r < 0)
                return r;
        t->bytes += amount;
        t->writes++;
        j->bytes_total += amount;
        return 0;
}

static bool reclaim_stop(const ReclaimJob *j, usec_t deadline, const volatile sig_atomic_t *cancel) {
        return (cancel && *cancel) || now_usec(CLOCK_MONOTONIC) >= deadline;
}

/* One write of the rounds below: false when they end here (timed out, or a write error other than EAGAIN;
 * t's outcome says which), else true with *ret 0 or -EAGAIN (the kernel could not reclaim all of it). */
static bool reclaim_round_write(ReclaimJob *j, ReclaimTargetResult *t, const char *path, uint64_t amount,
                                usec_t deadline, const volatile sig_atomic_t *cancel, int *ret) {
        if (reclaim_stop(j, deadline, cancel)) {
                t->outcome = RECLAIM_TIMED_OUT;
                return false;
        }
        *ret = reclaim_write(j, t, path, amount, false);
        if (*ret < 0 && *ret != -EAGAIN) {
                t->outcome = outcome_of(*ret);
                t->error = *ret;
                return false;
        }
        return true;
}

/*
 * Without scope=dying: ask the subtree for what its removed children hold on the LRU lists, in rounds.
 *
 * memory.reclaim on the holder walks its whole subtree, live children included (shrink_node_memcgs(),
 * mm/vmscan.c 6.1-6.18): each pass scrapes an offline memcg (lru_gen: all it has, get_nr_to_scan(); classic
 * LRU: at least SWAP_CLUSTER_MAX pages, get_scan_count()) and takes from a live one too, lru_size >> priority
 * (lru_gen evicts MIN_LRU_BATCH, 64 folios, from a live memcg it scans at all: evict_folios()).  A partial
 * walk ends when its quota is met, and every pass asks at least SWAP_CLUSTER_MAX (32) pages
 * (try_to_free_mem_cgroup_pages(); memory_reclaim() asks a quarter of what is left per pass).  So:
 *  - a write of more than the figure takes the rest from the live children;
 *  - with live children, a write of the exact figure still ends with a pass that asks 32 pages when fewer
 *    are left in the dying memcgs, and that pass walks on into the live ones: the ask is the figure less
 *    31 pages, so every pass can be met from dying memcgs (what is left of the figure is at least the
 *    pass's quota), and what the last pass scrapes beyond the ask is the dying memcgs' rest;
 *  - a write can also end before the dying memcgs are empty (its quota met partly from the live ones, or
 *    pages the kernel could not take in that pass): after each write the figure is read again and the next
 *    write asks for what is left, until at most the 31 pages are left (none without live children), a write
 *    frees none of it (EAGAIN, or the figure does not fall), the budget is spent or RECLAIM_DYING_ROUNDS
 *    writes were made.
 * Without live children nothing live pays for an ask, and then one more write (RECLAIM_DYING_SLACK) follows
 * the rounds, unless the last one ended in EAGAIN: one the kernel cannot meet from the LRU, so its passes go
 * down to the lowest priority and shrink the slab caches of the subtree (shrink_slab() in
 * shrink_node_memcgs()), where the dentries and inodes of the removed children's files are: an inode whose
 * pages a memcg wrote keeps that memcg's writeback structure, and so the memcg, until it is evicted or
 * switched (inode_detach_wb(), cleanup_offline_cgwbs_workfn(), mm/backing-dev.c and fs/fs-writeback.c
 * 6.12): tests/vm/systemd R2 left 9 of 10 memcgs removed with dirty files dying without it, their LRU
 * pages all reclaimed.
 * Returns -errno of the first read (the caller falls back to one capped ask), else 0 with t's outcome set.
 */
static int reclaim_v2_rounds(ReclaimJob *j, ReclaimTargetResult *t, const char *path, uint64_t budget,
                             usec_t deadline, const volatile sig_atomic_t *cancel) {
        /* Anonymous pages count only where a write can swap them: plain "<bytes>" on a host with swap. */
        bool anon = j->args != RECLAIM_ARGS_SWAPPINESS && j->host_swap != 0;
        uint64_t left, done = 0, margin;
        unsigned live = 0;
        bool swept = false; /* a write ended in EAGAIN: the kernel went down to its lowest priority already */
        int r = memcg_dying_lru_read(j->root, j->mount, t->path, anon, &left, &live);

        if (r < 0)
                return r;
        t->lru_before = t->lru_after = (int64_t) MIN(left, (uint64_t) INT64_MAX);
        t->outcome = RECLAIM_DONE;
        for (unsigned round = 0; round < RECLAIM_DYING_ROUNDS; round++) {
                uint64_t amount, before = left;
                margin = live > 0 ? (RECLAIM_SWAP_CLUSTER_MAX - 1) * j->page_size : 0;
                if (left <= margin)
                        break;
                amount = MIN(MIN(left - margin, j->cfg.step_bytes), budget - done);
                amount = MIN(amount, j->cfg.max_bytes - MIN(j->bytes_total, j->cfg.max_bytes));
                if (amount == 0)
                        break;
                if (!reclaim_round_write(j, t, path, amount, deadline, cancel, &r))
                        return 0;
                if (r >= 0)
                        done += amount;
                swept = r == -EAGAIN;
                if (memcg_dying_lru_read(j->root, j->mount, t->path, anon, &left, &live) < 0)
                        break;
                t->lru_after = (int64_t) MIN(left, (uint64_t) INT64_MAX);
                /* EAGAIN: the kernel found nothing more to reclaim in the subtree; no fall: the rest is
                 * not reclaimable now. */
                if (r < 0 || left >= before)
                        break;
        }
        if (live == 0 && !swept && done < budget && j->bytes_total < j->cfg.max_bytes) {
                uint64_t amount = MIN(MIN(RECLAIM_DYING_SLACK, budget - done), j->cfg.max_bytes - j->bytes_total);
                if (!reclaim_round_write(j, t, path, amount, deadline, cancel, &r))
                        return 0;
                if (memcg_dying_lru_read(j->root, j->mount, t->path, anon, &left, NULL) >= 0)
                        t->lru_after = (int64_t) MIN(left, (uint64_t) INT64_MAX);
        }
        return 0;
}

/*
 * budget: what to ask of this subtree; sized: ask only what its dying memcgs hold (cgroup: auto), not the
 * budget as such.  With scope=dying the live cgroups are not scanned and the kernel's EAGAIN tells when the
 * dying ones hold no more: the budget is asked in steps.
 */
static void reclaim_v2(ReclaimJob *j, ReclaimTargetResult *t, uint64_t budget, bool sized, usec_t deadline,
                       const volatile sig_atomic_t *cancel) {
        _cleanup_(freep) char *path = NULL;
        uint64_t done = 0;
        bool scoped;

        if (cg_file(j, t->path, "memory.reclaim", &path) < 0) {
                t->outcome = RECLAIM_FAILED;
                t->error = -ENOMEM;
                return;
        }
        if (j->args == RECLAIM_ARGS_UNKNOWN) {
                /* Not probed by the manager: probe both here (scope=dying only where memory.reclaim exists). */
                int r = reclaim_probe_args(j->root, j->mount, j->mode, t->path, j->write_fn, j->write_userdata,
                                           &j->args);
                if (r >= 0 && j->scope_dying == FEATURE_UNKNOWN && j->args != RECLAIM_ARGS_NONE)
                        r = reclaim_probe_scope(j->root, j->mount, j->mode, t->path, j->write_fn, j->write_userdata,
                                                &j->scope_dying);
                if (r < 0) {
                        t->outcome = outcome_of(r);
                        t->error = r;
                        return;
                }
        }
        scoped = j->scope_dying == FEATURE_PRESENT;
        if (j->host_swap < 0) {
                int r = reclaim_host_has_swap(j->root);
                j->host_swap = r < 0 ? 1 : r;
        }
        /* scope=dying scans no live cgroup: their anonymous memory is safe without swappiness=. */
        if (j->args != RECLAIM_ARGS_SWAPPINESS && !scoped && !j->cfg.allow_swap && j->host_swap != 0) {
                t->outcome = RECLAIM_SKIPPED_SWAP;
                return;
        }
        if (!scoped && sized) {
                if (reclaim_v2_rounds(j, t, path, budget, deadline, cancel) >= 0)
                        return;
                /* No LRU figure to read: one ask of at most what the scan found, at least the slack. */
                budget = MIN(budget, ALIGN_UP_U64(MAX(t->dying_bytes, RECLAIM_DYING_SLACK), RECLAIM_DYING_SLACK));
        }
        t->outcome = RECLAIM_DONE;
        while (done < budget && j->bytes_total < j->cfg.max_bytes) {
                uint64_t amount = MIN(MIN(j->cfg.step_bytes, budget - done), j->cfg.max_bytes - j->bytes_total);
                if (reclaim_stop(j, deadline, cancel)) {
                        t->outcome = RECLAIM_TIMED_OUT;
                        return;
                }
                int r = reclaim_write(j, t, path, amount, scoped);
                if (r == -EAGAIN)
                        return; /* the kernel could not reclaim the whole step: nothing much left here */
                if (r < 0) {
                        t->outcome = outcome_of(r);
                        t->error = r;
                        return;
                }
                done += amount;
        }
}

/*
 * Does the cgroup itself run tasks?  force_empty does not refuse a populated
 * cgroup (mem_cgroup_force_empty(), mm/memcontrol-v1.c 6.12-6.18: it only
 * loops on try_to_free_mem_cgroup_pages()), so it would empty a running
 * container's page cache.  A read error counts as "runs tasks".
 */
static bool cg_has_tasks(const ReclaimJob *j, const char *cg) {
        _cleanup_(freep) char *path = NULL, *buf = NULL;
        size_t len = 0;
        if (cg_file(j, cg, "cgroup.procs", &path) < 0 || read_file_at(j->root, path, 4096, &buf, &len) < 0)
                return true;
        for (size_t i = 0; i < len; i++)
                if (buf[i] != '\n' && buf[i] != ' ')
                        return true;
        return false;
}

static void reclaim_v1(ReclaimJob *j, ReclaimTargetResult *t, bool childless) {
        _cleanup_(freep) char *path = NULL;
        bool allowed = j->cfg.force_empty == FORCE_EMPTY_YES ||
                       (j->cfg.force_empty == FORCE_EMPTY_CHILDLESS && childless && !cg_has_tasks(j, t->path));
        int r;

        if (!allowed) {
                t->outcome = RECLAIM_SKIPPED_POLICY;
                return;
        }
        if (cg_file(j, t->path, "memory.force_empty", &path) < 0) {
                t->outcome = RECLAIM_FAILED;
                t->error = -ENOMEM;
                return;
        }
        r = j->write_fn(j->root, path, "0", j->write_userdata);
        t->writes++;
        if (r < 0) {
                t->outcome = outcome_of(r);
                t->error = r;
        } else
                t->outcome = RECLAIM_DONE;
}

int reclaim_job_run(ReclaimJob *j, const volatile sig_atomic_t *cancel) {
        usec_t t0 = now_usec(CLOCK_MONOTONIC), deadline = t0 + j->cfg.timeout_usec;
        char *single[2] = { j->cgroup, NULL };
        bool explicit_cg = !streq(j->cgroup, "auto");
        int r;

        r = memcg_scan_holders(j->root, j->mount, j->mode, explicit_cg ? single : j->roots, 64 * 1024, &j->scan);
        j->scan_usec = now_usec(CLOCK_MONOTONIC) - t0;
        if (r < 0) {
                j->error = r;
                return r;
        }

        if (explicit_cg) {
                /* One named subtree: reclaim it as a whole if anything below it pins dying memcgs. */
                uint64_t dying = 0, bytes = 0;
                unsigned live = 0;
                for (size_t i = 0; i < j->scan.n_holders; i++) {
                        dying += j->scan.holders[i].dying;
                        bytes += j->scan.holders[i].dying_bytes;
                        if (streq(j->scan.holders[i].path, j->cgroup))
                                live = j->scan.holders[i].live_children;
                }
                if (j->scan.n_holders > 0 && (r = add_result(j, j->cgroup, dying, bytes)) < 0)
                        return r;
                (void) live;
        } else
                for (size_t i = 0; i < j->scan.n_holders; i++) {
                        const MemcgHolder *h = &j->scan.holders[i];
                        if (j->mode == CGROUP_MEMORY_V2 && h->dying < j->cfg.min_dying)
                                continue;
                        if ((r = add_result(j, h->path, h->dying, h->dying_bytes)) < 0)
                                return r;
                }

        if (j->dry_run || j->n_results == 0) {
                j->run_usec = now_usec(CLOCK_MONOTONIC) - t0;
                return 0;
        }

        uint64_t per_target = MAX(j->cfg.step_bytes, j->cfg.max_bytes / j->n_results);
        bool incomplete = false;
        for (size_t i = 0; i < j->n_results; i++) {
                ReclaimTargetResult *t = &j->results[i];
                if ((cancel && *cancel) || now_usec(CLOCK_MONOTONIC) >= deadline) {
                        j->timed_out = true;
                        break;
                }
                if (strv_contains(j->skip, t->path)) {
                        t->outcome = RECLAIM_SKIPPED_REFAULTS;
                        continue;
                }
                t->usage_before = cg_usage(j, t->path);
                read_refaults(j, t);
                if (j->mode == CGROUP_MEMORY_V2) {
                        if (j->bytes_total >= j->cfg.max_bytes)
                                break;
                        /* Without scope=dying, ask for what the dying memcgs hold, not more: memory.reclaim
                         * on the holder takes from its live children too (a named cgroup is asked as a
                         * whole). */
                        reclaim_v2(j, t, per_target, !explicit_cg, deadline, cancel);
                } else {
                        bool childless = true;
                        for (size_t k = 0; k < j->scan.n_holders; k++)
                                if (streq(j->scan.holders[k].path, t->path))
                                        childless = j->scan.holders[k].live_children == 0;
                        if (explicit_cg)
                                childless = false; /* a named subtree may hold live children below */
                        reclaim_v1(j, t, childless);
                }
                t->usage_after = cg_usage(j, t->path);
                if (t->usage_before >= 0 && t->usage_after >= 0 && t->usage_before > t->usage_after)
                        j->freed_total += (uint64_t) (t->usage_before - t->usage_after);
                /* A "done" that freed nothing: the kernel had nothing it could reclaim there. */
                if (t->outcome == RECLAIM_DONE && t->usage_before >= 0 && t->usage_after >= t->usage_before)
                        t->outcome = RECLAIM_NOTHING;
                if (t->outcome == RECLAIM_TIMED_OUT) {
                        j->timed_out = true;
                        break;
                }
                incomplete |= t->outcome == RECLAIM_SKIPPED_POLICY || t->outcome == RECLAIM_BUSY ||
                              t->outcome == RECLAIM_FAILED || t->outcome == RECLAIM_NOTHING ||
                              t->outcome == RECLAIM_SKIPPED_SWAP;
        }

        if (incomplete && j->cfg.drop_caches && !j->timed_out &&
            j->write_fn(j->root, "/proc/sys/vm/drop_caches", "1", j->write_userdata) >= 0)
                j->dropped_caches = true;
        j->ended = now_usec(CLOCK_MONOTONIC);
        j->run_usec = j->ended - t0;
        return 0;
}

/* ------------------------------------------------------------------------ */

struct ReclaimWorker {
        pthread_t thread;
        int efd;
        sd_event_source *io;
        sd_event_source *timer;
        ReclaimJob *job;
        ReclaimDoneFn done;
        void *userdata;
        volatile sig_atomic_t cancel;
        bool running;
};

static void on_sigusr2(int sig) {
        /* Nothing: its only purpose is to make a blocked write return EINTR. */
}

static void *worker_main(void *p) {
        ReclaimWorker *w = p;
        sigset_t s;
        uint64_t one = 1;

        sigemptyset(&s);
        sigaddset(&s, SIGUSR2);
        pthread_sigmask(SIG_UNBLOCK, &s, NULL);
        (void) reclaim_job_run(w->job, &w->cancel);
        while (write(w->efd, &one, sizeof one) < 0 && errno == EINTR)
                ;
        return NULL;
}

static void worker_finish(ReclaimWorker *w) {
        if (!w->running)
                return;
        pthread_join(w->thread, NULL);
        w->running = false;
        w->io = sd_event_source_disable_unref(w->io);
        w->timer = sd_event_source_disable_unref(w->timer);
        ReclaimJob *j = TAKE_PTR(w->job);
        if (w->done)
                w->done(j, w->userdata);
        else
                reclaim_job_free(j);
}

static int on_worker_done(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        ReclaimWorker *w = userdata;
        uint64_t v;
        (void) read(fd, &v, sizeof v);
        worker_finish(w);
        return 0;
}

static int on_worker_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        ReclaimWorker *w = userdata;
        w->cancel = 1;
        if (w->running)
                pthread_kill(w->thread, SIGUSR2);
        return 0;
}

int reclaim_worker_start(ReclaimWorker **wp, sd_event *e, ReclaimJob *j, ReclaimDoneFn done, void *userdata) {
        ReclaimWorker *w = *wp;
        struct sigaction sa = { .sa_handler = on_sigusr2 }; /* no SA_RESTART: writes return EINTR */
        sigset_t block;
        int r;

        if (w && w->running)
                return -EBUSY;
        if (!w) {
                w = calloc(1, sizeof(ReclaimWorker));
                if (!w)
                        return -ENOMEM;
                w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
                if (w->efd < 0) {
                        r = negative_errno();
                        free(w);
                        return r;
                }
                *wp = w;
        }
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGUSR2, &sa, NULL) < 0)
                return negative_errno();
        r = sd_event_add_io(e, &w->io, w->efd, EPOLLIN, on_worker_done, w);
        if (r < 0)
                return r;
        r = sd_event_add_time_relative(e, &w->timer, CLOCK_MONOTONIC, j->cfg.timeout_usec + USEC_PER_SEC, 0,
                                       on_worker_timeout, w);
        if (r < 0) {
                w->io = sd_event_source_disable_unref(w->io);
                return r;
        }
        w->job = j;
        w->done = done;
        w->userdata = userdata;
        w->cancel = 0;

        /* The thread starts with SIGUSR2 blocked and unblocks it itself; the loop thread keeps it blocked. */
        sigemptyset(&block);
        sigaddset(&block, SIGUSR2);
        pthread_sigmask(SIG_BLOCK, &block, NULL);
        r = -pthread_create(&w->thread, NULL, worker_main, w);
        if (r < 0) {
                w->io = sd_event_source_disable_unref(w->io);
                w->timer = sd_event_source_disable_unref(w->timer);
                w->job = NULL;
                return r;
        }
        w->running = true;
        return 0;
}

bool reclaim_worker_busy(const ReclaimWorker *w) {
        return w && w->running;
}

ReclaimWorker *reclaim_worker_stop(ReclaimWorker *w) {
        if (!w)
                return NULL;
        if (w->running) {
                w->cancel = 1;
                pthread_kill(w->thread, SIGUSR2);
                worker_finish(w);
        }
        sd_event_source_disable_unref(w->io);
        sd_event_source_disable_unref(w->timer);
        if (w->efd >= 0)
                close(w->efd);
        free(w);
        return NULL;
}
