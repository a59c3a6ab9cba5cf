/* The derivation rules' quality on a real sweep, without a GPU (as
 * tools/derive_loo.py measures it): over results/example's H100 grid, each
 * tuned shape's winner is hidden in turn, the library's plan for that
 * shape is made from the other winners, and the served variant's time is
 * looked up among the results the sweep stored for the shape (every
 * variant was timed there). A rule change that serves worse variants at
 * untuned shapes fails here. The floors sit just under what the rules of
 * 2026-11-25 give (geometric mean 0.918 of the winner's time, 95 of 132
 * shapes within 10%; 0.895 and 86 before them). */
#include <criterion/criterion.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/policy/plan.h"
#include "dispatch/policy/template_table.h"
#include "dispatch/policy/tuned_db.h"

#define EXAMPLE_DB "results/example/h100-default.db"

/* The stored time of (template, params) at the entry's shape, or the best
 * of its shape when best is set; NAN when none. */
static double stored_time(sqlite3 *db, const atdi_entry *e, const char *tmpl, const char *params,
			  int best)
{
	const char *sql = best ? "SELECT MIN(time_us) FROM results WHERE dtype = ?1 AND m = ?2 AND "
				 "n = ?3 AND status = 'ok' AND kind = 'variant'"
			       : "SELECT MIN(time_us) FROM results WHERE dtype = ?1 AND m = ?2 AND "
				 "n = ?3 AND status = 'ok' AND kind = 'variant' AND template = ?4 "
				 "AND params = ?5";
	sqlite3_stmt *st;
	cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_text(st, 1, at_dtype_name(e->dtype), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, e->M);
	sqlite3_bind_int64(st, 3, e->N);
	if (!best) {
		sqlite3_bind_text(st, 4, tmpl, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 5, params, -1, SQLITE_STATIC);
	}
	double t = NAN;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		t = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	return t;
}

Test(derive_loo, each_grid_shape_served_from_the_others_stays_near_its_winner, .timeout = 60)
{
	char msg[512];
	struct sqlite3 *h;
	atdi_table t = { 0 };
	cr_assert_eq(atdi_db_open(EXAMPLE_DB, &h, msg, sizeof msg), ATD_OK, "%s", msg);
	cr_assert_eq(atdi_db_load(h, EXAMPLE_DB, &t, msg, sizeof msg), ATD_OK, "%s", msg);
	sqlite3 *db;
	cr_assert_eq(sqlite3_open_v2("file:" EXAMPLE_DB "?immutable=1", &db,
				     SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL),
		     SQLITE_OK);
	cr_assert_gt(t.nentries, 100, "the example sweep's winners");
	const atdi_gpu_row *g = &t.gpus[t.entries[0].gpu];
	const atd_gpu gpu = { g->name, g->cc_major, g->cc_minor, g->sm_count, g->mem_bytes };

	atdi_entry *others = malloc(t.nentries * sizeof *others);
	double log_sum = 0;
	size_t timed = 0, within10 = 0;
	for (size_t i = 0; i < t.nentries; i++) {
		const atdi_entry *hidden = &t.entries[i];
		size_t k = 0;
		for (size_t j = 0; j < t.nentries; j++)
			if (j != i)
				others[k++] = t.entries[j];
		atdi_table rest = { .gpus = t.gpus, .ngpus = t.ngpus, .entries = others, .nentries = k };
		long long eb = at_dtype_size(hidden->dtype);
		atdi_env env = { .M = hidden->M, .N = hidden->N, .elem_bytes = eb,
				 .sm_count = g->sm_count, .cc = 10 * g->cc_major + g->cc_minor,
				 .max_threads = 1024, .max_smem = 232448, .regs_per_sm = 65536 };
		atdi_plan p;
		atdi_plan_shape(&rest, tr_templates, tr_ntemplates, &gpu, ATDI_SOFTMAX, &env, hidden->dtype, &p);
		if (!p.rules)
			continue; /* served as stored or built in: not the rules' doing */
		char params[512];
		atdi_params_text(p.rules, p.values, params, sizeof params);
		double served = stored_time(db, hidden, p.rules->name, params, 0);
		double best = stored_time(db, hidden, NULL, NULL, 1);
		cr_assert(isfinite(best));
		if (!isfinite(served))
			continue; /* a variant the sweep did not enumerate there */
		timed++;
		log_sum += log(best / served);
		within10 += best / served >= 1 / 1.1;
	}
	double geomean = exp(log_sum / (double)timed);
	cr_assert_geq(timed, 120, "most served variants were timed at their shape (%zu)", timed);
	cr_assert_geq(geomean, 0.905, "geometric mean of best / served: %.3f", geomean);
	cr_assert_geq(within10, 90, "shapes within 10%% of the best: %zu of %zu", within10, timed);
	free(others);
	sqlite3_close(db);
	sqlite3_close(h);
	atdi_table_free(&t);
}
