/* The cross_entropy op's reference and check input (docs/cross-entropy.md):
 * per row its loss, its lse and the gradient of its loss with respect to
 * the logits, in double, for every option; and the logits and targets the
 * sweep checks every variant on. */
#ifndef AT_TUNER_CROSS_ENTROPY_ROWS_H
#define AT_TUNER_CROSS_ENTROPY_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "common/dtype.h"

/* The options of one call, as the kernel takes them. */
typedef struct ce_options {
	long long ignore_index;
	double label_smoothing, z_loss, softcap; /* softcap 0: none */
	double scale;                            /* the gradient's (prepare's ws[0]) */
} ce_options;

/* What the sweep tunes with: torch's defaults at reduction sum. */
#define CE_OPTIONS_TUNING { -100, 0.0, 0.0, 0.0, 1.0 }

/* The ignore_index of the sweep's check input. */
#define CE_CHECK_IGNORE_INDEX (-100)

/* The row of N logits of dt from element offset of x, target t: its loss,
 * its lse and (grad not NULL) its gradient, grad[j] for j < N. A target
 * equal to o->ignore_index: loss 0, gradient 0; outside [0, N) otherwise:
 * loss and gradient NaN; lse always. Differences first, as the kernels: a
 * finite row of any magnitude has a finite lse. */
void ce_ref_row(const void *x, at_dtype dt, size_t offset, long long N, long long t,
		const ce_options *o, double *grad, double *loss, double *lse);

/* As ce_ref_row, and (size not NULL) size[j] the sum of the magnitudes of
 * grad[j]'s terms (probability, target, smoothing): the scale of an f32
 * kernel's rounding where the terms cancel (V = 1: p - 1 leaves only
 * z-loss's 2 lambda lse p, ~1e-4 of them), for ref_compare_sized. */
void ce_ref_row_sized(const void *x, at_dtype dt, size_t offset, long long N, long long t,
		      const ce_options *o, double *grad, double *size, double *loss, double *lse);

/* The op's at_op_ref_row_side_fn: the tuning options, side the row's
 * int64 target; row_out[0] the loss, row_out[1] the lse. */
void ce_ref_row_tuning(const void *x, at_dtype dt, size_t offset, long long N,
		       const void *side, double *out, double *row_out);

/* The op's at_op_input_fn: M x N logits (random in [-8, 8), the softmax
 * check's finite extreme rows planted: extreme_check_input), then M int64
 * targets (from at_op_side_offset: M N size(dt) up to 16 bytes): seeded, uniform over [0, N), about one in
 * ten CE_CHECK_IGNORE_INDEX. */
void ce_check_input(void *x, at_dtype dt, long long M, long long N, uint64_t seed);

/* The targets ce_check_input makes (M int64, from seed). */
void ce_check_targets(long long *t, long long M, long long N, uint64_t seed);

/* The edge cases of the contract, one a row, that the sweep's probe runs
 * every variant on (CE_SPECIAL_ROWS rows at most): in rows of x (R rows of
 * N elements of dt, row stride ld) and their targets t, row 0 becomes all
 * -inf, row 1 gets a +inf, row 2 a NaN in its last column, row 3 the
 * target N and row 4 the target -7 (out of range: NaN, never read), row 5
 * a NaN and the ignore_index -100 (loss and gradient 0, lse NaN), row 6
 * the target N - 1 (the last column); row 7 stays as it is. Rows past R
 * are not touched. */
#define CE_SPECIAL_ROWS 8
void ce_special_rows(void *x, at_dtype dt, long long R, long long N, long long ld, long long *t);

#endif
