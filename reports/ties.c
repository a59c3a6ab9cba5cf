/* The timing-noise rule: see ties.h. The rule is also stated in the page
 * (report.c, "How to read"): change both together. */
#include "reports/ties.h"

#include <math.h>

double ties_tolerance(const rd_result *winner)
{
	double spread = 0;
	if (winner->timed && isfinite(winner->time_min_us) && isfinite(winner->time_max_us))
		spread = (winner->time_max_us - winner->time_min_us) / winner->time_us;
	return fmax(0.01, spread);
}

int ties_is_tie(const rd_result *winner, const rd_result *r)
{
	if (!winner || r == winner || r->baseline || !r->timed || !winner->timed)
		return 0;
	return fabs(r->time_us - winner->time_us) <= ties_tolerance(winner) * winner->time_us;
}

size_t ties_count(const rd_shape *s)
{
	const rd_result *w = rd_shape_winner(s);
	size_t n = 0;
	for (size_t i = 0; i < s->n_results; i++)
		n += (size_t)ties_is_tie(w, &s->results[i]);
	return n;
}
