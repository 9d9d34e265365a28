/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <limits.h>
#include <stdarg.h>

#include "probe-kernel.h"
#include "view.h"
#include "source-percpu-sysfs.h"
#include "source-sysctl.h"
#include "util.h"

static bool exists_at(const char *root, const char *path) {
        _cleanup_(freep) char *p = NULL;
        return path_join_root(root, path, &p) >= 0 && access(p, F_OK) == 0;
}

void kernel_features_declared(const char *root, KernelFeatures *ret) {
        KernelFeatures f = { .fraction_floor = FEATURE_UNKNOWN, .reclaim_swappiness = FEATURE_UNKNOWN,
                             .reclaim_scope_dying = FEATURE_UNKNOWN };
        int64_t v;

        if (root && !streq(root, "/")) {
                f.fraction_floor = read_int64_at(root, "/.pcptune/fraction-floor", &v) >= 0 && v == 1 ? FEATURE_PRESENT
                                                                                                     : FEATURE_ABSENT;
                if (read_int64_at(root, "/.pcptune/memory-reclaim-swappiness", &v) >= 0 && (v == 0 || v == 1))
                        f.reclaim_swappiness = v ? FEATURE_PRESENT : FEATURE_ABSENT;
                if (read_int64_at(root, "/.pcptune/memory-reclaim-scope-dying", &v) >= 0 && (v == 0 || v == 1))
                        f.reclaim_scope_dying = v ? FEATURE_PRESENT : FEATURE_ABSENT;
        }
        *ret = f;
}

void kernel_features_from_snapshot(const KernelFeatures *declared, const Snapshot *s, KernelFeatures *ret) {
        KernelFeatures f = *declared;

        f.percpu_sysfs = s->has_percpu_sysfs;
        f.percpu_depopulate = s->has_percpu_sysfs && s->percpu_sysfs.has_depopulate;
        *ret = f;
}

void kernel_features_probe(const char *root, const Snapshot *s, KernelFeatures *ret) {
        KernelFeatures declared;

        kernel_features_declared(root, &declared);
        kernel_features_from_snapshot(&declared, s, ret);
}

const char *feature_state_to_string(FeatureState s) {
        switch (s) {
        case FEATURE_PRESENT:
                return "yes";
        case FEATURE_ABSENT:
                return "no";
        default:
                return "unknown";
        }
}

static const char *const probe_answer_table[_PROBE_ANSWER_MAX] = {
        [PROBE_NO] = "no",
        [PROBE_YES] = "yes",
        [PROBE_PARTIAL] = "partial",
        [PROBE_UNKNOWN] = "unknown",
};

const char *probe_answer_to_string(ProbeAnswer a) {
        if (a < 0 || a >= _PROBE_ANSWER_MAX)
                return NULL;
        return probe_answer_table[a];
}

_printf_(2, 3) static void set_text(char buf[static PROBE_TEXT_MAX], const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, PROBE_TEXT_MAX, fmt, ap);
        va_end(ap);
}

/* Is v at least the first release of its series that has a change (series: {major, minor, first patch})? */
typedef struct SeriesFix {
        unsigned major, minor, patch;
} SeriesFix;

static bool version_has(const KernelVersion *v, const KernelVersion *mainline, const SeriesFix *stable, size_t n) {
        if (kernel_version_cmp(v, mainline) >= 0)
                return true;
        for (size_t i = 0; i < n; i++)
                if (v->major == stable[i].major && v->minor == stable[i].minor)
                        return v->patch >= stable[i].patch;
        return false;
}

static void version_text(const KernelVersion *v, char *buf, size_t size) {
        snprintf(buf, size, "%u.%u.%u", v->major, v->minor, v->patch);
}

/*
 * Debian's release names the ABI, not the stable release ("6.1.0-57-amd64"
 * is 6.1.192): /proc/version carries the package version ("... Debian
 * 6.1.192-1 ...").  Where it is there, it is the version the stable
 * backports are looked up with.
 */
static KernelVersion read_stable_version(const ProbeInput *in, bool *ret_from_proc_version) {
        _cleanup_(freep) char *buf = NULL;
        KernelVersion v = in->kernel, d;
        const char *p;
        size_t len;

        *ret_from_proc_version = false;
        if (!in->root || read_file_at(in->root, "/proc/version", 4096, &buf, &len) < 0)
                return v;
        p = strstr(buf, " Debian ");
        if (p && kernel_version_parse(p + 8, &d) >= 0 && d.major == v.major && d.minor == v.minor && d.patch > v.patch) {
                *ret_from_proc_version = true;
                return d;
        }
        return v;
}

/* What read_stable_version() found for this run of the probes. */
static KernelVersion stable_version(const ProbeInput *in, bool *ret_from_proc_version) {
        *ret_from_proc_version = in->stable_from_proc_version;
        return in->stable;
}

/* ---- pcp high auto-tuning: the regime the model uses, from what zoneinfo prints (snapshot.c) ---- */
static void probe_pcp_autotune(const ProbeInput *in, ProbeResult *r) {
        const Snapshot *s = in->snap;
        PcpRegime regime = s ? s->regime : pcp_regime_from_version(&in->kernel);
        bool from_proc_version;
        KernelVersion stable = stable_version(in, &from_proc_version);
        char v[32];

        version_text(&stable, v, sizeof v);
        r->answer = regime == PCP_REGIME_AUTOTUNE ? PROBE_YES : PROBE_NO;
        switch (s ? s->regime_basis : PCP_REGIME_BY_VERSION) {
        case PCP_REGIME_BY_KNOB:
                set_text(r->evidence, "only vm.percpu_pagelist_fraction exists (it became percpu_pagelist_high_fraction "
                                      "in 5.14)");
                break;
        case PCP_REGIME_BY_ZONEINFO:
                set_text(r->evidence, "zoneinfo prints high_min/high_max for every pageset (printed from 6.13)");
                break;
        case PCP_REGIME_BY_PAGESETS:
                set_text(r->evidence, "zoneinfo prints no high_min/high_max, but %u of %u pagesets hold a high other "
                                      "than the fixed one zone_highsize() gives at fraction %" PRId64 ": auto-tuned "
                                      "(kernel %s)",
                         s->regime_cpus_dynamic, s->regime_cpus_compared, snapshot_pcp_value(s), v);
                break;
        default:
                if (s && s->regime_cpus_compared > 0)
                        set_text(r->evidence, "by version %s: zoneinfo prints no high_min/high_max and all %u "
                                              "pagesets hold the fixed high, which both regimes give here",
                                 v, s->regime_cpus_compared);
                else
                        set_text(r->evidence, "by version %s (auto-tuning came with 6.7)%s", v,
                                 s ? "" : "; a hypothetical shape");
                break;
        }
        set_text(r->effect, "%s", regime == PCP_REGIME_AUTOTUNE
                                          ? "the model computes high_min/high_max; a non-zero fraction pins both"
                                          : regime == PCP_REGIME_FIXED ? "the model computes the fixed high"
                                                                       : "the fraction is read only (legacy sysctl)");
}

/* ---- batched bulk frees ----
 * Three paths move pages from a pcp list to the buddy allocator with
 * free_pcppages_bulk() under zone->lock (mm/page_alloc.c):
 *  - a free that takes the list past high (free_frozen_page_commit(), named
 *    free_unref_page_commit() before 6.14): nr_pcp_free() pages at once, up
 *    to batch << CONFIG_PCP_BATCH_SCALE_MAX (2016 at batch 63); in steps of
 *    batch with zone->lock dropped between them since "mm/page_alloc: batch
 *    page freeing in free_frozen_page_commit" (mainline 6.19; no stable
 *    backport);
 *  - decay_pcp_high() (6.7+, the vmstat worker and vm.stat_refresh): count -
 *    high at once, up to batch << SCALE_MAX; in steps of batch since
 *    "mm/page_alloc: batch page freeing in decay_pcp_high" (mainline 6.19;
 *    6.18.7 and 6.12.67, with 0acc67c4030c, as dependencies of "prevent pcp
 *    corruption with SMP=n");
 *  - drain_pages_zone() (drain_all_pages(), CPU offline): steps of
 *    batch << SCALE_MAX since "mm: page_alloc: control latency caused by zone
 *    PCP draining" (6.10; 6.1.104, 6.6.45), whole lists before; upstream
 *    left it at that.
 * Read in Debian's sources: 6.1.192 drains in steps of batch << 5 and frees
 * the rest at once (no decay: fixed high); 6.12.117 decays in steps of
 * batch.  Nothing the kernel prints shows it: by version, and the tests
 * check the answer against kmem:mm_page_pcpu_drain events per
 * free_pcppages_bulk() call (tests/live, contrib/kernel/tests).
 */
static const SeriesFix decay_batched_stable[] = { { 6, 18, 7 }, { 6, 12, 67 } };
static const SeriesFix drain_chunked_stable[] = { { 6, 6, 45 }, { 6, 1, 104 } };

bool kernel_batched_free_path(const KernelVersion *v) {
        return version_has(v, &KV(6, 19), NULL, 0);
}

static void probe_batched_frees(const ProbeInput *in, ProbeResult *r) {
        bool from_proc_version;
        KernelVersion stable = stable_version(in, &from_proc_version);
        const KernelVersion *v = &stable;
        bool has_decay = kernel_version_cmp(v, &KV(6, 7)) >= 0;
        bool decay = has_decay && version_has(v, &KV(6, 19), decay_batched_stable, ELEMENTSOF(decay_batched_stable));
        bool exitpath = kernel_batched_free_path(v);
        bool drain = version_has(v, &KV(6, 10), drain_chunked_stable, ELEMENTSOF(drain_chunked_stable));
        /* The contrib sysctl where the snapshot read it, else the build's CONFIG_PCP_BATCH_SCALE_MAX. */
        const KnobDesc *scale_knob = knob_desc(KNOB_PCP_BATCH_SCALE_MAX);
        int64_t scale_value = 0;
        bool scale_read = snapshot_knob_value(in->snap, scale_knob->id, &scale_value) >= 0;
        int scale = pcp_batch_scale_max(scale_read, scale_value);
        char vt[32];

        version_text(v, vt, sizeof vt);
        if (v->major == 0) {
                r->answer = PROBE_UNKNOWN;
                set_text(r->evidence, "the kernel version could not be read");
                return;
        }
        r->answer = exitpath && (decay || !has_decay) ? PROBE_YES : decay ? PROBE_PARTIAL : PROBE_NO;
        /* The paths' kernel names are in pcptunectl(8); the row says what an operator sees. */
        set_text(r->evidence,
                 "by kernel version %s%s (nothing the kernel prints shows it): a process exit frees %s per "
                 "zone->lock hold; idle lists shrink %s; draining a CPU's lists frees %s (scale_max %d: %s)",
                 vt, from_proc_version ? " (/proc/version)" : "",
                 exitpath ? "at most batch pages (6.19+)" : "up to batch << scale_max pages",
                 !has_decay ? "never (high is fixed before 6.7)"
                 : decay    ? "by batch pages per hold (6.12.67+, 6.18.7+, 6.19+)"
                            : "by up to batch << scale_max pages per hold",
                 drain ? "batch << scale_max pages per hold" : "whole lists in one hold", scale,
                 scale_read ? scale_knob->name : "CONFIG_PCP_BATCH_SCALE_MAX");
        set_text(r->effect, "%s",
                 exitpath ? "each zone->lock hold is at most batch pages whatever high is: a smaller pcp high no "
                            "longer shortens lock holds at exit, it only bounds the memory parked on pcp lists; "
                            "plan's lock-hold figures are batch"
                          : "each bulk free at exit holds zone->lock for up to min(batch << scale_max, high - batch) "
                            "pages: a smaller pcp high (pcp: {high: minimum}) shortens each hold; plan gives the "
                            "pages per fraction");
}

/* ---- dying memcg reparenting ----
 * The observation: a memory cgroup removed while page cache charged to it
 * is still resident.  Without reparenting, each such folio holds a reference
 * on the memcg, which stays dying (counted in /proc/cgroups num_cgroups and
 * cgroup.stat nr_dying_descendants, its percpu memory kept) until the pages
 * are reclaimed.  With the "Eliminate Dying Memory Cgroup" series (LRU folios
 * charged through an objcg that is reparented at offline: merged for 7.1;
 * in Debian's 7.2.13 source memcg_reparent_objcgs() moves the LRU folios to
 * the parent with lru_gen_reparent_memcg() under MGLRU, else
 * lru_reparent_memcg(), mm/memcontrol.c) the dying count falls back within
 * seconds while the same pages stay cached, charged to the parent.
 * tests/live/live-reparent.sh makes that observation (a child writes a
 * file, exits, the child is removed; dying count and mincore() after a
 * settle); tests/vm/reparent-vm makes it in Debian 7.2.13 under QEMU: on
 * tmpfs the ten removed memcgs are freed at once, but on ext4 they stay
 * dying (still 10 of 10 after sync and 45 s): most likely because an inode
 * written through cgroup writeback keeps its memcg's bdi_writeback, and with it the memcg,
 * until the inode is switched to another wb or evicted, which reclaiming the
 * parent's cache brings about.  So reclaim-dying keeps a job on 7.1+.  The
 * daemon does not create cgroups to probe: it answers by version (through
 * 7.0: no; 7.1+: yes); a root tree may still record the observation in
 * .pcptune/dying-memcg-reparenting (1 or 0), which then wins.
 */
static void probe_reparenting(const ProbeInput *in, ProbeResult *r) {
        bool from_proc_version;
        KernelVersion stable = stable_version(in, &from_proc_version);
        char vt[32];
        int64_t declared;

        version_text(&stable, vt, sizeof vt);
        if (in->root && !streq(in->root, "/") &&
            read_int64_at(in->root, "/.pcptune/dying-memcg-reparenting", &declared) >= 0 &&
            (declared == 0 || declared == 1)) {
                r->answer = declared ? PROBE_YES : PROBE_NO;
                set_text(r->evidence, "declared by the root tree (.pcptune/dying-memcg-reparenting = %" PRId64
                                      ", the observation of tests/live/live-reparent.sh)",
                         declared);
        } else if (in->kernel.major == 0) {
                r->answer = PROBE_UNKNOWN;
                set_text(r->evidence, "the kernel version could not be read: tests/live/live-reparent.sh tells "
                                      "whether a removed memcg whose page cache is resident stays dying");
        } else if (kernel_version_cmp(&in->kernel, &KV(7, 1)) < 0) {
                r->answer = PROBE_NO;
                set_text(r->evidence, "by kernel version %s: before 7.1 a removed memcg stays dying while page "
                                      "cache charged to it is resident (LRU folios are reparented at offline "
                                      "from 7.1 on); tests/live/live-reparent.sh shows it",
                         vt);
        } else {
                r->answer = PROBE_YES;
                set_text(r->evidence, "by kernel version %s: from 7.1 on a memcg's LRU folios move to its parent "
                                      "when it goes offline (memcg_reparent_objcgs(), mm/memcontrol.c), so page "
                                      "cache no longer keeps it dying; seen in Debian 7.2.13 under QEMU "
                                      "(tests/vm/reparent-vm)",
                         vt);
        }
        set_text(r->effect, "%s", r->answer == PROBE_YES
                                          ? "LRU folios no longer pin removed memcgs, but files written through cgroup "
                                            "writeback (ext4, xfs, btrfs) still keep theirs dying until the inodes are "
                                            "switched or evicted: reclaim-dying still frees those"
                                          : "page cache pins removed memcgs until reclaimed: reclaim-dying frees them");
}

/*
 * memory.reclaim arguments: whether "<bytes> swappiness=0" is taken (6.12+:
 * memory_reclaim() parses "swappiness=%d" after the size, mm/memcontrol.c;
 * 6.1 parses the whole buffer as a size), told by the daemon's write of
 * "0 swappiness=0" (features->reclaim_swappiness); and whether cgroup.stat
 * counts dying memory csses (nr_dying_subsys_memory, 6.12+), which makes
 * the per-subtree dying counts of reclaim-dying exact.
 */
static void probe_reclaim_args(const ProbeInput *in, ProbeResult *r) {
        const Snapshot *s = in->snap;
        FeatureState st = in->features ? in->features->reclaim_swappiness : FEATURE_UNKNOWN;
        char file[PATH_MAX];
        const char *dying;

        if (!s || !s->has_memcg || s->memcg.mode == CGROUP_MEMORY_NONE || !s->memcg.mount) {
                set_text(r->evidence, "%s", s ? "no memory cgroup hierarchy" : "a hypothetical shape");
                set_text(r->effect, "%s", s ? "reclaim-dying has nothing to reclaim here"
                                            : "as on the host: pcptuned probes memory.reclaim where it runs");
                return;
        }
        if (s->memcg.mode == CGROUP_MEMORY_V1) {
                r->answer = PROBE_NO;
                set_text(r->evidence, "cgroup v1 (%s): no memory.reclaim; dying memcgs per subtree are estimated from "
                                      "charges (v1 counts none per cgroup)",
                         s->memcg.mount);
                set_text(r->effect, "reclaim-dying uses memory.force_empty; force-empty: childless never touches a "
                                    "parent with a live child nor a cgroup that runs tasks");
                return;
        }
        dying = s->memcg.dying_from_subsys ? "cgroup.stat has nr_dying_subsys_memory: per-subtree dying counts are exact"
                                           : "no nr_dying_subsys_memory: per-subtree dying counts from nr_dying_descendants "
                                             "(every controller's)";
        snprintf(file, sizeof file, "%s/memory.reclaim", s->memcg.mount);
        if (in->root && !exists_at(in->root, file) && st == FEATURE_UNKNOWN) {
                r->answer = PROBE_NO;
                set_text(r->evidence, "no %s (before 5.19); %s", file, dying);
                set_text(r->effect, "reclaim-dying has nothing to write here");
                return;
        }
        r->answer = st == FEATURE_PRESENT ? PROBE_YES : st == FEATURE_ABSENT ? PROBE_NO : PROBE_UNKNOWN;
        set_text(r->evidence, "%s; %s",
                 st == FEATURE_PRESENT ? "'0 swappiness=0' written to memory.reclaim was accepted"
                 : st == FEATURE_ABSENT ? "'0 swappiness=0' to memory.reclaim: EINVAL, '0' accepted"
                                        : "only a write tells: pcptuned writes '0 swappiness=0' to memory.reclaim when a "
                                          "reclaim-dying rule is loaded (not in dry-run)",
                 dying);
        set_text(r->effect, "%s",
                 st == FEATURE_PRESENT ? "reclaim writes '<bytes> swappiness=0': file pages only, no live cgroup's "
                                         "anonymous memory is swapped"
                 : st == FEATURE_ABSENT ? "v2 subtrees are skipped unless the rule says allow-swap: true (a plain "
                                          "'<bytes>' may swap live cgroups' anonymous memory)"
                                        : "reclaim probes on its first subtree before writing");
}

/* ---- pcptune's contrib kernel patches ---- */
static void probe_contrib_floor(const ProbeInput *in, ProbeResult *r) {
        FeatureState st = in->features ? in->features->fraction_floor : FEATURE_UNKNOWN;
        r->answer = st == FEATURE_PRESENT ? PROBE_YES : st == FEATURE_ABSENT ? PROBE_NO : PROBE_UNKNOWN;
        set_text(r->evidence, "%s", st == FEATURE_UNKNOWN ? "not known until written (pcptuned tries -1 for `minimum`)"
                                    : st == FEATURE_PRESENT ? "the kernel took -1 for vm.percpu_pagelist_high_fraction"
                                                            : "-1 refused (EINVAL), or not declared by the root tree");
        set_text(r->effect, "%s", st == FEATURE_ABSENT ? "`minimum` writes the fraction computed for this host"
                                                       : "`minimum` writes -1: no per-host fraction to re-solve");
}

/* 0002: the sysctl's file, as the snapshot read it. */
static void probe_contrib_scale(const ProbeInput *in, ProbeResult *r) {
        const KnobDesc *d = knob_desc(KNOB_PCP_BATCH_SCALE_MAX);
        int64_t v;
        bool yes = snapshot_knob_value(in->snap, d->id, &v) >= 0;
        r->answer = in->snap ? (yes ? PROBE_YES : PROBE_NO) : PROBE_UNKNOWN;
        if (yes)
                set_text(r->evidence, "%s = %" PRId64, d->path, v);
        else if (in->snap)
                set_text(r->evidence, "no %s", d->path);
        else
                set_text(r->evidence, "%s", "a hypothetical shape");
        set_text(r->effect, "%s", yes ? "pcp: {batch_scale_max: N} bounds each bulk free at run time"
                                      : "the bulk-free cap is CONFIG_PCP_BATCH_SCALE_MAX, fixed at build time");
}

static void probe_contrib_percpu(const ProbeInput *in, ProbeResult *r) {
        bool yes = in->features && in->features->percpu_sysfs;
        r->answer = in->features ? (yes ? PROBE_YES : PROBE_NO) : PROBE_UNKNOWN;
        set_text(r->evidence, "%s" PERCPU_SYSFS_DIR "%s", yes ? "" : "no ",
                 yes && !in->features->percpu_depopulate ? " (without depopulate)" : "");
        set_text(r->effect, "%s", yes ? "percpu.empty_populated and the percpu-depopulate action work"
                                      : "percpu counters only from debugfs percpu_stats, no depopulate trigger");
}

/*
 * 0004: memory.reclaim "scope=dying" reclaims only the memcgs below the
 * cgroup that are not online (mem_cgroup_iter() over the subtree,
 * try_to_free_mem_cgroup_pages() on the top of each dying subtree;
 * memory_reclaim() in mm/memcontrol.c with the patch), so reclaim-dying
 * costs the live cgroups of a subtree nothing.  Only a write tells.
 */
static void probe_contrib_scope(const ProbeInput *in, ProbeResult *r) {
        const Snapshot *s = in->snap;
        FeatureState st = in->features ? in->features->reclaim_scope_dying : FEATURE_UNKNOWN;

        if (s && s->has_memcg && s->memcg.mode == CGROUP_MEMORY_V1) {
                r->answer = PROBE_NO;
                set_text(r->evidence, "%s", "cgroup v1: no memory.reclaim");
                set_text(r->effect, "%s", "reclaim-dying uses memory.force_empty (see memory.reclaim arguments)");
                return;
        }
        r->answer = st == FEATURE_PRESENT ? PROBE_YES : st == FEATURE_ABSENT ? PROBE_NO : PROBE_UNKNOWN;
        set_text(r->evidence, "%s",
                 st == FEATURE_PRESENT ? "'0 scope=dying' written to memory.reclaim was accepted"
                 : st == FEATURE_ABSENT ? "'0 scope=dying' to memory.reclaim: EINVAL (a kernel without the patch)"
                 : !s ? "a hypothetical shape"
                      : "only a write tells: pcptuned writes '0 scope=dying' to memory.reclaim when a reclaim-dying "
                        "rule is loaded (not in dry-run)");
        set_text(r->effect, "%s",
                 st == FEATURE_PRESENT ? "reclaim writes '<bytes> scope=dying': only the dying memcgs of a subtree are "
                                         "reclaimed, none of its live cgroups is scanned"
                                       : "memory.reclaim on a subtree scans its live cgroups too; their refaults are "
                                         "measured and bounded by max-refault-rate");
}

typedef struct ProbeDesc {
        const char *label;
        void (*run)(const ProbeInput *in, ProbeResult *r);
} ProbeDesc;

static const ProbeDesc probe_table[] = {
        { PROBE_PCP_AUTOTUNE, probe_pcp_autotune },
        { PROBE_BATCHED_FREES, probe_batched_frees },
        { PROBE_REPARENTING, probe_reparenting },
        { PROBE_RECLAIM_ARGS, probe_reclaim_args },
        { "contrib 0001, fraction -1", probe_contrib_floor },
        { "contrib 0002, vm.pcp_batch_scale_max", probe_contrib_scale },
        { "contrib 0003, /sys/kernel/mm/percpu", probe_contrib_percpu },
        { PROBE_RECLAIM_SCOPE, probe_contrib_scope },
};

void kernel_probes_run(const ProbeInput *in, KernelProbes *ret) {
        ProbeInput run = *in;

        run.stable = read_stable_version(in, &run.stable_from_proc_version);
        ret->n = 0;
        for (size_t i = 0; i < ELEMENTSOF(probe_table) && i < KERNEL_PROBES_MAX; i++) {
                ProbeResult *r = &ret->rows[ret->n++];
                *r = (ProbeResult){ .label = probe_table[i].label, .answer = PROBE_UNKNOWN };
                probe_table[i].run(&run, r);
        }
}

const ProbeResult *kernel_probes_find(const KernelProbes *p, const char *label) {
        for (size_t i = 0; p && i < p->n; i++)
                if (streq(p->rows[i].label, label))
                        return &p->rows[i];
        return NULL;
}

json_object *kernel_features_to_json(const KernelFeatures *k, const Snapshot *s) {
        json_object *c = json_object_new_object();

        if (!c)
                return NULL;
        json_object_object_add(c, "fraction_floor", json_object_new_string(feature_state_to_string(k->fraction_floor)));
        for (KnobId id = 0; id < _KNOB_ID_MAX; id++) {
                const KnobDesc *d = knob_desc(id);
                int64_t v;
                if (d->contrib)
                        json_object_object_add(c, knob_leaf_name(d),
                                               snapshot_knob_value(s, id, &v) >= 0 ? json_object_new_int64(v) : NULL);
        }
        json_object_object_add(c, "percpu_sysfs", json_object_new_boolean(k->percpu_sysfs));
        json_object_object_add(c, "percpu_depopulate", json_object_new_boolean(k->percpu_depopulate));
        json_object_object_add(c, "reclaim_scope_dying",
                               json_object_new_string(feature_state_to_string(k->reclaim_scope_dying)));
        return c;
}

void kernel_probes_print(FILE *f, const KernelProbes *p, bool verbose) {
        json_object *a = kernel_probes_to_json(p);
        kernel_probes_print_json(f, a, verbose);
        json_object_put(a);
}

/*
 * The one-line form of a row: a short name for each label and, per answer (and, where one answer has
 * several causes, a piece of the evidence), a short reason.  Derived from the JSON row alone, so the
 * text of status, plan and the dry-run report renders from the same model as their --json.
 */
static const struct {
        const char *label;
        const char *name;
} probe_names[] = {
        { PROBE_PCP_AUTOTUNE, "pcp high auto-tuning" },
        { PROBE_BATCHED_FREES, "batched bulk frees" },
        { PROBE_REPARENTING, "dying memcg reparenting" },
        { PROBE_RECLAIM_ARGS, "memory.reclaim swappiness=" },
        { "contrib 0001, fraction -1", "fraction -1 (patch)" },
        { "contrib 0002, vm.pcp_batch_scale_max", "pcp_batch_scale_max (patch)" },
        { "contrib 0003, /sys/kernel/mm/percpu", "mm/percpu in sysfs (patch)" },
        { PROBE_RECLAIM_SCOPE, "reclaim scope=dying (patch)" },
};

static const struct {
        const char *label;
        const char *answer;   /* NULL: any */
        const char *evidence; /* a substring of the evidence; NULL: any */
        const char *reason;
} probe_reasons[] = {
        { PROBE_PCP_AUTOTUNE, "yes", NULL, "high between high_min and high_max" },
        { PROBE_PCP_AUTOTUNE, "no", "only vm.percpu_pagelist_fraction", "before 5.14: the fraction is read only" },
        { PROBE_PCP_AUTOTUNE, "no", NULL, "a fixed high (kernels before 6.7)" },
        { PROBE_BATCHED_FREES, "yes", NULL, "exit frees at most batch pages a hold" },
        { PROBE_BATCHED_FREES, "partial", NULL, "only idle-list decay, not at exit" },
        { PROBE_BATCHED_FREES, "no", NULL, "exit holds follow pcp high" },
        { PROBE_BATCHED_FREES, "unknown", NULL, "the kernel version is unreadable" },
        { PROBE_REPARENTING, "yes", NULL, "page cache does not pin removed memcgs" },
        { PROBE_REPARENTING, "no", NULL, "page cache pins removed memcgs" },
        { PROBE_REPARENTING, "unknown", NULL, "a kernel newer than those checked" },
        { PROBE_RECLAIM_ARGS, NULL, "no memory cgroup hierarchy", "no memory cgroup hierarchy" },
        { PROBE_RECLAIM_ARGS, NULL, "a hypothetical shape", "probed where pcptuned runs" },
        { PROBE_RECLAIM_ARGS, "no", "cgroup v1", "cgroup v1: reclaim uses force_empty" },
        { PROBE_RECLAIM_ARGS, "no", "(before 5.19)", "no memory.reclaim (before 5.19)" },
        { PROBE_RECLAIM_ARGS, "yes", NULL, "reclaim swaps no live anonymous memory" },
        { PROBE_RECLAIM_ARGS, "no", NULL, "refused: v2 reclaim needs allow-swap" },
        { PROBE_RECLAIM_ARGS, "unknown", NULL, "known after pcptuned's first write" },
        { "contrib 0001, fraction -1", "yes", NULL, "minimum writes -1" },
        { "contrib 0001, fraction -1", "no", NULL, "minimum writes a computed fraction" },
        { "contrib 0001, fraction -1", "unknown", NULL, "not known until written" },
        { "contrib 0002, vm.pcp_batch_scale_max", "yes", NULL, "batch_scale_max goals work" },
        { "contrib 0002, vm.pcp_batch_scale_max", "no", NULL, "the cap is fixed at build time" },
        { "contrib 0003, /sys/kernel/mm/percpu", "yes", "without depopulate", "counters, no depopulate trigger" },
        { "contrib 0003, /sys/kernel/mm/percpu", "yes", NULL, "counters and the depopulate trigger" },
        { "contrib 0003, /sys/kernel/mm/percpu", "no", NULL, "percpu counters from debugfs only" },
        { "contrib 0003, /sys/kernel/mm/percpu", "unknown", NULL, "not probed (a hypothetical shape)" },
        { PROBE_RECLAIM_SCOPE, "no", "cgroup v1", "cgroup v1: reclaim uses force_empty" },
        { PROBE_RECLAIM_SCOPE, "yes", NULL, "only dying memcgs are reclaimed" },
        { PROBE_RECLAIM_SCOPE, "no", NULL, "refused: live cgroups are scanned too" },
        { PROBE_RECLAIM_SCOPE, "unknown", "only a write tells", "known after pcptuned's first write" },
        { NULL, "unknown", "a hypothetical shape", "a hypothetical shape" },
};

const char *kernel_probe_name(const char *label) {
        for (size_t i = 0; i < ELEMENTSOF(probe_names); i++)
                if (streq(probe_names[i].label, label))
                        return probe_names[i].name;
        return label;
}

const char *kernel_probe_reason(const char *label, const char *answer, const char *evidence) {
        for (size_t i = 0; i < ELEMENTSOF(probe_reasons); i++)
                if ((!probe_reasons[i].label || streq(probe_reasons[i].label, label)) &&
                    (!probe_reasons[i].answer || streq(probe_reasons[i].answer, answer)) &&
                    (!probe_reasons[i].evidence || strstr(evidence, probe_reasons[i].evidence)))
                        return probe_reasons[i].reason;
        return NULL;
}

void kernel_probes_print_json(FILE *f, json_object *a, bool verbose) {
        fprintf(f, verbose ? "kernel probes\n" : "kernel probes (--verbose: the evidence)\n");
        for (size_t i = 0; i < view_len(a, NULL); i++) {
                json_object *r = view_idx(a, NULL, i);
                const char *label = view_str(r, "label", ""), *answer = view_str(r, "answer", "");
                const char *evidence = view_str(r, "evidence", ""), *effect = view_str(r, "effect", "");
                const char *reason = kernel_probe_reason(label, answer, evidence);
                char prefix[96], text[2 * PROBE_TEXT_MAX + 8];

                if (!verbose) {
                        /* No reason in the table: the evidence up to its first clause, cut to the line. */
                        if (!reason)
                                snprintf(text, MIN(sizeof text, strcspn(evidence, ":;(") + 1), "%s", evidence);
                        fprintf(f, "  %-27s %-8s %.41s\n", kernel_probe_name(label), answer, reason ? reason : text);
                        continue;
                }
                snprintf(prefix, sizeof prefix, "  %s: %s - ", label, answer);
                snprintf(text, sizeof text, "%s.%s%s", evidence, effect[0] ? " pcptune: " : "", effect);
                print_wrapped(f, prefix, 6, text);
        }
}

json_object *kernel_probes_to_json(const KernelProbes *p) {
        json_object *a = json_object_new_array();
        if (!a)
                return NULL;
        for (size_t i = 0; i < p->n; i++) {
                const ProbeResult *r = &p->rows[i];
                json_object *e = json_object_new_object();
                if (!e) {
                        json_object_put(a);
                        return NULL;
                }
                json_object_object_add(e, "label", json_object_new_string(r->label));
                json_object_object_add(e, "answer", json_object_new_string(probe_answer_to_string(r->answer)));
                json_object_object_add(e, "evidence", json_object_new_string(r->evidence));
                json_object_object_add(e, "effect", json_object_new_string(r->effect));
                json_object_array_add(a, e);
        }
        return a;
}
