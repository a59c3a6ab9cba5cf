/* Tests of the dispatch library's handle and error paths, none needing a
 * GPU: atd_open's status for each kind of bad file (and the built-in-only
 * handle ATD_OPEN_FALLBACK gives instead), $AUTOTUNE_DB, the time to open a
 * large database, the log of the fallback reason and of a winner without
 * its kernel, argument checks of atd_softmax, the driver-less outcome,
 * status and level names, version. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db/tuning_db.h"
#include "dispatch/policy/select.h"
#include "dispatch/policy/tuned_db.h"
#include "include/autotune/dispatch.h"

#include "tests/test_dispatch_fixture.h"

TestSuite(dispatch_open, .init = tmp_setup, .fini = tmp_teardown);

static const atd_gpu h100 = { "NVIDIA H100 80GB HBM3", 9, 0, 132, 85520809984LL };

/* A database with one tuned f32 shape (4096 x 1000) on h100. */
static void make_db(const char *name)
{
	tdb *db = td_db_new(name);
	long long gpu = td_gpu(db, h100.name, 9, 0, 132, h100.mem_bytes);
	long long sweep = td_sweep(db, gpu);
	td_shape(db, sweep, gpu, "softmax", AT_F32, 4096, 1000, "tuned", "", 1, 0);
	tdb_close(db);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

static void sql_file(const char *path, const char *sql)
{
	sqlite3 *db;
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
	sqlite3_close(db);
}

static atd_level level_of(atd_handle *h, atd_dtype dt, long long M, long long N)
{
	atd_choice c;
	cr_assert_eq(atd_query_gpu(h, &h100, dt, M, N, &c), ATD_OK, "%s", atd_errmsg(h));
	return c.level;
}

/* path fails with want; with ATD_OPEN_FALLBACK (and no run-time
 * compiling) it gives a built-in-only handle whose message names the file. */
static void assert_open_fails(const char *path, atd_status want)
{
	atd_handle *h = (atd_handle *)&h;
	atd_status s = atd_open(path, 0, &h);
	cr_assert_eq(s, want, "%s: %s (%s)", path, atd_status_string(s), atd_errmsg(NULL));
	cr_assert_null(h);
	cr_assert(strstr(atd_errmsg(NULL), path) != NULL, "message: %s", atd_errmsg(NULL));
	cr_assert_eq(atd_open(path, ATD_OPEN_FALLBACK | ATD_OPEN_NO_JIT, &h), ATD_OK);
	cr_assert_not_null(h);
	cr_assert(strstr(atd_errmsg(h), path) != NULL, "message: %s", atd_errmsg(h));
	cr_assert(strstr(atd_errmsg(h), "built-in") != NULL, "message: %s", atd_errmsg(h));
	cr_assert_eq(level_of(h, ATD_F32, 4096, 1000), ATD_LEVEL_BUILTIN);
	atd_close(h);
}

Test(dispatch_open, with_nvrtc_a_handle_without_a_database_derives_from_the_seed_winners_off_sm_90)
{
	atd_handle *h;
	cr_assert_eq(atd_open(tmp_path("absent.db"), ATD_OPEN_FALLBACK, &h), ATD_OK);
	cr_assert(strstr(atd_errmsg(h), "seed winners") != NULL, "message: %s", atd_errmsg(h));
	/* the seed models learned an sm_90 GPU: another architecture derives */
	atd_gpu gpu = { "Some other GPU", 8, 0, 100, 1LL << 36 };
	atd_choice c;
	cr_assert_eq(atd_query_gpu(h, &gpu, ATD_BF16, 8192, 255, &c), ATD_OK);
	cr_assert_eq(c.level, ATD_LEVEL_DERIVED, "seeds are never run as stored");
	cr_assert(strstr(c.gpu_name, "seed winners") != NULL, "%s", c.gpu_name);
	cr_assert_str_eq(c.template_name, "softmax_warp");
	cr_assert_eq(c.tuned_M, 4096, "the nearest seed in (ln M, ln N)");
	cr_assert_eq(c.tuned_N, 256);
	atd_close(h);
}

/* Every op's family has a seed model, embedded from templates/: on a GPU
 * of their compute capability the model chooses, for every op. */
Test(dispatch_open, without_a_database_an_sm_90_gpu_is_served_the_seed_models_choice)
{
	atd_handle *h;
	cr_assert_eq(atd_open(NULL, ATD_OPEN_NO_DB, &h), ATD_OK, "%s", atd_errmsg(NULL));
	atd_gpu gpu = { "Some other GPU", 9, 0, 100, 1LL << 36 };
	const atd_op ops[] = { ATD_OP_SOFTMAX, ATD_OP_LOG_SOFTMAX, ATD_OP_SOFTMAX_BACKWARD,
			       ATD_OP_LOG_SOFTMAX_BACKWARD, ATD_OP_CROSS_ENTROPY };
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		atd_choice c;
		cr_assert_eq(atd_query_op_gpu(h, ops[i], &gpu, ATD_BF16, 4096, 50000, &c), ATD_OK,
			     "op %d: %s", (int)ops[i], atd_errmsg(h));
		cr_assert_eq(c.level, ATD_LEVEL_PREDICTED, "op %d: %s", (int)ops[i],
			     atd_level_name(c.level));
		cr_assert(strstr(c.gpu_name, "seed model") != NULL, "%s", c.gpu_name);
		cr_assert(strstr(c.gpu_name, "NVIDIA H200") != NULL, "the GPU it learned: %s",
			  c.gpu_name);
	}
	/* softmax_tile's thread a row, which no seed winner names, for the tall
	 * rows of a few elements the seed winners served at a third of
	 * torch.softmax's speed (f32 1000000 x 7, H200) */
	atd_choice c;
	cr_assert_eq(atd_query_gpu(h, &gpu, ATD_F32, 1000000, 7, &c), ATD_OK, "%s", atd_errmsg(h));
	cr_assert_str_eq(c.template_name, "softmax_tile");
	cr_assert(strstr(c.params, "lanes=1 ") != NULL, "%s", c.params);
	atd_close(h);
}

Test(dispatch_open, a_missing_file_is_db_missing_and_is_not_created)
{
	const char *path = tmp_path("absent.db");
	assert_open_fails(path, ATD_ERR_DB_MISSING);
	cr_assert_neq(access(path, F_OK), 0, "atd_open created %s", path);
	assert_open_fails(tmp_path("no/such/dir/x.db"), ATD_ERR_DB_MISSING);
}

Test(dispatch_open, a_text_file_is_corrupt)
{
	const char *path = tmp_path("notes.txt");
	write_text(path, "these are not the tables you are looking for\n");
	assert_open_fails(path, ATD_ERR_DB_CORRUPT);
}

Test(dispatch_open, an_empty_file_or_a_directory_is_corrupt)
{
	const char *path = tmp_path("empty.db");
	write_text(path, "");
	assert_open_fails(path, ATD_ERR_DB_CORRUPT);
	assert_open_fails(tmp_path(""), ATD_ERR_DB_CORRUPT);
}

Test(dispatch_open, another_sqlite_database_is_corrupt)
{
	const char *path = tmp_path("other.db");
	sql_file(path, "CREATE TABLE people (name TEXT); INSERT INTO people VALUES ('ada');");
	assert_open_fails(path, ATD_ERR_DB_CORRUPT);
}

Test(dispatch_open, the_right_version_without_the_tables_is_corrupt)
{
	const char *path = tmp_path("hollow.db");
	char sql[64];
	snprintf(sql, sizeof sql, "PRAGMA user_version = %d;", TDB_SCHEMA_VERSION);
	sql_file(path, sql);
	assert_open_fails(path, ATD_ERR_DB_CORRUPT);
}

Test(dispatch_open, a_newer_schema_is_db_newer)
{
	make_db("newer.db");
	const char *path = tmp_path("newer.db");
	char sql[64];
	snprintf(sql, sizeof sql, "PRAGMA user_version = %d;", TDB_SCHEMA_VERSION + 1);
	sql_file(path, sql);
	assert_open_fails(path, ATD_ERR_DB_NEWER);
}

Test(dispatch_open, open_needs_somewhere_to_put_the_handle)
{
	cr_assert_eq(atd_open(tmp_path("x.db"), 0, NULL), ATD_ERR_INVALID_ARGUMENT);
	cr_assert_eq(atd_open(tmp_path("x.db"), ATD_OPEN_FALLBACK, NULL), ATD_ERR_INVALID_ARGUMENT);
}

Test(dispatch_open, a_good_database_serves_its_shapes)
{
	make_db("good.db");
	atd_handle *h;
	cr_assert_eq(atd_open(tmp_path("good.db"), 0, &h), ATD_OK, "%s", atd_errmsg(NULL));
	cr_assert_str_eq(atd_errmsg(h), "");
	cr_assert_eq(level_of(h, ATD_F32, 4096, 1000), ATD_LEVEL_EXACT);
	cr_assert_eq(level_of(h, ATD_F32, 4096, 2000), ATD_LEVEL_NEAREST);
	atd_close(h);
}

Test(dispatch_open, a_null_path_means_the_environment_variable)
{
	make_db("env.db");
	cr_assert_eq(setenv(TDB_PATH_ENV, tmp_path("env.db"), 1), 0);
	atd_handle *h;
	cr_assert_eq(atd_open(NULL, 0, &h), ATD_OK, "%s", atd_errmsg(NULL));
	cr_assert_eq(level_of(h, ATD_F32, 4096, 1000), ATD_LEVEL_EXACT);
	atd_close(h);
	/* A variable naming a missing file is reported with that name. */
	cr_assert_eq(setenv(TDB_PATH_ENV, tmp_path("gone.db"), 1), 0);
	cr_assert_eq(atd_open(NULL, 0, &h), ATD_ERR_DB_MISSING);
	cr_assert(strstr(atd_errmsg(NULL), "gone.db") != NULL, "%s", atd_errmsg(NULL));
}

Test(dispatch_open, a_null_path_without_the_variable_means_autotune_db_here)
{
	make_db(TDB_DEFAULT_PATH);
	cr_assert_eq(unsetenv(TDB_PATH_ENV), 0);
	cr_assert_eq(chdir(tmp_path(".")), 0);
	atd_handle *h;
	cr_assert_eq(atd_open(NULL, 0, &h), ATD_OK, "%s", atd_errmsg(NULL));
	cr_assert_eq(level_of(h, ATD_F32, 4096, 1000), ATD_LEVEL_EXACT);
	atd_close(h);
	cr_assert_eq(setenv(TDB_PATH_ENV, "", 1), 0); /* empty counts as unset */
	cr_assert_eq(atd_open(NULL, 0, &h), ATD_OK, "%s", atd_errmsg(NULL));
	atd_close(h);
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

Test(dispatch_open, a_database_of_1000_shapes_opens_in_under_20_ms, .timeout = 120)
{
	/* Realistic sizes: each winner has 30 kB of cubin and 60 kB of PTX,
	 * which open must not read, and ten losing results beside it. */
	tdb *db = td_db_new("big.db");
	long long gpu = td_gpu(db, h100.name, 9, 0, 132, h100.mem_bytes);
	long long sweep = td_sweep(db, gpu);
	static unsigned char cubin[30000];
	static char ptx[60000];
	memset(ptx, 'p', sizeof ptx - 1);
	enum { LOSERS = 10 };
	result_row rows[LOSERS + 1];
	for (int i = 0; i <= LOSERS; i++)
		rows[i] = (result_row){ .template_name = "softmax_block",
					.params = "threads=256 vec=4 unroll=1 cache_hint=0 persistent=0",
					.status = RESULT_OK, .rel_err = 1e-7, .time_us = 10 + i,
					.time_min_us = 10, .time_max_us = 20, .reps = 25, .gbps = 1000,
					.pct_copy = 30, .registers = 32, .smem_bytes = 0,
					.threads = 256, .rows_per_cta = 1, .cubin = cubin,
					.cubin_size = sizeof cubin, .ptx = ptx, .arch = 90 };
	int shapes = 0;
	for (int dt = 0; dt < 3; dt++)
		for (long long M = 1; M <= 65536 && shapes < 1000; M *= 2)
			for (long long N = 128; N < 128 + 26 * 384 && shapes < 1000; N += 384) {
				shape_key key = { gpu, "softmax", (at_dtype)dt, M, N };
				at_error err = { { 0 } };
				cr_assert_eq(tdb_store_shape(db, sweep, &key, rows, LOSERS + 1, &err), 0,
					     "%s", err.msg);
				shapes++;
			}
	tdb_close(db);
	cr_assert_eq(shapes, 1000);
	double best = 1e9;
	for (int i = 0; i < 5; i++) {
		atd_handle *h;
		double t0 = now_ms();
		cr_assert_eq(atd_open(tmp_path("big.db"), 0, &h), ATD_OK, "%s", atd_errmsg(NULL));
		double t = now_ms() - t0;
		best = t < best ? t : best;
		cr_assert_eq(level_of(h, ATD_F32, 4096, 128), ATD_LEVEL_EXACT);
		atd_close(h);
	}
	cr_log_info("atd_open of 1000 shapes: %.2f ms", best);
	cr_assert_lt(best, 20.0, "atd_open took %.2f ms", best);
}

typedef struct log_record {
	int calls;
	atd_log_level level;
	char text[1024];
} log_record;

static void record(void *user, atd_log_level level, const char *message)
{
	log_record *r = user;
	r->calls++;
	r->level = level;
	snprintf(r->text, sizeof r->text, "%s", message);
}

Test(dispatch_open, the_fallback_reason_goes_to_the_first_log_callback_once)
{
	atd_handle *h;
	cr_assert_eq(atd_open(tmp_path("absent.db"), ATD_OPEN_FALLBACK, &h), ATD_OK);
	log_record r = { 0 };
	atd_set_log(h, record, &r);
	cr_assert_eq(r.calls, 1);
	cr_assert_eq(r.level, ATD_LOG_WARNING);
	cr_assert(strstr(r.text, "absent.db") != NULL, "%s", r.text);
	atd_set_log(h, NULL, NULL);
	atd_set_log(h, record, &r);
	cr_assert_eq(r.calls, 1);
	atd_close(h);
	/* A good database has nothing to say. */
	make_db("good.db");
	cr_assert_eq(atd_open(tmp_path("good.db"), ATD_OPEN_FALLBACK, &h), ATD_OK);
	atd_set_log(h, record, &r);
	cr_assert_eq(r.calls, 1);
	atd_set_log(NULL, record, &r); /* harmless */
	atd_close(h);
}

/* ATD_OPEN_NO_DB opens nothing, whatever the path: a database's exact
 * winner is not served, and nothing is warned about. */
Test(dispatch_open, no_db_ignores_the_path_and_warns_of_nothing)
{
	make_db("one.db");
	const char *path = tmp_path("one.db");
	atd_handle *h;
	cr_assert_eq(atd_open(path, 0, &h), ATD_OK, "%s", atd_errmsg(NULL));
	cr_assert_eq(level_of(h, ATD_F32, 4096, 1000), ATD_LEVEL_EXACT);
	atd_close(h);
	cr_assert_eq(atd_open(path, ATD_OPEN_NO_DB, &h), ATD_OK, "%s", atd_errmsg(NULL));
	cr_assert_eq(level_of(h, ATD_F32, 4096, 1000), ATD_LEVEL_PREDICTED);
	cr_assert_str_eq(atd_errmsg(h), "", "nothing went wrong");
	log_record r = { 0 };
	atd_set_log(h, record, &r);
	cr_assert_eq(r.calls, 0, "nothing to warn about, no database was asked for: %s", r.text);
	atd_close(h);
}

/* A winner whose kernel a merge or export lost is never served, and never
 * left out in silence: the message and the first log callback name its
 * shape (each such shape is warned about again at its first call, which
 * needs a GPU: atdi_select_missing is what that call looks up). */
Test(dispatch_open, a_winner_without_its_kernel_is_named_to_the_first_log_callback)
{
	tdb *db = td_db_new("lost.db");
	long long gpu = td_gpu(db, h100.name, 9, 0, 132, h100.mem_bytes);
	long long sweep = td_sweep(db, gpu);
	td_shape(db, sweep, gpu, "softmax", AT_F32, 4096, 1000, "tuned", "", 1, 0);
	long long lost = td_shape(db, sweep, gpu, "softmax", AT_F16, 8, 1100, "softmax_block",
				  "threads=128", 1, 0);
	tdb_close(db);
	char sql[128];
	snprintf(sql, sizeof sql, "DELETE FROM kernels WHERE result_id = %lld", lost);
	sql_file(tmp_path("lost.db"), sql);
	char says[256];
	snprintf(says, sizeof says,
		 "f16 M=8 N=1100 on NVIDIA H100 80GB HBM3 (softmax_block threads=128, result %lld)",
		 lost);

	atd_handle *h;
	cr_assert_eq(atd_open(tmp_path("lost.db"), 0, &h), ATD_OK, "%s", atd_errmsg(NULL));
	cr_assert(strstr(atd_errmsg(h), says) != NULL, "%s", atd_errmsg(h));
	log_record r = { 0 };
	atd_set_log(h, record, &r);
	cr_assert_eq(r.calls, 1);
	cr_assert_eq(r.level, ATD_LOG_WARNING);
	cr_assert(strstr(r.text, "lost.db: 1 tuned winner has no stored kernel") != NULL, "%s",
		  r.text);
	cr_assert(strstr(r.text, says) != NULL, "%s", r.text);
	atd_set_log(h, NULL, NULL);
	atd_set_log(h, record, &r);
	cr_assert_eq(r.calls, 1, "said once");
	cr_assert_neq(level_of(h, ATD_F16, 8, 1100), ATD_LEVEL_EXACT);
	cr_assert_eq(level_of(h, ATD_F32, 4096, 1000), ATD_LEVEL_EXACT);
	atd_close(h);

	sqlite3 *s;
	char msg[512];
	cr_assert_eq(atdi_db_open(tmp_path("lost.db"), &s, msg, sizeof msg), ATD_OK, "%s", msg);
	atdi_table t;
	cr_assert_eq(atdi_db_load(s, "lost.db", &t, msg, sizeof msg), ATD_OK, "%s", msg);
	sqlite3_close(s);
	cr_assert_eq(t.nentries, 1);
	cr_assert_eq(t.nmissing, 1);
	const atdi_missing *m = atdi_select_missing(&t, &h100, ATDI_SOFTMAX, AT_F16, 8, 1100);
	cr_assert_not_null(m);
	cr_assert_eq(m->result_id, lost);
	cr_assert_null(atdi_select_missing(&t, &h100, ATDI_SOFTMAX, AT_F16, 8, 1000), "another shape");
	cr_assert_null(atdi_select_missing(&t, &h100, ATDI_SOFTMAX, AT_F32, 8, 1100), "another dtype");
	atd_gpu other = h100;
	other.sm_count = 114;
	cr_assert_null(atdi_select_missing(&t, &other, ATDI_SOFTMAX, AT_F16, 8, 1100), "another GPU model");
	atdi_table_free(&t);
}

Test(dispatch_open, close_of_null_is_harmless)
{
	atd_close(NULL);
}

static int have_libcuda(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (lib)
		dlclose(lib);
	return lib != NULL;
}

Test(dispatch_open, softmax_rejects_each_bad_argument_before_the_driver)
{
	atd_handle *h;
	cr_assert_eq(atd_open(tmp_path("absent.db"), ATD_OPEN_FALLBACK, &h), ATD_OK);
	char dev_x[16], dev_y[16]; /* never dereferenced: every call fails first */
	void *y = dev_y;
	const void *x = dev_x;
	const struct {
		atd_handle *h;
		int dt;
		void *y;
		const void *x;
		int64_t M, N, ldy, ldx;
		const char *says;
	} bad[] = {
		{ NULL, ATD_F32, y, x, 4, 8, 8, 8, NULL },
		{ h, ATD_F32, NULL, x, 4, 8, 8, 8, "y is NULL" },
		{ h, ATD_F32, y, NULL, 4, 8, 8, 8, "x is NULL" },
		{ h, ATD_F32, y, x, 0, 8, 8, 8, "M = 0" },
		{ h, ATD_F32, y, x, -1, 8, 8, 8, "M = -1" },
		{ h, ATD_F32, y, x, 4, 0, 8, 8, "N = 0" },
		{ h, ATD_F32, y, x, 4, -8, 8, 8, "N = -8" },
		{ h, ATD_F32, y, x, 4, 8, 8, 7, "ldx = 7" },
		{ h, ATD_F32, y, x, 4, 8, 7, 8, "ldy = 7" },
		{ h, 3, y, x, 4, 8, 8, 8, "dtype 3" },
		{ h, -1, y, x, 4, 8, 8, 8, "dtype -1" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		atd_status s = atd_softmax(bad[i].h, (atd_dtype)bad[i].dt, bad[i].y, bad[i].x,
					   bad[i].M, bad[i].N, bad[i].ldy, bad[i].ldx, NULL);
		cr_assert_eq(s, ATD_ERR_INVALID_ARGUMENT, "case %zu: %s", i, atd_status_string(s));
		if (bad[i].says)
			cr_assert(strstr(atd_errmsg(h), bad[i].says) != NULL, "case %zu: %s", i,
				  atd_errmsg(h));
	}
	atd_close(h);
}

Test(dispatch_open, without_a_driver_softmax_and_query_say_no_driver)
{
	atd_handle *h;
	cr_assert_eq(atd_open(tmp_path("absent.db"), ATD_OPEN_FALLBACK, &h), ATD_OK);
	char dev[16];
	atd_choice c;
	atd_status s = atd_softmax(h, ATD_F32, dev, dev, 4, 8, 8, 8, NULL);
	atd_status q = atd_query(h, ATD_F32, 4, 8, &c);
	if (!have_libcuda()) {
		cr_assert_eq(s, ATD_ERR_NO_DRIVER, "%s", atd_status_string(s));
		cr_assert_eq(q, ATD_ERR_NO_DRIVER, "%s", atd_status_string(q));
		cr_assert(strstr(atd_errmsg(h), "libcuda.so.1") != NULL, "%s", atd_errmsg(h));
	} else {
		/* A driver but no current context (or no GPU): still no launch. */
		cr_assert(s == ATD_ERR_NO_CONTEXT || s == ATD_ERR_NO_DRIVER, "%s", atd_status_string(s));
		cr_assert(q == ATD_ERR_NO_CONTEXT || q == ATD_ERR_NO_DRIVER, "%s", atd_status_string(q));
	}
	cr_assert_eq(atd_query(h, ATD_F32, 4, 8, NULL), ATD_ERR_INVALID_ARGUMENT);
	cr_assert_eq(atd_query(NULL, ATD_F32, 4, 8, &c), ATD_ERR_INVALID_ARGUMENT);
	atd_close(h);
}

Test(dispatch_open, every_status_has_its_string)
{
#define CHECK_STATUS(name, value, text) cr_assert_str_eq(atd_status_string(name), text);
	ATD_STATUS_LIST(CHECK_STATUS)
#undef CHECK_STATUS
	cr_assert_str_eq(atd_status_string(ATD_OK), "success");
	cr_assert_str_eq(atd_status_string(ATD_ERR_NO_KERNEL), "no kernel can serve this call");
	cr_assert_str_eq(atd_status_string(ATD_ERR_TARGET),
			 "a target is outside [0, V) and not ignore_index");
	cr_assert_str_eq(atd_status_string((atd_status)12), "unknown status");
	cr_assert_str_eq(atd_status_string((atd_status)-1), "unknown status");
	cr_assert_str_eq(atd_level_name(ATD_LEVEL_EXACT), "exact");
	cr_assert_str_eq(atd_level_name(ATD_LEVEL_NEAREST), "nearest");
	cr_assert_str_eq(atd_level_name(ATD_LEVEL_SAME_ARCH), "same-arch");
	cr_assert_str_eq(atd_level_name(ATD_LEVEL_BUILTIN), "built-in");
	cr_assert_str_eq(atd_level_name((atd_level)0), "?");
	cr_assert_str_eq(atd_level_name(ATD_LEVEL_DERIVED), "derived");
	cr_assert_str_eq(atd_level_name(ATD_LEVEL_TUNED), "tuned online");
	cr_assert_str_eq(atd_level_name(ATD_LEVEL_PREDICTED), "predicted");
	cr_assert_str_eq(atd_level_name((atd_level)8), "?");
}

Test(dispatch_open, the_library_version_is_the_header_version)
{
	cr_assert_eq(atd_version_number(), ATD_VERSION_NUMBER);
	cr_assert_str_eq(atd_version(), ATD_VERSION_STRING);
	char v[32];
	snprintf(v, sizeof v, "%d.%d.%d", ATD_VERSION_MAJOR, ATD_VERSION_MINOR, ATD_VERSION_PATCH);
	cr_assert_str_eq(v, ATD_VERSION_STRING);
}
