/* The cross_entropy op's part of a shape on the GPU: see cross_entropy_shape.h. */
#include "tuner/ops/cross_entropy_shape.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "dispatch/policy/row_ops.h"
#include "tuner/check/cross_entropy_rows.h"
#include "tuner/check/reference.h"

/* The references of R rows of x (row i from element first + i ld) and
 * targets t under o, as the dtype (gradient) and f32 (loss, lse) hold them:
 * malloc'd into *grad (R x N), *size (its terms' magnitudes, the scale of
 * its error: ce_ref_row_sized) and *rows (pairs). */
static void probe_ref(at_dtype dt, const void *x, size_t first, long long ld, long long R,
		      long long N, const long long *t, const ce_options *o, double **grad,
		      double **size, double **rows)
{
	size_t n = (size_t)N;
	*grad = xmalloc((size_t)R * n * sizeof **grad);
	*size = xmalloc((size_t)R * n * sizeof **size);
	*rows = xmalloc((size_t)R * 2 * sizeof **rows);
	for (long long i = 0; i < R; i++) {
		double *g = *grad + (size_t)i * n, *r = *rows + 2 * i;
		ce_ref_row_sized(x, dt, first + (size_t)(i * ld), N, t[i], o, g,
				 *size + (size_t)i * n, &r[0], &r[1]);
		for (size_t j = 0; j < n; j++)
			g[j] = ref_saturate(g[j], dt);
		r[0] = ref_saturate(r[0], AT_F32);
		r[1] = ref_saturate(r[1], AT_F32);
	}
}

/* The probe's buffers: the rows at stride N + 1 from element 1, int32
 * targets, the scale. */
static int probe_make(ce_probe *p, at_dtype dt, long long M, long long N, const void *host_x,
		      const long long *targets, const double *rows, at_error *err)
{
	p->R = M < CE_PROBE_ROWS ? M : CE_PROBE_ROWS;
	p->dt = dt;
	size_t es = at_dtype_size(dt), n = (size_t)N, R = (size_t)p->R;
	size_t strided = 1 + R * (n + 1);
	static const ce_options opt = CE_PROBE_OPTIONS, tuning = CE_OPTIONS_TUNING;
	probe_ref(dt, host_x, 0, N, p->R, N, targets, &opt, &p->opt_ref, &p->opt_size,
		  &p->opt_rows);
	p->plain_rows = xmalloc(R * 2 * sizeof *p->plain_rows);
	memcpy(p->plain_rows, rows, R * 2 * sizeof *rows);
	/* the special rows: the first ones, strided, made the edge cases */
	p->strided_host = xcalloc(strided, es);
	for (size_t i = 0; i < R; i++)
		memcpy((char *)p->strided_host + (1 + i * (n + 1)) * es,
		       (const char *)host_x + i * n * es, n * es);
	long long t_special[CE_PROBE_ROWS];
	memcpy(t_special, targets, R * sizeof *t_special);
	ce_special_rows((char *)p->strided_host + es, dt, p->R, N, N + 1, t_special);
	probe_ref(dt, p->strided_host, 1, N + 1, p->R, N, t_special, &tuning, &p->special_ref,
		  &p->special_size,		  &p->special_rows);
	p->back = xmalloc(strided * es);
	int t32[CE_PROBE_ROWS];
	for (size_t i = 0; i < R; i++)
		t32[i] = (int)targets[i]; /* in [0, N) or the ignore_index */
	const float scale = (float)((ce_options)CE_PROBE_OPTIONS).scale;
	CU_TRY(err, cudrv.cuMemAlloc(&p->out, R * n * es));
	CU_TRY(err, cudrv.cuMemAlloc(&p->strided, strided * es));
	CU_TRY(err, cudrv.cuMemAlloc(&p->t32, R * sizeof *t32));
	CU_TRY(err, cudrv.cuMemAlloc(&p->scale, sizeof scale));
	CU_TRY(err, cudrv.cuMemAlloc(&p->t_special, R * sizeof *t_special));
	CU_TRY(err, cudrv.cuMemcpyHtoD(p->t_special, t_special, R * sizeof *t_special));
	CU_TRY(err, cudrv.cuMemcpyHtoD(p->t32, t32, R * sizeof *t32));
	CU_TRY(err, cudrv.cuMemcpyHtoD(p->scale, &scale, sizeof scale));
	/* the copies above land before any stream's launch (see ce_shape_probe) */
	CU_TRY(err, cudrv.cuCtxSynchronize());
	return 0;
}

static void probe_free(ce_probe *p)
{
	const CUdeviceptr dev[] = { p->out, p->t32, p->scale, p->strided, p->t_special };
	for (size_t i = 0; i < sizeof dev / sizeof *dev; i++)
		if (dev[i])
			cudrv.cuMemFree(dev[i]);
	free(p->strided_host);
	free(p->back);
	free(p->opt_ref);
	free(p->opt_size);
	free(p->opt_rows);
	free(p->special_ref);
	free(p->special_size);
	free(p->special_rows);
	free(p->plain_rows);
}

int ce_shape_make(ce_shape *c, const at_op *op, at_dtype dt, long long M, long long N,
		  const void *host_x, CUdeviceptr x, const double *rows, at_error *err)
{
	memset(c, 0, sizeof *c);
	c->M = M;
	c->N = N;
	size_t side = at_op_side_offset(op, dt, M, N);
	c->target = x + side;
	size_t pairs = (size_t)M * 2;
	c->row_ref = xmalloc(pairs * sizeof *c->row_ref);
	memcpy(c->row_ref, rows, pairs * sizeof *c->row_ref);
	CU_TRY(err, cudrv.cuMemAlloc(&c->loss, (size_t)M * sizeof(float)));
	CU_TRY(err, cudrv.cuMemAlloc(&c->lse, (size_t)M * sizeof(float)));
	CU_TRY(err, cudrv.cuMemAlloc(&c->ws, ce_workspace_bytes(M)));
	return probe_make(&c->probe, dt, M, N, host_x,
			  (const long long *)((const char *)host_x + side), rows, err);
}

void ce_shape_free(ce_shape *c)
{
	if (c->loss)
		cudrv.cuMemFree(c->loss);
	if (c->lse)
		cudrv.cuMemFree(c->lse);
	if (c->ws)
		cudrv.cuMemFree(c->ws);
	probe_free(&c->probe);
	free(c->row_ref);
	memset(c, 0, sizeof *c);
}

int ce_shape_prepare(const ce_shape *c, CUmodule module, CUstream stream, at_error *err)
{
	CUfunction fn;
	CU_TRY(err, cudrv.cuModuleGetFunction(&fn, module, "cross_entropy_prepare_kernel"));
	return launch_cross_entropy_prepare(fn, c->ws, c->target, c->M, c->N,
					    CE_CHECK_IGNORE_INDEX, 1.0f, 0, 0, stream, err);
}

ce_launch_args ce_shape_args(const ce_shape *c, CUdeviceptr dx, CUdeviceptr x)
{
	return (ce_launch_args){ .dx = dx, .x = x, .target = c->target, .loss = c->loss,
				 .lse = c->lse, .scale = c->ws, .M = c->M, .V = c->N,
				 .lddx = c->N, .ldx = c->N, .ignore_index = CE_CHECK_IGNORE_INDEX,
				 .flags = CE_WRITE_GRAD };
}

int ce_shape_poison(const ce_shape *c, CUstream stream, at_error *err)
{
	CU_TRY(err, cudrv.cuMemsetD8Async(c->loss, 0xff, (size_t)c->M * sizeof(float), stream));
	CU_TRY(err, cudrv.cuMemsetD8Async(c->lse, 0xff, (size_t)c->M * sizeof(float), stream));
	return 0;
}

double ce_rows_error(const float *got, const double *want, long long n, int which,
		     long long *mismatches, long long *first_bad)
{
	double diff2 = 0, norm2 = 0;
	*mismatches = 0;
	*first_bad = -1;
	for (long long i = 0; i < n; i++) {
		double w = want[i * 2 + which], g = got[i];
		if (isnan(w) != isnan(g) || ((isinf(w) || isinf(g)) && w != g)) {
			if (*first_bad < 0)
				*first_bad = i;
			++*mismatches;
			continue;
		}
		if (isnan(w) || isinf(w))
			continue;
		diff2 += (g - w) * (g - w);
		norm2 += w * w;
	}
	return norm2 > 0 ? sqrt(diff2 / norm2) : sqrt(diff2);
}

/* Compares the first n rows' loss (and lse when nres is 2) the last launch
 * wrote with want's pairs; `run` names the run in reason. */
static int compare_rows(const ce_shape *c, long long n, int nres, const double *want,
			const char *run, CUstream stream, double tol, int *ok, char *reason,
			size_t cap, at_error *err)
{
	float *got = xmalloc((size_t)n * sizeof *got);
	static const char *const names[2] = { "loss", "lse" };
	const CUdeviceptr from[2] = { c->loss, c->lse };
	for (int k = 0; k < nres && *ok; k++) {
		CUresult rc = cudrv.cuStreamSynchronize(stream);
		if (rc == CUDA_SUCCESS)
			rc = cudrv.cuMemcpyDtoH(got, from[k], (size_t)n * sizeof *got);
		if (rc != CUDA_SUCCESS) {
			free(got);
			return cudrv_error(err, rc, "copying the rows' loss and lse back");
		}
		long long bad, first;
		double e = ce_rows_error(got, want, n, k, &bad, &first);
		if (bad) {
			*ok = 0;
			snprintf(reason, cap, "%s%lld rows' %s NaN or infinite where the reference's "
				 "is not, or the reverse (first at row %lld: %g, want %g)", run, bad,
				 names[k], first, got[first], want[first * 2 + k]);
		} else if (!(e <= tol)) {
			*ok = 0;
			snprintf(reason, cap, "%sthe rows' %s: relative L2 error %.3g exceeds %.0e",
				 run, names[k], e, tol);
		}
	}
	free(got);
	return 0;
}

int ce_shape_compare(const ce_shape *c, CUstream stream, double tol, int *ok, char *reason,
		     size_t cap, at_error *err)
{
	*ok = 1;
	return compare_rows(c, c->M, 2, c->row_ref, "", stream, tol, ok, reason, cap, err);
}

CUfunction ce_plain_kernel(CUmodule module, const launch_geometry *g)
{
	CUfunction fn = NULL;
	at_error ignored;
	if (!module || cudrv.cuModuleGetFunction(&fn, module, CE_PLAIN_KERNEL) != CUDA_SUCCESS ||
	    launch_prepare_fn(g, fn, &ignored) != 0)
		return NULL;
	return fn;
}

/* Launches a on stream and waits; loss and lse are poisoned first. */
static int probe_run(const ce_shape *c, CUfunction fn, CUfunction plain,
		     const launch_geometry *g, unsigned grid, const ce_launch_args *a,
		     CUstream stream, at_error *err)
{
	if (ce_shape_poison(c, stream, err) ||
	    launch_cross_entropy(fn, plain, g, grid, a, 0, stream, err))
		return -1;
	CU_TRY(err, cudrv.cuStreamSynchronize(stream));
	return 0;
}

/* Compares the R rows of the gradient at dev (row stride ld, from element
 * `first`) with want, the error relative to size's L2. */
static int compare_grad(const ce_probe *p, long long N, CUdeviceptr dev, size_t first,
			long long ld, const double *want, const double *size, const char *run,
			double tol, int *ok, char *reason, size_t cap, at_error *err)
{
	size_t es = at_dtype_size(p->dt);
	size_t elems = first + (size_t)(p->R - 1) * (size_t)ld + (size_t)N;
	CU_TRY(err, cudrv.cuMemcpyDtoH(p->back, dev, elems * es));
	check_result r = ref_compare_sized((const char *)p->back + first * es, p->dt, p->R, N, ld,
					   want, size);
	if (r.mismatches) {
		*ok = 0;
		snprintf(reason, cap, "%s%lld gradient elements NaN where the reference's are not, "
			 "or the reverse (first at row %lld, column %lld)", run, r.mismatches,
			 r.first_bad / N, r.first_bad % N);
	} else if (!(r.rel_l2 <= tol)) {
		*ok = 0;
		snprintf(reason, cap, "%sthe gradient's L2 error %.3g of its terms' exceeds %.0e", run,
			 r.rel_l2, tol);
	}
	return 0;
}

/* The in-place run on the edge cases: of plain, or of fn alone. */
static int probe_edges(const ce_shape *c, CUfunction fn, CUfunction plain,
		       const launch_geometry *g, unsigned grid, CUstream stream, double tol,
		       int *ok, char *reason, size_t cap, at_error *err)
{
	const ce_probe *p = &c->probe;
	const long long N = c->N;
	const size_t es = at_dtype_size(p->dt);
	size_t strided = 1 + (size_t)p->R * (size_t)(N + 1);
	/* on the probe's stream: a copy from pageable memory on the legacy
	 * stream may still be landing when it returns, and the stream does
	 * not wait for it (a non-blocking one): the in-place run then read
	 * the previous variant's gradient now and then (H200, 2026-11-26) */
	CU_TRY(err, cudrv.cuMemcpyHtoDAsync(p->strided, p->strided_host, strided * es, stream));
	ce_launch_args in_place = { .dx = p->strided + es, .x = p->strided + es,
				    .target = p->t_special, .loss = c->loss, .lse = c->lse,
				    .M = p->R, .V = N, .lddx = N + 1, .ldx = N + 1,
				    .ignore_index = CE_CHECK_IGNORE_INDEX, .flags = CE_WRITE_GRAD };
	const char *run = plain ? "edge cases in place, misaligned (" CE_PLAIN_KERNEL "): "
				: "edge cases in place, misaligned: ";
	if (probe_run(c, fn, plain, g, grid, &in_place, stream, err) ||
	    compare_grad(p, N, p->strided, 1, N + 1, p->special_ref, p->special_size, run, tol,
			 ok, reason, cap, err) ||
	    (*ok && compare_rows(c, p->R, 2, p->special_rows, "edge cases: ", stream, tol, ok,
				 reason, cap, err)))
		return -1;
	return 0;
}

int ce_shape_probe(const ce_shape *c, CUfunction fn, CUfunction plain, const launch_geometry *g,
		   unsigned grid, CUdeviceptr x, CUstream stream, double tol, int *ok,
		   char *reason, size_t cap, at_error *err)
{
	const ce_probe *p = &c->probe;
	const ce_options o = CE_PROBE_OPTIONS;
	const long long N = c->N;
	const size_t es = at_dtype_size(p->dt);
	*ok = 1;
	ce_launch_args a = { .dx = p->out, .x = x, .target = p->t32, .loss = c->loss,
			     .lse = c->lse, .scale = p->scale, .M = p->R, .V = N, .lddx = N,
			     .ldx = N, .ignore_index = o.ignore_index,
			     .label_smoothing = (float)o.label_smoothing, .z_loss = (float)o.z_loss,
			     .softcap = (float)o.softcap, .flags = CE_TARGET_I32 | CE_WRITE_GRAD };
	CU_TRY(err, cudrv.cuMemsetD8Async(p->out, 0xff, (size_t)(p->R * N) * es, stream));
	if (probe_run(c, fn, plain, g, grid, &a, stream, err) ||
	    compare_grad(p, N, p->out, 0, N, p->opt_ref, p->opt_size,
			 "options (softcap, smoothing, z-loss, int32): ", tol, ok, reason, cap,
			 err) ||
	    (*ok && compare_rows(c, p->R, 2, p->opt_rows, "options: ", stream, tol, ok, reason,
				 cap, err)))
		return -1;
	if (!*ok)
		return 0;
	/* the edge cases through each kernel a call may take */
	if (probe_edges(c, fn, plain, g, grid, stream, tol, ok, reason, cap, err) ||
	    (*ok && plain && probe_edges(c, fn, NULL, g, grid, stream, tol, ok, reason, cap, err)))
		return -1;
	if (!*ok)
		return 0;
	ce_launch_args forward = { .x = x, .target = c->target, .loss = c->loss, .M = p->R,
				   .V = N, .lddx = N, .ldx = N,
				   .ignore_index = CE_CHECK_IGNORE_INDEX };
	if (probe_run(c, fn, plain, g, grid, &forward, stream, err) ||
	    compare_rows(c, p->R, 1, p->plain_rows, "forward only: ", stream, tol, ok, reason,
			 cap, err))
		return -1;
	return 0;
}
