/* `autotune report`: writes one self-contained HTML page about a tuning
 * database, and the peers of a peers CSV with --peers (reports/report.h
 * does the work). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/tuning_db.h"
#include "reports/report.h"
#include "tuner/cli/cli.h"
#include "tuner/version.h"

/* Parses "MxN" (e.g. 4096x8192) into two positive integers. */
static int parse_shape(const char *text, long long *M, long long *N)
{
	char *end;
	long long m = strtoll(text, &end, 10);
	if (end == text || (*end != 'x' && *end != 'X') || m <= 0)
		return -1;
	const char *rest = end + 1;
	long long n = strtoll(rest, &end, 10);
	if (end == rest || *end || n <= 0)
		return -1;
	*M = m;
	*N = n;
	return 0;
}

int cmd_report(int argc, char **argv)
{
	enum { OPT_DB = 256, OPT_HEATMAP, OPT_PEERS };
	static const struct option opts[] = {
		{ "db", required_argument, NULL, OPT_DB },
		{ "output", required_argument, NULL, 'o' },
		{ "heatmap", required_argument, NULL, OPT_HEATMAP },
		{ "peers", required_argument, NULL, OPT_PEERS },
		{ NULL, 0, NULL, 0 },
	};
	report_options opt = { .out_path = "report.html", .tool_version = AUTOTUNE_VERSION };
	const char *db_path = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:", opts, NULL)) != -1) {
		switch (c) {
		case OPT_DB: db_path = optarg; break;
		case 'o': opt.out_path = optarg; break;
		case OPT_HEATMAP:
			if (parse_shape(optarg, &opt.heat_M, &opt.heat_N))
				return cli_usage_error("report", "--heatmap expects MxN (e.g. 4096x8192), "
								 "got \"%s\"", optarg);
			break;
		case OPT_PEERS:
			if (!*optarg)
				return cli_usage_error("report", "--peers needs a file name");
			opt.peers_path = optarg;
			break;
		case ':': return cli_usage_error("report", "%s needs a value", argv[optind - 1]);
		default: return cli_usage_error("report", "unknown option %s", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("report", "unexpected argument \"%s\"", argv[optind]);
	if (!*opt.out_path)
		return cli_usage_error("report", "-o needs a file name");
	if (cli_db_path("report", db_path, 1, &opt.db_path))
		return 2;
	at_error err = { { 0 } };
	if (report_write(&opt, &err))
		return cli_fail(err.msg);
	return 0;
}
