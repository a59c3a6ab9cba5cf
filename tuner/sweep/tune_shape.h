/* Tuning one shape on the GPU: fresh random input and its CPU reference,
 * every variant compiled (through the run's cache), checked on a poisoned
 * output, timed if it passed, and all results stored in one transaction. */
#ifndef AT_TUNER_TUNE_SHAPE_H
#define AT_TUNER_TUNE_SHAPE_H

#include "db/tuning_db.h"
#include "tuner/timing/timer.h"
#include "tuner/device.h"
#include "tuner/sweep/kernel_cache.h"
#include "tuner/sweep/plan.h"
#include "tuner/sweep/prune_shape.h"

/* A variant that must fail without running (it killed or hung an earlier
 * worker process; supervisor.h). */
typedef struct tune_exclusion {
	int variant; /* index into the shape's variants; -1: the baselines */
	char reason[512];
} tune_exclusion;

/* What the tuner tells its supervisor while it works (all optional). */
typedef struct tune_hooks {
	/* about to run `variant` (-1: the baselines) on the GPU; called again
	 * while it runs (timing), as a heartbeat */
	void (*on_gpu)(void *arg, int variant, const char *tmpl, const char *params);
	void (*on_cpu)(void *arg);                      /* GPU work over for now */
	void (*on_step)(void *arg, size_t step, size_t steps); /* variants checked */
	void *arg;
} tune_hooks;

typedef struct tune_ctx {
	const sweep_plan *plan;
	const sweep_pruner *pruner; /* NULL: every variant */
	gpu_device *gpu;
	gpu_timer *timer;
	kernel_cache *cache;
	tdb *db;
	long long gpu_id, sweep_id;
	double copy_gbps;
	unsigned long long seed;
	tune_hooks hooks;
	const tune_exclusion *excluded; /* for the shape being tuned */
	size_t nexcluded;
	int current_variant;            /* the last one sent to the GPU (-1: baselines) */
	struct baselines *baselines; /* NULL: time no baselines */
	struct gpu_compare *compare;
	int full_timing; /* time every variant in full (no rounds, no band) */
	int audit;       /* also time every variant in full and compare (sweep --audit) */
	double bench_ms; /* accumulated time spent checking and timing */
	/* asked between variants and phases (and by the kernel cache's waits):
	 * non-zero drops the shape (Ctrl-C, interrupt.h); NULL: never */
	int (*interrupted)(void);
} tune_ctx;

/* The outcome of a shape, for the final table. */
typedef struct shape_summary {
	size_t variants, passed;
	size_t enumerated; /* the variants before pruning (tuner/sweep/prune_shape.h) */
	char winner_template[64];
	char winner_params[256];
	double time_us, gbps, pct_copy;
	double naive_gbps, cudnn_gbps; /* 0: not timed */
	double copy_gbps;              /* a copy of the same bytes */
	/* sweep --audit (0: not audited): the rounds' winner against the best of
	 * full timing, by full-timing medians and head to head */
	double audit_full_ratio, audit_head_ratio;
	/* and where the rounds left full timing's best: its rounds' median over
	 * the winner's, and whether it got past the first round */
	double audit_best_rounds_ratio;
	int audit_best_full;
} shape_summary;

/* Returns 0 when the shape was tuned and stored (even if no variant
 * passed); -1 on an error that ends this process's work: the database, a
 * dead GPU context (ctx->current_variant names the variant last launched;
 * the caller tells them apart with cuCtxSynchronize), or ctx->interrupted
 * (err "interrupted"; nothing of the shape is stored). */
int tune_shape(tune_ctx *ctx, const sweep_shape *s, shape_summary *sum, at_error *err);

#endif
