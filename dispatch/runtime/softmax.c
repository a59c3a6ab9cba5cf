/* atd_softmax and atd_log_softmax: the one call an application makes per
 * row op. Its steady state, for a shape already seen in this context, is:
 * check the arguments, cuCtxGetCurrent, lock, probe the lookup table,
 * unlock, cuLaunchKernel; no allocation, no SQLite. The first call for a
 * shape goes through atdi_resolve. */
#include <stdint.h>

#include "common/dtype.h"
#include "dispatch/policy/row_ops.h"
#include "dispatch/runtime/context.h"
#include "dispatch/runtime/handle.h"
#include "dispatch/runtime/resolve.h"

/* Says which argument is wrong; kept off the fast path. fn names the call. */
static __attribute__((cold, noinline)) atd_status
bad_argument(atd_handle *h, const char *fn, atd_dtype dtype, const void *y, const void *x,
	     int64_t M, int64_t N, int64_t ldy, int64_t ldx, unsigned flags)
{
	if ((unsigned)dtype >= AT_DTYPE_COUNT)
		return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT, "%s: unknown dtype %d", fn,
				 (int)dtype);
	if (!y || !x)
		return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
				 !y ? "y" : "x");
	if (flags & ~ATD_MASKED_ZERO)
		return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT,
				 "%s: unknown flags 0x%x (known: ATD_MASKED_ZERO)", fn,
				 flags & ~ATD_MASKED_ZERO);
	if (M < 1 || N < 1)
		return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT,
				 "%s: M and N must be at least 1 (M = %lld, N = %lld)", fn,
				 (long long)M, (long long)N);
	return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT,
			 "%s: the strides must be at least N = %lld (ldy = %lld, ldx = %lld)", fn,
			 (long long)N, (long long)ldy, (long long)ldx);
}

static __attribute__((cold, noinline)) atd_status
launch_failed(atd_handle *h, const char *fn, const atdi_resolved *r, int op, atd_dtype dtype,
	      int64_t M, int64_t N, const char *msg)
{
	return atdi_fail(h, ATD_ERR_CUDA, "%s: launching %s for %s M=%lld N=%lld: %s", fn,
			 r->level == ATD_LEVEL_DERIVED ? r->template_name
			 : r->entry		       ? r->entry->template_name
						       : "the built-in kernel",
			 atdi_op_dtype_name(op, (int)dtype), (long long)M, (long long)N, msg);
}

/* Every row op's call: fn is its public name, for messages. */
static inline atd_status row_op(atd_handle *h, const char *fn, int op, atd_dtype dtype, void *y,
				const void *x, int64_t M, int64_t N, int64_t ldy, int64_t ldx,
				unsigned flags, void *stream)
{
	if (!h)
		return ATD_ERR_INVALID_ARGUMENT;
	if (!y || !x || M < 1 || N < 1 || ldx < N || ldy < N || (unsigned)dtype >= AT_DTYPE_COUNT ||
	    (flags & ~ATD_MASKED_ZERO))
		return bad_argument(h, fn, dtype, y, x, M, N, ldy, ldx, flags);
	CUcontext ctx;
	atdi_resolved r;
	int fresh;
	atd_status s = atdi_cached(h, op, (int)dtype, M, N, &ctx, &r, &fresh);
	if (s != ATD_OK ||
	    (!fresh && (s = atdi_resolve(h, ctx, op, (at_dtype)dtype, M, N, &r)) != ATD_OK))
		return s;
	at_error err;
	if (launch_softmax(r.fn, &r.geom, r.grid, (CUdeviceptr)(uintptr_t)y,
			   (CUdeviceptr)(uintptr_t)x, M, N, ldy, ldx, flags, (CUstream)stream,
			   &err) != 0)
		return launch_failed(h, fn, &r, op, dtype, M, N, err.msg);
	return ATD_OK;
}

ATD_API atd_status atd_softmax_ex(atd_handle *h, atd_dtype dtype, void *y, const void *x,
				  int64_t M, int64_t N, int64_t ldy, int64_t ldx, unsigned flags,
				  void *stream)
{
	return row_op(h, flags ? "atd_softmax_ex" : "atd_softmax", ATDI_SOFTMAX, dtype, y, x, M, N,
		      ldy, ldx, flags, stream);
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
	return row_op(h, "atd_log_softmax", ATDI_LOG_SOFTMAX, dtype, y, x, M, N, ldy, ldx, flags,
		      stream);
}
