/* Running build/autotune as a user does (tests/test_run_fixture.c): a
 * subprocess with chosen arguments and environment, in the test's temporary
 * folder (tests/tmp_folder.h: the suite's .init and .fini are tmp_setup and
 * tmp_teardown), its exit status, stdout and stderr captured. One copy for
 * every test of the command line. */
#ifndef TESTS_TEST_RUN_FIXTURE_H
#define TESTS_TEST_RUN_FIXTURE_H

#include <stddef.h>

#include "tests/tmp_folder.h"

typedef struct tr_result {
	int status; /* exit status */
	char *out, *err;
} tr_result;

/* Runs build/autotune ARGS... (NULL-terminated); env holds "NAME=value" to
 * set and "NAME" to unset (NULL-terminated, or NULL). $AUTOTUNE_DB is
 * tmp_path("env.db") unless env sets it; $AUTOTUNE_TEMPLATES is unset. */
tr_result tr_run(const char *const *args, const char *const *env);

/* tr_run, calling before_exec (if not NULL) in the child just before the
 * program starts (after its output is redirected): e.g. to drop rights. */
tr_result tr_run_as(const char *const *args, const char *const *env, void (*before_exec)(void));
void tr_free(tr_result *r);

/* Fail the test, showing what the command wrote, unless it exited with
 * status / text holds want. */
void tr_expect_status(const tr_result *r, int status);
void tr_expect_in(const char *text, const char *want);

/* Runs `autotune command option [value]` for each of the n cases
 * { option, value or NULL, message } and expects a usage error of each:
 * exit status 2, the message in stderr, nothing on stdout. */
void tr_expect_usage_errors(const char *command, const char *const cases[][3], size_t n);

/* A tiny template (folder tmp_path("templates"): a one-line kernel per
 * value of k, 1 to 13, quick to compile) and a config of ten shapes using
 * it (tmp_path("c.yaml"): f32, M = 64, N = 64 to 640 step 64; four of the
 * thirteen kernels each), for tests of what a sweep does around its
 * compiles. */
void tr_write_tiny_sweep(void);

/* RUN("sweep", "--db", path): tr_run with these arguments, no environment. */
#define RUN(...) tr_run((const char *const[]){ __VA_ARGS__, NULL }, NULL)

#endif
