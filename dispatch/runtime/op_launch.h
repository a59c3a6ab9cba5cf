/* Launching any op's kernel: the launcher of its signature (row_ops.h's
 * atdi_signature) over the arguments of its call, so that the entry point,
 * online tuning and the tests launch every op by one function. */
#ifndef AT_DISPATCH_OP_LAUNCH_H
#define AT_DISPATCH_OP_LAUNCH_H

#include "common/error.h"
#include "cuda/driver.h"
#include "dispatch/policy/row_ops.h"
#include "dispatch/runtime/launch_geometry.h"

/* The arguments of a row op (ATDI_SIG_ROW, ATDI_SIG_ROW_GRAD): the output
 * and the op's inputs (x; or y and dy), each of M rows of N elements with
 * its stride in elements. */
typedef struct atdi_row_args {
	CUdeviceptr out, in[2];
	long long M, N, ld_out, ld_in[2];
	unsigned flags;
} atdi_row_args;

/* Launches fn, a kernel of op d, with args (the struct of d's signature:
 * atdi_row_args for the row ops, ce_launch_args for cross_entropy) as
 * launch_softmax does. */
int atdi_launch_op(const atdi_op_desc *d, CUfunction fn, const launch_geometry *g,
		   unsigned grid, const void *args, CUstream stream, at_error *err);

#endif
