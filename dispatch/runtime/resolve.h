/* atd_softmax's miss path: the decision (decide.h) with the loader that
 * compiles, loads and sizes the grid, cached in the handle's lookup. */
#ifndef AT_DISPATCH_RESOLVE_H
#define AT_DISPATCH_RESOLVE_H

#include "common/dtype.h"
#include "cuda/driver.h"
#include "dispatch/runtime/decide.h"
#include "dispatch/policy/lookup.h"

/* atd_softmax's loader: modules loaded, grids sized. */
extern const atdi_loader atdi_launch_loader;

/* Finds or decides (decide.h) what runs (dtype, M, N) in ctx, the current
 * context, and caches it. The miss path of atd_softmax. */
atd_status atdi_resolve(atd_handle *h, CUcontext ctx, at_dtype dtype, long long M, long long N,
			atdi_resolved *out);

#endif
