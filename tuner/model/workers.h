/* Running one job on a few threads: the leave-one-out evaluations fit a
 * model per held-out shape, each taking seconds, so their shapes are
 * shared out among threads that each call fn(job) until it runs dry. */
#ifndef AT_TUNER_MODEL_WORKERS_H
#define AT_TUNER_MODEL_WORKERS_H

/* Calls fn(job) on min(max(threads, 1), 16) threads, this one among them,
 * and returns once all have; fewer when a thread cannot be started. */
void model_run_workers(void *(*fn)(void *), void *job, int threads);

#endif
