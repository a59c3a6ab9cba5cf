/* Online tuning of a shape nobody tuned (ATD_OPEN_TUNE, ATD_TUNE=1), as
 * PyTorch's TunableOp does for GEMMs: the variants the performance model
 * ranks best (when the database holds one for this GPU) and those the
 * nearest winners give (atdi_plan_candidates), distinct, are compiled in
 * parallel, checked once and timed
 * on scratch buffers of the shape (so the application's data is never
 * touched, in-place calls included) on a stream of the library's own, for
 * at most the handle's budget of GPU time; the fastest is kept in the
 * cache database for every later process. Work the application runs on the
 * GPU meanwhile can only make the timings noisier, never a result wrong. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "common/dtype.h"
#include "dispatch/policy/model_plan.h"
#include "dispatch/policy/row_ops.h"
#include "dispatch/runtime/handle.h"
#include "dispatch/runtime/launch_geometry.h"
#include "dispatch/runtime/models.h"
#include "dispatch/runtime/modules.h"
#include "dispatch/runtime/op_launch.h"
#include "dispatch/runtime/tune.h"
#include "dispatch/policy/template_table.h"

#define TUNE_CANDIDATES 6
/* Of them, the model's best: its first choice is within 10% of the tuned
 * winner at most shapes (LOO 0.973 on the H200), and its next few cover
 * the shapes where it is not; the rest come from the nearest winners. */
#define TUNE_MODEL_CANDIDATES 4
#define TUNE_WARMUP 2
#define TUNE_REPS 10

typedef struct scratch {
	CUdeviceptr x, y; /* x: the op's inputs, one after the other */
	/* written before each timed launch, as triton.testing.do_bench does:
	 * twice the L2, so that every launch reads its input from DRAM and
	 * finds the L2 full of dirty lines, as in an application. Timed with
	 * its input in L2, f16 65536 x 100 (13 MB) took a softmax_warp variant
	 * over the softmax_tile one the sweep picks, 14.3 us against 13.5 in
	 * use (H100). */
	CUdeviceptr flush;
	size_t flush_words;
	CUstream stream;
	CUevent ev[2 * TUNE_REPS];
	int nev;
} scratch;

static void scratch_free(scratch *s)
{
	for (int i = 0; i < s->nev; i++)
		cudrv.cuEventDestroy(s->ev[i]);
	if (s->stream)
		cudrv.cuStreamDestroy(s->stream);
	if (s->x)
		cudrv.cuMemFree(s->x);
	if (s->y)
		cudrv.cuMemFree(s->y);
	if (s->flush)
		cudrv.cuMemFree(s->flush);
}

/* Twice the current device's L2, at least 8 MB. */
static size_t flush_bytes(void)
{
	CUdevice dev;
	int l2 = 0;
	if (cudrv.cuCtxGetDevice(&dev) != CUDA_SUCCESS ||
	    cudrv.cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev) != CUDA_SUCCESS)
		l2 = 0;
	size_t bytes = 2 * (size_t)(l2 > 0 ? l2 : 0);
	return bytes < (8u << 20) ? 8u << 20 : bytes;
}

/* Inputs of zeros (ninputs tensors of bytes each: every row's softmax is
 * 1/N, see atdi_op_desc.of_zeros), an output and the events. */
static int scratch_make(scratch *s, size_t bytes, int ninputs, char *why, size_t cap)
{
	memset(s, 0, sizeof *s);
	size_t free_b = 0, total = 0, flush = flush_bytes(), in = (size_t)ninputs * bytes;
	if (cudrv.cuMemGetInfo(&free_b, &total) != CUDA_SUCCESS || in + bytes + flush > free_b / 2) {
		snprintf(why, cap, "the shape's %zu MB of scratch is more than a quarter of free GPU memory",
			 (in + bytes + flush) >> 20);
		return -1;
	}
	s->flush_words = flush / 4;
	if (cudrv.cuMemAlloc(&s->x, in) != CUDA_SUCCESS ||
	    cudrv.cuMemAlloc(&s->y, bytes) != CUDA_SUCCESS ||
	    cudrv.cuMemAlloc(&s->flush, flush) != CUDA_SUCCESS ||
	    cudrv.cuStreamCreate(&s->stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
	    cudrv.cuMemsetD8Async(s->x, 0, in, s->stream) != CUDA_SUCCESS ||
	    /* NaN (all bits set) until a variant writes it */
	    cudrv.cuMemsetD8Async(s->y, 0xff, bytes, s->stream) != CUDA_SUCCESS) {
		snprintf(why, cap, "could not set up scratch buffers");
		return -1;
	}
	for (; s->nev < 2 * TUNE_REPS; s->nev++)
		if (cudrv.cuEventCreate(&s->ev[s->nev], CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
			snprintf(why, cap, "could not create events");
			return -1;
		}
	return 0;
}

static float half_to_float(unsigned short h, at_dtype dt)
{
	if (dt == AT_BF16) {
		unsigned u = (unsigned)h << 16;
		float f;
		memcpy(&f, &u, sizeof f);
		return f;
	}
	int e = (h >> 10) & 31, m = h & 1023;
	float v = e ? ldexpf((float)(m | 1024), e - 25) : ldexpf((float)m, -24);
	return (h & 0x8000) ? -v : v;
}

/* The first output element after one launch over inputs of zeros is what
 * the op gives for them (softmax's 1/N, log_softmax's -ln N, the backward
 * ops' 0; the output was NaN before): a check that the variant runs and
 * writes, not a full one (the templates' variants are checked by the sweep
 * and the selftest). */
static int output_ok(const scratch *s, const atdi_op_desc *op, at_dtype dt, long long N)
{
	unsigned char raw[4] = { 0 };
	if (cudrv.cuStreamSynchronize(s->stream) != CUDA_SUCCESS ||
	    cudrv.cuMemcpyDtoH(raw, s->y, at_dtype_size(dt)) != CUDA_SUCCESS)
		return 0;
	float v;
	if (dt == AT_F32) {
		memcpy(&v, raw, 4);
	} else {
		unsigned short h;
		memcpy(&h, raw, 2);
		v = half_to_float(h, dt);
	}
	float want = (float)op->of_zeros(N);
	return fabsf(v - want) <= (dt == AT_F32 ? 1e-3f : 2e-2f) * fabsf(want);
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

/* Median microseconds of the variant, or -1 (its launch or check failed). */
static double time_variant(scratch *s, CUfunction fn, const launch_geometry *g, unsigned grid,
			   const atdi_op_desc *op, at_dtype dt, long long M, long long N)
{
	at_error err;
	size_t bytes = (size_t)M * (size_t)N * at_dtype_size(dt);
	atdi_row_args a = { s->y, { s->x, s->x + bytes }, M, N, N, { N, N }, 0 };
	for (int i = 0; i < TUNE_WARMUP; i++)
		if (atdi_launch_op(op, fn, g, grid, &a, s->stream, &err) != 0)
			return -1;
	if (!output_ok(s, op, dt, N))
		return -1;
	for (int i = 0; i < TUNE_REPS; i++) {
		if (cudrv.cuMemsetD32Async(s->flush, (unsigned)i, s->flush_words, s->stream) !=
		    CUDA_SUCCESS)
			return -1;
		cudrv.cuEventRecord(s->ev[2 * i], s->stream);
		if (atdi_launch_op(op, fn, g, grid, &a, s->stream, &err) != 0)
			return -1;
		cudrv.cuEventRecord(s->ev[2 * i + 1], s->stream);
	}
	if (cudrv.cuStreamSynchronize(s->stream) != CUDA_SUCCESS)
		return -1;
	float ms[TUNE_REPS];
	for (int i = 0; i < TUNE_REPS; i++)
		if (cudrv.cuEventElapsedTime(&ms[i], s->ev[2 * i], s->ev[2 * i + 1]) != CUDA_SUCCESS)
			return -1;
	qsort(ms, TUNE_REPS, sizeof ms[0], cmp_float);
	return 0.5 * (ms[TUNE_REPS / 2 - 1] + ms[TUNE_REPS / 2]) * 1e3;
}

static int same_plan(const atdi_plan *a, const atdi_plan *b)
{
	return a->rules == b->rules && memcmp(a->values, b->values, sizeof a->values) == 0;
}

/* The candidates to time, best first: the model's (if the database holds
 * one for this GPU), then the nearest winners', without repeats. */
static int gather(atd_handle *h, const atdi_ctx_info *ci, int op, const atdi_env *env,
		  at_dtype dtype, atdi_plan *cand)
{
	const char *model_gpu = NULL;
	const perf_model *m = atdi_model_for(h, &ci->gpu, op, &model_gpu, NULL);
	int n = m ? atdi_model_candidates(m, tr_templates, tr_ntemplates, op, env, dtype, cand,
					  TUNE_MODEL_CANDIDATES)
		  : 0;
	atdi_plan near[TUNE_CANDIDATES];
	int nn = atdi_plan_candidates(&h->table, tr_templates, tr_ntemplates, &ci->gpu, op, env,
				      dtype, near, TUNE_CANDIDATES);
	for (int i = 0; i < nn && n < TUNE_CANDIDATES; i++) {
		int seen = 0;
		for (int j = 0; j < n && !seen; j++)
			seen = same_plan(&cand[j], &near[i]);
		if (!seen)
			cand[n++] = near[i];
	}
	return n;
}

/* Compiles the candidates at once (atdi_jit_build_within): one compile's
 * latency (0.2-0.35 s on the H200's host) instead of n of them. With a wait
 * (wait_ms >= 0), ready[i] says which were built by then; without, all are
 * taken (one whose thread did not start compiles in the timing loop). */
static void compile_all(atd_handle *h, const atdi_ctx_info *ci, int op, at_dtype dtype,
			const atdi_plan *cand, int n, double wait_ms, int *ready)
{
	atdi_jit_job jobs[TUNE_CANDIDATES];
	for (int i = 0; i < n; i++) {
		jobs[i] = (atdi_jit_job){ cand[i].rules, dtype, { 0 }, ci->arch, op };
		memcpy(jobs[i].values, cand[i].values, sizeof jobs[i].values);
	}
	atdi_jit_build_within(&h->jit, jobs, n, wait_ms, ready);
	if (wait_ms < 0)
		for (int i = 0; i < n; i++)
			ready[i] = 1;
}

atd_status atdi_tune(atd_handle *h, const atdi_ctx_info *ci, int op, at_dtype dtype, long long M,
		     long long N, pthread_mutex_t *release, double wait_ms, atdi_plan *best,
		     double *best_us, int *tried, int *left, char *why, size_t cap)
{
	*left = 0;
	atdi_env env = atdi_ctx_env(ci, dtype, M, N);
	atdi_plan cand[TUNE_CANDIDATES];
	int n = gather(h, ci, op, &env, dtype, cand);
	*tried = 0;
	if (n == 0) {
		snprintf(why, cap, "no model and no winner near it to take candidates from");
		return ATD_ERR_NO_KERNEL;
	}
	const atdi_op_desc *d = atdi_op_desc_of(op);
	if (!d->of_zeros) {
		snprintf(why, cap, "online tuning does not serve %s", d->name);
		return ATD_ERR_NO_KERNEL;
	}
	scratch s;
	if (scratch_make(&s, (size_t)M * (size_t)N * at_dtype_size(dtype), d->ninputs, why, cap) != 0) {
		scratch_free(&s);
		return ATD_ERR_NO_KERNEL;
	}
	if (release) /* compiling touches only the JIT, which has its own lock */
		pthread_mutex_unlock(release);
	int ready[TUNE_CANDIDATES];
	compile_all(h, ci, op, dtype, cand, n, wait_ms, ready);
	for (int i = 0; i < n; i++)
		*left += ready[i] == 0;
	if (release)
		pthread_mutex_lock(release);
	double spent_ms = 0;
	/* the flush's share of the budget, at a write's ~2 TB/s (H100: 3) */
	double flush_us = (double)s.flush_words * 4 / 2e6;
	*best_us = INFINITY;
	for (int i = 0; i < n && spent_ms < h->jit.tune_budget_ms; i++) {
		if (ready[i] != 1)
			continue;
		atdi_jit_job job = { cand[i].rules, dtype, { 0 }, ci->arch, op };
		memcpy(job.values, cand[i].values, sizeof job.values);
		CUfunction fn;
		unsigned grid;
		char inner[ATDI_MSG_CAP];
		at_error err;
		if (atdi_module_derived(h, ci, &job, &fn, NULL, inner, sizeof inner) != ATD_OK ||
		    launch_grid(&cand[i].geom, fn, M, ci->gpu.sm_count, &grid, &err) != 0)
			continue;
		double us = time_variant(&s, fn, &cand[i].geom, grid, d, dtype, M, N);
		(*tried)++;
		if (us > 0) {
			spent_ms += (us * (TUNE_WARMUP + TUNE_REPS) + TUNE_REPS * flush_us) / 1e3;
			if (us < *best_us) {
				*best_us = us;
				*best = cand[i];
			}
		}
	}
	scratch_free(&s);
	if (!isfinite(*best_us)) {
		if (*left)
			snprintf(why, cap, "none of the %d candidates compiled within %.0f ms", n,
				 wait_ms);
		else
			snprintf(why, cap, "none of the %d candidates ran", n);
		return ATD_ERR_NO_KERNEL;
	}
	return ATD_OK;
}
