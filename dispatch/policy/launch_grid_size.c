/* The grid size of a softmax launch: see launch_grid_size.h. */
#include "dispatch/policy/launch_grid_size.h"

#define MAX_GRID 0x7fffffffLL

static int cluster_size(const launch_geometry *g)
{
	return g->ctas_per_row > 1 ? g->ctas_per_row : 1;
}

int launch_grid_size(const launch_geometry *g, long long M, int ctas_per_sm, int sm_count,
		     unsigned *grid, at_error *err)
{
	if (launch_geometry_check(g, err))
		return -1;
	long long ctas = (M + g->rows_per_cta - 1) / g->rows_per_cta * cluster_size(g);
	if (g->persistent || g->cooperative) {
		if (ctas_per_sm < 1 || sm_count < 1)
			return at_error_set(err, "the kernel cannot run: no CTA fits on a multiprocessor");
		long long resident = (long long)ctas_per_sm * sm_count;
		if (g->cooperative || ctas > resident)
			ctas = resident;
	}
	if (ctas > MAX_GRID)
		return at_error_set(err, "M = %lld needs more CTAs than a grid can have", M);
	*grid = (unsigned)ctas;
	return 0;
}
