/* Tests of the dispatch library's variant selection, through atd_query_gpu
 * on databases written by the tuner's writer: each of the four levels, their
 * order, nearest-in-log-space, the max_n validity rule, GPU identity and
 * compute capability, rows that must be ignored, and deterministic ties.
 * No GPU is needed. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "db/tuning_db.h"
#include "dispatch/runtime/builtin_kernels.h"
#include "include/autotune/dispatch.h"

#include "tests/test_dispatch_fixture.h"

TestSuite(dispatch_select, .init = tmp_setup, .fini = tmp_teardown);

#define SXM_NAME "NVIDIA H100 80GB HBM3"
#define PCIE_NAME "NVIDIA H100 PCIe"
#define A100_NAME "NVIDIA A100-SXM4-80GB"
static const atd_gpu sxm = { SXM_NAME, 9, 0, 132, 85520809984LL };
static const atd_gpu pcie = { PCIE_NAME, 9, 0, 114, 85029158912LL };
static const atd_gpu a100 = { A100_NAME, 8, 0, 108, 85095874560LL };

/* A database with one sweep per GPU; ids of the GPUs and sweeps. */
typedef struct fixture {
	tdb *db;
	long long sxm, pcie, a100;
	long long sxm_sweep, pcie_sweep, a100_sweep;
} fixture;

static fixture fx_new(void)
{
	fixture f;
	f.db = td_db_new("t.db");
	f.sxm = td_gpu(f.db, sxm.name, 9, 0, 132, sxm.mem_bytes);
	f.pcie = td_gpu(f.db, pcie.name, 9, 0, 114, pcie.mem_bytes);
	f.a100 = td_gpu(f.db, a100.name, 8, 0, 108, a100.mem_bytes);
	f.sxm_sweep = td_sweep(f.db, f.sxm);
	f.pcie_sweep = td_sweep(f.db, f.pcie);
	f.a100_sweep = td_sweep(f.db, f.a100);
	return f;
}

/* Stores an f32 softmax shape on the fixture's GPU g ("sxm", ...). */
#define SHAPE(f, g, M, N, tmpl, us, max_n) \
	td_shape((f).db, (f).g##_sweep, (f).g, "softmax", AT_F32, M, N, tmpl, "p=" tmpl, us, max_n)

/* Closes the writer and opens the library on the database. */
static atd_handle *fx_open(fixture *f)
{
	tdb_close(f->db);
	f->db = NULL;
	atd_handle *h = NULL;
	cr_assert_eq(atd_open(tmp_path("t.db"), 0, &h), ATD_OK, "%s", atd_errmsg(NULL));
	cr_assert_not_null(h);
	return h;
}

static atd_choice query(atd_handle *h, const atd_gpu *gpu, atd_dtype dt, long long M, long long N)
{
	atd_choice c;
	memset(&c, 0xab, sizeof c);
	cr_assert_eq(atd_query_gpu(h, gpu, dt, M, N, &c), ATD_OK, "%s", atd_errmsg(h));
	return c;
}

static void assert_choice(const atd_choice *c, atd_level level, const char *tmpl,
			  const char *gpu_name, long long M, long long N)
{
	cr_assert_str_eq(atd_level_name(c->level), atd_level_name(level));
	cr_assert_str_eq(c->template_name, tmpl);
	cr_assert_str_eq(c->gpu_name, gpu_name);
	cr_assert_eq(c->tuned_M, M, "tuned_M %lld, expected %lld", (long long)c->tuned_M, M);
	cr_assert_eq(c->tuned_N, N, "tuned_N %lld, expected %lld", (long long)c->tuned_N, N);
}

static void assert_builtin(const atd_choice *c, atd_dtype dt)
{
	const builtin_kernel *b = builtin_kernel_for(ATDI_SOFTMAX, (at_dtype)dt);
	cr_assert_eq(c->level, ATD_LEVEL_BUILTIN);
	cr_assert_str_eq(c->template_name, b->template_name);
	cr_assert_str_eq(c->params, b->params);
	cr_assert_str_eq(c->gpu_name, "");
	cr_assert_eq(c->tuned_M, 0);
	cr_assert_eq(c->tuned_N, 0);
	cr_assert_eq(c->tuned_us, 0);
}

Test(dispatch_select, exact_shape_of_this_gpu_is_level_1_with_its_metadata)
{
	fixture f = fx_new();
	SHAPE(f, sxm, 4096, 1024, "near", 5.0, 0);
	SHAPE(f, sxm, 4096, 1000, "exact", 7.25, 0);
	atd_handle *h = fx_open(&f);
	atd_choice c = query(h, &sxm, ATD_F32, 4096, 1000);
	assert_choice(&c, ATD_LEVEL_EXACT, "exact", SXM_NAME, 4096, 1000);
	cr_assert_str_eq(c.params, "p=exact");
	cr_assert_float_eq(c.tuned_us, 7.25, 1e-12);
	atd_close(h);
}

Test(dispatch_select, nearest_is_measured_in_log_space)
{
	fixture f = fx_new();
	/* N: 600 is nearer than 1500 linearly (400 vs 500), farther in log
	 * space (ln 1000/600 = 0.51 vs ln 1500/1000 = 0.41). */
	SHAPE(f, sxm, 4096, 600, "n600", 1, 0);
	SHAPE(f, sxm, 4096, 1500, "n1500", 1, 0);
	atd_handle *h = fx_open(&f);
	atd_choice c = query(h, &sxm, ATD_F32, 4096, 1000);
	assert_choice(&c, ATD_LEVEL_NEAREST, "n1500", SXM_NAME, 4096, 1500);
	atd_close(h);
}

Test(dispatch_select, nearest_weighs_M_and_N_alike)
{
	fixture f = fx_new();
	/* (1024, 1000): (ln 4)^2 = 1.92; (4096, 3000): (ln 3)^2 = 1.21;
	 * (12288, 1500): (ln 3)^2 + (ln 1.5)^2 = 1.37. */
	SHAPE(f, sxm, 1024, 1000, "m1024", 1, 0);
	SHAPE(f, sxm, 4096, 3000, "n3000", 1, 0);
	SHAPE(f, sxm, 12288, 1500, "both", 1, 0);
	atd_handle *h = fx_open(&f);
	atd_choice c = query(h, &sxm, ATD_F32, 4096, 1000);
	assert_choice(&c, ATD_LEVEL_NEAREST, "n3000", SXM_NAME, 4096, 3000);
	/* The same table answers another shape from another entry. */
	c = query(h, &sxm, ATD_F32, 1500, 1000);
	assert_choice(&c, ATD_LEVEL_NEAREST, "m1024", SXM_NAME, 1024, 1000);
	atd_close(h);
}

Test(dispatch_select, a_variant_is_skipped_for_rows_longer_than_its_max_n)
{
	fixture f = fx_new();
	SHAPE(f, sxm, 4096, 1000, "regs1024", 1, 1024); /* holds rows of up to 1024 */
	SHAPE(f, sxm, 4096, 8192, "any", 9, 0);         /* serves any row */
	atd_handle *h = fx_open(&f);
	/* 2000 is nearer 1000 than 8192, but 1024 < 2000. */
	atd_choice c = query(h, &sxm, ATD_F32, 4096, 2000);
	assert_choice(&c, ATD_LEVEL_NEAREST, "any", SXM_NAME, 4096, 8192);
	/* max_n == N is valid. */
	c = query(h, &sxm, ATD_F32, 4096, 1024);
	assert_choice(&c, ATD_LEVEL_NEAREST, "regs1024", SXM_NAME, 4096, 1000);
	/* max_n == 0 serves any N, however far. */
	c = query(h, &sxm, ATD_F32, 4096, 1 << 24);
	assert_choice(&c, ATD_LEVEL_NEAREST, "any", SXM_NAME, 4096, 8192);
	atd_close(h);
}

Test(dispatch_select, the_validity_rule_applies_to_other_gpus_too)
{
	fixture f = fx_new();
	SHAPE(f, pcie, 4096, 1000, "short", 1, 1000);
	SHAPE(f, pcie, 4096, 65536, "long", 1, 0);
	atd_handle *h = fx_open(&f);
	atd_choice c = query(h, &sxm, ATD_F32, 4096, 1001);
	assert_choice(&c, ATD_LEVEL_SAME_ARCH, "long", PCIE_NAME, 4096, 65536);
	atd_close(h);
}

Test(dispatch_select, same_arch_serves_another_model_exact_shape_first)
{
	fixture f = fx_new();
	SHAPE(f, pcie, 4096, 1024, "pcie_near", 1, 0);
	SHAPE(f, pcie, 4096, 1000, "pcie_exact", 50, 0);
	atd_handle *h = fx_open(&f);
	atd_choice c = query(h, &sxm, ATD_F32, 4096, 1000);
	assert_choice(&c, ATD_LEVEL_SAME_ARCH, "pcie_exact", PCIE_NAME, 4096, 1000);
	c = query(h, &sxm, ATD_F32, 4096, 2000);
	assert_choice(&c, ATD_LEVEL_SAME_ARCH, "pcie_near", PCIE_NAME, 4096, 1024);
	atd_close(h);
}

Test(dispatch_select, levels_apply_in_order)
{
	fixture f = fx_new();
	SHAPE(f, sxm, 4096, 1000, "sxm_exact", 9, 0);
	SHAPE(f, sxm, 4096, 1024, "sxm_near", 1, 0);
	SHAPE(f, pcie, 4096, 1000, "pcie_exact", 1, 0);
	SHAPE(f, pcie, 4096, 3000, "pcie_exact2", 1, 0);
	SHAPE(f, pcie, 64, 64, "pcie_only", 1, 0);
	atd_handle *h = fx_open(&f);
	/* Exact beats a faster nearest and another model's exact. */
	atd_choice c = query(h, &sxm, ATD_F32, 4096, 1000);
	assert_choice(&c, ATD_LEVEL_EXACT, "sxm_exact", SXM_NAME, 4096, 1000);
	/* Nearest on this model beats another model's exact shape. */
	c = query(h, &sxm, ATD_F32, 4096, 3000);
	assert_choice(&c, ATD_LEVEL_NEAREST, "sxm_near", SXM_NAME, 4096, 1024);
	/* Another model with the same compute capability beats the built-in. */
	c = query(h, &sxm, ATD_F16, 4096, 1000);
	assert_builtin(&c, ATD_F16);
	c = query(h, &(atd_gpu){ "NVIDIA H100 NVL", 9, 0, 132, 100000000000LL }, ATD_F32, 4096,
		  1000);
	assert_choice(&c, ATD_LEVEL_SAME_ARCH, "pcie_exact", PCIE_NAME, 4096, 1000);
	/* The PCIe model asking is served its own shapes. */
	c = query(h, &pcie, ATD_F32, 4096, 1024);
	assert_choice(&c, ATD_LEVEL_NEAREST, "pcie_exact", PCIE_NAME, 4096, 1000);
	atd_close(h);
}

Test(dispatch_select, identity_is_name_cc_and_sm_count_not_memory)
{
	fixture f = fx_new();
	SHAPE(f, sxm, 4096, 1000, "sxm", 1, 0);
	atd_handle *h = fx_open(&f);
	atd_gpu other = sxm;
	other.sm_count = 114; /* a cut-down board of the same name */
	atd_choice c = query(h, &other, ATD_F32, 4096, 1000);
	assert_choice(&c, ATD_LEVEL_SAME_ARCH, "sxm", SXM_NAME, 4096, 1000);
	other = sxm;
	other.mem_bytes = 80000000000LL; /* "80 GB", as a user describes it */
	c = query(h, &other, ATD_F32, 4096, 1000);
	cr_assert_eq(c.level, ATD_LEVEL_EXACT, "memory is not part of a model's identity");
	other = sxm;
	other.name = "NVIDIA H100";
	c = query(h, &other, ATD_F32, 4096, 1000);
	cr_assert_eq(c.level, ATD_LEVEL_SAME_ARCH);
	atd_close(h);
}

/* An SM count (or memory) left 0 is the database's GPU's of that name and
 * compute capability (dispatch/runtime/described_gpu.h), as `autotune show` takes
 * it; a given one is kept, and memory is never matched on. */
Test(dispatch_select, a_gpu_described_without_its_sm_count_is_the_databases)
{
	fixture f = fx_new();
	SHAPE(f, sxm, 4096, 1000, "sxm", 1, 0);
	atd_handle *h = fx_open(&f);
	atd_choice c = query(h, &(atd_gpu){ SXM_NAME, 9, 0, 0, 0 }, ATD_F32, 4096, 1000);
	assert_choice(&c, ATD_LEVEL_EXACT, "sxm", SXM_NAME, 4096, 1000);
	c = query(h, &(atd_gpu){ SXM_NAME, 9, 0, 0, 80000000000LL }, ATD_F32, 4096, 1000);
	cr_assert_eq(c.level, ATD_LEVEL_EXACT, "%s", atd_level_name(c.level));
	c = query(h, &(atd_gpu){ SXM_NAME, 9, 0, 114, 0 }, ATD_F32, 4096, 1000);
	cr_assert_eq(c.level, ATD_LEVEL_SAME_ARCH, "%s", atd_level_name(c.level));
	c = query(h, &(atd_gpu){ "NVIDIA H100 NVL", 9, 0, 0, 0 }, ATD_F32, 4096, 1000);
	cr_assert_eq(c.level, ATD_LEVEL_SAME_ARCH, "%s", atd_level_name(c.level));
	c = query(h, &(atd_gpu){ SXM_NAME, 8, 0, 0, 0 }, ATD_F32, 4096, 1000);
	assert_builtin(&c, ATD_F32);
	atd_close(h);
}

Test(dispatch_select, a_gpu_of_another_compute_capability_is_never_used)
{
	fixture f = fx_new();
	SHAPE(f, a100, 4096, 1000, "a100", 1, 0);
	atd_handle *h = fx_open(&f);
	atd_choice c = query(h, &sxm, ATD_F32, 4096, 1000);
	assert_builtin(&c, ATD_F32);
	/* Not even under the same name: 9.0 vs 8.0. */
	atd_gpu renamed = sxm;
	renamed.name = A100_NAME;
	c = query(h, &renamed, ATD_F32, 4096, 1000);
	assert_builtin(&c, ATD_F32);
	/* 9.0 and 8.9 differ in the minor number only. */
	c = query(h, &(atd_gpu){ "NVIDIA L40S", 8, 9, 142, 48305799168LL }, ATD_F32, 4096, 1000);
	assert_builtin(&c, ATD_F32);
	/* The A100 itself gets it. */
	c = query(h, &a100, ATD_F32, 4096, 1000);
	assert_choice(&c, ATD_LEVEL_EXACT, "a100", A100_NAME, 4096, 1000);
	atd_close(h);
}

Test(dispatch_select, other_dtypes_and_ops_are_never_used)
{
	fixture f = fx_new();
	td_shape(f.db, f.sxm_sweep, f.sxm, "softmax", AT_BF16, 4096, 1000, "bf16", "", 1, 0);
	td_shape(f.db, f.sxm_sweep, f.sxm, "layernorm", AT_F32, 4096, 1000, "ln", "", 1, 0);
	atd_handle *h = fx_open(&f);
	atd_choice c = query(h, &sxm, ATD_F32, 4096, 1000);
	assert_builtin(&c, ATD_F32);
	c = query(h, &sxm, ATD_F16, 4096, 1000);
	assert_builtin(&c, ATD_F16);
	c = query(h, &sxm, ATD_BF16, 4096, 1000);
	assert_choice(&c, ATD_LEVEL_EXACT, "bf16", SXM_NAME, 4096, 1000);
	atd_close(h);
}

Test(dispatch_select, winners_with_no_result_or_no_code_are_ignored)
{
	fixture f = fx_new();
	td_shape_failed(f.db, f.sxm_sweep, f.sxm, AT_F32, 4096, 1000);
	td_shape_nocode(f.db, f.sxm_sweep, f.sxm, AT_F32, 4096, 1100, "nocode");
	SHAPE(f, sxm, 4096, 2048, "ok", 1, 0);
	atd_handle *h = fx_open(&f);
	atd_choice c = query(h, &sxm, ATD_F32, 4096, 1000);
	assert_choice(&c, ATD_LEVEL_NEAREST, "ok", SXM_NAME, 4096, 2048);
	atd_close(h);
}

Test(dispatch_select, equidistant_shapes_go_to_the_faster_then_the_older_result)
{
	fixture f = fx_new();
	/* M = 1024 and M = 16384 are both a factor 4 from 4096. */
	SHAPE(f, sxm, 16384, 1000, "big_slow", 8, 0);
	SHAPE(f, sxm, 1024, 1000, "small_fast", 2, 0);
	/* N = 250 and N = 4000: a factor 4 too, equally fast; the result
	 * stored first (smaller id) is the one listed last by the table. */
	long long first = SHAPE(f, sxm, 64, 4000, "first", 3, 0);
	long long second = SHAPE(f, sxm, 64, 250, "second", 3, 0);
	cr_assert_lt(first, second);
	atd_handle *h = fx_open(&f);
	for (int i = 0; i < 3; i++) {
		atd_choice c = query(h, &sxm, ATD_F32, 4096, 1000);
		assert_choice(&c, ATD_LEVEL_NEAREST, "small_fast", SXM_NAME, 1024, 1000);
		c = query(h, &sxm, ATD_F32, 64, 1000);
		assert_choice(&c, ATD_LEVEL_NEAREST, "first", SXM_NAME, 64, 4000);
	}
	atd_close(h);
}

Test(dispatch_select, every_dtype_has_a_builtin_for_any_gpu)
{
	fixture f = fx_new();
	atd_handle *h = fx_open(&f);
	static const atd_gpu old = { "Tesla T4", 7, 5, 40, 15828320256LL };
	for (int dt = ATD_F32; dt <= ATD_BF16; dt++) {
		atd_choice c = query(h, &old, (atd_dtype)dt, 1, 1);
		assert_builtin(&c, (atd_dtype)dt);
		cr_assert_str_eq(c.template_name, "softmax_online");
	}
	atd_close(h);
}

Test(dispatch_select, query_gpu_rejects_bad_arguments)
{
	fixture f = fx_new();
	SHAPE(f, sxm, 4096, 1000, "x", 1, 0);
	atd_handle *h = fx_open(&f);
	atd_choice c;
	cr_assert_eq(atd_query_gpu(NULL, &sxm, ATD_F32, 1, 1, &c), ATD_ERR_INVALID_ARGUMENT);
	cr_assert_eq(atd_query_gpu(h, NULL, ATD_F32, 1, 1, &c), ATD_ERR_INVALID_ARGUMENT);
	cr_assert_eq(atd_query_gpu(h, &(atd_gpu){ NULL, 9, 0, 1, 1 }, ATD_F32, 1, 1, &c),
		     ATD_ERR_INVALID_ARGUMENT);
	cr_assert_eq(atd_query_gpu(h, &sxm, ATD_F32, 1, 1, NULL), ATD_ERR_INVALID_ARGUMENT);
	cr_assert_eq(atd_query_gpu(h, &sxm, (atd_dtype)3, 1, 1, &c), ATD_ERR_INVALID_ARGUMENT);
	cr_assert_eq(atd_query_gpu(h, &sxm, (atd_dtype)-1, 1, 1, &c), ATD_ERR_INVALID_ARGUMENT);
	cr_assert_eq(atd_query_gpu(h, &sxm, ATD_F32, 0, 1, &c), ATD_ERR_INVALID_ARGUMENT);
	cr_assert_eq(atd_query_gpu(h, &sxm, ATD_F32, 1, 0, &c), ATD_ERR_INVALID_ARGUMENT);
	cr_assert(strstr(atd_errmsg(h), "N") != NULL, "%s", atd_errmsg(h));
	atd_close(h);
}
