/* GPU timing: see timer.h. */
#include "tuner/timing/timer.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/strbuf.h"


rep_policy gpu_timer_policy(const sweep_config *cfg)
{
	return (rep_policy){ .warmup = cfg->warmup, .min_reps = cfg->min_repetitions,
			     .max_reps = cfg->repetitions, .tolerance = cfg->tolerance,
			     .budget_ms = cfg->time_budget_ms };
}

int gpu_timer_open(gpu_timer *b, const gpu_device *gpu, const sweep_config *cfg, at_error *err)
{
	memset(b, 0, sizeof *b);
	b->policy = gpu_timer_policy(cfg);
	if (b->policy.max_reps > TIMER_MAX_REPS)
		return at_error_set(err, "repetitions must be 1..%d", TIMER_MAX_REPS);
	if (rep_policy_check(&b->policy, err))
		return -1;
	/* events for the largest batch (rep_next_batch never exceeds the most
	 * repetitions) of every interleaved launch; the quick round's few too */
	int batch = b->policy.max_reps > TIMER_MIN_EVENT_REPS ? b->policy.max_reps
							       : TIMER_MIN_EVENT_REPS;
	b->nevents = batch * TIMER_MAX_INTERLEAVED;
	b->start = xcalloc((size_t)b->nevents, sizeof *b->start);
	b->stop = xcalloc((size_t)b->nevents, sizeof *b->stop);
	CU_TRY(err, cudrv.cuStreamCreate(&b->stream, CU_STREAM_NON_BLOCKING));
	for (int i = 0; i < b->nevents; i++) {
		CU_TRY(err, cudrv.cuEventCreate(&b->start[i], CU_EVENT_DEFAULT));
		CU_TRY(err, cudrv.cuEventCreate(&b->stop[i], CU_EVENT_DEFAULT));
	}
	if (l2_flush_open(&b->flush, gpu, b->stream, err))
		return -1;
	return code_flush_open(&b->code_flush, gpu, err);
}

void gpu_timer_close(gpu_timer *b)
{
	for (int i = 0; i < b->nevents; i++) {
		if (b->start && b->start[i])
			cudrv.cuEventDestroy(b->start[i]);
		if (b->stop && b->stop[i])
			cudrv.cuEventDestroy(b->stop[i]);
	}
	l2_flush_close(&b->flush);
	code_flush_close(&b->code_flush);
	if (b->stream)
		cudrv.cuStreamDestroy(b->stream);
	free(b->start);
	free(b->stop);
	memset(b, 0, sizeof *b);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double median_of(double *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* One repetition into event pair e: flush, then the launch between events. */
static int timed_launch(gpu_timer *b, int e, timed_launch_fn launch, void *arg, at_error *err)
{
	if (l2_flush_run(&b->flush, b->stream, (unsigned)e, err) ||
	    code_flush_run(&b->code_flush, b->stream, err))
		return -1;
	CU_TRY(err, cudrv.cuEventRecord(b->start[e], b->stream));
	if (launch(arg, b->stream, err))
		return -1;
	CU_TRY(err, cudrv.cuEventRecord(b->stop[e], b->stream));
	return 0;
}

/* k launches timed together, batch by batch, for rep_run. */
typedef struct timer_series {
	gpu_timer *b;
	const timed_launch_fn *launch;
	void *const *arg;
	int k, warmup;
} timer_series;

/* rep_batch_fn: warm-up before the first batch, then `reps` repetitions of
 * each launch in turn (so that drift in clocks or temperature affects all
 * alike), each after an L2 flush, timed by events. Interleaved, each timed
 * launch follows an untimed one of its own (before the flush), as in a
 * timing of one launch alone: on the H100, switching between kernels cost
 * short ones several percent (winners picked interleaved were up to 4%
 * slower than full timing's best, timed alone). */
static int time_batch(void *arg, int reps, double *const *samples, double *elapsed_ms,
		      at_error *err)
{
	timer_series *s = arg;
	gpu_timer *b = s->b;
	double start = now_ms();
	if (reps * s->k > b->nevents)
		return at_error_set(err, "%d repetitions do not fit the benchmark's events", reps);
	for (int j = 0; j < s->k; j++)
		for (int i = 0; i < s->warmup; i++)
			if (s->launch[j](s->arg[j], b->stream, err))
				return -1;
	s->warmup = 0;
	for (int i = 0; i < reps; i++)
		for (int j = 0; j < s->k; j++)
			if ((s->k > 1 && s->launch[j](s->arg[j], b->stream, err)) ||
			    timed_launch(b, i * s->k + j, s->launch[j], s->arg[j], err))
				return -1;
	CUresult cr = cudrv.cuStreamSynchronize(b->stream);
	if (cr != CUDA_SUCCESS)
		return cudrv_error(err, cr, "running the timed launches");
	for (int i = 0; i < reps; i++) {
		for (int j = 0; j < s->k; j++) {
			float ms = 0;
			int e = i * s->k + j;
			CU_TRY(err, cudrv.cuEventElapsedTime(&ms, b->start[e], b->stop[e]));
			samples[j][i] = ms * 1e3;
		}
	}
	*elapsed_ms = now_ms() - start;
	return 0;
}

static int time_series(gpu_timer *b, const rep_policy *p, const timed_launch_fn *launch,
		       void *const *arg, int k, timing *out, at_error *err)
{
	if (k < 1 || k > TIMER_MAX_INTERLEAVED)
		return at_error_set(err, "can interleave 1 to %d launches", TIMER_MAX_INTERLEAVED);
	timer_series s = { b, launch, arg, k, p->warmup };
	rep_result r[TIMER_MAX_INTERLEAVED];
	rep_verdict why;
	if (rep_run(p, k, time_batch, &s, r, &why, err))
		return -1;
	b->stops[why]++;
	for (int j = 0; j < k; j++)
		out[j] = (timing){ .median_us = r[j].median_us, .min_us = r[j].min_us,
				   .max_us = r[j].max_us, .q1_us = r[j].q1_us,
				   .q3_us = r[j].q3_us, .interval = r[j].interval,
				   .reps = r[j].reps };
	return 0;
}

int gpu_time_policy(gpu_timer *b, const rep_policy *p, timed_launch_fn launch, void *arg,
		      timing *out, at_error *err)
{
	return time_series(b, p, &launch, &arg, 1, out, err);
}

int gpu_time_n(gpu_timer *b, timed_launch_fn launch, void *arg, int warmup, int reps,
		 timing *out, at_error *err)
{
	rep_policy fixed = rep_policy_fixed(warmup, reps);
	return gpu_time_policy(b, &fixed, launch, arg, out, err);
}

int gpu_time(gpu_timer *b, timed_launch_fn launch, void *arg, timing *out, at_error *err)
{
	return time_series(b, &b->policy, &launch, &arg, 1, out, err);
}

int gpu_time_interleaved(gpu_timer *b, const timed_launch_fn *launch, void *const *arg, int k,
			   timing *out, at_error *err)
{
	return time_series(b, &b->policy, launch, arg, k, out, err);
}

typedef struct copy_arg {
	CUdeviceptr dst, src;
	size_t bytes;
} copy_arg;

static int launch_copy(void *arg, CUstream stream, at_error *err)
{
	copy_arg *c = arg;
	CU_TRY(err, cudrv.cuMemcpyDtoDAsync(c->dst, c->src, c->bytes, stream));
	return 0;
}

int gpu_copy_gbps(gpu_timer *b, size_t bytes, double *gbps, at_error *err)
{
	copy_arg c = { 0, 0, bytes };
	CU_TRY(err, cudrv.cuMemAlloc(&c.src, bytes));
	CUresult rc = cudrv.cuMemAlloc(&c.dst, bytes);
	if (rc != CUDA_SUCCESS) {
		cudrv.cuMemFree(c.src);
		return cudrv_error(err, rc, "allocating the copy benchmark's buffers");
	}
	timing t;
	int status = 0;
	rc = cudrv.cuMemsetD32Async(c.src, 0x3f800000u, bytes / 4, b->stream);
	if (rc != CUDA_SUCCESS)
		status = cudrv_error(err, rc, "filling the copy benchmark's source");
	else if (gpu_time(b, launch_copy, &c, &t, err) != 0)
		status = -1;
	else
		*gbps = 2.0 * (double)bytes / (t.median_us * 1e3);
	cudrv.cuMemFree(c.src);
	cudrv.cuMemFree(c.dst);
	return status;
}
