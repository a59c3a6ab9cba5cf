/* Tests the background tuner's worker (dispatch/runtime/tune_worker.h)
 * with a tuning function of its own: a shape is queued once, tuned on the
 * worker, its outcome kept (winner or why), the generation bumped, and the
 * worker stopped cleanly with a job in hand. No GPU. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "dispatch/runtime/tune_worker.h"

typedef struct tuner {
	pthread_mutex_t lock;
	int calls;
	int hold;       /* 1: the tuning waits until released */
	long long fail_n; /* this N fails */
	pthread_t thread;
} tuner;

static int fake_tune(void *user, atdi_tune_job *job)
{
	tuner *t = user;
	/* the job's GPU name is its own: the queue may grow (and move) meanwhile */
	cr_assert_eq(job->ci.gpu.name, job->ci.name);
	pthread_mutex_lock(&t->lock);
	t->calls++;
	t->thread = pthread_self();
	pthread_mutex_unlock(&t->lock);
	for (;;) {
		pthread_mutex_lock(&t->lock);
		int hold = t->hold;
		pthread_mutex_unlock(&t->lock);
		if (!hold)
			break;
		usleep(1000);
	}
	if (job->N == t->fail_n) {
		strcpy(job->why, "no candidate ran");
		return -1;
	}
	job->best.values[0] = job->M * 1000 + job->N;
	job->us = 2.5;
	return 0;
}

static atdi_ctx_info ctx(void)
{
	atdi_ctx_info ci;
	memset(&ci, 0, sizeof ci);
	ci.ctx = (CUcontext)0x1;
	strcpy(ci.name, "GPU");
	ci.gpu.name = ci.name;
	return ci;
}

static atdi_tune_state ask(atdi_tune_worker *w, long long M, long long N, atdi_plan *best,
			   double *us, char *why)
{
	atdi_ctx_info ci = ctx();
	return atdi_tune_worker_ask(w, &ci, 0, AT_F32, M, N, best, us, why, 256);
}

/* Asks until the shape is no longer pending (the worker is done with it). */
static atdi_tune_state wait_done(atdi_tune_worker *w, long long M, long long N, atdi_plan *best,
				 double *us, char *why)
{
	atdi_tune_state s;
	for (int i = 0; i < 5000 && (s = ask(w, M, N, best, us, why)) == ATDI_TUNE_PENDING; i++)
		usleep(1000);
	return s;
}

Test(tune_worker, a_shape_is_tuned_once_on_the_worker_and_its_winner_kept)
{
	tuner t = { PTHREAD_MUTEX_INITIALIZER, 0, 1, -1, 0 };
	unsigned generation = 7;
	atdi_tune_worker w;
	cr_assert_eq(atdi_tune_worker_init(&w, fake_tune, &t, &generation), 0);
	atdi_plan best;
	double us = 0;
	char why[256] = "";
	cr_assert_eq(ask(&w, 4096, 2000, &best, &us, why), ATDI_TUNE_PENDING);
	cr_assert_eq(ask(&w, 4096, 2000, &best, &us, why), ATDI_TUNE_PENDING, "queued once");
	cr_assert_eq(__atomic_load_n(&generation, __ATOMIC_ACQUIRE), 7u, "bumped only at the end");
	pthread_mutex_lock(&t.lock);
	t.hold = 0;
	pthread_mutex_unlock(&t.lock);
	cr_assert_eq(wait_done(&w, 4096, 2000, &best, &us, why), ATDI_TUNE_DONE);
	cr_assert_eq(best.values[0], 4096LL * 1000 + 2000);
	cr_assert_float_eq(us, 2.5, 1e-12);
	cr_assert_eq(__atomic_load_n(&generation, __ATOMIC_ACQUIRE), 8u);
	cr_assert_eq(t.calls, 1);
	cr_assert_not(pthread_equal(t.thread, pthread_self()), "tuned on the worker");
	atdi_tune_worker_free(&w);
}

Test(tune_worker, a_failed_tuning_is_kept_with_its_reason_and_never_retried)
{
	tuner t = { PTHREAD_MUTEX_INITIALIZER, 0, 0, 77, 0 };
	unsigned generation = 0;
	atdi_tune_worker w;
	cr_assert_eq(atdi_tune_worker_init(&w, fake_tune, &t, &generation), 0);
	atdi_plan best;
	double us = 0;
	char why[256] = "";
	ask(&w, 8, 77, &best, &us, why);
	cr_assert_eq(wait_done(&w, 8, 77, &best, &us, why), ATDI_TUNE_FAILED);
	cr_assert_str_eq(why, "no candidate ran");
	cr_assert_eq(ask(&w, 8, 77, &best, &us, why), ATDI_TUNE_FAILED);
	cr_assert_eq(t.calls, 1);
	/* other shapes (and other contexts' same shape) are their own jobs */
	cr_assert_eq(ask(&w, 8, 78, &best, &us, why), ATDI_TUNE_PENDING);
	cr_assert_eq(wait_done(&w, 8, 78, &best, &us, why), ATDI_TUNE_DONE);
	atdi_ctx_info other = ctx();
	other.ctx = (CUcontext)0x2;
	cr_assert_eq(atdi_tune_worker_ask(&w, &other, 0, AT_F32, 8, 78, &best, &us, why, 256),
		     ATDI_TUNE_PENDING);
	atdi_tune_worker_free(&w);
}

Test(tune_worker, freeing_waits_for_the_shape_in_hand_and_drops_the_rest)
{
	tuner t = { PTHREAD_MUTEX_INITIALIZER, 0, 1, -1, 0 };
	unsigned generation = 0;
	atdi_tune_worker w;
	cr_assert_eq(atdi_tune_worker_init(&w, fake_tune, &t, &generation), 0);
	atdi_plan best;
	double us;
	char why[256];
	/* more than the queue's first 8: it grows while a job runs */
	for (long long n = 1; n <= 20; n++)
		cr_assert_eq(ask(&w, 1, n, &best, &us, why), ATDI_TUNE_PENDING);
	while (__atomic_load_n(&t.calls, __ATOMIC_ACQUIRE) == 0)
		usleep(1000);
	pthread_mutex_lock(&t.lock);
	t.hold = 0;
	pthread_mutex_unlock(&t.lock);
	atdi_tune_worker_free(&w);
	cr_assert_leq(t.calls, 20);
	cr_assert_geq(t.calls, 1);
}

Test(tune_worker, a_worker_never_asked_starts_no_thread_and_frees)
{
	unsigned generation = 0;
	atdi_tune_worker w;
	cr_assert_eq(atdi_tune_worker_init(&w, fake_tune, NULL, &generation), 0);
	cr_assert_eq(w.started, 0);
	atdi_tune_worker_free(&w);
}

Test(tune_worker, peeking_queues_nothing_and_an_interim_winner_serves_until_the_tuning_ends)
{
	tuner t = { PTHREAD_MUTEX_INITIALIZER, 0, 1, -1, 0 };
	unsigned generation = 0;
	atdi_tune_worker w;
	cr_assert_eq(atdi_tune_worker_init(&w, fake_tune, &t, &generation), 0);
	atdi_ctx_info ci = ctx();
	atdi_plan best;
	memset(&best, 0, sizeof best);
	double us = -1;
	char why[256] = "";
	cr_assert_eq(atdi_tune_worker_peek(&w, &ci, 0, AT_F32, 64, 300, &best, &us, why, 256),
		     ATDI_TUNE_NONE);
	cr_assert_eq(w.n, 0u, "a peek queues nothing");
	cr_assert_not(w.started);
	atdi_plan interim;
	memset(&interim, 0, sizeof interim);
	interim.values[0] = 42;
	cr_assert_eq(atdi_tune_worker_queue(&w, &ci, 0, AT_F32, 64, 300, &interim, 9.0), 0);
	cr_assert_eq(atdi_tune_worker_queue(&w, &ci, 0, AT_F32, 64, 300, NULL, 0), 0);
	cr_assert_eq(w.n, 1u, "queued once");
	cr_assert_eq(atdi_tune_worker_peek(&w, &ci, 0, AT_F32, 64, 300, &best, &us, why, 256),
		     ATDI_TUNE_PENDING);
	cr_assert_eq(best.values[0], 42);
	cr_assert_float_eq(us, 9.0, 1e-12);
	/* a shape queued without one has none */
	cr_assert_eq(atdi_tune_worker_queue(&w, &ci, 0, AT_F32, 64, 301, NULL, 0), 0);
	cr_assert_eq(atdi_tune_worker_peek(&w, &ci, 0, AT_F32, 64, 301, &best, &us, why, 256),
		     ATDI_TUNE_PENDING);
	cr_assert_float_eq(us, 0.0, 1e-12);
	pthread_mutex_lock(&t.lock);
	t.hold = 0;
	pthread_mutex_unlock(&t.lock);
	cr_assert_eq(wait_done(&w, 64, 300, &best, &us, why), ATDI_TUNE_DONE);
	cr_assert_eq(best.values[0], 64LL * 1000 + 300, "the worker's winner replaces the interim");
	cr_assert_float_eq(us, 2.5, 1e-12);
	atdi_tune_worker_free(&w);
}
