/* The tuning database under concurrent writers, writers killed with
 * SIGKILL mid-transaction, and the dispatch library reading while a writer
 * writes: real processes on a real SQLite file (what two sweeps, or a sweep
 * and an application, do). */
#include <criterion/criterion.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "autotune/dispatch.h"
#include "db/tuning_db.h"

#include "tests/tmp_folder.h"

#define ROWS_PER_SHAPE 4
#define STR_(x) #x
#define STR(x) STR_(x)
static const gpu_info h100 = { "NVIDIA H100 80GB HBM3", 9, 0, 132, 85017755648LL };
static const unsigned char fake_cubin[] = { 0x7f, 'E', 'L', 'F', 2, 1, 1, 0x33 };

/* The rows one sweep stores for a shape: the fastest (last) wins. */
static void shape_rows(result_row *rows, char params[][32])
{
	for (int i = 0; i < ROWS_PER_SHAPE; i++) {
		snprintf(params[i], 32, "threads=%d", 64 << i);
		rows[i] = (result_row){ .template_name = "softmax_block", .params = params[i],
					.status = RESULT_OK, .rel_err = 1e-7,
					.time_us = 10.0 - i, .time_min_us = 10.0 - i,
					.time_max_us = 10.0 - i, .reps = 5, .registers = 32,
					.threads = 64 << i, .rows_per_cta = 1, .cubin = fake_cubin,
					.cubin_size = sizeof fake_cubin, .ptx = "//", .arch = 90 };
	}
}

/* A writer process, as a sweep: stores shapes M=1024, N = first..first+count-1
 * that are not done yet, one transaction each. Returns an exit status. */
static int writer(const char *path, long long first, long long count, int pause_us)
{
	tdb *db;
	at_error err = { { 0 } };
	long long gpu, sweep;
	sweep_info info = { .driver_version = 13000, .nvrtc_version = "13.0",
			    .tool_version = "test", .config_path = "t.yaml",
			    .config_text = "sweeps: []\n", .copy_gbps = 3000 };
	if (tdb_open(path, &db, &err) || tdb_gpu_id(db, &h100, &gpu, &err))
		goto fail;
	info.gpu_id = gpu;
	if (tdb_sweep_begin(db, &info, &sweep, &err))
		goto fail;
	result_row rows[ROWS_PER_SHAPE];
	char params[ROWS_PER_SHAPE][32];
	shape_rows(rows, params);
	for (long long n = first; n < first + count; n++) {
		int done = 0;
		if (tdb_shape_done(db, gpu, "softmax", AT_F32, 1024, n, &done, &err))
			goto fail;
		if (done)
			continue;
		shape_key key = { gpu, "softmax", AT_F32, 1024, n };
		if (tdb_store_shape(db, sweep, &key, rows, ROWS_PER_SHAPE, &err))
			goto fail;
		if (pause_us)
			usleep((useconds_t)pause_us);
	}
	if (tdb_sweep_finish(db, sweep, 0, 0, &err))
		goto fail;
	tdb_close(db);
	return 0;
fail:
	fprintf(stderr, "writer: %s\n", err.msg);
	return 1;
}

static pid_t spawn_writer(const char *path, long long first, long long count, int pause_us)
{
	fflush(NULL);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(writer(path, first, count, pause_us));
	return pid;
}

static int wait_ok(pid_t pid)
{
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static long long query_int(sqlite3 *s, const char *sql)
{
	sqlite3_stmt *st;
	cr_assert_eq(sqlite3_prepare_v2(s, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
		     sqlite3_errmsg(s));
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sql);
	long long v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* integrity_check is ok, every tuned shape has exactly its rows (none lost,
 * none twice), and no shape has rows without its winner. Returns the number
 * of tuned shapes. */
static long long check_database(const char *path)
{
	if (access(path, F_OK) != 0)
		return 0; /* killed before it created the file */
	/* read-write, as the next sweep opens it: a killed writer's journal is
	 * rolled back (recovered) on open */
	sqlite3 *s;
	cr_assert_eq(sqlite3_open_v2(path, &s, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	sqlite3_busy_timeout(s, 5000);
	if (query_int(s, "SELECT count(*) FROM sqlite_master WHERE name = 'results'") == 0) {
		sqlite3_close(s); /* killed before its schema was committed */
		return 0;
	}
	sqlite3_stmt *st;
	cr_assert_eq(sqlite3_prepare_v2(s, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	cr_assert_str_eq((const char *)sqlite3_column_text(st, 0), "ok");
	sqlite3_finalize(st);
	cr_assert_eq(query_int(s, "SELECT count(*) FROM (SELECT n FROM results GROUP BY n "
				  "HAVING count(*) != " STR(ROWS_PER_SHAPE) ")"), 0,
		     "a shape has lost or duplicated rows");
	cr_assert_eq(query_int(s, "SELECT count(*) FROM (SELECT DISTINCT n FROM results) r "
				  "WHERE n NOT IN (SELECT n FROM winners)"), 0,
		     "rows stored without their winner");
	cr_assert_eq(query_int(s, "SELECT count(*) FROM winners WHERE result_id IS NULL"), 0);
	long long shapes = query_int(s, "SELECT count(*) FROM winners");
	sqlite3_close(s);
	return shapes;
}

TestSuite(db_concurrency, .init = tmp_setup, .fini = tmp_teardown, .timeout = 120);

Test(db_concurrency, two_writers_at_once_both_keep_every_result)
{
	const char *path = tmp_path("two.db");
	pid_t a = spawn_writer(path, 1, 150, 0);
	pid_t b = spawn_writer(path, 1001, 150, 0);
	cr_assert(wait_ok(a), "the first writer failed");
	cr_assert(wait_ok(b), "the second writer failed");
	cr_assert_eq(check_database(path), 300);
}

/* Only opens the database and records the GPU, as every sweep does first. */
static pid_t spawn_opener(const char *path)
{
	fflush(NULL);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		tdb *db;
		at_error err = { { 0 } };
		long long gpu;
		if (tdb_open(path, &db, &err) || tdb_gpu_id(db, &h100, &gpu, &err)) {
			fprintf(stderr, "opener: %s\n", err.msg);
			_exit(1);
		}
		tdb_close(db);
		_exit(0);
	}
	return pid;
}

/* A new file's switch to a write-ahead log once failed at once ("database is
 * locked") when another sweep held it: about one round in thirty here. */
Test(db_concurrency, sweeps_opening_one_new_file_at_once_all_open_it)
{
	enum { ROUNDS = 150, OPENERS = 6 };
	for (int round = 0; round < ROUNDS; round++) {
		char name[32];
		snprintf(name, sizeof name, "new%d.db", round);
		const char *path = tmp_path(name);
		pid_t openers[OPENERS];
		for (int i = 0; i < OPENERS; i++)
			openers[i] = spawn_opener(path);
		for (int i = 0; i < OPENERS; i++)
			cr_assert(wait_ok(openers[i]), "round %d: an opener failed", round);
	}
}

Test(db_concurrency, a_writer_killed_mid_sweep_loses_nothing_and_resumes)
{
	const char *path = tmp_path("killed.db");
	srand((unsigned)time(NULL));
	long long before = 0;
	int interrupted = 0;
	for (int round = 0; round < 5; round++) {
		pid_t w = spawn_writer(path, 1, 400, 200);
		usleep((useconds_t)(20000 + rand() % 80000));
		kill(w, SIGKILL);
		int status;
		waitpid(w, &status, 0);
		long long tuned = check_database(path);
		cr_assert_geq(tuned, before, "tuned shapes went from %lld to %lld", before, tuned);
		before = tuned;
		interrupted += tuned < 400;
	}
	cr_assert_gt(interrupted, 0, "no kill landed before the writer finished");
	/* the same command again finishes the job */
	cr_assert(wait_ok(spawn_writer(path, 1, 400, 0)));
	cr_assert_eq(check_database(path), 400);
}

/* What the dispatch library sees of shape N at one moment. */
static int exact_now(atd_handle *h, long long n)
{
	static const atd_gpu g = { "NVIDIA H100 80GB HBM3", 9, 0, 132, 85017755648LL };
	atd_choice c;
	cr_assert_eq(atd_query_gpu(h, &g, ATD_F32, 1024, n, &c), ATD_OK, "%s", atd_errmsg(h));
	if (c.level != ATD_LEVEL_EXACT)
		return 0;
	cr_assert_eq(c.tuned_N, n);
	cr_assert_str_eq(c.params, "threads=512", "a half-written shape was read");
	return 1;
}

Test(db_concurrency, the_dispatch_library_reads_a_consistent_state_during_a_sweep)
{
	const char *path = tmp_path("read.db");
	cr_assert(wait_ok(spawn_writer(path, 1, 1, 0))); /* the file exists from here on */
	pid_t w = spawn_writer(path, 2, 300, 500);
	int seen[301] = { 0 };
	int opens = 0, running = 1;
	while (running) {
		running = waitpid(w, NULL, WNOHANG) == 0;
		atd_handle *h;
		/* No deriving: 300 derivations a pass would leave the writer alone. */
		cr_assert_eq(atd_open(path, ATD_OPEN_NO_JIT, &h), ATD_OK, "open %d: %s", opens,
			     atd_errmsg(NULL));
		for (long long n = 1; n <= 300; n++) {
			int now = exact_now(h, n);
			cr_assert(now || !seen[n], "shape %lld was tuned, then not", n);
			seen[n] = now;
		}
		atd_close(h);
		opens++;
	}
	for (long long n = 1; n <= 300; n++)
		cr_assert(seen[n], "shape %lld never seen", n);
	cr_assert_gt(opens, 2, "the reader did not overlap the writer");
}
