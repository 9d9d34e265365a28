/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>

#include "log.h"
#include "source-memcg-tree.h"
#include "util.h"

void memcg_scan_done(MemcgScan *s) {
        if (!s)
                return;
        for (size_t i = 0; i < s->n_holders; i++)
                free(s->holders[i].path);
        free(s->holders);
        *s = (MemcgScan){ 0 };
}

typedef struct ScanCtx {
        const char *root;
        const char *mount;
        uint64_t min_bytes;
        MemcgScan *out;
} ScanCtx;

static int read_cg_file(ScanCtx *c, const char *cg, const char *file, char **ret, size_t *ret_len) {
        _cleanup_(freep) char *p = NULL;
        if (asprintf(&p, "%s%s/%s", c->mount, streq(cg, "/") ? "" : cg, file) < 0)
                return -ENOMEM;
        c->out->files_read++;
        return read_file_at(c->root, p, 4 * 1024 * 1024, ret, ret_len);
}

static int read_cg_u64(ScanCtx *c, const char *cg, const char *file, uint64_t *ret) {
        _cleanup_(freep) char *buf = NULL;
        size_t len;
        int r = read_cg_file(c, cg, file, &buf, &len);
        if (r < 0)
                return r;
        const char *p = buf;
        return scan_u64(&p, buf + len, ret);
}

/* Child cgroup names (directories) of cg.  NULL-terminated list in *ret. */
static int list_children(ScanCtx *c, const char *cg, char ***ret, size_t *ret_n) {
        _cleanup_(freep) char *p = NULL, *full = NULL;
        char **v = NULL;
        size_t n = 0;
        DIR *d;

        if (asprintf(&p, "%s%s", c->mount, streq(cg, "/") ? "" : cg) < 0 || path_join_root(c->root, p, &full) < 0)
                return -ENOMEM;
        d = opendir(full);
        if (!d)
                return negative_errno();
        for (struct dirent *de; (de = readdir(d));) {
                if (de->d_name[0] == '.')
                        continue;
                if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
                        continue;
                if (de->d_type == DT_UNKNOWN) {
                        struct stat st;
                        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
                                continue;
                }
                char **nv = realloc(v, (n + 2) * sizeof(char *));
                if (!nv) {
                        closedir(d);
                        strv_freep(&v);
                        return -ENOMEM;
                }
                v = nv;
                if (asprintf(&v[n], "%s/%s", streq(cg, "/") ? "" : cg, de->d_name) < 0) {
                        closedir(d);
                        v[n] = NULL;
                        strv_freep(&v);
                        return -ENOMEM;
                }
                v[++n] = NULL;
        }
        closedir(d);
        *ret = v;
        *ret_n = n;
        return 0;
}

static int add_holder(ScanCtx *c, const char *cg, uint64_t dying, uint64_t dying_bytes, uint64_t usage, unsigned live) {
        MemcgScan *s = c->out;
        MemcgHolder *n = realloc(s->holders, (s->n_holders + 1) * sizeof(MemcgHolder));
        if (!n)
                return -ENOMEM;
        s->holders = n;
        s->holders[s->n_holders] = (MemcgHolder){ strdup(cg), dying, dying_bytes, usage, live };
        if (!s->holders[s->n_holders].path)
                return -ENOMEM;
        s->n_holders++;
        s->dying_total += dying;
        return 0;
}

/* v2: the memory-dying count of a cgroup from cgroup.stat; -ENOENT when it vanished. */
static int v2_dying(ScanCtx *c, const char *cg, uint64_t *ret) {
        _cleanup_(freep) char *buf = NULL;
        CgroupStat st;
        size_t len;
        int r = read_cg_file(c, cg, "cgroup.stat", &buf, &len);
        if (r < 0)
                return r;
        r = cgroup_stat_parse(buf, len, &st);
        if (r < 0)
                return r;
        int64_t v = st.nr_dying_subsys_memory >= 0 ? st.nr_dying_subsys_memory : st.nr_dying_descendants;
        *ret = v > 0 ? (uint64_t) v : 0;
        return 0;
}

/*
 * The values of n keys of cg's memory.stat, in ret[] (0 for a key not printed); *ret_seen: bit k set
 * when keys[k] was printed.  One read.  0 or -errno.
 */
static int read_stat_keys(ScanCtx *c, const char *cg, const char *const *keys, size_t n, uint64_t *ret,
                          unsigned *ret_seen) {
        _cleanup_(freep) char *buf = NULL;
        const char *pos, *end, *line;
        size_t len, l;
        int r = read_cg_file(c, cg, "memory.stat", &buf, &len);

        if (r < 0)
                return r;
        *ret_seen = 0;
        for (size_t k = 0; k < n; k++)
                ret[k] = 0;
        pos = buf;
        end = buf + len;
        while (next_line(&pos, end, &line, &l))
                for (size_t k = 0; k < n; k++)
                        if (line_has_key(line, l, keys[k], " ")) {
                                const char *p = line + strlen(keys[k]);
                                if (scan_u64(&p, line + l, &ret[k]) >= 0)
                                        *ret_seen |= 1u << k;
                        }
        return 0;
}

/*
 * The LRU lists of v2's memory.stat (memcg_stat_format(), mm/memcontrol.c 6.1-6.18; hierarchical): what
 * reclaim can scan.  Not "file": it counts shmem, which sits on the anon lists and which a write with
 * swappiness=0 (or without swap) never reclaims; not "anon": it counts only mapped anonymous pages, not
 * swap cache; not "unevictable" (mlocked, ramfs): no reclaim takes it.
 */
static const char *const v2_lru_keys[] = { "inactive_file", "active_file", "inactive_anon", "active_anon" };

/* v2: cg's LRU bytes, its subtree included: the file lists, and the anon lists too with `anon`.  0, -ENODATA
 * (a file list not printed) or -errno of the read. */
static int v2_lru_bytes(ScanCtx *c, const char *cg, bool anon, uint64_t *ret) {
        uint64_t v[ELEMENTSOF(v2_lru_keys)];
        unsigned seen;
        int r = read_stat_keys(c, cg, v2_lru_keys, ELEMENTSOF(v2_lru_keys), v, &seen);

        if (r < 0)
                return r;
        if ((seen & 3) != 3)
                return -ENODATA;
        *ret = v[0] + v[1] + (anon ? v[2] + v[3] : 0);
        return 0;
}

/* v2: cg's LRU bytes minus those of its live children kids[0..n) (a child removed meanwhile is dying now: its
 * pages stay counted); *ret_live (may be NULL): the children read.  0 or -errno of cg's read. */
static int v2_dying_lru(ScanCtx *c, const char *cg, char *const *kids, size_t n, bool anon, uint64_t *ret,
                        unsigned *ret_live) {
        uint64_t total, live = 0;
        unsigned n_live = 0;
        int r = v2_lru_bytes(c, cg, anon, &total);

        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                uint64_t u;
                r = v2_lru_bytes(c, kids[i], anon, &u);
                if (r == -ENOENT || r == -ENODEV)
                        continue;
                if (r < 0)
                        return r;
                live += u;
                n_live++;
        }
        *ret = total > live ? total - live : 0;
        if (ret_live)
                *ret_live = n_live;
        return 0;
}

static int scan_v2(ScanCtx *c, const char *cg, uint64_t dying, bool is_hierarchy_root) {
        _cleanup_(strv_freep) char **kids = NULL;
        uint64_t below = 0;
        size_t n = 0;
        int r;

        c->out->cgroups_visited++;
        r = list_children(c, cg, &kids, &n);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                uint64_t d;
                r = v2_dying(c, kids[i], &d);
                if (r == -ENOENT || r == -ENODEV)
                        continue;
                if (r < 0)
                        return r;
                below += d;
                if (d > 0) {
                        r = scan_v2(c, kids[i], d, false);
                        if (r < 0)
                                return r;
                }
        }
        if (!is_hierarchy_root && dying > below) {
                /* What the dying memcgs still hold: the holder's LRU pages minus its live children's (an
                 * inner cgroup of v2 runs no task: the rest is charged to removed descendants).  Not
                 * memory.current minus theirs: that also counts the kernel memory charged or reparented
                 * to the holder (its children's percpu, mem_cgroup_alloc(); reparented objcg slab),
                 * which no reclaim frees, and asked of memory.reclaim it came out of the live children's
                 * page cache (issue 14).  memory.current only where memory.stat has no LRU lists. */
                uint64_t usage = 0, lru = 0, live = 0;
                (void) read_cg_u64(c, cg, "memory.current", &usage);
                r = v2_dying_lru(c, cg, kids, n, true, &lru, NULL);
                if (r == -ENOENT || r == -ENODEV)
                        return 0;
                if (r < 0) {
                        for (size_t i = 0; i < n; i++) {
                                uint64_t u;
                                if (read_cg_u64(c, kids[i], "memory.current", &u) >= 0)
                                        live += u;
                        }
                        lru = usage > live ? usage - live : 0;
                }
                return add_holder(c, cg, dying - below, lru, usage, (unsigned) n);
        }
        return 0;
}

int memcg_dying_lru_read(const char *root, const char *mount, const char *cg, bool anon, uint64_t *ret_bytes,
                         unsigned *ret_live) {
        _cleanup_(strv_freep) char **kids = NULL;
        _cleanup_(freep) char *buf = NULL;
        MemcgScan counts = { 0 };
        ScanCtx c = { root ?: "/", mount, 0, &counts };
        size_t n = 0, len;
        int r;

        if (!cg || cg[0] != '/' || streq(cg, "/"))
                return -EINVAL;
        /* Flush the subtree's statistics first (see the header); without cpu.stat memory.stat is read as is. */
        (void) read_cg_file(&c, cg, "cpu.stat", &buf, &len);
        r = list_children(&c, cg, &kids, &n);
        if (r < 0)
                return r;
        return v2_dying_lru(&c, cg, kids, n, anon, ret_bytes, ret_live);
}

/*
 * v1: the LRU pages (page cache and anon) of a cgroup from one read of its
 * memory.stat: *ret_local its own ("cache" + "rss"), *ret_total its whole
 * subtree, removed children included ("total_cache" + "total_rss",
 * memcg1_stat_format(), mm/memcontrol-v1.c 6.12-6.18, mm/memcontrol.c 6.1),
 * in bytes.  Not memory.usage_in_bytes: that also counts kernel memory (the
 * percpu of every child memcg is charged to its parent, mem_cgroup_alloc())
 * and the per-CPU charge stock (up to 64 pages per CPU), which would make
 * parents of live children look like holders on hosts with many CPUs.
 * Without total_ fields (never seen on v1) the subtree falls back to
 * usage_in_bytes.  0 or -errno.
 */
static int v1_lru_bytes(ScanCtx *c, const char *cg, uint64_t *ret_total, uint64_t *ret_local) {
        static const char *const keys[] = { "cache", "rss", "total_cache", "total_rss" };
        uint64_t v[ELEMENTSOF(keys)];
        unsigned seen;
        int r = read_stat_keys(c, cg, keys, ELEMENTSOF(keys), v, &seen);

        if (r < 0)
                return r;
        *ret_local = v[0] + v[1];
        if (seen & 0xc) {
                *ret_total = v[2] + v[3];
                return 0;
        }
        return read_cg_u64(c, cg, "memory.usage_in_bytes", ret_total);
}

/* v1: returns the subtree's LRU bytes of cg in *ret_total and records cg as a holder if removed
 * children hold more than min_bytes of them. */
static int scan_v1(ScanCtx *c, const char *cg, bool is_hierarchy_root, uint64_t *ret_total) {
        _cleanup_(strv_freep) char **kids = NULL;
        uint64_t total = 0, local = 0, children = 0;
        size_t n = 0;
        unsigned live = 0;
        int r;

        c->out->cgroups_visited++;
        r = v1_lru_bytes(c, cg, &total, &local);
        if (r < 0)
                return r;
        r = list_children(c, cg, &kids, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                uint64_t u;
                r = scan_v1(c, kids[i], false, &u);
                if (r == -ENOENT || r == -ENODEV)
                        continue; /* removed while we looked */
                if (r < 0)
                        return r;
                children += u;
                live++;
        }
        *ret_total = total;
        if (is_hierarchy_root || total <= children + local + c->min_bytes)
                return 0;
        return add_holder(c, cg, 0, total - children - local, total, live);
}

static int holder_compare(const void *a, const void *b) {
        const MemcgHolder *x = a, *y = b;
        if (x->dying != y->dying)
                return x->dying > y->dying ? -1 : 1;
        if (x->dying_bytes != y->dying_bytes)
                return x->dying_bytes > y->dying_bytes ? -1 : 1;
        return strcmp(x->path, y->path);
}

int memcg_scan_holders(const char *root, const char *mount, CgroupMode mode, char *const *roots, uint64_t min_bytes,
                       MemcgScan *ret) {
        MemcgScan out = { .mode = mode };
        ScanCtx c = { root, mount, min_bytes, &out };
        _cleanup_(strv_freep) char **top = NULL;
        char *const *list = roots;
        size_t n;
        int r = 0;

        if (mode != CGROUP_MEMORY_V1 && mode != CGROUP_MEMORY_V2)
                return -EOPNOTSUPP;
        /* Default roots: every top-level cgroup (the hierarchy root itself never). */
        if (!roots || !roots[0]) {
                r = list_children(&c, "/", &top, &n);
                if (r < 0)
                        return r;
                list = top;
        }
        for (size_t i = 0; list && list[i] && r >= 0; i++) {
                const char *cg = list[i];
                if (streq(cg, "/") || cg[0] != '/')
                        continue;
                if (mode == CGROUP_MEMORY_V2) {
                        uint64_t d;
                        r = v2_dying(&c, cg, &d);
                        if (r >= 0 && d > 0)
                                r = scan_v2(&c, cg, d, false);
                } else {
                        uint64_t u;
                        r = scan_v1(&c, cg, false, &u);
                }
                if (r == -ENOENT || r == -ENODEV)
                        r = 0;
        }
        if (r < 0) {
                memcg_scan_done(&out);
                return r;
        }
        if (out.n_holders > 1)
                qsort(out.holders, out.n_holders, sizeof(MemcgHolder), holder_compare);
        *ret = out;
        return 0;
}

static const char *const refault_keys[2][_MEMCG_REFAULT_KEY_MAX] = {
        /* v2: hierarchical as printed */
        { [MEMCG_REFAULT_FILE] = "workingset_refault_file", [MEMCG_REFAULT_ALL] = "workingset_refault" },
        /* v1: the total_ column is the hierarchical one */
        { [MEMCG_REFAULT_FILE] = "total_workingset_refault_file", [MEMCG_REFAULT_ALL] = "total_workingset_refault" },
};

const char *memcg_refault_key_name(MemcgRefaultKey k, CgroupMode mode) {
        if (k < 0 || k >= _MEMCG_REFAULT_KEY_MAX || (mode != CGROUP_MEMORY_V1 && mode != CGROUP_MEMORY_V2))
                return NULL;
        return refault_keys[mode == CGROUP_MEMORY_V1][k];
}

int memcg_refault_parse(const char *buf, size_t len, CgroupMode mode, uint64_t *ret_pages, MemcgRefaultKey *ret_key) {
        const char *pos = buf, *end = buf + len, *line;
        uint64_t v[_MEMCG_REFAULT_KEY_MAX];
        bool seen[_MEMCG_REFAULT_KEY_MAX] = { false };
        size_t l;

        if (!buf || (mode != CGROUP_MEMORY_V1 && mode != CGROUP_MEMORY_V2))
                return -EINVAL;
        while (next_line(&pos, end, &line, &l))
                for (MemcgRefaultKey k = 0; k < _MEMCG_REFAULT_KEY_MAX; k++) {
                        const char *key = refault_keys[mode == CGROUP_MEMORY_V1][k], *p;
                        if (!line_has_key(line, l, key, " "))
                                continue;
                        if (seen[k])
                                return -EINVAL;
                        p = line + strlen(key);
                        if (scan_u64(&p, line + l, &v[k]) < 0 || skip_blanks(p, line + l) != line + l)
                                return -EINVAL;
                        seen[k] = true;
                }
        for (MemcgRefaultKey k = 0; k < _MEMCG_REFAULT_KEY_MAX; k++)
                if (seen[k]) {
                        *ret_pages = v[k];
                        if (ret_key)
                                *ret_key = k;
                        return 0;
                }
        return -ENOENT;
}

int memcg_refault_read(const char *root, const char *mount, CgroupMode mode, const char *cg, uint64_t *ret_pages) {
        _cleanup_(freep) char *p = NULL, *buf = NULL;
        size_t len;
        int r;

        if (asprintf(&p, "%s%s/memory.stat", mount, streq(cg, "/") ? "" : cg) < 0)
                return -ENOMEM;
        r = read_file_at(root ?: "/", p, 1024 * 1024, &buf, &len);
        if (r < 0)
                return r;
        r = memcg_refault_parse(buf, len, mode, ret_pages, NULL);
        /* A file without the key is a kernel before refault accounting: report it as unsupported. */
        return r == -ENOENT ? -EOPNOTSUPP : r;
}
