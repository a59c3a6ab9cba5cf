/* `autotune sweep`: option parsing; the work is in sweep.c. */
#include <getopt.h>
#include <stdio.h>

#include "tuner/cli.h"
#include "tuner/sweep.h"

int cmd_sweep(int argc, char **argv)
{
	enum { OPT_DB = 256, OPT_COMPILE_ONLY, OPT_ARCH, OPT_DEVICE, OPT_TEMPLATES, OPT_THREADS,
	       OPT_SHARD, OPT_FULL_TIMING };
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "db", required_argument, NULL, OPT_DB },
		{ "compile-only", no_argument, NULL, OPT_COMPILE_ONLY },
		{ "arch", required_argument, NULL, OPT_ARCH },
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "templates", required_argument, NULL, OPT_TEMPLATES },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "shard", required_argument, NULL, OPT_SHARD },
		{ "full-timing", no_argument, NULL, OPT_FULL_TIMING },
		{ NULL, 0, NULL, 0 },
	};
	sweep_options o = { .config_path = "configs/softmax.yaml" };
	long long v;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:", opts, NULL)) != -1) {
		switch (c) {
		case 'c': o.config_path = optarg; break;
		case OPT_DB: o.db_path = optarg; break;
		case OPT_COMPILE_ONLY: o.compile_only = 1; break;
		case OPT_ARCH:
			if (cli_parse_arch("sweep", optarg, &o.arch))
				return 2;
			break;
		case OPT_DEVICE:
			if (cli_parse_long("sweep", "--device", optarg, 0, 1023, &v))
				return 2;
			o.device = (int)v;
			break;
		case OPT_TEMPLATES: o.templates_dir = optarg; break;
		case OPT_THREADS:
			if (cli_parse_long("sweep", "--threads", optarg, 1, 256, &v))
				return 2;
			o.threads = (int)v;
			break;
		case OPT_FULL_TIMING: o.full_timing = 1; break;
		case OPT_SHARD:
			if (shard_parse(optarg, &o.shard))
				return cli_usage_error("sweep", "--shard expects K/N with 1 <= K <= N, got \"%s\"",
						       optarg);
			break;
		case ':': return cli_usage_error("sweep", "%s needs a value", argv[optind - 1]);
		default: return cli_usage_error("sweep", "unknown option %s", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("sweep", "unexpected argument \"%s\"", argv[optind]);
	at_error err = { { 0 } };
	if (o.compile_only) {
		int rc = sweep_compile_only(&o, &err);
		return rc < 0 ? cli_fail(err.msg) : rc;
	}
	return sweep_run(&o, &err) ? cli_fail(err.msg) : 0;
}
