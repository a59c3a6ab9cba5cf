/* `autotune list`: the winners of a database as a table, CSV or JSON. */
#include <getopt.h>
#include <stdio.h>

#include "db/tuning_db.h"
#include "tuner/cli/cli.h"
#include "tuner/table.h"

static int add_winner(const winner_row *w, void *ctx)
{
	table *t = ctx;
	char cc[16], m[32], n[32], us[32] = "", gbps[32] = "", pct[32] = "";
	snprintf(cc, sizeof cc, "%d.%d", w->cc_major, w->cc_minor);
	snprintf(m, sizeof m, "%lld", w->M);
	snprintf(n, sizeof n, "%lld", w->N);
	if (w->template_name) {
		snprintf(us, sizeof us, "%.3f", w->time_us);
		snprintf(gbps, sizeof gbps, "%.1f", w->gbps);
		snprintf(pct, sizeof pct, "%.1f", w->pct_copy);
	}
	const char *cells[] = { w->gpu_name, cc, w->op, w->dtype, m, n,
				w->template_name ? w->template_name : "",
				w->params ? w->params : "", us, gbps, pct };
	table_add(t, cells);
	return 0;
}

int cmd_list(int argc, char **argv)
{
	enum { OPT_DB = 256, OPT_FORMAT };
	static const struct option opts[] = {
		{ "db", required_argument, NULL, OPT_DB },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ NULL, 0, NULL, 0 },
	};
	const char *db_path = NULL;
	table_format fmt = TABLE_TEXT;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case OPT_DB: db_path = optarg; break;
		case OPT_FORMAT:
			if (table_format_parse(optarg, &fmt))
				return cli_usage_error("list", "--format must be table, csv or json, got \"%s\"",
						       optarg);
			break;
		case ':': return cli_usage_error("list", "%s needs a value", argv[optind - 1]);
		default: return cli_usage_error("list", "unknown option %s", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("list", "unexpected argument \"%s\"", argv[optind]);
	if (cli_db_path("list", db_path, 1, &db_path))
		return 2;
	at_error err = { { 0 } };
	tdb *db;
	if (tdb_open_readonly(db_path, &db, &err))
		return cli_fail(err.msg);
	static const char *const header[] = { "gpu", "cc", "op", "dtype", "M", "N", "template",
					      "params", "time_us", "gbps", "pct_copy", NULL };
	static const char *const numeric[] = { "M", "N", "time_us", "gbps", "pct_copy", NULL };
	table t;
	table_init(&t, header);
	int rc = tdb_each_winner(db, add_winner, &t, &err);
	tdb_close(db);
	if (rc == 0)
		table_print(&t, stdout, fmt, numeric);
	table_free(&t);
	return rc ? cli_fail(err.msg) : 0;
}
