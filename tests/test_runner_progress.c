/* The progress lines of `make test` (tests/runner_progress.h): what they
 * say, and that the test binary prints them while Criterion's "Synthesis"
 * line stays its last. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/runner_progress.h"

TestSuite(runner_progress);

Test(runner_progress, a_line_as_the_run_starts_and_as_each_suite_ends)
{
	rp_run r;
	rp_init(&r, 100);
	rp_add_suite(&r, "config", 3);
	rp_add_suite(&r, "filtered_out", 0);
	for (int i = 0; i < 10; i++) {
		char name[16];
		snprintf(name, sizeof name, "s%d", i);
		rp_add_suite(&r, name, 1);
	}
	char out[512];
	rp_start_line(&r, out, sizeof out);
	cr_assert_str_eq(out, "[ 0/11] 13 tests in 11 suites\n");
	rp_test_started(&r, "config", 101);
	rp_test_started(&r, "config", 102);
	rp_test_ended(&r, "config", "a", RP_PASSED, 0.5, 102.5, out, sizeof out);
	cr_assert_str_eq(out, "");
	rp_test_ended(&r, "config", "b", RP_FAILED, 0.1, 103, out, sizeof out);
	cr_assert_str_eq(out, "");
	rp_test_ended(&r, "config", "c", RP_SKIPPED, 0, 175.25, out, sizeof out);
	cr_assert_str_eq(out, "[ 1/11] config: 1 passed, 1 FAILED, 1 skipped in 74.2 s (1m15s so far)\n");
	/* an extra end (a crash after its fini) changes nothing */
	rp_test_ended(&r, "config", "c", RP_FAILED, 0, 176, out, sizeof out);
	cr_assert_str_eq(out, "");
	rp_free(&r);
}

Test(runner_progress, a_slow_test_gets_a_line_of_its_own)
{
	rp_run r;
	rp_init(&r, 0);
	rp_add_suite(&r, "split", 2);
	rp_add_suite(&r, "big", 1);
	char out[512];
	rp_start_line(&r, out, sizeof out);
	cr_assert_str_eq(out, "[0/2] 3 tests in 2 suites\n");
	rp_test_started(&r, "split", 1);
	rp_test_ended(&r, "split", "every_variant", RP_PASSED, 12.34, 13.5, out, sizeof out);
	cr_assert_str_eq(out, "[slow] split::every_variant: passed in 12.3 s (1 of 2 in its suite)\n");
	rp_test_ended(&r, "split", "quick", RP_PASSED, 9.9, 14, out, sizeof out);
	cr_assert_str_eq(out, "[1/2] split: 2 passed in 13.0 s (14s so far)\n");
	rp_test_started(&r, "big", 14);
	rp_test_ended(&r, "big", "huge", RP_FAILED, 11, 25, out, sizeof out);
	cr_assert_str_eq(out, "[slow] big::huge: FAILED in 11.0 s (1 of 1 in its suite)\n"
			      "[2/2] big: 0 passed, 1 FAILED in 11.0 s (25s so far)\n");
	rp_free(&r);
	rp_init(&r, 0);
	rp_add_suite(&r, "one", 1);
	rp_start_line(&r, out, sizeof out);
	cr_assert_str_eq(out, "[0/1] 1 test in 1 suite\n");
	rp_free(&r);
}

/* The test binary itself on one quick suite (each test runs in a fresh
 * process, so this one running it is no recursion of any harm; without
 * BoxFort's variable, which would make it take itself for a test's). */
Test(runner_progress, the_test_binary_prints_them_before_the_synthesis)
{
	cr_assert_eq(access("build/tests", X_OK), 0, "build/tests is missing");
	FILE *p = popen("env -u BXFI_MAP build/tests --jobs 2 --filter 'shape_bound/*' 2>&1", "r");
	cr_assert_not_null(p);
	static char text[1 << 16];
	size_t len = fread(text, 1, sizeof text - 1, p);
	text[len] = '\0';
	int st = pclose(p);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d:\n%s", st, text);
	const char *start = strstr(text, "[0/1] 4 tests in 1 suite\n");
	const char *suite = strstr(text, "[1/1] shape_bound: 4 passed in ");
	const char *synthesis = strstr(text, "[====] Synthesis: Tested: 4 | Passing: 4 |");
	cr_assert(start && suite && synthesis && start < suite && suite < synthesis, "%s", text);
	cr_assert_null(strchr(synthesis, '\n') ? strchr(strchr(synthesis, '\n') + 1, '[') : NULL,
		       "a line after the synthesis:\n%s", text);
}
