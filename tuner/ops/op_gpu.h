/* An op's own part of a shape on the GPU, for the sweep: the hooks of an op
 * whose kernel is not launched as a row op's (side inputs, outputs besides
 * its M x N one, a kernel to run first, probes beyond the check). Its
 * description points at them (at_op.gpu, opaque in common/op.h so that
 * header names no CUDA type); the sweep calls them through
 * tuner/sweep/op_shape.h and names no op. A row op has none: it is
 * launched as softmax (one input) or its backward (two). Every hook may be
 * NULL: that step is then the row op's (launch) or nothing (the rest). */
#ifndef AT_TUNER_OP_GPU_H
#define AT_TUNER_OP_GPU_H

#include <stddef.h>

#include "common/dtype.h"
#include "common/error.h"
#include "common/op.h"
#include "cuda/driver.h"
#include "dispatch/runtime/launch_geometry.h"

/* A variant's launch at a shape: its kernel, geometry and grid; its
 * output and inputs on the GPU, dense M x N tensors of the shape's dtype. */
typedef struct op_variant {
	CUfunction fn;
	CUmodule module; /* fn's: the op's other kernels (cross_entropy's plain one) */
	const launch_geometry *geom;
	unsigned grid;
	CUdeviceptr y, x; /* the output; the first input */
	CUdeviceptr x2;   /* the second input (0: an op of one) */
	long long M, N;
} op_variant;

typedef struct op_gpu {
	/* Makes the op's state of an M x N shape of dt into *state from its
	 * check input (host_x on the host, x on the GPU: the inputs, then the
	 * side input at at_op_side_offset) and its reference's row results
	 * rows (on the host: M x row_results, in double); both are the sweep's
	 * and go away after the call. *state is set even when it fails:
	 * free_state frees it. */
	int (*make)(void **state, const at_op *op, at_dtype dt, long long M, long long N,
		    const void *host_x, CUdeviceptr x, const double *rows, at_error *err);
	void (*free_state)(void *state);
	/* Before a variant's check, once: runs what its module holds besides
	 * the op's kernel (cross_entropy: its prepare kernel). */
	int (*prepare)(void *state, CUmodule module, CUstream stream, at_error *err);
	/* Launches the variant on stream, for its check and every timed run. */
	int (*launch)(void *state, const op_variant *v, CUstream stream, at_error *err);
	/* Before a check: poisons the outputs besides y (the sweep poisons y),
	 * so that one left unwritten fails. */
	int (*poison)(void *state, CUstream stream, at_error *err);
	/* After a check whose y passed: compares the other outputs with the
	 * reference within tol; 0 with *ok set (what failed in reason when
	 * not), -1 on a CUDA error. */
	int (*compare)(void *state, CUstream stream, double tol, int *ok, char *reason,
		       size_t cap, at_error *err);
	/* After a variant passed its check, before it is timed: runs it again
	 * on what the check does not cover (other options, layouts, edge
	 * cases); 0 with *ok set (what failed in reason when not), -1 on a
	 * CUDA error (err says which). */
	int (*probe)(void *state, const op_variant *v, CUstream stream, double tol, int *ok,
		     char *reason, size_t cap, at_error *err);
} op_gpu;

#endif
