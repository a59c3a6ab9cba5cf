/* Tuning one shape on the GPU: fresh random input and its CPU reference,
 * every variant compiled (through the run's cache), checked on a poisoned
 * output, timed if it passed, and all results stored in one transaction. */
#ifndef AT_TUNER_TUNE_SHAPE_H
#define AT_TUNER_TUNE_SHAPE_H

#include "db/tuning_db.h"
#include "tuner/bench.h"
#include "tuner/device.h"
#include "tuner/kernel_cache.h"
#include "tuner/plan.h"
#include "tuner/progress.h"

typedef struct tune_ctx {
	const sweep_plan *plan;
	gpu_device *gpu;
	bench *bench;
	kernel_cache *cache;
	tdb *db;
	long long gpu_id, sweep_id;
	double copy_gbps;
	unsigned long long seed;
	progress *progress;
	struct baselines *baselines; /* NULL: time no baselines */
	struct gpu_compare *compare;
	int full_timing; /* time every variant in full (no rounds, no band) */
	double bench_ms; /* accumulated time spent checking and timing */
} tune_ctx;

/* The outcome of a shape, for the final table. */
typedef struct shape_summary {
	size_t variants, passed;
	char winner_template[64];
	char winner_params[256];
	double time_us, gbps, pct_copy;
	double naive_gbps, cudnn_gbps; /* 0: not timed */
	double copy_gbps;              /* a copy of the same bytes */
} shape_summary;

/* Returns 0 when the shape was tuned and stored (even if no variant
 * passed); -1 on an error that should end the sweep (the database, a dead
 * GPU context). */
int tune_shape(tune_ctx *ctx, const sweep_shape *s, shape_summary *sum, at_error *err);

#endif
