/* Tests of `autotune selftest` as a user runs it, without a GPU: usage
 * errors, the clear failure without a GPU, --dry-run's listing, and
 * --sanitize driven through fake compute-sanitizer scripts ($AUTOTUNE_SANITIZER)
 * that report clean, report errors, or run the real child (which then
 * finds no GPU). */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/test_run_fixture.h"

TestSuite(selftest_cli, .init = tmp_setup, .fini = tmp_teardown);

Test(selftest_cli, usage_errors)
{
	static const char *const cases[][3] = {
		{ "--bogus", NULL, "unknown option --bogus" },
		{ "--dtype", "f64", "--dtype expects f32, f16 or bf16" },
		{ "--device", "x", "--device needs an integer" },
		{ "--threads", "0", "--threads needs an integer from 1" },
		{ "--db", NULL, "--db needs a value" },
		{ "extra", NULL, "unexpected argument \"extra\"" },
		{ "--case", "bogus", "--case expects sizes, special, strided, in-place or 2^31" },
		{ "--case", "sizes,", "--case expects sizes, special, strided, in-place or 2^31" },
	};
	tr_expect_usage_errors("selftest", cases, sizeof cases / sizeof cases[0]);
	tr_result r = RUN("selftest", "--small", "--quick");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "--small and --quick");
	tr_free(&r);
	r = RUN("selftest", "--quick", "--case", "2^31");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "--quick skips the 2^31 case");
	tr_free(&r);
	r = RUN("selftest", "--small", "--case", "sizes,special");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "run only the strided case");
	tr_free(&r);
}

Test(selftest_cli, help)
{
	tr_result r = RUN("help", "selftest");
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "usage: autotune selftest");
	tr_expect_in(r.out, "--sanitize");
	tr_free(&r);
	r = RUN("help");
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "  selftest ");
	tr_expect_in(r.out, "  bench ");
	tr_free(&r);
}

Test(selftest_cli, without_a_gpu_it_says_so_and_fails)
{
	tr_result r = RUN("selftest", "--quick", "--dtype", "f32");
	tr_expect_status(&r, 1);
	cr_assert(strstr(r.err, "no NVIDIA driver") || strstr(r.err, "no NVIDIA GPU"), "%s", r.err);
	cr_assert_null(strstr(r.out, "PASSED"), "%s", r.out);
	tr_free(&r);
}

Test(selftest_cli, bad_config_or_templates)
{
	tr_result r = RUN("selftest", "--dry-run", "-c", tmp_path("none.yaml"));
	tr_expect_status(&r, 1);
	tr_expect_in(r.err, "none.yaml");
	tr_free(&r);
	r = RUN("selftest", "--dry-run", "--templates", tmp_path("no-templates"));
	tr_expect_status(&r, 1);
	tr_expect_in(r.err, "no-templates");
	tr_free(&r);
}

Test(selftest_cli, dry_run_lists_every_case_and_counts_the_runs)
{
	tr_result r = RUN("selftest", "--dry-run", "--dtype", "bf16");
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "bf16  sizes     M=300007 N=1 ");
	tr_expect_in(r.out, "bf16  special   ");
	tr_expect_in(r.out,
		     "bf16  strided   M=4099 N=7 ldx=10 ldy=8 (rows start 1 element off 16 B)");
	tr_expect_in(r.out, "bf16  in-place  ");
	tr_expect_in(r.out, "bf16  2^31      M=32770 N=65537");
	tr_expect_in(r.out, "as tuned at a longer row");
	tr_expect_in(r.out, "runs per case");
	cr_assert_null(strstr(r.out, "f32 "), "--dtype bf16 listed f32:\n%s", r.out);
	tr_free(&r);
	r = RUN("selftest", "--dry-run", "--quick", "--dtype", "f32");
	tr_expect_status(&r, 0);
	cr_assert_null(strstr(r.out, "2^31      M="), "--quick listed the 2^31 case:\n%s", r.out);
	tr_expect_in(r.out, " 2^31 0;");
	tr_free(&r);
}

Test(selftest_cli, dry_run_of_some_cases_lists_only_those)
{
	tr_result r = RUN("selftest", "--dry-run", "--dtype", "f32", "--case", "2^31",
			  "--case", "strided");
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "f32   2^31      M=8194 N=262147");
	tr_expect_in(r.out, "f32   strided   M=1031 N=512 ldx=520 ldy=536");
	cr_assert_null(strstr(r.out, "sizes     M="), "%s", r.out);
	cr_assert_null(strstr(r.out, "in-place  M="), "%s", r.out);
	tr_expect_in(r.out, "sizes 0, special 0, strided ");
	tr_expect_in(r.out, ", in-place 0, extreme 0, 2^31 ");
	cr_assert_null(strstr(r.out, " 2^31 0;"), "%s", r.out);
	tr_free(&r);
}

Test(selftest_cli, dry_run_of_a_backward_op_leaves_out_only_the_2_31_case)
{
	tr_result r = RUN("selftest", "--dry-run", "--dtype", "f32", "--op", "softmax_backward");
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "f32   sizes     M=300007 N=1 ");
	tr_expect_in(r.out, "f32   in-place  ");
	tr_expect_in(r.out, "f32   extreme   ");
	cr_assert_null(strstr(r.out, "2^31      M="), "an op of two inputs listed 2^31:\n%s", r.out);
	tr_expect_in(r.out, " 2^31 0;");
	tr_free(&r);
}

/* ---- --sanitize through fake sanitizers ---- */

/* A fake compute-sanitizer: records its arguments (one per line) in
 * args.<tool>, writes LOG_TEXT to the --log-file and OUT_TEXT to stdout,
 * and exits with EXIT. */
static const char fake_script[] =
	"#!/bin/sh\n"
	"dir=$(dirname \"$0\")\n"
	"tool=; log=\n"
	"prev=\n"
	"for a in \"$@\"; do\n"
	"  [ \"$prev\" = --tool ] && tool=$a\n"
	"  [ \"$prev\" = --log-file ] && log=$a\n"
	"  prev=$a\n"
	"done\n"
	"printf '%%s\\n' \"$@\" > \"$dir/args.$tool\"\n"
	"%s\n"
	"exit %s\n";

static void write_fake(const char *name, const char *body, const char *exit_code)
{
	char text[4096];
	snprintf(text, sizeof text, fake_script, body, exit_code);
	tmp_write(name, text);
	cr_assert_eq(chmod(tmp_path(name), 0755), 0);
}

static tr_result run_sanitize(const char *fake, const char *const *extra)
{
	char env_sanitizer[600], env_tmp[600];
	snprintf(env_sanitizer, sizeof env_sanitizer, "AUTOTUNE_SANITIZER=%s", tmp_path(fake));
	snprintf(env_tmp, sizeof env_tmp, "TMPDIR=%s", tmp_path(""));
	const char *env[] = { env_sanitizer, env_tmp, NULL };
	const char *args[16] = { "selftest", "--sanitize" };
	int n = 2;
	for (; extra && *extra; extra++)
		args[n++] = *extra;
	args[n] = NULL;
	return tr_run(args, env);
}

Test(selftest_cli, sanitize_without_a_sanitizer)
{
	tr_result r = run_sanitize("missing-sanitizer", NULL);
	tr_expect_status(&r, 1);
	tr_expect_in(r.err, "compute-sanitizer not found");
	tr_free(&r);
}

Test(selftest_cli, sanitize_clean)
{
	write_fake("clean.sh",
		   "if [ \"$tool\" = racecheck ]; then\n"
		   "  echo '========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)' > \"$log\"\n"
		   "else\n"
		   "  echo '========= ERROR SUMMARY: 0 errors' > \"$log\"\n"
		   "fi\n"
		   "echo 'selftest: PASSED: all 10 runs passed'\n"
		   "echo '6242 launches; 0 kernels compiled (0.0 s), 0 from the compile cache; 1.0 s in all'",
		   "0");
	static const char *const extra[] = { "--dtype", "f16,bf16", "--device", "0", NULL };
	tr_result r = run_sanitize("clean.sh", extra);
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "memcheck  clean: 0 errors (6242 launches, ");
	tr_expect_in(r.out, "racecheck clean: 0 hazards (0 errors, 0 warnings) (6242 launches, ");
	tr_expect_in(r.out, "selftest --sanitize: CLEAN (2 of 2 tools clean)");
	/* what the child was asked */
	char *mem = tmp_read(tmp_path("args.memcheck"));
	char *race = tmp_read(tmp_path("args.racecheck"));
	tr_expect_in(mem, "--tool\nmemcheck\n--error-exitcode\n86\n--log-file\n");
	tr_expect_in(race, "--tool\nracecheck\n");
	tr_expect_in(mem, "\nselftest\n--small\n-c\nconfigs/softmax.yaml\n");
	tr_expect_in(mem, "\n--dtype\nf16,bf16\n--device\n0\n--db\n");
	/* both children share one compile cache */
	const char *db_m = strstr(mem, "--db\n") + 5, *db_r = strstr(race, "--db\n") + 5;
	cr_assert_eq(strcspn(db_m, "\n"), strcspn(db_r, "\n"));
	cr_assert_eq(strncmp(db_m, db_r, strcspn(db_m, "\n")), 0, "%s\n%s", mem, race);
	free(mem);
	free(race);
	tr_free(&r);
}

Test(selftest_cli, sanitize_errors_are_shown_and_fail)
{
	write_fake("dirty.sh",
		   "if [ \"$tool\" = racecheck ]; then\n"
		   "  printf '%s\\n' '========= COMPUTE-SANITIZER' "
		   "'========= Error: Race reported between Write access at softmax_kernel+0x140' "
		   "'=========     and Read access at softmax_kernel+0xe0 [4 hazards]' "
		   "'========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)' > \"$log\"\n"
		   "  echo 'selftest: PASSED: all 10 runs passed'\n"
		   "  exit 86\n"
		   "fi\n"
		   "echo '========= ERROR SUMMARY: 0 errors' > \"$log\"\n"
		   "echo 'selftest: PASSED: all 10 runs passed'",
		   "0");
	tr_result r = run_sanitize("dirty.sh", NULL);
	tr_expect_status(&r, 1);
	tr_expect_in(r.out, "memcheck  clean: 0 errors");
	tr_expect_in(r.out, "racecheck NOT CLEAN: 1 hazard (1 error, 0 warnings)");
	tr_expect_in(r.out, "    ========= Error: Race reported between Write access at softmax_kernel+0x140\n"
			    "    =========     and Read access at softmax_kernel+0xe0 [4 hazards]\n");
	cr_assert_null(strstr(r.out, "    ========= RACECHECK SUMMARY"), "%s", r.out);
	tr_expect_in(r.out, "racecheck.log");
	tr_expect_in(r.out, "selftest --sanitize: NOT CLEAN (1 of 2 tools clean)");
	tr_free(&r);
}

Test(selftest_cli, sanitize_a_failing_selftest_is_not_clean)
{
	write_fake("checks.sh",
		   "echo '========= ERROR SUMMARY: 0 errors' > \"$log\"\n"
		   "echo 'selftest: FAILED: 3 of 10 runs failed, 0 not run, 0 templates untested'",
		   "1");
	tr_result r = run_sanitize("checks.sh", NULL);
	tr_expect_status(&r, 1);
	tr_expect_in(r.out,
		     "memcheck  NOT CLEAN: 0 errors, but the selftest failed under it (exit 1)");
	tr_expect_in(r.out, "    selftest: FAILED: 3 of 10 runs failed");
	tr_free(&r);
}

/* The fake runs the real child: its command line parses, and without a GPU
 * the child fails, so the second tool is not tried. */
Test(selftest_cli, sanitize_runs_this_program_as_the_child)
{
	write_fake("passthrough.sh",
		   "while [ $# -gt 0 ] && [ \"${1#--}\" != \"$1\" ]; do shift 2; done\n"
		   "\"$@\"\n"
		   "rc=$?\n"
		   "echo '========= ERROR SUMMARY: 0 errors' > \"$log\"\n"
		   "exit $rc",
		   "$rc");
	static const char *const extra[] = { "--dtype", "f32", NULL };
	tr_result r = run_sanitize("passthrough.sh", extra);
	tr_expect_status(&r, 1);
	tr_expect_in(r.out,
		     "memcheck  NOT CLEAN: 0 errors, but the selftest failed under it (exit 1)");
	cr_assert(strstr(r.out, "no NVIDIA driver") || strstr(r.out, "no NVIDIA GPU"), "%s", r.out);
	tr_expect_in(r.out, "the selftest did not run under memcheck: not trying the other tool");
	cr_assert_null(strstr(r.out, "racecheck "), "%s", r.out);
	cr_assert_eq(access(tmp_path("args.racecheck"), F_OK), -1);
	tr_free(&r);
}
