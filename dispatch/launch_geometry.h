/* How a softmax kernel is launched: every template's kernel has the same
 * signature (y, x, M, N, ldy, ldx), and its launch is described by a few
 * numbers that the tuner evaluates from the manifest and stores with each
 * result. The tuner and the dispatch library both launch through this, so
 * the two can never disagree on the grid. */
#ifndef AT_DISPATCH_LAUNCH_GEOMETRY_H
#define AT_DISPATCH_LAUNCH_GEOMETRY_H

#include "common/error.h"
#include "dispatch/cuda_driver.h"

typedef struct launch_geometry {
	int threads;      /* per CTA */
	int rows_per_cta; /* rows one CTA handles per step */
	int dyn_smem;     /* dynamic shared memory per CTA, bytes */
	int persistent;   /* grid from occupancy; CTAs loop over rows */
	long long max_n;  /* longest row served; 0 = any */
} launch_geometry;

/* The grid for M rows: one CTA per step of rows, or for persistent kernels
 * at most as many CTAs as fit on the GPU at once. */
int launch_grid(const launch_geometry *g, CUfunction fn, long long M, int sm_count,
		unsigned *grid, at_error *err);

/* Launches fn on stream with the common softmax arguments (strides in
 * elements). Checks nothing else; the caller has validated the shape. */
int launch_softmax(CUfunction fn, const launch_geometry *g, unsigned grid, CUdeviceptr y,
		   CUdeviceptr x, long long M, long long N, long long ldy, long long ldx,
		   CUstream stream, at_error *err);

#endif
