/* `autotune db merge OUT IN...`: see db/merge.h. */
#include <stdio.h>
#include <string.h>

#include "db/merge.h"
#include "tuner/cli.h"

int cmd_db(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage_error("db", "expected a subcommand: merge");
	if (strcmp(argv[1], "merge") != 0)
		return cli_usage_error("db", "unknown subcommand \"%s\" (expected merge)", argv[1]);
	if (argc < 4)
		return cli_usage_error("db", "merge needs OUT and at least one IN");
	for (int i = 2; i < argc; i++)
		if (argv[i][0] == '-')
			return cli_usage_error("db", "unknown option %s", argv[i]);
	merge_stats st;
	at_error err = { { 0 } };
	if (db_merge(argv[2], (const char *const *)argv + 3, (size_t)(argc - 3), &st, &err))
		return cli_fail(err.msg);
	printf("merged %d database%s into %s: %lld sweeps added (%lld already there), %lld results "
	       "added; %lld shapes with winners recomputed\n",
	       argc - 3, argc - 3 == 1 ? "" : "s", argv[2], st.sweeps, st.sweeps_skipped, st.results,
	       st.shapes);
	return 0;
}
