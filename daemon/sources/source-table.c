/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <fnmatch.h>

#include "knob.h"
#include "log.h"
#include "source-table.h"

/* ---- the readers of a sample ---------------------------------------------- */

static int read_topology(const char *root, const Snapshot *prev, Snapshot *s, SnapshotError *err) {
        int r = topology_read(root, &s->topo);
        if (r < 0) {
                *err = (SnapshotError){ .file = "/sys/devices/system (topology) or /proc/sys/kernel/osrelease" };
                return log_debug_errno(r, "Failed to read the topology below %s: %s", strna(root), errno_str(r));
        }
        return 0;
}

static int read_meminfo(const char *root, const Snapshot *prev, Snapshot *s, SnapshotError *err) {
        int r = meminfo_read(root, &s->meminfo);
        if (r < 0) {
                *err = (SnapshotError){ .file = "/proc/meminfo" };
                return log_debug_errno(r, "Failed to read meminfo: %s", errno_str(r));
        }
        return 0;
}

static int zoneinfo_copy(const Zoneinfo *from, Zoneinfo *to) {
        *to = (Zoneinfo){ .has_high_min_max = from->has_high_min_max };
        to->zones = calloc(MAX(from->n_zones, (size_t) 1), sizeof(Zone));
        if (!to->zones)
                return -ENOMEM;
        for (size_t i = 0; i < from->n_zones; i++) {
                to->zones[i] = from->zones[i];
                to->zones[i].cpus = NULL;
                to->n_zones = i + 1;
                if (from->zones[i].n_cpus == 0)
                        continue;
                to->zones[i].cpus = malloc(from->zones[i].n_cpus * sizeof(PcpCpu));
                if (!to->zones[i].cpus) {
                        zoneinfo_done(to);
                        return -ENOMEM;
                }
                memcpy(to->zones[i].cpus, from->zones[i].cpus, from->zones[i].n_cpus * sizeof(PcpCpu));
        }
        return 0;
}

static int read_zoneinfo(const char *root, const Snapshot *prev, Snapshot *s, SnapshotError *err) {
        ZoneinfoError zerr = { 0 };
        usec_t t = now_usec(CLOCK_THREAD_CPUTIME_ID);
        int r;

        if (prev) {
                r = zoneinfo_copy(&prev->zoneinfo, &s->zoneinfo);
                s->zoneinfo_cost_usec = prev->zoneinfo_cost_usec;
                s->zoneinfo_reused = true;
        } else {
                r = zoneinfo_read_at(root, &s->zoneinfo, &zerr);
                s->zoneinfo_cost_usec = now_usec(CLOCK_THREAD_CPUTIME_ID) - t;
        }
        if (r < 0) {
                *err = (SnapshotError){ .file = "/proc/zoneinfo", .line = zerr.line, .incomplete = zerr.incomplete };
                return log_debug_errno(r, "Failed to read zoneinfo: %s", errno_str(r));
        }
        return 0;
}

static int read_vmstat(const char *root, const Snapshot *prev, Snapshot *s, SnapshotError *err) {
        s->has_vmstat = vmstat_read(root, &s->vmstat) >= 0;
        return 0;
}

/* Every row of the knob table, and the pcp sysctl among them. */
static int read_knobs(const char *root, const Snapshot *prev, Snapshot *s, SnapshotError *err) {
        sysctl_read_knobs(root, s->knobs);
        s->knob_error = pcp_knob_from_values(s->knobs, &s->pcp_knob);
        s->has_knob = s->knob_error >= 0;
        return 0;
}

static int read_memcg(const char *root, const Snapshot *prev, Snapshot *s, SnapshotError *err) {
        usec_t t = now_usec(CLOCK_THREAD_CPUTIME_ID);

        if (prev) {
                s->has_memcg = prev->has_memcg;
                s->memcg = prev->memcg;
                s->memcg.mount = prev->memcg.mount ? strdup(prev->memcg.mount) : NULL;
                if (prev->memcg.mount && !s->memcg.mount)
                        return -ENOMEM;
                s->memcg_cost_usec = prev->memcg_cost_usec;
                s->memcg_reused = true;
                return 0;
        }
        s->has_memcg = memcg_counts_read(root, &s->memcg) >= 0;
        s->memcg_cost_usec = now_usec(CLOCK_THREAD_CPUTIME_ID) - t;
        return 0;
}

static int read_psi(const char *root, const Snapshot *prev, Snapshot *s, SnapshotError *err) {
        s->has_psi = psi_read(root, &s->psi) >= 0;
        return 0;
}

static int read_percpu_sysfs(const char *root, const Snapshot *prev, Snapshot *s, SnapshotError *err) {
        s->has_percpu_sysfs = percpu_sysfs_read(root, &s->percpu_sysfs) >= 0;
        return 0;
}

/* ---- what a root tree cannot carry ------------------------------------------ */

static int record_page_size(const char *root, char **ret_text) {
        _cleanup_(topology_done) Topology topo = { 0 };
        int r = topology_read(root, &topo);
        if (r < 0)
                return log_error_errno(r, "Failed to read the topology: %s", errno_str(r));
        return asprintf(ret_text, "%u\n", topo.page_size) < 0 ? -ENOMEM : 0;
}

static int record_memcg(const char *root, char **ret_text) {
        MemcgCounts mc = { 0 };
        int r;

        if (memcg_counts_read(root, &mc) < 0)
                return -ENODATA;
        r = memcg_snapshot_format(&mc, ret_text);
        memcg_counts_done(&mc);
        return r;
}

/* ---- the table ---------------------------------------------------------------- */

#define PCPU_SYSFS(f) { PERCPU_SYSFS_DIR "/" f }

static const SourceDesc source_table[_SOURCE_MAX] = {
        [SOURCE_TOPOLOGY] = {
                .name = "topology", .read = read_topology, .required = true,
                .files = { { "/proc/sys/kernel/osrelease", true },
                           { "/sys/devices/system/cpu/online" },
                           { "/sys/devices/system/cpu/possible" },
                           { "/sys/devices/system/node/node[0-9]*/cpulist" } },
                .record_file = "/.pcptune/page_size", .record = record_page_size,
        },
        [SOURCE_MEMINFO] = {
                .name = "meminfo", .read = read_meminfo, .required = true,
                .files = { { "/proc/meminfo", true } },
        },
        [SOURCE_ZONEINFO] = {
                .name = "zoneinfo", .read = read_zoneinfo, .required = true, .reuse = SNAPSHOT_REUSE_ZONEINFO,
                .files = { { "/proc/zoneinfo", true } },
        },
        [SOURCE_VMSTAT] = {
                .name = "vmstat", .read = read_vmstat,
                .files = { { "/proc/vmstat" } },
        },
        [SOURCE_KNOBS] = {
                /* The pcp sysctl and pcptune's contrib ones: its files are the knob table's paths. */
                .name = "knobs", .read = read_knobs, .knob_files = true,
        },
        [SOURCE_MEMCG] = {
                /* The counts also walk the hierarchy's directories: recorded, not copied. */
                .name = "memcg", .read = read_memcg, .reuse = SNAPSHOT_REUSE_MEMCG,
                .files = { { "/proc/cgroups" } },
                .record_file = MEMCG_SNAPSHOT_FILE, .record = record_memcg,
        },
        [SOURCE_PSI] = {
                .name = "psi", .read = read_psi,
                .files = { { "/proc/pressure/memory" } },
        },
        [SOURCE_PERCPU_SYSFS] = {
                /* pcptune's contrib kernel patch 0003 */
                .name = "percpu-sysfs", .read = read_percpu_sysfs,
                .files = { PCPU_SYSFS("nr_chunks"), PCPU_SYSFS("nr_empty_chunks"), PCPU_SYSFS("nr_to_depopulate"),
                           PCPU_SYSFS("nr_sidelined"), PCPU_SYSFS("nr_populated_pages"),
                           PCPU_SYSFS("nr_empty_pop_pages"), PCPU_SYSFS("nr_used_pop_pages"),
                           PCPU_SYSFS("frag_free_bytes"), PCPU_SYSFS("nr_units"), PCPU_SYSFS("unit_pages"),
                           PCPU_SYSFS("empty_pop_pages_high") },
        },
        [SOURCE_PROC_VERSION] = {
                .name = "proc-version",
                .read_by = "the kernel probes (probe-kernel.c): Debian's stable release",
                .files = { { "/proc/version" } },
        },
        [SOURCE_PERCPU_STATS] = {
                .name = "percpu-stats",
                .read_by = "percpu_stats_read() on request (plan, status, after a reclaim): reading it holds "
                           "pcpu_lock with IRQs off for a few ms",
                .files = { { "/sys/kernel/debug/percpu_stats" } },
        },
        [SOURCE_HOST_RECORD] = {
                .name = "host-record",
                .read_by = "nobody yet: kept in a snapshot for the watermark model's inputs (plan --shape takes "
                           "them by hand) and per-node memory",
                .files = { { "/proc/sys/vm/min_free_kbytes" },
                           { "/proc/sys/vm/watermark_scale_factor" },
                           { "/sys/kernel/mm/transparent_hugepage/enabled" },
                           { "/sys/devices/system/node/online" },
                           { "/sys/devices/system/node/possible" },
                           { "/sys/devices/system/node/node[0-9]*/meminfo" } },
        },
};

const SourceDesc *source_desc(SourceId id) {
        return id >= 0 && id < _SOURCE_MAX ? &source_table[id] : NULL;
}

int source_desc_foreach_file(const SourceDesc *d, int (*fn)(const SourceFile *f, void *userdata), void *userdata) {
        int r;

        for (size_t i = 0; i < SOURCE_FILES_MAX && d->files[i].path; i++)
                if ((r = fn(&d->files[i], userdata)) < 0)
                        return r;
        for (KnobId id = 0; d->knob_files && id < _KNOB_ID_MAX; id++)
                if ((r = fn(&(SourceFile){ .path = knob_desc(id)->path }, userdata)) < 0)
                        return r;
        return 0;
}

/* ---- file patterns ------------------------------------------------------------- */

static bool has_pattern(const char *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (s[i] == '*' || s[i] == '?' || s[i] == '[')
                        return true;
        return false;
}

/* prefix: the part already expanded ("" at first); rest: what follows, starting with '/'. */
static int expand_from(const char *root, const char *prefix, const char *rest,
                       int (*fn)(const char *rel, void *userdata), void *userdata) {
        _cleanup_(freep) char *dir_rel = NULL, *dir = NULL, *pattern = NULL;
        const char *seg = rest, *end = NULL;
        DIR *d;
        int r = 0;

        for (; *seg; seg = end) {
                end = strchrnul(seg + 1, '/');
                if (has_pattern(seg + 1, (size_t) (end - seg - 1)))
                        break;
        }
        if (!*seg) {
                _cleanup_(freep) char *rel = NULL;
                if (asprintf(&rel, "%s%s", prefix, rest) < 0)
                        return -ENOMEM;
                return fn(rel, userdata);
        }
        pattern = strndup(seg + 1, (size_t) (end - seg - 1));
        if (!pattern || asprintf(&dir_rel, "%s%.*s", prefix, (int) (seg - rest), rest) < 0 ||
            path_join_root(root, *dir_rel ? dir_rel : "/", &dir) < 0)
                return -ENOMEM;
        d = opendir(dir);
        if (!d)
                return 0; /* nothing matches below a directory that is not there */
        for (struct dirent *de; r >= 0 && (de = readdir(d));) {
                _cleanup_(freep) char *next = NULL;
                if (fnmatch(pattern, de->d_name, FNM_PERIOD) != 0)
                        continue;
                if (asprintf(&next, "%s/%s", dir_rel, de->d_name) < 0)
                        r = -ENOMEM;
                else if (!*end)
                        r = fn(next, userdata);
                else
                        r = expand_from(root, next, end, fn, userdata);
        }
        closedir(d);
        return r;
}

int source_file_expand(const char *root, const char *pattern, int (*fn)(const char *rel, void *userdata),
                       void *userdata) {
        return expand_from(root, "", pattern, fn, userdata);
}

/* ---- a sample: the rows run in table order, then what is derived from them ---- */

/* Fill the model's view of the populated zones and the pcp summaries. */
static int snapshot_derive(Snapshot *s) {
        size_t n = 0;

        s->pcp_zones = calloc(MAX(s->zoneinfo.n_zones, (size_t) 1), sizeof(PcpZone));
        s->pcp_zone_count_pages = calloc(MAX(s->zoneinfo.n_zones, (size_t) 1), sizeof(uint64_t));
        s->pcp_zone_high_limit = calloc(MAX(s->zoneinfo.n_zones, (size_t) 1), sizeof(int64_t));
        if (!s->pcp_zones || !s->pcp_zone_count_pages || !s->pcp_zone_high_limit)
                return -ENOMEM;
        s->pcp_held_pages = zoneinfo_pcp_count_pages(&s->zoneinfo);
        s->pcp_high_max = -1;

        for (size_t i = 0; i < s->zoneinfo.n_zones; i++) {
                const Zone *z = &s->zoneinfo.zones[i];
                if (!z->populated)
                        continue;
                s->pcp_zones[n] = (PcpZone){
                        .node = z->node,
                        .name = z->name,
                        .in = {
                                .managed_pages = z->managed_pages,
                                .low_pages = z->low_pages,
                                .node_cpus = topology_node_cpus(&s->topo, z->node),
                                .online_cpus = s->topo.online_cpus,
                        },
                };

                /* The largest high the kernel may use: printed where the layout has it
                 * (6.13+), the fixed high before 6.7, else the model at the current value. */
                int64_t limit = -1;
                if (s->zoneinfo.has_high_min_max || s->regime != PCP_REGIME_AUTOTUNE) {
                        for (size_t c = 0; c < z->n_cpus; c++) {
                                int64_t v = s->zoneinfo.has_high_min_max ? z->cpus[c].high_max : z->cpus[c].high;
                                limit = MAX(limit, v);
                        }
                } else if (s->has_knob && snapshot_pcp_writable(s)) {
                        PcpSetting set;
                        if (pcp_model_zone(s->regime, &s->pcp_zones[n].in, s->topo.page_size,
                                           (int) snapshot_pcp_value(s), &set) >= 0)
                                limit = set.high_max;
                }
                s->pcp_high_max = MAX(s->pcp_high_max, limit);
                s->pcp_zone_high_limit[n] = limit;
                for (size_t c = 0; c < z->n_cpus; c++)
                        s->pcp_zone_count_pages[n] += (uint64_t) MAX(z->cpus[c].count, (int64_t) 0);
                n++;
        }
        s->n_pcp_zones = n;
        return 0;
}

/*
 * The pcp regime follows what the kernel prints, the version only where
 * nothing printed tells (vendors backport):
 *  - only vm.percpu_pagelist_fraction: LEGACY (it became high_fraction in 5.14);
 *  - zoneinfo prints high_min/high_max: AUTOTUNE (zoneinfo_show_print() prints
 *    them from 6.13; the fields exist only with auto-tuning, 6.7+);
 *  - 5.14+ without those lines: with a fixed high (5.14-6.6) every pageset
 *    holds zone_highsize() of the zone, the model's FIXED value, while an
 *    auto-tuned high moves between high_min and high_max per CPU (and is 0
 *    until the CPU first uses the zone).  A CPU whose batch is the model's
 *    and whose high is another value shows auto-tuning; pagesets that all
 *    hold the fixed value cannot tell the two apart (at a non-zero fraction
 *    high_min = high_max = that value in both), so the version decides.
 */
static void snapshot_classify_regime(Snapshot *s) {
        PcpRegime by_version = pcp_regime_from_version(&s->topo.kernel);

        s->regime = by_version;
        s->regime_basis = PCP_REGIME_BY_VERSION;
        if (s->has_knob && !snapshot_pcp_writable(s)) {
                s->regime = PCP_REGIME_LEGACY;
                s->regime_basis = PCP_REGIME_BY_KNOB;
                return;
        }
        if (s->zoneinfo.has_high_min_max) {
                s->regime = PCP_REGIME_AUTOTUNE;
                s->regime_basis = PCP_REGIME_BY_ZONEINFO;
                return;
        }
        if (!s->has_knob)
                return;
        for (size_t i = 0; i < s->zoneinfo.n_zones; i++) {
                const Zone *z = &s->zoneinfo.zones[i];
                PcpSetting fixed;
                PcpZoneInput in;
                if (!z->populated)
                        continue;
                in = (PcpZoneInput){ .managed_pages = z->managed_pages, .low_pages = z->low_pages,
                                     .node_cpus = topology_node_cpus(&s->topo, z->node),
                                     .online_cpus = s->topo.online_cpus };
                if (pcp_model_zone(PCP_REGIME_FIXED, &in, s->topo.page_size, (int) snapshot_pcp_value(s), &fixed) < 0)
                        continue;
                for (size_t c = 0; c < z->n_cpus; c++) {
                        if (z->cpus[c].batch != fixed.batch)
                                continue; /* a pageset the kernel did not recompute: says nothing */
                        s->regime_cpus_compared++;
                        s->regime_cpus_dynamic += z->cpus[c].high != fixed.high_max;
                }
        }
        if (s->regime_cpus_dynamic > 0) {
                s->regime = PCP_REGIME_AUTOTUNE;
                s->regime_basis = PCP_REGIME_BY_PAGESETS;
        }
}

int snapshot_take(const char *root, Snapshot **ret) {
        return snapshot_take_reuse(root, NULL, 0, ret);
}

int snapshot_take_reuse(const char *root, const Snapshot *prev, unsigned flags, Snapshot **ret) {
        return snapshot_take_explain(root, prev, flags, ret, NULL);
}

const char *snapshot_error_format(const char *root, const SnapshotError *err, int error, char *buf, size_t size) {
        _cleanup_(freep) char *path = NULL;
        char epath[512];

        if (!err || !err->file) {
                snprintf(buf, size, "%s", errno_str(error));
                return buf;
        }
        if (path_join_root(root, err->file, &path) < 0)
                path = NULL;
        str_escape(path ?: err->file, epath, sizeof epath);
        if (err->line > 0 && err->incomplete)
                snprintf(buf, size, "%s:%zu: the zone that starts here is incomplete (a truncated file?)", epath,
                         err->line);
        else if (err->line > 0)
                snprintf(buf, size, "%s:%zu: %s", epath, err->line,
                         error == -EINVAL ? "unexpected line (malformed, or a layout this version does not know)"
                                          : errno_str(error));
        else
                snprintf(buf, size, "%s: %s", epath, errno_str(error));
        return buf;
}

/* The readers of the sources in mask, in table order (prev for those reuse names). */
static int snapshot_read_sources(const char *root, const Snapshot *prev, unsigned reuse, unsigned mask, Snapshot *s,
                                 SnapshotError *err) {
        for (SourceId id = 0; id < _SOURCE_MAX; id++) {
                const SourceDesc *d = source_desc(id);
                int r;

                if (!d->read || !(mask & SOURCE_BIT(id)))
                        continue;
                r = d->read(root, prev && (reuse & d->reuse) ? prev : NULL, s, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

int snapshot_take_explain(const char *root, const Snapshot *prev, unsigned flags, Snapshot **ret, SnapshotError *err) {
        _cleanup_(snapshot_freep) Snapshot *s = NULL;
        SnapshotError e = { 0 };
        int r;

        s = calloc(1, sizeof(Snapshot));
        if (!s)
                return -ENOMEM;
        s->timestamp = now_usec(CLOCK_MONOTONIC);
        r = snapshot_read_sources(root, prev, flags, ~0u, s, &e);
        if (r < 0) {
                if (err)
                        *err = e;
                return r;
        }
        snapshot_classify_regime(s);
        r = snapshot_derive(s);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(s);
        return 0;
}

int snapshot_take_sources(const char *root, unsigned sources, Snapshot **ret) {
        _cleanup_(snapshot_freep) Snapshot *s = calloc(1, sizeof(Snapshot));
        SnapshotError e = { 0 };
        int r;

        if (!s)
                return -ENOMEM;
        s->timestamp = now_usec(CLOCK_MONOTONIC);
        r = snapshot_read_sources(root, NULL, 0, sources, s, &e);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(s);
        return 0;
}
