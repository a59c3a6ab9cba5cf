/* The timing-noise rule: see ties.h. The rule is also stated in the page
 * (report.c, "How to read"): change both together. */
#include "reports/ties.h"

#include <math.h>

double ties_band(const rd_shape *s)
{
	return isfinite(s->noise_band) && s->noise_band > 0 ? s->noise_band : TIES_BAND_UNKNOWN;
}

/* The fastest timed variant of s (not a baseline), or NULL. */
static const rd_result *fastest(const rd_shape *s)
{
	const rd_result *f = NULL;
	for (size_t i = 0; i < s->n_results; i++) {
		const rd_result *r = &s->results[i];
		if (r->timed && !r->baseline && (!f || r->time_us < f->time_us))
			f = r;
	}
	return f;
}

int ties_is_tie(const rd_shape *s, const rd_result *r)
{
	const rd_result *w = rd_shape_winner(s), *f = fastest(s);
	if (!w || !f || r == w || r->baseline || !r->timed || !w->timed)
		return 0;
	return r->time_us <= f->time_us * (1 + ties_band(s));
}

size_t ties_count(const rd_shape *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n_results; i++)
		n += (size_t)ties_is_tie(s, &s->results[i]);
	return n;
}
