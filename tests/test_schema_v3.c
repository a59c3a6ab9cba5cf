/* Schema version 3: results carry the cluster and cooperative launch
 * geometry (ctas_per_row, cooperative). Round trip through the tuner's
 * writer and the dispatch library's reader, migration of version 2 and 1
 * databases (read as they are, migrated when opened for writing, old rows
 * meaning one CTA per row step and a normal launch), a geometry no launch
 * can honour left out by the reader, and `autotune db merge` copying the
 * columns. */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/merge.h"
#include "db/tuning_db.h"
#include "dispatch/policy/tuned_db.h"

#include "tests/sql_probe.h"
#include "tests/test_run_fixture.h"
#include "tests/tmp_folder.h"

TestSuite(schema_v3, .init = tmp_setup, .fini = tmp_teardown);

static const unsigned char cubin[4] = { 1, 2, 3, 4 };

/* A winning result with the given launch geometry. */
static result_row winner(const char *tmpl, int ctas_per_row, int cooperative, double us)
{
	return (result_row){ .template_name = tmpl, .params = "p=1", .status = RESULT_OK,
			     .rel_err = 1e-7, .time_us = us, .time_min_us = us, .time_max_us = us,
			     .reps = 5, .gbps = 1, .pct_copy = 1, .registers = 32, .threads = 256,
			     .rows_per_cta = 1, .dyn_smem = 100000, .ctas_per_row = ctas_per_row,
			     .cooperative = cooperative, .cubin = cubin, .cubin_size = sizeof cubin,
			     .ptx = "ptx", .arch = 90 };
}

/* A database (name) with one shape per row of `rows`, each at M = 8, N =
 * 1000 * (i + 1), f32. */
static void make_db(const char *name, const result_row *rows, size_t n)
{
	at_error err = { { 0 } };
	tdb *db;
	cr_assert_eq(tdb_open(tmp_path(name), &db, &err), 0, "%s", err.msg);
	gpu_info gpu = { .cc_major = 9, .cc_minor = 0, .sm_count = 132, .mem_bytes = 80LL << 30 };
	snprintf(gpu.name, sizeof gpu.name, "Test GPU %s", name);
	long long gid, sid;
	cr_assert_eq(tdb_gpu_id(db, &gpu, &gid, &err), 0, "%s", err.msg);
	sweep_info si = { gid, 13000, "13.0", "test", "c.yaml", name, 3000 };
	cr_assert_eq(tdb_sweep_begin(db, &si, &sid, &err), 0, "%s", err.msg);
	for (size_t i = 0; i < n; i++) {
		shape_key key = { gid, "softmax", AT_F32, 8, 1000 * (long long)(i + 1) };
		cr_assert_eq(tdb_store_shape(db, sid, &key, &rows[i], 1, &err), 0, "%s", err.msg);
	}
	tdb_close(db);
}

/* The dispatch library's view of a database: its winners' geometries. */
static atdi_table dispatch_view(const char *path)
{
	char msg[512];
	struct sqlite3 *s;
	cr_assert_eq(atdi_db_open(path, &s, msg, sizeof msg), ATD_OK, "%s", msg);
	atdi_table t;
	cr_assert_eq(atdi_db_load(s, path, &t, msg, sizeof msg), ATD_OK, "%s", msg);
	sqlite3_close(s);
	return t;
}

static const atdi_entry *entry_at(const atdi_table *t, long long N)
{
	for (size_t i = 0; i < t->nentries; i++)
		if (t->entries[i].N == N)
			return &t->entries[i];
	return NULL;
}

Test(schema_v3, results_store_the_cluster_and_cooperative_geometry)
{
	result_row rows[] = { winner("softmax_cluster", 16, 0, 10), winner("softmax_split", 1, 1, 10),
			      winner("softmax_block", 0, 0, 10) };
	make_db("a.db", rows, 3);
	const char *p = tmp_path("a.db");
	cr_assert_eq(sql_int(p, "PRAGMA user_version"), TDB_SCHEMA_VERSION);
	cr_assert_eq(
		sql_int(p, "SELECT ctas_per_row FROM results WHERE template = 'softmax_cluster'"),
		16);
	cr_assert_eq(
		sql_int(p, "SELECT cooperative FROM results WHERE template = 'softmax_cluster'"),
		0);
	cr_assert_eq(
		sql_int(p, "SELECT cooperative FROM results WHERE template = 'softmax_split'"), 1);
	cr_assert_eq(
		sql_int(p, "SELECT ctas_per_row FROM results WHERE template = 'softmax_split'"), 1);
	/* an unset ctas_per_row (0) is stored as what it means: 1 */
	cr_assert_eq(
		sql_int(p, "SELECT ctas_per_row FROM results WHERE template = 'softmax_block'"), 1);

	atdi_table t = dispatch_view(p);
	cr_assert_eq(t.nentries, 3);
	const atdi_entry *cluster = entry_at(&t, 1000), *split = entry_at(&t, 2000);
	cr_assert_not_null(cluster);
	cr_assert_not_null(split);
	cr_assert_eq(cluster->geom.ctas_per_row, 16);
	cr_assert_eq(cluster->geom.cooperative, 0);
	cr_assert_eq(cluster->geom.dyn_smem, 100000);
	cr_assert_eq(split->geom.ctas_per_row, 1);
	cr_assert_eq(split->geom.cooperative, 1);
	atdi_table_free(&t);
}

Test(schema_v3, the_reader_leaves_out_a_geometry_no_launch_can_honour)
{
	result_row rows[] = { winner("softmax_cluster", 4, 0, 10), winner("softmax_cluster", 4, 0, 10) };
	make_db("b.db", rows, 2);
	const char *p = tmp_path("b.db");
	/* a cooperative cluster (not something the tuner writes) */
	sql_exec(p, "UPDATE results SET cooperative = 1 WHERE n = 2000");
	atdi_table t = dispatch_view(p);
	cr_assert_eq(t.nentries, 1);
	cr_assert_eq(t.entries[0].N, 1000);
	atdi_table_free(&t);
}

/* Makes a version-v database of name from a fresh one: drops what came
 * later. */
static void downgrade(const char *path, int version)
{
	sql_exec(path, "ALTER TABLE kernels DROP COLUMN cubin_sha256; "
		       "ALTER TABLE kernels DROP COLUMN ptx_sha256; "
		       "ALTER TABLE results DROP COLUMN ctas_per_row; "
		       "ALTER TABLE results DROP COLUMN cooperative; PRAGMA user_version = 2;");
	if (version == 1)
		sql_exec(path, "DROP TABLE compile_cache; ALTER TABLE winners DROP COLUMN noise_band; "
			       "PRAGMA user_version = 1;");
}

static int count_winners(const winner_row *w, void *ctx)
{
	(void)w;
	(*(int *)ctx)++;
	return 0;
}

static void check_old_database_read_then_migrated(int version)
{
	result_row rows[] = { winner("softmax_online", 1, 0, 10) };
	make_db("old.db", rows, 1);
	const char *p = tmp_path("old.db");
	downgrade(p, version);
	cr_assert_eq(sql_int(p, "SELECT count(*) FROM pragma_table_info('results') "
				"WHERE name = 'ctas_per_row'"), 0);

	/* read as it is: by the tuner's readers and by the dispatch library */
	tdb *db;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_open_readonly(p, &db, &err), 0, "%s", err.msg);
	int n = 0;
	cr_assert_eq(tdb_each_winner(db, count_winners, &n, &err), 0, "%s", err.msg);
	cr_assert_eq(n, 1);
	tdb_close(db);
	cr_assert_eq(sql_int(p, "PRAGMA user_version"), version);
	atdi_table t = dispatch_view(p);
	cr_assert_eq(t.nentries, 1);
	cr_assert_eq(t.entries[0].geom.ctas_per_row, 1);
	cr_assert_eq(t.entries[0].geom.cooperative, 0);
	cr_assert_eq(t.entries[0].geom.threads, 256);
	atdi_table_free(&t);

	/* opened for writing: migrated, the old row one CTA per row step */
	cr_assert_eq(tdb_open(p, &db, &err), 0, "%s", err.msg);
	tdb_close(db);
	cr_assert_eq(sql_int(p, "PRAGMA user_version"), TDB_SCHEMA_VERSION);
	cr_assert_eq(sql_int(p, "SELECT ctas_per_row FROM results"), 1);
	cr_assert_eq(sql_int(p, "SELECT cooperative FROM results"), 0);
	cr_assert_eq(sql_int(p, "SELECT count(*) FROM pragma_table_info('winners') "
				"WHERE name = 'noise_band'"), 1);
	cr_assert_eq(sql_int(p, "SELECT count(*) FROM sqlite_master WHERE name = 'compile_cache'"), 1);

	/* and written to as a database of this version */
	result_row more[] = { winner("softmax_cluster", 8, 0, 5), winner("softmax_split", 1, 1, 5) };
	gpu_info gpu = { .cc_major = 9, .cc_minor = 0, .sm_count = 132, .mem_bytes = 80LL << 30 };
	snprintf(gpu.name, sizeof gpu.name, "Test GPU old.db");
	long long gid, sid;
	cr_assert_eq(tdb_open(p, &db, &err), 0, "%s", err.msg);
	cr_assert_eq(tdb_gpu_id(db, &gpu, &gid, &err), 0, "%s", err.msg);
	sweep_info si = { gid, 13000, "13.0", "test", "c.yaml", "again", 3000 };
	cr_assert_eq(tdb_sweep_begin(db, &si, &sid, &err), 0, "%s", err.msg);
	shape_key key = { gid, "softmax", AT_F32, 8, 5000 };
	cr_assert_eq(tdb_store_shape(db, sid, &key, more, 2, &err), 0, "%s", err.msg);
	tdb_close(db);
	t = dispatch_view(p);
	const atdi_entry *e = entry_at(&t, 5000);
	cr_assert_not_null(e);
	cr_assert_eq(e->geom.ctas_per_row, 8);
	atdi_table_free(&t);
}

Test(schema_v3, a_version_2_database_is_read_as_is_and_migrated_on_write)
{
	check_old_database_read_then_migrated(2);
}

Test(schema_v3, a_version_1_database_is_read_as_is_and_migrated_on_write)
{
	check_old_database_read_then_migrated(1);
}

Test(schema_v3, merge_copies_the_new_geometry)
{
	result_row a[] = { winner("softmax_cluster", 4, 0, 10) };
	result_row b[] = { winner("softmax_split", 1, 1, 10), winner("softmax_cluster", 2, 0, 7) };
	make_db("in1.db", a, 1);
	make_db("in2.db", b, 2);
	const char *inputs[] = { tmp_path("in1.db"), tmp_path("in2.db") };
	merge_stats stats;
	at_error err = { { 0 } };
	const char *out = tmp_path("out.db");
	cr_assert_eq(db_merge(out, inputs, 2, &stats, &err), 0, "%s", err.msg);
	cr_assert_eq(stats.results, 3);
	cr_assert_eq(sql_int(out, "SELECT sum(ctas_per_row) FROM results"), 4 + 1 + 2);
	cr_assert_eq(sql_int(out, "SELECT sum(cooperative) FROM results"), 1);
	cr_assert_eq(sql_int(out, "SELECT cooperative FROM results WHERE template = 'softmax_split'"), 1);
	atdi_table t = dispatch_view(out);
	cr_assert_eq(t.nentries, 3);
	int clusters = 0, cooperative = 0;
	for (size_t i = 0; i < t.nentries; i++) {
		clusters += t.entries[i].geom.ctas_per_row > 1;
		cooperative += t.entries[i].geom.cooperative;
	}
	cr_assert_eq(clusters, 2);
	cr_assert_eq(cooperative, 1);
	atdi_table_free(&t);
}

/* `autotune db migrate`: an older database brought to this version in
 * place (then merged, which needs this version), this version left alone,
 * a newer one refused without a hint to migrate it. */
Test(schema_v3, db_migrate_brings_an_older_database_to_this_version)
{
	result_row rows[] = { winner("softmax_online", 1, 0, 10) };
	make_db("old.db", rows, 1);
	char p[512];
	snprintf(p, sizeof p, "%s", tmp_path("old.db"));
	downgrade(p, 1);
	/* merge refuses it and names the command that migrates it */
	tr_result r = RUN("db", "merge", tmp_path("out.db"), p);
	tr_expect_status(&r, 1);
	char hint[600];
	snprintf(hint, sizeof hint, "`autotune db migrate %s`", p);
	tr_expect_in(r.err, hint);
	tr_free(&r);

	r = RUN("db", "migrate", p);
	tr_expect_status(&r, 0);
	char said[600];
	snprintf(said, sizeof said, "migrated %s from schema version 1 to %d\n", p,
		 TDB_SCHEMA_VERSION);
	cr_assert_str_eq(r.out, said);
	tr_free(&r);
	cr_assert_eq(sql_int(p, "PRAGMA user_version"), TDB_SCHEMA_VERSION);
	cr_assert_eq(sql_int(p, "SELECT ctas_per_row FROM results"), 1);
	cr_assert_eq(sql_int(p, "SELECT count(*) FROM winners WHERE result_id IS NOT NULL"), 1);

	r = RUN("db", "migrate", p);
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "nothing to do");
	tr_free(&r);
	r = RUN("db", "merge", tmp_path("out.db"), p);
	tr_expect_status(&r, 0);
	tr_free(&r);
}

Test(schema_v3, db_migrate_refuses_a_newer_or_missing_database_and_says_no_more)
{
	result_row rows[] = { winner("softmax_online", 1, 0, 10) };
	make_db("new.db", rows, 1);
	char p[512];
	snprintf(p, sizeof p, "%s", tmp_path("new.db"));
	char sql[64];
	snprintf(sql, sizeof sql, "PRAGMA user_version = %d", TDB_SCHEMA_VERSION + 1);
	sql_exec(p, sql);
	static const char *const verbs[][3] = { { "db", "migrate", NULL },
						{ "db", "merge", "out.db" },
						{ "list", NULL, NULL } };
	for (size_t i = 0; i < 3; i++) {
		tr_result r = !verbs[i][1]   ? RUN(verbs[i][0], "--db", p)
			      : !verbs[i][2] ? RUN(verbs[i][0], verbs[i][1], p)
					     : RUN(verbs[i][0], verbs[i][1], tmp_path(verbs[i][2]), p);
		tr_expect_status(&r, 1);
		tr_expect_in(r.err, "newer than this program's");
		tr_expect_in(r.err, "use a newer autotune");
		cr_assert_null(strstr(r.err, "migrat"), "%s %s suggests migrating:\n%s", verbs[i][0],
			       verbs[i][1] ? verbs[i][1] : "", r.err);
		tr_free(&r);
	}
	cr_assert_eq(sql_int(p, "PRAGMA user_version"), TDB_SCHEMA_VERSION + 1, "left as it was");
	tr_result r = RUN("db", "migrate", tmp_path("absent.db"));
	tr_expect_status(&r, 1);
	tr_expect_in(r.err, "no such database");
	tr_free(&r);
	cr_assert_neq(access(tmp_path("absent.db"), F_OK), 0, "migrate created it");
	tmp_write("text.db", "not a database");
	r = RUN("db", "migrate", tmp_path("text.db"));
	tr_expect_status(&r, 1);
	tr_expect_in(r.err, "not a tuning database");
	tr_free(&r);
	r = RUN("db", "migrate");
	tr_expect_status(&r, 2);
	tr_free(&r);
	r = RUN("help", "db", "migrate");
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "autotune db migrate FILE");
	tr_free(&r);
}
