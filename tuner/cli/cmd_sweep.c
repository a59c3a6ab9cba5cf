/* `autotune sweep`: option parsing; the work is in sweep.c. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "tuner/cli/cli.h"
#include "tuner/sweep/plan.h"
#include "tuner/sweep/sweep.h"

/* --devices 0,1,3: distinct GPU ordinals. */
static int parse_devices(const char *list, sweep_options *o)
{
	o->ndevices = 0;
	const char *p = list;
	for (;;) {
		char *end;
		errno = 0;
		long v = strtol(p, &end, 10);
		if (end == p || errno || v < 0 || v > 1023 || (*end && *end != ','))
			return cli_usage_error("sweep", "--devices expects GPU ordinals separated by "
					       "commas (e.g. 0,1), got \"%s\"", list) ? 1 : 1;
		for (int i = 0; i < o->ndevices; i++)
			if (o->devices[i] == (int)v)
				return cli_usage_error("sweep", "--devices lists GPU %ld twice", v) ? 1 : 1;
		if (o->ndevices == (int)(sizeof o->devices / sizeof o->devices[0]))
			return cli_usage_error("sweep", "--devices lists more than %d GPUs",
					       o->ndevices) ? 1 : 1;
		o->devices[o->ndevices++] = (int)v;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

int cmd_sweep(int argc, char **argv)
{
	enum { OPT_DB = 256, OPT_COMPILE_ONLY, OPT_ARCH, OPT_DEVICE, OPT_TEMPLATES, OPT_THREADS,
	       OPT_SHARD, OPT_FULL_TIMING, OPT_DEVICES, OPT_WATCHDOG, OPT_AUDIT };
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
		{ "devices", required_argument, NULL, OPT_DEVICES },
		{ "watchdog", required_argument, NULL, OPT_WATCHDOG },
		{ "audit", no_argument, NULL, OPT_AUDIT },
		{ NULL, 0, NULL, 0 },
	};
	sweep_options o = { .config_path = NULL,
			    .watchdog_ms = SWEEP_DEFAULT_WATCHDOG_S * 1000 };
	int device_given = 0;
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
			device_given = 1;
			break;
		case OPT_DEVICES:
			if (parse_devices(optarg, &o))
				return 2;
			break;
		case OPT_WATCHDOG:
			if (cli_parse_long("sweep", "--watchdog", optarg, 0, 86400, &v))
				return 2;
			o.watchdog_ms = (int)v * 1000;
			break;
		case OPT_TEMPLATES: o.templates_dir = optarg; break;
		case OPT_THREADS:
			if (cli_parse_long("sweep", "--threads", optarg, 1, 256, &v))
				return 2;
			o.threads = (int)v;
			break;
		case OPT_FULL_TIMING: o.full_timing = 1; break;
		case OPT_AUDIT: o.audit = 1; break;
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
	if (o.audit && o.full_timing)
		return cli_usage_error("sweep", "--audit checks the rounds against full timing; "
				       "it cannot be combined with --full-timing");
	if (device_given && o.ndevices)
		return cli_usage_error("sweep", "give --device or --devices, not both");
	if (cli_db_path("sweep", o.db_path, 1, &o.db_path))
		return 2;
	if (!o.config_path)
		o.config_path = plan_default_config("softmax.yaml");
	at_error err = { { 0 } };
	if (o.compile_only) {
		int rc = sweep_compile_only(&o, &err);
		return rc < 0 ? cli_fail(err.msg) : rc;
	}
	int rc = sweep_run(&o, &err);
	return rc < 0 ? cli_fail(err.msg) : rc;
}
