/* The models a database keeps current (tuner/model/store.h): a sweep
 * stores its ops' models at its end, `db merge` refits every GPU's and op's
 * on the merged results, and a database of winners alone (`db export`'s)
 * keeps the model it has. Fitted on the H100 example's results. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/sql_probe.h"
#include "tests/test_run_fixture.h"
#include "tests/tmp_folder.h"
#include "tuner/model/store.h"
#include "tuner/sweep/plan.h"
#include "tuner/sweep/sweep_models.h"

static const char h100_db[] = "results/example/h100-default.db";
static const char softmax_model[] = "SELECT COUNT(*) FROM models m JOIN gpus g ON g.id = m.gpu_id "
				    "WHERE m.op = 'softmax' AND g.name = 'NVIDIA H100 80GB HBM3'";

static void copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	cr_assert(in && out, "copy %s to %s", from, to);
	char buf[65536];
	size_t got;
	while ((got = fread(buf, 1, sizeof buf, in)) > 0)
		cr_assert_eq(fwrite(buf, 1, got, out), got);
	fclose(in);
	cr_assert_eq(fclose(out), 0);
}

TestSuite(model_store, .init = tmp_setup, .fini = tmp_teardown);

Test(model_store, a_sweep_stores_its_ops_models_of_the_gpus_it_ran_on, .timeout = 300)
{
	const char *db = tmp_path("swept.db");
	copy_file(h100_db, db);
	sweep_plan p;
	at_error err;
	cr_assert_eq(plan_load(&p, "configs/softmax.yaml", NULL, &err), 0, "%s", err.msg);
	/* no sweep from 1000 on: no GPU ran, the database is not touched */
	cr_assert_eq(sweep_store_models(db, &p, 1000, &err), 0, "%s", err.msg);
	cr_assert_eq(sql_int(db, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'models'"), 0,
		     "the database was touched");
	/* every sweep: the H100's softmax model, fitted on every tuned shape */
	cr_assert_eq(sweep_store_models(db, &p, 1, &err), 0, "%s", err.msg);
	cr_assert_eq(sql_int(db, softmax_model), 1);
	cr_assert_eq(sql_int(db, "SELECT shapes FROM models WHERE op = 'softmax'"),
		     sql_int(db, "SELECT COUNT(*) FROM winners WHERE op = 'softmax'"));
	cr_assert_gt(sql_int(db, "SELECT samples FROM models WHERE op = 'softmax'"), 10000);
	plan_free(&p);
	/* an op without results of its own gets no model, and no error */
	cr_assert_eq(plan_load(&p, "configs/log_softmax.yaml", NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(sweep_store_models(db, &p, 1, &err), 0, "%s", err.msg);
	cr_assert_eq(sql_int(db, "SELECT COUNT(*) FROM models WHERE op = 'log_softmax'"), 0);
	plan_free(&p);
}

Test(model_store, merge_refits_and_an_export_keeps_its_model, .timeout = 300)
{
	copy_file(h100_db, tmp_path("in.db"));
	tr_result r = RUN("db", "merge", tmp_path("merged.db"), tmp_path("in.db"));
	cr_assert_eq(r.status, 0, "%s", r.err);
	tr_expect_in(r.out, "Model of softmax on NVIDIA H100 80GB HBM3: fitted on 132 shapes");
	tr_free(&r);
	const char *merged = tmp_path("merged.db");
	cr_assert_eq(sql_int(merged, softmax_model), 1);
	/* the export carries it; merged again, its winners alone teach nothing
	 * and the model stays as it was */
	r = RUN("db", "export", merged, tmp_path("export.db"));
	cr_assert_eq(r.status, 0, "%s", r.err);
	tr_free(&r);
	sql_exec(tmp_path("export.db"), "UPDATE models SET text = text || '' , shapes = 7");
	r = RUN("db", "merge", tmp_path("again.db"), tmp_path("export.db"));
	cr_assert_eq(r.status, 0, "%s", r.err);
	tr_expect_in(r.out, "the winners alone); a stored model is kept");
	tr_free(&r);
	cr_assert_eq(sql_int(tmp_path("again.db"), softmax_model), 1);
	cr_assert_eq(sql_int(tmp_path("again.db"), "SELECT shapes FROM models WHERE op = 'softmax'"),
		     7, "the exported model was replaced");
}

Test(model_store, a_merge_whose_models_cannot_be_refitted_says_it_is_complete, .timeout = 120)
{
	copy_file(h100_db, tmp_path("in.db"));
	const char *env[] = { "AUTOTUNE_TEMPLATES=/nonexistent/templates", NULL };
	tr_result r = tr_run((const char *const[]){ "db", "merge", tmp_path("merged.db"),
						    tmp_path("in.db"), NULL }, env);
	cr_assert_eq(r.status, 1, "%s", r.err);
	tr_expect_in(r.err, "the merge into");
	tr_expect_in(r.err, "is complete, but its models were not refitted");
	tr_expect_in(r.err, "/nonexistent/templates");
	tr_free(&r);
	/* the merged results are there */
	cr_assert_eq(sql_int(tmp_path("merged.db"), "SELECT COUNT(*) FROM winners"),
		     sql_int(h100_db, "SELECT COUNT(*) FROM winners"));
}

/* A model is a function of the results, not of their row ids: `db merge`
 * numbers rows in its inputs' order, and the fit's subsampling followed
 * that order (the same backward results merged in another order fitted
 * another model, H200 session 65). The H100 example's rows renumbered in
 * reverse fit the same model, byte for byte. */
Test(model_store, the_same_results_in_another_row_order_fit_the_same_model, .timeout = 300)
{
	/* copies: tmp_path's last eight results alone stay valid, and RUN takes some */
	char db[2][4096], txt[2][4096];
	for (int i = 0; i < 2; i++) {
		snprintf(db[i], sizeof db[i], "%s", tmp_path(i ? "reversed.db" : "in-order.db"));
		snprintf(txt[i], sizeof txt[i], "%s", tmp_path(i ? "reversed.txt" : "in-order.txt"));
		copy_file(h100_db, db[i]);
	}
	sql_exec(db[1], "PRAGMA foreign_keys = OFF; BEGIN; UPDATE results SET id = -id; "
			"UPDATE winners SET result_id = -result_id; "
			"UPDATE kernels SET result_id = -result_id; COMMIT");
	cr_assert_lt(sql_int(db[1], "SELECT MAX(id) FROM results"), 0);
	for (int i = 0; i < 2; i++) {
		tr_result r = RUN("model", "fit", "--db", db[i], "-o", txt[i]);
		tr_expect_status(&r, 0);
		tr_expect_in(r.err, "132 shapes");
		tr_free(&r);
	}
	char *a = tmp_read(txt[0]), *b = tmp_read(txt[1]);
	cr_assert_gt(strlen(a), 1000);
	cr_assert(strcmp(a, b) == 0, "the models differ (%zu and %zu bytes)", strlen(a), strlen(b));
	free(a);
	free(b);
}
