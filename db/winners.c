/* Winners chosen again by merge, and every winner's kernel: see winners.h. */
#include "db/winners.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "db/tuning_db.h"

static int sql_error(sqlite3 *s, const char *label, const char *what, at_error *err)
{
	return at_error_set(err, "%s: %s: %s", label, what, sqlite3_errmsg(s));
}

static int exec(sqlite3 *s, const char *sql, const char *label, at_error *err)
{
	char *msg = NULL;
	if (sqlite3_exec(s, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	at_error_set(err, "%s: %s", label, msg ? msg : sqlite3_errmsg(s));
	sqlite3_free(msg);
	return -1;
}

/* A shape's picks as tdb_pick_winner takes them, with their ids. */
typedef struct picks {
	long long gpu_id, m, n;
	char *op, *dtype;
	int has_band;
	double band;
	result_row *rows;
	long long *ids, *sweeps;
	size_t count, cap;
} picks;

static void picks_reset(picks *p)
{
	free(p->op);
	free(p->dtype);
	p->op = p->dtype = NULL;
	p->count = 0;
}

static void picks_free(picks *p)
{
	picks_reset(p);
	free(p->rows);
	free(p->ids);
	free(p->sweeps);
}

static const char *text(sqlite3_stmt *st, int col)
{
	const char *t = (const char *)sqlite3_column_text(st, col);
	return t ? t : "";
}

/* Whether the row of st belongs to the shape being gathered. */
static int same_shape(const picks *p, sqlite3_stmt *st)
{
	return p->op && p->gpu_id == sqlite3_column_int64(st, 0) && strcmp(p->op, text(st, 1)) == 0 &&
	       strcmp(p->dtype, text(st, 2)) == 0 && p->m == sqlite3_column_int64(st, 3) &&
	       p->n == sqlite3_column_int64(st, 4);
}

/* Columns of pick_sql: the shape (0-4), the result's id (5), sweep (6),
 * whether a baseline (7), whether ok (8), time (9), registers (10), the
 * shape's widest stored band (11). Ordered by shape, then the older sweep
 * first: the rule's last tie-break is the earlier row. */
static const char pick_sql[] =
	"SELECT r.gpu_id, r.op, r.dtype, r.m, r.n, r.id, r.sweep_id, r.kind = 'baseline',"
	"  r.status = 'ok', r.time_us, r.registers, b.band"
	" FROM main.results r JOIN main.kernels k ON k.result_id = r.id"
	" JOIN main.sweeps s ON s.id = r.sweep_id"
	" LEFT JOIN temp.bands b ON b.gpu_id = r.gpu_id AND b.op = r.op AND b.dtype = r.dtype"
	"  AND b.m = r.m AND b.n = r.n"
	" ORDER BY r.gpu_id, r.op, r.dtype, r.m, r.n, s.started_at, r.id";

static void picks_add(picks *p, sqlite3_stmt *st)
{
	if (!p->op) {
		p->gpu_id = sqlite3_column_int64(st, 0);
		p->op = xstrdup(text(st, 1));
		p->dtype = xstrdup(text(st, 2));
		p->m = sqlite3_column_int64(st, 3);
		p->n = sqlite3_column_int64(st, 4);
		p->has_band = sqlite3_column_type(st, 11) != SQLITE_NULL;
		p->band = sqlite3_column_double(st, 11);
	}
	if (p->count == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 8;
		p->rows = xrealloc(p->rows, p->cap * sizeof *p->rows);
		p->ids = xrealloc(p->ids, p->cap * sizeof *p->ids);
		p->sweeps = xrealloc(p->sweeps, p->cap * sizeof *p->sweeps);
	}
	/* what the rule reads, as the sweep stored it (NULL registers: -1) */
	p->rows[p->count] = (result_row){
		.baseline = sqlite3_column_int(st, 7),
		.status = sqlite3_column_int(st, 8) ? RESULT_OK : RESULT_CHECK_FAILED,
		.time_us = sqlite3_column_double(st, 9),
		.registers = sqlite3_column_type(st, 10) == SQLITE_NULL ? -1
									 : sqlite3_column_int(st, 10),
	};
	p->ids[p->count] = sqlite3_column_int64(st, 5);
	p->sweeps[p->count++] = sqlite3_column_int64(st, 6);
}

/* Stores the winner the rule picks among p's rows, if any. */
static int picks_store(sqlite3 *s, sqlite3_stmt *ins, const picks *p, const char *label,
		       at_error *err)
{
	long w = tdb_pick_winner(p->rows, p->count, p->has_band ? p->band : 0);
	if (w < 0)
		return 0;
	sqlite3_reset(ins);
	sqlite3_bind_int64(ins, 1, p->gpu_id);
	sqlite3_bind_text(ins, 2, p->op, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(ins, 3, p->dtype, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(ins, 4, p->m);
	sqlite3_bind_int64(ins, 5, p->n);
	sqlite3_bind_int64(ins, 6, p->ids[w]);
	sqlite3_bind_int64(ins, 7, p->sweeps[w]);
	if (p->has_band)
		sqlite3_bind_double(ins, 8, p->band);
	else
		sqlite3_bind_null(ins, 8);
	return sqlite3_step(ins) == SQLITE_DONE ? 0 : sql_error(s, label, "storing a winner", err);
}

/* Every shape with picks gets the rule's winner among them. */
static int choose_among_picks(sqlite3 *s, const char *label, at_error *err)
{
	sqlite3_stmt *st = NULL, *ins = NULL;
	if (sqlite3_prepare_v2(s, pick_sql, -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s,
			       "INSERT INTO main.winners (gpu_id, op, dtype, m, n, result_id, "
			       "sweep_id, noise_band) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
			       -1, &ins, NULL) != SQLITE_OK) {
		sql_error(s, label, "choosing the winners", err);
		sqlite3_finalize(st);
		return -1;
	}
	picks p = { 0 };
	int rc, status = 0;
	while (status == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (p.op && !same_shape(&p, st)) {
			status = picks_store(s, ins, &p, label, err);
			picks_reset(&p);
		}
		picks_add(&p, st);
	}
	if (status == 0 && rc != SQLITE_DONE)
		status = sql_error(s, label, "reading the results with kernels", err);
	if (status == 0 && p.op)
		status = picks_store(s, ins, &p, label, err);
	picks_free(&p);
	sqlite3_finalize(st);
	sqlite3_finalize(ins);
	return status;
}

/* Shapes without a pick keep a winners row with no result, so that a
 * sweep into OUT skips them as it skipped them in their database. */
static const char no_pick_sql[] =
	"INSERT OR IGNORE INTO main.winners (gpu_id, op, dtype, m, n, result_id, sweep_id,"
	"  noise_band)"
	"  SELECT gpu_id, op, dtype, m, n, NULL, max(sweep_id), max(noise_band) FROM temp.prior"
	"  GROUP BY gpu_id, op, dtype, m, n;"
	"INSERT OR IGNORE INTO main.winners (gpu_id, op, dtype, m, n, result_id, sweep_id)"
	"  SELECT gpu_id, op, dtype, m, n, NULL, max(sweep_id) FROM main.results"
	"  GROUP BY gpu_id, op, dtype, m, n;";

/* The message for the row of st: gpu name, op, dtype, M, N, template,
 * params, result id, how many rows matched (columns 0-8). */
static int no_kernel(sqlite3_stmt *st, const char *label, const char *tail, at_error *err)
{
	long long more = sqlite3_column_int64(st, 8) - 1;
	char others[64] = "";
	if (more > 0)
		snprintf(others, sizeof others, " (and %lld more)", more);
	return at_error_set(err,
			    "%s: the winner of %s %s M=%lld N=%lld on %s (%s %s, result %lld) "
			    "has no stored kernel%s%s",
			    label, text(st, 1), text(st, 2), sqlite3_column_int64(st, 3),
			    sqlite3_column_int64(st, 4), text(st, 0), text(st, 5), text(st, 6),
			    sqlite3_column_int64(st, 7), others, tail);
}

/* The first row of sql (columns as no_kernel reads them) becomes err. */
static int first_without_kernel(sqlite3 *s, const char *sql, const char *label,
				const char *tail, at_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s, sql, -1, &st, NULL) != SQLITE_OK)
		return sql_error(s, label, "checking the winners' kernels", err);
	int rc = sqlite3_step(st);
	int status = rc == SQLITE_ROW    ? no_kernel(st, label, tail, err)
		     : rc == SQLITE_DONE ? 0
					 : sql_error(s, label, "checking the winners' kernels", err);
	sqlite3_finalize(st);
	return status;
}

#define SAME_SHAPE(a, b)                                                               \
	a ".gpu_id = " b ".gpu_id AND " a ".op = " b ".op AND " a ".dtype = " b ".dtype AND " \
	a ".m = " b ".m AND " a ".n = " b ".n"

/* A shape that had a winner before the merge and has none with a kernel. */
static const char lost_sql[] =
	"SELECT g.name, p.op, p.dtype, p.m, p.n, r.template, r.params, p.result_id,"
	"  count(*) OVER ()"
	" FROM temp.prior p JOIN main.gpus g ON g.id = p.gpu_id"
	" LEFT JOIN main.results r ON r.id = p.result_id"
	" LEFT JOIN main.winners w ON " SAME_SHAPE("w", "p")
	" WHERE p.result_id IS NOT NULL AND (w.result_id IS NULL OR NOT EXISTS"
	"   (SELECT 1 FROM main.kernels k WHERE k.result_id = w.result_id))"
	" ORDER BY g.name, p.op, p.dtype, p.m, p.n LIMIT 1";

int winners_choose(sqlite3 *s, const char *label, at_error *err)
{
	if (exec(s,
		 "CREATE TEMP TABLE bands AS SELECT gpu_id, op, dtype, m, n,"
		 "  max(noise_band) AS band FROM temp.prior GROUP BY gpu_id, op, dtype, m, n;"
		 "CREATE INDEX temp.bands_shape ON bands (gpu_id, op, dtype, m, n);"
		 "DELETE FROM main.winners;",
		 label, err) ||
	    choose_among_picks(s, label, err) || exec(s, no_pick_sql, label, err) ||
	    exec(s, "DROP TABLE temp.bands", label, err))
		return -1;
	return first_without_kernel(s, lost_sql, label,
				    ", nor has any other result of its shape: rolled back, OUT is "
				    "left as it was",
				    err);
}

int winners_check_kernels(sqlite3 *s, const char *label, int by_shape, at_error *err)
{
	const char *sql =
		by_shape
			? "SELECT g.name, w.op, w.dtype, w.m, w.n, r.template, r.params, w.result_id,"
			  "  count(*) OVER ()"
			  " FROM winners w JOIN gpus g ON g.id = w.gpu_id"
			  " LEFT JOIN results r ON r.id = w.result_id"
			  " WHERE w.result_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM results x"
			  "   JOIN kernels k ON k.result_id = x.id WHERE " SAME_SHAPE("x", "w") ")"
			  " ORDER BY g.name, w.op, w.dtype, w.m, w.n LIMIT 1"
			: "SELECT g.name, w.op, w.dtype, w.m, w.n, r.template, r.params, w.result_id,"
			  "  count(*) OVER ()"
			  " FROM winners w JOIN gpus g ON g.id = w.gpu_id"
			  " LEFT JOIN results r ON r.id = w.result_id"
			  " WHERE w.result_id IS NOT NULL AND NOT EXISTS"
			  "   (SELECT 1 FROM kernels k WHERE k.result_id = w.result_id)"
			  " ORDER BY g.name, w.op, w.dtype, w.m, w.n LIMIT 1";
	char tail[1200];
	if (by_shape)
		snprintf(tail, sizeof tail,
			 ", nor has any other result of its shape: refusing to merge it (OUT is "
			 "left as it was; sweep that shape again)");
	else
		snprintf(tail, sizeof tail,
			 ": the library could not run it as tuned; refusing to export (a database "
			 "merged by an older autotune lost its winners' kernels: `autotune db merge "
			 "NEW.db %.900s` chooses them again among the results that have kernels)",
			 label);
	return first_without_kernel(s, sql, label, tail, err);
}
