/* Storing a sweep's models: see store_models.h. */
#include "tuner/sweep/store_models.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/sqlite_reader.h"
#include "common/strbuf.h"
#include "db/models.h"
#include "db/tuning_db.h"
#include "tuner/model/fit.h"
#include "tuner/sweep/prune_model.h"

#define MAX_GPUS 16

/* The names of the GPUs that ran sweeps numbered first_sweep on; their count, -1 on error. */
static int sweep_gpus(const char *db_path, long long first_sweep, char names[][256], at_error *err)
{
	sqlite3 *db = NULL;
	if (at_sqlite_open_reader(db_path, &db) != SQLITE_OK) {
		at_error_set(err, "%s: %s", db_path, db ? sqlite3_errmsg(db) : "cannot open");
		sqlite3_close(db);
		return -1;
	}
	sqlite3_stmt *st;
	int n = 0;
	if (sqlite3_prepare_v2(db, "SELECT DISTINCT g.name FROM sweeps s JOIN gpus g ON g.id = "
			       "s.gpu_id WHERE s.id >= ?1 ORDER BY g.name", -1, &st, NULL) != SQLITE_OK) {
		at_error_set(err, "%s: %s", db_path, sqlite3_errmsg(db));
		sqlite3_close(db);
		return -1;
	}
	sqlite3_bind_int64(st, 1, first_sweep);
	while (n < MAX_GPUS && sqlite3_step(st) == SQLITE_ROW)
		snprintf(names[n++], 256, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* Fits and stores op's model of gpu; 0 (stored, or not and said why), -1 when
 * it cannot be stored. */
static int store_one(const char *db_path, const char *gpu, const char *op, const tr_template *ts,
		     int nts, at_error *err)
{
	double t0 = now_s();
	model_samples s;
	at_error why = { { 0 } };
	if (model_samples_load(db_path, gpu, op, ts, nts, &s, &why)) {
		/* the sweep's results are stored; the library derives instead */
		printf("Model of %s on %s: not fitted (%s).\n", op, gpu, why.msg);
		return 0;
	}
	size_t tuned = 0;
	for (size_t i = 0; i < s.nshapes; i++)
		tuned += s.shapes[i].winner_us > 0;
	if (tuned < PRUNE_MIN_SHAPES) {
		printf("Model of %s on %s: not fitted (%zu tuned shapes, %d needed); shapes nobody "
		       "tuned are derived from the nearest winner.\n", op, gpu, tuned, PRUNE_MIN_SHAPES);
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

int sweep_store_models(const char *db_path, const sweep_plan *p, long long first_sweep,
		       at_error *err)
{
	char gpus[MAX_GPUS][256];
	int ngpus = sweep_gpus(db_path, first_sweep, gpus, err);
	if (ngpus < 0)
		return -1;
	manifest_rules *rules = xcalloc(p->ntemplates ? p->ntemplates : 1, sizeof *rules);
	tr_template *ts = xcalloc(p->ntemplates ? p->ntemplates : 1, sizeof *ts);
	for (size_t i = 0; i < p->ntemplates; i++) {
		manifest_rules_view(&p->templates[i], &rules[i]);
		ts[i] = rules[i].t;
	}
	int rc = 0;
	for (size_t i = 0; i < p->nshapes && rc == 0; i++) {
		const char *op = p->shapes[i].op;
		int seen = 0;
		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(p->shapes[j].op, op) == 0;
		for (int g = 0; g < ngpus && rc == 0 && !seen; g++)
			rc = store_one(db_path, gpus[g], op, ts, (int)p->ntemplates, err);
	}
	free(ts);
	free(rules);
	return rc;
}
