/* Winners through `db merge` and `db export` (db/winners.c): a sweep picks
 * within its noise band by fewest registers and stores only its pick's
 * kernel, so a merge that chose the fastest row crowned results without
 * kernels. Here every winner keeps its kernel, a shape tuned by several
 * sweeps gets the rule's pick among their picks with the widest band,
 * whatever the order of merges, a winner without a kernel stops merge and
 * export with its shape named and nothing written, and merge's counts are
 * its own when another writer commits beside it. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db/export.h"
#include "db/merge.h"
#include "db/tuning_db.h"

#include "tests/sql_probe.h"
#include "tests/tmp_folder.h"

TestSuite(merge_winners, .init = tmp_setup, .fini = tmp_teardown);

/* A shape of a fixture sweep: f32 M=64 at N, where "fast" ran fast_us on
 * 40 registers and "lean" ran lean_us on lean_regs. */
typedef struct fx_shape {
	long long N;
	double fast_us, lean_us;
	int lean_regs;
} fx_shape;

static result_row row(const char *params, double us, int regs, const char *cubin)
{
	return (result_row){ .template_name = "softmax_block", .params = params,
			     .status = RESULT_OK, .rel_err = 1e-7, .time_us = us,
			     .time_min_us = us, .time_max_us = us, .reps = 9, .gbps = 1,
			     .pct_copy = 1, .registers = regs, .threads = 256, .rows_per_cta = 1,
			     .cubin = cubin, .cubin_size = strlen(cubin), .ptx = cubin, .arch = 90 };
}

/* A sweep's database tmp_path(name), its config text tag, storing each
 * shape as the sweep does with the band it measured: the rule picks and
 * stores only its pick's kernel (the cubin is "fast TAG" or "lean TAG"). */
static void make_sweep_db(const char *name, const char *tag, double band, const fx_shape *s,
			  size_t n)
{
	at_error err = { { 0 } };
	tdb *db;
	cr_assert_eq(tdb_open(tmp_path(name), &db, &err), 0, "%s", err.msg);
	gpu_info gpu = { .cc_major = 9, .cc_minor = 0, .sm_count = 132, .mem_bytes = 80LL << 30 };
	snprintf(gpu.name, sizeof gpu.name, "Test GPU");
	long long gid, sid;
	cr_assert_eq(tdb_gpu_id(db, &gpu, &gid, &err), 0, "%s", err.msg);
	sweep_info si = { gid, 13000, "13.0", "test", "c.yaml", tag, 3000 };
	cr_assert_eq(tdb_sweep_begin(db, &si, &sid, &err), 0, "%s", err.msg);
	char fast[64], lean[64];
	snprintf(fast, sizeof fast, "fast %s", tag);
	snprintf(lean, sizeof lean, "lean %s", tag);
	for (size_t i = 0; i < n; i++) {
		result_row rows[3] = {
			row(fast, s[i].fast_us, 40, fast),
			row(lean, s[i].lean_us, s[i].lean_regs, lean),
			{ .template_name = "softmax_warp", .params = "x", .status = RESULT_CHECK_FAILED,
			  .reason = "wrong", .rel_err = 1, .registers = 16 },
		};
		shape_key key = { gid, "softmax", AT_F32, 64, s[i].N };
		cr_assert_eq(tdb_store_shape_band(db, sid, &key, rows, 3, band, &err), 0, "%s",
			     err.msg);
	}
	tdb_close(db);
}

static long long winners_without_kernel(const char *db)
{
	return sql_int(db, "SELECT count(*) FROM winners w WHERE result_id IS NOT NULL AND NOT "
			   "EXISTS (SELECT 1 FROM kernels k WHERE k.result_id = w.result_id)");
}

/* The params of the winner at N, and that its stored kernel is its own. */
static void expect_winner(const char *db, long long N, const char *params)
{
	char sql[512];
	snprintf(sql, sizeof sql,
		 "SELECT count(*) FROM winners w JOIN results r ON r.id = w.result_id "
		 "JOIN kernels k ON k.result_id = r.id "
		 "WHERE w.n = %lld AND r.params = '%s' AND CAST(k.cubin AS TEXT) = '%s'",
		 N, params, params);
	cr_assert_eq(sql_int(db, sql), 1, "%s: the winner at N=%lld is not %s with its kernel", db,
		     N, params);
}

static void merge_ok(const char *out, const char *const *in, size_t n, merge_stats *st)
{
	at_error err = { { 0 } };
	cr_assert_eq(db_merge(out, in, n, st, &err), 0, "%s", err.msg);
}

/* Within its band (1%) each sweep picked "lean", 0.5% slower than "fast"
 * with fewer registers: merged and exported, those picks stay the winners
 * with their kernels. */
Test(merge_winners, winners_picked_within_the_band_keep_their_kernels)
{
	const fx_shape a[] = { { 128, 10.0, 10.05, 24 }, { 256, 20.0, 20.1, 30 } };
	const fx_shape b[] = { { 512, 5.0, 5.02, 16 }, { 1024, 7.0, 7.03, 32 } };
	make_sweep_db("a.db", "a", 0.01, a, 2);
	make_sweep_db("b.db", "b", 0.01, b, 2);
	expect_winner(tmp_path("a.db"), 128, "lean a"); /* the sweep's pick, not the fastest */
	const char *out = tmp_path("out.db");
	merge_stats st;
	merge_ok(out, (const char *const[]){ tmp_path("a.db"), tmp_path("b.db") }, 2, &st);
	cr_assert_eq(st.shapes, 4);
	cr_assert_eq(winners_without_kernel(out), 0);
	expect_winner(out, 128, "lean a");
	expect_winner(out, 256, "lean a");
	expect_winner(out, 512, "lean b");
	expect_winner(out, 1024, "lean b");
	cr_assert_eq(sql_int(out, "SELECT count(*) FROM winners WHERE noise_band = 0.01"), 4,
		     "each sweep's band is kept");

	export_stats es;
	at_error err = { { 0 } };
	const char *ship = tmp_path("ship.db");
	cr_assert_eq(db_export(out, ship, &es, &err), 0, "%s", err.msg);
	cr_assert_eq(es.winners, 4);
	cr_assert_eq(es.kernels, 4);
	cr_assert_eq(winners_without_kernel(ship), 0);
	expect_winner(ship, 128, "lean a");
	expect_winner(ship, 1024, "lean b");
}

/* N=256 tuned twice: a picked "lean a" (10.04 us, 24 registers, band
 * 0.5%), b picked "lean b" (10.12 us, 16 registers, band 1%). The rule over
 * the two picks with the widest band (1%: up to 10.14 us) takes b's; with
 * a's band (to 10.09 us) it would take a's. In either order, in one merge
 * or two, the same. */
Test(merge_winners, a_shape_of_several_sweeps_gets_the_rule_over_their_picks)
{
	const fx_shape a[] = { { 128, 9.0, 9.02, 20 }, { 256, 10.0, 10.04, 24 } };
	const fx_shape b[] = { { 256, 10.1, 10.12, 16 } };
	make_sweep_db("a.db", "a", 0.005, a, 2);
	make_sweep_db("b.db", "b", 0.01, b, 1);
	expect_winner(tmp_path("a.db"), 256, "lean a");
	expect_winner(tmp_path("b.db"), 256, "lean b");
	char ab[512], ba[512], steps[512]; /* tmp_path keeps only its last few */
	snprintf(ab, sizeof ab, "%s", tmp_path("ab.db"));
	snprintf(ba, sizeof ba, "%s", tmp_path("ba.db"));
	snprintf(steps, sizeof steps, "%s", tmp_path("steps.db"));
	merge_stats st;
	merge_ok(ab, (const char *const[]){ tmp_path("a.db"), tmp_path("b.db") }, 2, &st);
	merge_ok(ba, (const char *const[]){ tmp_path("b.db"), tmp_path("a.db") }, 2, &st);
	merge_ok(steps, (const char *const[]){ tmp_path("a.db") }, 1, &st);
	merge_ok(steps, (const char *const[]){ tmp_path("b.db") }, 1, &st);
	const char *dbs[] = { ab, ba, steps };
	for (size_t i = 0; i < 3; i++) {
		cr_assert_eq(winners_without_kernel(dbs[i]), 0);
		expect_winner(dbs[i], 256, "lean b");
		expect_winner(dbs[i], 128, "lean a");
		cr_assert_eq(sql_int(dbs[i], "SELECT noise_band = 0.01 FROM winners WHERE n = 256"), 1,
			     "%s: the widest band is stored", dbs[i]);
		cr_assert_eq(sql_int(dbs[i], "SELECT count(*) FROM results"), 9);
	}
}

/* A database merged by the old rule (the fastest row, whatever its kernel;
 * no band): export refuses it naming a shape, and merging it into a new
 * file chooses the sweeps' picks again. */
Test(merge_winners, a_database_an_older_merge_broke_is_refused_by_export_and_mended_by_merge)
{
	const fx_shape a[] = { { 128, 10.0, 10.05, 24 }, { 256, 20.0, 20.1, 30 } };
	make_sweep_db("a.db", "a", 0.01, a, 2);
	const char *old = tmp_path("old.db");
	merge_stats st;
	merge_ok(old, (const char *const[]){ tmp_path("a.db") }, 1, &st);
	sql_exec(old, "UPDATE winners SET noise_band = NULL, result_id = (SELECT r.id FROM results r "
		      "WHERE r.n = winners.n AND r.params LIKE 'fast%')");
	cr_assert_eq(winners_without_kernel(old), 2);

	export_stats es;
	at_error err = { { 0 } };
	cr_assert_eq(db_export(old, tmp_path("ship.db"), &es, &err), -1);
	cr_assert(strstr(err.msg, "the winner of softmax f32 M=64 N=128 on Test GPU "
				  "(softmax_block fast a, result "),
		  "%s", err.msg);
	cr_assert(strstr(err.msg, "has no stored kernel (and 1 more)"), "%s", err.msg);
	cr_assert(strstr(err.msg, "autotune db merge NEW.db"), "%s", err.msg);
	cr_assert_neq(access(tmp_path("ship.db"), F_OK), 0, "export left a file");

	const char *mended = tmp_path("mended.db");
	merge_ok(mended, (const char *const[]){ old }, 1, &st);
	cr_assert_eq(winners_without_kernel(mended), 0);
	expect_winner(mended, 128, "lean a");
	expect_winner(mended, 256, "lean a");
}

/* A digest of everything merge could change in db. */
static long long fingerprint(const char *db)
{
	return sql_int(db, "SELECT (SELECT count(*) FROM sweeps) * 1000000 + "
			   "(SELECT count(*) FROM results) * 10000 + (SELECT count(*) FROM kernels) * 100 "
			   "+ (SELECT count(*) FROM winners) + (SELECT coalesce(sum(result_id), 0) "
			   "FROM winners) * 1000000000");
}

/* An input whose winner has no kernel anywhere at its shape is refused
 * before anything is written (OUT not even created); OUT's own such
 * winner fails the merge's transaction, which leaves OUT as it was. */
Test(merge_winners, a_winner_without_a_kernel_stops_the_merge_and_changes_nothing)
{
	const fx_shape a[] = { { 128, 10.0, 10.05, 24 }, { 256, 20.0, 20.1, 30 } };
	const fx_shape b[] = { { 512, 5.0, 5.02, 16 } };
	make_sweep_db("a.db", "a", 0.01, a, 2);
	make_sweep_db("b.db", "b", 0.01, b, 1);
	sql_exec(tmp_path("a.db"), "DELETE FROM kernels WHERE result_id = "
				   "(SELECT result_id FROM winners WHERE n = 256)");
	merge_stats st;
	at_error err = { { 0 } };
	const char *fresh = tmp_path("fresh.db");
	cr_assert_eq(db_merge(fresh, (const char *const[]){ tmp_path("b.db"), tmp_path("a.db") }, 2,
			      &st, &err),
		     -1);
	cr_assert(strstr(err.msg, "a.db: the winner of softmax f32 M=64 N=256 on Test GPU "
				  "(softmax_block lean a, result "),
		  "%s", err.msg);
	cr_assert(strstr(err.msg, "has no stored kernel, nor has any other result of its shape"),
		  "%s", err.msg);
	cr_assert_neq(access(fresh, F_OK), 0, "the output was created");

	/* the same database as OUT: merging b into it fails, b is not merged */
	const char *out = tmp_path("a.db");
	long long before = fingerprint(out);
	cr_assert_eq(db_merge(out, (const char *const[]){ tmp_path("b.db") }, 1, &st, &err), -1);
	cr_assert(strstr(err.msg, "merging "), "%s", err.msg);
	cr_assert(strstr(err.msg, "the winner of softmax f32 M=64 N=256 on Test GPU"), "%s",
		  err.msg);
	cr_assert(strstr(err.msg, "rolled back"), "%s", err.msg);
	cr_assert_eq(fingerprint(out), before, "the failed merge changed OUT");
	cr_assert_eq(sql_int(out, "SELECT count(*) FROM sweeps"), 1);
}

Test(merge_winners, export_refuses_a_winner_without_its_kernel_and_writes_nothing)
{
	const fx_shape a[] = { { 128, 10.0, 10.05, 24 }, { 256, 20.0, 20.1, 30 } };
	make_sweep_db("a.db", "a", 0.01, a, 2);
	sql_exec(tmp_path("a.db"), "DELETE FROM kernels WHERE result_id = "
				   "(SELECT result_id FROM winners WHERE n = 128)");
	export_stats es;
	at_error err = { { 0 } };
	cr_assert_eq(db_export(tmp_path("a.db"), tmp_path("ship.db"), &es, &err), -1);
	cr_assert(strstr(err.msg, "a.db: the winner of softmax f32 M=64 N=128 on Test GPU "
				  "(softmax_block lean a, result "),
		  "%s", err.msg);
	cr_assert(strstr(err.msg, "has no stored kernel: "), "%s", err.msg);
	cr_assert_neq(access(tmp_path("ship.db"), F_OK), 0, "export left a file");
}

typedef struct merge_job {
	const char *out, *in;
	merge_stats st;
	int rc;
	at_error err;
} merge_job;

static void *run_merge(void *arg)
{
	merge_job *j = arg;
	j->rc = db_merge(j->out, &j->in, 1, &j->st, &j->err);
	return NULL;
}

/* Another writer commits a sweep into OUT while a merge waits for the
 * lock: the merge counts only what it added itself. */
Test(merge_winners, counts_are_taken_inside_the_transaction)
{
	const fx_shape a[] = { { 128, 10.0, 10.05, 24 } };
	make_sweep_db("a.db", "a", 0.01, a, 1);
	const char *out = tmp_path("out.db");
	tdb *db;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_open(out, &db, &err), 0, "%s", err.msg); /* schema, WAL */
	tdb_close(db);
	sqlite3 *other;
	cr_assert_eq(sqlite3_open(out, &other), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(other,
				  "BEGIN IMMEDIATE;"
				  "INSERT INTO gpus (name, cc_major, cc_minor, sm_count, mem_bytes)"
				  "  VALUES ('Other GPU', 8, 0, 108, 1);"
				  "INSERT INTO sweeps (gpu_id, started_at, driver_version, nvrtc_version,"
				  "  tool_version, config_path, config_text, copy_gbps)"
				  "  VALUES (last_insert_rowid(), 'then', 1, '1', 't', 'c', 'other', 1);"
				  "INSERT INTO results (sweep_id, gpu_id, op, dtype, m, n, template, params,"
				  "  status) VALUES (last_insert_rowid(), 1, 'softmax', 'f32', 1, 1, 't',"
				  "  'p', 'check_failed');",
				  NULL, NULL, NULL),
		     SQLITE_OK, "%s", sqlite3_errmsg(other));
	merge_job job = { .out = out, .in = tmp_path("a.db") };
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, run_merge, &job), 0);
	nanosleep(&(struct timespec){ 0, 300 * 1000 * 1000 }, NULL); /* it reaches the lock */
	cr_assert_eq(sqlite3_exec(other, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(other);
	pthread_join(t, NULL);
	cr_assert_eq(job.rc, 0, "%s", job.err.msg);
	cr_assert_eq(job.st.sweeps, 1, "the other writer's sweep was counted");
	cr_assert_eq(job.st.sweeps_skipped, 0);
	cr_assert_eq(job.st.results, 3);
	cr_assert_eq(sql_int(out, "SELECT count(*) FROM sweeps"), 2);
	cr_assert_eq(sql_int(out, "SELECT count(*) FROM results"), 4);
}

#define EXAMPLE_DB "results/example/h100-default.db"

/* The example sweep's 132 winners, 35 of them picked within the band over
 * a faster row: merged, every one is the sweep's own, with its kernel. */
Test(merge_winners, the_example_sweep_merges_with_every_winner_and_kernel)
{
	const char *out = tmp_path("out.db");
	merge_stats st;
	merge_ok(out, (const char *const[]){ EXAMPLE_DB }, 1, &st);
	cr_assert_eq(st.shapes, 132);
	cr_assert_eq(winners_without_kernel(out), 0);
	sqlite3 *s;
	cr_assert_eq(sqlite3_open_v2(out, &s, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, NULL),
		     SQLITE_OK);
	/* immutable: nothing is written beside the committed example */
	cr_assert_eq(sqlite3_exec(s, "ATTACH DATABASE 'file:" EXAMPLE_DB "?immutable=1' AS ex", NULL,
				  NULL, NULL),
		     SQLITE_OK, "%s", sqlite3_errmsg(s));
	sqlite3_stmt *q;
	cr_assert_eq(sqlite3_prepare_v2(s,
					"SELECT count(*) FROM winners w JOIN results r ON r.id = w.result_id"
					" JOIN ex.winners xw ON xw.dtype = w.dtype AND xw.m = w.m"
					"  AND xw.n = w.n"
					" JOIN ex.results xr ON xr.id = xw.result_id"
					" WHERE xr.template = r.template AND xr.params = r.params"
					"  AND xw.noise_band = w.noise_band",
					-1, &q, NULL),
		     SQLITE_OK, "%s", sqlite3_errmsg(s));
	cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
	cr_assert_eq(sqlite3_column_int(q, 0), 132, "winners that are the sweep's own");
	sqlite3_finalize(q);
	sqlite3_close(s);
}
