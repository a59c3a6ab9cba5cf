/* Element types the product tunes, their spelling in configs and on the
 * command line (f32, f16, bf16), and host-side conversions for f16/bf16. */
#ifndef AT_COMMON_DTYPE_H
#define AT_COMMON_DTYPE_H

#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

typedef enum at_dtype {
	AT_F32 = 0,
	AT_F16 = 1,
	AT_BF16 = 2,
} at_dtype;

#define AT_DTYPE_COUNT 3

/* "f32", "f16", "bf16"; "?" for a value out of range. */
const char *at_dtype_name(at_dtype dt);

/* Parses a dtype spelling. Returns 0 and sets *out, or -1 if unknown. */
int at_dtype_parse(const char *name, at_dtype *out);

/* Bytes per element: 4, 2, 2. */
size_t at_dtype_size(at_dtype dt);

/* IEEE binary16 and bfloat16 conversions, round to nearest even; inline:
 * the float64 references convert every element of GBs of check input. */
static inline uint32_t at_f32_bits_(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

static inline float at_bits_f32_(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

static inline uint16_t at_f32_to_bf16(float f)
{
	uint32_t u = at_f32_bits_(f);
	if (isnan(f))
		return (uint16_t)((u >> 16) | 0x40); /* keep it a quiet NaN */
	u += 0x7fff + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

static inline float at_bf16_to_f32(uint16_t h)
{
	return at_bits_f32_((uint32_t)h << 16);
}

static inline uint16_t at_f32_to_f16(float f)
{
	uint32_t u = at_f32_bits_(f);
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

static inline float at_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f;
	uint32_t man = h & 0x3ff;
	if (exp == 0)
		return (sign ? -1.0f : 1.0f) * ((float)man * 0x1p-24f); /* exact: man < 2^10 */
	if (exp == 0x1f)
		return at_bits_f32_(sign | 0x7f800000 | (man << 13));
	return at_bits_f32_(sign | ((exp - 15 + 127) << 23) | (man << 13));
}

#endif
