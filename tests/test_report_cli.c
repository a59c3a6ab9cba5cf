/* Tests of `autotune report` as a user runs it: build/autotune (built by
 * `make test` before the tests run, from the repository root) in a
 * subprocess, its exit status and stderr checked for success and for each
 * kind of bad input. Until the command is listed in tuner/cli.c these tests
 * are skipped, saying so. */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db/tuning_db.h"

/* From test_report_fixture.c. */
void rf_setup(void);
void rf_teardown(void);
const char *rf_path(const char *name);
void rf_make_db(const char *name);
void rf_make_empty_db(const char *name);
char *rf_read(const char *path);
size_t rf_count(const char *text, const char *needle);

#define AUTOTUNE "build/autotune"

TestSuite(report_cli, .init = rf_setup, .fini = rf_teardown);

typedef struct run_result {
	int status;
	char *out, *err;
} run_result;

static void run_free(run_result *r)
{
	free(r->out);
	free(r->err);
}

/* Runs build/autotune report ARGS... (NULL-terminated) in the temporary
 * folder's parent environment, with $AUTOTUNE_DB pointing at env.db. */
static run_result run_report(const char *const *args)
{
	cr_assert_eq(access(AUTOTUNE, X_OK), 0, AUTOTUNE " is missing: run `make build/autotune`");
	char *argv[16];
	int argc = 0;
	argv[argc++] = (char *)AUTOTUNE;
	argv[argc++] = (char *)"report";
	for (; *args; args++)
		argv[argc++] = (char *)*args;
	argv[argc] = NULL;
	const char *out_path = rf_path("stdout"), *err_path = rf_path("stderr");
	const char *env_db = rf_path("env.db");
	fflush(NULL);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (o < 0 || e < 0)
			_exit(126);
		dup2(o, 1);
		dup2(e, 2);
		setenv(TDB_PATH_ENV, env_db, 1);
		execv(AUTOTUNE, argv);
		_exit(127);
	}
	int ws;
	cr_assert_eq(waitpid(pid, &ws, 0), pid);
	cr_assert(WIFEXITED(ws), "autotune report died with signal %d",
		  WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
	run_result r = { WEXITSTATUS(ws), rf_read(out_path), rf_read(err_path) };
	if (r.status == 2 && strstr(r.err, "unknown command \"report\"")) {
		run_free(&r);
		rf_teardown(); /* a skipped test does not reach the suite's .fini */
		cr_skip_test("build/autotune has no report command yet: list cmd_report in "
			     "tuner/cli.c");
	}
	return r;
}

#define RUN(...) run_report((const char *const[]){ __VA_ARGS__, NULL })

static void expect_status(const run_result *r, int status)
{
	cr_assert_eq(r->status, status, "exit status %d, want %d\n--- stderr:\n%s", r->status,
		     status, r->err);
}

Test(report_cli, writes_the_page)
{
	rf_make_db("t.db");
	run_result r = RUN("--db", rf_path("t.db"), "-o", rf_path("r.html"));
	expect_status(&r, 0);
	cr_assert_str_eq(r.err, "");
	run_free(&r);
	char *html = rf_read(rf_path("r.html"));
	cr_assert(strncmp(html, "<!DOCTYPE html>", 15) == 0);
	cr_assert_eq(rf_count(html, "<svg id=\"g0-curve-m64\""), 1);
	free(html);
	/* "-o -": standard output */
	r = RUN("--db", rf_path("t.db"), "-o", "-");
	expect_status(&r, 0);
	cr_assert(strncmp(r.out, "<!DOCTYPE html>", 15) == 0, "stdout: %.80s", r.out);
	cr_assert_not_null(strstr(r.out, "</html>\n"));
	run_free(&r);
	/* $AUTOTUNE_DB when there is no --db */
	rf_make_db("env.db");
	r = RUN("-o", rf_path("env.html"), "--heatmap", "64x256");
	expect_status(&r, 0);
	run_free(&r);
	html = rf_read(rf_path("env.html"));
	cr_assert_not_null(strstr(html, "Shape M = 64, N = 256 (chosen with --heatmap)"));
	free(html);
}

Test(report_cli, missing_database)
{
	run_result r = RUN("--db", rf_path("missing.db"), "-o", rf_path("r.html"));
	expect_status(&r, 1);
	char want[600];
	snprintf(want, sizeof want, "autotune: %s: no such database\n", rf_path("missing.db"));
	cr_assert_str_eq(r.err, want);
	cr_assert_neq(access(rf_path("r.html"), F_OK), 0);
	run_free(&r);
}

Test(report_cli, database_without_results)
{
	rf_make_empty_db("empty.db");
	run_result r = RUN("--db", rf_path("empty.db"), "-o", rf_path("r.html"));
	expect_status(&r, 1);
	char want[600];
	snprintf(want, sizeof want, "autotune: %s has no results: run autotune sweep first\n",
		 rf_path("empty.db"));
	cr_assert_str_eq(r.err, want);
	cr_assert_neq(access(rf_path("r.html"), F_OK), 0);
	run_free(&r);
}

Test(report_cli, unwritable_output)
{
	rf_make_db("t.db");
	const char *out = rf_path("missing-folder/r.html");
	run_result r = RUN("--db", rf_path("t.db"), "-o", out);
	expect_status(&r, 1);
	char want[700];
	snprintf(want, sizeof want, "autotune: %s: cannot write: No such file or directory\n", out);
	cr_assert_str_eq(r.err, want);
	run_free(&r);
}

Test(report_cli, usage_errors)
{
	run_result r = RUN("--bogus");
	expect_status(&r, 2);
	cr_assert_str_eq(r.err, "autotune report: unknown option --bogus\nsee 'autotune help report'\n");
	run_free(&r);
	r = RUN("--heatmap", "big");
	expect_status(&r, 2);
	cr_assert_not_null(strstr(r.err, "--heatmap expects MxN (e.g. 4096x8192), got \"big\""));
	run_free(&r);
	r = RUN("-o");
	expect_status(&r, 2);
	cr_assert_not_null(strstr(r.err, "-o needs a value"), "%s", r.err);
	run_free(&r);
}
