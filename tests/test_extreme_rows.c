/* Tests for tuner/check/extreme_rows.c (the rows of the numerics contract),
 * the reference's masked-zero rows, the selftest's extreme case, and the
 * flags that tie the templates, the launch and the public header together. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/autotune/dispatch.h"
#include "tuner/check/extreme_rows.h"
#include "tuner/check/reference.h"
#include "tuner/selftest/selftest_cases.h"

TestSuite(extreme_rows);

#define ROW_N 96

static double *row_of(at_dtype dt, extreme_kind k, long long col, void *buf)
{
	ref_fill_random(buf, dt, ROW_N, 42);
	extreme_fill_row(buf, dt, ROW_N, k, col);
	static double ref[ROW_N];
	ref_softmax(buf, dt, 1, ROW_N, ROW_N, ref);
	return ref;
}

static double sum_of(const double *r)
{
	double s = 0;
	for (int j = 0; j < ROW_N; j++)
		s += r[j];
	return s;
}

Test(extreme_rows, every_finite_kind_gives_a_distribution_in_every_dtype)
{
	for (int dt = 0; dt < AT_DTYPE_COUNT; dt++)
		for (int k = 0; k < EXTREME_FINITE_COUNT; k++) {
			float buf[ROW_N];
			double *ref = row_of((at_dtype)dt, (extreme_kind)k, 5, buf);
			for (int j = 0; j < ROW_N; j++)
				cr_assert(!isnan(ref[j]), "%s %s: NaN at %d", at_dtype_name((at_dtype)dt),
					  extreme_kind_name((extreme_kind)k), j);
			cr_assert_float_eq(sum_of(ref), 1.0, 1e-12, "%s %s sums to %.17g",
					   at_dtype_name((at_dtype)dt),
					   extreme_kind_name((extreme_kind)k), sum_of(ref));
		}
}

Test(extreme_rows, the_values_are_what_each_kind_says)
{
	for (int dt = 0; dt < AT_DTYPE_COUNT; dt++) {
		const double max = extreme_dtype_max((at_dtype)dt);
		float buf[ROW_N];
		double *ref = row_of((at_dtype)dt, EXTREME_MAX_MIN, 7, buf);
		cr_assert_eq(ref_load(buf, (at_dtype)dt, 7), max);
		cr_assert_eq(ref_load(buf, (at_dtype)dt, 8), -max);
		cr_assert_eq(ref[7], 1.0);
		ref = row_of((at_dtype)dt, EXTREME_ALL_MAX, 0, buf);
		for (int j = 0; j < ROW_N; j++)
			cr_assert_float_eq(ref[j], 1.0 / ROW_N, 1e-15);
		ref = row_of((at_dtype)dt, EXTREME_SPIKE, 11, buf);
		cr_assert_eq(ref_load(buf, (at_dtype)dt, 11), max);
		cr_assert_eq(ref[11], 1.0);
		row_of((at_dtype)dt, EXTREME_HUGE, 0, buf);
		double biggest = 0;
		for (int j = 0; j < ROW_N; j++) {
			const double v = fabs(ref_load(buf, (at_dtype)dt, (size_t)j));
			cr_assert_leq(v, max);
			biggest = v > biggest ? v : biggest;
		}
		cr_assert_gt(biggest, max / 4, "%s: huge is not huge", at_dtype_name((at_dtype)dt));
		row_of((at_dtype)dt, EXTREME_SUBNORMAL, 0, buf);
		for (int j = 0; j < ROW_N; j++) {
			const double v = ref_load(buf, (at_dtype)dt, (size_t)j);
			cr_assert(v > 0 && v < (dt == AT_F16 ? 6.2e-5 : 1.2e-38),
				  "%s: %g is not subnormal", at_dtype_name((at_dtype)dt), v);
		}
		ref = row_of((at_dtype)dt, EXTREME_MASKED, 0, buf);
		cr_assert_eq(ref_load(buf, (at_dtype)dt, 1), -INFINITY);
		cr_assert_eq(ref[1], 0.0);
	}
}

Test(extreme_rows, the_nan_kinds_give_nan_as_torch)
{
	for (int k = EXTREME_FINITE_COUNT; k < EXTREME_COUNT; k++) {
		float buf[ROW_N];
		double *ref = row_of(AT_BF16, (extreme_kind)k, 3, buf);
		for (int j = 0; j < ROW_N; j++)
			cr_assert(isnan(ref[j]), "%s: element %d is %g", extreme_kind_name((extreme_kind)k),
				  j, ref[j]);
	}
}

Test(extreme_rows, masked_zero_turns_only_rows_of_all_neg_inf_to_zeros)
{
	float x[3 * ROW_N];
	ref_fill_random(x, AT_F32, 3 * ROW_N, 9);
	extreme_fill_row(x, AT_F32, ROW_N, EXTREME_ALL_NEG_INF, 0);
	extreme_fill_row(x + 2 * ROW_N, AT_F32, ROW_N, EXTREME_NAN, 4);
	double ref[3 * ROW_N];
	ref_softmax(x, AT_F32, 3, ROW_N, ROW_N, ref);
	ref_mask_rows(x, AT_F32, 3, ROW_N, ROW_N, 0.0, ref);
	for (int j = 0; j < ROW_N; j++) {
		cr_assert_eq(ref[j], 0.0);
		cr_assert(!isnan(ref[ROW_N + j]) && ref[ROW_N + j] > 0);
		cr_assert(isnan(ref[2 * ROW_N + j]), "a NaN row stays NaN");
	}
}

Test(extreme_rows, planted_rows_spread_from_the_first_to_the_last)
{
	cr_assert_eq(extreme_planted_row(1000, 0), 0);
	cr_assert_eq(extreme_planted_row(1000, EXTREME_FINITE_COUNT - 1), 999);
	cr_assert_eq(extreme_planted_row(1000, EXTREME_FINITE_COUNT), -1);
	cr_assert_eq(extreme_planted_row(1, 0), 0);
	cr_assert_eq(extreme_planted_row(1, 1), -1);
	cr_assert_eq(extreme_planted_row(3, 2), 2);
	for (int k = 1; k < EXTREME_FINITE_COUNT; k++)
		cr_assert_gt(extreme_planted_row(50, k), extreme_planted_row(50, k - 1));
	float x[50 * 8];
	ref_fill_random(x, AT_F32, 50 * 8, 1);
	cr_assert_eq(extreme_plant_rows(x, AT_F32, 50, 8), EXTREME_FINITE_COUNT);
	cr_assert_eq(x[extreme_planted_row(50, EXTREME_ALL_MAX) * 8 + 3], extreme_dtype_max(AT_F32));
	cr_assert_eq(extreme_plant_rows(x, AT_F32, 4, 8), 4);
}

Test(extreme_rows, the_selftest_case_runs_every_kind_with_and_without_masked_zero)
{
	st_shape s[ST_MAX_SHAPES];
	size_t n = st_case_shapes(ST_CASE_EXTREME, ST_MODE_FULL, s, ST_MAX_SHAPES);
	cr_assert_gt(n, 0);
	cr_assert_eq(n % 2, 0);
	size_t masked = 0;
	for (size_t i = 0; i < n; i++) {
		cr_assert(s[i].extreme);
		cr_assert_geq(s[i].M, EXTREME_COUNT, "M=%lld misses kinds", s[i].M);
		masked += s[i].flags == ATD_MASKED_ZERO;
	}
	cr_assert_eq(masked, n / 2);
	cr_assert_eq(st_case_shapes(ST_CASE_EXTREME, ST_MODE_SANITIZE, s, ST_MAX_SHAPES), 0);
	cr_assert_str_eq(st_row_name(&s[0], EXTREME_SPIKE), "spike");
	cr_assert_str_eq(st_row_name(&s[0], EXTREME_COUNT + EXTREME_NAN), "a NaN");
	char label[128];
	st_shape_label(&s[1], label, sizeof label);
	cr_assert_not_null(strstr(label, "masked rows zero"), "%s", label);
	unsigned mask = 0;
	cr_assert_eq(st_case_list_parse("extreme", &mask), 0);
	cr_assert_eq(mask, 1u << ST_CASE_EXTREME);
}

Test(extreme_rows, the_selftest_input_holds_each_kind_in_turn)
{
	st_shape s = { .kind = ST_CASE_EXTREME, .M = 2 * EXTREME_COUNT, .N = 16, .ldx = 16,
		       .ldy = 16, .extreme = 1 };
	float *img = calloc(st_image_elems(&s, AT_F32, s.ldx), sizeof *img);
	st_fill_input(&s, AT_F32, img, 5);
	const float *rows = img + st_front_elems(&s, AT_F32);
	for (int rep = 0; rep < 2; rep++) {
		const float *all_max = rows + (rep * EXTREME_COUNT + EXTREME_ALL_MAX) * 16;
		const float *masked = rows + (rep * EXTREME_COUNT + EXTREME_ALL_NEG_INF) * 16;
		for (int j = 0; j < 16; j++) {
			cr_assert_eq(all_max[j], extreme_dtype_max(AT_F32));
			cr_assert_eq(masked[j], -INFINITY);
		}
	}
	free(img);
}

/* The templates' flag bit is the public header's. */
Test(extreme_rows, the_templates_masked_zero_bit_is_the_headers)
{
	FILE *f = fopen("templates/softmax_common.cuh", "r");
	cr_assert_not_null(f);
	char line[256];
	unsigned bit = 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "#define FLAG_MASKED_ZERO %uu", &bit) == 1)
			break;
	fclose(f);
	cr_assert_eq(bit, ATD_MASKED_ZERO);
}

Test(extreme_rows, atd_softmax_ex_refuses_unknown_flags_before_touching_the_gpu)
{
	atd_handle *h = NULL;
	cr_assert_eq(atd_open("/nonexistent/x.db", ATD_OPEN_FALLBACK, &h), ATD_OK);
	int dummy;
	cr_assert_eq(atd_softmax_ex(h, ATD_F32, &dummy, &dummy, 1, 1, 1, 1, 2u, NULL),
		     ATD_ERR_INVALID_ARGUMENT);
	cr_assert_not_null(strstr(atd_errmsg(h), "unknown flags 0x2"), "%s", atd_errmsg(h));
	atd_close(h);
}
