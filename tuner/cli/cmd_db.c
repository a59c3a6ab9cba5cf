/* `autotune db merge OUT IN...` (db/merge.h; then each GPU's and op's model
 * refitted on the merged results: tuner/model/store.h), `autotune db export IN OUT`
 * (db/export.h) and `autotune db migrate FILE` (db/tuning_db.h). */
#include <stdio.h>
#include <string.h>

#include "db/export.h"
#include "db/merge.h"
#include "db/tuning_db.h"
#include "tuner/cli/cli.h"
#include "tuner/model/store.h"
#include "tuner/sweep/plan.h"

/* An empty file name is refused (SQLite would open a temporary database
 * for it and the work would vanish); options were refused already. */
static int check_files(char **argv, int from, int argc)
{
	for (int i = from; i < argc; i++) {
		if (!argv[i][0])
			return cli_usage_error("db", "%s: a database file name is empty", argv[1]);
	}
	return 0;
}

static int db_export_cmd(int argc, char **argv)
{
	if (argc != 4)
		return cli_usage_error("db", "export needs IN and OUT");
	if (check_files(argv, 2, argc))
		return 2;
	export_stats st;
	at_error err = { { 0 } };
	if (db_export(argv[2], argv[3], &st, &err))
		return cli_fail(err.msg);
	printf("exported %s to %s: %lld winners, %lld kernels; %.1f MB (from %.1f MB)\n", argv[2],
	       argv[3], st.winners, st.kernels, st.bytes_out / 1e6, st.bytes_in / 1e6);
	return 0;
}

static int db_migrate_cmd(int argc, char **argv)
{
	if (argc != 3)
		return cli_usage_error("db", "migrate needs one database");
	if (check_files(argv, 2, argc))
		return 2;
	int from = 0;
	at_error err = { { 0 } };
	if (tdb_migrate(argv[2], &from, &err))
		return cli_fail(err.msg);
	if (from == TDB_SCHEMA_VERSION)
		printf("%s is schema version %d already: nothing to do\n", argv[2], from);
	else
		printf("migrated %s from schema version %d to %d\n", argv[2], from,
		       TDB_SCHEMA_VERSION);
	return 0;
}

int cmd_db(int argc, char **argv)
{
	/* db has no options: the parser refuses any (with the usage), and "--"
	 * lets a file name start with '-' */
	int nargs;
	if (cli_parse_options("db", argc, argv, NULL, &nargs))
		return 2;
	argc = nargs + 1;
	if (argc < 2)
		return cli_usage_error("db", "expected a subcommand: merge, export or migrate");
	if (strcmp(argv[1], "export") == 0)
		return db_export_cmd(argc, argv);
	if (strcmp(argv[1], "migrate") == 0)
		return db_migrate_cmd(argc, argv);
	if (strcmp(argv[1], "merge") != 0)
		return cli_usage_error("db",
				       "unknown subcommand \"%s\" (expected merge, export or migrate)",
				       argv[1]);
	if (argc < 4)
		return cli_usage_error("db", "merge needs OUT and at least one IN");
	if (check_files(argv, 2, argc))
		return 2;
	merge_stats st;
	at_error err = { { 0 } };
	if (db_merge(argv[2], (const char *const *)argv + 3, (size_t)(argc - 3), &st, &err))
		return cli_fail(err.msg);
	printf("merged %d database%s into %s: %lld sweeps added (%lld already there), %lld results "
	       "added; %lld shapes with winners recomputed\n",
	       argc - 3, argc - 3 == 1 ? "" : "s", argv[2], st.sweeps, st.sweeps_skipped, st.results,
	       st.shapes);
	/* the inputs' models were each fitted on a part: refit on the whole;
	 * the merge is committed either way, and the message says so */
	if (model_store_all(argv[2], plan_templates_dir(NULL), &err)) {
		fprintf(stderr, "autotune: the merge into %s is complete, but its models were not "
			"refitted: %s (refit with `autotune model fit --store --db %s`)\n", argv[2],
			err.msg, argv[2]);
		return 1;
	}
	return 0;
}
