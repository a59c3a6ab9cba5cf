/* GPU timing: see bench.h. */
#include "tuner/bench.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/strbuf.h"
#include "gen/nvrtc_compile.h"

/* Reads the whole flush buffer (AUTOTUNE_FLUSH=read, for experiments: the
 * L2 keeps part of a re-read input through a read-only scan, so it
 * overstates bandwidth). The store never happens but keeps the loads. */
static const char flush_source[] =
	"extern \"C\" __global__ void discard_l2(const char *p, unsigned long long lines)\n"
	"{\n"
	"	for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
	"	     i < lines; i += (unsigned long long)gridDim.x * blockDim.x)\n"
	"		asm volatile(\"discard.global.L2 [%0], 128;\" :: \"l\"(p + i * 128) : \"memory\");\n"
	"}\n"
	"extern \"C\" __global__ void flush_l2(const int4 *p, unsigned long long n, int *sink)\n"
	"{\n"
	"	int acc = 0;\n"
	"	for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
	"	     i < n; i += (unsigned long long)gridDim.x * blockDim.x) {\n"
	"		int4 v = p[i];\n"
	"		acc ^= v.x ^ v.y ^ v.z ^ v.w;\n"
	"	}\n"
	"	if (acc == 0x7fffffff)\n"
	"		*sink = acc;\n"
	"}\n";

static int load_flush_kernel(bench *b, const gpu_device *gpu, at_error *err)
{
	compiled_kernel k;
	int rc = nvrtc_compile(flush_source, "flush_l2.cu", gpu->cc, &k, err);
	if (rc == COMPILE_FAILED)
		at_error_set(err, "the L2 flush kernel did not compile: %s", k.log);
	if (rc != COMPILE_OK) {
		compiled_kernel_free(&k);
		return -1;
	}
	CUresult cr = cudrv.cuModuleLoadData(&b->flush_module, k.cubin);
	compiled_kernel_free(&k);
	if (cr != CUDA_SUCCESS)
		return cudrv_error(err, cr, "loading the L2 flush kernel");
	CU_TRY(err, cudrv.cuModuleGetFunction(&b->flush_fn, b->flush_module, "flush_l2"));
	CU_TRY(err, cudrv.cuModuleGetFunction(&b->discard_fn, b->flush_module, "discard_l2"));
	b->flush_grid = (unsigned)gpu->info.sm_count * 4;
	return 0;
}

/* See bench.h for the flush modes and why the default cleans L2. */
static int flush_l2(bench *b, unsigned rep, at_error *err)
{
	if (b->flush_mode == FLUSH_NONE)
		return 0;
	if (b->flush_mode == FLUSH_WRITE || b->flush_mode == FLUSH_CLEAN)
		CU_TRY(err, cudrv.cuMemsetD32Async(b->flush, rep, b->flush_bytes / 4, b->stream));
	if (b->flush_mode == FLUSH_WRITE)
		return 0;
	if (b->flush_mode == FLUSH_CLEAN) {
		/* drop the flush buffer's dirty lines without writing them back */
		unsigned long long lines = b->flush_bytes / 128;
		void *dargs[] = { &b->flush, &lines };
		CU_TRY(err, cudrv.cuLaunchKernel(b->discard_fn, b->flush_grid, 1, 1, 512, 1, 1, 0,
						 b->stream, dargs, NULL));
		return 0;
	}
	unsigned long long n = b->flush_bytes / 16;
	/* The buffer holds zeros, so the sentinel store never happens. */
	CUdeviceptr sink = b->flush;
	void *args[] = { &b->flush, &n, &sink };
	CU_TRY(err, cudrv.cuLaunchKernel(b->flush_fn, b->flush_grid, 1, 1, 512, 1, 1, 0,
					 b->stream, args, NULL));
	return 0;
}

rep_policy bench_policy(const sweep_config *cfg)
{
	return (rep_policy){ .warmup = cfg->warmup, .min_reps = cfg->min_repetitions,
			     .max_reps = cfg->repetitions, .tolerance = cfg->tolerance,
			     .budget_ms = cfg->time_budget_ms };
}

int bench_open(bench *b, const gpu_device *gpu, const sweep_config *cfg, at_error *err)
{
	memset(b, 0, sizeof *b);
	b->policy = bench_policy(cfg);
	if (b->policy.max_reps > BENCH_MAX_REPS)
		return at_error_set(err, "repetitions must be 1..%d", BENCH_MAX_REPS);
	if (rep_policy_check(&b->policy, err))
		return -1;
	/* events for the largest batch (rep_next_batch never exceeds the most
	 * repetitions) of every interleaved launch; the quick round's few too */
	int batch = b->policy.max_reps > BENCH_MIN_EVENT_REPS ? b->policy.max_reps
							       : BENCH_MIN_EVENT_REPS;
	b->nevents = batch * BENCH_MAX_INTERLEAVED;
	b->start = xcalloc((size_t)b->nevents, sizeof *b->start);
	b->stop = xcalloc((size_t)b->nevents, sizeof *b->stop);
	CU_TRY(err, cudrv.cuStreamCreate(&b->stream, CU_STREAM_NON_BLOCKING));
	for (int i = 0; i < b->nevents; i++) {
		CU_TRY(err, cudrv.cuEventCreate(&b->start[i], CU_EVENT_DEFAULT));
		CU_TRY(err, cudrv.cuEventCreate(&b->stop[i], CU_EVENT_DEFAULT));
	}
	const char *mode = getenv("AUTOTUNE_FLUSH");
	if (!mode || !*mode || strcmp(mode, "clean") == 0)
		b->flush_mode = FLUSH_CLEAN;
	else if (strcmp(mode, "write") == 0)
		b->flush_mode = FLUSH_WRITE;
	else if (strcmp(mode, "read") == 0)
		b->flush_mode = FLUSH_READ;
	else if (strcmp(mode, "none") == 0)
		b->flush_mode = FLUSH_NONE;
	else
		return at_error_set(err, "AUTOTUNE_FLUSH must be clean, write, read or none, got \"%s\"",
				    mode);
	/* 256 MB as do_bench, or twice the L2 where that is larger */
	b->flush_bytes = (size_t)(gpu->l2_bytes > 0 ? gpu->l2_bytes : 64 << 20) * 2;
	if (b->flush_bytes < (256u << 20))
		b->flush_bytes = 256u << 20;
	CU_TRY(err, cudrv.cuMemAlloc(&b->flush, b->flush_bytes));
	CU_TRY(err, cudrv.cuMemsetD32Async(b->flush, 0, b->flush_bytes / 4, b->stream));
	return load_flush_kernel(b, gpu, err);
}

void bench_close(bench *b)
{
	for (int i = 0; i < b->nevents; i++) {
		if (b->start && b->start[i])
			cudrv.cuEventDestroy(b->start[i]);
		if (b->stop && b->stop[i])
			cudrv.cuEventDestroy(b->stop[i]);
	}
	if (b->flush)
		cudrv.cuMemFree(b->flush);
	if (b->flush_module)
		cudrv.cuModuleUnload(b->flush_module);
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
static int timed_launch(bench *b, int e, bench_launch_fn launch, void *arg, at_error *err)
{
	if (flush_l2(b, (unsigned)e, err))
		return -1;
	CU_TRY(err, cudrv.cuEventRecord(b->start[e], b->stream));
	if (launch(arg, b->stream, err))
		return -1;
	CU_TRY(err, cudrv.cuEventRecord(b->stop[e], b->stream));
	return 0;
}

/* k launches timed together, batch by batch, for rep_run. */
typedef struct bench_series {
	bench *b;
	const bench_launch_fn *launch;
	void *const *arg;
	int k, warmup;
} bench_series;

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
	bench_series *s = arg;
	bench *b = s->b;
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

static int time_series(bench *b, const rep_policy *p, const bench_launch_fn *launch,
		       void *const *arg, int k, timing *out, at_error *err)
{
	if (k < 1 || k > BENCH_MAX_INTERLEAVED)
		return at_error_set(err, "can interleave 1 to %d launches", BENCH_MAX_INTERLEAVED);
	bench_series s = { b, launch, arg, k, p->warmup };
	rep_result r[BENCH_MAX_INTERLEAVED];
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

int bench_time_policy(bench *b, const rep_policy *p, bench_launch_fn launch, void *arg,
		      timing *out, at_error *err)
{
	return time_series(b, p, &launch, &arg, 1, out, err);
}

int bench_time_n(bench *b, bench_launch_fn launch, void *arg, int warmup, int reps,
		 timing *out, at_error *err)
{
	rep_policy fixed = rep_policy_fixed(warmup, reps);
	return bench_time_policy(b, &fixed, launch, arg, out, err);
}

int bench_time(bench *b, bench_launch_fn launch, void *arg, timing *out, at_error *err)
{
	return time_series(b, &b->policy, &launch, &arg, 1, out, err);
}

int bench_time_interleaved(bench *b, const bench_launch_fn *launch, void *const *arg, int k,
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

int bench_copy_gbps(bench *b, size_t bytes, double *gbps, at_error *err)
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
	else if (bench_time(b, launch_copy, &c, &t, err) != 0)
		status = -1;
	else
		*gbps = 2.0 * (double)bytes / (t.median_us * 1e3);
	cudrv.cuMemFree(c.src);
	cudrv.cuMemFree(c.dst);
	return status;
}
