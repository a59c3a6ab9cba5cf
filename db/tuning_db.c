/* The tuner's side of the tuning database: see tuning_db.h. */
#include "db/tuning_db.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/sqlite_reader.h"
#include "common/sqlite_wal.h"
#include "common/sha256.h"
#include "common/strbuf.h"

/* How long a statement waits for another connection's lock. */
#define BUSY_TIMEOUT_MS 10000

extern const char db_schema_sql[];

struct tdb {
	sqlite3 *sql;
	char *path;
};

const char *tdb_default_path(const char *explicit_path)
{
	if (explicit_path && *explicit_path)
		return explicit_path;
	const char *env = getenv(TDB_PATH_ENV);
	return env && *env ? env : TDB_DEFAULT_PATH;
}

static int sql_fail(tdb *db, at_error *err, const char *what)
{
	return at_error_set(err, "%s: %s: %s", db->path, what, sqlite3_errmsg(db->sql));
}

static int exec(tdb *db, const char *sql, at_error *err)
{
	char *msg = NULL;
	if (sqlite3_exec(db->sql, sql, NULL, NULL, &msg) != SQLITE_OK) {
		at_error_set(err, "%s: %s", db->path, msg ? msg : "SQL error");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/* The first read tells a file that is no database from one that cannot be
 * read (locked, or a write-ahead log whose folder is read-only). */
static int first_read_fail(tdb *db, at_error *err)
{
	int code = sqlite3_errcode(db->sql);
	return sql_fail(db, err, code == SQLITE_NOTADB || code == SQLITE_CORRUPT
					 ? "not a tuning database (or not an SQLite file)"
					 : "cannot read it");
}

static int user_version(tdb *db, int *version, at_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->sql, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return first_read_fail(db, err);
	int rc = sqlite3_step(st);
	*version = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	if (rc != SQLITE_ROW)
		first_read_fail(db, err);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

static int has_column(tdb *db, const char *table, const char *column)
{
	char sql[128];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM pragma_table_info('%s') WHERE name = '%s'",
		 table, column);
	sqlite3_stmt *st;
	int found = 0;
	if (sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		found = sqlite3_column_int(st, 0) > 0;
	sqlite3_finalize(st);
	return found;
}

/* Adds a column that a later version brought, unless it is there. */
static int add_column(tdb *db, int from, int version, const char *table, const char *column,
		      const char *decl, at_error *err)
{
	if (from >= version || has_column(db, table, column))
		return 0;
	char sql[256];
	snprintf(sql, sizeof sql, "ALTER TABLE %s ADD COLUMN %s %s", table, column, decl);
	return exec(db, sql, err);
}

/* sha256_hex(x) in SQL: the digest of a blob's or text's bytes (NULL for
 * NULL), for the kernels' digests (v4) when they are stored or migrated. */
static void sql_sha256(sqlite3_context *c, int argc, sqlite3_value **argv)
{
	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
		sqlite3_result_null(c);
		return;
	}
	const void *data = sqlite3_value_blob(argv[0]);
	char hex[SHA256_HEX_LEN + 1];
	sha256_hex(data ? data : "", (size_t)sqlite3_value_bytes(argv[0]), hex);
	sqlite3_result_text(c, hex, SHA256_HEX_LEN, SQLITE_TRANSIENT);
}

/* Brings an older tuning database to this version: the schema's CREATE
 * statements are idempotent, so running them adds the new tables; new
 * columns of old tables are added by name, with the defaults that keep old
 * rows meaning what they meant. */
static int migrate(tdb *db, int from, at_error *err)
{
	char pragma[64];
	snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d;", TDB_SCHEMA_VERSION);
	if (exec(db, "BEGIN IMMEDIATE", err) || exec(db, db_schema_sql, err) ||
	    add_column(db, from, 2, "winners", "noise_band", "REAL", err) ||
	    add_column(db, from, 3, "results", "ctas_per_row", "INTEGER NOT NULL DEFAULT 1", err) ||
	    add_column(db, from, 3, "results", "cooperative", "INTEGER NOT NULL DEFAULT 0", err) ||
	    add_column(db, from, 4, "kernels", "cubin_sha256", "TEXT", err) ||
	    add_column(db, from, 4, "kernels", "ptx_sha256", "TEXT", err) ||
	    (from < 4 && exec(db, "UPDATE kernels SET cubin_sha256 = sha256_hex(cubin), "
				  "ptx_sha256 = sha256_hex(ptx) WHERE cubin_sha256 IS NULL", err)) ||
	    exec(db, pragma, err) || exec(db, "COMMIT", err)) {
		sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return 0;
}

/* Checks the version, creates the schema in an empty database and
 * migrates an older one opened for writing. */
static int prepare_schema(tdb *db, int writable, at_error *err)
{
	int version;
	if (user_version(db, &version, err))
		return -1;
	if (version > TDB_SCHEMA_VERSION)
		return at_error_set(err,
				    "%s: schema version %d is newer than this program's (%d); "
				    "use a newer autotune",
				    db->path, version, TDB_SCHEMA_VERSION);
	/* tables added within this version (schema.sql: models) appear when a
	 * writer opens it: the schema's statements are idempotent, and a no-op
	 * where the tables exist */
	if (version == TDB_SCHEMA_VERSION)
		return writable ? exec(db, db_schema_sql, err) : 0;
	if (!writable && version >= TDB_SCHEMA_MIN_READ)
		return 0;
	if (!writable)
		return at_error_set(err, "%s: not a tuning database (no schema)", db->path);
	if (version > 0)
		return migrate(db, version, err);
	/* Decide under the write lock: another sweep may be creating the schema
	 * of this new file right now. */
	if (exec(db, "BEGIN IMMEDIATE", err))
		return -1;
	if (user_version(db, &version, err))
		goto fail;
	if (version > 0) {
		if (exec(db, "COMMIT", err))
			goto fail;
		return prepare_schema(db, writable, err); /* created meanwhile */
	}
	/* An existing file with other tables is someone else's database. */
	sqlite3_stmt *st;
	int foreign = 0;
	if (sqlite3_prepare_v2(db->sql, "SELECT count(*) FROM sqlite_master", -1, &st,
			       NULL) != SQLITE_OK) {
		sql_fail(db, err, "not a tuning database (or not an SQLite file)");
		goto fail;
	}
	if (sqlite3_step(st) == SQLITE_ROW)
		foreign = sqlite3_column_int(st, 0) > 0;
	sqlite3_finalize(st);
	if (foreign) {
		at_error_set(err, "%s: an SQLite database that is not a tuning database", db->path);
		goto fail;
	}
	char pragma[64];
	snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d;", TDB_SCHEMA_VERSION);
	if (exec(db, db_schema_sql, err) || exec(db, pragma, err) || exec(db, "COMMIT", err))
		goto fail;
	return 0;
fail:
	sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

static int open_db(const char *path, int writable, tdb **out, at_error *err)
{
	*out = NULL;
	tdb *db = xcalloc(1, sizeof *db);
	db->path = xstrdup(path);
	/* URIs on, so that merge and export can ATTACH a database to read it
	 * by common/sqlite_reader.h's rule; a plain path stays a path unless it
	 * starts "file:" */
	char *uri = NULL;
	if (writable && strncmp(path, "file:", 5) == 0) {
		uri = xmalloc(strlen(path) + 3);
		sprintf(uri, "./%s", path);
	}
	int rc = writable ? sqlite3_open_v2(uri ? uri : path, &db->sql,
					    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
						    SQLITE_OPEN_URI,
					    NULL)
			  : at_sqlite_open_reader(path, &db->sql);
	free(uri);
	if (rc != SQLITE_OK) {
		if (db->sql)
			at_error_set(err, "%s: cannot open: %s", path, sqlite3_errmsg(db->sql));
		else
			at_error_set(err, "%s: cannot open", path);
		tdb_close(db);
		return -1;
	}
	sqlite3_busy_timeout(db->sql, BUSY_TIMEOUT_MS);
	if (sqlite3_create_function(db->sql, "sha256_hex", 1,
				    SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
				    sql_sha256, NULL, NULL) != SQLITE_OK) {
		at_error_set(err, "%s: %s", path, sqlite3_errmsg(db->sql));
		tdb_close(db);
		return -1;
	}
	int failed = prepare_schema(db, writable, err);
	if (!failed && writable && at_sqlite_use_wal(db->sql, BUSY_TIMEOUT_MS) != SQLITE_OK)
		failed = sql_fail(db, err, "switching to a write-ahead log");
	if (!failed && writable)
		failed = exec(db, "PRAGMA foreign_keys = ON", err);
	if (failed) {
		tdb_close(db);
		return -1;
	}
	*out = db;
	return 0;
}

int tdb_open(const char *path, tdb **out, at_error *err)
{
	return open_db(path, 1, out, err);
}

int tdb_open_readonly(const char *path, tdb **out, at_error *err)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		*out = NULL;
		return at_error_set(err, "%s: no such database", path);
	}
	fclose(f);
	return open_db(path, 0, out, err);
}

int tdb_migrate(const char *path, int *from, at_error *err)
{
	tdb *db;
	if (tdb_open_readonly(path, &db, err))
		return -1; /* missing, no tuning database, or newer */
	int rc = user_version(db, from, err);
	tdb_close(db);
	if (rc || *from == TDB_SCHEMA_VERSION)
		return rc;
	if (tdb_open(path, &db, err))
		return -1;
	tdb_close(db);
	return 0;
}

void tdb_close(tdb *db)
{
	if (!db)
		return;
	sqlite3_close(db->sql);
	free(db->path);
	free(db);
}

struct sqlite3 *tdb_handle(tdb *db)
{
	return db->sql;
}

static int prepare(tdb *db, const char *sql, sqlite3_stmt **st, at_error *err)
{
	if (sqlite3_prepare_v2(db->sql, sql, -1, st, NULL) != SQLITE_OK)
		return sql_fail(db, err, "preparing a statement");
	return 0;
}

/* Steps a statement that returns no rows, then finalizes it. */
static int step_done(tdb *db, sqlite3_stmt *st, at_error *err, const char *what)
{
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sql_fail(db, err, what);
	return 0;
}

static void bind_gpu(sqlite3_stmt *st, const gpu_info *gpu)
{
	sqlite3_bind_text(st, 1, gpu->name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 2, gpu->cc_major);
	sqlite3_bind_int(st, 3, gpu->cc_minor);
	sqlite3_bind_int(st, 4, gpu->sm_count);
	sqlite3_bind_int64(st, 5, gpu->mem_bytes);
}

int tdb_gpu_id(tdb *db, const gpu_info *gpu, long long *id, at_error *err)
{
	sqlite3_stmt *st;
	if (prepare(db,
		    "INSERT INTO gpus (name, cc_major, cc_minor, sm_count, mem_bytes) "
		    "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING",
		    &st, err))
		return -1;
	bind_gpu(st, gpu);
	if (step_done(db, st, err, "recording the GPU"))
		return -1;
	if (prepare(db,
		    "SELECT id FROM gpus WHERE name = ?1 AND cc_major = ?2 AND cc_minor = ?3 "
		    "AND sm_count = ?4 AND mem_bytes = ?5",
		    &st, err))
		return -1;
	bind_gpu(st, gpu);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : sql_fail(db, err, "finding the GPU");
}

static void utc_now(char *buf, size_t cap)
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int tdb_sweep_begin(tdb *db, const sweep_info *info, long long *sweep_id, at_error *err)
{
	sqlite3_stmt *st;
	if (prepare(db,
		    "INSERT INTO sweeps (gpu_id, started_at, driver_version, nvrtc_version, "
		    "tool_version, config_path, config_text, copy_gbps) "
		    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
		    &st, err))
		return -1;
	char now[32];
	utc_now(now, sizeof now);
	sqlite3_bind_int64(st, 1, info->gpu_id);
	sqlite3_bind_text(st, 2, now, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 3, info->driver_version);
	sqlite3_bind_text(st, 4, info->nvrtc_version, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 5, info->tool_version, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 6, info->config_path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 7, info->config_text, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(st, 8, info->copy_gbps);
	if (step_done(db, st, err, "recording the sweep"))
		return -1;
	*sweep_id = sqlite3_last_insert_rowid(db->sql);
	return 0;
}

int tdb_sweep_finish(tdb *db, long long sweep_id, double compile_s, double bench_s,
		     at_error *err)
{
	sqlite3_stmt *st;
	if (prepare(db,
		    "UPDATE sweeps SET finished_at = ?2, compile_s = ?3, bench_s = ?4 "
		    "WHERE id = ?1",
		    &st, err))
		return -1;
	char now[32];
	utc_now(now, sizeof now);
	sqlite3_bind_int64(st, 1, sweep_id);
	sqlite3_bind_text(st, 2, now, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(st, 3, compile_s);
	sqlite3_bind_double(st, 4, bench_s);
	return step_done(db, st, err, "finishing the sweep");
}

int tdb_shape_done(tdb *db, long long gpu_id, const char *op, at_dtype dt, long long M,
		   long long N, int *done, at_error *err)
{
	sqlite3_stmt *st;
	if (prepare(db,
		    "SELECT 1 FROM winners WHERE gpu_id = ?1 AND op = ?2 AND dtype = ?3 "
		    "AND m = ?4 AND n = ?5",
		    &st, err))
		return -1;
	sqlite3_bind_int64(st, 1, gpu_id);
	sqlite3_bind_text(st, 2, op, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, at_dtype_name(dt), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, M);
	sqlite3_bind_int64(st, 5, N);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return sql_fail(db, err, "checking what is done");
	*done = rc == SQLITE_ROW;
	return 0;
}

const char *result_status_name(result_status s)
{
	switch (s) {
	case RESULT_OK: return "ok";
	case RESULT_COMPILE_FAILED: return "compile_failed";
	case RESULT_CHECK_FAILED: return "check_failed";
	case RESULT_LAUNCH_FAILED: return "launch_failed";
	}
	return "?";
}

long tdb_pick_winner(const result_row *rows, size_t n, double band)
{
	long fastest = -1;
	for (size_t i = 0; i < n; i++) {
		const result_row *r = &rows[i];
		if (!r->baseline && r->status == RESULT_OK && r->time_us > 0 &&
		    (fastest < 0 || r->time_us < rows[fastest].time_us))
			fastest = (long)i;
	}
	if (fastest < 0)
		return -1;
	double limit = rows[fastest].time_us * (1 + (band > 0 ? band : 0));
	long best = fastest;
	for (size_t i = 0; i < n; i++) {
		const result_row *r = &rows[i], *b = &rows[best];
		if (r->baseline || r->status != RESULT_OK || r->time_us <= 0 || r->time_us > limit)
			continue;
		if (r->registers < b->registers ||
		    (r->registers == b->registers && r->time_us < b->time_us))
			best = (long)i;
	}
	return best;
}

static void bind_opt_double(sqlite3_stmt *st, int col, double v, int present)
{
	if (present)
		sqlite3_bind_double(st, col, v);
	else
		sqlite3_bind_null(st, col);
}

static void bind_opt_int(sqlite3_stmt *st, int col, long long v)
{
	if (v >= 0)
		sqlite3_bind_int64(st, col, v);
	else
		sqlite3_bind_null(st, col);
}

static int insert_result(tdb *db, long long sweep_id, const shape_key *key,
			 const result_row *r, long long *id, at_error *err)
{
	sqlite3_stmt *st;
	if (prepare(db,
		    "INSERT INTO results (sweep_id, gpu_id, op, dtype, m, n, kind, template, "
		    "params, status, reason, rel_err, time_us, time_min_us, time_max_us, reps, "
		    "gbps, pct_copy, registers, smem_bytes, spill_bytes, compile_ms, threads, "
		    "rows_per_cta, dyn_smem, persistent, max_n, ctas_per_row, cooperative) "
		    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, "
		    "?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29)",
		    &st, err))
		return -1;
	int timed = r->time_us > 0;
	sqlite3_bind_int64(st, 1, sweep_id);
	sqlite3_bind_int64(st, 2, key->gpu_id);
	sqlite3_bind_text(st, 3, key->op, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, at_dtype_name(key->dtype), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, key->M);
	sqlite3_bind_int64(st, 6, key->N);
	sqlite3_bind_text(st, 7, r->baseline ? "baseline" : "variant", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 8, r->template_name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 9, r->params ? r->params : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 10, result_status_name(r->status), -1, SQLITE_STATIC);
	if (r->reason)
		sqlite3_bind_text(st, 11, r->reason, -1, SQLITE_TRANSIENT);
	bind_opt_double(st, 12, r->rel_err, r->rel_err >= 0);
	bind_opt_double(st, 13, r->time_us, timed);
	bind_opt_double(st, 14, r->time_min_us, timed);
	bind_opt_double(st, 15, r->time_max_us, timed);
	bind_opt_int(st, 16, timed ? r->reps : -1);
	bind_opt_double(st, 17, r->gbps, timed);
	bind_opt_double(st, 18, r->pct_copy, timed);
	bind_opt_int(st, 19, r->registers);
	bind_opt_int(st, 20, r->smem_bytes);
	bind_opt_int(st, 21, r->spill_bytes);
	bind_opt_double(st, 22, r->compile_ms, r->compile_ms > 0);
	sqlite3_bind_int(st, 23, r->threads);
	sqlite3_bind_int(st, 24, r->rows_per_cta);
	sqlite3_bind_int(st, 25, r->dyn_smem);
	sqlite3_bind_int(st, 26, r->persistent);
	sqlite3_bind_int64(st, 27, r->max_n);
	sqlite3_bind_int(st, 28, r->ctas_per_row > 1 ? r->ctas_per_row : 1);
	sqlite3_bind_int(st, 29, r->cooperative);
	if (step_done(db, st, err, "storing a result"))
		return -1;
	*id = sqlite3_last_insert_rowid(db->sql);
	return 0;
}

static int insert_kernel(tdb *db, long long result_id, const result_row *r, at_error *err)
{
	sqlite3_stmt *st;
	if (prepare(db,
		    "INSERT INTO kernels (result_id, arch, entry, cubin, ptx, cubin_sha256, "
		    "ptx_sha256) VALUES (?1, ?2, ?5, ?3, ?4, sha256_hex(?3), sha256_hex(?4))",
		    &st, err))
		return -1;
	sqlite3_bind_int64(st, 1, result_id);
	sqlite3_bind_int(st, 2, r->arch);
	sqlite3_bind_blob(st, 3, r->cubin, (int)r->cubin_size, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, r->ptx ? r->ptx : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 5, r->entry ? r->entry : "softmax_kernel", -1, SQLITE_TRANSIENT);
	return step_done(db, st, err, "storing the winner's code");
}

static int upsert_winner(tdb *db, long long sweep_id, const shape_key *key,
			 long long result_id, double band, at_error *err)
{
	sqlite3_stmt *st;
	if (prepare(db,
		    "INSERT OR REPLACE INTO winners (gpu_id, op, dtype, m, n, result_id, "
		    "sweep_id, noise_band) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
		    &st, err))
		return -1;
	sqlite3_bind_double(st, 8, band);
	sqlite3_bind_int64(st, 1, key->gpu_id);
	sqlite3_bind_text(st, 2, key->op, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, at_dtype_name(key->dtype), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, key->M);
	sqlite3_bind_int64(st, 5, key->N);
	if (result_id > 0)
		sqlite3_bind_int64(st, 6, result_id);
	sqlite3_bind_int64(st, 7, sweep_id);
	return step_done(db, st, err, "storing the winner");
}

int tdb_store_shape(tdb *db, long long sweep_id, const shape_key *key,
		    const result_row *rows, size_t n, at_error *err)
{
	return tdb_store_shape_band(db, sweep_id, key, rows, n, 0, err);
}

int tdb_store_shape_band(tdb *db, long long sweep_id, const shape_key *key,
			 const result_row *rows, size_t n, double band, at_error *err)
{
	if (exec(db, "BEGIN IMMEDIATE", err))
		return -1;
	long win = tdb_pick_winner(rows, n, band);
	long long winner_id = 0;
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		long long id;
		rc = insert_result(db, sweep_id, key, &rows[i], &id, err);
		if (rc == 0 && (long)i == win) {
			winner_id = id;
			if (rows[i].cubin)
				rc = insert_kernel(db, id, &rows[i], err);
		}
	}
	if (rc == 0)
		rc = upsert_winner(db, sweep_id, key, winner_id, band, err);
	if (rc == 0)
		rc = exec(db, "COMMIT", err);
	if (rc != 0)
		sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

static const char *col_text(sqlite3_stmt *st, int col)
{
	return (const char *)sqlite3_column_text(st, col);
}

/* Runs the winners query, for every shape or (key not NULL) one shape. */
static int query_winners(tdb *db, const shape_key *key, tdb_winner_fn fn, void *ctx,
			 at_error *err)
{
	sqlite3_stmt *st;
	if (prepare(db,
		    "SELECT g.name, g.cc_major, g.cc_minor, w.op, w.dtype, w.m, w.n, "
		    "r.template, r.params, r.time_us, r.gbps, r.pct_copy, r.registers "
		    "FROM winners w JOIN gpus g ON g.id = w.gpu_id "
		    "LEFT JOIN results r ON r.id = w.result_id "
		    "WHERE ?1 IS NULL OR (w.gpu_id = ?1 AND w.op = ?2 AND w.dtype = ?3 "
		    "AND w.m = ?4 AND w.n = ?5) "
		    "ORDER BY g.name, g.id, w.op, "
		    "CASE w.dtype WHEN 'f32' THEN 0 WHEN 'f16' THEN 1 ELSE 2 END, w.m, w.n",
		    &st, err))
		return -1;
	if (key) {
		sqlite3_bind_int64(st, 1, key->gpu_id);
		sqlite3_bind_text(st, 2, key->op, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 3, at_dtype_name(key->dtype), -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 4, key->M);
		sqlite3_bind_int64(st, 5, key->N);
	}
	int rc, stop = 0;
	while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		winner_row w = {
			.gpu_name = col_text(st, 0),
			.cc_major = sqlite3_column_int(st, 1),
			.cc_minor = sqlite3_column_int(st, 2),
			.op = col_text(st, 3),
			.dtype = col_text(st, 4),
			.M = sqlite3_column_int64(st, 5),
			.N = sqlite3_column_int64(st, 6),
			.template_name = col_text(st, 7),
			.params = col_text(st, 8),
			.time_us = sqlite3_column_double(st, 9),
			.gbps = sqlite3_column_double(st, 10),
			.pct_copy = sqlite3_column_double(st, 11),
			.registers = sqlite3_column_int(st, 12),
		};
		stop = fn(&w, ctx);
	}
	sqlite3_finalize(st);
	if (stop)
		return stop;
	if (rc != SQLITE_DONE)
		return sql_fail(db, err, "listing winners");
	return 0;
}

int tdb_each_winner(tdb *db, tdb_winner_fn fn, void *ctx, at_error *err)
{
	return query_winners(db, NULL, fn, ctx, err);
}

int tdb_shape_winner(tdb *db, const shape_key *key, tdb_winner_fn fn, void *ctx,
		     at_error *err)
{
	return query_winners(db, key, fn, ctx, err);
}

static void *dup_blob(const void *data, size_t n)
{
	void *p = xmalloc(n ? n : 1);
	if (n)
		memcpy(p, data, n);
	return p;
}

int tdb_cache_get(tdb *db, const char *key, cache_entry *out, int *found, at_error *err)
{
	sqlite3_stmt *st;
	*found = 0;
	if (prepare(db,
		    "SELECT status, cubin, ptx, log, registers, smem_bytes, spill_bytes, "
		    "stack_bytes, compile_ms FROM compile_cache WHERE key = ?1",
		    &st, err))
		return -1;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		memset(out, 0, sizeof *out);
		out->status = sqlite3_column_int(st, 0);
		if (sqlite3_column_type(st, 1) == SQLITE_BLOB) {
			out->cubin_size = (size_t)sqlite3_column_bytes(st, 1);
			out->cubin = dup_blob(sqlite3_column_blob(st, 1), out->cubin_size);
		}
		const char *ptx = col_text(st, 2), *log = col_text(st, 3);
		out->ptx = ptx ? xstrdup(ptx) : NULL;
		out->log = xstrdup(log ? log : "");
		out->registers = sqlite3_column_int(st, 4);
		out->smem_bytes = sqlite3_column_int(st, 5);
		out->spill_bytes = sqlite3_column_int(st, 6);
		out->stack_bytes = sqlite3_column_int(st, 7);
		out->compile_ms = sqlite3_column_double(st, 8);
		*found = 1;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return sql_fail(db, err, "reading the compile cache");
	return 0;
}

int tdb_cache_put(tdb *db, const char *const *keys, const cache_entry *const *entries,
		  size_t n, int arch, const char *nvrtc, at_error *err)
{
	if (n == 0)
		return 0;
	if (exec(db, "BEGIN IMMEDIATE", err))
		return -1;
	char now[32];
	utc_now(now, sizeof now);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const cache_entry *e = entries[i];
		sqlite3_stmt *st;
		if ((rc = prepare(db,
				  "INSERT OR IGNORE INTO compile_cache (key, arch, nvrtc, status, cubin, "
				  "ptx, log, registers, smem_bytes, spill_bytes, stack_bytes, compile_ms, "
				  "created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
				  &st, err)))
			break;
		sqlite3_bind_text(st, 1, keys[i], -1, SQLITE_TRANSIENT);
		sqlite3_bind_int(st, 2, arch);
		sqlite3_bind_text(st, 3, nvrtc, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int(st, 4, e->status);
		if (e->cubin)
			sqlite3_bind_blob(st, 5, e->cubin, (int)e->cubin_size, SQLITE_TRANSIENT);
		if (e->ptx)
			sqlite3_bind_text(st, 6, e->ptx, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 7, e->log ? e->log : "", -1, SQLITE_TRANSIENT);
		sqlite3_bind_int(st, 8, e->registers);
		sqlite3_bind_int(st, 9, e->smem_bytes);
		sqlite3_bind_int(st, 10, e->spill_bytes);
		sqlite3_bind_int(st, 11, e->stack_bytes);
		sqlite3_bind_double(st, 12, e->compile_ms);
		sqlite3_bind_text(st, 13, now, -1, SQLITE_TRANSIENT);
		rc = step_done(db, st, err, "storing in the compile cache");
	}
	if (rc == 0)
		rc = exec(db, "COMMIT", err);
	if (rc != 0)
		sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}
