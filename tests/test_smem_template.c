/* Tests for templates/softmax_smem.{cu,yaml} (the tests run from the
 * repository root): the manifest loads with its parameter space; enumeration
 * on a nominal H100 (nominal_shape_env, 227 KB of shared memory per CTA)
 * gives variants whose dynamic shared memory fits, exactly up to the longest
 * row that fits and none for rows short enough for registers; the launch
 * geometry (persistent, one row per step, max_n what the stored shared
 * memory holds); and every variant at N = 50257 in each dtype compiles with
 * NVRTC for sm_90 with cp.async and 16-byte stores, no spills and no stack. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/template_fixture.h"

#define H100_SMEM (227 * 1024)
/* The manifest's allowance for the kernel's static shared memory (the
 * reduction slots: 2 sets x 2 floats x 32 warps at most). */
#define STATIC_SMEM_ALLOWANCE 512

static const tmpl_manifest *smem;

static void load_smem(void)
{
	tf_load_templates();
	smem = tf_template("softmax_smem");
}

TestSuite(smem_template, .init = load_smem, .fini = tf_free_templates);

/* This file's shapes: 4096 rows on an H100 (cc 90). */
static size_t enumerate_at(at_dtype dt, long long N, variant **out)
{
	return tf_enumerate(smem, 90, dt, 4096, N, out);
}

static launch_geometry geometry(const variant *v, long long N)
{
	return tf_geometry(v, 90, 4096, N);
}

/* The row buffers' bytes: stages rows of N elements, each rounded up to 16. */
static long long row_buffers(long long stages, long long N, size_t elem)
{
	return stages * ((N * (long long)elem + 15) / 16 * 16);
}

/* ---- the manifest ------------------------------------------------------ */

Test(smem_template, manifest_loads_with_its_parameter_space)
{
	cr_assert_str_eq(smem->op, "softmax");
	cr_assert_not_null(strstr(smem->source_path, "softmax_smem.cu"), "%s", smem->source_path);
	FILE *f = fopen(smem->source_path, "r");
	cr_assert_not_null(f, "cannot open %s", smem->source_path);
	fclose(f);
	for (int dt = 0; dt < AT_DTYPE_COUNT; dt++)
		cr_assert(smem->dtype_mask & (1u << dt), "dtype %s not served",
			  at_dtype_name((at_dtype)dt));
	static const struct {
		const char *name;
		long long values[3];
		size_t n;
	} want[] = {
		{ "threads", { 256, 512, 1024 }, 3 },
		{ "vec", { 4, 8 }, 2 },
		{ "stages", { 1, 2 }, 2 },
		{ "groups", { 1, 4 }, 2 },
		{ "cache_hint", { 0, 1 }, 2 },
	};
	cr_assert_eq(smem->nparams, sizeof want / sizeof want[0],
		     "softmax_smem's params changed: update this test");
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		const tmpl_param *p = &smem->params[i];
		cr_assert_str_eq(p->name, want[i].name);
		cr_assert_eq(p->nvalues, want[i].n, "%s", p->name);
		for (size_t j = 0; j < p->nvalues; j++)
			cr_assert_eq(p->values[j], want[i].values[j], "%s", p->name);
	}
	cr_assert_str_eq(smem->launch.persistent, "1");
	cr_assert_str_eq(smem->launch.rows_per_cta, "1");
}

/* ---- enumeration and geometry -------------------------------------------- */

Test(smem_template, f32_32768_variants_fit_in_227_kb)
{
	variant *vs;
	size_t n = enumerate_at(AT_F32, 32768, &vs);
	cr_assert_gt(n, 0, "no softmax_smem variant at f32 N=32768");
	for (size_t i = 0; i < n; i++) {
		launch_geometry g = geometry(&vs[i], 32768);
		cr_assert_eq(tf_value(&vs[i], "vec"), 4);
		/* 128 KB a row: a second stage does not fit */
		cr_assert_eq(tf_value(&vs[i], "stages"), 1);
		cr_assert_eq(g.dyn_smem, 32768 * 4);
		cr_assert_leq(g.dyn_smem + STATIC_SMEM_ALLOWANCE, H100_SMEM);
		cr_assert_eq(g.threads, tf_value(&vs[i], "threads"));
		cr_assert_eq(g.rows_per_cta, 1);
		cr_assert_eq(g.persistent, 1);
		cr_assert_eq(g.max_n, 32768);
	}
	free(vs);
}

Test(smem_template, both_stages_where_two_rows_fit)
{
	/* f16 N=32768: 64 KB a row, two fit */
	variant *vs;
	size_t n = enumerate_at(AT_F16, 32768, &vs);
	int seen[3] = { 0 };
	for (size_t i = 0; i < n; i++) {
		launch_geometry g = geometry(&vs[i], 32768);
		long long stages = tf_value(&vs[i], "stages");
		seen[stages]++;
		cr_assert_eq(tf_value(&vs[i], "vec"), 8);
		cr_assert_eq(g.dyn_smem, row_buffers(stages, 32768, 2));
		cr_assert_leq(g.dyn_smem + STATIC_SMEM_ALLOWANCE, H100_SMEM);
		if (stages == 2)
			cr_assert_eq(tf_value(&vs[i], "groups"), 1);
	}
	cr_assert_gt(seen[1], 0);
	cr_assert_gt(seen[2], 0);
	free(vs);
}

Test(smem_template, none_for_rows_that_fit_in_registers_or_not_in_smem)
{
	variant *vs;
	cr_assert_eq(enumerate_at(AT_F32, 4096, &vs), 0, "variants at f32 N=4096");
	cr_assert_eq(enumerate_at(AT_F32, 8192, &vs), 0, "variants at f32 N=8192");
	cr_assert_eq(enumerate_at(AT_F16, 8192, &vs), 0, "variants at f16 N=8192");
	cr_assert_eq(enumerate_at(AT_F32, 1000000, &vs), 0, "variants at f32 N=10^6");
	cr_assert_eq(enumerate_at(AT_BF16, 1000000, &vs), 0, "variants at bf16 N=10^6");
	size_t n = enumerate_at(AT_F32, 8193, &vs);
	cr_assert_gt(n, 0, "no variant at f32 N=8193");
	free(vs);
	/* cp.async needs sm_80 */
	cr_assert_eq(tf_enumerate(smem, 75, AT_F32, 4096, 16384, &vs), 0, "variants for sm_75");
}

Test(smem_template, exactly_up_to_the_longest_row_that_fits)
{
	static const struct {
		at_dtype dt;
		long long stages, longest;
	} cases[] = {
		/* (227 KB - 512 B) / stages, in whole 16-byte chunks */
		{ AT_F32, 1, 57984 }, { AT_F32, 2, 28992 },
		{ AT_F16, 1, 115968 }, { AT_F16, 2, 57984 },
		{ AT_BF16, 1, 115968 }, { AT_BF16, 2, 57984 },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		size_t elem = at_dtype_size(cases[c].dt);
		for (long long N = cases[c].longest - 1; N <= cases[c].longest + 1; N++) {
			variant *vs;
			size_t n = enumerate_at(cases[c].dt, N, &vs);
			int found = 0;
			for (size_t i = 0; i < n; i++) {
				if (tf_value(&vs[i], "stages") != cases[c].stages)
					continue;
				found = 1;
				launch_geometry g = geometry(&vs[i], N);
				cr_assert_eq(g.dyn_smem, row_buffers(cases[c].stages, N, elem));
				cr_assert_leq(g.dyn_smem + STATIC_SMEM_ALLOWANCE, H100_SMEM);
			}
			cr_assert_eq(found, N <= cases[c].longest, "%s stages=%lld N=%lld: %s",
				     at_dtype_name(cases[c].dt), cases[c].stages, N,
				     found ? "a variant that does not fit" : "no variant");
			free(vs);
		}
	}
}

Test(smem_template, max_n_is_what_the_stored_smem_holds)
{
	/* The dispatch library launches a winner with the dynamic shared memory
	 * stored at its tuned N, for any N up to max_n: the buffers must hold
	 * max_n elements, and no more. */
	static const struct {
		at_dtype dt;
		long long N;
	} cases[] = { { AT_F32, 50257 }, { AT_F16, 50257 }, { AT_BF16, 16385 }, { AT_F32, 16384 } };
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		size_t elem = at_dtype_size(cases[c].dt);
		variant *vs;
		size_t n = enumerate_at(cases[c].dt, cases[c].N, &vs);
		cr_assert_gt(n, 0);
		for (size_t i = 0; i < n; i++) {
			launch_geometry g = geometry(&vs[i], cases[c].N);
			long long stages = tf_value(&vs[i], "stages");
			cr_assert_geq(g.max_n, cases[c].N);
			cr_assert_eq(g.dyn_smem, row_buffers(stages, g.max_n, elem), "%s N=%lld",
				     at_dtype_name(cases[c].dt), cases[c].N);
			cr_assert_lt(row_buffers(stages, g.max_n + 1, elem), g.dyn_smem + 16 * stages + 1);
			cr_assert_gt(row_buffers(stages, g.max_n + 1, elem), g.dyn_smem);
		}
		free(vs);
	}
}

/* ---- NVRTC ------------------------------------------------------------------ */

#define COMPILE_N 50257LL

/* Registers and shared memory within bounds; the row comes in by 16-byte
 * cp.async and goes out by 16-byte stores. */
static void fits_and_moves_16_bytes(const variant *v, const compiled_kernel *k, void *ctx)
{
	(void)ctx;
	char *params = variant_params_str(v);
	const char *dt = at_dtype_name(v->dtype);
	cr_assert_gt(k->registers, 0);
	cr_assert_leq(k->registers, 64, "%s %s: %d registers", dt, params, k->registers);
	cr_assert_leq(k->smem_bytes, STATIC_SMEM_ALLOWANCE, "%s %s: %d bytes static smem", dt,
		      params, k->smem_bytes);
	launch_geometry g = geometry(v, COMPILE_N);
	cr_assert_leq(g.dyn_smem + k->smem_bytes, H100_SMEM);
	const char *const wanted[] = {
		"cp.async.cg.shared.global",
		"cp.async.commit_group",
		"cp.async.wait_group",
		tf_value(v, "cache_hint") ? "st.global.cs.v4.u32" : "st.global.v4",
	};
	tf_expect_in_ptx(v, k, wanted, sizeof wanted / sizeof *wanted);
	free(params);
}

/* The source does not depend on N: each distinct source compiled once. */
static void compile_all(at_dtype dt)
{
	variant *vs;
	size_t n = enumerate_at(dt, COMPILE_N, &vs);
	cr_assert_gt(n, 0, "no variant at %s N=%lld", at_dtype_name(dt), COMPILE_N);
	tf_for_each_distinct_kernel(vs, n, 90, fits_and_moves_16_bytes, NULL);
	free(vs);
}

Test(smem_template, every_f32_variant_at_50257_compiles_for_sm_90)
{
	compile_all(AT_F32);
}

Test(smem_template, every_f16_variant_at_50257_compiles_for_sm_90)
{
	compile_all(AT_F16);
}

Test(smem_template, every_bf16_variant_at_50257_compiles_for_sm_90)
{
	compile_all(AT_BF16);
}
