/* After a sweep: each op's performance model refitted on everything the
 * database holds for the GPU it ran on, and stored in its models table, so
 * that the dispatch library serves the shapes nobody tuned by the model
 * (level `predicted`) with no `autotune model fit --store` to remember. */
#ifndef AT_TUNER_SWEEP_STORE_MODELS_H
#define AT_TUNER_SWEEP_STORE_MODELS_H

#include "common/error.h"
#include "tuner/sweep/plan.h"

/* For each op of p and each GPU that ran a sweep numbered from first_sweep
 * on: fits the op's model when that GPU has at least PRUNE_MIN_SHAPES
 * tuned shapes of it (else says why not), stores it, and prints a line for
 * each. Returns 0, or -1 with a message (the database unreadable). */
int sweep_store_models(const char *db_path, const sweep_plan *p, long long first_sweep,
		       at_error *err);

#endif
