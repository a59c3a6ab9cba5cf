/* Tests for templates/softmax_cluster.{cu,yaml}: variants only where
 * clusters exist (cc >= 90: none at cc 80, some at cc 90); slices that fit
 * in one CTA's shared memory (only the largest cluster overflows); the
 * launch geometry (a cluster of `cluster` CTAs per row, not persistent nor
 * cooperative, the slice's shared memory, max_n what the cluster's stored
 * shared memory holds) and its grid; and NVRTC compiles for sm_90 of every
 * distinct variant at a long row, each with its compile-time cluster size,
 * partials pushed by st.async and awaited on an mbarrier, no spills. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/template_fixture.h"

#define H100_SMEM (227 * 1024)
/* The static shared memory allowance of the manifest (slots of 32 warps
 * and the CTA's partial). */
#define STATIC_SMEM_ALLOWANCE 512

static const tmpl_manifest *cluster;

static void load_cluster(void)
{
	tf_load_templates();
	cluster = tf_template("softmax_cluster");
}

TestSuite(cluster_template, .init = load_cluster, .fini = tf_free_templates);

/* This file's shapes have 4096 rows; geometry is asked of an H100 (cc 90). */
static size_t enumerate_at(int cc, at_dtype dt, long long N, variant **out)
{
	return tf_enumerate(cluster, cc, dt, 4096, N, out);
}

static launch_geometry geometry(const variant *v, long long N)
{
	return tf_geometry(v, 90, 4096, N);
}

/* A slice's bytes: the row cut over `c` CTAs, in whole 16-byte chunks. */
static long long slice_bytes(long long N, long long c, size_t elem)
{
	long long vec = 16 / (long long)elem;
	return ((N + c - 1) / c + vec - 1) / vec * 16;
}

Test(cluster_template, manifest_declares_a_cluster_per_row)
{
	cr_assert_str_eq(cluster->op, "softmax");
	static const char *const names[] = { "cluster", "threads", "vec" };
	cr_assert_eq(cluster->nparams, 3, "softmax_cluster's params changed: update this test");
	for (size_t i = 0; i < 3; i++)
		cr_assert_str_eq(cluster->params[i].name, names[i]);
	const tmpl_param *c = &cluster->params[0];
	cr_assert_eq(c->nvalues, 4);
	for (size_t i = 0; i < 4; i++)
		cr_assert_eq(c->values[i], 2LL << i);
	cr_assert_str_eq(cluster->launch.ctas_per_row, "cluster");
	cr_assert_str_eq(cluster->launch.persistent, "0");
	cr_assert_str_eq(cluster->launch.cooperative, "0");
	cr_assert_str_eq(cluster->launch.rows_per_cta, "1");
}

Test(cluster_template, absent_before_sm_90_present_at_sm_90)
{
	variant *vs;
	cr_assert_eq(enumerate_at(80, AT_F32, 50257, &vs), 0, "cluster variants at cc 80");
	cr_assert_eq(enumerate_at(89, AT_BF16, 262144, &vs), 0, "cluster variants at cc 89");
	size_t n = enumerate_at(90, AT_F32, 50257, &vs);
	cr_assert_gt(n, 0, "no cluster variant at cc 90");
	int sizes = 0;
	for (size_t i = 0; i < n; i++)
		sizes |= (int)tf_value(&vs[i], "cluster");
	cr_assert_eq(sizes, 2 | 4 | 8 | 16, "cluster sizes offered: %#x", sizes);
	free(vs);
	/* rows short enough for registers */
	cr_assert_eq(enumerate_at(90, AT_F32, 8192, &vs), 0);
}

Test(cluster_template, geometry_is_a_cluster_per_row_with_the_slice_in_shared_memory)
{
	static const struct {
		at_dtype dt;
		long long N;
	} cases[] = { { AT_F32, 50257 }, { AT_BF16, 50257 }, { AT_F16, 131072 },
		      { AT_F32, 262144 }, { AT_BF16, 1048576 } };
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		size_t elem = at_dtype_size(cases[k].dt);
		long long N = cases[k].N;
		variant *vs;
		size_t n = enumerate_at(90, cases[k].dt, N, &vs);
		cr_assert_gt(n, 0, "%s N=%lld", at_dtype_name(cases[k].dt), N);
		for (size_t i = 0; i < n; i++) {
			launch_geometry g = geometry(&vs[i], N);
			long long c = tf_value(&vs[i], "cluster");
			cr_assert_eq(g.ctas_per_row, c);
			cr_assert_eq(g.persistent, 0);
			cr_assert_eq(g.cooperative, 0);
			cr_assert_eq(g.rows_per_cta, 1);
			cr_assert_eq(g.threads, tf_value(&vs[i], "threads"));
			cr_assert_eq(tf_value(&vs[i], "vec") * (long long)elem, 16);
			/* the slice fits, so the row is read once */
			cr_assert_eq(g.dyn_smem, slice_bytes(N, c, elem), "%s N=%lld cluster=%lld",
				     at_dtype_name(cases[k].dt), N, c);
			cr_assert_leq(g.dyn_smem + STATIC_SMEM_ALLOWANCE, H100_SMEM);
			/* every warp of a CTA has elements of its slice */
			cr_assert_lt((g.threads - 32) * (16 / (long long)elem), (N + c - 1) / c);
			/* max_n: what the stored shared memory holds over the cluster */
			cr_assert_eq(g.max_n, c * g.dyn_smem / (long long)elem);
			cr_assert_geq(g.max_n, N);
			cr_assert_lt(g.max_n - N, c * (16 / (long long)elem) + c);
			/* a row of max_n + 1 would not fit the stored slices */
			cr_assert_gt(slice_bytes(g.max_n + 1, c, elem), g.dyn_smem);
		}
		free(vs);
	}
}

Test(cluster_template, only_the_largest_cluster_overflows)
{
	/* 1M f32 is 4 MB: 256 KB slices over 16 CTAs do not fit in 227 KB */
	variant *vs;
	size_t n = enumerate_at(90, AT_F32, 1048576, &vs);
	cr_assert_gt(n, 0, "no variant at f32 N=1M");
	for (size_t i = 0; i < n; i++) {
		launch_geometry g = geometry(&vs[i], 1048576);
		cr_assert_eq(tf_value(&vs[i], "cluster"), 16);
		cr_assert_eq(g.dyn_smem, (H100_SMEM - STATIC_SMEM_ALLOWANCE) / 16 * 16);
		cr_assert_eq(g.max_n, 1048576, "an overflowing winner serves no longer row");
	}
	free(vs);
	/* 256K f32 (1 MB): 128 KB slices over 8 fit, 256 KB over 4 do not */
	n = enumerate_at(90, AT_F32, 262144, &vs);
	int seen[17] = { 0 };
	for (size_t i = 0; i < n; i++)
		seen[tf_value(&vs[i], "cluster")]++;
	cr_assert_eq(seen[2] + seen[4], 0);
	cr_assert_gt(seen[8], 0);
	cr_assert_gt(seen[16], 0);
	free(vs);
}

Test(cluster_template, the_grid_is_m_clusters)
{
	variant *vs;
	size_t n = enumerate_at(90, AT_F32, 50257, &vs);
	cr_assert_gt(n, 0);
	for (size_t i = 0; i < n; i++) {
		launch_geometry g = geometry(&vs[i], 50257);
		unsigned grid = 0;
		at_error err = { { 0 } };
		cr_assert_eq(launch_grid_size(&g, 4096, 0, 132, &grid, &err), 0, "%s", err.msg);
		cr_assert_eq(grid, 4096 * tf_value(&vs[i], "cluster"));
		cr_assert_eq(grid % g.ctas_per_row, 0);
	}
	free(vs);
}

/* ---- NVRTC ------------------------------------------------------------------ */

static void compile_all(at_dtype dt, long long N)
{
	variant *vs;
	size_t n = enumerate_at(90, dt, N, &vs);
	cr_assert_gt(n, 0, "no variant at %s N=%lld", at_dtype_name(dt), N);
	for (size_t i = 0; i < n; i++) {
		char *params = variant_params_str(&vs[i]);
		char *src = tf_specialize(&vs[i]);
		compiled_kernel k;
		tf_compile_clean(&vs[i], src, 90, &k);
		/* __launch_bounds__(THREADS, 1024 / THREADS) */
		cr_assert_leq(k.registers, 64, "%s %s: %d registers", at_dtype_name(dt), params,
			      k.registers);
		cr_assert_leq(k.smem_bytes, STATIC_SMEM_ALLOWANCE, "%s %s: %d bytes static smem",
			      at_dtype_name(dt), params, k.smem_bytes);
		char dims[64];
		snprintf(dims, sizeof dims, ".reqnctapercluster %lld, 1, 1",
			 tf_value(&vs[i], "cluster"));
		const char *wanted[] = {
			dims,
			".explicitcluster",
			"mapa.shared::cluster.u32", /* partials pushed to every CTA */
			"st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32",
			"mbarrier.try_wait.parity.shared::cta.b64", /* and awaited */
			"fence.mbarrier_init.release.cluster",
			"barrier.cluster.arrive.relaxed.aligned",
			"barrier.cluster.wait.acquire.aligned",
			"cp.async.cg.shared.global", /* the slice comes in by cp.async */
			"st.global.v4.b32",          /* and goes out by 16-byte stores */
		};
		tf_expect_in_ptx(&vs[i], &k, wanted, sizeof wanted / sizeof *wanted);
		compiled_kernel_free(&k);
		free(src);
		free(params);
	}
	free(vs);
}

Test(cluster_template, every_f32_variant_at_131072_compiles_for_sm_90, .timeout = 120)
{
	compile_all(AT_F32, 131072);
}

Test(cluster_template, every_bf16_variant_at_262144_compiles_for_sm_90, .timeout = 120)
{
	compile_all(AT_BF16, 262144);
}
