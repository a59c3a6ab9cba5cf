/* `autotune selftest`: option parsing, then the selftest on the GPU
 * (selftest.c with the runner of selftest_gpu.c), a dry run that only lists
 * the shapes and counts, or the same under compute-sanitizer
 * (selftest_sanitize.c). */
#include <getopt.h>
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

int cmd_selftest(int argc, char **argv)
{
	enum { OPT_TEMPLATES = 256, OPT_DTYPE, OPT_DEVICE, OPT_DB, OPT_THREADS, OPT_QUICK,
	       OPT_SMALL, OPT_SANITIZE, OPT_DRY_RUN, OPT_CASE };
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "templates", required_argument, NULL, OPT_TEMPLATES },
		{ "dtype", required_argument, NULL, OPT_DTYPE },
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "db", required_argument, NULL, OPT_DB },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "quick", no_argument, NULL, OPT_QUICK },
		{ "small", no_argument, NULL, OPT_SMALL },
		{ "sanitize", no_argument, NULL, OPT_SANITIZE },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "case", required_argument, NULL, OPT_CASE },
		{ NULL, 0, NULL, 0 },
	};
	selftest_options o = { .config_path = NULL, .mode = ST_MODE_FULL,
			       .progress = stderr };
	const char *db_path = NULL;
	long long device = 0, threads = 0;
	int quick = 0, small = 0, sanitize = 0, dry = 0, c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:", opts, NULL)) != -1) {
		switch (c) {
		case 'c': o.config_path = optarg; break;
		case OPT_TEMPLATES: o.templates_dir = optarg; break;
		case OPT_DTYPE:
			if (dtype_list_parse(optarg, &o.dtype_mask))
				return cli_usage_error("selftest", "--dtype expects f32, f16 or bf16 "
						       "(comma-separated), got \"%s\"", optarg);
			break;
		case OPT_DEVICE:
			if (cli_parse_long("selftest", "--device", optarg, 0, 1023, &device))
				return 2;
			break;
		case OPT_DB: db_path = optarg; break;
		case OPT_THREADS:
			if (cli_parse_long("selftest", "--threads", optarg, 1, 256, &threads))
				return 2;
			break;
		case OPT_QUICK: quick = 1; break;
		case OPT_SMALL: small = 1; break;
		case OPT_SANITIZE: sanitize = 1; break;
		case OPT_DRY_RUN: dry = 1; break;
		case OPT_CASE:
			if (st_case_list_parse(optarg, &o.case_mask))
				return cli_usage_error("selftest", "--case expects sizes, special, "
						       "strided, in-place or 2^31 (comma-separated), "
						       "got \"%s\"", optarg);
			break;
		case ':': return cli_usage_error("selftest", "%s needs a value", argv[optind - 1]);
		default: return cli_usage_error("selftest", "unknown option %s", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("selftest", "unexpected argument \"%s\"", argv[optind]);
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
		sanitize_options so = { &o, (int)device, db_path, (int)threads };
		return selftest_sanitize(&so);
	}
	return on_gpu(&o, (int)device, db_path, (int)threads);
}
