/* Tests for templates/softmax_tiny.{cu,yaml} (the tests run from the
 * repository root): rows of one element take 16 bytes of rows a thread,
 * so the launch geometry gives a CTA threads x 16 / element size rows
 * there (a group of lanes a row everywhere else), and the kernel moves them
 * with one 16-byte load and store (an elementwise op; a row a thread took
 * 8-16 times the CTAs, each a 2-4 byte load: bf16 918038 x 1 at 6.3 us
 * against torch.compile's 5.6, H200); every variant at N = 1 compiles with
 * NVRTC for sm_90 without spills. */
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

Test(tiny_template, rows_of_one_element_are_16_bytes_of_rows_a_thread)
{
	for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; d++) {
		variant *vs;
		size_t n = tf_enumerate(tiny, 90, dtypes[d], 918038, 1, &vs);
		cr_assert_gt(n, 0, "no variant at %s N=1", at_dtype_name(dtypes[d]));
		long long unit = 16 / (long long)at_dtype_size(dtypes[d]);
		for (size_t i = 0; i < n; i++) {
			launch_geometry g = tf_geometry(&vs[i], 90, 918038, 1);
			cr_assert_eq(g.rows_per_cta, tf_value(&vs[i], "threads") * unit, "%s",
				     at_dtype_name(dtypes[d]));
			cr_assert_eq(g.threads, tf_value(&vs[i], "threads"));
		}
		free(vs);
	}
}

Test(tiny_template, longer_rows_are_a_group_of_lanes_a_row)
{
	variant *vs;
	size_t n = tf_enumerate(tiny, 90, AT_BF16, 4096, 7, &vs);
	cr_assert_gt(n, 0);
	for (size_t i = 0; i < n; i++) {
		launch_geometry g = tf_geometry(&vs[i], 90, 4096, 7);
		cr_assert_eq(g.rows_per_cta, tf_value(&vs[i], "threads") / tf_value(&vs[i], "lanes"));
	}
	free(vs);
}

static void vectors_of_16_bytes(const variant *v, const compiled_kernel *k, void *ctx)
{
	(void)ctx;
	const char *const wanted[] = { "ld.global.nc.v4", "st.global.v4" };
	tf_expect_in_ptx(v, k, wanted, sizeof wanted / sizeof *wanted);
}

Test(tiny_template, one_element_rows_move_in_16_byte_vectors, .timeout = 300)
{
	for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; d++) {
		variant *vs;
		size_t n = tf_enumerate(tiny, 90, dtypes[d], 918038, 1, &vs);
		tf_for_each_distinct_kernel(vs, n, 90, vectors_of_16_bytes, NULL);
		free(vs);
	}
}
