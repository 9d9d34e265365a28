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
        s->knob_error = pcp_knob_from_values(s->knobs, &s->knob);
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
