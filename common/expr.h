/* Integer expressions over named variables. Template manifests use them for
 * constraints ("threads % 32 == 0") and launch geometry ("threads / lanes"),
 * so that a new template needs no change to the tuner.
 *
 * Grammar (C precedence and semantics, 64-bit signed integers):
 *   expr    := cond
 *   cond    := or ( '?' expr ':' cond )?
 *   or      := and ( '||' and )*
 *   and     := cmp ( '&&' cmp )*
 *   cmp     := sum ( ('=='|'!='|'<'|'<='|'>'|'>=') sum )*
 *   sum     := term ( ('+'|'-') term )*
 *   term    := unary ( ('*'|'/'|'%') unary )*
 *   unary   := ('-'|'!'|'+') unary | primary
 *   primary := INTEGER | NAME | NAME '(' expr (',' expr)* ')' | '(' expr ')'
 * Functions: min(a,b), max(a,b), ceil_div(a,b), log2(a) (floor), is_pow2(a).
 * Names are [A-Za-z_][A-Za-z0-9_]*. Division or modulo by zero is an error. */
#ifndef AT_COMMON_EXPR_H
#define AT_COMMON_EXPR_H

#include <stddef.h>

#include "common/error.h"

typedef struct expr_var {
	const char *name;
	long long value;
} expr_var;

enum {
	EXPR_OK = 0,
	EXPR_ERROR = -1,   /* syntax error, division by zero, bad call */
	EXPR_UNKNOWN = -2, /* names a variable not in vars (err names it) */
};

/* Evaluates src with the given variables (looked up by name; the first match
 * wins). Returns EXPR_OK and sets *out, or EXPR_ERROR / EXPR_UNKNOWN with a
 * message in err that quotes the expression and the column of the problem.
 * Thread-safe: no global state. */
int expr_eval(const char *src, const expr_var *vars, size_t nvars,
	      long long *out, at_error *err);

/* Checks syntax and that every name is in names[0..nnames); never fails on
 * division by zero. For validating a manifest when it is loaded. */
int expr_validate(const char *src, const char *const *names, size_t nnames,
		  at_error *err);

/* An expression lexed once, its names resolved against a list of names, to
 * be evaluated many times for different values (opaque). */
typedef struct expr_lexed expr_lexed;

/* Lexes src, resolving each name against names[0..nnames) (a name not
 * there is an EXPR_UNKNOWN error when an evaluation reaches it, as with
 * expr_eval). Returns EXPR_OK and a new *out, or EXPR_ERROR for a lexical
 * error or no memory, with a message in err. */
int expr_lex(const char *src, const char *const *names, size_t nnames, expr_lexed **out,
	     at_error *err);

/* Evaluates e with values[i] the value of the i-th name it was lexed with:
 * the same results and errors as expr_eval of its source with those
 * variables. Thread-safe: e is only read. */
int expr_eval_lexed(const expr_lexed *e, const long long *values, long long *out,
		    at_error *err);

/* 1 if e names the name-th of the names it was lexed with, else 0. */
int expr_lexed_uses(const expr_lexed *e, size_t name);

/* Frees e; NULL is a no-op. */
void expr_lexed_free(expr_lexed *e);

#endif
