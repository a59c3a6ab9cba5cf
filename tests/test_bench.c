/* Tests of `autotune bench` without a GPU: the goals per row, the table
 * and CSV read back from a database built here through the tuner's own
 * writer, the dtype subset of a config handed to the sweep, the benchmark
 * config itself, and the command line (usage errors, no GPU, --report-only). */
#include <criterion/criterion.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/tuning_db.h"
#include "tuner/bench/bench_goals.h"
#include "tuner/bench/bench_report.h"
#include "tuner/cli/config_subset.h"

#include "tests/test_run_fixture.h"

TestSuite(bench_goals);
TestSuite(bench_report, .init = tmp_setup, .fini = tmp_teardown);
TestSuite(bench_cli, .init = tmp_setup, .fini = tmp_teardown);

static bench_row row(at_dtype dt, long long M, long long N, const char *tmpl, double gbps,
		     double pct)
{
	return (bench_row){ .dtype = dt, .M = M, .N = N, .tuned = 1, .template_name = (char *)tmpl,
			    .params = (char *)"", .gbps = gbps, .pct_copy = pct };
}

/* ---- goals ------------------------------------------------------------------- */

Test(bench_goals, bandwidth_needs_256_mib_moved)
{
	char target[96];
	/* f32 4096 x 8192 moves exactly 256 MiB: the goal applies, 95% is enough */
	bench_row r = row(AT_F32, 4096, 8192, "t", 2850, 95.0);
	cr_assert_eq(bench_bandwidth_goal(&r, target, sizeof target), GOAL_MET);
	cr_assert_str_eq(target, ">= 95% of copy");
	r.pct_copy = 94.99;
	cr_assert_eq(bench_bandwidth_goal(&r, target, sizeof target), GOAL_MISSED);
	/* the same shape in bf16 moves 128 MiB: no goal, however slow */
	r = row(AT_BF16, 4096, 8192, "t", 10, 0.3);
	cr_assert_eq(bench_bandwidth_goal(&r, target, sizeof target), GOAL_NA);
	cr_assert_str_eq(target, "");
}

Test(bench_goals, long_rows_need_85_percent)
{
	char target[96];
	bench_row r = row(AT_F32, 64, 524288, "t", 2600, 85.0);
	cr_assert_eq(bench_bandwidth_goal(&r, target, sizeof target), GOAL_MET);
	cr_assert_str_eq(target, ">= 85% of copy");
	r.pct_copy = 84.9;
	cr_assert_eq(bench_bandwidth_goal(&r, target, sizeof target), GOAL_MISSED);
	/* N = 262144 is still held to 95% */
	r = row(AT_F32, 4096, 262144, "t", 2700, 90.0);
	cr_assert_eq(bench_bandwidth_goal(&r, target, sizeof target), GOAL_MISSED);
	cr_assert_str_eq(target, ">= 95% of copy");
}

Test(bench_goals, f32_8_rows_of_1m_need_900_gbps)
{
	char target[96];
	bench_row r = row(AT_F32, 8, 1048576, "t", 900, 30);
	cr_assert_eq(bench_bandwidth_goal(&r, target, sizeof target), GOAL_MET);
	cr_assert_str_eq(target, ">= 900 GB/s");
	r.gbps = 899.9;
	cr_assert_eq(bench_bandwidth_goal(&r, target, sizeof target), GOAL_MISSED);
	/* only f32, only M = 8 */
	r = row(AT_BF16, 8, 1048576, "t", 100, 3);
	cr_assert_eq(bench_bandwidth_goal(&r, target, sizeof target), GOAL_NA);
	r = row(AT_F32, 32, 1048576, "t", 100, 3); /* 256 MiB: the copy goal instead */
	cr_assert_eq(bench_bandwidth_goal(&r, target, sizeof target), GOAL_MISSED);
	cr_assert_str_eq(target, ">= 85% of copy");
}

Test(bench_goals, no_winner_misses_every_goal_that_applies)
{
	char target[96], detail[96];
	bench_row r = row(AT_F32, 4096, 65536, NULL, 0, 0);
	cr_assert_eq(bench_bandwidth_goal(&r, target, sizeof target), GOAL_MISSED);
	r.cudnn_gbps = 100;
	cr_assert_eq(bench_baseline_goal(&r, detail, sizeof detail), GOAL_MISSED);
	cr_assert_str_eq(detail, "no variant passed");
}

Test(bench_goals, baselines)
{
	char detail[96];
	bench_row r = row(AT_F32, 4096, 1024, "t", 2000, 66);
	cr_assert_eq(bench_baseline_goal(&r, detail, sizeof detail), GOAL_NA); /* none timed */
	r.naive_gbps = 400;
	cr_assert_eq(bench_baseline_goal(&r, detail, sizeof detail), GOAL_MET);
	r.cudnn_gbps = 2000; /* as fast is not slower */
	cr_assert_eq(bench_baseline_goal(&r, detail, sizeof detail), GOAL_MET);
	cr_assert_str_eq(detail, "");
	r.cudnn_gbps = 2100;
	cr_assert_eq(bench_baseline_goal(&r, detail, sizeof detail), GOAL_MISSED);
	cr_assert_str_eq(detail, "cuDNN faster: 2100 GB/s");
	r.naive_gbps = 2500; /* the fastest of the two is named */
	cr_assert_eq(bench_baseline_goal(&r, detail, sizeof detail), GOAL_MISSED);
	cr_assert_str_eq(detail, "naive faster: 2500 GB/s");
}

Test(bench_goals, tally_counts_only_goals_that_apply)
{
	bench_tally t = { 0 };
	bench_tally_add(&t, GOAL_MET, GOAL_NA);
	bench_tally_add(&t, GOAL_MISSED, GOAL_MET);
	bench_tally_add(&t, GOAL_NA, GOAL_MISSED);
	cr_assert_eq(t.bandwidth_met, 1);
	cr_assert_eq(t.bandwidth_total, 2);
	cr_assert_eq(t.baseline_met, 1);
	cr_assert_eq(t.baseline_total, 2);
}

/* ---- the table from a database ------------------------------------------------ */

static const gpu_info h100 = { "NVIDIA H100 80GB HBM3", 9, 0, 132, 85017755648LL };

static result_row variant(const char *tmpl, const char *params, double gbps, double pct)
{
	return (result_row){ .template_name = tmpl, .params = params, .status = RESULT_OK,
			     .rel_err = 1e-7, .time_us = 100, .time_min_us = 99, .time_max_us = 101,
			     .reps = 25, .gbps = gbps, .pct_copy = pct, .registers = 32,
			     .threads = 512, .rows_per_cta = 1 };
}

static result_row baseline(const char *name, double gbps)
{
	return (result_row){ .baseline = 1, .template_name = name, .params = "",
			     .status = RESULT_OK, .rel_err = -1, .time_us = 100, .time_min_us = 99,
			     .time_max_us = 101, .reps = 25, .gbps = gbps, .pct_copy = gbps / 30,
			     .registers = -1, .smem_bytes = -1, .spill_bytes = -1 };
}

static void store(tdb *db, long long gid, long long sid, at_dtype dt, long long M, long long N,
		  const result_row *rows, size_t n)
{
	at_error err = { { 0 } };
	shape_key k = { gid, "softmax", dt, M, N };
	cr_assert_eq(tdb_store_shape(db, sid, &k, rows, n, &err), 0, "%s", err.msg);
}

/* Two sweeps on one GPU (and one shape of another GPU): the first tuned
 * f32 4096x65536 with a fast cuDNN, the second tuned it again (its
 * baselines are the ones to report) and five more shapes. */
static void make_db(const char *path)
{
	tdb *db;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_open(path, &db, &err), 0, "%s", err.msg);
	long long gid, other, sa, sb, so;
	cr_assert_eq(tdb_gpu_id(db, &h100, &gid, &err), 0, "%s", err.msg);
	gpu_info a100 = { "NVIDIA A100-SXM4-40GB", 8, 0, 108, 42298834944LL };
	cr_assert_eq(tdb_gpu_id(db, &a100, &other, &err), 0, "%s", err.msg);
	sweep_info info = { gid, 13000, "13.0", "0.1.0", "configs/bench.yaml", "", 3000.0 };
	cr_assert_eq(tdb_sweep_begin(db, &info, &sa, &err), 0, "%s", err.msg);
	cr_assert_eq(tdb_sweep_begin(db, &info, &sb, &err), 0, "%s", err.msg);
	sweep_info oinfo = { other, 13000, "13.0", "0.1.0", "configs/bench.yaml", "", 1500.0 };
	cr_assert_eq(tdb_sweep_begin(db, &oinfo, &so, &err), 0, "%s", err.msg);

	result_row old[] = { variant("softmax_block", "threads=1024 vec=4", 2400, 80),
			     baseline("naive", 400), baseline("cudnn", 5000), baseline("copy", 3100) };
	store(db, gid, sa, AT_F32, 4096, 65536, old, 4);
	result_row s1[] = { variant("softmax_online", "threads=512 vec=4", 2900, 96.6667),
			    baseline("naive", 410), baseline("cudnn", 2800), baseline("copy", 2950) };
	store(db, gid, sb, AT_F32, 4096, 65536, s1, 4);
	result_row s2[] = { variant("softmax_smem", "threads=512 vec=8", 2500, 83.3333),
			    baseline("naive", 300), baseline("cudnn", 2600), baseline("copy", 2700) };
	store(db, gid, sb, AT_BF16, 4096, 8192, s2, 4);
	result_row s3[] = { variant("softmax_split", "threads=512 vec=4", 2520, 84.0),
			    baseline("naive", 500), baseline("cudnn", 2400) };
	store(db, gid, sb, AT_F32, 1024, 524288, s3, 3);
	result_row s4[] = { variant("softmax_split", "threads=1024 vec=4", 950, 31.6667) };
	store(db, gid, sb, AT_F32, 8, 1048576, s4, 1);
	result_row failed = variant("softmax_online", "threads=256 vec=8", 0, 0);
	failed.status = RESULT_CHECK_FAILED;
	failed.reason = "relative L2 error 1 exceeds 1e-02";
	failed.time_us = 0;
	result_row s5[] = { failed, baseline("naive", 350), baseline("cudnn", 2700) };
	store(db, gid, sb, AT_F16, 16384, 50257, s5, 3);
	/* another GPU's result for the first shape must not leak in */
	result_row foreign[] = { variant("softmax_warp", "x", 1, 1), baseline("cudnn", 9999) };
	store(db, other, so, AT_F32, 4096, 65536, foreign, 2);
	tdb_close(db);
}

static const sweep_shape shapes[] = {
	{ "softmax", AT_F32, 4096, 65536, NULL },  { "softmax", AT_BF16, 4096, 8192, NULL },
	{ "softmax", AT_F32, 1024, 524288, NULL }, { "softmax", AT_F32, 8, 1048576, NULL },
	{ "softmax", AT_F16, 16384, 50257, NULL }, { "softmax", AT_F32, 64, 524288, NULL },
};
#define NSHAPES (sizeof shapes / sizeof shapes[0])

static const char expected_csv[] =
	"dtype,M,N,MiB,template,params,gbps,pct_copy,pct_same_size_copy,naive_gbps,cudnn_gbps,"
	"goal,target,vs_baselines\n"
	"f32,4096,65536,2048.0,softmax_online,threads=512 vec=4,2900,96.7,98.3,410,2800,met,"
	">= 95% of copy,met\n"
	"bf16,4096,8192,128.0,softmax_smem,threads=512 vec=8,2500,83.3,92.6,300,2600,n/a,,"
	"missed (cuDNN faster: 2600 GB/s)\n"
	"f32,1024,524288,4096.0,softmax_split,threads=512 vec=4,2520,84.0,,500,2400,missed,"
	">= 85% of copy,met\n"
	"f32,8,1048576,64.0,softmax_split,threads=1024 vec=4,950,31.7,,,,met,>= 900 GB/s,n/a\n"
	"f16,16384,50257,3141.1,(none passed),,,,,350,2700,missed,>= 95% of copy,"
	"missed (no variant passed)\n"
	"f32,64,524288,256.0,(not tuned),,,,,,,missed,>= 85% of copy,n/a\n";

static const char expected_summary[] =
	"goals met: 4 of 9 (bandwidth: 2 of 5; not slower than naive and cuDNN: 2 of 4)";

Test(bench_report, table_csv_and_goals_from_a_database)
{
	make_db(tmp_path("b.db"));
	tdb *db;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_open_readonly(tmp_path("b.db"), &db, &err), 0, "%s", err.msg);
	long long gid = -1;
	cr_assert_eq(bench_find_gpu(db, &h100, &gid, &err), 1, "%s", err.msg);
	bench_row *rows;
	cr_assert_eq(bench_collect(db, gid, shapes, NSHAPES, &rows, &err), 0, "%s", err.msg);
	/* the second sweep's baselines, not the first's nor another GPU's */
	cr_assert_float_eq(rows[0].cudnn_gbps, 2800, 1e-9);
	cr_assert_float_eq(rows[0].same_copy_gbps, 2950, 1e-9);
	cr_assert_eq(rows[5].tuned, 0);
	cr_assert_eq(rows[4].tuned, 1);
	cr_assert_null(rows[4].template_name);
	table t;
	bench_tally tally;
	bench_table(rows, NSHAPES, &t, &tally);
	bench_rows_free(rows, NSHAPES);
	cr_assert_eq(bench_write_csv(&t, tmp_path("out.csv"), &err), 0, "%s", err.msg);
	char *csv = tmp_read(tmp_path("out.csv"));
	cr_assert_str_eq(csv, expected_csv, "\n--- got:\n%s--- want:\n%s", csv, expected_csv);
	free(csv);
	char summary[256];
	bench_summary(&tally, summary, sizeof summary);
	cr_assert_str_eq(summary, expected_summary);
	table_free(&t);
	tdb_close(db);
}

Test(bench_report, gpu_lookup)
{
	make_db(tmp_path("b.db"));
	tdb *db;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_open_readonly(tmp_path("b.db"), &db, &err), 0, "%s", err.msg);
	gpu_info other = h100;
	other.sm_count = 114; /* an H100 PCIe is another GPU */
	long long id;
	cr_assert_eq(bench_find_gpu(db, &other, &id, &err), 0);
	gpu_info only;
	cr_assert_eq(bench_only_gpu(db, &only, &id, &err), -1);
	cr_assert(strstr(err.msg, "results of 2 GPUs"), "%s", err.msg);
	tdb_close(db);
}

Test(bench_report, csv_to_a_missing_folder_fails_and_says_where)
{
	table t;
	static const char *const header[] = { "a", NULL };
	table_init(&t, header);
	at_error err = { { 0 } };
	cr_assert_eq(bench_write_csv(&t, tmp_path("no/such/dir/x.csv"), &err), -1);
	cr_assert(strstr(err.msg, "no/such/dir/x.csv"), "%s", err.msg);
	table_free(&t);
}

Test(bench_report, gpu_slug)
{
	char buf[64];
	bench_gpu_slug("NVIDIA H100 80GB HBM3", buf, sizeof buf);
	cr_assert_str_eq(buf, "nvidia-h100-80gb-hbm3");
	bench_gpu_slug("NVIDIA A100-SXM4-40GB", buf, sizeof buf);
	cr_assert_str_eq(buf, "nvidia-a100-sxm4-40gb");
	bench_gpu_slug(" /../ ", buf, sizeof buf);
	cr_assert_str_eq(buf, "gpu");
	bench_gpu_slug("ABCDEFGHIJ", buf, 6); /* cut, still terminated */
	cr_assert_str_eq(buf, "abcd");
}

/* ---- the config ------------------------------------------------------------------- */

Test(bench_report, the_benchmark_config_has_the_issue_s_shapes)
{
	sweep_config cfg;
	at_error err = { { 0 } };
	cr_assert_eq(config_load("configs/bench.yaml", &cfg, &err), 0, "%s", err.msg);
	sweep_shape *s;
	size_t n;
	cr_assert_eq(config_shapes(&cfg, &s, &n, &err), 0, "%s", err.msg);
	static const long long long_rows[][2] = { { 16384, 50257 }, { 65536, 512 },
						  { 64, 524288 },   { 64, 1048576 },
						  { 1024, 524288 }, { 1024, 1048576 },
						  { 8, 262144 },    { 8, 1048576 },
						  { 32, 262144 },   { 32, 1048576 } };
	size_t at_4096[AT_DTYPE_COUNT] = { 0 }, others[AT_DTYPE_COUNT] = { 0 };
	for (size_t i = 0; i < n; i++) {
		long long N = s[i].N;
		if (s[i].M == 4096) {
			int pow2 = N >= 256 && N <= 262144 && (N & (N - 1)) == 0;
			cr_assert(pow2 || N == 1000 || N == 12288 || N == 50257, "N = %lld", N);
			at_4096[s[i].dtype]++;
			continue;
		}
		int known = 0;
		for (size_t k = 0; k < sizeof long_rows / sizeof long_rows[0]; k++)
			known |= s[i].M == long_rows[k][0] && N == long_rows[k][1];
		cr_assert(known, "unexpected shape %lld x %lld", s[i].M, N);
		others[s[i].dtype]++;
	}
	for (int d = 0; d < AT_DTYPE_COUNT; d++) {
		cr_assert_eq(at_4096[d], 14, "%s: %zu shapes at M = 4096", at_dtype_name(d), at_4096[d]);
		cr_assert_eq(others[d], 10, "%s: %zu other shapes", at_dtype_name(d), others[d]);
	}
	free(s);
	config_free(&cfg);
}

Test(bench_report, dtype_subset_of_a_config)
{
	sweep_config cfg, sub;
	at_error err = { { 0 } };
	cr_assert_eq(config_load("configs/bench.yaml", &cfg, &err), 0, "%s", err.msg);
	char *text = config_dtype_subset(&cfg, 1u << AT_BF16);
	cr_assert_not_null(text);
	cr_assert_eq(config_parse(text, strlen(text), "subset", &sub, &err), 0, "%s\n%s", err.msg,
		     text);
	cr_assert_eq(sub.warmup, cfg.warmup);
	cr_assert_eq(sub.repetitions, cfg.repetitions);
	cr_assert_eq(sub.min_repetitions, cfg.min_repetitions);
	cr_assert_eq(sub.tolerance, cfg.tolerance);
	cr_assert_eq(sub.time_budget_ms, cfg.time_budget_ms);
	sweep_shape *all, *some;
	size_t nall, nsome, k = 0;
	cr_assert_eq(config_shapes(&cfg, &all, &nall, &err), 0);
	cr_assert_eq(config_shapes(&sub, &some, &nsome, &err), 0);
	for (size_t i = 0; i < nall; i++) {
		if (all[i].dtype != AT_BF16)
			continue;
		cr_assert_lt(k, nsome);
		cr_assert(some[k].dtype == AT_BF16 && some[k].M == all[i].M && some[k].N == all[i].N,
			  "shape %zu differs", k);
		k++;
	}
	cr_assert_eq(k, nsome);
	cr_assert_eq(nsome, 24);
	free(all);
	free(some);
	free(text);
	config_free(&sub);
	/* a dtype that no entry has */
	sweep_config f32_only;
	static const char yaml[] = "sweeps:\n  - op: softmax\n    dtypes: [f32]\n    M: 8\n    N: 9\n";
	cr_assert_eq(config_parse(yaml, strlen(yaml), "f32", &f32_only, &err), 0, "%s", err.msg);
	cr_assert_null(config_dtype_subset(&f32_only, 1u << AT_F16));
	config_free(&f32_only);
	config_free(&cfg);
}

Test(bench_report, dtype_lists)
{
	unsigned mask = 0;
	cr_assert_eq(dtype_list_parse("f32,bf16", &mask), 0);
	cr_assert_eq(mask, (1u << AT_F32) | (1u << AT_BF16));
	cr_assert_eq(dtype_list_parse("f16", &mask), 0);
	cr_assert_eq(mask, 7u);
	mask = 0;
	cr_assert_eq(dtype_list_parse("f32,f64", &mask), -1);
	cr_assert_eq(dtype_list_parse("", &mask), -1);
	cr_assert_eq(dtype_list_parse(",", &mask), -1);
}

/* ---- the command line -------------------------------------------------------------- */

Test(bench_cli, usage_errors)
{
	static const char *const cases[][3] = {
		{ "--bogus", NULL, "unknown option --bogus" },
		{ "--dtype", "f64", "--dtype expects f32, f16 or bf16" },
		{ "--dtype", NULL, "--dtype needs a value" },
		{ "--device", "-1", "--device needs an integer" },
		{ "--csv", "", "--csv needs a file name" },
		{ "extra", NULL, "unexpected argument \"extra\"" },
	};
	tr_expect_usage_errors("bench", cases, sizeof cases / sizeof cases[0]);
}

Test(bench_cli, missing_config)
{
	tr_result r = RUN("bench", "-c", tmp_path("none.yaml"), "--db", tmp_path("x.db"));
	tr_expect_status(&r, 1);
	tr_expect_in(r.err, "none.yaml");
	cr_assert_eq(access(tmp_path("x.db"), F_OK), -1, "the database was created");
	tr_free(&r);
}

/* No GPU here: the sweep stops before writing anything, and the temporary
 * config of a --dtype subset is removed. */
Test(bench_cli, without_a_gpu_fails_and_writes_nothing)
{
	const char *tmp = tmp_path("tmp");
	cr_assert_eq(mkdir(tmp, 0700), 0);
	char tmpdir[600];
	snprintf(tmpdir, sizeof tmpdir, "TMPDIR=%s", tmp);
	const char *env[] = { tmpdir, NULL };
	tr_result r =
		tr_run((const char *const[]){ "bench", "--dtype", "f32", "--db", tmp_path("x.db"),
					      "--csv", tmp_path("x.csv"), NULL },
		       env);
	tr_expect_status(&r, 1);
	cr_assert(strstr(r.err, "no NVIDIA driver") || strstr(r.err, "no NVIDIA GPU"), "%s", r.err);
	cr_assert_eq(access(tmp_path("x.db"), F_OK), -1, "the database was created");
	cr_assert_eq(access(tmp_path("x.csv"), F_OK), -1, "the CSV was written");
	DIR *d = opendir(tmp);
	cr_assert_not_null(d);
	const struct dirent *e;
	while ((e = readdir(d)))
		cr_assert(e->d_name[0] == '.', "left behind: %s", e->d_name);
	closedir(d);
	tr_free(&r);
}

Test(bench_cli, report_only_prints_and_writes_the_table)
{
	/* a database of one GPU: the second make_db GPU is left out */
	tdb *db;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_open(tmp_path("one.db"), &db, &err), 0, "%s", err.msg);
	long long gid, sid;
	cr_assert_eq(tdb_gpu_id(db, &h100, &gid, &err), 0, "%s", err.msg);
	sweep_info info = { gid, 13000, "13.0", "0.1.0", "b.yaml", "", 3000.0 };
	cr_assert_eq(tdb_sweep_begin(db, &info, &sid, &err), 0, "%s", err.msg);
	result_row s1[] = { variant("softmax_online", "threads=512 vec=4", 2900, 96.6667),
			    baseline("naive", 410), baseline("cudnn", 2800), baseline("copy", 2950) };
	store(db, gid, sid, AT_F32, 4096, 65536, s1, 4);
	tdb_close(db);
	tmp_write("b.yaml", "sweeps:\n  - op: softmax\n    dtypes: [f32, bf16]\n    M: [4096]\n"
			    "    N: [65536]\n");
	tr_result r = RUN("bench", "--report-only", "-c", tmp_path("b.yaml"), "--db",
			  tmp_path("one.db"), "--csv", tmp_path("one.csv"));
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "Benchmark on NVIDIA H100 80GB HBM3 (sm_90)");
	tr_expect_in(r.out, "softmax_online  threads=512 vec=4  2900");
	tr_expect_in(r.out, "goals met: 2 of 3 (bandwidth: 1 of 2; not slower than naive and cuDNN: 1 of 1)");
	tr_expect_in(r.out, "CSV: ");
	char *csv = tmp_read(tmp_path("one.csv"));
	tr_expect_in(csv,
		     "f32,4096,65536,2048.0,softmax_online,threads=512 vec=4,2900,96.7,98.3,410,"
		     "2800,met,>= 95% of copy,met\n"
		     "bf16,4096,65536,1024.0,(not tuned),,,,,,,missed,>= 95% of copy,n/a\n");
	free(csv);
	tr_free(&r);
	/* --dtype keeps the table to those dtypes */
	r = RUN("bench", "--report-only", "-c", tmp_path("b.yaml"), "--db", tmp_path("one.db"),
		"--csv", tmp_path("one.csv"), "--dtype", "bf16");
	tr_expect_status(&r, 0);
	cr_assert_null(strstr(r.out, "softmax_online"), "%s", r.out);
	tr_free(&r);
	/* a dtype the config does not have */
	tmp_write("f32.yaml",
		  "sweeps:\n  - op: softmax\n    dtypes: [f32]\n    M: [8]\n    N: [9]\n");
	r = RUN("bench", "--report-only", "-c", tmp_path("f32.yaml"), "--db", tmp_path("one.db"),
		"--dtype", "f16");
	tr_expect_status(&r, 1);
	tr_expect_in(r.err, "has no shape of the dtypes given with --dtype");
	tr_free(&r);
}

Test(bench_cli, report_only_needs_a_database_of_one_gpu)
{
	tr_result r = RUN("bench", "--report-only", "--db", tmp_path("missing.db"));
	tr_expect_status(&r, 1);
	tr_expect_in(r.err, "missing.db");
	tr_free(&r);
	make_db(tmp_path("two.db"));
	r = RUN("bench", "--report-only", "--db", tmp_path("two.db"), "--csv", tmp_path("t.csv"));
	tr_expect_status(&r, 1);
	tr_expect_in(r.err, "results of 2 GPUs");
	cr_assert_eq(access(tmp_path("t.csv"), F_OK), -1);
	tr_free(&r);
}
