/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <sys/stat.h>

#include "log.h"
#include "probe-percpu.h"
#include "source-cgroup.h"
#include "source-meminfo.h"
#include "source-percpu-stats.h"
#include "source-topology.h"
#include "util.h"

/* Allocated bytes per unit: every chunk's size minus its free bytes (first chunk: its own size). */
static int percpu_allocated_per_unit(double *ret) {
        PercpuStats st = { 0 };
        double total = 0;
        int r = percpu_stats_read("/", &st);

        if (r < 0)
                return r;
        for (size_t i = 0; i < st.n_chunks; i++)
                total -= (double) st.chunks[i].free_bytes;
        /* Dynamic chunks are unit_size each; the chunk count difference is what matters. */
        total += (double) st.nr_chunks * (double) st.unit_size;
        percpu_stats_done(&st);
        *ret = total;
        return 0;
}

static void remove_children(const char *parent, unsigned n) {
        for (unsigned i = 0; i < n; i++) {
                char p[4096];
                snprintf(p, sizeof p, "%s/m%u", parent, i);
                if (rmdir(p) < 0 && errno != ENOENT)
                        log_warning_errno(errno, "Failed to remove %s: %m", p);
        }
        if (rmdir(parent) < 0 && errno != ENOENT)
                log_warning_errno(errno, "Failed to remove %s: %m", parent);
}

int percpu_measure_memcg_cost(unsigned count, double *ret_bytes, char **ret_how) {
        _cleanup_(freep) char *parent = NULL;
        _cleanup_(topology_done) Topology topo = { 0 };
        MemcgCounts mc = { 0 };
        Meminfo m0, m1;
        double a0 = 0, a1 = 0;
        bool exact;
        unsigned made = 0;
        int r;

        if (count == 0)
                return -EINVAL;
        r = topology_read("/", &topo);
        if (r < 0)
                return r;
        r = memcg_counts_read("/", &mc);
        if (r < 0)
                return r;
        if (mc.mode == CGROUP_MEMORY_NONE) {
                memcg_counts_done(&mc);
                return -EOPNOTSUPP;
        }
        r = asprintf(&parent, "%s/pcptune-measure.%d", mc.mount, (int) getpid());
        bool v2 = mc.mode == CGROUP_MEMORY_V2;
        memcg_counts_done(&mc);
        if (r < 0)
                return -ENOMEM;
        if (mkdir(parent, 0755) < 0)
                return log_error_errno(errno, "Failed to create %s: %m", parent);
        if (v2) {
                _cleanup_(freep) char *sc = NULL;
                if (asprintf(&sc, "%s/cgroup.subtree_control", parent) < 0)
                        r = -ENOMEM;
                else
                        r = write_file_at("/", sc, "+memory");
                if (r < 0) {
                        remove_children(parent, 0);
                        return log_error_errno(r, "Failed to enable the memory controller below %s: %s", parent,
                                               errno_str(r));
                }
        }

        exact = percpu_allocated_per_unit(&a0) >= 0;
        r = meminfo_read("/", &m0);
        for (; r >= 0 && made < count; made++) {
                char p[4096];
                snprintf(p, sizeof p, "%s/m%u", parent, made);
                if (mkdir(p, 0755) < 0)
                        r = negative_errno();
        }
        if (r >= 0)
                r = meminfo_read("/", &m1);
        if (r >= 0 && exact)
                exact = percpu_allocated_per_unit(&a1) >= 0;
        remove_children(parent, made);
        if (r < 0)
                return log_error_errno(r, "Failed to measure: %s", errno_str(r));
        if (!m0.has_percpu || !m1.has_percpu)
                return -EOPNOTSUPP;

        unsigned units = topo.possible_cpus ?: topo.online_cpus;
        if (exact) {
                *ret_bytes = (a1 - a0) / count * units;
                if (asprintf(ret_how, "measured here: %u empty memcgs created, %.0f B per unit each from "
                                      "percpu_stats, x %u units",
                             count, (a1 - a0) / count, units) < 0)
                        *ret_how = NULL;
        } else {
                *ret_bytes = ((double) m1.percpu_kib - (double) m0.percpu_kib) * 1024.0 / count;
                if (asprintf(ret_how, "measured here: %u empty memcgs created, Percpu %" PRIu64 " -> %" PRIu64
                                      " kB (whole pages per unit: +-%u B per memcg)",
                             count, m0.percpu_kib, m1.percpu_kib, 4096 * units / count) < 0)
                        *ret_how = NULL;
        }
        return 0;
}

static bool printable(const char *s, size_t max) {
        size_t n = 0;
        for (; *s; s++, n++)
                if ((unsigned char) *s < 0x20 || *s == 0x7f)
                        return false;
        return n > 0 && n <= max;
}

int memcg_cost_measurement_parse(const char *buf, size_t len, MemcgCostMeasurement *ret) {
        MemcgCostMeasurement m = { 0 };
        json_tokener *tok;
        json_object *o, *v;
        int64_t cpus, nodes;
        double bytes;

        if (!buf || len > 4096)
                return -EINVAL;
        tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        o = json_tokener_parse_ex(tok, buf, (int) len);
        for (size_t i = o ? json_tokener_get_parse_end(tok) : len; i < len; i++)
                if (buf[i] != ' ' && buf[i] != '\n' && buf[i] != '\t' && buf[i] != '\r') {
                        json_object_put(o); /* trailing data: not one object */
                        o = NULL;
                        break;
                }
        json_tokener_free(tok);
        if (!o || !json_object_is_type(o, json_type_object))
                goto invalid;

        if (!json_object_object_get_ex(o, "kernel_release", &v) || !json_object_is_type(v, json_type_string) ||
            !printable(json_object_get_string(v), sizeof m.kernel_release - 1))
                goto invalid;
        snprintf(m.kernel_release, sizeof m.kernel_release, "%s", json_object_get_string(v));
        if (!json_object_object_get_ex(o, "possible_cpus", &v) || !json_object_is_type(v, json_type_int) ||
            (cpus = json_object_get_int64(v)) < 1 || cpus > 8192)
                goto invalid;
        if (!json_object_object_get_ex(o, "nodes", &v) || !json_object_is_type(v, json_type_int) ||
            (nodes = json_object_get_int64(v)) < 1 || nodes > 1024)
                goto invalid;
        if (json_get_number(o, "bytes", 1.0, 65536.0 * (double) cpus, &bytes) < 0)
                goto invalid;
        if (!json_object_object_get_ex(o, "how", &v) || !json_object_is_type(v, json_type_string) ||
            !printable(json_object_get_string(v), sizeof m.how - 1))
                goto invalid;
        snprintf(m.how, sizeof m.how, "%s", json_object_get_string(v));
        m.possible_cpus = (unsigned) cpus;
        m.nodes = (unsigned) nodes;
        m.bytes = bytes;
        json_object_put(o);
        *ret = m;
        return 0;
invalid:
        json_object_put(o);
        return -EINVAL;
}

int memcg_cost_measurement_load(const char *state_dir, MemcgCostMeasurement *ret) {
        _cleanup_(freep) char *path = NULL, *buf = NULL;
        _cleanup_(closep) int fd = -EBADF;
        struct stat st;
        size_t len;
        int r;

        if (asprintf(&path, "%s/" MEMCG_COST_FILE, state_dir) < 0)
                return -ENOMEM;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        r = read_fd_full(fd, 4096, &buf, &len);
        if (r < 0)
                return r;
        return memcg_cost_measurement_parse(buf, len, ret);
}

int memcg_cost_measurement_save(const char *state_dir, const MemcgCostMeasurement *m) {
        _cleanup_(freep) char *path = NULL;
        json_object *o = json_object_new_object();
        int r;

        if (!o)
                return -ENOMEM;
        json_object_object_add(o, "kernel_release", json_object_new_string(m->kernel_release));
        json_object_object_add(o, "possible_cpus", json_object_new_int64(m->possible_cpus));
        json_object_object_add(o, "nodes", json_object_new_int64(m->nodes));
        json_object_object_add(o, "bytes", json_object_new_double(m->bytes));
        json_object_object_add(o, "how", json_object_new_string(m->how));
        const char *text = json_format(o, false);
        r = mkdir_p(state_dir, 0755);
        if (r >= 0 && asprintf(&path, "%s/" MEMCG_COST_FILE, state_dir) < 0)
                r = -ENOMEM;
        if (r >= 0)
                r = write_file_atomic(path, text, strlen(text), 0644);
        json_object_put(o);
        return r;
}
