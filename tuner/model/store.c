/* Storing refitted models: see store.h. */
#include "tuner/model/store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/sqlite_reader.h"
#include "common/strbuf.h"
#include "db/models.h"
#include "db/tuning_db.h"
#include "gen/manifest.h"
#include "tuner/model/fit.h"

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

int model_store_fitted(const char *db_path, const char *gpu, const char *op,
		       const tr_template *ts, int nts, at_error *err)
{
	double t0 = now_s();
	model_samples s;
	at_error why = { { 0 } };
	if (model_samples_load(db_path, gpu, op, ts, nts, &s, &why)) {
		/* the results are stored; the library derives instead */
		printf("Model of %s on %s: not fitted (%s).\n", op, gpu, why.msg);
		return 0;
	}
	size_t tuned = 0;
	for (size_t i = 0; i < s.nshapes; i++)
		tuned += s.shapes[i].winner_us > 0;
	if (tuned < MODEL_MIN_SHAPES) {
		printf("Model of %s on %s: not fitted (%zu tuned shapes, %d needed); shapes nobody "
		       "tuned are derived from the nearest winner.\n", op, gpu, tuned, MODEL_MIN_SHAPES);
		model_samples_free(&s);
		return 0;
	}
	if (s.nsamples < 2 * tuned) {
		/* an exported database keeps the winners alone: a ranking cannot
		 * be learnt from them, and the model it carries stays */
		printf("Model of %s on %s: not fitted (%zu results for %zu tuned shapes: the winners "
		       "alone); a stored model is kept.\n", op, gpu, s.nsamples, tuned);
		model_samples_free(&s);
		return 0;
	}
	model_matrix mx;
	model_fit_options o;
	model_fit_defaults(&o);
	model_matrix_build(&s, ts, nts, &mx);
	perf_model m;
	int rc = model_fit(&s, &mx, -1, &o, &m);
	model_matrix_free(&mx);
	if (rc) {
		model_samples_free(&s);
		return at_error_set(err, "model of %s on %s: nothing to fit on", op, gpu);
	}
	strbuf text = { 0 };
	perf_model_to_text(&m, &text);
	perf_model_free(&m);
	tdb *db;
	rc = tdb_open(db_path, &db, err);
	if (rc == 0) {
		rc = tdb_model_put(db, gpu, op, (long long)s.nshapes, (long long)s.nsamples,
				   text.data, err);
		tdb_close(db);
	}
	if (rc == 0)
		printf("Model of %s on %s: fitted on %zu shapes, %zu results in %.1f s, stored "
		       "(%zu KB): shapes nobody tuned are served by it.\n", op, gpu, s.nshapes,
		       s.nsamples, now_s() - t0, text.len / 1024);
	strbuf_free(&text);
	model_samples_free(&s);
	return rc;
}

typedef struct gpu_op {
	char gpu[256], op[64];
} gpu_op;

/* The (GPU, op) pairs with winners in the database: malloc'd, *n of them; -1 on error. */
static int pairs_of(const char *db_path, gpu_op **out, size_t *n, at_error *err)
{
	*out = NULL;
	*n = 0;
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	if (at_sqlite_open_reader(db_path, &db) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT DISTINCT g.name, w.op FROM winners w JOIN gpus g ON "
			       "g.id = w.gpu_id ORDER BY g.name, w.op", -1, &st, NULL) != SQLITE_OK) {
		at_error_set(err, "%s: %s", db_path, db ? sqlite3_errmsg(db) : "cannot open");
		sqlite3_close(db);
		return -1;
	}
	size_t cap = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 8;
			*out = xrealloc(*out, cap * sizeof **out);
		}
		snprintf((*out)[*n].gpu, sizeof (*out)[*n].gpu, "%s", sqlite3_column_text(st, 0));
		snprintf((*out)[*n].op, sizeof (*out)[*n].op, "%s", sqlite3_column_text(st, 1));
		(*n)++;
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return 0;
}

int model_store_all(const char *db_path, const char *templates_dir, at_error *err)
{
	gpu_op *pairs;
	size_t npairs;
	if (pairs_of(db_path, &pairs, &npairs, err))
		return -1;
	tmpl_manifest *ms = NULL;
	size_t nms = 0;
	if (npairs && manifest_load_dir(templates_dir, &ms, &nms, err)) {
		free(pairs);
		return -1;
	}
	manifest_rules *rules = xcalloc(nms ? nms : 1, sizeof *rules);
	tr_template *ts = xcalloc(nms ? nms : 1, sizeof *ts);
	for (size_t i = 0; i < nms; i++) {
		manifest_rules_view(&ms[i], &rules[i]);
		ts[i] = rules[i].t;
	}
	int rc = 0;
	for (size_t i = 0; i < npairs && rc == 0; i++)
		rc = model_store_fitted(db_path, pairs[i].gpu, pairs[i].op, ts, (int)nms, err);
	for (size_t i = 0; i < nms; i++)
		manifest_rules_free(&rules[i]);
	free(rules);
	free(ts);
	if (ms)
		manifest_free_all(ms, nms);
	free(pairs);
	return rc;
}
