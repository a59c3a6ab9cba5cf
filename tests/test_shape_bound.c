/* The one bound on a shape (common/shape_bound.h): where it lies, what it
 * says, and that the sweep config and `autotune gen` refuse by it with the
 * same words as `autotune show` (tests/test_dispatch_show.c). */
#include <criterion/criterion.h>

#include <string.h>

#include "common/shape_bound.h"
#include "tuner/config.h"

#include "tests/test_run_fixture.h"

TestSuite(shape_bound, .init = tmp_setup, .fini = tmp_teardown);

static const char too_big[] = "shape M=4096 x N=1000000000000 needs 3.28e+07 GB for its input "
			      "and output; no GPU holds that (at most 1099 GB a shape)";

Test(shape_bound, input_and_output_within_2_to_the_40_bytes)
{
	char why[256] = "";
	cr_assert_eq(at_shape_check(AT_F32, 1, 1, why, sizeof why), 0);
	/* 2^37 f32 elements: 2^40 bytes in and out, the largest */
	cr_assert_eq(at_shape_check(AT_F32, 1LL << 17, 1LL << 20, why, sizeof why), 0);
	cr_assert_eq(at_shape_check(AT_F32, (1LL << 17) + 1, 1LL << 20, why, sizeof why), -1);
	cr_assert_eq(at_shape_check(AT_BF16, (1LL << 17) + 1, 1LL << 20, why, sizeof why), 0);
	cr_assert_eq(at_shape_check(AT_F16, 1LL << 18, 1LL << 20, why, sizeof why), 0);
	cr_assert_eq(at_shape_check(AT_F32, 4096, 1000000000000LL, why, sizeof why), -1);
	cr_assert_str_eq(why, too_big);
	/* a row or a column alone may be long, up to 2^40 bytes */
	cr_assert_eq(at_shape_check(AT_F16, 1, 1LL << 38, why, sizeof why), 0);
	cr_assert_eq(at_shape_check(AT_F16, 1LL << 38, 1, why, sizeof why), 0);
}

Test(shape_bound, overflowing_products_and_bad_dimensions_are_refused)
{
	char why[256] = "";
	cr_assert_eq(at_shape_check(AT_F32, AT_SHAPE_MAX_DIM, AT_SHAPE_MAX_DIM, why, sizeof why), -1);
	cr_assert(strstr(why, "no GPU holds that") != NULL, "%s", why);
	cr_assert_eq(at_shape_check(AT_F32, 1LL << 62, 1LL << 62, why, sizeof why), -1);
	cr_assert_str_eq(why, "shape M=4611686018427387904 x N=4611686018427387904: M is more than "
			      "1099511627776, the most a dimension may be");
	cr_assert_eq(at_shape_check(AT_F32, 1, AT_SHAPE_MAX_DIM + 1, why, sizeof why), -1);
	cr_assert(strstr(why, ": N is more than 1099511627776") != NULL, "%s", why);
	cr_assert_eq(at_shape_check(AT_F32, 0, 5, why, sizeof why), -1);
	cr_assert_str_eq(why, "shape M=0 x N=5: M and N must be at least 1");
	cr_assert_eq(at_shape_check(AT_F32, 5, -1, why, sizeof why), -1);
}

Test(shape_bound, the_config_refuses_with_the_same_words)
{
	static const char yaml[] = "sweeps:\n  - op: softmax\n    dtypes: [f32]\n    M: [4096]\n"
				   "    N: [1000000000000]\n";
	sweep_config cfg;
	at_error err = { { 0 } };
	cr_assert_eq(config_parse(yaml, strlen(yaml), "x.yaml", &cfg, &err), -1);
	cr_assert(strstr(err.msg, too_big) != NULL, "%s", err.msg);
}

Test(shape_bound, gen_refuses_with_the_same_words)
{
	tr_result r = RUN("gen", "--template", "softmax_block", "-M", "4096", "-N", "1000000000000");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "autotune gen: ");
	tr_expect_in(r.err, too_big);
	cr_assert_str_eq(r.out, "");
	tr_free(&r);
	/* -N alone: one row */
	r = RUN("gen", "--template", "softmax_block", "--dtype", "bf16", "-N", "274877906945");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "shape M=1 x N=274877906945 needs 1.1e+03 GB");
	tr_free(&r);
}
