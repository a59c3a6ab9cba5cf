/* Reading the model's samples from a sweep database: see samples.h. */
#include "tuner/model/samples.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sqlite_reader.h"
#include "common/strbuf.h"

typedef struct gpu_row {
	long long id, sm_count;
	int cc;
} gpu_row;

/* The GPU named name, or the only one when name is NULL. */
static int find_gpu(sqlite3 *db, const char *name, gpu_row *g, char *found, size_t cap,
		    at_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db,
			       "SELECT id, name, cc_major * 10 + cc_minor, sm_count FROM gpus "
			       "WHERE ?1 IS NULL OR name = ?1 ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK)
		return at_error_set(err, "%s", sqlite3_errmsg(db));
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	int n = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (n++ == 0) {
			g->id = sqlite3_column_int64(st, 0);
			snprintf(found, cap, "%s", (const char *)sqlite3_column_text(st, 1));
			g->cc = sqlite3_column_int(st, 2);
			g->sm_count = sqlite3_column_int64(st, 3);
		}
	}
	sqlite3_finalize(st);
	if (n == 0)
		return at_error_set(err, name ? "no GPU named \"%s\" in the database"
					      : "no GPU in the database%s", name ? name : "");
	if (n > 1)
		return at_error_set(err, "%d GPUs%s%s%s in the database: name one with --gpu", n,
				    name ? " named \"" : "", name ? name : "", name ? "\"" : "");
	return 0;
}

static int find_template(const tr_template *ts, int nts, const char *name)
{
	for (int i = 0; i < nts; i++)
		if (strcmp(ts[i].name, name) == 0)
			return i;
	return -1;
}

/* Opens a new shape for the row's (dtype, M, N), or returns -1 for a dtype
 * the program does not know. */
static int start_shape(model_samples *s, size_t *cap, sqlite3_stmt *st, const gpu_row *g)
{
	at_dtype dt;
	if (at_dtype_parse((const char *)sqlite3_column_text(st, 0), &dt))
		return -1;
	if (s->nshapes == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		s->shapes = xrealloc(s->shapes, *cap * sizeof *s->shapes);
	}
	model_shape *sh = &s->shapes[s->nshapes++];
	memset(sh, 0, sizeof *sh);
	sh->dtype = dt;
	sh->M = sqlite3_column_int64(st, 1);
	sh->N = sqlite3_column_int64(st, 2);
	sh->copy_gbps = sqlite3_column_double(st, 6);
	sh->winner_us = sqlite3_column_type(st, 7) == SQLITE_NULL ? 0 : sqlite3_column_double(st, 7);
	sh->first = s->nsamples;
	/* the limits the dispatch library assumes for a described GPU */
	sh->env = (tr_env){ .M = sh->M, .N = sh->N, .elem_bytes = (long long)at_dtype_size(dt),
			    .sm_count = g->sm_count, .cc = g->cc, .max_threads = 1024,
			    .max_smem = g->cc >= 90 ? 227 * 1024 : g->cc >= 80 ? 163 * 1024 : 48 * 1024,
			    .regs_per_sm = 65536 };
	return 0;
}

static int read_rows(sqlite3 *db, const gpu_row *g, const char *op, long long before_sweep,
		     const tr_template *ts, int nts, model_samples *s, at_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(
		    db,
		    "SELECT r.dtype, r.m, r.n, r.template, r.params, r.time_us, sw.copy_gbps, "
		    "(SELECT wr.time_us FROM winners w JOIN results wr ON wr.id = w.result_id "
		    " WHERE w.gpu_id = r.gpu_id AND w.op = r.op AND w.dtype = r.dtype "
		    " AND w.m = r.m AND w.n = r.n), r.compile_ms "
		    "FROM results r JOIN sweeps sw ON sw.id = r.sweep_id "
		    "WHERE r.gpu_id = ?1 AND r.op = ?3 AND r.kind = 'variant' "
		    "AND r.status = 'ok' AND r.time_us > 0 AND (?2 <= 0 OR r.sweep_id < ?2) "
		    /* each shape's variants by what they are, not by row id: the
		     * fit's subsampling follows this order, and a merge numbers
		     * rows in its inputs' order (the same results merged in
		     * another order fitted another model, H200 session 65) */
		    "ORDER BY r.dtype, r.m, r.n, r.template, r.params, sw.started_at, r.time_us, "
		    "r.id",
		    -1, &st, NULL) != SQLITE_OK)
		return at_error_set(err, "%s", sqlite3_errmsg(db));
	sqlite3_bind_int64(st, 1, g->id);
	sqlite3_bind_int64(st, 2, before_sweep);
	sqlite3_bind_text(st, 3, op, -1, SQLITE_STATIC);
	size_t cap = 0, shape_cap = 0;
	model_shape *cur = NULL;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *dtype = (const char *)sqlite3_column_text(st, 0);
		if (!cur || strcmp(dtype, at_dtype_name(cur->dtype)) != 0 ||
		    sqlite3_column_int64(st, 1) != cur->M || sqlite3_column_int64(st, 2) != cur->N) {
			if (start_shape(s, &shape_cap, st, g)) {
				s->skipped++;
				continue;
			}
			cur = &s->shapes[s->nshapes - 1];
		}
		int t = find_template(ts, nts, (const char *)sqlite3_column_text(st, 3));
		model_sample x = { .tmpl = t, .time_us = sqlite3_column_double(st, 5),
				   .compile_ms = sqlite3_column_double(st, 8) };
		if (t < 0 || tr_params_parse(&ts[t], (const char *)sqlite3_column_text(st, 4),
					     x.values)) {
			s->skipped++;
			continue;
		}
		if (s->nsamples == cap) {
			cap = cap ? 2 * cap : 1024;
			s->samples = xrealloc(s->samples, cap * sizeof *s->samples);
		}
		s->samples[s->nsamples++] = x;
		cur->n++;
		if (cur->n == 1 || x.time_us < cur->best_us)
			cur->best_us = x.time_us;
	}
	sqlite3_finalize(st);
	return 0;
}

int model_samples_load(const char *path, const char *gpu, const char *op, const tr_template *ts,
		       int nts, model_samples *out, at_error *err)
{
	return model_samples_load_before(path, gpu, op, 0, ts, nts, out, err);
}

int model_samples_load_before(const char *path, const char *gpu, const char *op,
			      long long before_sweep, const tr_template *ts, int nts,
			      model_samples *out, at_error *err)
{
	op = op ? op : "softmax";
	memset(out, 0, sizeof *out);
	sqlite3 *db;
	if (at_sqlite_open_reader(path, &db) != SQLITE_OK) {
		at_error_set(err, "%s: %s", path, db ? sqlite3_errmsg(db) : "cannot open");
		sqlite3_close(db);
		return -1;
	}
	gpu_row g = { 0 };
	int rc = find_gpu(db, gpu, &g, out->gpu, sizeof out->gpu, err);
	if (rc == 0)
		rc = read_rows(db, &g, op, before_sweep, ts, nts, out, err);
	sqlite3_close(db);
	if (rc == 0 && out->nsamples == 0)
		rc = at_error_set(err, "%s: no passing %s variant results for %s", path, op,
				  out->gpu);
	if (rc)
		model_samples_free(out);
	return rc;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double model_samples_compile_ms(const model_samples *s, int t)
{
	double *ms = xmalloc((s->nsamples ? s->nsamples : 1) * sizeof *ms);
	size_t n = 0;
	for (size_t i = 0; i < s->nsamples; i++)
		if (s->samples[i].tmpl == t && s->samples[i].compile_ms > 0)
			ms[n++] = s->samples[i].compile_ms;
	qsort(ms, n, sizeof *ms, by_value);
	double median = n == 0 ? 0 : n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
	free(ms);
	return median;
}

void model_samples_free(model_samples *s)
{
	free(s->shapes);
	free(s->samples);
	memset(s, 0, sizeof *s);
}
