/* An op's part of a shape on the GPU, as tune_shape.c sees every op: the
 * hooks its description points at (tuner/ops/op_gpu.h), or for a row op
 * (none) the row launch and nothing else. Through this the sweep names no
 * op: adding one with its own launch needs no edit here. */
#ifndef AT_TUNER_OP_SHAPE_H
#define AT_TUNER_OP_SHAPE_H

#include "tuner/ops/op_gpu.h"

typedef struct op_shape {
	const op_gpu *gpu; /* the op's hooks; NULL: a row op */
	void *state;       /* what its make gave */
} op_shape;

/* Sets o up for an M x N shape of op (op_gpu.h's make; a row op: nothing).
 * o is for op_shape_free even when this fails. */
int op_shape_make(op_shape *o, const at_op *op, at_dtype dt, long long M, long long N,
		  const void *host_x, CUdeviceptr x, const double *rows, at_error *err);
void op_shape_free(op_shape *o);

/* The steps of a variant's check and timing, each the op's hook or a row
 * op's: prepare, poison and compare do nothing (compare and probe set *ok
 * to 1), launch launches v as softmax (launch_softmax_backward when v->x2
 * is set), strides N. */
int op_shape_prepare(const op_shape *o, CUmodule module, CUstream stream, at_error *err);
int op_shape_launch(const op_shape *o, const op_variant *v, CUstream stream, at_error *err);
int op_shape_poison(const op_shape *o, CUstream stream, at_error *err);
int op_shape_compare(const op_shape *o, CUstream stream, double tol, int *ok, char *reason,
		     size_t cap, at_error *err);
int op_shape_probe(const op_shape *o, const op_variant *v, CUstream stream, double tol,
		   int *ok, char *reason, size_t cap, at_error *err);

#endif
