/* Merging tuning databases: see merge.h. */
#include "db/merge.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/sqlite_reader.h"
#include "db/tuning_db.h"
#include "db/winners.h"

static int exec(sqlite3 *s, const char *sql, at_error *err, const char *what)
{
	char *msg = NULL;
	if (sqlite3_exec(s, sql, NULL, NULL, &msg) != SQLITE_OK) {
		at_error_set(err, "%s: %s", what, msg ? msg : sqlite3_errmsg(s));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

long long db_query_ll(sqlite3 *s, const char *sql)
{
	sqlite3_stmt *st;
	long long v = -1;
	if (sqlite3_prepare_v2(s, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

int db_check_input(const char *path, const char *verb, at_error *err)
{
	struct stat sb;
	if (stat(path, &sb) != 0)
		return at_error_set(err, "%s: no such database", path);
	sqlite3 *s;
	if (at_sqlite_open_reader(path, &s) != SQLITE_OK) {
		at_error_set(err, "%s: cannot open: %s", path, s ? sqlite3_errmsg(s) : "out of memory");
		sqlite3_close(s);
		return -1;
	}
	long long version = db_query_ll(s, "PRAGMA user_version");
	long long tables = db_query_ll(s, "SELECT count(*) FROM sqlite_master WHERE name = 'results'");
	sqlite3_close(s);
	if (version < 0 || tables != 1)
		return at_error_set(err, "%s: not a tuning database", path);
	if (version > TDB_SCHEMA_VERSION)
		return at_error_set(err,
				    "%s: schema version %lld is newer than this program's (%d): "
				    "refusing to %s it; use a newer autotune",
				    path, version, TDB_SCHEMA_VERSION, verb);
	if (version != TDB_SCHEMA_VERSION)
		return at_error_set(err,
				    "%s: schema version %lld, but this program writes version %d: "
				    "refusing to %s mismatched versions (`autotune db migrate %s` "
				    "brings it to version %d)",
				    path, version, TDB_SCHEMA_VERSION, verb, path, TDB_SCHEMA_VERSION);
	return 0;
}

int db_attach_source(sqlite3 *s, const char *path, at_error *err)
{
	char *uri = at_sqlite_uri(path, at_sqlite_read_mode(path));
	if (!uri)
		return at_error_set(err, "%s: out of memory", path);
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(s, "ATTACH DATABASE ?1 AS src", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 1, uri, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
	sqlite3_finalize(st);
	free(uri);
	return rc == SQLITE_OK ? 0 : at_error_set(err, "%s: cannot attach: %s", path, sqlite3_errmsg(s));
}

/* Copies src into main: gpus by identity; sweeps not already present with
 * ids shifted past main's; their results and kernels likewise. Leaves the
 * id maps (temp.gpu_map, sweep_map, result_map) for prior_sql and the
 * counts. */
static const char copy_sql[] =
	"INSERT OR IGNORE INTO gpus (name, cc_major, cc_minor, sm_count, mem_bytes)"
	"  SELECT name, cc_major, cc_minor, sm_count, mem_bytes FROM src.gpus;"
	"CREATE TEMP TABLE gpu_map AS"
	"  SELECT s.id AS old, m.id AS new FROM src.gpus s JOIN main.gpus m"
	"  ON m.name = s.name AND m.cc_major = s.cc_major AND m.cc_minor = s.cc_minor"
	"  AND m.sm_count = s.sm_count AND m.mem_bytes = s.mem_bytes;"
	"CREATE TEMP TABLE sweep_map AS"
	"  SELECT s.id AS old, s.id + (SELECT coalesce(max(id), 0) FROM main.sweeps) AS new"
	"  FROM src.sweeps s JOIN gpu_map g ON g.old = s.gpu_id"
	"  WHERE NOT EXISTS (SELECT 1 FROM main.sweeps m WHERE m.gpu_id = g.new"
	"    AND m.started_at = s.started_at AND m.config_text = s.config_text"
	"    AND m.copy_gbps = s.copy_gbps);"
	"INSERT INTO sweeps (id, gpu_id, started_at, finished_at, driver_version, nvrtc_version,"
	"  tool_version, config_path, config_text, copy_gbps, compile_s, bench_s)"
	"  SELECT sm.new, g.new, started_at, finished_at, driver_version, nvrtc_version,"
	"  tool_version, config_path, config_text, copy_gbps, compile_s, bench_s"
	"  FROM src.sweeps s JOIN sweep_map sm ON sm.old = s.id JOIN gpu_map g ON g.old = s.gpu_id;"
	"CREATE TEMP TABLE result_map AS"
	"  SELECT r.id AS old, r.id + (SELECT coalesce(max(id), 0) FROM main.results) AS new"
	"  FROM src.results r JOIN sweep_map sm ON sm.old = r.sweep_id;"
	"INSERT INTO results (id, sweep_id, gpu_id, op, dtype, m, n, kind, template, params,"
	"  status, reason, rel_err, time_us, time_min_us, time_max_us, reps, gbps, pct_copy,"
	"  registers, smem_bytes, spill_bytes, compile_ms, threads, rows_per_cta, dyn_smem,"
	"  persistent, max_n, ctas_per_row, cooperative)"
	"  SELECT rm.new, sm.new, g.new, op, dtype, m, n, kind, template, params,"
	"  status, reason, rel_err, time_us, time_min_us, time_max_us, reps, gbps, pct_copy,"
	"  registers, smem_bytes, spill_bytes, compile_ms, threads, rows_per_cta, dyn_smem,"
	"  persistent, max_n, ctas_per_row, cooperative"
	"  FROM src.results r JOIN result_map rm ON rm.old = r.id"
	"  JOIN sweep_map sm ON sm.old = r.sweep_id JOIN gpu_map g ON g.old = r.gpu_id;"
	"INSERT INTO kernels (result_id, arch, entry, cubin, ptx, cubin_sha256, ptx_sha256)"
	"  SELECT rm.new, arch, entry, cubin, ptx, cubin_sha256, ptx_sha256 FROM src.kernels k"
	"  JOIN result_map rm ON rm.old = k.result_id;"
	"INSERT OR IGNORE INTO compile_cache SELECT * FROM src.compile_cache;";

/* src's models, where it has them (a database older than the table has
 * none), by (GPU, op), the newer kept: the CLI then refits each on the
 * merged results where they hold more than the winners (tuner/model/store.h). */
static const char models_sql[] =
	"INSERT OR REPLACE INTO models (gpu_id, op, fitted_at, shapes, samples, text)"
	"  SELECT g.new, s.op, s.fitted_at, s.shapes, s.samples, s.text FROM src.models s"
	"  JOIN gpu_map g ON g.old = s.gpu_id WHERE NOT EXISTS (SELECT 1 FROM main.models m"
	"    WHERE m.gpu_id = g.new AND m.op = s.op AND m.fitted_at >= s.fitted_at);";

/* The winners rows before the merge, of OUT and of the sweeps being added
 * (their ids mapped), as db/winners.h's winners_choose reads them: their
 * noise bands and the shapes that must keep a winner with a kernel. */
static const char prior_sql[] =
	"CREATE TEMP TABLE prior AS"
	"  SELECT gpu_id, op, dtype, m, n, result_id, sweep_id, noise_band FROM main.winners"
	"  UNION ALL"
	"  SELECT g.new, w.op, w.dtype, w.m, w.n, rm.new, sm.new, w.noise_band"
	"  FROM src.winners w JOIN gpu_map g ON g.old = w.gpu_id"
	"  JOIN sweep_map sm ON sm.old = w.sweep_id LEFT JOIN result_map rm ON rm.old = w.result_id"
	"  WHERE w.result_id IS NULL OR rm.new IS NOT NULL;";

static const char drop_sql[] =
	"DROP TABLE temp.gpu_map; DROP TABLE temp.sweep_map; DROP TABLE temp.result_map;"
	"DROP TABLE temp.prior;";

/* Copies in and chooses the winners again, counting what it added: all in
 * the caller's transaction, so that a merge into OUT at the same time
 * cannot enter the counts. */
static int merge_in(sqlite3 *s, const char *in, const char *label, merge_stats *stats,
		    at_error *err)
{
	if (exec(s, copy_sql, err, in) || exec(s, prior_sql, err, in))
		return -1;
	if (db_query_ll(s, "SELECT count(*) FROM src.sqlite_master WHERE name = 'models'") > 0 &&
	    exec(s, models_sql, err, in))
		return -1;
	long long added = db_query_ll(s, "SELECT count(*) FROM temp.sweep_map");
	long long src_sweeps = db_query_ll(s, "SELECT count(*) FROM src.sweeps");
	long long results = db_query_ll(s, "SELECT count(*) FROM temp.result_map");
	if (added < 0 || src_sweeps < 0 || results < 0)
		return at_error_set(err, "%s: counting what was merged: %s", in, sqlite3_errmsg(s));
	if (winners_choose(s, label, err) || exec(s, drop_sql, err, in))
		return -1;
	stats->sweeps += added;
	stats->sweeps_skipped += src_sweeps - added;
	stats->results += results;
	stats->shapes = db_query_ll(s, "SELECT count(*) FROM main.winners");
	return 0;
}

static int merge_one(sqlite3 *s, const char *out, const char *in, merge_stats *stats,
		     at_error *err)
{
	if (db_attach_source(s, in, err))
		return -1;
	char label[1200];
	snprintf(label, sizeof label, "merging %.500s into %.500s", in, out);
	merge_stats mine = *stats; /* kept only if the transaction commits */
	int status = 0;
	if (exec(s, "BEGIN IMMEDIATE", err, in) || merge_in(s, in, label, &mine, err) ||
	    exec(s, "COMMIT", err, in)) {
		sqlite3_exec(s, "ROLLBACK", NULL, NULL, NULL);
		status = -1;
	} else {
		*stats = mine;
	}
	sqlite3_exec(s, "DETACH DATABASE src", NULL, NULL, NULL);
	return status;
}

/* Before anything is written: every input's winners are the picks of its
 * sweeps, with their kernels (winners_check_kernels, by shape). */
static int check_input_kernels(const char *path, at_error *err)
{
	sqlite3 *s;
	if (at_sqlite_open_reader(path, &s) != SQLITE_OK) {
		at_error_set(err, "%s: cannot open: %s", path, s ? sqlite3_errmsg(s) : "out of memory");
		sqlite3_close(s);
		return -1;
	}
	int rc = winners_check_kernels(s, path, 1, err);
	sqlite3_close(s);
	return rc;
}

int db_same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

int db_merge(const char *out, const char *const *inputs, size_t n, merge_stats *stats,
	     at_error *err)
{
	memset(stats, 0, sizeof *stats);
	for (size_t i = 0; i < n; i++) {
		if (db_same_file(out, inputs[i]))
			return at_error_set(err, "%s: an input cannot also be the output", inputs[i]);
		if (db_check_input(inputs[i], "merge", err) || check_input_kernels(inputs[i], err))
			return -1;
	}
	tdb *db;
	if (tdb_open(out, &db, err))
		return -1;
	sqlite3 *s = tdb_handle(db);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = merge_one(s, out, inputs[i], stats, err);
	tdb_close(db);
	return rc;
}
