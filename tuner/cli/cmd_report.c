/* `autotune report`: writes one self-contained HTML page about a tuning
 * database, and the peers of a peers CSV with --peers (reports/report.h
 * does the work). */
#include <stddef.h>
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

typedef struct report_cli {
	report_options opt;
	const char *db_path;
} report_cli;

static int parse_heatmap(const char *cmd, const cli_option *opt, const char *text, void *base)
{
	(void)opt;
	report_options *r = &((report_cli *)base)->opt;
	if (parse_shape(text, &r->heat_M, &r->heat_N))
		return cli_usage_error(cmd, "--heatmap expects MxN (e.g. 4096x8192), got \"%s\"", text);
	return 0;
}

const cli_option cli_report_options[] = {
	CLI_STRING(0, "db", "FILE", offsetof(report_cli, db_path), "the tuning database"),
	CLI_STRING('o', "output", "FILE", offsetof(report_cli, opt.out_path),
		   "the page to write (default report.html; - for stdout)"),
	CLI_CALLBACK(0, "heatmap", "MxN", parse_heatmap,
		     "the heat maps' shape (default: the largest per dtype)"),
	CLI_FILE(0, "peers", "FILE.csv", offsetof(report_cli, opt.peers_path),
		 "draw the peers that python -m autotune_dispatch.peers\n"
		 "timed (torch.softmax, the Triton tutorial, torch.compile)\n"
		 "on the curves, and add them to the tables with the\n"
		 "winner's speed-up over the best peer at each shape"),
	CLI_END,
};

int cmd_report(int argc, char **argv)
{
	report_cli cli = { .opt = { .out_path = "report.html", .tool_version = AUTOTUNE_VERSION } };
	int nargs;
	if (cli_parse_options("report", argc, argv, &cli, &nargs))
		return 2;
	if (nargs)
		return cli_usage_error("report", "unexpected argument \"%s\"", argv[1]);
	report_options opt = cli.opt;
	const char *db_path = cli.db_path;
	if (!*opt.out_path)
		return cli_usage_error("report", "-o needs a file name");
	if (cli_db_path("report", db_path, 1, &opt.db_path))
		return 2;
	at_error err = { { 0 } };
	if (report_write(&opt, &err))
		return cli_fail(err.msg);
	return 0;
}
