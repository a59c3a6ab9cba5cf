/* Helpers for the dispatch tests (no tests here; see
 * tests/test_dispatch_fixture.h): tuning databases written through the
 * tuner's own writer (db/tuning_db.h), so that the library is tested against
 * exactly what `autotune sweep` stores. */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test_dispatch_fixture.h"

tdb *td_db_new(const char *name)
{
	tdb *db;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_open(tmp_path(name), &db, &err), 0, "%s", err.msg);
	/* One fsync per stored shape would make the big databases slow. */
	sqlite3_exec(tdb_handle(db), "PRAGMA synchronous = OFF", NULL, NULL, NULL);
	return db;
}

long long td_gpu(tdb *db, const char *name, int cc_major, int cc_minor, int sm_count,
		 long long mem_bytes)
{
	gpu_info g = { .cc_major = cc_major, .cc_minor = cc_minor, .sm_count = sm_count,
		       .mem_bytes = mem_bytes };
	snprintf(g.name, sizeof g.name, "%s", name);
	long long id;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_gpu_id(db, &g, &id, &err), 0, "%s", err.msg);
	return id;
}

long long td_sweep(tdb *db, long long gpu_id)
{
	sweep_info s = { .gpu_id = gpu_id, .driver_version = 13000, .nvrtc_version = "13.0",
			 .tool_version = "test", .config_path = "test.yaml",
			 .config_text = "sweeps: []\n", .copy_gbps = 3000 };
	long long id;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_sweep_begin(db, &s, &id, &err), 0, "%s", err.msg);
	return id;
}

static long long winner_id(tdb *db, long long gpu, const char *op, at_dtype dt, long long M,
			   long long N)
{
	sqlite3_stmt *st;
	cr_assert_eq(sqlite3_prepare_v2(tdb_handle(db),
					"SELECT coalesce(result_id, 0) FROM winners WHERE gpu_id = ?1 "
					"AND op = ?2 AND dtype = ?3 AND m = ?4 AND n = ?5",
					-1, &st, NULL),
		     SQLITE_OK, "%s", sqlite3_errmsg(tdb_handle(db)));
	sqlite3_bind_int64(st, 1, gpu);
	sqlite3_bind_text(st, 2, op, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, at_dtype_name(dt), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, M);
	sqlite3_bind_int64(st, 5, N);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sqlite3_errmsg(tdb_handle(db)));
	long long id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return id;
}

static const unsigned char fake_cubin[] = { 0x7f, 'E', 'L', 'F', 2, 1, 1, 0x33 };

static long long store(tdb *db, long long sweep, long long gpu, const char *op, at_dtype dt,
		       long long M, long long N, const result_row *rows, size_t n)
{
	shape_key key = { .gpu_id = gpu, .op = op, .dtype = dt, .M = M, .N = N };
	at_error err = { { 0 } };
	cr_assert_eq(tdb_store_shape(db, sweep, &key, rows, n, &err), 0, "%s", err.msg);
	return winner_id(db, gpu, op, dt, M, N);
}

/* Stores a shape whose winner is one passing variant; a slower variant is
 * stored beside it, as a sweep would. Returns the winner's result id. */
long long td_shape(tdb *db, long long sweep, long long gpu, const char *op, at_dtype dt,
		   long long M, long long N, const char *tmpl, const char *params, double us,
		   long long max_n)
{
	result_row rows[2] = {
		{ .template_name = "softmax_online", .params = "threads=128 vec=1",
		  .status = RESULT_OK, .rel_err = 1e-7, .time_us = us * 3, .time_min_us = us * 3,
		  .time_max_us = us * 3, .reps = 10, .registers = 20, .smem_bytes = 0,
		  .threads = 128, .rows_per_cta = 1, .max_n = 0, .cubin = fake_cubin,
		  .cubin_size = sizeof fake_cubin, .ptx = "// slow", .arch = 90 },
		{ .template_name = tmpl, .params = params, .status = RESULT_OK, .rel_err = 1e-7,
		  .time_us = us, .time_min_us = us, .time_max_us = us, .reps = 10, .registers = 32,
		  .smem_bytes = 0, .threads = 256, .rows_per_cta = 1, .max_n = max_n,
		  .cubin = fake_cubin, .cubin_size = sizeof fake_cubin, .ptx = "// winner",
		  .arch = 90 },
	};
	return store(db, sweep, gpu, op, dt, M, N, rows, 2);
}

/* A winner whose code was not stored (cubin NULL). */
long long td_shape_nocode(tdb *db, long long sweep, long long gpu, at_dtype dt, long long M,
			  long long N, const char *tmpl)
{
	result_row row = { .template_name = tmpl, .params = "", .status = RESULT_OK,
			   .rel_err = 1e-7, .time_us = 1, .time_min_us = 1, .time_max_us = 1,
			   .reps = 10, .registers = 32, .threads = 256, .rows_per_cta = 1 };
	return store(db, sweep, gpu, "softmax", dt, M, N, &row, 1);
}

/* A shape where no variant passed: its winners row has a NULL result_id. */
void td_shape_failed(tdb *db, long long sweep, long long gpu, at_dtype dt, long long M,
		     long long N)
{
	result_row row = { .template_name = "softmax_block", .params = "threads=256",
			   .status = RESULT_CHECK_FAILED, .reason = "wrong", .rel_err = 1,
			   .registers = 32, .threads = 256, .rows_per_cta = 1 };
	cr_assert_eq(store(db, sweep, gpu, "softmax", dt, M, N, &row, 1), 0);
}
