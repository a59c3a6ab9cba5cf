/* Timing rounds and the noise band: see refine.h. */
#include "tuner/timing/refine.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(REFINE_FULL_MAX <= REP_MAX_SERIES, "the full round is timed interleaved");
_Static_assert(REFINE_FINALISTS <= REFINE_FULL_MAX, "the finalists come from the full round");

void refine_set_timing(result_row *row, const timing *t, double bytes, double copy_gbps)
{
	row->time_us = t->median_us;
	row->time_min_us = t->min_us;
	row->time_max_us = t->max_us;
	row->reps = t->reps;
	row->gbps = bytes / (t->median_us * 1e3);
	row->pct_copy = 100.0 * row->gbps / copy_gbps;
}

size_t refine_screen(refine_candidate *c, size_t n, double bytes, double copy_gbps)
{
	double best = 0;
	for (size_t i = 0; i < n; i++) {
		if (!(c[i].check_us > 0))
			return n; /* a run not timed: nothing to screen on */
		if (best == 0 || c[i].check_us < best)
			best = c[i].check_us;
	}
	if (best < REFINE_SCREEN_MIN_US)
		return n;
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		if (c[i].check_us <= REFINE_SCREEN_RATIO * best) {
			refine_candidate keep = c[i];
			c[i] = c[kept];
			c[kept++] = keep;
		}
	}
	for (size_t i = kept; i < n; i++) {
		const double us = c[i].check_us;
		timing t = { .median_us = us, .min_us = us, .max_us = us, .q1_us = us, .q3_us = us,
			     .interval = 0, .reps = 1 };
		refine_set_timing(c[i].row, &t, bytes, copy_gbps);
	}
	return kept;
}

rep_policy refine_quick_policy(void)
{
	return (rep_policy){ .warmup = REFINE_QUICK_WARMUP, .min_reps = REFINE_QUICK_MIN_REPS,
			     .max_reps = REFINE_QUICK_MAX_REPS,
			     .tolerance = REFINE_QUICK_TOLERANCE, .budget_ms = 0 };
}

int refine_quick(gpu_timer *b, refine_candidate *c, size_t n, double bytes, double copy_gbps,
		 at_error *err)
{
	const rep_policy quick = refine_quick_policy();
	for (size_t i = 0; i < n; i++) {
		timing t;
		if (gpu_time_policy(b, &quick, c[i].launch, c[i].arg, &t, err))
			return -1;
		refine_set_timing(c[i].row, &t, bytes, copy_gbps);
	}
	return 0;
}

int refine_all(gpu_timer *b, refine_candidate *c, size_t n, double bytes, double copy_gbps,
	       at_error *err)
{
	for (size_t i = 0; i < n; i++) {
		timing t;
		if (gpu_time(b, c[i].launch, c[i].arg, &t, err))
			return -1;
		refine_set_timing(c[i].row, &t, bytes, copy_gbps);
	}
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const refine_candidate *x = a, *y = b;
	double tx = x->row->time_us, ty = y->row->time_us;
	return (tx > ty) - (tx < ty);
}

size_t refine_pick_full(refine_candidate *c, size_t n)
{
	if (n == 0)
		return 0;
	const double limit = c[0].row->time_us * (1 + REFINE_FULL_WITHIN);
	size_t full = 0;
	for (size_t i = 0; i < n && full < REFINE_FULL_MAX; i++) {
		if (full >= REFINE_FULL_MIN && c[i].row->time_min_us > limit)
			continue;
		/* keep the picked ones in median order at the front */
		refine_candidate picked = c[i];
		memmove(c + full + 1, c + full, (i - full) * sizeof *c);
		c[full++] = picked;
	}
	return full;
}

/* Puts c[retimed..n) on the time base of the round that just re-timed
 * c[0..retimed): their times are multiplied by the median of the re-timed
 * ones' new-to-old ratios. A later round runs at another clock (on the H100,
 * interleaved rounds of 5-15 us kernels measured 5-12% above the first
 * round, every variant alike), so a variant it left out kept an earlier,
 * faster-looking time and won: 12 of 15 misses of an audit of the short
 * rows. */
static void rebase(refine_candidate *c, size_t n, size_t retimed, const double *before,
		   double bytes, double copy_gbps)
{
	if (retimed == 0 || retimed >= n)
		return;
	double ratio[REP_MAX_SERIES];
	for (size_t i = 0; i < retimed; i++)
		ratio[i] = c[i].row->time_us / before[i];
	double scale = median_of(ratio, retimed);
	for (size_t i = retimed; i < n; i++) {
		result_row *r = c[i].row;
		timing t = { .median_us = r->time_us * scale, .min_us = r->time_min_us * scale,
			     .max_us = r->time_max_us * scale, .reps = r->reps };
		refine_set_timing(r, &t, bytes, copy_gbps);
	}
}

/* Times c[0..k) interleaved, then rebases the rest of c[0..n) onto them. */
static int retime(gpu_timer *b, refine_candidate *c, size_t n, size_t k, double bytes,
		  double copy_gbps, timing *t, at_error *err)
{
	timed_launch_fn launch[REP_MAX_SERIES];
	void *arg[REP_MAX_SERIES];
	double before[REP_MAX_SERIES];
	if (k == 0)
		return 0;
	for (size_t i = 0; i < k; i++) {
		launch[i] = c[i].launch;
		arg[i] = c[i].arg;
		before[i] = c[i].row->time_us;
	}
	if (gpu_time_interleaved(b, launch, arg, (int)k, t, err))
		return -1;
	for (size_t i = 0; i < k; i++)
		refine_set_timing(c[i].row, &t[i], bytes, copy_gbps);
	rebase(c, n, k, before, bytes, copy_gbps);
	return 0;
}

int refine_finish(gpu_timer *b, refine_candidate *c, size_t n, double bytes, double copy_gbps,
		  double *band, size_t *nfull, at_error *err)
{
	*band = REFINE_BAND_MIN;
	*nfull = 0;
	if (n == 0)
		return 0;
	/* stable enough: equal quick times keep enumeration order via row address */
	qsort(c, n, sizeof *c, by_time);
	size_t full = refine_pick_full(c, n);
	*nfull = full;
	/* one interleaved timing of them all: drift in clocks between variants
	 * timed one after another moved short kernels' medians by several
	 * percent, more than the differences being ranked */
	timing t[REP_MAX_SERIES];
	if (retime(b, c, n, full, bytes, copy_gbps, t, err))
		return -1;
	qsort(c, full, sizeof *c, by_time);
	size_t k = full < REFINE_FINALISTS ? full : REFINE_FINALISTS;
	if (retime(b, c, n, k, bytes, copy_gbps, t, err))
		return -1;
	for (size_t i = 0; i < k; i++) {
		double spread = (t[i].q3_us - t[i].q1_us) / t[i].median_us;
		if (spread > *band)
			*band = spread;
	}
	if (*band > REFINE_BAND_MAX)
		*band = REFINE_BAND_MAX;
	return 0;
}

int refine_beside(gpu_timer *b, const refine_candidate *ref, const timed_launch_fn *launch,
		  void *const *arg, int k, double bytes, double copy_gbps, result_row *const *rows,
		  at_error *err)
{
	timed_launch_fn launches[REP_MAX_SERIES];
	void *args[REP_MAX_SERIES];
	timing t[REP_MAX_SERIES];
	int first = ref ? 1 : 0;
	if (k < 1 || k + first > REP_MAX_SERIES)
		return at_error_set(err, "can time 1 to %d launches beside the winner",
				    REP_MAX_SERIES - 1);
	if (ref) {
		launches[0] = ref->launch;
		args[0] = ref->arg;
	}
	for (int i = 0; i < k; i++) {
		launches[first + i] = launch[i];
		args[first + i] = arg[i];
	}
	if (gpu_time_interleaved(b, launches, args, k + first, t, err))
		return -1;
	double scale = ref ? ref->row->time_us / t[0].median_us : 1.0;
	for (int i = 0; i < k; i++) {
		const timing *m = &t[first + i];
		timing on_ref = { .median_us = m->median_us * scale, .min_us = m->min_us * scale,
				  .max_us = m->max_us * scale, .reps = m->reps };
		refine_set_timing(rows[i], &on_ref, bytes, copy_gbps);
	}
	return 0;
}
