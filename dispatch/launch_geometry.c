/* Grid sizing and launching of softmax kernels: see launch_geometry.h.
 *
 * A kernel with more than 48 KB of dynamic shared memory per CTA must be
 * opted into it with cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES), both
 * to launch and for the occupancy query to count it. launch_grid does that
 * (it runs once per kernel and shape, in the tuner and in the dispatch
 * library's miss path), so launch_softmax, the hot path, stays a plain
 * launch. The attribute is only ever raised: a function shared by shapes of
 * different row lengths keeps the largest opt-in that any of them needed. */
#include "dispatch/launch_geometry.h"

#include <stdio.h>

/* Above this, a CTA's dynamic shared memory must be opted into. */
#define DEFAULT_DYN_SMEM_LIMIT (48 * 1024)

static int opt_into_dyn_smem(CUfunction fn, int bytes, at_error *err)
{
	int current = 0;
	if (cudrv.cuFuncGetAttribute(&current, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
				     fn) == CUDA_SUCCESS &&
	    current >= bytes)
		return 0;
	CUresult rc = cudrv.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
					       bytes);
	if (rc != CUDA_SUCCESS) {
		char what[120];
		snprintf(what, sizeof what,
			 "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, %d) (the kernel's "
			 "dynamic shared memory)", bytes);
		return cudrv_error(err, rc, what);
	}
	return 0;
}

int launch_grid(const launch_geometry *g, CUfunction fn, long long M, int sm_count,
		unsigned *grid, at_error *err)
{
	if (g->dyn_smem > DEFAULT_DYN_SMEM_LIMIT && opt_into_dyn_smem(fn, g->dyn_smem, err))
		return -1;
	long long steps = (M + g->rows_per_cta - 1) / g->rows_per_cta;
	if (g->persistent) {
		int per_sm = 0;
		CU_TRY(err, cudrv.cuOccupancyMaxActiveBlocksPerMultiprocessor(
				    &per_sm, fn, g->threads, (size_t)g->dyn_smem));
		if (per_sm < 1)
			return at_error_set(err, "the kernel cannot run: no CTA fits on a multiprocessor");
		long long resident = (long long)per_sm * sm_count;
		if (steps > resident)
			steps = resident;
	}
	if (steps > 0x7fffffffLL)
		return at_error_set(err, "M = %lld needs more CTAs than a grid can have", M);
	*grid = (unsigned)steps;
	return 0;
}

int launch_softmax(CUfunction fn, const launch_geometry *g, unsigned grid, CUdeviceptr y,
		   CUdeviceptr x, long long M, long long N, long long ldy, long long ldx,
		   CUstream stream, at_error *err)
{
	void *args[] = { &y, &x, &M, &N, &ldy, &ldx };
	CU_TRY(err, cudrv.cuLaunchKernel(fn, grid, 1, 1, (unsigned)g->threads, 1, 1,
					 (unsigned)g->dyn_smem, stream, args, NULL));
	return 0;
}
