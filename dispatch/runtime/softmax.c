/* The public calls of the row ops (atd_softmax, atd_log_softmax and their
 * backward ops): each checks its arguments, the same way for every row op,
 * and hands them to atdi_run_op (run_op.h) as an atdi_row_args. */
#include <stdint.h>

#include "common/dtype.h"
#include "dispatch/policy/row_ops.h"
#include "dispatch/runtime/handle.h"
#include "dispatch/runtime/op_launch.h"
#include "dispatch/runtime/run_op.h"

/* What a row op's call names its tensors and strides by, for messages. */
typedef struct row_names {
	const char *out, *in[2], *ld_out, *ld_in[2];
} row_names;

static const row_names forward_names = { "y", { "x", NULL }, "ldy", { "ldx", NULL } };
static const row_names grad_names = { "dx", { "y", "dy" }, "lddx", { "ldy", "lddy" } };

/* Says which argument is wrong; kept off the fast path. fn names the call. */
static __attribute__((cold, noinline)) atd_status
bad_argument(atd_handle *h, const char *fn, int ninputs, const row_names *nm, atd_dtype dtype,
	     const atdi_row_args *a)
{
	if ((unsigned)dtype >= AT_DTYPE_COUNT)
		return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT, "%s: unknown dtype %d", fn,
				 (int)dtype);
	if (!a->out)
		return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, nm->out);
	for (int i = 0; i < ninputs; i++)
		if (!a->in[i])
			return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
					 nm->in[i]);
	if (a->flags & ~ATD_MASKED_ZERO)
		return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT,
				 "%s: unknown flags 0x%x (known: ATD_MASKED_ZERO)", fn,
				 a->flags & ~ATD_MASKED_ZERO);
	if (a->M < 1 || a->N < 1)
		return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT,
				 "%s: M and N must be at least 1 (M = %lld, N = %lld)", fn, a->M, a->N);
	const char *ld = a->ld_out < a->N ? nm->ld_out : a->ld_in[0] < a->N ? nm->ld_in[0]
										: nm->ld_in[1];
	long long v = a->ld_out < a->N ? a->ld_out : a->ld_in[0] < a->N ? a->ld_in[0] : a->ld_in[1];
	return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT,
			 "%s: the strides must be at least N = %lld (%s = %lld)", fn, a->N, ld, v);
}

/* Every row op's call: checks a (ninputs inputs) and runs op. */
static atd_status row_op(atd_handle *h, const char *fn, int op, const row_names *nm,
			 atd_dtype dtype, const atdi_row_args *a, void *stream)
{
	if (!h)
		return ATD_ERR_INVALID_ARGUMENT;
	const int n = atdi_op_desc_of(op)->ninputs;
	if (!a->out || !a->in[0] || (n > 1 && !a->in[1]) || a->M < 1 || a->N < 1 ||
	    a->ld_out < a->N || a->ld_in[0] < a->N || (n > 1 && a->ld_in[1] < a->N) ||
	    (unsigned)dtype >= AT_DTYPE_COUNT || (a->flags & ~ATD_MASKED_ZERO))
		return bad_argument(h, fn, n, nm, dtype, a);
	return atdi_run_op(h, fn, op, (at_dtype)dtype, a->M, a->N, a, stream);
}

static atd_status forward(atd_handle *h, const char *fn, int op, atd_dtype dtype, void *y,
			  const void *x, int64_t M, int64_t N, int64_t ldy, int64_t ldx,
			  unsigned flags, void *stream)
{
	atdi_row_args a = { (CUdeviceptr)(uintptr_t)y, { (CUdeviceptr)(uintptr_t)x, 0 }, M, N,
			    ldy, { ldx, N }, flags };
	return row_op(h, fn, op, &forward_names, dtype, &a, stream);
}

static atd_status backward(atd_handle *h, const char *fn, int op, atd_dtype dtype, void *dx,
			   const void *y, const void *dy, int64_t M, int64_t N, int64_t lddx,
			   int64_t ldy, int64_t lddy, unsigned flags, void *stream)
{
	atdi_row_args a = { (CUdeviceptr)(uintptr_t)dx,
			    { (CUdeviceptr)(uintptr_t)y, (CUdeviceptr)(uintptr_t)dy },
			    M, N, lddx, { ldy, lddy }, flags };
	return row_op(h, fn, op, &grad_names, dtype, &a, stream);
}

ATD_API atd_status atd_softmax_ex(atd_handle *h, atd_dtype dtype, void *y, const void *x,
				  int64_t M, int64_t N, int64_t ldy, int64_t ldx, unsigned flags,
				  void *stream)
{
	return forward(h, flags ? "atd_softmax_ex" : "atd_softmax", ATDI_SOFTMAX, dtype, y, x, M,
		       N, ldy, ldx, flags, stream);
}

ATD_API atd_status atd_softmax(atd_handle *h, atd_dtype dtype, void *y, const void *x,
			       int64_t M, int64_t N, int64_t ldy, int64_t ldx, void *stream)
{
	return atd_softmax_ex(h, dtype, y, x, M, N, ldy, ldx, 0, stream);
}

ATD_API atd_status atd_log_softmax(atd_handle *h, atd_dtype dtype, void *y, const void *x,
				   int64_t M, int64_t N, int64_t ldy, int64_t ldx, unsigned flags,
				   void *stream)
{
	return forward(h, "atd_log_softmax", ATDI_LOG_SOFTMAX, dtype, y, x, M, N, ldy, ldx, flags,
		       stream);
}

ATD_API atd_status atd_softmax_backward(atd_handle *h, atd_dtype dtype, void *dx, const void *y,
					const void *dy, int64_t M, int64_t N, int64_t lddx,
					int64_t ldy, int64_t lddy, unsigned flags, void *stream)
{
	return backward(h, "atd_softmax_backward", ATDI_SOFTMAX_BACKWARD, dtype, dx, y, dy, M, N,
			lddx, ldy, lddy, flags, stream);
}

ATD_API atd_status atd_log_softmax_backward(atd_handle *h, atd_dtype dtype, void *dx,
					    const void *y, const void *dy, int64_t M, int64_t N,
					    int64_t lddx, int64_t ldy, int64_t lddy, unsigned flags,
					    void *stream)
{
	return backward(h, "atd_log_softmax_backward", ATDI_LOG_SOFTMAX_BACKWARD, dtype, dx, y,
			dy, M, N, lddx, ldy, lddy, flags, stream);
}
