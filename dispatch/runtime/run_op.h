/* The one entry behind every op's public call (atd_softmax, atd_log_softmax,
 * the backward ops): the public wrappers check their own arguments and
 * hand over the op, the shape and the arguments of its signature. Its
 * steady state, for a shape already seen in this context: cuCtxGetCurrent,
 * lock, probe the lookup table, unlock, launch; no allocation, no SQLite.
 * The first call for a shape goes through atdi_resolve. */
#ifndef AT_DISPATCH_RUN_OP_H
#define AT_DISPATCH_RUN_OP_H

#include "common/dtype.h"
#include "dispatch/policy/lookup.h"
#include "include/autotune/dispatch.h"

/* What runs op over (dtype, M, N) in the current context, into r: the
 * lookup's entry, or resolved now (atdi_resolve). For an op whose call
 * launches more than its kernel (cross_entropy). */
atd_status atdi_op_resolved(atd_handle *h, int op, at_dtype dtype, long long M, long long N,
			    atdi_resolved *r);

/* The handle's message for a launch of r that failed (msg: why); returns
 * ATD_ERR_CUDA. fn is the public call's name. */
atd_status atdi_launch_failed(atd_handle *h, const char *fn, const atdi_resolved *r, int op,
			      at_dtype dtype, long long M, long long N, const char *msg);

/* Runs op (atdi_op) over (dtype, M, N) with args (op_launch.h: the
 * struct of the op's signature) on stream. fn is the public call's name,
 * for messages. The arguments are checked by the caller. */
atd_status atdi_run_op(atd_handle *h, const char *fn, int op, at_dtype dtype, long long M,
		       long long N, const void *args, void *stream);

#endif
