/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Policy sets: loading files, directories and the embedded default, the
 * checks that span several rules or policies, and host matching.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "log.h"
#include "policy.h"

#ifndef POLICY_DIR_DEFAULT
#define POLICY_DIR_DEFAULT "/etc/pcptune/policies.d"
#endif

/* Policies are a few KiB; anything much bigger is a mistake (a log, a core dump) in the directory. */
#define POLICY_FILE_MAX ((size_t) 1024U * 1024U)

/* ------------------------------------------------------------------------ */
/* Diagnostics */

void diagnostics_done(Diagnostics *d) {
        if (!d)
                return;
        for (size_t i = 0; i < d->n_errors; i++)
                free(d->errors[i]);
        for (size_t i = 0; i < d->n_warnings; i++)
                free(d->warnings[i]);
        free(d->errors);
        free(d->warnings);
        *d = (Diagnostics){};
}

/* Out of memory drops the message: the caller still sees the failure through its return value. */
_printf_(3, 0) static void diagnostics_add(char ***list, size_t *n, const char *fmt, va_list ap) {
        char *s, **a;

        if (vasprintf(&s, fmt, ap) < 0)
                return;
        /* File names and found values come from files: a control character would reach the terminal or
         * the journal as it is.  Messages holding one are printed escaped (\xNN). */
        for (const char *c = s; *c; c++)
                if ((unsigned char) *c < 0x20 || *c == 0x7f) {
                        size_t size = strlen(s) * 4 + 1;
                        char *e = malloc(size);
                        if (e)
                                str_escape(s, e, size);
                        free(s);
                        s = e;
                        if (!s)
                                return;
                        break;
                }
        a = realloc(*list, (*n + 1) * sizeof(char *));
        if (!a) {
                free(s);
                return;
        }
        a[(*n)++] = s;
        *list = a;
}

void diagnostics_log(const Diagnostics *d) {
        for (size_t pass = 0; pass < 2; pass++) {
                char **v = pass == 0 ? d->errors : d->warnings;
                size_t n = pass == 0 ? d->n_errors : d->n_warnings;
                for (size_t i = 0; i < n; i++) {
                        char ffile[PATH_MAX + 16] = "", fline[48] = "";
                        const char *fields[3] = { NULL, NULL, NULL };
                        const char *c1 = strchr(v[i], ':');
                        const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
                        if (c1 && c2) {
                                snprintf(ffile, sizeof ffile, "CONFIG_FILE=%.*s", (int) (c1 - v[i]), v[i]);
                                snprintf(fline, sizeof fline, "CONFIG_LINE=%.*s", (int) MIN(c2 - c1 - 1, 20L), c1 + 1);
                                fields[0] = ffile;
                                fields[1] = fline;
                        }
                        log_fields(pass == 0 ? LOG_ERR : LOG_WARNING, fields, "%s", v[i]);
                }
        }
}

void diagnostics_error(Diagnostics *d, const char *fmt, ...) {
        va_list ap;

        if (!d)
                return;
        va_start(ap, fmt);
        diagnostics_add(&d->errors, &d->n_errors, fmt, ap);
        va_end(ap);
}

void diagnostics_warning(Diagnostics *d, const char *fmt, ...) {
        va_list ap;

        if (!d)
                return;
        va_start(ap, fmt);
        diagnostics_add(&d->warnings, &d->n_warnings, fmt, ap);
        va_end(ap);
}

/* ------------------------------------------------------------------------ */
/* Sets */

PolicySet *policy_set_free(PolicySet *s) {
        if (!s)
                return NULL;
        for (size_t i = 0; i < s->n_policies; i++)
                policy_free(s->policies[i]);
        free(s->policies);
        free(s->source);
        free(s);
        return NULL;
}

static PolicySet *policy_set_new(const char *source) {
        PolicySet *s = calloc(1, sizeof(PolicySet));

        if (!s)
                return NULL;
        s->source = strdup(source);
        if (!s->source)
                return policy_set_free(s);
        return s;
}

static int policy_set_add(PolicySet *s, Policy *p) {
        Policy **a = realloc(s->policies, (s->n_policies + 1) * sizeof(Policy *));

        if (!a)
                return -ENOMEM;
        a[s->n_policies++] = p;
        s->policies = a;
        return 0;
}

static const char *file_basename(const char *path) {
        const char *s = strrchr(path, '/');
        return s ? s + 1 : path;
}

/* Ascending (priority, file name, path): the last policy wins. */
static int policy_compare(const void *a, const void *b) {
        const Policy *x = *(Policy *const *) a, *y = *(Policy *const *) b;
        int r;

        if (x->priority != y->priority)
                return x->priority < y->priority ? -1 : 1;
        r = strcmp(file_basename(x->file), file_basename(y->file));
        if (r != 0)
                return r;
        return strcmp(x->file, y->file);
}

/*
 * Read and parse one file.  With check_owner the file must be owned by root
 * and not writable by group or others: the policies decide what the daemon
 * writes as root to /proc/sys and cgroup files.  open() follows symlinks and
 * fstat() checks the target, so a link is as good as the file it points to
 * (in a directory, only one its owner made: symlink_owner_check()).
 * O_NONBLOCK keeps a FIFO dropped in the directory from hanging the load.
 * shown is the name messages and Policy.file use (path itself for load_file()).
 * 0, -EINVAL (reported in diag), -ENOMEM or -errno (reported).
 */
static int load_file_as(PolicySet *s, const char *path, const char *shown, bool check_owner, Diagnostics *diag) {
        _cleanup_(closep) int fd = -EBADF;
        _cleanup_(freep) char *buf = NULL;
        Policy *p = NULL;
        struct stat st;
        size_t len;
        int r;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                r = negative_errno();
                diagnostics_error(diag, "%s: cannot open policy file: %s", shown, strerror(-r));
                return r;
        }
        if (fstat(fd, &st) < 0) {
                r = negative_errno();
                diagnostics_error(diag, "%s: cannot stat policy file: %s", shown, strerror(-r));
                return r;
        }
        if (!S_ISREG(st.st_mode)) {
                diagnostics_error(diag, "%s: expected a regular file, found %s", shown,
                                  S_ISDIR(st.st_mode)    ? "a directory"
                                  : S_ISFIFO(st.st_mode) ? "a FIFO"
                                  : S_ISSOCK(st.st_mode) ? "a socket"
                                                         : "a device node");
                return -EINVAL;
        }
        if (check_owner && (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))) {
                bool bad_owner = st.st_uid != 0, bad_mode = st.st_mode & (S_IWGRP | S_IWOTH);
                diagnostics_error(diag,
                                  "%s: refusing policy file %s%s%s (owner uid %u, mode %04o): policies drive root "
                                  "writes, so a policy file must be owned by root and not writable by group or others",
                                  shown, bad_owner ? "not owned by root" : "", bad_owner && bad_mode ? " and " : "",
                                  bad_mode ? "writable by group or others" : "", (unsigned) st.st_uid,
                                  (unsigned) (st.st_mode & 07777));
                return -EPERM;
        }

        r = read_fd_full(fd, POLICY_FILE_MAX, &buf, &len);
        if (r == -EFBIG) {
                diagnostics_error(diag, "%s: expected a policy file of at most 1 MiB, found a larger file", shown);
                return -EINVAL;
        }
        if (r < 0) {
                diagnostics_error(diag, "%s: cannot read policy file: %s", shown, strerror(-r));
                return r;
        }

        r = policy_parse(shown, buf, len, &p, diag);
        if (r < 0)
                return r;
        r = policy_set_add(s, p);
        if (r < 0)
                policy_free(p);
        return r;
}

static int load_file(PolicySet *s, const char *path, bool check_owner, Diagnostics *diag) {
        return load_file_as(s, path, path, check_owner, diag);
}

bool policy_file_name_valid(const char *name) {
        size_t n = strlen(name);

        if (name[0] == '.')
                return false;
        return (n > 5 && streq(name + n - 5, ".yaml")) || (n > 4 && streq(name + n - 4, ".yml"));
}

static int strcmp_ptr(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The policy file names of a directory, sorted (strcmp: byte order, locale-independent). */
static int list_dir(const char *dir, char ***ret, size_t *ret_n, Diagnostics *diag) {
        DIR *d;
        char **names = NULL;
        size_t n = 0;
        int r = 0;

        d = opendir(dir);
        if (!d) {
                r = negative_errno();
                if (r == -ENOENT)
                        diagnostics_error(diag, "%s: policy directory does not exist", dir);
                else
                        diagnostics_error(diag, "%s: cannot open policy directory: %s", dir, strerror(-r));
                return r;
        }
        for (;;) {
                struct dirent *de;

                errno = 0;
                de = readdir(d);
                if (!de) {
                        if (errno != 0) {
                                r = negative_errno();
                                diagnostics_error(diag, "%s: cannot read policy directory: %s", dir, strerror(-r));
                        }
                        break;
                }
                if (!policy_file_name_valid(de->d_name))
                        continue;
                char **a = realloc(names, (n + 2) * sizeof(char *));
                if (!a) {
                        r = -ENOMEM;
                        break;
                }
                names = a;
                if (asprintf(&names[n], "%s%s%s", dir, dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/",
                             de->d_name) < 0) {
                        r = -ENOMEM;
                        break;
                }
                names[++n] = NULL;
        }
        closedir(d);
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        free(names[i]);
                free(names);
                return r;
        }
        if (n > 0)
                qsort(names, n, sizeof(char *), strcmp_ptr);
        *ret = names;
        *ret_n = n;
        return 0;
}

/*
 * The rule of fs.protected_symlinks (off on some hosts, and it spares directories that are
 * not sticky and world-writable): a symlink in a policy directory is followed only if the
 * directory's owner made it.  Whoever else planted it (before the directory's mode was
 * fixed, or as a group member) could point it at any root-owned file, which the file checks
 * pass.  path is the entry, shown its name in messages.  0 (not a symlink, the owner's, or
 * lstat()/stat() failed: the open that follows reports it), -EPERM (reported), -ENOMEM.
 */
static int symlink_owner_check(const char *path, const char *shown, Diagnostics *diag) {
        _cleanup_(freep) char *dir = strdup(path);
        struct stat lst, dst;
        char *slash;

        if (!dir)
                return -ENOMEM;
        if (lstat(path, &lst) < 0 || !S_ISLNK(lst.st_mode))
                return 0;
        slash = strrchr(dir, '/');
        if (slash)
                *(slash == dir ? slash + 1 : slash) = 0;
        if (stat(slash ? dir : ".", &dst) < 0 || lst.st_uid == dst.st_uid)
                return 0;
        diagnostics_error(diag,
                          "%s: refusing a symlink owned by uid %u in a directory owned by uid %u: only the directory's "
                          "owner may link a policy there (the rule of fs.protected_symlinks)",
                          shown, (unsigned) lst.st_uid, (unsigned) dst.st_uid);
        return -EPERM;
}

/*
 * Kubernetes ConfigMap volumes: kubelet writes the files into a directory
 * named "..<timestamp>" (e.g. "..2026_12_01_14_05_09.1234567890", mode 0755),
 * points the symlink "..data" at it, and makes each visible NAME a symlink to
 * "..data/NAME".  An update writes a new "..<timestamp>" directory, points a
 * new symlink "..data_tmp" at it, renames "..data_tmp" over "..data", adds or
 * removes visible symlinks and removes the old directory
 * (tests/scripts/configmap.sh replays exactly that).  Reading the visible names
 * one by one could mix two versions; reading the directory "..data" names at
 * one instant cannot.
 *
 * Returns 0 with *ret_name = the "..<timestamp>" name if dir/..data is a
 * symlink to a directory beside it whose name starts with "..", 0 with NULL
 * if there is no "..data", -EINVAL (in diag) if "..data" is anything else,
 * -EPERM (in diag) with check_owner if the symlink's owner is not the
 * directory's (symlink_owner_check(): kubelet, root, owns both), -ENOMEM.
 */
static int configmap_data_dir(const char *dir, bool check_owner, char **ret_name, Diagnostics *diag) {
        _cleanup_(freep) char *link = NULL, *target = NULL, *data = NULL;
        struct stat st;
        char buf[256];
        ssize_t k;

        if (asprintf(&link, "%s/..data", dir) < 0)
                return -ENOMEM;
        k = readlink(link, buf, sizeof buf);
        if (k < 0) {
                if (errno == ENOENT) {
                        *ret_name = NULL;
                        return 0;
                }
                diagnostics_error(diag, "%s: expected kubelet's symlink to the current ConfigMap data, found %s", link,
                                  errno == EINVAL ? "no symlink" : strerror(errno));
                return -EINVAL;
        }
        if ((size_t) k >= sizeof buf || memchr(buf, '/', (size_t) k) || k < 3 || buf[0] != '.' || buf[1] != '.') {
                diagnostics_error(diag, "%s: expected a symlink to a \"..<timestamp>\" directory beside it, found a link "
                                        "to \"%.*s\"", link, (int) MIN(k, 64), buf);
                return -EINVAL;
        }
        if (check_owner) {
                int r = symlink_owner_check(link, link, diag);
                if (r < 0)
                        return r;
        }
        data = strndup(buf, (size_t) k);
        if (!data || asprintf(&target, "%s/%s", dir, data) < 0)
                return -ENOMEM;
        if (lstat(target, &st) < 0 || !S_ISDIR(st.st_mode)) {
                diagnostics_error(diag, "%s: expected a symlink to a \"..<timestamp>\" directory beside it, but %s is %s",
                                  link, data, errno == ENOENT ? "missing" : "not a directory");
                return -EINVAL;
        }
        *ret_name = TAKE_PTR(data);
        return 0;
}

static int load_dir_into(PolicySet *s, const char *dir, bool check_owner, Diagnostics *diag) {
        _cleanup_(freep) char *data = NULL, *data_path = NULL;
        const char *sep = dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/";
        const char *list_from = dir;
        char **names = NULL;
        size_t n = 0;
        int r, ret = 0;

        r = configmap_data_dir(dir, check_owner, &data, diag);
        if (r < 0)
                return r;
        if (data) {
                if (asprintf(&data_path, "%s%s%s", dir, sep, data) < 0)
                        return -ENOMEM;
                list_from = data_path;
        }

        /*
         * Whoever can write the directory can rename or remove root's files in it, and even with
         * the sticky bit add a symlink to any root-owned file (which the file checks would pass):
         * refused like a writable policy file.  In kubelet's layout the files are in the
         * "..<timestamp>" directory, which is what is checked: the volume's own directory is an
         * emptyDir, which kubelet creates with mode 0777.  Someone who could write there could only
         * point "..data" at a directory they own (refused here), with a symlink they own (refused
         * by configmap_data_dir()), or remove it (then this directory itself is checked, and refused).
         */
        struct stat dst;
        if (check_owner && stat(list_from, &dst) == 0 && (dst.st_uid != 0 || (dst.st_mode & (S_IWGRP | S_IWOTH)))) {
                diagnostics_error(diag,
                                  "%s: refusing policy directory (owner uid %u, mode %04o): it must be owned by root and "
                                  "not writable by group or others, who could add, rename or remove policies",
                                  list_from, (unsigned) dst.st_uid, (unsigned) (dst.st_mode & 07777));
                return -EPERM;
        }

        r = list_dir(list_from, &names, &n, diag);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                _cleanup_(freep) char *shown = NULL;

                /* Messages name the file as the operator sees it: DIR/NAME, not DIR/..<timestamp>/NAME. */
                if (data && asprintf(&shown, "%s%s%s", dir, sep, file_basename(names[i])) < 0)
                        r = -ENOMEM;
                else {
                        r = check_owner ? symlink_owner_check(names[i], shown ?: names[i], diag) : 0;
                        if (r >= 0)
                                r = load_file_as(s, names[i], shown ?: names[i], check_owner, diag);
                }
                if (r == -ENOMEM)
                        ret = r;
                else if (r < 0 && ret == 0)
                        ret = -EINVAL;
        }
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
        return ret;
}

/*
 * Sort, run the set checks, and hand the set over if nothing failed.
 * r is the loading result so far; errors counted since `errors`.
 */
static int finish_set(PolicySet **s, int r, Diagnostics *diag, size_t errors, PolicySet **ret) {
        if (r == -ENOMEM)
                return r;
        if ((*s)->n_policies > 1)
                qsort((*s)->policies, (*s)->n_policies, sizeof(Policy *), policy_compare);
        policy_set_check(*s, diag);
        if (r < 0)
                return r;
        if (diag->n_errors > errors)
                return -EINVAL;
        *ret = TAKE_PTR(*s);
        return 0;
}

int policy_set_load_dir(const char *dir, bool check_owner, PolicySet **ret, Diagnostics *diag) {
        _cleanup_(policy_set_freep) PolicySet *s = NULL;
        _cleanup_(diagnostics_done) Diagnostics local = {};
        size_t errors;
        int r;

        if (!dir)
                return -EINVAL;
        if (!diag)
                diag = &local;
        errors = diag->n_errors;
        s = policy_set_new(dir);
        if (!s)
                return -ENOMEM;
        r = load_dir_into(s, dir, check_owner, diag);
        /* The directory itself could not be read (-ENOENT, -EACCES...): no set. */
        if (r < 0 && r != -EINVAL)
                return r;
        return finish_set(&s, r, diag, errors, ret);
}

int policy_set_load_embedded(PolicySet **ret, Diagnostics *diag) {
        _cleanup_(policy_set_freep) PolicySet *s = NULL;
        _cleanup_(diagnostics_done) Diagnostics local = {};
        size_t errors;
        int r = 0;

        if (!diag)
                diag = &local;
        errors = diag->n_errors;
        s = policy_set_new("embedded");
        if (!s)
                return -ENOMEM;
        for (size_t i = 0; i < n_embedded_policies; i++) {
                _cleanup_(freep) char *file = NULL;
                Policy *p = NULL;
                int k;

                if (asprintf(&file, "<embedded>/%s", embedded_policies[i].name) < 0)
                        return -ENOMEM;
                k = policy_parse(file, embedded_policies[i].text, strlen(embedded_policies[i].text), &p, diag);
                if (k == -ENOMEM)
                        return k;
                if (k < 0) {
                        r = -EINVAL;
                        continue;
                }
                k = policy_set_add(s, p);
                if (k < 0) {
                        policy_free(p);
                        return k;
                }
        }
        return finish_set(&s, r, diag, errors, ret);
}

int policy_set_load_default(const char *dir, bool check_owner, PolicySet **ret, Diagnostics *diag) {
        struct stat st;

        if (dir)
                return policy_set_load_dir(dir, check_owner, ret, diag);
        /* Only a missing directory falls back: an unreadable one is an error to fix, not to hide. */
        if (stat(POLICY_DIR_DEFAULT, &st) < 0 && errno == ENOENT)
                return policy_set_load_embedded(ret, diag);
        return policy_set_load_dir(POLICY_DIR_DEFAULT, check_owner, ret, diag);
}

int policy_set_load_paths(char **paths, bool check_owner, PolicySet **ret, Diagnostics *diag) {
        _cleanup_(policy_set_freep) PolicySet *s = NULL;
        _cleanup_(diagnostics_done) Diagnostics local = {};
        _cleanup_(freep) char *source = NULL;
        size_t errors, size = 1;
        int r = 0;

        if (!paths)
                return -EINVAL;
        if (!diag)
                diag = &local;
        errors = diag->n_errors;

        for (char **p = paths; *p; p++)
                size += strlen(*p) + 1;
        source = calloc(1, size);
        if (!source)
                return -ENOMEM;
        for (char **p = paths; *p; p++) {
                if (p != paths)
                        strcat(source, " ");
                strcat(source, *p);
        }
        s = policy_set_new(source);
        if (!s)
                return -ENOMEM;

        for (char **p = paths; *p; p++) {
                struct stat st;
                int k;

                if (stat(*p, &st) < 0) {
                        k = negative_errno();
                        diagnostics_error(diag, "%s: cannot access policy path: %s", *p, strerror(-k));
                } else if (S_ISDIR(st.st_mode))
                        k = load_dir_into(s, *p, check_owner, diag);
                else
                        k = load_file(s, *p, check_owner, diag);
                if (k == -ENOMEM)
                        return k;
                if (k < 0 && r == 0)
                        r = k;
        }
        return finish_set(&s, r, diag, errors, ret);
}

/* ------------------------------------------------------------------------ */
/* Checks over a set */

static bool rule_sets_knob(const Rule *r, KnobId k) {
        return r->knobs[k].set;
}

/* A rule that sets k whenever its policy applies. */
static bool rule_always_sets(const Rule *r, KnobId k) {
        return rule_sets_knob(r, k) && !r->when.root;
}

/* Who shadows a rule for one knob: a later rule of its policy, or one of a later policy. */
typedef struct Shadow {
        const Policy *by_policy;
        const Rule *by_rule;
} Shadow;

static int policy_by_name_compare(const void *a, const void *b, void *userdata) {
        const PolicySet *s = userdata;
        size_t x = *(const size_t *) a, y = *(const size_t *) b;
        int r = strcmp(s->policies[x]->name, s->policies[y]->name);
        return r != 0 ? r : (x < y ? -1 : x > y);
}

/* Sorted by name: O(n log n), reported in set order. */
static void check_unique_names(const PolicySet *s, Diagnostics *diag) {
        size_t n = MAX(s->n_policies, (size_t) 1);
        _cleanup_(freep) size_t *sorted = malloc(n * sizeof(size_t));
        _cleanup_(freep) const Policy **first = calloc(n, sizeof(Policy *));

        if (!sorted || !first) {
                diagnostics_error(diag, "cannot check the policy names: out of memory");
                return;
        }
        for (size_t i = 0; i < s->n_policies; i++)
                sorted[i] = i;
        qsort_r(sorted, s->n_policies, sizeof(size_t), policy_by_name_compare, (void *) s);
        for (size_t i = 1, f = 0; i < s->n_policies; i++) {
                if (!streq(s->policies[sorted[i]]->name, s->policies[sorted[f]]->name))
                        f = i;
                else
                        first[sorted[i]] = s->policies[sorted[f]];
        }
        for (size_t i = 0; i < s->n_policies; i++)
                if (first[i])
                        diagnostics_error(diag,
                                          "%s:%u:%u: expected unique policy names, found '%s' again (also in %s:%u)",
                                          s->policies[i]->file, s->policies[i]->name_line ?: s->policies[i]->line,
                                          s->policies[i]->name_line ? s->policies[i]->name_column
                                                                    : s->policies[i]->column,
                                          s->policies[i]->name, first[i]->file, first[i]->name_line ?: first[i]->line);
}

/*
 * Rule R of policy P can never win knob K if, whenever R is active, a rule
 * later in the winning order sets K too: a later rule of P without `when:`,
 * or a rule without `when:` in a policy after P in the set order (higher
 * priority, or equal priority and a later file name) that has no `host:`
 * (it applies on every host P applies to).  Found in one pass from the last
 * rule back (the nearest such rule), reported in set order.
 */
void policy_set_check(const PolicySet *s, Diagnostics *diag) {
        _cleanup_(freep) Shadow *shadow = NULL;
        _cleanup_(freep) size_t *base = NULL;
        Shadow later[_KNOB_ID_MAX] = { { NULL, NULL } };
        size_t total = 0;

        if (!s)
                return;
        check_unique_names(s, diag);

        base = malloc(MAX(s->n_policies, (size_t) 1) * sizeof(size_t));
        if (!base)
                return (void) diagnostics_error(diag, "cannot check the policies: out of memory");
        for (size_t i = 0; i < s->n_policies; i++) {
                base[i] = total;
                total += s->policies[i]->n_rules;
        }
        shadow = calloc(MAX(total, (size_t) 1) * _KNOB_ID_MAX, sizeof(Shadow));
        if (!shadow)
                return (void) diagnostics_error(diag, "cannot check the policies: out of memory");

        for (size_t pi = s->n_policies; pi-- > 0;) {
                const Policy *p = s->policies[pi];
                for (KnobId k = 0; k < _KNOB_ID_MAX; k++) {
                        const Rule *next = NULL, *first_always = NULL;
                        for (size_t ri = p->n_rules; ri-- > 0;) {
                                const Rule *r = &p->rules[ri];
                                Shadow *sh = &shadow[(base[pi] + ri) * _KNOB_ID_MAX + k];
                                if (next)
                                        *sh = (Shadow){ p, next };
                                else
                                        *sh = later[k];
                                if (rule_always_sets(r, k))
                                        next = first_always = r;
                        }
                        if (p->host.n_cmps == 0 && first_always)
                                later[k] = (Shadow){ p, first_always };
                }
        }

        for (size_t pi = 0; pi < s->n_policies; pi++) {
                const Policy *p = s->policies[pi];
                for (size_t ri = 0; ri < p->n_rules; ri++)
                        for (KnobId k = 0; k < _KNOB_ID_MAX; k++) {
                                const Rule *r = &p->rules[ri];
                                const Shadow *sh = &shadow[(base[pi] + ri) * _KNOB_ID_MAX + k];
                                if (!rule_sets_knob(r, k) || !sh->by_rule)
                                        continue;
                                if (sh->by_policy == p)
                                        diagnostics_warning(diag,
                                                            "%s:%u:%u: rule '%s' can never win: rule '%s' (%s:%u) always "
                                                            "sets %s",
                                                            p->file, r->line, r->column, r->name, sh->by_rule->name,
                                                            p->file, sh->by_rule->line, knob_desc(k)->policy_key);
                                else
                                        diagnostics_warning(diag,
                                                            "%s:%u:%u: rule '%s' can never win: rule '%s' of policy '%s' "
                                                            "(%s:%u) always sets %s",
                                                            p->file, r->line, r->column, r->name, sh->by_rule->name,
                                                            sh->by_policy->name, sh->by_policy->file,
                                                            sh->by_rule->line, knob_desc(k)->policy_key);
                        }
        }
}

bool policy_set_uses_metric(const PolicySet *s, MetricId id) {
        for (size_t i = 0; s && i < s->n_policies; i++)
                for (size_t k = 0; k < s->policies[i]->n_rules; k++) {
                        const Rule *r = &s->policies[i]->rules[k];
                        if (condition_uses_metric(&r->when, id) || condition_uses_metric(&r->until, id))
                                return true;
                }
        return false;
}

Truth host_match_eval(const HostMatch *h, const MetricValues *mv) {
        Truth t = TRUTH_TRUE;

        for (size_t i = 0; h && i < h->n_cmps; i++) {
                const struct HostCmp *c = &h->cmps[i];
                if (!mv || c->metric < 0 || c->metric >= _METRIC_MAX || !mv->available[c->metric])
                        t = TRUTH_UNKNOWN;
                else if (!cmp_apply(c->op, mv->value[c->metric], c->value))
                        return TRUTH_FALSE;
        }
        return t;
}
