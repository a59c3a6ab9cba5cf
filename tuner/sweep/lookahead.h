/* Work for the shapes a sweep will tune next, started while the GPU times
 * the current one: their kernels are queued on the kernel cache's pool
 * (kernel_cache_queue_variants) and the next two shapes' inputs and CPU
 * references are computed in a background thread (ref_ahead_prepare). Which shapes come
 * next is guessed from the stride between the last two shapes this process
 * tuned: 1 with one worker; with several workers sharing the plan's queue,
 * about their number. Shapes already tuned are skipped. A wrong guess costs
 * CPU time, never a result. AUTOTUNE_LOOKAHEAD=0 turns it off (to measure
 * what it saves). One sweep per process: the state is this module's. */
#ifndef AT_TUNER_LOOKAHEAD_H
#define AT_TUNER_LOOKAHEAD_H

#include "db/tuning_db.h"
#include "tuner/device.h"
#include "tuner/sweep/kernel_cache.h"
#include "tuner/sweep/plan.h"
#include "tuner/sweep/prune_shape.h"

/* Kernels kept queued ahead per compile thread, and how far ahead (in
 * shapes) they are looked for: always the next LOOKAHEAD_MIN_SHAPES, so
 * that threads left idle while a shape waits for its last kernels have the
 * shape after it to compile. */
#define LOOKAHEAD_KERNELS_PER_THREAD 4
#define LOOKAHEAD_MIN_SHAPES 2
#define LOOKAHEAD_MAX_SHAPES 16

/* What the look-ahead works with: the sweep's plan, its GPU, kernel cache
 * and database (the tuner passes these from its tune_ctx). */
typedef struct lookahead_ctx {
	const sweep_plan *plan;
	gpu_device *gpu;
	kernel_cache *cache;
	tdb *db;
	long long gpu_id;
	unsigned long long seed; /* the sweep's, for the shapes' random input */
	const sweep_pruner *pruner; /* what the tuning will keep of each shape */
} lookahead_ctx;

/* Starts the work for the shapes after s (a shape of ctx->plan). */
void lookahead_after(const lookahead_ctx *ctx, const sweep_shape *s);

#endif
