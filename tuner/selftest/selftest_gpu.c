/* The selftest's GPU runner: see selftest_gpu.h. */
#include "tuner/selftest/selftest_gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "include/autotune/dispatch.h"
#include "tuner/check/reference.h"
#include "tuner/selftest/selftest_big.h"
#include "tuner/sweep/plan.h"

/* ---- the small shapes ---- */

/* The op's inputs lie one image after another (x_bytes each), in x_host
 * and on the GPU in x; in place, the output replaces the last one (x; a
 * backward op's dy), whose image is then y's working copy. */
typedef struct small_data {
	int ninputs;
	size_t x_bytes, y_bytes, front_bytes;
	void *x_host, *y_init, *y_back, *x_back;
	double *ref;
	CUdeviceptr x, y, y_pristine; /* in place: y is x's working copy, from y_pristine */
} small_data;

static uint64_t shape_seed(const st_shape *s, at_dtype dt)
{
	return 0x5e1f7e575e1f7e57ULL ^ ((uint64_t)s->M * 0x9e3779b97f4a7c15ULL) ^
	       ((uint64_t)s->N << 24) ^ ((uint64_t)s->ldx << 40) ^ (uint64_t)dt ^
	       ((uint64_t)s->kind << 56) ^ ((uint64_t)s->flags << 60);
}

static void free_small(small_data *d)
{
	if (d->x)
		cudrv.cuMemFree(d->x);
	if (d->y)
		cudrv.cuMemFree(d->y);
	if (d->y_pristine)
		cudrv.cuMemFree(d->y_pristine);
	free(d->x_host);
	free(d->y_init);
	free(d->y_back);
	free(d->x_back);
	free(d->ref);
	memset(d, 0, sizeof *d);
}

/* The input images of op at s: the first input's rows through
 * op->first_input_from where the op has it (a backward op's y, a forward
 * output of the random and special rows); a further input (dy) random
 * rows alone, so that its values, not its special rows, meet y's (a
 * constant dy cancels softmax's backward to rounding noise, which no
 * relative error bounds). */
static void fill_inputs(const at_op *op, const st_shape *s, at_dtype dt, small_data *d)
{
	st_fill_input(s, dt, d->x_host, shape_seed(s, dt));
	if (op->first_input_from) {
		char *rows = (char *)d->x_host + d->front_bytes;
		double *out = xmalloc((size_t)s->N * sizeof *out);
		for (long long r = 0; r < s->M; r++) {
			size_t at = (size_t)(r * s->ldx);
			op->first_input_from(rows, dt, at, s->N, out);
			for (long long j = 0; j < s->N; j++)
				ref_store(rows, dt, at + (size_t)j, ref_saturate(out[j], dt));
		}
		free(out);
	}
	st_shape plain = *s;
	plain.special_rows = 0;
	plain.extreme = 0;
	for (int k = 1; k < d->ninputs; k++)
		st_fill_input(&plain, dt, (char *)d->x_host + (size_t)k * d->x_bytes,
			      shape_seed(s, dt) ^ (0x9e3779b9ULL * (uint64_t)k));
}

static int make_small(st_gpu *g, const at_op *op, const st_shape *s, at_dtype dt, small_data *d,
		      at_error *err)
{
	(void)g;
	memset(d, 0, sizeof *d);
	size_t elem = at_dtype_size(dt);
	d->ninputs = at_op_inputs(op);
	d->front_bytes = st_front_elems(s, dt) * elem;
	d->x_bytes = st_image_elems(s, dt, s->ldx) * elem;
	d->y_bytes = st_image_elems(s, dt, s->ldy) * elem;
	size_t all_x = d->x_bytes * (size_t)d->ninputs;
	d->x_host = xmalloc(all_x);
	fill_inputs(op, s, dt, d);
	const void *in[AT_OP_MAX_INPUTS];
	for (int k = 0; k < d->ninputs; k++)
		in[k] = (const char *)d->x_host + (size_t)k * d->x_bytes + d->front_bytes;
	d->ref = xmalloc((size_t)(s->M * s->N) * sizeof *d->ref);
	ref_op_rows(op, in, dt, s->M, s->N, s->ldx, d->ref);
	/* ops of several inputs take the flag and ignore it */
	if ((s->flags & ATD_MASKED_ZERO) && d->ninputs == 1)
		ref_mask_rows(in[0], dt, s->M, s->N, s->ldx, op->masked_value, d->ref);
	d->y_back = xmalloc(d->y_bytes);
	d->x_back = xmalloc(all_x);
	/* in place, the inputs before the last stay inputs */
	size_t kept = s->in_place ? all_x - d->x_bytes : all_x;
	if (kept) {
		CU_TRY(err, cudrv.cuMemAlloc(&d->x, kept));
		CU_TRY(err, cudrv.cuMemcpyHtoD(d->x, d->x_host, kept));
	}
	if (s->in_place) {
		/* y is the last input: the working copy starts as its image */
		CU_TRY(err, cudrv.cuMemAlloc(&d->y_pristine, d->x_bytes));
		CU_TRY(err, cudrv.cuMemcpyHtoD(d->y_pristine, (const char *)d->x_host + kept,
					       d->x_bytes));
		CU_TRY(err, cudrv.cuMemAlloc(&d->y, d->y_bytes));
		return 0;
	}
	d->y_init = xmalloc(d->y_bytes);
	st_fill_output(s, dt, d->y_init);
	CU_TRY(err, cudrv.cuMemAlloc(&d->y_pristine, d->y_bytes));
	CU_TRY(err, cudrv.cuMemcpyHtoD(d->y_pristine, d->y_init, d->y_bytes));
	CU_TRY(err, cudrv.cuMemAlloc(&d->y, d->y_bytes));
	return 0;
}

/* The first byte where a and b differ, as an element index, or -1. */
static long long first_change(const void *a, const void *b, size_t bytes, size_t elem)
{
	if (memcmp(a, b, bytes) == 0)
		return -1;
	const unsigned char *p = a, *q = b;
	size_t i = 0;
	while (p[i] == q[i])
		i++;
	return (long long)(i / elem);
}

static void run_one(st_gpu *g, const st_shape *s, at_dtype dt, small_data *d, const st_job *job,
		    kernel_entry *e, const char *label, st_outcome *out)
{
	unsigned grid;
	if (st_gpu_prepare(g, job, e, s->M, &grid, out))
		return;
	CUdeviceptr y_rows = d->y + d->front_bytes;
	CUdeviceptr in[AT_OP_MAX_INPUTS] = { 0 };
	for (int k = 0; k < d->ninputs; k++)
		in[k] = d->x + (size_t)k * d->x_bytes + d->front_bytes;
	if (s->in_place)
		in[d->ninputs - 1] = y_rows;
	size_t kept = s->in_place ? d->x_bytes * (size_t)(d->ninputs - 1)
				  : d->x_bytes * (size_t)d->ninputs;
	if (st_gpu_check(g, cudrv.cuMemcpyDtoDAsync(d->y, d->y_pristine, d->y_bytes, g->stream),
			 "resetting the output", label, out) ||
	    (d->ninputs == 1
		     ? st_gpu_launch(g, e, job, grid, y_rows, in[0], s->M, s->N, s->ldy, s->ldx,
				     s->flags, label, out)
		     : st_gpu_launch2(g, e, job, grid, y_rows, in[0], in[1], s->M, s->N, s->ldy,
				      s->ldx, s->flags, label, out)) ||
	    st_gpu_check(g, cudrv.cuMemcpyDtoH(d->y_back, d->y, d->y_bytes), "copying the output back",
			 label, out) ||
	    (kept && st_gpu_check(g, cudrv.cuMemcpyDtoH(d->x_back, d->x, kept),
				  "copying the input back", label, out)))
		return;
	long long at = first_change(d->x_back, d->x_host, kept, at_dtype_size(dt));
	if (at >= 0) {
		long long per = (long long)(d->x_bytes / at_dtype_size(dt));
		char which[32] = "x";
		if (d->ninputs > 1)
			snprintf(which, sizeof which, "%lld", at / per);
		out->status = ST_FAILED;
		snprintf(out->reason, sizeof out->reason,
			 "modified its input %s (element %lld from row 0's start)", which,
			 at % per - (long long)st_front_elems(s, dt));
		return;
	}
	st_verdict v = st_check_output(s, dt, d->y_back, d->ref);
	out->status = v.ok ? ST_PASSED : ST_FAILED;
	snprintf(out->reason, sizeof out->reason, "%s", v.reason);
}

static tr_env env_of(void *ctx, long long M, long long N, at_dtype dt)
{
	st_gpu *g = ctx;
	return gpu_shape_env(&g->gpu, M, N, at_dtype_size(dt));
}

static int run_jobs(void *ctx, const st_shape *s, at_dtype dt, const st_job *jobs, size_t n,
		    st_outcome *out, at_error *err)
{
	st_gpu *g = ctx;
	if (g->dead) {
		st_gpu_not_run(g, out, n);
		return 0;
	}
	variant *vs = xcalloc(n, sizeof *vs);
	for (size_t i = 0; i < n; i++)
		vs[i] = jobs[i].v;
	char **sources = plan_sources(vs, n, err);
	free(vs);
	if (!sources)
		return -1;
	kernel_entry **entries = xcalloc(n, sizeof *entries);
	int rc = kernel_cache_get(&g->cache, sources, n, entries, err);
	plan_free_sources(sources, n);
	if (rc == 0 && s->kind == ST_CASE_BIG) {
		rc = st_gpu_run_big(g, s, dt, jobs, entries, n, out, err);
	} else if (rc == 0) {
		small_data d;
		rc = make_small(g, jobs[0].op, s, dt, &d, err);
		char shape[160];
		st_shape_label(s, shape, sizeof shape);
		for (size_t i = 0; i < n && rc == 0; i++) {
			if (g->dead) {
				st_gpu_not_run(g, out + i, n - i);
				break;
			}
			char *params = variant_params_str(&jobs[i].v);
			char label[600];
			snprintf(label, sizeof label, "%s %s %s at %s", jobs[i].v.tmpl->name,
				 at_dtype_name(dt), params, shape);
			free(params);
			run_one(g, s, dt, &d, &jobs[i], entries[i], label, &out[i]);
		}
		free_small(&d);
	}
	free(entries);
	return rc;
}

st_runner st_gpu_runner(st_gpu *g)
{
	return (st_runner){ g, env_of, run_jobs };
}
