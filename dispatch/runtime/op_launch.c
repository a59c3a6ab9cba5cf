/* The launcher of each signature: see op_launch.h. */
#include "dispatch/runtime/op_launch.h"

typedef int (*op_launcher)(CUfunction fn, const launch_geometry *g, unsigned grid,
			   const void *args, CUstream stream, at_error *err);

static int launch_row(CUfunction fn, const launch_geometry *g, unsigned grid, const void *args,
		      CUstream stream, at_error *err)
{
	const atdi_row_args *a = args;
	return launch_softmax(fn, g, grid, a->out, a->in[0], a->M, a->N, a->ld_out, a->ld_in[0],
			      a->flags, stream, err);
}

static int launch_row_grad(CUfunction fn, const launch_geometry *g, unsigned grid,
			   const void *args, CUstream stream, at_error *err)
{
	const atdi_row_args *a = args;
	return launch_softmax_backward(fn, g, grid, a->out, a->in[0], a->in[1], a->M, a->N,
				       a->ld_out, a->ld_in[0], a->ld_in[1], a->flags, stream, err);
}

static int launch_ce(CUfunction fn, const launch_geometry *g, unsigned grid, const void *args,
		     CUstream stream, at_error *err)
{
	/* fn alone: every option (the call's plain kernel is the entry point's) */
	return launch_cross_entropy(fn, NULL, g, grid, args, 0, stream, err);
}

static const op_launcher launchers[ATDI_NSIGS] = {
	[ATDI_SIG_ROW] = launch_row,
	[ATDI_SIG_ROW_GRAD] = launch_row_grad,
	[ATDI_SIG_CROSS_ENTROPY] = launch_ce,
};

int atdi_launch_op(const atdi_op_desc *d, CUfunction fn, const launch_geometry *g,
		   unsigned grid, const void *args, CUstream stream, at_error *err)
{
	return launchers[d->signature](fn, g, grid, args, stream, err);
}
