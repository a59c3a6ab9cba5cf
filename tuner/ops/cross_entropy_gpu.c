/* The cross_entropy op's hooks: see cross_entropy_gpu.h. Each adapts the
 * sweep's opaque state to the ce_shape it is. */
#include "tuner/ops/cross_entropy_gpu.h"

#include <stdlib.h>

#include "common/strbuf.h"
#include "tuner/ops/cross_entropy_shape.h"

static int make(void **state, const at_op *op, at_dtype dt, long long M, long long N,
		const void *host_x, CUdeviceptr x, const double *rows, at_error *err)
{
	ce_shape *c = xcalloc(1, sizeof *c);
	*state = c; /* freed by free_state even when this fails */
	return ce_shape_make(c, op, dt, M, N, host_x, x, rows, err);
}

static void free_state(void *state)
{
	ce_shape_free(state);
	free(state);
}

/* each variant's own prepare kernel sets the scale its check reads */
static int prepare(void *state, CUmodule module, CUstream stream, at_error *err)
{
	return ce_shape_prepare(state, module, stream, err);
}

/* the row kernel at the tuning options (its plain one, where its code has
 * one): the gradient into y */
static int launch(void *state, const op_variant *v, CUstream stream, at_error *err)
{
	ce_launch_args a = ce_shape_args(state, v->y, v->x);
	return launch_cross_entropy(v->fn, ce_plain_kernel(v->module, v->geom), v->geom, v->grid,
				    &a, 0, stream, err);
}

/* loss and lse, besides the gradient */
static int poison(void *state, CUstream stream, at_error *err)
{
	return ce_shape_poison(state, stream, err);
}

static int compare(void *state, CUstream stream, double tol, int *ok, char *reason,
		   size_t cap, at_error *err)
{
	return ce_shape_compare(state, stream, tol, ok, reason, cap, err);
}

/* the options, the edge cases in place and the forward alone */
static int probe(void *state, const op_variant *v, CUstream stream, double tol, int *ok,
		 char *reason, size_t cap, at_error *err)
{
	return ce_shape_probe(state, v->fn, ce_plain_kernel(v->module, v->geom), v->geom,
			      v->grid, v->x, stream, tol, ok, reason, cap, err);
}

const op_gpu cross_entropy_gpu = {
	.make = make,
	.free_state = free_state,
	.prepare = prepare,
	.launch = launch,
	.poison = poison,
	.compare = compare,
	.probe = probe,
};
