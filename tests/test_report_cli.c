/* Tests of `autotune report` as a user runs it: build/autotune (built by
 * `make test` before the tests run, from the repository root) in a
 * subprocess, its exit status and stderr checked for success and for each
 * kind of bad input. Until the command is listed in tuner/cli/cli.c these tests
 * are skipped, saying so. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/test_report_fixture.h"
#include "tests/test_run_fixture.h"

TestSuite(report_cli, .init = tmp_setup, .fini = tmp_teardown);

/* Runs build/autotune report ARGS... (NULL-terminated, "report" first) with
 * tr_run; skips the test, saying why, while the command is not listed. */
static tr_result run_report(const char *const *args)
{
	tr_result r = tr_run(args, NULL);
	if (r.status == 2 && strstr(r.err, "unknown command \"report\"")) {
		tr_free(&r);
		tmp_teardown(); /* a skipped test does not reach the suite's .fini */
		cr_skip_test("build/autotune has no report command yet: list cmd_report in "
			     "tuner/cli/cli.c");
	}
	return r;
}

#define RUN_REPORT(...) run_report((const char *const[]){ "report", __VA_ARGS__, NULL })

Test(report_cli, writes_the_page)
{
	rf_make_db("t.db");
	tr_result r = RUN_REPORT("--db", tmp_path("t.db"), "-o", tmp_path("r.html"));
	tr_expect_status(&r, 0);
	cr_assert_str_eq(r.err, "");
	tr_free(&r);
	char *html = tmp_read(tmp_path("r.html"));
	cr_assert(strncmp(html, "<!DOCTYPE html>", 15) == 0);
	cr_assert_eq(rf_count(html, "<svg id=\"g0-curve-m64\""), 1);
	free(html);
	/* "-o -": standard output */
	r = RUN_REPORT("--db", tmp_path("t.db"), "-o", "-");
	tr_expect_status(&r, 0);
	cr_assert(strncmp(r.out, "<!DOCTYPE html>", 15) == 0, "stdout: %.80s", r.out);
	cr_assert_not_null(strstr(r.out, "</html>\n"));
	tr_free(&r);
	/* $AUTOTUNE_DB when there is no --db */
	rf_make_db("env.db");
	r = RUN_REPORT("-o", tmp_path("env.html"), "--heatmap", "64x256");
	tr_expect_status(&r, 0);
	tr_free(&r);
	html = tmp_read(tmp_path("env.html"));
	cr_assert_not_null(strstr(html, "Shape M = 64, N = 256 (chosen with --heatmap)"));
	free(html);
}

Test(report_cli, missing_database)
{
	tr_result r = RUN_REPORT("--db", tmp_path("missing.db"), "-o", tmp_path("r.html"));
	tr_expect_status(&r, 1);
	char want[600];
	snprintf(want, sizeof want, "autotune: %s: no such database\n", tmp_path("missing.db"));
	cr_assert_str_eq(r.err, want);
	cr_assert_neq(access(tmp_path("r.html"), F_OK), 0);
	tr_free(&r);
}

Test(report_cli, database_without_results)
{
	rf_make_empty_db("empty.db");
	tr_result r = RUN_REPORT("--db", tmp_path("empty.db"), "-o", tmp_path("r.html"));
	tr_expect_status(&r, 1);
	char want[600];
	snprintf(want, sizeof want, "autotune: %s has no results: run autotune sweep first\n",
		 tmp_path("empty.db"));
	cr_assert_str_eq(r.err, want);
	cr_assert_neq(access(tmp_path("r.html"), F_OK), 0);
	tr_free(&r);
}

Test(report_cli, unwritable_output)
{
	rf_make_db("t.db");
	const char *out = tmp_path("missing-folder/r.html");
	tr_result r = RUN_REPORT("--db", tmp_path("t.db"), "-o", out);
	tr_expect_status(&r, 1);
	char want[700];
	snprintf(want, sizeof want, "autotune: %s: cannot write: No such file or directory\n", out);
	cr_assert_str_eq(r.err, want);
	tr_free(&r);
}

Test(report_cli, usage_errors)
{
	tr_result r = RUN_REPORT("--bogus");
	tr_expect_status(&r, 2);
	/* the message, the usage lines and the option lines, then the hint */
	cr_assert(strncmp(r.err, "autotune report: unknown option --bogus\nusage: autotune report ",
			  strlen("autotune report: unknown option --bogus\nusage: autotune report ")) == 0,
		  "%s", r.err);
	cr_assert_not_null(strstr(r.err, "\n  -o, --output FILE   the page to write"), "%s", r.err);
	cr_assert_not_null(strstr(r.err, "\nsee 'autotune help report'\n"), "%s", r.err);
	tr_free(&r);
	r = RUN_REPORT("--heatmap", "big");
	tr_expect_status(&r, 2);
	cr_assert_not_null(strstr(r.err, "--heatmap expects MxN (e.g. 4096x8192), got \"big\""));
	tr_free(&r);
	r = RUN_REPORT("-o");
	tr_expect_status(&r, 2);
	cr_assert_not_null(strstr(r.err, "-o needs a value"), "%s", r.err);
	tr_free(&r);
}
