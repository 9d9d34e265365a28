/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>
#include <limits.h>

#include "log.h"
#include "repair.h"
#include "source-table.h"

static const char *const pageset_field_table[_PAGESET_FIELD_MAX] = {
        [PAGESET_BATCH] = "batch",
        [PAGESET_HIGH] = "high",
        [PAGESET_HIGH_MIN] = "high_min",
        [PAGESET_HIGH_MAX] = "high_max",
};

const char *pageset_field_to_string(PagesetField f) {
        return f < _PAGESET_FIELD_MAX ? pageset_field_table[f] : NULL;
}

void pageset_check_done(PagesetCheck *c) {
        if (!c)
                return;
        free(c->mismatches);
        *c = (PagesetCheck){ 0 };
}

static int add_mismatch(PagesetCheck *c, const Zone *z, const PcpCpu *p, PagesetField f, int64_t actual,
                        int64_t expected) {
        PagesetMismatch *n = realloc(c->mismatches, (c->n_mismatches + 1) * sizeof(PagesetMismatch));
        if (!n)
                return -ENOMEM;
        c->mismatches = n;
        PagesetMismatch *m = &c->mismatches[c->n_mismatches++];
        *m = (PagesetMismatch){ .node = z->node, .cpu = p->cpu, .field = f, .actual = actual, .expected = expected };
        snprintf(m->zone, sizeof m->zone, "%s", z->name);
        return 0;
}

static int compare(PagesetCheck *c, const Zone *z, const PcpCpu *p, PagesetField f, int64_t actual, int64_t expected) {
        c->compared++;
        if (actual == expected) {
                c->exact++;
                return 0;
        }
        return add_mismatch(c, z, p, f, actual, expected);
}

int pageset_check(const Snapshot *s, PagesetCheck *ret) {
        PagesetCheck c = { 0 };
        int r;

        if (!s->has_knob)
                return -ENODATA;
        c.fraction = (int) snapshot_pcp_value(s);
        c.batch_only = !s->zoneinfo.has_high_min_max && s->regime == PCP_REGIME_AUTOTUNE;

        for (size_t i = 0, k = 0; i < s->zoneinfo.n_zones; i++) {
                const Zone *z = &s->zoneinfo.zones[i];
                PcpSetting want, loose;
                if (!z->populated)
                        continue;
                const PcpZone *pz = &s->pcp_zones[k++];
                r = pcp_model_zone(s->regime, &pz->in, s->topo.page_size, c.fraction, &want);
                if (r < 0) {
                        pageset_check_done(&c);
                        return r;
                }
                /* The largest high_max this zone can have had: the default's (fraction 8's). */
                if (pcp_model_zone(s->regime, &pz->in, s->topo.page_size, c.fraction ? 8 : 0, &loose) < 0)
                        loose = want;
                for (size_t j = 0; j < z->n_cpus; j++) {
                        const PcpCpu *p = &z->cpus[j];
                        r = compare(&c, z, p, PAGESET_BATCH, p->batch, want.batch);
                        if (r >= 0 && s->zoneinfo.has_high_min_max) {
                                r = compare(&c, z, p, PAGESET_HIGH_MIN, p->high_min, want.high_min);
                                if (r >= 0)
                                        r = compare(&c, z, p, PAGESET_HIGH_MAX, p->high_max, want.high_max);
                        } else if (r >= 0 && s->regime != PCP_REGIME_AUTOTUNE)
                                r = compare(&c, z, p, PAGESET_HIGH, p->high, want.high_max);
                        else if (r >= 0 && p->high != 0 && (p->high < want.high_min || p->high > want.high_max))
                                /* Auto-tuned high: clamped only at the CPU's next use of the zone. */
                                c.dynamic_high++;
                        if (r < 0) {
                                pageset_check_done(&c);
                                return r;
                        }
                }
        }
        *ret = c;
        return 0;
}

int pageset_repair(const char *root, Journal *j, int64_t wanted, PagesetCheck *ret_after) {
        _cleanup_(snapshot_freep) Snapshot *s = NULL;
        PagesetCheck after = { 0 };
        const KnobDesc *d;
        const JournalEntry *e;
        int64_t original, current, large;
        int r;

        r = snapshot_take(root, &s);
        if (r < 0)
                return r;
        if (!snapshot_pcp_writable(s))
                return -EOPNOTSUPP;
        d = snapshot_pcp_desc(s);
        current = snapshot_pcp_value(s);
        /* A fraction no value in use can equal: the pagesets shrink to the floor for a moment. */
        large = current == INT_MAX || wanted == INT_MAX ? INT_MAX - 1 : INT_MAX;

        /* If the knob is journaled and still holds a value the entry names (the daemon manages it, or a run
         * that did not stop cleanly left it), its original stays.  An entry the value no longer matches was
         * overtaken (someone wrote the knob since: restore would leave it), so the value in place is the
         * original.  Either way every value the knob passes through is named by an intent saved before it
         * is written. */
        e = j ? journal_find(j, d) : NULL;
        bool had_entry = e && current != e->original && journal_entry_holds(e, current);
        original = had_entry ? e->original : current;
        if (j) {
                r = journal_intent(j, d, original, current, large);
                if (r < 0)
                        return log_error_errno(r, "Failed to journal %s before the repair: %s", d->name, errno_str(r));
                fault_inject("after-intent");
        }
        r = knob_write(root, d, large);
        if (r >= 0) {
                fault_inject("after-write");
                if (j && wanted != current) {
                        r = journal_intent(j, d, original, large, wanted);
                        if (r >= 0)
                                fault_inject("after-intent");
                }
                if (r >= 0)
                        r = knob_write(root, d, wanted);
        }
        if (r < 0) {
                log_error_errno(r, "Failed to write %s during the pageset repair: %s", d->name, errno_str(r));
                /* Put the value back now rather than leaving the large one. */
                (void) knob_write(root, d, current);
                wanted = current;
        }
        if (j) {
                int q = !had_entry && wanted == original ? journal_drop(j, d) : journal_commit(j, d, wanted);
                if (q < 0)
                        log_warning_errno(q, "Failed to update the restore journal %s: %s; its intent still names the "
                                             "value in place, ignoring",
                                          j->file, errno_str(q));
                fault_inject("after-commit");
        }
        if (r < 0)
                return r;
        log_notice("Pageset repair: %s %" PRId64 " -> %" PRId64 " -> %" PRId64 " to make the kernel recompute every pageset",
                   d->name, current, large, wanted);

        snapshot_free(TAKE_PTR(s));
        r = snapshot_take(root, &s);
        if (r >= 0)
                r = pageset_check(s, &after);
        if (r < 0)
                return r;
        if (after.n_mismatches > 0) {
                const PagesetMismatch *m = &after.mismatches[0];
                log_warning("Pagesets still differ from the model after the repair: %zu of %zu values, e.g. node %d "
                            "zone %s cpu %d %s %" PRId64 " (model %" PRId64 ")",
                            after.n_mismatches, after.compared, m->node, m->zone, m->cpu,
                            pageset_field_to_string(m->field), m->actual, m->expected);
                r = -EBADE;
        } else
                log_notice("Pageset repair verified: %zu of %zu values match the model", after.exact, after.compared);
        if (ret_after)
                *ret_after = after;
        else
                pageset_check_done(&after);
        return r;
}
