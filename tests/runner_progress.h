/* The progress lines of `make test` (no tests here; tests/runner_hooks.c
 * feeds it from Criterion's hooks, tests/test_runner_progress.c tests it).
 * Criterion alone prints nothing but failures until its closing
 * "Synthesis" line, and the template tests keep two cores busy for
 * minutes: so a line when the run starts, one as each suite's last test
 * ends, and one for each test that ran RP_SLOW_S or longer. They begin
 * with "[" as Criterion's own lines do; "Synthesis" stays the last. */
#ifndef TESTS_RUNNER_PROGRESS_H
#define TESTS_RUNNER_PROGRESS_H

#include <stddef.h>

#define RP_SLOW_S 10.0

typedef struct rp_suite {
	char name[64];
	size_t total, ended, failed, skipped;
	double start_s; /* when its first test started; < 0: none yet */
} rp_suite;

typedef struct rp_run {
	rp_suite *suites;
	size_t nsuites, ntests, done;
	double start_s;
} rp_run;

typedef enum rp_outcome { RP_PASSED, RP_FAILED, RP_SKIPPED } rp_outcome;

void rp_init(rp_run *r, double now_s);
void rp_free(rp_run *r);

/* A suite with n tests to run (after --filter; a parameterized test once
 * per parameter); one with none is left out. */
void rp_add_suite(rp_run *r, const char *name, size_t n);

/* The opening line, "[ 0/49] 560 tests in 49 suites\n". */
void rp_start_line(const rp_run *r, char *out, size_t cap);

/* A test of suite started (its wall time counts from its suite's first). */
void rp_test_started(rp_run *r, const char *suite, double now_s);

/* A test ended, after elapsed_s: out gets its line if it was slow
 * ("[ slow] suite::test: passed in 14.2 s (3 of 21 in its suite)\n"; a
 * parameterized test's runs share its name) and its suite's if it was
 * the suite's last ("[12/49] suite: 26 passed, 1 failed in 31.2 s (1m02s
 * so far)\n"), or "". */
void rp_test_ended(rp_run *r, const char *suite, const char *test, rp_outcome outcome,
		   double elapsed_s, double now_s, char *out, size_t cap);

#endif
