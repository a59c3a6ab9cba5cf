/* The online-tuned store: the variants online tuning (tune.h) chose, kept
 * by GPU model and shape in the persistent cache database (jit_cache.h),
 * so that a later process serves them without tuning again. */
#ifndef AT_DISPATCH_JIT_TUNED_H
#define AT_DISPATCH_JIT_TUNED_H

#include "dispatch/policy/row_ops.h"
#include "common/dtype.h"
#include "dispatch/runtime/jit.h"
#include "include/autotune/dispatch.h"

/* A shape tuned online, as kept in the cache database. */
typedef struct atdi_tuned {
	char template_name[64];
	char params[512];
	double time_us;
} atdi_tuned;

/* The online-tuned variant of (gpu, dtype, M, N) from the cache database:
 * 1 with *out set, 0 when none. */
int atdi_jit_tuned_get(const atdi_jit *j, const atd_gpu *gpu, int op, at_dtype dtype, long long M,
		       long long N, atdi_tuned *out);

/* Keeps an online-tuned variant (replacing an earlier one). Best effort. */
void atdi_jit_tuned_put(const atdi_jit *j, const atd_gpu *gpu, int op, at_dtype dtype, long long M,
			long long N, const atdi_tuned *t, int candidates);

#endif
