/* The one entry behind every op's public call (atd_softmax, atd_log_softmax,
 * the backward ops): the public wrappers check their own arguments and
 * hand over the op, the shape and the arguments of its signature. Its
 * steady state, for a shape already seen in this context: cuCtxGetCurrent,
 * lock, probe the lookup table, unlock, launch; no allocation, no SQLite.
 * The first call for a shape goes through atdi_resolve. */
#ifndef AT_DISPATCH_RUN_OP_H
#define AT_DISPATCH_RUN_OP_H

#include "common/dtype.h"
#include "include/autotune/dispatch.h"

/* Runs op (atdi_op) over (dtype, M, N) with args (op_launch.h: the
 * struct of the op's signature) on stream. fn is the public call's name,
 * for messages. The arguments are checked by the caller. */
atd_status atdi_run_op(atd_handle *h, const char *fn, int op, at_dtype dtype, long long M,
		       long long N, const void *args, void *stream);

#endif
