/* An op's part of a shape on the GPU: see op_shape.h. */
#include "tuner/sweep/op_shape.h"

#include <string.h>

int op_shape_make(op_shape *o, const at_op *op, at_dtype dt, long long M, long long N,
		  const void *host_x, CUdeviceptr x, const double *rows, at_error *err)
{
	memset(o, 0, sizeof *o);
	o->gpu = op->gpu;
	if (!o->gpu || !o->gpu->make)
		return 0;
	return o->gpu->make(&o->state, op, dt, M, N, host_x, x, rows, err);
}

void op_shape_free(op_shape *o)
{
	if (o->gpu && o->gpu->free_state)
		o->gpu->free_state(o->state);
	memset(o, 0, sizeof *o);
}

int op_shape_prepare(const op_shape *o, CUmodule module, CUstream stream, at_error *err)
{
	if (!o->gpu || !o->gpu->prepare)
		return 0;
	return o->gpu->prepare(o->state, module, stream, err);
}

int op_shape_launch(const op_shape *o, const op_variant *v, CUstream stream, at_error *err)
{
	if (o->gpu && o->gpu->launch)
		return o->gpu->launch(o->state, v, stream, err);
	if (v->x2)
		return launch_softmax_backward(v->fn, v->geom, v->grid, v->y, v->x, v->x2, v->M,
					       v->N, v->N, v->N, v->N, 0, stream, err);
	return launch_softmax(v->fn, v->geom, v->grid, v->y, v->x, v->M, v->N, v->N, v->N, 0,
			      stream, err);
}

int op_shape_poison(const op_shape *o, CUstream stream, at_error *err)
{
	if (!o->gpu || !o->gpu->poison)
		return 0;
	return o->gpu->poison(o->state, stream, err);
}

int op_shape_compare(const op_shape *o, CUstream stream, double tol, int *ok, char *reason,
		     size_t cap, at_error *err)
{
	*ok = 1;
	if (!o->gpu || !o->gpu->compare)
		return 0;
	return o->gpu->compare(o->state, stream, tol, ok, reason, cap, err);
}

int op_shape_probe(const op_shape *o, const op_variant *v, CUstream stream, double tol,
		   int *ok, char *reason, size_t cap, at_error *err)
{
	*ok = 1;
	if (!o->gpu || !o->gpu->probe)
		return 0;
	return o->gpu->probe(o->state, v, stream, tol, ok, reason, cap, err);
}
