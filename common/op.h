/* What the tuner must know of an op, apart from its templates: one
 * description a op (tuner/ops/NAME_op.c, registered in tuner/ops/ops.c),
 * looked up by the name its templates' manifests give as `op:`. The sweep
 * checks a variant against the op's CPU reference within the op's
 * tolerance, on the input the op makes, and credits it the bytes the op
 * moves; the config's ops are checked against the table. Plain data and
 * pointers: this header depends on nothing but the dtypes. */
#ifndef AT_COMMON_OP_H
#define AT_COMMON_OP_H

#include <stddef.h>
#include <stdint.h>

#include "common/dtype.h"

/* The reference of one row: out[j] for j < N from the N elements of x
 * (dtype dt) from element offset on, in double. */
typedef void (*at_op_ref_row_fn)(const void *x, at_dtype dt, size_t offset, long long N,
				 double *out);

/* The reference of one row of an op of several inputs: in[k] is input k
 * (dtype dt, the row's N elements from element offset on), in the order
 * of its kernel's input arguments. */
typedef void (*at_op_ref_row_inputs_fn)(const void *const *in, at_dtype dt, size_t offset,
					long long N, double *out);

/* The reference of one row of an op with a side input and results a row
 * (cross_entropy: the row's target; its loss and lse): out[j] for j < N,
 * and row_out[k] for k < the op's row_results, from the row's N elements
 * of x (dtype dt) from element offset on and its side input (side_bytes
 * bytes), in double. */
typedef void (*at_op_ref_row_side_fn)(const void *x, at_dtype dt, size_t offset, long long N,
				      const void *side, double *out, double *row_out);

/* An op's own part of a shape on the GPU, for the sweep: tuner/ops/op_gpu.h.
 * Opaque here, so that this header names no CUDA type. */
struct op_gpu;

/* The most inputs an op reads. */
#define AT_OP_MAX_INPUTS 2

/* The check input of an M x N shape (rows dense), from seed (same seed,
 * same data): an op of several inputs fills them one after another, input
 * k at element k * M * N. */
typedef void (*at_op_input_fn)(void *x, at_dtype dt, long long M, long long N, uint64_t seed);

typedef struct at_op {
	const char *name;    /* as the manifests' `op:` and the configs' say it */
	const char *summary; /* one line, for `autotune templates` */
	/* The kernel every template of the op defines, and what it takes.
	 * A row op launches row-wise as softmax does (dispatch/launch_geometry.h):
	 * an op of one input as softmax (y, x, M, N, ldy, ldx, flags), one of
	 * two as the backward ops (dx, y, dy, M, N, lddx, ldy, lddy, flags,
	 * launch_softmax_backward); an op with its own launch says it in gpu.
	 * The signature is said here so that a template writer finds it. */
	const char *kernel_name;
	const char *kernel_signature;
	/* Bytes moved: (reads + writes) * M * N * element size; a kernel that
	 * reads a row twice is still credited reads_per_elem. Ops whose
	 * templates are another op's (also_ops) share its kernel_name. */
	int reads_per_elem, writes_per_elem;
	double tolerance[AT_DTYPE_COUNT]; /* relative L2 error allowed, per dtype */
	/* Inputs a row reads, each an M x N tensor of the dtype: 0 or 1 (one,
	 * x; the reference is ref_row), up to AT_OP_MAX_INPUTS (the
	 * reference is ref_row_inputs). */
	int ninputs;
	at_op_ref_row_fn ref_row;
	at_op_ref_row_inputs_fn ref_row_inputs;
	at_op_input_fn make_input;
	/* An op with a side input a row (side_bytes a row, after its inputs
	 * in the check data) and row_results values a row besides its M x N
	 * output (after the M x N reference): its reference is ref_row_side
	 * (cross_entropy: an int64 target; loss and lse). 0, 0: none. */
	int side_bytes, row_results;
	at_op_ref_row_side_fn ref_row_side;
	/* The op's own part of a shape on the GPU (tuner/ops/op_gpu.h: its
	 * launch, side buffers, extra outputs' check, probes); NULL: a row op
	 * (cross_entropy: launch_cross_entropy after its prepare kernel). */
	const struct op_gpu *gpu;
	/* An op whose first input is another op's output (a backward op's y,
	 * the forward's): that op's reference, through which `autotune
	 * selftest` makes the first input from its random and special rows, so
	 * that it is what a forward gives. NULL: the rows as they are. */
	at_op_ref_row_fn first_input_from;
	/* What ATD_MASKED_ZERO makes of each element of a row of all -inf
	 * (softmax 0; log_softmax -inf, ln 0); without it such a row is NaN. */
	double masked_value;
	/* non-zero: the seeds' naive softmax and cuDNN's are timed beside the
	 * variants (the same-size copy is, for every op) */
	int softmax_baselines;
} at_op;

/* The bytes an M x N shape of dtype dt moves through memory under op: the
 * numerator of its GB/s. */
double at_op_bytes_moved(const at_op *op, at_dtype dt, long long M, long long N);

/* The inputs op reads: 1 for a description that leaves ninputs 0. */
int at_op_inputs(const at_op *op);

/* Where op's side input starts in its check input at M x N of dt: after
 * its inputs, at a 16-byte boundary (the kernel loads int64 targets). */
size_t at_op_side_offset(const at_op *op, at_dtype dt, long long M, long long N);

/* The bytes of op's check input at M x N of dt: its inputs, then its side
 * input (side_bytes a row, from at_op_side_offset). */
size_t at_op_input_bytes(const at_op *op, at_dtype dt, long long M, long long N);

/* From one input's start to the next's in the tuner's copy of the check
 * input on the GPU: 256-byte aligned where op reads several inputs (as
 * tensors allocated one by one are), each input's bytes where it reads
 * one (its side input then follows at at_op_side_offset). */
size_t at_op_device_input_stride(const at_op *op, at_dtype dt, long long M, long long N);

/* The doubles of op's reference at M x N: M x N, then row_results a row. */
size_t at_op_ref_count(const at_op *op, long long M, long long N);

/* op's relative L2 tolerance for dt. */
double at_op_tolerance(const at_op *op, at_dtype dt);

#endif
