/* The cross_entropy op's part of a shape on the GPU, for the sweep through
 * its hooks (cross_entropy_gpu.h): its kernel takes targets, writes a loss
 * and an lse a row besides the gradient, and needs its prepare kernel's
 * scale (docs/cross-entropy.md). Here: those buffers, the launch's
 * arguments at the tuning options (int64 targets, CE_WRITE_GRAD, ls = zl =
 * softcap = 0, reduction sum: scale 1), and the check of the row results
 * against the reference's. */
#ifndef AT_TUNER_CROSS_ENTROPY_SHAPE_H
#define AT_TUNER_CROSS_ENTROPY_SHAPE_H

#include <stddef.h>

#include "common/dtype.h"
#include "common/error.h"
#include "common/op.h"
#include "cuda/driver.h"
#include "dispatch/runtime/launch_geometry.h"

/* The options' probe of a shape: its first rows run again under the
 * other options and layouts (ce_shape_probe), each against its own
 * reference on the host. */
typedef struct ce_probe {
	long long R;             /* rows probed */
	at_dtype dt;
	CUdeviceptr out;         /* R x N elements: the options' gradient */
	CUdeviceptr t32;         /* R int32 targets */
	CUdeviceptr scale;       /* one float, CE_PROBE_SCALE */
	CUdeviceptr strided;     /* 1 + R x (N + 1) elements: rows in place, misaligned */
	void *strided_host;      /* what is uploaded there: the special rows */
	CUdeviceptr t_special;   /* R int64 targets of the special rows */
	void *back;              /* room for R x (N + 1) + 1 elements copied back */
	/* the options' reference: gradient, its terms' sizes, (loss, lse) */
	double *opt_ref, *opt_size, *opt_rows;
	double *special_ref, *special_size, *special_rows; /* the special rows' (ce_special_rows) */
	double *plain_rows;      /* the first rows' loss and lse (the shape's reference) */
} ce_probe;

typedef struct ce_shape {
	long long M, N;
	CUdeviceptr target;  /* M int64, inside the shape's input buffer */
	CUdeviceptr loss, lse, ws;
	double *row_ref;     /* the reference's loss and lse, a pair a row */
	ce_probe probe;
} ce_shape;

/* The rows the probe runs again (the first ones: the check input plants
 * extreme rows among them), and the options it runs them under: soft-cap,
 * label smoothing, z-loss, int32 targets and a scale. */
#define CE_PROBE_ROWS 8
#define CE_PROBE_OPTIONS { -100, 0.1, 1e-4, 30.0, 0.5 }

/* Sets c up for an M x N shape of op whose check input is host_x on the
 * host and on the GPU at x (the targets at at_op_side_offset) and whose
 * reference's row results are rows (on the host, (loss, lse) a row: kept,
 * and what the probe needs). */
int ce_shape_make(ce_shape *c, const at_op *op, at_dtype dt, long long M, long long N,
		  const void *host_x, CUdeviceptr x, const double *rows, at_error *err);
void ce_shape_free(ce_shape *c);

/* Runs the prepare kernel of the variant's module on stream (the scale,
 * 1 at reduction sum, and the target counts into c->ws). */
int ce_shape_prepare(const ce_shape *c, CUmodule module, CUstream stream, at_error *err);

/* module's CE_PLAIN_KERNEL, opted into what g needs (launch_prepare_fn),
 * or NULL when its code defines none (or it cannot be: the kernel
 * serves). Looked up at every launch (a timed repetition's host time hides
 * behind its L2 flush), so that no function outlives its module. */
CUfunction ce_plain_kernel(CUmodule module, const launch_geometry *g);

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

/* Runs fn (geometry g, grid: the shape's, which covers fewer rows), and
 * plain (its module's CE_PLAIN_KERNEL, or NULL) where the options are
 * plain, on the probe's rows: under CE_PROBE_OPTIONS with int32 targets
 * (fn); in place (dx == x) on the contract's edge cases (ce_special_rows:
 * -inf, +inf and NaN rows, out-of-range and ignored targets) in rows of
 * stride N + 1 that start one element past an aligned boundary (the
 * scalar path), without a scale (plain, and fn too when there is a plain);
 * forward only (no CE_WRITE_GRAD, dx 0, no lse). Each run's gradient and
 * rows are compared with their reference within tol: 0 with *ok set, and
 * what failed in reason; -1 on a CUDA error. */
int ce_shape_probe(const ce_shape *c, CUfunction fn, CUfunction plain, const launch_geometry *g,
		   unsigned grid, CUdeviceptr x, CUstream stream, double tol, int *ok,
		   char *reason, size_t cap, at_error *err);

/* The relative L2 error of got (n floats) against element `which` of
 * want's pairs (want[i * 2 + which]), over the finite values; *mismatches
 * counts the rows where one is NaN and not the other or an infinity
 * differs, *first_bad is the first (-1: none). */
double ce_rows_error(const float *got, const double *want, long long n, int which,
		     long long *mismatches, long long *first_bad);

#endif
