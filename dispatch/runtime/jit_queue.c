/* The background compiler's queue and worker thread: see jit_queue.h. */
#include "dispatch/runtime/jit_queue.h"

#include <stdlib.h>
#include <string.h>

int atdi_jit_queue_init(atdi_jit_queue *q, pthread_mutex_t *lock, atdi_jit_work_fn work,
			void *user)
{
	memset(q, 0, sizeof *q);
	q->lock = lock;
	q->work = work;
	q->user = user;
	return pthread_cond_init(&q->wake, NULL) == 0 ? 0 : -1;
}

void atdi_jit_queue_stop(atdi_jit_queue *q)
{
	pthread_mutex_lock(q->lock);
	q->stopping = 1;
	pthread_cond_broadcast(&q->wake);
	int started = q->worker_started;
	pthread_mutex_unlock(q->lock);
	if (started)
		pthread_join(q->worker, NULL);
}

void atdi_jit_queue_free(atdi_jit_queue *q)
{
	free(q->jobs);
	pthread_cond_destroy(&q->wake);
	memset(q, 0, sizeof *q);
}

static void *worker_main(void *arg)
{
	atdi_jit_queue *q = arg;
	pthread_mutex_lock(q->lock);
	for (;;) {
		while (!q->n && !q->stopping)
			pthread_cond_wait(&q->wake, q->lock);
		if (q->stopping)
			break;
		atdi_jit_job job = q->jobs[0];
		memmove(q->jobs, q->jobs + 1, --q->n * sizeof *q->jobs);
		pthread_mutex_unlock(q->lock);
		q->work(q->user, &job);
		pthread_mutex_lock(q->lock);
	}
	pthread_mutex_unlock(q->lock);
	return NULL;
}

int atdi_jit_queue_has(const atdi_jit_queue *q, const char *key)
{
	for (size_t i = 0; i < q->n; i++) {
		char other[1400];
		atdi_jit_key(&q->jobs[i], other, sizeof other);
		if (strcmp(other, key) == 0)
			return 1;
	}
	return 0;
}

void atdi_jit_queue_push(atdi_jit_queue *q, const atdi_jit_job *job)
{
	if (q->stopping)
		return;
	if (!q->worker_started)
		q->worker_started = pthread_create(&q->worker, NULL, worker_main, q) == 0;
	if (q->worker_started && q->n == q->cap) {
		size_t n = q->cap ? 2 * q->cap : 8;
		atdi_jit_job *v = realloc(q->jobs, n * sizeof *v);
		if (v) {
			q->jobs = v;
			q->cap = n;
		}
	}
	if (q->worker_started && q->n < q->cap) {
		q->jobs[q->n++] = *job;
		pthread_cond_signal(&q->wake);
	}
}
