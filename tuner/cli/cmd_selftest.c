/* `autotune selftest`: option parsing, then the selftest on the GPU
 * (selftest.c with the runner of selftest_gpu.c), a dry run that only lists
 * the shapes and counts, or the same under compute-sanitizer
 * (selftest_sanitize.c). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tuner/cli/cli.h"
#include "tuner/cli/config_subset.h"
#include "tuner/sweep/plan.h"
#include "tuner/selftest/selftest.h"
#include "tuner/selftest/selftest_gpu.h"
#include "tuner/selftest/selftest_sanitize.h"

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int dry_run(const selftest_options *o)
{
	at_error err = { { 0 } };
	long long runs[ST_CASE_COUNT];
	if (selftest_count(o, runs, stdout, &err))
		return cli_fail(err.msg);
	long long total = 0;
	printf("\nruns per case (nominal sm_90 limits; the GPU's may differ a little):");
	for (int c = 0; c < ST_CASE_COUNT; c++) {
		printf(" %s %lld%s", st_case_name((st_case)c), runs[c], c + 1 < ST_CASE_COUNT ? "," : "");
		total += runs[c];
	}
	printf("; %lld in all\n", total);
	return 0;
}

static int on_gpu(const selftest_options *o, int device, const char *db_path, int threads)
{
	at_error err = { { 0 } };
	st_gpu g;
	double start = now_s();
	if (st_gpu_open(&g, device, db_path, threads, &err))
		return cli_fail(err.msg);
	/* the sanitizer makes launches 10-100x slower */
	g.launch_timeout_s = o->mode == ST_MODE_SANITIZE ? 10 * ST_LAUNCH_TIMEOUT_S : ST_LAUNCH_TIMEOUT_S;
	fprintf(stderr, "selftest: %s (sm_%d, %d SMs)%s\n", g.gpu.info.name, g.gpu.cc,
		g.gpu.info.sm_count, o->mode == ST_MODE_SANITIZE ? ", small shapes" : "");
	st_runner runner = st_gpu_runner(&g);
	int rc = selftest_run(o, &runner, stdout, &err);
	if (rc >= 0)
		printf("%lld launches; %zu kernels compiled (%.1f s), %zu from the compile cache; "
		       "%.1f s in all\n", g.launches, g.cache.compiled, g.cache.compile_ms / 1e3,
		       g.cache.from_db, now_s() - start);
	st_gpu_close(&g);
	return rc < 0 ? cli_fail(err.msg) : rc;
}

typedef struct selftest_cli {
	selftest_options o;
	const char *db_path;
	int device, threads, quick, small, sanitize, dry;
} selftest_cli;

static int parse_dtypes(const char *cmd, const cli_option *opt, const char *text, void *base)
{
	(void)opt;
	if (dtype_list_parse(text, &((selftest_cli *)base)->o.dtype_mask))
		return cli_usage_error(cmd, "--dtype expects f32, f16 or bf16 (comma-separated), "
				       "got \"%s\"", text);
	return 0;
}

static int parse_cases(const char *cmd, const cli_option *opt, const char *text, void *base)
{
	(void)opt;
	if (st_case_list_parse(text, &((selftest_cli *)base)->o.case_mask))
		return cli_usage_error(cmd, "--case expects sizes, special, strided, in-place or "
				       "2^31 (comma-separated), got \"%s\"", text);
	return 0;
}

#define O(field) offsetof(selftest_cli, field)
const cli_option cli_selftest_options[] = {
	CLI_STRING('c', "config", "FILE", O(o.config_path),
		   "its templates folder, and the op its sweeps name when --op\n"
		   "is not given"),
	CLI_STRING(0, "templates", "DIR", O(o.templates_dir), "templates folder"),
	CLI_STRING(0, "op", "NAME", O(o.op),
		   "the op whose variants run (default: -c's one op, else softmax)"),
	CLI_CALLBACK(0, "dtype", "LIST", parse_dtypes,
		     "only these dtypes (comma-separated or repeated)"),
	CLI_INT(0, "device", "N", O(device), 0, 1023, "which GPU (default 0)"),
	CLI_STRING(0, "db", "FILE", O(db_path),
		   "keep compiled kernels in FILE's compile cache (default: none)"),
	CLI_INT(0, "threads", "N", O(threads), 1, 256,
		"NVRTC compile threads (default: one per core)"),
	CLI_FLAG(0, "quick", O(quick), "skip the 2^31 case"),
	CLI_FLAG(0, "small", O(small),
		 "only the sanitizer's small shapes (strided, aligned and odd,\n"
		 "N = 7 to 262147, a few rows each, buffers exactly the rows)"),
	CLI_FLAG(0, "sanitize", O(sanitize),
		 "run --small under compute-sanitizer, --tool memcheck then\n"
		 "--tool racecheck, and report each tool clean or not clean\n"
		 "with its first errors ($AUTOTUNE_SANITIZER, PATH,\n"
		 "$CUDA_HOME/bin or /usr/local/cuda/bin)"),
	CLI_CALLBACK(0, "case", "LIST", parse_cases,
		     "only these cases: sizes, special, strided, in-place, 2^31\n"
		     "(comma-separated or repeated)"),
	CLI_FLAG(0, "dry-run", O(dry),
		 "list the shapes and how many variants each runs (no GPU)"),
	CLI_END,
};
#undef O

int cmd_selftest(int argc, char **argv)
{
	selftest_cli cli = { .o = { .config_path = NULL, .mode = ST_MODE_FULL,
				    .progress = stderr } };
	int nargs;
	if (cli_parse_options("selftest", argc, argv, &cli, &nargs))
		return 2;
	if (nargs)
		return cli_usage_error("selftest", "unexpected argument \"%s\"", argv[1]);
	selftest_options o = cli.o;
	const char *db_path = cli.db_path;
	int device = cli.device, threads = cli.threads;
	int quick = cli.quick, small = cli.small, sanitize = cli.sanitize, dry = cli.dry;
	if (small && quick)
		return cli_usage_error("selftest", "--small and --quick choose different shapes; "
				       "give one");
	if (quick && o.case_mask == 1u << ST_CASE_BIG)
		return cli_usage_error("selftest", "--quick skips the 2^31 case, the only one "
				       "--case asks for");
	if ((small || sanitize) && o.case_mask && !(o.case_mask & (1u << ST_CASE_STRIDED)))
		return cli_usage_error("selftest", "--small and --sanitize run only the strided "
				       "case, which --case leaves out");
	if (cli_db_path("selftest", db_path, 0, &db_path))
		return 2;
	o.mode = small || sanitize ? ST_MODE_SANITIZE : quick ? ST_MODE_QUICK : ST_MODE_FULL;
	if (!o.config_path)
		o.config_path = plan_default_config("softmax.yaml");
	if (dry)
		return dry_run(&o);
	if (sanitize) {
		sanitize_options so = { &o, device, db_path, threads };
		return selftest_sanitize(&so);
	}
	return on_gpu(&o, device, db_path, threads);
}
