/* The sweep's worker process: opens one GPU and the database, then tunes
 * the shapes its supervisor sends (supervisor.h), reporting each variant
 * before it runs on the GPU. */
#ifndef AT_TUNER_SWEEP_WORKER_H
#define AT_TUNER_SWEEP_WORKER_H

#include "tuner/sweep/plan.h"
#include "tuner/sweep/supervisor.h"
#include "tuner/sweep/sweep_options.h"

typedef struct sweep_worker_arg {
	const sweep_options *options;
	sweep_plan *plan;
} sweep_worker_arg;

/* A worker_main_fn; arg is a sweep_worker_arg. */
int sweep_worker_main(void *arg, const worker_start *start, int in, int out);

#endif
