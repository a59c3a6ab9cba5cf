/* Rows of floats to f16 / bf16: see half_rows.h. */
#include "tuner/check/half_rows.h"

#include <math.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HALF_ROWS_F16C 1

/* vcvtps2ph rounds to nearest even (imm 0), gives subnormals exactly (it
 * ignores MXCSR's flush-to-zero) and quiets a NaN by setting its top
 * mantissa bit, as at_f32_to_f16 does; only a NaN's payload may differ,
 * so NaNs go through C. */
__attribute__((target("f16c,avx"))) static void f16_f16c(const float *in, uint16_t *out,
							  size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		__m256 v = _mm256_loadu_ps(in + i);
		if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q))) {
			for (size_t k = i; k < i + 8; k++)
				out[k] = at_f32_to_f16(in[k]);
			continue;
		}
		_mm_storeu_si128((__m128i *)(out + i), _mm256_cvtps_ph(v, 0));
	}
	for (; i < n; i++)
		out[i] = at_f32_to_f16(in[i]);
}

/* vcvtph2ps is exact (subnormals too, whatever MXCSR says); a NaN's quiet
 * bit may differ from C's, so blocks holding one go through C. */
__attribute__((target("f16c,avx"))) static void f16_to_doubles_f16c(const uint16_t *in,
								     double *out, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		__m256 v = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(in + i)));
		if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q))) {
			for (size_t k = i; k < i + 8; k++)
				out[k] = at_f16_to_f32(in[k]);
			continue;
		}
		_mm256_storeu_pd(out + i, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
		_mm256_storeu_pd(out + i + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
	}
	for (; i < n; i++)
		out[i] = at_f16_to_f32(in[i]);
}
#endif

int half_rows_hardware(void)
{
#ifdef HALF_ROWS_F16C
	return __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
#else
	return 0;
#endif
}

void half_from_floats(at_dtype dt, const float *in, uint16_t *out, size_t n)
{
	if (dt == AT_BF16) {
		for (size_t i = 0; i < n; i++)
			out[i] = at_f32_to_bf16(in[i]);
		return;
	}
#ifdef HALF_ROWS_F16C
	if (half_rows_hardware()) {
		f16_f16c(in, out, n);
		return;
	}
#endif
	for (size_t i = 0; i < n; i++)
		out[i] = at_f32_to_f16(in[i]);
}

void half_to_doubles(at_dtype dt, const uint16_t *in, double *out, size_t n)
{
	if (dt == AT_BF16) {
		for (size_t i = 0; i < n; i++)
			out[i] = at_bf16_to_f32(in[i]);
		return;
	}
#ifdef HALF_ROWS_F16C
	if (half_rows_hardware()) {
		f16_to_doubles_f16c(in, out, n);
		return;
	}
#endif
	for (size_t i = 0; i < n; i++)
		out[i] = at_f16_to_f32(in[i]);
}
