/* Online tuning (ATD_OPEN_TUNE): the candidates the nearest winners give
 * for an untuned shape, timed on the GPU; the fastest is kept in the
 * online-tuned store (jit_tuned.h) by the caller. */
#ifndef AT_DISPATCH_TUNE_H
#define AT_DISPATCH_TUNE_H

#include <pthread.h>
#include <stddef.h>

#include "common/dtype.h"
#include "dispatch/runtime/context.h"
#include "dispatch/policy/plan.h"
#include "include/autotune/dispatch.h"

/* The fastest of the candidates the model and the nearest winners give
 * for (dtype, M, N), timed on scratch buffers, into *best and *best_us;
 * *tried says how many ran. Only those compiled within wait_ms are timed
 * (wait_ms < 0: all); *left says how many were still compiling then.
 * ATD_OK, or ATD_ERR_NO_KERNEL with why (no candidate, none compiled in
 * time, no memory for scratch). With slow held, ci's context current;
 * release (slow, or NULL) is unlocked while the candidates compile, ci
 * then being the caller's own copy. */
atd_status atdi_tune(atd_handle *h, const atdi_ctx_info *ci, int op, at_dtype dtype, long long M,
		     long long N, pthread_mutex_t *release, double wait_ms, atdi_plan *best,
		     double *best_us, int *tried, int *left, char *why, size_t cap);

#endif
