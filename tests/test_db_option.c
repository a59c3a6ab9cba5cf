/* An empty database name, given with --db '' or as AUTOTUNE_DB=, is a
 * usage error for every command that opens a database: taken for "not
 * given", it once made them quietly open ./autotune.db. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/test_run_fixture.h"

TestSuite(db_option, .init = tmp_setup, .fini = tmp_teardown);

#define MAX_ARGS 16

/* Every command that takes --db, with what else it needs to get that far
 * ("@c" and "@t": the tiny sweep's config and templates, so that a command
 * that took the name after all would not compile the default sweep). */
static const char *const commands[][MAX_ARGS] = {
	{ "sweep", "--compile-only", "-c", "@c", "--templates", "@t", NULL },
	{ "sweep", "-c", "@c", "--templates", "@t", NULL },
	{ "list", NULL },
	{ "show", "-M", "4", "-N", "4", "--gpu", "G", "--cc", "9.0", NULL },
	{ "report", NULL },
	{ "bench", "--report-only", NULL },
	{ "selftest", "--dry-run", NULL },
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

/* command's arguments, then extra (NULL-terminated) */
static tr_result run_with(const char *const *command, const char *const *extra,
			  const char *const *env)
{
	const char *args[2 * MAX_ARGS];
	size_t n = 0;
	for (; *command; command++)
		args[n++] = strcmp(*command, "@c") == 0	  ? tmp_path("c.yaml")
			    : strcmp(*command, "@t") == 0 ? tmp_path("templates")
							  : *command;
	for (; *extra; extra++)
		args[n++] = *extra;
	args[n] = NULL;
	return tr_run(args, env);
}

static void expect_refused(const tr_result *r, const char *command, const char *what)
{
	tr_expect_status(r, 2);
	char want[128];
	snprintf(want, sizeof want, "autotune %s: %s", command, what);
	tr_expect_in(r->err, want);
	cr_assert_str_eq(r->out, "", "%s: stdout", command);
}

Test(db_option, an_empty_db_is_refused_by_every_command)
{
	tr_write_tiny_sweep();
	for (size_t i = 0; i < NCOMMANDS; i++) {
		tr_result r = run_with(commands[i], (const char *const[]){ "--db", "", NULL }, NULL);
		expect_refused(&r, commands[i][0], "--db needs a file name, got an empty one");
		tr_free(&r);
	}
	/* and an empty file name of db merge, export or migrate */
	static const char *const db[][5] = {
		{ "db", "merge", "", "in.db", NULL },
		{ "db", "merge", "out.db", "", NULL },
		{ "db", "export", "", "out.db", NULL },
		{ "db", "export", "in.db", "", NULL },
		{ "db", "migrate", "", NULL },
	};
	for (size_t i = 0; i < sizeof db / sizeof db[0]; i++) {
		tr_result r = tr_run(db[i], NULL);
		tr_expect_status(&r, 2);
		tr_expect_in(r.err, "a database file name is empty");
		tr_free(&r);
	}
}

Test(db_option, an_empty_autotune_db_is_refused_unless_db_is_given)
{
	static const char *const empty_env[] = { "AUTOTUNE_DB=", NULL };
	static const char *const none[] = { NULL };
	tr_write_tiny_sweep();
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (strcmp(commands[i][0], "selftest") == 0)
			continue; /* its compile cache is --db's only: it reads no $AUTOTUNE_DB */
		tr_result r = run_with(commands[i], none, empty_env);
		expect_refused(&r, commands[i][0], "$AUTOTUNE_DB is set but empty: set it to a "
						   "database file, or unset it to use autotune.db");
		tr_free(&r);
	}
	/* --db wins over it: list gets as far as the missing file */
	tr_result r = tr_run((const char *const[]){ "list", "--db", tmp_path("none.db"), NULL },
			     empty_env);
	tr_expect_status(&r, 1);
	tr_expect_in(r.err, "no such database");
	tr_free(&r);
	/* and selftest ignores it */
	r = tr_run((const char *const[]){ "selftest", "--dry-run", NULL }, empty_env);
	tr_expect_status(&r, 0);
	tr_free(&r);
}

/* A given name still works: compile-only into it. */
Test(db_option, a_named_db_is_used)
{
	tr_write_tiny_sweep();
	tr_result r = tr_run((const char *const[]){ "sweep", "--compile-only", "--templates",
						    tmp_path("templates"), "-c", tmp_path("c.yaml"),
						    "--db", tmp_path("named.db"), NULL },
			     (const char *const[]){ "AUTOTUNE_DB=", NULL });
	tr_expect_status(&r, 0);
	struct stat sb;
	cr_assert_eq(stat(tmp_path("named.db"), &sb), 0, "named.db was not written");
	tr_free(&r);
}
