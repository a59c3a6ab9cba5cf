#include "dtype.h"

#include <math.h>
#include <string.h>

static const char *const dtype_names[AT_DTYPE_COUNT] = { "f32", "f16", "bf16" };
static const size_t dtype_sizes[AT_DTYPE_COUNT] = { 4, 2, 2 };

const char *at_dtype_name(at_dtype dt)
{
	return (unsigned)dt < AT_DTYPE_COUNT ? dtype_names[dt] : "?";
}

int at_dtype_parse(const char *name, at_dtype *out)
{
	for (int i = 0; i < AT_DTYPE_COUNT; i++) {
		if (strcmp(name, dtype_names[i]) == 0) {
			*out = (at_dtype)i;
			return 0;
		}
	}
	return -1;
}

size_t at_dtype_size(at_dtype dt)
{
	return (unsigned)dt < AT_DTYPE_COUNT ? dtype_sizes[dt] : 0;
}

static uint32_t f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

static float bits_f32(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

uint16_t at_f32_to_bf16(float f)
{
	uint32_t u = f32_bits(f);
	if (isnan(f))
		return (uint16_t)((u >> 16) | 0x40); /* keep it a quiet NaN */
	u += 0x7fff + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

float at_bf16_to_f32(uint16_t h)
{
	return bits_f32((uint32_t)h << 16);
}

uint16_t at_f32_to_f16(float f)
{
	uint32_t u = f32_bits(f);
	uint32_t sign = (u >> 16) & 0x8000;
	uint32_t exp = (u >> 23) & 0xff;
	uint32_t man = u & 0x7fffff;
	if (exp == 0xff)
		return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));
	int e = (int)exp - 127 + 15;
	if (e >= 0x1f)
		return (uint16_t)(sign | 0x7c00);
	if (e <= 0) {
		if (e < -10)
			return (uint16_t)sign;
		man |= 0x800000;
		int shift = 14 - e;
		uint32_t half = man >> shift;
		uint32_t rem = man & ((1u << shift) - 1);
		uint32_t mid = 1u << (shift - 1);
		if (rem > mid || (rem == mid && (half & 1)))
			half++;
		return (uint16_t)(sign | half);
	}
	uint32_t half = ((uint32_t)e << 10) | (man >> 13);
	uint32_t rem = man & 0x1fff;
	if (rem > 0x1000 || (rem == 0x1000 && (half & 1)))
		half++; /* may carry into the exponent, which is still right */
	return (uint16_t)(sign | half);
}

float at_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f;
	uint32_t man = h & 0x3ff;
	if (exp == 0)
		return (sign ? -1.0f : 1.0f) * ldexpf((float)man, -24);
	if (exp == 0x1f)
		return bits_f32(sign | 0x7f800000 | (man << 13));
	return bits_f32(sign | ((exp - 15 + 127) << 23) | (man << 13));
}
