/* Tests for templates/softmax_backward_tile.{cu,yaml} (the tests run from
 * the repository root): the template serves only short rows that are not a
 * multiple of the 16-byte vector and whose bytes do not divide it, on
 * sm_80 or newer, with tiles of 1 to 16 KB; its launch geometry (two tiles,
 * each the rows and three chunks, rows_per_cta rows a CTA, max_n the tuned
 * N); a lane's hold of the row (held); and every variant of both ops at f16 x 33, f32 x 63 and bf16 x 167
 * compiles with NVRTC for sm_90 without spills or a stack, with cp.async
 * in and 16-byte stores out (every other backward template ran
 * half-precision rows of 33 and 63 at 45-80% of a 2-read-1-write copy,
 * H200, sessions 65-66: element by element, or a row peeled at a time). */
#include <criterion/criterion.h>

#include <stdlib.h>

#include "tests/template_fixture.h"

static const tmpl_manifest *tile;

static void load_tile(void)
{
	tf_load_templates();
	tile = tf_template("softmax_backward_tile");
}

TestSuite(backward_tile, .init = load_tile, .fini = tf_free_templates);

Test(backward_tile, only_short_rows_off_the_vector_on_sm_80)
{
	/* aligned rows: 16-byte vectors in softmax_backward_warp and _block */
	cr_assert_eq(tf_count_variants(tile, 90, AT_F32, 65536, 32), 0);
	cr_assert_eq(tf_count_variants(tile, 90, AT_F16, 65536, 128), 0);
	/* rows whose bytes divide 16: softmax_backward_tiny's vectors of rows */
	cr_assert_eq(tf_count_variants(tile, 90, AT_F16, 1000000, 2), 0);
	cr_assert_eq(tf_count_variants(tile, 90, AT_BF16, 1000000, 1), 0);
	cr_assert_eq(tf_count_variants(tile, 90, AT_F32, 1000000, 2), 0);
	/* longer rows: the per-row templates */
	cr_assert_eq(tf_count_variants(tile, 90, AT_BF16, 4096, 513), 0);
	cr_assert_eq(tf_count_variants(tile, 90, AT_F32, 4096, 1001), 0);
	/* cp.async needs sm_80 */
	cr_assert_eq(tf_count_variants(tile, 75, AT_F16, 131072, 63), 0);
	/* the rows it is for */
	cr_assert_gt(tf_count_variants(tile, 90, AT_F16, 131072, 33), 0);
	cr_assert_gt(tf_count_variants(tile, 90, AT_BF16, 1000003, 63), 0);
	cr_assert_gt(tf_count_variants(tile, 90, AT_F32, 131072, 167), 0);
	cr_assert_gt(tf_count_variants(tile, 90, AT_F16, 131072, 511), 0);
	/* f32 x 511 is 2 KB a row: only 8-row tiles fit 16 KB */
	cr_assert_eq(tf_count_with(tile, 90, AT_F32, 4096, 511, "rows_per_cta", 16), 0);
	cr_assert_gt(tf_count_with(tile, 90, AT_F32, 4096, 511, "rows_per_cta", 8), 0);
}

Test(backward_tile, tiles_and_launch_geometry)
{
	static const struct {
		at_dtype dt;
		long long N;
	} cases[] = { { AT_F16, 33 }, { AT_BF16, 63 }, { AT_F32, 63 }, { AT_F16, 167 },
		      { AT_F32, 7 } };
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		variant *vs;
		long long N = cases[c].N;
		long long elem = (long long)at_dtype_size(cases[c].dt);
		size_t n = tf_enumerate(tile, 90, cases[c].dt, 131072, N, &vs);
		cr_assert_gt(n, 0, "%s N=%lld", at_dtype_name(cases[c].dt), N);
		for (size_t i = 0; i < n; i++) {
			long long lanes = tf_value(&vs[i], "lanes");
			long long rows = tf_value(&vs[i], "rows_per_cta");
			long long groups = tf_value(&vs[i], "threads") / lanes;
			cr_assert_eq(rows % groups, 0);
			cr_assert_leq(rows / groups, 4);
			cr_assert_lt(lanes / 2, N);
			cr_assert_leq(rows * N * elem, 16384);
			cr_assert_geq(rows * N * elem, 1024);
			cr_assert_eq(tf_value(&vs[i], "vec") * elem, 16);
			launch_geometry g = tf_geometry(&vs[i], 90, 131072, N);
			/* the kernel's second tile starts at half of it, 16-byte aligned */
			cr_assert_eq(g.dyn_smem, 2 * (rows * N * elem + 48));
			cr_assert_eq(g.rows_per_cta, rows);
			cr_assert_eq(g.threads, tf_value(&vs[i], "threads"));
			cr_assert_eq(g.persistent, 0);
			cr_assert_eq(g.max_n, N);
		}
		free(vs);
	}
}

/* `held` keeps a lane's elements of y and dy in registers between the two
 * passes (softmax_backward's tile read four times an element pair, log's
 * three): the hold is the whole row, at most one slot a lane past it, and
 * at most 16 slots (past them the row is read twice). */
Test(backward_tile, a_hold_is_the_whole_row_and_at_most_16_elements_a_lane)
{
	static const long long lengths[] = { 33, 139, 167, 389 };
	for (size_t c = 0; c < sizeof lengths / sizeof *lengths; c++) {
		const long long N = lengths[c];
		variant *vs;
		size_t n = tf_enumerate(tile, 90, AT_F16, 500009, N, &vs);
		int held_at_lanes[33] = { 0 }, lanes_seen[33] = { 0 };
		for (size_t i = 0; i < n; i++) {
			long long lanes = tf_value(&vs[i], "lanes"), held = tf_value(&vs[i], "held");
			lanes_seen[lanes] = 1;
			if (held == 0)
				continue;
			cr_assert_geq(held * lanes, N, "held=%lld lanes=%lld N=%lld", held, lanes, N);
			cr_assert_lt((held - 1) * lanes, N, "held=%lld lanes=%lld N=%lld", held, lanes, N);
			cr_assert_leq(held, 16);
			held_at_lanes[lanes] = 1;
		}
		for (int lanes = 1; lanes <= 32; lanes *= 2)
			if (lanes_seen[lanes])
				cr_assert_eq(held_at_lanes[lanes], (N + lanes - 1) / lanes <= 16,
					     "lanes=%d N=%lld", lanes, N);
		free(vs);
	}
	/* every hold has its unheld twin: the sweep weighs the two */
	cr_assert_gt(tf_count_with(tile, 90, AT_F16, 500009, 139, "held", 0), 0);
	cr_assert_gt(tf_count_with(tile, 90, AT_F16, 500009, 139, "held", 9), 0);
	cr_assert_eq(tf_count_with(tile, 90, AT_F16, 500009, 139, "held", 8), 0);
}

static void cp_async_in_16_bytes_out(const variant *v, const compiled_kernel *k, void *ctx)
{
	(void)ctx;
	/* cp_async_wait(0) */
	tf_expect_tile_ptx(v, k, "cp.async.wait_group 0");
}

static void compile_all(at_dtype dt, long long N, const char *op)
{
	variant *vs;
	size_t n = tf_enumerate(tile, 90, dt, 131072, N, &vs);
	cr_assert_gt(n, 0, "no variant at %s N=%lld", at_dtype_name(dt), N);
	for (size_t i = 0; i < n; i++)
		vs[i].op = op ? manifest_source_op(tile, op) : NULL;
	tf_for_each_distinct_kernel(vs, n, 90, cp_async_in_16_bytes_out, NULL);
	free(vs);
}

Test(backward_tile, every_f16_variant_at_33_compiles_for_sm_90, .timeout = 600)
{
	compile_all(AT_F16, 33, NULL);
}

Test(backward_tile, every_f32_variant_at_63_compiles_for_sm_90, .timeout = 600)
{
	compile_all(AT_F32, 63, NULL);
}

Test(backward_tile, every_log_bf16_variant_at_167_compiles_for_sm_90, .timeout = 600)
{
	compile_all(AT_BF16, 167, "log_softmax_backward");
}
