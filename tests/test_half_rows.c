/* Tests for tuner/check/half_rows.c and reference.c's row conversions: a
 * row converted at once, either way (x86 F16C where the CPU has it), gives,
 * bit for bit, what common/dtype.h's one-element conversions give, at every kind of
 * value (halfway points, subnormals, overflow, infinities, NaN payloads)
 * and every row length (the 8-wide blocks' tails). */
#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/dtype.h"
#include "tuner/check/half_rows.h"
#include "tuner/check/reference.h"

TestSuite(half_rows);

static float bits_f32(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

/* in[0 .. n) through half_from_floats and through the one-element
 * conversion: every element equal. */
static void expect_rows_match(at_dtype dt, const float *in, size_t n)
{
	uint16_t *got = malloc(n * sizeof *got);
	half_from_floats(dt, in, got, n);
	for (size_t i = 0; i < n; i++) {
		uint16_t want = dt == AT_F16 ? at_f32_to_f16(in[i]) : at_f32_to_bf16(in[i]);
		cr_assert_eq(got[i], want, "%s of %a (element %zu of %zu): 0x%04x, want 0x%04x",
			     at_dtype_name(dt), (double)in[i], i, n, got[i], want);
	}
	free(got);
}

Test(half_rows, every_f16_value_and_each_halfway_point)
{
	enum { COUNT = 2 * 0x10000 };
	float *in = malloc(COUNT * sizeof *in);
	size_t n = 0;
	for (uint32_t h = 0; h < 0x10000; h++) {
		in[n++] = at_f16_to_f32((uint16_t)h);
		/* halfway to the next value up in magnitude: ties to even */
		if ((h & 0x7fff) < 0x7bff)
			in[n++] = (at_f16_to_f32((uint16_t)h) + at_f16_to_f32((uint16_t)(h + 1))) / 2;
	}
	expect_rows_match(AT_F16, in, n);
	expect_rows_match(AT_BF16, in, n);
	free(in);
}

Test(half_rows, edges_of_the_range_and_nans)
{
	float in[] = {
		0.0f, -0.0f, bits_f32(0x00000001), bits_f32(0x80000001), /* f32 subnormals */
		0x1p-24f, 0x1p-25f, 0x1.8p-25f, -0x1p-25f, 0x1p-14f, 0x1.ff8p-15f, /* f16's bottom */
		65504.0f, 65519.99f, 65520.0f, -65520.0f, 1e30f, bits_f32(0x7f7fffff), /* overflow */
		INFINITY, -INFINITY, NAN, -NAN, bits_f32(0x7f800001), bits_f32(0x7fc00123),
		bits_f32(0xff812345), 8.0f, -8.0f, 7.9999995f,
	};
	size_t n = sizeof in / sizeof in[0];
	for (size_t len = 1; len <= n; len++) { /* every tail length, a NaN in or out of a block */
		expect_rows_match(AT_F16, in + n - len, len);
		expect_rows_match(AT_BF16, in + n - len, len);
	}
}

Test(half_rows, random_bit_patterns)
{
	enum { COUNT = 1 << 20 };
	float *in = malloc(COUNT * sizeof *in);
	uint64_t s = 0x9e3779b97f4a7c15ULL;
	for (size_t i = 0; i < COUNT; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		in[i] = bits_f32((uint32_t)(s >> 17));
	}
	expect_rows_match(AT_F16, in, COUNT);
	expect_rows_match(AT_BF16, in, COUNT);
	free(in);
}

Test(half_rows, load_and_store_rows_as_one_element_at_a_time)
{
	enum { N = 1031, OFFSET = 5 }; /* odd: past the blocks' ends */
	double v[N], got[N];
	for (int j = 0; j < N; j++)
		v[j] = j % 7 == 0 ? -INFINITY : j % 11 == 0 ? 1e-7 * j : (j - N / 2) * 0.37;
	for (int d = 0; d < AT_DTYPE_COUNT; d++) {
		at_dtype dt = (at_dtype)d;
		size_t size = at_dtype_size(dt);
		unsigned char *row = calloc(N + OFFSET, size), *one = calloc(N + OFFSET, size);
		ref_store_row(row, dt, OFFSET, N, v);
		for (int j = 0; j < N; j++)
			ref_store(one, dt, OFFSET + (size_t)j, v[j]);
		cr_assert_eq(memcmp(row, one, (N + OFFSET) * size), 0, "%s: stored rows differ",
			     at_dtype_name(dt));
		ref_load_row(row, dt, OFFSET, N, got);
		for (int j = 0; j < N; j++)
			cr_assert_eq(memcmp(&got[j], &(double){ ref_load(row, dt, OFFSET + (size_t)j) },
					    sizeof(double)),
				     0, "%s element %d", at_dtype_name(dt), j);
		free(row);
		free(one);
	}
}

/* Every 16-bit pattern (every value, subnormals, infinities, NaNs quiet
 * and signalling with their payloads) of f16 and bf16 through
 * half_to_doubles at every offset into the 8-wide blocks: bit for bit the
 * one-element conversion's double. */
Test(half_rows, every_half_pattern_loads_as_its_double)
{
	enum { PATTERNS = 1 << 16, SHIFT = 11 };
	uint16_t *in = malloc((PATTERNS + SHIFT) * sizeof *in);
	double *got = malloc((PATTERNS + SHIFT) * sizeof *got);
	for (int d = AT_F16; d <= AT_BF16; d++) {
		at_dtype dt = (at_dtype)d;
		for (int shift = 0; shift < SHIFT; shift++) {
			for (size_t i = 0; i < PATTERNS; i++)
				in[shift + i] = (uint16_t)i;
			/* the rest of the row's length too: every tail */
			size_t n = PATTERNS - (size_t)shift;
			half_to_doubles(dt, in + shift, got, n);
			for (size_t i = 0; i < n; i++) {
				double want = dt == AT_F16 ? at_f16_to_f32(in[shift + i])
							   : at_bf16_to_f32(in[shift + i]);
				cr_assert_eq(memcmp(&got[i], &want, sizeof want), 0,
					     "%s 0x%04x (element %zu of %zu): %a, want %a",
					     at_dtype_name(dt), in[shift + i], i, n, got[i], want);
			}
		}
	}
	free(in);
	free(got);
}

Test(half_rows, the_hardware_path_is_there_on_x86)
{
#if defined(__x86_64__)
	/* every x86-64 CPU since 2013 has F16C: a build or CPU without it
	 * would quietly take the 3x slower path */
	cr_assert(half_rows_hardware(), "no F16C on this x86-64 CPU");
#else
	cr_assert(!half_rows_hardware());
#endif
}
