/* `autotune sweep`: option parsing; the work is in sweep.c. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "tuner/cli/cli.h"
#include "tuner/sweep/plan.h"
#include "tuner/sweep/sweep.h"

/* What the options set: the sweep's options, and --device and --watchdog
 * as given (device -1: not given). */
typedef struct sweep_cli {
	sweep_options o;
	int device, watchdog_s;
	int keep, explore_given; /* keep -1: not given */
} sweep_cli;

/* --devices 0,1,3: distinct GPU ordinals. */
static int parse_devices(const char *cmd, const cli_option *opt, const char *list, void *base)
{
	(void)cmd;
	(void)opt;
	sweep_options *o = &((sweep_cli *)base)->o;
	o->ndevices = 0;
	const char *p = list;
	for (;;) {
		char *end;
		errno = 0;
		long v = strtol(p, &end, 10);
		if (end == p || errno || v < 0 || v > 1023 || (*end && *end != ','))
			return cli_usage_error("sweep", "--devices expects GPU ordinals separated by "
					       "commas (e.g. 0,1), got \"%s\"", list);
		for (int i = 0; i < o->ndevices; i++)
			if (o->devices[i] == (int)v)
				return cli_usage_error("sweep", "--devices lists GPU %ld twice", v);
		if (o->ndevices == (int)(sizeof o->devices / sizeof o->devices[0]))
			return cli_usage_error("sweep", "--devices lists more than %d GPUs",
					       o->ndevices);
		o->devices[o->ndevices++] = (int)v;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

static int parse_arch(const char *cmd, const cli_option *opt, const char *text, void *base)
{
	(void)opt;
	return cli_parse_arch(cmd, text, &((sweep_cli *)base)->o.arch);
}

static int parse_shard(const char *cmd, const cli_option *opt, const char *text, void *base)
{
	(void)opt;
	if (shard_parse(text, &((sweep_cli *)base)->o.shard))
		return cli_usage_error(cmd, "--shard expects K/N with 1 <= K <= N, got \"%s\"", text);
	return 0;
}

/* --explore F: a share from 0 to 1. */
static int parse_explore(const char *cmd, const cli_option *opt, const char *text, void *base)
{
	(void)opt;
	sweep_cli *cli = base;
	cli->explore_given = 1;
	return cli_parse_double(cmd, "--explore", "a share", "0.1", text, 0, 1,
				&cli->o.prune.explore);
}

/* --compile-weight P: an exponent from 0 to 4. */
static int parse_compile_weight(const char *cmd, const cli_option *opt, const char *text,
				void *base)
{
	(void)opt;
	sweep_cli *cli = base;
	cli->explore_given = 1;
	return cli_parse_double(cmd, "--compile-weight", "an exponent", "0.5", text, 0, 4,
				&cli->o.prune.compile_weight);
}

#define O(field) offsetof(sweep_cli, o.field)
const cli_option cli_sweep_options[] = {
	CLI_STRING('c', "config", "FILE", O(config_path), "the sweep config (YAML)"),
	CLI_STRING(0, "db", "FILE", O(db_path), "the tuning database"),
	CLI_FLAG(0, "compile-only", O(compile_only),
		 "compile every variant (no GPU needed) and report failures"),
	CLI_CALLBACK(0, "arch", "sm_XX", parse_arch,
		     "architecture for --compile-only (default sm_90)"),
	CLI_INT(0, "device", "N", offsetof(sweep_cli, device), 0, 1023,
		"which GPU to tune on (default 0)"),
	CLI_CALLBACK(0, "devices", "LIST", parse_devices,
		     "tune on several GPUs at once (e.g. 0,1): one worker per\n"
		     "GPU, shapes handed out one at a time, one database"),
	CLI_STRING(0, "templates", "DIR", O(templates_dir),
		   "templates folder (default: beside the program, or\n$AUTOTUNE_TEMPLATES)"),
	CLI_INT(0, "threads", "N", O(threads), 1, 256,
		"NVRTC compile threads (default: one per core)"),
	CLI_CALLBACK(0, "shard", "K/N", parse_shard,
		     "tune only share K of N of the shapes (disjoint shares that\n"
		     "together cover the config; for running on several machines)"),
	CLI_FLAG(0, "full-timing", O(full_timing),
		 "time every passing variant in full (by default a short\n"
		 "first round picks the few that get full and interleaved\n"
		 "timing, and a noise band breaks ties by registers)"),
	CLI_FLAG(0, "audit", O(audit),
		 "after the rounds pick a winner, also time every variant\n"
		 "in full and report how often the winner is within 2%\n"
		 "of full timing's best (stores the rounds' results)"),
	CLI_FLAG(0, "exhaustive", O(prune.exhaustive),
		 "compile and time every variant at every shape (by default\n"
		 "the performance model's best-ranked few, a share of the\n"
		 "rest at random and the best of each template)"),
	CLI_INT(0, "keep", "K", offsetof(sweep_cli, keep), 1, 100000,
		"the model's best-ranked variants kept at each shape\n"
		"(default 24)"),
	CLI_CALLBACK(0, "explore", "F", parse_explore,
		     "the share of the other variants also kept, drawn at\n"
		     "random with a fixed seed (default 0.02)"),
	CLI_CALLBACK(0, "compile-weight", "P", parse_compile_weight,
		     "a kept variant weighs (its template's compile time over\n"
		     "the typical template's)^P against --keep, so that shapes\n"
		     "of costly kernels keep fewer (default 1; 0: K counts\n"
		     "variants)"),
	CLI_FLAG(0, "no-model", O(no_model),
		 "do not refit and store each op's performance model at the\n"
		 "end (by default the library then serves shapes nobody tuned\n"
		 "by it)"),
	CLI_INT(0, "watchdog", "S", offsetof(sweep_cli, watchdog_s), 0, 86400,
		"a variant that runs S seconds on the GPU without\n"
		"finishing is killed as hung (default 20; 0: never)"),
	CLI_END,
};
#undef O

int cmd_sweep(int argc, char **argv)
{
	sweep_cli cli = { .device = -1, .watchdog_s = SWEEP_DEFAULT_WATCHDOG_S, .keep = -1 };
	sweep_options_defaults(&cli.o);
	int nargs;
	if (cli_parse_options("sweep", argc, argv, &cli, &nargs))
		return 2;
	if (nargs)
		return cli_usage_error("sweep", "unexpected argument \"%s\"", argv[1]);
	sweep_options o = cli.o;
	int device_given = cli.device >= 0;
	o.device = device_given ? cli.device : 0;
	o.watchdog_ms = cli.watchdog_s * 1000;
	if (o.audit && o.full_timing)
		return cli_usage_error("sweep", "--audit checks the rounds against full timing; "
				       "it cannot be combined with --full-timing");
	if (cli.keep > 0)
		o.prune.keep = cli.keep;
	if (o.prune.exhaustive && (cli.keep > 0 || cli.explore_given))
		return cli_usage_error("sweep", "--exhaustive keeps every variant; it cannot be "
				       "combined with --keep, --explore or --compile-weight");
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
