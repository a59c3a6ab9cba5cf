/* The grid of a softmax launch for M rows, by arithmetic alone (no driver
 * call): the part of launch_geometry (dispatch/runtime/launch_geometry.h)
 * that the policy can use without a GPU. */
#ifndef AT_DISPATCH_LAUNCH_GRID_SIZE_H
#define AT_DISPATCH_LAUNCH_GRID_SIZE_H

#include "common/error.h"
#include "common/template_rules.h"

/* The grid for M rows given how many CTAs of the kernel fit on one
 * multiprocessor (only used for persistent and cooperative kernels): one
 * CTA (or cluster of ctas_per_row CTAs) per step of rows_per_cta rows;
 * persistent kernels at most the resident CTAs; cooperative kernels
 * exactly the resident CTAs. Pure arithmetic, no driver call. */
int launch_grid_size(const launch_geometry *g, long long M, int ctas_per_sm, int sm_count,
		     unsigned *grid, at_error *err);

#endif
