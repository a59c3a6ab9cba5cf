/* Tests for templates/softmax_tiny.{cu,yaml} (the tests run from the
 * repository root): rows whose bytes divide 16 (1, 2, 4 or 8 halves, 1, 2
 * or 4 floats) take a 16-byte vector of rows a thread, so the launch
 * geometry gives a CTA threads x 16 / the row's bytes rows there (a group
 * of lanes a row everywhere else), and the kernel moves them with one
 * 16-byte load and store (a group of lanes a row took 2-4 byte loads and
 * shuffles: bf16 918038 x 1 at 6.3 us against torch.compile's 5.6, f16
 * 200725 x 2 at 0.80 of torch.compile's time, H200); every variant there
 * compiles with NVRTC for sm_90 without spills. */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "tests/template_fixture.h"

static const tmpl_manifest *tiny;

static void load_tiny(void)
{
	tf_load_templates();
	tiny = tf_template("softmax_tiny");
}

TestSuite(tiny_template, .init = load_tiny, .fini = tf_free_templates);

static const at_dtype dtypes[] = { AT_F32, AT_F16, AT_BF16 };

Test(tiny_template, rows_that_divide_16_bytes_are_a_vector_of_rows_a_thread)
{
	tf_expect_tiny_rows_per_cta(tiny, 918038);
	cr_assert_eq(tf_rows_a_vector(2, 2), 4);
	cr_assert_eq(tf_rows_a_vector(8, 2), 1);
	cr_assert_eq(tf_rows_a_vector(8, 4), 0, "32 bytes: two vectors a row");
	cr_assert_eq(tf_rows_a_vector(5, 2), 0);
}

Test(tiny_template, other_rows_are_a_group_of_lanes_a_row)
{
	static const long long lengths[] = { 3, 5, 7, 9, 33, 500 };
	for (size_t k = 0; k < sizeof lengths / sizeof *lengths; k++) {
		variant *vs;
		size_t n = tf_enumerate(tiny, 90, AT_BF16, 4096, lengths[k], &vs);
		cr_assert_gt(n, 0);
		for (size_t i = 0; i < n; i++) {
			launch_geometry g = tf_geometry(&vs[i], 90, 4096, lengths[k]);
			cr_assert_eq(g.rows_per_cta,
				     tf_value(&vs[i], "threads") / tf_value(&vs[i], "lanes"));
		}
		free(vs);
	}
}

Test(tiny_template, short_rows_move_in_16_byte_vectors, .timeout = 600)
{
	const char *const wanted[] = { "ld.global.nc.v4", "st.global.v4" };
	tf_expect_vector_rows_in_ptx(tiny, 918038, wanted, sizeof wanted / sizeof *wanted);
}

/* 1 / s by rcp.rn put a test and a call to a slow path around each row's
 * reciprocal, and a thread's packed rows took theirs one after another:
 * bf16 416 x 2 at 4.43 / 4.06 us against 4.32 / 3.82 with
 * sum_reciprocal (rcp.approx and a Newton step; H200,
 * results/h200/sum-reciprocal-variant-bench-h200.log). */
static void reciprocal_without_slow_path(const variant *v, const compiled_kernel *k, void *ctx)
{
	(void)ctx;
	char *params = variant_params_str(v);
	cr_assert_null(strstr(k->ptx, "rcp.rn.f32"), "%s %s: 1 / s by rcp.rn",
		       at_dtype_name(v->dtype), params);
	cr_assert_null(strstr(k->ptx, "div.rn.f32"), "%s %s: a precise division",
		       at_dtype_name(v->dtype), params);
	cr_assert_not_null(strstr(k->ptx, "rcp.approx.ftz.f32"), "%s %s: no rcp.approx",
			   at_dtype_name(v->dtype), params);
	free(params);
}

Test(tiny_template, the_rows_reciprocal_takes_no_division_slow_path, .timeout = 600)
{
	static const long long lengths[] = { 2, 7 };
	for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; d++)
		for (size_t k = 0; k < sizeof lengths / sizeof *lengths; k++) {
			variant *vs;
			size_t n = tf_enumerate(tiny, 90, dtypes[d], 416, lengths[k], &vs);
			cr_assert_gt(n, 0);
			tf_for_each_distinct_kernel(vs, n, 90, reciprocal_without_slow_path, NULL);
			free(vs);
		}
}
