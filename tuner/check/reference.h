/* The CPU side of checking: random inputs, the softmax reference in double
 * precision, and the error of a GPU result against it. */
#ifndef AT_TUNER_REFERENCE_H
#define AT_TUNER_REFERENCE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "common/dtype.h"
#include "common/op.h"

/* Fills count elements of dtype dt with values uniform in [-8, 8), from a
 * deterministic generator seeded by seed (different seeds, different data). */
void ref_fill_random(void *host, at_dtype dt, size_t count, uint64_t seed);

/* fn(ctx, begin, end) over rows [0, M), split into contiguous ranges run at
 * once, one a core (at most 64); returns when every range is done. Each
 * row's work must depend on the row alone: the result is then the same
 * whatever the split. */
typedef void (*ref_rows_fn)(void *ctx, long long begin, long long end);
void ref_parallel_rows(ref_rows_fn fn, void *ctx, long long M);

/* ref[i*N + j] = softmax of row i of x (row stride ldx elements), computed
 * in double from the dtype's values, in parallel over rows. NaN rows follow
 * PyTorch: a row with a NaN, or whose max is +-inf with an inf-inf, is NaN. */
void ref_softmax(const void *x, at_dtype dt, long long M, long long N, long long ldx,
		 double *ref);

/* The softmax of one row (an at_op_ref_row_fn): the softmax op's. */
void ref_softmax_row(const void *x, at_dtype dt, size_t offset, long long N, double *out);

/* The log_softmax of one row, (x - max) - ln(sum e^(x - max)) in double:
 * NaN rows as ref_softmax_row's; an element of -inf gives -inf. */
void ref_log_softmax_row(const void *x, at_dtype dt, size_t offset, long long N, double *out);

/* ref[i*N + j] = row's reference of row i of x (row stride ldx), in
 * parallel over rows: any op's reference (at_op.ref_row), as the dtype
 * holds it: a value past dt's largest finite one (its rounding's halfway
 * point) is +-inf, as PyTorch's result in dt is (log_softmax of -3e38 and
 * 3e38 in f32). */
void ref_rows(at_op_ref_row_fn row, const void *x, at_dtype dt, long long M, long long N,
	      long long ldx, double *ref);

/* ref_rows for any op: in[k] its input k (at_op_inputs(op) of them, each
 * with row stride ld), through op->ref_row or op->ref_row_inputs. */
void ref_op_rows(const at_op *op, const void *const *in, at_dtype dt, long long M, long long N,
		 long long ld, double *ref);

/* The reference of an op with a side input and row results (ref_row_side,
 * common/op.h): ref[i*N + j] row i's values, row_out[i*row_results + k]
 * its results (as floats hold them), from x (row stride ld) and side
 * (side_bytes a row), in parallel over rows. */
void ref_op_rows_side(const at_op *op, const void *x, const void *side, at_dtype dt,
		      long long M, long long N, long long ld, double *ref, double *row_out);

/* An at_op_input_fn: M x N elements random in [-8, 8) (ref_fill_random),
 * nothing planted. */
void ref_input_random(void *x, at_dtype dt, long long M, long long N, uint64_t seed);

/* The check input and reference of an M x N shape under op (rows dense):
 * x (at_op_inputs(op) * M * N elements of dt, input k at element k * M *
 * N, then the side input: at_op_input_bytes) from seed by op->make_input,
 * ref (at_op_ref_count doubles: M * N, then the row results) by the op's
 * reference, in parallel over rows. What the sweep checks
 * every variant against (through ref_ahead). */
void ref_op_check_data(const at_op *op, at_dtype dt, long long M, long long N, uint64_t seed,
		       void *x, double *ref);

/* ref_op_check_data with the M x N reference as floats (each the double's
 * value rounded once: what the sweep uploads for gpu_compare, half the
 * bytes, its error within 2^-24 of the value, far under every tolerance)
 * and the row results (M * op->row_results doubles) into rows. */
void ref_op_check_data_f32(const at_op *op, at_dtype dt, long long M, long long N,
			   uint64_t seed, void *x, float *ref, double *rows);

/* With ATD_MASKED_ZERO: the reference rows of x whose elements are all
 * -inf become value (op->masked_value; the references give them NaN, as
 * torch.softmax). */
void ref_mask_rows(const void *x, at_dtype dt, long long M, long long N, long long ldx,
		   double value, double *ref);

/* v as dtype dt holds it, in range: +-inf past dt's largest finite value
 * (beyond the halfway point to the next power of two's step). */
double ref_saturate(double v, at_dtype dt);

typedef struct check_result {
	double rel_l2;        /* ||y - ref|| / ||ref|| over the finite ref values */
	/* elements where y is NaN and ref is not, or vice versa, or where
	 * either is infinite and they differ */
	long long mismatches;
	long long first_bad;  /* index of the first such element, -1 if none */
} check_result;

/* ||y - ref|| / ||ref|| from the sums of squares over count elements,
 * less the dtype's floor (ref_floor) an element: the one definition of the
 * checks' relative error (ref_compare, gpu_compare, the selftest's rows). */
double ref_rel_l2(double diff2, double norm2, long long count, at_dtype dt);

/* Compares y (dtype dt, row stride ldy) with ref. */
check_result ref_compare(const void *y, at_dtype dt, long long M, long long N,
			 long long ldy, const double *ref);

/* As ref_compare, the error relative to size's L2 (an element's, of the
 * same layout as ref) instead of ref's: for a result that is a difference
 * of terms which may cancel (cross-entropy's gradient p - 1 at V = 1),
 * where the terms' rounding, not the small difference, is the scale. */
check_result ref_compare_sized(const void *y, at_dtype dt, long long M, long long N,
			       long long ldy, const double *ref, const double *size);

/* The relative L2 tolerance for dt: 1e-5 for f32, 1e-2 for f16 and bf16
 * (the softmax op's; the sweep asks the op, at_op_tolerance). */
double ref_tolerance(at_dtype dt);

/* The error an element may have at the bottom of dt's range, beyond the
 * relative tolerance: a row whose exact values all lie below it (a
 * gradient of e^-1e4's in f16) rounds to zeros or subnormals, whose
 * relative error says nothing of the arithmetic. */
double ref_floor(at_dtype dt);

/* Element i of a host buffer of dtype dt as double (inline: the
 * references load every element of GBs of check input). */
static inline double ref_load(const void *buf, at_dtype dt, size_t i)
{
	switch (dt) {
	case AT_F32: return ((const float *)buf)[i];
	case AT_F16: return at_f16_to_f32(((const uint16_t *)buf)[i]);
	case AT_BF16: return at_bf16_to_f32(((const uint16_t *)buf)[i]);
	}
	return NAN;
}

/* Elements [offset, offset + N) of a host buffer of dtype dt as doubles
 * into out: a row's reference works on out, converting each once. */
void ref_load_row(const void *buf, at_dtype dt, size_t offset, long long N, double *out);

/* Stores v as element i of a host buffer of dtype dt (through f32,
 * rounded to nearest). */
void ref_store(void *buf, at_dtype dt, size_t i, double v);

/* v[0 .. N) stored as elements [offset, offset + N) of a host buffer of
 * dtype dt, each as ref_store stores it. */
void ref_store_row(void *buf, at_dtype dt, size_t offset, long long N, const double *v);

#endif
