/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>
#include <limits.h>
#include <sys/stat.h>

#include "reclaim-watch.h"
#include "log.h"
#include "probe-kernel.h"
#include "source-memcg-tree.h"

#define WATCH_JSON_SUBTREES_MAX 32

static void record_done(ReclaimRecord *r) {
        free(r->label);
        for (size_t i = 0; i < r->n_subtrees; i++)
                free(r->subtrees[i].path);
        free(r->subtrees);
        *r = (ReclaimRecord){ 0 };
}

static void block_free(RefaultBlock *b) {
        free(b->label);
        free(b->path);
}

void reclaim_watch_done(ReclaimWatch *w) {
        if (!w)
                return;
        record_done(&w->record);
        for (size_t i = 0; i < w->n_blocks; i++)
                block_free(&w->blocks[i]);
        free(w->blocks);
        free(w->probe_file);
        *w = (ReclaimWatch){ 0 };
}

int reclaim_watch_open(ReclaimWatch *w, const ReclaimJob *j, const char *label, usec_t cooldown_usec) {
        ReclaimRecord r = { .started = j->ended - j->run_usec, .ended = j->ended,
                            .window_usec = j->cfg.refault_window_usec, .max_rate = j->cfg.max_refault_rate,
                            .cooldown_usec = cooldown_usec, .counting = true, .read_usec = j->refault_read_usec };

        r.label = strdup(label ?: "n/a");
        r.subtrees = calloc(MAX(j->n_results, (size_t) 1), sizeof(ReclaimSubtreeRefaults));
        if (!r.label || !r.subtrees) {
                record_done(&r);
                return -ENOMEM;
        }
        for (size_t i = 0; i < j->n_results; i++) {
                const ReclaimTargetResult *t = &j->results[i];
                ReclaimSubtreeRefaults *s = &r.subtrees[r.n_subtrees];
                *s = (ReclaimSubtreeRefaults){ .path = strdup(t->path), .outcome = t->outcome,
                                               .before = t->refaults_before, .before_at = t->refaults_before_at,
                                               .after = -1 };
                if (!s->path) {
                        record_done(&r);
                        return -ENOMEM;
                }
                r.n_reads += t->refaults_before >= 0;
                r.n_subtrees++;
        }
        record_done(&w->record);
        w->record = r;
        w->has_record = true;
        return 0;
}

static int add_block(ReclaimWatch *w, const char *label, const char *path, usec_t until, double rate) {
        for (size_t i = 0; i < w->n_blocks; i++)
                if (streq(w->blocks[i].label, label) && streq(w->blocks[i].path, path)) {
                        w->blocks[i].until = until;
                        w->blocks[i].rate = rate;
                        return 0;
                }
        RefaultBlock *n = realloc(w->blocks, (w->n_blocks + 1) * sizeof(RefaultBlock));
        if (!n)
                return -ENOMEM;
        w->blocks = n;
        n[w->n_blocks] = (RefaultBlock){ strdup(label), strdup(path), until, rate };
        if (!n[w->n_blocks].label || !n[w->n_blocks].path) {
                block_free(&n[w->n_blocks]);
                return -ENOMEM;
        }
        w->n_blocks++;
        return 0;
}

size_t reclaim_watch_close(ReclaimWatch *w, const char *root, const char *mount, CgroupMode mode, usec_t now) {
        ReclaimRecord *r = &w->record;

        if (!w->has_record || !r->counting)
                return 0;
        r->counting = false;
        r->refaults = 0;
        r->n_over = 0;
        for (size_t i = 0; i < r->n_subtrees; i++) {
                ReclaimSubtreeRefaults *s = &r->subtrees[i];
                usec_t t0 = now_usec(CLOCK_MONOTONIC);
                uint64_t v;
                if (s->before < 0 || !reclaim_outcome_wrote(s->outcome))
                        continue;
                if (memcg_refault_read(root, mount, mode, s->path, &v) >= 0) {
                        s->after = (int64_t) MIN(v, (uint64_t) INT64_MAX);
                        s->after_at = now;
                        r->n_reads++;
                }
                r->read_usec += now_usec(CLOCK_MONOTONIC) - t0;
                if (s->after < 0)
                        continue; /* gone meanwhile: its live cgroups are gone too */
                s->refaults = s->after >= s->before ? (uint64_t) (s->after - s->before) : 0;
                s->rate = s->after_at > s->before_at ? (double) s->refaults * 1e6 / (double) (s->after_at - s->before_at) : 0;
                r->refaults += s->refaults;
                if (r->max_rate > 0 && s->rate > r->max_rate) {
                        s->over_limit = true;
                        r->n_over++;
                        (void) add_block(w, r->label, s->path, now + r->cooldown_usec, s->rate);
                }
        }
        w->refaults_total += r->refaults;
        w->reclaims_measured++;
        return r->n_over;
}

int reclaim_watch_blocked(ReclaimWatch *w, const char *label, usec_t now, char ***ret) {
        char **v = NULL;
        size_t n = 0, k = 0;

        for (size_t i = 0; i < w->n_blocks; i++) {
                if (w->blocks[i].until <= now) {
                        block_free(&w->blocks[i]);
                        continue;
                }
                w->blocks[k++] = w->blocks[i];
        }
        w->n_blocks = k;
        for (size_t i = 0; i < w->n_blocks; i++) {
                if (!streq(w->blocks[i].label, label))
                        continue;
                char **nv = realloc(v, (n + 2) * sizeof(char *));
                if (!nv) {
                        strv_freep(&v);
                        return -ENOMEM;
                }
                v = nv;
                v[n] = strdup(w->blocks[i].path);
                if (!v[n]) {
                        strv_freep(&v);
                        return -ENOMEM;
                }
                v[++n] = NULL;
        }
        w->subtrees_skipped_total += n;
        *ret = v;
        return 0;
}

ReclaimArgs reclaim_args_guess(const char *root, const char *mount, CgroupMode mode) {
        _cleanup_(freep) char *p = NULL, *full = NULL;
        struct stat st;

        if (mode != CGROUP_MEMORY_V2)
                return RECLAIM_ARGS_NONE;
        if (!mount || asprintf(&p, "%s/memory.reclaim", mount) < 0 || path_join_root(root ?: "/", p, &full) < 0)
                return RECLAIM_ARGS_UNKNOWN;
        return stat(full, &st) < 0 && errno == ENOENT ? RECLAIM_ARGS_NONE : RECLAIM_ARGS_UNKNOWN;
}

static const char *args_evidence(char *buf, size_t size, ReclaimArgs a, CgroupMode mode, const char *file, int error) {
        switch (a) {
        case RECLAIM_ARGS_SWAPPINESS:
                snprintf(buf, size, "'0 swappiness=0' written to %s was accepted", strna(file));
                break;
        case RECLAIM_ARGS_BYTES:
                snprintf(buf, size, "'0 swappiness=0' written to %s: EINVAL; '0' accepted", strna(file));
                break;
        case RECLAIM_ARGS_NONE:
                snprintf(buf, size, "%s", mode == CGROUP_MEMORY_V2 ? "no memory.reclaim in the hierarchy (kernel before 5.19)"
                                        : "cgroup v1 has no memory.reclaim (memory.force_empty only)");
                break;
        default:
                if (error < 0)
                        snprintf(buf, size, "probing %s failed: %s", strna(file), errno_str(error));
                else
                        snprintf(buf, size, "not probed: pcptuned writes '0 swappiness=0' to memory.reclaim when a "
                                            "reclaim-dying rule is loaded (never in dry-run)");
        }
        return buf;
}

static const char *args_effect(ReclaimArgs a, CgroupMode mode) {
        switch (a) {
        case RECLAIM_ARGS_SWAPPINESS:
                return "reclaim writes '<bytes> swappiness=0': file pages only, no anonymous page is swapped";
        case RECLAIM_ARGS_BYTES:
                return "reclaim may swap anonymous memory: subtrees are skipped unless the rule has allow-swap: true";
        case RECLAIM_ARGS_NONE:
                return mode == CGROUP_MEMORY_V1 ? "v1 force_empty reclaims file pages and may swap; force-empty: childless "
                                                  "never touches a parent with a live child"
                                                : "reclaim-dying cannot reclaim here";
        default:
                return "reclaim skips v2 subtrees until the probe answers, unless allow-swap: true";
        }
}

static const char *dying_how(CgroupMode mode, bool exact) {
        if (mode == CGROUP_MEMORY_V1)
                return "estimated from charges (v1 has no per-cgroup dying counter)";
        return exact ? "exact (cgroup.stat nr_dying_subsys_memory, 6.12+)"
                     : "from cgroup.stat nr_dying_descendants (all controllers; no nr_dying_subsys_memory)";
}

json_object *reclaim_watch_to_json(const ReclaimWatch *w, CgroupMode mode, usec_t now) {
        json_object *o = json_object_new_object(), *adv = json_object_new_object(), *skipped = json_object_new_array();
        char ev[PATH_MAX + 96];

        if (!o || !adv || !skipped) {
                json_object_put(o);
                json_object_put(adv);
                json_object_put(skipped);
                return NULL;
        }
        json_object_object_add(adv, "label", json_object_new_string("memory.reclaim arguments"));
        json_object_object_add(adv, "answer", json_object_new_string(reclaim_args_answer(w->args)));
        /* What the write told, for `pcptunectl status` (probe-kernel.c's row). */
        json_object_object_add(adv, "accepts", json_object_new_string(w->args == RECLAIM_ARGS_SWAPPINESS ? "swappiness"
                                                                      : w->args == RECLAIM_ARGS_BYTES ? "bytes"
                                                                      : w->args == RECLAIM_ARGS_NONE  ? "none"
                                                                                                      : "unknown"));
        /* The contrib patch's key, probed with the arguments ("yes", "no", "unknown"). */
        json_object_object_add(adv, "scope_dying", json_object_new_string(feature_state_to_string(w->scope_dying)));
        json_object_object_add(adv, "evidence", json_object_new_string(
                                                        args_evidence(ev, sizeof ev, w->args, mode, w->probe_file, w->probe_error)));
        json_object_object_add(adv, "effect", json_object_new_string(args_effect(w->args, mode)));
        json_object_object_add(o, "memory_reclaim_args", adv);
        json_object_object_add(o, "dying_per_subtree", json_object_new_string(dying_how(mode, w->dying_exact)));
        json_object_object_add(o, "refaults_total", json_object_new_int64((int64_t) w->refaults_total));
        json_object_object_add(o, "reclaims_measured", json_object_new_int64((int64_t) w->reclaims_measured));
        json_object_object_add(o, "subtrees_skipped_total", json_object_new_int64((int64_t) w->subtrees_skipped_total));
        if (w->has_record) {
                const ReclaimRecord *r = &w->record;
                json_object *l = json_object_new_object(), *subs = json_object_new_array();
                json_object_object_add(l, "rule", json_object_new_string(r->label));
                json_object_object_add(l, "state", json_object_new_string(r->counting ? "counting" : "measured"));
                json_object_object_add(l, "age_usec", json_object_new_int64((int64_t) (now > r->ended ? now - r->ended : 0)));
                json_object_object_add(l, "refault_window_usec", json_object_new_int64((int64_t) r->window_usec));
                if (r->max_rate > 0)
                        json_object_object_add(l, "max_refault_rate_per_sec", json_object_new_double(r->max_rate));
                json_object_object_add(l, "refaults", r->counting ? NULL : json_object_new_int64((int64_t) r->refaults));
                json_object_object_add(l, "subtrees_over_limit", json_object_new_int64((int64_t) r->n_over));
                json_object_object_add(l, "counter_reads", json_object_new_int64((int64_t) r->n_reads));
                json_object_object_add(l, "counter_read_usec", json_object_new_int64((int64_t) r->read_usec));
                json_object_object_add(l, "subtrees_total", json_object_new_int64((int64_t) r->n_subtrees));
                for (size_t i = 0; i < r->n_subtrees && i < WATCH_JSON_SUBTREES_MAX; i++) {
                        const ReclaimSubtreeRefaults *s = &r->subtrees[i];
                        json_object *so = json_object_new_object();
                        json_object_object_add(so, "path", json_object_new_string(s->path));
                        json_object_object_add(so, "outcome", json_object_new_string(reclaim_outcome_to_string(s->outcome)));
                        if (!r->counting && s->after >= 0 && s->before >= 0) {
                                json_object_object_add(so, "refaults", json_object_new_int64((int64_t) s->refaults));
                                json_object_object_add(so, "refault_rate_per_sec", json_object_new_double(s->rate));
                                json_object_object_add(so, "over_limit", json_object_new_boolean(s->over_limit));
                        }
                        json_object_array_add(subs, so);
                }
                json_object_object_add(l, "subtrees", subs);
                json_object_object_add(o, "last", l);
        }
        for (size_t i = 0; i < w->n_blocks; i++) {
                const RefaultBlock *b = &w->blocks[i];
                json_object *bo;
                if (b->until <= now)
                        continue;
                bo = json_object_new_object();
                json_object_object_add(bo, "rule", json_object_new_string(b->label));
                json_object_object_add(bo, "path", json_object_new_string(b->path));
                json_object_object_add(bo, "refault_rate_per_sec", json_object_new_double(b->rate));
                json_object_object_add(bo, "remaining_usec", json_object_new_int64((int64_t) (b->until - now)));
                json_object_array_add(skipped, bo);
        }
        json_object_object_add(o, "skipped_subtrees", skipped);
        return o;
}

static const char *jstr(json_object *o, const char *key) {
        json_object *v;
        return o && json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

static bool jget(json_object *o, const char *key, json_object **ret) {
        return o && json_object_object_get_ex(o, key, ret) && *ret;
}

void reclaim_watch_print_json(FILE *f, json_object *reclaim) {
        json_object *last, *skipped, *v;

        /* What memory.reclaim accepts is the kernel probe row "memory.reclaim arguments" (probe-kernel.c). */
        if (!reclaim || (!jget(reclaim, "last", &last) &&
                         !(jget(reclaim, "skipped_subtrees", &skipped) && json_object_array_length(skipped) > 0)))
                return;
        fprintf(f, "\nreclaim-dying:\n");
        if (jget(reclaim, "last", &last)) {
                json_object *subs;
                int64_t window = jget(last, "refault_window_usec", &v) ? json_object_get_int64(v) : 0;
                int64_t age = jget(last, "age_usec", &v) ? json_object_get_int64(v) : 0;
                fprintf(f, "  last reclaim %s, %.0f s ago: ", strna(jstr(last, "rule")), (double) age / 1e6);
                if (jget(last, "refaults", &v))
                        fprintf(f, "%" PRId64 " refaults in the live cgroups of the reclaimed subtrees, from just before "
                                   "each reclaim to %.0f s after the run",
                                json_object_get_int64(v), (double) window / 1e6);
                else
                        fprintf(f, "counting refaults until %.0f s after the run", (double) window / 1e6);
                if (jget(last, "max_refault_rate_per_sec", &v))
                        fprintf(f, " (max-refault-rate %.1f/s)", json_object_get_double(v));
                fprintf(f, "\n");
                if (jget(last, "subtrees", &subs))
                        for (size_t i = 0; i < json_object_array_length(subs); i++) {
                                json_object *s = json_object_array_get_idx(subs, i);
                                fprintf(f, "    %s: %s", strna(jstr(s, "path")), strna(jstr(s, "outcome")));
                                if (jget(s, "refaults", &v))
                                        fprintf(f, ", %" PRId64 " refaults", json_object_get_int64(v));
                                if (jget(s, "refault_rate_per_sec", &v))
                                        fprintf(f, " (%.2f/s)", json_object_get_double(v));
                                if (jget(s, "over_limit", &v) && json_object_get_boolean(v))
                                        fprintf(f, ": above max-refault-rate, skipped for the rule's cooldown");
                                fprintf(f, "\n");
                        }
        }
        if (jget(reclaim, "skipped_subtrees", &skipped))
                for (size_t i = 0; i < json_object_array_length(skipped); i++) {
                        json_object *b = json_object_array_get_idx(skipped, i), *r, *t;
                        fprintf(f, "  skipped by %s: %s (its live cgroups refaulted %.1f/s after the last reclaim; "
                                   "%.0f s of cooldown left)\n",
                                strna(jstr(b, "rule")), strna(jstr(b, "path")),
                                jget(b, "refault_rate_per_sec", &r) ? json_object_get_double(r) : 0,
                                jget(b, "remaining_usec", &t) ? (double) json_object_get_int64(t) / 1e6 : 0);
                }
}
