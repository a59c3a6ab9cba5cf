/* Online tuning in the background (ATD_OPEN_TUNE with ATD_OPEN_JIT_BACKGROUND):
 * the first call of an untuned shape queues its tuning and is served what is
 * at hand (a stored winner, or the built-in kernel); one worker thread tunes
 * the queued shapes in order, as a blocking call would (atdi_tune), and
 * bumps the JIT generation, so that the shape's next call takes the winner.
 * A failed tuning is kept too, so that it is warned about once and never
 * retried by this handle. */
#ifndef AT_DISPATCH_TUNE_WORKER_H
#define AT_DISPATCH_TUNE_WORKER_H

#include <pthread.h>
#include <stddef.h>

#include "dispatch/runtime/context.h"
#include "dispatch/policy/plan.h"

#define ATDI_TUNE_WHY_CAP 512

typedef enum atdi_tune_state {
	ATDI_TUNE_NONE = 0,    /* never queued */
	ATDI_TUNE_PENDING = 1, /* queued or being tuned */
	ATDI_TUNE_DONE = 2,
	ATDI_TUNE_FAILED = 3,
} atdi_tune_state;

typedef struct atdi_tune_job {
	atdi_ctx_info ci; /* a copy: ci.gpu.name points to ci.name */
	int op;
	at_dtype dtype;
	long long M, N;
	atdi_tune_state state;
	atdi_plan best; /* DONE: the winner and its time; PENDING with us > 0:
			   the interim winner a blocking call timed */
	double us;
	char why[ATDI_TUNE_WHY_CAP]; /* FAILED: why */
} atdi_tune_job;

/* The tuning itself, run on the worker with ci's context current and no
 * lock held: 0 with best and us, or -1 with why. */
typedef int (*atdi_tune_fn)(void *user, atdi_tune_job *job);

typedef struct atdi_tune_worker {
	pthread_mutex_t lock; /* guards everything below */
	pthread_cond_t wake;
	atdi_tune_job *jobs; /* every shape queued, in order; next: the first pending */
	size_t n, cap, next;
	int started, stopping;
	pthread_t thread;
	atdi_tune_fn tune;
	void *user;
	unsigned *generation; /* bumped (atomically) when a job ends */
} atdi_tune_worker;

/* An idle worker that will tune with tune(user, job); the thread starts
 * with the first job. 0, or -1. */
int atdi_tune_worker_init(atdi_tune_worker *w, atdi_tune_fn tune, void *user,
			  unsigned *generation);

/* Stops the worker, waiting for the shape it is on, and frees the jobs. */
void atdi_tune_worker_free(atdi_tune_worker *w);

/* The state of (ctx, op, dtype, M, N), queueing nothing: DONE copies the
 * winner into *best and *us, PENDING the interim winner (*us 0 if none);
 * FAILED copies why. */
atdi_tune_state atdi_tune_worker_peek(atdi_tune_worker *w, const atdi_ctx_info *ci, int op,
				      at_dtype dtype, long long M, long long N, atdi_plan *best,
				      double *us, char *why, size_t cap);

/* Queues the shape (unless it is known), with the interim winner that
 * serves until the worker is done (interim NULL: none). 0, or -1 (no
 * thread or memory). */
int atdi_tune_worker_queue(atdi_tune_worker *w, const atdi_ctx_info *ci, int op, at_dtype dtype,
			   long long M, long long N, const atdi_plan *interim, double us);

/* As peek, and NONE queues it now (PENDING is returned, or NONE when no
 * thread or memory could be had). */
atdi_tune_state atdi_tune_worker_ask(atdi_tune_worker *w, const atdi_ctx_info *ci, int op,
				     at_dtype dtype, long long M, long long N, atdi_plan *best,
				     double *us, char *why, size_t cap);

#endif
