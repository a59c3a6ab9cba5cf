/* Tests for templates/softmax_cluster_regs.{cu,yaml}: variants only where
 * clusters exist (cc >= 90) and only for rows too long for one CTA's
 * registers; exactly one hold per (cluster, threads, packed), large enough
 * for the row whatever its alignment; packed holds only in half precision;
 * the launch geometry (a cluster per row, no shared memory, max_n what the
 * cluster's registers hold); and NVRTC compiles for sm_90 of every variant
 * at long rows: partials pushed by st.async and awaited on an mbarrier, 16-byte loads
 * and stores, no spills, and a packed slice in half the registers. */
#include <criterion/criterion.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/template_fixture.h"

static const tmpl_manifest *cregs;

static void load_cluster_regs(void)
{
	tf_load_templates();
	cregs = tf_template("softmax_cluster_regs");
}

TestSuite(cluster_regs_template, .init = load_cluster_regs, .fini = tf_free_templates);

/* This file's shapes have 4096 rows; geometry is asked of an H100 (cc 90). */
static size_t enumerate_at(int cc, at_dtype dt, long long N, variant **out)
{
	return tf_enumerate(cregs, cc, dt, 4096, N, out);
}

static launch_geometry geometry(const variant *v, long long N)
{
	return tf_geometry(v, 90, 4096, N);
}

Test(cluster_regs_template, absent_before_sm_90_and_for_short_rows)
{
	variant *vs;
	cr_assert_eq(enumerate_at(80, AT_F32, 65536, &vs), 0, "cluster variants at cc 80");
	cr_assert_eq(enumerate_at(89, AT_BF16, 131072, &vs), 0, "cluster variants at cc 89");
	cr_assert_eq(enumerate_at(90, AT_F32, 12288, &vs), 0, "softmax_block's rows");
	cr_assert_eq(enumerate_at(90, AT_BF16, 8192, &vs), 0, "softmax_block's rows");
	size_t n = enumerate_at(90, AT_F32, 65536, &vs);
	cr_assert_gt(n, 0, "no variant at f32 65536, cc 90");
	free(vs);
}

Test(cluster_regs_template, one_hold_per_cluster_and_threads_that_fits_the_row)
{
	static const struct {
		at_dtype dt;
		long long N;
	} cases[] = { { AT_F32, 16384 }, { AT_F32, 50257 }, { AT_BF16, 50257 },
		      { AT_F16, 131072 }, { AT_F32, 262144 }, { AT_BF16, 524288 } };
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		const at_dtype dt = cases[k].dt;
		const long long N = cases[k].N, vec = 16 / (long long)at_dtype_size(dt);
		variant *vs;
		size_t n = enumerate_at(90, dt, N, &vs);
		cr_assert_gt(n, 0, "%s N=%lld", at_dtype_name(dt), N);
		int seen[2][2][17][1025] = { { { { 0 } } } };
		for (size_t i = 0; i < n; i++) {
			const long long c = tf_value(&vs[i], "cluster"), t = tf_value(&vs[i], "threads");
			const long long ept = tf_value(&vs[i], "elems_per_thread");
			const long long packed = tf_value(&vs[i], "packed");
			cr_assert_eq(tf_value(&vs[i], "vec"), vec);
			cr_assert_eq(ept % vec, 0);
			/* the row fits; one window fewer per thread would not */
			cr_assert_geq(c * t * ept, N, "%s N=%lld", at_dtype_name(dt), N);
			cr_assert_lt(c * t * (ept - vec), N);
			/* registers a thread: the held values as f32 and 28 more, or
			 * packed two a register and 24 more; 64K an SM */
			cr_assert_leq(t * (packed ? ept / 2 + 24 : ept + 28), 65536);
			cr_assert(!packed || (dt != AT_F32 && ept >= 32), "%s packed ept=%lld",
				  at_dtype_name(dt), ept);
			seen[packed][tf_value(&vs[i], "max_first")][c][t] +=
				tf_value(&vs[i], "cache_hint") == 0;
			launch_geometry g = geometry(&vs[i], N);
			cr_assert_eq(g.ctas_per_row, c);
			cr_assert_eq(g.threads, t);
			cr_assert_eq(g.rows_per_cta, 1);
			cr_assert_eq(g.persistent, 0);
			cr_assert_eq(g.cooperative, 0);
			cr_assert_eq(g.dyn_smem, 0, "the row is held in registers");
			cr_assert_eq(g.max_n, c * t * ept);
		}
		for (int p = 0; p < 2; p++)
			for (int f = 0; f < 2; f++)
				for (int c = 2; c <= 16; c++)
					for (int t = 128; t <= 1024; t *= 2)
						cr_assert_leq(seen[p][f][c][t], 1,
							      "cluster=%d threads=%d packed=%d "
							      "max_first=%d held twice",
							      c, t, p, f);
		free(vs);
	}
}

/* Held as f32, a CTA holds at most 36K values (1024 threads x 36; past
 * 64 a thread only 128 threads, 16K): 16 CTAs hold 589824 elements, so f32
 * 1M has no variant and 512K needs 16. Packed, 1024 threads hold 64
 * half-precision values each (32 + 24 registers) and 512 threads 128, so
 * bf16 1M fits only packed in 16 CTAs of 64K values. */
Test(cluster_regs_template, rows_past_16_ctas_of_registers_have_no_variant)
{
	variant *vs;
	cr_assert_eq(enumerate_at(90, AT_F32, 1048576, &vs), 0);
	size_t n = enumerate_at(90, AT_F32, 524288, &vs);
	cr_assert_gt(n, 0);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(tf_value(&vs[i], "cluster"), 16);
	free(vs);
	n = enumerate_at(90, AT_BF16, 1048576, &vs);
	cr_assert_gt(n, 0);
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(tf_value(&vs[i], "cluster"), 16);
		cr_assert_eq(tf_value(&vs[i], "threads") * tf_value(&vs[i], "elems_per_thread"), 65536);
		cr_assert_eq(tf_value(&vs[i], "packed"), 1);
	}
	free(vs);
}

/* Cluster sizes other than powers of two fit rows more tightly: f32 50257
 * in 5 CTAs of 256 x 40 (51200 held) instead of 4 x 256 x 52 (53248). */
Test(cluster_regs_template, any_cluster_size_up_to_8_and_16)
{
	variant *vs;
	size_t n = enumerate_at(90, AT_F32, 50257, &vs);
	int sizes[17] = { 0 };
	bool tight = false;
	for (size_t i = 0; i < n; i++) {
		const long long c = tf_value(&vs[i], "cluster");
		cr_assert(c >= 2 && c <= 16 && (c <= 8 || c == 16) && c != 7, "cluster=%lld", c);
		sizes[c] = 1;
		tight |= c == 5 && tf_value(&vs[i], "threads") == 256 &&
			 tf_value(&vs[i], "elems_per_thread") == 40;
	}
	for (int c = 2; c <= 6; c++)
		cr_assert(sizes[c], "no cluster of %d at f32 50257", c);
	cr_assert(tight, "no 5 x 256 x 40 hold at f32 50257");
	free(vs);
}

Test(cluster_regs_template, the_grid_is_m_clusters)
{
	variant *vs;
	size_t n = enumerate_at(90, AT_BF16, 65536, &vs);
	cr_assert_gt(n, 0);
	for (size_t i = 0; i < n; i++) {
		launch_geometry g = geometry(&vs[i], 65536);
		unsigned grid = 0;
		at_error err = { { 0 } };
		cr_assert_eq(launch_grid_size(&g, 4096, 0, 132, &grid, &err), 0, "%s", err.msg);
		cr_assert_eq(grid, 4096 * tf_value(&vs[i], "cluster"));
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
		cr_assert_leq(k.registers * tf_value(&vs[i], "threads"), 65536, "%s %s: %d registers",
			      at_dtype_name(dt), params, k.registers);
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
			"ld.global",                /* straight into registers */
			tf_value(&vs[i], "cache_hint") ? "st.global.cs.v4.u32" : "st.global.v4.b32",
		};
		tf_expect_in_ptx(&vs[i], &k, wanted, sizeof wanted / sizeof *wanted);
		cr_assert_null(strstr(k.ptx, "cp.async"), "%s %s: stages through shared memory",
			       at_dtype_name(dt), params);
		compiled_kernel_free(&k);
		free(src);
		free(params);
	}
	free(vs);
}

Test(cluster_regs_template, every_f32_variant_at_65536_compiles_for_sm_90, .timeout = 120)
{
	compile_all(AT_F32, 65536);
}

Test(cluster_regs_template, every_bf16_variant_at_262144_compiles_for_sm_90, .timeout = 120)
{
	compile_all(AT_BF16, 262144);
}

/* The hold that won bf16/f16 4096 x 65536 on the H100: 2 CTAs of 512
 * threads x 64 elements. Packed, the slice is 32 registers a thread and
 * two such CTAs fit a multiprocessor (at most 64 registers); as f32
 * exponentials it took 100. The write converts again with prmt and folds
 * log2 of the sum into the exp2; the f32 hold divides instead. */
Test(cluster_regs_template, a_packed_slice_fits_two_ctas_a_multiprocessor, .timeout = 60)
{
	const at_dtype dts[] = { AT_BF16, AT_F16 };
	for (size_t d = 0; d < 2; d++) {
		variant *vs;
		size_t n = enumerate_at(90, dts[d], 65536, &vs);
		compiled_kernel k[2];
		int found = 0;
		for (size_t i = 0; i < n; i++) {
			if (tf_value(&vs[i], "cluster") != 2 || tf_value(&vs[i], "threads") != 512 ||
			    tf_value(&vs[i], "cache_hint") != 0 || tf_value(&vs[i], "max_first") != 1)
				continue;
			const long long p = tf_value(&vs[i], "packed");
			char *src = tf_specialize(&vs[i]);
			tf_compile_clean(&vs[i], src, 90, &k[p]);
			free(src);
			if (p) {
				const char *wanted[] = { "prmt.b32", "lg2.approx.ftz.f32" };
				tf_expect_in_ptx(&vs[i], &k[p], wanted, 2);
			}
			found |= 1 << p;
		}
		cr_assert_eq(found, 3, "%s: 2 x 512 x 64 held packed and not", at_dtype_name(dts[d]));
		cr_assert_leq(k[1].registers, 64, "%s packed: %d registers", at_dtype_name(dts[d]),
			      k[1].registers);
		cr_assert_gt(k[0].registers, 64, "%s f32: %d registers", at_dtype_name(dts[d]),
			     k[0].registers);
		cr_assert_null(strstr(k[0].ptx, "lg2.approx"), "the f32 hold divides by the sum");
		compiled_kernel_free(&k[0]);
		compiled_kernel_free(&k[1]);
		free(vs);
	}
}
