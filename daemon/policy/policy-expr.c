/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The condition language of `when:` and `until:` (policy.h, pcptune.policy(5)):
 *
 *   expr    := and ("or" and)*
 *   and     := unary ("and" unary)*
 *   unary   := "not" unary | primary ["for" DURATION]
 *   primary := "(" expr ")" | METRIC OP LITERAL
 *   OP      := "<" | "<=" | ">" | ">=" | "==" | "!="
 *
 * A hand-written tokenizer and recursive-descent parser: the language is
 * ours and small, no library fits.  Evaluation uses Kleene's three-valued
 * logic so that an unavailable metric makes a comparison UNKNOWN instead of
 * silently false, and `for` keeps, per node, since when its operand has been
 * TRUE without interruption.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

/* Bounds that no operator's condition reaches but a fuzzer or a typo could:
 * the tree is walked recursively, so its size and depth stay small. */
#define CONDITION_MAX_DEPTH 64U
#define CONDITION_MAX_NODES 1000U

static const char *const cmp_op_table[_CMP_MAX] = {
        [CMP_LT] = "<", [CMP_LE] = "<=", [CMP_GT] = ">", [CMP_GE] = ">=", [CMP_EQ] = "==", [CMP_NE] = "!=",
};

const char *cmp_op_to_string(CmpOp op) {
        if (op < 0 || op >= _CMP_MAX)
                return NULL;
        return cmp_op_table[op];
}

int cmp_op_from_string(const char *s) {
        if (!s)
                return -EINVAL;
        for (int i = 0; i < _CMP_MAX; i++)
                if (streq(cmp_op_table[i], s))
                        return i;
        return -EINVAL;
}

bool cmp_apply(CmpOp op, double a, double b) {
        switch (op) {
        case CMP_LT:
                return a < b;
        case CMP_LE:
                return a <= b;
        case CMP_GT:
                return a > b;
        case CMP_GE:
                return a >= b;
        case CMP_EQ:
                return a == b;
        case CMP_NE:
                return a != b;
        default:
                return false;
        }
}

/* ------------------------------------------------------------------------ */
/* Literals */

/* A plain decimal: digits with at most one '.', at least one digit.  No sign,
 * exponent, hex, "inf" or "nan", which strtod() alone would accept. */
static int scan_decimal(const char *s, double *ret, const char **ret_end) {
        const char *p = s;
        bool digits = false, dot = false;

        for (;; p++) {
                if (isdigit((unsigned char) *p))
                        digits = true;
                else if (*p == '.' && !dot)
                        dot = true;
                else
                        break;
        }
        if (!digits)
                return -EINVAL;
        _cleanup_(freep) char *copy = strndup(s, (size_t) (p - s));
        if (!copy)
                return -ENOMEM;
        double v = strtod(copy, NULL);
        if (!isfinite(v))
                return -ERANGE;
        *ret = v;
        *ret_end = p;
        return 0;
}

static const char *skip_spaces(const char *p) {
        while (*p == ' ' || *p == '\t')
                p++;
        return p;
}

/* "X.Y" or "X.Y.Z", decimal components; minor and patch below 1000 (the encoding of kernel_version_to_double()). */
static int parse_version_literal(const char *s, double *ret) {
        KernelVersion v;
        unsigned dots = 0;

        if (!isdigit((unsigned char) s[0]))
                return -EINVAL;
        for (const char *p = s; *p; p++) {
                if (*p == '.') {
                        if (!isdigit((unsigned char) p[1]))
                                return -EINVAL;
                        dots++;
                } else if (!isdigit((unsigned char) *p))
                        return -EINVAL;
        }
        if (dots < 1 || dots > 2)
                return -EINVAL;
        if (kernel_version_parse(s, &v) < 0 || v.minor > 999 || v.patch > 999 || v.major > 999999)
                return -EINVAL;
        *ret = kernel_version_to_double(&v);
        return 0;
}

static int parse_rate_literal(const char *s, double *ret) {
        const char *p;
        double v;
        int r;

        r = scan_decimal(s, &v, &p);
        if (r < 0)
                return r;
        p = skip_spaces(p);
        if (p[0] != '/' || !p[1] || p[2])
                return -EINVAL;
        switch (p[1]) {
        case 's':
                break;
        case 'm':
                v /= 60.0;
                break;
        case 'h':
                v /= 3600.0;
                break;
        default:
                return -EINVAL;
        }
        *ret = v;
        return 0;
}

int policy_rate_parse(const char *s, double *ret) {
        return parse_rate_literal(s, ret);
}

static int parse_percent_literal(const char *s, double *ret) {
        const char *p;
        double v;
        int r;

        r = scan_decimal(s, &v, &p);
        if (r < 0)
                return r;
        p = skip_spaces(p);
        if (*p == '%')
                p++;
        if (*p || v > 100.0)
                return -EINVAL;
        *ret = v;
        return 0;
}

int condition_parse_literal(MetricId id, const char *s, double *ret_value, char **ret_error) {
        const MetricInfo *mi = metric_info(id);
        const char *expected;
        double v = 0;
        int r = -EINVAL;

        if (!mi || !s)
                return -EINVAL;

        switch (mi->unit) {
        case METRIC_UNIT_BYTES: {
                uint64_t b = 0;
                r = parse_size(s, &b);
                v = (double) b;
                expected = "a size like 4096, 64KiB or 2GiB";
                break;
        }
        case METRIC_UNIT_PAGES:
        case METRIC_UNIT_COUNT: {
                uint64_t n = 0;
                r = isdigit((unsigned char) s[0]) ? parse_uint64(s, &n) : -EINVAL;
                v = (double) n;
                expected = mi->unit == METRIC_UNIT_PAGES ? "a number of pages (a non-negative integer)"
                                                          : "a count (a non-negative integer)";
                break;
        }
        case METRIC_UNIT_PERCENT:
                r = parse_percent_literal(s, &v);
                expected = "a percentage between 0 and 100 like 12.5%";
                break;
        case METRIC_UNIT_RATE:
                r = parse_rate_literal(s, &v);
                expected = "a rate like 200/s, 300/m or 10/h";
                break;
        case METRIC_UNIT_VERSION:
                r = parse_version_literal(s, &v);
                expected = "a kernel version like 5.14 or 6.1.0";
                break;
        case METRIC_UNIT_SECONDS: {
                /* A time unit is required: "500" could mean seconds or microseconds. */
                char packed[64];
                usec_t us = 0;
                size_t n = 0;
                for (const char *c = s; *c && n + 1 < sizeof packed; c++)
                        if (*c != ' ')
                                packed[n++] = *c;
                packed[n] = 0;
                r = n > 0 && n + 1 < sizeof packed && !is_ascii_digit(packed[n - 1]) ? parse_duration(packed, &us)
                                                                                    : -EINVAL;
                v = (double) us / (double) USEC_PER_SEC;
                expected = "a time like 200us, 1.5ms or 2s";
                break;
        }
        default:
                return -EINVAL;
        }
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                if (ret_error && asprintf(ret_error, "expected %s for %s, found '%s'", expected, mi->name, s) < 0)
                        *ret_error = NULL;
                return -EINVAL;
        }
        *ret_value = v;
        return 0;
}

/* ------------------------------------------------------------------------ */
/* Tokenizer */

typedef enum TokenKind {
        TOKEN_END,
        TOKEN_LPAREN,
        TOKEN_RPAREN,
        TOKEN_OP,
        TOKEN_WORD,
        TOKEN_BAD,      /* a lone '=' or '!' */
} TokenKind;

typedef struct Token {
        TokenKind kind;
        const char *start;
        size_t len;
        CmpOp op;
        unsigned line, column;
} Token;

typedef struct ExprParser {
        Token *tokens;
        size_t n_tokens;
        size_t pos;
        unsigned n_nodes;
        unsigned depth;
        int error;          /* -EINVAL or -ENOMEM once failed */
        char *message;      /* "LINE:COLUMN: ..." of the first error */
} ExprParser;

static bool is_word_char(char c) {
        return c && !strchr(" \t\r\n()<>=!", c);
}

/*
 * Split text into tokens.  Positions: the text starts at line:column; a
 * newline in the text starts a new line at column 1 (callers pass the
 * source text of multi-line scalars, see policy-parse.c); columns count
 * characters, not bytes, like libyaml's marks.
 */
static int tokenize(const char *text, unsigned line, unsigned column, Token **ret, size_t *ret_n) {
        _cleanup_(freep) Token *tokens = NULL;
        size_t n = 0, allocated = 0;
        const char *p = text;

        for (;;) {
                /* Skip blanks, tracking positions. */
                while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') {
                        if (*p == '\n') {
                                line++;
                                column = 1;
                        } else
                                column++;
                        p++;
                }

                if (n >= allocated) {
                        size_t na = allocated ? allocated * 2 : 16;
                        Token *t = realloc(tokens, na * sizeof(Token));
                        if (!t)
                                return -ENOMEM;
                        tokens = t;
                        allocated = na;
                }
                Token *t = &tokens[n++];
                *t = (Token){ .start = p, .line = line, .column = column };

                if (!*p) {
                        t->kind = TOKEN_END;
                        break;
                }
                if (*p == '(' || *p == ')') {
                        t->kind = *p == '(' ? TOKEN_LPAREN : TOKEN_RPAREN;
                        t->len = 1;
                } else if (strchr("<>=!", *p)) {
                        bool eq = p[1] == '=';
                        t->len = eq ? 2 : 1;
                        t->kind = TOKEN_OP;
                        switch (*p) {
                        case '<':
                                t->op = eq ? CMP_LE : CMP_LT;
                                break;
                        case '>':
                                t->op = eq ? CMP_GE : CMP_GT;
                                break;
                        case '=':
                                t->op = CMP_EQ;
                                t->kind = eq ? TOKEN_OP : TOKEN_BAD;
                                break;
                        default:
                                t->op = CMP_NE;
                                t->kind = eq ? TOKEN_OP : TOKEN_BAD;
                                break;
                        }
                } else {
                        t->kind = TOKEN_WORD;
                        while (is_word_char(p[t->len]))
                                t->len++;
                }
                /* Advance, counting characters (UTF-8 continuation bytes do not start one). */
                for (size_t i = 0; i < t->len; i++, p++)
                        if (((unsigned char) p[1] & 0xC0) != 0x80)
                                column++;
        }

        *ret = TAKE_PTR(tokens);
        *ret_n = n;
        return 0;
}

static bool token_is(const Token *t, const char *word) {
        return t->kind == TOKEN_WORD && strlen(word) == t->len && memcmp(t->start, word, t->len) == 0;
}

static bool token_is_keyword(const Token *t) {
        return token_is(t, "and") || token_is(t, "or") || token_is(t, "not") || token_is(t, "for");
}

_printf_(3, 4) static void parser_fail(ExprParser *p, const Token *at, const char *fmt, ...) {
        _cleanup_(freep) char *msg = NULL;
        va_list ap;

        if (p->error)
                return;
        p->error = -EINVAL;
        va_start(ap, fmt);
        if (vasprintf(&msg, fmt, ap) < 0)
                msg = NULL;
        va_end(ap);
        if (!msg || asprintf(&p->message, "%u:%u: %s", at->line, at->column, msg) < 0) {
                p->message = NULL;
                p->error = -ENOMEM;
        }
}

/* "'text'" or "the end of the condition", for "found ..." (static buffer of the caller). */
static const char *token_describe(const Token *t, char *buf, size_t size) {
        if (t->kind == TOKEN_END)
                return "the end of the condition";
        snprintf(buf, size, "'%.*s'", (int) MIN(t->len, (size_t) 64), t->start);
        return buf;
}

/* Levenshtein distance, to suggest a metric name for a typo. */
static size_t edit_distance(const char *a, size_t la, const char *b) {
        size_t lb = strlen(b), row[64], prev;

        if (lb >= ELEMENTSOF(row))
                return SIZE_MAX;
        for (size_t j = 0; j <= lb; j++)
                row[j] = j;
        for (size_t i = 1; i <= la; i++) {
                prev = row[0];
                row[0] = i;
                for (size_t j = 1; j <= lb; j++) {
                        size_t cur = row[j];
                        size_t best = MIN(row[j] + 1, row[j - 1] + 1);
                        row[j] = MIN(best, prev + (a[i - 1] == b[j - 1] ? 0 : 1));
                        prev = cur;
                }
        }
        return row[lb];
}

static int metric_lookup_token(const Token *t) {
        for (int i = 0; i < _METRIC_MAX; i++) {
                const char *name = metric_info((MetricId) i)->name;
                if (strlen(name) == t->len && memcmp(name, t->start, t->len) == 0)
                        return i;
        }
        return -ENOENT;
}

static const char *metric_suggest(const Token *t) {
        const char *best = NULL;
        size_t best_d = 3;

        for (int i = 0; i < _METRIC_MAX; i++) {
                const char *name = metric_info((MetricId) i)->name;
                size_t d = edit_distance(t->start, MIN(t->len, (size_t) 256), name);
                if (d < best_d) {
                        best_d = d;
                        best = name;
                }
        }
        return best;
}

static Token *parser_peek(ExprParser *p) {
        return &p->tokens[p->pos];
}

static Token *parser_take(ExprParser *p) {
        Token *t = &p->tokens[p->pos];
        if (t->kind != TOKEN_END)
                p->pos++;
        return t;
}

static void expr_free(Expr *e) {
        if (!e)
                return;
        expr_free(e->a);
        expr_free(e->b);
        free(e);
}

static Expr *expr_new(ExprParser *p, ExprKind kind, const Token *at) {
        Expr *e;

        if (p->n_nodes >= CONDITION_MAX_NODES) {
                parser_fail(p, at, "expected a condition of at most %u terms, found a longer one",
                            CONDITION_MAX_NODES);
                return NULL;
        }
        e = calloc(1, sizeof(Expr));
        if (!e) {
                p->error = -ENOMEM;
                return NULL;
        }
        e->kind = kind;
        e->id = p->n_nodes++;
        e->line = at->line;
        e->column = at->column;
        return e;
}

/*
 * The literal after an operator: one word, or a number and a unit separated
 * by one blank ("5 MiB", "200 /s", "12.5 %", "3 s").  A following word is
 * taken as a unit unless it is a keyword or a metric name, so a missing
 * "and" is reported on the metric, not hidden in the literal.
 */
static char *parser_take_literal(ExprParser *p, const Token *first) {
        const Token *next = parser_peek(p);
        char *s;

        if ((isdigit((unsigned char) first->start[0]) || first->start[0] == '.') && next->kind == TOKEN_WORD &&
            (next->start[0] == '%' || next->start[0] == '/' ||
             (isalpha((unsigned char) next->start[0]) && !token_is_keyword(next) && metric_lookup_token(next) < 0))) {
                parser_take(p);
                if (asprintf(&s, "%.*s %.*s", (int) first->len, first->start, (int) next->len, next->start) < 0)
                        s = NULL;
        } else
                s = strndup(first->start, first->len);
        if (!s)
                p->error = -ENOMEM;
        return s;
}

static Expr *parse_or(ExprParser *p);

static Expr *parse_comparison(ExprParser *p) {
        _cleanup_(freep) char *literal = NULL;
        char buf[80];
        Token *name = parser_take(p), *op, *value;
        int m;

        m = metric_lookup_token(name);
        if (m < 0) {
                if (isdigit((unsigned char) name->start[0]))
                        parser_fail(p, name,
                                    "expected a metric name (comparisons are written 'metric OP value'), found %s",
                                    token_describe(name, buf, sizeof(buf)));
                else if (token_is_keyword(name))
                        parser_fail(p, name, "expected a metric name, 'not' or '(', found %s",
                                    token_describe(name, buf, sizeof(buf)));
                else {
                        const char *s = metric_suggest(name);
                        if (s)
                                parser_fail(p, name, "expected a metric name, found unknown metric %s (did you mean '%s'?)",
                                            token_describe(name, buf, sizeof(buf)), s);
                        else
                                parser_fail(p, name,
                                            "expected a metric name, found unknown metric %s "
                                            "(see pcptune.policy(5) for the list)",
                                            token_describe(name, buf, sizeof(buf)));
                }
                return NULL;
        }

        op = parser_peek(p);
        if (op->kind != TOKEN_OP) {
                parser_fail(p, op, "expected a comparison operator (<, <=, >, >=, ==, !=) after '%s', found %s%s",
                            metric_info(m)->name, token_describe(op, buf, sizeof(buf)),
                            op->kind == TOKEN_BAD && op->start[0] == '=' ? " (write '==')" : "");
                return NULL;
        }
        parser_take(p);

        value = parser_peek(p);
        if (value->kind != TOKEN_WORD || token_is_keyword(value)) {
                parser_fail(p, value, "expected a value in %s after '%s %s', found %s",
                            metric_unit_to_string(metric_info(m)->unit), metric_info(m)->name,
                            cmp_op_to_string(op->op), token_describe(value, buf, sizeof(buf)));
                return NULL;
        }
        parser_take(p);
        literal = parser_take_literal(p, value);
        if (!literal)
                return NULL;

        double v;
        _cleanup_(freep) char *err = NULL;
        int r = condition_parse_literal((MetricId) m, literal, &v, &err);
        if (r == -ENOMEM) {
                p->error = -ENOMEM;
                return NULL;
        }
        if (r < 0) {
                parser_fail(p, value, "%s", err ?: "invalid value");
                return NULL;
        }
        Expr *e = expr_new(p, EXPR_CMP, name);
        if (!e)
                return NULL;
        e->metric = (MetricId) m;
        e->op = op->op;
        e->value = v;
        return e;
}

static Expr *parse_primary(ExprParser *p) {
        char buf[80];
        Token *t = parser_peek(p);

        if (t->kind == TOKEN_LPAREN) {
                Token *open = parser_take(p);
                Expr *e = parse_or(p);
                if (!e)
                        return NULL;
                Token *close = parser_peek(p);
                if (close->kind != TOKEN_RPAREN) {
                        parser_fail(p, close, "expected ')' to close the '(' at %u:%u, found %s", open->line,
                                    open->column, token_describe(close, buf, sizeof(buf)));
                        expr_free(e);
                        return NULL;
                }
                parser_take(p);
                return e;
        }
        if (t->kind == TOKEN_WORD)
                return parse_comparison(p);

        parser_fail(p, t, "expected a metric comparison, 'not' or '(', found %s", token_describe(t, buf, sizeof(buf)));
        return NULL;
}

static Expr *parse_unary(ExprParser *p) {
        char buf[80];
        Token *t = parser_peek(p);
        Expr *e;

        if (p->depth >= CONDITION_MAX_DEPTH) {
                parser_fail(p, t, "expected at most %u nested 'not' or parentheses, found more",
                            CONDITION_MAX_DEPTH);
                return NULL;
        }
        p->depth++;

        if (token_is(t, "not")) {
                parser_take(p);
                Expr *a = parse_unary(p);
                e = a ? expr_new(p, EXPR_NOT, t) : NULL;
                if (!e)
                        expr_free(a);
                else
                        e->a = a;
                p->depth--;
                return e;
        }

        e = parse_primary(p);
        p->depth--;
        if (!e)
                return NULL;

        if (token_is(parser_peek(p), "for")) {
                Token *f = parser_take(p);
                Token *d = parser_peek(p);
                usec_t usec;

                if (e->for_usec > 0) {
                        parser_fail(p, f, "expected one 'for' per comparison or group, found a second one");
                        goto fail;
                }
                if (d->kind != TOKEN_WORD || token_is_keyword(d)) {
                        parser_fail(p, d, "expected a duration like 30s, 5m or 1h after 'for', found %s",
                                    token_describe(d, buf, sizeof(buf)));
                        goto fail;
                }
                parser_take(p);
                _cleanup_(freep) char *text = parser_take_literal(p, d);
                if (!text)
                        goto fail;
                /* parse_duration() takes no blanks: "3 s" is "3s". */
                _cleanup_(freep) char *packed = strdup(text);
                if (!packed) {
                        p->error = -ENOMEM;
                        goto fail;
                }
                char *w = packed;
                for (const char *s = text; *s; s++)
                        if (*s != ' ')
                                *w++ = *s;
                *w = 0;
                if (w > packed && is_ascii_digit(w[-1])) {
                        parser_fail(p, d, "expected a duration like 30s, 5m or 1h after 'for', found '%s': a duration "
                                          "needs its unit (%ss)", text, packed);
                        goto fail;
                }
                if (parse_duration(packed, &usec) < 0) {
                        parser_fail(p, d, "expected a duration like 30s, 5m or 1h after 'for', found '%s'", text);
                        goto fail;
                }
                e->for_usec = usec;
        }
        return e;

fail:
        expr_free(e);
        return NULL;
}

static Expr *parse_binary(ExprParser *p, const char *keyword, ExprKind kind, Expr *(*operand)(ExprParser *p)) {
        Expr *left = operand(p);

        while (left && token_is(parser_peek(p), keyword)) {
                Token *t = parser_take(p);
                Expr *right = operand(p);
                Expr *e = right ? expr_new(p, kind, t) : NULL;
                if (!e) {
                        expr_free(left);
                        expr_free(right);
                        return NULL;
                }
                e->a = left;
                e->b = right;
                left = e;
        }
        return left;
}

static Expr *parse_and(ExprParser *p) {
        return parse_binary(p, "and", EXPR_AND, parse_unary);
}

static Expr *parse_or(ExprParser *p) {
        return parse_binary(p, "or", EXPR_OR, parse_and);
}

/* The text with blank runs (newlines included) collapsed to one space, trimmed: for messages and reports. */
static char *normalize_text(const char *text) {
        char *s = malloc(strlen(text) + 1), *w = s;
        bool blank = false;

        if (!s)
                return NULL;
        for (const char *p = text; *p; p++) {
                if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
                        blank = w != s;
                        continue;
                }
                if (blank)
                        *w++ = ' ';
                blank = false;
                *w++ = *p;
        }
        *w = 0;
        return s;
}

int condition_parse(const char *text, unsigned line, unsigned column, Condition *ret, char **ret_error) {
        ExprParser p = { 0 };
        char buf[80];
        Expr *root = NULL;
        int r;

        if (!text || !ret)
                return -EINVAL;

        r = tokenize(text, line, column, &p.tokens, &p.n_tokens);
        if (r < 0)
                return r;

        root = parse_or(&p);
        if (root && parser_peek(&p)->kind != TOKEN_END) {
                Token *t = parser_peek(&p);
                parser_fail(&p, t, "expected 'and', 'or' or the end of the condition, found %s%s",
                            token_describe(t, buf, sizeof(buf)),
                            t->kind == TOKEN_RPAREN ? " without a matching '('" : "");
        }
        free(p.tokens);

        if (p.error || !root) {
                expr_free(root);
                r = p.error ?: -EINVAL;
                if (r == -EINVAL && ret_error)
                        *ret_error = TAKE_PTR(p.message);
                free(p.message);
                return r;
        }

        char *normalized = normalize_text(text);
        if (!normalized) {
                expr_free(root);
                return -ENOMEM;
        }
        *ret = (Condition){
                .root = root,
                .n_nodes = p.n_nodes,
                .text = normalized,
                .line = line,
                .column = column,
        };
        return 0;
}

void condition_done(Condition *c) {
        if (!c)
                return;
        expr_free(c->root);
        free(c->text);
        *c = (Condition){};
}

static bool expr_uses_metric(const Expr *e, MetricId id) {
        if (!e)
                return false;
        if (e->kind == EXPR_CMP)
                return e->metric == id;
        return expr_uses_metric(e->a, id) || expr_uses_metric(e->b, id);
}

bool condition_uses_metric(const Condition *c, MetricId id) {
        return c && expr_uses_metric(c->root, id);
}

static double expr_lowest_threshold(const Expr *e, MetricId first, MetricId last) {
        if (!e)
                return HUGE_VAL;
        if (e->kind == EXPR_CMP)
                return e->metric >= first && e->metric <= last && (e->op == CMP_GT || e->op == CMP_GE) ? e->value
                                                                                                     : HUGE_VAL;
        return MIN(expr_lowest_threshold(e->a, first, last), expr_lowest_threshold(e->b, first, last));
}

double condition_lowest_threshold(const Condition *c, MetricId first, MetricId last) {
        return c ? expr_lowest_threshold(c->root, first, last) : HUGE_VAL;
}

/* ------------------------------------------------------------------------ */
/* Evaluation */

static Truth truth_and(Truth a, Truth b) {
        if (a == TRUTH_FALSE || b == TRUTH_FALSE)
                return TRUTH_FALSE;
        if (a == TRUTH_UNKNOWN || b == TRUTH_UNKNOWN)
                return TRUTH_UNKNOWN;
        return TRUTH_TRUE;
}

static Truth truth_or(Truth a, Truth b) {
        if (a == TRUTH_TRUE || b == TRUTH_TRUE)
                return TRUTH_TRUE;
        if (a == TRUTH_UNKNOWN || b == TRUTH_UNKNOWN)
                return TRUTH_UNKNOWN;
        return TRUTH_FALSE;
}

static Truth truth_not(Truth a) {
        return a == TRUTH_TRUE ? TRUTH_FALSE : a == TRUTH_FALSE ? TRUTH_TRUE : TRUTH_UNKNOWN;
}

/*
 * Both operands of and/or are always evaluated (no short circuit): every
 * node's history must advance on every sample, or a `for` deep in an
 * unevaluated branch would keep a stale start time.
 */
static Truth expr_eval(const Expr *e, const MetricValues *mv, usec_t now, usec_t *since, unsigned n,
                       int *unavailable) {
        Truth v;

        switch (e->kind) {
        case EXPR_CMP:
                if (!mv || e->metric < 0 || e->metric >= _METRIC_MAX || !mv->available[e->metric]) {
                        if (*unavailable < 0)
                                *unavailable = (int) e->metric;
                        v = TRUTH_UNKNOWN;
                } else
                        v = cmp_apply(e->op, mv->value[e->metric], e->value) ? TRUTH_TRUE : TRUTH_FALSE;
                break;
        case EXPR_AND:
        case EXPR_OR: {
                Truth a = expr_eval(e->a, mv, now, since, n, unavailable);
                Truth b = expr_eval(e->b, mv, now, since, n, unavailable);
                v = e->kind == EXPR_AND ? truth_and(a, b) : truth_or(a, b);
                break;
        }
        case EXPR_NOT:
                v = truth_not(expr_eval(e->a, mv, now, since, n, unavailable));
                break;
        default:
                v = TRUTH_UNKNOWN;
        }

        usec_t start = USEC_INFINITY;
        if (since && e->id < n) {
                if (v != TRUTH_TRUE)
                        since[e->id] = USEC_INFINITY;
                else if (since[e->id] == USEC_INFINITY)
                        since[e->id] = now;
                start = since[e->id];
        } else if (v == TRUTH_TRUE)
                /* No history (allocation failed): the operand has just become true. */
                start = now;

        if (e->for_usec == 0 || v != TRUTH_TRUE)
                return v;
        return start != USEC_INFINITY && now >= start && now - start >= e->for_usec ? TRUTH_TRUE : TRUTH_FALSE;
}

Truth condition_eval(const Condition *c, const MetricValues *mv, usec_t now, ConditionState *st,
                     int *ret_unavailable) {
        int unavailable = -1;
        Truth v;

        if (!c || !c->root) {
                if (ret_unavailable)
                        *ret_unavailable = -1;
                return TRUTH_TRUE;
        }

        if (st && (st->n != c->n_nodes || !st->true_since)) {
                condition_state_done(st);
                st->true_since = malloc(MAX(c->n_nodes, 1U) * sizeof(usec_t));
                if (st->true_since) {
                        st->n = c->n_nodes;
                        for (unsigned i = 0; i < st->n; i++)
                                st->true_since[i] = USEC_INFINITY;
                }
        }

        v = expr_eval(c->root, mv, now, st ? st->true_since : NULL, st ? st->n : 0, &unavailable);
        if (ret_unavailable)
                *ret_unavailable = unavailable;
        return v;
}

void condition_state_done(ConditionState *st) {
        if (!st)
                return;
        free(st->true_since);
        st->true_since = NULL;
        st->n = 0;
}
