/* Tests for templates/softmax_backward_tiny.{cu,yaml} (the tests run from
 * the repository root): rows whose bytes divide 16 (1, 2, 4 or 8 halves, 1,
 * 2 or 4 floats) take 16-byte vectors of rows of y and of dy a thread
 * (`vectors` of them), so the launch geometry gives a CTA threads x vectors
 * x 16 / the row's bytes rows there (a group of lanes a row everywhere
 * else), and the kernel moves them with 16-byte loads and stores
 * (softmax_backward_warp's two lanes a row of two, a 4-byte vector each,
 * ran f16 591129 x 2 at 0.62 of a copy, torch.compile at 0.96-0.98,
 * H200). */
#include <criterion/criterion.h>

#include <stdlib.h>

#include "tests/template_fixture.h"

static const tmpl_manifest *tiny;

static void load_tiny(void)
{
	tf_load_templates();
	tiny = tf_template("softmax_backward_tiny");
}

TestSuite(backward_tiny, .init = load_tiny, .fini = tf_free_templates);

Test(backward_tiny, rows_that_divide_16_bytes_are_a_vector_of_rows_a_thread)
{
	tf_expect_tiny_rows_per_cta(tiny, 591129);
	variant *vs;
	size_t n = tf_enumerate(tiny, 90, AT_F16, 591129, 2, &vs), several = 0;
	for (size_t i = 0; i < n; i++)
		several += tf_value(&vs[i], "vectors") > 1;
	cr_assert_gt(several, 0, "rows of two halves: several vectors a thread among the variants");
	free(vs);
}

/* It serves launch-bound rows up to 512 elements (16 a lane of 32), no
 * longer ones. */
Test(backward_tiny, serves_rows_up_to_512)
{
	variant *vs;
	size_t n = tf_enumerate(tiny, 90, AT_F32, 16, 512, &vs);
	cr_assert_gt(n, 0);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(tf_value(&vs[i], "lanes") * tf_value(&vs[i], "elems_per_thread"), 512);
	free(vs);
	cr_assert_eq(tf_enumerate(tiny, 90, AT_F32, 16, 513, &vs), 0);
	free(vs);
}

Test(backward_tiny, short_rows_move_in_16_byte_vectors, .timeout = 600)
{
	const char *const wanted[] = { "ld.global.v4", "st.global.v4" };
	tf_expect_vector_rows_in_ptx(tiny, 591129, wanted, sizeof wanted / sizeof *wanted);
}
