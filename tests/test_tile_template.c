/* Tests for templates/softmax_tile.{cu,yaml} (the tests run from the
 * repository root): the template serves only short rows that are not a
 * multiple of the 16-byte vector and whose bytes do not divide it, with a
 * tile of 2 to 32 KB and the tightest hold; its launch geometry (the tile
 * and two chunks of dynamic shared memory, rows_per_cta rows a CTA, max_n
 * the tuned N); a thread or two a row for rows of a few elements; and
 * every variant at f16 N = 100, f32 N = 33 and bf16 N = 7 compiles with
 * NVRTC for sm_90 with cp.async in and 16-byte stores out, no spills and
 * no stack, and a thread a row with no shuffle. */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "tests/template_fixture.h"

static const tmpl_manifest *tile;

static void load_tile(void)
{
	tf_load_templates();
	tile = tf_template("softmax_tile");
}

TestSuite(tile_template, .init = load_tile, .fini = tf_free_templates);

static size_t enumerate_at(at_dtype dt, long long M, long long N, variant **out)
{
	return tf_enumerate(tile, 90, dt, M, N, out);
}

Test(tile_template, only_rows_off_the_vector)
{
	variant *vs;
	/* aligned rows: 16-byte vectors in the per-row templates */
	cr_assert_eq(enumerate_at(AT_F32, 65536, 32, &vs), 0);
	cr_assert_eq(enumerate_at(AT_F16, 65536, 128, &vs), 0);
	cr_assert_eq(enumerate_at(AT_BF16, 4096, 1000, &vs), 0);
	/* rows whose bytes divide 16: softmax_tiny's vectors of rows */
	cr_assert_eq(enumerate_at(AT_F16, 1000000, 2, &vs), 0);
	cr_assert_eq(enumerate_at(AT_BF16, 1000000, 1, &vs), 0);
	cr_assert_eq(enumerate_at(AT_F32, 1000000, 2, &vs), 0);
	/* longer rows: the per-row templates */
	cr_assert_eq(enumerate_at(AT_F32, 4096, 1001, &vs), 0);
	cr_assert_eq(enumerate_at(AT_BF16, 4096, 513, &vs), 0);
	/* f32 N = 511: 2 KB a row, so only 8- and 16-row tiles fit 32 KB */
	size_t n = enumerate_at(AT_F32, 4096, 511, &vs);
	cr_assert_gt(n, 0);
	for (size_t i = 0; i < n; i++)
		cr_assert_leq(tf_value(&vs[i], "rows_per_cta"), 16);
	free(vs);
	/* cp.async needs sm_80 */
	cr_assert_eq(tf_enumerate(tile, 75, AT_F16, 65536, 100, &vs), 0);
}

Test(tile_template, tightest_hold_and_tile_bounds)
{
	static const struct {
		at_dtype dt;
		long long N;
	} cases[] = { { AT_F32, 33 }, { AT_F16, 100 }, { AT_BF16, 255 }, { AT_F32, 129 } };
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		variant *vs;
		long long N = cases[c].N;
		size_t elem = at_dtype_size(cases[c].dt);
		size_t n = enumerate_at(cases[c].dt, 65536, N, &vs);
		cr_assert_gt(n, 0, "%s N=%lld", at_dtype_name(cases[c].dt), N);
		for (size_t i = 0; i < n; i++) {
			long long lanes = tf_value(&vs[i], "lanes");
			long long ept = tf_value(&vs[i], "elems_per_thread");
			long long rows = tf_value(&vs[i], "rows_per_cta");
			long long groups = tf_value(&vs[i], "threads") / lanes;
			cr_assert_geq(lanes * ept, N);
			cr_assert_lt(lanes * (ept - 1), N);
			cr_assert_eq(rows % groups, 0);
			cr_assert_leq(rows / groups, 4);
			cr_assert_leq(rows * N * (long long)elem, 32768);
			cr_assert_geq(rows * N * (long long)elem, 2048);
			cr_assert_eq(tf_value(&vs[i], "vec") * (long long)elem, 16);
			launch_geometry g = tf_geometry(&vs[i], 90, 65536, N);
			cr_assert_eq(g.dyn_smem, rows * N * (long long)elem + 32);
			cr_assert_eq(g.rows_per_cta, rows);
			cr_assert_eq(g.threads, tf_value(&vs[i], "threads"));
			cr_assert_eq(g.persistent, 0);
			cr_assert_eq(g.max_n, N);
		}
		free(vs);
	}
}

/* Rows of a few elements: a thread a row (its row read from the tile one
 * element at a time) or two, with up to four rows a thread; the hold stays
 * the tightest (a thread holds the whole row only when it is alone). */
Test(tile_template, a_thread_or_two_a_row_for_rows_of_a_few_elements)
{
	variant *vs;
	size_t n = enumerate_at(AT_F32, 1048576, 7, &vs);
	int one = 0, two = 0;
	for (size_t i = 0; i < n; i++) {
		long long lanes = tf_value(&vs[i], "lanes");
		long long ept = tf_value(&vs[i], "elems_per_thread");
		long long rows = tf_value(&vs[i], "rows_per_cta");
		long long threads = tf_value(&vs[i], "threads");
		if (lanes == 1) {
			one++;
			cr_assert_eq(ept, 7);
			cr_assert_leq(rows / threads, 4);
			cr_assert_eq(rows % threads, 0);
		} else if (lanes == 2) {
			two++;
			cr_assert_eq(ept, 4);
		}
	}
	cr_assert_gt(one, 0, "no variant of a thread a row at f32 N = 7");
	cr_assert_gt(two, 0, "no variant of two threads a row at f32 N = 7");
	free(vs);
	/* 512 rows of a thread each: the largest tile the manifest has */
	n = enumerate_at(AT_BF16, 1048576, 5, &vs);
	int rows512 = 0;
	for (size_t i = 0; i < n; i++)
		rows512 += tf_value(&vs[i], "rows_per_cta") == 512;
	cr_assert_gt(rows512, 0);
	free(vs);
	/* a thread cannot hold a row past 32 elements */
	n = enumerate_at(AT_F32, 65536, 33, &vs);
	for (size_t i = 0; i < n; i++)
		cr_assert_gt(tf_value(&vs[i], "lanes"), 1);
	free(vs);
}

static void cp_async_in_16_bytes_out(const variant *v, const compiled_kernel *k, void *ctx)
{
	(void)ctx;
	tf_expect_tile_ptx(v, k, "cp.async.wait_all");
	if (tf_value(v, "lanes") == 1)
		cr_assert_null(strstr(k->ptx, "shfl"), "threads=%lld lanes=1: a thread a row shuffles",
			       tf_value(v, "threads"));
}

static void compile_all(at_dtype dt, long long N)
{
	variant *vs;
	size_t n = enumerate_at(dt, 65536, N, &vs);
	cr_assert_gt(n, 0, "no variant at %s N=%lld", at_dtype_name(dt), N);
	tf_for_each_distinct_kernel(vs, n, 90, cp_async_in_16_bytes_out, NULL);
	free(vs);
}

Test(tile_template, every_f16_variant_at_100_compiles_for_sm_90, .timeout = 600)
{
	compile_all(AT_F16, 100);
}

Test(tile_template, every_f32_variant_at_33_compiles_for_sm_90, .timeout = 600)
{
	compile_all(AT_F32, 33);
}

Test(tile_template, every_bf16_variant_at_7_compiles_for_sm_90, .timeout = 600)
{
	compile_all(AT_BF16, 7);
}
