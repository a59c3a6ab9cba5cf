/* Rows of extreme values: see extreme_rows.h. */
#include "tuner/check/extreme_rows.h"

#include <math.h>
#include <stddef.h>

#include "tuner/check/reference.h"

const char *extreme_kind_name(extreme_kind k)
{
	static const char *const names[EXTREME_COUNT] = {
		"huge", "spike", "+-max", "all max", "huge negative", "offset +1e4",
		"offset -1e4", "subnormal", "masked", "all -inf", "a +inf", "a NaN",
	};
	return (unsigned)k < EXTREME_COUNT ? names[k] : "?";
}

float extreme_dtype_max(at_dtype dt)
{
	switch (dt) {
	case AT_F32: return 3.40282347e38f;
	case AT_F16: return 65504.0f;
	case AT_BF16: return 3.38953139e38f;
	}
	return 0.0f;
}

/* The smallest positive subnormal of dt, as f32 (bf16's is below f32's
 * normal range but representable in f32). */
static float smallest_subnormal(at_dtype dt)
{
	switch (dt) {
	case AT_F32: return 1.40129846e-45f;
	case AT_F16: return 5.96046448e-08f;
	case AT_BF16: return 9.18354962e-41f;
	}
	return 0.0f;
}

static void put(void *row, at_dtype dt, long long j, float v)
{
	switch (dt) {
	case AT_F32: ((float *)row)[j] = v; break;
	case AT_F16: ((uint16_t *)row)[j] = at_f32_to_f16(v); break;
	case AT_BF16: ((uint16_t *)row)[j] = at_f32_to_bf16(v); break;
	}
}

/* Element j of a row as ref_fill_random filled it: in [-8, 8). */
static float uniform8(const void *row, at_dtype dt, long long j)
{
	return (float)ref_load(row, dt, (size_t)j);
}

void extreme_fill_row(void *row, at_dtype dt, long long N, extreme_kind k, long long col)
{
	const float max = extreme_dtype_max(dt);
	for (long long j = 0; j < N; j++) {
		const float u = uniform8(row, dt, j); /* [-8, 8) */
		float v = u;
		switch (k) {
		case EXTREME_HUGE: v = u / 8.0f * max; break;
		case EXTREME_SPIKE: v = j == col ? max : u; break;
		case EXTREME_MAX_MIN: v = j == col ? max : -max; break;
		case EXTREME_ALL_MAX: v = max; break;
		case EXTREME_NEG_HUGE: v = -max / 2.0f - fabsf(u) / 16.0f * max; break;
		case EXTREME_OFFSET_POS: v = u + 1e4f; break;
		case EXTREME_OFFSET_NEG: v = u - 1e4f; break;
		case EXTREME_SUBNORMAL: v = smallest_subnormal(dt) * (float)(1 + (int)(fabsf(u) * 2)); break;
		case EXTREME_MASKED: v = j % 3 == 1 ? -INFINITY : u; break;
		case EXTREME_ALL_NEG_INF: v = -INFINITY; break;
		case EXTREME_POS_INF: v = j == col ? INFINITY : u; break;
		case EXTREME_NAN: v = j == col ? NAN : u; break;
		default: break;
		}
		put(row, dt, j, v);
	}
}

long long extreme_planted_row(long long M, int k)
{
	const long long kinds = M < EXTREME_FINITE_COUNT ? M : EXTREME_FINITE_COUNT;
	if (k < 0 || k >= kinds)
		return -1;
	return kinds == 1 ? 0 : (long long)k * (M - 1) / (kinds - 1);
}

int extreme_plant_rows(void *x, at_dtype dt, long long M, long long N)
{
	const size_t row_bytes = (size_t)N * at_dtype_size(dt);
	int planted = 0;
	for (int k = 0; k < EXTREME_FINITE_COUNT; k++) {
		const long long r = extreme_planted_row(M, k);
		if (r < 0)
			break;
		extreme_fill_row((char *)x + (size_t)r * row_bytes, dt, N, (extreme_kind)k,
				 (r * 7919 + k) % N);
		planted++;
	}
	return planted;
}

void extreme_check_input(void *x, at_dtype dt, long long M, long long N, uint64_t seed)
{
	ref_fill_random(x, dt, (size_t)M * (size_t)N, seed);
	extreme_plant_rows(x, dt, M, N);
}
