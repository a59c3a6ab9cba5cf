/* `autotune list`: the winners of a database as a table, CSV or JSON. */
#include <stddef.h>
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

typedef struct list_cli {
	const char *db_path;
	table_format fmt;
} list_cli;

static int parse_format(const char *cmd, const cli_option *opt, const char *text, void *base)
{
	(void)opt;
	if (table_format_parse(text, &((list_cli *)base)->fmt))
		return cli_usage_error(cmd, "--format must be table, csv or json, got \"%s\"", text);
	return 0;
}

const cli_option cli_list_options[] = {
	CLI_STRING(0, "db", "FILE", offsetof(list_cli, db_path),
		   "the tuning database (default autotune.db, or $AUTOTUNE_DB)"),
	CLI_CALLBACK(0, "format", "FORMAT", parse_format,
		     "table (default), csv or json"),
	CLI_END,
};

int cmd_list(int argc, char **argv)
{
	list_cli o = { .db_path = NULL, .fmt = TABLE_TEXT };
	int nargs;
	if (cli_parse_options("list", argc, argv, &o, &nargs))
		return 2;
	if (nargs)
		return cli_usage_error("list", "unexpected argument \"%s\"", argv[1]);
	const char *db_path = o.db_path;
	table_format fmt = o.fmt;
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
