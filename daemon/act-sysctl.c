/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>

#include "act-sysctl.h"
#include "messages.h"
#include "log.h"
#include "source-zoneinfo.h"
#include "util.h"

int knob_read(const char *root, const Knob *k, int64_t *ret) {
        return read_int64_at(root, k->path, ret);
}

static int knob_write(const char *root, const Knob *k, int64_t v) {
        char buf[32];
        snprintf(buf, sizeof buf, "%" PRId64 "\n", v);
        return write_file_at(root, k->path, buf);
}

/* Log a change with the structured fields journald users filter on; keep it as the knob's last change. */
static void log_change(int level, Knob *k, const char *verb, int64_t old, int64_t new, const ChangeReason *why) {
        char f_knob[128], f_old[48], f_new[48], f_policy[160], f_rule[160], f_reason[320];
        const char *fields[9];
        size_t n = 0;

        snprintf(f_knob, sizeof f_knob, "KNOB=%s", k->name);
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
        log_fields(level, fields, "%s%s: %s", verb, k->name, rest);
}

/* The administrator changed a knob we manage: stop managing it, never restore over it. */
static int knob_yield_to_admin(Knob *k, Journal *j, int64_t current) {
        k->admin_override = true;
        k->admin_value = current;
        k->managed = false;
        char f_knob[128], f_new[48], f_old[48];
        snprintf(f_knob, sizeof f_knob, "KNOB=%s", k->name);
        snprintf(f_old, sizeof f_old, "OLD=%" PRId64, k->written);
        snprintf(f_new, sizeof f_new, "NEW=%" PRId64, current);
        const char *fields[] = { "MESSAGE_ID=" PCPTUNE_MESSAGE_BACK_OFF, f_knob, f_old, f_new, NULL };
        snprintf(k->last_change, sizeof k->last_change, "%" PRId64 " -> %" PRId64 " by someone else: left alone",
                 k->written, current);
        k->last_change_usec = now_usec(CLOCK_REALTIME);
        log_fields(LOG_NOTICE, fields,
                   "%s was changed to %" PRId64 " by someone else (we had written %" PRId64
                   "); no longer managing it and not restoring it at exit. `pcptunectl resume %s` hands it back.",
                   k->name, current, k->written, k->name);
        if (j && journal_remove(j, k->name)) {
                int r = journal_save(j);
                if (r < 0)
                        log_warning_errno(r, "Failed to update the restore journal %s: %s, ignoring", j->file,
                                          errno_str(r));
        }
        return KNOB_ADMIN;
}

int knob_apply(Knob *k, const char *root, Journal *j, bool dry_run, int64_t wanted, const ChangeReason *why,
               int64_t *ret_old) {
        int64_t current, check;
        bool was_managed = k->managed;
        int r;

        if (wanted < k->min_value || wanted > k->max_value)
                return log_error_errno(-ERANGE, "Refusing to set %s to %" PRId64 ": outside [%" PRId64 ", %" PRId64 "]",
                                       k->name, wanted, k->min_value, k->max_value);

        r = knob_read(root, k, &current);
        if (r < 0)
                return log_error_errno(r, "Failed to read %s: %s", k->name, errno_str(r));
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

        /* Journal before the first write: a crash right after the write must be recoverable. */
        r = journal_set(j, k->name, k->path, was_managed ? k->original : current, wanted);
        if (r >= 0)
                r = journal_save(j);
        if (r < 0) {
                if (!was_managed)
                        journal_remove(j, k->name);
                return log_error_errno(r, "Failed to record %s in the restore journal %s, not changing it: %s",
                                       k->name, j->file, errno_str(r));
        }
        if (!was_managed) {
                k->managed = true;
                k->original = current;
        }

        r = knob_write(root, k, wanted);
        if (r < 0) {
                log_full_errno(why && why->probe && r == -EINVAL ? LOG_DEBUG : LOG_ERR, r,
                               "Failed to set %s to %" PRId64 ": %s", k->name, wanted, errno_str(r));
                if (!was_managed) {
                        k->managed = false;
                        journal_remove(j, k->name);
                } else
                        journal_set(j, k->name, k->path, k->original, k->written);
                int q = journal_save(j);
                if (q < 0)
                        log_warning_errno(q, "Failed to update the restore journal: %s", errno_str(q));
                return r;
        }
        k->written = wanted;

        r = knob_read(root, k, &check);
        if (r < 0)
                log_warning_errno(r, "Failed to read back %s: %s", k->name, errno_str(r));
        else if (check != wanted)
                log_warning("%s reads back %" PRId64 " after writing %" PRId64, k->name, check, wanted);

        log_change(LOG_NOTICE, k, "", current, wanted, why);
        return KNOB_WRITTEN;
}

int knob_release(Knob *k, const char *root, Journal *j, bool dry_run, const char *why) {
        int64_t current;
        int r;

        if (!k->managed)
                return KNOB_NOOP;

        r = knob_read(root, k, &current);
        if (r < 0)
                return log_error_errno(r, "Failed to read %s: %s", k->name, errno_str(r));
        if (current != k->written)
                return knob_yield_to_admin(k, j, current);

        if (!dry_run && current != k->original) {
                r = knob_write(root, k, k->original);
                if (r < 0)
                        return log_error_errno(r, "Failed to restore %s to %" PRId64 ": %s", k->name, k->original,
                                               errno_str(r));
        }
        log_change(LOG_NOTICE, k, "restored ", current, k->original, &(ChangeReason){ .text = why });
        k->managed = false;
        if (j && journal_remove(j, k->name)) {
                r = journal_save(j);
                if (r < 0)
                        log_warning_errno(r, "Failed to update the restore journal %s: %s", j->file, errno_str(r));
        }
        return KNOB_RESTORED;
}

int journal_restore(Journal *j, const char *root, const char *context) {
        int restored = 0, failed = 0;

        for (size_t i = 0; i < j->n_entries;) {
                const JournalEntry *e = &j->entries[i];
                Knob k = { .name = e->name, .path = e->path };
                int64_t current;
                int r;

                r = knob_read(root, &k, &current);
                if (r < 0) {
                        log_error_errno(r, "Failed to read %s for the restore journal: %s", e->name, errno_str(r));
                        failed++;
                        i++;
                        continue;
                }
                if (current != e->written) {
                        log_notice("%s: %s is %" PRId64 ", not the %" PRId64 " we wrote: changed since, leaving it",
                                   context, e->name, current, e->written);
                } else if (current != e->original) {
                        r = knob_write(root, &k, e->original);
                        if (r < 0) {
                                log_error_errno(r, "Failed to restore %s to %" PRId64 ": %s", e->name, e->original,
                                                errno_str(r));
                                failed++;
                                i++;
                                continue;
                        }
                        log_change(LOG_NOTICE, &k, "restored ", current, e->original,
                                   &(ChangeReason){ .text = context });
                        restored++;
                }
                journal_remove(j, k.name);
        }

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
