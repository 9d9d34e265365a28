/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Policy files (policy.h, pcptune.policy(5)): libyaml events, typed parsing
 * driven by tables of (key, parser, offset, flags), then a semantic pass over
 * the whole policy.
 *
 * Every problem becomes "file:line:column: what was expected, what was
 * found" in the Diagnostics (libyaml marks are zero-based: we add 1).  After
 * a bad value the parser skips that value and goes on, so one run reports
 * every independent mistake; only a YAML syntax error stops it, because
 * libyaml cannot resume after one.
 */
#include <assert.h>
#include <ctype.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <yaml.h>

#include "policy.h"

#define POLICY_PRIORITY_DEFAULT 50
#define POLICY_PRIORITY_MAX 1000
#define RECLAIM_MAX_DEFAULT (256ULL << 20)
#define RECLAIM_STEP_DEFAULT (16ULL << 20)
#define RECLAIM_TIMEOUT_DEFAULT (10 * USEC_PER_SEC)
/* Long enough for a container's periodic reads (health checks, 10 s) to fault back what reclaim took. */
#define RECLAIM_REFAULT_WINDOW_DEFAULT (30 * USEC_PER_SEC)
#define RECLAIM_REFAULT_WINDOW_MAX (10 * 60 * USEC_PER_SEC)
/* The kernel clamps high to at least 4 x batch (zone_highsize(), mm/page_alloc.c). */
#define PCP_HIGH_MIN_BATCHES 4
/* proc_dointvec_minmax() with extra1 = 0 and MIN_PERCPU_PAGELIST_HIGH_FRACTION = 8 (mm/page_alloc.c). */
#define PCP_HIGH_FRACTION_MIN 8

/* A message waiting to be sorted by position. */
typedef struct ParseError {
        size_t line, column;
        size_t seq;
        char *message;
        bool quotes_nothing;          /* holds no text of the file (a limit): kept for a file that is not a policy */
} ParseError;

typedef struct Parser {
        yaml_parser_t yaml;
        yaml_event_t event;           /* the current event */
        bool has_event;
        bool fatal;                   /* YAML error or out of memory: stop */
        bool oom;
        const char *filename;
        const char *buf;
        size_t len;
        Diagnostics *diag;
        unsigned n_errors;
        ParseError *errors;           /* in the order found; sorted when flushed */
        size_t n_messages;
        ParseError syntax_error;      /* a YAML error: reported alone */
        unsigned depth;               /* open sequences and mappings */
        size_t n_events;
        usec_t cpu_start_usec;        /* thread CPU time when parsing began */
        const void *field_arg;        /* the arg of the Field being parsed (parse_mapping()) */
        bool root_mapping;            /* the document is a mapping... */
        unsigned root_keys;           /* ...with this many of the policy's keys (0: not a policy) */
        yaml_mark_t root_mark;
} Parser;

/*
 * Bounds on what one policy file may cost.  libyaml's scanner checks every
 * open flow level for each token (yaml_parser_stale_simple_keys()), so its
 * time grows with the square of the nesting depth: 120 KB of '[' took 25 s.
 * A policy needs 5 levels (policy, rules, rule, pcp or reclaim, a flow list);
 * stopping at the first event deeper than POLICY_DEPTH_MAX bounds that work
 * to the scanner's look-ahead.  The event count bounds the rest (a 1 MiB
 * file has at most ~500k events; 30,000 rules parse in 0.1 s); the user CPU
 * time is a backstop far below WatchdogSec=30s (user time only: sanitizer
 * builds spend seconds of system time faulting in shadow memory).
 */
#define POLICY_DEPTH_MAX 32
#define POLICY_EVENTS_MAX ((size_t) 1000000)
#define POLICY_PARSE_CPU_MAX_USEC (10 * USEC_PER_SEC)

static usec_t thread_user_usec(void) {
        struct rusage ru;

        if (getrusage(RUSAGE_THREAD, &ru) < 0)
                return 0;
        return (usec_t) ru.ru_utime.tv_sec * USEC_PER_SEC + (usec_t) ru.ru_utime.tv_usec;
}

/* ------------------------------------------------------------------------ */
/* Messages */

static void parser_add_error(Parser *p, size_t line, size_t column, char *msg) {
        ParseError *a;

        p->n_errors++;
        if (!msg) {
                p->oom = true;
                return;
        }
        a = realloc(p->errors, (p->n_messages + 1) * sizeof(ParseError));
        if (!a) {
                free(msg);
                p->oom = true;
                return;
        }
        p->errors = a;
        a[p->n_messages] = (ParseError){ line, column, p->n_messages, msg };
        p->n_messages++;
}

_printf_(4, 5) static void parser_error_at(Parser *p, size_t line, size_t column, const char *fmt, ...) {
        char *msg;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&msg, fmt, ap) < 0)
                msg = NULL;
        va_end(ap);
        parser_add_error(p, line, column, msg);
}

/* By position, then in the order found (qsort() is not stable). */
static int error_compare(const void *a, const void *b) {
        const ParseError *x = a, *y = b;

        if (x->line != y->line)
                return x->line < y->line ? -1 : 1;
        if (x->column != y->column)
                return x->column < y->column ? -1 : 1;
        return x->seq < y->seq ? -1 : x->seq > y->seq ? 1 : 0;
}

/*
 * Hand the messages to diag in file order.  After a YAML syntax error only
 * that error is reported: what was parsed before it may be an artefact of
 * the broken syntax (a missing '}' turns the next line into a value).
 */
static void parser_flush_errors(Parser *p) {
        if (p->syntax_error.message) {
                if (p->diag)
                        diagnostics_error(p->diag, "%s:%zu:%zu: %s", p->filename, p->syntax_error.line,
                                          p->syntax_error.column, p->syntax_error.message);
        } else if (p->n_messages > 0) {
                qsort(p->errors, p->n_messages, sizeof(ParseError), error_compare);
                for (size_t i = 0; i < p->n_messages && p->diag; i++)
                        diagnostics_error(p->diag, "%s:%zu:%zu: %s", p->filename, p->errors[i].line,
                                          p->errors[i].column, p->errors[i].message);
        }
        for (size_t i = 0; i < p->n_messages; i++)
                free(p->errors[i].message);
        free(p->errors);
        p->errors = NULL;
        p->n_messages = 0;
        free(p->syntax_error.message);
        p->syntax_error.message = NULL;
}

/* At a libyaml mark (zero-based). */
#define parser_error(p, mark, ...) parser_error_at((p), (mark)->line + 1, (mark)->column + 1, __VA_ARGS__)

/* A limit reached (nesting, parse time): a message that names no text of the file. */
#define parser_limit_error(p, mark, ...)                                         \
        do {                                                                     \
                size_t n_before_ = (p)->n_messages;                              \
                parser_error((p), (mark), __VA_ARGS__);                          \
                if ((p)->n_messages > n_before_)                                 \
                        (p)->errors[n_before_].quotes_nothing = true;            \
        } while (0)

/* Line and column (1-based, in characters) of a byte offset of the input. */
static void offset_to_position(const Parser *p, size_t offset, size_t *ret_line, size_t *ret_column) {
        size_t line = 1, column = 1;

        for (size_t i = 0; i < offset && i < p->len; i++) {
                unsigned char c = (unsigned char) p->buf[i];
                if (c == '\n') {
                        line++;
                        column = 1;
                } else if ((c & 0xC0) != 0x80)
                        column++;
        }
        *ret_line = line;
        *ret_column = column;
}

static void parser_report_yaml_error(Parser *p) {
        const yaml_parser_t *y = &p->yaml;
        const char *problem = y->problem ?: "unknown error";
        size_t line, column;
        char *msg;
        int k;

        p->fatal = true;
        p->n_errors++;
        switch (y->error) {
        case YAML_MEMORY_ERROR:
                p->oom = true;
                return;
        case YAML_READER_ERROR:
                /* Reader errors carry a byte offset, not a mark. */
                offset_to_position(p, y->problem_offset, &line, &column);
                if (y->problem_value != -1)
                        k = asprintf(&msg, "expected UTF-8 text, found %s (byte 0x%02x)", problem,
                                     (unsigned) y->problem_value & 0xFFU);
                else
                        k = asprintf(&msg, "expected UTF-8 text, found %s", problem);
                break;
        default:
                line = y->problem_mark.line + 1;
                column = y->problem_mark.column + 1;
                if (y->context && (y->context_mark.line != y->problem_mark.line ||
                                   y->context_mark.column != y->problem_mark.column))
                        k = asprintf(&msg, "invalid YAML: %s (%s at %zu:%zu)", problem, y->context,
                                     y->context_mark.line + 1, y->context_mark.column + 1);
                else if (y->context)
                        k = asprintf(&msg, "invalid YAML: %s (%s)", problem, y->context);
                else
                        k = asprintf(&msg, "invalid YAML: %s", problem);
        }
        if (k < 0) {
                p->oom = true;
                return;
        }
        p->syntax_error = (ParseError){ line, column, 0, msg };
}

/* ------------------------------------------------------------------------ */
/* Events */

static int parser_next(Parser *p) {
        if (p->has_event) {
                yaml_event_delete(&p->event);
                p->has_event = false;
        }
        if (p->fatal)
                return -EINVAL;
        if (!yaml_parser_parse(&p->yaml, &p->event)) {
                parser_report_yaml_error(p);
                return p->oom ? -ENOMEM : -EINVAL;
        }
        p->has_event = true;
        p->n_events++;
        if (p->event.type == YAML_SEQUENCE_START_EVENT || p->event.type == YAML_MAPPING_START_EVENT) {
                if (++p->depth > POLICY_DEPTH_MAX) {
                        parser_limit_error(p, &p->event.start_mark,
                                     "expected at most %d nested sequences and mappings, found deeper nesting",
                                     POLICY_DEPTH_MAX);
                        p->fatal = true;
                        return -EINVAL;
                }
        } else if ((p->event.type == YAML_SEQUENCE_END_EVENT || p->event.type == YAML_MAPPING_END_EVENT) &&
                   p->depth > 0)
                p->depth--;
        if (p->n_events > POLICY_EVENTS_MAX ||
            ((p->n_events & 1023) == 0 &&
             thread_user_usec() - p->cpu_start_usec > POLICY_PARSE_CPU_MAX_USEC)) {
                parser_limit_error(p, &p->event.start_mark,
                             "expected a policy that parses in %zu events and %llu s of user CPU, found more; stopping here",
                             POLICY_EVENTS_MAX, (unsigned long long) (POLICY_PARSE_CPU_MAX_USEC / USEC_PER_SEC));
                p->fatal = true;
                return -EINVAL;
        }
        return 0;
}

/* Consume the node starting at the current event; the current event is then the one after it. */
static int parser_skip_node(Parser *p) {
        unsigned depth = 0;

        do {
                switch (p->event.type) {
                case YAML_SEQUENCE_START_EVENT:
                case YAML_MAPPING_START_EVENT:
                        depth++;
                        break;
                case YAML_SEQUENCE_END_EVENT:
                case YAML_MAPPING_END_EVENT:
                        depth--;
                        break;
                default:
                        break;
                }
                int r = parser_next(p);
                if (r < 0)
                        return r;
        } while (depth > 0);
        return 0;
}

static const yaml_mark_t *event_mark(const Parser *p) {
        return &p->event.start_mark;
}

static const char *scalar_value(const Parser *p) {
        return (const char *) p->event.data.scalar.value;
}

static bool event_is_null(const Parser *p) {
        const char *v;

        if (p->event.type != YAML_SCALAR_EVENT || p->event.data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
                return false;
        v = scalar_value(p);
        return streq(v, "") || streq(v, "~") || streq(v, "null") || streq(v, "Null") || streq(v, "NULL");
}

/* What the current event is, for "found ...". */
static const char *event_describe(const Parser *p, char *buf, size_t size) {
        switch (p->event.type) {
        case YAML_MAPPING_START_EVENT:
                return "a mapping";
        case YAML_SEQUENCE_START_EVENT:
                return "a sequence";
        case YAML_ALIAS_EVENT:
                snprintf(buf, size, "an alias (*%.40s)", (const char *) p->event.data.alias.anchor);
                return buf;
        case YAML_SCALAR_EVENT: {
                const char *v = scalar_value(p);
                if (event_is_null(p))
                        return *v ? "null" : "an empty value";
                size_t n = strcspn(v, "\n");
                if (n > 60)
                        snprintf(buf, size, "'%.57s...'", v);
                else if (v[n])
                        snprintf(buf, size, "'%.*s...'", (int) n, v);
                else
                        snprintf(buf, size, "'%s'", v);
                return buf;
        }
        default:
                return "the end of the document";
        }
}

/*
 * The current event must be a non-null scalar without NUL characters:
 * otherwise report "expected <what>, found ...", skip the node and fail.
 * On success the event stays current (the caller reads it, then advances).
 */
static int parser_expect_scalar(Parser *p, const char *what) {
        char buf[96];

        if (p->event.type == YAML_SCALAR_EVENT && !event_is_null(p) &&
            strlen(scalar_value(p)) == p->event.data.scalar.length)
                return 0;
        if (p->event.type == YAML_SCALAR_EVENT && !event_is_null(p))
                parser_error(p, event_mark(p), "expected %s, found text with a NUL character", what);
        else if (p->event.type == YAML_ALIAS_EVENT)
                parser_error(p, event_mark(p), "expected %s, found %s (aliases are not supported)", what,
                             event_describe(p, buf, sizeof(buf)));
        else
                parser_error(p, event_mark(p), "expected %s, found %s", what, event_describe(p, buf, sizeof(buf)));
        int r = parser_skip_node(p);
        return r < 0 ? r : -EINVAL;
}

/* Report a bad scalar value at its position and move past it. */
_printf_(2, 3) static int parser_bad_scalar(Parser *p, const char *fmt, ...) {
        _cleanup_(freep) char *msg = NULL;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&msg, fmt, ap) < 0)
                msg = NULL;
        va_end(ap);
        if (!msg)
                p->oom = true;
        else
                parser_error(p, event_mark(p), "%s", msg);
        int r = parser_next(p);
        return r < 0 ? r : -EINVAL;
}

/* Column of a scalar's first character: quoted scalars start after their quote. */
static size_t scalar_content_column(const Parser *p) {
        yaml_scalar_style_t style = p->event.data.scalar.style;
        return p->event.start_mark.column + 1 +
               (style == YAML_SINGLE_QUOTED_SCALAR_STYLE || style == YAML_DOUBLE_QUOTED_SCALAR_STYLE ? 1 : 0);
}

/* ------------------------------------------------------------------------ */
/* Tables */

typedef int (*FieldParser)(Parser *p, void *dest);

enum {
        FIELD_REQUIRED = 1 << 0,
};

typedef struct Field {
        const char *key;
        FieldParser parse;
        size_t offset;        /* dest = base + offset */
        unsigned flags;
        const void *arg;      /* what one parser of several fields needs (p->field_arg while it runs) */
} Field;

#define FIELDS_MAX 16

static void fields_list(const Field *fields, size_t n, char *buf, size_t size) {
        size_t used = 0;

        buf[0] = 0;
        for (size_t i = 0; i < n && used < size; i++) {
                int k = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", fields[i].key);
                if (k < 0)
                        break;
                used += (size_t) k;
        }
}

/* Levenshtein distance of two short strings (insertions, deletions, substitutions; at most 63 chars). */
static size_t edit_distance(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b), row[64];
        if (la >= ELEMENTSOF(row) || lb >= ELEMENTSOF(row))
                return SIZE_MAX;
        for (size_t j = 0; j <= lb; j++)
                row[j] = j;
        for (size_t i = 1; i <= la; i++) {
                size_t diag = row[0];
                row[0] = i;
                for (size_t j = 1; j <= lb; j++) {
                        size_t up = row[j];
                        row[j] = MIN(MIN(row[j] + 1, row[j - 1] + 1), diag + (a[i - 1] != b[j - 1]));
                        diag = up;
                }
        }
        return row[lb];
}

/* A hint for an unknown word: "; did you mean 'W'?" for the one of words within 1 edit ("minimun" ->
 * "minimum"), 2 from 8 characters on ("chidlless"), else "" ("maximum" is 2 edits from "minimum" and
 * means its opposite). */
static const char *word_hint(const char *word, const char *const *words, size_t n, char *buf, size_t size) {
        size_t best = SIZE_MAX, bi = 0;

        for (size_t i = 0; i < n; i++) {
                size_t d = edit_distance(word, words[i]);
                if (d < best) {
                        best = d;
                        bi = i;
                }
        }
        buf[0] = 0;
        if (best > 0 && best <= (strlen(word) >= 8 ? 2u : 1u) && best < strlen(word))
                snprintf(buf, size, "; did you mean '%s'?", words[bi]);
        return buf;
}

/* A hint for an unknown key: the known key within 2 edits ("hihg" -> "high"), or how a goal is written. */
static const char *key_hint(const char *what, const char *key, const Field *fields, size_t n, char *buf, size_t size) {
        size_t best = SIZE_MAX, bi = 0;

        if (streq(what, "pcp") && streq(key, "fraction"))
                return "; a fraction is a goal for high: pcp: {high: {fraction: N}}";
        for (size_t i = 0; i < n; i++) {
                size_t d = edit_distance(key, fields[i].key);
                if (d < best) {
                        best = d;
                        bi = i;
                }
        }
        if (best > 0 && best <= 2 && best < strlen(key)) {
                snprintf(buf, size, "; did you mean '%s'?", fields[bi].key);
                return buf;
        }
        /* A rule's own key written inside one of its values (action: {reclaim-dying: {cooldown: 1m}}). */
        static const char *const rule_keys[] = { "when", "until", "cooldown" };
        for (size_t i = 0; streq(what, "reclaim-dying") && i < ELEMENTSOF(rule_keys); i++) {
                size_t d = edit_distance(key, rule_keys[i]);
                if (d == 0 || (d <= 2 && d < strlen(key))) {
                        snprintf(buf, size,
                                 d ? "; did you mean '%s', a key of the rule (next to action:)?"
                                   : "; '%s' is a key of the rule, next to action:",
                                 rule_keys[i]);
                        return buf;
                }
        }
        return "";
}

/*
 * Step into the mapping or sequence (type) at the current event: 0.  Anything else is reported at its
 * start as "expected <what>, found <event>" and skipped: -EINVAL (or the parser's -ENOMEM/-errno).
 */
static int parser_enter(Parser *p, yaml_event_type_t type, const char *what) {
        yaml_mark_t start = p->event.start_mark;
        char buf[96];
        int r;

        if (p->event.type != type) {
                parser_error(p, &start, "expected %s, found %s", what, event_describe(p, buf, sizeof(buf)));
                r = parser_skip_node(p);
                return r < 0 ? r : -EINVAL;
        }
        return parser_next(p);
}

/*
 * Parse a mapping at the current event with a table.  what names it in
 * messages ("the policy", "a rule").  Unknown and duplicate keys are errors
 * at the key; missing required keys are errors at the mapping.  Returns 0,
 * -EINVAL (reported) or -ENOMEM; *ret_n_keys (may be NULL) counts the known
 * keys found, as they are found (also when it fails half-way).
 */
static int parse_mapping(Parser *p, const char *what, const Field *fields, size_t n, void *base,
                         unsigned *ret_n_keys) {
        yaml_mark_t start = p->event.start_mark, seen_at[FIELDS_MAX];
        bool seen[FIELDS_MAX] = { false };
        unsigned errors = p->n_errors, n_keys = 0;
        char buf[96], keys[256], expected[384];
        int r;

        assert(n <= FIELDS_MAX);
        if (ret_n_keys)
                *ret_n_keys = 0;
        fields_list(fields, n, keys, sizeof(keys));
        snprintf(expected, sizeof expected, "%s (a mapping of %s)", what, keys);
        r = parser_enter(p, YAML_MAPPING_START_EVENT, expected);
        if (r < 0)
                return r;

        while (p->event.type != YAML_MAPPING_END_EVENT) {
                yaml_mark_t key_mark = p->event.start_mark;
                size_t i;

                if (p->event.type != YAML_SCALAR_EVENT) {
                        parser_error(p, &key_mark, "expected a key of %s (%s), found %s", what, keys,
                                     event_describe(p, buf, sizeof(buf)));
                        if ((r = parser_skip_node(p)) < 0 || (r = parser_skip_node(p)) < 0)
                                return r;
                        continue;
                }

                for (i = 0; i < n; i++)
                        if (streq(scalar_value(p), fields[i].key))
                                break;
                if (i >= n) {
                        char hint[96];
                        parser_error(p, &key_mark, "expected a key of %s (%s), found unknown key %s%s", what, keys,
                                     event_describe(p, buf, sizeof(buf)),
                                     key_hint(what, scalar_value(p), fields, n, hint, sizeof hint));
                        if ((r = parser_next(p)) < 0 || (r = parser_skip_node(p)) < 0)
                                return r;
                        continue;
                }
                if (seen[i]) {
                        parser_error(p, &key_mark, "expected each key once in %s, found '%s' again (first at %zu:%zu)",
                                     what, fields[i].key, seen_at[i].line + 1, seen_at[i].column + 1);
                        if ((r = parser_next(p)) < 0 || (r = parser_skip_node(p)) < 0)
                                return r;
                        continue;
                }
                seen[i] = true;
                seen_at[i] = key_mark;
                n_keys++;
                if (ret_n_keys)
                        *ret_n_keys = n_keys;

                r = parser_next(p);
                if (r < 0)
                        return r;
                p->field_arg = fields[i].arg;
                r = fields[i].parse(p, (char *) base + fields[i].offset);
                if (r == -ENOMEM || p->fatal)
                        return r < 0 ? r : -EINVAL;
        }
        r = parser_next(p);
        if (r < 0)
                return r;

        for (size_t i = 0; i < n; i++)
                if ((fields[i].flags & FIELD_REQUIRED) && !seen[i])
                        parser_error(p, &start, "expected a '%s' key in %s, found none", fields[i].key, what);

        return p->n_errors > errors ? -EINVAL : 0;
}

/* ------------------------------------------------------------------------ */
/* Scalar types */

static int parse_text(Parser *p, void *dest) {
        char **s = dest;
        int r;

        r = parser_expect_scalar(p, "text");
        if (r < 0)
                return r;
        free(*s);
        *s = strdup(scalar_value(p));
        if (!*s)
                return -ENOMEM;
        return parser_next(p);
}

static bool name_is_valid(const char *s) {
        if (!*s)
                return false;
        for (; *s; s++)
                if (!isalnum((unsigned char) *s) && !strchr("._-", *s))
                        return false;
        return true;
}

static int parse_name(Parser *p, void *dest) {
        char **s = dest;
        int r;

        r = parser_expect_scalar(p, "a name");
        if (r < 0)
                return r;
        if (!name_is_valid(scalar_value(p))) {
                char buf[96];
                return parser_bad_scalar(p, "expected a name made of letters, digits, '.', '_' and '-', found %s",
                                         event_describe(p, buf, sizeof(buf)));
        }
        free(*s);
        *s = strdup(scalar_value(p));
        if (!*s)
                return -ENOMEM;
        return parser_next(p);
}

/* An integer in [min, max] (YAML plain or quoted). */
static int parse_int_range(Parser *p, const char *what, int64_t min, int64_t max, int64_t *ret) {
        char buf[96];
        int64_t v;
        int r;

        r = parser_expect_scalar(p, what);
        if (r < 0)
                return r;
        r = parse_int64(scalar_value(p), &v);
        if (r < 0 || v < min || v > max)
                return parser_bad_scalar(p, "expected %s, found %s", what, event_describe(p, buf, sizeof(buf)));
        *ret = v;
        return parser_next(p);
}

static int parse_version_field(Parser *p, void *dest) {
        int64_t v;

        (void) dest;
        return parse_int_range(p, "version 1 (the only format version)", 1, 1, &v);
}

static int parse_priority(Parser *p, void *dest) {
        int64_t v;
        int r;

        r = parse_int_range(p, "a priority between 0 and 1000", 0, POLICY_PRIORITY_MAX, &v);
        if (r >= 0)
                *(int *) dest = (int) v;
        return r;
}

/* The bounds of a duration field: [min, max] (max 0: none), the example its messages give. */
typedef struct DurationSpec {
        usec_t min, max;
        const char *what;     /* "a duration like 30s, 5m or 1h" */
        const char *expected; /* "a duration above 0 like 10s" */
} DurationSpec;

static const DurationSpec duration_any = { 0, 0, "a duration like 30s, 5m or 1h", "a duration like 30s, 5m or 1h" };
static const DurationSpec duration_positive = { 1, 0, "a duration like 10s", "a duration above 0 like 10s" };

/* A duration within the DurationSpec of the field (Field.arg). */
static int parse_duration_field(Parser *p, void *dest) {
        const DurationSpec *spec = p->field_arg;
        char buf[96];
        usec_t u;
        int r;

        r = parser_expect_scalar(p, spec->what);
        if (r < 0)
                return r;
        /* In a policy a duration carries its unit: "10" could be seconds or minutes to its reader. */
        const char *v = scalar_value(p);
        size_t n = strlen(v);
        if (n > 0 && is_ascii_digit(v[n - 1]))
                return parser_bad_scalar(p, "expected %s, found %s: a duration needs its unit (%ss)", spec->expected,
                                         event_describe(p, buf, sizeof(buf)), v);
        if (parse_duration(v, &u) < 0 || u < spec->min || (spec->max && u > spec->max))
                return parser_bad_scalar(p, "expected %s, found %s", spec->expected, event_describe(p, buf, sizeof(buf)));
        *(usec_t *) dest = u;
        return parser_next(p);
}

static int parse_positive_size(Parser *p, void *dest) {
        char buf[96];
        uint64_t b;
        int r;

        r = parser_expect_scalar(p, "a size like 16MiB");
        if (r < 0)
                return r;
        if (parse_size(scalar_value(p), &b) < 0 || b == 0)
                return parser_bad_scalar(p, "expected a size above 0 like 16MiB or 1GiB, found %s",
                                         event_describe(p, buf, sizeof(buf)));
        *(uint64_t *) dest = b;
        return parser_next(p);
}

static int parse_positive_count(Parser *p, void *dest) {
        int64_t v;
        int r;

        r = parse_int_range(p, "a count of at least 1", 1, INT64_MAX, &v);
        if (r >= 0)
                *(uint64_t *) dest = (uint64_t) v;
        return r;
}

_Static_assert(sizeof(ForceEmpty) == sizeof(int), "keyword fields of an enum type are int-sized");

/* A field that takes one of a few words, each standing for a value of the field's type (int or bool). */
typedef struct KeywordSpec {
        const char *what;         /* "true or false" */
        bool is_bool;             /* dest is a bool, else an int-sized enum */
        struct {
                const char *word;
                int value;
        } words[8];               /* up to the first NULL word */
} KeywordSpec;

/* YAML 1.2 core booleans only: "yes"/"on" are YAML 1.1 and surprise people. */
static const KeywordSpec keywords_bool = {
        "true or false", true,
        { { "true", 1 }, { "True", 1 }, { "TRUE", 1 }, { "false", 0 }, { "False", 0 }, { "FALSE", 0 } },
};

/* One of the words of the field's KeywordSpec (Field.arg). */
static int parse_keyword(Parser *p, void *dest) {
        const KeywordSpec *spec = p->field_arg;
        char buf[96];
        const char *v;
        int r;

        r = parser_expect_scalar(p, spec->what);
        if (r < 0)
                return r;
        v = scalar_value(p);
        for (size_t i = 0; i < ELEMENTSOF(spec->words) && spec->words[i].word; i++) {
                if (!streq(v, spec->words[i].word))
                        continue;
                if (spec->is_bool)
                        *(bool *) dest = spec->words[i].value;
                else
                        *(int *) dest = spec->words[i].value;
                return parser_next(p);
        }
        /* A misspelt word ("chidless"): the closest one. */
        const char *words[ELEMENTSOF(spec->words)];
        size_t n = 0;
        char hint[64];
        for (size_t i = 0; i < ELEMENTSOF(spec->words) && spec->words[i].word; i++)
                words[n++] = spec->words[i].word;
        return parser_bad_scalar(p, "expected %s, found %s%s", spec->what, event_describe(p, buf, sizeof(buf)),
                                 word_hint(v, words, n, hint, sizeof hint));
}

/* ------------------------------------------------------------------------ */
/* Conditions */

/* Byte offset of libyaml's character index (marks count characters; a UTF-8 BOM is not counted). */
static bool char_index_to_offset(const Parser *p, size_t index, size_t *ret) {
        size_t i = 0, chars = 0;

        if (p->len >= 3 && memcmp(p->buf, "\xEF\xBB\xBF", 3) == 0)
                i = 3;
        for (; i < p->len; i++) {
                if (((unsigned char) p->buf[i] & 0xC0) == 0x80)
                        continue;
                if (chars == index)
                        break;
                chars++;
        }
        if (chars != index)
                return false;
        *ret = i;
        return true;
}

static bool same_tokens(const char *a, const char *b) {
        for (;;) {
                while (*a && isspace((unsigned char) *a))
                        a++;
                while (*b && isspace((unsigned char) *b))
                        b++;
                if (!*a || !*b)
                        return !*a && !*b;
                bool sa = false, sb = false;
                while (*a && *b && !isspace((unsigned char) *a) && *a == *b) {
                        a++;
                        b++;
                }
                sa = !*a || isspace((unsigned char) *a);
                sb = !*b || isspace((unsigned char) *b);
                if (!sa || !sb)
                        return false;
        }
}

/*
 * Where to parse a condition from, for exact positions in messages.  A
 * one-line plain or quoted scalar is its value, starting at the scalar's
 * column (plus one for the quote; escapes in double quotes shift later
 * columns).  For multi-line scalars (plain continuation lines, | and >
 * blocks) the value has lost its line breaks and indentation, so we parse
 * the scalar's source text instead, which yields the same tokens with their
 * real lines and columns; if the source does not give the same tokens
 * (escapes, unusual encodings), the value is used and positions count from
 * the scalar's start.
 */
static int condition_source(const Parser *p, char **ret_text, size_t *ret_line, size_t *ret_column) {
        const yaml_event_t *e = &p->event;
        const char *value = scalar_value(p);
        yaml_scalar_style_t style = e->data.scalar.style;
        size_t line = e->start_mark.line + 1, column = scalar_content_column(p);
        size_t from, to;
        char *text;

        if (e->start_mark.line != e->end_mark.line && char_index_to_offset(p, e->start_mark.index, &from) &&
            char_index_to_offset(p, e->end_mark.index, &to) && from < to && to <= p->len) {
                size_t l = line, c = column;
                if (style == YAML_LITERAL_SCALAR_STYLE || style == YAML_FOLDED_SCALAR_STYLE) {
                        /* Skip the indicator line ("|", ">-", "| # comment"). */
                        const char *nl = memchr(p->buf + from, '\n', to - from);
                        from = nl ? (size_t) (nl - p->buf) + 1 : to;
                        l++;
                        c = 1;
                } else if (style != YAML_PLAIN_SCALAR_STYLE) {
                        from++;
                        to--;
                }
                if (from <= to) {
                        text = strndup(p->buf + from, to - from);
                        if (!text)
                                return -ENOMEM;
                        if (strlen(text) == to - from && same_tokens(text, value)) {
                                *ret_text = text;
                                *ret_line = l;
                                *ret_column = c;
                                return 0;
                        }
                        free(text);
                }
        }

        text = strdup(value);
        if (!text)
                return -ENOMEM;
        *ret_text = text;
        *ret_line = line;
        *ret_column = column;
        return 0;
}

static int parse_condition(Parser *p, void *dest) {
        Condition *c = dest;
        _cleanup_(freep) char *text = NULL, *error = NULL;
        size_t line, column;
        int r;

        r = parser_expect_scalar(p, "a condition like 'memcg.dying > 500 for 2m'");
        if (r < 0)
                return r;
        r = condition_source(p, &text, &line, &column);
        if (r < 0)
                return r;

        condition_done(c);
        r = condition_parse(text, (unsigned) MIN(line, (size_t) UINT_MAX), (unsigned) MIN(column, (size_t) UINT_MAX),
                            c, &error);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                /* "LINE:COLUMN: message" from condition_parse(). */
                unsigned l = 0, c2 = 0;
                int n = 0;
                if (!error || sscanf(error, "%u:%u: %n", &l, &c2, &n) != 2 || n <= 0)
                        parser_error_at(p, line, column, "%s", error ?: "invalid condition");
                else
                        parser_error_at(p, l, c2, "%s", error + n);
                int k = parser_next(p);
                return k < 0 ? k : -EINVAL;
        }
        /* Report the condition where the scalar starts, whatever text was parsed. */
        c->line = (unsigned) (p->event.start_mark.line + 1);
        c->column = (unsigned) scalar_content_column(p);
        return parser_next(p);
}

/* ------------------------------------------------------------------------ */
/* host: */

static int host_add(HostMatch *h, MetricId m, CmpOp op, double v, size_t line, size_t column) {
        struct HostCmp *n = realloc(h->cmps, (h->n_cmps + 1) * sizeof(struct HostCmp));

        if (!n)
                return -ENOMEM;
        h->cmps = n;
        h->cmps[h->n_cmps++] = (struct HostCmp){
                .metric = m,
                .op = op,
                .value = v,
                .line = (unsigned) line,
                .column = (unsigned) column,
        };
        return 0;
}

/* One comparison: "OP VALUE" or "VALUE" (==), e.g. ">= 64", "256GiB", "5.14". */
static int parse_host_cmp(Parser *p, HostMatch *h, MetricId m) {
        const MetricInfo *mi = metric_info(m);
        _cleanup_(freep) char *expected = NULL, *error = NULL, *literal = NULL;
        const char *s, *v;
        CmpOp op = CMP_EQ;
        double value;
        int r;

        if (asprintf(&expected, "a comparison like '>= VALUE' for %s", mi->name) < 0)
                return -ENOMEM;
        r = parser_expect_scalar(p, expected);
        if (r < 0)
                return r;

        s = scalar_value(p);
        v = s;
        while (*v == ' ' || *v == '\t')
                v++;
        if (*v && strchr("<>=!", *v)) {
                char o[3] = { v[0], v[1] == '=' ? '=' : 0, 0 };
                int k = cmp_op_from_string(o);
                if (k < 0) {
                        char buf[96];
                        return parser_bad_scalar(p, "expected a comparison operator (<, <=, >, >=, ==, !=) for %s, found %s",
                                                 mi->name, event_describe(p, buf, sizeof(buf)));
                }
                op = (CmpOp) k;
                v += strlen(o);
                while (*v == ' ' || *v == '\t')
                        v++;
        }
        literal = strdup(v);
        if (!literal)
                return -ENOMEM;
        for (size_t n = strlen(literal); n > 0 && (literal[n - 1] == ' ' || literal[n - 1] == '\t'); n--)
                literal[n - 1] = 0;

        size_t line = p->event.start_mark.line + 1;
        size_t column = scalar_content_column(p) + (size_t) (v - s);
        if (!*literal) {
                char buf[96];
                return parser_bad_scalar(p, "expected %s, found %s", expected, event_describe(p, buf, sizeof(buf)));
        }
        r = condition_parse_literal(m, literal, &value, &error);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                parser_error_at(p, line, column, "%s", error ?: "invalid value");
                r = parser_next(p);
                return r < 0 ? r : -EINVAL;
        }
        r = host_add(h, m, op, value, line, column);
        if (r < 0)
                return r;
        return parser_next(p);
}

/* A comparison or a sequence of them (all must hold). */
static int parse_host_metric(Parser *p, HostMatch *h, MetricId m) {
        unsigned errors = p->n_errors, n = 0;
        yaml_mark_t start = p->event.start_mark;
        int r;

        if (p->event.type != YAML_SEQUENCE_START_EVENT)
                return parse_host_cmp(p, h, m);

        r = parser_next(p);
        if (r < 0)
                return r;
        while (p->event.type != YAML_SEQUENCE_END_EVENT) {
                r = parse_host_cmp(p, h, m);
                if (r == -ENOMEM || p->fatal)
                        return r < 0 ? r : -EINVAL;
                n++;
        }
        if (n == 0)
                parser_error(p, &start, "expected at least one comparison for %s, found an empty sequence",
                             metric_info(m)->name);
        r = parser_next(p);
        if (r < 0)
                return r;
        return p->n_errors > errors ? -EINVAL : 0;
}

static int parse_host_cpus(Parser *p, void *dest) {
        return parse_host_metric(p, dest, METRIC_CPUS);
}
static int parse_host_nodes(Parser *p, void *dest) {
        return parse_host_metric(p, dest, METRIC_NODES);
}
static int parse_host_memory(Parser *p, void *dest) {
        return parse_host_metric(p, dest, METRIC_MEMORY);
}
static int parse_host_kernel(Parser *p, void *dest) {
        return parse_host_metric(p, dest, METRIC_KERNEL);
}

static const Field host_fields[] = {
        { "cpus", parse_host_cpus, 0, 0 },
        { "memory", parse_host_memory, 0, 0 },
        { "kernel", parse_host_kernel, 0, 0 },
        { "nodes", parse_host_nodes, 0, 0 },
};

static int parse_host(Parser *p, void *dest) {
        return parse_mapping(p, "host", host_fields, ELEMENTSOF(host_fields), dest, NULL);
}

/* ------------------------------------------------------------------------ */
/* pcp: */

static const char goal_forms[] =
        "minimum, default, '<N>x batch', '<size> per cpu', '<size> per node', {fraction: N} or "
        "{bulk_free_p99: TIME}";

/* Does s end with blank + word?  Then *ret_len is the length before the blank. */
static bool ends_with_word(const char *s, const char *word, size_t *ret_len) {
        size_t ls = strlen(s), lw = strlen(word);

        if (ls <= lw || strcmp(s + ls - lw, word) != 0 || (s[ls - lw - 1] != ' ' && s[ls - lw - 1] != '\t'))
                return false;
        ls -= lw;
        while (ls > 0 && (s[ls - 1] == ' ' || s[ls - 1] == '\t'))
                ls--;
        *ret_len = ls;
        return true;
}

/* "<N>x batch", "<N> x batch", "<N>×batch" ...: returns 1 and N if it has that form, 0 if not. */
static int parse_batch_multiple(const char *s, uint64_t *ret) {
        const char *p = s;
        uint64_t n;

        if (scan_u64(&p, p + strlen(p), &n) < 0)
                return 0;
        p = skip_blanks(p, p + strlen(p));
        if (*p == 'x')
                p++;
        else if (strneq(p, "\xC3\x97", 2)) /* U+00D7 MULTIPLICATION SIGN */
                p += 2;
        else
                return 0;
        p = skip_blanks(p, p + strlen(p));
        if (!strneq(p, "batch", 5))
                return 0;
        p = skip_blanks(p + 5, p + strlen(p));
        if (*p)
                return 0;
        *ret = n;
        return 1;
}

static int parse_fraction(Parser *p, void *dest) {
        PcpGoal *g = dest;
        char buf[96];
        int64_t v;
        int r;

        r = parser_expect_scalar(p, "a fraction (0 or 8..2147483647)");
        if (r < 0)
                return r;
        r = parse_int64(scalar_value(p), &v);
        if (r == -EINVAL)
                return parser_bad_scalar(p, "expected a fraction (an integer, 0 or 8..2147483647), found %s",
                                         event_describe(p, buf, sizeof(buf)));
        if (r == -ERANGE || v > INT_MAX)
                return parser_bad_scalar(p,
                                         "expected a fraction of 0 or 8..2147483647, found %s: "
                                         "vm.percpu_pagelist_high_fraction is an int and larger values "
                                         "fail with EINVAL",
                                         event_describe(p, buf, sizeof(buf)));
        if (v < 0)
                return parser_bad_scalar(p,
                                         "expected a fraction of 0 or 8..2147483647, found %s: the kernel rejects "
                                         "negative values with EINVAL (write 'high: minimum' for the smallest lists)",
                                         event_describe(p, buf, sizeof(buf)));
        if (v > 0 && v < PCP_HIGH_FRACTION_MIN)
                return parser_bad_scalar(p,
                                         "expected a fraction of 0 or 8..2147483647, found %s: the kernel rejects "
                                         "1 to 7 with EINVAL",
                                         event_describe(p, buf, sizeof(buf)));
        *g = (PcpGoal){ PCP_GOAL_FRACTION, (uint64_t) v };
        return parser_next(p);
}

/* {bulk_free_p99: 200us}: the largest high whose predicted p99 bulk-free hold meets it (model-pcp.h). */
static int parse_bulk_free_p99(Parser *p, void *dest) {
        PcpGoal *g = dest;
        char buf[96], packed[64];
        usec_t us = 0;
        size_t n = 0;
        int r;

        r = parser_expect_scalar(p, "a time like 200us or 1ms");
        if (r < 0)
                return r;
        for (const char *c = scalar_value(p); *c && n + 1 < sizeof packed; c++)
                if (*c != ' ')
                        packed[n++] = *c;
        packed[n] = 0;
        /* A unit is required ("200" could be seconds or microseconds); 1 us to 1 s. */
        if (n == 0 || is_ascii_digit(packed[n - 1]) || parse_duration(packed, &us) < 0 || us < 1 || us > USEC_PER_SEC)
                return parser_bad_scalar(p, "expected a time between 1us and 1s like 200us or 1ms, found %s",
                                         event_describe(p, buf, sizeof(buf)));
        *g = (PcpGoal){ PCP_GOAL_BULK_FREE_P99, us * NSEC_PER_USEC, 0, false };
        return parser_next(p);
}

static const Field fraction_fields[] = {
        { "fraction", parse_fraction, 0, 0 },
        { "bulk_free_p99", parse_bulk_free_p99, 0, 0 },
};

static int parse_goal(Parser *p, PcpGoal *ret) {
        char buf[96];
        const char *s;
        uint64_t v;
        size_t n;
        int r;

        if (p->event.type == YAML_MAPPING_START_EVENT) {
                yaml_mark_t start = p->event.start_mark;
                unsigned keys = 0;
                r = parse_mapping(p, "a goal {fraction: N} or {bulk_free_p99: TIME}", fraction_fields,
                                  ELEMENTSOF(fraction_fields), ret, &keys);
                if (r >= 0 && keys != 1) {
                        parser_error(p, &start, "expected one of 'fraction' or 'bulk_free_p99' in a goal mapping, "
                                                "found %u keys",
                                     keys);
                        return -EINVAL;
                }
                return r;
        }

        if (p->event.type != YAML_SCALAR_EVENT || event_is_null(p)) {
                parser_error(p, event_mark(p), "expected a pcp high goal (%s), found %s", goal_forms,
                             event_describe(p, buf, sizeof(buf)));
                r = parser_skip_node(p);
                return r < 0 ? r : -EINVAL;
        }
        r = parser_expect_scalar(p, "a pcp high goal");
        if (r < 0)
                return r;
        s = scalar_value(p);

        if (streq(s, "minimum"))
                *ret = (PcpGoal){ PCP_GOAL_MINIMUM, 0 };
        else if (streq(s, "default"))
                *ret = (PcpGoal){ PCP_GOAL_DEFAULT, 0 };
        else if (parse_batch_multiple(s, &v)) {
                if (v < PCP_HIGH_MIN_BATCHES)
                        return parser_bad_scalar(p,
                                                 "expected a multiple of at least 4 (the kernel never lets high go "
                                                 "below 4 x batch; write 'minimum' for that), found %s",
                                                 event_describe(p, buf, sizeof(buf)));
                if (v > INT_MAX)
                        return parser_bad_scalar(p, "expected a multiple of batch up to 2147483647, found %s",
                                                 event_describe(p, buf, sizeof(buf)));
                *ret = (PcpGoal){ PCP_GOAL_BATCH_MULTIPLE, v };
        } else if (ends_with_word(s, "per cpu", &n) || ends_with_word(s, "per node", &n)) {
                bool cpu = ends_with_word(s, "per cpu", &n);
                _cleanup_(freep) char *size = strndup(s, n);
                if (!size)
                        return -ENOMEM;
                if (parse_size(size, &v) < 0 || v == 0)
                        return parser_bad_scalar(p, "expected a size above 0 like 2MiB before 'per %s', found '%s'",
                                                 cpu ? "cpu" : "node", size);
                *ret = (PcpGoal){ cpu ? PCP_GOAL_BYTES_PER_CPU : PCP_GOAL_BYTES_PER_NODE, v };
        } else {
                /* A misspelt word: "minimun", "defalt", or the unit of "8x bacth". */
                static const char *const words[] = { "minimum", "default" };
                static const char *const batch[] = { "batch" };
                const char *sp = strrchr(s, ' ');
                char hint[160];
                uint64_t m;
                word_hint(s, words, ELEMENTSOF(words), hint, sizeof hint);
                if (!hint[0] && sp && sp[1] && sscanf(s, "%" SCNu64 "x", &m) == 1 &&
                    word_hint(sp + 1, batch, 1, hint, sizeof hint)[0])
                        snprintf(hint, sizeof hint, "; did you mean '%.*s batch'?", (int) (sp - s), s);
                return parser_bad_scalar(p, "expected a pcp high goal (%s), found %s%s", goal_forms,
                                         event_describe(p, buf, sizeof(buf)), hint);
        }
        return parser_next(p);
}

/* A managed knob's setting (dest: the rule's KnobSetting), parsed by the kind of its row (Field.arg). */
static int parse_knob_setting(Parser *p, void *dest) {
        const KnobDesc *d = p->field_arg;
        KnobSetting *k = dest, v = { .set = true };
        int r;

        if (d->setting == KNOB_SETTING_PCP_GOAL)
                r = parse_goal(p, &v.goal);
        else
                r = parse_int_range(p, d->setting_what, d->min_value, d->max_value, &v.value);
        if (r < 0)
                return r;
        *k = v;
        return 0;
}

/* pcp: one field per managed knob of the table whose policy key is "pcp.<field>". */
static int parse_pcp(Parser *p, void *dest) {
        yaml_mark_t start = p->event.start_mark;
        Field fields[_KNOB_ID_MAX];
        char keys[128];
        size_t n_fields = 0, l = 0;
        unsigned n = 0;
        int r;

        for (KnobId id = 0; id < _KNOB_ID_MAX; id++) {
                const KnobDesc *d = knob_desc(id);
                if (!knob_managed(d) || strncmp(d->policy_key, "pcp.", strlen("pcp.")) != 0)
                        continue;
                fields[n_fields++] = (Field){ d->policy_key + strlen("pcp."), parse_knob_setting,
                                              offsetof(Rule, knobs) + (size_t) id * sizeof(KnobSetting), 0, d };
                if (l < sizeof keys)
                        l += (size_t) snprintf(keys + l, sizeof keys - l, "%s%s", l ? ", " : "",
                                               d->policy_key + strlen("pcp."));
        }
        r = parse_mapping(p, "pcp", fields, n_fields, dest, &n);
        if (r == 0 && n == 0) {
                parser_error(p, &start, "expected a pcp setting (%s), found an empty mapping", keys);
                return -EINVAL;
        }
        return r;
}

/* ------------------------------------------------------------------------ */
/* action: */

/* An absolute cgroup path below the root, without "." or ".." components. */
static const char *cgroup_path_problem(const char *s) {
        if (s[0] != '/')
                return "an absolute cgroup path like /kubepods";
        if (strspn(s, "/") == strlen(s))
                return "a cgroup below the root cgroup, like /kubepods";
        for (const char *c = s; *c;) {
                c += strspn(c, "/");
                size_t n = strcspn(c, "/");
                if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
                        return "a cgroup path without '.' or '..' components";
                c += n;
        }
        if (strpbrk(s, "\n\r\t"))
                return "a cgroup path without control characters";
        return NULL;
}

static int parse_cgroup_path(Parser *p, char **ret, bool allow_auto) {
        char buf[96];
        const char *s, *problem;
        int r;

        r = parser_expect_scalar(p, allow_auto ? "'auto' or an absolute cgroup path" : "an absolute cgroup path");
        if (r < 0)
                return r;
        s = scalar_value(p);
        if (!(allow_auto && streq(s, "auto")) && (problem = cgroup_path_problem(s)))
                return parser_bad_scalar(p, "expected %s%s, found %s", allow_auto ? "'auto' or " : "", problem,
                                         event_describe(p, buf, sizeof(buf)));
        free(*ret);
        *ret = strdup(s);
        if (!*ret)
                return -ENOMEM;
        return parser_next(p);
}

static int parse_reclaim_cgroup(Parser *p, void *dest) {
        return parse_cgroup_path(p, dest, true);
}

static int parse_reclaim_roots(Parser *p, void *dest) {
        char ***roots = dest;
        yaml_mark_t start = p->event.start_mark;
        unsigned errors = p->n_errors;
        size_t n = 0;
        int r;

        r = parser_enter(p, YAML_SEQUENCE_START_EVENT, "a sequence of cgroup paths");
        if (r < 0)
                return r;
        while (p->event.type != YAML_SEQUENCE_END_EVENT) {
                char **a = realloc(*roots, (n + 2) * sizeof(char *));
                if (!a)
                        return -ENOMEM;
                *roots = a;
                a[n] = a[n + 1] = NULL;
                r = parse_cgroup_path(p, &a[n], false);
                if (r == -ENOMEM || p->fatal)
                        return r < 0 ? r : -EINVAL;
                if (a[n])
                        n++;
        }
        if (n == 0 && p->n_errors == errors)
                parser_error(p, &start, "expected at least one cgroup path in roots, found an empty sequence");
        r = parser_next(p);
        if (r < 0)
                return r;
        return p->n_errors > errors ? -EINVAL : 0;
}

/* force-empty: false | true | childless (only cgroups without live children: nothing live is reclaimed). */
static const KeywordSpec keywords_force_empty = {
        "true, false or childless", false,
        { { "true", FORCE_EMPTY_YES }, { "True", FORCE_EMPTY_YES }, { "TRUE", FORCE_EMPTY_YES },
          { "false", FORCE_EMPTY_NO }, { "False", FORCE_EMPTY_NO }, { "FALSE", FORCE_EMPTY_NO },
          { "childless", FORCE_EMPTY_CHILDLESS } },
};

static const DurationSpec duration_refault_window = { 1, RECLAIM_REFAULT_WINDOW_MAX, "a duration like 30s",
                                                     "a duration above 0 and at most 10m like 30s" };

/* max-refault-rate: pages refaulted per second in a reclaimed subtree's live cgroups, like 100/s. */
static int parse_refault_rate(Parser *p, void *dest) {
        char buf[96];
        double v;
        int r;

        r = parser_expect_scalar(p, "a rate like 100/s");
        if (r < 0)
                return r;
        if (policy_rate_parse(scalar_value(p), &v) < 0 || !(v > 0))
                return parser_bad_scalar(p, "expected a rate above 0 like 100/s, 600/m or 10/h, found %s",
                                         event_describe(p, buf, sizeof(buf)));
        *(double *) dest = v;
        return parser_next(p);
}

static const Field reclaim_fields[] = {
        { "cgroup", parse_reclaim_cgroup, offsetof(ActionReclaimDying, cgroup), FIELD_REQUIRED },
        { "roots", parse_reclaim_roots, offsetof(ActionReclaimDying, roots), 0 },
        { "max", parse_positive_size, offsetof(ActionReclaimDying, max_bytes), 0 },
        { "step", parse_positive_size, offsetof(ActionReclaimDying, step_bytes), 0 },
        { "timeout", parse_duration_field, offsetof(ActionReclaimDying, timeout_usec), 0, &duration_positive },
        { "min-dying", parse_positive_count, offsetof(ActionReclaimDying, min_dying), 0 },
        { "force-empty", parse_keyword, offsetof(ActionReclaimDying, force_empty), 0, &keywords_force_empty },
        { "drop-caches", parse_keyword, offsetof(ActionReclaimDying, drop_caches), 0, &keywords_bool },
        { "allow-swap", parse_keyword, offsetof(ActionReclaimDying, allow_swap), 0, &keywords_bool },
        { "refault-window", parse_duration_field, offsetof(ActionReclaimDying, refault_window_usec), 0,
          &duration_refault_window },
        { "max-refault-rate", parse_refault_rate, offsetof(ActionReclaimDying, max_refault_rate), 0 },
};

static int parse_reclaim_dying(Parser *p, Action *a) {
        yaml_mark_t start = p->event.start_mark;
        ActionReclaimDying *rd = &a->reclaim;
        int r;

        rd->max_bytes = RECLAIM_MAX_DEFAULT;
        rd->step_bytes = RECLAIM_STEP_DEFAULT;
        rd->timeout_usec = RECLAIM_TIMEOUT_DEFAULT;
        rd->min_dying = 1;
        rd->refault_window_usec = RECLAIM_REFAULT_WINDOW_DEFAULT;
        r = parse_mapping(p, "reclaim-dying", reclaim_fields, ELEMENTSOF(reclaim_fields), rd, NULL);
        if (r < 0)
                return r;
        if (rd->step_bytes > rd->max_bytes) {
                parser_error(p, &start,
                             "expected step no larger than max in reclaim-dying, found step %" PRIu64
                             " bytes > max %" PRIu64 " bytes",
                             rd->step_bytes, rd->max_bytes);
                return -EINVAL;
        }
        return 0;
}

static int parse_percpu_depopulate(Parser *p, Action *a) {
        char buf[96];
        int r;

        (void) a;
        if (event_is_null(p))
                return parser_next(p);
        if (p->event.type == YAML_MAPPING_START_EVENT) {
                r = parser_next(p);
                if (r < 0)
                        return r;
                if (p->event.type == YAML_MAPPING_END_EVENT)
                        return parser_next(p);
                parser_error(p, event_mark(p), "expected no options for percpu-depopulate ({} or nothing), found %s",
                             event_describe(p, buf, sizeof(buf)));
                /* Skip the rest of the mapping: keys and values until its end. */
                while (p->event.type != YAML_MAPPING_END_EVENT)
                        if ((r = parser_skip_node(p)) < 0)
                                return r;
                r = parser_next(p);
                return r < 0 ? r : -EINVAL;
        }
        parser_error(p, event_mark(p), "expected no options for percpu-depopulate ({} or nothing), found %s",
                     event_describe(p, buf, sizeof(buf)));
        r = parser_skip_node(p);
        return r < 0 ? r : -EINVAL;
}

/* The options parser of each row of the action table (action.h). */
static int (*const action_parsers[_ACTION_KIND_MAX])(Parser *p, Action *a) = {
        [ACTION_RECLAIM_DYING] = parse_reclaim_dying,
        [ACTION_PERCPU_DEPOPULATE] = parse_percpu_depopulate,
};

/* A mapping with exactly one key, the action's name, whose value holds its options. */
static int parse_action(Parser *p, void *dest) {
        Action *a = dest;
        yaml_mark_t start = p->event.start_mark;
        unsigned errors = p->n_errors, n = 0;
        char buf[96];
        int r;

        a->line = (unsigned) start.line + 1;
        a->column = (unsigned) start.column + 1;
        if (p->event.type != YAML_MAPPING_START_EVENT) {
                /* "action: reclaim-dying" (or a misspelling of it): how it is written. */
                char hint[160] = "";
                if (p->event.type == YAML_SCALAR_EVENT) {
                        const char *v = scalar_value(p), *name = NULL;
                        for (ActionKind k = ACTION_NONE + 1; k < _ACTION_KIND_MAX && !name; k++)
                                if (edit_distance(v, action_desc(k)->name) <= 2)
                                        name = action_desc(k)->name;
                        if (name)
                                snprintf(hint, sizeof hint, streq(v, name) ? "; an action is a mapping: {%s: {OPTIONS}} "
                                                                             "(pcptune.policy(5))"
                                                                           : "; did you mean {%s: {OPTIONS}}? "
                                                                             "(pcptune.policy(5))",
                                         name);
                }
                char names[128];
                parser_error(p, &start, "expected an action (a mapping with %s), found %s%s",
                             action_names(names, sizeof names), event_describe(p, buf, sizeof(buf)), hint);
                r = parser_skip_node(p);
                return r < 0 ? r : -EINVAL;
        }
        r = parser_next(p);
        if (r < 0)
                return r;
        while (p->event.type != YAML_MAPPING_END_EVENT) {
                yaml_mark_t key = p->event.start_mark;
                const ActionDesc *ad = p->event.type == YAML_SCALAR_EVENT ? action_desc_by_name(scalar_value(p)) : NULL;
                char names[128];
                if (n++ > 0) {
                        parser_error(p, &key, "expected exactly one action, found a second one %s",
                                     event_describe(p, buf, sizeof(buf)));
                } else if (!ad) {
                        const char *words[_ACTION_KIND_MAX];
                        size_t n_words = 0;
                        char hint[64] = "";
                        for (ActionKind k = ACTION_NONE + 1; k < _ACTION_KIND_MAX; k++)
                                words[n_words++] = action_desc(k)->name;
                        if (p->event.type == YAML_SCALAR_EVENT)
                                word_hint(scalar_value(p), words, n_words, hint, sizeof hint);
                        parser_error(p, &key, "expected an action (%s), found %s%s%s", action_names(names, sizeof names),
                                     p->event.type == YAML_SCALAR_EVENT ? "unknown action " : "",
                                     event_describe(p, buf, sizeof(buf)), hint);
                } else {
                        a->kind = ad->kind;
                        if ((r = parser_next(p)) < 0)
                                return r;
                        r = action_parsers[ad->kind](p, a);
                        if (r == -ENOMEM || p->fatal)
                                return r < 0 ? r : -EINVAL;
                        continue;
                }
                if ((r = parser_skip_node(p)) < 0 || (r = parser_skip_node(p)) < 0)
                        return r;
        }
        if (n == 0) {
                char names[128];
                parser_error(p, &start, "expected one action (%s), found an empty mapping",
                             action_names(names, sizeof names));
        }
        r = parser_next(p);
        if (r < 0)
                return r;
        return p->n_errors > errors ? -EINVAL : 0;
}

static int parse_repair(Parser *p, void *dest) {
        char buf[96];
        int r;

        r = parser_expect_scalar(p, "a repair (pagesets)");
        if (r < 0)
                return r;
        if (!streq(scalar_value(p), "pagesets"))
                return parser_bad_scalar(p, "expected a repair (pagesets), found %s", event_describe(p, buf, sizeof(buf)));
        *(bool *) dest = true;
        return parser_next(p);
}

/* ------------------------------------------------------------------------ */
/* Rules and the policy */

static const Field rule_fields[] = {
        { "name", parse_name, offsetof(Rule, name), FIELD_REQUIRED },
        { "description", parse_text, offsetof(Rule, description), 0 },
        { "when", parse_condition, offsetof(Rule, when), 0 },
        { "until", parse_condition, offsetof(Rule, until), 0 },
        { "cooldown", parse_duration_field, offsetof(Rule, cooldown_usec), 0, &duration_any },
        { "pcp", parse_pcp, 0, 0 },
        { "action", parse_action, offsetof(Rule, action), 0 },
        { "repair", parse_repair, offsetof(Rule, repair_pagesets), 0 },
};

static void rule_done(Rule *r) {
        free(r->name);
        free(r->description);
        condition_done(&r->when);
        condition_done(&r->until);
        free(r->action.reclaim.cgroup);
        strv_freep(&r->action.reclaim.roots);
}

/* The semantic checks of one rule that parsed cleanly. */
static void rule_check(Parser *p, const Rule *r) {
        if (r->until.root && !r->when.root)
                parser_error_at(p, r->until.line, r->until.column,
                                "expected 'until' only with 'when' (until ends what when started), found it alone "
                                "in rule '%s'",
                                r->name);
        if (!rule_sets_knobs(r) && r->action.kind == ACTION_NONE && !r->repair_pagesets)
                parser_error_at(p, r->line, r->column, "expected pcp, action or repair in rule '%s', found none",
                                r->name);
}

static int parse_rules(Parser *p, void *dest) {
        Policy *policy = dest;
        yaml_mark_t start = p->event.start_mark;
        unsigned errors = p->n_errors;
        int r;

        r = parser_enter(p, YAML_SEQUENCE_START_EVENT, "rules (a sequence of mappings)");
        if (r < 0)
                return r;

        while (p->event.type != YAML_SEQUENCE_END_EVENT) {
                /* Capacity doubles (4, 8, 16...): growing by one copied the array for every rule, quadratic
                 * in a file of 30,000 rules where realloc() cannot grow in place. */
                size_t k = policy->n_rules;
                if (k == 0 || (k >= 4 && (k & (k - 1)) == 0)) {
                        Rule *n = realloc(policy->rules, (k == 0 ? 4 : 2 * k) * sizeof(Rule));
                        if (!n)
                                return -ENOMEM;
                        policy->rules = n;
                }
                Rule *rule = &policy->rules[policy->n_rules++];
                *rule = (Rule){
                        .action.kind = ACTION_NONE,
                        .line = (unsigned) p->event.start_mark.line + 1,
                        .column = (unsigned) p->event.start_mark.column + 1,
                };
                unsigned before = p->n_errors;
                r = parse_mapping(p, "a rule", rule_fields, ELEMENTSOF(rule_fields), rule, NULL);
                if (r == -ENOMEM || p->fatal)
                        return r < 0 ? r : -EINVAL;
                if (p->n_errors == before)
                        rule_check(p, rule);
        }
        if (policy->n_rules == 0)
                parser_error(p, &start, "expected at least one rule, found an empty sequence");
        r = parser_next(p);
        if (r < 0)
                return r;
        return p->n_errors > errors ? -EINVAL : 0;
}

/* The policy's name, remembering where it is written. */
static int parse_policy_name(Parser *p, void *dest) {
        Policy *policy = dest;
        policy->name_line = (unsigned) p->event.start_mark.line + 1;
        policy->name_column = (unsigned) p->event.start_mark.column + 1;
        return parse_name(p, &policy->name);
}

static const Field policy_fields[] = {
        { "version", parse_version_field, 0, FIELD_REQUIRED },
        { "name", parse_policy_name, 0, FIELD_REQUIRED },
        { "description", parse_text, offsetof(Policy, description), 0 },
        { "priority", parse_priority, offsetof(Policy, priority), 0 },
        { "host", parse_host, offsetof(Policy, host), 0 },
        { "rules", parse_rules, 0, FIELD_REQUIRED },
};

Policy *policy_free(Policy *p) {
        if (!p)
                return NULL;
        free(p->file);
        free(p->name);
        free(p->description);
        free(p->host.cmps);
        for (size_t i = 0; i < p->n_rules; i++)
                rule_done(&p->rules[i]);
        free(p->rules);
        free(p);
        return NULL;
}

static int rule_by_name_compare(const void *a, const void *b) {
        const Rule *x = *(const Rule *const *) a, *y = *(const Rule *const *) b;
        int r = strcmp(x->name, y->name);
        /* Rules are one array: equal names stay in file order. */
        return r != 0 ? r : (x < y ? -1 : x > y);
}

/* Checks over the whole policy, once every part parsed. */
static void policy_check(Parser *p, const Policy *policy) {
        _cleanup_(freep) const Rule **sorted = NULL;
        size_t n = 0;

        /* Duplicate rule names: sorted by name, O(n log n) (30,000 rules took 12.5 s pairwise). */
        sorted = malloc(MAX(policy->n_rules, (size_t) 1) * sizeof(Rule *));
        if (!sorted) {
                p->oom = true;
                return;
        }
        for (size_t i = 0; i < policy->n_rules; i++)
                if (policy->rules[i].name)
                        sorted[n++] = &policy->rules[i];
        qsort(sorted, n, sizeof(Rule *), rule_by_name_compare);
        for (size_t i = 1, first = 0; i < n; i++) {
                if (!streq(sorted[i]->name, sorted[first]->name)) {
                        first = i;
                        continue;
                }
                parser_error_at(p, sorted[i]->line, sorted[i]->column,
                                "expected unique rule names, found '%s' again (first at %u:%u)", sorted[i]->name,
                                sorted[first]->line, sorted[first]->column);
        }
}

#define NOT_A_POLICY "not a policy file, so none of its text is shown"

/*
 * A mapping without any of the policy's keys is not a policy either (/etc/shadow parses as one):
 * its messages, which quote its keys and values, give way to one that quotes nothing.  What a
 * limit stopped (nesting, parse time) is still said.
 */
static void parser_not_a_policy(Parser *p) {
        char keys[256];
        size_t n = 0;

        for (size_t i = 0; i < p->n_messages; i++) {
                if (p->errors[i].quotes_nothing)
                        p->errors[n++] = p->errors[i];
                else
                        free(p->errors[i].message);
        }
        p->n_messages = n;
        fields_list(policy_fields, ELEMENTSOF(policy_fields), keys, sizeof keys);
        parser_error(p, &p->root_mark,
                     "expected a policy (a mapping with version, name and rules), found a mapping without any of "
                     "its keys (%s): " NOT_A_POLICY, keys);
}

/* Stream -> one document -> the policy mapping. */
static int parse_document(Parser *p, Policy *policy) {
        int r;

        r = parser_next(p); /* STREAM-START */
        if (r < 0)
                return r;
        r = parser_next(p);
        if (r < 0)
                return r;
        if (p->event.type == YAML_STREAM_END_EVENT) {
                parser_error_at(p, 1, 1, "empty policy file: expected a mapping with version, name and rules");
                return -EINVAL;
        }
        r = parser_next(p); /* past DOCUMENT-START */
        if (r < 0)
                return r;

        if (event_is_null(p)) {
                parser_error(p, event_mark(p), "empty policy file: expected a mapping with version, name and rules");
                return -EINVAL;
        }
        /* Not a policy (pcptune.policy(5)): none of its text is quoted (a symlink to /etc/shadow, a key). */
        if (p->event.type == YAML_SEQUENCE_START_EVENT) {
                parser_error(p, event_mark(p), "expected a policy (a mapping with version, name and rules), found a sequence");
                return -EINVAL;
        }
        if (p->event.type != YAML_MAPPING_START_EVENT) {
                parser_error(p, event_mark(p), "expected a policy (a mapping with version, name and rules), found %s: "
                             NOT_A_POLICY, p->event.type == YAML_ALIAS_EVENT ? "an alias" : "text");
                return -EINVAL;
        }
        policy->line = (unsigned) p->event.start_mark.line + 1;
        policy->column = (unsigned) p->event.start_mark.column + 1;
        p->root_mapping = true;
        p->root_mark = p->event.start_mark;
        r = parse_mapping(p, "the policy", policy_fields, ELEMENTSOF(policy_fields), policy, &p->root_keys);
        if (r == -ENOMEM || p->fatal)
                return r < 0 ? r : -EINVAL;

        /* DOCUMENT-END, then the stream must end. */
        if ((r = parser_next(p)) < 0)
                return r;
        if (p->event.type == YAML_DOCUMENT_START_EVENT) {
                parser_error(p, event_mark(p), "expected one policy per file, found a second YAML document");
                return -EINVAL;
        }
        return 0;
}

int policy_parse(const char *filename, const char *buf, size_t len, Policy **ret, Diagnostics *diag) {
        _cleanup_(policy_freep) Policy *policy = NULL;
        Parser p = {
                .filename = filename ?: "<policy>",
                .buf = buf,
                .len = len,
                .diag = diag,
        };
        int r;

        if (!buf && len > 0)
                return -EINVAL;
        policy = calloc(1, sizeof(Policy));
        if (!policy)
                return -ENOMEM;
        policy->priority = POLICY_PRIORITY_DEFAULT;
        policy->file = strdup(p.filename);
        if (!policy->file)
                return -ENOMEM;

        if (!yaml_parser_initialize(&p.yaml))
                return -ENOMEM;
        p.cpu_start_usec = thread_user_usec();
        yaml_parser_set_input_string(&p.yaml, (const unsigned char *) (buf ?: ""), len);

        r = parse_document(&p, policy);
        if (p.has_event)
                yaml_event_delete(&p.event);
        yaml_parser_delete(&p.yaml);

        if (!p.fatal && !p.oom && r != -ENOMEM)
                policy_check(&p, policy);
        if (p.root_mapping && p.root_keys == 0 && !p.syntax_error.message && !p.oom && r != -ENOMEM)
                parser_not_a_policy(&p);
        parser_flush_errors(&p);
        if (p.oom || r == -ENOMEM)
                return -ENOMEM;
        if (p.n_errors > 0 || r < 0)
                return -EINVAL;

        *ret = TAKE_PTR(policy);
        return 0;
}
