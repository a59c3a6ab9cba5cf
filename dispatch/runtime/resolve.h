/* atd_softmax's miss path: the decision (decide.h) with the loader that
 * compiles, loads and sizes the grid, cached in the handle's lookup. */
#ifndef AT_DISPATCH_RESOLVE_H
#define AT_DISPATCH_RESOLVE_H

#include "dispatch/policy/row_ops.h"
#include "common/dtype.h"
#include "cuda/driver.h"
#include "dispatch/runtime/decide.h"
#include "dispatch/policy/lookup.h"

/* atd_softmax's loader: modules loaded, grids sized. */
extern const atdi_loader atdi_launch_loader;

/* The handle's tune worker's job (tune_worker.h): user is the handle; sets
 * the job's context current on the worker, takes slow and tunes as a
 * blocking call does, keeping the winner in the cache database. */
int atdi_tune_in_background(void *user, atdi_tune_job *job);

/* The calling thread's current context (*ctx) and whether the handle's
 * lookup holds a choice for op (atdi_op) over (dtype, M, N) there that is still good (*fresh,
 * and *out): the start of atd_softmax and of atd_query alike. Returns
 * ATD_OK, or the driver's or the context's status. */
atd_status atdi_cached(atd_handle *h, int op, int dtype, long long M, long long N,
		       CUcontext *ctx, atdi_resolved *out, int *fresh);

/* Finds or decides (decide.h) what runs (dtype, M, N) in ctx, the current
 * context, and caches it. The miss path of atd_softmax. */
atd_status atdi_resolve(atd_handle *h, CUcontext ctx, int op, at_dtype dtype, long long M,
			long long N, atdi_resolved *out);

#endif
