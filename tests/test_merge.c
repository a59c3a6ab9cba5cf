/* `autotune db merge`: round trip, conflicting shapes, merging twice, and
 * bad inputs (db/merge.c). */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/export.h"
#include "db/merge.h"
#include "db/tuning_db.h"

#include "tests/sql_probe.h"
#include "tests/tmp_folder.h"

/* A database with one sweep (started_tag makes sweeps distinct) tuning
 * f32 M=64 at each N in ns[] with one variant of the given time. */
static void make_db(const char *path, const char *config, const long long *ns, size_t n,
		    double time_us)
{
	at_error err = { { 0 } };
	tdb *db;
	cr_assert_eq(tdb_open(path, &db, &err), 0, "%s", err.msg);
	gpu_info gpu = { .cc_major = 9, .cc_minor = 0, .sm_count = 132, .mem_bytes = 80LL << 30 };
	snprintf(gpu.name, sizeof gpu.name, "Test GPU");
	long long gid, sid;
	cr_assert_eq(tdb_gpu_id(db, &gpu, &gid, &err), 0, "%s", err.msg);
	sweep_info si = { gid, 13000, "13.0", "test", "c.yaml", config, 3000 };
	cr_assert_eq(tdb_sweep_begin(db, &si, &sid, &err), 0, "%s", err.msg);
	static const unsigned char cubin[4] = { 1, 2, 3, 4 };
	for (size_t i = 0; i < n; i++) {
		result_row rows[2] = {
			{ .template_name = "softmax_block", .params = config, .status = RESULT_OK,
			  .rel_err = 1e-7, .time_us = time_us, .time_min_us = time_us,
			  .time_max_us = time_us, .reps = 5, .gbps = 1, .pct_copy = 1, .registers = 32,
			  .threads = 256, .rows_per_cta = 1, .cubin = cubin, .cubin_size = 4,
			  .ptx = "ptx", .arch = 90 },
			{ .template_name = "softmax_warp", .params = "x", .status = RESULT_CHECK_FAILED,
			  .reason = "wrong", .rel_err = 1, .registers = 16 },
		};
		shape_key key = { gid, "softmax", AT_F32, 64, ns[i] };
		cr_assert_eq(tdb_store_shape(db, sid, &key, rows, 2, &err), 0, "%s", err.msg);
	}
	tdb_close(db);
}

static const char winner_params_sql[] =
	"SELECT r.params FROM winners w JOIN results r ON r.id = w.result_id WHERE w.n = %lld";

static void expect_winner(const char *db, long long n, const char *params)
{
	char sql[256];
	snprintf(sql, sizeof sql, winner_params_sql, n);
	sqlite3 *s;
	cr_assert_eq(sqlite3_open(db, &s), SQLITE_OK);
	sqlite3_stmt *st;
	cr_assert_eq(sqlite3_prepare_v2(s, sql, -1, &st, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "no winner at N=%lld", n);
	cr_assert_str_eq((const char *)sqlite3_column_text(st, 0), params, "winner at N=%lld", n);
	sqlite3_finalize(st);
	sqlite3_close(s);
}

Test(merge, keeps_every_result_and_recomputes_winners, .init = tmp_setup, .fini = tmp_teardown)
{
	const long long a_ns[] = { 128, 256 }, b_ns[] = { 256, 512 };
	make_db(tmp_path("a.db"), "slow", a_ns, 2, 20.0);
	make_db(tmp_path("b.db"), "fast", b_ns, 2, 10.0);
	const char *inputs[] = { tmp_path("a.db"), tmp_path("b.db") };
	merge_stats st;
	at_error err = { { 0 } };
	cr_assert_eq(db_merge(tmp_path("out.db"), inputs, 2, &st, &err), 0, "%s", err.msg);
	cr_assert_eq(st.sweeps, 2);
	cr_assert_eq(st.sweeps_skipped, 0);
	cr_assert_eq(st.results, 8);
	cr_assert_eq(st.shapes, 3);
	const char *out = tmp_path("out.db");
	cr_assert_eq(sql_int(out, "SELECT count(*) FROM results"), 8);
	cr_assert_eq(sql_int(out, "SELECT count(*) FROM gpus"), 1);
	cr_assert_eq(sql_int(out, "SELECT count(*) FROM kernels"), 4);
	/* N=256 was tuned in both: the faster one wins */
	expect_winner(out, 128, "slow");
	expect_winner(out, 256, "fast");
	expect_winner(out, 512, "fast");
	/* every winner has its code */
	cr_assert_eq(sql_int(out, "SELECT count(*) FROM winners w JOIN kernels k ON k.result_id = w.result_id"), 3);
	/* results point at their own sweep */
	cr_assert_eq(sql_int(out,
			     "SELECT count(*) FROM results r JOIN sweeps s ON s.id = r.sweep_id "
			     "WHERE s.config_text = 'fast' AND r.n IN (256, 512)"),
		     4);
	cr_assert_eq(sql_int(out,
			     "SELECT count(*) FROM results r JOIN sweeps s ON s.id = r.sweep_id "
			     "WHERE s.config_text = 'slow' AND r.n IN (128, 256)"),
		     4);
}

Test(merge, merging_twice_changes_nothing, .init = tmp_setup, .fini = tmp_teardown)
{
	const long long ns[] = { 128 };
	make_db(tmp_path("a.db"), "only", ns, 1, 5.0);
	const char *inputs[] = { tmp_path("a.db") };
	merge_stats st;
	at_error err = { { 0 } };
	cr_assert_eq(db_merge(tmp_path("out.db"), inputs, 1, &st, &err), 0, "%s", err.msg);
	cr_assert_eq(db_merge(tmp_path("out.db"), inputs, 1, &st, &err), 0, "%s", err.msg);
	cr_assert_eq(st.sweeps, 0);
	cr_assert_eq(st.sweeps_skipped, 1);
	cr_assert_eq(st.results, 0);
	cr_assert_eq(sql_int(tmp_path("out.db"), "SELECT count(*) FROM results"), 2);
	cr_assert_eq(sql_int(tmp_path("out.db"), "SELECT count(*) FROM winners"), 1);
}

Test(merge, refuses_bad_inputs, .init = tmp_setup, .fini = tmp_teardown)
{
	merge_stats st;
	at_error err = { { 0 } };
	const char *missing[] = { tmp_path("missing.db") };
	cr_assert_eq(db_merge(tmp_path("out.db"), missing, 1, &st, &err), -1);
	cr_assert(strstr(err.msg, "missing.db: no such database"), "%s", err.msg);
	cr_assert_neq(access(tmp_path("out.db"), F_OK), 0, "the output was created");

	FILE *f = fopen(tmp_path("text.db"), "w");
	fputs("hello", f);
	fclose(f);
	const char *text[] = { tmp_path("text.db") };
	cr_assert_eq(db_merge(tmp_path("out.db"), text, 1, &st, &err), -1);
	cr_assert(strstr(err.msg, "text.db"), "%s", err.msg);

	const long long ns[] = { 128 };
	make_db(tmp_path("old.db"), "old", ns, 1, 5.0);
	sqlite3 *s;
	cr_assert_eq(sqlite3_open(tmp_path("old.db"), &s), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(s, "PRAGMA user_version = 1", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(s);
	const char *old[] = { tmp_path("old.db") };
	cr_assert_eq(db_merge(tmp_path("out.db"), old, 1, &st, &err), -1);
	cr_assert(strstr(err.msg, "schema version 1"), "%s", err.msg);
	cr_assert(strstr(err.msg, "mismatched"), "%s", err.msg);

	make_db(tmp_path("self.db"), "self", ns, 1, 5.0);
	const char *self[] = { tmp_path("self.db") };
	cr_assert_eq(db_merge(tmp_path("self.db"), self, 1, &st, &err), -1);
	cr_assert(strstr(err.msg, "cannot also be the output"), "%s", err.msg);
}

/* ---- `autotune db export` (db/export.c) --------------------------------- */

Test(export, keeps_the_winners_with_their_kernels_and_drops_the_rest, .init = tmp_setup,
     .fini = tmp_teardown)
{
	static const long long ns[] = { 1000, 2000, 4000 };
	make_db(tmp_path("full.db"), "threads=256", ns, 3, 10);
	sql_exec(tmp_path("full.db"),
		 "INSERT INTO compile_cache (key, arch, nvrtc, status, log, registers, smem_bytes, "
		 "spill_bytes, stack_bytes, compile_ms, created_at) VALUES "
		 "('k', 90, '13.0', 1, 'log', 0, 0, 0, 0, 1, 'now')");
	export_stats st;
	at_error err = { { 0 } };
	cr_assert_eq(db_export(tmp_path("full.db"), tmp_path("ship.db"), &st, &err), 0, "%s",
		     err.msg);
	cr_assert_eq(st.winners, 3);
	cr_assert_eq(st.kernels, 3);
	const char *out = tmp_path("ship.db");
	cr_assert_eq(sql_int(out, "SELECT count(*) FROM results"), 3, "the failed variants left out");
	cr_assert_eq(sql_int(out, "SELECT count(*) FROM compile_cache"), 0);
	cr_assert_eq(sql_int(out, "SELECT count(*) FROM sweeps"), 1);
	cr_assert_eq(sql_int(out, "SELECT count(*) FROM winners w JOIN kernels k ON k.result_id = "
				   "w.result_id"), 3);
	cr_assert_eq(sql_int(out, "PRAGMA user_version"), TDB_SCHEMA_VERSION);
	expect_winner(out, 2000, "threads=256");
}

Test(export, never_overwrites_and_refuses_what_is_not_a_tuning_database, .init = tmp_setup,
     .fini = tmp_teardown)
{
	static const long long ns[] = { 1000 };
	make_db(tmp_path("full.db"), "threads=256", ns, 1, 10);
	tmp_write("there.db", "keep me");
	export_stats st;
	at_error err = { { 0 } };
	cr_assert_eq(db_export(tmp_path("full.db"), tmp_path("there.db"), &st, &err), -1);
	cr_assert(strstr(err.msg, "exists") != NULL, "%s", err.msg);
	char *kept = tmp_read(tmp_path("there.db"));
	cr_assert_str_eq(kept, "keep me");
	free(kept);
	tmp_write("text.db", "not sqlite");
	cr_assert_eq(db_export(tmp_path("text.db"), tmp_path("out.db"), &st, &err), -1);
	cr_assert(strstr(err.msg, "not a tuning database") != NULL, "%s", err.msg);
	cr_assert_neq(access(tmp_path("out.db"), F_OK), 0, "nothing written");
	cr_assert_eq(db_export(tmp_path("absent.db"), tmp_path("out.db"), &st, &err), -1);
	cr_assert(strstr(err.msg, "no such database") != NULL, "%s", err.msg);
}
