/* Run-time compilation of derived variants: see jit.h. Threads and
 * processes that hit the same new shape at once each compile at most once
 * and agree (jit_cache.h). */
#include "dispatch/runtime/jit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda/nvrtc_compile.h"
#include "dispatch/runtime/jit_cache.h"

static int env_is(const char *name, const char *value)
{
	const char *v = getenv(name);
	return v && strcmp(v, value) == 0;
}

static void compile_queued(void *user, const atdi_jit_job *job);

int atdi_jit_init(atdi_jit *j, unsigned open_flags)
{
	memset(j, 0, sizeof *j);
	j->mode = (open_flags & ATD_OPEN_NO_JIT)	   ? ATDI_JIT_OFF
		  : (open_flags & ATD_OPEN_JIT_BACKGROUND) ? ATDI_JIT_BACKGROUND
							   : ATDI_JIT_BLOCK;
	j->tune = (open_flags & ATD_OPEN_TUNE) || env_is("ATD_TUNE", "1");
	const char *budget = getenv("ATD_TUNE_BUDGET_MS");
	j->tune_budget_ms = budget && atof(budget) > 0 ? atof(budget) : 500;
	/* a compile takes 0.2-0.35 s on the H200's host (a cluster variant
	 * 2 s): a first call waits for what is built by then, and the
	 * background tuner times the rest */
	const char *wait = getenv("ATD_TUNE_WAIT_MS");
	j->tune_wait_ms = wait && *wait ? atof(wait) : ATDI_TUNE_WAIT_MS_DEFAULT;
	if (env_is("ATD_JIT", "off") || env_is("ATD_JIT", "0"))
		j->mode = ATDI_JIT_OFF;
	else if (env_is("ATD_JIT", "block"))
		j->mode = ATDI_JIT_BLOCK;
	else if (env_is("ATD_JIT", "background"))
		j->mode = ATDI_JIT_BACKGROUND;
	at_error err;
	if (j->mode != ATDI_JIT_OFF && nvrtc_load(&err) != 0) {
		snprintf(j->off_reason, sizeof j->off_reason, "%.500s", err.msg);
		j->mode = ATDI_JIT_OFF;
	}
	char path[4096];
	atdi_jit_cache_path(path, sizeof path);
	if (*path && !(j->cache_path = strdup(path)))
		return -1;
	if (pthread_mutex_init(&j->lock, NULL) != 0)
		return -1;
	if (pthread_cond_init(&j->built, NULL) != 0) {
		pthread_mutex_destroy(&j->lock);
		return -1;
	}
	if (atdi_jit_queue_init(&j->queue, &j->lock, compile_queued, j) != 0) {
		pthread_cond_destroy(&j->built);
		pthread_mutex_destroy(&j->lock);
		return -1;
	}
	return 0;
}

void atdi_jit_free(atdi_jit *j)
{
	atdi_jit_queue_stop(&j->queue);
	pthread_mutex_lock(&j->lock);
	while (j->detached > 0) /* a tuning's candidates still compiling */
		pthread_cond_wait(&j->built, &j->lock);
	pthread_mutex_unlock(&j->lock);
	atdi_jit_building_free(&j->building);
	pthread_cond_destroy(&j->built);
	atdi_jit_images_free(&j->images);
	atdi_jit_queue_free(&j->queue);
	free(j->cache_path);
	pthread_mutex_destroy(&j->lock);
	memset(j, 0, sizeof *j);
}

/* Compiles (or reads from the cache database) job's cubin; counts the
 * compiles in j (under its lock). */
static atd_status build(atdi_jit *j, const char *cache_path, const atdi_jit_job *job,
			void **image, size_t *size, char *why, size_t cap)
{
	char *src = atdi_jit_job_source(job);
	if (!src) {
		snprintf(why, cap, "out of memory building the source");
		return ATD_ERR_NO_MEMORY;
	}
	char key[40];
	atdi_jit_cache_key(src, job->arch, key, sizeof key);
	if (atdi_jit_cache_get(cache_path, key, image, size)) {
		free(src);
		return ATD_OK;
	}
	compiled_kernel k;
	at_error err;
	int rc = nvrtc_compile(src, job->rules->name, job->arch, &k, &err);
	free(src);
	pthread_mutex_lock(&j->lock);
	j->compiles++;
	pthread_mutex_unlock(&j->lock);
	if (rc == COMPILE_FAILED) {
		snprintf(why, cap, "NVRTC did not compile it: %.700s", k.log ? k.log : "");
		compiled_kernel_free(&k);
		return ATD_ERR_NO_KERNEL;
	}
	if (rc != COMPILE_OK) {
		snprintf(why, cap, "%.900s", err.msg);
		return ATD_ERR_NO_KERNEL;
	}
	atdi_jit_cache_put(cache_path, key, job, &k);
	*image = k.cubin;
	*size = k.cubin_size;
	k.cubin = NULL;
	compiled_kernel_free(&k);
	return ATD_OK;
}

atd_status atdi_jit_get(atdi_jit *j, const atdi_jit_job *job, void **image, size_t *size,
			char *why, size_t cap)
{
	char key[1400];
	atdi_jit_key(job, key, sizeof key);
	pthread_mutex_lock(&j->lock);
	atdi_jit_image *im;
	/* another thread compiling it: its outcome, not a second compile */
	while (!(im = atdi_jit_images_find(&j->images, key)) &&
	       atdi_jit_building_has(&j->building, key))
		pthread_cond_wait(&j->built, &j->lock);
	if (im) {
		atd_status s = ATD_ERR_NO_KERNEL;
		if (im->cubin && (*image = malloc(im->size))) {
			memcpy(*image, im->cubin, im->size);
			*size = im->size;
			s = ATD_OK;
		} else {
			snprintf(why, cap, "%s",
				 im->cubin ? "out of memory" : im->reason ? im->reason : "");
			s = im->cubin ? ATD_ERR_NO_MEMORY : ATD_ERR_NO_KERNEL;
		}
		pthread_mutex_unlock(&j->lock);
		return s;
	}
	int marked = atdi_jit_building_add(&j->building, key) == 0;
	pthread_mutex_unlock(&j->lock);
	atd_status s = build(j, j->cache_path, job, image, size, why, cap);
	pthread_mutex_lock(&j->lock);
	if (s != ATD_ERR_NO_MEMORY)
		atdi_jit_images_keep(&j->images, key, s == ATD_OK ? *image : NULL,
				     s == ATD_OK ? *size : 0, why);
	if (marked)
		atdi_jit_building_remove(&j->building, key);
	pthread_cond_broadcast(&j->built);
	pthread_mutex_unlock(&j->lock);
	return s;
}

/* The worker's job (jit_queue.h): builds it and keeps the outcome. */
static void compile_queued(void *user, const atdi_jit_job *job)
{
	atdi_jit *j = user;
	void *image = NULL;
	size_t size = 0;
	char why[1024] = "";
	if (atdi_jit_get(j, job, &image, &size, why, sizeof why) == ATD_OK)
		free(image);
	__atomic_add_fetch(&j->generation, 1, __ATOMIC_RELEASE);
}

/* The compiles of one atdi_jit_build_within, counted down by their
 * threads; freed by the last of them and the waiter (under j's lock). */
typedef struct build_batch {
	atdi_jit *j;
	int running, refs;
} build_batch;

typedef struct build_one {
	build_batch *batch;
	atdi_jit_job job;
} build_one;

static void batch_unref(build_batch *b)
{
	if (--b->refs == 0)
		free(b);
}

static void *build_thread(void *arg)
{
	build_one *one = arg;
	build_batch *b = one->batch;
	atdi_jit *j = b->j;
	void *image = NULL;
	size_t size = 0;
	char why[1024];
	if (atdi_jit_get(j, &one->job, &image, &size, why, sizeof why) == ATD_OK)
		free(image);
	free(one);
	pthread_mutex_lock(&j->lock);
	b->running--;
	batch_unref(b);
	j->detached--;
	pthread_cond_broadcast(&j->built);
	pthread_mutex_unlock(&j->lock);
	return NULL;
}

/* now + ms on the realtime clock (pthread_cond_timedwait's). */
static struct timespec after_ms(double ms)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	long long ns = t.tv_nsec + (long long)(ms * 1e6);
	t.tv_sec += (time_t)(ns / 1000000000);
	t.tv_nsec = (long)(ns % 1000000000);
	return t;
}

int atdi_jit_build_within(atdi_jit *j, const atdi_jit_job *jobs, int n, double wait_ms,
			  int *ready)
{
	build_batch *b = calloc(1, sizeof *b);
	pthread_attr_t attr;
	int attr_ok = pthread_attr_init(&attr) == 0 &&
		      pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0;
	struct timespec until = after_ms(wait_ms > 0 ? wait_ms : 0);
	pthread_mutex_lock(&j->lock);
	if (b) {
		b->j = j;
		b->refs = 1;
	}
	for (int i = 0; b && attr_ok && i < n; i++) {
		build_one *one = malloc(sizeof *one);
		pthread_t th;
		if (!one)
			break;
		*one = (build_one){ b, jobs[i] };
		if (pthread_create(&th, &attr, build_thread, one) != 0) {
			free(one);
			break;
		}
		b->running++;
		b->refs++;
		j->detached++;
	}
	int timed_out = 0;
	while (b && b->running > 0 && !timed_out) {
		if (wait_ms < 0)
			pthread_cond_wait(&j->built, &j->lock);
		else
			timed_out = pthread_cond_timedwait(&j->built, &j->lock, &until) == ETIMEDOUT;
	}
	if (b)
		batch_unref(b);
	int built = 0;
	for (int i = 0; i < n; i++) {
		char key[1400];
		atdi_jit_key(&jobs[i], key, sizeof key);
		const atdi_jit_image *im = atdi_jit_images_find(&j->images, key);
		ready[i] = !im ? 0 : im->cubin ? 1 : -1;
		built += ready[i] == 1;
	}
	pthread_mutex_unlock(&j->lock);
	if (attr_ok)
		pthread_attr_destroy(&attr);
	return built;
}

int atdi_jit_poll(atdi_jit *j, const atdi_jit_job *job)
{
	char key[1400];
	atdi_jit_key(job, key, sizeof key);
	pthread_mutex_lock(&j->lock);
	const atdi_jit_image *im = atdi_jit_images_find(&j->images, key);
	int state = im ? (im->cubin ? 1 : -1) : 0;
	if (!im && !atdi_jit_queue_has(&j->queue, key))
		atdi_jit_queue_push(&j->queue, job);
	pthread_mutex_unlock(&j->lock);
	return state;
}

unsigned atdi_jit_generation(atdi_jit *j)
{
	return __atomic_load_n(&j->generation, __ATOMIC_ACQUIRE);
}
