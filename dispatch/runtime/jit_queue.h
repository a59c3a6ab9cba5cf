/* The background compiler's queue (ATDI_JIT_BACKGROUND): jobs waiting for
 * the one worker thread, started with the first job. The worker takes the
 * jobs in order and hands each to the owner's work function; the owner's
 * lock (jit.h's) guards the queue. */
#ifndef AT_DISPATCH_JIT_QUEUE_H
#define AT_DISPATCH_JIT_QUEUE_H

#include <pthread.h>
#include <stddef.h>

#include "dispatch/runtime/jit_job.h"

/* Does a job: called on the worker thread without the lock held, and
 * returns without it. */
typedef void (*atdi_jit_work_fn)(void *user, const atdi_jit_job *job);

typedef struct atdi_jit_queue {
	pthread_mutex_t *lock; /* the owner's: guards everything below */
	pthread_cond_t wake;
	atdi_jit_job *jobs;
	size_t n, cap;
	int worker_started, stopping;
	pthread_t worker;
	atdi_jit_work_fn work;
	void *user;
} atdi_jit_queue;

/* An empty queue whose worker will do its jobs with work(user, job); lock
 * must outlive it. 0, or -1 (no condition variable). */
int atdi_jit_queue_init(atdi_jit_queue *q, pthread_mutex_t *lock, atdi_jit_work_fn work,
			void *user);

/* Stops the worker, waiting for the job it is on. Takes the lock: not
 * with it held. */
void atdi_jit_queue_stop(atdi_jit_queue *q);

/* Frees the jobs left (after atdi_jit_queue_stop). */
void atdi_jit_queue_free(atdi_jit_queue *q);

/* Whether a job of that key (atdi_jit_key) waits. With the lock held. */
int atdi_jit_queue_has(const atdi_jit_queue *q, const char *key);

/* Queues job for the worker (started now if it was not), unless the queue
 * is stopping. Best effort: no thread or no memory queues nothing. With
 * the lock held. */
void atdi_jit_queue_push(atdi_jit_queue *q, const atdi_jit_job *job);

#endif
