/* Grid sizing and launching of softmax kernels: see launch_geometry.h. */
#include "dispatch/launch_geometry.h"

int launch_grid(const launch_geometry *g, CUfunction fn, long long M, int sm_count,
		unsigned *grid, at_error *err)
{
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
