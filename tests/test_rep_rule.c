/* tuner/timing/rep_rule.c: the confidence interval of the median from order
 * statistics, the stopping rule, and timing runs driven by a fake timing
 * source (no GPU). */
#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tuner/timing/rep_rule.h"

Test(rep_rule, median_ranks_match_the_binomial_table)
{
	/* the classic 95% ranks: none below 6 samples, (1, 6), (2, 9) of 10,
	 * (8, 18) of 25, (40, 61) of 100 */
	cr_assert_eq(rep_median_rank(1, 0.95), 0);
	cr_assert_eq(rep_median_rank(5, 0.95), 0);
	cr_assert_eq(rep_median_rank(6, 0.95), 1);
	cr_assert_eq(rep_median_rank(9, 0.95), 2);
	cr_assert_eq(rep_median_rank(10, 0.95), 2);
	cr_assert_eq(rep_median_rank(25, 0.95), 8);
	cr_assert_eq(rep_median_rank(100, 0.95), 40);
	/* lower confidence, narrower interval */
	cr_assert_eq(rep_median_rank(10, 0.5), 4);
	/* large n stays exact and quick: about n/2 - 0.98 sqrt(n) */
	size_t j = rep_median_rank(10000, 0.95);
	cr_assert(j >= 4900 && j <= 4902, "%zu", j);
}

Test(rep_rule, interval_is_between_two_order_statistics_relative_to_the_median)
{
	double x[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	cr_assert_float_eq(rep_median_interval(x, 10, 0.95), (9.0 - 2.0) / 5.5, 1e-12);
	cr_assert(isinf(rep_median_interval(x, 5, 0.95)), "5 samples give no interval");
	double zero[6] = { 0 };
	cr_assert(isinf(rep_median_interval(zero, 6, 0.95)));
}

static const rep_policy base = { .warmup = 0, .min_reps = 10, .max_reps = 40,
				 .tolerance = 0.01, .budget_ms = 0 };

Test(rep_rule, decide_in_order_fewest_converged_most_budget)
{
	double flat[40], wide[40];
	for (int i = 0; i < 40; i++) {
		flat[i] = 10.0;
		wide[i] = 10.0 + i;
	}
	double *f[] = { flat }, *w[] = { wide }, *both[] = { flat, wide };
	cr_assert_eq(rep_decide(&base, f, 1, 9, 0), REP_MORE, "below the fewest");
	cr_assert_eq(rep_decide(&base, f, 1, 10, 0), REP_CONVERGED);
	cr_assert_eq(rep_decide(&base, w, 1, 10, 0), REP_MORE);
	cr_assert_eq(rep_decide(&base, w, 1, 40, 0), REP_MAX);
	cr_assert_eq(rep_decide(&base, both, 2, 10, 0), REP_MORE, "every series must converge");
	rep_policy budget = base;
	budget.budget_ms = 5;
	cr_assert_eq(rep_decide(&budget, w, 1, 10, 5.0), REP_BUDGET);
	cr_assert_eq(rep_decide(&budget, w, 1, 10, 4.9), REP_MORE);
	cr_assert_eq(rep_decide(&budget, both, 2, 10, 9.9), REP_MORE, "the budget is per series");
	cr_assert_eq(rep_decide(&budget, w, 1, 9, 100.0), REP_MORE, "the fewest come first");
	rep_policy never = base;
	never.tolerance = 0;
	cr_assert_eq(rep_decide(&never, f, 1, 10, 0), REP_MORE, "tolerance 0: no early stop");
	cr_assert_eq(rep_decide(&never, f, 1, 40, 0), REP_MAX);
}

Test(rep_rule, batches_start_with_the_fewest_then_grow_by_a_quarter)
{
	rep_policy p = { .min_reps = 10, .max_reps = 100, .tolerance = 0.01 };
	cr_assert_eq(rep_next_batch(&p, 0), 10);
	cr_assert_eq(rep_next_batch(&p, 10), REP_MIN_BATCH);
	cr_assert_eq(rep_next_batch(&p, 40), 10);
	cr_assert_eq(rep_next_batch(&p, 96), 4, "never past the most");
	cr_assert_eq(rep_next_batch(&p, 100), 0);
}

/* ---- a fake timing source --------------------------------------------- */

typedef struct fake {
	double center[REP_MAX_SERIES], spread[REP_MAX_SERIES]; /* relative, uniform */
	double ms_per_rep;
	uint64_t state;
	int calls, fail_at;
	int sizes[64];
	double log[REP_MAX_SERIES][2000]; /* every sample handed out */
	int logged;
} fake;

static double uniform(fake *f)
{
	f->state = f->state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(f->state >> 11) / 9007199254740992.0;
}

static int k_series;

static int fake_batch(void *arg, int reps, double *const *samples, double *elapsed_ms,
		      at_error *err)
{
	fake *f = arg;
	if (f->calls == f->fail_at)
		return at_error_set(err, "the fake GPU fell over");
	f->sizes[f->calls++] = reps;
	for (int i = 0; i < reps; i++) {
		for (int j = 0; j < k_series; j++) {
			double t = f->center[j] * (1 + f->spread[j] * (2 * uniform(f) - 1));
			samples[j][i] = t;
			f->log[j][f->logged] = t;
		}
		f->logged++;
	}
	*elapsed_ms = f->ms_per_rep * reps;
	return 0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The interval over the first n logged samples of series j. */
static double interval_of_first(const fake *f, int j, int n)
{
	double *s = malloc((size_t)n * sizeof *s);
	memcpy(s, f->log[j], (size_t)n * sizeof *s);
	qsort(s, (size_t)n, sizeof *s, cmp);
	double w = rep_median_interval(s, (size_t)n, REP_CONFIDENCE);
	free(s);
	return w;
}

Test(rep_rule, steady_times_stop_at_the_fewest)
{
	fake f = { .center = { 12.5 }, .fail_at = -1 };
	k_series = 1;
	rep_result r;
	rep_verdict why;
	at_error err = { { 0 } };
	cr_assert_eq(rep_run(&base, 1, fake_batch, &f, &r, &why, &err), 0, "%s", err.msg);
	cr_assert_eq(why, REP_CONVERGED);
	cr_assert_eq(r.reps, 10);
	cr_assert_eq(f.calls, 1);
	cr_assert_float_eq(r.median_us, 12.5, 1e-12);
	cr_assert_float_eq(r.interval, 0, 1e-12);
}

Test(rep_rule, noisy_times_stop_at_the_first_batch_whose_interval_is_narrow_enough)
{
	fake f = { .center = { 100 }, .spread = { 0.03 }, .state = 7, .fail_at = -1 };
	k_series = 1;
	rep_policy p = base;
	p.max_reps = 1000;
	rep_result r;
	rep_verdict why;
	at_error err = { { 0 } };
	cr_assert_eq(rep_run(&p, 1, fake_batch, &f, &r, &why, &err), 0, "%s", err.msg);
	cr_assert_eq(why, REP_CONVERGED);
	cr_assert_gt(r.reps, 10, "+-3%% noise needs more than the fewest for 1%%");
	cr_assert_lt(r.reps, 1000);
	cr_assert_eq(r.reps, f.logged);
	cr_assert_leq(r.interval, 0.01);
	cr_assert_float_eq(r.interval, interval_of_first(&f, 0, r.reps), 1e-12);
	/* no earlier batch boundary met the tolerance */
	int n = 0;
	for (int b = 0; b < f.calls - 1; b++) {
		n += f.sizes[b];
		cr_assert_gt(interval_of_first(&f, 0, n), 0.01, "should have stopped at %d", n);
	}
	cr_assert(fabs(r.median_us - 100) < 1.5, "%f", r.median_us);
}

Test(rep_rule, hopeless_noise_stops_at_the_most)
{
	fake f = { .center = { 10 }, .spread = { 0.5 }, .state = 3, .fail_at = -1 };
	k_series = 1;
	rep_result r;
	rep_verdict why;
	at_error err = { { 0 } };
	cr_assert_eq(rep_run(&base, 1, fake_batch, &f, &r, &why, &err), 0, "%s", err.msg);
	cr_assert_eq(why, REP_MAX);
	cr_assert_eq(r.reps, 40);
	cr_assert_gt(r.interval, 0.01);
	cr_assert_leq(r.min_us, r.q1_us);
	cr_assert_leq(r.q1_us, r.median_us);
	cr_assert_leq(r.median_us, r.q3_us);
	cr_assert_leq(r.q3_us, r.max_us);
}

Test(rep_rule, the_time_budget_ends_the_batch_that_spends_it)
{
	fake f = { .center = { 10 }, .spread = { 0.5 }, .state = 3, .ms_per_rep = 1,
		   .fail_at = -1 };
	k_series = 1;
	rep_policy p = base;
	p.budget_ms = 14;
	p.max_reps = 1000;
	rep_result r;
	rep_verdict why;
	at_error err = { { 0 } };
	cr_assert_eq(rep_run(&p, 1, fake_batch, &f, &r, &why, &err), 0, "%s", err.msg);
	cr_assert_eq(why, REP_BUDGET);
	cr_assert_eq(r.reps, 15, "10 (10 ms), then 5 more (15 ms >= 14)");
}

Test(rep_rule, interleaved_series_stop_when_all_have_converged)
{
	fake f = { .center = { 10, 20 }, .spread = { 0, 0.03 }, .state = 11, .fail_at = -1 };
	k_series = 2;
	rep_policy p = base;
	p.max_reps = 1000;
	rep_result r[2];
	rep_verdict why;
	at_error err = { { 0 } };
	cr_assert_eq(rep_run(&p, 2, fake_batch, &f, r, &why, &err), 0, "%s", err.msg);
	cr_assert_eq(why, REP_CONVERGED);
	cr_assert_gt(r[0].reps, 10, "the steady series waits for the noisy one");
	cr_assert_eq(r[0].reps, r[1].reps);
	cr_assert_float_eq(r[0].median_us, 10, 1e-12);
	cr_assert_leq(r[1].interval, 0.01);
}

Test(rep_rule, a_fixed_policy_times_exactly_its_repetitions)
{
	fake f = { .center = { 10 }, .spread = { 0.5 }, .state = 5, .fail_at = -1 };
	k_series = 1;
	rep_policy p = rep_policy_fixed(2, 25);
	rep_result r;
	at_error err = { { 0 } };
	cr_assert_eq(rep_run(&p, 1, fake_batch, &f, &r, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(r.reps, 25);
	cr_assert_eq(f.calls, 1);
}

Test(rep_rule, errors_of_the_source_and_of_the_policy)
{
	fake f = { .center = { 10 }, .spread = { 0.5 }, .state = 5, .fail_at = 1 };
	k_series = 1;
	rep_result r;
	at_error err = { { 0 } };
	cr_assert_eq(rep_run(&base, 1, fake_batch, &f, &r, NULL, &err), -1);
	cr_assert_str_eq(err.msg, "the fake GPU fell over");

	rep_policy bad = base;
	bad.min_reps = 41;
	cr_assert_eq(rep_run(&bad, 1, fake_batch, &f, &r, NULL, &err), -1);
	cr_assert_str_eq(err.msg, "the fewest repetitions must be 1..40, got 41");
	bad = base;
	bad.tolerance = -0.1;
	cr_assert_eq(rep_policy_check(&bad, &err), -1);
	cr_assert_eq(rep_run(&base, 0, fake_batch, &f, &r, NULL, &err), -1);
	cr_assert_eq(rep_run(&base, REP_MAX_SERIES + 1, fake_batch, &f, &r, NULL, &err), -1);
}
