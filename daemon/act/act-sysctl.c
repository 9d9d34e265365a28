/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>

#include "act-sysctl.h"
#include "messages.h"
#include "log.h"
#include "source-zoneinfo.h"
#include "util.h"

int knob_read(const char *root, const KnobDesc *k, int64_t *ret) {
        return read_int64_at(root, k->path, ret);
}

int knob_write(const char *root, const KnobDesc *k, int64_t v) {
        char buf[32];

        if (!k->writable)
                return -EPERM;
        if (!knob_value_valid(k, v))
                return -ERANGE;
        snprintf(buf, sizeof buf, "%" PRId64 "\n", v);
        return write_file_at(root, k->path, buf);
}

/* Log a change with the structured fields journald users filter on; keep it as the knob's last change. */
static void log_change(int level, KnobState *k, const char *verb, int64_t old, int64_t new, const ChangeReason *why) {
        char f_knob[128], f_old[48], f_new[48], f_policy[160], f_rule[160], f_reason[320];
        const char *fields[9];
        size_t n = 0;

        snprintf(f_knob, sizeof f_knob, "KNOB=%s", k->desc->name);
        snprintf(f_old, sizeof f_old, "OLD=%" PRId64, old);
        snprintf(f_new, sizeof f_new, "NEW=%" PRId64, new);
        fields[n++] = streq(verb, "restored ")    ? "MESSAGE_ID=" PCPTUNE_MESSAGE_RESTORE
                      : streq(verb, "would set ") ? "MESSAGE_ID=" PCPTUNE_MESSAGE_WOULD_CHANGE
                                                  : "MESSAGE_ID=" PCPTUNE_MESSAGE_CHANGE;
        fields[n++] = f_knob;
        fields[n++] = f_old;
        fields[n++] = f_new;
        if (why && why->policy) {
                snprintf(f_policy, sizeof f_policy, "POLICY=%s", why->policy);
                fields[n++] = f_policy;
        }
        if (why && why->rule) {
                snprintf(f_rule, sizeof f_rule, "RULE=%s", why->rule);
                fields[n++] = f_rule;
        }
        if (why && why->text) {
                snprintf(f_reason, sizeof f_reason, "REASON=%s", why->text);
                fields[n++] = f_reason;
        }
        fields[n] = NULL;

        char rest[352];
        if (why && why->policy)
                snprintf(rest, sizeof rest, "%" PRId64 " -> %" PRId64 " (policy %s, rule %s: %s)", old, new, why->policy,
                         strna(why->rule), strna(why->text));
        else
                snprintf(rest, sizeof rest, "%" PRId64 " -> %" PRId64 " (%s)", old, new,
                         why && why->text ? why->text : "restore");
        snprintf(k->last_change, sizeof k->last_change, "%s%s", verb, rest);
        k->last_change_usec = now_usec(CLOCK_REALTIME);
        log_fields(level, fields, "%s%s: %s", verb, k->desc->name, rest);
}

/* The administrator changed a knob we manage: stop managing it, never restore over it. */
static int knob_yield_to_admin(KnobState *k, Journal *j, int64_t current) {
        k->admin_override = true;
        k->admin_value = current;
        k->managed = false;
        char f_knob[128], f_new[48], f_old[48];
        snprintf(f_knob, sizeof f_knob, "KNOB=%s", k->desc->name);
        snprintf(f_old, sizeof f_old, "OLD=%" PRId64, k->written);
        snprintf(f_new, sizeof f_new, "NEW=%" PRId64, current);
        const char *fields[] = { "MESSAGE_ID=" PCPTUNE_MESSAGE_BACK_OFF, f_knob, f_old, f_new, NULL };
        snprintf(k->last_change, sizeof k->last_change, "%" PRId64 " -> %" PRId64 " by someone else: left alone",
                 k->written, current);
        k->last_change_usec = now_usec(CLOCK_REALTIME);
        log_fields(LOG_NOTICE, fields,
                   "%s was changed to %" PRId64 " by someone else (we had written %" PRId64
                   "); no longer managing it and not restoring it at exit. `pcptunectl resume %s` hands it back.",
                   k->desc->name, current, k->written, k->desc->name);
        if (j) {
                int r = journal_drop(j, k->desc);
                if (r < 0)
                        log_warning_errno(r, "Failed to update the restore journal %s: %s, ignoring", j->file,
                                          errno_str(r));
        }
        return KNOB_ADMIN;
}

int knob_apply(KnobState *k, const char *root, Journal *j, bool dry_run, int64_t wanted, const ChangeReason *why,
               int64_t *ret_old) {
        const KnobDesc *d = k->desc;
        int64_t current, check;
        bool was_managed = k->managed;
        int r, q;

        if (!d || !d->writable)
                return log_error_errno(-EPERM, "Refusing to write %s: not a knob pcptune writes", d ? d->name : "a knob");
        if (!knob_value_valid(d, wanted))
                return log_error_errno(-ERANGE, "Refusing to set %s to %" PRId64 ": not in [%" PRId64 ", %" PRId64 "] or rejected by the kernel",
                                       d->name, wanted, d->min_value, d->max_value);

        r = knob_read(root, d, &current);
        if (r < 0)
                return log_error_errno(r, "Failed to read %s: %s", d->name, errno_str(r));
        if (ret_old)
                *ret_old = current;

        if (k->admin_override)
                return KNOB_ADMIN;
        if (k->managed && current != k->written)
                return knob_yield_to_admin(k, j, current);
        if (current == wanted)
                return KNOB_NOOP;

        if (dry_run) {
                if (!k->has_last_would || k->last_would != wanted)
                        log_change(LOG_NOTICE, k, "would set ", current, wanted, why);
                k->last_would = wanted;
                k->has_last_would = true;
                return KNOB_WOULD_WRITE;
        }
        if (!was_managed && !knob_value_valid(d, current))
                return log_error_errno(-ERANGE, "Refusing to manage %s: it holds %" PRId64 ", which could not be restored",
                                       d->name, current);

        /* Intent before the write: a crash at any instant leaves the knob at a value the journal names
         * (current, or wanted), and the next start restores the original from either. */
        r = journal_intent(j, d, was_managed ? k->original : current, current, wanted);
        if (r < 0)
                return log_error_errno(r, "Failed to record %s in the restore journal %s, not changing it: %s", d->name,
                                       j->file, errno_str(r));
        fault_inject("after-intent");

        r = knob_write(root, d, wanted);
        if (r < 0) {
                log_full_errno(why && why->probe && r == -EINVAL ? LOG_DEBUG : LOG_ERR, r,
                               "Failed to set %s to %" PRId64 ": %s", d->name, wanted, errno_str(r));
                /* The knob still holds current: commit that (or forget a knob we never changed). */
                q = was_managed ? journal_commit(j, d, current) : journal_drop(j, d);
                if (q < 0)
                        log_warning_errno(q, "Failed to update the restore journal %s: %s; its intent still names the "
                                             "value in place, ignoring",
                                          j->file, errno_str(q));
                return r;
        }
        fault_inject("after-write");
        if (!was_managed) {
                k->managed = true;
                k->original = current;
        }
        k->written = wanted;

        q = journal_commit(j, d, wanted);
        if (q < 0)
                log_warning_errno(q, "Failed to update the restore journal %s: %s; its intent still names %" PRId64
                                     ", ignoring",
                                  j->file, errno_str(q), wanted);
        fault_inject("after-commit");

        r = knob_read(root, d, &check);
        if (r < 0)
                log_warning_errno(r, "Failed to read back %s: %s", d->name, errno_str(r));
        else if (check != wanted)
                log_warning("%s reads back %" PRId64 " after writing %" PRId64, d->name, check, wanted);

        log_change(LOG_NOTICE, k, "", current, wanted, why);
        return KNOB_WRITTEN;
}

int knob_release(KnobState *k, const char *root, Journal *j, bool dry_run, const char *why) {
        const KnobDesc *d = k->desc;
        int64_t current;
        int r;

        if (!k->managed || !d)
                return KNOB_NOOP;

        r = knob_read(root, d, &current);
        if (r < 0)
                return log_error_errno(r, "Failed to read %s: %s", d->name, errno_str(r));
        if (current != k->written)
                return knob_yield_to_admin(k, j, current);

        if (!dry_run && current != k->original) {
                r = knob_write(root, d, k->original);
                if (r < 0)
                        return log_error_errno(r, "Failed to restore %s to %" PRId64 ": %s", d->name, k->original,
                                               errno_str(r));
                fault_inject("after-restore");
        }
        log_change(LOG_NOTICE, k, "restored ", current, k->original, &(ChangeReason){ .text = why });
        k->managed = false;
        if (j) {
                r = journal_drop(j, d);
                if (r < 0)
                        log_warning_errno(r, "Failed to update the restore journal %s: %s", j->file, errno_str(r));
        }
        return KNOB_RESTORED;
}

int journal_restore(Journal *j, const char *root, const char *context) {
        JournalEntry keep[_KNOB_ID_MAX];
        size_t n_keep = 0;
        int restored = 0, failed = 0;

        for (size_t i = 0; i < j->n_entries; i++) {
                const JournalEntry *e = &j->entries[i];
                const KnobDesc *d = e->knob;
                int64_t current;
                int r;

                r = knob_read(root, d, &current);
                if (r < 0) {
                        log_error_errno(r, "Failed to read %s for the restore journal: %s", d->name, errno_str(r));
                        keep[n_keep++] = *e;
                        failed++;
                        continue;
                }
                if (current == e->original)
                        continue; /* nothing written yet, or already put back */
                if (!journal_entry_holds(e, current)) {
                        if (e->has_next)
                                log_notice("%s: %s is %" PRId64 ", neither the %" PRId64 " nor the %" PRId64
                                           " we were writing: changed since, leaving it",
                                           context, d->name, current, e->written, e->next);
                        else
                                log_notice("%s: %s is %" PRId64 ", not the %" PRId64 " we wrote: changed since, leaving it",
                                           context, d->name, current, e->written);
                        continue;
                }
                r = knob_write(root, d, e->original);
                if (r < 0) {
                        log_error_errno(r, "Failed to restore %s to %" PRId64 ": %s", d->name, e->original, errno_str(r));
                        keep[n_keep++] = *e;
                        failed++;
                        continue;
                }
                fault_inject("after-restore");
                KnobState tmp = { .desc = d };
                log_change(LOG_NOTICE, &tmp, "restored ", current, e->original, &(ChangeReason){ .text = context });
                restored++;
        }

        memcpy(j->entries, keep, n_keep * sizeof(JournalEntry));
        j->n_entries = n_keep;
        int r = journal_save(j);
        if (r < 0)
                return log_error_errno(r, "Failed to update the restore journal %s: %s", j->file, errno_str(r));
        return failed > 0 ? -EIO : restored;
}

int pcp_confirm(const char *root, int fraction, char **ret_msg) {
        _cleanup_(zoneinfo_done) Zoneinfo zi = { 0 };
        _cleanup_(topology_done) Topology topo = { 0 };
        PcpRegime regime;
        int r;

        r = topology_read(root, &topo);
        if (r < 0)
                return r;
        r = zoneinfo_read(root, &zi);
        if (r < 0)
                return r;
        /* high_min/high_max printed: auto-tuned whatever the version says (a backport; snapshot.c). */
        regime = zi.has_high_min_max ? PCP_REGIME_AUTOTUNE : pcp_regime_from_version(&topo.kernel);

        /* 6.7-6.12 print only the dynamic high: nothing more to compare than the sysctl. */
        if (!zi.has_high_min_max && regime != PCP_REGIME_FIXED)
                return 0;

        for (size_t i = 0; i < zi.n_zones; i++) {
                const Zone *z = &zi.zones[i];
                PcpZoneInput in = {
                        .managed_pages = z->managed_pages,
                        .low_pages = z->low_pages,
                        .node_cpus = topology_node_cpus(&topo, z->node),
                        .online_cpus = topo.online_cpus,
                };
                PcpSetting want;

                if (!z->populated)
                        continue;
                r = pcp_model_zone(regime, &in, topo.page_size, fraction, &want);
                if (r < 0)
                        return r;
                for (size_t c = 0; c < z->n_cpus; c++) {
                        const PcpCpu *p = &z->cpus[c];
                        bool ok = zi.has_high_min_max
                                          ? p->batch == want.batch && p->high_min == want.high_min &&
                                                    p->high_max == want.high_max
                                          : p->batch == want.batch && p->high == want.high_max;
                        if (ok)
                                continue;
                        if (ret_msg && asprintf(ret_msg,
                                                "node %d zone %s cpu %d: batch %" PRId64 " high_min %" PRId64
                                                " high_max %" PRId64 " high %" PRId64
                                                ", model for fraction %d: batch %d high_min %d high_max %d",
                                                z->node, z->name, p->cpu, p->batch, p->high_min, p->high_max, p->high,
                                                fraction, want.batch, want.high_min, want.high_max) < 0)
                                *ret_msg = NULL;
                        return -EBADE;
                }
        }
        return 0;
}

/* minimum: -1 where the kernel has pcptune's contrib patch 0001 (the floor without a per-host fraction to
 * solve again); a kernel without it rejects -1 with EINVAL (percpu_pagelist_high_fraction_sysctl_handler(),
 * mm/page_alloc.c). */
bool knob_probe_value(const KnobDesc *desc, const KnobDecision *d, PcpRegime regime, int64_t *ret_value) {
        switch (desc->probe) {
        case KNOB_PROBE_PCP_MINIMUM:
                if (d->goal.kind != PCP_GOAL_MINIMUM || regime == PCP_REGIME_LEGACY)
                        return false;
                *ret_value = desc->probe_value;
                return true;
        default:
                return false;
        }
}

/* Lower limits: busy CPUs clamp at their next allocation or free; idle ones only decay, 1/8 per vmstat
 * tick (decay_pcp_high(), mm/page_alloc.c 6.7+).  A write to vm.stat_refresh runs one decay step on every
 * CPU now (vmstat_refresh(), mm/vmstat.c). */
void knob_after_write(const KnobDesc *desc, const char *root, int64_t old, int64_t value) {
        if (desc->after_write != KNOB_AFTER_STAT_REFRESH_ON_LOWER)
                return;
        bool lowered = (value == PCP_FRACTION_FLOOR && old != PCP_FRACTION_FLOOR) ||
                       (value > 0 && (old == 0 || (old > 0 && value > old)));
        if (!lowered)
                return;
        int q = write_file_at(root, "/proc/sys/vm/stat_refresh", "1");
        if (q < 0 && q != -ENOENT)
                log_debug_errno(q, "Failed to write vm.stat_refresh: %s", errno_str(q));
}

void knob_confirm(const KnobDesc *desc, const char *root, int64_t value) {
        _cleanup_(freep) char *msg = NULL;

        if (desc->confirm != KNOB_CONFIRM_PAGESETS)
                return;
        int q = pcp_confirm(root, (int) value, &msg);
        if (q == -EBADE)
                log_warning("%s = %" PRId64 " is set but the pagesets do not show the model's values: %s", desc->name,
                            value, strna(msg));
        else if (q < 0)
                log_warning_errno(q, "Failed to confirm %s = %" PRId64 " in zoneinfo: %s", desc->name, value,
                                  errno_str(q));
        else
                log_info("Confirmed %s = %" PRId64 ": pagesets match the model on every populated zone", desc->name,
                         value);
}
