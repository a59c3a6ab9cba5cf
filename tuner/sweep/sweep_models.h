/* After a sweep: the models of the ops it tuned, on the GPUs it ran on,
 * refitted and stored (tuner/model/store.h). */
#ifndef AT_TUNER_SWEEP_SWEEP_MODELS_H
#define AT_TUNER_SWEEP_SWEEP_MODELS_H

#include "common/error.h"
#include "tuner/sweep/plan.h"

/* model_store_fitted for each op of p and each GPU that ran a sweep
 * numbered from first_sweep on. 0, or -1 with a message. */
int sweep_store_models(const char *db_path, const sweep_plan *p, long long first_sweep,
		       at_error *err);

#endif
