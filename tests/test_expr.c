/* Tests for common/expr.c: values, precedence, functions, variables and the
 * exact error codes, messages and columns that manifest authors will see. */
#include <criterion/criterion.h>
#include <limits.h>
#include <string.h>

#include "common/expr.h"

static const expr_var test_vars[] = {
	{ "threads", 256 },
	{ "vec", 4 },
	{ "N", 1000 },
	{ "zero", 0 },
	{ "neg", -7 },
	{ "vec", 99 }, /* shadowed: the first match wins */
};
#define NTEST_VARS (sizeof test_vars / sizeof test_vars[0])

static long long eval_ok(const char *src)
{
	long long v = 0x5a5a;
	at_error err = { { 0 } };
	int rc = expr_eval(src, test_vars, NTEST_VARS, &v, &err);
	cr_assert_eq(rc, EXPR_OK, "\"%s\" failed: %s", src, err.msg);
	return v;
}

static void expect_value(const char *src, long long want)
{
	long long got = eval_ok(src);
	cr_expect_eq(got, want, "\"%s\" = %lld, want %lld", src, got, want);
}

static void expect_error(const char *src, int rc_want, const char *msg)
{
	long long v = 12345;
	at_error err = { { 0 } };
	int rc = expr_eval(src, test_vars, NTEST_VARS, &v, &err);
	cr_expect_eq(rc, rc_want, "\"%s\": rc %d, want %d (%s)", src, rc,
		     rc_want, err.msg);
	cr_expect_str_eq(err.msg, msg);
	cr_expect_eq(v, 12345, "\"%s\": *out written on error", src);
}

Test(expr, literals_and_whitespace)
{
	expect_value("0", 0);
	expect_value("42", 42);
	expect_value("  \t 7 \n", 7);
	expect_value("9223372036854775807", LLONG_MAX);
	expect_value("007", 7);
}

Test(expr, precedence)
{
	expect_value("1 + 2 * 3", 7);
	expect_value("(1 + 2) * 3", 9);
	expect_value("2 * 3 + 1", 7);
	expect_value("1 + 6 / 2", 4);
	expect_value("1 + 7 % 4", 4);
	expect_value("1 + 2 < 4", 1);       /* sum binds tighter than cmp */
	expect_value("1 < 2 == 2 < 3", 1);
	expect_value("1 == 1 && 0", 0);
	expect_value("0 && 0 || 1", 1);     /* && binds tighter than || */
	expect_value("1 || 0 && 0", 1);
	expect_value("0 || 1 ? 5 : 6", 5);  /* ?: is lowest */
	expect_value("-2 * 3", -6);
	expect_value("!0 + 1", 2);          /* unary binds tightest */
	expect_value("-(2 + 3)", -5);
}

Test(expr, associativity)
{
	expect_value("10 - 4 - 3", 3);
	expect_value("100 / 10 / 5", 2);
	expect_value("17 % 10 % 4", 3);
	expect_value("2 < 3 == 1", 1);
	expect_value("3 > 2 > 1", 0); /* (3 > 2) > 1 is 1 > 1 */
	expect_value("1 ? 2 : 0 ? 3 : 4", 2);
	expect_value("0 ? 2 : 0 ? 3 : 4", 4);
	expect_value("0 ? 2 : 1 ? 3 : 4", 3);
	expect_value("1 ? 0 ? 5 : 6 : 7", 6);
}

Test(expr, comparisons)
{
	expect_value("3 == 3", 1);
	expect_value("3 != 3", 0);
	expect_value("2 < 3", 1);
	expect_value("3 < 3", 0);
	expect_value("3 <= 3", 1);
	expect_value("4 <= 3", 0);
	expect_value("4 > 3", 1);
	expect_value("3 > 3", 0);
	expect_value("3 >= 3", 1);
	expect_value("2 >= 3", 0);
	expect_value("5 && 7", 1); /* logical results are 0 or 1 */
	expect_value("0 || -3", 1);
}

Test(expr, unary)
{
	expect_value("-5", -5);
	expect_value("- -5", 5);
	expect_value("--5", 5);
	expect_value("+5", 5);
	expect_value("!5", 0);
	expect_value("!!5", 1);
	expect_value("!0", 1);
	expect_value("-neg", 7);
}

Test(expr, division_truncates_like_c)
{
	expect_value("7 / 2", 3);
	expect_value("-7 / 2", -3);
	expect_value("7 % 3", 1);
	expect_value("-7 % 3", -1);
	expect_value("7 / -1", -7);
	expect_value("(-9223372036854775807 - 1) % -1", 0);
}

Test(expr, functions)
{
	expect_value("min(3, 5)", 3);
	expect_value("min(5, -3)", -3);
	expect_value("max(3, 5)", 5);
	expect_value("max(-5, -3)", -3);
	expect_value("ceil_div(10, 4)", 3);
	expect_value("ceil_div(12, 4)", 3);
	expect_value("ceil_div(0, 4)", 0);
	expect_value("ceil_div(1, 4)", 1);
	expect_value("ceil_div(-10, 4)", -2);
	expect_value("ceil_div(10, -4)", -2);
	expect_value("ceil_div(-10, -4)", 3);
	expect_value("log2(1)", 0);
	expect_value("log2(2)", 1);
	expect_value("log2(1023)", 9);
	expect_value("log2(1024)", 10);
	expect_value("log2(9223372036854775807)", 62);
	expect_value("is_pow2(1)", 1);
	expect_value("is_pow2(64)", 1);
	expect_value("is_pow2(96)", 0);
	expect_value("is_pow2(0)", 0);
	expect_value("is_pow2(-4)", 0);
	expect_value("max(min(8, 3), ceil_div(N, threads))", 4);
	expect_value("min (1, 2)", 1); /* blank before '(' is allowed */
}

Test(expr, variables)
{
	expect_value("threads", 256);
	expect_value("threads / vec", 64); /* first "vec" wins */
	expect_value("ceil_div(N, threads * vec)", 1);
	expect_value("threads % 32 == 0 && is_pow2(vec)", 1);
	expect_value("zero", 0);
	expect_value("N > 512 ? threads : 128", 256);
}

Test(expr, short_circuit_skips_evaluation)
{
	expect_value("zero != 0 && N / zero > 1", 0);
	expect_value("zero == 0 || N / zero > 1", 1);
	expect_value("zero ? N / zero : 3", 3);
	expect_value("1 ? 3 : N % zero", 3);
	expect_value("0 && log2(0)", 0);
}

Test(expr, names_are_checked_on_dead_branches)
{
	/* A constraint naming a missing variable must be skipped as a whole,
	 * whatever the values of the others. */
	expect_error("0 && M > 1", EXPR_UNKNOWN,
		     "in \"0 && M > 1\": unknown name \"M\" at column 6");
}

Test(expr, names_vars_null)
{
	long long v = 0;
	at_error err = { { 0 } };
	cr_expect_eq(expr_eval("2 * 3", NULL, 0, &v, &err), EXPR_OK);
	cr_expect_eq(v, 6);
	cr_expect_eq(expr_eval("x", NULL, 0, &v, &err), EXPR_UNKNOWN);
	cr_expect_str_eq(err.msg, "in \"x\": unknown name \"x\" at column 1");
	cr_expect_eq(expr_eval(NULL, NULL, 0, &v, &err), EXPR_ERROR);
	/* err may be NULL */
	cr_expect_eq(expr_eval("1 +", NULL, 0, &v, NULL), EXPR_ERROR);
}

Test(expr, evaluation_errors)
{
	expect_error("threads % 0", EXPR_ERROR,
		     "in \"threads % 0\": division by zero at column 9");
	expect_error("1 / zero", EXPR_ERROR,
		     "in \"1 / zero\": division by zero at column 3");
	expect_error("1 + ceil_div(4, 0)", EXPR_ERROR,
		     "in \"1 + ceil_div(4, 0)\": division by zero at column 5");
	expect_error("log2(0)", EXPR_ERROR,
		     "in \"log2(0)\": log2 of 0 (must be positive) at column 1");
	expect_error("log2(neg)", EXPR_ERROR,
		     "in \"log2(neg)\": log2 of -7 (must be positive) at column 1");
}

Test(expr, overflow_errors)
{
	expect_error("9223372036854775808", EXPR_ERROR,
		     "in \"9223372036854775808\": integer '9223372036854775808' is out of range at column 1");
	expect_error("(-9223372036854775807 - 1) / -1", EXPR_ERROR,
		     "in \"(-9223372036854775807 - 1) / -1\": integer overflow at column 28");
	expect_error("ceil_div(-9223372036854775807 - 1, -1)", EXPR_ERROR,
		     "in \"ceil_div(-9223372036854775807 - 1, -1)\": integer overflow at column 1");
	expect_error("9223372036854775807 + 1", EXPR_ERROR,
		     "in \"9223372036854775807 + 1\": integer overflow at column 21");
	expect_error("-9223372036854775807 - 2", EXPR_ERROR,
		     "in \"-9223372036854775807 - 2\": integer overflow at column 22");
	expect_error("4611686018427387904 * 2", EXPR_ERROR,
		     "in \"4611686018427387904 * 2\": integer overflow at column 21");
	expect_error("-(-9223372036854775807 - 1)", EXPR_ERROR,
		     "in \"-(-9223372036854775807 - 1)\": integer overflow at column 1");
}

Test(expr, unknown_names)
{
	expect_error("foo + 1", EXPR_UNKNOWN,
		     "in \"foo + 1\": unknown name \"foo\" at column 1");
	expect_error("threads * thread", EXPR_UNKNOWN,
		     "in \"threads * thread\": unknown name \"thread\" at column 11");
	expect_error("Threads", EXPR_UNKNOWN,
		     "in \"Threads\": unknown name \"Threads\" at column 1");
	/* The first error wins, whatever its kind. */
	expect_error("1 / 0 + foo", EXPR_ERROR,
		     "in \"1 / 0 + foo\": division by zero at column 3");
	expect_error("foo + 1 / 0", EXPR_UNKNOWN,
		     "in \"foo + 1 / 0\": unknown name \"foo\" at column 1");
}

Test(expr, syntax_errors)
{
	expect_error("", EXPR_ERROR,
		     "in \"\": expected a number, a name or '(', got end of expression at column 1");
	expect_error("1 +", EXPR_ERROR,
		     "in \"1 +\": expected a number, a name or '(', got end of expression at column 4");
	expect_error("1 + * 2", EXPR_ERROR,
		     "in \"1 + * 2\": expected a number, a name or '(', got '*' at column 5");
	expect_error("(1 + 2", EXPR_ERROR,
		     "in \"(1 + 2\": expected ')', got end of expression at column 7");
	expect_error("1 ? 2", EXPR_ERROR,
		     "in \"1 ? 2\": expected ':', got end of expression at column 6");
	expect_error("1 ? 2 : ", EXPR_ERROR,
		     "in \"1 ? 2 : \": expected a number, a name or '(', got end of expression at column 9");
	expect_error("min(1 2)", EXPR_ERROR,
		     "in \"min(1 2)\": expected ',' or ')', got '2' at column 7");
	expect_error("()", EXPR_ERROR,
		     "in \"()\": expected a number, a name or '(', got ')' at column 2");
}

Test(expr, trailing_garbage)
{
	expect_error("1 2", EXPR_ERROR,
		     "in \"1 2\": expected an operator or end of expression, got '2' at column 3");
	expect_error("threads)", EXPR_ERROR,
		     "in \"threads)\": expected an operator or end of expression, got ')' at column 8");
	expect_error("1 + 2 vec", EXPR_ERROR,
		     "in \"1 + 2 vec\": expected an operator or end of expression, got 'vec' at column 7");
}

Test(expr, lexical_errors)
{
	expect_error("1 @ 2", EXPR_ERROR,
		     "in \"1 @ 2\": unexpected character '@' at column 3");
	expect_error("vec = 4", EXPR_ERROR,
		     "in \"vec = 4\": unexpected '=' (did you mean '=='?) at column 5");
	expect_error("1 & 1", EXPR_ERROR,
		     "in \"1 & 1\": unexpected '&' (did you mean '&&'?) at column 3");
	expect_error("1 | 1", EXPR_ERROR,
		     "in \"1 | 1\": unexpected '|' (did you mean '||'?) at column 3");
	expect_error("12abc", EXPR_ERROR,
		     "in \"12abc\": invalid integer '12abc' at column 1");
	expect_error("0x10", EXPR_ERROR,
		     "in \"0x10\": invalid integer '0x10' at column 1");
	expect_error("1 +\x01", EXPR_ERROR,
		     "in \"1 +\x01\": unexpected byte 0x01 at column 4");
}

Test(expr, call_errors)
{
	expect_error("foo(1)", EXPR_ERROR,
		     "in \"foo(1)\": unknown function \"foo\" at column 1");
	expect_error("1 + min(1)", EXPR_ERROR,
		     "in \"1 + min(1)\": min takes 2 arguments, got 1 at column 5");
	expect_error("max(1, 2, 3)", EXPR_ERROR,
		     "in \"max(1, 2, 3)\": max takes 2 arguments, got 3 at column 1");
	expect_error("log2()", EXPR_ERROR,
		     "in \"log2()\": log2 takes 1 argument, got 0 at column 1");
	expect_error("is_pow2(1, 2)", EXPR_ERROR,
		     "in \"is_pow2(1, 2)\": is_pow2 takes 1 argument, got 2 at column 1");
}

Test(expr, nesting_limit)
{
	char deep[1200];
	size_t n = 0;
	for (int i = 0; i < 500; i++)
		deep[n++] = '(';
	deep[n++] = '1';
	for (int i = 0; i < 500; i++)
		deep[n++] = ')';
	deep[n] = '\0';
	long long v;
	at_error err = { { 0 } };
	cr_expect_eq(expr_eval(deep, NULL, 0, &v, &err), EXPR_ERROR);
	cr_expect(strstr(err.msg, "\": expression nested too deeply at column 201"),
		  "%s", err.msg);
	/* Ordinary nesting is fine. */
	expect_value("((((((((((1))))))))))", 1);
}

static const char *const test_names[] = { "threads", "vec", "N" };
#define NTEST_NAMES (sizeof test_names / sizeof test_names[0])

static int validate(const char *src, at_error *err)
{
	return expr_validate(src, test_names, NTEST_NAMES, err);
}

Test(expr, validate_accepts)
{
	at_error err = { { 0 } };
	cr_expect_eq(validate("threads % 32 == 0", &err), EXPR_OK, "%s", err.msg);
	cr_expect_eq(validate("threads / 0", &err), EXPR_OK, "%s", err.msg);
	cr_expect_eq(validate("N % (vec - 4)", &err), EXPR_OK, "%s", err.msg);
	cr_expect_eq(validate("log2(0) + ceil_div(N, 0)", &err), EXPR_OK,
		     "%s", err.msg);
	cr_expect_eq(validate("9223372036854775807 + 1", &err), EXPR_OK,
		     "%s", err.msg);
	cr_expect_eq(validate("N > 0 ? min(threads, N) : 1", &err), EXPR_OK,
		     "%s", err.msg);
}

Test(expr, validate_rejects)
{
	at_error err = { { 0 } };
	cr_expect_eq(validate("threads * lanes", &err), EXPR_UNKNOWN);
	cr_expect_str_eq(err.msg,
			 "in \"threads * lanes\": unknown name \"lanes\" at column 11");
	cr_expect_eq(validate("0 && M", &err), EXPR_UNKNOWN);
	cr_expect_str_eq(err.msg, "in \"0 && M\": unknown name \"M\" at column 6");
	cr_expect_eq(validate("threads +", &err), EXPR_ERROR);
	cr_expect_str_eq(err.msg,
			 "in \"threads +\": expected a number, a name or '(', got end of expression at column 10");
	cr_expect_eq(validate("min(N)", &err), EXPR_ERROR);
	cr_expect_str_eq(err.msg,
			 "in \"min(N)\": min takes 2 arguments, got 1 at column 1");
	cr_expect_eq(validate("vec vec", &err), EXPR_ERROR);
	cr_expect_eq(expr_validate("x", NULL, 0, &err), EXPR_UNKNOWN);
	cr_expect_eq(expr_validate("1", NULL, 0, &err), EXPR_OK);
}

/* Lexed once, evaluated for values: the very results, codes and messages of
 * expr_eval over the same source and variables. */
Test(expr, lexed_expressions_evaluate_as_expr_eval_does)
{
	static const char *const names[] = { "threads", "vec", "N", "zero", "neg" };
	const long long values[] = { 256, 4, 1000, 0, -7 };
	static const char *const srcs[] = {
		"threads * (vec - 1) < N + (N % vec ? vec - 1 : 0)",
		"zero ? 1 / zero : max(threads, ceil_div(N, vec)) + neg",
		"is_pow2(threads) && log2(threads) == 8 || 1 / zero",
		"1 / zero",
		"missing + 1",
		"threads +",
		"-neg % 3 * !zero",
	};
	for (size_t i = 0; i < sizeof srcs / sizeof *srcs; i++) {
		long long want = 0, got = 0;
		at_error werr = { { 0 } }, gerr = { { 0 } };
		int wrc = expr_eval(srcs[i], test_vars, 5, &want, &werr);
		expr_lexed *e;
		int lrc = expr_lex(srcs[i], names, 5, &e, &gerr);
		int grc = lrc == EXPR_OK ? expr_eval_lexed(e, values, &got, &gerr) : lrc;
		cr_assert_eq(grc, wrc, "\"%s\": %d, expr_eval %d", srcs[i], grc, wrc);
		if (wrc == EXPR_OK)
			cr_assert_eq(got, want, "\"%s\": %lld, expr_eval %lld", srcs[i], got, want);
		else
			cr_assert_str_eq(gerr.msg, werr.msg);
		expr_lexed_free(e);
	}
	expr_lexed_free(NULL);
}
