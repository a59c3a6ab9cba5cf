/* Rows of floats to f16 or bf16 and of those to doubles, as common/dtype.h's
 * one-element conversions give them (round to nearest even), a row at a
 * time: the check inputs and references convert GBs a sweep, and the CPU's
 * own f16 conversions (x86 F16C) do it several times faster where it has
 * them. */
#ifndef AT_TUNER_HALF_ROWS_H
#define AT_TUNER_HALF_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "common/dtype.h"

/* out[i] = at_f32_to_f16(in[i]) (dt AT_F16) or at_f32_to_bf16(in[i])
 * (AT_BF16), bit for bit, NaNs included. */
void half_from_floats(at_dtype dt, const float *in, uint16_t *out, size_t n);

/* out[i] = at_f16_to_f32(in[i]) (dt AT_F16) or at_bf16_to_f32(in[i])
 * (AT_BF16) as doubles, bit for bit, NaNs included: a reference's row
 * converted once. */
void half_to_doubles(at_dtype dt, const uint16_t *in, double *out, size_t n);

/* Whether half_from_floats and half_to_doubles convert f16 with the CPU's
 * instructions (else one element at a time, in C): the tests compare the
 * two. */
int half_rows_hardware(void);

#endif
