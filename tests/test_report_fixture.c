/* Helpers for the report tests (no tests here; see
 * tests/test_report_fixture.h): a tuning database written through the
 * tuner's own writer (db/tuning_db.h) with two dtypes, several N at two M,
 * variants that pass, tie and fail, naive and cuDNN baselines, a shape where
 * nothing passed, and hostile strings (template, params, reason, config)
 * that must come out escaped; and small text helpers to take the written
 * page apart. */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/tuning_db.h"

#include "tests/test_report_fixture.h"

/* The hostile strings stored in the database. */
#define RF_HOSTILE_TEMPLATE "<script>alert(\"tmpl\")</script>&'"
#define RF_HOSTILE_PARAMS "threads=<script>&\"' vec=4"
#define RF_HOSTILE_REASON "<script>alert('reason')</script> & \"quoted\""

static const double copy_gbps = 3000;

/* A timed variant (or baseline) at shape M x N of dtype size bytes. */
static result_row timed(const char *tmpl, const char *params, double us, double min, double max,
			long long M, long long N, size_t size, int regs)
{
	double gbps = 2.0 * (double)M * (double)N * (double)size / (us * 1e-6) / 1e9;
	return (result_row){ .template_name = tmpl, .params = params, .status = RESULT_OK,
			     .rel_err = 1e-7, .time_us = us, .time_min_us = min,
			     .time_max_us = max, .reps = 25, .gbps = gbps,
			     .pct_copy = gbps / copy_gbps * 100, .registers = regs,
			     .smem_bytes = 128, .spill_bytes = 0, .threads = 128,
			     .rows_per_cta = 1 };
}

static result_row baseline(const char *tmpl, double us, long long M, long long N, size_t size)
{
	result_row r = timed(tmpl, "", us, us * 0.98, us * 1.02, M, N, size, -1);
	r.baseline = 1;
	r.smem_bytes = r.spill_bytes = -1;
	return r;
}

static result_row failed(const char *tmpl, const char *params, result_status st,
			 const char *reason)
{
	return (result_row){ .template_name = tmpl, .params = params, .status = st,
			     .reason = reason, .rel_err = -1, .registers = -1, .smem_bytes = -1,
			     .spill_bytes = -1 };
}

/* Stores a shape with the noise band the sweep would have measured (0:
 * none stored, as after `db merge`). */
static void store(tdb *db, long long sweep, long long gpu, at_dtype dt, long long M,
		  long long N, double band, const result_row *rows, size_t n)
{
	shape_key key = { .gpu_id = gpu, .op = "softmax", .dtype = dt, .M = M, .N = N };
	at_error err = { { 0 } };
	cr_assert_eq(tdb_store_shape_band(db, sweep, &key, rows, n, band, &err), 0, "%s", err.msg);
}

#define STORE(db, sweep, gpu, dt, M, N, band, ...)                                        \
	do {                                                                               \
		const result_row rows_[] = { __VA_ARGS__ };                                \
		store(db, sweep, gpu, dt, M, N, band, rows_, sizeof rows_ / sizeof *rows_); \
	} while (0)

static tdb *open_new(const char *name, long long *gpu, long long *sweep)
{
	tdb *db;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_open(tmp_path(name), &db, &err), 0, "%s", err.msg);
	sqlite3_exec(tdb_handle(db), "PRAGMA synchronous = OFF", NULL, NULL, NULL);
	gpu_info g = { "NVIDIA H100 80GB HBM3", 9, 0, 132, 85017493504LL };
	cr_assert_eq(tdb_gpu_id(db, &g, gpu, &err), 0, "%s", err.msg);
	sweep_info s = { .gpu_id = *gpu, .driver_version = 13000, .nvrtc_version = "13.0",
			 .tool_version = "0.1.0", .config_path = "configs/<evil>&.yaml",
			 .config_text = "# </pre><script>alert('config')</script>\nsweeps: []\n",
			 .copy_gbps = copy_gbps };
	cr_assert_eq(tdb_sweep_begin(db, &s, sweep, &err), 0, "%s", err.msg);
	return db;
}

/* f32 at M = 64 (N = 256, 1024, 4096) and M = 128 (N = 512); f16 at M = 64
 * (N = 1024, 2048); bf16 at M = 8, N = 3 where nothing passed.
 *
 * Ties (the rule: within the shape's noise band of the fastest variant,
 * 1% when none was stored):
 *   f32 64x256: band 2%, winner 10.0 us: 10.15 ties (it has more registers,
 *     so it did not win), 10.30 does not.
 *   f32 64x1024: no band stored, so 1%: 20.19 ties, 20.21 does not.
 *   f32 64x4096: band 0.8%, winner 50.0 us whose own spread is 25%: 55.0
 *     and 60.0 are no ties (the winner's spread is not the band). */
void rf_make_db(const char *name)
{
	long long gpu, sweep;
	tdb *db = open_new(name, &gpu, &sweep);
	STORE(db, sweep, gpu, AT_F32, 64, 256, 0.02,
	      timed("softmax_block", "threads=128 vec=4", 10.0, 9.9, 10.1, 64, 256, 4, 32),
	      timed("softmax_block", "threads=256 vec=4", 10.15, 10.0, 10.4, 64, 256, 4, 34),
	      timed("softmax_block", "threads=64 vec=4", 10.30, 10.2, 10.5, 64, 256, 4, 28),
	      timed("softmax_block", "threads=128 vec=2", 12.0, 11.9, 12.2, 64, 256, 4, 26),
	      failed("softmax_block", "threads=1024 vec=4", RESULT_COMPILE_FAILED,
		     "nvrtc: too many resources requested"),
	      failed(RF_HOSTILE_TEMPLATE, RF_HOSTILE_PARAMS, RESULT_CHECK_FAILED,
		     RF_HOSTILE_REASON),
	      baseline("naive", 40.0, 64, 256, 4), baseline("cudnn", 11.0, 64, 256, 4));
	STORE(db, sweep, gpu, AT_F32, 64, 1024, 0,
	      timed("softmax_block", "threads=256 vec=4", 20.0, 20.0, 20.0, 64, 1024, 4, 40),
	      timed("softmax_block", "threads=128 vec=4", 20.19, 20.1, 20.3, 64, 1024, 4, 40),
	      timed("softmax_block", "threads=512 vec=4", 20.21, 20.1, 20.3, 64, 1024, 4, 40),
	      timed(RF_HOSTILE_TEMPLATE, RF_HOSTILE_PARAMS, 25.0, 24.0, 26.0, 64, 1024, 4, 50),
	      baseline("naive", 80.0, 64, 1024, 4));
	STORE(db, sweep, gpu, AT_F32, 64, 4096, 0.008,
	      timed("softmax_block", "threads=256 vec=4", 50.0, 45.0, 57.5, 64, 4096, 4, 40),
	      timed("softmax_block", "threads=512 vec=4", 55.0, 54.0, 56.0, 64, 4096, 4, 40),
	      timed("softmax_block", "threads=256 vec=2", 60.0, 59.0, 61.0, 64, 4096, 4, 40),
	      failed("softmax_block", "threads=1024 vec=2", RESULT_LAUNCH_FAILED,
		     "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"),
	      baseline("naive", 200.0, 64, 4096, 4), baseline("cudnn", 52.0, 64, 4096, 4));
	STORE(db, sweep, gpu, AT_F32, 128, 512, 0.01,
	      timed("softmax_warp", "threads=128 lanes=32", 8.0, 7.9, 8.1, 128, 512, 4, 24));
	STORE(db, sweep, gpu, AT_F16, 64, 1024, 0.01,
	      timed("softmax_block", "threads=128 vec=8", 15.0, 14.9, 15.1, 64, 1024, 2, 30),
	      timed("softmax_block", "threads=256 vec=8", 16.0, 15.9, 16.1, 64, 1024, 2, 30),
	      baseline("naive", 60.0, 64, 1024, 2), baseline("cudnn", 18.0, 64, 1024, 2));
	STORE(db, sweep, gpu, AT_F16, 64, 2048, 0.01,
	      timed("softmax_block", "threads=256 vec=8", 25.0, 24.9, 25.1, 64, 2048, 2, 30),
	      timed("softmax_block", "threads=128 vec=8", 27.0, 26.9, 27.1, 64, 2048, 2, 30),
	      baseline("naive", 90.0, 64, 2048, 2), baseline("cudnn", 30.0, 64, 2048, 2));
	STORE(db, sweep, gpu, AT_BF16, 8, 3, 0.01,
	      failed("softmax_block", "threads=64 vec=8", RESULT_CHECK_FAILED,
		     "relative L2 error 1.2 > 0.01"));
	at_error err = { { 0 } };
	cr_assert_eq(tdb_sweep_finish(db, sweep, 12.5, 30.5, &err), 0, "%s", err.msg);
	tdb_close(db);
}

/* A tuning database with a GPU and a sweep but no results. */
void rf_make_empty_db(const char *name)
{
	long long gpu, sweep;
	tdb_close(open_new(name, &gpu, &sweep));
}

/* A copy of text from the first `start` to the next `end` after it (both
 * included); fails the test if either is missing. */
char *rf_between(const char *text, const char *start, const char *end)
{
	const char *a = strstr(text, start);
	cr_assert_not_null(a, "\"%s\" not found", start);
	const char *b = strstr(a + strlen(start), end);
	cr_assert_not_null(b, "\"%s\" not found after \"%s\"", end, start);
	size_t n = (size_t)(b - a) + strlen(end);
	char *s = malloc(n + 1);
	cr_assert_not_null(s);
	memcpy(s, a, n);
	s[n] = '\0';
	return s;
}

size_t rf_count(const char *text, const char *needle)
{
	size_t n = 0;
	for (const char *p = strstr(text, needle); p; p = strstr(p + strlen(needle), needle))
		n++;
	return n;
}

size_t rf_points_of(const char *html, const char *svg_id, const char *key)
{
	char start[96], series[96];
	snprintf(start, sizeof start, "<svg id=\"%s\"", svg_id);
	snprintf(series, sizeof series, "<g class=\"series\" data-series=\"%s\">", key);
	char *svg = rf_between(html, start, "</svg>");
	size_t n = 0;
	if (strstr(svg, series)) {
		char *g = rf_between(svg, series, "</g>");
		n = rf_count(g, "<circle class=\"pt\"");
		cr_assert_eq(rf_count(g, "<title>"), n, "a point without its <title>");
		free(g);
	}
	free(svg);
	return n;
}
