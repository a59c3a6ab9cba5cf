/* Tests of the command line: build/autotune (built by `make test` before the
 * tests run; the tests run from the repository root) is run as a subprocess
 * with AUTOTUNE_DB pointing into a temporary folder, and its exit status,
 * stdout and stderr are checked. This machine has no GPU: a real sweep must
 * fail before writing anything; --compile-only works (NVRTC only). */
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db/tuning_db.h"
#include "gen/manifest.h"
#include "gen/specialize.h"

#define AUTOTUNE "build/autotune"
#define EXEC_FAILED "test_cli: exec failed"

static char tmp_dir[256];
static char env_db[512];

static void make_dir(void)
{
	snprintf(tmp_dir, sizeof tmp_dir, "/tmp/test_cli.XXXXXX");
	cr_assert_not_null(mkdtemp(tmp_dir));
	snprintf(env_db, sizeof env_db, "%s/env.db", tmp_dir);
}

static void remove_dir(void)
{
	DIR *d = opendir(tmp_dir);
	if (!d)
		return;
	const struct dirent *e;
	while ((e = readdir(d))) {
		char path[512];
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", tmp_dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(tmp_dir);
}

TestSuite(cli, .init = make_dir, .fini = remove_dir);

static const char *path_of(const char *name)
{
	static char buf[4][512];
	static int next;
	char *p = buf[next++ % 4];
	snprintf(p, 512, "%s/%s", tmp_dir, name);
	return p;
}

static void write_file(const char *name, const char *text)
{
	FILE *f = fopen(path_of(name), "w");
	cr_assert_not_null(f, "cannot write %s", path_of(name));
	fputs(text, f);
	fclose(f);
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "cannot read %s", path);
	char *buf = NULL;
	size_t len = 0, cap = 0;
	char chunk[4096];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
		if (len + n + 1 > cap) {
			cap = (len + n + 1) * 2;
			buf = realloc(buf, cap);
		}
		memcpy(buf + len, chunk, n);
		len += n;
	}
	fclose(f);
	if (!buf)
		buf = calloc(1, 1);
	buf[len] = '\0';
	return buf;
}

static int file_exists(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0;
}

typedef struct run_result {
	int status; /* exit status */
	char *out, *err;
} run_result;

static void run_free(run_result *r)
{
	free(r->out);
	free(r->err);
}

/* Runs build/autotune with the NULL-terminated arguments, stdout and stderr
 * captured separately. */
static run_result run_argv(const char *const *args)
{
	cr_assert_eq(access(AUTOTUNE, X_OK), 0, AUTOTUNE " is missing: run `make build/autotune`");
	char *argv[64];
	size_t argc = 0;
	argv[argc++] = (char *)AUTOTUNE;
	for (; *args; args++) {
		cr_assert_lt(argc, 63);
		argv[argc++] = (char *)*args;
	}
	argv[argc] = NULL;
	run_result r = { -1, NULL, NULL };
	/* another build may be relinking the binary: retry a failed exec a little */
	for (int attempt = 0; attempt < 10; attempt++) {
		const char *out_path = path_of("stdout"), *err_path = path_of("stderr");
		fflush(NULL);
		pid_t pid = fork();
		cr_assert_geq(pid, 0);
		if (pid == 0) {
			int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			int in = open("/dev/null", O_RDONLY);
			if (o < 0 || e < 0 || in < 0)
				_exit(126);
			dup2(in, 0);
			dup2(o, 1);
			dup2(e, 2);
			setenv(TDB_PATH_ENV, env_db, 1);
			unsetenv("AUTOTUNE_TEMPLATES");
			execv(AUTOTUNE, argv);
			dprintf(2, EXEC_FAILED ": %s\n", strerror(errno));
			_exit(127);
		}
		int ws;
		cr_assert_eq(waitpid(pid, &ws, 0), pid);
		cr_assert(WIFEXITED(ws), "autotune %s died with signal %d", argc > 1 ? argv[1] : "",
			  WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
		r.status = WEXITSTATUS(ws);
		r.out = read_file(out_path);
		r.err = read_file(err_path);
		if (!(r.status == 127 && strstr(r.err, EXEC_FAILED)))
			break;
		run_free(&r);
		r.out = r.err = NULL;
		sleep(1);
	}
	cr_assert_not_null(r.out, "could not run " AUTOTUNE);
	return r;
}

#define RUN(...) run_argv((const char *const[]){ __VA_ARGS__, NULL })
#define RUN0() run_argv((const char *const[]){ NULL })

static void expect_status(const run_result *r, int status)
{
	cr_assert_eq(r->status, status, "exit status %d, want %d\n--- stdout:\n%s--- stderr:\n%s",
		     r->status, status, r->out, r->err);
}

static void expect_in(const char *text, const char *what, const char *want)
{
	cr_assert_not_null(strstr(text, want), "\"%s\" not in %s:\n%s", want, what, text);
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
	run_result r = RUN0();
	expect_status(&r, 2);
	expect_in(r.err, "stderr", "usage: autotune");
	cr_assert_str_eq(r.out, "");
	run_free(&r);
}

Test(cli, help_prints_the_overview_on_stdout)
{
	run_result a = RUN("help"), b = RUN("--help"), c = RUN("-h");
	expect_status(&a, 0);
	expect_status(&b, 0);
	expect_status(&c, 0);
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
		expect_in(a.out, "the overview", line);
	}
	run_free(&a);
	run_free(&b);
	run_free(&c);
}

Test(cli, help_command_equals_command_dash_dash_help)
{
	static const char *const commands[] = { "sweep", "list", "templates", "gen", "version" };
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
		run_result a = RUN("help", commands[i]), b = RUN(commands[i], "--help");
		expect_status(&a, 0);
		expect_status(&b, 0);
		char usage[64];
		snprintf(usage, sizeof usage, "usage: autotune %s", commands[i]);
		cr_assert(starts_with(a.out, usage), "help %s:\n%s", commands[i], a.out);
		cr_assert_str_eq(a.out, b.out, "help %s and %s --help differ", commands[i],
				 commands[i]);
		run_free(&a);
		run_free(&b);
	}
	/* --help wins over anything else on the line, even a bad option */
	run_result a = RUN("help", "sweep"), c = RUN("sweep", "--bogus", "-h");
	expect_status(&c, 0);
	cr_assert_str_eq(a.out, c.out);
	expect_in(a.out, "help sweep", "--compile-only");
	run_free(&a);
	run_free(&c);
}

Test(cli, help_for_an_unknown_command)
{
	run_result r = RUN("help", "frob");
	expect_status(&r, 2);
	expect_in(r.err, "stderr", "no command \"frob\"");
	run_free(&r);
}

Test(cli, unknown_command)
{
	run_result r = RUN("frob");
	expect_status(&r, 2);
	expect_in(r.err, "stderr", "unknown command \"frob\"");
	expect_in(r.err, "stderr", "see 'autotune help'");
	cr_assert_str_eq(r.out, "");
	run_free(&r);
}

Test(cli, version)
{
	run_result a = RUN("version"), b = RUN("--version"), c = RUN("version", "x");
	expect_status(&a, 0);
	cr_assert_str_eq(a.out, "autotune 0.1.0\n");
	expect_status(&b, 0);
	cr_assert_str_eq(b.out, "autotune 0.1.0\n");
	expect_status(&c, 2);
	run_free(&a);
	run_free(&b);
	run_free(&c);
}

/* ---- sweep: options -------------------------------------------------------------- */

Test(cli, sweep_unknown_option)
{
	run_result r = RUN("sweep", "--bogus");
	expect_status(&r, 2);
	expect_in(r.err, "stderr", "autotune sweep: unknown option --bogus\n");
	expect_in(r.err, "stderr", "see 'autotune help sweep'\n");
	cr_assert_str_eq(r.out, "");
	run_free(&r);
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
		run_result r = RUN("sweep", cases[i][0], cases[i][1]);
		expect_status(&r, 2);
		expect_in(r.err, "stderr", cases[i][0]);
		expect_in(r.err, "stderr", "see 'autotune help sweep'");
		run_free(&r);
	}
	run_result r = RUN("sweep", "--db");
	expect_status(&r, 2);
	expect_in(r.err, "stderr", "--db needs a value");
	run_free(&r);
	r = RUN("sweep", "--device", "0", "--devices", "0,1");
	expect_status(&r, 2);
	expect_in(r.err, "stderr", "give --device or --devices, not both");
	run_free(&r);
	r = RUN("sweep", "--audit", "--full-timing");
	expect_status(&r, 2);
	expect_in(r.err, "stderr", "cannot be combined with --full-timing");
	run_free(&r);
	r = RUN("sweep", "extra");
	expect_status(&r, 2);
	expect_in(r.err, "stderr", "unexpected argument \"extra\"");
	run_free(&r);
	cr_assert(!file_exists(env_db), "a usage error wrote the database");
}

Test(cli, sweep_bad_arch_is_reported_once)
{
	run_result r = RUN("sweep", "--arch", "sm_x");
	expect_status(&r, 2);
	cr_assert_str_eq(r.err, "autotune sweep: --arch expects sm_XX (e.g. sm_90), got \"sm_x\"\n"
				"see 'autotune help sweep'\n");
	run_free(&r);
}

/* ---- sweep: configs --------------------------------------------------------------- */

Test(cli, sweep_missing_config)
{
	run_result r = RUN("sweep", "-c", "missing.yaml");
	expect_status(&r, 1);
	expect_in(r.err, "stderr", "missing.yaml: cannot open");
	run_free(&r);
}

Test(cli, sweep_config_with_a_yaml_error_names_file_line_and_column)
{
	write_file("bad.yaml", "sweeps:\n"
			       "  - op: softmax\n"
			       "    dtypes: [f32\n"
			       "    M: [64]\n");
	run_result r = RUN("sweep", "-c", path_of("bad.yaml"), "--db", path_of("bad.db"));
	expect_status(&r, 1);
	char prefix[600];
	snprintf(prefix, sizeof prefix, "autotune: %s:", path_of("bad.yaml"));
	cr_assert(starts_with(r.err, prefix), "stderr:\n%s", r.err);
	int line = 0, col = 0;
	cr_assert_eq(sscanf(r.err + strlen(prefix), "%d:%d: ", &line, &col), 2, "stderr:\n%s", r.err);
	cr_assert(line == 3 || line == 4, "line %d", line);
	cr_assert_geq(col, 1);
	cr_assert(!file_exists(path_of("bad.db")));
	run_free(&r);

	/* an error the reader finds, at the exact place */
	write_file("neg.yaml", "sweeps:\n"
			       "  - op: softmax\n"
			       "    dtypes: [f32]\n"
			       "    M: [-3]\n"
			       "    N: [1000]\n");
	r = RUN("sweep", "-c", path_of("neg.yaml"));
	expect_status(&r, 1);
	char want[700];
	snprintf(want, sizeof want, "autotune: %s:4:9: expected a positive integer for M, got \"-3\"\n",
		 path_of("neg.yaml"));
	cr_assert_str_eq(r.err, want);
	run_free(&r);
}

Test(cli, sweep_config_naming_an_unknown_template)
{
	write_file("unk.yaml", "sweeps:\n"
			       "  - op: softmax\n"
			       "    dtypes: [f32]\n"
			       "    M: [64]\n"
			       "    N: [1000]\n"
			       "    templates: [softmax_block, nope]\n");
	run_result r = RUN("sweep", "-c", path_of("unk.yaml"), "--db", path_of("unk.db"));
	expect_status(&r, 1);
	char want[600];
	snprintf(want, sizeof want, "%s:2: unknown template \"nope\" (known: ", path_of("unk.yaml"));
	expect_in(r.err, "stderr", want);
	expect_in(r.err, "stderr", "softmax_block");
	expect_in(r.err, "stderr", "softmax_warp");
	cr_assert(!file_exists(path_of("unk.db")));
	run_free(&r);
}

Test(cli, sweep_without_a_gpu_fails_and_writes_nothing)
{
	write_file("good.yaml", small_config);
	run_result r = RUN("sweep", "-c", path_of("good.yaml"), "--db", path_of("out.db"));
	expect_status(&r, 1);
	cr_assert(strstr(r.err, "no NVIDIA driver") || strstr(r.err, "no NVIDIA GPU"),
		  "stderr:\n%s", r.err);
	cr_assert(!file_exists(path_of("out.db")), "the database was created");
	cr_assert(!file_exists(path_of("out.db-wal")));
	cr_assert_str_eq(r.out, "");
	run_free(&r);
	/* the same through $AUTOTUNE_DB */
	r = RUN("sweep", "-c", path_of("good.yaml"));
	expect_status(&r, 1);
	cr_assert(!file_exists(env_db), "$AUTOTUNE_DB was created");
	run_free(&r);
}

Test(cli, sweep_compile_only_small_config)
{
	write_file("small.yaml", small_config);
	run_result r = RUN("sweep", "--compile-only", "-c", path_of("small.yaml"), "--db",
			   path_of("co.db"));
	expect_status(&r, 0);
	expect_in(r.out, "stdout", "compile-only for sm_90: 1 shapes, ");
	expect_in(r.out, "stdout", " compiled, 0 failed");
	cr_assert_null(strstr(r.out, "FAILED:"), "stdout:\n%s", r.out);
	unsigned long variants = 0, kernels = 0;
	const char *at = strstr(r.out, "1 shapes, ");
	cr_assert_eq(sscanf(at, "1 shapes, %lu variants, %lu distinct kernels", &variants,
			    &kernels), 2, "stdout:\n%s", r.out);
	cr_assert_gt(variants, 0);
	cr_assert_gt(kernels, 0);
	cr_assert_leq(kernels, variants);
	/* the kernels went into the database's compile cache: a second run
	 * compiles nothing and says so */
	cr_assert(file_exists(path_of("co.db")), "--compile-only kept no compile cache");
	cr_assert(!file_exists(env_db));
	run_free(&r);
	r = RUN("sweep", "--compile-only", "-c", path_of("small.yaml"), "--db", path_of("co.db"));
	expect_status(&r, 0);
	expect_in(r.out, "stdout", "; 0 compiled now (");
	char from_cache[64];
	snprintf(from_cache, sizeof from_cache, "), %lu from the compile cache", kernels);
	expect_in(r.out, "stdout", from_cache);
	run_free(&r);
}

/* ---- list ----------------------------------------------------------------------------- */

Test(cli, list_missing_database)
{
	run_result r = RUN("list", "--db", path_of("missing.db"));
	expect_status(&r, 1);
	expect_in(r.err, "stderr", "no such database");
	cr_assert(!file_exists(path_of("missing.db")), "list created the database");
	run_free(&r);
	r = RUN("list"); /* $AUTOTUNE_DB, which does not exist */
	expect_status(&r, 1);
	expect_in(r.err, "stderr", env_db);
	expect_in(r.err, "stderr", "no such database");
	cr_assert(!file_exists(env_db));
	run_free(&r);
}

Test(cli, list_bad_format)
{
	run_result r = RUN("list", "--format", "xml");
	expect_status(&r, 2);
	expect_in(r.err, "stderr", "--format must be table, csv or json, got \"xml\"");
	run_free(&r);
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
	make_db(path_of("list.db"));
	run_result r = RUN("list", "--db", path_of("list.db"), "--format", "csv");
	expect_status(&r, 0);
	cr_assert_str_eq(r.out, "gpu,cc,op,dtype,M,N,template,params,time_us,gbps,pct_copy\n"
				"NVIDIA H100 80GB HBM3,9.0,softmax,f32,4096,1024,softmax_block,"
				"threads=256 vec=4,12.346,2718.2,90.6\n"
				"NVIDIA H100 80GB HBM3,9.0,softmax,bf16,8,3,,,,,\n");
	run_free(&r);

	r = RUN("list", "--db", path_of("list.db"), "--format", "json");
	expect_status(&r, 0);
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
	run_free(&r);

	/* the default format is the text table, and $AUTOTUNE_DB is used without --db */
	make_db(env_db);
	r = RUN("list");
	expect_status(&r, 0);
	cr_assert(starts_with(r.out, "gpu  "), "stdout:\n%s", r.out);
	expect_in(r.out, "stdout", "softmax_block  threads=256 vec=4  12.346");
	run_free(&r);
}

/* ---- gen --------------------------------------------------------------------------------- */

Test(cli, gen_needs_a_template)
{
	run_result r = RUN("gen");
	expect_status(&r, 2);
	expect_in(r.err, "stderr", "--template is required");
	expect_in(r.err, "stderr", "see 'autotune help gen'");
	run_free(&r);
}

Test(cli, gen_unknown_template)
{
	run_result r = RUN("gen", "--template", "nope");
	expect_status(&r, 1);
	expect_in(r.err, "stderr", "unknown template \"nope\"");
	cr_assert_str_eq(r.out, "");
	run_free(&r);
}

Test(cli, gen_param_not_allowed)
{
	run_result r = RUN("gen", "--template", "softmax_block", "--param", "threads=3");
	expect_status(&r, 1);
	expect_in(r.err, "stderr", "not allowed");
	cr_assert_str_eq(r.out, "");
	run_free(&r);
	r = RUN("gen", "--template", "softmax_block", "--param", "frob=1");
	expect_status(&r, 1);
	expect_in(r.err, "stderr", "no parameter \"frob\"");
	run_free(&r);
	r = RUN("gen", "--template", "softmax_block", "--dtype", "f64");
	expect_status(&r, 2);
	expect_in(r.err, "stderr", "unknown dtype \"f64\"");
	run_free(&r);
}

Test(cli, gen_shape_the_variant_cannot_serve)
{
	run_result r = RUN("gen", "--template", "softmax_warp", "-N", "1000000");
	expect_status(&r, 1);
	expect_in(r.err, "stderr", "not a valid variant");
	expect_in(r.err, "stderr", "lanes * elems_per_thread >= N");
	cr_assert_str_eq(r.out, "");
	run_free(&r);
}

Test(cli, gen_prints_the_specialised_source)
{
	run_result r = RUN("gen", "--template", "softmax_block", "--param", "elems_per_thread=4",
			   "-N", "1024");
	expect_status(&r, 0);
	cr_assert(starts_with(r.out, "// Generated by autotune"), "stdout:\n%.300s", r.out);
	cr_assert_str_eq(r.err, "");
	/* exactly what specialize() gives for the same variant */
	tmpl_manifest *ts;
	size_t n;
	at_error err = { { 0 } };
	cr_assert_eq(manifest_load_dir("templates", &ts, &n, &err), 0, "%s", err.msg);
	const tmpl_manifest *t = NULL;
	for (size_t i = 0; i < n; i++)
		if (strcmp(ts[i].name, "softmax_block") == 0)
			t = &ts[i];
	cr_assert_not_null(t);
	variant v;
	variant_defaults(&v, t, AT_F32);
	cr_assert_eq(variant_set(&v, "elems_per_thread=4", &err), 0, "%s", err.msg);
	char *src = specialize(&v, &err);
	cr_assert_not_null(src, "%s", err.msg);
	cr_assert_str_eq(r.out, src);
	free(src);
	manifest_free_all(ts, n);
	run_free(&r);

	r = RUN("gen", "--template", "softmax_warp", "--dtype", "bf16", "--param", "lanes=16",
		"--param", "rows_per_cta=8", "--param", "vec=8");
	expect_status(&r, 0);
	expect_in(r.out, "stdout", "\n#define DTYPE_BF16 1\n");
	expect_in(r.out, "stdout", "\n#define LANES 16\n");
	expect_in(r.out, "stdout", "\n#define VEC 8\n");
	expect_in(r.out, "stdout", "\n#define ROWS_PER_CTA 8\n");
	run_free(&r);
}

Test(cli, gen_compile)
{
	run_result r = RUN("gen", "--template", "softmax_warp", "--compile");
	expect_status(&r, 0);
	expect_in(r.out, "stdout", "\n// compiled for sm_90 in ");
	expect_in(r.out, "stdout", " registers, ");
	run_free(&r);
}

/* ---- templates ------------------------------------------------------------------------ */

Test(cli, templates_lists_every_template)
{
	run_result r = RUN("templates");
	expect_status(&r, 0);
	cr_assert(starts_with(r.out, "softmax_"), "stdout:\n%.200s", r.out);
	expect_in(r.out, "stdout", "softmax_block (op softmax): ");
	expect_in(r.out, "stdout", "softmax_warp (op softmax): ");
	expect_in(r.out, "stdout", "    threads            default 256   values 64,128,256,512,1024");
	expect_in(r.out, "stdout", "  launch: threads=threads rows_per_cta=rows_per_cta ");
	cr_assert_str_eq(r.err, "");
	run_free(&r);
	r = RUN("templates", "--templates", path_of("nothing-here"));
	expect_status(&r, 1);
	run_free(&r);
}
