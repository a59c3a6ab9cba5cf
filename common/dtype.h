/* Element types the product tunes, their spelling in configs and on the
 * command line (f32, f16, bf16), and host-side conversions for f16/bf16. */
#ifndef AT_COMMON_DTYPE_H
#define AT_COMMON_DTYPE_H

#include <stddef.h>
#include <stdint.h>

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

/* IEEE binary16 and bfloat16 conversions, round to nearest even. */
uint16_t at_f32_to_f16(float f);
float at_f16_to_f32(uint16_t h);
uint16_t at_f32_to_bf16(float f);
float at_bf16_to_f32(uint16_t h);

#endif
