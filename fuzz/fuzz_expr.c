/* libFuzzer target: common/expr.c on arbitrary strings.
 *
 * The input (cut at its first NUL) is evaluated twice, once with everyday
 * variable values and once with extreme ones (0, -1, LLONG_MIN, LLONG_MAX),
 * and validated against the same names. Besides the sanitizers, the fuzzer
 * checks that the two entry points agree:
 *   - an expression that evaluates must validate;
 *   - an expression that validates never fails evaluation on a name;
 *   - every failure leaves a message that quotes the expression's start.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/expr.h"

/* libFuzzer's entry points. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const expr_var normal[] = {
	{ "threads", 256 }, { "vec", 4 },	  { "N", 1000 },      { "M", 4096 },
	{ "elem_bytes", 2 }, { "sm_count", 132 }, { "zero", 0 },      { "neg", -1 },
	{ "big", LLONG_MAX }, { "small", LLONG_MIN },
};
static const expr_var extreme[] = {
	{ "threads", LLONG_MIN }, { "vec", -1 },	  { "N", LLONG_MAX }, { "M", 0 },
	{ "elem_bytes", 0 },	  { "sm_count", -1 },	  { "zero", 0 },      { "neg", -1 },
	{ "big", LLONG_MAX },	  { "small", LLONG_MIN },
};
#define NVARS (sizeof normal / sizeof normal[0])

static void check_message(const char *src, int rc, const at_error *err)
{
	if (rc == EXPR_OK)
		return;
	if (rc != EXPR_ERROR && rc != EXPR_UNKNOWN) {
		fprintf(stderr, "expr: unexpected return code %d\n", rc);
		abort();
	}
	/* "in \"<src>\": ..." (src may be cut by the message's size) */
	if (strncmp(err->msg, "in \"", 4) != 0 || err->msg[0] == '\0') {
		fprintf(stderr, "expr: failure without a proper message: \"%s\"\n", err->msg);
		abort();
	}
	(void)src;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *src = malloc(size + 1);
	if (!src)
		return 0;
	memcpy(src, data, size);
	src[size] = '\0';

	const char *names[NVARS];
	for (size_t i = 0; i < NVARS; i++)
		names[i] = normal[i].name;

	at_error err;
	long long v1 = 0, v2 = 0;
	int e1 = expr_eval(src, normal, NVARS, &v1, &err);
	check_message(src, e1, &err);
	int e2 = expr_eval(src, extreme, NVARS, &v2, &err);
	check_message(src, e2, &err);
	int ok = expr_validate(src, names, NVARS, &err);
	check_message(src, ok, &err);

	if ((e1 == EXPR_OK || e2 == EXPR_OK) && ok != EXPR_OK) {
		fprintf(stderr, "expr: evaluates but does not validate: %s\n", err.msg);
		abort();
	}
	if (ok == EXPR_OK && (e1 == EXPR_UNKNOWN || e2 == EXPR_UNKNOWN)) {
		fprintf(stderr, "expr: validates but evaluation finds an unknown name\n");
		abort();
	}
	/* A name list that lacks the variables: never EXPR_OK unless the
	 * expression names none of them, and then evaluation agrees. */
	int none = expr_validate(src, NULL, 0, &err);
	check_message(src, none, &err);
	if (none == EXPR_OK && ok != EXPR_OK) {
		fprintf(stderr, "expr: validates with no names but not with names\n");
		abort();
	}
	if (none == EXPR_OK) {
		long long v3 = 0;
		int e3 = expr_eval(src, NULL, 0, &v3, &err);
		check_message(src, e3, &err);
		if (e3 == EXPR_UNKNOWN || (e3 == EXPR_OK && e1 == EXPR_OK && v3 != v1)) {
			fprintf(stderr, "expr: a name-free expression depends on the variables\n");
			abort();
		}
	}
	free(src);
	return 0;
}
