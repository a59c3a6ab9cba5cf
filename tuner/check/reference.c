/* CPU reference and comparison: see reference.h. */
#include "tuner/check/reference.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "tuner/check/half_rows.h"

void ref_load_row(const void *buf, at_dtype dt, size_t offset, long long N, double *out)
{
	/* a loop per dtype: the switch out of the loop */
	switch (dt) {
	case AT_F32:
		for (long long j = 0; j < N; j++)
			out[j] = ((const float *)buf)[offset + (size_t)j];
		break;
	case AT_F16:
	case AT_BF16:
		half_to_doubles(dt, (const uint16_t *)buf + offset, out, (size_t)N);
		break;
	}
}

void ref_store_row(void *buf, at_dtype dt, size_t offset, long long N, const double *v)
{
	enum { BLOCK = 512 }; /* through floats, a block at a time */
	float f[BLOCK];
	for (long long j = 0; j < N; j += BLOCK) {
		size_t n = (size_t)(N - j < BLOCK ? N - j : BLOCK);
		float *to = dt == AT_F32 ? (float *)buf + offset + (size_t)j : f;
		for (size_t k = 0; k < n; k++)
			to[k] = (float)v[(size_t)j + k];
		if (dt != AT_F32)
			half_from_floats(dt, f, (uint16_t *)buf + offset + (size_t)j, n);
	}
}

void ref_store(void *buf, at_dtype dt, size_t i, double v)
{
	switch (dt) {
	case AT_F32: ((float *)buf)[i] = (float)v; break;
	case AT_F16: ((uint16_t *)buf)[i] = at_f32_to_f16((float)v); break;
	case AT_BF16: ((uint16_t *)buf)[i] = at_f32_to_bf16((float)v); break;
	}
}

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Element i's value: a generator seeded by (seed, i / FILL_CHUNK) so that
 * chunks can be filled in parallel and the data depends only on the seed. */
#define FILL_CHUNK 65536

static void fill_chunk(void *host, at_dtype dt, size_t begin, size_t end, uint64_t seed)
{
	uint64_t state = seed ^ (0x632be59bd9b4e019ULL * (begin / FILL_CHUNK + 1));
	enum { BLOCK = 512 }; /* floats drawn, then converted a block at once */
	float v[BLOCK];
	uint16_t h[BLOCK];
	for (size_t i = begin; i < end; i += BLOCK) {
		size_t n = end - i < BLOCK ? end - i : BLOCK;
		for (size_t k = 0; k < n; k++)
			v[k] = (float)((splitmix64(&state) >> 40) * (16.0 / 16777216.0) - 8.0);
		if (dt == AT_F32) {
			memcpy((float *)host + i, v, n * sizeof *v);
			continue;
		}
		half_from_floats(dt, v, h, n);
		/* rounding can carry a value just under 8 up to 8: wrap it to -8 */
		uint16_t top = dt == AT_F16 ? at_f32_to_f16(8.0f) : at_f32_to_bf16(8.0f);
		uint16_t bottom = dt == AT_F16 ? at_f32_to_f16(-8.0f) : at_f32_to_bf16(-8.0f);
		for (size_t k = 0; k < n; k++)
			((uint16_t *)host)[i + k] = h[k] == top ? bottom : h[k];
	}
}

typedef struct fill_job {
	void *host;
	at_dtype dt;
	size_t count, first_chunk, step;
	uint64_t seed;
} fill_job;

static void *fill_worker(void *arg)
{
	fill_job *j = arg;
	for (size_t c = j->first_chunk; c * FILL_CHUNK < j->count; c += j->step) {
		size_t end = (c + 1) * FILL_CHUNK < j->count ? (c + 1) * FILL_CHUNK : j->count;
		fill_chunk(j->host, j->dt, c * FILL_CHUNK, end, j->seed);
	}
	return NULL;
}

static int worker_count(void)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	return cores < 1 ? 1 : cores > 64 ? 64 : (int)cores;
}

void ref_fill_random(void *host, at_dtype dt, size_t count, uint64_t seed)
{
	int nthreads = worker_count();
	pthread_t tids[64];
	fill_job jobs[64];
	int started[64] = { 0 };
	for (int t = 0; t < nthreads; t++) {
		jobs[t] = (fill_job){ host, dt, count, (size_t)t, (size_t)nthreads, seed };
		if (t > 0)
			started[t] = pthread_create(&tids[t], NULL, fill_worker, &jobs[t]) == 0;
	}
	fill_worker(&jobs[0]);
	for (int t = 1; t < nthreads; t++) {
		if (started[t])
			pthread_join(tids[t], NULL);
		else
			fill_worker(&jobs[t]);
	}
}

/* The max of a row of doubles, and whether it holds a NaN (which makes the
 * whole row NaN). */
static double row_max(const double *v, long long N, int *has_nan)
{
	double m = -INFINITY;
	int nan = 0;
	for (long long j = 0; j < N; j++) {
		nan |= isnan(v[j]);
		m = v[j] > m ? v[j] : m;
	}
	*has_nan = nan;
	return m;
}

void ref_softmax_row(const void *x, at_dtype dt, size_t offset, long long N, double *out)
{
	ref_load_row(x, dt, offset, N, out);
	int has_nan;
	double m = row_max(out, N, &has_nan);
	double sum = 0;
	for (long long j = 0; j < N; j++) {
		/* exp(v - m) is NaN for inf - inf and for an all -inf row, as in PyTorch */
		out[j] = has_nan ? NAN : exp(out[j] - m);
		sum += out[j];
	}
	for (long long j = 0; j < N; j++)
		out[j] /= sum;
}

void ref_log_softmax_row(const void *x, at_dtype dt, size_t offset, long long N, double *out)
{
	ref_load_row(x, dt, offset, N, out);
	int has_nan;
	double m = row_max(out, N, &has_nan);
	double sum = 0;
	for (long long j = 0; j < N; j++)
		sum += exp(out[j] - m);
	/* the difference first, as the kernels take it: (x - m) is exact
	 * near the max at every magnitude; inf - inf and an all -inf row
	 * give NaN, as torch.log_softmax does */
	double lse = log(sum);
	for (long long j = 0; j < N; j++)
		out[j] = has_nan ? NAN : (out[j] - m) - lse;
}

typedef struct ref_job {
	const void *in[AT_OP_MAX_INPUTS];
	at_dtype dt;
	long long N, ldx;
	double *ref;  /* the rows in double, or NULL: */
	float *ref32; /* as floats instead (a row's doubles in a scratch row) */
	at_op_ref_row_fn row;                /* an op of one input's, or NULL */
	at_op_ref_row_inputs_fn row_inputs; /* else this */
	/* an op with a side input and row results (common/op.h): its
	 * reference, the side input (side_bytes a row) and the results
	 * (nresults a row) */
	at_op_ref_row_side_fn row_side;
	const unsigned char *side;
	int side_bytes, nresults;
	double *row_out;
} ref_job;

static void ref_worker(void *arg, long long row_begin, long long row_end)
{
	const ref_job *job = arg;
	double *scratch = job->ref ? NULL : xmalloc((size_t)job->N * sizeof *scratch);
	for (long long i = row_begin; i < row_end; i++) {
		double *out = job->ref ? job->ref + (size_t)(i * job->N) : scratch;
		size_t offset = (size_t)(i * job->ldx);
		if (job->row_side) {
			double *row_out = job->row_out + (size_t)i * (size_t)job->nresults;
			job->row_side(job->in[0], job->dt, offset, job->N,
				      job->side + (size_t)i * (size_t)job->side_bytes, out, row_out);
			for (int k = 0; k < job->nresults; k++) /* they are floats */
				row_out[k] = ref_saturate(row_out[k], AT_F32);
		} else if (job->row)
			job->row(job->in[0], job->dt, offset, job->N, out);
		else
			job->row_inputs(job->in, job->dt, offset, job->N, out);
		if (job->ref32) { /* saturated and rounded in one pass */
			float *o32 = job->ref32 + (size_t)(i * job->N);
			for (long long j = 0; j < job->N; j++)
				o32[j] = (float)ref_saturate(out[j], job->dt);
		} else {
			for (long long j = 0; j < job->N; j++)
				out[j] = ref_saturate(out[j], job->dt);
		}
	}
	free(scratch);
}

void ref_softmax(const void *x, at_dtype dt, long long M, long long N, long long ldx,
		 double *ref)
{
	ref_rows(ref_softmax_row, x, dt, M, N, ldx, ref);
}

typedef struct rows_task {
	ref_rows_fn fn;
	void *ctx;
	long long begin, end;
} rows_task;

static void *rows_task_run(void *arg)
{
	rows_task *t = arg;
	t->fn(t->ctx, t->begin, t->end);
	return NULL;
}

void ref_parallel_rows(ref_rows_fn fn, void *ctx, long long M)
{
	if (M < 1)
		return;
	int nthreads = worker_count();
	if ((long long)nthreads > M)
		nthreads = (int)M;
	pthread_t tids[64];
	rows_task tasks[64];
	int started[64] = { 0 };
	for (int t = 0; t < nthreads; t++) {
		tasks[t] = (rows_task){ fn, ctx, M * t / nthreads, M * (t + 1) / nthreads };
		if (t > 0)
			started[t] = pthread_create(&tids[t], NULL, rows_task_run, &tasks[t]) == 0;
	}
	rows_task_run(&tasks[0]);
	for (int t = 1; t < nthreads; t++) {
		if (started[t])
			pthread_join(tids[t], NULL);
		else
			rows_task_run(&tasks[t]); /* no thread to be had: do it here */
	}
}

/* The rows of job's inputs, in parallel over rows. */
static void run_ref_jobs(const ref_job *job, long long M)
{
	if (job->N >= 1)
		ref_parallel_rows(ref_worker, (void *)job, M);
}

void ref_rows(at_op_ref_row_fn row, const void *x, at_dtype dt, long long M, long long N,
	      long long ldx, double *ref)
{
	run_ref_jobs(&(ref_job){ .in = { x }, .dt = dt, .N = N, .ldx = ldx, .ref = ref,
				 .row = row },
		     M);
}

/* The job of op's reference rows of in (row stride ld), into ref or ref32,
 * the row results of an op with a side input into row_out. */
static ref_job op_job(const at_op *op, const void *const *in, at_dtype dt, long long N,
		      long long ld, double *ref, float *ref32, double *row_out)
{
	ref_job job = { .dt = dt, .N = N, .ldx = ld, .ref = ref, .ref32 = ref32 };
	for (int k = 0; k < at_op_inputs(op) && k < AT_OP_MAX_INPUTS; k++)
		job.in[k] = in[k];
	if (op->ref_row_side) {
		job.row_side = op->ref_row_side;
		job.side_bytes = op->side_bytes;
		job.nresults = op->row_results;
		job.row_out = row_out;
	} else if (at_op_inputs(op) > 1) {
		job.row_inputs = op->ref_row_inputs;
	} else {
		job.row = op->ref_row;
	}
	return job;
}

void ref_op_rows(const at_op *op, const void *const *in, at_dtype dt, long long M, long long N,
		 long long ld, double *ref)
{
	ref_job job = op_job(op, in, dt, N, ld, ref, NULL, NULL);
	run_ref_jobs(&job, M);
}

void ref_op_rows_side(const at_op *op, const void *x, const void *side, at_dtype dt,
		      long long M, long long N, long long ld, double *ref, double *row_out)
{
	ref_job job = op_job(op, &x, dt, N, ld, ref, NULL, row_out);
	job.side = side;
	run_ref_jobs(&job, M);
}

void ref_mask_rows(const void *x, at_dtype dt, long long M, long long N, long long ldx,
		   double value, double *ref)
{
	for (long long i = 0; i < M; i++) {
		long long j = 0;
		while (j < N && ref_load(x, dt, (size_t)(i * ldx + j)) == -INFINITY)
			j++;
		for (long long k = 0; j == N && k < N; k++)
			ref[(size_t)(i * N + k)] = value;
	}
}

double ref_saturate(double v, at_dtype dt)
{
	/* the largest finite value plus half its ulp: from there on the
	 * dtype's round-to-nearest gives inf */
	static const double limit[AT_DTYPE_COUNT] = {
		[AT_F32] = 0x1.ffffffp+127,
		[AT_F16] = 65520.0,
		[AT_BF16] = 0x1.ffp+127,
	};
	return fabs(v) >= limit[dt] ? copysign(INFINITY, v) : v;
}

check_result ref_compare(const void *y, at_dtype dt, long long M, long long N,
			 long long ldy, const double *ref)
{
	return ref_compare_sized(y, dt, M, N, ldy, ref, NULL);
}

check_result ref_compare_sized(const void *y, at_dtype dt, long long M, long long N,
			       long long ldy, const double *ref, const double *size)
{
	check_result r = { 0, 0, -1 };
	double diff2 = 0, norm2 = 0;
	for (long long i = 0; i < M; i++) {
		for (long long j = 0; j < N; j++) {
			double want = ref[(size_t)(i * N + j)];
			double got = ref_load(y, dt, (size_t)(i * ldy + j));
			if (isnan(want) != isnan(got) ||
			    ((isinf(want) || isinf(got)) && want != got)) {
				if (r.first_bad < 0)
					r.first_bad = i * N + j;
				r.mismatches++;
				continue;
			}
			if (isnan(want) || isinf(want))
				continue; /* equal: NaN and NaN, or the same infinity */
			double scale = size ? size[(size_t)(i * N + j)] : want;
			diff2 += (got - want) * (got - want);
			norm2 += scale * scale;
		}
	}
	r.rel_l2 = ref_rel_l2(diff2, norm2, M * N, dt);
	return r;
}

double ref_rel_l2(double diff2, double norm2, long long count, at_dtype dt)
{
	/* the dtype's floor, an element's worth each (ref_floor), comes off
	 * the error first */
	double f = ref_floor(dt), d2 = diff2 - (double)count * f * f;
	d2 = d2 > 0 ? d2 : 0;
	return norm2 > 0 ? sqrt(d2 / norm2) : sqrt(d2);
}

void ref_input_random(void *x, at_dtype dt, long long M, long long N, uint64_t seed)
{
	ref_fill_random(x, dt, (size_t)M * (size_t)N, seed);
}

/* The check input into x and its reference into ref (doubles) or ref32
 * (floats), the row results into rows. */
static void check_data(const at_op *op, at_dtype dt, long long M, long long N, uint64_t seed,
		       void *x, double *ref, float *ref32, double *rows)
{
	op->make_input(x, dt, M, N, seed);
	const void *in[AT_OP_MAX_INPUTS];
	for (int k = 0; k < at_op_inputs(op) && k < AT_OP_MAX_INPUTS; k++)
		in[k] = (const char *)x + (size_t)k * (size_t)M * (size_t)N * at_dtype_size(dt);
	ref_job job = op_job(op, in, dt, N, N, ref, ref32, rows);
	if (op->ref_row_side)
		job.side = (const unsigned char *)x + at_op_side_offset(op, dt, M, N);
	run_ref_jobs(&job, M);
}

void ref_op_check_data(const at_op *op, at_dtype dt, long long M, long long N, uint64_t seed,
		       void *x, double *ref)
{
	check_data(op, dt, M, N, seed, x, ref, NULL, ref + (size_t)M * (size_t)N);
}

void ref_op_check_data_f32(const at_op *op, at_dtype dt, long long M, long long N,
			   uint64_t seed, void *x, float *ref, double *rows)
{
	check_data(op, dt, M, N, seed, x, NULL, ref, rows);
}

double ref_tolerance(at_dtype dt)
{
	return dt == AT_F32 ? 1e-5 : 1e-2;
}

double ref_floor(at_dtype dt)
{
	/* f16 stores subnormals rounded (cvt.rn.f16.f32): its spacing there,
	 * 2^-24; f32 and bf16 results below f32's smallest normal may be
	 * flushed to 0 (the library's documented contract) */
	return dt == AT_F16 ? 0x1p-24 : 0x1p-126;
}
