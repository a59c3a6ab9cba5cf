/* Tests of the command line: build/autotune (built by `make test` before the
 * tests run; the tests run from the repository root) is run as a subprocess
 * with AUTOTUNE_DB pointing into a temporary folder, and its exit status,
 * stdout and stderr are checked. This machine has no GPU: a real sweep must
 * fail before writing anything; --compile-only works (NVRTC only). */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/tuning_db.h"
#include "include/autotune/dispatch.h"
#include "tuner/cli/cli.h"

#include "tests/template_fixture.h"
#include "tests/test_run_fixture.h"

TestSuite(cli, .init = tmp_setup, .fini = tmp_teardown);

#define RUN0() tr_run((const char *const[]){ NULL }, NULL)

static int file_exists(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0;
}

static int starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static const char small_config[] =
	"# one small shape\n"
	"sweeps:\n"
	"  - op: softmax\n"
	"    dtypes: [f32]\n"
	"    M: [64]\n"
	"    N: [1000]\n";

/* ---- help and usage -------------------------------------------------------------- */

Test(cli, no_arguments_is_a_usage_error)
{
	tr_result r = RUN0();
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "usage: autotune");
	cr_assert_str_eq(r.out, "");
	tr_free(&r);
}

Test(cli, help_prints_the_overview_on_stdout)
{
	tr_result a = RUN("help"), b = RUN("--help"), c = RUN("-h");
	tr_expect_status(&a, 0);
	tr_expect_status(&b, 0);
	tr_expect_status(&c, 0);
	cr_assert(starts_with(a.out, "usage: autotune"), "stdout:\n%s", a.out);
	cr_assert_str_eq(a.out, b.out);
	cr_assert_str_eq(a.out, c.out);
	cr_assert_str_eq(a.err, "");
	cr_assert_str_eq(b.err, "");
	static const char *const commands[] = { "sweep", "list", "templates", "gen", "help",
						"version" };
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
		char line[64];
		snprintf(line, sizeof line, "\n  %-10s ", commands[i]);
		tr_expect_in(a.out, line);
	}
	tr_free(&a);
	tr_free(&b);
	tr_free(&c);
}

Test(cli, help_command_equals_command_dash_dash_help)
{
	static const char *const commands[] = { "sweep", "list", "templates", "gen", "version" };
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
		tr_result a = RUN("help", commands[i]), b = RUN(commands[i], "--help");
		tr_expect_status(&a, 0);
		tr_expect_status(&b, 0);
		char usage[64];
		snprintf(usage, sizeof usage, "usage: autotune %s", commands[i]);
		cr_assert(starts_with(a.out, usage), "help %s:\n%s", commands[i], a.out);
		cr_assert_str_eq(a.out, b.out, "help %s and %s --help differ", commands[i],
				 commands[i]);
		tr_free(&a);
		tr_free(&b);
	}
	/* --help wins over anything else on the line, even a bad option */
	tr_result a = RUN("help", "sweep"), c = RUN("sweep", "--bogus", "-h");
	tr_expect_status(&c, 0);
	cr_assert_str_eq(a.out, c.out);
	tr_expect_in(a.out, "--compile-only");
	tr_free(&a);
	tr_free(&c);
}

/* The option lines come from each command's option table: --help (and
 * help NAME) lists every option the table declares, with its value's name
 * and help; an unknown option is a usage error that prints the usage and
 * the same option lines on stderr. */
Test(cli, every_command_lists_its_table_and_refuses_unknown_options)
{
	int commands = 0, options = 0;
	for (const cli_command *c = cli_commands; c->name; c++) {
		tr_result h = tr_run((const char *const[]){ c->name, "--help", NULL }, NULL);
		tr_result u = tr_run((const char *const[]){ c->name, "--no-such-option", NULL }, NULL);
		tr_expect_status(&h, 0);
		tr_expect_status(&u, 2);
		cr_assert_str_eq(u.out, "", "%s --no-such-option wrote to stdout", c->name);
		char want[256];
		snprintf(want, sizeof want, "autotune %s: unknown option --no-such-option\n", c->name);
		tr_expect_in(u.err, want);
		snprintf(want, sizeof want, "usage: autotune %s", c->name);
		tr_expect_in(h.out, want);
		tr_expect_in(u.err, want);
		snprintf(want, sizeof want, "see 'autotune help %s'\n", c->name);
		tr_expect_in(u.err, want);
		for (const cli_option *o = c->options; o && o->type != CLI_OPT_END; o++) {
			char name[80];
			cli_option_name(o, name, sizeof name);
			snprintf(want, sizeof want, "%s%s%s%s", o->short_name && o->long_name ? ", " : "  ",
				 name, o->argh ? " " : "", o->argh ? o->argh : "");
			tr_expect_in(h.out, want);
			tr_expect_in(u.err, want);
			cr_assert(o->help && *o->help, "%s %s has no help line", c->name, name);
			size_t first = strcspn(o->help, "\n");
			snprintf(want, sizeof want, "%.*s\n", (int)first, o->help);
			tr_expect_in(h.out, want);
			options++;
		}
		commands++;
		tr_free(&h);
		tr_free(&u);
	}
	cr_assert_geq(commands, 11);
	cr_assert_geq(options, 50);
}

/* The parser takes getopt_long's forms: --name=VALUE, a unique prefix of a
 * long name, -cVALUE, and "--" ending the options; an ambiguous prefix, a
 * value given to a flag and a missing value are usage errors. */
Test(cli, option_syntax)
{
	tr_result r = RUN("gen", "--templ", "softmax_block");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "autotune gen: option --templ is ambiguous");
	tr_free(&r);
	r = RUN("sweep", "--audit=yes");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "--audit takes no value");
	tr_free(&r);
	r = RUN("sweep", "--watchdog=1s");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "--watchdog needs an integer from 0 to 86400, got \"1s\"");
	tr_free(&r);
	r = RUN("show", "-M4", "-N");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "autotune show: -N needs a value\n");
	tr_free(&r);
	r = RUN("show", "-M4", "-Nx");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "-N needs an integer from 1 to ");
	tr_free(&r);
	r = RUN("list", "--", "--db");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "unexpected argument \"--db\"");
	tr_free(&r);
	r = RUN("gen", "--temp=softmax_block", "--param=elems_per_thread=4", "-N1024");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "ambiguous");
	tr_free(&r);
	r = RUN("gen", "--template=softmax_block", "--para=elems_per_thread=4", "-M8", "-N1024",
		"--dty=f32");
	tr_expect_status(&r, 0);
	cr_assert(starts_with(r.out, "// Generated by autotune"), "stdout:\n%.300s", r.out);
	tr_free(&r);
}

Test(cli, help_of_a_db_subcommand_is_its_dash_dash_help)
{
	tr_result a = RUN("help", "db", "merge"), b = RUN("db", "merge", "--help"),
		  c = RUN("help", "db", "export");
	tr_expect_status(&a, 0);
	tr_expect_status(&b, 0);
	tr_expect_status(&c, 0);
	cr_assert_str_eq(a.out, b.out);
	cr_assert_str_eq(a.out, c.out);
	tr_expect_in(a.out, "usage: autotune db merge OUT IN...");
	tr_expect_in(a.out, "autotune db export IN OUT");
	tr_free(&a);
	tr_free(&b);
	tr_free(&c);
	tr_result d = RUN("help", "db", "frob");
	tr_expect_status(&d, 2);
	tr_free(&d);
}

Test(cli, help_for_an_unknown_command)
{
	tr_result r = RUN("help", "frob");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "no command \"frob\"");
	tr_free(&r);
}

Test(cli, unknown_command)
{
	tr_result r = RUN("frob");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "unknown command \"frob\"");
	tr_expect_in(r.err, "see 'autotune help'");
	cr_assert_str_eq(r.out, "");
	tr_free(&r);
}

/* One version for the CLI, the library, its .pc and the Python package:
 * the header's (python/tests/test_library.py checks the package's, and
 * tests/test_dispatch_install.c the .pc's). */
Test(cli, version_is_the_headers)
{
	tr_result a = RUN("version"), b = RUN("--version"), c = RUN("version", "x");
	tr_expect_status(&a, 0);
	cr_assert_str_eq(a.out, "autotune " ATD_VERSION_STRING "\n");
	cr_assert_str_eq(atd_version(), ATD_VERSION_STRING);
	tr_expect_status(&b, 0);
	cr_assert_str_eq(b.out, "autotune " ATD_VERSION_STRING "\n");
	tr_expect_status(&c, 2);
	tr_free(&a);
	tr_free(&b);
	tr_free(&c);
}

/* ---- sweep: options -------------------------------------------------------------- */

Test(cli, sweep_unknown_option)
{
	tr_result r = RUN("sweep", "--bogus");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "autotune sweep: unknown option --bogus\n");
	tr_expect_in(r.err, "see 'autotune help sweep'\n");
	cr_assert_str_eq(r.out, "");
	tr_free(&r);
}

Test(cli, sweep_bad_option_values)
{
	static const char *const cases[][2] = {
		{ "--device", "abc" }, { "--device", "-1" }, { "--device", "1024" },
		{ "--arch", "sm_x" },  { "--arch", "sm_9000" }, { "--threads", "0" },
		{ "--threads", "4x" },  { "--devices", "" },	{ "--devices", "0,,1" },
		{ "--devices", "0,0" }, { "--devices", "1,a" },	{ "--devices", "2048" },
		{ "--watchdog", "-1" }, { "--watchdog", "1s" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		tr_result r = RUN("sweep", cases[i][0], cases[i][1]);
		tr_expect_status(&r, 2);
		tr_expect_in(r.err, cases[i][0]);
		tr_expect_in(r.err, "see 'autotune help sweep'");
		tr_free(&r);
	}
	tr_result r = RUN("sweep", "--db");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "--db needs a value");
	tr_free(&r);
	r = RUN("sweep", "--device", "0", "--devices", "0,1");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "give --device or --devices, not both");
	tr_free(&r);
	r = RUN("sweep", "--audit", "--full-timing");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "cannot be combined with --full-timing");
	tr_free(&r);
	r = RUN("sweep", "extra");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "unexpected argument \"extra\"");
	tr_free(&r);
	cr_assert(!file_exists(tmp_path("env.db")), "a usage error wrote the database");
}

Test(cli, sweep_bad_arch_is_reported_once)
{
	tr_result r = RUN("sweep", "--arch", "sm_x");
	tr_expect_status(&r, 2);
	cr_assert_str_eq(r.err, "autotune sweep: --arch expects sm_XX (e.g. sm_90), got \"sm_x\"\n"
				"see 'autotune help sweep'\n");
	tr_free(&r);
}

Test(cli, an_arch_nvrtc_cannot_compile_for_is_a_usage_error)
{
	tr_result r = RUN("sweep", "--compile-only", "--arch", "sm_999");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "--arch sm_999: NVRTC ");
	tr_expect_in(r.err, "sm_90");
	tr_free(&r);
	r = RUN("gen", "--template", "softmax_block", "--arch", "sm_999");
	tr_expect_status(&r, 2);
	tr_free(&r);
}

/* ---- sweep: configs --------------------------------------------------------------- */

Test(cli, sweep_missing_config)
{
	tr_result r = RUN("sweep", "-c", "missing.yaml");
	tr_expect_status(&r, 1);
	tr_expect_in(r.err, "missing.yaml: cannot open");
	tr_free(&r);
}

Test(cli, sweep_config_with_a_yaml_error_names_file_line_and_column)
{
	tmp_write("bad.yaml", "sweeps:\n"
			      "  - op: softmax\n"
			      "    dtypes: [f32\n"
			      "    M: [64]\n");
	tr_result r = RUN("sweep", "-c", tmp_path("bad.yaml"), "--db", tmp_path("bad.db"));
	tr_expect_status(&r, 1);
	char prefix[600];
	snprintf(prefix, sizeof prefix, "autotune: %s:", tmp_path("bad.yaml"));
	cr_assert(starts_with(r.err, prefix), "stderr:\n%s", r.err);
	int line = 0, col = 0;
	cr_assert_eq(sscanf(r.err + strlen(prefix), "%d:%d: ", &line, &col), 2, "stderr:\n%s", r.err);
	cr_assert(line == 3 || line == 4, "line %d", line);
	cr_assert_geq(col, 1);
	cr_assert(!file_exists(tmp_path("bad.db")));
	tr_free(&r);

	/* an error the reader finds, at the exact place */
	tmp_write("neg.yaml", "sweeps:\n"
			      "  - op: softmax\n"
			      "    dtypes: [f32]\n"
			      "    M: [-3]\n"
			      "    N: [1000]\n");
	r = RUN("sweep", "-c", tmp_path("neg.yaml"));
	tr_expect_status(&r, 1);
	char want[700];
	snprintf(want, sizeof want, "autotune: %s:4:9: expected a positive integer for M, got \"-3\"\n",
		 tmp_path("neg.yaml"));
	cr_assert_str_eq(r.err, want);
	tr_free(&r);
}

Test(cli, sweep_config_naming_an_unknown_template)
{
	tmp_write("unk.yaml", "sweeps:\n"
			      "  - op: softmax\n"
			      "    dtypes: [f32]\n"
			      "    M: [64]\n"
			      "    N: [1000]\n"
			      "    templates: [softmax_block, nope]\n");
	tr_result r = RUN("sweep", "-c", tmp_path("unk.yaml"), "--db", tmp_path("unk.db"));
	tr_expect_status(&r, 1);
	char want[600];
	snprintf(want, sizeof want, "%s:2: unknown template \"nope\" (known: ", tmp_path("unk.yaml"));
	tr_expect_in(r.err, want);
	tr_expect_in(r.err, "softmax_block");
	tr_expect_in(r.err, "softmax_warp");
	cr_assert(!file_exists(tmp_path("unk.db")));
	tr_free(&r);
}

Test(cli, sweep_without_a_gpu_fails_and_writes_nothing)
{
	tmp_write("good.yaml", small_config);
	tr_result r = RUN("sweep", "-c", tmp_path("good.yaml"), "--db", tmp_path("out.db"));
	tr_expect_status(&r, 1);
	cr_assert(strstr(r.err, "no NVIDIA driver") || strstr(r.err, "no NVIDIA GPU"),
		  "stderr:\n%s", r.err);
	cr_assert(!file_exists(tmp_path("out.db")), "the database was created");
	cr_assert(!file_exists(tmp_path("out.db-wal")));
	cr_assert_str_eq(r.out, "");
	tr_free(&r);
	/* the same through $AUTOTUNE_DB */
	r = RUN("sweep", "-c", tmp_path("good.yaml"));
	tr_expect_status(&r, 1);
	cr_assert(!file_exists(tmp_path("env.db")), "$AUTOTUNE_DB was created");
	tr_free(&r);
}

/* The compile-only pipeline end to end, on the tiny template (that every
 * variant of real templates compiles is tests/test_plan_compiles.c's). */
Test(cli, sweep_compile_only_compiles_stores_and_then_reuses)
{
	tr_write_tiny_sweep();
	tr_result r = RUN("sweep", "--compile-only", "--templates", tmp_path("templates"), "-c",
			  tmp_path("c.yaml"), "--db", tmp_path("co.db"));
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "compile-only for sm_90: 10 shapes, 40 variants, 13 distinct kernels: "
			    "13 compiled, 0 failed; 13 compiled now (");
	cr_assert_null(strstr(r.out, "FAILED:"), "stdout:\n%s", r.out);
	/* the kernels went into the database's compile cache: a second run
	 * compiles nothing and says so */
	cr_assert(file_exists(tmp_path("co.db")), "--compile-only kept no compile cache");
	cr_assert(!file_exists(tmp_path("env.db")));
	tr_free(&r);
	r = RUN("sweep", "--compile-only", "--templates", tmp_path("templates"), "-c",
		tmp_path("c.yaml"), "--db", tmp_path("co.db"));
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "13 compiled, 0 failed; 0 compiled now (");
	tr_expect_in(r.out, "), 13 from the compile cache");
	tr_free(&r);
}

/* ---- list ----------------------------------------------------------------------------- */

Test(cli, list_missing_database)
{
	tr_result r = RUN("list", "--db", tmp_path("missing.db"));
	tr_expect_status(&r, 1);
	tr_expect_in(r.err, "no such database");
	cr_assert(!file_exists(tmp_path("missing.db")), "list created the database");
	tr_free(&r);
	r = RUN("list"); /* $AUTOTUNE_DB, which does not exist */
	tr_expect_status(&r, 1);
	tr_expect_in(r.err, tmp_path("env.db"));
	tr_expect_in(r.err, "no such database");
	cr_assert(!file_exists(tmp_path("env.db")));
	tr_free(&r);
}

Test(cli, list_bad_format)
{
	tr_result r = RUN("list", "--format", "xml");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "--format must be table, csv or json, got \"xml\"");
	tr_free(&r);
}

/* A database with one winner and one shape where nothing passed. */
static void make_db(const char *path)
{
	tdb *db;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_open(path, &db, &err), 0, "%s", err.msg);
	gpu_info g = { "NVIDIA H100 80GB HBM3", 9, 0, 132, 85017755648LL };
	long long gid, sid;
	cr_assert_eq(tdb_gpu_id(db, &g, &gid, &err), 0, "%s", err.msg);
	sweep_info info = { gid, 13000, "13.0", "0.1.0", "x.yaml", "", 3000.0 };
	cr_assert_eq(tdb_sweep_begin(db, &info, &sid, &err), 0, "%s", err.msg);
	result_row row = { .template_name = "softmax_block", .params = "threads=256 vec=4",
			   .status = RESULT_OK, .rel_err = 0, .time_us = 12.3456, .time_min_us = 12,
			   .time_max_us = 13, .reps = 25, .gbps = 2718.25, .pct_copy = 90.61,
			   .registers = 32, .threads = 256, .rows_per_cta = 1 };
	shape_key k1 = { gid, "softmax", AT_F32, 4096, 1024 };
	cr_assert_eq(tdb_store_shape(db, sid, &k1, &row, 1, &err), 0, "%s", err.msg);
	shape_key k2 = { gid, "softmax", AT_BF16, 8, 3 };
	cr_assert_eq(tdb_store_shape(db, sid, &k2, NULL, 0, &err), 0, "%s", err.msg);
	tdb_close(db);
}

Test(cli, list_prints_the_winners)
{
	make_db(tmp_path("list.db"));
	tr_result r = RUN("list", "--db", tmp_path("list.db"), "--format", "csv");
	tr_expect_status(&r, 0);
	cr_assert_str_eq(r.out, "gpu,cc,op,dtype,M,N,template,params,time_us,gbps,pct_copy\n"
				"NVIDIA H100 80GB HBM3,9.0,softmax,f32,4096,1024,softmax_block,"
				"threads=256 vec=4,12.346,2718.2,90.6\n"
				"NVIDIA H100 80GB HBM3,9.0,softmax,bf16,8,3,,,,,\n");
	tr_free(&r);

	r = RUN("list", "--db", tmp_path("list.db"), "--format", "json");
	tr_expect_status(&r, 0);
	cr_assert_str_eq(r.out,
			 "[\n"
			 "  {\"gpu\": \"NVIDIA H100 80GB HBM3\", \"cc\": \"9.0\", \"op\": \"softmax\", "
			 "\"dtype\": \"f32\", \"M\": 4096, \"N\": 1024, \"template\": \"softmax_block\", "
			 "\"params\": \"threads=256 vec=4\", \"time_us\": 12.346, \"gbps\": 2718.2, "
			 "\"pct_copy\": 90.6},\n"
			 "  {\"gpu\": \"NVIDIA H100 80GB HBM3\", \"cc\": \"9.0\", \"op\": \"softmax\", "
			 "\"dtype\": \"bf16\", \"M\": 8, \"N\": 3, \"template\": \"\", \"params\": \"\", "
			 "\"time_us\": null, \"gbps\": null, \"pct_copy\": null}\n"
			 "]\n");
	tr_free(&r);

	/* the default format is the text table, and $AUTOTUNE_DB is used without --db */
	make_db(tmp_path("env.db"));
	r = RUN("list");
	tr_expect_status(&r, 0);
	cr_assert(starts_with(r.out, "gpu  "), "stdout:\n%s", r.out);
	tr_expect_in(r.out, "softmax_block  threads=256 vec=4  12.346");
	tr_free(&r);
}

/* ---- gen --------------------------------------------------------------------------------- */

Test(cli, gen_needs_a_template)
{
	tr_result r = RUN("gen");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "--template is required");
	tr_expect_in(r.err, "see 'autotune help gen'");
	tr_free(&r);
}

Test(cli, gen_unknown_template)
{
	tr_result r = RUN("gen", "--template", "nope");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "unknown template \"nope\"");
	cr_assert_str_eq(r.out, "");
	tr_free(&r);
}

Test(cli, gen_param_not_allowed)
{
	tr_result r = RUN("gen", "--template", "softmax_block", "--param", "threads=3");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "not allowed");
	cr_assert_str_eq(r.out, "");
	tr_free(&r);
	r = RUN("gen", "--template", "softmax_block", "--param", "frob=1");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "no parameter \"frob\"");
	tr_free(&r);
	r = RUN("gen", "--template", "softmax_block", "--dtype", "f64");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "unknown dtype \"f64\"");
	tr_free(&r);
}

Test(cli, gen_shape_the_variant_cannot_serve)
{
	tr_result r = RUN("gen", "--template", "softmax_warp", "-N", "1000000");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "not a valid variant");
	tr_expect_in(r.err, "lanes * elems_per_thread >= N");
	cr_assert_str_eq(r.out, "");
	tr_free(&r);
}

Test(cli, gen_cache_hints_need_sm_80)
{
	static const char *const templates[] = { "softmax_block", "softmax_warp", "softmax_online" };
	for (size_t i = 0; i < 3; i++) {
		tr_result r = RUN("gen", "--template", templates[i], "--param", "cache_hint=1",
				  "--arch", "sm_75");
		tr_expect_status(&r, 2);
		tr_expect_in(r.err, "cache_hint == 0 || cc >= 80");
		tr_free(&r);
		r = RUN("gen", "--template", templates[i], "--param", "cache_hint=1", "--arch",
			"sm_80");
		tr_expect_status(&r, 0);
		tr_free(&r);
	}
}

Test(cli, gen_checks_the_dtype_without_a_shape_and_refuses_a_param_twice)
{
	tr_result r = RUN("gen", "--template", "softmax_block", "--param", "vec=8");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "vec * elem_bytes <= 16");
	tr_free(&r);
	r = RUN("gen", "--template", "softmax_block", "--param", "vec=8", "--dtype", "bf16");
	tr_expect_status(&r, 0);
	tr_free(&r);
	r = RUN("gen", "--template", "softmax_block", "--param", "vec=4", "--param", "vec=2");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "--param vec is given twice");
	tr_free(&r);
}

/* What the options ask for that does not exist is a usage error (exit 2,
 * the message naming the option as given, and the help hint), like a
 * malformed option; a failure of the machine or of a file is exit 1. */
Test(cli, usage_errors_exit_2_and_name_the_option_given)
{
	static const char *const show[][3] = {
		{ "--cc", "9", "--cc expects a compute capability X.Y (e.g. 9.0), got \"9\"" },
		{ "--cc", "nine", "--cc expects" },
		{ "--op", "layernorm", "no op \"layernorm\"" },
	};
	for (size_t i = 0; i < sizeof show / sizeof show[0]; i++) {
		tr_result r = RUN("show", "-M", "4", "-N", "4", show[i][0], show[i][1]);
		tr_expect_status(&r, 2);
		tr_expect_in(r.err, show[i][2]);
		tr_expect_in(r.err, "see 'autotune help show'");
		cr_assert_null(strstr(r.err, "--arch"), "show has no --arch:\n%s", r.err);
		cr_assert_str_eq(r.out, "");
		tr_free(&r);
	}
	static const char *const gen[][2] = {
		{ "nope", "threads=256" },           /* no such template */
		{ "softmax_block", "threads" },      /* not NAME=VALUE */
		{ "softmax_block", "frob=1" },       /* no such parameter */
		{ "softmax_block", "threads=3" },    /* not one of its values */
		{ "softmax_block", "vec=8" },        /* no f32 variant */
	};
	for (size_t i = 0; i < sizeof gen / sizeof gen[0]; i++) {
		tr_result r = RUN("gen", "--template", gen[i][0], "--param", gen[i][1]);
		tr_expect_status(&r, 2);
		tr_expect_in(r.err, "autotune gen: ");
		tr_expect_in(r.err, "see 'autotune help gen'");
		cr_assert_str_eq(r.out, "");
		tr_free(&r);
	}
	/* a described GPU of any compute capability: nothing is compiled for it */
	tr_result r = RUN("show", "-M", "4", "-N", "4", "--gpu", "G", "--cc", "12.0", "--db",
			  tmp_path("none.db"));
	tr_expect_status(&r, 1);
	tr_expect_in(r.err, "no such tuning database");
	tr_free(&r);
}

Test(cli, gen_prints_the_specialised_source)
{
	tr_result r = RUN("gen", "--template", "softmax_block", "--param", "elems_per_thread=4",
			  "-N", "1024");
	tr_expect_status(&r, 0);
	cr_assert(starts_with(r.out, "// Generated by autotune"), "stdout:\n%.300s", r.out);
	cr_assert_str_eq(r.err, "");
	/* exactly what specialize() gives for the same variant */
	tf_load_templates();
	variant v;
	variant_defaults(&v, tf_template("softmax_block"), AT_F32);
	at_error err = { { 0 } };
	cr_assert_eq(variant_set(&v, "elems_per_thread=4", &err), 0, "%s", err.msg);
	char *src = tf_specialize(&v);
	cr_assert_str_eq(r.out, src);
	free(src);
	tf_free_templates();
	tr_free(&r);

	r = RUN("gen", "--template", "softmax_warp", "--dtype", "bf16", "--param", "lanes=16",
		"--param", "rows_per_cta=8", "--param", "vec=8");
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "\n#define DTYPE_BF16 1\n");
	tr_expect_in(r.out, "\n#define LANES 16\n");
	tr_expect_in(r.out, "\n#define VEC 8\n");
	tr_expect_in(r.out, "\n#define ROWS_PER_CTA 8\n");
	tr_free(&r);
}

/* `autotune gen --template T` with no params prints T's default variant: the
 * defaults of every manifest must make one (softmax_tile's rows_per_cta
 * of 32 once broke its own tile rule). */
Test(cli, every_templates_defaults_make_a_variant)
{
	tf_load_templates();
	size_t n;
	const tmpl_manifest *t = tf_templates(&n);
	cr_assert_gt(n, 10);
	for (size_t i = 0; i < n; i++) {
		tr_result r = RUN("gen", "--template", t[i].name, "--op", t[i].op);
		cr_assert_eq(r.status, 0, "autotune gen --template %s: %s", t[i].name, r.err);
		tr_free(&r);
	}
	tf_free_templates();
}

Test(cli, gen_compile)
{
	tr_result r = RUN("gen", "--template", "softmax_warp", "--compile");
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "\n// compiled for sm_90 in ");
	tr_expect_in(r.out, " registers, ");
	tr_free(&r);
}

Test(cli, gen_cubin_writes_the_compiled_image)
{
	const char *path = tmp_path("variant.cubin");
	tr_result r = RUN("gen", "--template", "softmax_warp", "--dtype", "bf16", "-M", "3", "-N",
			  "7", "--param", "lanes=4", "--param", "rows_per_cta=32", "--param", "vec=2",
			  "--param", "elems_per_thread=2", "--cubin", path);
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "\n// compiled for sm_90 in ");
	tr_expect_in(r.out, "\n// launch at M=3 N=7: threads=128 rows_per_cta=32 dyn_smem=0 "
			    "persistent=0 ctas_per_row=1 cooperative=0\n");
	tr_free(&r);
	FILE *f = fopen(path, "rb");
	cr_assert(f, "no cubin at %s", path);
	unsigned char head[4] = { 0 };
	size_t got = fread(head, 1, sizeof head, f);
	fclose(f);
	cr_assert(got == 4 && memcmp(head, "\x7f" "ELF", 4) == 0, "not an ELF image");

	r = RUN("gen", "--template", "softmax_warp", "--cubin", tmp_path("no-such-dir/x.cubin"));
	tr_expect_status(&r, 1);
	tr_expect_in(r.err, "cannot write the cubin to ");
	tr_free(&r);
}

/* ---- templates ------------------------------------------------------------------------ */

Test(cli, templates_lists_every_template)
{
	tr_result r = RUN("templates");
	tr_expect_status(&r, 0);
	/* in templates/'s order: cross_entropy_* come first */
	cr_assert(starts_with(r.out, "cross_entropy_block "), "stdout:\n%.200s", r.out);
	tr_expect_in(r.out, "softmax_block (op softmax, log_softmax): ");
	tr_expect_in(r.out, "softmax_warp (op softmax, log_softmax): ");
	/* the op's description (tuner/ops), as the sweep uses it */
	tr_expect_in(r.out, "  op: softmax: softmax over each row (torch.softmax(x, dim=-1)); kernel "
			    "softmax_kernel(");
	tr_expect_in(r.out, "bytes moved (1 read + 1 written) x M x N x element size; check "
			    "tolerance f32 1e-05 f16 1e-02 bf16 1e-02\n");
	tr_expect_in(r.out, "    threads            default 256   values 64,128,256,512,1024");
	tr_expect_in(r.out, "  launch: threads=threads rows_per_cta=rows_per_cta ");
	cr_assert_str_eq(r.err, "");
	tr_free(&r);
	r = RUN("templates", "--templates", tmp_path("nothing-here"));
	tr_expect_status(&r, 1);
	tr_free(&r);
}
