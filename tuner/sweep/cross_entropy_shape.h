/* The cross_entropy op's part of a shape on the GPU, for tune_shape.c: its
 * kernel takes targets, writes a loss and an lse a row besides the
 * gradient, and needs its prepare kernel's scale (docs/cross-entropy.md).
 * Here: those buffers, the launch's arguments at the tuning options
 * (int64 targets, CE_WRITE_GRAD, ls = zl = softcap = 0, reduction sum:
 * scale 1), and the check of the row results against the reference's. */
#ifndef AT_TUNER_CROSS_ENTROPY_SHAPE_H
#define AT_TUNER_CROSS_ENTROPY_SHAPE_H

#include <stddef.h>

#include "common/dtype.h"
#include "common/error.h"
#include "common/op.h"
#include "cuda/driver.h"
#include "dispatch/runtime/launch_geometry.h"

typedef struct ce_shape {
	long long M, N;
	CUdeviceptr target;  /* M int64, inside the shape's input buffer */
	CUdeviceptr loss, lse, ws;
	double *row_ref;     /* the reference's loss and lse, a pair a row */
} ce_shape;

/* Sets c up for an M x N shape of op whose check input is on the GPU at x
 * (the targets at at_op_side_offset) and whose reference is ref (on the
 * host: its row results are kept). */
int ce_shape_make(ce_shape *c, const at_op *op, at_dtype dt, long long M, long long N,
		  CUdeviceptr x, const double *ref, at_error *err);
void ce_shape_free(ce_shape *c);

/* Runs the prepare kernel of the variant's module on stream (the scale,
 * 1 at reduction sum, and the target counts into c->ws). */
int ce_shape_prepare(const ce_shape *c, CUmodule module, CUstream stream, at_error *err);

/* The row kernel's arguments: the gradient into dx, the logits x. */
ce_launch_args ce_shape_args(const ce_shape *c, CUdeviceptr dx, CUdeviceptr x);

/* Fills loss and lse with NaN (0xff bytes) on stream: an unwritten row
 * fails. */
int ce_shape_poison(const ce_shape *c, CUstream stream, at_error *err);

/* Compares the loss and lse the last launch wrote with the reference's
 * (relative L2 each within tol, equal NaNs and infinities): 0 with *ok
 * set, and what failed in reason when it is not; -1 on a CUDA error. */
int ce_shape_compare(const ce_shape *c, CUstream stream, double tol, int *ok, char *reason,
		     size_t cap, at_error *err);

/* The relative L2 error of got (n floats) against element `which` of
 * want's pairs (want[i * 2 + which]), over the finite values; *mismatches
 * counts the rows where one is NaN and not the other or an infinity
 * differs, *first_bad is the first (-1: none). */
double ce_rows_error(const float *got, const double *want, long long n, int which,
		     long long *mismatches, long long *first_bad);

#endif
