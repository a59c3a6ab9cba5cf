/* Integer expressions for template manifests (grammar in common/expr.h): a
 * recursive-descent parser that evaluates while it parses, so no tree is
 * built and validation is the same walk with evaluation switched off. */
#include "common/expr.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deep enough for any real manifest, shallow enough that hostile input
 * cannot exhaust the stack. */
#define EXPR_MAX_DEPTH 200
/* The widest function takes 2; extra arguments are still parsed (so that the
 * arity message can count them) but not kept. */
#define EXPR_MAX_ARGS 2

enum tok_kind {
	T_END,
	T_NUM,
	T_NAME,
	T_LPAREN,
	T_RPAREN,
	T_COMMA,
	T_QUEST,
	T_COLON,
	T_OROR,
	T_ANDAND,
	T_EQ,
	T_NE,
	T_LT,
	T_LE,
	T_GT,
	T_GE,
	T_PLUS,
	T_MINUS,
	T_STAR,
	T_SLASH,
	T_PERCENT,
	T_NOT,
};

struct token {
	enum tok_kind kind;
	size_t start; /* byte offset into the source; column is start + 1 */
	size_t len;
	long long num;
	int var;  /* lexed ahead (expr_lex): the name's index in names, or -1 */
	int func; /* lexed ahead: the name's index in funcs, or -1 */
};

/* An expression lexed once (expr_lex): its tokens, the last one T_END. */
struct expr_lexed {
	char *src;
	struct token *toks;
	size_t ntoks;
};

struct parser {
	const char *src;
	size_t pos; /* first byte not yet consumed by the lexer */
	struct token tok;
	const expr_var *vars;
	size_t nvars;
	const char *const *names;
	size_t nnames;
	int validating;
	const struct expr_lexed *lexed; /* tokens read from here, not lexed */
	size_t ti;			/* the next of lexed->toks */
	const long long *values;	/* lexed: indexed as the names it was lexed by */
	int depth;
	int rc; /* first error wins; once set, every level unwinds */
	at_error *err;
};

enum func_id { F_MIN, F_MAX, F_CEIL_DIV, F_LOG2, F_IS_POW2 };

struct func {
	const char *name;
	enum func_id id;
	int nargs;
};

static const struct func funcs[] = {
	{ "min", F_MIN, 2 },
	{ "max", F_MAX, 2 },
	{ "ceil_div", F_CEIL_DIV, 2 },
	{ "log2", F_LOG2, 1 },
	{ "is_pow2", F_IS_POW2, 1 },
};

static long long parse_expr(struct parser *p, int live);

static void fail(struct parser *p, int rc, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void fail(struct parser *p, int rc, size_t off, const char *fmt, ...)
{
	if (p->rc)
		return;
	p->rc = rc;
	char what[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	at_error_set(p->err, "in \"%s\": %s at column %zu", p->src, what,
		     off + 1);
}

/* Reports the current token as not what the grammar wanted. */
static void fail_got(struct parser *p, const char *expected)
{
	if (p->tok.kind == T_END)
		fail(p, EXPR_ERROR, p->tok.start,
		     "expected %s, got end of expression", expected);
	else
		fail(p, EXPR_ERROR, p->tok.start, "expected %s, got '%.*s'",
		     expected, (int)p->tok.len, p->src + p->tok.start);
}

static int is_name_start(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

static int is_name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static void lex_number(struct parser *p, struct token *t)
{
	const char *s = p->src + t->start;
	size_t n = 0;
	while (isdigit((unsigned char)s[n]))
		n++;
	if (is_name_char(s[n])) {
		/* "12abc" or "0x10": say so rather than "unexpected 'abc'". */
		while (is_name_char(s[n]))
			n++;
		fail(p, EXPR_ERROR, t->start, "invalid integer '%.*s'", (int)n,
		     s);
		t->kind = T_END;
		return;
	}
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno == ERANGE || end != s + n) {
		fail(p, EXPR_ERROR, t->start, "integer '%.*s' is out of range",
		     (int)n, s);
		t->kind = T_END;
		return;
	}
	t->kind = T_NUM;
	t->len = n;
	t->num = v;
}

/* Two-character operators first, so that "<=" is not read as '<' '='. */
static int lex_pair(struct token *t, char a, char b)
{
	static const struct {
		char a, b;
		enum tok_kind kind;
	} pairs[] = {
		{ '|', '|', T_OROR }, { '&', '&', T_ANDAND }, { '=', '=', T_EQ },
		{ '!', '=', T_NE },   { '<', '=', T_LE },     { '>', '=', T_GE },
	};
	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
		if (pairs[i].a == a && pairs[i].b == b) {
			t->kind = pairs[i].kind;
			t->len = 2;
			return 1;
		}
	}
	return 0;
}

static int lex_single(struct token *t, char c)
{
	static const char chars[] = "()?:,<>+-*/%!";
	static const enum tok_kind kinds[] = {
		T_LPAREN, T_RPAREN, T_QUEST, T_COLON, T_COMMA, T_LT,  T_GT,
		T_PLUS,   T_MINUS,  T_STAR,  T_SLASH, T_PERCENT, T_NOT,
	};
	const char *hit = c ? strchr(chars, c) : NULL;
	if (!hit)
		return 0;
	t->kind = kinds[hit - chars];
	t->len = 1;
	return 1;
}

static void lex_punct(struct parser *p, struct token *t)
{
	const char *s = p->src + t->start;
	if (lex_pair(t, s[0], s[1]) || lex_single(t, s[0]))
		return;
	t->kind = T_END;
	if (s[0] == '=' || s[0] == '&' || s[0] == '|')
		fail(p, EXPR_ERROR, t->start, "unexpected '%c' (did you mean '%c%c'?)",
		     s[0], s[0], s[0]);
	else if (isprint((unsigned char)s[0]))
		fail(p, EXPR_ERROR, t->start, "unexpected character '%c'", s[0]);
	else
		fail(p, EXPR_ERROR, t->start, "unexpected byte 0x%02x",
		     (unsigned char)s[0]);
}

/* Reads the next token into p->tok; on a lexical error sets p->rc and
 * leaves an end token so that the parser stops. */
static void next(struct parser *p)
{
	if (p->lexed) {
		p->tok = p->lexed->toks[p->ti];
		if (p->ti + 1 < p->lexed->ntoks)
			p->ti++;
		return;
	}
	const char *s = p->src;
	size_t i = p->pos;
	while (isspace((unsigned char)s[i]))
		i++;
	struct token t = { .kind = T_END, .start = i, .len = 0 };
	if (isdigit((unsigned char)s[i])) {
		lex_number(p, &t);
	} else if (is_name_start(s[i])) {
		while (is_name_char(s[i + t.len]))
			t.len++;
		t.kind = T_NAME;
	} else if (s[i] != '\0') {
		lex_punct(p, &t);
	}
	p->tok = t;
	p->pos = t.start + t.len;
}

static int expect(struct parser *p, enum tok_kind kind, const char *what)
{
	if (p->rc)
		return -1;
	if (p->tok.kind != kind) {
		fail_got(p, what);
		return -1;
	}
	next(p);
	return 0;
}

static int token_is(const struct token *t, const char *src, const char *name)
{
	return name && strncmp(name, src + t->start, t->len) == 0 &&
	       name[t->len] == '\0';
}

static long long lookup(struct parser *p, const struct token *t)
{
	if (p->lexed) {
		if (t->var >= 0)
			return p->values[t->var];
	} else if (p->validating) {
		for (size_t i = 0; i < p->nnames; i++)
			if (token_is(t, p->src, p->names[i]))
				return 0;
	} else {
		for (size_t i = 0; i < p->nvars; i++)
			if (token_is(t, p->src, p->vars[i].name))
				return p->vars[i].value;
	}
	fail(p, EXPR_UNKNOWN, t->start, "unknown name \"%.*s\"", (int)t->len,
	     p->src + t->start);
	return 0;
}

static const struct func *find_func(const struct parser *p,
				    const struct token *t)
{
	if (p->lexed)
		return t->func >= 0 ? &funcs[t->func] : NULL;
	for (size_t i = 0; i < sizeof funcs / sizeof funcs[0]; i++)
		if (token_is(t, p->src, funcs[i].name))
			return &funcs[i];
	return NULL;
}

static long long ceil_div(struct parser *p, long long a, long long b,
			  size_t off)
{
	if (b == 0) {
		fail(p, EXPR_ERROR, off, "division by zero");
		return 0;
	}
	if (a == LLONG_MIN && b == -1) {
		fail(p, EXPR_ERROR, off, "integer overflow");
		return 0;
	}
	long long q = a / b;
	/* C truncates toward zero; that is the ceiling only for a negative
	 * quotient, so bump an inexact positive one. */
	if (a % b != 0 && (a < 0) == (b < 0))
		q++;
	return q;
}

static long long apply(struct parser *p, const struct func *f,
		       const long long *a, size_t off)
{
	switch (f->id) {
	case F_MIN:
		return a[0] < a[1] ? a[0] : a[1];
	case F_MAX:
		return a[0] > a[1] ? a[0] : a[1];
	case F_CEIL_DIV:
		return ceil_div(p, a[0], a[1], off);
	case F_LOG2:
		if (a[0] <= 0) {
			fail(p, EXPR_ERROR, off, "log2 of %lld (must be positive)",
			     a[0]);
			return 0;
		}
		return 63 - __builtin_clzll((unsigned long long)a[0]);
	case F_IS_POW2:
		return a[0] > 0 && (a[0] & (a[0] - 1)) == 0;
	}
	return 0;
}

/* Parses the argument list after NAME; the current token is '('. */
static size_t parse_args(struct parser *p, int live, long long *args)
{
	size_t n = 0;
	next(p);
	if (p->tok.kind == T_RPAREN)
		return n;
	for (;;) {
		long long v = parse_expr(p, live);
		if (p->rc)
			return n;
		if (n < EXPR_MAX_ARGS)
			args[n] = v;
		n++;
		if (p->tok.kind != T_COMMA)
			return n;
		next(p);
	}
}

static long long parse_call(struct parser *p, const struct token *name,
			    int live)
{
	const struct func *f = find_func(p, name);
	if (!f) {
		fail(p, EXPR_ERROR, name->start, "unknown function \"%.*s\"",
		     (int)name->len, p->src + name->start);
		return 0;
	}
	long long args[EXPR_MAX_ARGS] = { 0 };
	size_t n = parse_args(p, live, args);
	if (expect(p, T_RPAREN, "',' or ')'"))
		return 0;
	if (n != (size_t)f->nargs) {
		fail(p, EXPR_ERROR, name->start,
		     "%s takes %d argument%s, got %zu", f->name, f->nargs,
		     f->nargs == 1 ? "" : "s", n);
		return 0;
	}
	return live ? apply(p, f, args, name->start) : 0;
}

static long long parse_primary(struct parser *p, int live)
{
	struct token t = p->tok;
	long long v;

	switch (t.kind) {
	case T_NUM:
		next(p);
		return t.num;
	case T_NAME:
		next(p);
		if (p->tok.kind == T_LPAREN)
			return parse_call(p, &t, live);
		/* Names are checked even on a branch not taken: a constraint
		 * that names a missing variable is skipped as a whole. */
		v = lookup(p, &t);
		return live ? v : 0;
	case T_LPAREN:
		next(p);
		v = parse_expr(p, live);
		if (expect(p, T_RPAREN, "')'"))
			return 0;
		return v;
	default:
		fail_got(p, "a number, a name or '('");
		return 0;
	}
}

static long long negate(struct parser *p, long long v, size_t off)
{
	if (v == LLONG_MIN) {
		fail(p, EXPR_ERROR, off, "integer overflow");
		return 0;
	}
	return -v;
}

static long long parse_unary(struct parser *p, int live)
{
	if (++p->depth > EXPR_MAX_DEPTH) {
		fail(p, EXPR_ERROR, p->tok.start, "expression nested too deeply");
		p->depth--;
		return 0;
	}
	struct token op = p->tok;
	long long v;
	if (op.kind == T_MINUS || op.kind == T_NOT || op.kind == T_PLUS) {
		next(p);
		v = parse_unary(p, live);
		if (!p->rc && live && op.kind == T_MINUS)
			v = negate(p, v, op.start);
		else if (!p->rc && live && op.kind == T_NOT)
			v = !v;
	} else {
		v = parse_primary(p, live);
	}
	p->depth--;
	return p->rc ? 0 : v;
}

static long long divide(struct parser *p, const struct token *op, long long a,
			long long b)
{
	if (b == 0) {
		fail(p, EXPR_ERROR, op->start, "division by zero");
		return 0;
	}
	if (b == -1) /* LLONG_MIN / -1 traps; x % -1 is always 0 */
		return op->kind == T_SLASH ? negate(p, a, op->start) : 0;
	return op->kind == T_SLASH ? a / b : a % b;
}

/* Applies a binary arithmetic or comparison operator; only called when the
 * value is needed, so dead branches cannot fail on arithmetic. */
static long long binary(struct parser *p, const struct token *op, long long a,
			long long b)
{
	long long r = 0;
	int overflow = 0;

	switch (op->kind) {
	case T_PLUS:
		overflow = __builtin_add_overflow(a, b, &r);
		break;
	case T_MINUS:
		overflow = __builtin_sub_overflow(a, b, &r);
		break;
	case T_STAR:
		overflow = __builtin_mul_overflow(a, b, &r);
		break;
	case T_SLASH:
	case T_PERCENT:
		return divide(p, op, a, b);
	case T_EQ:
		return a == b;
	case T_NE:
		return a != b;
	case T_LT:
		return a < b;
	case T_LE:
		return a <= b;
	case T_GT:
		return a > b;
	case T_GE:
		return a >= b;
	default:
		break;
	}
	if (overflow) {
		fail(p, EXPR_ERROR, op->start, "integer overflow");
		return 0;
	}
	return r;
}

static long long parse_term(struct parser *p, int live)
{
	long long v = parse_unary(p, live);
	while (!p->rc && (p->tok.kind == T_STAR || p->tok.kind == T_SLASH ||
			  p->tok.kind == T_PERCENT)) {
		struct token op = p->tok;
		next(p);
		long long r = parse_unary(p, live);
		if (!p->rc && live)
			v = binary(p, &op, v, r);
	}
	return p->rc ? 0 : v;
}

static long long parse_sum(struct parser *p, int live)
{
	long long v = parse_term(p, live);
	while (!p->rc && (p->tok.kind == T_PLUS || p->tok.kind == T_MINUS)) {
		struct token op = p->tok;
		next(p);
		long long r = parse_term(p, live);
		if (!p->rc && live)
			v = binary(p, &op, v, r);
	}
	return p->rc ? 0 : v;
}

static int is_cmp(enum tok_kind k)
{
	return k == T_EQ || k == T_NE || k == T_LT || k == T_LE || k == T_GT ||
	       k == T_GE;
}

static long long parse_cmp(struct parser *p, int live)
{
	long long v = parse_sum(p, live);
	while (!p->rc && is_cmp(p->tok.kind)) {
		struct token op = p->tok;
		next(p);
		long long r = parse_sum(p, live);
		if (!p->rc && live)
			v = binary(p, &op, v, r);
	}
	return p->rc ? 0 : v;
}

/* && and || short-circuit as in C: the right side is parsed but, when the
 * left side decides, not evaluated ("N > 0 && M / N > 1" is safe). */
static long long parse_and(struct parser *p, int live)
{
	long long v = parse_cmp(p, live);
	while (!p->rc && p->tok.kind == T_ANDAND) {
		next(p);
		long long r = parse_cmp(p, live && v);
		v = live && v && r;
	}
	return p->rc ? 0 : v;
}

static long long parse_or(struct parser *p, int live)
{
	long long v = parse_and(p, live);
	while (!p->rc && p->tok.kind == T_OROR) {
		next(p);
		long long r = parse_and(p, live && !v);
		v = live && (v || r);
	}
	return p->rc ? 0 : v;
}

static long long parse_expr(struct parser *p, int live)
{
	long long c = parse_or(p, live);
	if (p->rc || p->tok.kind != T_QUEST)
		return p->rc ? 0 : c;
	/* Each ?: recurses here rather than through parse_unary, so it counts
	 * towards the depth too ("1?1:1?1:..." would exhaust the stack). */
	if (++p->depth > EXPR_MAX_DEPTH) {
		fail(p, EXPR_ERROR, p->tok.start, "expression nested too deeply");
		p->depth--;
		return 0;
	}
	next(p);
	long long a = parse_expr(p, live && c);
	long long b = 0;
	/* cond on the right (via parse_expr) makes ?: right-associative. */
	if (!expect(p, T_COLON, "':'"))
		b = parse_expr(p, live && !c);
	p->depth--;
	if (p->rc || !live)
		return 0;
	return c ? a : b;
}

static int run(struct parser *p, long long *out)
{
	if (!p->src)
		return at_error_set(p->err, "no expression given");
	next(p);
	long long v = parse_expr(p, !p->validating);
	if (!p->rc && p->tok.kind != T_END)
		fail_got(p, "an operator or end of expression");
	if (p->rc)
		return p->rc;
	if (out)
		*out = v;
	return EXPR_OK;
}

int expr_eval(const char *src, const expr_var *vars, size_t nvars,
	      long long *out, at_error *err)
{
	struct parser p = {
		.src = src,
		.vars = vars,
		.nvars = vars ? nvars : 0,
		.err = err,
	};
	return run(&p, out);
}

int expr_validate(const char *src, const char *const *names, size_t nnames,
		  at_error *err)
{
	struct parser p = {
		.src = src,
		.names = names,
		.nnames = names ? nnames : 0,
		.validating = 1,
		.err = err,
	};
	return run(&p, NULL);
}

/* Lexing ahead: the tokens of src, each name resolved against names and
 * funcs once, so that an expression evaluated for many values (the
 * dispatch library's derivation searches thousands of variants) is not
 * lexed and its names looked up by string every time. */
int expr_lex(const char *src, const char *const *names, size_t nnames, expr_lexed **out,
	     at_error *err)
{
	*out = NULL;
	if (!src)
		return at_error_set(err, "no expression given");
	expr_lexed *e = calloc(1, sizeof *e);
	size_t cap = 16;
	if (e)
		e->src = strdup(src), e->toks = malloc(cap * sizeof *e->toks);
	if (!e || !e->src || !e->toks) {
		expr_lexed_free(e);
		return at_error_set(err, "out of memory lexing \"%s\"", src);
	}
	struct parser p = { .src = e->src, .err = err };
	do {
		next(&p);
		if (p.rc) {
			expr_lexed_free(e);
			return p.rc;
		}
		struct token t = p.tok;
		t.var = t.func = -1;
		for (size_t i = 0; t.kind == T_NAME && names && i < nnames; i++)
			if (token_is(&t, e->src, names[i])) {
				t.var = (int)i;
				break;
			}
		for (size_t i = 0; t.kind == T_NAME && i < sizeof funcs / sizeof funcs[0]; i++)
			if (token_is(&t, e->src, funcs[i].name))
				t.func = (int)i;
		if (e->ntoks == cap) {
			struct token *grown = realloc(e->toks, 2 * cap * sizeof *grown);
			if (!grown) {
				expr_lexed_free(e);
				return at_error_set(err, "out of memory lexing \"%s\"", src);
			}
			e->toks = grown;
			cap *= 2;
		}
		e->toks[e->ntoks++] = t;
	} while (p.tok.kind != T_END);
	*out = e;
	return EXPR_OK;
}

int expr_eval_lexed(const expr_lexed *e, const long long *values, long long *out,
		    at_error *err)
{
	struct parser p = { .src = e->src, .lexed = e, .values = values, .err = err };
	return run(&p, out);
}

int expr_lexed_uses(const expr_lexed *e, size_t name)
{
	for (size_t i = 0; i < e->ntoks; i++)
		if (e->toks[i].kind == T_NAME && e->toks[i].var == (int)name)
			return 1;
	return 0;
}

void expr_lexed_free(expr_lexed *e)
{
	if (!e)
		return;
	free(e->src);
	free(e->toks);
	free(e);
}
