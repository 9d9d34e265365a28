/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tier 1 tests of the kernel-file readers: every captured fixture set
 * (values below were read off the files with awk, independently of the
 * parsers), literal strings for edge cases and error paths, fake root trees
 * built in a temporary directory, and the live kernel (read-only).
 */
#include <dirent.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "test-helpers.h"

#include "capture.h"
#include "sampler.h"
#include "snapshot.h"
#include "source-cgroup.h"
#include "source-meminfo.h"
#include "source-percpu-stats.h"
#include "source-psi.h"
#include "source-sysctl.h"
#include "source-table.h"
#include "source-topology.h"
#include "source-vmstat.h"
#include "source-zoneinfo.h"
#include "util.h"

/* ------------------------------------------------------------------------- */
/* Helpers */

static bool fixture_exists(const char *set, const char *name) {
        _cleanup_(freep) char *path = NULL;

        assert_true(asprintf(&path, "%s/%s/%s", fixtures_dir(), set, name) >= 0);
        return access(path, F_OK) == 0;
}

static bool set_is_numa2(const char *set) {
        return strstr(set, "numa2") != NULL;
}

static bool set_is_618(const char *set) {
        return strneq(set, "6.18.", 5);
}

/* Write a file below dir, creating parents. */
static void put_file(const char *dir, const char *rel, const char *content) {
        _cleanup_(freep) char *path = NULL, *parent = NULL;
        FILE *f;

        assert_true(asprintf(&path, "%s/%s", dir, rel) >= 0);
        parent = strdup(path);
        assert_non_null(parent);
        *strrchr(parent, '/') = 0;
        assert_int_equal(mkdir_p(parent, 0755), 0);
        f = fopen(path, "we");
        assert_non_null(f);
        assert_int_equal(fputs(content, f) >= 0, 1);
        assert_int_equal(fclose(f), 0);
}

static void put_dir(const char *dir, const char *rel) {
        _cleanup_(freep) char *path = NULL;

        assert_true(asprintf(&path, "%s/%s", dir, rel) >= 0);
        assert_int_equal(mkdir_p(path, 0755), 0);
}

static char *make_tmp_root(void) {
        char *t = strdup("/tmp/pcptune-test-XXXXXX");

        assert_non_null(t);
        assert_non_null(mkdtemp(t));
        return t;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) ftw;
        return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static void rm_tree(char *dir) {
        if (!dir)
                return;
        assert_int_equal(nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
        free(dir);
}

/* ------------------------------------------------------------------------- */
/* zoneinfo: every fixture file of every set */

typedef struct ZoneinfoExpect {
        const char *set, *file;
        size_t n_zones, n_populated, n_cpus;
        uint64_t count_sum;
        size_t check_zone;                /* the last populated zone */
        const char *name;
        int node;
        uint64_t managed, low, present, spanned;
        int64_t batch0, high0, high_min0, high_max0;   /* CPU 0 of check_zone */
} ZoneinfoExpect;

static const ZoneinfoExpect zoneinfo_expect[] = {
        { "6.1.0-57-amd64-smp16-numa2-8G", "zoneinfo-after-write-0.txt", 10, 4, 16, 7771, 7, "Normal", 1, 1031443, 14287, 1048576, 1048576, 63, 1785, -1, -1 },
        { "6.1.0-57-amd64-smp16-numa2-8G", "zoneinfo-after-write-1000.txt", 10, 4, 16, 7776, 7, "Normal", 1, 1031443, 14287, 1048576, 1048576, 63, 252, -1, -1 },
        { "6.1.0-57-amd64-smp16-numa2-8G", "zoneinfo-after-write-8.txt", 10, 4, 16, 7761, 7, "Normal", 1, 1031443, 14287, 1048576, 1048576, 63, 16116, -1, -1 },
        { "6.1.0-57-amd64-smp16-numa2-8G", "zoneinfo.txt", 10, 4, 16, 7297, 7, "Normal", 1, 1031443, 14287, 1048576, 1048576, 63, 1785, -1, -1 },
        { "6.1.0-57-amd64-smp2-1G", "zoneinfo-after-write-0.txt", 5, 2, 2, 493, 1, "DMA32", 0, 242034, 13857, 258016, 258016, 63, 6928, -1, -1 },
        { "6.1.0-57-amd64-smp2-1G", "zoneinfo-after-write-1000.txt", 5, 2, 2, 439, 1, "DMA32", 0, 242034, 13857, 258016, 258016, 63, 252, -1, -1 },
        { "6.1.0-57-amd64-smp2-1G", "zoneinfo-after-write-8.txt", 5, 2, 2, 3138, 1, "DMA32", 0, 242034, 13857, 258016, 258016, 63, 15127, -1, -1 },
        { "6.1.0-57-amd64-smp2-1G", "zoneinfo.txt", 5, 2, 2, 2855, 1, "DMA32", 0, 242034, 13857, 258016, 258016, 63, 6928, -1, -1 },
        { "6.1.0-57-amd64-smp8-4G", "zoneinfo-after-write-0.txt", 5, 3, 8, 4467, 2, "Normal", 0, 243473, 5143, 262144, 262144, 63, 642, -1, -1 },
        { "6.1.0-57-amd64-smp8-4G", "zoneinfo-after-write-1000.txt", 5, 3, 8, 4402, 2, "Normal", 0, 243473, 5143, 262144, 262144, 63, 252, -1, -1 },
        { "6.1.0-57-amd64-smp8-4G", "zoneinfo-after-write-8.txt", 5, 3, 8, 5200, 2, "Normal", 0, 243473, 5143, 262144, 262144, 63, 3804, -1, -1 },
        { "6.1.0-57-amd64-smp8-4G", "zoneinfo.txt", 5, 3, 8, 4956, 2, "Normal", 0, 243473, 5143, 262144, 262144, 63, 642, -1, -1 },
        { "6.1.192-vmtest-smp16-numa2-8G", "zoneinfo-after-write-0.txt", 6, 3, 16, 3033, 4, "Normal", 1, 1031662, 2474, 1048576, 1048576, 63, 309, -1, -1 },
        { "6.1.192-vmtest-smp16-numa2-8G", "zoneinfo-after-write-1000.txt", 6, 3, 16, 2985, 4, "Normal", 1, 1031662, 2474, 1048576, 1048576, 63, 252, -1, -1 },
        { "6.1.192-vmtest-smp16-numa2-8G", "zoneinfo-after-write-8.txt", 6, 3, 16, 2933, 4, "Normal", 1, 1031662, 2474, 1048576, 1048576, 63, 16119, -1, -1 },
        { "6.1.192-vmtest-smp16-numa2-8G", "zoneinfo.txt", 6, 3, 16, 2586, 4, "Normal", 1, 1031662, 2474, 1048576, 1048576, 63, 309, -1, -1 },
        { "6.1.192-vmtest-smp2-1G", "zoneinfo-after-write-0.txt", 3, 1, 2, 373, 0, "DMA32", 0, 255150, 1260, 262014, 262111, 63, 630, -1, -1 },
        { "6.1.192-vmtest-smp2-1G", "zoneinfo-after-write-1000.txt", 3, 1, 2, 244, 0, "DMA32", 0, 255150, 1260, 262014, 262111, 63, 252, -1, -1 },
        { "6.1.192-vmtest-smp2-1G", "zoneinfo-after-write-8.txt", 3, 1, 2, 758, 0, "DMA32", 0, 255150, 1260, 262014, 262111, 63, 15946, -1, -1 },
        { "6.1.192-vmtest-smp2-1G", "zoneinfo.txt", 3, 1, 2, 726, 0, "DMA32", 0, 255150, 1260, 262014, 262111, 63, 630, -1, -1 },
        { "6.1.192-vmtest-smp8-4G", "zoneinfo-after-write-0.txt", 3, 2, 8, 1755, 1, "Normal", 0, 243696, 727, 262144, 262144, 63, 252, -1, -1 },
        { "6.1.192-vmtest-smp8-4G", "zoneinfo-after-write-1000.txt", 3, 2, 8, 1704, 1, "Normal", 0, 243696, 727, 262144, 262144, 63, 252, -1, -1 },
        { "6.1.192-vmtest-smp8-4G", "zoneinfo-after-write-8.txt", 3, 2, 8, 1838, 1, "Normal", 0, 243696, 727, 262144, 262144, 63, 3807, -1, -1 },
        { "6.1.192-vmtest-smp8-4G", "zoneinfo.txt", 3, 2, 8, 1862, 1, "Normal", 0, 243696, 727, 262144, 262144, 63, 252, -1, -1 },
        { "6.12.117+deb12-amd64-smp16-numa2-8G", "zoneinfo-after-write-0.txt", 10, 4, 16, 14195, 7, "Normal", 1, 1031383, 14272, 1048576, 1048576, 63, 1784, -1, -1 },
        { "6.12.117+deb12-amd64-smp16-numa2-8G", "zoneinfo-after-write-1000.txt", 10, 4, 16, 14771, 7, "Normal", 1, 1031383, 14272, 1048576, 1048576, 63, 1784, -1, -1 },
        { "6.12.117+deb12-amd64-smp16-numa2-8G", "zoneinfo-after-write-8.txt", 10, 4, 16, 14986, 7, "Normal", 1, 1031383, 14272, 1048576, 1048576, 63, 1784, -1, -1 },
        { "6.12.117+deb12-amd64-smp16-numa2-8G", "zoneinfo.txt", 10, 4, 16, 14537, 7, "Normal", 1, 1031383, 14272, 1048576, 1048576, 63, 1784, -1, -1 },
        { "6.12.117+deb12-amd64-smp2-1G", "zoneinfo-after-write-0.txt", 5, 2, 2, 2818, 1, "DMA32", 0, 243788, 13858, 258016, 258016, 63, 6992, -1, -1 },
        { "6.12.117+deb12-amd64-smp2-1G", "zoneinfo-after-write-1000.txt", 5, 2, 2, 4153, 1, "DMA32", 0, 243788, 13858, 258016, 258016, 63, 252, -1, -1 },
        { "6.12.117+deb12-amd64-smp2-1G", "zoneinfo-after-write-8.txt", 5, 2, 2, 4788, 1, "DMA32", 0, 243788, 13858, 258016, 258016, 63, 15236, -1, -1 },
        { "6.12.117+deb12-amd64-smp2-1G", "zoneinfo.txt", 5, 2, 2, 4299, 1, "DMA32", 0, 243788, 13858, 258016, 258016, 63, 8985, -1, -1 },
        { "6.12.117+deb12-amd64-smp8-4G", "zoneinfo-after-write-0.txt", 5, 3, 8, 5622, 2, "Normal", 0, 233875, 4895, 262144, 262144, 63, 611, -1, -1 },
        { "6.12.117+deb12-amd64-smp8-4G", "zoneinfo-after-write-1000.txt", 5, 3, 8, 6153, 2, "Normal", 0, 233875, 4895, 262144, 262144, 63, 252, -1, -1 },
        { "6.12.117+deb12-amd64-smp8-4G", "zoneinfo-after-write-8.txt", 5, 3, 8, 9581, 2, "Normal", 0, 233875, 4895, 262144, 262144, 63, 2841, -1, -1 },
        { "6.12.117+deb12-amd64-smp8-4G", "zoneinfo.txt", 5, 3, 8, 9330, 2, "Normal", 0, 233875, 4895, 262144, 262144, 63, 2841, -1, -1 },
        { "6.12.117-vmtest-smp16-numa2-8G", "zoneinfo-after-write-0.txt", 6, 3, 16, 4120, 4, "Normal", 1, 1031655, 2473, 1048576, 1048576, 63, 309, -1, -1 },
        { "6.12.117-vmtest-smp16-numa2-8G", "zoneinfo-after-write-1000.txt", 6, 3, 16, 4078, 4, "Normal", 1, 1031655, 2473, 1048576, 1048576, 63, 309, -1, -1 },
        { "6.12.117-vmtest-smp16-numa2-8G", "zoneinfo-after-write-8.txt", 6, 3, 16, 4029, 4, "Normal", 1, 1031655, 2473, 1048576, 1048576, 63, 309, -1, -1 },
        { "6.12.117-vmtest-smp16-numa2-8G", "zoneinfo.txt", 6, 3, 16, 4198, 4, "Normal", 1, 1031655, 2473, 1048576, 1048576, 63, 642, -1, -1 },
        { "6.12.117-vmtest-smp2-1G", "zoneinfo-after-write-0.txt", 3, 1, 2, 515, 0, "DMA32", 0, 255108, 1262, 262014, 262111, 63, 694, -1, -1 },
        { "6.12.117-vmtest-smp2-1G", "zoneinfo-after-write-1000.txt", 3, 1, 2, 574, 0, "DMA32", 0, 255108, 1262, 262014, 262111, 63, 252, -1, -1 },
        { "6.12.117-vmtest-smp2-1G", "zoneinfo-after-write-8.txt", 3, 1, 2, 1567, 0, "DMA32", 0, 255108, 1262, 262014, 262111, 63, 15944, -1, -1 },
        { "6.12.117-vmtest-smp2-1G", "zoneinfo.txt", 3, 1, 2, 1301, 0, "DMA32", 0, 255108, 1262, 262014, 262111, 63, 1513, -1, -1 },
        { "6.12.117-vmtest-smp8-4G", "zoneinfo-after-write-0.txt", 3, 2, 8, 2291, 1, "Normal", 0, 243689, 727, 262144, 262144, 63, 252, -1, -1 },
        { "6.12.117-vmtest-smp8-4G", "zoneinfo-after-write-1000.txt", 3, 2, 8, 2239, 1, "Normal", 0, 243689, 727, 262144, 262144, 63, 252, -1, -1 },
        { "6.12.117-vmtest-smp8-4G", "zoneinfo-after-write-8.txt", 3, 2, 8, 2562, 1, "Normal", 0, 243689, 727, 262144, 262144, 63, 3807, -1, -1 },
        { "6.12.117-vmtest-smp8-4G", "zoneinfo.txt", 3, 2, 8, 1890, 1, "Normal", 0, 243689, 727, 262144, 262144, 63, 1221, -1, -1 },
        { "6.18.44-fc-live-smp2-24G", "zoneinfo.txt", 5, 3, 2, 2305, 2, "Normal", 0, 360448, 6693, 5505024, 5505024, 63, 3409, 3346, 22528 },
};

static void check_zoneinfo_expect(const ZoneinfoExpect *e, const Zoneinfo *zi) {
        size_t populated = 0;
        const Zone *z;

        assert_int_equal(zi->n_zones, e->n_zones);
        assert_int_equal(zi->has_high_min_max, set_is_618(e->set));
        for (size_t i = 0; i < zi->n_zones; i++) {
                z = &zi->zones[i];
                assert_true(z->managed_pages <= z->present_pages);
                assert_true(z->present_pages <= z->spanned_pages);
                if (!z->populated) {
                        assert_null(z->cpus);
                        assert_int_equal(z->n_cpus, 0);
                        assert_int_equal(z->present_pages, 0);
                        continue;
                }
                populated++;
                assert_int_equal(z->n_cpus, e->n_cpus);
                for (size_t c = 0; c < z->n_cpus; c++) {
                        assert_int_equal(z->cpus[c].cpu, (int) c);    /* every fixture has CPUs 0..n-1 online */
                        assert_true(z->cpus[c].batch >= 1);
                        if (zi->has_high_min_max) {
                                assert_true(z->cpus[c].high_min >= 0);
                                assert_true(z->cpus[c].high_max >= z->cpus[c].high_min);
                        } else {
                                assert_int_equal(z->cpus[c].high_min, -1);
                                assert_int_equal(z->cpus[c].high_max, -1);
                        }
                }
        }
        assert_int_equal(populated, e->n_populated);
        assert_int_equal(zoneinfo_pcp_count_pages(zi), e->count_sum);

        z = &zi->zones[e->check_zone];
        assert_string_equal(z->name, e->name);
        assert_int_equal(z->node, e->node);
        assert_true(z->populated);
        assert_int_equal(z->managed_pages, e->managed);
        assert_int_equal(z->low_pages, e->low);
        assert_int_equal(z->present_pages, e->present);
        assert_int_equal(z->spanned_pages, e->spanned);
        assert_int_equal(z->cpus[0].batch, e->batch0);
        assert_int_equal(z->cpus[0].high, e->high0);
        assert_int_equal(z->cpus[0].high_min, e->high_min0);
        assert_int_equal(z->cpus[0].high_max, e->high_max0);
}

static void test_zoneinfo_fixtures(void **state) {
        (void) state;

        for (size_t i = 0; i < ELEMENTSOF(zoneinfo_expect); i++) {
                const ZoneinfoExpect *e = &zoneinfo_expect[i];
                _cleanup_(freep) char *buf = NULL;
                Zoneinfo zi = {};
                size_t len;

                buf = fixture_read(e->set, e->file, &len);
                assert_int_equal(zoneinfo_parse(buf, len, &zi), 0);
                check_zoneinfo_expect(e, &zi);
                zoneinfo_done(&zi);
                assert_null(zi.zones);
                assert_int_equal(zi.n_zones, 0);
        }
}

/* Every set and every zoneinfo file in it has a row above (the table is complete). */
static void test_zoneinfo_fixture_table_complete(void **state) {
        (void) state;

        for (const char *const *set = fixture_sets; *set; set++) {
                _cleanup_(freep) char *dir = NULL;
                DIR *d;
                struct dirent *de;
                unsigned files = 0;

                assert_true(asprintf(&dir, "%s/%s", fixtures_dir(), *set) >= 0);
                d = opendir(dir);
                assert_non_null(d);
                while ((de = readdir(d))) {
                        bool found = false;

                        if (!strneq(de->d_name, "zoneinfo", 8))
                                continue;
                        files++;
                        for (size_t i = 0; i < ELEMENTSOF(zoneinfo_expect); i++)
                                if (streq(zoneinfo_expect[i].set, *set) && streq(zoneinfo_expect[i].file, de->d_name))
                                        found = true;
                        if (!found)
                                fail_msg("no expectations for %s/%s", *set, de->d_name);
                }
                closedir(d);
                assert_true(files >= 1);
        }
}

/* Details of the 6.18 (6.13+ layout) and 6.1 files, checked line by line. */
static void test_zoneinfo_details(void **state) {
        _cleanup_(freep) char *b618 = NULL, *b61 = NULL;
        Zoneinfo zi = {};
        size_t len;
        const Zone *z;

        (void) state;

        b618 = fixture_read("6.18.44-fc-live-smp2-24G", "zoneinfo.txt", &len);
        assert_int_equal(zoneinfo_parse(b618, len, &zi), 0);
        z = &zi.zones[0];
        assert_string_equal(z->name, "DMA");
        assert_int_equal(z->free_pages, 3840);
        assert_int_equal(z->boost_pages, 0);
        assert_int_equal(z->min_pages, 57);
        assert_int_equal(z->low_pages, 71);
        assert_int_equal(z->high_pages, 85);
        assert_int_equal(z->cpus[1].cpu, 1);
        assert_int_equal(z->cpus[1].high, 0);       /* never-used pcp: memset value */
        assert_int_equal(z->cpus[1].high_min, 35);
        assert_int_equal(z->cpus[1].high_max, 240);
        z = &zi.zones[2];
        assert_int_equal(z->cpus[1].count, 1820);
        assert_int_equal(z->cpus[1].high, 6125);
        z = &zi.zones[3];
        assert_string_equal(z->name, "Movable");
        assert_false(z->populated);
        assert_int_equal(z->low_pages, 32);
        assert_int_equal(z->min_pages, 32);
        assert_string_equal(zi.zones[4].name, "Device");
        zoneinfo_done(&zi);

        b61 = fixture_read("6.1.0-57-amd64-smp2-1G", "zoneinfo.txt", &len);
        assert_int_equal(zoneinfo_parse(b61, len, &zi), 0);
        assert_false(zi.has_high_min_max);
        z = &zi.zones[0];
        assert_string_equal(z->name, "DMA");
        assert_int_equal(z->free_pages, 3808);
        assert_int_equal(z->min_pages, 177);
        assert_int_equal(z->high_pages, 265);
        assert_int_equal(z->cpus[0].high, 110);
        assert_int_equal(z->cpus[0].batch, 1);
        z = &zi.zones[1];
        assert_int_equal(z->cpus[0].count, 288);
        assert_int_equal(z->cpus[1].count, 2567);
        assert_int_equal(z->free_pages, 232659);
        zoneinfo_done(&zi);
        zoneinfo_done(NULL);
        assert_int_equal(zoneinfo_pcp_count_pages(NULL), 0);
}

static void test_zoneinfo_read_roots(void **state) {
        (void) state;

        for (const char *const *set = fixture_sets; *set; set++) {
                _cleanup_(freep) char *root = fixture_root(*set, "root");
                Zoneinfo zi = {};
                const ZoneinfoExpect *e = NULL;

                for (size_t i = 0; i < ELEMENTSOF(zoneinfo_expect); i++)
                        if (streq(zoneinfo_expect[i].set, *set) && streq(zoneinfo_expect[i].file, "zoneinfo.txt"))
                                e = &zoneinfo_expect[i];
                assert_non_null(e);
                assert_int_equal(zoneinfo_read(root, &zi), 0);
                check_zoneinfo_expect(e, &zi);
                zoneinfo_done(&zi);

                if (!set_is_618(*set)) {
                        _cleanup_(freep) char *r8 = fixture_root(*set, "root-frac-8");
                        assert_int_equal(zoneinfo_read(r8, &zi), 0);
                        assert_int_equal(zi.n_zones, e->n_zones);
                        zoneinfo_done(&zi);
                }
        }
        assert_int_equal(zoneinfo_read("/nonexistent-pcptune-root", &(Zoneinfo) {}), -ENOENT);
}

/* Build a zoneinfo with ncpus CPU sub-blocks per populated zone and nodes nodes
 * from a real one (copies of CPU 0's sub-block; node blocks repeated).  Shared
 * idea with the benchmark: exercises the geometric growth of cpus[]. */
static char *zoneinfo_replicate(const char *src, size_t src_len, unsigned ncpus, unsigned nodes, size_t *ret_len) {
        char *out = NULL;
        size_t out_len = 0;
        FILE *f = open_memstream(&out, &out_len);
        int src_nodes = 0;

        assert_non_null(f);
        /* Count the source's nodes. */
        for (const char *p = src; p && p < src + src_len; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
                int n;
                if (sscanf(p, "Node %d,", &n) == 1)
                        src_nodes = MAX(src_nodes, n + 1);
        }
        assert_true(src_nodes > 0);

        for (unsigned node = 0; node < nodes; node++) {
                int want = (int) node % src_nodes, cur = -1;
                const char *pos = src, *end = src + src_len, *line;
                size_t ll;
                bool in_cpus = false;

                while (next_line(&pos, end, &line, &ll)) {
                        int n;
                        char name[32];

                        if (sscanf(line, "Node %d, zone %31s", &n, name) == 2) {
                                cur = n;
                                in_cpus = false;
                                if (cur == want)
                                        fprintf(f, "Node %u, zone %8s\n", node, name);
                                continue;
                        }
                        if (cur != want)
                                continue;
                        if (strneq(line, "    cpu:", 8)) {
                                const char *tpl = line, *tpl_end, *q = pos, *l2;
                                size_t l2len;

                                if (in_cpus)
                                        continue;
                                in_cpus = true;
                                /* The template: "cpu: 0" up to its "vm stats threshold" line. */
                                tpl_end = pos;
                                while (next_line(&q, end, &l2, &l2len)) {
                                        tpl_end = q;
                                        if (strneq(l2, "  vm stats threshold", 20))
                                                break;
                                }
                                for (unsigned c = 0; c < ncpus; c++) {
                                        const char *body = memchr(tpl, '\n', (size_t) (tpl_end - tpl));
                                        assert_non_null(body);
                                        fprintf(f, "    cpu: %u\n%.*s", c, (int) (tpl_end - body - 1), body + 1);
                                }
                                continue;
                        }
                        if (in_cpus && (strneq(line, "              ", 14) || strneq(line, "  vm stats threshold", 20)))
                                continue;
                        in_cpus = false;
                        fprintf(f, "%.*s\n", (int) ll, line);
                }
        }
        assert_int_equal(fclose(f), 0);
        *ret_len = out_len;
        return out;
}

static void test_zoneinfo_many_cpus(void **state) {
        _cleanup_(freep) char *src = NULL, *big = NULL;
        Zoneinfo small = {}, zi = {};
        size_t len, big_len;
        uint64_t cpu0_sum = 0;

        (void) state;

        src = fixture_read("6.18.44-fc-live-smp2-24G", "zoneinfo.txt", &len);
        assert_int_equal(zoneinfo_parse(src, len, &small), 0);
        for (size_t i = 0; i < small.n_zones; i++)
                if (small.zones[i].populated)
                        cpu0_sum += (uint64_t) small.zones[i].cpus[0].count;

        big = zoneinfo_replicate(src, len, 300, 3, &big_len);
        assert_int_equal(zoneinfo_parse(big, big_len, &zi), 0);
        assert_int_equal(zi.n_zones, 15);
        assert_true(zi.has_high_min_max);
        for (size_t i = 0; i < zi.n_zones; i++) {
                const Zone *z = &zi.zones[i];
                assert_int_equal(z->node, (int) (i / 5));
                assert_string_equal(z->name, small.zones[i % 5].name);
                assert_int_equal(z->populated, small.zones[i % 5].populated);
                if (z->populated) {
                        assert_int_equal(z->n_cpus, 300);
                        assert_int_equal(z->cpus[299].cpu, 299);
                        assert_int_equal(z->cpus[299].high_max, small.zones[i % 5].cpus[0].high_max);
                }
        }
        assert_int_equal(zoneinfo_pcp_count_pages(&zi), cpu0_sum * 300 * 3);
        zoneinfo_done(&zi);
        zoneinfo_done(&small);
}

/* A small zoneinfo in the ≤ 6.12 layout: one populated zone, one empty one. */
#define ZI_OLD_HEAD                                      \
        "Node 0, zone    DMA32\n"                        \
        "  per-node stats\n"                             \
        "      nr_inactive_anon 68\n"                    \
        "      low_something 99\n"                       \
        "  pages free     1000\n"                        \
        "        boost    5\n"                           \
        "        min      100\n"                         \
        "        low      125\n"                         \
        "        high     150\n"                         \
        "        spanned  4096\n"                        \
        "        present  4000\n"                        \
        "        managed  3900\n"                        \
        "        protection: (0, 0, 0)\n"                \
        "      nr_free_pages 1000\n"                     \
        "      high_something 7\n"                       \
        "  pagesets\n"

#define ZI_OLD_CPU(n, count)                             \
        "    cpu: " #n "\n"                              \
        "              count: " #count "\n"              \
        "              high:  378\n"                     \
        "              batch: 63\n"                      \
        "  vm stats threshold: 8\n"

#define ZI_TRAILER                                       \
        "  node_unreclaimable:  0\n"                     \
        "  start_pfn:           4096\n"

#define ZI_EMPTY_ZONE                                    \
        "Node 0, zone  Movable\n"                        \
        "  pages free     0\n"                           \
        "        boost    0\n"                           \
        "        min      32\n"                          \
        "        low      32\n"                          \
        "        high     32\n"                          \
        "        spanned  0\n"                           \
        "        present  0\n"                           \
        "        managed  0\n"                           \
        "        protection: (0, 0, 0)\n"

static int parse_zi_literal(const char *s, Zoneinfo *zi) {
        return zoneinfo_parse(s, strlen(s), zi);
}

static void test_zoneinfo_literal_old_layout(void **state) {
        const char *s = ZI_OLD_HEAD ZI_OLD_CPU(0, 10) ZI_OLD_CPU(3, -2) ZI_TRAILER ZI_EMPTY_ZONE;
        Zoneinfo zi = {};

        (void) state;
        assert_int_equal(parse_zi_literal(s, &zi), 0);
        assert_int_equal(zi.n_zones, 2);
        assert_false(zi.has_high_min_max);
        /* "low_something"/"high_something" are stat lines, not the low/high watermarks. */
        assert_int_equal(zi.zones[0].low_pages, 125);
        assert_int_equal(zi.zones[0].high_pages, 150);
        assert_int_equal(zi.zones[0].boost_pages, 5);
        assert_int_equal(zi.zones[0].n_cpus, 2);
        assert_int_equal(zi.zones[0].cpus[1].cpu, 3);
        assert_int_equal(zi.zones[0].cpus[1].count, -2);
        assert_int_equal(zi.zones[0].cpus[1].high_min, -1);
        assert_int_equal(zoneinfo_pcp_count_pages(&zi), 10);    /* negative counts are not pages */
        assert_false(zi.zones[1].populated);
        assert_string_equal(zi.zones[1].name, "Movable");
        zoneinfo_done(&zi);

        /* Without a trailing newline and with unknown trailer lines (post-6.18 kernels). */
        s = ZI_OLD_HEAD ZI_OLD_CPU(0, 1) ZI_TRAILER "  reserved_highatomic: 0\n  free_highatomic: 0";
        assert_int_equal(parse_zi_literal(s, &zi), 0);
        assert_int_equal(zi.zones[0].n_cpus, 1);
        zoneinfo_done(&zi);
}

static void test_zoneinfo_literal_new_layout(void **state) {
        const char *s =
                "Node 1, zone   Normal\n"
                "  pages free     10\n"
                "        boost    0\n"
                "        min      1\n"
                "        low      2\n"
                "        high     3\n"
                "        promo    4\n"
                "        spanned  100\n"
                "        present  100\n"
                "        managed  90\n"
                "        cma      0\n"
                "        protection: (0, 0)\n"
                "  pagesets\n"
                "    cpu: 0\n"
                "              count:    5\n"
                "              high:     6\n"
                "              batch:    7\n"
                "              high_min: 8\n"
                "              high_max: 9\n"
                "  vm stats threshold: 1\n"
                "  node_unreclaimable:  0\n"
                "  start_pfn:           1\n";
        Zoneinfo zi = {};

        (void) state;
        assert_int_equal(parse_zi_literal(s, &zi), 0);
        assert_true(zi.has_high_min_max);
        assert_int_equal(zi.zones[0].node, 1);
        assert_int_equal(zi.zones[0].cpus[0].high_min, 8);
        assert_int_equal(zi.zones[0].cpus[0].high_max, 9);
        assert_int_equal(zi.zones[0].cpus[0].batch, 7);
        zoneinfo_done(&zi);
}

/* Every error path: each string must be rejected with -EINVAL. */
static void test_zoneinfo_errors(void **state) {
        static const char *const bad[] = {
                "",
                "\n\n",
                "garbage\n",
                "  pages free 1\n",                                      /* no zone header */
                "Node x, zone DMA\n",
                "Node 0 zone DMA\n",
                "Node 0, zone\n",
                "Node 0, zone ThisNameIsFarTooLong\n",
                "Nodes 0, zone DMA\n",
                /* missing "low" */
                "Node 0, zone DMA\n  pages free 0\n        min 0\n        high 0\n        spanned 0\n"
                "        present 0\n        managed 0\n        protection: (0)\n",
                /* malformed number */
                "Node 0, zone DMA\n  pages free 0\n        min 1x\n        low 0\n        high 0\n"
                "        spanned 0\n        present 0\n        managed 0\n        protection: (0)\n",
                /* overflow */
                "Node 0, zone DMA\n  pages free 0\n        min 99999999999999999999\n        low 0\n        high 0\n"
                "        spanned 0\n        present 0\n        managed 0\n        protection: (0)\n",
                /* repeated key */
                "Node 0, zone DMA\n  pages free 0\n        min 0\n        min 0\n        low 0\n        high 0\n"
                "        spanned 0\n        present 0\n        managed 0\n        protection: (0)\n",
                /* missing protection: (truncated) */
                "Node 0, zone DMA\n  pages free 0\n        min 0\n        low 0\n        high 0\n"
                "        spanned 0\n        present 0\n        managed 0\n",
                /* managed > present, present > spanned (otherwise complete zones) */
                "Node 0, zone DMA\n  pages free 0\n        min 0\n        low 0\n        high 0\n"
                "        spanned 10\n        present 5\n        managed 6\n        protection: (0)\n"
                "  pagesets\n" ZI_OLD_CPU(0, 1) ZI_TRAILER,
                "Node 0, zone DMA\n  pages free 0\n        min 0\n        low 0\n        high 0\n"
                "        spanned 4\n        present 5\n        managed 5\n        protection: (0)\n"
                "  pagesets\n" ZI_OLD_CPU(0, 1) ZI_TRAILER,
                /* present != 0 but no pagesets: truncated after protection */
                "Node 0, zone DMA\n  pages free 0\n        min 0\n        low 0\n        high 0\n"
                "        spanned 5\n        present 5\n        managed 5\n        protection: (0)\n",
                /* pagesets in a zone with present 0 */
                ZI_EMPTY_ZONE "  pagesets\n" ZI_OLD_CPU(0, 1) ZI_TRAILER,
                /* pagesets without any CPU */
                ZI_OLD_HEAD ZI_TRAILER,
                /* a CPU without batch (truncated) */
                ZI_OLD_HEAD "    cpu: 0\n              count: 1\n              high:  2\n",
                ZI_OLD_HEAD "    cpu: 0\n              count: 1\n              high:  2\n" ZI_TRAILER,
                /* no start_pfn (truncated after the last CPU) */
                ZI_OLD_HEAD ZI_OLD_CPU(0, 1),
                /* per-CPU value outside a CPU block */
                ZI_OLD_HEAD "              count: 1\n" ZI_OLD_CPU(0, 1) ZI_TRAILER,
                /* repeated per-CPU key */
                ZI_OLD_HEAD "    cpu: 0\n              count: 1\n              count: 1\n              high:  2\n"
                "              batch: 3\n" ZI_TRAILER,
                /* malformed per-CPU value */
                ZI_OLD_HEAD "    cpu: 0\n              count: 1a\n              high:  2\n              batch: 3\n" ZI_TRAILER,
                ZI_OLD_HEAD "    cpu: 0\n              count:\n              high:  2\n              batch: 3\n" ZI_TRAILER,
                ZI_OLD_HEAD "    cpu: -1\n              count: 1\n              high:  2\n              batch: 3\n" ZI_TRAILER,
                /* repeated or decreasing CPU id */
                ZI_OLD_HEAD ZI_OLD_CPU(1, 1) ZI_OLD_CPU(1, 1) ZI_TRAILER,
                ZI_OLD_HEAD ZI_OLD_CPU(2, 1) ZI_OLD_CPU(1, 1) ZI_TRAILER,
                /* high_min without high_max */
                ZI_OLD_HEAD "    cpu: 0\n              count: 1\n              high:  2\n              batch: 3\n"
                "              high_min: 3\n" ZI_TRAILER,
                /* two layouts in one file */
                ZI_OLD_HEAD ZI_OLD_CPU(0, 1)
                "    cpu: 1\n              count: 1\n              high:  2\n              batch: 3\n"
                "              high_min: 3\n              high_max: 4\n" ZI_TRAILER,
                /* a CPU block after the trailer */
                ZI_OLD_HEAD ZI_OLD_CPU(0, 1) ZI_TRAILER ZI_OLD_CPU(1, 1),
                /* a line at column 0 that is not a zone header */
                ZI_OLD_HEAD ZI_OLD_CPU(0, 1) ZI_TRAILER "oops\n",
                /* header followed by something else than per-node stats / pages free */
                "Node 0, zone DMA\n  something 1\n",
        };
        Zoneinfo zi = { .n_zones = 12345 };

        (void) state;
        assert_each_einval(bad, parse_zi_literal(bad_s, &zi));
        assert_int_equal(zi.n_zones, 12345);

        /* Found by fuzz-zoneinfo: a zone name made of NUL and control bytes. */
        static const char nul_name[] =
                "Node 0, zone \0\0\x13\n  pages free 0\n        min 0\n        low 0\n        high 0\n"
                "        spanned 0\n        present 0\n        managed 0\n        protection: (0)\n";
        assert_int_equal(zoneinfo_parse(nul_name, sizeof(nul_name) - 1, &zi), -EINVAL);
        assert_int_equal(parse_zi_literal("Node 0, zone D\x01MA\n", &zi), -EINVAL);
        assert_int_equal(parse_zi_literal("Node 0, zone DMA\xc3\xa9\n", &zi), -EINVAL);
}

/* Cut a real file at every line boundary: a prefix may only parse when it ends
 * at a zone boundary (the next line is a "Node" header or the end). */
/* A malformed line is reported at its own line number. */
static void test_zoneinfo_error_line(void **state) {
        _cleanup_(freep) char *buf = NULL, *bad = NULL;
        ZoneinfoError err = { 0 };
        Zoneinfo zi = {};
        size_t len, at = 0, line = 1;

        (void) state;
        buf = fixture_read("6.18.44-fc-live-smp2-24G", "zoneinfo.txt", &len);
        bad = strdup(buf);
        assert_non_null(bad);
        /* Line 7 starts at column 0 without being a "Node" header. */
        while (line < 7)
                line += bad[at++] == '\n';
        bad[at] = 'X';
        assert_int_equal(zoneinfo_parse_at(bad, len, &zi, &err), -EINVAL);
        assert_int_equal(err.line, 7);
        assert_false(err.incomplete);
}

static void test_zoneinfo_truncated(void **state) {
        static const char *const files[][2] = {
                { "6.18.44-fc-live-smp2-24G", "zoneinfo.txt" },
                { "6.1.0-57-amd64-smp2-1G", "zoneinfo.txt" },
                { "6.12.117-vmtest-smp16-numa2-8G", "zoneinfo.txt" },
        };

        (void) state;
        for (size_t f = 0; f < ELEMENTSOF(files); f++) {
                _cleanup_(freep) char *buf = NULL;
                size_t len;
                unsigned ok = 0, rejected = 0;

                buf = fixture_read(files[f][0], files[f][1], &len);
                for (size_t cut = 0; cut < len; cut++) {
                        Zoneinfo zi = {};
                        int r;

                        if (cut > 0 && buf[cut - 1] != '\n')
                                continue;
                        ZoneinfoError err = { 0 };
                        r = zoneinfo_parse_at(buf, cut, &zi, &err);
                        if (r == 0) {
                                ok++;
                                if (!strneq(buf + cut, "Node ", 5))
                                        fail_msg("%s cut at %zu accepted: \"%.20s\"", files[f][0], cut, buf + cut);
                                zoneinfo_done(&zi);
                        } else {
                                assert_int_equal(r, -EINVAL);
                                rejected++;
                                /* Issue 9 item 12: a file cut at a line end is incomplete at its last zone's
                                 * "Node" line (or, with no zone at all, at its end). */
                                size_t line = 1, at = 0;
                                for (; at < cut && line < err.line; at++)
                                        line += buf[at] == '\n';
                                assert_true(err.incomplete);
                                if (cut > 0 && err.line > 0 && !strneq(buf + at, "Node ", 5))
                                        fail_msg("%s cut at %zu: line %zu is not a zone header: \"%.20s\"", files[f][0],
                                                 cut, err.line, buf + at);
                        }
                }
                assert_true(ok >= 1);
                assert_true(rejected > ok);
        }
}

/* ------------------------------------------------------------------------- */
/* meminfo */

static const struct {
        const char *set;
        uint64_t total, free, percpu;
} meminfo_expect[] = {
        { "6.1.0-57-amd64-smp16-numa2-8G", 8140408, 8050632, 4160 },
        { "6.1.0-57-amd64-smp2-1G", 983496, 945868, 520 },
        { "6.1.0-57-amd64-smp8-4G", 4007660, 3953128, 2080 },
        { "6.1.192-vmtest-smp16-numa2-8G", 8178896, 8146760, 2560 },
        { "6.1.192-vmtest-smp2-1G", 1020600, 1011492, 320 },
        { "6.1.192-vmtest-smp8-4G", 4045292, 4030968, 1280 },
        { "6.12.117+deb12-amd64-smp16-numa2-8G", 8147092, 8037428, 4416 },
        { "6.12.117+deb12-amd64-smp2-1G", 990512, 954512, 552 },
        { "6.12.117+deb12-amd64-smp8-4G", 4014540, 3950972, 2208 },
        { "6.12.117-vmtest-smp16-numa2-8G", 8178672, 8138580, 2624 },
        { "6.12.117-vmtest-smp2-1G", 1020432, 1008236, 328 },
        { "6.12.117-vmtest-smp8-4G", 4045100, 4029084, 1312 },
        { "6.18.44-fc-live-smp2-24G", 24683656, 24499508, 712 },
};

static void test_meminfo_fixtures(void **state) {
        (void) state;

        assert_int_equal(ELEMENTSOF(meminfo_expect), ELEMENTSOF(fixture_sets) - 1);
        for (size_t i = 0; i < ELEMENTSOF(meminfo_expect); i++) {
                _cleanup_(freep) char *buf = NULL, *root = NULL;
                Meminfo m = {}, m2 = {};
                size_t len;

                assert_string_equal(meminfo_expect[i].set, fixture_sets[i]);
                buf = fixture_read(meminfo_expect[i].set, "meminfo.txt", &len);
                assert_int_equal(meminfo_parse(buf, len, &m), 0);
                assert_int_equal(m.mem_total_kib, meminfo_expect[i].total);
                assert_int_equal(m.mem_free_kib, meminfo_expect[i].free);
                assert_true(m.has_percpu);
                assert_int_equal(m.percpu_kib, meminfo_expect[i].percpu);
                assert_true(m.has_mem_available && m.has_cached && m.has_slab && m.has_sreclaimable && m.has_sunreclaim);
                assert_int_equal(m.slab_kib, m.sreclaimable_kib + m.sunreclaim_kib);
                assert_true(m.mem_available_kib <= m.mem_total_kib);

                root = fixture_root(meminfo_expect[i].set, "root");
                assert_int_equal(meminfo_read(root, &m2), 0);
                assert_memory_equal(&m, &m2, sizeof(m));
        }

        /* The memcg steps: full meminfo files parse, the Percpu-only extracts do not. */
        for (const char *const *set = fixture_sets; *set; set++) {
                static const char *const steps[] = { "memcg-0-before", "memcg-1-after-create", "memcg-2-after-remove", "memcg-3-after-remove-5s" };
                for (size_t s = 0; s < ELEMENTSOF(steps); s++) {
                        _cleanup_(freep) char *name = NULL, *name_pc = NULL, *buf = NULL, *buf_pc = NULL;
                        Meminfo m;
                        size_t len;

                        assert_true(asprintf(&name, "%s-meminfo.txt", steps[s]) >= 0);
                        assert_true(asprintf(&name_pc, "%s-meminfo-percpu.txt", steps[s]) >= 0);
                        if (!fixture_exists(*set, name))
                                continue;
                        buf = fixture_read(*set, name, &len);
                        assert_int_equal(meminfo_parse(buf, len, &m), 0);
                        assert_true(m.has_percpu);
                        assert_true(m.percpu_kib > 0);
                        buf_pc = fixture_read(*set, name_pc, &len);
                        assert_int_equal(meminfo_parse(buf_pc, len, &m), -EINVAL);     /* no MemTotal */
                }
        }
}

static void test_meminfo_literals(void **state) {
        Meminfo m = { .mem_total_kib = 777 };
        const char *s;

        (void) state;

        /* Before 4.7: no Percpu line.  "unavailable", never 0. */
        s = "MemTotal:  100 kB\nMemFree:  50 kB\nSwapCached:  7 kB\nSlabX: 3 kB\nHugePages_Total:       0\n";
        assert_int_equal(meminfo_parse(s, strlen(s), &m), 0);
        assert_int_equal(m.mem_total_kib, 100);
        assert_int_equal(m.mem_free_kib, 50);
        assert_false(m.has_percpu);
        assert_false(m.has_cached);             /* SwapCached is not Cached */
        assert_false(m.has_slab);               /* SlabX is not Slab */
        assert_false(m.has_mem_available);

        /* No trailing newline, trailing blanks, and a len that stops before junk. */
        s = "MemTotal: 100 kB\nMemFree: 50 kB  \nPercpu: 9 kB";
        assert_int_equal(meminfo_parse(s, strlen(s), &m), 0);
        assert_true(m.has_percpu);
        assert_int_equal(m.percpu_kib, 9);
        s = "MemTotal: 100 kB\nMemFree: 50 kB\nPercpu: 9 kBxx";
        assert_int_equal(meminfo_parse(s, strlen(s) - 2, &m), 0);

        m.mem_total_kib = 777;
        static const char *const bad[] = {
                "",
                "MemFree: 50 kB\n",                                     /* no MemTotal */
                "MemTotal: 100 kB\n",                                   /* no MemFree */
                "MemTotal: 100 kB\nMemFree: abc kB\n",                  /* malformed */
                "MemTotal: 100 kB\nMemFree: 50\n",                      /* no unit */
                "MemTotal: 100 kB\nMemFree: 50 MB\n",                   /* other unit */
                "MemTotal: 100 kB\nMemFree: 50 kB junk\n",
                "MemTotal: 100 kB\nMemFree: -5 kB\n",
                "MemTotal: 100 kB\nMemFree: 50 kB\nMemTotal: 100 kB\n", /* repeated */
                "MemTotal: 100 kB\nMemFree: 50 kB\nPercpu: kB\n",       /* optional key, malformed */
                "MemTotal: 99999999999999999999 kB\nMemFree: 50 kB\n",   /* overflow */
                " MemTotal: 100 kB\nMemFree: 50 kB\n",                  /* not at line start */
        };
        assert_each_einval(bad, meminfo_parse(bad_s, bad_len, &m));
        assert_int_equal(m.mem_total_kib, 777);
        /* Truncated in the middle of MemFree's line. */
        s = "MemTotal: 100 kB\nMemFree: 50 kB\n";
        assert_int_equal(meminfo_parse(s, 22, &m), -EINVAL);
        assert_int_equal(meminfo_read("/nonexistent-pcptune-root", &m), -ENOENT);
}

/* ------------------------------------------------------------------------- */
/* vmstat */

static const struct {
        const char *set;
        uint64_t nr_free_pages, pgfree;
} vmstat_expect[] = {
        { "6.1.0-57-amd64-smp16-numa2-8G", 2012700, 2039610 },
        { "6.1.0-57-amd64-smp2-1G", 236467, 249435 },
        { "6.1.0-57-amd64-smp8-4G", 988282, 1005906 },
        { "6.1.192-vmtest-smp16-numa2-8G", 2036690, 2048734 },
        { "6.1.192-vmtest-smp2-1G", 252873, 259066 },
        { "6.1.192-vmtest-smp8-4G", 1007703, 1015301 },
        { "6.12.117+deb12-amd64-smp16-numa2-8G", 2009310, 2041565 },
        { "6.12.117+deb12-amd64-smp2-1G", 238628, 251508 },
        { "6.12.117+deb12-amd64-smp8-4G", 987743, 1007920 },
        { "6.12.117-vmtest-smp16-numa2-8G", 2034767, 2051075 },
        { "6.12.117-vmtest-smp2-1G", 252059, 260947 },
        { "6.12.117-vmtest-smp8-4G", 1007105, 1017353 },
        { "6.18.44-fc-live-smp2-24G", 1091072, 2211787 },
};

static void test_vmstat_fixtures(void **state) {
        (void) state;

        assert_int_equal(ELEMENTSOF(vmstat_expect), ELEMENTSOF(fixture_sets) - 1);
        for (size_t i = 0; i < ELEMENTSOF(vmstat_expect); i++) {
                _cleanup_(freep) char *buf = NULL, *root = NULL;
                Vmstat v = {}, v2 = {};
                uint64_t x, lines = 0;
                size_t len;

                buf = fixture_read(vmstat_expect[i].set, "vmstat.txt", &len);
                for (size_t k = 0; k < len; k++)
                        lines += buf[k] == '\n';
                assert_int_equal(vmstat_parse(buf, len, &v), 0);
                assert_true(v.has_nr_free_pages && v.has_pgfree);
                assert_int_equal(v.nr_free_pages, vmstat_expect[i].nr_free_pages);
                assert_int_equal(v.pgfree, vmstat_expect[i].pgfree);
                assert_int_equal(v.nr_lines, lines);
                assert_int_equal(vmstat_lookup(buf, len, "pgfree", &x), 0);
                assert_int_equal(x, vmstat_expect[i].pgfree);
                assert_int_equal(vmstat_lookup(buf, len, "pgalloc_normal", &x), 0);
                assert_int_equal(x, v.pgalloc_normal);
                assert_int_equal(vmstat_lookup(buf, len, "nr_free", &x), -ENOENT);    /* prefix only */
                assert_int_equal(vmstat_lookup(buf, len, "free_pages", &x), -ENOENT); /* substring */
                root = fixture_root(vmstat_expect[i].set, "root");
                assert_int_equal(vmstat_read(root, &v2), 0);
                assert_memory_equal(&v, &v2, sizeof(v));
        }
}

static void test_vmstat_literals(void **state) {
        Vmstat v = { .nr_lines = 99 };
        uint64_t x = 5;
        const char *s = "nr_free_pages 12\npgfree 7\nxnr_free_pages 1\nallocstall_normal 3\n\n";

        (void) state;
        assert_int_equal(vmstat_parse(s, strlen(s), &v), 0);
        assert_int_equal(v.nr_free_pages, 12);
        assert_int_equal(v.pgfree, 7);
        assert_int_equal(v.allocstall_normal, 3);
        assert_int_equal(v.nr_lines, 4);
        assert_int_equal(v.pgscan_direct, 0);

        s = "nr_free_pages 12";
        assert_int_equal(vmstat_parse(s, strlen(s), &v), 0);
        assert_false(v.has_pgfree);

        static const char *const bad[] = {
                "",
                "pgfree 7\n",                           /* no nr_free_pages */
                "nr_free_pages\n",
                "nr_free_pages 12 13\n",
                "nr_free_pages x\n",
                "nr_free_pages 12\npgfree -1\n",
                "nr_free_pages 12\nnr_free_pages 12\n",
                "nr_free_pages 12\n some 1\n",
        };
        v.nr_lines = 99;
        assert_each_einval(bad, vmstat_parse(bad_s, bad_len, &v));
        assert_int_equal(v.nr_lines, 99);

        s = "a 1\nbb 2\nbbb x\n";
        assert_int_equal(vmstat_lookup(s, strlen(s), "bb", &x), 0);
        assert_int_equal(x, 2);
        assert_int_equal(vmstat_lookup(s, strlen(s), "bbb", &x), -EINVAL);
        assert_int_equal(vmstat_lookup(s, strlen(s), "c", &x), -ENOENT);
        assert_int_equal(vmstat_lookup(s, strlen(s), "", &x), -EINVAL);
        assert_int_equal(x, 2);
}

/* ------------------------------------------------------------------------- */
/* PSI */

static void test_psi(void **state) {
        Psi p = {};
        const char *s;

        (void) state;
        for (const char *const *set = fixture_sets; *set; set++) {
                _cleanup_(freep) char *buf = NULL, *root = NULL;
                Psi p2;
                size_t len;

                buf = fixture_read(*set, "pressure-memory.txt", &len);
                assert_int_equal(psi_parse(buf, len, &p), 0);
                assert_true(p.has_full);
                assert_true(p.some.avg10 == 0.0 && p.some.avg60 == 0.0 && p.some.avg300 == 0.0);
                /* Only 6.12.117+deb12-amd64-smp2-1G saw memory pressure at boot. */
                assert_int_equal(p.some.total_usec, streq(*set, "6.12.117+deb12-amd64-smp2-1G") ? 135 : 0);
                assert_int_equal(p.full.total_usec, p.some.total_usec);
                root = fixture_root(*set, "root");
                assert_int_equal(psi_read(root, &p2), 0);
                assert_memory_equal(&p, &p2, sizeof(p));
        }

        s = "some avg10=1.25 avg60=0.50 avg300=12.07 total=123456789\n";
        assert_int_equal(psi_parse(s, strlen(s), &p), 0);
        assert_false(p.has_full);
        assert_true(p.some.avg10 > 1.2499 && p.some.avg10 < 1.2501);
        assert_true(p.some.avg60 > 0.4999 && p.some.avg60 < 0.5001);
        assert_true(p.some.avg300 > 12.0699 && p.some.avg300 < 12.0701);
        assert_int_equal(p.some.total_usec, 123456789);

        s = "some avg10=0.00 avg60=0.00 avg300=0.00 total=1\nfull avg10=100.00 avg60=3 avg300=0.00 total=2";
        assert_int_equal(psi_parse(s, strlen(s), &p), 0);
        assert_true(p.has_full);
        assert_true(p.full.avg10 > 99.99 && p.full.avg10 < 100.01);
        assert_int_equal(p.full.total_usec, 2);

        static const char *const bad[] = {
                "",
                "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",                  /* no some */
                "some avg10=0.00 avg60=0.00 avg300=0.00\n",                          /* no total */
                "some avg10=0.00 avg60=0.00 avg300=0.00 total=x\n",
                "some avg10=0. avg60=0.00 avg300=0.00 total=0\n",
                "some avg10=.5 avg60=0.00 avg300=0.00 total=0\n",
                "some avg10= 0.00 avg60=0.00 avg300=0.00 total=0\n",
                "some avg10=0.00 avg10=0.00 avg300=0.00 total=0\n",
                "some avg10=0.00 avg60=0.00 avg300=0.00 total=0 extra=1\n",
                "some avg10=0.00x avg60=0.00 avg300=0.00 total=0\n",
                "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nsome avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
                "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00\n",
                "something avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
                "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nbogus\n",
        };
        assert_each_einval(bad, psi_parse(bad_s, bad_len, &p));
        assert_int_equal(p.full.total_usec, 2);
        assert_int_equal(psi_read("/nonexistent-pcptune-root", &p), -ENOENT);
}

/* ------------------------------------------------------------------------- */
/* topology */

static void test_topology_roots(void **state) {
        (void) state;

        for (const char *const *set = fixture_sets; *set; set++) {
                _cleanup_(freep) char *root = fixture_root(*set, "root"), *release = NULL;
                unsigned cpus = 0;
                Topology t = {};
                size_t len;

                /* smp2 / smp8 / smp16 in the set name. */
                assert_int_equal(sscanf(strstr(*set, "smp"), "smp%u", &cpus), 1);
                release = fixture_read(*set, "uname-r.txt", &len);
                release[strcspn(release, "\n")] = 0;

                assert_int_equal(topology_read(root, &t), 0);
                assert_string_equal(t.kernel_release, release);
                assert_int_equal(t.page_size, 4096);
                assert_int_equal(t.online_cpus, cpus);
                if (set_is_numa2(*set)) {
                        assert_int_equal(t.n_nodes, 2);
                        assert_int_equal(topology_node_cpus(&t, 0), 8);
                        assert_int_equal(topology_node_cpus(&t, 1), 8);
                } else {
                        assert_int_equal(t.n_nodes, 1);
                        assert_int_equal(topology_node_cpus(&t, 0), cpus);
                }
                assert_int_equal(topology_node_cpus(&t, 2), 0);
                assert_int_equal(topology_node_cpus(&t, -1), 0);
                if (set_is_618(*set)) {
                        assert_int_equal(t.possible_cpus, 2);      /* cpu/possible in this tree only */
                        assert_int_equal(t.kernel.major, 6);
                        assert_int_equal(t.kernel.minor, 18);
                        assert_int_equal(t.kernel.patch, 44);
                } else {
                        assert_int_equal(t.possible_cpus, 0);
                        assert_int_equal(t.kernel.major, 6);
                        assert_true(t.kernel.minor == 1 || t.kernel.minor == 12);
                        assert_int_equal(t.kernel.patch, t.kernel.minor == 1 ? (strstr(*set, "vmtest") ? 192 : 0) : 117);
                }
                topology_done(&t);
                assert_null(t.node_cpus);
                assert_null(t.kernel_release);
        }
        topology_done(NULL);
        assert_int_equal(topology_node_cpus(NULL, 0), 0);
}

static void test_topology_fake(void **state) {
        char *root = make_tmp_root();
        Topology t = { .n_nodes = 77 };

        (void) state;

        /* osrelease is required. */
        assert_int_equal(topology_read(root, &t), -ENOENT);
        put_file(root, "proc/sys/kernel/osrelease", "5.15.0-91-generic\n");
        /* No node directory and no cpu/online: nothing tells where the CPUs are. */
        assert_int_equal(topology_read(root, &t), -ENOENT);
        assert_int_equal(t.n_nodes, 77);

        /* CONFIG_NUMA=n: all online CPUs on node 0. */
        put_file(root, "sys/devices/system/cpu/online", "0-3,6\n");
        put_file(root, "sys/devices/system/cpu/possible", "0-7\n");
        assert_int_equal(topology_read(root, &t), 0);
        assert_int_equal(t.n_nodes, 1);
        assert_int_equal(t.node_cpus[0], 5);
        assert_int_equal(t.online_cpus, 5);
        assert_int_equal(t.possible_cpus, 8);
        assert_int_equal(t.kernel.major, 5);
        assert_int_equal(t.kernel.minor, 15);
        assert_int_equal(t.kernel.patch, 0);
        assert_string_equal(t.kernel_release, "5.15.0-91-generic");
        assert_int_equal(t.page_size, 4096);
        topology_done(&t);

        /* An empty node directory counts as none. */
        put_dir(root, "sys/devices/system/node");
        put_file(root, "sys/devices/system/node/online", "0\n");
        assert_int_equal(topology_read(root, &t), 0);
        assert_int_equal(t.n_nodes, 1);
        topology_done(&t);

        /* Sparse nodes, a CPU-less node, and names that are not node<N>. */
        put_file(root, "sys/devices/system/node/node2/cpulist", "0-3\n");
        put_file(root, "sys/devices/system/node/node3/cpulist", "\n");
        put_file(root, "sys/devices/system/node/node0/cpulist", "6\n");
        put_dir(root, "sys/devices/system/node/nodeX");
        put_dir(root, "sys/devices/system/node/node");
        put_dir(root, "sys/devices/system/node/node1x");
        put_file(root, ".pcptune/page_size", "65536\n");
        assert_int_equal(topology_read(root, &t), 0);
        assert_int_equal(t.n_nodes, 4);
        assert_int_equal(topology_node_cpus(&t, 0), 1);
        assert_int_equal(topology_node_cpus(&t, 1), 0);
        assert_int_equal(topology_node_cpus(&t, 2), 4);
        assert_int_equal(topology_node_cpus(&t, 3), 0);
        assert_int_equal(t.online_cpus, 5);     /* from cpu/online */
        assert_int_equal(t.page_size, 65536);
        topology_done(&t);

        /* Without cpu/online: the sum over nodes. */
        {
                _cleanup_(freep) char *p = NULL;
                assert_true(asprintf(&p, "%s/sys/devices/system/cpu/online", root) >= 0);
                assert_int_equal(unlink(p), 0);
        }
        assert_int_equal(topology_read(root, &t), 0);
        assert_int_equal(t.online_cpus, 5);
        topology_done(&t);

        /* Errors: malformed page size, cpulist, osrelease; missing cpulist. */
        put_file(root, ".pcptune/page_size", "1000\n");
        assert_int_equal(topology_read(root, &t), -EINVAL);
        put_file(root, ".pcptune/page_size", "4096\n");
        put_file(root, "sys/devices/system/node/node3/cpulist", "3-1\n");
        assert_int_equal(topology_read(root, &t), -EINVAL);
        put_file(root, "sys/devices/system/node/node3/cpulist", "\n");
        put_dir(root, "sys/devices/system/node/node5");
        assert_int_equal(topology_read(root, &t), -ENOENT);
        put_file(root, "sys/devices/system/node/node5/cpulist", "7\n");
        assert_int_equal(topology_read(root, &t), 0);
        assert_int_equal(t.n_nodes, 6);
        topology_done(&t);
        put_file(root, "proc/sys/kernel/osrelease", "linux\n");
        assert_int_equal(topology_read(root, &t), -EINVAL);
        put_file(root, "proc/sys/kernel/osrelease", "\n");
        assert_int_equal(topology_read(root, &t), -EINVAL);
        put_file(root, "proc/sys/kernel/osrelease", "6.1.0 extra\n");
        assert_int_equal(topology_read(root, &t), -EINVAL);
        put_file(root, "proc/sys/kernel/osrelease", "6.1.0\n");
        put_dir(root, "sys/devices/system/node/node1024");
        t = (Topology) { .n_nodes = 77 };
        assert_int_equal(topology_read(root, &t), -EINVAL);
        assert_int_equal(t.n_nodes, 77);       /* untouched on failure */

        rm_tree(root);
}

/* ------------------------------------------------------------------------- */
/* sysctl */

/* The pcp sysctl below root as a sample finds it: every knob of the table read, then the pcp one picked. */
typedef struct PcpKnobRead {
        const KnobDesc *desc;
        int64_t value;
} PcpKnobRead;

static int read_pcp_knob(const char *root, PcpKnobRead *ret) {
        KnobValue values[_KNOB_ID_MAX];
        KnobId id;

        sysctl_read_knobs(root, values);
        int r = pcp_knob_from_values(values, &id);
        if (r >= 0)
                *ret = (PcpKnobRead){ .desc = knob_desc(id), .value = values[id].value };
        return r;
}

static void test_knob(void **state) {
        char *root = make_tmp_root();
        PcpKnobRead k = {};

        (void) state;
        for (const char *const *set = fixture_sets; *set; set++) {
                _cleanup_(freep) char *r = fixture_root(*set, "root"), *r8 = NULL;

                assert_int_equal(read_pcp_knob(r, &k), 0);
                assert_string_equal(k.desc->name, SYSCTL_PCP_HIGH_FRACTION);
                assert_string_equal(k.desc->path, knob_desc(KNOB_PCP_HIGH_FRACTION)->path);
                assert_int_equal(k.value, 0);
                assert_true(k.desc->writable);
                if (set_is_618(*set))
                        continue;
                r8 = fixture_root(*set, "root-frac-1000");
                assert_int_equal(read_pcp_knob(r8, &k), 0);
                assert_int_equal(k.value, 1000);
        }

        k = (PcpKnobRead) { .value = 42 };
        assert_int_equal(read_pcp_knob(root, &k), -ENOENT);
        assert_int_equal(k.value, 42);
        put_file(root, "proc/sys/vm/percpu_pagelist_fraction", "16\n");
        assert_int_equal(read_pcp_knob(root, &k), 0);
        assert_string_equal(k.desc->name, SYSCTL_PCP_FRACTION);
        assert_string_equal(k.desc->path, knob_desc(KNOB_PCP_FRACTION)->path);
        assert_int_equal(k.value, 16);
        assert_false(k.desc->writable);
        put_file(root, "proc/sys/vm/percpu_pagelist_high_fraction", "8\n");
        assert_int_equal(read_pcp_knob(root, &k), 0);
        assert_string_equal(k.desc->name, SYSCTL_PCP_HIGH_FRACTION);
        assert_int_equal(k.value, 8);
        assert_true(k.desc->writable);
        put_file(root, "proc/sys/vm/percpu_pagelist_high_fraction", "abc\n");
        assert_int_equal(read_pcp_knob(root, &k), -EINVAL);
        /* -1: pcptune's contrib patch 0001 (the allowlist's range); -2 and 1..7 no handler accepts. */
        put_file(root, "proc/sys/vm/percpu_pagelist_high_fraction", "-1\n");
        assert_int_equal(read_pcp_knob(root, &k), 0);
        assert_int_equal(k.value, -1);
        k.value = 8;
        put_file(root, "proc/sys/vm/percpu_pagelist_high_fraction", "-2\n");
        assert_int_equal(read_pcp_knob(root, &k), -EINVAL);
        put_file(root, "proc/sys/vm/percpu_pagelist_high_fraction", "3\n");
        assert_int_equal(read_pcp_knob(root, &k), -EINVAL);
        assert_int_equal(k.value, 8);
        {
                _cleanup_(freep) char *hf = NULL;
                assert_true(asprintf(&hf, "%s/proc/sys/vm/percpu_pagelist_high_fraction", root) >= 0);
                assert_int_equal(unlink(hf), 0);
        }
        put_file(root, "proc/sys/vm/percpu_pagelist_fraction", "-1\n");
        assert_int_equal(read_pcp_knob(root, &k), -EINVAL);
        /* high_fraction there but unreadable: its error, not the other row's value. */
        put_file(root, "proc/sys/vm/percpu_pagelist_fraction", "16\n");
        {
                _cleanup_(freep) char *hf = NULL;
                int64_t v;
                assert_true(asprintf(&hf, "%s/proc/sys/vm/percpu_pagelist_high_fraction", root) >= 0);
                assert_int_equal(mkdir(hf, 0755), 0);
                int e = read_int64_at(root, knob_desc(KNOB_PCP_HIGH_FRACTION)->path, &v);
                assert_true(e < 0 && e != -ENOENT);
                assert_int_equal(read_pcp_knob(root, &k), e);
        }
        rm_tree(root);
}

static void test_sysctl_name_to_path(void **state) {
        static const char *const bad[] = {
                "", ".", "vm.", ".vm", "vm..x", "a b", "vm/..", "../x", "vm./", "x\n",
        };
        char *p = NULL;

        (void) state;
        assert_int_equal(sysctl_name_to_path(SYSCTL_PCP_HIGH_FRACTION, &p), 0);
        assert_string_equal(p, knob_desc(KNOB_PCP_HIGH_FRACTION)->path);
        free(p);
        assert_int_equal(sysctl_name_to_path(SYSCTL_PCP_FRACTION, &p), 0);
        assert_string_equal(p, knob_desc(KNOB_PCP_FRACTION)->path);
        free(p);
        assert_int_equal(sysctl_name_to_path("net.ipv4.conf.eth0/100.rp_filter", &p), 0);
        assert_string_equal(p, "/proc/sys/net/ipv4/conf/eth0.100/rp_filter");
        free(p);
        assert_int_equal(sysctl_name_to_path("kernel", &p), 0);
        assert_string_equal(p, "/proc/sys/kernel");
        free(p);
        p = NULL;
        assert_each_einval(bad, sysctl_name_to_path(bad_s, &p));
        assert_null(p);
        assert_int_equal(sysctl_name_to_path(NULL, &p), -EINVAL);
}

/* ------------------------------------------------------------------------- */
/* cgroups */

static void test_proc_cgroups_parse(void **state) {
        _cleanup_(freep) char *buf = NULL;
        ProcCgroupsRow row = { .num_cgroups = 5 };
        size_t len;
        const char *s;

        (void) state;
        buf = fixture_read("6.18.44-fc-live-smp2-24G", "proc-cgroups.txt", &len);
        assert_int_equal(proc_cgroups_parse(buf, len, "memory", &row), 0);
        assert_int_equal(row.hierarchy, 4);
        assert_int_equal(row.num_cgroups, 23);
        assert_true(row.enabled);
        assert_int_equal(proc_cgroups_parse(buf, len, "perf_event", &row), 0);
        assert_int_equal(row.hierarchy, 0);
        assert_int_equal(row.num_cgroups, 1);
        assert_int_equal(proc_cgroups_parse(buf, len, "rdma", &row), -ENOENT);
        assert_int_equal(proc_cgroups_parse(buf, len, "mem", &row), -ENOENT);       /* prefix */
        assert_int_equal(proc_cgroups_parse(buf, len, "#subsys_name", &row), -ENOENT);
        assert_int_equal(row.num_cgroups, 1);

        s = "memory_x\t1\t2\t1\nmemory\t0\t7\t0\n";
        assert_int_equal(proc_cgroups_parse(s, strlen(s), "memory", &row), 0);
        assert_int_equal(row.num_cgroups, 7);
        assert_false(row.enabled);

        static const char *const bad[] = {
                "memory\t1\t2\n",
                "memory\t1\t2\t1\t5\n",
                "memory\tx\t2\t1\n",
                "memory\t1\t-2\t1\n",
                "memory\t1\t2\t2\n",
                "memory\t99999999999\t2\t1\n",
                "memory\t1\t2\t1\nmemory\t1\t2\t1\n",
        };
        assert_each_einval(bad, proc_cgroups_parse(bad_s, bad_len, "memory", &row));
        assert_int_equal(proc_cgroups_parse("", 0, "memory", &row), -ENOENT);
        assert_int_equal(proc_cgroups_parse(s, strlen(s), "", &row), -EINVAL);
        assert_int_equal(row.num_cgroups, 7);
}

/* memcg-churn.txt lines hold cgroup.stat with newlines turned into blanks:
 * "step=... percpu_kB=N key value key value ...".  Rebuild the file. */
static char *churn_to_cgroup_stat(const char *line) {
        const char *p = strstr(line, "percpu_kB=");
        char *out = NULL, *w;
        bool key = true;

        assert_non_null(p);
        p = strchr(p, ' ');
        assert_non_null(p);
        out = strdup(p + 1);
        assert_non_null(out);
        for (w = out; *w; w++)
                if (*w == ' ') {
                        *w = key ? ' ' : '\n';
                        key = !key;
                }
        return out;
}

static void test_cgroup_stat_parse(void **state) {
        CgroupStat st = { .nr_descendants = 99 };
        const char *s;

        (void) state;

        /* Real cgroup.stat contents of the churn parent, from every QEMU set. */
        for (const char *const *set = fixture_sets; *set; set++) {
                _cleanup_(freep) char *buf = NULL;
                const char *pos, *end, *line;
                size_t len, ll;
                unsigned steps = 0;
                bool has_subsys = strneq(*set, "6.12.", 5);

                if (!fixture_exists(*set, "memcg-churn.txt"))
                        continue;
                buf = fixture_read(*set, "memcg-churn.txt", &len);
                pos = buf;
                end = buf + len;
                while (next_line(&pos, end, &line, &ll)) {
                        _cleanup_(freep) char *l = strndup(line, ll), *stat = NULL;

                        if (!strneq(l, "step=", 5))
                                continue;
                        stat = churn_to_cgroup_stat(l);
                        assert_int_equal(cgroup_stat_parse(stat, strlen(stat), &st), 0);
                        if (strneq(l, "step=0", 6))
                                assert_int_equal(st.nr_descendants, 0);
                        else if (strneq(l, "step=1", 6))
                                assert_int_equal(st.nr_descendants, 500);
                        else
                                assert_int_equal(st.nr_descendants, 50);
                        if (has_subsys) {
                                /* The parent's own memory css is counted: descendants + 1. */
                                assert_int_equal(st.nr_subsys_memory, st.nr_descendants + 1);
                                /* Dying memory css right after the rmdirs (step 2) only:
                                 * e.g. 426 of 450 dying cgroups on 6.12 vmtest smp16. */
                                if (strneq(l, "step=2", 6))
                                        assert_true(st.nr_dying_subsys_memory <= st.nr_dying_descendants);
                                else
                                        assert_int_equal(st.nr_dying_subsys_memory, 0);
                        } else {
                                assert_int_equal(st.nr_subsys_memory, -1);
                                assert_int_equal(st.nr_dying_subsys_memory, -1);
                        }
                        steps++;
                }
                assert_int_equal(steps, 4);
        }

        s = "nr_descendants 3\nnr_dying_descendants 1\nnr_subsys_memoryx 5\nnr_subsys_cpu 2\n";
        assert_int_equal(cgroup_stat_parse(s, strlen(s), &st), 0);
        assert_int_equal(st.nr_descendants, 3);
        assert_int_equal(st.nr_dying_descendants, 1);
        assert_int_equal(st.nr_subsys_memory, -1);
        assert_int_equal(st.nr_dying_subsys_memory, -1);

        static const char *const bad[] = {
                "",
                "nr_descendants 3\n",                                          /* no nr_dying_descendants */
                "nr_dying_descendants 3\n",
                "nr_descendants x\nnr_dying_descendants 1\n",
                "nr_descendants -3\nnr_dying_descendants 1\n",
                "nr_descendants 3 4\nnr_dying_descendants 1\n",
                "nr_descendants\nnr_dying_descendants 1\n",
                "nr_descendants 3\nnr_descendants 3\nnr_dying_descendants 1\n",
                " nr_descendants 3\nnr_dying_descendants 1\n",
                "nr_descendants 3\nnr_dying_descendants 1\nnr_subsys_memory 1x\n",
        };
        assert_each_einval(bad, cgroup_stat_parse(bad_s, bad_len, &st));
        assert_int_equal(st.nr_descendants, 3);
}

static void test_cgroup_mode_to_string(void **state) {
        (void) state;
        assert_string_equal(cgroup_mode_to_string(CGROUP_MEMORY_NONE), "none");
        assert_string_equal(cgroup_mode_to_string(CGROUP_MEMORY_V1), "v1");
        assert_string_equal(cgroup_mode_to_string(CGROUP_MEMORY_V2), "v2");
        assert_null(cgroup_mode_to_string(_CGROUP_MEMORY_MAX));
        assert_null(cgroup_mode_to_string(_CGROUP_MEMORY_INVALID));
}

static void test_memcg_find_mount(void **state) {
        /* The layout of this VM: v1 controllers, a name=systemd hierarchy, cgroup2 without memory. */
        static const char mi_hybrid[] =
                "23 1 0:21 / /sys rw,nosuid - sysfs sysfs rw\n"
                "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
                "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
                "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime shared:7 master:1 - cgroup cgroup rw,memory\n"
                "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
                "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        static const char mi_v2[] =
                "31 23 0:28 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n";
        static const char mi_odd[] =
                "garbage\n"
                "1 2 3\n"
                "35 31 0:32 / /sys/fs/cgroup/mem rw - cgroupx cgroup rw,memory\n"           /* not cgroup */
                "36 31 0:33 / /sys/fs/cgroup/memx rw - cgroup cgroup rw,memory_x,cpu\n"     /* not the word */
                "37 31 0:34 / /sys/fs/cgroup/cpu\\040and\\134mem rw - cgroup cgroup rw,cpu,memory\n";
        static const char mi_subdir[] =
                "35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";
        char *root = make_tmp_root();
        CgroupMode mode = _CGROUP_MEMORY_INVALID;
        char *mount = NULL;

        (void) state;

        assert_int_equal(memcg_find_mount(root, mi_hybrid, strlen(mi_hybrid), &mode, &mount), 0);
        assert_int_equal(mode, CGROUP_MEMORY_V1);
        assert_string_equal(mount, "/sys/fs/cgroup/memory");
        free(mount);

        assert_int_equal(memcg_find_mount(root, mi_odd, strlen(mi_odd), &mode, &mount), 0);
        assert_int_equal(mode, CGROUP_MEMORY_V1);
        assert_string_equal(mount, "/sys/fs/cgroup/cpu and\\mem");
        free(mount);

        /* Only a subtree of the hierarchy: cannot be compared with num_cgroups. */
        mode = _CGROUP_MEMORY_INVALID;
        assert_int_equal(memcg_find_mount(root, mi_subdir, strlen(mi_subdir), &mode, &mount), -EOPNOTSUPP);
        assert_int_equal(mode, _CGROUP_MEMORY_INVALID);
        /* ... unless the hierarchy's root is mounted too. */
        {
                _cleanup_(freep) char *both = NULL;
                assert_true(asprintf(&both, "%s%s", mi_subdir, mi_hybrid) >= 0);
                assert_int_equal(memcg_find_mount(root, both, strlen(both), &mode, &mount), 0);
                assert_string_equal(mount, "/sys/fs/cgroup/memory");
                free(mount);
        }

        /* cgroup2: only when its cgroup.controllers (below root) lists memory. */
        assert_int_equal(memcg_find_mount(root, mi_v2, strlen(mi_v2), &mode, &mount), 0);
        assert_int_equal(mode, CGROUP_MEMORY_NONE);
        assert_null(mount);
        put_file(root, "sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
        assert_int_equal(memcg_find_mount(root, mi_v2, strlen(mi_v2), &mode, &mount), 0);
        assert_int_equal(mode, CGROUP_MEMORY_V2);
        assert_string_equal(mount, "/sys/fs/cgroup");
        free(mount);
        /* The hybrid layout's cgroup2 has no memory: v1 wins anyway. */
        put_file(root, "sys/fs/cgroup/unified/cgroup.controllers", "memory\n");
        assert_int_equal(memcg_find_mount(root, mi_hybrid, strlen(mi_hybrid), &mode, &mount), 0);
        assert_int_equal(mode, CGROUP_MEMORY_V1);
        free(mount);

        assert_int_equal(memcg_find_mount(root, "", 0, &mode, &mount), 0);
        assert_int_equal(mode, CGROUP_MEMORY_NONE);
        assert_null(mount);
        rm_tree(root);
}

static void test_memcg_fake_v1(void **state) {
        char *root = make_tmp_root();
        _cleanup_(freep) char *link = NULL, *target = NULL;
        MemcgCounts m = {};

        (void) state;

        /* Nothing: mode none, success. */
        assert_int_equal(memcg_counts_read(root, &m), 0);
        assert_int_equal(m.mode, CGROUP_MEMORY_NONE);
        assert_null(m.mount);
        memcg_counts_done(&m);

        /* root + a, a/b, a/b/c, d = 5 directories; files and a symlinked directory do not count. */
        put_file(root, "sys/fs/cgroup/memory/memory.usage_in_bytes", "0\n");
        put_file(root, "sys/fs/cgroup/memory/a/memory.usage_in_bytes", "0\n");
        put_file(root, "sys/fs/cgroup/memory/a/b/c/tasks", "");
        put_dir(root, "sys/fs/cgroup/memory/d");
        put_dir(root, "elsewhere/x/y");
        assert_true(asprintf(&link, "%s/sys/fs/cgroup/memory/a/link", root) >= 0);
        assert_true(asprintf(&target, "%s/elsewhere", root) >= 0);
        assert_int_equal(symlink(target, link), 0);

        /* /proc/cgroups is needed for the dying count. */
        assert_int_equal(memcg_counts_read(root, &m), -ENOENT);
        put_file(root, "proc/cgroups", "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpu\t1\t1\t1\nmemory\t4\t12\t1\n");
        assert_int_equal(memcg_counts_read(root, &m), 0);
        assert_int_equal(m.mode, CGROUP_MEMORY_V1);
        assert_string_equal(m.mount, "/sys/fs/cgroup/memory");
        assert_int_equal(m.live, 5);
        assert_int_equal(m.dying, 7);
        assert_false(m.dying_from_subsys);
        memcg_counts_done(&m);
        assert_null(m.mount);

        /* A racing mkdir: fewer counted than directories clamps at 0. */
        put_file(root, "proc/cgroups", "memory\t4\t3\t1\n");
        assert_int_equal(memcg_counts_read(root, &m), 0);
        assert_int_equal(m.live, 5);
        assert_int_equal(m.dying, 0);
        memcg_counts_done(&m);

        /* Without memory.usage_in_bytes, /proc/cgroups' hierarchy decides. */
        {
                _cleanup_(freep) char *p = NULL;
                assert_true(asprintf(&p, "%s/sys/fs/cgroup/memory/memory.usage_in_bytes", root) >= 0);
                assert_int_equal(unlink(p), 0);
        }
        put_file(root, "proc/cgroups", "memory\t2\t6\t1\n");
        assert_int_equal(memcg_counts_read(root, &m), 0);
        assert_int_equal(m.mode, CGROUP_MEMORY_V1);
        assert_int_equal(m.dying, 1);
        memcg_counts_done(&m);

        /* hierarchy 0: "memory" is a v2 child cgroup, and v2 has no memory here. */
        put_file(root, "proc/cgroups", "memory\t0\t6\t1\n");
        put_file(root, "sys/fs/cgroup/cgroup.controllers", "cpu io pids\n");
        assert_int_equal(memcg_counts_read(root, &m), 0);
        assert_int_equal(m.mode, CGROUP_MEMORY_NONE);
        memcg_counts_done(&m);

        /* A malformed /proc/cgroups row is an error. */
        put_file(root, "sys/fs/cgroup/memory/memory.usage_in_bytes", "0\n");
        put_file(root, "proc/cgroups", "memory\t4\tmany\t1\n");
        assert_int_equal(memcg_counts_read(root, &m), -EINVAL);

        rm_tree(root);
}

static void test_memcg_fake_v2(void **state) {
        char *root = make_tmp_root();
        MemcgCounts m = {};

        (void) state;

        /* 6.12+: nr_subsys_memory (root css included) and nr_dying_subsys_memory. */
        put_file(root, "sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory hugetlb pids\n");
        put_file(root, "sys/fs/cgroup/cgroup.stat",
                 "nr_descendants 50\nnr_subsys_cpu 1\nnr_subsys_memory 51\nnr_dying_descendants 6\n"
                 "nr_dying_subsys_cpu 0\nnr_dying_subsys_memory 4\n");
        /* A v2 child named "memory" must not be taken for a v1 hierarchy. */
        put_file(root, "sys/fs/cgroup/memory/memory.current", "0\n");
        assert_int_equal(memcg_counts_read(root, &m), 0);
        assert_int_equal(m.mode, CGROUP_MEMORY_V2);
        assert_string_equal(m.mount, "/sys/fs/cgroup");
        assert_int_equal(m.live, 51);
        assert_int_equal(m.dying, 4);
        assert_true(m.dying_from_subsys);
        memcg_counts_done(&m);

        /* Before 6.12: descendants + 1 and nr_dying_descendants. */
        put_file(root, "sys/fs/cgroup/cgroup.stat", "nr_descendants 50\nnr_dying_descendants 9\n");
        assert_int_equal(memcg_counts_read(root, &m), 0);
        assert_int_equal(m.live, 51);
        assert_int_equal(m.dying, 9);
        assert_false(m.dying_from_subsys);
        memcg_counts_done(&m);

        /* "memory" must be a whole word of cgroup.controllers. */
        put_file(root, "sys/fs/cgroup/cgroup.controllers", "cpu memoryx xmemory\n");
        assert_int_equal(memcg_counts_read(root, &m), 0);
        assert_int_equal(m.mode, CGROUP_MEMORY_NONE);
        memcg_counts_done(&m);

        /* Hybrid layout: v2 at /sys/fs/cgroup/unified. */
        put_file(root, "sys/fs/cgroup/unified/cgroup.controllers", "memory\n");
        put_file(root, "sys/fs/cgroup/unified/cgroup.stat", "nr_descendants 2\nnr_dying_descendants 0\n");
        assert_int_equal(memcg_counts_read(root, &m), 0);
        assert_int_equal(m.mode, CGROUP_MEMORY_V2);
        assert_string_equal(m.mount, "/sys/fs/cgroup/unified");
        assert_int_equal(m.live, 3);
        assert_int_equal(m.dying, 0);
        memcg_counts_done(&m);

        /* Broken cgroup.stat is an error, missing one too. */
        put_file(root, "sys/fs/cgroup/unified/cgroup.stat", "nr_descendants 2\n");
        assert_int_equal(memcg_counts_read(root, &m), -EINVAL);
        {
                _cleanup_(freep) char *p = NULL;
                assert_true(asprintf(&p, "%s/sys/fs/cgroup/unified/cgroup.stat", root) >= 0);
                assert_int_equal(unlink(p), 0);
        }
        assert_int_equal(memcg_counts_read(root, &m), -ENOENT);
        rm_tree(root);

        /* The 6.18 fixture tree has /proc/cgroups but no cgroup mount: none. */
        {
                _cleanup_(freep) char *r = fixture_root("6.18.44-fc-live-smp2-24G", "root");
                assert_int_equal(memcg_counts_read(r, &m), 0);
                assert_int_equal(m.mode, CGROUP_MEMORY_NONE);
                memcg_counts_done(&m);
        }
        memcg_counts_done(NULL);
}

/* ------------------------------------------------------------------------- */
/* percpu_stats */

static const struct {
        const char *set, *file;
        int64_t unit_size;
        size_t n_chunks;
        int64_t nr_chunks, nr_cur_alloc, global_empty_pop_pages, empty_pop_pages, free_bytes, sidelined, to_depopulate, empty_chunks;
} percpu_expect[] = {
        { "6.1.192-vmtest-smp16-numa2-8G", "percpu_stats.txt", 262144, 1, 1, 168, 4, 4, 20032, 0, 0, 0 },
        { "6.1.192-vmtest-smp2-1G", "percpu_stats.txt", 1048576, 1, 1, 148, 5, 5, 21820, 0, 0, 0 },
        { "6.1.192-vmtest-smp8-4G", "percpu_stats.txt", 262144, 1, 1, 156, 5, 5, 21308, 0, 0, 0 },
        { "6.12.117-vmtest-smp16-numa2-8G", "percpu_stats.txt", 262144, 1, 1, 196, 5, 5, 24364, 0, 0, 0 },
        { "6.12.117-vmtest-smp2-1G", "percpu_stats.txt", 1048576, 1, 1, 172, 6, 6, 26044, 0, 0, 0 },
        { "6.12.117-vmtest-smp8-4G", "percpu_stats.txt", 262144, 1, 1, 184, 6, 6, 25468, 0, 0, 0 },
        { "6.18.44-fc-live-smp2-24G", "percpu_stats.txt", 1048576, 2, 2, 1254, 7, 7, 981812, 0, 0, 0 },
        { "6.1.192-vmtest-smp16-numa2-8G", "memcg-0-before-percpu_stats.txt", 262144, 1, 1, 175, 4, 4, 17512, 0, 0, 0 },
        { "6.1.192-vmtest-smp16-numa2-8G", "memcg-1-after-create-percpu_stats.txt", 262144, 6, 6, 3675, 3, 3, 68232, 0, 0, 0 },
        { "6.1.192-vmtest-smp16-numa2-8G", "memcg-2-after-remove-percpu_stats.txt", 262144, 4, 4, 527, 27, 27, 677752, 1, 0, 1 },
        { "6.1.192-vmtest-smp16-numa2-8G", "memcg-3-after-remove-5s-percpu_stats.txt", 262144, 4, 4, 525, 27, 27, 677944, 1, 0, 1 },
        { "6.1.192-vmtest-smp2-1G", "memcg-0-before-percpu_stats.txt", 1048576, 1, 1, 154, 4, 4, 19956, 0, 0, 0 },
        { "6.1.192-vmtest-smp2-1G", "memcg-1-after-create-percpu_stats.txt", 1048576, 2, 2, 3154, 2, 2, 136532, 0, 0, 0 },
        { "6.1.192-vmtest-smp2-1G", "memcg-2-after-remove-percpu_stats.txt", 1048576, 2, 2, 464, 204, 204, 972908, 0, 0, 0 },
        { "6.1.192-vmtest-smp2-1G", "memcg-3-after-remove-5s-percpu_stats.txt", 1048576, 2, 2, 454, 204, 204, 975332, 0, 0, 0 },
        { "6.1.192-vmtest-smp8-4G", "memcg-0-before-percpu_stats.txt", 262144, 1, 1, 162, 4, 4, 19444, 0, 0, 0 },
        { "6.1.192-vmtest-smp8-4G", "memcg-1-after-create-percpu_stats.txt", 262144, 5, 5, 3162, 2, 2, 136020, 0, 0, 0 },
        { "6.1.192-vmtest-smp8-4G", "memcg-2-after-remove-percpu_stats.txt", 262144, 3, 3, 485, 9, 9, 444492, 0, 0, 1 },
        { "6.1.192-vmtest-smp8-4G", "memcg-3-after-remove-5s-percpu_stats.txt", 262144, 3, 3, 462, 12, 12, 450532, 0, 0, 1 },
        { "6.12.117-vmtest-smp16-numa2-8G", "memcg-0-before-percpu_stats.txt", 262144, 1, 1, 209, 5, 5, 22124, 0, 0, 0 },
        { "6.12.117-vmtest-smp16-numa2-8G", "memcg-1-after-create-percpu_stats.txt", 262144, 6, 6, 4711, 3, 3, 244812, 0, 0, 0 },
        { "6.12.117-vmtest-smp16-numa2-8G", "memcg-2-after-remove-percpu_stats.txt", 262144, 6, 6, 4665, 3, 3, 245164, 0, 0, 0 },
        { "6.12.117-vmtest-smp16-numa2-8G", "memcg-3-after-remove-5s-percpu_stats.txt", 262144, 4, 4, 661, 8, 8, 699724, 1, 0, 1 },
        { "6.12.117-vmtest-smp2-1G", "memcg-0-before-percpu_stats.txt", 1048576, 1, 1, 180, 5, 5, 24348, 0, 0, 0 },
        { "6.12.117-vmtest-smp2-1G", "memcg-1-after-create-percpu_stats.txt", 1048576, 2, 2, 4180, 2, 2, 224924, 0, 0, 0 },
        { "6.12.117-vmtest-smp2-1G", "memcg-2-after-remove-percpu_stats.txt", 1048576, 2, 2, 592, 5, 5, 986492, 1, 0, 0 },
        { "6.12.117-vmtest-smp2-1G", "memcg-3-after-remove-5s-percpu_stats.txt", 1048576, 2, 2, 580, 5, 5, 988124, 1, 0, 0 },
        { "6.12.117-vmtest-smp8-4G", "memcg-0-before-percpu_stats.txt", 262144, 1, 1, 194, 5, 5, 23740, 0, 0, 0 },
        { "6.12.117-vmtest-smp8-4G", "memcg-1-after-create-percpu_stats.txt", 262144, 5, 5, 4194, 2, 2, 224316, 0, 0, 0 },
        { "6.12.117-vmtest-smp8-4G", "memcg-2-after-remove-percpu_stats.txt", 262144, 4, 4, 602, 7, 7, 724284, 1, 0, 1 },
        { "6.12.117-vmtest-smp8-4G", "memcg-3-after-remove-5s-percpu_stats.txt", 262144, 4, 4, 593, 7, 7, 725388, 1, 0, 1 },
};

static void test_percpu_stats_fixtures(void **state) {
        unsigned sets_with_file = 0;

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(percpu_expect); i++) {
                _cleanup_(freep) char *buf = NULL;
                PercpuStats s = {};
                PercpuSummary sum;
                size_t len;

                buf = fixture_read(percpu_expect[i].set, percpu_expect[i].file, &len);
                assert_int_equal(percpu_stats_parse(buf, len, &s), 0);
                assert_int_equal(s.unit_size, percpu_expect[i].unit_size);
                assert_int_equal(s.reserved_size, 0);
                assert_int_equal(s.atom_size, 2097152);
                assert_int_equal(s.n_chunks, percpu_expect[i].n_chunks);
                assert_int_equal(s.nr_chunks, percpu_expect[i].nr_chunks);
                assert_int_equal(s.nr_cur_alloc, percpu_expect[i].nr_cur_alloc);
                assert_int_equal(s.nr_cur_alloc, s.nr_alloc - s.nr_dealloc);
                assert_int_equal(s.empty_pop_pages, percpu_expect[i].global_empty_pop_pages);
                assert_int_equal(s.min_alloc_size, 4);
                /* Chunks print by slot: the first chunk is not always first (6.12 smp8 memcg-1). */
                {
                        unsigned first = 0;
                        for (size_t c = 0; c < s.n_chunks; c++) {
                                first += s.chunks[c].kind == PERCPU_CHUNK_FIRST;
                                assert_true(s.chunks[c].kind == PERCPU_CHUNK_FIRST || s.chunks[c].kind == PERCPU_CHUNK_NORMAL ||
                                            s.chunks[c].kind == PERCPU_CHUNK_SIDELINED);
                        }
                        assert_int_equal(first, 1);
                }
                for (size_t c = 0; c < s.n_chunks; c++)
                        assert_true(s.chunks[c].cur_max_alloc >= s.chunks[c].cur_min_alloc);

                percpu_stats_summarize(&s, &sum);
                assert_int_equal(sum.chunks, (int64_t) percpu_expect[i].n_chunks);
                assert_int_equal(sum.empty_pop_pages, percpu_expect[i].empty_pop_pages);
                assert_int_equal(sum.free_bytes, percpu_expect[i].free_bytes);
                assert_int_equal(sum.sidelined, percpu_expect[i].sidelined);
                assert_int_equal(sum.to_depopulate, percpu_expect[i].to_depopulate);
                assert_int_equal(sum.empty_chunks, percpu_expect[i].empty_chunks);
                /* Every captured dump agrees with itself (percpu_stats_check()'s rules hold on real kernels). */
                {
                        char what[192];
                        assert_int_equal(percpu_stats_check(&s, what, sizeof what), 0);
                        assert_string_equal(what, "");
                }
                percpu_stats_done(&s);
                assert_null(s.chunks);
        }

        /* Every set: a percpu_stats.txt in the table, or an .absent marker. */
        for (const char *const *set = fixture_sets; *set; set++) {
                _cleanup_(freep) char *root = fixture_root(*set, "root");
                PercpuStats s = {};

                if (!fixture_exists(*set, "percpu_stats.txt")) {
                        assert_true(fixture_exists(*set, "percpu_stats.txt.absent"));
                        assert_int_equal(percpu_stats_read(root, &s), -ENOENT);
                        continue;
                }
                sets_with_file++;
                assert_int_equal(percpu_stats_read(root, &s), 0);
                assert_true(s.n_chunks >= 1);
                assert_int_equal((int64_t) s.n_chunks, s.nr_chunks);
                percpu_stats_done(&s);
        }
        assert_int_equal(sets_with_file, 7);

        /* The 6.18 dump, value by value. */
        {
                _cleanup_(freep) char *buf = NULL;
                PercpuStats s = {};
                size_t len;

                buf = fixture_read("6.18.44-fc-live-smp2-24G", "percpu_stats.txt", &len);
                assert_int_equal(percpu_stats_parse(buf, len, &s), 0);
                assert_int_equal(s.static_size, 185560);
                assert_int_equal(s.dyn_size, 31528);
                assert_int_equal(s.alloc_size, 2097152);
                assert_int_equal(s.nr_alloc, 12318);
                assert_int_equal(s.nr_max_alloc, 1486);
                assert_int_equal(s.nr_max_chunks, 2);
                assert_int_equal(s.max_alloc_size, 4096);
                assert_int_equal(s.chunks[0].nr_alloc, 522);
                assert_int_equal(s.chunks[0].first_bit, 3028);
                assert_int_equal(s.chunks[1].kind, PERCPU_CHUNK_NORMAL);
                assert_int_equal(s.chunks[1].nr_alloc, 732);
                assert_int_equal(s.chunks[1].max_alloc_size, 2288);
                assert_int_equal(s.chunks[1].free_bytes, 981796);
                assert_int_equal(s.chunks[1].contig_bytes, 925200);
                assert_int_equal(s.chunks[1].sum_frag, 56596);
                assert_int_equal(s.chunks[1].max_frag, 8032);
                assert_int_equal(s.chunks[1].cur_med_alloc, 8);
                percpu_stats_done(&s);
                percpu_stats_done(NULL);
        }
}

#define PS_HEAD                                                 \
        "Percpu Memory Statistics\n"                            \
        "Allocation Info:\n"                                    \
        "----------------------------------------\n"            \
        "  unit_size           :        32768\n"                \
        "  reserved_size       :         8192\n"                \
        "\n"                                                    \
        "Global Stats:\n"                                       \
        "----------------------------------------\n"            \
        "  nr_alloc            :           10\n"                \
        "  nr_dealloc          :            4\n"                \
        "  nr_cur_alloc        :            6\n"                \
        "  nr_max_alloc        :            8\n"                \
        "  nr_chunks           :            4\n"                \
        "  nr_max_chunks       :            5\n"                \
        "  min_alloc_size      :            4\n"                \
        "  max_alloc_size      :          512\n"                \
        "  empty_pop_pages     :            3\n"                \
        "\n"                                                    \
        "Per Chunk Stats:\n"                                    \
        "----------------------------------------\n"

#define PS_CHUNK(header, nr_alloc, empty, free_bytes)           \
        header "\n"                                             \
        "  nr_alloc            : " #nr_alloc "\n"               \
        "  empty_pop_pages     : " #empty "\n"                  \
        "  free_bytes          : " #free_bytes "\n"             \
        "\n"

/* A dump whose Global Stats count a chunk no section prints (constructed: MANIFEST.txt of the set). */
static void test_percpu_stats_inconsistent(void **state) {
        _cleanup_(freep) char *buf = NULL, *real = NULL;
        PercpuStats s = {}, r = {};
        PercpuSummary sum;
        char what[192];
        size_t len;

        (void) state;
        buf = fixture_read("6.1.192-vmtest-smp16-numa2-8G", "constructed-inconsistent-percpu_stats.txt", &len);
        assert_int_equal(percpu_stats_parse(buf, len, &s), 0);
        assert_int_equal(s.n_chunks, 3);
        assert_int_equal(percpu_stats_check(&s, what, sizeof what), -EBADMSG);
        assert_string_equal(what, "Global Stats nr_chunks 4, chunk sections 3; nr_cur_alloc 527, chunks' nr_alloc sum 427");

        /* The real dump it was made from: consistent. */
        real = fixture_read("6.1.192-vmtest-smp16-numa2-8G", "memcg-2-after-remove-percpu_stats.txt", &len);
        assert_int_equal(percpu_stats_parse(real, len, &r), 0);
        assert_int_equal(percpu_stats_check(&r, what, sizeof what), 0);
        percpu_stats_summarize(&r, &sum);
        assert_int_equal(sum.chunks, 4);

        /* Each rule alone. */
        r.nr_chunks++;
        assert_int_equal(percpu_stats_check(&r, what, sizeof what), -EBADMSG);
        assert_string_equal(what, "Global Stats nr_chunks 5, chunk sections 4");
        r.nr_chunks--;
        r.empty_pop_pages = 26;
        assert_int_equal(percpu_stats_check(&r, what, sizeof what), -EBADMSG);
        assert_string_equal(what, "empty_pop_pages 26, chunks' sum 27");
        /* With a reserved chunk the global empty page count is not comparable (pcpu_update_empty_pages()). */
        r.chunks[3].kind = PERCPU_CHUNK_RESERVED;
        r.nr_chunks--;
        assert_int_equal(percpu_stats_check(&r, what, sizeof what), 0);
        percpu_stats_done(&r);
        percpu_stats_done(&s);
}

/*
 * Fragmentation from a dump and the Percpu read with it (memcg-2-after-remove of the 16-CPU 6.1 set):
 * Percpu 6784 kB / 16 units = 106 pages per unit, 40 of them the first chunk (static 132608 + dyn 31232);
 * 3 dynamic chunks of 64 pages with 66 populated: 126 unpopulated.  Free bytes 17512 + 136752 + 261344 +
 * 262144 - (126 + 27 empty populated) x 4096 = 51064 per unit.
 */
static void test_percpu_stats_frag(void **state) {
        _cleanup_(freep) char *buf = NULL;
        PercpuStats s = {};
        int64_t f = -1;
        size_t len;

        (void) state;
        buf = fixture_read("6.1.192-vmtest-smp16-numa2-8G", "memcg-2-after-remove-percpu_stats.txt", &len);
        assert_int_equal(percpu_stats_parse(buf, len, &s), 0);
        assert_int_equal(percpu_stats_frag_bytes(&s, 6784 * 1024, 16, 4096, &f), 0);
        assert_int_equal(f, 51064);
        /* Percpu not whole pages per unit (units are not 15), or too small for the first chunk: not measured. */
        assert_int_equal(percpu_stats_frag_bytes(&s, 6784 * 1024, 15, 4096, &f), -ERANGE);
        assert_int_equal(percpu_stats_frag_bytes(&s, 16 * 4096, 16, 4096, &f), -ERANGE);
        /* More populated pages than the chunks have: the reads were apart. */
        assert_int_equal(percpu_stats_frag_bytes(&s, (uint64_t) 16 * 4096 * 300, 16, 4096, &f), -ERANGE);
        s.unit_size = -1;
        assert_int_equal(percpu_stats_frag_bytes(&s, 6784 * 1024, 16, 4096, &f), -EINVAL);
        percpu_stats_done(&s);

        /* Before the churn: the first chunk alone, fully populated (1128 = 17512 - 4 x 4096). */
        free(buf);
        buf = fixture_read("6.1.192-vmtest-smp16-numa2-8G", "memcg-0-before-percpu_stats.txt", &len);
        assert_int_equal(percpu_stats_parse(buf, len, &s), 0);
        assert_int_equal(percpu_stats_frag_bytes(&s, 2560 * 1024, 16, 4096, &f), 0);
        assert_int_equal(f, 1128);
        percpu_stats_done(&s);
}

static void test_percpu_stats_literals(void **state) {
        const char *s =
                PS_HEAD
                PS_CHUNK("Chunk: <- Reserved Chunk", 1, 0, 100)
                PS_CHUNK("Chunk: <- First Chunk", 5, 1, 200)
                PS_CHUNK("Chunk (to_depopulate)", 0, 2, 300)
                PS_CHUNK("Chunk (sidelined):", 2, 0, 400)
                PS_CHUNK("Chunk (some_future_state)", 0, 7, 500)
                "Chunk:\n"
                "  nr_alloc            :            1\n"
                "  new_key_from_7_0    :           -5\n"
                "  empty_pop_pages     :            0\n"
                "  free_bytes          :           10\n"
                "\n"
                "Future Section:\n"
                "  anything            :            1\n";
        PercpuStats st = {};
        PercpuSummary sum;

        (void) state;
        assert_int_equal(percpu_stats_parse(s, strlen(s), &st), 0);
        assert_int_equal(st.unit_size, 32768);
        assert_int_equal(st.reserved_size, 8192);
        assert_int_equal(st.static_size, -1);           /* not printed: -1 */
        assert_int_equal(st.nr_max_chunks, 5);
        assert_int_equal(st.n_chunks, 6);
        assert_int_equal(st.chunks[0].kind, PERCPU_CHUNK_RESERVED);
        assert_int_equal(st.chunks[1].kind, PERCPU_CHUNK_FIRST);
        assert_int_equal(st.chunks[2].kind, PERCPU_CHUNK_TO_DEPOPULATE);
        assert_int_equal(st.chunks[3].kind, PERCPU_CHUNK_SIDELINED);
        assert_int_equal(st.chunks[4].kind, PERCPU_CHUNK_NORMAL);
        assert_int_equal(st.chunks[5].kind, PERCPU_CHUNK_NORMAL);
        assert_int_equal(st.chunks[5].contig_bytes, -1);
        assert_int_equal(st.chunks[5].free_bytes, 10);
        percpu_stats_summarize(&st, &sum);
        assert_int_equal(sum.chunks, 6);
        assert_int_equal(sum.empty_chunks, 2);
        assert_int_equal(sum.empty_pop_pages, 10);
        assert_int_equal(sum.free_bytes, 1510);
        assert_int_equal(sum.to_depopulate, 1);
        assert_int_equal(sum.sidelined, 1);
        percpu_stats_done(&st);

        /* No chunk at all is valid (the caller compares n_chunks with nr_chunks). */
        assert_int_equal(percpu_stats_parse(PS_HEAD, strlen(PS_HEAD), &st), 0);
        assert_int_equal(st.n_chunks, 0);
        assert_null(st.chunks);
        percpu_stats_summarize(&st, &sum);
        assert_int_equal(sum.chunks, 0);
        percpu_stats_summarize(NULL, &sum);
        assert_int_equal(sum.free_bytes, 0);
        percpu_stats_done(&st);

        /* Sums saturate instead of overflowing. */
        s = PS_HEAD PS_CHUNK("Chunk:", 1, 0, 9223372036854775807) PS_CHUNK("Chunk:", 1, 0, 9223372036854775807);
        assert_int_equal(percpu_stats_parse(s, strlen(s), &st), 0);
        percpu_stats_summarize(&st, &sum);
        assert_true(sum.free_bytes == INT64_MAX);
        percpu_stats_done(&st);

        static const char *const bad[] = {
                "",
                "Percpu Memory Statistics\n",
                /* missing a global key (empty_pop_pages) */
                "Global Stats:\n  nr_alloc : 1\n  nr_dealloc : 1\n  nr_cur_alloc : 1\n  nr_max_alloc : 1\n"
                "  nr_chunks : 1\n  nr_max_chunks : 1\n  min_alloc_size : 1\n  max_alloc_size : 1\n",
                /* a value outside any section */
                "  nr_alloc : 1\n" PS_HEAD,
                /* malformed values */
                PS_HEAD "Chunk:\n  nr_alloc : x\n",
                PS_HEAD "Chunk:\n  nr_alloc : 1 2\n",
                PS_HEAD "Chunk:\n  nr_alloc 1\n",
                PS_HEAD "Chunk:\n  nr_alloc :\n",
                PS_HEAD "Chunk:\n  : 5\n",
                PS_HEAD "Chunk:\n  nr_alloc : 99999999999999999999\n",
                /* a chunk missing free_bytes (truncated) */
                PS_HEAD "Chunk: <- First Chunk\n  nr_alloc : 1\n  empty_pop_pages : 0\n",
                PS_HEAD PS_CHUNK("Chunk:", 1, 0, 1) "Chunk:\n",
                /* a key repeated in a chunk */
                PS_HEAD "Chunk:\n  nr_alloc : 1\n  nr_alloc : 1\n  empty_pop_pages : 0\n  free_bytes : 1\n",
                /* a value between "Per Chunk Stats:" and the first chunk */
                PS_HEAD "  nr_alloc : 1\n",
                /* a chunk before "Per Chunk Stats:" */
                "Chunk:\n" PS_HEAD,
                /* malformed chunk header, unknown column-0 text */
                PS_HEAD "Chunky:\n",
                PS_HEAD "garbage here\n",
                /* a section printed twice: two dumps concatenated */
                PS_HEAD PS_HEAD,
        };
        st = (PercpuStats) { .nr_alloc = 31 };
        assert_each_einval(bad, percpu_stats_parse(bad_s, bad_len, &st));
        assert_int_equal(st.nr_alloc, 31);
}

/* ------------------------------------------------------------------------- */
/* The live kernel (read-only). */

static void test_live_kernel(void **state) {
        Zoneinfo zi = {};
        Meminfo m = {};
        Topology t = {};
        Vmstat v = {};
        struct utsname u;
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        int r;

        (void) state;
        if (access("/proc/zoneinfo", R_OK) < 0 || access("/proc/meminfo", R_OK) < 0)
                skip();

        assert_int_equal(zoneinfo_read("/", &zi), 0);
        assert_true(zi.n_zones >= 1);
        for (size_t i = 0; i < zi.n_zones; i++)
                if (zi.zones[i].populated)
                        assert_int_equal(zi.zones[i].n_cpus, (size_t) online);
        zoneinfo_done(&zi);
        assert_int_equal(zoneinfo_read(NULL, &zi), 0);
        zoneinfo_done(&zi);

        assert_int_equal(meminfo_read("/", &m), 0);
        assert_true(m.mem_total_kib > 0);
        assert_true(m.has_percpu);      /* every kernel since 4.7 */

        assert_int_equal(vmstat_read("/", &v), 0);
        assert_true(v.nr_free_pages > 0);

        assert_int_equal(uname(&u), 0);
        assert_int_equal(topology_read("/", &t), 0);
        assert_string_equal(t.kernel_release, u.release);
        assert_int_equal(t.online_cpus, (unsigned) online);
        assert_int_equal(t.page_size, (unsigned) sysconf(_SC_PAGESIZE));
        assert_true(t.possible_cpus >= t.online_cpus);
        {
                unsigned sum = 0;
                for (unsigned n = 0; n < t.n_nodes; n++)
                        sum += topology_node_cpus(&t, (int) n);
                assert_int_equal(sum, t.online_cpus);
        }
        topology_done(&t);

        {
                PcpKnobRead k = { 0 };
                r = read_pcp_knob("/", &k);
                if (r != -ENOENT) {
                        assert_int_equal(r, 0);
                        assert_true(k.value == 0 || k.value >= PCP_FRACTION_MIN);
                }
        }

        {
                Psi p;
                r = psi_read("/", &p);
                assert_true(r == 0 || r == -ENOENT || r == -EOPNOTSUPP);
        }

        {
                PercpuStats s;
                r = percpu_stats_read("/", &s);
                if (r == 0) {
                        assert_true(s.n_chunks >= 1);
                        percpu_stats_done(&s);
                } else
                        assert_true(r == -ENOENT || r == -EACCES || r == -EPERM);
        }
}

/* cgroup v1 memory on this VM, read-only: /sys/fs/cgroup/memory and /proc/cgroups. */
static void test_live_memcg(void **state) {
        _cleanup_(freep) char *b1 = NULL, *b2 = NULL;
        ProcCgroupsRow before, after;
        MemcgCounts m = {};
        size_t l1, l2;

        (void) state;
        if (read_file_at("/", "/proc/cgroups", 1 << 20, &b1, &l1) < 0 || proc_cgroups_parse(b1, l1, "memory", &before) < 0)
                skip();

        assert_int_equal(memcg_counts_read("/", &m), 0);
        assert_int_equal(read_file_at("/", "/proc/cgroups", 1 << 20, &b2, &l2), 0);
        assert_int_equal(proc_cgroups_parse(b2, l2, "memory", &after), 0);

        if (before.hierarchy == 0) {
                /* Memory on the unified hierarchy (or not mounted). */
                assert_true(m.mode == CGROUP_MEMORY_V2 || m.mode == CGROUP_MEMORY_NONE);
        } else {
                assert_int_equal(m.mode, CGROUP_MEMORY_V1);
                assert_non_null(m.mount);
                assert_true(m.mount[0] == '/');
                assert_true(m.live >= 1);
                /* live + dying = max(num_cgroups, live), num_cgroups read around the walk. */
                assert_true(m.live + m.dying >= MIN(before.num_cgroups, after.num_cgroups));
                assert_true(m.live + m.dying <= MAX(MAX(before.num_cgroups, after.num_cgroups), m.live));
                if (access("/sys/fs/cgroup/memory/memory.usage_in_bytes", F_OK) == 0)
                        assert_string_equal(m.mount, "/sys/fs/cgroup/memory");
        }
        if (m.mode != CGROUP_MEMORY_NONE)
                assert_true(m.live >= 1);
        memcg_counts_done(&m);
}

/* ------------------------------------------------------------------------ */
/* The source table: the snapshot and `pcptunectl snapshot` iterate it. */

typedef struct RowFiles {
        const char *paths[256];
        size_t n;
        bool required;          /* of the row being walked */
} RowFiles;

static int row_file(const SourceFile *f, void *userdata) {
        RowFiles *rf = userdata;

        assert_true(f->path[0] == '/');
        assert_true(rf->n < ELEMENTSOF(rf->paths));
        rf->paths[rf->n++] = f->path;
        rf->required |= f->required;
        return 0;
}

static void test_source_table(void **state) {
        RowFiles rf = { .n = 0 };

        (void) state;
        for (SourceId id = 0; id < _SOURCE_MAX; id++) {
                const SourceDesc *d = source_desc(id);
                assert_non_null(d);
                assert_non_null(d->name);
                assert_true(!d->read != !d->read_by); /* read in a sample, or says who reads it */
                assert_true(!d->reuse || d->read);
                assert_true(!d->record == !d->record_file);
                size_t first = rf.n;
                rf.required = false;
                assert_int_equal(source_desc_foreach_file(d, row_file, &rf), 0);
                assert_true(rf.n > first); /* what a snapshot must copy for it */
                assert_true(rf.required == d->required);
                size_t own = 0;
                while (own < SOURCE_FILES_MAX && d->files[own].path)
                        own++;
                assert_int_equal(rf.n - first, own + (d->knob_files ? (size_t) _KNOB_ID_MAX : 0));
                assert_true(d->knob_files == (id == SOURCE_KNOBS));
                for (KnobId k = 0; d->knob_files && k < _KNOB_ID_MAX; k++) /* every row of the knob table */
                        assert_string_equal(rf.paths[first + own + (size_t) k], knob_desc(k)->path);
        }
        /* No file in two rows: a snapshot copies (and counts) each once. */
        for (size_t i = 0; i < rf.n; i++)
                for (size_t k = 0; k < i; k++)
                        assert_string_not_equal(rf.paths[i], rf.paths[k]);
        assert_null(source_desc(_SOURCE_MAX));
        assert_null(source_desc(-1));
}

static int count_match(const char *rel, void *userdata) {
        assert_true(rel[0] == '/');
        (*(unsigned *) userdata)++;
        return 0;
}

static void test_source_file_expand(void **state) {
        (void) state;
        char *numa2 = fixture_root("6.12.117+deb12-amd64-smp16-numa2-8G", "root");
        char *smp2 = fixture_root("6.1.0-57-amd64-smp2-1G", "root");
        unsigned n = 0;

        assert_int_equal(source_file_expand(numa2, "/sys/devices/system/node/node[0-9]*/cpulist", count_match, &n), 0);
        assert_int_equal(n, 2);
        n = 0;
        assert_int_equal(source_file_expand(smp2, "/sys/devices/system/node/node[0-9]*/cpulist", count_match, &n), 0);
        assert_int_equal(n, 1);
        n = 0; /* a literal path is passed as it is, there or not; a pattern below a missing directory matches nothing */
        assert_int_equal(source_file_expand(smp2, "/proc/no-such-file", count_match, &n), 0);
        assert_int_equal(source_file_expand(smp2, "/no-such-dir/x*/y", count_match, &n), 0);
        assert_int_equal(n, 1);
        free(numa2);
        free(smp2);
}

/* A captured tree reads back as the tree it was captured from, on every fixture. */
static void test_capture_roundtrip(void **state) {
        (void) state;
        for (size_t i = 0; fixture_sets[i]; i++) {
                char *root = fixture_root(fixture_sets[i], "root"), *dir = test_mkdtemp("capture");
                Snapshot *a = NULL, *b = NULL;

                assert_true(capture_snapshot(root, dir) > 3);
                assert_int_equal(snapshot_take(root, &a), 0);
                assert_int_equal(snapshot_take(dir, &b), 0);
                assert_string_equal(a->topo.kernel_release, b->topo.kernel_release);
                assert_int_equal(a->topo.page_size, b->topo.page_size);
                assert_int_equal(a->topo.online_cpus, b->topo.online_cpus);
                assert_int_equal(a->topo.possible_cpus, b->topo.possible_cpus);
                assert_int_equal(a->topo.n_nodes, b->topo.n_nodes);
                assert_int_equal(a->meminfo.mem_total_kib, b->meminfo.mem_total_kib);
                assert_int_equal(a->n_pcp_zones, b->n_pcp_zones);
                assert_int_equal(a->pcp_held_pages, b->pcp_held_pages);
                assert_int_equal(a->pcp_high_max, b->pcp_high_max);
                assert_int_equal(a->regime, b->regime);
                assert_int_equal(a->has_knob, b->has_knob);
                assert_int_equal(snapshot_pcp_value(a), snapshot_pcp_value(b));
                assert_int_equal(a->has_vmstat, b->has_vmstat);
                assert_int_equal(a->has_psi, b->has_psi);
                assert_int_equal(a->has_memcg, b->has_memcg);
                assert_int_equal(a->memcg.live, b->memcg.live);
                assert_int_equal(a->memcg.dying, b->memcg.dying);
                assert_int_equal(a->has_percpu_sysfs, b->has_percpu_sysfs);
                for (KnobId k = 0; k < _KNOB_ID_MAX; k++) {
                        assert_int_equal(a->knobs[k].present, b->knobs[k].present);
                        assert_int_equal(a->knobs[k].value, b->knobs[k].value);
                }
                snapshot_free(a);
                snapshot_free(b);
                test_rm_rf(dir);
                free(dir);
                free(root);
        }
}

static const char *wanted_base;
static int wanted_walk(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        (void) ftw;
        if (type == FTW_F && !snapshot_path_wanted(path + strlen(wanted_base)))
                fail_msg("capture wrote %s, which an archive's unpacking would skip", path);
        return 0;
}

/*
 * Issue 21 item 7: what an archive's unpacking writes.  Every file a capture writes is wanted (so an
 * archive reads back whole, on every fixture); member names are normalised or refused.
 */
static void test_snapshot_archive_paths(void **state) {
        (void) state;
        for (size_t i = 0; fixture_sets[i]; i++) {
                char *root = fixture_root(fixture_sets[i], "root"), *dir = test_mkdtemp("capture-wanted");
                assert_true(capture_snapshot(root, dir) > 3);
                wanted_base = dir;
                assert_int_equal(nftw(dir, wanted_walk, 16, FTW_PHYS), 0);
                test_rm_rf(dir);
                free(dir);
                free(root);
        }
        assert_true(snapshot_path_wanted("/proc/zoneinfo"));
        assert_true(snapshot_path_wanted("/sys/devices/system/node/node12/cpulist"));
        assert_true(snapshot_path_wanted("/proc/sys/vm/percpu_pagelist_high_fraction"));
        assert_true(snapshot_path_wanted("/.pcptune/snapshot"));
        assert_false(snapshot_path_wanted("/etc/passwd"));
        assert_false(snapshot_path_wanted("/sys/devices/system/node/node1/x/cpulist"));
        assert_false(snapshot_path_wanted("/sys/devices/system/node/nodeX/cpulist"));
        assert_false(snapshot_path_wanted("/proc/zoneinfo/x"));

        static const struct {
                const char *name, *path;
                int r;
        } names[] = {
                { "./proc/zoneinfo", "/proc/zoneinfo", 1 },
                { "proc/zoneinfo", "/proc/zoneinfo", 1 },
                { ".//./proc/", "/proc", 1 },
                { "./", "", 0 },
                { ".", "", 0 },
                { "/etc/passwd", NULL, -EINVAL },
                { "./proc/../../etc/passwd", NULL, -EINVAL },
                { "..", NULL, -EINVAL },
                { "proc//zoneinfo", NULL, -EINVAL },
                { "proc/./zoneinfo", NULL, -EINVAL },
                { "proc/zone\ninfo", NULL, -EINVAL },
                { "", "", 0 },
        };
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                char buf[64] = "";
                int r = snapshot_member_path(names[i].name, buf, sizeof buf);
                if (r != names[i].r || (r > 0 && !streq(buf, names[i].path)))
                        fail_msg("'%s': %d '%s'", names[i].name, r, buf);
        }
        char small[8];
        assert_int_equal(snapshot_member_path("proc/zoneinfo", small, sizeof small), -ENAMETOOLONG);
}

/* Capture root into a new directory: the files written; the directory in *ret_dir. */
static int capture_into(const char *root, char **ret_dir) {
        *ret_dir = test_mkdtemp("knobs-capture");
        return capture_snapshot(root, *ret_dir);
}

/*
 * The knobs source: every row of the knob table is read into the snapshot
 * by KnobId, a sysctl the kernel has as present with its value, one it has
 * not as absent; a capture keeps the file of a present contrib sysctl.
 */
static void test_snapshot_knobs(void **state) {
        const KnobDesc *scale = knob_desc(KNOB_PCP_BATCH_SCALE_MAX), *high = knob_desc(KNOB_PCP_HIGH_FRACTION);
        char *root = test_root_copy("6.18.44-fc-live-smp2-24G", "knobs"), *dir0 = NULL, *dir1 = NULL;
        Snapshot *s = NULL, *c = NULL;
        int64_t v = 42;
        int n0, n1;

        (void) state;
        /* A stock kernel: no contrib sysctl. */
        assert_int_equal(snapshot_take(root, &s), 0);
        assert_false(s->knobs[scale->id].present);
        assert_int_equal(s->knobs[scale->id].error, -ENOENT);
        assert_int_equal(snapshot_knob_value(s, scale->id, &v), -ENOENT);
        assert_int_equal(v, 42); /* untouched */
        assert_true(s->knobs[high->id].present);
        assert_int_equal(snapshot_knob_value(s, high->id, &v), 0);
        assert_int_equal(v, 0);
        assert_int_equal(snapshot_knob_value(s, KNOB_PCP_FRACTION, &v), -ENOENT); /* not on 5.14+ */
        assert_int_equal(snapshot_knob_value(s, _KNOB_ID_MAX, &v), -EINVAL);
        assert_int_equal(snapshot_knob_value(s, _KNOB_ID_INVALID, &v), -EINVAL);
        assert_int_equal(snapshot_knob_value(NULL, high->id, &v), -ENODATA); /* a shape: nothing read */
        snapshot_free(s);
        n0 = capture_into(root, &dir0);
        assert_true(n0 > 3);

        /* The contrib kernel: its value, by KnobId; the pcp sysctl from the same read. */
        test_put(root, scale->path, "3\n", 0644);
        test_put(root, high->path, "1000\n", 0644);
        assert_int_equal(snapshot_take(root, &s), 0);
        assert_true(s->knobs[scale->id].present);
        assert_int_equal(s->knobs[scale->id].error, 0);
        assert_int_equal(snapshot_knob_value(s, scale->id, &v), 0);
        assert_int_equal(v, 3);
        assert_int_equal(snapshot_knob_value(s, high->id, &v), 0);
        assert_int_equal(v, 1000);
        assert_true(s->has_knob);
        assert_int_equal(snapshot_pcp_value(s), 1000);
        assert_ptr_equal(snapshot_pcp_desc(s), high);

        /* A capture copies the file once more than without it, and reads back the same values. */
        n1 = capture_into(root, &dir1);
        assert_int_equal(n1, n0 + 1);
        assert_int_equal(test_value(dir1, scale->path), 3);
        assert_int_equal(snapshot_take(dir1, &c), 0);
        for (KnobId k = 0; k < _KNOB_ID_MAX; k++) {
                assert_int_equal(c->knobs[k].present, s->knobs[k].present);
                assert_int_equal(c->knobs[k].value, s->knobs[k].value);
        }
        snapshot_free(c);
        snapshot_free(s);

        /* Not a number: absent, and why. */
        test_put(root, scale->path, "abc\n", 0644);
        assert_int_equal(snapshot_take(root, &s), 0);
        assert_false(s->knobs[scale->id].present);
        assert_int_equal(snapshot_knob_value(s, scale->id, &v), -EINVAL);
        snapshot_free(s);

        /* A sample of other sources did not read the knobs. */
        assert_int_equal(snapshot_take_sources(root, SOURCE_BIT(SOURCE_MEMINFO), &s), 0);
        assert_int_equal(snapshot_knob_value(s, high->id, &v), -ENODATA);
        snapshot_free(s);

        test_rm_rf(dir0);
        test_rm_rf(dir1);
        test_rm_rf(root);
        free(dir0);
        free(dir1);
        free(root);
}

/* Some sources only: the rest stays zero and nothing is derived. */
static void test_snapshot_take_sources(void **state) {
        (void) state;
        char *root = fixture_root("6.18.44-fc-live-smp2-24G", "root");
        Snapshot *full = NULL, *part = NULL;

        assert_int_equal(snapshot_take(root, &full), 0);
        assert_int_equal(snapshot_take_sources(root, SOURCE_BIT(SOURCE_MEMCG) | SOURCE_BIT(SOURCE_MEMINFO), &part), 0);
        assert_true(part->has_memcg);
        assert_int_equal(part->memcg.dying, full->memcg.dying);
        assert_int_equal(part->meminfo.percpu_kib, full->meminfo.percpu_kib);
        assert_int_equal(part->zoneinfo.n_zones, 0);
        assert_int_equal(part->topo.online_cpus, 0);
        assert_false(part->has_knob);
        assert_int_equal(part->n_pcp_zones, 0);
        snapshot_free(part);
        /* A required source in the mask fails the read. */
        assert_int_equal(snapshot_take_sources("/nonexistent-root", SOURCE_BIT(SOURCE_ZONEINFO), &part), -ENOENT);
        snapshot_free(full);
        free(root);
}

/* The daemon's sampling stage: a cheap sample reuses zoneinfo and the memcg counts of the kept one. */
static void test_sampler(void **state) {
        (void) state;
        char *root = fixture_root("6.18.44-fc-live-smp2-24G", "root");
        Sampler *sp = NULL;
        Snapshot *s = NULL;
        MemcgCost cost;

        assert_int_equal(sampler_new(root, &sp), 0);
        assert_int_equal(sampler_take(sp, NULL, true, &s, NULL), 0); /* nothing kept yet: read */
        assert_false(s->zoneinfo_reused);
        assert_false(s->memcg_reused);
        sampler_memcg_cost(sp, s, &cost);
        assert_true(cost.bytes > 0);
        sampler_keep(sp, s);
        assert_int_equal(sampler_take(sp, NULL, true, &s, NULL), 0);
        assert_true(s->zoneinfo_reused);
        assert_true(s->memcg_reused);
        assert_true(s->n_pcp_zones > 0);
        sampler_keep(sp, s);
        /* A fixture reads fast: a full sample reads everything again. */
        assert_int_equal(sampler_take(sp, NULL, false, &s, NULL), 0);
        assert_false(s->zoneinfo_reused);
        sampler_keep(sp, s);
        sampler_free(sp);
        free(root);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_zoneinfo_fixtures),
                cmocka_unit_test(test_zoneinfo_fixture_table_complete),
                cmocka_unit_test(test_zoneinfo_details),
                cmocka_unit_test(test_zoneinfo_error_line),
                cmocka_unit_test(test_zoneinfo_read_roots),
                cmocka_unit_test(test_zoneinfo_many_cpus),
                cmocka_unit_test(test_zoneinfo_literal_old_layout),
                cmocka_unit_test(test_zoneinfo_literal_new_layout),
                cmocka_unit_test(test_zoneinfo_errors),
                cmocka_unit_test(test_zoneinfo_truncated),
                cmocka_unit_test(test_meminfo_fixtures),
                cmocka_unit_test(test_meminfo_literals),
                cmocka_unit_test(test_vmstat_fixtures),
                cmocka_unit_test(test_vmstat_literals),
                cmocka_unit_test(test_psi),
                cmocka_unit_test(test_topology_roots),
                cmocka_unit_test(test_topology_fake),
                cmocka_unit_test(test_knob),
                cmocka_unit_test(test_sysctl_name_to_path),
                cmocka_unit_test(test_proc_cgroups_parse),
                cmocka_unit_test(test_cgroup_stat_parse),
                cmocka_unit_test(test_cgroup_mode_to_string),
                cmocka_unit_test(test_memcg_find_mount),
                cmocka_unit_test(test_memcg_fake_v1),
                cmocka_unit_test(test_memcg_fake_v2),
                cmocka_unit_test(test_percpu_stats_fixtures),
                cmocka_unit_test(test_percpu_stats_literals),
                cmocka_unit_test(test_percpu_stats_inconsistent),
                cmocka_unit_test(test_percpu_stats_frag),
                cmocka_unit_test(test_source_table),
                cmocka_unit_test(test_source_file_expand),
                cmocka_unit_test(test_capture_roundtrip),
                cmocka_unit_test(test_snapshot_archive_paths),
                cmocka_unit_test(test_snapshot_knobs),
                cmocka_unit_test(test_snapshot_take_sources),
                cmocka_unit_test(test_sampler),
                cmocka_unit_test(test_live_kernel),
                cmocka_unit_test(test_live_memcg),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
