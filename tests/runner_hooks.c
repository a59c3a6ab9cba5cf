/* What Criterion's runner process does besides starting the tests and
 * printing their results (no tests here). Only hooks run in it: each test
 * runs in a process of its own, executed afresh (Criterion's BoxFort), so
 * nothing here touches a test.
 *
 * Progress: a line as the run starts, as each suite's last test ends and
 * for each slow test (tests/runner_progress.h). Criterion's POST_SUITE
 * comes when a suite's last test starts, not when it ends, so the suites'
 * tests are counted here: a test ends with POST_FINI, or TEST_CRASH when
 * it crashed (it then has no POST_FINI).
 *
 * Leaks: the runner leaks a block of its own (48 bytes, with some --filter
 * patterns, the whole stack inside libcriterion), which LeakSanitizer
 * reported as an ERROR after "Synthesis" in `make sanitize`. A suppression
 * could not name it without hiding our tests' leaks as well: their stacks
 * end in libcriterion too (criterion_internal_test_main calls each test).
 * So under AddressSanitizer the runner stops tracking what it allocates
 * before any test starts; the tests' processes are tracked as before. */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <criterion/parameterized.h>

#include <stdio.h>
#include <time.h>

#include "tests/runner_progress.h"

#if defined(__SANITIZE_ADDRESS__)
#define RUNNER_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RUNNER_UNDER_ASAN 1
#endif
#endif
#ifdef RUNNER_UNDER_ASAN
#include <sanitizer/lsan_interface.h>
#endif

static rp_run run;

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void print(const char *text)
{
	if (*text) {
		fputs(text, stderr);
		fflush(stderr);
	}
}

/* How many times the runner runs t: once a parameter for a parameterized
 * test (Criterion's private fields, as its own runner reads them). */
static size_t runs_of(struct criterion_test *t)
{
	if (t->data->kind_ != CR_TEST_PARAMETERIZED || !t->data->param_)
		return 1;
	struct criterion_test_params p = t->data->param_();
	size_t n = p.length;
	if (p.cleanup)
		p.cleanup(&p);
	return n;
}

ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
#ifdef RUNNER_UNDER_ASAN
	__lsan_disable();
#endif
	rp_init(&run, now_s());
	FOREACH_SET(struct criterion_suite_set *s, set->suites) {
		size_t runs = 0; /* not n: FOREACH_SET's own variable */
		int off = s->suite.data && s->suite.data->disabled;
		if (s->tests && !off) {
			FOREACH_SET(struct criterion_test *t, s->tests) {
				if (!t->data->disabled)
					runs += runs_of(t);
			}
		}
		rp_add_suite(&run, s->suite.name, runs);
	}
	char line[128];
	rp_start_line(&run, line, sizeof line);
	print(line);
}

ReportHook(PRE_INIT)(struct criterion_test *t)
{
	rp_test_started(&run, t->category, now_s());
}

static void ended(struct criterion_test_stats *s, rp_outcome outcome)
{
	char lines[1024];
	rp_test_ended(&run, s->test->category, s->test->name, outcome, s->elapsed_time, now_s(),
		      lines, sizeof lines);
	print(lines);
}

ReportHook(POST_FINI)(struct criterion_test_stats *s)
{
	ended(s, s->test_status == CR_STATUS_SKIPPED ? RP_SKIPPED
		 : s->test_status == CR_STATUS_PASSED ? RP_PASSED
						      : RP_FAILED);
}

ReportHook(TEST_CRASH)(struct criterion_test_stats *s)
{
	ended(s, RP_FAILED);
}

ReportHook(POST_ALL)(struct criterion_global_stats *s)
{
	(void)s;
	rp_free(&run);
}
