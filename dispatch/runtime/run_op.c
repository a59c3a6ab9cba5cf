/* The entry behind every op's call: see run_op.h. */
#include "dispatch/runtime/run_op.h"

#include "dispatch/policy/row_ops.h"
#include "dispatch/runtime/context.h"
#include "dispatch/runtime/handle.h"
#include "dispatch/runtime/op_launch.h"
#include "dispatch/runtime/resolve.h"

__attribute__((cold, noinline)) atd_status
atdi_launch_failed(atd_handle *h, const char *fn, const atdi_resolved *r, int op, at_dtype dtype,
		   long long M, long long N, const char *msg)
{
	return atdi_fail(h, ATD_ERR_CUDA, "%s: launching %s for %s M=%lld N=%lld: %s", fn,
			 r->level == ATD_LEVEL_DERIVED ? r->template_name
			 : r->entry		       ? r->entry->template_name
						       : "the built-in kernel",
			 atdi_op_dtype_name(op, (int)dtype), M, N, msg);
}

atd_status atdi_op_resolved(atd_handle *h, int op, at_dtype dtype, long long M, long long N,
			    atdi_resolved *r)
{
	CUcontext ctx;
	int fresh;
	atd_status s = atdi_cached(h, op, (int)dtype, M, N, &ctx, r, &fresh);
	if (s == ATD_OK && !fresh)
		s = atdi_resolve(h, ctx, op, dtype, M, N, r);
	return s;
}

atd_status atdi_run_op(atd_handle *h, const char *fn, int op, at_dtype dtype, long long M,
		       long long N, const void *args, void *stream)
{
	atdi_resolved r;
	atd_status s = atdi_op_resolved(h, op, dtype, M, N, &r);
	if (s != ATD_OK)
		return s;
	at_error err;
	if (atdi_launch_op(atdi_op_desc_of(op), r.fn, &r.geom, r.grid, args, (CUstream)stream,
			   &err) != 0)
		return atdi_launch_failed(h, fn, &r, op, dtype, M, N, err.msg);
	return ATD_OK;
}
