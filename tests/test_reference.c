/* Tests for common/dtype.c (the f16/bf16 conversions, bit for bit) and
 * tuner/check/reference.c: the CPU softmax reference against values computed here
 * with exp(), its NaN rules, the comparison's exact error and mismatch
 * counts, the tolerances, and the random input generator. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/dtype.h"
#include "tuner/check/reference.h"

TestSuite(reference);

static float bits_f32(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

#define F16(x, want) \
	cr_assert_eq(at_f32_to_f16(x), (want), "f16(%a) = 0x%04x, want 0x%04x", (double)(x), \
		     at_f32_to_f16(x), (want))
#define BF16(x, want) \
	cr_assert_eq(at_f32_to_bf16(x), (want), "bf16(%a) = 0x%04x, want 0x%04x", (double)(x), \
		     at_f32_to_bf16(x), (want))

/* ---- dtype names -------------------------------------------------------- */

Test(reference, dtype_names_sizes_and_parsing)
{
	cr_assert_str_eq(at_dtype_name(AT_F32), "f32");
	cr_assert_str_eq(at_dtype_name(AT_F16), "f16");
	cr_assert_str_eq(at_dtype_name(AT_BF16), "bf16");
	cr_assert_str_eq(at_dtype_name((at_dtype)3), "?");
	cr_assert_eq(at_dtype_size(AT_F32), 4);
	cr_assert_eq(at_dtype_size(AT_F16), 2);
	cr_assert_eq(at_dtype_size(AT_BF16), 2);
	at_dtype dt = AT_F32;
	cr_assert_eq(at_dtype_parse("bf16", &dt), 0);
	cr_assert_eq(dt, AT_BF16);
	cr_assert_eq(at_dtype_parse("f16", &dt), 0);
	cr_assert_eq(dt, AT_F16);
	cr_assert_eq(at_dtype_parse("F32", &dt), -1);
	cr_assert_eq(at_dtype_parse("fp32", &dt), -1);
	cr_assert_eq(at_dtype_parse("", &dt), -1);
	cr_assert_eq(dt, AT_F16, "a failed parse changed *out");
}

/* ---- f16 ------------------------------------------------------------------ */

Test(reference, f16_exact_bit_patterns)
{
	F16(1.0f, 0x3c00);
	F16(-2.0f, 0xc000);
	F16(0.0f, 0x0000);
	F16(-0.0f, 0x8000);
	F16(0.1f, 0x2e66);
	F16(65504.0f, 0x7bff);              /* the largest finite f16 */
	F16(6.103515625e-05f, 0x0400);      /* the smallest normal, 2^-14 */
	F16(5.9604644775390625e-08f, 0x0001); /* the smallest subnormal, 2^-24 */
	F16(1e-8f, 0x0000);                 /* below half the smallest subnormal: zero */
	F16(-1e-8f, 0x8000);                /* keeps its sign */
	F16(3e-8f, 0x0001);                 /* just above half: rounds up to 2^-24 */
	F16(1e-30f, 0x0000);
	F16(bits_f32(0x00000001), 0x0000);  /* an f32 subnormal */
	F16(INFINITY, 0x7c00);
	F16(-INFINITY, 0xfc00);
	F16(1e10f, 0x7c00);                 /* overflow is infinity */
	F16(-65536.0f, 0xfc00);
}

Test(reference, f16_rounds_to_nearest_even)
{
	F16(1.00048828125f, 0x3c00);  /* 1 + 2^-11, halfway 0x3c00/0x3c01: even */
	F16(1.00146484375f, 0x3c02);  /* 1 + 3*2^-11, halfway 0x3c01/0x3c02: even */
	F16(1.0005f, 0x3c01);         /* just above halfway: up */
	F16(2049.0f, 0x6800);         /* halfway 2048/2050 */
	F16(2051.0f, 0x6802);         /* halfway 2050/2052 */
	F16(2.98023223876953125e-08f, 0x0000); /* 2^-25, halfway 0/1 subnormal: even */
	F16(8.94069671630859375e-08f, 0x0002); /* 3*2^-25, halfway 1/2 subnormal: even */
	F16(65519.0f, 0x7bff);        /* below halfway to 65536: stays finite */
	F16(65520.0f, 0x7c00);        /* halfway 65504/65536, odd mantissa: rounds to inf */
	F16(6.1030e-05f, 0x0400);     /* above the largest subnormal: rounds up into the normals */
}

Test(reference, f16_nan_stays_nan)
{
	uint16_t h = at_f32_to_f16(NAN);
	cr_assert_eq(h & 0x7c00, 0x7c00, "0x%04x", h);
	cr_assert_neq(h & 0x03ff, 0, "NaN became infinity: 0x%04x", h);
	/* a NaN whose payload is only in the low bits that f16 drops */
	h = at_f32_to_f16(bits_f32(0x7f800001));
	cr_assert_eq(h & 0x7c00, 0x7c00, "0x%04x", h);
	cr_assert_neq(h & 0x03ff, 0, "NaN became infinity: 0x%04x", h);
	h = at_f32_to_f16(bits_f32(0xffc00000));
	cr_assert_eq(h & 0x8000, 0x8000, "sign lost");
	cr_assert(isnan(at_f16_to_f32(h)));
	cr_assert(isnan(at_f16_to_f32(0x7e00)));
	cr_assert(isnan(at_f16_to_f32(0x7c01)));
}

Test(reference, f16_to_f32_exact)
{
	cr_assert_eq(at_f16_to_f32(0x3c00), 1.0f);
	cr_assert_eq(at_f16_to_f32(0xc000), -2.0f);
	cr_assert_eq(at_f16_to_f32(0x7bff), 65504.0f);
	cr_assert_eq(at_f16_to_f32(0x0400), 6.103515625e-05f);
	cr_assert_eq(at_f16_to_f32(0x0001), 5.9604644775390625e-08f);
	cr_assert_eq(at_f16_to_f32(0x03ff), 6.0975551605224609375e-05f);
	cr_assert_eq(at_f16_to_f32(0x3555), 0.333251953125f);
	cr_assert_eq(at_f16_to_f32(0x7c00), INFINITY);
	cr_assert_eq(at_f16_to_f32(0xfc00), -INFINITY);
	float z = at_f16_to_f32(0x8000);
	cr_assert_eq(z, 0.0f);
	cr_assert(signbit(z), "-0 lost its sign");
	cr_assert(!signbit(at_f16_to_f32(0x0000)));
}

Test(reference, f16_every_finite_value_round_trips)
{
	for (uint32_t h = 0; h < 0x10000; h++) {
		if ((h & 0x7c00) == 0x7c00)
			continue; /* inf, NaN */
		float f = at_f16_to_f32((uint16_t)h);
		cr_assert_eq(at_f32_to_f16(f), h, "0x%04x -> %a -> 0x%04x", h, (double)f,
			     at_f32_to_f16(f));
	}
}

/* ---- bf16 ----------------------------------------------------------------- */

Test(reference, bf16_exact_bit_patterns)
{
	BF16(1.0f, 0x3f80);
	BF16(-2.0f, 0xc000);
	BF16(0.0f, 0x0000);
	BF16(-0.0f, 0x8000);
	BF16(0.1f, 0x3dcd);
	BF16(65504.0f, 0x4780);   /* 0x477fe000 rounds up to 65536 */
	BF16(1e-8f, 0x322c);      /* 0x322bcc77: round up */
	BF16(INFINITY, 0x7f80);
	BF16(-INFINITY, 0xff80);
	BF16(3.38953139e38f, 0x7f7f); /* the largest finite bf16 */
	BF16(bits_f32(0x7f7fffff), 0x7f80); /* FLT_MAX rounds to infinity */
}

Test(reference, bf16_rounds_to_nearest_even)
{
	BF16(bits_f32(0x3f808000), 0x3f80); /* 1 + 2^-8: halfway, even is down */
	BF16(bits_f32(0x3f818000), 0x3f82); /* 1 + 3*2^-8: halfway, even is up */
	BF16(bits_f32(0x3f808001), 0x3f81); /* just above halfway */
	BF16(bits_f32(0x3f807fff), 0x3f80); /* just below */
	BF16(2049.0f, 0x4500);
	BF16(bits_f32(0xbf818000), 0xbf82); /* negative values round the same way */
}

Test(reference, bf16_nan_stays_nan)
{
	static const uint32_t nans[] = { 0x7fc00000, 0x7f800001, 0x7f80ffff, 0xffc00000,
					 0xff800001 };
	for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
		uint16_t h = at_f32_to_bf16(bits_f32(nans[i]));
		cr_assert_eq(h & 0x7f80, 0x7f80, "0x%08x -> 0x%04x", nans[i], h);
		cr_assert_neq(h & 0x007f, 0, "NaN 0x%08x became 0x%04x", nans[i], h);
		cr_assert_eq(h & 0x8000, (nans[i] >> 16) & 0x8000, "sign of 0x%08x lost", nans[i]);
		cr_assert(isnan(at_bf16_to_f32(h)));
	}
}

Test(reference, bf16_to_f32_is_the_high_half)
{
	cr_assert_eq(at_bf16_to_f32(0x3f80), 1.0f);
	cr_assert_eq(at_bf16_to_f32(0xc000), -2.0f);
	cr_assert_eq(at_bf16_to_f32(0x4780), 65536.0f);
	cr_assert_eq(at_bf16_to_f32(0x7f80), INFINITY);
	cr_assert_eq(at_bf16_to_f32(0x0001), bits_f32(0x00010000));
	for (uint32_t h = 0; h < 0x10000; h++) {
		if ((h & 0x7f80) == 0x7f80 && (h & 0x7f))
			continue; /* NaN */
		float f = at_bf16_to_f32((uint16_t)h);
		uint32_t u;
		memcpy(&u, &f, sizeof u);
		cr_assert_eq(u, h << 16);
		cr_assert_eq(at_f32_to_bf16(f), h, "0x%04x does not round-trip", h);
	}
}

/* ---- ref_load --------------------------------------------------------------- */

Test(reference, load_reads_each_dtype)
{
	float f[] = { 1.5f, -3.0f };
	uint16_t h[] = { 0x3c00, 0xc000 };
	uint16_t b[] = { 0x3f80, 0x4780 };
	cr_assert_eq(ref_load(f, AT_F32, 1), -3.0);
	cr_assert_eq(ref_load(h, AT_F16, 0), 1.0);
	cr_assert_eq(ref_load(h, AT_F16, 1), -2.0);
	cr_assert_eq(ref_load(b, AT_BF16, 1), 65536.0);
}

/* ---- ref_softmax ------------------------------------------------------------ */

Test(reference, softmax_of_a_small_matrix_equals_exp_over_sum)
{
	/* 3 rows of 4, row stride 5: the fifth column must be ignored */
	const float x[3][5] = {
		{ 1.0f, 2.0f, 3.0f, 4.0f, 1000.0f },
		{ -1.5f, 0.0f, 0.25f, -8.0f, NAN },
		{ 100.0f, 100.0f, 99.0f, -100.0f, INFINITY },
	};
	double ref[12];
	for (int i = 0; i < 12; i++)
		ref[i] = -1;
	ref_softmax(x, AT_F32, 3, 4, 5, ref);
	for (int i = 0; i < 3; i++) {
		double m = -INFINITY, sum = 0, e[4];
		for (int j = 0; j < 4; j++)
			m = fmax(m, x[i][j]);
		for (int j = 0; j < 4; j++)
			sum += e[j] = exp((double)x[i][j] - m);
		for (int j = 0; j < 4; j++)
			cr_assert_float_eq(ref[i * 4 + j], e[j] / sum, 1e-15, "ref[%d][%d] = %.17g, want %.17g",
					   i, j, ref[i * 4 + j], e[j] / sum);
	}
	/* a few values worked out independently */
	cr_assert_float_eq(ref[3], 1.0 / (1.0 + exp(-1) + exp(-2) + exp(-3)), 1e-15);
	cr_assert_float_eq(ref[8], 1.0 / (2.0 + exp(-1) + exp(-200)), 1e-15);
	cr_assert_eq(ref[8], ref[9]);
}

Test(reference, softmax_reads_f16_and_bf16_values)
{
	const uint16_t h[] = { 0x3c00, 0x4000, 0x0000 }; /* 1, 2, 0 */
	const uint16_t b[] = { 0x3f80, 0x4000, 0x0000 };
	double want[3], sum = exp(-1) + 1 + exp(-2);
	want[0] = exp(-1) / sum;
	want[1] = 1 / sum;
	want[2] = exp(-2) / sum;
	double ref[3];
	ref_softmax(h, AT_F16, 1, 3, 3, ref);
	for (int j = 0; j < 3; j++)
		cr_assert_float_eq(ref[j], want[j], 1e-15);
	ref_softmax(b, AT_BF16, 1, 3, 3, ref);
	for (int j = 0; j < 3; j++)
		cr_assert_float_eq(ref[j], want[j], 1e-15);
}

Test(reference, softmax_rows_sum_to_one)
{
	enum { M = 37, N = 1000 };
	float *x = malloc(sizeof(float) * M * N);
	double *ref = malloc(sizeof(double) * M * N);
	ref_fill_random(x, AT_F32, (size_t)M * N, 7);
	ref_softmax(x, AT_F32, M, N, N, ref);
	for (int i = 0; i < M; i++) {
		double sum = 0;
		for (int j = 0; j < N; j++) {
			cr_assert(ref[i * N + j] > 0 && ref[i * N + j] < 1, "ref[%d][%d] = %g", i, j,
				  ref[i * N + j]);
			sum += ref[i * N + j];
		}
		cr_assert_float_eq(sum, 1.0, 1e-12, "row %d sums to %.17g", i, sum);
	}
	free(x);
	free(ref);
}

Test(reference, softmax_many_rows_in_parallel_match_one_by_one)
{
	/* more rows than threads, rows split unevenly among them */
	enum { M = 203, N = 17 };
	uint16_t *x = malloc(sizeof(uint16_t) * M * N);
	double *all = malloc(sizeof(double) * M * N), one[N];
	ref_fill_random(x, AT_BF16, (size_t)M * N, 99);
	ref_softmax(x, AT_BF16, M, N, N, all);
	for (int i = 0; i < M; i++) {
		ref_softmax(x + i * N, AT_BF16, 1, N, N, one);
		cr_assert_eq(memcmp(one, all + i * N, sizeof one), 0, "row %d differs", i);
	}
	free(x);
	free(all);
}

Test(reference, softmax_row_with_a_nan_is_all_nan)
{
	const float x[3][3] = {
		{ 1.0f, 2.0f, 3.0f },
		{ 1.0f, NAN, 3.0f },
		{ NAN, -INFINITY, INFINITY },
	};
	double ref[9];
	ref_softmax(x, AT_F32, 3, 3, 3, ref);
	for (int j = 0; j < 3; j++) {
		cr_assert(!isnan(ref[j]), "row 0 col %d is NaN", j);
		cr_assert(isnan(ref[3 + j]), "row 1 col %d = %g, want NaN", j, ref[3 + j]);
		cr_assert(isnan(ref[6 + j]), "row 2 col %d = %g, want NaN", j, ref[6 + j]);
	}
}

Test(reference, softmax_infinities_follow_pytorch)
{
	const float x[4][3] = {
		{ -INFINITY, -INFINITY, -INFINITY }, /* all -inf: NaN */
		{ 1.0f, INFINITY, 2.0f },            /* inf - inf: NaN */
		{ 0.0f, -INFINITY, 0.0f },           /* -inf among finite: exactly 0 */
		{ -INFINITY, 5.0f, -INFINITY },      /* one finite value: exactly 1 */
	};
	double ref[12];
	ref_softmax(x, AT_F32, 4, 3, 3, ref);
	for (int j = 0; j < 3; j++) {
		cr_assert(isnan(ref[j]), "all -inf row col %d = %g", j, ref[j]);
		cr_assert(isnan(ref[3 + j]), "+inf row col %d = %g", j, ref[3 + j]);
	}
	cr_assert_eq(ref[6], 0.5);
	cr_assert_eq(ref[7], 0.0);
	cr_assert_eq(ref[8], 0.5);
	cr_assert_eq(ref[9], 0.0);
	cr_assert_eq(ref[10], 1.0);
	cr_assert_eq(ref[11], 0.0);
}

Test(reference, softmax_of_zero_rows_does_nothing)
{
	const float x[4] = { 1, 2, 3, 4 };
	double ref[4] = { -1, -1, -1, -1 };
	ref_softmax(x, AT_F32, 0, 4, 4, ref);
	for (int j = 0; j < 4; j++)
		cr_assert_eq(ref[j], -1.0, "ref[%d] written", j);
}

/* ---- ref_compare -------------------------------------------------------------- */

Test(reference, compare_identical_is_exact)
{
	const double ref[6] = { 0.25, 0.25, 0.5, 0.1, 0.2, 0.7 };
	float y[6];
	for (int i = 0; i < 6; i++)
		y[i] = (float)ref[i];
	/* 0.1f etc. are not the doubles: compare against the floats' values */
	double exact[6];
	for (int i = 0; i < 6; i++)
		exact[i] = y[i];
	check_result r = ref_compare(y, AT_F32, 2, 3, 3, exact);
	cr_assert_eq(r.rel_l2, 0.0);
	cr_assert_eq(r.mismatches, 0);
	cr_assert_eq(r.first_bad, -1);
}

Test(reference, compare_perturbed_element_gives_exact_rel_l2)
{
	const double ref[4] = { 0.25, 0.25, 0.5, 0.0 };
	float y[4] = { 0.25f, 0.25f, 0.625f, 0.0f };
	check_result r = ref_compare(y, AT_F32, 1, 4, 4, ref);
	/* ||y - ref|| = 0.125, ||ref||^2 = 0.0625 + 0.0625 + 0.25 = 0.375 */
	cr_assert_eq(r.rel_l2, sqrt(0.015625 / 0.375), "rel_l2 = %.17g", r.rel_l2);
	cr_assert_eq(r.mismatches, 0);
	cr_assert_eq(r.first_bad, -1);

	/* two perturbations in two rows, f16 output: 1.0 - 0.5 and 0 + 0.25 */
	const double ref2[4] = { 1.0, 0.0, 0.0, 1.0 };
	uint16_t h[4] = { 0x3800 /* 0.5 */, 0x3400 /* 0.25 */, 0x0000, 0x3c00 };
	r = ref_compare(h, AT_F16, 2, 2, 2, ref2);
	/* less f16's floor, 2^-24 an element (ref_floor) */
	cr_assert_eq(r.rel_l2, sqrt((0.25 + 0.0625 - 4 * 0x1p-48) / 2.0), "rel_l2 = %.17g",
		     r.rel_l2);
}

Test(reference, the_floor_forgives_rounding_at_the_bottom_of_the_range)
{
	/* exact values far below f16's smallest subnormal round to zeros */
	const double ref[4] = { 1e-9, 2e-9, 1e-9, 3e-9 };
	uint16_t zeros[4] = { 0 };
	cr_assert_eq(ref_compare(zeros, AT_F16, 1, 4, 4, ref).rel_l2, 0);
	/* a whole subnormal step off on each is not forgiven */
	uint16_t off[4] = { 2, 2, 2, 2 }; /* 2 x 2^-24 */
	cr_assert_gt(ref_compare(off, AT_F16, 1, 4, 4, ref).rel_l2, 1e-2);
}

Test(reference, compare_uses_the_output_row_stride)
{
	/* ldy 3 > N 2: the padding holds NaN and garbage that must be skipped */
	const double ref[4] = { 0.5, 0.5, 0.75, 0.25 };
	float y[6] = { 0.5f, 0.5f, NAN, 0.75f, 0.25f, 1e30f };
	check_result r = ref_compare(y, AT_F32, 2, 2, 3, ref);
	cr_assert_eq(r.rel_l2, 0.0);
	cr_assert_eq(r.mismatches, 0);
	cr_assert_eq(r.first_bad, -1);
}

Test(reference, compare_counts_nan_mismatches)
{
	/* 2 x 3; y is NaN at (1, 1) and (1, 2); ref is NaN at (0, 2) where y is not */
	const double ref[6] = { 0.5, 0.5, 0.0, 0.25, 0.25, 0.5 };
	float y[6] = { 0.5f, 0.5f, 0.0f, 0.25f, NAN, NAN };
	check_result r = ref_compare(y, AT_F32, 2, 3, 3, ref);
	cr_assert_eq(r.mismatches, 2);
	cr_assert_eq(r.first_bad, 4); /* row 1 * N 3 + column 1 */
	cr_assert_eq(r.rel_l2, 0.0, "mismatched elements count in rel_l2: %g", r.rel_l2);

	double ref_nan[6] = { 0.5, 0.5, NAN, 0.25, 0.25, 0.5 };
	float y2[6] = { 0.5f, 0.5f, 0.0f, 0.25f, 0.25f, 0.5f };
	r = ref_compare(y2, AT_F32, 2, 3, 3, ref_nan);
	cr_assert_eq(r.mismatches, 1);
	cr_assert_eq(r.first_bad, 2);

	/* NaN in both: agreed, neither a mismatch nor part of the error */
	float y3[6] = { 0.5f, 0.5f, NAN, 0.25f, 0.25f, 0.5f };
	r = ref_compare(y3, AT_F32, 2, 3, 3, ref_nan);
	cr_assert_eq(r.mismatches, 0);
	cr_assert_eq(r.first_bad, -1);
	cr_assert_eq(r.rel_l2, 0.0);
}

Test(reference, compare_with_an_all_zero_reference_uses_the_absolute_error)
{
	const double ref[2] = { 0.0, 0.0 };
	float y[2] = { 0.75f, 1.0f };
	check_result r = ref_compare(y, AT_F32, 1, 2, 2, ref);
	cr_assert_eq(r.rel_l2, 1.25);
}

Test(reference, tolerances)
{
	cr_assert_eq(ref_tolerance(AT_F32), 1e-5);
	cr_assert_eq(ref_tolerance(AT_F16), 1e-2);
	cr_assert_eq(ref_tolerance(AT_BF16), 1e-2);
}

/* ---- ref_fill_random ---------------------------------------------------------- */

Test(reference, fill_random_is_deterministic_per_seed)
{
	enum { COUNT = 4096 };
	for (int d = 0; d < AT_DTYPE_COUNT; d++) {
		size_t bytes = COUNT * at_dtype_size((at_dtype)d);
		unsigned char *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
		memset(a, 0x11, bytes);
		memset(b, 0x22, bytes);
		ref_fill_random(a, (at_dtype)d, COUNT, 42);
		ref_fill_random(b, (at_dtype)d, COUNT, 42);
		ref_fill_random(c, (at_dtype)d, COUNT, 43);
		cr_assert_eq(memcmp(a, b, bytes), 0, "%s: same seed, different data",
			     at_dtype_name((at_dtype)d));
		size_t same = 0;
		for (size_t i = 0; i < COUNT; i++)
			same += ref_load(a, (at_dtype)d, i) == ref_load(c, (at_dtype)d, i);
		cr_assert_lt(same, COUNT / 8, "%s: seeds 42 and 43 agree on %zu of %d",
			     at_dtype_name((at_dtype)d), same, COUNT);
		free(a);
		free(b);
		free(c);
	}
}

Test(reference, fill_random_writes_exactly_count_elements)
{
	float x[10];
	for (int i = 0; i < 10; i++)
		x[i] = 1234.0f;
	ref_fill_random(x, AT_F32, 8, 1);
	cr_assert_eq(x[8], 1234.0f);
	cr_assert_eq(x[9], 1234.0f);
	uint16_t h[6] = { 0xabcd, 0xabcd, 0xabcd, 0xabcd, 0xabcd, 0xabcd };
	ref_fill_random(h, AT_F16, 4, 1);
	cr_assert_eq(h[4], 0xabcd);
	cr_assert_eq(h[5], 0xabcd);
}

/* Values in [-8, 8), spread over the range (not all zeros, both ends reached). */
static void check_range(at_dtype dt, size_t count, uint64_t seed)
{
	void *buf = malloc(count * at_dtype_size(dt));
	ref_fill_random(buf, dt, count, seed);
	double lo = INFINITY, hi = -INFINITY, sum = 0;
	size_t zeros = 0;
	for (size_t i = 0; i < count; i++) {
		double v = ref_load(buf, dt, i);
		cr_assert(v >= -8.0 && v < 8.0, "%s seed %llu: element %zu = %.9g is outside [-8, 8)",
			  at_dtype_name(dt), (unsigned long long)seed, i, v);
		lo = fmin(lo, v);
		hi = fmax(hi, v);
		sum += v;
		zeros += v == 0;
	}
	cr_assert_lt(zeros, count / 100, "%s: %zu zeros", at_dtype_name(dt), zeros);
	cr_assert_lt(lo, -7.5, "%s: min %g", at_dtype_name(dt), lo);
	cr_assert_gt(hi, 7.5, "%s: max %g", at_dtype_name(dt), hi);
	cr_assert_lt(fabs(sum / (double)count), 0.1, "%s: mean %g", at_dtype_name(dt),
		     sum / (double)count);
	free(buf);
}

Test(reference, fill_random_f32_stays_in_range)
{
	check_range(AT_F32, 1 << 20, 1);
	check_range(AT_F32, 1 << 16, 0);
	check_range(AT_F32, 1 << 16, UINT64_MAX);
}

Test(reference, fill_random_f16_and_bf16_stay_in_range)
{
	check_range(AT_F16, 1 << 20, 1);
	check_range(AT_BF16, 1 << 20, 1);
}

Test(reference, fill_random_f16_and_bf16_are_rounded_f32_draws)
{
	/* the same draws as f32, converted with round to nearest even; a draw
	 * that rounds up to 8 wraps to -8 to stay in [-8, 8) */
	enum { COUNT = 4096 };
	float f[COUNT];
	uint16_t h[COUNT], b[COUNT];
	ref_fill_random(f, AT_F32, COUNT, 5);
	ref_fill_random(h, AT_F16, COUNT, 5);
	ref_fill_random(b, AT_BF16, COUNT, 5);
	for (size_t i = 0; i < COUNT; i++) {
		uint16_t want_h = at_f32_to_f16(f[i]), want_b = at_f32_to_bf16(f[i]);
		if (at_f16_to_f32(want_h) == 8.0f)
			want_h = at_f32_to_f16(-8.0f);
		if (at_bf16_to_f32(want_b) == 8.0f)
			want_b = at_f32_to_bf16(-8.0f);
		cr_assert_eq(h[i], want_h, "element %zu", i);
		cr_assert_eq(b[i], want_b, "element %zu", i);
		cr_assert(f[i] >= -8.0f && f[i] < 8.0f);
	}
}
