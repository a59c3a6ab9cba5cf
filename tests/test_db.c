/* Tests for db/tuning_db.c on databases created in a temporary folder:
 * schema creation, GPU rows, storing a shape (every row, the winner and its
 * code, in one transaction that rolls back on failure), resuming, listing
 * winners, and refusing files that are not this program's database. The
 * files are inspected with SQLite directly. */
#include <criterion/criterion.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/tuning_db.h"

#include "tests/tmp_folder.h"

TestSuite(db, .init = tmp_setup, .fini = tmp_teardown);

static tdb *open_ok(const char *name)
{
	tdb *db = NULL;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_open(tmp_path(name), &db, &err), 0, "tdb_open: %s", err.msg);
	cr_assert_not_null(db);
	return db;
}

/* Opens name with SQLite itself. */
static sqlite3 *raw_open(const char *name)
{
	sqlite3 *s = NULL;
	cr_assert_eq(sqlite3_open(tmp_path(name), &s), SQLITE_OK);
	return s;
}

static long long query_int(sqlite3 *s, const char *sql)
{
	sqlite3_stmt *st;
	cr_assert_eq(sqlite3_prepare_v2(s, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
		     sqlite3_errmsg(s));
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s: no row", sql);
	long long v = sqlite3_column_type(st, 0) == SQLITE_NULL ? -999 : sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* The first column of every row, joined with ','. */
static void query_list(sqlite3 *s, const char *sql, char *out, size_t cap)
{
	sqlite3_stmt *st;
	cr_assert_eq(sqlite3_prepare_v2(s, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
		     sqlite3_errmsg(s));
	out[0] = '\0';
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *v = (const char *)sqlite3_column_text(st, 0);
		size_t len = strlen(out);
		snprintf(out + len, cap - len, "%s%s", len ? "," : "", v ? v : "NULL");
	}
	sqlite3_finalize(st);
}

static long long db_int(tdb *db, const char *sql)
{
	return query_int(tdb_handle(db), sql);
}

static const gpu_info h100 = { "NVIDIA H100 80GB HBM3", 9, 0, 132, 85017755648LL };
static const gpu_info a100 = { "NVIDIA A100-SXM4-80GB", 8, 0, 108, 85100000000LL };

static long long gpu_ok(tdb *db, const gpu_info *g)
{
	long long id = -1;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_gpu_id(db, g, &id, &err), 0, "tdb_gpu_id: %s", err.msg);
	cr_assert_gt(id, 0);
	return id;
}

static long long sweep_ok(tdb *db, long long gpu_id)
{
	sweep_info info = { gpu_id, 13000, "13.0", "0.1.0", "configs/x.yaml",
			    "sweeps: []\n", 3000.0 };
	long long id = -1;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_sweep_begin(db, &info, &id, &err), 0, "tdb_sweep_begin: %s", err.msg);
	cr_assert_gt(id, 0);
	return id;
}

static void store_ok(tdb *db, long long sweep_id, const shape_key *key, const result_row *rows,
		     size_t n)
{
	at_error err = { { 0 } };
	cr_assert_eq(tdb_store_shape(db, sweep_id, key, rows, n, &err), 0, "tdb_store_shape: %s",
		     err.msg);
}

static int shape_done(tdb *db, long long gpu_id, const char *op, at_dtype dt, long long M,
		      long long N)
{
	int done = -1;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_shape_done(db, gpu_id, op, dt, M, N, &done, &err), 0, "%s", err.msg);
	cr_assert(done == 0 || done == 1);
	return done;
}

/* An ok, timed variant row. */
static result_row ok_row(const char *params, double us, int regs)
{
	return (result_row){
		.template_name = "softmax_block", .params = params, .status = RESULT_OK,
		.rel_err = 1e-7, .time_us = us, .time_min_us = us * 0.9, .time_max_us = us * 1.2,
		.reps = 25, .gbps = 1000.0 / us, .pct_copy = 30.0 / us, .registers = regs,
		.smem_bytes = 256, .spill_bytes = 0, .compile_ms = 120.0, .threads = 256,
		.rows_per_cta = 1, .dyn_smem = 0, .persistent = 0, .max_n = 4096, .arch = 90,
	};
}

static int file_exists(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0;
}

/* ---- opening ------------------------------------------------------------------ */

Test(db, open_creates_the_schema)
{
	tdb *db = open_ok("new.db");
	tdb_close(db);
	sqlite3 *s = raw_open("new.db");
	cr_assert_eq(query_int(s, "PRAGMA user_version"), TDB_SCHEMA_VERSION);
	char tables[256];
	query_list(s, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", tables,
		   sizeof tables);
	cr_assert_str_eq(tables, "compile_cache,gpus,kernels,models,results,sweeps,winners");
	char indexes[256];
	query_list(s, "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL",
		   indexes, sizeof indexes);
	cr_assert_str_eq(indexes, "results_shape");
	cr_assert_eq(query_int(s, "SELECT count(*) FROM gpus"), 0);
	char mode[32];
	query_list(s, "PRAGMA journal_mode", mode, sizeof mode);
	cr_assert_str_eq(mode, "wal");
	sqlite3_close(s);
}

Test(db, a_writer_adds_the_tables_added_within_its_version)
{
	/* a version-4 file written before the models table existed */
	tdb_close(open_ok("older.db"));
	sqlite3 *s = raw_open("older.db");
	cr_assert_eq(sqlite3_exec(s, "DROP TABLE models", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(s);
	tdb *db;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_open_readonly(tmp_path("older.db"), &db, &err), 0, "%s", err.msg);
	tdb_close(db); /* a reader changes nothing */
	s = raw_open("older.db");
	cr_assert_eq(query_int(s, "SELECT count(*) FROM sqlite_master WHERE name = 'models'"), 0);
	sqlite3_close(s);
	tdb_close(open_ok("older.db"));
	s = raw_open("older.db");
	cr_assert_eq(query_int(s, "SELECT count(*) FROM sqlite_master WHERE name = 'models'"), 1);
	cr_assert_eq(query_int(s, "PRAGMA user_version"), TDB_SCHEMA_VERSION);
	sqlite3_close(s);
}

Test(db, reopening_keeps_the_data)
{
	tdb *db = open_ok("re.db");
	long long id = gpu_ok(db, &h100);
	tdb_close(db);
	db = open_ok("re.db");
	cr_assert_eq(gpu_ok(db, &h100), id);
	cr_assert_eq(db_int(db, "SELECT count(*) FROM gpus"), 1);
	tdb_close(db);
	tdb *ro = NULL;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_open_readonly(tmp_path("re.db"), &ro, &err), 0, "%s", err.msg);
	cr_assert_eq(db_int(ro, "SELECT count(*) FROM gpus"), 1);
	tdb_close(ro);
}

Test(db, close_null_is_a_no_op)
{
	tdb_close(NULL);
	cr_assert(1);
}

Test(db, refuses_a_newer_schema)
{
	sqlite3 *s = raw_open("newer.db");
	char sql[64];
	snprintf(sql, sizeof sql, "PRAGMA user_version = %d", TDB_SCHEMA_VERSION + 1);
	cr_assert_eq(sqlite3_exec(s, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(s);
	tdb *db = (tdb *)1;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_open(tmp_path("newer.db"), &db, &err), -1);
	cr_assert_null(db);
	cr_assert_not_null(strstr(err.msg, "newer"), "%s", err.msg);
	cr_assert_not_null(strstr(err.msg, "newer.db"), "the message does not name the file: %s",
			   err.msg);
	err.msg[0] = '\0';
	cr_assert_eq(tdb_open_readonly(tmp_path("newer.db"), &db, &err), -1);
	cr_assert_not_null(strstr(err.msg, "newer"), "%s", err.msg);
	/* and nothing was added to it */
	s = raw_open("newer.db");
	cr_assert_eq(query_int(s, "SELECT count(*) FROM sqlite_master"), 0);
	cr_assert_eq(query_int(s, "PRAGMA user_version"), TDB_SCHEMA_VERSION + 1);
	sqlite3_close(s);
}

Test(db, refuses_a_file_that_is_not_sqlite_and_leaves_it_alone)
{
	const char *path = tmp_path("hello.db");
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	fputs("hello", f);
	fclose(f);
	tdb *db = (tdb *)1;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_open(path, &db, &err), -1);
	cr_assert_null(db);
	cr_assert_not_null(strstr(err.msg, "hello.db"), "%s", err.msg);
	cr_assert_eq(tdb_open_readonly(path, &db, &err), -1);
	char buf[64] = { 0 };
	f = fopen(path, "rb");
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	cr_assert_eq(n, 5, "the file is now %zu bytes", n);
	cr_assert_eq(memcmp(buf, "hello", 5), 0);
	cr_assert(!file_exists(tmp_path("hello.db-wal")), "a WAL file was created");
}

Test(db, refuses_someone_elses_sqlite_database)
{
	sqlite3 *s = raw_open("other.db");
	cr_assert_eq(sqlite3_exec(s, "CREATE TABLE notes (x TEXT); INSERT INTO notes VALUES ('keep');",
				  NULL, NULL, NULL),
		     SQLITE_OK);
	sqlite3_close(s);
	tdb *db = (tdb *)1;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_open(tmp_path("other.db"), &db, &err), -1);
	cr_assert_null(db);
	cr_assert_not_null(strstr(err.msg, "not a tuning database"), "%s", err.msg);
	err.msg[0] = '\0';
	cr_assert_eq(tdb_open_readonly(tmp_path("other.db"), &db, &err), -1);
	cr_assert_not_null(strstr(err.msg, "not a tuning database"), "%s", err.msg);
	s = raw_open("other.db");
	char tables[128];
	query_list(s, "SELECT name FROM sqlite_master", tables, sizeof tables);
	cr_assert_str_eq(tables, "notes");
	cr_assert_eq(query_int(s, "PRAGMA user_version"), 0);
	sqlite3_close(s);
}

Test(db, readonly_open_of_a_missing_file_creates_nothing)
{
	const char *path = tmp_path("missing.db");
	tdb *db = (tdb *)1;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_open_readonly(path, &db, &err), -1);
	cr_assert_null(db);
	cr_assert_not_null(strstr(err.msg, "no such database"), "%s", err.msg);
	cr_assert_not_null(strstr(err.msg, "missing.db"), "%s", err.msg);
	cr_assert(!file_exists(path), "tdb_open_readonly created %s", path);
}

Test(db, readonly_database_refuses_writes)
{
	tdb_close(open_ok("ro.db"));
	tdb *db = NULL;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_open_readonly(tmp_path("ro.db"), &db, &err), 0, "%s", err.msg);
	long long id;
	cr_assert_eq(tdb_gpu_id(db, &h100, &id, &err), -1);
	cr_assert_not_null(strstr(err.msg, "ro.db"), "%s", err.msg);
	tdb_close(db);
}

Test(db, default_path_explicit_then_env_then_default)
{
	unsetenv(TDB_PATH_ENV);
	cr_assert_str_eq(tdb_default_path("given.db"), "given.db");
	cr_assert_str_eq(tdb_default_path(NULL), "autotune.db");
	cr_assert_str_eq(tdb_default_path(""), "autotune.db");
	setenv("AUTOTUNE_DB", "/somewhere/env.db", 1);
	cr_assert_str_eq(tdb_default_path(NULL), "/somewhere/env.db");
	cr_assert_str_eq(tdb_default_path(""), "/somewhere/env.db");
	cr_assert_str_eq(tdb_default_path("given.db"), "given.db");
	setenv("AUTOTUNE_DB", "", 1);
	cr_assert_str_eq(tdb_default_path(NULL), "autotune.db");
	unsetenv("AUTOTUNE_DB");
	cr_assert_str_eq(tdb_default_path(NULL), TDB_DEFAULT_PATH);
}

/* ---- GPUs and sweeps ------------------------------------------------------------ */

Test(db, gpu_id_is_stable)
{
	tdb *db = open_ok("gpu.db");
	long long a = gpu_ok(db, &h100);
	cr_assert_eq(gpu_ok(db, &h100), a);
	long long b = gpu_ok(db, &a100);
	cr_assert_neq(b, a);
	gpu_info h100_more_sms = h100;
	h100_more_sms.sm_count = 144;
	long long c = gpu_ok(db, &h100_more_sms);
	cr_assert_neq(c, a);
	cr_assert_neq(c, b);
	cr_assert_eq(gpu_ok(db, &a100), b);
	cr_assert_eq(db_int(db, "SELECT count(*) FROM gpus"), 3);
	sqlite3 *s = tdb_handle(db);
	char row[256];
	query_list(s, "SELECT name || '|' || cc_major || '|' || cc_minor || '|' || sm_count || '|' || "
		      "mem_bytes FROM gpus ORDER BY id LIMIT 1",
		   row, sizeof row);
	cr_assert_str_eq(row, "NVIDIA H100 80GB HBM3|9|0|132|85017755648");
	tdb_close(db);
}

Test(db, sweep_begin_and_finish)
{
	tdb *db = open_ok("sweep.db");
	long long g = gpu_ok(db, &h100);
	long long s1 = sweep_ok(db, g);
	long long s2 = sweep_ok(db, g);
	cr_assert_neq(s1, s2);
	char row[512];
	query_list(tdb_handle(db),
		   "SELECT gpu_id || '|' || driver_version || '|' || nvrtc_version || '|' || "
		   "tool_version || '|' || config_path || '|' || config_text || '|' || copy_gbps || "
		   "'|' || (finished_at IS NULL) FROM sweeps ORDER BY id LIMIT 1",
		   row, sizeof row);
	char want[512];
	snprintf(want, sizeof want, "%lld|13000|13.0|0.1.0|configs/x.yaml|sweeps: []\n|3000.0|1", g);
	cr_assert_str_eq(row, want);
	at_error err = { { 0 } };
	cr_assert_eq(tdb_sweep_finish(db, s1, 12.5, 30.25, &err), 0, "%s", err.msg);
	char sql[256];
	snprintf(sql, sizeof sql, "SELECT finished_at IS NOT NULL AND compile_s = 12.5 AND "
				  "bench_s = 30.25 AND started_at LIKE '20__-__-__T__:__:__Z' "
				  "FROM sweeps WHERE id = %lld", s1);
	cr_assert_eq(db_int(db, sql), 1);
	snprintf(sql, sizeof sql, "SELECT finished_at IS NULL FROM sweeps WHERE id = %lld", s2);
	cr_assert_eq(db_int(db, sql), 1);
	tdb_close(db);
}

Test(db, result_status_names)
{
	cr_assert_str_eq(result_status_name(RESULT_OK), "ok");
	cr_assert_str_eq(result_status_name(RESULT_COMPILE_FAILED), "compile_failed");
	cr_assert_str_eq(result_status_name(RESULT_CHECK_FAILED), "check_failed");
	cr_assert_str_eq(result_status_name(RESULT_LAUNCH_FAILED), "launch_failed");
}

/* ---- storing a shape ------------------------------------------------------------- */

/* Rows in which the winner is row 4: row 1 (a baseline) and row 2 (failed
 * its check) are faster; rows 3, 4 and 6 tie on time and row 4 has fewer
 * registers than row 3 and comes before row 6 with the same count. */
enum { NROWS = 8, WINNER = 4 };
static void make_rows(result_row *rows)
{
	rows[0] = ok_row("threads=256 vec=4", 10.0, 40);
	rows[1] = ok_row("torch", 5.0, 30);
	rows[1].baseline = 1;
	rows[1].template_name = "baseline";
	rows[2] = ok_row("threads=64 vec=4", 3.0, 20);
	rows[2].status = RESULT_CHECK_FAILED;
	rows[2].reason = "rel_l2 0.5 > 1e-05";
	rows[2].rel_err = 0.5;
	rows[3] = ok_row("threads=128 vec=4", 8.0, 64);
	rows[3].cubin = "CUBIN-3";
	rows[3].cubin_size = 7;
	rows[3].ptx = "PTX-3";
	rows[4] = ok_row("threads=512 vec=2", 8.0, 32);
	rows[4].cubin = "CUBIN\0-4"; /* binary, with a NUL */
	rows[4].cubin_size = 8;
	rows[4].ptx = ".entry softmax_kernel";
	rows[5] = (result_row){ .template_name = "softmax_warp", .params = "lanes=32",
				.status = RESULT_COMPILE_FAILED, .reason = "boom", .rel_err = -1,
				.registers = -1, .smem_bytes = -1, .spill_bytes = -1,
				.threads = 128, .rows_per_cta = 4, .max_n = 256 };
	rows[6] = ok_row("threads=256 vec=2", 8.0, 32);
	rows[6].cubin = "CUBIN-6";
	rows[6].cubin_size = 7;
	rows[7] = ok_row("threads=1024 vec=1", 9.0, 16);
	rows[7].status = RESULT_LAUNCH_FAILED;
	rows[7].reason = "too many resources";
	rows[7].time_us = 0;
}

Test(db, pick_winner)
{
	result_row rows[NROWS];
	make_rows(rows);
	cr_assert_eq(tdb_pick_winner(rows, NROWS, 0), WINNER);
	cr_assert_eq(tdb_pick_winner(rows, 3, 0), 0);  /* only row 0 qualifies */
	cr_assert_eq(tdb_pick_winner(rows + 1, 2, 0), -1);
	cr_assert_eq(tdb_pick_winner(rows, 0, 0), -1);
	rows[0].time_us = 0; /* untimed rows never win */
	cr_assert_eq(tdb_pick_winner(rows, 1, 0), -1);
}

Test(db, store_shape_stores_every_row_and_the_winner)
{
	tdb *db = open_ok("store.db");
	long long g = gpu_ok(db, &h100);
	long long sw = sweep_ok(db, g);
	result_row rows[NROWS];
	make_rows(rows);
	shape_key key = { g, "softmax", AT_F16, 4096, 1024 };
	cr_assert_eq(shape_done(db, g, "softmax", AT_F16, 4096, 1024), 0);
	store_ok(db, sw, &key, rows, NROWS);
	sqlite3 *s = tdb_handle(db);

	cr_assert_eq(query_int(s, "SELECT count(*) FROM results"), NROWS);
	char list[1024];
	query_list(s, "SELECT params || '|' || kind || '|' || status || '|' || "
		      "coalesce(reason, 'NULL') FROM results ORDER BY id",
		   list, sizeof list);
	cr_assert_str_eq(list, "threads=256 vec=4|variant|ok|NULL,"
			       "torch|baseline|ok|NULL,"
			       "threads=64 vec=4|variant|check_failed|rel_l2 0.5 > 1e-05,"
			       "threads=128 vec=4|variant|ok|NULL,"
			       "threads=512 vec=2|variant|ok|NULL,"
			       "lanes=32|variant|compile_failed|boom,"
			       "threads=256 vec=2|variant|ok|NULL,"
			       "threads=1024 vec=1|variant|launch_failed|too many resources");
	/* the shape key on every row */
	char sql[512];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM results WHERE sweep_id = %lld AND "
				  "gpu_id = %lld AND op = 'softmax' AND dtype = 'f16' AND m = 4096 "
				  "AND n = 1024", sw, g);
	cr_assert_eq(query_int(s, sql), NROWS);
	/* measured and unmeasured fields */
	query_list(s, "SELECT time_us || '|' || time_min_us || '|' || reps || '|' || registers || "
		      "'|' || smem_bytes || '|' || threads || '|' || max_n || '|' || rel_err "
		      "FROM results WHERE params = 'threads=512 vec=2'",
		   list, sizeof list);
	cr_assert_str_eq(list, "8.0|7.2|25|32|256|256|4096|1.0e-07");
	cr_assert_eq(query_int(s, "SELECT count(*) FROM results WHERE params = 'lanes=32' AND "
				  "time_us IS NULL AND reps IS NULL AND gbps IS NULL AND "
				  "rel_err IS NULL AND registers IS NULL AND compile_ms IS NULL "
				  "AND rows_per_cta = 4 AND max_n = 256"),
		     1);
	cr_assert_eq(query_int(s, "SELECT count(*) FROM results WHERE status = 'launch_failed' "
				  "AND time_us IS NULL"),
		     1);

	/* the winner is row 4, and only its code is stored */
	cr_assert_eq(query_int(s, "SELECT count(*) FROM winners"), 1);
	query_list(s, "SELECT r.params FROM winners w JOIN results r ON r.id = w.result_id",
		   list, sizeof list);
	cr_assert_str_eq(list, "threads=512 vec=2");
	snprintf(sql, sizeof sql, "SELECT count(*) FROM winners WHERE gpu_id = %lld AND "
				  "op = 'softmax' AND dtype = 'f16' AND m = 4096 AND n = 1024 AND "
				  "sweep_id = %lld", g, sw);
	cr_assert_eq(query_int(s, sql), 1);
	cr_assert_eq(query_int(s, "SELECT count(*) FROM kernels"), 1);
	cr_assert_eq(query_int(s, "SELECT count(*) FROM kernels k JOIN winners w "
				  "ON w.result_id = k.result_id WHERE k.arch = 90 AND "
				  "k.entry = 'softmax_kernel' AND k.ptx = '.entry softmax_kernel'"),
		     1);
	sqlite3_stmt *st;
	cr_assert_eq(sqlite3_prepare_v2(s, "SELECT cubin FROM kernels", -1, &st, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	cr_assert_eq(sqlite3_column_bytes(st, 0), 8);
	cr_assert_eq(memcmp(sqlite3_column_blob(st, 0), "CUBIN\0-4", 8), 0);
	sqlite3_finalize(st);

	/* resume: this shape is done, its neighbours are not */
	cr_assert_eq(shape_done(db, g, "softmax", AT_F16, 4096, 1024), 1);
	cr_assert_eq(shape_done(db, g, "softmax", AT_F16, 4096, 2048), 0);
	cr_assert_eq(shape_done(db, g, "softmax", AT_F16, 2048, 1024), 0);
	cr_assert_eq(shape_done(db, g, "softmax", AT_BF16, 4096, 1024), 0);
	cr_assert_eq(shape_done(db, g, "layernorm", AT_F16, 4096, 1024), 0);
	cr_assert_eq(shape_done(db, g + 1, "softmax", AT_F16, 4096, 1024), 0);
	tdb_close(db);
}

Test(db, a_winner_without_code_stores_no_kernel)
{
	tdb *db = open_ok("nocode.db");
	long long g = gpu_ok(db, &h100);
	long long sw = sweep_ok(db, g);
	result_row row = ok_row("threads=256", 5.0, 30);
	shape_key key = { g, "softmax", AT_F32, 64, 1000 };
	store_ok(db, sw, &key, &row, 1);
	cr_assert_eq(db_int(db, "SELECT count(*) FROM winners WHERE result_id IS NOT NULL"), 1);
	cr_assert_eq(db_int(db, "SELECT count(*) FROM kernels"), 0);
	tdb_close(db);
}

Test(db, a_shape_where_nothing_passed_is_done_with_no_winner)
{
	tdb *db = open_ok("none.db");
	long long g = gpu_ok(db, &h100);
	long long sw = sweep_ok(db, g);
	result_row rows[NROWS];
	make_rows(rows);
	for (int i = 0; i < NROWS; i++)
		if (!rows[i].baseline && rows[i].status == RESULT_OK)
			rows[i].status = RESULT_CHECK_FAILED;
	cr_assert_eq(tdb_pick_winner(rows, NROWS, 0), -1);
	shape_key key = { g, "softmax", AT_BF16, 128, 100000 };
	store_ok(db, sw, &key, rows, NROWS);
	cr_assert_eq(db_int(db, "SELECT count(*) FROM results"), NROWS);
	cr_assert_eq(db_int(db, "SELECT count(*) FROM winners"), 1);
	cr_assert_eq(db_int(db, "SELECT count(*) FROM winners WHERE result_id IS NULL"), 1);
	cr_assert_eq(db_int(db, "SELECT count(*) FROM kernels"), 0);
	cr_assert_eq(shape_done(db, g, "softmax", AT_BF16, 128, 100000), 1);

	/* no rows at all (no template serves the shape) is done too */
	shape_key empty = { g, "softmax", AT_F32, 1, 1 };
	store_ok(db, sw, &empty, NULL, 0);
	cr_assert_eq(shape_done(db, g, "softmax", AT_F32, 1, 1), 1);
	cr_assert_eq(db_int(db, "SELECT count(*) FROM winners WHERE result_id IS NULL"), 2);
	tdb_close(db);
}

Test(db, storing_a_shape_again_replaces_its_winner)
{
	tdb *db = open_ok("again.db");
	long long g = gpu_ok(db, &h100);
	long long sw = sweep_ok(db, g);
	shape_key key = { g, "softmax", AT_F32, 64, 1000 };
	result_row first = ok_row("first", 5.0, 30);
	store_ok(db, sw, &key, &first, 1);
	result_row second = ok_row("second", 6.0, 30);
	store_ok(db, sw, &key, &second, 1);
	cr_assert_eq(db_int(db, "SELECT count(*) FROM results"), 2);
	cr_assert_eq(db_int(db, "SELECT count(*) FROM winners"), 1);
	char list[64];
	query_list(tdb_handle(db), "SELECT r.params FROM winners w JOIN results r ON r.id = w.result_id",
		   list, sizeof list);
	cr_assert_str_eq(list, "second");
	tdb_close(db);
}

Test(db, a_failed_store_rolls_back)
{
	tdb *db = open_ok("rollback.db");
	long long g = gpu_ok(db, &h100);
	long long sw = sweep_ok(db, g);
	result_row good = ok_row("kept", 5.0, 30);
	shape_key key = { g, "softmax", AT_F32, 64, 1000 };
	store_ok(db, sw, &key, &good, 1);

	/* M = 0 violates results' CHECK (m > 0) */
	result_row rows[NROWS];
	make_rows(rows);
	shape_key bad = { g, "softmax", AT_F32, 0, 1000 };
	at_error err = { { 0 } };
	cr_assert_eq(tdb_store_shape(db, sw, &bad, rows, NROWS, &err), -1);
	cr_assert_not_null(strstr(err.msg, "rollback.db"), "%s", err.msg);
	cr_assert_not_null(strstr(err.msg, "CHECK"), "%s", err.msg);
	cr_assert_eq(db_int(db, "SELECT count(*) FROM results"), 1);
	cr_assert_eq(db_int(db, "SELECT count(*) FROM winners"), 1);
	cr_assert_eq(db_int(db, "SELECT count(*) FROM kernels"), 0);
	cr_assert_eq(shape_done(db, g, "softmax", AT_F32, 0, 1000), 0);

	/* a failure after some rows went in: the good rows before it go too */
	make_rows(rows);
	rows[6].status = (result_status)99; /* not a status the schema allows */
	shape_key later = { g, "softmax", AT_F32, 64, 2000 };
	err.msg[0] = '\0';
	cr_assert_eq(tdb_store_shape(db, sw, &later, rows, NROWS, &err), -1);
	cr_assert_neq(err.msg[0], '\0');
	cr_assert_eq(db_int(db, "SELECT count(*) FROM results"), 1);
	cr_assert_eq(db_int(db, "SELECT count(*) FROM results WHERE n = 2000"), 0);
	cr_assert_eq(db_int(db, "SELECT count(*) FROM kernels"), 0, "the winner's code stayed");
	cr_assert_eq(shape_done(db, g, "softmax", AT_F32, 64, 2000), 0);

	/* no transaction was left open: the same shape can be stored now */
	make_rows(rows);
	store_ok(db, sw, &later, rows, NROWS);
	cr_assert_eq(db_int(db, "SELECT count(*) FROM results WHERE n = 2000"), NROWS);
	cr_assert_eq(shape_done(db, g, "softmax", AT_F32, 64, 2000), 1);
	tdb_close(db);

	/* and what was committed is on disk */
	sqlite3 *s = raw_open("rollback.db");
	cr_assert_eq(query_int(s, "SELECT count(*) FROM results"), 1 + NROWS);
	sqlite3_close(s);
}

Test(db, store_refers_to_an_existing_sweep)
{
	tdb *db = open_ok("fk.db");
	long long g = gpu_ok(db, &h100);
	result_row row = ok_row("x", 5.0, 30);
	shape_key key = { g, "softmax", AT_F32, 64, 1000 };
	at_error err = { { 0 } };
	cr_assert_eq(tdb_store_shape(db, 777, &key, &row, 1, &err), -1);
	cr_assert_not_null(strstr(err.msg, "FOREIGN KEY"), "%s", err.msg);
	cr_assert_eq(db_int(db, "SELECT count(*) FROM results"), 0);
	cr_assert_eq(db_int(db, "SELECT count(*) FROM winners"), 0);
	tdb_close(db);
}

/* ---- listing winners ---------------------------------------------------------------- */

typedef struct seen_row {
	char gpu[64], op[32], dtype[8], tmpl[32], params[64];
	int cc_major, cc_minor, registers, has_template;
	long long M, N;
	double time_us, gbps, pct_copy;
} seen_row;

typedef struct seen {
	seen_row rows[16];
	int n, stop_after;
} seen;

static int collect(const winner_row *w, void *ctx)
{
	seen *s = ctx;
	cr_assert_lt(s->n, 16);
	seen_row *r = &s->rows[s->n++];
	snprintf(r->gpu, sizeof r->gpu, "%s", w->gpu_name);
	snprintf(r->op, sizeof r->op, "%s", w->op);
	snprintf(r->dtype, sizeof r->dtype, "%s", w->dtype);
	r->has_template = w->template_name != NULL;
	snprintf(r->tmpl, sizeof r->tmpl, "%s", w->template_name ? w->template_name : "(null)");
	snprintf(r->params, sizeof r->params, "%s", w->params ? w->params : "(null)");
	r->cc_major = w->cc_major;
	r->cc_minor = w->cc_minor;
	r->registers = w->registers;
	r->M = w->M;
	r->N = w->N;
	r->time_us = w->time_us;
	r->gbps = w->gbps;
	r->pct_copy = w->pct_copy;
	return s->stop_after && s->n == s->stop_after ? 7 : 0;
}

static void store_winner(tdb *db, long long sw, long long gpu, at_dtype dt, long long M,
			 long long N, const char *params, double us)
{
	shape_key key = { gpu, "softmax", dt, M, N };
	result_row row = ok_row(params, us, 40);
	store_ok(db, sw, &key, &row, 1);
}

static void assert_seen(const seen_row *r, const char *gpu, int major, const char *dtype,
			long long M, long long N, const char *params, double us)
{
	cr_assert_str_eq(r->gpu, gpu);
	cr_assert_eq(r->cc_major, major);
	cr_assert_eq(r->cc_minor, 0);
	cr_assert_str_eq(r->op, "softmax");
	cr_assert_str_eq(r->dtype, dtype);
	cr_assert_eq(r->M, M);
	cr_assert_eq(r->N, N);
	if (params) {
		cr_assert(r->has_template);
		cr_assert_str_eq(r->tmpl, "softmax_block");
		cr_assert_str_eq(r->params, params);
		cr_assert_eq(r->time_us, us);
		cr_assert_eq(r->gbps, 1000.0 / us);
		cr_assert_eq(r->pct_copy, 30.0 / us);
		cr_assert_eq(r->registers, 40);
	} else {
		cr_assert(!r->has_template, "a shape with no winner lists template %s", r->tmpl);
		cr_assert_str_eq(r->params, "(null)");
	}
}

Test(db, each_winner_in_order_with_exact_fields)
{
	tdb *db = open_ok("list.db");
	long long h = gpu_ok(db, &h100), a = gpu_ok(db, &a100);
	long long sw = sweep_ok(db, h);
	/* stored out of order; listed by GPU name, op, dtype (f32, f16, bf16), M, N */
	store_winner(db, sw, h, AT_BF16, 4096, 128, "p1", 2.0);
	store_winner(db, sw, h, AT_F32, 4096, 1024, "p2", 4.0);
	store_winner(db, sw, h, AT_F32, 1024, 2048, "p3", 8.0);
	store_winner(db, sw, a, AT_F32, 4096, 1024, "p4", 5.0);
	store_winner(db, sw, h, AT_F16, 4096, 512, "p5", 2.5);
	store_winner(db, sw, h, AT_F32, 4096, 512, "p6", 1.25);
	shape_key none = { h, "softmax", AT_F16, 8, 100000 };
	store_ok(db, sw, &none, NULL, 0);
	seen s = { .n = 0 };
	at_error err = { { 0 } };
	cr_assert_eq(tdb_each_winner(db, collect, &s, &err), 0, "%s", err.msg);
	cr_assert_eq(s.n, 7);
	assert_seen(&s.rows[0], "NVIDIA A100-SXM4-80GB", 8, "f32", 4096, 1024, "p4", 5.0);
	assert_seen(&s.rows[1], "NVIDIA H100 80GB HBM3", 9, "f32", 1024, 2048, "p3", 8.0);
	assert_seen(&s.rows[2], "NVIDIA H100 80GB HBM3", 9, "f32", 4096, 512, "p6", 1.25);
	assert_seen(&s.rows[3], "NVIDIA H100 80GB HBM3", 9, "f32", 4096, 1024, "p2", 4.0);
	assert_seen(&s.rows[4], "NVIDIA H100 80GB HBM3", 9, "f16", 8, 100000, NULL, 0);
	assert_seen(&s.rows[5], "NVIDIA H100 80GB HBM3", 9, "f16", 4096, 512, "p5", 2.5);
	assert_seen(&s.rows[6], "NVIDIA H100 80GB HBM3", 9, "bf16", 4096, 128, "p1", 2.0);

	/* a callback's non-zero return stops the walk and is returned */
	seen stop = { .n = 0, .stop_after = 2 };
	cr_assert_eq(tdb_each_winner(db, collect, &stop, &err), 7);
	cr_assert_eq(stop.n, 2);

	/* one shape */
	seen one = { .n = 0 };
	shape_key key = { h, "softmax", AT_F16, 4096, 512 };
	cr_assert_eq(tdb_shape_winner(db, &key, collect, &one, &err), 0, "%s", err.msg);
	cr_assert_eq(one.n, 1);
	assert_seen(&one.rows[0], "NVIDIA H100 80GB HBM3", 9, "f16", 4096, 512, "p5", 2.5);
	seen nothing = { .n = 0 };
	key.N = 513;
	cr_assert_eq(tdb_shape_winner(db, &key, collect, &nothing, &err), 0, "%s", err.msg);
	cr_assert_eq(nothing.n, 0);
	tdb_close(db);
}

Test(db, each_winner_of_an_empty_database)
{
	tdb *db = open_ok("empty.db");
	seen s = { .n = 0 };
	at_error err = { { 0 } };
	cr_assert_eq(tdb_each_winner(db, collect, &s, &err), 0, "%s", err.msg);
	cr_assert_eq(s.n, 0);
	tdb_close(db);
}

/* Within the noise band of the fastest, fewer registers win; outside it,
 * speed decides; the same rows always give the same winner. */
Test(db, the_noise_band_breaks_ties_by_registers)
{
	result_row rows[3] = {
		{ .template_name = "t", .params = "a", .status = RESULT_OK, .time_us = 10.00, .registers = 40 },
		{ .template_name = "t", .params = "b", .status = RESULT_OK, .time_us = 10.05, .registers = 20 },
		{ .template_name = "t", .params = "c", .status = RESULT_OK, .time_us = 11.00, .registers = 10 },
	};
	cr_assert_eq(tdb_pick_winner(rows, 3, 0), 0);
	cr_assert_eq(tdb_pick_winner(rows, 3, 0.01), 1);
	cr_assert_eq(tdb_pick_winner(rows, 3, 0.01), 1);
	cr_assert_eq(tdb_pick_winner(rows, 3, 0.2), 2);
}
