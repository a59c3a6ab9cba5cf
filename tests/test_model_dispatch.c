/* The performance model from the database to the library, as a user runs
 * them (no GPU): `autotune model fit --store` keeps the model in the
 * database's models table, `db export` carries it, and the library's
 * decision (`autotune show`, atd_query_op_gpu) serves an untuned shape at
 * the predicted level, a tuned one as tuned, and falls back to derivation
 * when the stored text does not read. */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test_run_fixture.h"
#include "tests/tmp_folder.h"

TestSuite(model_dispatch, .init = tmp_setup, .fini = tmp_teardown, .timeout = 120);

#define H100 "NVIDIA H100 80GB HBM3"

static long long count(const char *db, const char *sql)
{
	sqlite3 *s;
	cr_assert_eq(sqlite3_open_v2(db, &s, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_stmt *st;
	cr_assert_eq(sqlite3_prepare_v2(s, sql, -1, &st, NULL), SQLITE_OK, "%s", sqlite3_errmsg(s));
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	long long n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(s);
	return n;
}

static void copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	cr_assert(in && out);
	char buf[1 << 16];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		cr_assert_eq(fwrite(buf, 1, n, out), n);
	fclose(in);
	cr_assert_eq(fclose(out), 0);
}

/* The example H100 database with its model stored: the path. */
static const char *stored_model_db(void)
{
	static char path[4096];
	snprintf(path, sizeof path, "%s", tmp_path("h100.db"));
	copy_file("results/example/h100-default.db", path);
	tr_result r = RUN("model", "fit", "--db", path, "--store");
	tr_expect_status(&r, 0);
	tr_expect_in(r.err, "stored in");
	tr_free(&r);
	return path;
}

Test(model_dispatch, a_stored_model_serves_untuned_shapes_and_is_exported)
{
	const char *db = stored_model_db();
	cr_assert_eq(count(db, "SELECT count(*) FROM models WHERE op = 'softmax' AND shapes = 132"),
		     1);
	/* an untuned shape: the model's choice, for softmax and log_softmax */
	tr_result r = RUN("show", "--db", db, "--gpu", H100, "--cc", "9.0", "-M", "50000", "-N",
			  "33");
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "level       predicted\n");
	tr_expect_in(r.out, "performance model fitted on " H100 "'s results");
	tr_free(&r);
	r = RUN("show", "--db", db, "--gpu", H100, "--cc", "9.0", "-M", "3000", "-N", "5000",
		"--op", "log_softmax");
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "level       predicted\n");
	tr_free(&r);
	/* a tuned shape is its winner, model or not */
	r = RUN("show", "--db", db, "--gpu", H100, "--cc", "9.0", "-M", "4096", "-N", "1024");
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "level       exact\n");
	tr_free(&r);
	/* another GPU of the compute capability, no model of its own: the
	 * H100's, named as such */
	r = RUN("show", "--db", db, "--gpu", "NVIDIA H200", "--cc", "9.0", "-M", "50000", "-N",
		"33");
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "level       predicted\n");
	tr_expect_in(r.out, "performance model fitted on " H100 "'s results");
	tr_free(&r);
	/* another compute capability: derivation, no model */
	r = RUN("show", "--db", db, "--gpu", "NVIDIA A100-SXM4-80GB", "--cc", "8.0", "-M", "50000",
		"-N", "33");
	tr_expect_status(&r, 0);
	cr_assert_null(strstr(r.out, "level       predicted"), "%s", r.out);
	tr_free(&r);
	/* the shipped database carries it */
	r = RUN("db", "export", db, tmp_path("shipped.db"));
	tr_expect_status(&r, 0);
	tr_free(&r);
	cr_assert_eq(count(tmp_path("shipped.db"), "SELECT count(*) FROM models"), 1);
	r = RUN("show", "--db", tmp_path("shipped.db"), "--gpu", H100, "--cc", "9.0", "-M", "50000",
		"-N", "33");
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "level       predicted\n");
	tr_free(&r);
}

Test(model_dispatch, a_model_that_does_not_read_falls_back_to_derivation)
{
	const char *db = stored_model_db();
	sqlite3 *s;
	cr_assert_eq(sqlite3_open(db, &s), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(s, "UPDATE models SET text = 'perf_model 1\ntemplate'", NULL,
				  NULL, NULL),
		     SQLITE_OK);
	sqlite3_close(s);
	tr_result r = RUN("show", "--db", db, "--gpu", H100, "--cc", "9.0", "-M", "50000", "-N",
			  "33");
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "level       derived\n");
	tr_free(&r);
}

Test(model_dispatch, a_model_is_fitted_per_op)
{
	char path[4096];
	snprintf(path, sizeof path, "%s", tmp_path("h100.db"));
	copy_file("results/example/h100-default.db", path);
	/* the example holds softmax's results alone */
	tr_result r = RUN("model", "fit", "--db", path, "--op", "log_softmax", "--store");
	cr_assert_neq(r.status, 0);
	tr_expect_in(r.err, "no passing log_softmax variant results");
	tr_free(&r);
	r = RUN("model", "fit", "--db", path, "--op", "nosuch");
	cr_assert_neq(r.status, 0);
	tr_expect_in(r.err, "--op nosuch: no such op (softmax, log_softmax");
	tr_free(&r);
	r = RUN("model", "fit", "--db", path, "--op", "softmax", "--store");
	tr_expect_status(&r, 0);
	tr_expect_in(r.err, "softmax model of " H100);
	tr_free(&r);
	cr_assert_eq(count(path, "SELECT count(*) FROM models WHERE op = 'softmax'"), 1);
}

/* `model choose --op` learns that op's results and names it: the example's
 * softmax results relabelled log_softmax (the softmax templates serve
 * both) are all it has. */
Test(model_dispatch, choose_names_the_op_it_chose_for)
{
	char path[4096];
	snprintf(path, sizeof path, "%s", tmp_path("h100.db"));
	copy_file("results/example/h100-default.db", path);
	sqlite3 *s;
	cr_assert_eq(sqlite3_open(path, &s), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(s, "UPDATE results SET op = 'log_softmax'; "
				     "UPDATE winners SET op = 'log_softmax'",
				  NULL, NULL, NULL),
		     SQLITE_OK, "%s", sqlite3_errmsg(s));
	sqlite3_close(s);
	tr_result r = RUN("model", "choose", "--db", path, "--op", "log_softmax", "--dtype", "bf16",
			  "-M", "5000", "-N", "3000");
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "shape       log_softmax bf16 M=5000 N=3000 on " H100 "\n");
	tr_free(&r);
	r = RUN("model", "choose", "--db", path, "--dtype", "bf16", "-M", "5000", "-N", "3000");
	cr_assert_neq(r.status, 0, "no softmax results are left to learn from");
	tr_free(&r);
}

static void exec_sql(const char *db, const char *sql)
{
	sqlite3 *s;
	cr_assert_eq(sqlite3_open(db, &s), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(s, sql, NULL, NULL, NULL), SQLITE_OK, "%s: %s", sql,
		     sqlite3_errmsg(s));
	sqlite3_close(s);
}

/* A model fitted on the example's results but those where, stored in db as
 * op's. */
static void store_model_without(const char *db, const char *op, const char *where)
{
	char part[4096], sql[8192];
	snprintf(part, sizeof part, "%s", tmp_path("part.db"));
	copy_file("results/example/h100-default.db", part);
	snprintf(sql, sizeof sql, "DELETE FROM results WHERE %s; DELETE FROM winners WHERE %s",
		 where, strncmp(where, "template", 8) == 0 ? "0" : where);
	exec_sql(part, sql);
	tr_result r = RUN("model", "fit", "--db", part, "--store");
	tr_expect_status(&r, 0);
	tr_free(&r);
	snprintf(sql, sizeof sql,
		 "ATTACH '%s' AS part; INSERT OR REPLACE INTO models "
		 "(gpu_id, op, fitted_at, shapes, samples, text) SELECT gpu_id, '%s', fitted_at, "
		 "shapes, samples, text FROM part.models WHERE op = 'softmax'",
		 part, op);
	exec_sql(db, sql);
}

/* softmax_block's results alone */
#define NARROW "template <> 'softmax_block'"
/* half the shapes, every template (softmax_tile's are at N = 77 alone) */
#define HALF "(m + n) % 2 = 1 AND n <> 77"

static void expect_template(const char *db, const char *op, const char *dims[2],
			    const char *line)
{
	tr_result r = RUN("show", "--db", db, "--gpu", H100, "--cc", "9.0", "--dtype", "f32", "-M",
			  dims[0], "-N", dims[1], "--op", op);
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "level       predicted\n");
	tr_expect_in(r.out, line);
	tr_free(&r);
}

static const char *short_rows[2] = { "50000", "33" }, *mid_rows[2] = { "20000", "700" };

/* An op's own model serves it unless its family's learned every template it
 * did and more: log_softmax's model of a grid of long rows never learned
 * the short rows' templates that softmax's did. */
Test(model_dispatch, the_familys_model_serves_where_it_learned_more_templates)
{
	const char *db = stored_model_db();
	expect_template(db, "softmax", short_rows, "template    softmax_tile\n");
	store_model_without(db, "log_softmax", NARROW);
	expect_template(db, "log_softmax", short_rows, "template    softmax_tile\n");
}

/* With the same templates, the op's own serves, on fewer shapes too (at
 * log_softmax's grid its own model chose better than softmax's). */
Test(model_dispatch, the_ops_own_model_serves_where_its_familys_learned_the_same_templates)
{
	const char *db = stored_model_db();
	expect_template(db, "softmax", mid_rows, "template    softmax_block\n");
	store_model_without(db, "log_softmax", HALF);
	expect_template(db, "log_softmax", mid_rows, "template    softmax_warp\n");
}

Test(model_dispatch, the_ops_own_model_serves_where_it_learned_more)
{
	const char *db = stored_model_db();
	/* log_softmax's own model learned every template; softmax's, one */
	exec_sql(db, "INSERT INTO models (gpu_id, op, fitted_at, shapes, samples, text) "
		     "SELECT gpu_id, 'log_softmax', fitted_at, shapes, samples, text FROM models "
		     "WHERE op = 'softmax'");
	store_model_without(db, "softmax", NARROW);
	expect_template(db, "log_softmax", short_rows, "template    softmax_tile\n");
}
