/* The background tuner: see tune_worker.h. */
#include "dispatch/runtime/tune_worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int atdi_tune_worker_init(atdi_tune_worker *w, atdi_tune_fn tune, void *user,
			  unsigned *generation)
{
	memset(w, 0, sizeof *w);
	w->tune = tune;
	w->user = user;
	w->generation = generation;
	if (pthread_mutex_init(&w->lock, NULL) != 0)
		return -1;
	if (pthread_cond_init(&w->wake, NULL) != 0) {
		pthread_mutex_destroy(&w->lock);
		return -1;
	}
	return 0;
}

static void *work(void *arg)
{
	atdi_tune_worker *w = arg;
	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->stopping && w->next == w->n)
			pthread_cond_wait(&w->wake, &w->lock);
		if (w->stopping)
			break;
		/* a copy: the array may grow while the job runs unlocked */
		atdi_tune_job job = w->jobs[w->next];
		job.ci.gpu.name = job.ci.name; /* the copy's own, not the array's */
		size_t i = w->next++;
		pthread_mutex_unlock(&w->lock);
		int rc = w->tune(w->user, &job);
		pthread_mutex_lock(&w->lock);
		job.state = rc == 0 ? ATDI_TUNE_DONE : ATDI_TUNE_FAILED;
		w->jobs[i] = job;
		w->jobs[i].ci.gpu.name = w->jobs[i].ci.name;
		__atomic_add_fetch(w->generation, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

void atdi_tune_worker_free(atdi_tune_worker *w)
{
	pthread_mutex_lock(&w->lock);
	w->stopping = 1;
	pthread_cond_broadcast(&w->wake);
	int started = w->started;
	pthread_mutex_unlock(&w->lock);
	if (started)
		pthread_join(w->thread, NULL);
	free(w->jobs);
	pthread_cond_destroy(&w->wake);
	pthread_mutex_destroy(&w->lock);
	memset(w, 0, sizeof *w);
}

static atdi_tune_job *find(atdi_tune_worker *w, const atdi_ctx_info *ci, int op, at_dtype dtype,
			   long long M, long long N)
{
	for (size_t i = 0; i < w->n; i++) {
		atdi_tune_job *j = &w->jobs[i];
		if (j->ci.ctx == ci->ctx && j->op == op && j->dtype == dtype && j->M == M &&
		    j->N == N)
			return j;
	}
	return NULL;
}

/* Appends the shape's job (with its interim winner) and wakes (or
 * starts) the worker: 0, or -1. */
static int queue(atdi_tune_worker *w, const atdi_ctx_info *ci, int op, at_dtype dtype,
		 long long M, long long N, const atdi_plan *interim, double us)
{
	if (w->stopping)
		return -1;
	if (!w->started) {
		if (pthread_create(&w->thread, NULL, work, w) != 0)
			return -1;
		w->started = 1;
	}
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 8;
		atdi_tune_job *grown = realloc(w->jobs, cap * sizeof *grown);
		if (!grown)
			return -1;
		w->jobs = grown;
		w->cap = cap;
	}
	atdi_tune_job *j = &w->jobs[w->n++];
	memset(j, 0, sizeof *j);
	j->ci = *ci;
	j->ci.gpu.name = j->ci.name;
	j->op = op;
	j->dtype = dtype;
	j->M = M;
	j->N = N;
	j->state = ATDI_TUNE_PENDING;
	if (interim) {
		j->best = *interim;
		j->us = us;
	}
	pthread_cond_signal(&w->wake);
	return 0;
}

/* The state of a job found (or NONE), its outcome copied out; locked. */
static atdi_tune_state state_of(const atdi_tune_job *j, atdi_plan *best, double *us, char *why,
				size_t cap)
{
	atdi_tune_state s = j ? j->state : ATDI_TUNE_NONE;
	if (s == ATDI_TUNE_DONE || s == ATDI_TUNE_PENDING) {
		*us = j->us;
		if (j->us > 0)
			*best = j->best;
	} else if (s == ATDI_TUNE_FAILED) {
		snprintf(why, cap, "%s", j->why);
	}
	return s;
}

/* The shape's state; NONE queues it when asked to (then PENDING). */
static atdi_tune_state look(atdi_tune_worker *w, const atdi_ctx_info *ci, int op, at_dtype dtype,
			    long long M, long long N, atdi_plan *best, double *us, char *why,
			    size_t cap, int queue_new)
{
	pthread_mutex_lock(&w->lock);
	atdi_tune_state s = state_of(find(w, ci, op, dtype, M, N), best, us, why, cap);
	if (s == ATDI_TUNE_NONE && queue_new && queue(w, ci, op, dtype, M, N, NULL, 0) == 0)
		s = ATDI_TUNE_PENDING;
	pthread_mutex_unlock(&w->lock);
	return s;
}

atdi_tune_state atdi_tune_worker_peek(atdi_tune_worker *w, const atdi_ctx_info *ci, int op,
				      at_dtype dtype, long long M, long long N, atdi_plan *best,
				      double *us, char *why, size_t cap)
{
	return look(w, ci, op, dtype, M, N, best, us, why, cap, 0);
}

int atdi_tune_worker_queue(atdi_tune_worker *w, const atdi_ctx_info *ci, int op, at_dtype dtype,
			   long long M, long long N, const atdi_plan *interim, double us)
{
	pthread_mutex_lock(&w->lock);
	int rc = find(w, ci, op, dtype, M, N) ? 0 : queue(w, ci, op, dtype, M, N, interim, us);
	pthread_mutex_unlock(&w->lock);
	return rc;
}

atdi_tune_state atdi_tune_worker_ask(atdi_tune_worker *w, const atdi_ctx_info *ci, int op,
				     at_dtype dtype, long long M, long long N, atdi_plan *best,
				     double *us, char *why, size_t cap)
{
	return look(w, ci, op, dtype, M, N, best, us, why, cap, 1);
}
