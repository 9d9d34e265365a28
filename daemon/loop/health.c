/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <unistd.h>

#include "act-sysctl.h"
#include "export-prom.h"
#include "health.h"
#include "journal.h"
#include "onstop.h"
#include "policy.h"
#include "util.h"

void health_self_verdict(bool reload_failed, const char *refused_knob, int refused_errno, bool crash_pending,
                         bool dry_run, HealthInfo *ret) {
        ret->problem = true;
        if (reload_failed)
                snprintf(ret->reason, sizeof ret->reason, "last policy reload failed");
        else if (refused_knob && refused_errno > 0) {
                const char *name = strerrorname_np(refused_errno);
                if (name)
                        snprintf(ret->reason, sizeof ret->reason, "a knob write was refused: %s (errno %s)",
                                 refused_knob, name);
                else
                        snprintf(ret->reason, sizeof ret->reason, "a knob write was refused: %s (errno %d)",
                                 refused_knob, refused_errno);
        } else if (crash_pending)
                snprintf(ret->reason, sizeof ret->reason, "crash restore pending");
        else {
                ret->problem = false;
                snprintf(ret->reason, sizeof ret->reason, "%s", dry_run ? "dry run" : "sampling");
        }
}

int health_format(const HealthInfo *h, char *buf, size_t size) {
        char reason[HEALTH_REASON_MAX + 1];
        size_t n = 0;

        /* No newline (a second line), no quote (readers refuse it), no '=' first. */
        for (const char *c = h->reason; *c && n < HEALTH_REASON_MAX; c++) {
                unsigned char u = (unsigned char) *c;
                bool bad = u < 0x20 || u == 0x7f || u == '"' || u == '\'' || (n == 0 && u == '=');
                reason[n++] = bad ? '_' : *c;
        }
        reason[n] = 0;
        int k = snprintf(buf, size,
                         "PCPTUNE_HEALTH=1\nVERDICT=%s\nREASON=%s\nUPDATED=%" PRId64 "\nINTERVAL=%" PRId64
                         "\nHELD=%" PRIu64 "\nDRY_RUN=%d\nPID=%" PRId64 "\n",
                         h->problem ? "problem" : "ok", reason, MAX(h->updated, (int64_t) 0),
                         MAX(h->interval, (int64_t) 1), h->held, h->dry_run > 0 ? 1 : 0, h->pid);
        if (k < 0 || (size_t) k >= size)
                return -ENOBUFS;
        return k;
}

int health_write(const char *state_dir, const HealthInfo *h) {
        _cleanup_(freep) char *path = NULL;
        char text[HEALTH_FILE_MAX];
        int k;

        k = health_format(h, text, sizeof text);
        if (k < 0)
                return k;
        if (asprintf(&path, "%s/" HEALTH_FILE, state_dir) < 0)
                return -ENOMEM;
        return write_file_atomic(path, text, (size_t) k, 0644);
}

int health_remove(const char *state_dir) {
        _cleanup_(freep) char *path = NULL;

        if (asprintf(&path, "%s/" HEALTH_FILE, state_dir) < 0)
                return -ENOMEM;
        if (unlink(path) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

/* Digits only, 1..12 of them (as pcptune-check.sh's is_uint: no overflow anywhere). */
static bool parse_uint12(const char *s, size_t len, int64_t *ret) {
        int64_t v = 0;
        if (len == 0 || len > 12)
                return false;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return false;
                v = v * 10 + (s[i] - '0');
        }
        *ret = v;
        return true;
}

static int bad(char *why, size_t size, const char *what) {
        snprintf(why, size, "%s", what);
        return -EBADMSG;
}

int health_parse(const char *text, size_t len, HealthInfo *ret, char *why, size_t why_size) {
        HealthInfo h = { .dry_run = -1 };
        const char *verdict = NULL, *updated = NULL, *interval = NULL, *held = NULL, *dry = NULL;
        size_t verdict_len = 0, updated_len = 0, interval_len = 0, held_len = 0, dry_len = 0;
        const char *p = text, *end = text + len;
        bool first = true;

        if (len == 0)
                return bad(why, why_size, "it is empty");
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                size_t n = nl ? (size_t) (nl - p) : (size_t) (end - p);
                const char *line = p;
                p = nl ? nl + 1 : end;
                if (first) {
                        first = false;
                        if (n != strlen("PCPTUNE_HEALTH=1") || memcmp(line, "PCPTUNE_HEALTH=1", n) != 0)
                                return bad(why, why_size, "its first line is not PCPTUNE_HEALTH=1");
                        continue;
                }
                const char *eq = memchr(line, '=', n);
                if (!eq || memchr(line, 0, n))
                        return bad(why, why_size, "a line without KEY=VALUE");
                size_t klen = (size_t) (eq - line), vlen = n - klen - 1;
                const char *val = eq + 1;
                if (memchr(val, '"', vlen) || memchr(val, '\'', vlen))
                        return bad(why, why_size, "a quoted value");
#define KEY_IS(k) (klen == strlen(k) && memcmp(line, k, klen) == 0)
                if (KEY_IS("VERDICT"))
                        verdict = val, verdict_len = vlen;
                else if (KEY_IS("REASON")) {
                        size_t m = MIN(vlen, (size_t) HEALTH_REASON_MAX);
                        memcpy(h.reason, val, m);
                        h.reason[m] = 0;
                } else if (KEY_IS("UPDATED"))
                        updated = val, updated_len = vlen;
                else if (KEY_IS("INTERVAL"))
                        interval = val, interval_len = vlen;
                else if (KEY_IS("HELD"))
                        held = val, held_len = vlen;
                else if (KEY_IS("DRY_RUN"))
                        dry = val, dry_len = vlen;
                else if (KEY_IS("PID") && !parse_uint12(val, vlen, &h.pid))
                        h.pid = 0;
#undef KEY_IS
        }
        if (verdict && verdict_len == 2 && memcmp(verdict, "ok", 2) == 0)
                h.problem = false;
        else if (verdict && verdict_len == 7 && memcmp(verdict, "problem", 7) == 0)
                h.problem = true;
        else
                return bad(why, why_size, "VERDICT is not ok or problem");
        if (!updated || !parse_uint12(updated, updated_len, &h.updated))
                return bad(why, why_size, "UPDATED is not Unix seconds");
        if (!interval || !parse_uint12(interval, interval_len, &h.interval) || h.interval < 1)
                return bad(why, why_size, "INTERVAL is not a positive integer");
        if (held && held_len > 0) {
                int64_t v;
                if (!parse_uint12(held, held_len, &v))
                        return bad(why, why_size, "HELD is not a count");
                h.has_held = true;
                h.held = (uint64_t) v;
        }
        if (dry && dry_len > 0) {
                if (dry_len != 1 || (dry[0] != '0' && dry[0] != '1'))
                        return bad(why, why_size, "DRY_RUN is not 0 or 1");
                h.dry_run = dry[0] - '0';
        }
        *ret = h;
        return 0;
}

HealthVerdict health_check_dir(const char *dir, int64_t now, char *msg, size_t size, bool *ret_fresh_ok) {
        _cleanup_(freep) char *hpath = NULL, *jpath = NULL, *text = NULL;
        _cleanup_(closep) int fd = -EBADF;
        struct stat st;
        size_t len;
        bool held_journal;
        HealthInfo h;
        char why[128];

        if (ret_fresh_ok)
                *ret_fresh_ok = false;
        if (asprintf(&hpath, "%s/" HEALTH_FILE, dir) < 0 || asprintf(&jpath, "%s/" JOURNAL_FILE, dir) < 0) {
                snprintf(msg, size, "unknown: out of memory");
                return HEALTH_UNKNOWN;
        }
        held_journal = lstat(jpath, &st) >= 0;
        if (stat(dir, &st) < 0) {
                snprintf(msg, size, "pcptune not installed");
                return HEALTH_OK;
        }
        if (lstat(hpath, &st) < 0) {
                if (held_journal) {
                        snprintf(msg, size, "values held in restore.json with no pcptuned running");
                        return HEALTH_PROBLEM;
                }
                snprintf(msg, size, "pcptuned not running, no values held");
                return HEALTH_OK;
        }
        fd = open(hpath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                snprintf(msg, size, "unknown: the health file is not a readable regular file");
                return HEALTH_UNKNOWN;
        }
        if (st.st_size > HEALTH_FILE_MAX || read_fd_full(fd, HEALTH_FILE_MAX, &text, &len) < 0) {
                snprintf(msg, size, "unknown: the health file is larger than 4 KiB or unreadable");
                return HEALTH_UNKNOWN;
        }
        if (health_parse(text, len, &h, why, sizeof why) < 0) {
                snprintf(msg, size, "unknown: garbled health file (%s)", why);
                return HEALTH_UNKNOWN;
        }
        int64_t limit = 3 * h.interval + 60, age = now - h.updated;
        if (age < -limit) {
                snprintf(msg, size, "unknown: the health file is dated %" PRId64 " s in the future", -age);
                return HEALTH_UNKNOWN;
        }
        if (age > limit) {
                snprintf(msg, size, "%spcptuned not sampling: health %" PRId64 " s old (limit %" PRId64 " s)",
                         held_journal ? "values held in restore.json; " : "", age, limit);
                return HEALTH_PROBLEM;
        }
        if (h.problem) {
                snprintf(msg, size, "%s", *h.reason ? h.reason : "pcptuned reports a problem");
                return HEALTH_PROBLEM;
        }
        char held[48] = "";
        if (h.has_held)
                snprintf(held, sizeof held, ", %" PRIu64 " value(s) held", h.held);
        snprintf(msg, size, "ok: %s%s%s", *h.reason ? h.reason : "sampling", held, h.dry_run == 1 ? " (dry run)" : "");
        if (ret_fresh_ok)
                *ret_fresh_ok = true;
        return HEALTH_OK;
}

HealthVerdict health_check_dirs(char *const *dirs, size_t n, int64_t now, char *msg, size_t size) {
        HealthVerdict worst_v = HEALTH_OK;
        int worst = -1;

        for (size_t i = 0; i < n; i++) {
                char line[512];
                bool fresh_ok;
                HealthVerdict v = health_check_dir(dirs[i], now, line, sizeof line, &fresh_ok);
                /* Rank: a problem, then unknown, then ok from a health file, then ok without one. */
                int rank = v == HEALTH_PROBLEM ? 3 : v == HEALTH_UNKNOWN ? 2 : fresh_ok ? 1 : 0;
                if (rank > worst) {
                        worst = rank;
                        worst_v = v;
                        if (n > 1)
                                snprintf(msg, size, "%s: %s", dirs[i], line);
                        else
                                snprintf(msg, size, "%s", line);
                }
        }
        return worst_v;
}

int health_write_daemon(const char *state_dir, const DaemonCounters *c, const KnobCounters *kc, bool dry_run,
                        uint64_t interval_usec, const char *reason_ok) {
        HealthInfo h = { .updated = (int64_t) (now_usec(CLOCK_REALTIME) / USEC_PER_SEC),
                         .interval = (int64_t) ((interval_usec + USEC_PER_SEC - 1) / USEC_PER_SEC),
                         .has_held = true, .held = dry_run ? 0 : c->journal_held, .dry_run = dry_run,
                         .pid = getpid() };
        const char *refused = NULL;
        int refused_errno = 0;

        for (KnobId id = 0; id < _KNOB_ID_MAX && !refused; id++)
                if (knob_managed(knob_desc(id)) && kc[id].last_errno > 0) {
                        refused = knob_desc(id)->name;
                        refused_errno = kc[id].last_errno;
                }
        health_self_verdict(!c->config_reload_ok, refused, refused_errno, c->crash_restore == CRASH_RESTORE_PENDING,
                            dry_run, &h);
        if (!h.problem && reason_ok)
                snprintf(h.reason, sizeof h.reason, "%s", reason_ok);
        return health_write(state_dir, &h);
}

void policy_set_hash(const PolicySet *set, char ret[17]) {
        uint64_t h = FNV1A64_INIT;

        for (size_t i = 0; set && i < set->n_policies; i++) {
                const char *file = set->policies[i]->file, *base = strrchr(file, '/');
                _cleanup_(freep) char *text = NULL;
                const char *content = NULL;
                size_t len = 0;

                base = base ? base + 1 : file;
                h = fnv1a64(h, base, strlen(base) + 1);
                if (strncmp(file, "<embedded>/", strlen("<embedded>/")) == 0) {
                        for (size_t e = 0; e < n_embedded_policies; e++)
                                if (streq(embedded_policies[e].name, base))
                                        content = embedded_policies[e].text;
                        len = content ? strlen(content) : 0;
                } else {
                        /* Followed: a ConfigMap's files are symlinks into its ..data directory. */
                        _cleanup_(closep) int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
                        if (fd >= 0 && read_fd_full(fd, 1024 * 1024, &text, &len) >= 0)
                                content = text;
                }
                if (content)
                        h = fnv1a64(h, content, len);
                h = fnv1a64(h, "", 1);
        }
        snprintf(ret, 17, "%016" PRIx64, h);
}

uint64_t health_held_knobs(const KnobState *knobs) {
        uint64_t n = 0;
        for (KnobId id = 0; id < _KNOB_ID_MAX; id++)
                n += knobs[id].managed;
        return n;
}

int health_crash_restore_state(const char *state_dir, const char *root, bool dry_run, bool restored, bool taken) {
        _cleanup_(freep) char *journal = NULL;
        char name[JOURNAL_NAME_MAX];
        struct stat st;

        if (!dry_run)
                return restored ? CRASH_RESTORE_DONE : CRASH_RESTORE_NONE;
        if (taken || asprintf(&journal, "%s/%s", state_dir, journal_file_name(root, name)) < 0)
                return CRASH_RESTORE_NONE;
        return lstat(journal, &st) >= 0 && !handover_marked(state_dir, root) ? CRASH_RESTORE_PENDING
                                                                             : CRASH_RESTORE_NONE;
}
