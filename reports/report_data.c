/* Reading a tuning database for the report: see report_data.h. Every query
 * is read-only; the database may be open in another process (a sweep in
 * progress), so a shape appears only once its transaction is committed. */
#include "reports/report_data.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"

typedef struct reader {
	sqlite3 *sql;
	const char *path;
	at_error *err;
} reader;

static int sql_fail(const reader *r, const char *what)
{
	return at_error_set(r->err, "%s: %s: %s", r->path, what, sqlite3_errmsg(r->sql));
}

static int prepare(const reader *r, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(r->sql, sql, -1, st, NULL) != SQLITE_OK)
		return sql_fail(r, "reading the database");
	return 0;
}

/* A copy of a text column; NULL stays NULL. */
static char *col_dup(sqlite3_stmt *st, int col)
{
	const char *t = (const char *)sqlite3_column_text(st, col);
	return t ? xstrdup(t) : NULL;
}

/* A copy of a NOT NULL text column ("" if it is NULL after all). */
static char *col_str(sqlite3_stmt *st, int col)
{
	char *s = col_dup(st, col);
	return s ? s : xstrdup("");
}

static double col_real(sqlite3_stmt *st, int col)
{
	return sqlite3_column_type(st, col) == SQLITE_NULL ? NAN : sqlite3_column_double(st, col);
}

static int col_int(sqlite3_stmt *st, int col)
{
	return sqlite3_column_type(st, col) == SQLITE_NULL ? -1 : sqlite3_column_int(st, col);
}

/* Makes room for one more element in an array of *n with capacity *cap. */
static void *grow(void *array, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return array;
	*cap = *cap ? *cap * 2 : 8;
	return xrealloc(array, *cap * size);
}

static int load_gpus(const reader *r, report_data *d)
{
	sqlite3_stmt *st;
	if (prepare(r, "SELECT id, name, cc_major, cc_minor, sm_count, mem_bytes FROM gpus "
		       "ORDER BY name, id",
		    &st))
		return -1;
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		d->gpus = grow(d->gpus, &cap, d->n_gpus, sizeof *d->gpus);
		d->gpus[d->n_gpus++] = (rd_gpu){
			.id = sqlite3_column_int64(st, 0),
			.name = col_str(st, 1),
			.cc_major = sqlite3_column_int(st, 2),
			.cc_minor = sqlite3_column_int(st, 3),
			.sm_count = sqlite3_column_int(st, 4),
			.mem_bytes = sqlite3_column_int64(st, 5),
		};
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : sql_fail(r, "reading the GPUs");
}

static int load_sweeps(const reader *r, report_data *d)
{
	sqlite3_stmt *st;
	if (prepare(r,
		    "SELECT s.id, s.gpu_id, s.started_at, s.finished_at, s.driver_version, "
		    "s.nvrtc_version, s.tool_version, s.config_path, s.config_text, s.copy_gbps, "
		    "s.compile_s, s.bench_s, "
		    "(SELECT count(*) FROM results r WHERE r.sweep_id = s.id AND r.kind = 'variant'), "
		    "(SELECT count(*) FROM (SELECT DISTINCT dtype, template, params FROM results r "
		    "  WHERE r.sweep_id = s.id AND r.kind = 'variant')), "
		    "(SELECT count(*) FROM results r WHERE r.sweep_id = s.id AND r.kind = 'baseline'), "
		    "(SELECT count(*) FROM results r WHERE r.sweep_id = s.id AND r.status <> 'ok'), "
		    "(SELECT count(*) FROM winners w WHERE w.sweep_id = s.id) "
		    "FROM sweeps s ORDER BY s.id",
		    &st))
		return -1;
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		d->sweeps = grow(d->sweeps, &cap, d->n_sweeps, sizeof *d->sweeps);
		d->sweeps[d->n_sweeps++] = (rd_sweep){
			.id = sqlite3_column_int64(st, 0),
			.gpu_id = sqlite3_column_int64(st, 1),
			.started_at = col_str(st, 2),
			.finished_at = col_dup(st, 3),
			.driver_version = sqlite3_column_int(st, 4),
			.nvrtc_version = col_str(st, 5),
			.tool_version = col_str(st, 6),
			.config_path = col_str(st, 7),
			.config_text = col_str(st, 8),
			.copy_gbps = col_real(st, 9),
			.compile_s = col_real(st, 10),
			.bench_s = col_real(st, 11),
			.variant_runs = sqlite3_column_int64(st, 12),
			.distinct_variants = sqlite3_column_int64(st, 13),
			.baseline_runs = sqlite3_column_int64(st, 14),
			.failed = sqlite3_column_int64(st, 15),
			.shapes = sqlite3_column_int64(st, 16),
		};
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : sql_fail(r, "reading the sweeps");
}

/* Reads the results of shape s (key bound in st, which is reset here). */
static int load_results(const reader *r, sqlite3_stmt *st, rd_shape *s, long long winner_id)
{
	size_t cap = 0;
	int rc;
	s->winner = -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		s->results = grow(s->results, &cap, s->n_results, sizeof *s->results);
		rd_result *x = &s->results[s->n_results];
		*x = (rd_result){
			.id = sqlite3_column_int64(st, 0),
			.sweep_id = sqlite3_column_int64(st, 1),
			.baseline = strcmp((const char *)sqlite3_column_text(st, 2), "baseline") == 0,
			.template_name = col_str(st, 3),
			.params = col_str(st, 4),
			.status = col_str(st, 5),
			.reason = col_dup(st, 6),
			.rel_err = col_real(st, 7),
			.time_us = col_real(st, 8),
			.time_min_us = col_real(st, 9),
			.time_max_us = col_real(st, 10),
			.gbps = col_real(st, 11),
			.pct_copy = col_real(st, 12),
			.registers = col_int(st, 13),
			.smem_bytes = col_int(st, 14),
			.spill_bytes = col_int(st, 15),
		};
		x->timed = strcmp(x->status, "ok") == 0 && x->time_us > 0;
		if (x->id == winner_id)
			s->winner = (long)s->n_results;
		s->n_results++;
	}
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : sql_fail(r, "reading the results");
}

static size_t gpu_index(const report_data *d, long long id)
{
	for (size_t i = 0; i < d->n_gpus; i++)
		if (d->gpus[i].id == id)
			return i;
	return 0; /* not reached: a result's gpu_id references gpus */
}

static int has_noise_band(const reader *r)
{
	sqlite3_stmt *st;
	int found = 0;
	if (sqlite3_prepare_v2(r->sql, "SELECT count(*) FROM pragma_table_info('winners') "
					"WHERE name = 'noise_band'", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		found = sqlite3_column_int(st, 0) > 0;
	sqlite3_finalize(st);
	return found;
}

/* Every shape with results or a winners row, grouped by GPU, op and dtype. */
static int load_shapes(const reader *r, report_data *d)
{
	sqlite3_stmt *st, *res;
	/* noise_band came with schema version 2: older winners have none */
	char sql[1600];
	snprintf(sql, sizeof sql,
		    "SELECT s.gpu_id, s.op, s.dtype, s.m, s.n, w.result_id, "
		    "coalesce(w.sweep_id, s.sweep_id), %s "
		    "FROM (SELECT gpu_id, op, dtype, m, n, max(sweep_id) AS sweep_id FROM ("
		    "  SELECT gpu_id, op, dtype, m, n, sweep_id FROM results UNION ALL "
		    "  SELECT gpu_id, op, dtype, m, n, sweep_id FROM winners) "
		    "  GROUP BY gpu_id, op, dtype, m, n) s "
		    "JOIN gpus g ON g.id = s.gpu_id "
		    "LEFT JOIN winners w ON w.gpu_id = s.gpu_id AND w.op = s.op "
		    "  AND w.dtype = s.dtype AND w.m = s.m AND w.n = s.n "
		    "ORDER BY g.name, g.id, s.op, "
		    "CASE s.dtype WHEN 'f32' THEN 0 WHEN 'f16' THEN 1 WHEN 'bf16' THEN 2 ELSE 3 END, "
		    "s.dtype, s.m, s.n",
		    has_noise_band(r) ? "w.noise_band" : "NULL");
	if (prepare(r, sql, &st))
		return -1;
	if (prepare(r,
		    "SELECT id, sweep_id, kind, template, params, status, reason, rel_err, time_us, "
		    "time_min_us, time_max_us, gbps, pct_copy, registers, smem_bytes, spill_bytes "
		    "FROM results WHERE gpu_id = ?1 AND op = ?2 AND dtype = ?3 AND m = ?4 AND n = ?5 "
		    "ORDER BY (status <> 'ok' OR time_us IS NULL OR time_us <= 0), time_us, id",
		    &res)) {
		sqlite3_finalize(st);
		return -1;
	}
	size_t group_cap = 0, shape_cap = 0;
	long long last_gpu = -1;
	int rc, failed = 0;
	while (!failed && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		long long gpu_id = sqlite3_column_int64(st, 0);
		const char *op = (const char *)sqlite3_column_text(st, 1);
		const char *dtype = (const char *)sqlite3_column_text(st, 2);
		rd_group *g = d->n_groups ? &d->groups[d->n_groups - 1] : NULL;
		if (!g || gpu_id != last_gpu || strcmp(g->op, op) != 0 || strcmp(g->dtype, dtype) != 0) {
			d->groups = grow(d->groups, &group_cap, d->n_groups, sizeof *d->groups);
			g = &d->groups[d->n_groups++];
			*g = (rd_group){ .gpu = gpu_index(d, gpu_id), .op = xstrdup(op),
					 .dtype = xstrdup(dtype) };
			shape_cap = 0;
			last_gpu = gpu_id;
		}
		g->shapes = grow(g->shapes, &shape_cap, g->n_shapes, sizeof *g->shapes);
		rd_shape *s = &g->shapes[g->n_shapes++];
		*s = (rd_shape){ .M = sqlite3_column_int64(st, 3), .N = sqlite3_column_int64(st, 4),
				 .sweep_id = sqlite3_column_int64(st, 6), .winner = -1,
				 .noise_band = col_real(st, 7) };
		long long winner_id = sqlite3_column_type(st, 5) == SQLITE_NULL
					      ? -1 : sqlite3_column_int64(st, 5);
		sqlite3_bind_int64(res, 1, gpu_id);
		sqlite3_bind_text(res, 2, op, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(res, 3, dtype, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(res, 4, s->M);
		sqlite3_bind_int64(res, 5, s->N);
		failed = load_results(r, res, s, winner_id) != 0;
	}
	sqlite3_finalize(res);
	sqlite3_finalize(st);
	if (failed)
		return -1;
	return rc == SQLITE_DONE ? 0 : sql_fail(r, "reading the shapes");
}

static int count_results(const reader *r, report_data *d)
{
	sqlite3_stmt *st;
	if (prepare(r, "SELECT count(*) FROM results", &st))
		return -1;
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		d->n_results = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : sql_fail(r, "counting the results");
}

int report_data_load(tdb *db, const char *path, report_data *d, at_error *err)
{
	*d = (report_data){ 0 };
	reader r = { tdb_handle(db), path, err };
	/* one read transaction: a sweep writing meanwhile cannot tear the view */
	int rc = sqlite3_exec(r.sql, "BEGIN", NULL, NULL, NULL) == SQLITE_OK ? 0
									 : sql_fail(&r, "reading");
	if (rc == 0)
		rc = count_results(&r, d) || load_gpus(&r, d) || load_sweeps(&r, d) ||
		     load_shapes(&r, d) ? -1 : 0;
	sqlite3_exec(r.sql, "COMMIT", NULL, NULL, NULL);
	if (rc)
		report_data_free(d);
	return rc;
}

static void free_shape(rd_shape *s)
{
	for (size_t i = 0; i < s->n_results; i++) {
		rd_result *x = &s->results[i];
		free(x->template_name);
		free(x->params);
		free(x->status);
		free(x->reason);
	}
	free(s->results);
}

void report_data_free(report_data *d)
{
	for (size_t i = 0; i < d->n_gpus; i++)
		free(d->gpus[i].name);
	for (size_t i = 0; i < d->n_sweeps; i++) {
		rd_sweep *s = &d->sweeps[i];
		free(s->started_at);
		free(s->finished_at);
		free(s->nvrtc_version);
		free(s->tool_version);
		free(s->config_path);
		free(s->config_text);
	}
	for (size_t i = 0; i < d->n_groups; i++) {
		rd_group *g = &d->groups[i];
		for (size_t j = 0; j < g->n_shapes; j++)
			free_shape(&g->shapes[j]);
		free(g->shapes);
		free(g->op);
		free(g->dtype);
	}
	free(d->gpus);
	free(d->sweeps);
	free(d->groups);
	*d = (report_data){ 0 };
}

const rd_sweep *report_data_sweep(const report_data *d, long long id)
{
	for (size_t i = 0; i < d->n_sweeps; i++)
		if (d->sweeps[i].id == id)
			return &d->sweeps[i];
	return NULL;
}

const rd_result *rd_shape_winner(const rd_shape *s)
{
	return s->winner >= 0 ? &s->results[s->winner] : NULL;
}

const rd_result *rd_shape_baseline(const rd_shape *s, const char *template_name)
{
	for (size_t i = 0; i < s->n_results; i++) {
		const rd_result *x = &s->results[i];
		if (x->baseline && x->timed && strcmp(x->template_name, template_name) == 0)
			return x;
	}
	return NULL;
}
