/* The sweep's worker process: opens one GPU and the database, then tunes
 * the shapes its supervisor sends (supervisor.h), reporting each variant
 * before it runs on the GPU. */
#ifndef AT_TUNER_SWEEP_WORKER_H
#define AT_TUNER_SWEEP_WORKER_H

#include "tuner/plan.h"
#include "tuner/supervisor.h"
#include "tuner/sweep.h"

typedef struct sweep_worker_arg {
	const sweep_options *options;
	sweep_plan *plan;
} sweep_worker_arg;

/* A worker_main_fn; arg is a sweep_worker_arg. */
int sweep_worker_main(void *arg, const worker_start *start, int in, int out);

/* "softmax f32 M=4096 N=1024" */
void sweep_shape_label(const sweep_shape *s, char *buf, size_t cap);

#endif
