/* The cross_entropy op's part of a shape on the GPU: see cross_entropy_shape.h. */
#include "tuner/sweep/cross_entropy_shape.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "tuner/check/cross_entropy_rows.h"

#define WS_BYTES 32 /* the contract's workspace: scale, n_valid, bad, first bad */

int ce_shape_make(ce_shape *c, const at_op *op, at_dtype dt, long long M, long long N,
		  CUdeviceptr x, const double *ref, at_error *err)
{
	memset(c, 0, sizeof *c);
	c->M = M;
	c->N = N;
	c->target = x + at_op_side_offset(op, dt, M, N);
	size_t pairs = (size_t)M * 2;
	c->row_ref = xmalloc(pairs * sizeof *c->row_ref);
	memcpy(c->row_ref, ref + (size_t)M * (size_t)N, pairs * sizeof *c->row_ref);
	CU_TRY(err, cudrv.cuMemAlloc(&c->loss, (size_t)M * sizeof(float)));
	CU_TRY(err, cudrv.cuMemAlloc(&c->lse, (size_t)M * sizeof(float)));
	CU_TRY(err, cudrv.cuMemAlloc(&c->ws, WS_BYTES));
	return 0;
}

void ce_shape_free(ce_shape *c)
{
	if (c->loss)
		cudrv.cuMemFree(c->loss);
	if (c->lse)
		cudrv.cuMemFree(c->lse);
	if (c->ws)
		cudrv.cuMemFree(c->ws);
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

int ce_shape_compare(const ce_shape *c, CUstream stream, double tol, int *ok, char *reason,
		     size_t cap, at_error *err)
{
	float *got = xmalloc((size_t)c->M * sizeof *got);
	static const char *const names[2] = { "loss", "lse" };
	const CUdeviceptr from[2] = { c->loss, c->lse };
	*ok = 1;
	for (int k = 0; k < 2 && *ok; k++) {
		CUresult rc = cudrv.cuStreamSynchronize(stream);
		if (rc == CUDA_SUCCESS)
			rc = cudrv.cuMemcpyDtoH(got, from[k], (size_t)c->M * sizeof *got);
		if (rc != CUDA_SUCCESS) {
			free(got);
			return cudrv_error(err, rc, "copying the rows' loss and lse back");
		}
		long long bad, first;
		double e = ce_rows_error(got, c->row_ref, c->M, k, &bad, &first);
		if (bad) {
			*ok = 0;
			snprintf(reason, cap, "%lld rows' %s NaN or infinite where the reference's is "
				 "not, or the reverse (first at row %lld: %g, want %g)", bad, names[k],
				 first, got[first], c->row_ref[first * 2 + k]);
		} else if (!(e <= tol)) {
			*ok = 0;
			snprintf(reason, cap, "the rows' %s: relative L2 error %.3g exceeds %.0e",
				 names[k], e, tol);
		}
	}
	free(got);
	return 0;
}
